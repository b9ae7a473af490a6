"""
The commanded effort: wanted joint torques to motor torques, written once (NOTATION.md).

Every caller that turns joint torques into what the motors must apply — a streamed command,
a trajectory point, a FollowJointTrajectory goal's sample and its path check, the impedance
law's ``effort`` output, ``excite``'s limit check, :meth:`Model.motor_torques
<transmission_bridge.kinematics.model.Model.motor_torques>` — calls :func:`commanded_parts`
(or :func:`commanded_efforts`), so none of its terms is written twice:

    τ_o = J⁻ᵀ (τ_j + b_j q̇)                       the effort map (a linkage's at q), damping
    τ_a = g(τ_o, θ̇) τ_o + b θ̇ + c σ(θ̇) + I_m θ̈     each stage's inverse, friction, rotor

``g`` is the stage's gain by the direction of power flow (:mod:`.losses`), ``I_m`` the rotor of
a stage whose efficiency is below 1 (its ``I θ̈`` acts before the loss). The rotor of an ideal
stage passes the stage unchanged, so it is the joint side's (:func:`joint_side`): the links'
inverse dynamics with it, ``Model.inverse_dynamics(q, v, a, joint_side(tset))``, is what a
feed-forward sent to the bridge carries. Each term is so counted once.

**One motion for every velocity term** (damping, power-flow direction, friction): the command's
own velocities ``(q̇, θ̇ = J_x q̇)`` where it carries them — a trajectory point, a goal's sample, a
streamed command with velocities: the motion it asks the motors to follow, so a command maps the
same whatever the robot did before —, else the measured motion of the state it was computed
from (:func:`command_motion`). Unknown velocities (NaN) are rest: no damping term, the stage's
mean gain, no friction.

>>> from transmission_bridge.transmissions import load_transmissions
>>> ts = load_transmissions({'transmissions': [{'name': 'elbow', 'type': 'simple',
...     'actuators': [{'name': 'm', 'mechanical_reduction': 10.0, 'rotor_inertia': 1e-4,
...                    'efficiency': {'driving': 0.8, 'driven': 0.5}}],
...     'joints': [{'name': 'elbow', 'damping': 0.5}]}]})
>>> tau_a = commanded_efforts(ts, [8.0], [2.0], [20.0], joint_accelerations=[1.0])
>>> round(float(tau_a[0]), 6)           # (8 + 0.5 * 2) / 10 / 0.8 + 1e-4 * 10 * 1
1.126
"""

import hashlib

import numpy as np


def joint_side(tset):
    """
    Return ``tset`` with only what the joints count of its motors: the ideal stages' rotors.

    Every motor's friction, and the rotor of a stage whose efficiency is below 1, are the
    commanded law's (zero here): what a joint-space feed-forward (the kinematics node's,
    ``excite``'s goal) includes, so that the bridge adds each term once. Made once per set
    (kept on it, as its losses and rotors are).
    """
    made = getattr(tset, '_joint_side', None)
    if made is None:
        made = tset._joint_side = _joint_side(tset)
    return made


def _joint_side(tset):
    changes = {}
    for name in tset.actuator_names:
        a = tset.actuator(name)
        fields = {}
        if a.viscous_friction or a.coulomb_friction:
            fields.update(viscous_friction=0.0, coulomb_friction=0.0)
        if a.rotor_inertia and (a.efficiency_driving != 1.0 or a.efficiency_driven != 1.0):
            fields['rotor_inertia'] = 0.0
        if fields:
            changes[name] = fields
    return tset.replace_fields(actuators=changes) if changes else tset


def joint_side_terms(tset):
    """
    Return a short text naming what a joint-space feed-forward must include of ``tset``.

    ``'none'`` when the joint side holds no rotor (no transmissions, or only frictional
    motors and lossy stages: the bridge adds all of it); else ``'rotors '`` and a digest of
    the joint side's transmissions. Two nodes that state the same text count each term
    once between them (the kinematics node's feed-forward, the bridge's law).
    """
    if not tset:
        return 'none'
    side = joint_side(tset)
    if not any(side.actuator(name).rotor_inertia for name in side.actuator_names):
        return 'none'
    text = repr(tuple(side.specs)).encode()
    return 'rotors ' + hashlib.sha256(text).hexdigest()[:12]


def motor_side_inertia(tset):
    """Return each motor's rotor inertia the law adds (``I_m``: a stage below efficiency 1)."""
    return tset.rotors.inertia * tset.losses.inefficient


def command_motion(tset, velocities, measured_motor_velocities, positions=None):
    """
    Return ``(q̇, θ̇)`` a command's velocity terms take (module docstring, one motion).

    ``velocities`` (..., nJ): the command's own joint velocities, or None where it carries
    none; then ``measured_motor_velocities`` (..., nA) and the joint velocities they map to
    (a linkage's at joint ``positions``).
    """
    if velocities is not None:
        qd = np.asarray(velocities, dtype=float)
        return qd, tset.joint_to_actuator('velocity', qd, _pose(tset, positions))
    thetad = np.asarray(measured_motor_velocities, dtype=float)
    if tset.constant_map:
        return tset.actuator_to_joint('velocity', thetad), thetad
    if positions is None:
        return np.full(thetad.shape[:-1] + (tset.num_joints,), np.nan), thetad
    theta = tset.joint_to_actuator('position', positions)
    return tset.actuator_to_joint('velocity', thetad, theta), thetad


def damped(tset, joint_torques, joint_velocities, joints=None):
    """
    Return ``τ_j + b_j q̇``: the torques before the joints' damping loss (NaN q̇: none).

    ``joints``: the set indices the arrays hold (None: every joint, set order).
    """
    qd = np.asarray(joint_velocities, dtype=float)
    b = tset.damping if joints is None else tset.damping[joints]
    return np.asarray(joint_torques, dtype=float) + b * np.where(np.isnan(qd), 0.0, qd)


def commanded_parts(tset, joint_torques, joint_velocities, motor_velocities, positions=None,
                    joint_accelerations=None):
    """
    Return ``(τ_o, gain, offset)`` (..., nA): ``τ_a = gain τ_o + offset``.

    ``joint_torques`` τ_j, ``joint_velocities`` q̇ and ``motor_velocities`` θ̇ of one motion
    (:func:`command_motion`), joint ``positions`` (a set with linkages maps there; NaN where
    unknown is taken as 0 for the rotors' rate term), ``joint_accelerations`` (None: no rotor
    term). The gain depends on τ_o's sign only, so a command scaled by k ≥ 0 as a whole (the
    motors' effort limits, after the losses) scales its loss-free part.
    """
    qd = np.asarray(joint_velocities, dtype=float)
    tau = damped(tset, joint_torques, qd)
    tau_o = tset.joint_to_actuator('effort', tau, _pose(tset, positions))
    losses = tset.losses
    if losses.lossless:
        gain, offset = np.ones_like(tau_o), np.zeros_like(tau_o)
    else:
        gain, offset = losses.stage_parts(tau_o, motor_velocities)
    if joint_accelerations is not None:
        inertia = motor_side_inertia(tset)
        if inertia.any():
            q = np.zeros_like(tau) if positions is None else np.asarray(positions, float)
            theta_dd = tset.joint_accelerations_to_actuator(
                joint_accelerations, np.where(np.isnan(q), 0.0, q),
                np.where(np.isnan(qd), 0.0, qd))
            offset = offset + inertia * theta_dd
    return tau_o, gain, offset


def commanded_efforts(tset, joint_torques, joint_velocities, motor_velocities, positions=None,
                      joint_accelerations=None):
    """Return the motor torques τ_a (..., nA) of :func:`commanded_parts`' law."""
    tau_o, gain, offset = commanded_parts(tset, joint_torques, joint_velocities,
                                          motor_velocities, positions, joint_accelerations)
    if tset.losses.lossless:            # ideal stages (no rotor before a loss): the map's bits
        return tau_o
    return gain * tau_o + offset


def measured_efforts(tset, motor_efforts, motor_velocities, motor_positions=None,
                     motor_accelerations=None):
    """
    Return the joint efforts (..., nJ) of measured motor torques, before the joints' damping.

    The law's inverse: ``τ_in = τ_a − b θ̇ − c σ(θ̇) − I_m θ̈``, each stage's output, then the
    effort map (a linkage's at the motors' positions). ``motor_accelerations`` None (a live
    stream, which measures none): the rotor's torque stays in the stage's input, so a lossy
    stage's joint effort then carries ``I_m θ̈`` scaled by its gain.
    """
    tau_a = np.asarray(motor_efforts, dtype=float)
    if motor_accelerations is not None:
        tau_a = tau_a - motor_side_inertia(tset) * np.asarray(motor_accelerations, float)
    return tset.measured_joint_efforts(tau_a, motor_velocities, motor_positions)


def _pose(tset, positions):
    """Return the joint positions a set's maps need (None for a linear set)."""
    return None if tset.constant_map else positions
