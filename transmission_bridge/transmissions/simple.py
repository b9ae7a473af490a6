"""
Simple transmission: one actuator drives one joint through a reducer.

With ``n = n_j * n_a`` (joint reduction times actuator reduction; a
``SimpleTransmission(reduction)`` has ``n_j = 1``) and joint offset ``off``::

    actuator -> joint                 joint -> actuator
    x_j   = x_a / n + off             x_a   = (x_j - off) * n      position   rad | m
    v_j   = v_a / n                   v_a   = v_j * n              velocity   rad/s | m/s
    tau_j = n * tau_a                 tau_a = tau_j / n            effort     N·m | N

as in ros2_control's ``simple_transmission.hpp``. A negative ``n`` flips the
direction; ``n`` must be finite and non-zero. The offset is in joint coordinates
and touches position (and absolute_position) only. Power is conserved:
``tau_j * v_j == tau_a * v_a``.

>>> t = SimpleTransmission(reduction=10.0, offset=0.5)
>>> t.actuator_to_joint('position', [20.0])
array([2.5])
>>> t.joint_to_actuator('position', [2.5])
array([20.])
>>> t.actuator_to_joint('effort', [[1.0], [2.0]])      # a batch of two
array([[10.],
       [20.]])
"""

from .base import Transmission
from .interfaces import EFFORT, POSITION


def actuator_to_joint(kind, a, ar, jr, off):
    """Map actuator to joint values with the simple formulas (module docstring)."""
    n = jr[0] * ar[0]
    if kind == EFFORT:
        return (n * a[0],)
    if kind == POSITION:
        return (a[0] / n + off[0],)
    return (a[0] / n,)


def joint_to_actuator(kind, j, ar, jr, off):
    """Map joint to actuator values with the simple formulas (module docstring)."""
    n = jr[0] * ar[0]
    if kind == EFFORT:
        return (j[0] / n,)
    if kind == POSITION:
        return ((j[0] - off[0]) * n,)
    return (j[0] * n,)


class SimpleTransmission(Transmission):
    """One actuator, one joint, reduction ``n`` and joint offset (see module docstring)."""

    TYPE = 'simple'
    NUM_ACTUATORS = 1
    NUM_JOINTS = 1
    __slots__ = ()

    class FORMULAS:
        """Namespace binding this type's formulas."""

        actuator_to_joint = staticmethod(actuator_to_joint)
        joint_to_actuator = staticmethod(joint_to_actuator)

    def __init__(self, reduction, offset=0.0, *, joint_reduction=1.0):
        super().__init__((reduction,), (joint_reduction,), (offset,))

    @property
    def reduction(self):
        """Return the total reduction ``n = n_j * n_a``."""
        return self._jr[0] * self._ar[0]

    @property
    def offset(self):
        """Return the joint offset, in rad or m."""
        return self._off[0]
