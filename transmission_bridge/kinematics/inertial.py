"""
Mass properties of a body.

Mass (kg), centre of mass ``p_BBcm`` (m, body frame), and the rotational inertia
about the centre of mass in the body frame (kg·m²).

The inertia must be physical: symmetric, positive semi-definite and obeying the
triangle inequality of principal moments (``I1 + I2 >= I3`` for every ordering), unless
``physical=False``: the robot-file loaders pass that, with a warning, for the tensors CAD
exports get slightly wrong (poses, gravity and energy never use the rotational inertia).

>>> Inertial(2.0, (0, 0, 0.1), ixx=0.01, iyy=0.01, izz=0.005).mass
2.0
"""

import numpy as np

from . import _checks
from .errors import ModelError

# Relative slack for the physical-inertia checks (rounding in CAD exports).
INERTIA_RTOL = 1e-9


def inertia_problem(inertia):
    """
    Return why the 3x3 ``inertia`` is not physical, or '' if it is.

    >>> inertia_problem(np.diag([1.0, 1.0, 3.0]))[:50]
    'inertia is not physical (principal moments [1.0, 1'
    >>> inertia_problem(np.diag([1.0, 1.0, 2.0]))
    ''
    """
    moments = np.linalg.eigvalsh(inertia)
    scale = max(1.0, float(np.abs(moments).max())) * INERTIA_RTOL
    if moments[0] < -scale or moments[0] + moments[1] < moments[2] - scale:
        return (f'inertia is not physical (principal moments {[float(m) for m in moments]} '
                'must be >= 0 and satisfy I1 + I2 >= I3)')
    return ''


class Inertial:
    """Immutable mass, centre of mass and inertia about it."""

    __slots__ = ('_mass', '_com', '_inertia')

    def __init__(self, mass=0.0, com=(0.0, 0.0, 0.0), ixx=0.0, iyy=0.0, izz=0.0, ixy=0.0,
                 ixz=0.0, iyz=0.0, owner='body', physical=True):
        self._mass = _checks.non_negative(mass, f'{owner}: mass')
        self._com = _checks.vector(com, 3, f'{owner}: com')
        with np.errstate(over='ignore'):
            reach = self._mass * float(np.dot(self._com, self._com))
        if not np.isfinite(reach):
            raise ModelError(f'{owner}: com {list(self._com)} m is too far out to compute with '
                             f'(mass times its distance squared overflows)')
        vals = {k: _checks.finite(v, f'{owner}: inertia.{k}') for k, v in
                (('ixx', ixx), ('iyy', iyy), ('izz', izz), ('ixy', ixy), ('ixz', ixz),
                 ('iyz', iyz))}
        inertia = np.array([[vals['ixx'], vals['ixy'], vals['ixz']],
                            [vals['ixy'], vals['iyy'], vals['iyz']],
                            [vals['ixz'], vals['iyz'], vals['izz']]])
        problem = inertia_problem(inertia)
        if problem and physical:
            raise ModelError(f'{owner}: {problem}')
        inertia.flags.writeable = False
        self._inertia = inertia

    @classmethod
    def from_matrix(cls, mass, com, inertia, owner='body', physical=True):
        """Return the mass properties with the 3x3 ``inertia`` (about the com, body frame)."""
        i = np.asarray(inertia, dtype=float)
        return cls(mass, com, ixx=i[0, 0], iyy=i[1, 1], izz=i[2, 2], ixy=i[0, 1], ixz=i[0, 2],
                   iyz=i[1, 2], owner=owner, physical=physical)

    def with_mass_and_com(self, mass, com, owner='body'):
        """Return these mass properties with another mass and centre of mass, same inertia."""
        return Inertial.from_matrix(mass, com, self._inertia, owner, physical=False)

    @property
    def mass(self):
        """Return the mass, kg."""
        return self._mass

    @property
    def com(self):
        """Return ``p_BBcm``: the centre of mass in the body frame, m (read-only)."""
        return self._com

    @property
    def inertia(self):
        """Return the 3x3 rotational inertia about the centre of mass, body frame, kg·m²."""
        return self._inertia

    def with_point_mass(self, mass, point, owner='body'):
        """
        Return these mass properties with a point mass added at ``point`` (m, body frame).

        Mass adds, the centre of mass is the mass-weighted mean, and the inertia about the
        new centre of mass gains each part's parallel-axis term ``m (|d|^2 E - d d^T)``
        (the point mass has none of its own). ``mass`` 0 returns ``self``.
        """
        added = _checks.non_negative(mass, f'{owner}: payload mass')
        p = _checks.vector(point, 3, f'{owner}: payload com')
        if added == 0.0:
            return self
        total = self._mass + added
        com = (self._mass * self._com + added * p) / total
        inertia = self._inertia.copy()
        for m, d in ((self._mass, self._com - com), (added, p - com)):
            inertia += m * (d @ d * np.eye(3) - np.outer(d, d))
        return Inertial.from_matrix(total, com, inertia, owner, physical=False)

    def __eq__(self, other):
        return (isinstance(other, Inertial) and self._mass == other._mass
                and np.array_equal(self._com, other._com)
                and np.array_equal(self._inertia, other._inertia))

    def __hash__(self):
        return hash(self._mass)

    def __repr__(self):
        return f'Inertial(mass={self._mass}, com={list(self._com)})'
