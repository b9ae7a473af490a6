"""
Coupling transmission: N actuators drive N joints through any invertible linear map.

Three-motor wrists, tendon-driven fingers, PAL's "half differentials" and cable-coupled
joints are all linear between motors and joints; iCub describes them as coupling
matrices. The N x N matrix ``M`` has one row per joint and one column per actuator (list
order)::

    actuator -> joint                         joint -> actuator  (y = x_j - off)
    x_j   = M x_a + off                       x_a   = M^-1 y
    v_j   = M v_a                             v_a   = M^-1 v_j
    tau_j = M^-T tau_a                        tau_a = M^T tau_j

so power is conserved (``tau_j . v_j == tau_a . v_a``) and each direction inverts the
other. The mechanical reductions live in the matrix: a simple transmission of reduction
``n`` is ``[[1/n]]``, a differential ``[[1/(2 n_j1 n_a1), 1/(2 n_j1 n_a2)], [1/(2 n_j2 n_a1),
-1/(2 n_j2 n_a2)]]``. ``M^-1`` is computed once; a matrix whose condition number exceeds
:data:`MAX_CONDITION` is refused: the round trip actuator -> joint -> actuator then loses
up to ``cond(M) * eps`` (2e-10 at the bound) of its value, and beyond it the joints are
not observable from the motors in any useful sense.

>>> t = CouplingTransmission([[0.5, 0.5], [0.5, -0.5]])
>>> t.actuator_to_joint('position', [1.0, 1.0])
array([1., 0.])
>>> t.joint_to_actuator('effort', [2.0, 0.0])
array([1., 1.])
"""

import numpy as np

from . import _checks
from .base import last_dimension, Transmission
from .errors import ConfigError
from .interfaces import EFFORT, map_kind, POSITION

MAX_CONDITION = 1e6     # largest accepted 2-norm condition number of a coupling matrix


def coupling_matrix(value, what='matrix'):
    """
    Return ``value`` as a validated square matrix (a tuple of row tuples of floats).

    Raises ConfigError naming ``what`` for a ragged, empty or non-square matrix, a
    non-numeric or non-finite entry, or a singular or ill-conditioned one.
    """
    try:
        rows = [list(row) for row in value]
    except TypeError:
        raise ConfigError(f'{what} must be a list of rows (one per joint), got {value!r}') \
            from None
    if not rows or any(len(row) != len(rows) for row in rows):
        raise ConfigError(
            f'{what} must be square, one row per joint and one column per actuator; got '
            f'{len(rows)} rows of lengths {[len(r) for r in rows]}')
    out = tuple(tuple(_checks.finite(x, f'{what}[{i}][{k}]') for k, x in enumerate(row))
                for i, row in enumerate(rows))
    condition = np.linalg.cond(np.array(out))
    if not condition <= MAX_CONDITION:          # NaN (singular) included
        raise ConfigError(
            f'{what} is singular or ill-conditioned: condition number {condition:.3g} > '
            f'{MAX_CONDITION:g} (the joints cannot be recovered from the motors)')
    return out


class CouplingTransmission(Transmission):
    """N actuators, N joints, ``x_j = M x_a + off`` (see module docstring)."""

    TYPE = 'coupling'
    __slots__ = ('_matrix', '_maps')

    def __init__(self, matrix, joint_offsets=None):
        self._matrix = coupling_matrix(matrix)
        n = len(self._matrix)
        self._ar = self._jr = (1.0,) * n
        offsets = (0.0,) * n if joint_offsets is None else joint_offsets
        self._off = self._tuple(offsets, n, 'joint_offsets', _checks.finite)
        m = np.array(self._matrix)
        inverse = np.linalg.inv(m)
        # (direction, kind) -> the matrix applied to a column vector of inputs.
        self._maps = {('a2j', 'velocity'): m, ('a2j', EFFORT): inverse.T,
                      ('j2a', 'velocity'): inverse, ('j2a', EFFORT): m.T}
        for a in self._maps.values():
            a.flags.writeable = False

    @property
    def num_actuators(self):
        """Return the number of actuators (the matrix's columns)."""
        return len(self._matrix)

    @property
    def num_joints(self):
        """Return the number of joints (the matrix's rows)."""
        return len(self._matrix)

    @property
    def matrix(self):
        """Return ``M`` (rows = joints, columns = actuators) as a tuple of row tuples."""
        return self._matrix

    def local_matrix(self, direction, interface):
        """Return the matrix of one map: ``direction`` 'a2j' or 'j2a', any interface."""
        kind = map_kind(interface)
        return self._maps[direction, EFFORT if kind == EFFORT else 'velocity']

    def actuator_to_joint(self, interface, values):
        """Map actuator values ``(..., N)`` to joint values ``(..., N)``."""
        kind = map_kind(interface)
        a = last_dimension(values, self.num_actuators, 'actuator')
        out = a @ self.local_matrix('a2j', kind).T
        return out + self._off if kind == POSITION else out

    def joint_to_actuator(self, interface, values):
        """Map joint values ``(..., N)`` to actuator values ``(..., N)``."""
        kind = map_kind(interface)
        j = last_dimension(values, self.num_joints, 'joint')
        if kind == POSITION:
            j = j - self._off
        return j @ self.local_matrix('j2a', kind).T

    def __eq__(self, other):
        return (type(other) is type(self) and other._matrix == self._matrix
                and other._off == self._off)

    def __hash__(self):
        return hash((type(self), self._matrix, self._off))

    def __repr__(self):
        return f'CouplingTransmission(matrix={self._matrix}, joint_offsets={self._off})'
