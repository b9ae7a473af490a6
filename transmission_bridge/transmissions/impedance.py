"""
Joint impedance through the transmissions: a joint-space spring and damper in motor space.

A joint-space impedance command is (q*, q̇*, τ*) with per-joint stiffness Kp and damping Kd:

    τ_j = Kp (q* − q) + Kd (q̇* − q̇) + τ*

The motors see it through the transmission's Jacobian J = ∂q/∂θ (joints per motor, at the
pose; constant for simple, differential, four-bar and coupling transmissions, the linkage's
velocity map at the measured pose for a linkage). By virtual work the motor torques are

    τ_a = Jᵀ τ_j                     (:func:`motor_efforts`: the set's own effort map)

and, for motors that run the law themselves (MIT mode: τ_m = k (θ* − θ) + d (θ̇* − θ̇) + f),
the joint spring seen from the motors is

    K_a = Jᵀ Kp J,   D_a = Jᵀ Kd J    (:func:`motor_gains`)

symmetric and positive semi-definite (a spring never injects energy in either space). A
motor runs its own diagonal entry; :func:`mit_commands` puts the rest, the off-diagonal
coupling at the measured state and the feed-forward Jᵀ τ*, into the motor's feed-forward
effort, so that the motors' law evaluated at the measured state gives exactly τ_a of the
joint law for linear transmissions (θ* − θ maps to q* − q exactly), and to first order in
(θ* − θ) for a linkage (J varies with the pose).

>>> from transmission_bridge.transmissions import load_transmissions
>>> ts = load_transmissions({'transmissions': [{'name': 'knee', 'type': 'simple',
...     'actuators': [{'name': 'm', 'mechanical_reduction': 10.0}],
...     'joints': [{'name': 'q'}]}]})
>>> K, D = motor_gains(jacobian(ts, [0.0]), [50.0], [1.0])   # 1:10 gearbox
>>> round(float(K[0, 0]), 12), round(float(D[0, 0]), 12)      # the gains divided by 10**2
(0.5, 0.01)
"""

import numpy as np


def jacobian(tset, actuator_positions):
    """
    Return J = ∂q/∂θ, (num_joints, num_actuators), at the motors' ``actuator_positions``.

    Column i is the joint velocity of a unit velocity of motor i: the set's velocity map
    (constant unless the set holds a linkage, whose map is taken at the pose).
    """
    n = tset.num_actuators
    unit = np.eye(n)
    if tset.constant_map:
        return tset.actuator_to_joint('velocity', unit).T
    theta = np.broadcast_to(np.asarray(actuator_positions, dtype=float), (n, n)).copy()
    return tset.actuator_to_joint('velocity', unit, positions=theta).T


def joint_torques(kp, kd, q_target, qd_target, tau_ff, q, qd):
    """Return τ_j = Kp (q* − q) + Kd (q̇* − q̇) + τ* (every argument per joint)."""
    kp, kd = np.asarray(kp, dtype=float), np.asarray(kd, dtype=float)
    return (kp * (np.asarray(q_target) - q) + kd * (np.asarray(qd_target) - qd)
            + np.asarray(tau_ff, dtype=float))


def motor_efforts(tset, tau_joint, joint_positions=None):
    """Return τ_a = Jᵀ τ_j: the set's effort map (a linkage's at ``joint_positions``)."""
    return tset.joint_to_actuator('effort', np.asarray(tau_joint, dtype=float),
                                  positions=None if tset.constant_map else joint_positions)


def motor_gains(J, kp, kd):
    """Return (K_a, D_a) = (Jᵀ Kp J, Jᵀ Kd J): the joint spring and damper seen by the motors."""
    J = np.asarray(J, dtype=float)
    return (J.T * np.asarray(kp, dtype=float)) @ J, (J.T * np.asarray(kd, dtype=float)) @ J


def mit_commands(J, kp, kd, theta_target, thetad_target, tau_ff, theta, thetad):
    """
    Return per motor (θ*, θ̇*, stiffness, damping, feed-forward effort) of MIT-mode commands.

    Stiffness and damping are the diagonals of :func:`motor_gains`; the feed-forward holds
    Jᵀ τ* and the off-diagonal rest of the motor-space spring at the measured (θ, θ̇), so
    that ``k (θ* − θ) + d (θ̇* − θ̇) + f`` = ``K_a (θ* − θ) + D_a (θ̇* − θ̇) + Jᵀ τ*``.
    """
    K, D = motor_gains(J, kp, kd)
    k, d = np.diag(K).copy(), np.diag(D).copy()
    dtheta = np.asarray(theta_target, dtype=float) - theta
    dthetad = np.asarray(thetad_target, dtype=float) - thetad
    feed = (np.asarray(J, dtype=float).T @ np.asarray(tau_ff, dtype=float)
            + (K - np.diag(k)) @ dtheta + (D - np.diag(d)) @ dthetad)
    return (np.asarray(theta_target, dtype=float), np.asarray(thetad_target, dtype=float),
            k, d, feed)
