"""
The motors seen from the joints: reflected rotor inertia and friction (doc/dynamics.md).

Each actuator's rotor (inertia ``I``, in its own units) turns with ``x_a``; with ``T =
dx_a/dq`` of the transmissions (constant for the linear types, a linkage's at its
configuration) the rotors' kinetic energy is ``v^T T^T diag(I) T v / 2``, so they add
``T^T diag(I) T`` to the joints' mass matrix. Lagrange's equations of that energy give
the joint forces ``T^T I (T a + T-dot v)``: the velocity terms of a configuration-dependent
``T`` cancel to the rotors' own accelerations ``a_x = T a + T-dot v`` mapped back by
``T^T`` (``d/dt (T^T I T v) - d/dq (v^T T^T I T v / 2)`` with ``T-dot[a, k] = sum_j
d²x_a/dq_k dq_j v_j``, symmetric in k, j). Friction, ``b x-dot + c σ(x-dot)`` per motor (the
gear stage's law, :mod:`.losses`), is mapped by ``T^T`` too. Units: N·m or N at the joints,
as the efforts the bridge maps.
"""

import numpy as np


class RotorDynamics:
    """
    The actuators' inertia and friction of one transmission set (set order).

    The inertia is read here; the friction is the gear stage's (``tset.losses``), not copied.
    """

    def __init__(self, tset):
        self.inertia = np.array([tset.actuator(n).rotor_inertia for n in tset.actuator_names])
        self._tset = tset
        eye = np.eye(tset.num_joints)
        # Rows of T^T: the actuator velocities of each unit joint velocity.
        self._TT = None if not tset.constant_map else tset.joint_to_actuator('velocity', eye)

    def motor_jacobian(self, positions):
        """Return ``T = dx_a/dq`` at joint ``positions`` (..., nJ): (..., nA, nJ), read-only."""
        if self._TT is not None:                # linear: one matrix for every configuration
            return np.broadcast_to(self._TT.T, np.shape(positions)[:-1] + self._TT.T.shape)
        q = np.asarray(positions, dtype=float)
        n = self._tset.num_joints
        eye = np.broadcast_to(np.eye(n), q.shape[:-1] + (n, n))
        rows = self._tset.joint_to_actuator('velocity', eye, q[..., None, :])
        return np.swapaxes(rows, -1, -2)

    def mass_matrix(self, positions):
        """Return ``T^T diag(I) T`` (..., nJ, nJ)."""
        T = self.motor_jacobian(positions)
        return np.einsum('...ak,a,...al->...kl', T, self.inertia, T)

    def joint_forces(self, positions, velocities, accelerations):
        """Return ``T^T (I a_x + b x-dot + c sign(x-dot))`` (..., nJ): what the joints feel."""
        T = self.motor_jacobian(positions)
        xdot = np.einsum('...ak,...k->...a', T, velocities)
        xddot = self._tset.joint_accelerations_to_actuator(accelerations, positions, velocities)
        return np.einsum('...ak,...a->...k', T, self.inertia * xddot + self._friction(xdot))

    def friction_forces(self, positions, velocities):
        """Return the friction's generalized forces ``-T^T (b x-dot + c sign(x-dot))``."""
        T = self.motor_jacobian(positions)
        xdot = np.einsum('...ak,...k->...a', T, velocities)
        return -np.einsum('...ak,...a->...k', T, self._friction(xdot))

    def _friction(self, xdot):
        """
        Return each motor's friction force at its speed ``xdot``, against the motion.

        The gear stage's one friction law (:meth:`~.losses.Losses.friction`: ``b x-dot + c
        σ(x-dot)``, Coulomb blended across ±w at rest), so a joint-side force and a motor's
        commanded torque never count it two ways.
        """
        return self._tset.losses.friction(xdot)
