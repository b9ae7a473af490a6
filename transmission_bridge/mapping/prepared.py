"""
A command layout mapped the same way every state: a running goal's joints, prepared once.

A FollowJointTrajectory goal commands the same joints at every state. The reference,
:meth:`.commands.CommandMapper.map_command`, checks the names, completes a differential from
the last command and maps, limits and builds a message anew each time (some 100 µs on the
example arm's wrist: a goal then cost the bridge twice its idle CPU). :class:`PreparedCommand`
does the same arithmetic with what a layout fixes computed once, and writes the doubles into
a serialized JointState whose names and layout never change (:mod:`..messages.wire`):

* positions ``θ = P q + p0``, velocities ``θ̇ = P q̇``, efforts ``τ_a = E (τ + b q̇)`` (the
  commanded law's ideal-stage form, :mod:`..transmissions.effort_law`: damping at the
  command's own motion, the map, no stage loss), ``P``, ``p0`` and ``E`` read off the set's
  own maps at the unit vectors (exact for a linear set up to rounding);
* one test that every joint and motor is within its limits (position range, velocity and
  effort magnitudes): the reference's clamps and scalings would then change nothing.

Whatever it does not cover takes the reference, whole: a set with a linkage, a motor whose
stage has losses or friction or a spring, a layout that does not name every joint its motors
reach, a value beyond a limit or not finite (:meth:`PreparedCommand.command` returns None).
Tests pin the two to the same motor values (test_prepared_command.py).
"""

import math

import numpy as np

from ..messages.named_input import squares_are_finite
from ..messages.wire import JointStateLayout
from ..transmissions import ConfigError, effort_law


class PreparedCommand:
    """One layout's map (module docstring); :attr:`usable` False: always the reference."""

    def __init__(self, mapper, names, with_effort):
        tset = mapper.transmissions
        self.names = tuple(names)
        self.usable = False
        try:            # every joint known, once; every transmission touched named whole
            joint_idx, act_idx, out_names = mapper.coverage(self.names)
        except ConfigError:
            return
        cols = [tset.joint_index[n] for n in self.names]
        self.usable = bool(tset.constant_map
                           and sorted(cols) == sorted(np.asarray(joint_idx).tolist())
                           and mapper.stages(self.names) is None
                           and not any(tset.actuator(a).spring for a in out_names))
        if not self.usable:
            return
        self._mapper, self._cols = mapper, np.asarray(cols, dtype=np.intp)
        n, k, m = tset.num_joints, len(cols), len(out_names)
        P, p0 = _affine(tset, 'position', self._cols, act_idx, n)
        V, _ = _affine(tset, 'velocity', self._cols, act_idx, n)
        E, _ = _affine(tset, 'effort', self._cols, act_idx, n)
        B, one, zero = np.diag(tset.damping[self._cols]), np.eye(k), np.zeros((k, k))
        # z = (q, q̇[, τ]) -> y = (q, θ, q̇, θ̇[, τ + b q̇, E (τ + b q̇)]): one product.
        rows = [[one, zero], [P, np.zeros((m, k))], [zero, one], [np.zeros((m, k)), V]]
        if with_effort:
            rows = [r + [np.zeros((len(r[0]), k))] for r in rows]
            rows += [[zero, B, one], [np.zeros((m, k)), E @ B, E]]
        self._M = np.block(rows)
        self._y0 = np.zeros(len(self._M))
        self._y0[k:k + m] = p0
        self._k, self._m, self._with_effort = k, m, with_effort
        self._at = (slice(k, k + m), slice(2 * k + m, 2 * k + 2 * m), slice(3 * k + 2 * m, None))
        # Every y within [lower, upper]: the positions' ranges, ± the magnitudes' limits.
        limits = mapper.command_limits(self.names) if mapper.limit_commands else None
        self._limited = limits is not None
        if self._limited:
            kinds = ('velocity', 'effort') if with_effort else ('velocity',)
            magnitudes = np.concatenate([x for kind in kinds
                                         for x in limits.magnitude_limits(kind)])
            self._lower = np.concatenate([limits.lower, limits.actuator_lower, -magnitudes])
            self._upper = np.concatenate([limits.upper, limits.actuator_upper, magnitudes])
        if not tset.units.identity:
            self._in_driver_units(tset.units, act_idx)
        self._template = JointStateLayout(out_names, '', (m, m, m if with_effort else 0)
                                          ).encoder()
        self._fields = self._template.fields
        self._affine = None

    def _in_driver_units(self, units, act_idx):
        """
        Make the map's motor rows the drivers' units: ``(y - offset) / factor``, bounds too.

        The law of :mod:`..transmissions.units` folded into ``M``, ``y0`` and the bounds, so
        the compiled step writes the drivers' values as it writes SI ones.
        """
        for k, rows in enumerate(self._at[:3 if self._with_effort else 2]):
            f, o = units.factor[k, act_idx], units.offset[k, act_idx]
            self._M[rows] /= f[:, None]
            self._y0[rows] = (self._y0[rows] - o) / f
            if self._limited:
                ends = [(bound[rows] - o) / f for bound in (self._lower, self._upper)]
                self._lower[rows], self._upper[rows] = np.minimum(*ends), np.maximum(*ends)

    def command(self, position, velocity, effort, stamp_ns):
        """
        Return the serialized actuator command of one goal sample, or None (the reference's).

        ``position``, ``velocity`` (one per name); ``effort`` one per name, or None for a
        layout made without efforts.
        """
        z = np.concatenate((position, velocity) if effort is None
                           else (position, velocity, effort))
        if not math.isfinite(z @ z):       # NaN or inf anywhere (or a square overflowing)
            return None
        y = self._M @ z
        y += self._y0
        if self._limited and not ((y >= self._lower) & (y <= self._upper)).all():
            return None
        return self.write(y, position, velocity, effort, stamp_ns)

    def affine(self):
        """
        Return the map, its bounds and outputs, for :func:`..control.goal_loops.follow`.

        ``(M, y0, lower, upper, y, motor positions, motor velocities, at_p, at_v)``: the map
        ``y = M z + y0`` (a layout made without efforts: ``z = (q, q̇)``), every ``y``'s bounds
        (±inf where commands are not limited), a scratch ``y``, the message's two fields and
        where their rows start in ``y``. Made once per layout; :meth:`followed` sends them.
        """
        if self._affine is None:
            rows = len(self._y0)
            lower = self._lower if self._limited else np.full(rows, -np.inf)
            upper = self._upper if self._limited else np.full(rows, np.inf)
            self._affine = (self._M, self._y0, np.ascontiguousarray(lower, dtype=float),
                            np.ascontiguousarray(upper, dtype=float), np.empty(rows),
                            self._fields[0], self._fields[1], self._at[0].start,
                            self._at[1].start)
        return self._affine

    def followed(self, position, velocity, stamp_ns, effort=None):
        """Return the serialized command whose motor fields are written (goal's step: affine)."""
        self._mapper.remember(self._cols, position, velocity, effort)
        return self._template.stamped(stamp_ns)

    def write(self, y, position, velocity, effort, stamp_ns):
        """Return the serialized command holding ``y``'s motor rows (mapped and within limits)."""
        fields = self._fields
        fields[0][:] = y[self._at[0]]
        fields[1][:] = y[self._at[1]]
        if effort is not None:
            fields[2][:] = y[self._at[2]]
        return self.followed(position, velocity, stamp_ns, effort)


class PreparedCommands:
    """The layouts prepared so far, by (names, with efforts, limits) (a few: goals' groups)."""

    def __init__(self):
        self._kept = {}

    def get(self, mapper, names, with_effort):
        """Return the :class:`PreparedCommand` of ``names`` under ``mapper``, made once."""
        key = (tuple(names), with_effort, mapper.limit_commands)
        found = self._kept.get(key)
        if found is None or found[0] is not mapper.transmissions:
            if len(self._kept) > 16:
                self._kept.clear()
            found = self._kept[key] = (mapper.transmissions,
                                       PreparedCommand(mapper, names, with_effort))
        return found[1]


class StreamedCommand:
    """
    One joint_commands layout mapped as the reference maps it, to the bit, minus its lookups.

    A stream keeps one layout (:mod:`..messages.wire`: its names, and which of position,
    velocity and effort it carries). What the reference (:meth:`.commands.CommandMapper.
    map_command`) looks up, checks and completes for every message is fixed by the layout
    and done once here: the joints' columns, the transmissions they cover, each map cut
    down to them (:meth:`~..transmissions.compiled.LinearTerms.taken`), the limits, the
    output template. A message then takes the reference's own operations in its
    order: positions clamped to the joints' then the motors' ranges, velocities scaled,
    efforts given the damping at the command's velocity (else at the measured motion,
    :meth:`~.commands.CommandMapper.motion`), mapped and scaled, then the drivers'
    units; the same bits. A lossy stage takes the reference's compiled in-place step (its
    common case). Where a limit would change anything, or a value is not finite: None, and
    the reference maps the message. A layout with a linkage, a spring or a transmission
    partly named is never :attr:`usable`.
    """

    def __init__(self, mapper, names, sizes, frame_id=''):
        tset = mapper.transmissions
        self.names = tuple(names)
        self.usable = False
        k = len(self.names)
        present = tuple(bool(size) for size in sizes)
        if not k or any(size not in (0, k) for size in sizes) or not any(present):
            return
        try:            # every joint known, once; every transmission touched named whole
            cols, act_idx, out_names = mapper.coverage(self.names)
        except ConfigError:
            return
        self.usable = bool(tset.constant_map
                           and not any(tset.actuator(a).spring for a in out_names))
        if not self.usable:
            return
        self._mapper, self._tset, self._cols, self._act_idx = mapper, tset, cols, act_idx
        # Each map cut down to these joints, in the layout's order: the same terms, the same
        # bits (a transmission's motors read its own joints only).
        self._maps = [(tset.joint_offsets[cols] if kind == 'position' else None,
                       tset.joint_terms(kind).taken(act_idx, cols)) if there else None
                      for kind, there in zip(('position', 'velocity', 'effort'), present)]
        self._stages = mapper.stages(self.names)     # None: ideal gears
        self._limits = mapper.command_limits(self.names) if mapper.limit_commands else None
        self._units = None if tset.units.identity else tset.units
        self._template = JointStateLayout(
            out_names, frame_id, [len(out_names) if there else 0 for there in present]
        ).encoder()

    def command(self, arrays, header, stamp_ns=None):
        """
        Return the serialized actuator command of one message, or None (the reference's).

        ``arrays``: its (position, velocity, effort), empty where the layout has none;
        ``header``: its header bytes (stamp and frame_id, copied); ``stamp_ns``: the stamp
        whose state's motion the damping takes where the message carries no velocity.
        """
        given = [values if len(values) else None for values in arrays]
        if not all(values is None or squares_are_finite(values) for values in given):
            return None
        pos, vel, eff = given
        limits, maps = self._limits, self._maps
        out = [None, None, None]
        if pos is not None:
            if limits is not None:
                pos, said = limits.clamp(pos)
                if said:
                    return None
            offsets, terms = maps[0]
            out[0] = terms(pos - offsets)
            if limits is not None:
                out[0], said = limits.clamp_actuators(out[0])
                if said:
                    return None
        if vel is not None:
            out[1] = maps[1][1](vel)
            if limits is not None:
                vel, out[1], said = limits.scale('velocity', vel, out[1])
                if said:
                    return None
        if eff is not None:
            cols, act_idx, stages = self._cols, self._act_idx, self._stages
            qd, speeds = self._mapper.motion(vel, out[1], cols, act_idx, None, stamp_ns,
                                             stages is not None)
            eff = effort_law.damped(self._tset, eff, qd[cols], cols)
            out[2] = maps[2][1](eff)
            if stages is None:
                if limits is not None:
                    _, out[2], said = limits.scale('effort', eff, out[2])
                    if said:
                        return None
            else:       # every motor's torque through its stage, in place, within limits
                table, loops, inverse = stages
                if loops.commanded_in_place(out[2], speeds, 0, act_idx, table, inverse) > 1.0 \
                        or (limits is not None and not limits.joints_within('effort', eff)):
                    return None
        if self._units is not None:
            out = self._units.fields_to_driver(self._act_idx, out)
        self._mapper.remember(self._cols, *(
            None if values is None else np.array(values) for values in given), received=True)
        template = self._template
        template.set_header(header)
        template.fill(out)
        return template.to_bytes()


def _affine(tset, kind, cols, act_idx, n):
    """Return ``(A, b)`` with ``map(x) = A x + b`` for the joints ``cols``, read off the map."""
    zero = np.zeros(n)
    base = tset.joint_to_actuator(kind, zero)[act_idx]
    columns = []
    for c in cols:
        unit = zero.copy()
        unit[c] = 1.0
        columns.append(tset.joint_to_actuator(kind, unit)[act_idx] - base)
    return np.array(columns).T.reshape(len(act_idx), len(cols)), base
