"""
Numbers the tests compute independently of the code under test, from a set's position map.

``fd_jacobian``: J = ∂q/∂θ by central differences of the set's position map (a linkage's
rods solved anew at each displaced motor pose), never the Jacobian a test checks.
``oracle_measured`` and ``oracle_commanded``: one motor's gear stage moving, its branches
written out from the formulas (Modelica's LossyGear: η_f when the motor drives, 1/η_b when the
load drives, friction on the motor side), never the vectorised blend under test.
"""

import math

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


def oracle_measured(tau_a, v, eta_f, eta_b, b, c):
    """τ_o of one motor moving at ``v`` (|v| > the rest width): the issue's branches."""
    tau_in = tau_a - (b * v + c * math.copysign(1.0, v))
    if tau_in * v > 0:
        return eta_f * tau_in
    return tau_in / eta_b if eta_b > 0 else tau_in      # self-locking: never back-driven


def oracle_commanded(tau_o, v, eta_f, eta_b, b, c):
    """τ_a of one motor moving at ``v`` giving stage output ``tau_o``: the issue's branches."""
    tau_in = tau_o / eta_f if tau_o * v > 0 else eta_b * tau_o
    return tau_in + b * v + c * math.copysign(1.0, v)


def lossy_set(path, rng, self_locking=False):
    """
    Return ``path``'s set with a random gear stage on every motor (``ros2 param set``'s way).

    Efficiency driving in [0.4, 0.95], driven in [0.3, 0.9] (self-locking: [-0.5, -0.05]),
    viscous friction in [0, 0.02], Coulomb in [0, 0.2].
    """
    from transmission_bridge.transmissions import load_transmissions
    from transmission_bridge.transmissions.parameters import apply_parameters
    tset = load_transmissions(path)
    changes = {}
    for name in tset.actuator_names:
        changes.update(_random_stage(rng, self_locking, name))
    return apply_parameters(tset, changes)


def _random_stage(rng, self_locking, name):
    p = f'actuators.{name}.'
    return {p + 'efficiency.driving': float(rng.uniform(0.4, 0.95)),
            p + 'efficiency.driven': float(rng.uniform(-0.5, -0.05) if self_locking
                                           else rng.uniform(0.3, 0.9)),
            p + 'friction.viscous': float(rng.uniform(0.0, 0.02)),
            p + 'friction.coulomb': float(rng.uniform(0.0, 0.2))}
