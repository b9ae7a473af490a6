"""
Simulated motors that move a robot: the joints' rigid-body dynamics under the motors' torques.

For ``actuator_simulator`` with ``dynamics`` (no ROS here). The state is the joints' (q, q̇),
integrated semi-implicitly (q̇ += q̈ dt, then q += q̇ dt) with q̈ from the model's forward
dynamics (gravity, the links' inertia, the joints' damping, the motors' rotors and friction
through the transmissions). The motors' torques τ_a reach the joints as τ_j = J⁻ᵀ τ_a
(J = ∂q/∂θ at the pose: virtual work), less the transmissions' viscous loss b q̇. Two kinds of
motor:

* torque-controlled (:meth:`MotorDynamics.set_efforts`): τ_a as commanded, held;
* MIT mode (:meth:`MotorDynamics.set_gains`): each motor runs
  τ_a = k (θ* − θ) + d (θ̇* − θ̇) + f on its last target, stiffness, damping and
  feed-forward, evaluated at every step (the motor's own fast loop).

The motors report θ = the set's position map of q and θ̇ = J⁻¹ q̇, and the torque each
applied on average over the last step (as a drive reports its current averaged over its
sampling period: an MIT-mode motor's torque moves within a step with θ, and the value at
the step's end would not be the one that moved the robot). Until the first command the
joints are held where they start (brakes on, as a robot on its stand).
"""

import numpy as np

from ..transmissions import impedance


class MotorDynamics:
    """A robot's joints driven by its motors (module docstring)."""

    def __init__(self, tset, model, q0, substeps=10):
        self.tset, self.model, self.substeps = tset, model, substeps
        self._order = [model.joint_names.index(j) for j in tset.joint_names]
        self.q = np.asarray(q0, dtype=float).copy()          # transmission-set joint order
        self.qd = np.zeros(tset.num_joints)
        n = tset.num_actuators
        self.effort = np.zeros(n)
        self.gains = np.zeros((5, n))           # θ*, θ̇*, f, k, d per motor
        self.mode = 'effort'
        self.braked = True
        self._applied = None            # the mean torques of the last step
        # Compiled now (numba, on an empty cache: seconds), not at the first command: a
        # simulator that stops for it reads to the bridge as a robot gone stale.
        rest = np.zeros(len(model.default_positions))
        model.forward_dynamics(np.asarray(model.default_positions, dtype=float), rest, rest,
                               tset)

    def set_efforts(self, index, values):
        """Command torque-controlled motors ``index`` (actuator indices)."""
        self.mode, self.braked = 'effort', False
        self.effort[index] = values

    def set_gains(self, index, target, target_velocity, feed_forward, stiffness, damping):
        """Command MIT-mode motors ``index``: their law's five numbers."""
        self.mode, self.braked = 'mit', False
        self.gains[:, index] = (target, target_velocity, feed_forward, stiffness, damping)

    def motors(self):
        """Return (θ, θ̇, τ_a) now."""
        tset = self.tset
        theta = tset.joint_to_actuator('position', self.q)
        J = impedance.jacobian(tset, theta)
        thetad = np.linalg.solve(J, self.qd)
        applied = self._applied if self.mode == 'mit' else None
        return theta, thetad, (self._torques(theta, thetad) if applied is None
                               else applied.copy())

    def _torques(self, theta, thetad):
        if self.mode == 'effort':
            return self.effort.copy()
        target, target_d, feed, k, d = self.gains
        return k * (target - theta) + d * (target_d - thetad) + feed

    def advance(self, dt):
        """Move the robot on by ``dt`` seconds (``substeps`` steps, J once per call)."""
        if self.braked:
            return
        tset, model = self.tset, self.model
        theta = tset.joint_to_actuator('position', self.q)
        J = impedance.jacobian(tset, theta)
        h = dt / self.substeps
        full_q = np.asarray(model.default_positions, dtype=float).copy()
        full_tau = np.zeros_like(full_q)
        full_qd = np.zeros_like(full_q)
        applied = np.zeros(tset.num_actuators)
        for _ in range(self.substeps):
            theta = tset.joint_to_actuator('position', self.q)
            thetad = np.linalg.solve(J, self.qd)
            motor = self._torques(theta, thetad)
            applied += motor / self.substeps
            tau = np.linalg.solve(J.T, motor) - tset.damping * self.qd
            full_q[self._order], full_qd[self._order] = self.q, self.qd
            full_tau[self._order] = tau
            acc = model.forward_dynamics(full_q, full_qd, full_tau, tset)[self._order]
            self.qd = self.qd + acc * h
            self.q = self.q + self.qd * h
        self._applied = applied
