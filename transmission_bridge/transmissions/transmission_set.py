"""
All transmissions of a robot as one vectorised map between actuator and joint vectors.

The actuator vector is ordered as :attr:`TransmissionSet.actuator_names` and the
joint vector as :attr:`TransmissionSet.joint_names` (file order, roles kept).
At construction the set is compiled (:mod:`.compiled`): each joint or actuator value
depends only on the values of its own transmission, and the linear members' maps become
``out[k] = x[i0[k]] * c0[k] + x[i1[k]] * c1[k] (+ ...)`` with coefficients taken from the
types' formulas. One call is a handful of numpy operations whatever the number or types
of transmissions, maps one sample or a whole bag the same way (element-wise, so bit for
bit), and a NaN (unknown) actuator value never reaches the joints of another
transmission. A stream of actuator states (the bridge's, a bag's) goes through a
:meth:`~TransmissionSet.state_map`, which may keep what a member needs from one state to
the next.

>>> from transmission_bridge.transmissions import load_transmissions
>>> ts = load_transmissions({'transmissions': [
...     {'name': 'elbow', 'type': 'simple', 'actuators': [{'name': 'm'}],
...      'joints': [{'name': 'elbow', 'mechanical_reduction': 100.0, 'offset': 0.1}]}]})
>>> ts.actuator_to_joint('position', [[10.0], [20.0]])
array([[0.2],
       [0.3]])
"""

import math

import numpy as np

from . import linkage_loops
from .base import last_dimension
from .compiled import LinearStateMap, LinearTerms
from .errors import ConfigError
from .interfaces import map_kind, POSITION, VELOCITY
from .limits import CommandLimits
from .linkage import pack
from .membership import Membership
from .set_changes import ChangesMixin
from .set_streams import StreamsMixin
from .spec import unique_names


_KINDS = ('velocity', 'effort')     # position = the velocity map plus the joint offsets


class TransmissionSet(ChangesMixin, StreamsMixin):
    """An immutable, validated collection of named transmissions (see module docstring)."""

    def __init__(self, specs, warnings=(), skipped=()):
        specs = tuple(specs)
        self._warnings = tuple(str(w) for w in warnings)
        self._skipped = tuple(skipped)
        if not specs:
            raise ConfigError('transmissions: at least one transmission is required')
        unique_names(((s.name, None) for s in specs), 'transmission')
        unique_names(((a.name, s.name) for s in specs for a in s.actuators), 'actuator')
        unique_names(((j.name, s.name) for s in specs for j in s.joints), 'joint')
        self._specs = specs
        self._transmissions = tuple(s.build() for s in specs)
        self._actuator_names = tuple(a.name for s in specs for a in s.actuators)
        self._joint_names = tuple(j.name for s in specs for j in s.joints)
        self._actuator_index = {n: i for i, n in enumerate(self._actuator_names)}
        self._joint_index = {n: i for i, n in enumerate(self._joint_names)}
        self._membership = Membership(specs, self._joint_index, self._actuator_index)
        self._joint_specs = {j.name: j for s in specs for j in s.joints}
        self._actuator_specs = {a.name: a for s in specs for a in s.actuators}
        self._offsets = np.array([j.offset for s in specs for j in s.joints])
        self._defaults = np.array([j.default_position for s in specs for j in s.joints])
        self._damping = np.array([j.damping for s in specs for j in s.joints])
        for arr in (self._offsets, self._defaults, self._damping):
            arr.flags.writeable = False
        # Each transmission's own maps, as dense matrices placed in the whole set's.
        with np.errstate(all='ignore'):       # extreme reductions overflow as the formulas do
            a2j = {kind: self._compiled('a2j', kind) for kind in _KINDS}
            j2a = {kind: self._compiled('j2a', kind) for kind in _KINDS}
        members = self._membership
        actuators_of = [members.joint_actuators[j] for j in range(self.num_joints)]
        joints_of = [members.joints[t] for t in members.of_actuator]
        widest = max([2] + [len(s.actuators) for s in specs if s.is_linear])   # two at least
        self._a2j = {kind: LinearTerms(m, actuators_of, widest) for kind, m in a2j.items()}
        self._j2a = {kind: LinearTerms(m, joints_of, widest) for kind, m in j2a.items()}
        # The bridge's whole (position, velocity, effort) state in one pass.
        self._linear_state = LinearStateMap(self._a2j['velocity'], self._a2j['effort'],
                                            self._offsets, self.num_actuators)
        # The members that are not linear (linkages) map their own joints after the rest,
        # all of them in one call of the compiled loops (linkage_loops.set_state).
        linkages = [(t, members.joints[k].tolist(), members.actuators[k].tolist())
                    for k, (s, t) in enumerate(zip(specs, self._transmissions))
                    if not s.is_linear]
        self._linkages = pack(linkages) if linkages else None
        self._linked_actuators = np.array([a for _, _, acts in linkages for a in acts],
                                          dtype=np.intp)      # the motors the linkages drive
        self._linkage_joints = np.array(sorted(j for _, js, _ in linkages for j in js),
                                        dtype=np.intp)
        self._linkage_members = [[self._joint_names[j] for j in js] for _, js, _ in linkages]
        self._rotors = None
        self._losses = None
        self._joint_side = None     # effort_law.joint_side, made on first use

    # --- description -------------------------------------------------------------
    @property
    def warnings(self):
        """Return what the loader accepted but had to assume, one sentence each."""
        return self._warnings

    @property
    def skipped(self):
        """Return the :class:`SkippedTransmission` of the file (types this package lacks)."""
        return self._skipped

    @property
    def specs(self):
        """Return the :class:`TransmissionSpec` objects, in file order."""
        return self._specs

    @property
    def transmissions(self):
        """Return the math objects, parallel to :attr:`specs`."""
        return self._transmissions

    @property
    def actuator_names(self):
        """Return the actuator names: the order of the actuator vector."""
        return self._actuator_names

    @property
    def joint_names(self):
        """Return the joint names: the order of the joint vector."""
        return self._joint_names

    @property
    def num_actuators(self):
        """Return the length of the actuator vector."""
        return len(self._actuator_names)

    @property
    def num_joints(self):
        """Return the length of the joint vector."""
        return len(self._joint_names)

    @property
    def actuator_index(self):
        """Return a mapping actuator name -> position in the actuator vector."""
        return dict(self._actuator_index)

    @property
    def joint_index(self):
        """Return a mapping joint name -> position in the joint vector."""
        return dict(self._joint_index)

    @property
    def joint_offsets(self):
        """Return the joint offsets (rad or m), joint order; read-only array."""
        return self._offsets

    @property
    def default_positions(self):
        """Return the default (home) joint positions (rad or m), joint order; read-only."""
        return self._defaults

    @property
    def damping(self):
        """Return the viscous transmission damping b >= 0 per joint (N·m·s/rad or N·s/m)."""
        return self._damping

    def joint(self, name):
        """Return the :class:`JointSpec` called ``name`` (ConfigError if unknown)."""
        try:
            return self._joint_specs[name]
        except KeyError:
            raise ConfigError(f'unknown joint {name!r}') from None

    def actuator(self, name):
        """Return the :class:`ActuatorSpec` called ``name`` (ConfigError if unknown)."""
        try:
            return self._actuator_specs[name]
        except KeyError:
            raise ConfigError(f'unknown actuator {name!r}') from None

    # --- the maps ----------------------------------------------------------------
    @property
    def constant_map(self):
        """Return True when no member is a linkage: no map then needs the positions."""
        return self._linkages is None

    @property
    def linkage_joints(self):
        """Return the joint indices of the linkages (set order; empty when linear)."""
        return self._linkage_joints

    def actuator_to_joint(self, interface, values, positions=None):
        """
        Map ``(..., num_actuators)`` actuator values to ``(..., num_joints)`` joint values.

        A set with linkages (:attr:`linear` False) needs the actuator ``positions`` (same
        shape) to map velocities and efforts, and takes a batch of positions as one stream
        (:meth:`state_map`); a joint it cannot compute (a refused state) is NaN.
        """
        kind = map_kind(interface)
        a = last_dimension(values, self.num_actuators, 'actuator')
        if self._linkages is None:
            if kind == POSITION:
                return self._a2j['velocity'](a) + self._offsets
            return self._a2j[kind](a)
        if kind != POSITION and positions is None:
            raise ConfigError(f'a set with linkages maps {interface} only at given actuator '
                              'positions')
        states = np.zeros(a.shape[:-1] + (3, self.num_actuators))
        states[..., 0, :] = a if kind == POSITION else positions
        if kind != POSITION:
            states[..., 1 if kind == VELOCITY else 2, :] = a
        out = self.state_map(damped=False)(_flat(states))
        return out[..., {'position': 0, 'velocity': 1, 'effort': 2}[kind], :]

    def joint_to_actuator(self, interface, values, positions=None):
        """
        Map ``(..., num_joints)`` joint values to ``(..., num_actuators)`` actuator values.

        A set with linkages needs the joint ``positions`` (published, same shape) to map
        velocities and efforts; an actuator it cannot reach is NaN.
        """
        kind = map_kind(interface)
        j = last_dimension(values, self.num_joints, 'joint')
        if kind == POSITION:
            out = self._j2a['velocity'](j - self._offsets)
        else:
            out = self._j2a[kind](j)
        if self._linkages is None:
            return out
        if kind != POSITION and positions is None:
            raise ConfigError(f'a set with linkages maps {interface} only at given joint '
                              'positions')
        q = j if kind == POSITION else np.broadcast_to(
            np.asarray(positions, dtype=float), j.shape)
        field = {'position': 0, 'velocity': 1, 'effort': 3}[kind]
        given = {field: j} if kind != POSITION else {}
        return self._with_linkages(q, given, {field: out})[0]

    def joint_terms(self, interface):
        """Return :meth:`joint_to_actuator`'s LinearTerms (positions: less their offsets)."""
        return self._j2a['velocity' if map_kind(interface) == POSITION else map_kind(interface)]

    def motion_to_actuator(self, positions, velocities):
        """
        Map joint positions and velocities ``(..., num_joints)`` together: ``(θ, θ̇)``.

        What :meth:`joint_to_actuator` gives for each, a linkage's velocities at
        ``positions``; a set with linkages solves each pose once for both.
        """
        q = last_dimension(positions, self.num_joints, 'joint')
        v = last_dimension(velocities, self.num_joints, 'joint')
        theta = self._j2a['velocity'](q - self._offsets)
        thetad = self._j2a['velocity'](v)
        if self._linkages is None:
            return theta, thetad
        return self._with_linkages(q, {1: v}, {0: theta, 1: thetad})

    def joint_accelerations_to_actuator(self, accelerations, positions, velocities):
        """
        Map joint accelerations ``(..., nJ)`` at ``positions`` and ``velocities``: ``a_a``.

        The linear members' velocity map; a linkage's ``J_x a_j + J_x-dot v_j`` (its map
        depends on the configuration, so its rate adds a term).
        """
        acc = last_dimension(accelerations, self.num_joints, 'joint')
        out = self._j2a['velocity'](acc)
        if self._linkages is None:
            return out
        q = np.broadcast_to(np.asarray(positions, dtype=float), acc.shape)
        v = np.broadcast_to(np.asarray(velocities, dtype=float), acc.shape)
        return self._with_linkages(q, {1: v, 2: acc}, {2: out})[0]

    # --- the gear stages' losses (losses.py) ------------------------------------
    @property
    def losses(self):
        """Return the actuators' gear stages (:class:`~.losses.Losses`, made on first use)."""
        if self._losses is None:
            from .losses import Losses
            self._losses = Losses.of([self.actuator(n) for n in self._actuator_names])
        return self._losses

    def measured_joint_efforts(self, efforts, velocities, positions=None):
        """
        Return the joint efforts of motor ``efforts`` at motor ``velocities`` (..., nA).

        Their stages' outputs (:meth:`~.losses.Losses.measured`) through the set's effort
        map (a linkage's at the motors' ``positions``), before the joints' damping loss.
        """
        out = self.losses.measured(efforts, velocities)
        return self.actuator_to_joint('effort', out, positions)

    def motor_torques_for(self, joint_torques, positions, velocities, accelerations):
        """
        Return the motor torques (..., nA) of a joint motion's torques: the commanded law.

        ``joint_torques``: the links' inverse dynamics with :meth:`joint_side`'s rotors at
        the joints' positions, velocities and accelerations (``Model.motor_torques`` calls
        it: the kinematics library imports nothing of this one).
        """
        from .effort_law import command_motion, commanded_efforts
        qd, thetad = command_motion(self, velocities, None, positions)
        return commanded_efforts(self, joint_torques, qd, thetad, positions, accelerations)

    def joint_side(self):
        """Return the set a joint-space feed-forward counts (:func:`.effort_law.joint_side`)."""
        from .effort_law import joint_side
        return joint_side(self)

    def commanded_motor_efforts(self, efforts, velocities, positions=None):
        """Return the motor efforts of joint ``efforts`` at motor ``velocities``: the law."""
        from .effort_law import command_motion, commanded_efforts
        qd, thetad = command_motion(self, None, velocities, positions)
        return commanded_efforts(self, efforts, qd, thetad, positions)

    # --- the motors' dynamics (rotors.py) ---------------------------------------
    @property
    def rotors(self):
        """Return the actuators' :class:`~.rotors.RotorDynamics` (made on first use)."""
        if self._rotors is None:
            from .rotors import RotorDynamics
            self._rotors = RotorDynamics(self)
        return self._rotors

    def reflected_mass_matrix(self, positions):
        """Return the rotors' inertia at the joints, ``T^T diag(I) T``: (..., nJ, nJ)."""
        return self.rotors.mass_matrix(positions)

    def reflected_forces(self, positions, velocities, accelerations):
        """
        Return the joint forces the rotors and friction take: (..., nJ), N·m or N.

        ``T^T (I (T a + T-dot v) + b T v + c sign(T v))`` at joint ``positions``,
        ``velocities`` and ``accelerations`` (doc/dynamics.md); add them to the links'
        inverse dynamics for the joints' total.
        """
        return self.rotors.joint_forces(positions, velocities, accelerations)

    def _with_linkages(self, q, given, linear):
        """
        Return the linear maps ``linear`` ({field: (..., nA)}) with the linkages' motors put in.

        The linkages map the joint set-points ``given`` at ``q`` (:meth:`_linkage_commands`);
        their motors' columns replace the linear maps' (which do not cover them).
        """
        mapped = self._linkage_commands(q, given)
        linked = self._linked_actuators
        out = []
        for field, values in linear.items():
            values = np.ascontiguousarray(values)       # rows below are views of it
            rows = values.reshape(-1, self.num_actuators)
            rows[:, linked] = mapped[field].reshape(-1, self.num_actuators)[:, linked]
            out.append(values)
        return out

    def _linkage_commands(self, q, given):
        """Map the linkages' joint set-points ``{field: (..., nJ)}`` at ``q``: 4 arrays."""
        rows = q.reshape(-1, self.num_joints)
        fields = [np.ascontiguousarray(given[f].reshape(-1, self.num_joints), dtype=float)
                  if f in given else np.zeros_like(rows) for f in (1, 2, 3)]
        has = np.array([True, 1 in given or 2 in given, 2 in given, 3 in given])
        out = np.full((4, len(rows), self.num_actuators), np.nan)
        status = np.empty((len(rows), self._linkages[0][0]), dtype=np.int64)
        linkage_loops.kernels().set_command_rows(np.ascontiguousarray(rows, dtype=float),
                                                 *fields, has, *self._linkages, *out, status)
        return out

    def _compiled(self, direction, kind):
        """
        Return the dense matrix of one map of the whole set (rows = outputs).

        Each block is its transmission's own map applied to the unit vectors: the types'
        formulas, evaluated once, so the compiled map has their coefficients. A linkage's
        block stays zero: it maps its joints itself (:class:`.compiled.JointStateMap`).
        """
        if direction == 'a2j':
            out = np.zeros((self.num_joints, self.num_actuators))
            rows, cols = self._joint_index, self._actuator_index
        else:
            out = np.zeros((self.num_actuators, self.num_joints))
            rows, cols = self._actuator_index, self._joint_index
        for spec, t in zip(self._specs, self._transmissions):
            if not spec.is_linear:
                continue
            outputs, inputs = ((spec.joints, spec.actuators) if direction == 'a2j'
                               else (spec.actuators, spec.joints))
            unit = np.eye(len(inputs))
            block = (t.actuator_to_joint(kind, unit) if direction == 'a2j'
                     else t.joint_to_actuator(kind, unit)).T
            r = [rows[x.name] for x in outputs]
            c = [cols[x.name] for x in inputs]
            out[np.ix_(r, c)] = block
        return out

    def command_limits(self, joint_indices, actuator_indices):
        """
        Return the :class:`~.limits.CommandLimits` of these joints and actuators (set order).

        A command's joints and the actuators of their transmissions
        (:meth:`coverage`): what the bridge limits a command against.
        """
        joints = [self._joint_specs[self._joint_names[i]] for i in joint_indices]
        actuators = [self._actuator_specs[self._actuator_names[i]] for i in actuator_indices]
        return CommandLimits(
            [j.name for j in joints], [a.name for a in actuators],
            lower=[j.lower_limit for j in joints], upper=[j.upper_limit for j in joints],
            joint_velocity=[j.velocity_limit for j in joints],
            joint_effort=[j.effort_limit for j in joints],
            actuator_velocity=[a.velocity_limit for a in actuators],
            actuator_effort=[a.effort_limit for a in actuators],
            actuator_lower=[a.lower_limit for a in actuators],
            actuator_upper=[a.upper_limit for a in actuators])

    def after_damping(self, joint_effort, joint_velocity):
        """Return ``τ − b q̇``, the effort after the joints' damping (unknown q̇: unchanged)."""
        tau = np.asarray(joint_effort, dtype=float)
        v = np.asarray(joint_velocity, dtype=float)
        loss = self._damping * v
        if math.isfinite(v.sum()):          # every velocity known (the usual case): no mask
            return tau - loss
        return np.where(np.isfinite(v), tau - loss, tau)

    @property
    def membership(self):
        """Return the :class:`~.membership.Membership`: which joints and motors go together."""
        return self._membership

    def coverage(self, joint_names):
        """
        Return (joint indices, actuator indices) of the transmissions ``joint_names`` cover.

        :meth:`.membership.Membership.coverage`: ConfigError names an unknown joint, or a
        transmission only partly covered and the joints missing from it.
        """
        return self._membership.coverage(joint_names, self._joint_index)

    def __eq__(self, other):
        return isinstance(other, TransmissionSet) and other._specs == self._specs

    def __hash__(self):
        return hash(self._specs)

    def __repr__(self):
        return f'TransmissionSet({[s.name for s in self._specs]})'


def _flat(states):
    """Return actuator states (..., 3, nA) as the maps read them: flattened, then a 1.0."""
    lead = states.shape[:-2]
    flat = np.ones(lead + (states.shape[-2] * states.shape[-1] + 1,))
    flat[..., :-1] = states.reshape(lead + (-1,))
    return flat
