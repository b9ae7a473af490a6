"""
Numbers the tests compute independently of the code under test, from a set's position map.

``fd_jacobian``: J = ∂q/∂θ by central differences of the set's position map (a linkage's
rods solved anew at each displaced motor pose), never the Jacobian a test checks.
"""

import numpy as np

FD_STEP = 1e-6          # central differences: error O(h^2) ~ 1e-12 relative


def fd_jacobian(tset, theta, step=FD_STEP):
    """Return J = ∂q/∂θ (nJ, nA) at motor positions ``theta`` by central differences."""
    theta = np.asarray(theta, dtype=float)
    J = np.empty((tset.num_joints, tset.num_actuators))
    for i in range(tset.num_actuators):
        h = np.zeros(tset.num_actuators)
        h[i] = step
        J[:, i] = (tset.actuator_to_joint('position', theta + h)
                   - tset.actuator_to_joint('position', theta - h)) / (2 * step)
    return J
