"""
The model's dynamics: inverse and forward dynamics, mass matrix, kinetic energy.

A mixin of :class:`~.model.Model`, like :mod:`.evaluation`: thin methods that check their
arguments and call the backend (Newton-Euler and composite bodies: :mod:`.newton_euler`,
compiled in :mod:`.kernels.dynamics`). Positions, velocities and accelerations in
``joint_names`` order (the independent joints), batch dimensions first.

Given a transmission set (:class:`~transmission_bridge.transmissions.TransmissionSet`),
the motors' rotors and friction join the links (doc/dynamics.md): with ``T = dx_a/dq``
of its joints,

    M_total = M + T^T diag(I_rotor) T
    tau     = ID(q, v, a) + T^T (I_rotor (T a + T-dot v) + b T v + c sign(T v))

The set's joints must be joints of the model (by name); the model's other joints get no
rotor. Joint positions are the published ones (the transmissions' offsets included), which
are the robot file's.

A set whose gear stages lose (:mod:`transmission_bridge.transmissions.losses`) has no joint
torque that stands for its motors: the rotor and the friction act before the stage's
efficiency. :meth:`DynamicsMixin.motor_torques` gives the motors' torques directly, by the
one commanded law (:mod:`transmission_bridge.transmissions.effort_law`):

    tau_a = C(J^-T (ID(q, v, a) + b v), x-dot) + I_m x-ddot

with C the stages' commanded map (efficiency by the direction of power flow, and friction)
and ``I_m`` the rotors of stages below efficiency 1 (an ideal stage's rotor is in ID's).
"""

import numpy as np

from . import _checks
from .errors import ModelError


class DynamicsMixin:
    """The dynamics of :class:`~.model.Model` (see the module docstring)."""

    def _qva(self, *arrays):
        """Return the arrays float64, broadcast to one shape (..., nq)."""
        arrays = [self._q(x) for x in arrays]
        shape = arrays[0].shape
        if any(x.shape != shape for x in arrays):
            shape = np.broadcast_shapes(*(x.shape for x in arrays))
            arrays = [np.broadcast_to(x, shape) for x in arrays]
        return arrays

    def set_columns(self, transmissions):
        """
        Return the model columns of ``transmissions``' joints (set order), or None for None.

        The one join of a model's joints and a transmission set's: everything that reads a
        set's joints in a model's vectors (dynamics with a set, excitation, identification,
        the builtin simulator) takes these columns. ModelError names a joint of the set the
        model does not have as an independent joint.
        """
        if transmissions is None:
            return None
        cached = getattr(self, '_dynamics_columns', None)
        if cached is not None and cached[0] is transmissions:
            return cached[1]
        index = {n: i for i, n in enumerate(self.joint_names)}
        missing = [j for j in transmissions.joint_names if j not in index]
        if missing:
            raise ModelError(f'transmission joint {missing[0]!r} is not an independent joint '
                             f'of model {self.name!r} (its joints: '
                             f'{", ".join(self.joint_names)})')
        columns = np.array([index[j] for j in transmissions.joint_names], dtype=np.intp)
        self._dynamics_columns = (transmissions, columns)
        return columns

    def inverse_dynamics(self, q, v, a, transmissions=None):
        """
        Return the joint forces that give accelerations ``a`` at ``q``, ``v``: (..., nq).

        Pinocchio's ``rnea``: ``M(q) a + C(q, v) v - tau_g(q)``, the torques (N·m) and forces
        (N) the joints must apply, gravity included (at rest: :func:`holding_torques`).
        With ``transmissions``, plus the rotors' inertia and friction seen through them
        (module docstring); the motors' torques are then
        ``transmissions.joint_to_actuator('effort', tau, q)``.
        """
        if transmissions is None:           # one configuration of float arrays: one call
            tau = self._backend.fast_inverse_dynamics(q, v, a)
            if tau is not None:
                return tau
        q, v, a = self._qva(q, v, a)
        tau = self._backend.inverse_dynamics(q, v, a)
        columns = self.set_columns(transmissions)
        if columns is not None:
            tau[..., columns] += transmissions.reflected_forces(
                q[..., columns], v[..., columns], a[..., columns])
        return tau

    def motor_torques(self, q, v, a, transmissions):
        """
        Return the motors' torques that give accelerations ``a`` at ``q``, ``v``: (..., nA).

        The commanded law (:mod:`transmission_bridge.transmissions.effort_law`) of the links'
        inverse dynamics with the joint side's rotors (the ideal stages'), at the planned
        motion: the joints' damping, the effort map, each gear stage's inverse at the motor's
        velocity (efficiency by the direction of power flow, friction), and each rotor
        before a loss (``I x-ddot``). What the bridge sends for that motion, and for ideal
        stages ``transmissions.joint_to_actuator('effort', inverse_dynamics(q, v, a,
        transmissions) + b v, q)`` without the friction (up to rounding).
        """
        q, v, a = self._qva(q, v, a)
        columns = self.set_columns(transmissions)
        joint = self.inverse_dynamics(q, v, a, transmissions.joint_side())
        return transmissions.motor_torques_for(joint[..., columns], q[..., columns],
                                               v[..., columns], a[..., columns])

    def nonlinear_effects(self, q, v, transmissions=None):
        """Return ``C(q, v) v - tau_g(q)`` (+ the rotors' velocity terms and friction)."""
        q, v = self._qva(q, v)
        return self.inverse_dynamics(q, v, np.zeros(q.shape), transmissions)

    def mass_matrix(self, q, transmissions=None, out=None):
        """
        Return the joint-space mass matrix ``M(q)``: (..., nq, nq), kg·m² and kg.

        With ``transmissions``, plus the rotors' reflected inertia ``T^T diag(I_rotor) T``.
        ``out``: an array of that shape to write into and return instead of a new one
        (float64, C-contiguous): a loop over batches that reuses it skips the zeroing of
        fresh pages, as :meth:`poses_and_gravity`'s ``out``.
        """
        if transmissions is None and out is None:
            M = self._backend.fast_mass_matrix(q)
            if M is not None:
                return M
        q = self._q(q)
        if out is not None:
            nq = self.num_positions
            out = _checks.out_arrays(out, q, [('mass_matrix', q.shape[:-1] + (nq, nq))])[0]
        M = self._backend.mass_matrix(q, out)
        columns = self.set_columns(transmissions)
        if columns is not None:
            M[..., columns[:, None], columns] += transmissions.reflected_mass_matrix(
                q[..., columns])
        return M

    def forward_dynamics(self, q, v, tau, transmissions=None):
        """
        Return the accelerations the joint forces ``tau`` give at ``q``, ``v``: (..., nq).

        ``M_total^-1 (tau - nonlinear_effects)``; Coulomb friction at zero motor speed
        counts as zero (it takes any value up to ``c`` there: the joint may stick).
        Undefined where M is singular (a joint that moves no mass and no inertia, as
        the massless hand frames some URDFs have): :class:`ModelError` names the joints.
        """
        q, v, tau = self._qva(q, v, tau)
        if transmissions is None:
            a = self._backend.forward_dynamics(q, v, tau)
        else:
            rhs = tau - self.nonlinear_effects(q, v, transmissions)
            try:
                a = np.linalg.solve(self.mass_matrix(q, transmissions), rhs[..., None])[..., 0]
            except np.linalg.LinAlgError:
                a = None
        if a is None:
            M = self.mass_matrix(q, transmissions)
            diagonal = np.diagonal(M, axis1=-2, axis2=-1).reshape(-1, self.num_positions)
            empty = [self.joint_names[k] for k in np.flatnonzero((diagonal <= 0).any(axis=0))]
            raise ModelError('forward dynamics is undefined: the mass matrix is singular'
                             + (f' (joints {", ".join(empty)} move no mass)' if empty
                                else ''))
        return a

    def kinetic_energy(self, q, v, transmissions=None):
        """Return ``v^T M_total(q) v / 2`` (J): a float for one configuration, else (...)."""
        q, v = self._qva(q, v)
        M = self.mass_matrix(q, transmissions)
        energy = 0.5 * np.einsum('...k,...kl,...l->...', v, M, v)
        return float(energy) if np.ndim(energy) == 0 else energy
