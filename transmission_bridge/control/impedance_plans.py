"""
What a joint spring's command needs, fixed while its transmissions and gains are.

A :class:`Block` is the part of the springs that one state's command goes to: the driven
transmissions measured now and holding targets (the *law*), and those whose motors get
``zero_effort`` (no torque, no gains); their joints, motors (law's, then zeroed), gains,
limits and, for linear sets, the constant J block and :class:`LinearPlan` per output. The
core (:mod:`.impedance`) keeps one per combination seen, so a steady stream finds its block
by one comparison.
"""

import numpy as np

from ..transmissions import impedance


class Block:
    """One combination of law and zeroed transmissions (module docstring)."""

    def __init__(self, tset, groups, law, zeroed, kp, kd, linear_j):
        def cat(which, chosen):
            parts = [groups[g][which] for g in np.flatnonzero(chosen)]
            return np.concatenate(parts) if parts else np.zeros(0, dtype=np.intp)
        #: The law's joints and motors (set indices), and the zeroed transmissions' motors.
        self.joints, self.actuators = cat(0, law), cat(1, law)
        self.zero_actuators = cat(1, zeroed)
        names = tset.actuator_names
        #: Every motor the command goes to: the law's, then the zeroed.
        every = np.concatenate([self.actuators, self.zero_actuators])
        self.names = tuple(names[i] for i in every)
        self.kp, self.kd = kp[self.joints], kd[self.joints]
        self.damping = np.asarray(tset.damping, dtype=float)[self.joints]
        self.damped = bool(self.damping.any())
        self.limits = (tset.command_limits(self.joints, self.actuators) if len(self.joints)
                       else None)
        #: 1 / effort limit of the law's joints and motors (0: unlimited).
        self.inverse_effort_limits = (tuple(
            1.0 / np.asarray(x, dtype=float) for x in self.limits.magnitude_limits('effort'))
            if self.limits is not None else None)
        self.linear_j = (None if linear_j is None
                         else linear_j[np.ix_(self.joints, self.actuators)])
        self.tau = np.empty(len(self.joints))          # the kernels' joint torques
        self.plans = {}
        self.target = self.goal = None                 # (targets version, values)
        #: The law's motors' gear stages where one loses (:class:`Losses`), else None, and
        #: the set's commanded table for the loops.
        losses = tset.losses
        self.stages = (losses.subset(self.actuators) if losses.lossy[self.actuators].any()
                       else None)
        self.stage_table = self._loops = None
        if self.stages is not None:
            from ..transmissions import loss_loops
            self.stage_table = loss_loops.stage_table(losses, measured=False)
            self._loops = loss_loops.kernels()

    def plan(self, tset, output, target, version):
        """Return the :class:`LinearPlan` of ``output``, aimed at ``target`` (3, nJ)."""
        plan = self.plans.get(output)
        if plan is None:
            plan = self.plans[output] = LinearPlan(self.linear_j, tset, self.joints,
                                                   self.actuators, self.kp, self.kd,
                                                   self.limits, output,
                                                   self.stages is not None)
        if plan.aimed != version:
            plan.aim(*target[:, self.joints])
            plan.aimed = version
        return plan

    def through_losses(self, flat, n_act, law):
        """
        Make ``law``'s ideal motor efforts their motors' torques through the gear stages.

        At the motors' velocities in ``flat`` (efficiency by the direction of power flow,
        friction); return whether every motor is within its effort limit (else the caller
        takes the reference, which scales the command as a whole).
        """
        worst = self._loops.commanded_in_place(law, flat, n_act, self.actuators,
                                               self.stage_table, self.inverse_effort_limits[1])
        return worst <= 1.0

    def mit_losses(self, flat, n_act, law):
        """Add to ``law``'s MIT feed-forwards what each motor's gear stage loses at ``flat``."""
        self._loops.mit_feed_forward(law, flat, n_act, self.actuators, self.stage_table)

    def block_target(self, target, version):
        """Return the law joints' targets (q*, q̇*, τ*) as one (3, k) array."""
        if self.target is None or self.target[0] != version:
            self.target = (version, np.ascontiguousarray(target[:, self.joints]))
        return self.target[1]


class LinearPlan:
    """
    A linear set's impedance output as affine maps of the bridge's flat motor state.

    ``flat`` is the state side's (positions, velocities, efforts of every motor, then 1.0):
    ``A @ flat`` is the motors' efforts (``effort``) or their feed-forward (``motor_gains``);
    ``W @ flat`` (effort, None where nothing is limited) every limited joint's and motor's
    effort over its limit, so that a sum of squares at most 1 is within every limit (with
    lossy stages the joints' only: the motors' limits apply after their losses);
    ``columns`` (motor_gains) θ*, θ̇*, stiffness and damping per motor. Built per gains;
    :meth:`aim` writes what the targets change (the constant column, θ* and θ̇*).

    With q = J θ + offset and q̇ = J θ̇ (J constant):
    effort: τ_a = Jᵀ (Kp (q* − q) + Kd (q̇* − q̇) + τ* + b q̇) = c − K θ − B θ̇ with
    K = Jᵀ Kp J, B = Jᵀ (Kd − b) J, c = Jᵀ (Kp (q* − offset) + Kd q̇* + τ*);
    motor_gains: θ* = J⁻¹ (q* − offset), θ̇* = J⁻¹ q̇*, the stiffness and damping the
    diagonals of Jᵀ Kp J and Jᵀ Kd J, and the feed-forward
    Jᵀ τ* + K' (θ* − θ) + D' (θ̇* − θ̇) + Jᵀ b J θ̇ with K', D' their off-diagonal parts: the
    joint damping the commanded law adds back (``b q̇``), so the motors' law gives at the
    state the ``effort`` output's torques.
    """

    def __init__(self, J, tset, joints, acts, kp, kd, limits, output, lossy=False):
        n_act, m = tset.num_actuators, len(acts)
        self.output, self.version, self.aimed = output, 0, None
        self.A, self.W, self.columns = np.zeros((m, 3 * n_act + 1)), None, None
        self._J, self._inverse, self._kp, self._kd = J, np.linalg.inv(J), kp, kd
        self._offset = np.asarray(tset.joint_offsets)[joints]
        K, D = impedance.motor_gains(J, kp, kd)
        if output == 'effort':
            self.A[:, acts] = -K
            self.A[:, n_act + acts] = -(J.T * (kd - np.asarray(tset.damping)[joints])) @ J
            joint_limits, motor_limits = limits.magnitude_limits('effort')
            if lossy:                   # the motors' limits apply after their losses
                motor_limits = np.full(m, np.inf)
            over = np.concatenate([joint_limits, motor_limits])
            limited = np.isfinite(over)
            if limited.any():           # rows: the joint efforts J⁻ᵀ τ_a, then the motors'
                to_limits = (np.vstack([self._inverse.T, np.eye(m)])[limited]
                             / over[limited, None])
                self.W = to_limits @ self.A
                self._to_limits = to_limits
            return
        self.columns = np.zeros((4, m))
        k, d = np.diag(K).copy(), np.diag(D).copy()
        self._K_off, self._D_off = K - np.diag(k), D - np.diag(d)
        self.A[:, acts] = -self._K_off
        self.A[:, n_act + acts] = \
            -self._D_off + (J.T * np.asarray(tset.damping)[joints]) @ J
        self.columns[2:] = k, d

    def aim(self, q_t, qd_t, tau_t):
        """Take the targets (q*, q̇*, τ* of the plan's joints): the parts they change."""
        self.version += 1
        if self.output == 'effort':
            c = self._J.T @ (self._kp * (q_t - self._offset) + self._kd * qd_t + tau_t)
            self.A[:, -1] = c
            if self.W is not None:
                self.W[:, -1] = self._to_limits @ c
            return
        theta_t, thetad_t = self._inverse @ (q_t - self._offset), self._inverse @ qd_t
        self.A[:, -1] = self._J.T @ tau_t + self._K_off @ theta_t + self._D_off @ thetad_t
        self.columns[0], self.columns[1] = theta_t, thetad_t
