"""
Four-bar linkage transmission: actuator1 drives joint1; actuator2 drives joint2 through joint1.

Symbols as for the differential (``n_a1, n_a2, n_j1, n_j2, off1, off2``), roles
from list order. Position and velocity follow ros2_control's
``four_bar_linkage_transmission.hpp``::

    actuator -> joint
    x_j1 = x_a1 / (n_j1 n_a1) + off1
    x_j2 = (x_a2 / n_a2 - x_a1 / (n_j1 n_a1)) / n_j2 + off2
    (velocities: the same without offsets)

    joint -> actuator  (y_k = x_jk - offk)
    x_a1 = y_1 n_j1 n_a1
    x_a2 = (y_1 + y_2 n_j2) n_a2

Efforts are the power-conserving dual of the velocity map (``tau_j = J^-T tau_a``
with ``v_j = J v_a``), as fixed upstream in ros2_control PR #1837 (issue #1746:
the earlier effort map did not conserve energy)::

    actuator -> joint                      joint -> actuator
    tau_j1 = n_j1 n_a1 tau_a1 + n_a2 tau_a2  tau_a1 = (tau_j1 - tau_j2 / n_j2) / (n_j1 n_a1)
    tau_j2 = n_j2 n_a2 tau_a2                tau_a2 = tau_j2 / (n_j2 n_a2)

Units: rad, rad/s, N·m. Reductions finite and non-zero.

>>> t = FourBarLinkageTransmission((1.0, 1.0), (1.0, 1.0))
>>> t.actuator_to_joint('position', [1.0, 1.0])     # actuator2 follows actuator1: joint2 still
array([1., 0.])
>>> t.actuator_to_joint('effort', [0.0, 1.0])
array([1., 1.])
"""

from .base import Transmission
from .interfaces import EFFORT, POSITION


def actuator_to_joint(kind, a, ar, jr, off):
    """Map actuator to joint values with the four-bar formulas (module docstring)."""
    if kind == EFFORT:
        return (jr[0] * ar[0] * a[0] + ar[1] * a[1], jr[1] * ar[1] * a[1])
    u1 = a[0] / (jr[0] * ar[0])
    j2 = (a[1] / ar[1] - u1) / jr[1]
    if kind == POSITION:
        return (u1 + off[0], j2 + off[1])
    return (u1, j2)


def joint_to_actuator(kind, j, ar, jr, off):
    """Map joint to actuator values with the four-bar formulas (module docstring)."""
    if kind == EFFORT:
        return ((j[0] - j[1] / jr[1]) / (jr[0] * ar[0]), j[1] / (jr[1] * ar[1]))
    if kind == POSITION:
        y1 = j[0] - off[0]
        y2 = j[1] - off[1]
    else:
        y1 = j[0]
        y2 = j[1]
    return (y1 * jr[0] * ar[0], (y1 + y2 * jr[1]) * ar[1])


class FourBarLinkageTransmission(Transmission):
    """Two actuators, two joints, coupled through a four-bar linkage (see module docstring)."""

    TYPE = 'four_bar_linkage'
    NUM_ACTUATORS = 2
    NUM_JOINTS = 2
    __slots__ = ()

    class FORMULAS:
        """Namespace binding this type's formulas."""

        actuator_to_joint = staticmethod(actuator_to_joint)
        joint_to_actuator = staticmethod(joint_to_actuator)

    def __init__(self, actuator_reductions, joint_reductions, joint_offsets=(0.0, 0.0)):
        super().__init__(actuator_reductions, joint_reductions, joint_offsets)
