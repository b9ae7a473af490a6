"""
The common shape of every joint: frames, limits, damping and the motion it allows.

A body's pose in its parent is ``X_PB(q) = X_PJ M(q) X_JB``: ``X_PJ`` is the fixed
``origin`` (parent frame to joint frame), ``M(q)`` the joint motion about/along the
unit ``axis`` (expressed in the joint frame), and ``X_JB`` an optional fixed
``child_transform`` (joint frame to body frame; identity unless the joint came
from DH parameters, like MATLAB's ``ChildToJointTransform``). Every joint type is
described by two numbers per unit of q: the rotation about the axis
(``ROTATION_PER_Q``, rad) and the translation along it (``translation_per_q``, m).

A movable joint may be a **mimic** joint (URDF ``<mimic>``): its position is not a
coordinate of its own but ``multiplier * q_driver + offset`` (:class:`Mimic`); the model
resolves chains of mimics and folds their generalized forces onto the driver.
"""

import dataclasses
import math

import numpy as np

from . import _checks
from .errors import ModelError
from .spatial import dh_parts, origin_transform, skew

_IDENTITY = np.eye(4)
_IDENTITY.flags.writeable = False


@dataclasses.dataclass(frozen=True)
class Mimic:
    """
    A mimic joint's rule: ``q = multiplier * q_joint + offset`` (URDF ``<mimic>``).

    ``joint`` is the driving joint's name (itself possibly a mimic joint); ``multiplier``
    is dimensionless (any finite value), ``offset`` in the mimic joint's unit (rad or m).

    >>> Mimic('finger_joint1', multiplier=1.0)
    Mimic(joint='finger_joint1', multiplier=1.0, offset=0.0)
    """

    joint: str
    multiplier: float = 1.0
    offset: float = 0.0

    def __post_init__(self):
        _checks.name(self.joint, 'mimic joint')
        object.__setattr__(self, 'multiplier', _checks.finite(
            self.multiplier, f'mimic of {self.joint!r}: multiplier'))
        object.__setattr__(self, 'offset', _checks.finite(
            self.offset, f'mimic of {self.joint!r}: offset'))


class Joint:
    """
    Base class of the joint types; instances are immutable (use :meth:`replace`).

    Subclasses set ``TYPE``, ``NUM_POSITIONS``, ``ROTATION_PER_Q`` and
    ``DEFAULT_LIMITS``; a screw joint adds its pitch.
    """

    TYPE = None
    NUM_POSITIONS = 1
    ROTATION_PER_Q = 0.0
    DEFAULT_LIMITS = (-math.inf, math.inf)
    _FIELDS = ('name', 'axis', 'origin', 'child_transform', 'lower', 'upper',
               'velocity_limit', 'damping', 'default_position', 'mimic')

    def __init__(self, name, axis=(0.0, 0.0, 1.0), origin=None, child_transform=None,
                 lower=None, upper=None, velocity_limit=None, damping=0.0,
                 default_position=None, mimic=None):
        self._name = _checks.name(name, 'joint name')
        who = self._who = f'joint {name!r}'
        self._axis = _checks.unit_axis(axis, f'{who}: axis')
        self._origin = (_IDENTITY if origin is None
                        else _checks.transform(origin, f'{who}: origin'))
        self._child = (_IDENTITY if child_transform is None
                       else _checks.transform(child_transform, f'{who}: child_transform'))
        lo = self.DEFAULT_LIMITS[0] if lower is None else _checks.number(lower, f'{who}: lower')
        hi = self.DEFAULT_LIMITS[1] if upper is None else _checks.number(upper, f'{who}: upper')
        if math.isnan(lo) or math.isnan(hi) or lo > hi:
            raise ModelError(f'{who}: position limits must satisfy lower <= upper, '
                             f'got [{lo!r}, {hi!r}]')
        self._lower, self._upper = lo, hi
        if velocity_limit is not None:
            velocity_limit = _checks.number(velocity_limit, f'{who}: velocity_limit')
            if not velocity_limit > 0:
                raise ModelError(f'{who}: velocity_limit must be > 0, got {velocity_limit!r}')
        self._velocity_limit = velocity_limit
        self._damping = _checks.non_negative(damping, f'{who}: damping')
        if default_position is None:
            default_position = min(max(0.0, lo), hi)
        self._default = self._check_default(_checks.finite(
            default_position, f'{who}: default_position'))
        if mimic is not None and not isinstance(mimic, Mimic):
            raise ModelError(f'{who}: mimic must be a Mimic, got {mimic!r}')
        if mimic is not None and mimic.joint == name:
            raise ModelError(f'{who}: a joint cannot mimic itself')
        self._mimic = mimic

    def _check_default(self, value):
        if not self._lower <= value <= self._upper:
            raise ModelError(f'{self._who}: default_position {value!r} is outside the limits '
                             f'[{self._lower!r}, {self._upper!r}]')
        return value

    # --- description -------------------------------------------------------------
    @property
    def name(self):
        """Return the joint name."""
        return self._name

    @property
    def type_name(self):
        """Return the type: ``'revolute'``, ``'prismatic'``, ``'screw'`` or ``'fixed'``."""
        return self.TYPE

    @property
    def num_positions(self):
        """Return the number of generalized coordinates (1, or 0 for fixed)."""
        return self.NUM_POSITIONS

    @property
    def axis(self):
        """Return the unit axis in the joint frame (read-only array)."""
        return self._axis

    @property
    def origin(self):
        """Return ``X_PJ``, the joint frame in the parent body frame (4x4, read-only)."""
        return self._origin

    @property
    def child_transform(self):
        """Return ``X_JB``, the child body frame in the joint frame (4x4, read-only)."""
        return self._child

    @property
    def position_limits(self):
        """Return ``(lower, upper)`` in rad or m."""
        return (self._lower, self._upper)

    @property
    def velocity_limit(self):
        """Return the velocity limit (rad/s or m/s), or None when none is set."""
        return self._velocity_limit

    @property
    def damping(self):
        """Return the viscous damping ``b >= 0``, N·m·s/rad or N·s/m."""
        return self._damping

    @property
    def default_position(self):
        """Return the default (home) position, within the limits."""
        return self._default

    @property
    def mimic(self):
        """Return the :class:`Mimic` rule of a mimic joint, or None for an independent one."""
        return self._mimic

    @property
    def translation_per_q(self):
        """Return the translation along the axis per unit of q (m)."""
        return 0.0

    # --- motion ------------------------------------------------------------------
    def rotation_angle(self, q):
        """Return the rotation about the axis (rad) at ``q``."""
        return np.asarray(q, dtype=float) * self.ROTATION_PER_Q

    def translation(self, q):
        """Return the translation along the axis (m) at ``q``."""
        return np.asarray(q, dtype=float) * self.translation_per_q

    def motion(self, q):
        """Return ``M(q)`` (..., 4, 4): rotation about and translation along the axis."""
        angle = self.rotation_angle(q)
        k = skew(self._axis)
        s, c = np.sin(angle)[..., None, None], np.cos(angle)[..., None, None]
        out = np.zeros(np.shape(angle) + (4, 4))
        out[..., :3, :3] = np.eye(3) + s * k + (1.0 - c) * (k @ k)
        out[..., :3, 3] = self.translation(q)[..., None] * self._axis
        out[..., 3, 3] = 1.0
        return out

    def transform(self, q):
        """Return ``X_PB(q) = X_PJ M(q) X_JB`` (..., 4, 4)."""
        return self._origin @ self.motion(q) @ self._child

    def damping_force(self, v):
        """Return the damping generalized force ``-b v`` (N·m or N)."""
        return -self._damping * np.asarray(v, dtype=float)

    # --- changes -----------------------------------------------------------------
    def _fields(self):
        return {'name': self._name, 'axis': self._axis, 'origin': self._origin,
                'child_transform': self._child, 'lower': self._lower, 'upper': self._upper,
                'velocity_limit': self._velocity_limit, 'damping': self._damping,
                'default_position': self._default, 'mimic': self._mimic}

    def replace(self, **changes):
        """Return a copy with ``changes`` applied (validated like a new joint)."""
        fields = self._fields()
        unknown = set(changes) - set(fields)
        if unknown:
            raise ModelError(f'{self._who}: unknown field(s) {sorted(unknown)}')
        fields.update(changes)
        return type(self)(**fields)

    def with_fixed_transform(self, value, kind='matrix'):
        """
        Return a copy with its fixed transforms set, like MATLAB's ``setFixedTransform``.

        ``kind='matrix'``: ``value`` is the 4x4 ``X_PJ``. ``kind='dh'`` or ``'mdh'``:
        ``value`` is ``[a, alpha, d, theta]`` (standard or modified DH); the joint
        then moves about (or along) z, ``theta`` is a constant offset added to q and
        ``X_JB`` takes what follows the motion. ``kind='xyz_rpy'``: ``value`` is
        ``(xyz, rpy)``, a URDF origin.
        """
        if kind == 'matrix':
            return self.replace(origin=value, child_transform=_IDENTITY)
        if kind == 'xyz_rpy':
            xyz, rpy = value
            return self.replace(origin=origin_transform(
                _checks.vector(xyz, 3, f'{self._who}: xyz'),
                _checks.vector(rpy, 3, f'{self._who}: rpy')), child_transform=_IDENTITY)
        if kind not in ('dh', 'mdh'):
            raise ModelError(f"{self._who}: kind must be 'matrix', 'xyz_rpy', 'dh' or 'mdh', "
                             f'got {kind!r}')
        a, alpha, d, theta = _checks.vector(value, 4, f'{self._who}: DH parameters')
        convention = 'standard' if kind == 'dh' else 'modified'
        X_PJ, X_JB = dh_parts(a, alpha, d, theta, convention, self.TYPE)
        changes = {'origin': X_PJ, 'child_transform': X_JB}
        if self.NUM_POSITIONS:
            changes['axis'] = (0.0, 0.0, 1.0)
        return self.replace(**changes)

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        a, b = self._fields(), other._fields()
        return all(np.array_equal(a[k], b[k]) if isinstance(a[k], np.ndarray) else a[k] == b[k]
                   for k in a)

    def __hash__(self):
        return hash((type(self), self._name))

    def __repr__(self):
        return f'{type(self).__name__}({self._name!r}, axis={list(self._axis)})'
