"""
The builtin engine: the package's own rigid-body dynamics behind the simulator's drives.

No ROS, no MuJoCo: the robot of a YAML model or a URDF (:mod:`transmission_bridge.kinematics`:
revolute, prismatic, screw, mimic joints; no contacts, a fixed base), every motor placed
through its transmission. The drives are :mod:`.drives`' (the same saturation, laws, gear
stage, quantisation, noise and delay as MuJoCo's engine). Each physics step (semi-implicit
Euler, as MuJoCo's ``Euler`` integrator, the joints' damping implicit):

    (M + Aᵀ diag(g I) A + h D) v⁺ = (M + Aᵀ diag(g I) A) v + h (Aᵀ out − C v + τ_g − D v
                                     − Aᵀ g I Ȧ v) + h Aᵀ φ,        q⁺ = q + h v⁺

with ``A = ∂θ/∂q`` (the motors' velocities per joint velocity, at the pose), ``out`` and ``g``
each stage's applied part and gain (:meth:`.drives.Drives.dry_stage`), and ``φ`` the stages'
dry friction on the motors' coordinates, ``|φ_k| ≤ band_k``, found as a time-stepping
simulator finds Coulomb friction: each stuck stage's motor ends the step at rest, each
sliding one's friction is at its bound against the motion (projected Gauss-Seidel on
``W = h A M_e⁻¹ Aᵀ``, :data:`SWEEPS` sweeps). A stage's band follows the load it passed the
step before, as in MuJoCo's engine.
"""

import math

import numpy as np

from .drives import Drives
from .model import joint_damping, SimulationError
from ..kinematics import load_model, ModelError

STEP = 0.0005           # s: the longest physics step (the same as a URDF's on MuJoCo)
SWEEPS = 60             # projected Gauss-Seidel sweeps of the stages' friction per step
HOLD_ALL = 1e12         # a stage's band before its load is known: held (the engine's rule)


class BuiltinSimulation:
    """
    The builtin engine's state and step (module docstring), MuJoCo's engine's interface.

    ``model_file``: a YAML model or URDF path, or a loaded kinematics ``Model``; ``substeps``:
    physics steps per state (default: steps of at most :data:`STEP`).
    """

    def __init__(self, tset, model_file, rate, options, substeps=None):
        if hasattr(model_file, 'joint_names'):         # a loaded kinematics Model
            self.model = model_file
        else:
            try:
                self.model = load_model(str(model_file))
            except (ModelError, OSError) as exc:
                raise SimulationError(f'model_file {model_file}: {exc}') from None
        model = self.model
        joints = set(model.joint_names)
        for spec in tset.specs:
            for j in spec.joints:
                if j.name not in joints:
                    raise SimulationError(
                        f'transmission {spec.name!r}: its joint {j.name!r} is not a joint of '
                        f'model_file {model_file} (its joints: {", ".join(model.joint_names)})')
        self.columns = model.set_columns(tset)
        self.tset, self.options = tset, options
        period = 1.0 / rate
        self.substeps = substeps or max(1, math.ceil(period / STEP - 1e-9))
        self._h = period / self.substeps
        self.period = period
        self.drives = Drives(tset, options)
        damping = np.array(model.effective_damping, dtype=float)
        damping[self.columns], self.added_damping, self.warnings = joint_damping(
            tset.joint_names, damping[self.columns], tset.damping)
        self._damping = damping
        inefficient = tset.losses.inefficient
        self._dry = np.flatnonzero(inefficient) if inefficient.any() else None
        self.model_motors = np.zeros(0, dtype=int)
        self.placed_motors = np.arange(tset.num_actuators)
        self.steps = 0
        self.unstable = 0
        self.base_start = None      # a fixed base: never put on the ground
        self.reset()

    # --- state -------------------------------------------------------------------------
    @property
    def time(self):
        """Return the simulated time, s."""
        return self.steps * self._h

    def start_pose(self):
        """Return the model's positions to start from: the transmissions' defaults."""
        q = np.array(self.model.default_positions, dtype=float)
        q[self.columns] = self.tset.default_positions
        return q

    def reset(self, hold_states=0):
        """Put the robot back at rest in its start pose, held (:meth:`.Drives.reset`)."""
        self.q = self.start_pose()
        self.v = np.zeros_like(self.q)
        self.qacc = np.zeros_like(self.q)
        self.drives.reset(hold_states)
        self._load = None
        self._accel = np.zeros(self.tset.num_actuators)
        self.applied = np.zeros(self.tset.num_actuators)
        self._forces = np.zeros_like(self.q)

    def motors(self):
        """Return the motors' exact ``(θ, θ̇)`` now (set order)."""
        return self.tset.motion_to_actuator(self.q[self.columns], self.v[self.columns])

    def report(self):
        """Return what the drivers publish: ``(θ, θ̇, τ)`` (options' noise, delay)."""
        theta, thetad = self.motors()
        return self.drives.report(theta, thetad, self.applied)

    def joint_state(self):
        """Return ``(names, q, q̇, the motors' generalized forces)`` of every model joint."""
        return list(self.model.joint_names), self.q.copy(), self.v.copy(), self._forces.copy()

    def base_pose(self):
        """Return None: the builtin engine's base is fixed."""
        return None

    # --- the step ------------------------------------------------------------------------
    def advance(self):
        """Run one state period (``substeps`` physics steps); held before any command."""
        if self.drives.holding():
            self.steps += self.substeps
            return
        total = np.zeros(self.tset.num_actuators)
        for _ in range(self.substeps):
            total += self._step()
        self.steps += self.substeps
        self.applied = total / self.substeps

    def _motor_map(self, q_set):
        """Return ``A = ∂θ/∂q`` (nA, nJ) at the set's joint positions."""
        tset = self.tset
        eye = np.eye(tset.num_joints)
        if tset.constant_map:
            return tset.joint_to_actuator('velocity', eye).T
        pose = np.broadcast_to(q_set, eye.shape).copy()
        return tset.joint_to_actuator('velocity', eye, pose).T

    def _step(self):
        tset, model, drives, h = self.tset, self.model, self.drives, self._h
        cols = self.columns
        q, v = self.q, self.v
        q_set, v_set = q[cols], v[cols]
        A = self._motor_map(q_set)
        theta, thetad = tset.motion_to_actuator(q_set, v_set)
        tau = drives.torques(theta, thetad)
        accel = self._accel
        out, gain, _ = drives.dry_stage(tau, thetad, accel, 0.0)
        rotor = gain * drives.rotor
        bias = np.zeros(tset.num_actuators)
        if rotor.any() and not tset.constant_map:         # the rotors' Ȧ v: θ̈ = A a + Ȧ v
            bias = tset.joint_accelerations_to_actuator(np.zeros(len(cols)), q_set, v_set)
        nq = len(q)
        M = model.mass_matrix(q)
        M[np.ix_(cols, cols)] += A.T @ (rotor[:, None] * A)
        M_e = M + h * np.diag(self._damping)
        force = -model.nonlinear_effects(q, v) - self._damping * v
        force[cols] += A.T @ (out - rotor * bias)
        # The motors' coordinates in model columns: B (nA, nq).
        B = np.zeros((tset.num_actuators, nq))
        B[:, cols] = A
        v_free = v + h * np.linalg.solve(M_e, force)
        phi = np.zeros(tset.num_actuators)
        dry = self._dry
        if dry is not None:
            MinvBt = np.linalg.solve(M_e, B[dry].T)
            W = h * (B[dry] @ MinvBt)
            w_free = B[dry] @ v_free
            load = self._load
            if load is None:            # a start or a reset: the load each stage holds
                load = out.copy()
                at_rest = w_free - B[dry] @ v      # held: the load, not what stops it
                load[dry] += _box_friction(W, at_rest, np.full(len(w_free), HOLD_ALL))
            _, _, band = drives.dry_stage(tau, thetad, accel, load)
            phi[dry] = _box_friction(W, w_free, band[dry])
            v_new = v_free + h * (MinvBt @ phi[dry])
        else:
            v_new = v_free
        theta_dd = (B @ v_new - thetad) / h
        self._accel = theta_dd
        self._load = out - rotor * theta_dd + phi
        self._forces = np.zeros(nq)
        self._forces[cols] = A.T @ (out + phi)
        self.qacc = (v_new - v) / h
        self.v = v_new
        self.q = q + h * v_new
        return tau


def _box_friction(W, w_free, band):
    """
    Return the friction ``φ`` (|φ_k| ≤ band_k) that Coulomb's law puts on ``w = w_free + W φ``.

    Each coordinate either ends at rest with its friction inside its band (stuck) or slides
    with its friction at the bound against its motion: projected Gauss-Seidel, from zero.
    """
    phi = np.zeros(len(band))
    diagonal = np.diag(W)
    for _ in range(SWEEPS):
        for k in range(len(band)):
            w = w_free[k] + W[k] @ phi
            phi[k] = min(band[k], max(-band[k], phi[k] - w / diagonal[k]))
    return phi
