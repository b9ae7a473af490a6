"""
The bridge's command side, without ROS: joint-space commands mapped to each motor's share.

Streaming commands (:meth:`CommandMapper.map_command`, JointState with joint names) take
the checks of actuator states (:class:`~..messages.named_input.NamedInput`), and a NaN is
refused (a motor must not be sent "unknown"). A command for one joint of a differential or
four-bar takes the other joint's last commanded value (per interface), refused with a
reason while there is none. Trajectories (:meth:`CommandMapper.map_trajectory`) name every
joint of each transmission they touch. While :attr:`CommandMapper.limit_commands`, streaming
commands are kept within the joint and actuator limits and trajectories past one refused
whole (:mod:`~transmission_bridge.transmissions.limits`). A refused command changes nothing.

A linkage maps a command's velocities and efforts at the positions it carries, else at those
measured now (``measured``); with neither, or out of the rods' reach, it is refused, saying
why. Efforts take the commanded law (:mod:`~..transmissions.effort_law`); out in driver units.

>>> from transmission_bridge.transmissions import load_transmissions
>>> commands = CommandMapper(load_transmissions({'transmissions': [{'name': 'w',
...     'type': 'differential', 'actuators': [{'name': 'l'}, {'name': 'r'}],
...     'joints': [{'name': 'pitch'}, {'name': 'roll'}]}]}))
>>> commands.map_command(['pitch'], [], [], [2.0]) is None    # roll never commanded
True
>>> commands.map_command(['pitch', 'roll'], [], [], [2.0, 0.0]).effort
array([1., 1.])
"""

import dataclasses
import typing

import numpy as np

from .command_edge import CommandEdge
from .state import ACCEPTED, IngestResult
from ..messages import named_input
from ..transmissions import ConfigError, effort_law


@dataclasses.dataclass
class CommandCounters(named_input.TrajectoryCounters):
    """The shared counters for joint commands and trajectories, refusals of incomplete ones."""

    rejected_incomplete: int = 0
    limited: int = 0


class ActuatorCommand(typing.NamedTuple):
    """Actuator set-points (the drivers' units) of one joint command; ``None``: the input's."""

    names: tuple
    position: object
    velocity: object
    effort: object


class CommandMapper:
    """Joint commands and trajectories to actuator set-points (see the module docstring)."""

    def __init__(self, tset, limit_commands=True, measured=None, motor_velocities=None):
        #: Clamp and scale streaming commands, refuse trajectories past a limit.
        self.limit_commands = limit_commands
        #: ``measured(stamp_ns)``: the state measured now (:class:`~.state.Measured`, NaN
        #: where not; the motors' velocities of the state of ``stamp_ns`` where held), or
        #: None: where a command to a linkage carries no positions, the joints' positions;
        #: for the gear stages' losses, the motors' velocities.
        self.measured = measured
        #: ``motor_velocities(stamp_ns)``: every motor's velocity a command stamped
        #: ``stamp_ns`` takes its losses at (:func:`.measurement.motor_velocities`), or
        #: None: ``measured``'s.
        self.motor_velocities = motor_velocities
        self.counters = CommandCounters()
        self.last_result = IngestResult()
        #: The joints the last command mapped reached: every joint of each transmission it
        #: touched (set indices), what feeds their deadline.
        self.last_joints = np.zeros(0, dtype=np.intp)
        self._input = named_input.NamedInput(())
        self._tset = None
        self._last_values, self._remembered = None, None
        self.set_transmissions(tset)

    @property
    def transmissions(self):
        """Return the :class:`TransmissionSet` in force."""
        return self._tset

    def set_transmissions(self, tset):
        """Switch to ``tset``; the last commanded value of each joint keeps its name."""
        old, self._tset = self._tset, tset
        self._edge = CommandEdge(tset) or None      # None: nothing per command
        self._input = self._input.renamed(tset.joint_names)
        self._coverage_cache = {}       # per joint-name list: what a command covers, limits
        self._measured_motion = (None, None)
        self._unknown = (np.full(tset.num_joints, np.nan), np.full(tset.num_actuators, np.nan))
        values, last = np.full((3, tset.num_joints), np.nan), self._last_command
        for new_i, old_i in enumerate(old.joint_index.get(n) for n in tset.joint_names) \
                if old is not None else ():
            if old_i is not None:
                values[:, new_i] = last[:, old_i]
        self._last_values = values

    def remember(self, cols, position, velocity, effort=None, received=False):
        """Note a command mapped elsewhere (:mod:`.prepared`; ``received``: streamed)."""
        self.counters.received += received      # a stream's: counted as map_command does
        self.last_result = ACCEPTED
        self._remembered = (cols, position, velocity, effort)
        self.last_joints = cols
        self.counters.published += 1

    @property
    def _last_command(self):
        """Each joint's last commanded (position, velocity, effort): (3, nJ), NaN: none."""
        if self._remembered is not None:
            (cols, *given), self._remembered = self._remembered, None
            for k in [k for k in range(3) if given[k] is not None]:
                self._last_values[k, cols] = given[k]
        return self._last_values

    # --- streaming commands ------------------------------------------------------
    def map_command(self, names, position, velocity, effort, accelerations=None,
                    stamp_ns=None):
        """
        Map one streaming joint command to actuator set-points; ``None`` if refused.

        Same rules as a one-point trajectory (offsets on position only; effort gets the
        damping loss added back, ``tau + b v``, where the command carries a velocity;
        with none, no damping term); a partly named differential or four-bar takes the
        other joint's last commanded value. ``accelerations`` (one per name, a goal's
        sample): the rotors before an efficiency below 1 are added to the efforts.
        ``stamp_ns``: the command's stamp, whose state's motor velocities its losses take
        where they are still held. :attr:`last_result` says why a command was refused, and
        what unknown names to warn about.
        """
        c, tset = self.counters, self._tset
        checked = self._input.check(names, (position, velocity, effort))
        if not checked.rejected and any(a is not None and np.isnan(a).any()
                                        for a in checked.arrays):
            checked = named_input.Checked('non_finite', 'NaN in a command')
        if c.count(checked):
            return self._refuse(checked.reason)
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
                return self._refuse(
                    f'{_INTERFACES[k]} of joints {missing} never commanded: a differential or '
                    'four-bar needs both its joints; send them together once')
            rows.append(row)
        if not len(needed):
            c.rejected_incomplete += 1
            return self._refuse('no known joint in the command')
        acc = None
        if accelerations is not None and len(rows[2]):
            full_acc = np.zeros(tset.num_joints)
            full_acc[cols] = accelerations
            acc = full_acc[needed]
        try:
            out_names, pos, vel, eff, notes = self._map_limited(needed_names, rows, acc,
                                                                stamp_ns)
        except ConfigError as exc:
            c.rejected_incomplete += 1
            return self._refuse(str(exc))
        self._last_values = full
        self.last_joints = needed
        c.published += 1
        if notes:
            c.limited += 1
        self.last_result = IngestResult('', checked.new_unknown, limited=tuple(notes))
        if self._edge is not None:      # springs, the drivers' units (SI inside): .command_edge
            pos, vel, eff = self._edge.out(self.coverage(needed_names)[1], (pos, vel, eff),
                                           self.measured)
        return ActuatorCommand(out_names, pos, vel, eff)

    def _map_limited(self, joint_names, rows, acc=None, stamp_ns=None):
        """
        Map one command's (position, velocity, effort) rows, limited; and what limiting did.

        Positions are clamped to the joint limits before the map; the velocity, then the
        effort (with the damping loss ``b v`` of the limited velocity added back), are
        mapped and scaled as a whole where a joint or an actuator would exceed its limit
        (:class:`~transmission_bridge.transmissions.limits.CommandLimits`).
        """
        tset = self._tset
        joint_idx, act_idx, out_names = self.coverage(joint_names)
        limits = self.command_limits(joint_names) if self.limit_commands else None
        pos, vel, eff = (row if len(row) else None for row in rows)
        notes = []
        at = None                       # a linkage's configuration: where to map

        def mapped(kind, values):
            full = np.full(tset.num_joints, np.nan)
            full[joint_idx] = values
            out = tset.joint_to_actuator(kind, full, positions=at)[act_idx]
            if not tset.constant_map and np.isnan(out).any():
                raise ConfigError(self._unreachable(joint_names))
            return out
        out = [None, None, None]
        if pos is not None:
            if limits is not None:
                pos, said = limits.clamp(pos)
                notes += said
        if not tset.constant_map and (vel is not None or eff is not None):
            at = self._positions(joint_idx, pos)
        if pos is not None:
            out[0] = mapped('position', pos)
            if limits is not None:
                out[0], said = limits.clamp_actuators(out[0])
                notes += said
        if vel is not None:
            out[1] = mapped('velocity', vel)
            if limits is not None:
                vel, out[1], said = limits.scale('velocity', vel, out[1])
                notes += said
        if eff is not None:
            # One motion for every velocity term (effort_law): the command's, else measured.
            stages = self.stages(joint_names)
            qd, speeds = self.motion(vel, out[1], joint_idx, act_idx, at, stamp_ns,
                                     stages is not None)
            wanted = eff
            eff = effort_law.damped(tset, eff, qd[joint_idx], joint_idx)
            out[2] = mapped('effort', eff)
            if stages is None:                  # ideal gears: as before, to the bit
                if limits is not None:
                    _, out[2], said = limits.scale('effort', eff, out[2])
                    notes += said
                return (out_names, *out, notes)
            table, loops, inverse = stages
            # The usual case in one compiled call: every motor's torque through its stage,
            # within every limit. Else (a limit, a rotor) the law's reference: scaled whole.
            if acc is None and loops.commanded_in_place(out[2], speeds, 0, act_idx, table,
                                                        inverse) <= 1.0 and (
                    limits is None or limits.joints_within('effort', eff)):
                return (out_names, *out, notes)
            tau, qdd = np.zeros((2, tset.num_joints))
            tau[joint_idx] = wanted
            qdd[joint_idx] = 0.0 if acc is None else acc
            tau_o, gain, offset = (x[act_idx] for x in effort_law.commanded_parts(
                tset, tau, qd, speeds, at, None if acc is None else qdd))
            if np.isnan(tau_o).any():
                raise ConfigError(self._unreachable(joint_names))
            if limits is not None:
                _, out[2], said = limits.scale_through_losses(eff, tau_o, gain, offset)
                notes += said
            else:
                out[2] = gain * tau_o + offset
        return (out_names, *out, notes)

    def motion(self, vel, motor_vel, joint_idx, act_idx, at, stamp_ns, lossy):
        """Return ``(q̇, θ̇)`` (all) the law reads: the command's own motion, else its state's."""
        tset, unknown = self._tset, self._unknown
        damped = tset.damping[joint_idx].any()
        if not (damped or lossy):
            return unknown
        if vel is not None:
            qd, speeds = np.full(tset.num_joints, np.nan), np.full(tset.num_actuators, np.nan)
            qd[joint_idx] = vel
            speeds[act_idx] = motor_vel
            return qd, speeds
        speeds = self._velocities(stamp_ns)
        if not damped:
            return unknown[0], speeds
        if at is not None:          # a linkage: J at the pose
            return effort_law.command_motion(tset, None, speeds, np.where(np.isnan(at), 0, at))
        key = speeds.tobytes()      # the same state's motion for every command until the next
        if self._measured_motion[0] != key:
            self._measured_motion = (key, effort_law.command_motion(tset, None, speeds))
        return self._measured_motion[1]

    def stages(self, joint_names):
        """Return ``(stage table, loops, 1 / each effort limit or 0)``; None: ideal stages."""
        key = ('stages', tuple(joint_names), self.limit_commands)
        found = self._coverage_cache.get(key)
        if found is None:
            from ..transmissions import loss_loops
            losses = self._tset.losses
            _, act_idx, _ = self.coverage(joint_names)
            stages = None
            if losses.lossy[act_idx].any():
                inverse = np.zeros(len(act_idx))
                if self.limit_commands:
                    inverse = 1.0 / self.command_limits(joint_names).magnitude_limits(
                        'effort')[1]
                stages = (loss_loops.stage_table(losses, False), loss_loops.kernels(), inverse)
            found = self._cached(key, (stages,))
        return found[0]

    def _velocities(self, stamp_ns=None):
        """Return every motor's velocity a command's losses take (NaN: unknown, at rest)."""
        if self.motor_velocities is not None:
            return self.motor_velocities(stamp_ns)
        return (self._unknown[1] if self.measured is None
                else self.measured(stamp_ns).motor_velocity)

    def _positions(self, joint_idx, commanded):
        """Return the joint positions to map a linkage's command at: commanded, else measured."""
        tset, full = self._tset, np.full(self._tset.num_joints, np.nan)
        if commanded is not None:
            full[joint_idx] = commanded
            return full
        full = self.measured(None).position if self.measured is not None else None
        linkage = np.intersect1d(tset.linkage_joints, joint_idx)
        if full is None or np.isnan(full[linkage]).any():
            names = [tset.joint_names[i] for i in linkage]
            raise ConfigError(
                f'joints {names} move through a linkage, whose velocities and efforts map at '
                'its positions: none in the command and none measured yet (command the '
                'positions too, or wait for actuator_states)')
        return full

    def _unreachable(self, joint_names):
        """Say why a linkage's command did not map: its rods cannot reach, or it is singular."""
        rods = set(self._tset.linkage_joints.tolist())
        return (f'joints {[n for n in joint_names if self._tset.joint_index[n] in rods]}: the '
                "linkage's rods cannot reach this configuration, or it is singular there")

    def _refuse(self, reason):
        self.last_result = IngestResult(reason)

    def _command_joints(self, cols):
        """Return indices and names of the joints of the transmissions ``cols`` touch."""
        key = ('command', cols.tobytes())
        found = self._coverage_cache.get(key)
        if found is None:
            needed = self._tset.membership.reach(cols)
            found = self._cached(key, (needed, tuple(self._tset.joint_names[i]
                                                     for i in needed)))
        return found

    def coverage(self, joint_names):
        """``TransmissionSet.coverage`` of ``joint_names`` and the actuator names, cached."""
        key = ('coverage', tuple(joint_names))
        found = self._coverage_cache.get(key)
        if found is None:
            joint_idx, act_idx = self._tset.coverage(joint_names)
            names = tuple(self._tset.actuator_names[i] for i in act_idx)
            found = self._cached(key, (joint_idx, act_idx, names))
        return found

    def command_limits(self, joint_names):
        """Return the :class:`CommandLimits` of a command naming ``joint_names`` (cached)."""
        key = ('limits', tuple(joint_names))
        found = self._coverage_cache.get(key)
        if found is None:
            joint_idx, act_idx, _ = self.coverage(joint_names)
            found = self._cached(key, self._tset.command_limits(joint_idx, act_idx))
        return found

    def _cached(self, key, value):
        if len(self._coverage_cache) >= _MAX_CACHED:
            self._coverage_cache.clear()
        self._coverage_cache[key] = value
        return value

    # --- trajectories ------------------------------------------------------------
    def map_trajectory(self, joint_names, positions, velocities, accelerations, efforts):
        """
        Map joint-space trajectory points to actuator space; raise ConfigError saying why not.

        Each argument holds one sequence per point (empty, or one value per joint). Returns
        ``(actuator_names, [positions, velocities, accelerations, efforts])``, None for a
        field empty throughout. Accelerations take the velocity map, efforts the commanded
        law; while :attr:`limit_commands` a point beyond a limit refuses it whole.
        """
        try:
            out = self._map_trajectory(joint_names, positions, velocities, accelerations,
                                       efforts, self.limit_commands)
        except ConfigError:
            self.counters.trajectories_rejected += 1
            raise
        self.counters.trajectories_mapped += 1
        return out if self._edge is None else (
            out[0], self._edge.out(self.coverage(joint_names)[1], out[1]))

    def _map_trajectory(self, joint_names, positions, velocities, accelerations, efforts,
                        check_limits):
        tset = self._tset
        joint_idx, act_idx, names = self.coverage(joint_names)
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
        raw_eff = eff
        if eff is not None and vel is not None:
            eff = effort_law.damped(tset, eff, vel)
        linkage = bool(np.intersect1d(tset.linkage_joints, joint_idx).size)
        if linkage and pos is None and not (vel is None and acc is None and eff is None):
            raise ConfigError(f'joints {list(joint_names)}: a linkage maps velocities and '
                              'efforts at its positions: give positions in every point')
        if linkage and acc is not None and vel is None:
            raise ConfigError('a linkage maps accelerations with the velocities: give both')
        mapped = [
            None if pos is None else tset.joint_to_actuator('position', pos)[:, act_idx],
            None if vel is None else tset.joint_to_actuator('velocity', vel,
                                                            positions=pos)[:, act_idx],
            None if acc is None else (
                tset.joint_accelerations_to_actuator(acc, pos, vel) if linkage
                else tset.joint_to_actuator('velocity', acc))[:, act_idx],
            None if eff is None else tset.joint_to_actuator('effort', eff,
                                                            positions=pos)[:, act_idx],
        ]
        if linkage:
            for field in mapped:
                bad = np.argwhere(np.isnan(field)) if field is not None else ()
                if len(bad):
                    raise ConfigError(f'point {int(bad[0][0])}: '
                                      + self._unreachable(joint_names))
        stages = self.stages(joint_names)
        if stages is not None and mapped[3] is not None:    # the motors' torques, planned
            qd = np.full_like(eff, np.nan) if vel is None else vel
            speeds = (np.full((n_points, tset.num_actuators), np.nan) if vel is None else
                      tset.joint_to_actuator('velocity', vel, positions=pos))
            motors = effort_law.commanded_efforts(tset, raw_eff, qd, speeds, pos, acc)
            mapped[3] = motors[:, act_idx]
        if check_limits:
            limits = self.command_limits(joint_names)
            for kind, joints, actuators in (('position', pos, mapped[0]),
                                            ('velocity', vel, mapped[1]),
                                            ('effort', eff, mapped[3])):
                if joints is not None:
                    limits.check_points(kind, joints[:, joint_idx], actuators,
                                        lossy=kind == 'effort' and stages is not None)
        return names, mapped


_INTERFACES = ('position', 'velocity', 'effort')
_MAX_CACHED = 64
