"""
Rational forward kinematics, as Drake's ``RationalForwardKinematics``.

Each movable joint gets a variable ``s``: for a revolute joint
``s = tan((theta - theta*) / 2)``, for a prismatic joint ``s = d - d*``. With
``cos(dtheta) = (1 - s²) / (1 + s²)`` and ``sin(dtheta) = 2 s / (1 + s²)``, every
body pose becomes ``X_WB = N(s) / D(s)`` with polynomial numerator entries and
denominator ``D = prod (1 + s_k²)`` over the revolute joints between world and
the body. Screw joints couple rotation and translation and are refused, as in
Drake.

>>> import numpy as np
>>> from transmission_bridge.kinematics import load_model
>>> m = load_model({'bodies': [{'name': 'l1', 'joint': {'name': 'j1', 'type': 'revolute',
...     'axis': [0, 0, 1], 'origin': {'xyz': [1, 0, 0]}}}]})
>>> rfk = RationalForwardKinematics(m)
>>> s = rfk.compute_s_value([0.3], [0.1])
>>> bool(np.allclose(rfk.body_pose('l1', [0.1]).evaluate(s), m.forward_kinematics([0.3])['l1']))
True
"""

import math

import numpy as np

from .body import WORLD
from .errors import ModelError
from .prismatic import PrismaticJoint
from .revolute import RevoluteJoint


class Polynomial:
    """A polynomial in ``nvars`` variables: a dict exponent tuple -> coefficient."""

    __slots__ = ('terms', 'nvars')

    def __init__(self, terms, nvars):
        self.terms = {e: c for e, c in terms.items() if c != 0.0}
        self.nvars = nvars

    @classmethod
    def constant(cls, value, nvars):
        """Return the constant polynomial ``value``."""
        return cls({(0,) * nvars: float(value)}, nvars)

    @classmethod
    def variable(cls, k, nvars, power=1, coefficient=1.0):
        """Return ``coefficient * s_k ** power``."""
        e = [0] * nvars
        e[k] = power
        return cls({tuple(e): float(coefficient)}, nvars)

    def __add__(self, other):
        other = self._coerce(other)
        out = dict(self.terms)
        for e, c in other.terms.items():
            out[e] = out.get(e, 0.0) + c
        return Polynomial(out, self.nvars)

    __radd__ = __add__

    def __mul__(self, other):
        other = self._coerce(other)
        out = {}
        for e1, c1 in self.terms.items():
            for e2, c2 in other.terms.items():
                e = tuple(a + b for a, b in zip(e1, e2))
                out[e] = out.get(e, 0.0) + c1 * c2
        return Polynomial(out, self.nvars)

    __rmul__ = __mul__

    def _coerce(self, other):
        if isinstance(other, Polynomial):
            return other
        return Polynomial.constant(other, self.nvars)

    def degree(self):
        """Return the total degree; the zero polynomial has degree -1."""
        return max((sum(e) for e in self.terms), default=-1)

    def evaluate(self, s):
        """Evaluate at ``s`` (..., nvars); returns (...)."""
        s = np.asarray(s, dtype=float)
        if not self.terms:
            return np.zeros(s.shape[:-1])
        exps = np.array(list(self.terms), dtype=float)
        coeffs = np.array(list(self.terms.values()))
        return np.prod(s[..., None, :] ** exps, axis=-1) @ coeffs


class RationalPose:
    """A body pose ``N(s) / D(s)``: 4x4 numerator polynomials and one denominator."""

    def __init__(self, numerator, denominator):
        self.numerator = numerator
        self.denominator = denominator

    def evaluate(self, s):
        """Return the 4x4 pose (..., 4, 4) at ``s``."""
        num = np.stack([np.stack([p.evaluate(s) for p in row], -1) for row in self.numerator],
                       -2)
        return num / self.denominator.evaluate(s)[..., None, None]


class RationalForwardKinematics:
    """Poses as rational functions of ``s``; revolute, prismatic and fixed joints only."""

    def __init__(self, model):
        for joint in model.joints:
            if not isinstance(joint, (RevoluteJoint, PrismaticJoint)):
                raise ModelError(f'joint {joint.name!r}: {joint.type_name} joints are not '
                                 'supported by rational forward kinematics (as in Drake)')
        for name in model.mimic_joints:     # tan(m theta / 2) is no rational function of s
            raise ModelError(f'joint {name!r}: mimic joints are not supported by rational '
                             'forward kinematics')
        self._model = model
        self._revolute = np.array([isinstance(j, RevoluteJoint) for j in model.joints])

    def compute_s_value(self, q, q_star, angles_wrap_to_inf=False):
        """
        Return ``s`` for ``q`` around ``q_star``.

        Revolute: ``tan((q - q*) / 2)``; with ``angles_wrap_to_inf``, ``+inf`` once
        ``q - q* >= pi`` and ``-inf`` once ``q - q* <= -pi`` (Drake's rule).
        Prismatic: ``q - q*``.
        """
        q = np.asarray(q, dtype=float)
        diff = q - np.asarray(q_star, dtype=float)
        half = diff / 2.0
        s = np.where(self._revolute, np.tan(half), diff)
        if angles_wrap_to_inf:
            s = np.where(self._revolute & (half >= math.pi / 2), math.inf, s)
            s = np.where(self._revolute & (half <= -math.pi / 2), -math.inf, s)
        return s

    def compute_q_value(self, s, q_star):
        """Return ``q`` for ``s``: revolute ``atan2(2 s, 1 - s²) + q*``, prismatic ``s + q*``."""
        s = np.asarray(s, dtype=float)
        q_star = np.asarray(q_star, dtype=float)
        return np.where(self._revolute, np.arctan2(2.0 * s, 1.0 - s * s), s) + q_star

    def body_pose(self, body, q_star):
        """Return the :class:`RationalPose` of ``body`` in the world, around ``q_star``."""
        model = self._model
        q_star = np.asarray(q_star, dtype=float)
        n = model.num_positions
        qpos = {j.name: k for k, j in enumerate(model.joints)}
        path = []
        name = body
        while name != WORLD:
            b = model.body(name)
            path.append(b)
            name = b.parent
        X = _constant_matrix(np.eye(4), n)
        den = Polynomial.constant(1.0, n)
        for b in reversed(path):
            joint = b.joint
            X = _matmul(X, _constant_matrix(joint.origin, n))
            if joint.num_positions:
                k = qpos[joint.name]
                num, d = _joint_numerator(joint, k, float(q_star[k]), n)
                X = _matmul(X, num)
                den = den * d
            X = _matmul(X, _constant_matrix(joint.child_transform, n))
        return RationalPose(X, den)


def _constant_matrix(m, n):
    return [[Polynomial.constant(v, n) for v in row] for row in np.asarray(m)]


def _matmul(A, B):
    return [[sum((A[i][k] * B[k][j] for k in range(4)), Polynomial({}, A[0][0].nvars))
             for j in range(4)] for i in range(4)]


def _joint_numerator(joint, k, q_star, n):
    """Return (numerator 4x4, denominator) of the joint motion M(q* + dq) in s_k."""
    one = Polynomial.constant(1.0, n)
    s = Polynomial.variable(k, n)
    s2 = Polynomial.variable(k, n, power=2)
    if isinstance(joint, RevoluteJoint):
        a = joint.axis
        K = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
        R_star = joint.motion(q_star)[:3, :3]
        # (1 + s²) R(dtheta) = (1 + s²) I + 2 s K + 2 s² K²
        parts = (R_star, R_star @ K * 2.0, R_star @ (np.eye(3) + 2.0 * K @ K))
        den = one + s2
        num = [[Polynomial({}, n) for _ in range(4)] for _ in range(4)]
        for i in range(3):
            for j in range(3):
                num[i][j] = parts[0][i, j] * one + parts[1][i, j] * s + parts[2][i, j] * s2
        num[3][3] = den
        return num, den
    num = _constant_matrix(np.eye(4), n)
    for i in range(3):
        num[i][3] = joint.axis[i] * (q_star * one + s)
    return num, one
