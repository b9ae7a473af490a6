"""
The bridge's output encoders, without ROS: the second encoder of some actuators, in use.

:class:`OutputEncoders` keeps each output encoder's last reading (position with its offset,
velocity) and when it was heard from; at every state it makes the transmission's input (the
motors' state with ``n_a x_o`` for every fresh output encoder, and ``n_a v_o`` where its
velocity is taken from the output), the deflections ``x_o - x_a / n_a``, which actuators are
beyond their limit, and which output encoders went stale or came back since the last state
(:mod:`transmission_bridge.transmissions.output_encoder` says the law).
"""

import numpy as np


class OutputEncoders:
    """Every output encoder of a transmission set, in actuator order (module docstring)."""

    def __init__(self, tset):
        found = [(i, tset.actuator(n)) for i, n in enumerate(tset.actuator_names)
                 if tset.actuator(n).output_encoder is not None]
        specs = [a.output_encoder for _, a in found]
        #: The output encoders' names (on the actuator-state topics) and their actuators.
        self.names = tuple(s.name for s in specs)
        #: The topics of their own some are on (the bridge subscribes them).
        self.topics = tuple(dict.fromkeys(s.topic for s in specs if s.topic))
        self.actuators = tuple(a.name for _, a in found)
        self.cols = np.array([i for i, _ in found], dtype=np.intp)
        self.reduction = np.array([a.mechanical_reduction for _, a in found], dtype=float)
        self.offset = np.array([s.offset for s in specs], dtype=float)
        self.limit = np.array([s.deflection_limit for s in specs], dtype=float)
        from_output = np.array([s.velocity_from == 'output' for s in specs], dtype=bool)
        #: Each output's actuator's spring (None: none): its torque replaces the motor's.
        self.springs = tuple(a.spring for _, a in found)
        self._sprung = np.flatnonzero([sp is not None for sp in self.springs])
        self._velocity_cols = from_output
        self._n_act = tset.num_actuators
        #: Position (offset added) and velocity of each output encoder's last reading.
        self.values = np.full((2, len(specs)), np.nan)
        self.seen_ns = np.full(len(specs), -1, dtype=np.int64)
        #: The last state's deflections and their rates (NaN where the output encoder was
        #: not in use; a rate 0 where a velocity is unknown), and each motor's own torque
        #: through its gear (``n_a τ_a``, from its current).
        self.deflection = np.full(len(specs), np.nan)
        self.rate = np.full(len(specs), np.nan)
        self.motor_torque = np.full(len(specs), np.nan)
        #: Which output encoders the last state used, and which were beyond their limit.
        self.in_use = np.zeros(len(specs), dtype=bool)
        self.tripped = np.zeros(len(specs), dtype=bool)
        self._used = np.zeros(len(specs), dtype=bool)
        #: (output encoder, 'stale' | 'back') since the node last read them (it logs them).
        self.changes = []
        self._input = np.full(3 * tset.num_actuators + 1, np.nan)
        self._input[-1] = 1.0
        #: The transmission's input of the last state (:meth:`map_input`).
        self.last_input = self._input

    def __bool__(self):
        return bool(len(self.names))

    def take(self, which, position, velocity, now_ns):
        """Take readings of the output encoders ``which`` (indices); None: no such array."""
        if position is not None:
            self.values[0, which] = position + self.offset[which]
        if velocity is not None:
            self.values[1, which] = velocity
        self.seen_ns[which] = now_ns

    def map_input(self, flat, now_ns, stale_ns):
        """
        Return the transmission's input for the motors' state ``flat`` (3 nA + 1, read only).

        An output encoder is in use while heard from within ``stale_ns`` (None: ever) with a
        finite position; the deflections and trips are those of this state.
        """
        heard = self.seen_ns >= 0
        if stale_ns is not None:
            heard &= now_ns - self.seen_ns <= stale_ns
        fresh = heard & np.isfinite(self.values[0])
        for k in np.flatnonzero(fresh != self.in_use):
            if not fresh[k] or self._used[k]:       # its first reading is not news
                self.changes.append((self.names[k], 'back' if fresh[k] else 'stale'))
        self.in_use = fresh
        self._used |= fresh
        n = self._n_act
        motor = flat[self.cols]
        self.deflection = np.where(fresh, self.values[0] - motor / self.reduction, np.nan)
        with np.errstate(invalid='ignore'):
            self.tripped = np.abs(self.deflection) > self.limit
        rate = self.values[1] - flat[n + self.cols] / self.reduction
        self.rate = np.where(fresh, np.where(np.isfinite(rate), rate, 0.0), np.nan)
        self.motor_torque = self.reduction * flat[2 * n + self.cols]
        out = self._input
        out[:] = flat
        use = self.cols[fresh]
        out[use] = self.reduction[fresh] * self.values[0, fresh]
        speed = fresh & self._velocity_cols & np.isfinite(self.values[1])
        out[n + self.cols[speed]] = self.reduction[speed] * self.values[1, speed]
        for k in self._sprung:          # the spring's torque, at the motor, for its own
            if fresh[k]:
                torque = self.springs[k].torque(self.deflection[k], self.rate[k])
                out[2 * n + self.cols[k]] = torque / self.reduction[k]
        return out

    def split(self, cols, arrays, now_ns):
        """
        Take a message's output encoder columns (``cols`` >= nA); return the actuators' part.

        ``cols``: the message's known columns (actuators, then output encoders: the input's
        names); ``arrays``: its position, velocity and effort (None: absent).
        """
        n = self._n_act
        mine = cols >= n
        if not mine.any():
            return cols, arrays
        which = cols[mine] - n
        self.take(which, None if arrays[0] is None else arrays[0][mine],
                  None if arrays[1] is None else arrays[1][mine], now_ns)
        keep = ~mine
        return cols[keep], [None if a is None else a[keep] for a in arrays]

    def state_input(self, states, idx, names, now_ns):
        """
        Return ``(the transmission's input, joints kept, their names)`` of one state.

        The joints of an actuator deflecting beyond its limit are withheld
        (``states.deflected_joints``).
        """
        flat = self.map_input(states.flat, now_ns, states.stale_ns)
        states.deflected_joints = ()
        if self.tripped.any():
            idx, names, states.deflected_joints = self.withhold(states.transmissions, idx)
        return flat, idx, names

    def resolve(self, states):
        """Give a single-turn motor encoder whose turns are unknown the output's turns."""
        encoders = states.encoders
        for k, col in enumerate(self.cols):
            at = np.flatnonzero(encoders.cols == col)
            if (not len(at) or encoders.known[at[0]] or not np.isfinite(self.values[0, k])
                    or not np.isfinite(encoders.last[at[0]])):
                continue
            e = at[0]
            turns = np.round((self.reduction[k] * self.values[0, k] - encoders.last[e])
                             / encoders.periods[e])
            states.set_encoder_turns(self.actuators[k], float(turns))

    def withhold(self, tset, idx):
        """Return ``(kept joint indices, their names, withheld names)`` of the tripped ones."""
        motors = np.zeros(tset.num_actuators, dtype=bool)
        motors[self.cols[self.tripped]] = True
        withheld = tset.membership.joints_of_motors(motors)
        considered = np.arange(tset.num_joints) if idx is None else np.asarray(idx)
        keep, dropped = considered[~withheld[considered]], considered[withheld[considered]]
        names = tset.joint_names
        return (keep.astype(np.intp), tuple(names[i] for i in keep),
                tuple(names[i] for i in dropped))

    def tripped_text(self):
        """Say which actuators deflect beyond their limit, and by how much ('' if none)."""
        return '; '.join(f'{self.actuators[k]} ({self.names[k]}) deflects '
                         f'{self.deflection[k]:+.4g}, beyond {self.limit[k]:g}'
                         for k in np.flatnonzero(self.tripped))

    def reset(self):
        """Forget every reading (a time jump)."""
        self.values[:] = np.nan
        self.seen_ns[:] = -1
        self.deflection[:] = np.nan
        self.in_use[:] = False
        self.tripped[:] = False
        self._used[:] = False
