"""
Linkage transmission: N rods close a serial chain of N joints, one actuator per rod.

Parallel ankles (two motors in the shank push the foot through two rods), knees driven by a
crank and a rod, push rods, ball-screw sliders and hydraulic cylinders: the joints are not a
constant matrix times the motors. All geometry is given in one frame, the linkage frame (the
parent link of the first joint), in metres, at the zero pose (every joint's geometric angle
0 and every actuator at 0).

**Joints** ``i = 1..N``, serial, base side first: revolute (default) or prismatic, a unit
``axis`` and a point ``origin`` on it. The output body's pose is ``T(q) = exp(xi_1 q_1) ...
exp(xi_N q_N)`` (each twist from the joint's axis and point at the zero pose); the
published joint is ``q + offset``.

**Actuators** ``k = 1..N``, each a rod from a driven point to ``attachment`` ``a_k`` (a
point of the output body at the zero pose, moving to ``p_k(q) = T(q) a_k``); ``u_k =
x_a,k / n_k`` (rad for a rotary actuator, m otherwise; ``n_k`` its mechanical_reduction):

* ``rotary``: the driven point is ``crank`` turned by ``u`` about ``axis`` through ``origin``;
* ``slider``: the driven point is ``origin + u direction``;
* ``cylinder``: no rod: the distance from ``origin`` to the attachment is its zero-pose
  length ``+ u``.

A rod's length is its zero-pose length (so the zero pose closes by construction); a given
``rod_length`` must agree to 1e-6 m. Each rod's equation ``G_k(q, u_k) = 0`` (in metres:
``|p_k - c_k(u_k)| - L_k``, or ``|p_k - o_k| - L_k - u_k`` for a cylinder) has two roots in
``u_k``; the one continuous with the zero pose is taken, always.

**The maps** (``J = dq/dx_a``, ``J_x = dx_a/dq = J^-1``)::

    joint -> actuator     u_k closed form per rod (linkage_loops.actuator_coordinate)
                          v_a = J_x v_j, tau_a = J^T tau_j, a_a = J_x a_j + J_x' v_j
    actuator -> joint     Newton on G(q, u) = 0 from the previous solution (the zero pose
                          at first), to |G| <= 1e-12 m; v_j = J v_a, tau_j = J^-T tau_a

``J_x = -diag(n) G_u^-1 G_q`` from the rods' equations. A state whose solve does not
converge, that leaves a joint's limits, or sits at a singularity is refused: the rods'
Jacobian ``G_q`` with a 1-norm condition number above 1e6 (the joints not held by the rods),
or a rod within 1e-6 of perpendicular to its driver's motion (a dead point: the motor
cannot move the joint). Power is conserved: ``tau_j . v_j == tau_a . v_a``.

>>> t = LinkageTransmission(LinkageGeometry(
...     joints=[LinkageJoint('revolute', (0, 1, 0), (0, 0, 0))],
...     actuators=[LinkageActuator('slider', origin=(0.05, 0, 0.2), axis=(0, 0, 1),
...                                attachment=(0.05, 0, 0))]))
>>> q = t.actuator_to_joint('position', [[0.0], [0.01]])
>>> bool(q[0, 0] == 0.0), round(float(q[1, 0]), 6)          # pushed 1 cm: about 0.2 rad
(True, -0.20141)
>>> back = t.joint_to_actuator('position', q)
>>> bool(abs(back[1, 0] - 0.01) < 1e-12)
True
"""

import dataclasses
import math

import numpy as np

from . import _checks
from . import linkage_loops as loops
from .errors import ConfigError
from .interfaces import map_kind, POSITION, VELOCITY

KINDS = ('rotary', 'slider', 'cylinder')
JOINT_TYPES = ('revolute', 'prismatic')
MAX_JOINTS = 6
ROD_LENGTH_TOL = 1e-6       # m: a given rod_length must agree with the zero-pose distance


def _vector(value, what, unit=False):
    """Return a finite 3-vector (normalised when ``unit``); ConfigError naming ``what``."""
    try:
        items = [float(x) for x in value]
    except (TypeError, ValueError):
        raise ConfigError(f'{what} must be 3 numbers, got {value!r}') from None
    if len(items) != 3 or not all(math.isfinite(x) for x in items):
        raise ConfigError(f'{what} must be 3 finite numbers, got {value!r}')
    v = np.array(items)
    if unit:
        norm = float(np.linalg.norm(v))
        if not norm > math.sqrt(np.finfo(float).eps):
            raise ConfigError(f'{what} must not be zero, got {value!r}')
        v = v / norm
    return tuple(float(x) for x in v)


@dataclasses.dataclass(frozen=True)
class LinkageJoint:
    """One joint of a linkage: its type, unit ``axis`` and a point ``origin`` on it (m)."""

    type: str = 'revolute'  # noqa: A003 (the YAML key)
    axis: tuple = (0.0, 0.0, 1.0)
    origin: tuple = (0.0, 0.0, 0.0)

    def __post_init__(self):
        if self.type not in JOINT_TYPES:
            raise ConfigError(f"type must be 'revolute' or 'prismatic', got {self.type!r}")
        object.__setattr__(self, 'axis', _vector(self.axis, 'axis', unit=True))
        object.__setattr__(self, 'origin', _vector(self.origin, 'origin'))


@dataclasses.dataclass(frozen=True)
class LinkageActuator:
    """
    One actuator of a linkage and its rod (module docstring).

    ``axis``: a rotary actuator's axis, or a slider's direction (``direction`` in files);
    ``crank``: a rotary actuator's crank point at 0; ``rod_length`` None: the zero-pose one.
    """

    kind: str
    origin: tuple = (0.0, 0.0, 0.0)
    attachment: tuple = (0.0, 0.0, 0.0)
    axis: tuple = None
    crank: tuple = None
    rod_length: float = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ConfigError(f"kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        for field in ('origin', 'attachment'):
            object.__setattr__(self, field, _vector(getattr(self, field), field))
        needs = {'rotary': ('axis', 'crank'), 'slider': ('axis',), 'cylinder': ()}[self.kind]
        for field in ('axis', 'crank'):
            label = 'direction' if field == 'axis' and self.kind == 'slider' else field
            value = getattr(self, field)
            if field in needs and value is None:
                raise ConfigError(f'a {self.kind} actuator needs {label}')
            if field not in needs and value is not None:
                raise ConfigError(f'a {self.kind} actuator takes no {label}')
            if value is not None:
                object.__setattr__(self, field, _vector(value, label, unit=field == 'axis'))
        if self.rod_length is not None:
            object.__setattr__(self, 'rod_length', _checks.finite(self.rod_length,
                                                                  'rod_length'))

    @property
    def driven_point(self):
        """Return the rod's driven end at actuator position 0 (the origin for a cylinder)."""
        return self.crank if self.kind == 'rotary' else self.origin

    @property
    def zero_pose_length(self):
        """Return the rod's length (a cylinder's: origin to attachment) at the zero pose, m."""
        return float(np.linalg.norm(np.subtract(self.attachment, self.driven_point)))


@dataclasses.dataclass(frozen=True)
class LinkageGeometry:
    """
    The joints and actuators of a linkage, validated: lengths, zero pose, branches.

    Raises ConfigError naming the joint or actuator (by position, ``actuators[1]``; the
    transmission's spec names them) when a value is malformed, a rod has no length, a
    ``rod_length`` disagrees with the zero pose, or the zero pose is singular.
    """

    joints: tuple
    actuators: tuple

    def __post_init__(self):
        joints, actuators = tuple(self.joints), tuple(self.actuators)
        object.__setattr__(self, 'joints', joints)
        object.__setattr__(self, 'actuators', actuators)
        if not 1 <= len(joints) <= MAX_JOINTS:
            raise ConfigError(f'a linkage drives 1 to {MAX_JOINTS} joints, got {len(joints)}')
        if len(actuators) != len(joints):
            raise ConfigError(f'a linkage needs one actuator (rod) per joint: {len(joints)} '
                              f'joints, {len(actuators)} actuators')
        for k, a in enumerate(actuators):
            length = a.zero_pose_length
            if a.kind != 'cylinder' and not length > ROD_LENGTH_TOL:
                raise ConfigError(f'actuators[{k}]: its rod has no length (attachment at the '
                                  'driven point)')
            if a.kind == 'cylinder' and not length > ROD_LENGTH_TOL:
                raise ConfigError(f"actuators[{k}]: attachment at the cylinder's origin")
            if a.rod_length is not None and abs(a.rod_length - length) > ROD_LENGTH_TOL:
                raise ConfigError(
                    f'actuators[{k}]: rod_length {a.rod_length!r} m disagrees with the '
                    f'zero-pose distance {length!r} m (crank or origin to attachment)')
            if a.kind == 'rotary':
                radius = np.subtract(a.crank, a.origin)
                radius = radius - np.dot(radius, a.axis) * np.asarray(a.axis)
                if not np.linalg.norm(radius) > ROD_LENGTH_TOL:
                    raise ConfigError(f'actuators[{k}]: the crank point is on the axis')
        kinds, geo = self._pack(np.ones(len(joints)))
        object.__setattr__(self, '_branches', tuple(
            self._branch(k, kinds, geo) for k in range(len(actuators))))
        kinds, geo = self.pack(np.zeros(len(joints)), np.full(len(joints), -np.inf),
                               np.full(len(joints), np.inf), np.ones(len(joints)))
        q = np.zeros(len(joints))
        solve, scratch_size = loops.kernels().solve, loops.kernels().scratch_size
        status = solve(len(joints), kinds, geo, np.zeros(len(joints)), q,
                       np.empty(scratch_size(len(joints))))
        if status != loops.OK:
            raise ConfigError('the zero pose is singular: ' + (
                'a rod is at a dead point or the rods do not hold the joints'
                if status == loops.SINGULAR else 'the rods do not close there'))

    def _branch(self, k, kinds, geo):
        """Return the sign of the root continuous with the zero pose for actuator ``k``."""
        n = len(self.joints)
        a = self.actuators[k]
        if a.kind == 'cylinder':
            return 1.0
        found = []
        for sign in (1.0, -1.0):
            geo[n * loops.J_WIDTH + k * loops.A_WIDTH + loops.A_BRANCH] = sign
            u = loops.kernels().actuator_coordinate(n, k, kinds, geo, *a.attachment)
            if abs(u) < 1e-9:
                found.append(sign)
        if len(found) != 1:
            raise ConfigError(f'actuators[{k}]: at the zero pose its rod is perpendicular to '
                              "its driver's motion (a dead point): the two roots meet")
        return found[0]

    def _pack(self, reductions, branches=None):
        n = len(self.joints)
        kinds = np.array([JOINT_TYPES.index(j.type) for j in self.joints]
                         + [KINDS.index(a.kind) for a in self.actuators], dtype=np.int64)
        geo = np.zeros(n * loops.J_WIDTH + n * loops.A_WIDTH)
        for i, j in enumerate(self.joints):
            g = i * loops.J_WIDTH
            geo[g + loops.J_AXIS:g + loops.J_AXIS + 3] = j.axis
            geo[g + loops.J_POINT:g + loops.J_POINT + 3] = j.origin
            geo[g + loops.J_LOWER], geo[g + loops.J_UPPER] = -np.inf, np.inf
        for k, a in enumerate(self.actuators):
            g = n * loops.J_WIDTH + k * loops.A_WIDTH
            if a.axis is not None:
                geo[g + loops.A_AXIS:g + loops.A_AXIS + 3] = a.axis
            geo[g + loops.A_ORIGIN:g + loops.A_ORIGIN + 3] = a.origin
            if a.crank is not None:
                geo[g + loops.A_CRANK:g + loops.A_CRANK + 3] = a.crank
            geo[g + loops.A_ATTACH:g + loops.A_ATTACH + 3] = a.attachment
            geo[g + loops.A_LENGTH] = a.zero_pose_length
            geo[g + loops.A_REDUCTION] = reductions[k]
            geo[g + loops.A_BRANCH] = 1.0 if branches is None else branches[k]
        return kinds, geo

    def pack(self, offsets, lower, upper, reductions):
        """Return ``(kinds, geo)``, the arrays :mod:`.linkage_loops` takes, for these numbers."""
        kinds, geo = self._pack(reductions, self._branches)
        for i in range(len(self.joints)):
            g = i * loops.J_WIDTH
            geo[g + loops.J_OFFSET] = offsets[i]
            geo[g + loops.J_LOWER], geo[g + loops.J_UPPER] = lower[i], upper[i]
        return kinds, geo


STATUS_TEXT = {
    loops.NOT_CONVERGED: "the rods' equations did not converge",
    loops.SINGULAR: 'a singular configuration (the rods do not hold the joints, or a rod is '
                    'at a dead point)',
    loops.OUT_OF_LIMITS: 'a joint beyond its limits',
    loops.UNREACHABLE: 'a rod cannot reach its attachment',
}


def pack(members):
    """
    Return ``(layout, floats)``: linkages as :func:`.linkage_loops.set_state` takes them.

    ``members``: ``(transmission, joint columns, actuator columns)`` per linkage, the
    columns in the vectors the kernels read and write (a set's, or the linkage's own).
    """
    header = [len(members)]
    body, floats, state = [], [], 0
    start = loops.L_HEADER + loops.L_WIDTH * len(members)
    for t, joints, actuators in members:
        n = t.num_joints
        kinds_at = start + len(body)
        body.extend(int(k) for k in t.kinds)
        index_at = start + len(body)
        body.extend(int(j) for j in joints)
        body.extend(int(a) for a in actuators)
        header.extend([n, kinds_at, len(floats), index_at, state])
        floats.extend(t.geo.tolist())
        floats.extend(t.damping.tolist())
        state += n
    return (np.array(header + body, dtype=np.int64), np.array(floats, dtype=float))


class LinkageTransmission:
    """
    A linkage (module docstring) with its reductions, joint offsets, limits and damping.

    The maps take batches, leading dimensions first, as the other types'; velocities and
    efforts need the positions (``positions=``: actuator positions for actuator -> joint,
    joint positions for joint -> actuator), since the map depends on the configuration. A
    batch of actuator positions is taken as one stream, each row solved from the previous
    one's solution (the first from the zero pose). Where a row is refused or a rod cannot
    reach, the joints (or actuators) are NaN.
    """

    TYPE = 'linkage'
    linear = False

    def __init__(self, geometry, actuator_reductions=None, joint_offsets=None, lower=None,
                 upper=None, damping=None):
        n = len(geometry.joints)
        self.geometry = geometry

        def numbers(values, default, what):
            if values is None:
                return np.full(n, default)
            values = np.array([float(x) for x in values])
            if values.shape != (n,):
                raise ConfigError(f'{what} must have {n} entries, got {len(values)}')
            return values
        self.reductions = numbers(actuator_reductions, 1.0, 'actuator_reductions')
        for k, r in enumerate(self.reductions):
            _checks.reduction(r, f'actuator_reductions[{k}]')
        self.offsets = numbers(joint_offsets, 0.0, 'joint_offsets')
        self.lower = numbers(lower, -np.inf, 'lower')
        self.upper = numbers(upper, np.inf, 'upper')
        self.damping = numbers(damping, 0.0, 'damping')
        self.kinds, self.geo = geometry.pack(self.offsets, self.lower, self.upper,
                                             self.reductions)
        self._own = pack([(self, np.arange(n), np.arange(n))])

    @property
    def num_actuators(self):
        """Return the number of actuators (rods)."""
        return len(self.geometry.actuators)

    @property
    def num_joints(self):
        """Return the number of joints."""
        return len(self.geometry.joints)

    @property
    def joint_offsets(self):
        """Return the joint offsets (rad or m), joint order."""
        return tuple(self.offsets)

    def joint_states(self, x_a, v_a=None, tau_a=None, warm=None):
        """
        Map actuator states row by row: ``(q_j, v_j, tau_j, status)``; (rows, n) each.

        ``warm`` (n,), the previous geometric solution, is updated in place (a zero pose
        when None). Efforts are after the damping loss ``b v``. ``status`` per row:
        0 fine, > 0 refused (:data:`STATUS_TEXT`), -1 a position unknown (NaN).
        """
        n = self.num_joints
        x_a = np.asarray(x_a, dtype=float).reshape(-1, n)
        rows = np.ones((len(x_a), 3 * n + 1))
        rows[:, :n] = x_a
        rows[:, n:2 * n] = 0.0 if v_a is None else np.asarray(v_a, dtype=float).reshape(-1, n)
        rows[:, 2 * n:3 * n] = 0.0 if tau_a is None else np.asarray(
            tau_a, dtype=float).reshape(-1, n)
        out = np.empty((len(x_a), 3, n))
        status = np.empty((len(x_a), 1), dtype=np.int64)
        warm = np.zeros(n) if warm is None else warm
        loops.kernels().set_state_rows(rows, n, out, *self._own, warm, status)
        return out[:, 0], out[:, 1], out[:, 2], status[:, 0]

    def commands(self, q_j, v_j=None, a_j=None, tau_j=None):
        """
        Map joint set-points row by row: ``(x_a, v_a, a_a, tau_a, status)``; (rows, n) each.

        ``q_j`` (published joint positions) are needed for every interface; ``a_j`` needs
        ``v_j`` (the J-dot term). Fields not given come back None.
        """
        n = self.num_joints
        q_j = np.asarray(q_j, dtype=float).reshape(-1, n)
        if a_j is not None and v_j is None:
            raise ConfigError('a linkage maps accelerations only with the velocities')
        given = [x is not None for x in (v_j, a_j, tau_j)]
        fields = [np.zeros_like(q_j) if x is None else np.asarray(x, dtype=float).reshape(-1, n)
                  for x in (v_j, a_j, tau_j)]
        out = np.empty((4, len(q_j), n))
        status = np.empty((len(q_j), 1), dtype=np.int64)
        loops.kernels().set_command_rows(q_j, *fields, np.array([True, *given]), *self._own,
                                         *out, status)
        x_a, v_a, a_a, tau_a = out
        return (x_a, v_a if given[0] else None, a_a if given[1] else None,
                tau_a if given[2] else None, status[:, 0])

    def actuator_to_joint(self, interface, values, positions=None):
        """Map actuator values ``(..., N)`` to joint values ``(..., N)`` (class docstring)."""
        kind = map_kind(interface)
        values = np.asarray(values, dtype=float)
        if kind == POSITION:
            return self.joint_states(values)[0].reshape(values.shape)
        if positions is None:
            raise ConfigError(f'a linkage maps {interface} only at given positions')
        x_a = np.broadcast_to(np.asarray(positions, dtype=float), values.shape)
        given = (values, None) if kind == VELOCITY else (None, values)
        _, v, tau, _ = self.joint_states(x_a, *given)
        return (v if kind == VELOCITY else tau).reshape(values.shape)

    def joint_to_actuator(self, interface, values, positions=None):
        """Map joint values ``(..., N)`` to actuator values ``(..., N)`` (class docstring)."""
        kind = map_kind(interface)
        values = np.asarray(values, dtype=float)
        if kind == POSITION:
            return self.commands(values)[0].reshape(values.shape)
        if positions is None:
            raise ConfigError(f'a linkage maps {interface} only at given positions')
        q_j = np.broadcast_to(np.asarray(positions, dtype=float), values.shape)
        if kind == VELOCITY:
            return self.commands(q_j, v_j=values)[1].reshape(values.shape)
        return self.commands(q_j, tau_j=values)[3].reshape(values.shape)

    def __repr__(self):
        return (f'LinkageTransmission({self.num_joints} joints, '
                f'{[a.kind for a in self.geometry.actuators]})')
