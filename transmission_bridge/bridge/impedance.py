"""
The bridge's joint impedance, without ROS: gains, targets, and the motor commands of a state.

A transmission any of whose joints has a gain (``gains.<joint>.p`` or ``.d`` > 0) is driven by
impedance: its joints' ``joint_commands`` are targets (q* = position, q̇* = velocity or 0,
τ* = effort or 0) kept until the next one (:meth:`ImpedanceCore.take`), and at every measured
state (:meth:`ImpedanceCore.step`) the law τ_j = Kp (q* − q) + Kd (q̇* − q̇) + τ* is sent to
its motors (:mod:`~transmission_bridge.transmissions.impedance`):

* ``effort``: τ_a = Jᵀ (τ_j + b q̇) (the transmission's damping loss b q̇ added back, as for
  every effort the bridge sends), scaled as a whole within the joint and motor effort limits;
* ``motor_gains``: per motor θ*, θ̇*, the diagonal of Jᵀ Kp J and Jᵀ Kd J, and the
  feed-forward holding Jᵀ τ* plus the off-diagonal coupling at the measured state.

Targets that stop for ``timeout_ns`` take the watchdog's ``on_command_timeout``: ``hold`` puts
the targets at the positions measured then (velocity and torque 0, the same gains),
``zero_velocity`` keeps q* and zeroes q̇* and τ*, ``zero_effort`` sends no torque and no gains,
``none`` keeps the last targets. A state that does not measure every joint of an impedance
transmission (a stale motor, a refused linkage state) sends nothing to its motors.

:meth:`ImpedanceCore.step` is the reference, from the joint state. The bridge's per-message
forms give its numbers at a fraction of its cost: for linear sets :meth:`linear_plan`, the
outputs as affine maps of the motors' state built once per targets and gains; behind
linkages the compiled ``linkage_loops.mit_state`` and ``effort_state``, with J and the joint
state as the state map left them (:attr:`.compiled.JointStateMap.jacobian`, ``latest``) and
the targets mapped once (:meth:`motor_goal`).
"""

import math
import typing

import numpy as np

from ..transmissions import impedance, linkage_loops

OUTPUTS = ('effort', 'motor_gains')


class MotorCommand(typing.NamedTuple):
    """One state's impedance output: motor names and per-motor values (None where unused)."""

    names: tuple
    position: object
    velocity: object
    effort: object
    stiffness: object
    damping: object


class LinearPlan:
    """
    A linear set's impedance output as affine maps of the bridge's flat motor state.

    ``flat`` is the state side's (positions, velocities, efforts of every motor, then 1.0):
    ``A @ flat`` is the motors' efforts (``effort``) or their feed-forward (``motor_gains``);
    ``W @ flat`` (effort, None where nothing is limited) every limited joint's and motor's
    effort over its limit, so that a sum of squares at most 1 is within every limit;
    ``columns`` (motor_gains) θ*, θ̇*, stiffness and damping per motor. Built per gains;
    :meth:`aim` writes what the targets change (the constant column, θ* and θ̇*).

    With q = J θ + offset and q̇ = J θ̇ (J constant):
    effort: τ_a = Jᵀ (Kp (q* − q) + Kd (q̇* − q̇) + τ* + b q̇) = c − K θ − B θ̇ with
    K = Jᵀ Kp J, B = Jᵀ (Kd − b) J, c = Jᵀ (Kp (q* − offset) + Kd q̇* + τ*);
    motor_gains: θ* = J⁻¹ (q* − offset), θ̇* = J⁻¹ q̇*, the stiffness and damping the
    diagonals of Jᵀ Kp J and Jᵀ Kd J, and the feed-forward Jᵀ τ* + K' (θ* − θ) + D' (θ̇* − θ̇)
    with K', D' their off-diagonal parts.
    """

    def __init__(self, J, tset, joints, acts, kp, kd, limits, output):
        n_act, m = tset.num_actuators, len(acts)
        self.output, self.version = output, 0
        self.A, self.W, self.columns = np.zeros((m, 3 * n_act + 1)), None, None
        self._J, self._inverse, self._kp, self._kd = J, np.linalg.inv(J), kp, kd
        self._offset = np.asarray(tset.joint_offsets)[joints]
        K, D = impedance.motor_gains(J, kp, kd)
        if output == 'effort':
            self.A[:, acts] = -K
            self.A[:, n_act + acts] = -(J.T * (kd - np.asarray(tset.damping)[joints])) @ J
            joint_limits, motor_limits = limits.magnitude_limits('effort')
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
        self.A[:, n_act + acts] = -self._D_off
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


class ImpedanceCore:
    """Joint gains and targets of one transmission set (module docstring)."""

    def __init__(self, tset, output='effort', timeout_ns=0, on_timeout='hold'):
        self.output = output
        self.timeout_ns, self.on_timeout = timeout_ns, on_timeout
        self.tripped = False
        self.refused = 0
        self.last_ns = None
        self._tset = None
        self._loops = self._columns_in = None
        self.set_transmissions(tset)

    def set_transmissions(self, tset):
        """Switch to ``tset``: gains kept by joint name, targets forgotten."""
        old = self._tset
        n = tset.num_joints
        kp, kd = np.zeros(n), np.zeros(n)
        if old is not None:
            for i, name in enumerate(tset.joint_names):
                j = old.joint_index.get(name)
                if j is not None:
                    kp[i], kd[i] = self.kp[j], self.kd[j]
        self._tset, self.kp, self.kd = tset, kp, kd
        self._members = [[tset.joint_index[j.name] for j in spec.joints] for spec in tset.specs]
        self.target = np.full((3, n), np.nan)
        self._regroup()

    @property
    def transmissions(self):
        """Return the :class:`TransmissionSet` in force."""
        return self._tset

    def set_gain(self, joint, which, value):
        """Set ``gains.<joint>.<which>`` (``p`` or ``d``); a joint leaving impedance is freed."""
        (self.kp if which == 'p' else self.kd)[self._tset.joint_index[joint]] = value
        self._regroup()

    def _regroup(self):
        tset = self._tset
        driven = np.zeros(tset.num_joints, dtype=bool)
        for members in self._members:
            if (self.kp[members] > 0).any() or (self.kd[members] > 0).any():
                driven[members] = True
        self.joints = np.flatnonzero(driven)
        #: Names of the joints driven by impedance (their joint_commands are targets).
        self.owned = {tset.joint_names[i]: None for i in self.joints}
        #: The gains of those joints, in their order.
        self.block_kp, self.block_kd = self.kp[self.joints], self.kd[self.joints]
        if len(self.joints):
            names = [tset.joint_names[i] for i in self.joints]
            joint_idx, self.actuators = tset.coverage(names)
            self.limits = tset.command_limits(joint_idx, self.actuators)
            #: 1 / effort limit of those joints and motors (0: unlimited), and their b.
            self.inverse_effort_limits = tuple(
                1.0 / np.asarray(x, dtype=float) for x in self.limits.magnitude_limits('effort'))
            self.block_damping = np.asarray(tset.damping, dtype=float)[self.joints]
            self._tau = np.empty(len(self.joints))          # the kernels' joint torques
            self.actuator_names = tuple(tset.actuator_names[i] for i in self.actuators)
            # Linear transmissions: J is constant, their block taken once here.
            self._linear_j = (impedance.jacobian(tset, np.zeros(tset.num_actuators))[
                np.ix_(self.joints, self.actuators)] if tset.linear else None)
        else:
            self.actuators, self.actuator_names, self.limits = np.zeros(0, np.intp), (), None
            self._linear_j = None
        self._changed()
        self.target[:, ~driven] = np.nan

    def _changed(self):
        """Forget what was derived from the gains (they changed), and from the targets."""
        self._plans = {}
        self._retarget()

    def _retarget(self):
        """Forget what was derived from the targets (they changed)."""
        self._aimed = None
        self._goal = None
        self._block_target = None

    def block_target(self):
        """Return the targets (q*, q̇*, τ*) of the impedance joints, (3, k), or None (unset)."""
        if self._block_target is None:
            target = self.target[:, self.joints]
            if np.isnan(target[0]).any():
                return None
            self._block_target = np.ascontiguousarray(target)
        return self._block_target

    @property
    def linear(self):
        """Say whether every impedance transmission maps linearly: J is then constant."""
        return self._linear_j is not None

    # --- targets ---------------------------------------------------------------------------
    def take(self, names, position, velocity, effort, now_ns):
        """
        Take the impedance joints' part of one joint_commands message; return why not ('').

        Positions are required (q*); velocity and effort are 0 when absent. Non-finite
        values refuse the whole part. Targets of joints the message does not name stay.
        """
        index = self._tset.joint_index
        cols = [k for k, n in enumerate(names) if n in self.owned]
        if not cols:
            return ''
        rows = [np.asarray(a, dtype=float) for a in (position, velocity, effort)]
        if len(rows[0]) != len(names):
            self.refused += 1
            return (f'joints {[names[k] for k in cols]} have gains: their joint_commands '
                    'need positions (q*)')
        values = np.zeros((3, len(cols)))
        for r, row in enumerate(rows):
            if len(row) == len(names):
                values[r] = row[cols]
            elif len(row):
                self.refused += 1
                return f'{("position", "velocity", "effort")[r]}: {len(row)} values'
        if not np.isfinite(values).all():
            self.refused += 1
            return 'a non-finite impedance target'
        self.target[:, [index[names[k]] for k in cols]] = values
        self._retarget()
        self.last_ns = now_ns
        self.tripped = False
        return ''

    def _timed_out(self, now_ns, positions):
        """
        Apply ``on_timeout`` once the targets are older than ``timeout_ns``; return if so.

        ``positions()``: the impedance joints' positions now (called when it trips).
        """
        if self.tripped or not self.timeout_ns or self.last_ns is None:
            return self.tripped
        if now_ns - self.last_ns < self.timeout_ns:
            return False
        self.tripped = True
        self._retarget()
        joints = self.joints
        if self.on_timeout == 'hold':
            self.target[0, joints] = positions()
            self.target[1:, joints] = 0.0
        elif self.on_timeout == 'zero_velocity':
            self.target[1:, joints] = 0.0
        return True

    # --- at every state ---------------------------------------------------------------------
    def linear_plan(self):
        """
        Return the :class:`LinearPlan` of a linear set's impedance, or None.

        None without a target for every impedance joint. Kept while the targets, gains and
        output are (the watchdog's timeout, which changes the targets, is :meth:`fill`'s).
        """
        joints, acts, J = self.joints, self.actuators, self._linear_j
        plan = self._plans.get(self.output)
        if plan is None:
            plan = self._plans[self.output] = LinearPlan(
                J, self._tset, joints, acts, self.block_kp, self.block_kd, self.limits,
                self.output)
        if self._aimed is not plan:
            if np.isnan(self.target[0, joints]).any():
                return None
            plan.aim(*self.target[:, joints])
            self._aimed = plan
        return plan

    def _linear_positions(self, flat):
        """Return the impedance joints' positions q = J θ + offset (linear sets)."""
        return (self._linear_j @ flat[self.actuators]
                + np.asarray(self._tset.joint_offsets)[self.joints])

    def fill(self, flat, state, jacobian, now_ns, out):
        """
        Write the motors' command at one state into ``out``; return whether to send it.

        ``out``: the motors' efforts (m,) with ``effort``, or per motor (θ*, θ̇*,
        feed-forward, stiffness, damping) (m, 5) with ``motor_gains`` (the message's
        bytes, as views). ``flat``: the state side's motor state; ``state`` (3, nJ) and
        ``jacobian``: the joint state and J the state map left (sets with linkages; a
        linear set maps ``flat`` itself). The per-message forms (:meth:`linear_plan`, the
        compiled kernels) are used where they apply; a state they decline (an effort
        beyond a limit, an unknown value) takes :meth:`step`, the reference.
        """
        positions = ((lambda: self._linear_positions(flat)) if self.linear
                     else (lambda: state[0, self.joints]))
        if self.zeroed(now_ns, positions):
            out[...] = 0.0
            self._columns_in = None
            return True
        effort = self.output == 'effort'
        if self.linear:
            plan = self.linear_plan()
            if plan is None:
                return False
            if effort:
                np.dot(plan.A, flat, out=out)
                if plan.W is None:
                    within = math.isfinite(out.dot(out))
                else:
                    over = np.dot(plan.W, flat)
                    within = over.dot(over) <= 1.0  # every |value| / limit <= 1 (NaN: no)
            else:
                if self._columns_in != (id(out), plan, plan.version):
                    out[:, [0, 1, 3, 4]] = plan.columns.T
                    self._columns_in = (id(out), plan, plan.version)
                feed = np.dot(plan.A, flat)
                within = math.isfinite(feed.dot(feed))
                if within:
                    out[:, 2] = feed
            return within or self._fill_reference(flat, state, now_ns, out)
        loops = self._loops or linkage_loops.kernels()
        self._loops = loops
        n_act = self._tset.num_actuators
        if not effort:
            goal = self.motor_goal()
            return goal is not None and bool(loops.mit_state(
                jacobian, self.joints, self.actuators, self.block_kp, self.block_kd, goal[0],
                goal[1], flat, n_act, out))
        target = self.block_target()
        if target is None:
            return False
        worst = loops.effort_state(jacobian, self.joints, self.actuators, self.block_kp,
                                   self.block_kd, target, self.block_damping, state,
                                   *self.inverse_effort_limits, self._tau, out)
        if not worst <= 1.0:
            if math.isnan(worst):
                return False
            _, out[:], _ = self.limits.scale('effort', self._tau, out.copy())
        return True

    def _fill_reference(self, flat, state, now_ns, out):
        """Write :meth:`step`'s command (the reference) into ``out``; return whether any."""
        n_act, tset = self._tset.num_actuators, self._tset
        theta, thetad = flat[:n_act], flat[n_act:2 * n_act]
        if state is None:
            q = tset.actuator_to_joint('position', theta)
            qd = tset.actuator_to_joint('velocity', thetad)
        else:
            q, qd = state[0], state[1]
        command = self.step(q, qd, theta, thetad, now_ns)
        if command is None:
            return False
        if self.output == 'effort':
            out[:] = command.effort
        else:
            for c, values in enumerate(command[1:]):
                out[:, c] = values
            self._columns_in = None
        return True

    def motor_goal(self):
        """
        Return (θ*, θ̇* of the impedance motors (2, m), τ* of their joints), or None.

        The targets mapped through the transmissions (a linkage's at the target pose); kept
        while the targets are. None without a target for every impedance joint.
        """
        if self._goal is None:
            joints, acts, tset = self.joints, self.actuators, self._tset
            q_t, qd_t, tau_t = self.target
            if np.isnan(q_t[joints]).any():
                return None
            q_goal = np.where(np.isnan(q_t), 0.0, q_t)      # other joints: their motors unused
            qd_goal = np.where(np.isnan(qd_t), 0.0, qd_t)
            theta_t, thetad_t = tset.motion_to_actuator(q_goal, qd_goal)
            self._goal = (np.stack([theta_t[acts], thetad_t[acts]]), tau_t[joints].copy())
        return self._goal

    def zeroed(self, now_ns, positions):
        """
        Say whether the watchdog's ``zero_effort`` holds the motors now (they get nothing).

        ``positions()``: the impedance joints' positions, called when the targets time out.
        """
        return self._timed_out(now_ns, positions) and self.on_timeout == 'zero_effort'

    def zero_command(self):
        """Return the :class:`MotorCommand` of ``zero_effort``: no torque, no gains."""
        zeros = np.zeros(len(self.actuators))
        return MotorCommand(self.actuator_names, None, None, zeros, zeros.copy(), zeros.copy())

    def step(self, q, qd, theta, thetad, now_ns):
        """
        Return the :class:`MotorCommand` of the measured state, or None: the reference.

        ``q``, ``qd``: joint positions and velocities (all joints, NaN where not measured);
        ``theta``, ``thetad``: the motors'. None without targets for every impedance joint,
        or where a joint of theirs is not measured now. The bridge's per-message paths
        (:meth:`linear_plan`, the compiled ``mit_state``) give the same numbers.
        """
        joints, acts = self.joints, self.actuators
        if not len(joints) or np.isnan(self.target[0, joints]).any():
            return None
        if np.isnan(q[joints]).any():
            return None
        qd = np.where(np.isnan(qd), 0.0, qd)
        if self.zeroed(now_ns, lambda: q[joints]):
            return self.zero_command()
        tset = self._tset
        q_t, qd_t, tau_t = self.target
        kp, kd = self.kp[joints], self.kd[joints]
        if self.output == 'effort':
            n = tset.num_joints
            tau = np.zeros(n)
            tau[joints] = impedance.joint_torques(kp, kd, q_t[joints], qd_t[joints],
                                                  tau_t[joints], q[joints],
                                                  qd[joints]) + tset.damping[joints] * qd[joints]
            at = None
            if not tset.linear:
                at = np.where(np.isnan(q), 0.0, q)
            motor = impedance.motor_efforts(tset, tau, at)[acts]
            if np.isnan(motor).any():
                return None
            _, motor, _ = self.limits.scale('effort', tau[joints], motor)
            return MotorCommand(self.actuator_names, None, None, motor, None, None)
        theta = np.where(np.isnan(theta), 0.0, theta)
        J = self._linear_j if self._linear_j is not None else \
            impedance.jacobian(tset, theta)[np.ix_(joints, acts)]   # block: theirs only
        (theta_t, thetad_t), tau_ff = self.motor_goal()
        target, target_d, k, d, feed = impedance.mit_commands(
            J, kp, kd, theta_t, thetad_t, tau_ff, theta[acts],
            np.where(np.isnan(thetad), 0.0, thetad)[acts])
        if not np.isfinite(feed).all():
            return None
        return MotorCommand(self.actuator_names, target, target_d, feed, k, d)
