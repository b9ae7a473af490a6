"""
What the bridge node does, without ROS: actuator-state cache, checks, and the two mappings.

The node decodes a message into names and arrays, calls :meth:`BridgeCore.ingest`
and publishes what comes back; the offline bag converter calls the very same
methods, so both produce bit-identical joint states for the same input.

Input policy (doc/nodes.md, "Bad input"):

* a message whose non-empty position/velocity/effort array length differs from
  ``len(name)``, that repeats a name, or carries an infinite value is rejected
  whole and counted; NaN means "unknown" and is kept;
* unknown actuator names are skipped (the rest of the message is used) and
  reported once per name;
* a stamp older than the previous one from the same source (a bag that loops)
  forgets what that source reported before the new message is used;
* an actuator reported by two sources takes the latest message (last writer wins);
  the node warns once per actuator.

Streaming commands (:meth:`BridgeCore.map_command`, JointState with joint names) take the
same checks, and a NaN is refused too (a motor must not be sent "unknown"). A command for
one joint of a differential or four-bar needs the other joint: its last commanded value
(per interface) is used, and with none yet the command is refused with a reason. A
refused command changes nothing.

>>> from transmission_bridge.transmissions import load_transmissions
>>> core = BridgeCore(load_transmissions({'transmissions': [
...     {'name': 't', 'type': 'simple', 'actuators': [{'name': 'm', 'mechanical_reduction': 10.0}],
...      'joints': [{'name': 'q'}]}]}))
>>> out = core.ingest('s', ['m'], [5.0], [], [], stamp_ns=1)
>>> out.names, out.position, out.velocity
(('q',), array([0.5]), None)
"""

import dataclasses
import math
import typing

import numpy as np

from ..ros import named_input
from ..ros.named_input import NamedInput, squares_are_finite, sum_is_finite
from ..transmissions import ConfigError


@dataclasses.dataclass
class Counters(named_input.Counters):
    """The shared counters plus actuators reported on more than one topic."""

    shared_actuators: int = 0


@dataclasses.dataclass
class CommandCounters(named_input.Counters):
    """The shared counters for joint commands, plus those refused as incomplete or limited."""

    rejected_incomplete: int = 0
    limited: int = 0


class JointOutput(typing.NamedTuple):
    """Joint states computed from one actuator message; ``None`` where the input had no array."""

    names: tuple
    position: object
    velocity: object
    effort: object


class ActuatorCommand(typing.NamedTuple):
    """Actuator set-points mapped from one joint command; ``None`` where the input had none."""

    names: tuple
    position: object
    velocity: object
    effort: object


@dataclasses.dataclass(frozen=True)
class Lane:
    """What :meth:`BridgeCore.ingest_lane` needs to take one source's messages of one name list."""

    generation: int
    sid: int
    gather: object      # (3, k) block indices of the known names' values, message order
    cols: object        # their actuator indices; slice(None) when all actuators in order
    num_unknown: int
    whole: bool         # the output holds every joint (all transmissions complete)
    fill: object        # block index of every actuator value, actuator order; None unless
    #                     the message names every actuator and no unknown name


@dataclasses.dataclass(frozen=True)
class IngestResult:
    """Why a message was not turned into joint states (``reason``) and what to warn about."""

    reason: str = ''
    new_unknown_names: tuple = ()
    new_shared_actuators: tuple = ()
    limited: tuple = ()         # what limiting changed in a command, one note each


class BridgeCore:
    """Latest actuator values per interface, and joint states for complete transmissions."""

    def __init__(self, tset, limit_commands=True):
        self.counters = Counters()
        #: Clamp and scale streaming commands, refuse trajectories past a limit (DESIGN §7).
        self.limit_commands = limit_commands
        self.command_counters = CommandCounters()
        self.last_command_result = IngestResult()
        self._command_input = NamedInput(())
        self._last_command = None
        self.last_result = IngestResult()
        self._shared_seen = set()
        self._tset = None
        n = tset.num_actuators
        self._flat, self._values = _actuator_values(n)
        self._spare, self._spare_values = _actuator_values(n)    # a lane's next state
        self._reported = np.zeros(n, dtype=bool)
        self._last_seen_ns = np.full(n, -1, dtype=np.int64)
        # When the lane step last took every actuator at once (-1: not since the array
        # above was settled); _settle_seen writes it in before the array is used.
        self._seen_all_ns = -1
        self._owner = np.full(n, -1, dtype=np.intp)     # source id of the last writer
        self._source_ids = {}
        self._all_reported = False
        self._input = NamedInput(())
        self._generation = 0        # bumped whenever a Lane may no longer hold
        self.set_transmissions(tset)

    # --- configuration -----------------------------------------------------------
    @property
    def transmissions(self):
        """Return the :class:`TransmissionSet` in force."""
        return self._tset

    def set_transmissions(self, tset):
        """Switch to ``tset``; values of actuators that keep their name are kept."""
        old = self._tset
        self._settle_seen()
        if old is not None and old.actuator_names != tset.actuator_names:
            index = old.actuator_index
            keep = [index.get(name) for name in tset.actuator_names]
            flat, values = _actuator_values(tset.num_actuators)
            reported = np.zeros(tset.num_actuators, dtype=bool)
            seen = np.full(tset.num_actuators, -1, dtype=np.int64)
            owner = np.full(tset.num_actuators, -1, dtype=np.intp)
            for new_i, old_i in enumerate(keep):
                if old_i is not None:
                    values[:, new_i] = self._values[:, old_i]
                    reported[new_i] = self._reported[old_i]
                    seen[new_i] = self._last_seen_ns[old_i]
                    owner[new_i] = self._owner[old_i]
            self._flat, self._values, self._reported = flat, values, reported
            self._spare, self._spare_values = _actuator_values(tset.num_actuators)
            self._all_reported = False
            self._last_seen_ns, self._owner = seen, owner
        self._tset = tset
        self._generation += 1
        self._actuator_index = tset.actuator_index
        self._input = self._input.renamed(tset.actuator_names)
        self._command_input = self._command_input.renamed(tset.joint_names)
        # Per joint-name layout: which joints a command must cover and the coverage maps.
        # Computed once per layout and configuration, not per message.
        self._layout_cache = {}
        self._last_command = self._renamed_commands(old, tset)
        self._complete_for = None
        # Transmission membership of each joint, as actuator index arrays.
        self._joint_actuators = []
        for spec in tset.specs:
            members = [self._actuator_index[a.name] for a in spec.actuators]
            self._joint_actuators.extend([members] * len(spec.joints))

    # --- actuator states ---------------------------------------------------------
    def ingest(self, source, names, position, velocity, effort, stamp_ns, now_ns=None):
        """
        Take one actuator-state message; return a :class:`JointOutput` or ``None``.

        ``source`` identifies the topic (or publisher); ``stamp_ns`` is the header
        stamp in nanoseconds; ``now_ns`` the receive time on the node's clock (for
        stale detection; defaults to the stamp). When ``None`` is returned,
        :attr:`last_result` says why.
        """
        c = self.counters
        checked = self._input.check(names, (position, velocity, effort))
        if c.count(checked):
            return self._refuse(checked.reason)
        self._settle_seen()
        cols, arrays, new_unknown = checked.cols, checked.arrays, checked.new_unknown
        sid = self._source_ids.setdefault(source, len(self._source_ids))
        if self._input.stamp_went_back(sid, stamp_ns):
            c.stamp_backwards += 1
            self._forget(sid)
        shared = ()
        owners = self._owner[cols] if len(self._source_ids) > 1 else None
        if owners is not None and ((owners >= 0) & (owners != sid)).any():
            names_a = self._tset.actuator_names
            shared = tuple(names_a[i] for i in cols[(owners >= 0) & (owners != sid)]
                           if names_a[i] not in self._shared_seen)
            c.shared_actuators += len(shared)
            self._shared_seen.update(shared)
        for k, arr in enumerate(arrays):
            if arr is not None:
                self._values[k, cols] = arr
        if not self._all_reported and len(cols) and not self._reported[cols].all():
            self._reported[cols] = True
            self._complete_for = None
            self._generation += 1
            self._all_reported = bool(self._reported.all())
        self._last_seen_ns[cols] = stamp_ns if now_ns is None else now_ns
        self._owner[cols] = sid
        self.last_result = IngestResult('', new_unknown, shared)
        return self._joint_output([arr is not None for arr in arrays])

    def lane(self, source, names):
        """
        Return a :class:`Lane` for ``source``'s messages named ``names``, or None.

        Call it after :meth:`ingest` accepted such a message. None when the names have not
        been checked, or when the message did not complete its actuators' transmissions.
        """
        names = tuple(names)
        steady = self._input.steady_layout(names)
        if steady is None or source not in self._source_ids:
            return None
        rows, cols, num_unknown = steady
        reported = self._reported[cols]
        if not reported.size or not reported.all():
            return None
        n = len(names)
        rows = np.arange(n) if rows is None else rows
        gather = np.arange(3)[:, None] * (n + 1) + rows
        whole = self._complete_joints()[0] is None
        fill = None
        if num_unknown == 0 and len(rows) == self._tset.num_actuators:   # (so whole too)
            order = np.empty((3, len(rows)), dtype=np.intp)
            order[:, cols] = gather
            fill = order.reshape(-1)
        return Lane(self._generation, self._source_ids[source], gather, cols, num_unknown,
                    whole, fill)

    def ingest_lane(self, lane, block, stamp_ns, now_ns, into=None):
        """
        Take a message of ``lane``'s names: what :meth:`ingest` would return, or None.

        ``block`` holds the message's position, velocity and effort as one float64 array,
        one row each, rows ``len(names) + 1`` apart: how a JointState's three sequences
        sit in its CDR bytes (each count and its padding fill the slot between two rows,
        and are never read). ``into``, for a lane whose output is :attr:`Lane.whole`, is
        ``(state, rows)``: a ``(3, num_joints)`` array the joint state is written into
        (an output message's bytes, say) and its three rows, which the returned output
        then holds. None means "not taken, nothing changed: call :meth:`ingest`": the
        configuration or the set of reported actuators changed since the lane was made,
        the stamp went back, a value is infinite, or another source wrote one of these
        actuators last. Otherwise the counters, stamps and values change exactly as
        :meth:`ingest` changes them.
        """
        if not self._lane_open(lane, stamp_ns):
            return None
        values = block.take(lane.gather)    # NaN ("unknown") is kept, an infinite value refused
        if not sum_is_finite(values) and np.isinf(values).any():
            return None
        self._values[:, lane.cols] = values
        self._settle_seen()
        self._last_seen_ns[lane.cols] = now_ns
        self._accepted(lane, stamp_ns)
        if into is None or not lane.whole:
            return self._joint_output(_ALL_PRESENT)
        self._tset.joint_state_of_flat(self._flat, into[0])
        self.counters.published += 1
        return JointOutput(self._complete_for[1], *into[1])

    def lane_step(self, lane, state, clock):
        """
        Return ``step(block, stamp_ns)``, :meth:`ingest_lane`'s usual case in few Python steps.

        For a lane with :attr:`Lane.fill` whose output is whole, else None. ``step`` takes a
        message whose values are all finite exactly as ``ingest_lane(lane, block, stamp_ns,
        clock(), (state, ...))`` does and returns True: the joint state is in ``state``.
        It gathers every actuator's values into a spare state buffer, which becomes the
        state, instead of storing them. Otherwise it changes nothing and returns False;
        :meth:`ingest_lane` then decides. The bridge calls it for every message, where each
        Python step costs about as much as a numpy call: what the message needs is bound
        here, once per lane.
        """
        if lane.fill is None or not lane.whole or lane.generation != self._generation:
            return None
        fill, sid, counters, source_ids = lane.fill, lane.sid, self.counters, self._source_ids
        stamps, owned = self._input.last_stamps, self._owned
        write = self._tset.state_writer(state)
        core = self

        # _lane_open, then _accepted and the seen time, written out: each call saved here
        # is one per message (on a core shared with other processes, about a microsecond
        # each). Every actuator's values are gathered into the spare state, which becomes
        # the state if they are finite: tested as x . x (one BLAS call, cheaper than a
        # sum), which a value beyond 1e154 in magnitude fails too and ingest_lane then
        # decides. The take's indices are valid: 'wrap' mode spares numpy a scratch copy.
        def step(block, stamp_ns):
            last = stamps.get(sid)
            if (lane.generation != core._generation or last is not None and stamp_ns < last
                    or len(source_ids) > 1 and not owned(lane)):
                return False
            spare = core._spare
            block.take(fill, None, spare[:-1], 'wrap')
            if not squares_are_finite(spare):
                return False
            core._spare, core._flat = core._flat, spare
            core._spare_values, core._values = core._values, core._spare_values
            core._seen_all_ns = clock()         # every actuator: settled when read
            stamps[sid] = stamp_ns
            counters.received += 1
            counters.unknown_names += lane.num_unknown
            core.last_result = _ACCEPTED
            write(core._flat)
            counters.published += 1
            return True
        return step

    def _lane_open(self, lane, stamp_ns):
        """Return True if ``lane`` holds and may take ``stamp_ns`` (see :meth:`ingest_lane`)."""
        if lane.generation != self._generation or self._input.goes_back(lane.sid, stamp_ns):
            return False
        return len(self._source_ids) < 2 or self._owned(lane)

    def _owned(self, lane):
        """Return True if no other source wrote one of ``lane``'s actuators last."""
        owners = self._owner[lane.cols]
        return not ((owners >= 0) & (owners != lane.sid)).any()

    def _settle_seen(self):
        """Write the lane step's last seen time into every actuator's, before they are used."""
        if self._seen_all_ns >= 0:
            self._last_seen_ns.fill(self._seen_all_ns)
            self._seen_all_ns = -1

    def _accepted(self, lane, stamp_ns):
        """Count and record a message a lane took."""
        self._input.record_stamp(lane.sid, stamp_ns)
        c = self.counters
        c.received += 1
        c.unknown_names += lane.num_unknown
        self.last_result = _ACCEPTED

    def _refuse(self, reason):
        self.last_result = IngestResult(reason)
        return None

    def _forget(self, sid):
        self._generation += 1
        self._all_reported = False
        mask = self._owner == sid
        self._values[:, mask] = np.nan
        self._reported[mask] = False
        self._last_seen_ns[mask] = -1
        self._owner[mask] = -1
        self._complete_for = None

    def _complete_joints(self):
        if self._complete_for is None:
            joints = np.array([bool(self._reported[m].all()) for m in self._joint_actuators])
            idx = np.flatnonzero(joints)
            names = tuple(self._tset.joint_names[i] for i in idx)
            # All joints complete (the steady state): no output indexing at all.
            self._complete_for = (None if len(idx) == len(joints) else idx, names)
        return self._complete_for

    def _joint_output(self, present):
        idx, names = self._complete_joints()
        if not names:
            return self._refuse('no transmission has all its actuators reported yet')
        # All three interfaces in one pass (the velocity and effort of the last message
        # that had them where this one has none: damping needs the velocity).
        pos, vel, eff = (row if p else None for row, p in
                         zip(self._tset.joint_state_of_flat(self._flat), present))
        if idx is not None:
            pos, vel, eff = (None if x is None else x[idx] for x in (pos, vel, eff))
        self.counters.published += 1
        return JointOutput(names, pos, vel, eff)

    def reset(self):
        """Forget every actuator value and stamp (a time jump, or a fresh start)."""
        self._generation += 1
        self._all_reported = False
        self._values[:] = np.nan
        self._reported[:] = False
        self._seen_all_ns = -1
        self._last_seen_ns[:] = -1
        self._owner[:] = -1
        self._input.forget_stamps()
        self._complete_for = None

    def actuator_positions(self):
        """Latest actuator positions (NaN where unknown), actuator order; a copy."""
        return self._values[0].copy()

    def stale_actuators(self, now_ns, timeout_ns):
        """Names of actuators not heard from within ``timeout_ns`` before ``now_ns`` (or never)."""
        self._settle_seen()
        old = (self._last_seen_ns < 0) | (now_ns - self._last_seen_ns > timeout_ns)
        return tuple(self._tset.actuator_names[i] for i in np.flatnonzero(old))

    # --- commands ----------------------------------------------------------------
    def map_command(self, names, position, velocity, effort):
        """
        Map one streaming joint command to actuator set-points; ``None`` if refused.

        Same rules as a one-point trajectory (offsets on position only; effort gets the
        damping loss added back, ``tau + b v``, where the command carries a velocity;
        with none, no damping term); a partly named differential or four-bar takes the
        other joint's last commanded value. :attr:`last_command_result` says why a
        command was refused, and what unknown names to warn about.

        >>> from transmission_bridge.transmissions import load_transmissions
        >>> core = BridgeCore(load_transmissions({'transmissions': [{'name': 'w',
        ...     'type': 'differential', 'actuators': [{'name': 'l'}, {'name': 'r'}],
        ...     'joints': [{'name': 'pitch'}, {'name': 'roll'}]}]}))
        >>> core.map_command(['pitch'], [], [], [2.0]) is None    # roll never commanded
        True
        >>> core.map_command(['pitch', 'roll'], [], [], [2.0, 0.0]).effort
        array([1., 1.])
        >>> core.map_command(['roll'], [], [], [2.0]).effort      # pitch: its last, 2.0
        array([2., 0.])
        """
        c = self.command_counters
        checked = self._command_input.check(names, (position, velocity, effort))
        if not checked.rejected and any(a is not None and np.isnan(a).any()
                                        for a in checked.arrays):
            checked = named_input.Checked('non_finite', 'NaN in a command')
        if c.count(checked):
            return self._refuse_command(checked.reason)
        tset = self._tset
        cols = checked.cols
        needed, needed_names = self._command_joints(cols)
        full = self._last_command.copy()
        rows = []
        for k, arr in enumerate(checked.arrays):
            if arr is None:
                rows.append([])
                continue
            full[k, cols] = arr
            row = full[k, needed]
            if np.isnan(row).any():
                missing = [tset.joint_names[i] for i in needed if np.isnan(full[k, i])]
                c.rejected_incomplete += 1
                return self._refuse_command(
                    f'{_INTERFACES[k]} of joints {missing} never commanded: a differential or '
                    'four-bar needs both its joints; send them together once')
            rows.append(row)
        if not len(needed):
            c.rejected_incomplete += 1
            return self._refuse_command('no known joint in the command')
        try:
            out_names, pos, vel, eff, notes = self._map_limited(needed_names, rows)
        except ConfigError as exc:
            c.rejected_incomplete += 1
            return self._refuse_command(str(exc))
        self._last_command = full
        c.published += 1
        if notes:
            c.limited += 1
        self.last_command_result = IngestResult('', checked.new_unknown, limited=tuple(notes))
        return ActuatorCommand(out_names, pos, vel, eff)

    def _map_limited(self, joint_names, rows):
        """
        Map one command's (position, velocity, effort) rows, limited; and what limiting did.

        Positions are clamped to the joint limits before the map; the velocity, then the
        effort (with the damping loss ``b v`` of the limited velocity added back), are
        mapped and scaled as a whole where a joint or an actuator would exceed its limit
        (:class:`~transmission_bridge.transmissions.limits.CommandLimits`).
        """
        tset = self._tset
        joint_idx, act_idx, out_names = self._coverage(joint_names)
        limits = self._command_limits(joint_names) if self.limit_commands else None
        pos, vel, eff = (row if len(row) else None for row in rows)
        notes = []

        def mapped(kind, values):
            full = np.full(tset.num_joints, np.nan)
            full[joint_idx] = values
            return tset.joint_to_actuator(kind, full)[act_idx]
        out = [None, None, None]
        if pos is not None:
            if limits is not None:
                pos, said = limits.clamp(pos)
                notes += said
            out[0] = mapped('position', pos)
        if vel is not None:
            out[1] = mapped('velocity', vel)
            if limits is not None:
                vel, out[1], said = limits.scale('velocity', vel, out[1])
                notes += said
        if eff is not None:
            if vel is not None:
                eff = eff + tset.damping[joint_idx] * vel
            out[2] = mapped('effort', eff)
            if limits is not None:
                _, out[2], said = limits.scale('effort', eff, out[2])
                notes += said
        return (out_names, *out, notes)

    def _command_limits(self, joint_names):
        """Return the :class:`CommandLimits` of a command naming ``joint_names`` (cached)."""
        key = ('limits', tuple(joint_names))
        found = self._layout_cache.get(key)
        if found is None:
            joint_idx, act_idx, _ = self._coverage(joint_names)
            found = self._cached(key, self._tset.command_limits(joint_idx, act_idx))
        return found

    def _refuse_command(self, reason):
        self.last_command_result = IngestResult(reason)
        return None

    def _command_joints(self, cols):
        """Return indices and names of the joints of the transmissions ``cols`` touch."""
        key = ('command', cols.tobytes())
        found = self._layout_cache.get(key)
        if found is None:
            touched = np.zeros(self._tset.num_joints, dtype=bool)
            for j in cols:
                touched[self._joint_siblings[j]] = True
            needed = np.flatnonzero(touched)
            found = self._cached(key, (needed, tuple(self._tset.joint_names[i]
                                                     for i in needed)))
        return found

    def _coverage(self, joint_names):
        """``TransmissionSet.coverage`` of ``joint_names`` and the actuator names, cached."""
        key = ('coverage', tuple(joint_names))
        found = self._layout_cache.get(key)
        if found is None:
            joint_idx, act_idx = self._tset.coverage(joint_names)
            names = tuple(self._tset.actuator_names[i] for i in act_idx)
            found = self._cached(key, (joint_idx, act_idx, names))
        return found

    def _cached(self, key, value):
        if len(self._layout_cache) >= _MAX_CACHED_LAYOUTS:
            self._layout_cache.clear()
        self._layout_cache[key] = value
        return value

    def _renamed_commands(self, old, tset):
        """Last commanded joint values carried over to ``tset`` by joint name."""
        self._joint_siblings = []
        index = tset.joint_index            # a copy per access: once
        for spec in tset.specs:
            members = [index[j.name] for j in spec.joints]
            self._joint_siblings.extend([members] * len(spec.joints))
        values = np.full((3, tset.num_joints), np.nan)
        if old is not None and self._last_command is not None:
            old_index = old.joint_index
            for new_i, name in enumerate(tset.joint_names):
                old_i = old_index.get(name)
                if old_i is not None:
                    values[:, new_i] = self._last_command[:, old_i]
        return values

    def map_trajectory(self, joint_names, positions, velocities, accelerations, efforts):
        """
        Map joint-space trajectory points to actuator space.

        Each of ``positions``, ``velocities``, ``accelerations`` and ``efforts`` is a
        list with one sequence per point (each empty, or one value per joint).
        Returns ``(actuator_names, [positions, velocities, accelerations, efforts])``
        with ``None`` for fields that were empty. Accelerations use the velocity
        map; efforts add the damping loss back (``tau + b * v`` when velocities
        are given) before the effort map, so the map inverts the state map.
        Raises ConfigError with the reason when the trajectory cannot be mapped, or,
        while :attr:`limit_commands`, when a point is beyond a joint's or an
        actuator's limit (accelerations are not limited).
        """
        try:
            out = self._map_trajectory(joint_names, positions, velocities, accelerations,
                                       efforts, check_limits=self.limit_commands)
        except ConfigError:
            self.counters.trajectories_rejected += 1
            raise
        self.counters.trajectories_mapped += 1
        return out

    def _map_trajectory(self, joint_names, positions, velocities, accelerations, efforts,
                        check_limits=False):
        tset = self._tset
        joint_idx, act_idx, names = self._coverage(joint_names)
        n_points = len(positions)
        fields = []
        for label, rows in (('positions', positions), ('velocities', velocities),
                            ('accelerations', accelerations), ('effort', efforts)):
            if len(rows) != n_points:
                raise ConfigError(f'{label}: {len(rows)} entries for {n_points} points')
            lengths = {len(r) for r in rows}
            if lengths <= {0}:
                fields.append(None)
                continue
            if lengths != {len(joint_idx)}:
                raise ConfigError(
                    f'points[*].{label} must be empty or have {len(joint_idx)} values in every '
                    f'point, got lengths {sorted(lengths)}')
            values = np.array([np.asarray(r, dtype=float) for r in rows])
            if not np.isfinite(values).all():
                raise ConfigError(f'points[*].{label} contains a non-finite value')
            full = np.full((n_points, tset.num_joints), np.nan)
            full[:, joint_idx] = values
            fields.append(full)
        pos, vel, acc, eff = fields
        if eff is not None and vel is not None:
            eff = eff + tset.damping * vel
        mapped = [
            None if pos is None else tset.joint_to_actuator('position', pos)[:, act_idx],
            None if vel is None else tset.joint_to_actuator('velocity', vel)[:, act_idx],
            None if acc is None else tset.joint_to_actuator('velocity', acc)[:, act_idx],
            None if eff is None else tset.joint_to_actuator('effort', eff)[:, act_idx],
        ]
        if check_limits:
            limits = self._command_limits(joint_names)
            for kind, joints, actuators in (('position', pos, None), ('velocity', vel, mapped[1]),
                                            ('effort', eff, mapped[3])):
                if joints is not None:
                    limits.check_points(kind, joints[:, joint_idx], actuators)
        return names, mapped


_INTERFACES = ('position', 'velocity', 'effort')
_ACCEPTED = IngestResult()
_ALL_PRESENT = (True, True, True)
_MAX_CACHED_LAYOUTS = 64


def _actuator_values(n):
    """Return (flat, values): ``flat`` the three rows of ``values`` (all NaN) then a 1.0."""
    flat = np.full(3 * n + 1, np.nan)
    flat[-1] = 1.0
    return flat, flat[:-1].reshape(3, n)


def seconds_to_ns(seconds):
    """Convert a duration in seconds to integer nanoseconds (rounded)."""
    return int(math.floor(seconds * 1e9 + 0.5))
