"""
Where MuJoCo put each gear stage's dry friction, and the load the stage passed on.

No ROS here. The engine (:mod:`.engine`) carries an inefficient stage's dry friction on the
motor's coordinate (a motor joint's degree of freedom, or a fixed tendon along a placed
motor's ``θ = A q``); its band follows the load the stage passed the step before
(:meth:`.drives.Drives.dry_stage`). This module reads that load back from MuJoCo's constraint
rows after a step, and which motor joints' stages are stuck (their friction row inside its
band), so that closing the chains leaves those where they are.
"""

import numpy as np


class StageFriction:
    """
    The stages' friction rows (module docstring), indexed once.

    ``motors``: (set indices of the motor joints, their degrees of freedom); ``dry``: (the
    set indices of motor joints that carry a stage, their degrees of freedom; both None
    when none); ``tendons``: (set indices of placed motors on a tendon, the tendon ids, their
    rows of ``A``, the placed set's degrees of freedom; the first None when none).
    """

    def __init__(self, mujoco, model, data, num_actuators, motors, dry, tendons):
        self.data, self.n = data, num_actuators
        self.model_motors, self.motor_dofs = motors
        dry_motors, dry_dofs = dry
        self.tendon_motors, tendon_ids, self.A, self.joint_dofs = tendons
        kinds = mujoco.mjtConstraint
        self.dof_row = int(kinds.mjCNSTR_FRICTION_DOF)
        self.tendon_row = int(kinds.mjCNSTR_FRICTION_TENDON)
        self.stuck = int(mujoco.mjtConstraintState.mjCNSTRSTATE_QUADRATIC)
        # Each friction row back to the motor whose stage it carries (-1: none).
        self.motor_of_dof = np.full(model.nv, -1, dtype=int)
        self.any_dof = dry_dofs is not None
        if self.any_dof:
            self.motor_of_dof[dry_dofs] = dry_motors
        self.motor_of_tendon = np.full(max(model.ntendon, 1), -1, dtype=int)
        if tendon_ids is not None:
            self.motor_of_tendon[tendon_ids] = self.tendon_motors

    def forces(self):
        """Return the force MuJoCo's dry friction put on each stage's coordinate (set order)."""
        data = self.data
        n = data.nefc
        kind, ids, force = data.efc_type[:n], data.efc_id[:n], data.efc_force[:n]
        phi = np.zeros(self.n)
        for row, motor_of in ((self.dof_row, self.motor_of_dof),
                              (self.tendon_row, self.motor_of_tendon)):
            rows = kind == row
            if rows.any():
                motors = motor_of[ids[rows]]
                phi[motors[motors >= 0]] = force[rows][motors >= 0]
        return phi

    def loads(self, applied, gain, rotor):
        """
        Return what each stage passed on in the step just taken, ``s`` (mechanism's side).

        ``applied`` the stages' applied part, less the rotor's inertia ``gain I`` it
        accelerated, plus the dry friction MuJoCo applied: the load that sets the stage's
        band at the next step.
        """
        data = self.data
        accel = np.zeros(self.n)
        accel[self.model_motors] = data.qacc[self.motor_dofs]
        if self.tendon_motors is not None:
            accel[self.tendon_motors] = self.A @ data.qacc[self.joint_dofs]
        return applied - gain * rotor * accel + self.forces()

    def stuck_dofs(self):
        """Return the motor joints whose stage is stuck now (its friction row not sliding)."""
        if not self.any_dof:
            return None
        data = self.data
        n = data.nefc
        rows = (data.efc_type[:n] == self.dof_row) & (data.efc_state[:n] == self.stuck)
        dofs = data.efc_id[:n][rows]
        dofs = dofs[self.motor_of_dof[dofs] >= 0]
        return dofs if len(dofs) else None
