"""
The command deadline, without ROS: one per joint, fed by every streamed command.

Each streamed command (``joint_commands``, whether the plain mapping or a joint spring takes
it) calls :meth:`CommandDeadline.commanded` with the joints it reached: every joint of each
transmission it touched (a differential's two joints share their motors, so they share a
deadline). A joint not commanded for ``timeout_ns`` has *timed out*; the mechanism that
drives it then applies ``mode`` (``on_command_timeout``):

=================  ================================================================
mode               plain motors (:meth:`safe_commands`)      motors of a joint spring
=================  ================================================================
``hold``           position at the measured motor position,   targets latched at the joint
                   velocity 0, effort 0                       positions measured then,
                                                              q̇* = 0, τ* = 0, same gains
``zero_velocity``  velocity 0                                 q̇* = 0, τ* = 0, q* kept
``zero_effort``    effort 0                                   no torque, no gains
``none``           nothing (the timeout is still reported)    the last targets kept
=================  ================================================================

A joint spring applies its part at every state (:mod:`transmission_bridge.control.impedance`
asks :meth:`expired`); the node's timer asks :meth:`poll` a few times per timeout, logs each
trip once and sends the plain motors' safe command when it is due (at the trip, then every
``timeout_ns``) — never to a motor that a joint spring drives. A command to a timed-out
joint ends its timeout (:meth:`commanded` returns it: the node says "resumed" once).
Joints never commanded, and those a running goal owns (:meth:`forget`), never time out:
trajectories and goals are not streams.

>>> import numpy as np
>>> d = CommandDeadline(timeout_ns=100, mode='zero_velocity')
>>> d.configure(('elbow', 'wrist_pitch', 'wrist_roll'))
>>> d.commanded(np.array([1, 2]), now_ns=0).tolist()
[]
>>> [x.tolist() for x in d.poll(50)], [x.tolist() for x in d.poll(100)]
([[], []], [[1, 2], [1, 2]])
>>> [x.tolist() for x in d.poll(150)], [x.tolist() for x in d.poll(200)]
([[], []], [[], [1, 2]])
>>> d.commanded(np.array([1]), now_ns=210).tolist()      # resumed: wrist_pitch only
[1]
"""

import math

import numpy as np

MODES = ('hold', 'zero_velocity', 'zero_effort', 'none')
_NEVER = -1
_EMPTY = np.zeros(0, dtype=np.intp)


def check_mode(mode):
    """Raise ValueError unless ``mode`` is one of :data:`MODES`."""
    if mode not in MODES:
        raise ValueError(f'on_command_timeout must be one of {", ".join(MODES)}, '
                         f'got {mode!r}')


class CommandDeadline:
    """Every joint's streamed-command deadline (module docstring); ``timeout_ns`` 0: off."""

    def __init__(self, timeout_ns, mode='hold'):
        check_mode(mode)
        self.timeout_ns = int(timeout_ns)
        self.mode = mode
        self.configure(())

    def configure(self, joint_names):
        """Start over for ``joint_names`` (a new configuration): nothing commanded."""
        self.joint_names = tuple(joint_names)
        n = len(self.joint_names)
        #: When each joint was last commanded (ns; -1: never, or owned by a goal).
        self.last_ns = np.full(n, _NEVER, dtype=np.int64)
        #: The joints timed out now (as :meth:`poll` last found them).
        self.tripped = np.zeros(n, dtype=bool)
        self._next_ns = np.zeros(n, dtype=np.int64)
        self._any_tripped = False
        self._earliest = math.inf       # no deadline before this (ns); inf: none pending

    # --- commands ---------------------------------------------------------------------
    def commanded(self, joints, now_ns):
        """
        Note a streamed command to ``joints`` (indices) at ``now_ns``; return those it resumes.

        The returned indices (mostly empty) were timed out: their timeout ends here.
        """
        self.last_ns[joints] = now_ns
        if self._earliest == math.inf and self.timeout_ns:
            self._earliest = now_ns + self.timeout_ns
        if not self._any_tripped:
            return _EMPTY
        joints = np.asarray(joints, dtype=np.intp)
        back = joints[self.tripped[joints]]
        if len(back):
            self.tripped[back] = False
            self._any_tripped = bool(self.tripped.any())
        return back

    def forget(self, joints=None):
        """Take ``joints`` (all if None) out of the stream: never commanded, not timed out."""
        where = slice(None) if joints is None else np.asarray(joints, dtype=np.intp)
        self.last_ns[where] = _NEVER
        self.tripped[where] = False
        self._any_tripped = bool(self.tripped.any())

    def _settle(self):
        """
        Find the earliest deadline again.

        ``_earliest`` is a lower bound between settles: a command only moves a deadline
        later, so it is found again only once the bound has passed.
        """
        last = self.last_ns[self.last_ns != _NEVER]
        self._earliest = (int(last.min()) + self.timeout_ns if len(last) and self.timeout_ns
                          else math.inf)

    def set_timeout(self, timeout_ns):
        """Take a new ``command_timeout`` (ns; 0: off); what has timed out is judged anew."""
        self.timeout_ns = int(timeout_ns)
        self.tripped[:] = False
        self._any_tripped = False
        self._settle()

    # --- time -------------------------------------------------------------------------
    def passing(self, now_ns):
        """
        Return whether a joint would newly time out at ``now_ns`` (one comparison while none can).

        What decides whether to take the commands already received first: only then, as
        taking them out of their turn lets a command pass the state it was computed from.
        """
        if now_ns < self._earliest:
            return False
        expired = self.expired(now_ns)
        return expired is not None and bool((expired & ~self.tripped).any())

    def expired(self, now_ns):
        """
        Return which joints have timed out at ``now_ns`` (bool per joint), or None if none.

        Cheap while no deadline has passed (one comparison): a joint spring asks at every
        state.
        """
        if now_ns < self._earliest:
            return None
        self._settle()
        if now_ns < self._earliest:
            return None
        last = self.last_ns
        out = (last != _NEVER) & (now_ns - last >= self.timeout_ns)
        return out if out.any() else None

    def poll(self, now_ns):
        """
        Return ``(tripped, due)`` at ``now_ns``: joints that time out now, joints due a command.

        ``due`` holds the joints just tripped and those whose last safe command is
        ``timeout_ns`` old (the plain safe command repeats that often). Both empty while
        off or while commands flow.
        """
        expired = self.expired(now_ns)
        if expired is None:
            return _EMPTY, _EMPTY
        new = expired & ~self.tripped
        repeat = self.tripped & expired & (now_ns >= self._next_ns)
        due = new | repeat
        self.tripped |= new
        self._any_tripped = True
        self._next_ns[due] = now_ns + self.timeout_ns
        return np.flatnonzero(new), np.flatnonzero(due)

    def streamed(self):
        """Return the joints commanded by a stream (set indices): those a stop tells to stop."""
        return np.flatnonzero(self.last_ns != _NEVER)

    @property
    def tripped_names(self):
        """Return the names of the joints timed out now."""
        return tuple(n for n, t in zip(self.joint_names, self.tripped) if t)

    def timed_out_since_ns(self):
        """Return when the oldest timeout now began (ns), or None if none."""
        if not self._any_tripped:
            return None
        return int(self.last_ns[self.tripped].min()) + self.timeout_ns

    # --- the plain motors' safe command -------------------------------------------------
    def safe_commands(self, names, positions):
        """
        Return ``(names, position, velocity, effort)`` tuples of ``mode`` for motors ``names``.

        ``positions``: their measured positions, NaN where unknown or stale (``hold`` gives
        those velocity and effort 0 in a command of their own). None marks an interface not
        sent. Empty for ``none`` or no motors.
        """
        names = tuple(names)
        if not names or self.mode == 'none':
            return []
        zeros = np.zeros(len(names))
        if self.mode == 'zero_velocity':
            return [(names, None, zeros, None)]
        if self.mode == 'zero_effort':
            return [(names, None, None, zeros)]
        positions = np.asarray(positions, dtype=float)
        known = np.isfinite(positions)
        out = []
        if known.any():
            z = np.zeros(int(known.sum()))
            out.append((tuple(n for n, k in zip(names, known) if k), positions[known], z,
                        z.copy()))
        if not known.all():
            z = np.zeros(int((~known).sum()))
            out.append((tuple(n for n, k in zip(names, known) if not k), None, z, z.copy()))
        return out
