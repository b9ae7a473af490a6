"""
A published figure: ModernRobotics' GravityForces example (UR5-like 3R arm).

The book's example (ModernRobotics core.py, ``GravityForces``) has link frames at
the centres of mass, home poses ``M01, M12, M23``, space screw axes ``Slist`` and
masses 3.7, 8.393, 2.275 kg, g = (0, 0, -9.8); at theta = (0.1, 0.1, 0.1) it
gives the torque that balances gravity, ``[28.40331262, -37.64094817, -5.4415892]``.
That is the holding torque, so our ``tau_g`` must be its negative.

The example's first axis ``w = (1, 0, 1)`` is not a unit vector: ``exp([S] theta)``
then turns by ``|w| theta`` about ``w / |w|``. Our joints take unit axes, so the
test uses ``q = |w| theta`` and, by the chain rule, ``tau_theta = |w| tau_q``.
"""

import numpy as np
import pytest
from transmission_bridge.kinematics import Body, Inertial, Model, RevoluteJoint

M01 = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.089159], [0, 0, 0, 1]])
M12 = np.array([[0, 0, 1, 0.28], [0, 1, 0, 0.13585], [-1, 0, 0, 0], [0, 0, 0, 1]])
M23 = np.array([[1, 0, 0, 0], [0, 1, 0, -0.1197], [0, 0, 1, 0.395], [0, 0, 0, 1]])
SLIST = np.array([[1, 0, 1, 0, 1, 0], [0, 1, 0, -0.089, 0, 0], [0, 1, 0, -0.089, 0, 0.425]])
MASSES = (3.7, 8.393, 2.275)
EXPECTED_HOLDING = np.array([28.40331262, -37.64094817, -5.4415892])
# The book prints 8 decimals; allow the last one.
PUBLISHED_ATOL = 1e-7


def _translate(p):
    X = np.eye(4)
    X[:3, 3] = p
    return X


def ur5_3r():
    """Build the book's arm from its home poses and space screw axes."""
    bodies, M_home, parent = [], np.eye(4), 'world'
    for i, (M_rel, S, m) in enumerate(zip((M01, M12, M23), SLIST, MASSES)):
        M_home = M_home @ M_rel
        w, v = S[:3], S[3:]
        point_s = np.cross(w, v) / (w @ w)            # a point on the axis, space frame
        R, p = M_home[:3, :3], M_home[:3, 3]
        axis_b = R.T @ w                              # axis in link frame i
        point_b = R.T @ (point_s - p)                 # axis point in link frame i
        joint = RevoluteJoint(f'joint{i + 1}', axis=axis_b, origin=M_rel @ _translate(point_b),
                              child_transform=_translate(-point_b))
        bodies.append(Body(f'link{i + 1}', joint, Inertial(m), parent))
        parent = f'link{i + 1}'
    return Model(bodies, 'ur5_3r', gravity=(0, 0, -9.8))


def test_modern_robotics_gravity_forces_example():
    rate = np.linalg.norm(SLIST[:, :3], axis=1)      # |w| per joint: sqrt(2), 1, 1
    theta = np.array([0.1, 0.1, 0.1])
    tau_g = ur5_3r().gravity_generalized_forces(rate * theta)
    np.testing.assert_allclose(-rate * tau_g, EXPECTED_HOLDING, rtol=0, atol=PUBLISHED_ATOL)


def test_home_pose_is_the_books():
    poses = ur5_3r().forward_kinematics(np.zeros(3))
    np.testing.assert_allclose(poses['link3'], M01 @ M12 @ M23, atol=1e-15)
    assert pytest.approx(poses['link2'][2, 3]) == 0.089159
