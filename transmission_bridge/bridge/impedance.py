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
"""

import typing

import numpy as np

from ..transmissions import impedance

OUTPUTS = ('effort', 'motor_gains')


class MotorCommand(typing.NamedTuple):
    """One state's impedance output: motor names and per-motor values (None where unused)."""

    names: tuple
    position: object
    velocity: object
    effort: object
    stiffness: object
    damping: object


class _LinearBlock:
    """The constant matrices of linear impedance transmissions (their joints and motors)."""

    def __init__(self, J, tset, joints, kp, kd):
        self.J, self.inverse = J, np.linalg.inv(J)
        self.offset = np.asarray(tset.joint_offsets)[joints].copy()
        self.b = np.asarray(tset.damping)[joints].copy()
        self.kp, self.kd = kp.copy(), kd.copy()
        K, D = impedance.motor_gains(J, kp, kd)
        self.k, self.d = np.diag(K).copy(), np.diag(D).copy()
        self.k_off, self.d_off = K - np.diag(self.k), D - np.diag(self.d)
        # effort: τ_a = c − K θ − B θ̇, c = Jᵀ (Kp (q* − offset) + Kd q̇* + τ*) per target,
        # B = Jᵀ (Kd − b) J (the damping loss b q̇ added back)
        self.K = K
        self.B = (J.T * (self.kd - self.b)) @ J

    def constant(self, q_t, qd_t, tau_t):
        """Return c of the effort law for targets (q*, q̇*, τ*)."""
        return self.J.T @ (self.kp * (q_t - self.offset) + self.kd * qd_t + tau_t)


class ImpedanceCore:
    """Joint gains and targets of one transmission set (module docstring)."""

    def __init__(self, tset, output='effort', timeout_ns=0, on_timeout='hold'):
        self.output = output
        self.timeout_ns, self.on_timeout = timeout_ns, on_timeout
        self.tripped = False
        self.refused = 0
        self.last_ns = None
        self._tset = None
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
        if len(self.joints):
            names = [tset.joint_names[i] for i in self.joints]
            joint_idx, self.actuators = tset.coverage(names)
            self.limits = tset.command_limits(joint_idx, self.actuators)
            self.actuator_names = tuple(tset.actuator_names[i] for i in self.actuators)
            # Linear transmissions: J is constant, their block computed once here.
            self._linear_j = (impedance.jacobian(tset, np.zeros(tset.num_actuators))[
                np.ix_(self.joints, self.actuators)] if tset.linear else None)
            self._linear = None
            if self._linear_j is not None:
                self._linear = _LinearBlock(self._linear_j, tset, self.joints,
                                            self.kp[self.joints], self.kd[self.joints])
        else:
            self.actuators, self.actuator_names, self.limits = np.zeros(0, np.intp), (), None
            self._linear = None
        self._constant = None
        self.target[:, ~driven] = np.nan

    @property
    def linear(self):
        """Say whether every impedance transmission maps linearly: J is then constant."""
        return self._linear is not None

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
        self._constant = None
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
        self._constant = None
        joints = self.joints
        if self.on_timeout == 'hold':
            self.target[0, joints] = positions()
            self.target[1:, joints] = 0.0
        elif self.on_timeout == 'zero_velocity':
            self.target[1:, joints] = 0.0
        return True

    # --- at every state ---------------------------------------------------------------------
    def step_linear(self, theta, thetad, now_ns):
        """
        Return the :class:`MotorCommand` from the motors' state alone (linear sets), or None.

        q = J θ + offset and q̇ = J θ̇ for the impedance block: nothing decoded, a few small
        products; the same law and outputs as :meth:`step`.
        """
        block, acts = self._linear, self.actuators
        th = theta[acts]
        if np.isnan(th).any() or np.isnan(self.target[0, self.joints]).any():
            return None
        thd = thetad[acts]
        if np.isnan(thd).any():
            thd = np.where(np.isnan(thd), 0.0, thd)
        J = block.J
        if self._timed_out(now_ns, lambda: J @ th + block.offset) \
                and self.on_timeout == 'zero_effort':
            zeros = np.zeros(len(acts))
            return MotorCommand(self.actuator_names, None, None, zeros, zeros.copy(),
                                zeros.copy())
        q_t, qd_t, tau_t = self.target[:, self.joints]
        if self.output == 'effort':
            if self._constant is None:
                self._constant = block.constant(q_t, qd_t, tau_t)
            motor = self._constant - block.K @ th - block.B @ thd
            _, motor, _ = self.limits.scale('effort', block.inverse.T @ motor, motor)
            return MotorCommand(self.actuator_names, None, None, motor, None, None)
        theta_t = block.inverse @ (q_t - block.offset)
        thetad_t = block.inverse @ qd_t
        feed = J.T @ tau_t + block.k_off @ (theta_t - th) + block.d_off @ (thetad_t - thd)
        return MotorCommand(self.actuator_names, theta_t, thetad_t, feed, block.k, block.d)

    def step(self, q, qd, theta, thetad, now_ns):
        """
        Return the :class:`MotorCommand` of the measured state, or None.

        ``q``, ``qd``: joint positions and velocities (all joints, NaN where not measured);
        ``theta``, ``thetad``: the motors'. None without targets for every impedance joint,
        or where a joint of theirs is not measured now.
        """
        joints, acts = self.joints, self.actuators
        if not len(joints) or np.isnan(self.target[0, joints]).any():
            return None
        if np.isnan(q[joints]).any():
            return None
        qd = np.where(np.isnan(qd), 0.0, qd)
        tripped = self._timed_out(now_ns, lambda: q[joints])
        tset = self._tset
        if tripped and self.on_timeout == 'zero_effort':
            zeros = np.zeros(len(acts))
            return MotorCommand(self.actuator_names, None, None, zeros, zeros.copy(),
                                zeros.copy())
        q_t, qd_t, tau_t = self.target
        n = tset.num_joints
        kp = np.zeros(n)
        kd = np.zeros(n)
        kp[joints], kd[joints] = self.kp[joints], self.kd[joints]
        if self.output == 'effort':
            tau = np.zeros(n)
            tau[joints] = impedance.joint_torques(kp[joints], kd[joints], q_t[joints],
                                                  qd_t[joints], tau_t[joints], q[joints],
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
        q_goal = q.copy()
        q_goal[joints] = q_t[joints]
        q_goal[np.isnan(q_goal)] = 0.0      # other transmissions' unmeasured joints: unused
        theta_t = tset.joint_to_actuator('position', q_goal)[acts]
        if tset.linear:
            qd_goal = np.zeros(n)
            qd_goal[joints] = qd_t[joints]
            thetad_t = tset.joint_to_actuator('velocity', qd_goal)[acts]
        else:
            thetad_t = np.linalg.solve(J, qd_t[joints])     # square: one motor per joint
        target, target_d, k, d, feed = impedance.mit_commands(
            J, kp[joints], kd[joints], theta_t, thetad_t, tau_t[joints], theta[acts],
            np.where(np.isnan(thetad), 0.0, thetad)[acts])
        if not np.isfinite(feed).all():
            return None
        return MotorCommand(self.actuator_names, target, target_d, feed, k, d)
