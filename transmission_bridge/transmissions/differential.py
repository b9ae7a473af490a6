"""
Differential transmission: two actuators drive two joints through a differential.

Symbols: actuator reductions ``n_a1, n_a2``, joint reductions ``n_j1, n_j2``,
joint offsets ``off1, off2``. Roles come from list order (actuator1, actuator2;
joint1, joint2), never from sorting names. As in ros2_control's
``differential_transmission.hpp`` (its code, which is right; the table in its
Doxygen has sign and subscript typos)::

    actuator -> joint
    x_j1   = (x_a1 / n_a1 + x_a2 / n_a2) / (2 n_j1) + off1
    x_j2   = (x_a1 / n_a1 - x_a2 / n_a2) / (2 n_j2) + off2
    v_j1   = (v_a1 / n_a1 + v_a2 / n_a2) / (2 n_j1)
    v_j2   = (v_a1 / n_a1 - v_a2 / n_a2) / (2 n_j2)
    tau_j1 = n_j1 (n_a1 tau_a1 + n_a2 tau_a2)
    tau_j2 = n_j2 (n_a1 tau_a1 - n_a2 tau_a2)

    joint -> actuator  (y_k = x_jk - offk)
    x_a1   = (n_j1 y_1 + n_j2 y_2) n_a1          v_a1   = (n_j1 v_j1 + n_j2 v_j2) n_a1
    x_a2   = (n_j1 y_1 - n_j2 y_2) n_a2          v_a2   = (n_j1 v_j1 - n_j2 v_j2) n_a2
    tau_a1 = (tau_j1 / n_j1 + tau_j2 / n_j2) / (2 n_a1)
    tau_a2 = (tau_j1 / n_j1 - tau_j2 / n_j2) / (2 n_a2)

Units: rad, rad/s, N·m (or m, m/s, N). Reductions finite and non-zero. The two
directions are exact inverses and conserve power, ``tau_j . v_j == tau_a . v_a``.

>>> t = DifferentialTransmission((1.0, 1.0), (1.0, 1.0))
>>> t.actuator_to_joint('position', [1.0, 1.0])      # both motors forward: pitch only
array([1., 0.])
>>> t.actuator_to_joint('position', [1.0, -1.0])     # opposite: roll only
array([0., 1.])
>>> t.joint_to_actuator('effort', [2.0, 0.0])
array([1., 1.])
"""

from .base import Transmission
from .interfaces import EFFORT, POSITION


def actuator_to_joint(kind, a, ar, jr, off):
    """Map actuator to joint values with the differential formulas (module docstring)."""
    if kind == EFFORT:
        t1 = a[0] * ar[0]
        t2 = a[1] * ar[1]
        return (jr[0] * (t1 + t2), jr[1] * (t1 - t2))
    u1 = a[0] / ar[0]
    u2 = a[1] / ar[1]
    j1 = (u1 + u2) / (2.0 * jr[0])
    j2 = (u1 - u2) / (2.0 * jr[1])
    if kind == POSITION:
        return (j1 + off[0], j2 + off[1])
    return (j1, j2)


def joint_to_actuator(kind, j, ar, jr, off):
    """Map joint to actuator values with the differential formulas (module docstring)."""
    if kind == EFFORT:
        t1 = j[0] / jr[0]
        t2 = j[1] / jr[1]
        return ((t1 + t2) / (2.0 * ar[0]), (t1 - t2) / (2.0 * ar[1]))
    if kind == POSITION:
        y1 = (j[0] - off[0]) * jr[0]
        y2 = (j[1] - off[1]) * jr[1]
    else:
        y1 = j[0] * jr[0]
        y2 = j[1] * jr[1]
    return ((y1 + y2) * ar[0], (y1 - y2) * ar[1])


class DifferentialTransmission(Transmission):
    """Two actuators, two joints, coupled through a differential (see module docstring)."""

    TYPE = 'differential'
    NUM_ACTUATORS = 2
    NUM_JOINTS = 2
    __slots__ = ()

    class FORMULAS:
        """Namespace binding this type's formulas."""

        actuator_to_joint = staticmethod(actuator_to_joint)
        joint_to_actuator = staticmethod(joint_to_actuator)

    def __init__(self, actuator_reductions, joint_reductions, joint_offsets=(0.0, 0.0)):
        super().__init__(actuator_reductions, joint_reductions, joint_offsets)
