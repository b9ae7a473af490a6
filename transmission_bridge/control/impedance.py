"""
Joint springs, without ROS: gains, targets, and the motor commands of each state.

A transmission any of whose joints has a gain (``gains.<joint>.p`` or ``.d`` > 0) is driven
by a joint spring: its joints' streamed commands are targets (q* = position, q̇* = velocity
or 0, τ* = effort or 0) kept until the next one (:meth:`ImpedanceCore.take`), and at every
measured state the law τ_j = Kp (q* − q) + Kd (q̇* − q̇) + τ* goes to its motors
(:mod:`~transmission_bridge.transmissions.impedance`):

* ``effort``: τ_a = Jᵀ (τ_j + b q̇) (the transmission's damping loss b q̇ added back, as for
  every effort the bridge sends), scaled as a whole within the joint and motor effort limits;
* ``motor_gains``: per motor θ*, θ̇*, the diagonal of Jᵀ Kp J and Jᵀ Kd J, and the
  feed-forward holding Jᵀ τ* plus the off-diagonal coupling at the measured state.

A motor whose gear stage loses (:mod:`~transmission_bridge.transmissions.losses`) gets the
torque its stage needs at the motor velocity measured: ``effort`` the commanded torque of
Jᵀ (τ_j + b q̇), its limit applied after the loss; ``motor_gains`` the feed-forward plus
``C(τ) − τ``, τ the motor's own law at the state (so that law, there, gives C(τ)).

Each transmission on its own (:meth:`ImpedanceCore.block_at`, once per state):

* a state that does not measure its joints (a stale motor, a refused linkage state) sends
  its motors nothing; the other transmissions' motors get theirs;
* without targets for all its joints, nothing;
* when its streamed targets stop (the one command deadline,
  :class:`~transmission_bridge.mapping.deadline.CommandDeadline`), ``on_command_timeout``:
  ``hold`` latches its targets at the positions measured then (q̇* = τ* = 0, the same gains:
  the law keeps being computed at every state), ``zero_velocity`` keeps q* and zeroes q̇*
  and τ*, ``zero_effort`` sends its motors no torque and no gains, ``none`` keeps the last
  targets. New targets take over at the next state.

:meth:`ImpedanceCore.step` is the reference, from the joint state. :meth:`ImpedanceCore.fill`
gives its numbers at a fraction of its cost: for linear sets the block's
:class:`~.impedance_plans.LinearPlan` (affine maps of the motors' state, built once per
gains and aimed once per targets); behind linkages the compiled ``linkage_loops.mit_state``
and ``effort_state``, with J and the joint state as the state map left them and the targets
mapped once (:meth:`ImpedanceCore.motor_goal`).
"""

import math
import typing

import numpy as np

from .impedance_plans import Block
from ..transmissions import effort_law, impedance, linkage_loops

OUTPUTS = ('effort', 'motor_gains')
_ZEROS = np.zeros(64)       # an absent velocity or effort: read, never written
_NO_LIMITS = np.zeros(64)   # 1 / limit of motors whose limits are checked after losses


class MotorCommand(typing.NamedTuple):
    """One state's spring command: motor names and per-motor values (None where unused)."""

    names: tuple
    position: object
    velocity: object
    effort: object
    stiffness: object
    damping: object


class ImpedanceCore:
    """Joint gains and targets of one transmission set (module docstring)."""

    #: What it takes are streamed commands: they feed the deadline (:mod:`...mapping.ownership`).
    stream = True

    def __init__(self, tset, output='effort', deadline=None):
        self.output = output
        #: The command deadline its targets feed (None: targets never time out).
        self.deadline = deadline
        self.refused = 0
        self._tset = None
        self._loops = self._columns_in = None
        self.set_transmissions(tset)

    @property
    def transmissions(self):
        """Return the :class:`TransmissionSet` in force."""
        return self._tset

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
        members = tset.membership
        #: Per transmission: its joints and its motors (set indices).
        self.groups = list(zip(members.joints, members.actuators))
        self._group_of = members.of_joint
        #: Targets q*, q̇*, τ* of every joint (NaN: none), and their version; ``shape``
        #: changes only when which transmissions have targets may have (a new target's
        #: values do not change the block a state's command goes to).
        self.target = np.full((3, n), np.nan)
        self.version = self.shape = 0
        self._latched = np.zeros(len(self.groups), dtype=bool)
        self._linear_j = (impedance.jacobian(tset, np.zeros(tset.num_actuators))
                          if tset.constant_map else None)
        self._regroup()

    def set_gain(self, joint, which, value):
        """Set ``gains.<joint>.<which>`` (``p`` or ``d``); a joint leaving a spring is freed."""
        (self.kp if which == 'p' else self.kd)[self._tset.joint_index[joint]] = value
        self._regroup()

    def _regroup(self):
        """Find the driven transmissions again; forget what was derived from the gains."""
        self.driven = np.array([bool((self.kp[j] > 0).any() or (self.kd[j] > 0).any())
                                for j, _ in self.groups], dtype=bool)
        joints = [self.groups[g][0] for g in np.flatnonzero(self.driven)]
        #: The joints driven by springs (set indices), and their names.
        self.joints = np.sort(np.concatenate(joints)) if joints else np.zeros(0, np.intp)
        self.owned = {self._tset.joint_names[i]: None for i in self.joints}
        free = np.ones(self._tset.num_joints, dtype=bool)
        free[self.joints] = False
        self.target[:, free] = np.nan
        self._latched &= self.driven
        self._any_latched = bool(self._latched.any())
        #: How many driven joints have no target q* yet (0: a new target changes values).
        self._untargeted = int(np.isnan(self.target[0, self.joints]).sum())
        self.version += 1
        self.shape += 1
        self._blocks, self._steady = {}, None
        self._targeted = (None, None)
        self._measured = (False, None)

    @property
    def constant_map(self):
        """Say whether no transmission is a linkage: J is then constant."""
        return self._linear_j is not None

    # --- targets ---------------------------------------------------------------------------
    def take(self, joints, position, velocity, effort, now_ns):
        """
        Take targets for ``joints`` (set indices, all driven); return why not ('').

        Positions are required (q*); velocity and effort are 0 when empty. Non-finite
        values refuse them all. The other joints' targets stay. ``now_ns`` is unused: the
        deadline (fed by the caller) times targets.
        """
        k = len(joints)
        if len(position) != k:
            return self._refuse(joints, 'have gains: their joint_commands need positions (q*)')
        rows = [position, velocity, effort]
        for r in (1, 2):
            if not len(rows[r]):
                rows[r] = _ZEROS[:k] if k <= len(_ZEROS) else np.zeros(k)
            elif len(rows[r]) != k:
                return self._refuse(joints, f'{("velocity", "effort")[r - 1]}: '
                                    f'{len(rows[r])} values for {k} joints')
        values = np.array(rows, dtype=float)
        flat = values.reshape(-1)
        if not math.isfinite(flat.dot(flat)):         # every value finite (below 1e154)
            if not np.isfinite(values).all():
                return self._refuse(joints, 'a non-finite target')
        target = self.target
        if self._untargeted and np.isnan(target[0, joints]).any():
            self.shape += 1             # a transmission may have its targets now
        target[:, joints] = values
        if self._untargeted:
            self._untargeted = int(np.isnan(target[0, self.joints]).sum())
        if self._any_latched:
            self._latched[self._group_of[joints]] = False
            self._any_latched = bool(self._latched.any())
        self.version += 1
        return ''

    def _refuse(self, joints, why):
        self.refused += 1
        return f'joints {[self._tset.joint_names[i] for i in joints]}: {why}'

    # --- at every state ----------------------------------------------------------------
    def block_at(self, kept, now_ns, state, timed_out=False):
        """
        Return the :class:`~.impedance_plans.Block` of the state just measured, or None.

        ``kept``: the joints that state measured (None: all); ``state`` (3, nJ) the joint
        state (its positions latch a ``hold``). Applies ``on_command_timeout`` to the
        transmissions whose targets timed out (module docstring); ``timed_out``: to all of
        them (the bridge stops). None: no motor gets a command now.
        """
        if not self.driven.any():
            return None
        deadline = self.deadline
        expired = (None if deadline is None
                   else np.ones(self._tset.num_joints, dtype=bool) if timed_out
                   else deadline.expired(now_ns))
        steady = self._steady
        if (expired is None and steady is not None and steady[0] is kept
                and steady[1] == self.shape):
            return steady[2]
        measured = self._measured_groups(kept)
        zeroed = np.zeros(len(self.groups), dtype=bool)
        if expired is not None:
            late = np.zeros(len(self.groups), dtype=bool)
            late[self._group_of[np.flatnonzero(expired)]] = True
            late &= measured
            if self.deadline.mode == 'zero_effort':
                zeroed = late
            else:
                self._latch(late & ~self._latched, state)
        law = measured & self._targeted_groups() & ~zeroed
        block = None
        if law.any() or zeroed.any():
            key = (law.tobytes(), zeroed.tobytes())
            block = self._blocks.get(key)
            if block is None:
                block = self._blocks[key] = Block(self._tset, self.groups, law, zeroed,
                                                  self.kp, self.kd, self._linear_j)
        self._steady = (kept, self.shape, block) if expired is None else None
        return block

    def _measured_groups(self, kept):
        """Return which driven transmissions the state measured (cached per ``kept``)."""
        if self._measured[0] is not kept:
            if kept is None:
                measured = self.driven.copy()
            else:
                seen = np.zeros(self._tset.num_joints, dtype=bool)
                seen[kept] = True
                measured = self.driven & np.array([seen[j].all() for j, _ in self.groups])
            self._measured = (kept, measured)
        return self._measured[1]

    def _targeted_groups(self):
        """Return which driven transmissions have a target q* for every joint."""
        if self._targeted[0] != self.shape:
            known = ~np.isnan(self.target[0])
            self._targeted = (self.shape, self.driven & np.array(
                [known[j].all() for j, _ in self.groups]))
        return self._targeted[1]

    def _latch(self, groups, state):
        """Apply ``hold`` or ``zero_velocity`` to the targets of ``groups`` (timed out now)."""
        if not groups.any():
            return
        mode = self.deadline.mode
        if mode == 'none':
            self._latched |= groups
            self._any_latched = True
            return
        joints = np.concatenate([self.groups[g][0] for g in np.flatnonzero(groups)])
        if mode == 'hold' or np.isnan(self.target[0, joints]).any():
            self.target[0, joints] = state[0, joints]
        self.target[1:, joints] = 0.0
        self._latched |= groups
        self._any_latched = True
        self._untargeted = int(np.isnan(self.target[0, self.joints]).sum())
        self.version += 1
        self.shape += 1

    def fill(self, block, flat, state, jacobian, out):
        """
        Write ``block``'s motor command at one state into ``out``; return whether to send it.

        ``out``: the motors' efforts (m,) with ``effort``, or per motor (θ*, θ̇*,
        feed-forward, stiffness, damping) (m, 5) with ``motor_gains`` (the message's
        bytes, as views), in the order of ``block.names``. ``flat``: the state side's motor
        state; ``state`` (3, nJ) and ``jacobian``: the joint state and J the state map left
        (a linear set maps ``flat`` itself). The per-message forms are used where they
        apply; a state they decline (an effort beyond a limit, an unknown value) takes
        :meth:`step`'s reference.
        """
        k = len(block.actuators)
        if len(block.zero_actuators):
            out[k:] = 0.0
        if not k:
            return True
        law = out[:k] if len(block.zero_actuators) else out
        effort = self.output == 'effort'
        if self.constant_map:
            plan = block.plans.get(self.output)
            if plan is None or plan.aimed != self.version:      # gains or targets changed
                plan = block.plan(self._tset, self.output, self.target, self.version)
            if effort:
                np.dot(plan.A, flat, out=law)
                if plan.W is None:
                    within = math.isfinite(law.dot(law))
                else:
                    over = np.dot(plan.W, flat)
                    within = over.dot(over) <= 1.0  # every |value| / limit <= 1 (NaN: no)
                if within and block.stages is not None:
                    within = block.through_losses(flat, self._tset.num_actuators, law)
            else:
                if self._columns_in != (id(law.base), plan, plan.version):
                    law[:, [0, 1, 3, 4]] = plan.columns.T       # fixed while the plan is
                    self._columns_in = (id(law.base), plan, plan.version)
                feed = np.dot(plan.A, flat)
                within = math.isfinite(feed.dot(feed))
                if within:
                    law[:, 2] = feed
                    if block.stages is not None:
                        block.mit_losses(flat, self._tset.num_actuators, law)
            return within or self._fill_reference(block, flat, state, law)
        loops = self._loops or linkage_loops.kernels()
        self._loops = loops
        n_act = self._tset.num_actuators
        if not effort:
            goal, tau_ff = self.motor_goal(block)
            if block.damped:            # the law's b q̇ at the measured motion, in τ*
                speed = state[1, block.joints]
                tau_ff = tau_ff + block.damping * np.where(np.isnan(speed), 0.0, speed)
            done = bool(loops.mit_state(jacobian, block.joints, block.actuators, block.kp,
                                        block.kd, goal, tau_ff, flat, n_act, law))
            if done and block.stages is not None:
                block.mit_losses(flat, n_act, law)
            return done
        inverse_joint, inverse_motor = block.inverse_effort_limits
        lossy = block.stages is not None
        worst = loops.effort_state(jacobian, block.joints, block.actuators, block.kp,
                                   block.kd, block.block_target(self.target, self.version),
                                   block.damping, state, inverse_joint,
                                   _NO_LIMITS[:k] if lossy else inverse_motor,
                                   block.tau, law)
        if worst <= 1.0 and lossy:
            return block.through_losses(flat, n_act, law) or \
                self._fill_reference(block, flat, state, law)
        if not worst <= 1.0:
            if math.isnan(worst):
                return False
            if lossy:
                return self._fill_reference(block, flat, state, law)
            _, law[:], _ = block.limits.scale('effort', block.tau, law.copy())
        return True

    def _fill_reference(self, block, flat, state, law):
        """Write :meth:`law`'s command (the reference) into ``law``; return whether any."""
        n_act, tset = self._tset.num_actuators, self._tset
        theta, thetad = flat[:n_act], flat[n_act:2 * n_act]
        if state is None:
            q = tset.actuator_to_joint('position', theta)
            qd = tset.actuator_to_joint('velocity', thetad)
        else:
            q, qd = state[0], state[1]
        command = self.law(block, q, qd, theta, thetad)
        if command is None:
            return False
        k = len(block.actuators)
        if self.output == 'effort':
            law[:] = command.effort[:k]
        else:
            for c, values in enumerate(command[1:]):
                law[:, c] = values[:k]
            self._columns_in = None
        return True

    def motor_goal(self, block):
        """
        Return (θ*, θ̇* of ``block``'s law motors (2, m), τ* of its joints).

        The targets mapped through the transmissions (a linkage's at the target pose);
        kept while the targets are.
        """
        if block.goal is None or block.goal[0] != self.version:
            q_t, qd_t, tau_t = self.target
            q_goal = np.where(np.isnan(q_t), 0.0, q_t)      # other joints: their motors unused
            qd_goal = np.where(np.isnan(qd_t), 0.0, qd_t)
            theta_t, thetad_t = self._tset.motion_to_actuator(q_goal, qd_goal)
            acts = block.actuators
            block.goal = (self.version, (np.stack([theta_t[acts], thetad_t[acts]]),
                                         tau_t[block.joints].copy()))
        return block.goal[1]

    # --- the reference -----------------------------------------------------------------
    def step(self, q, qd, theta, thetad, now_ns, kept=None):
        """
        Return the :class:`MotorCommand` of one measured state, or None: the reference.

        ``q``, ``qd``: joint positions and velocities (all joints, NaN where not measured);
        ``theta``, ``thetad``: the motors'; ``kept``: the joints the state measured (None:
        all). :meth:`block_at` then :meth:`law`.
        """
        block = self.block_at(kept, now_ns, np.stack([q, qd]))
        return None if block is None else self.law(block, q, qd, theta, thetad)

    def law(self, block, q, qd, theta, thetad):
        """
        Return the :class:`MotorCommand` of ``block`` at a state, or None: the reference.

        The law's motors first, then the zeroed ones (0 everywhere). None where a law
        joint is not measured or a value is not finite. The per-message forms
        (:meth:`fill`: the linear plans, the compiled kernels) give the same numbers.
        """
        joints, acts, zero = block.joints, block.actuators, len(block.zero_actuators)
        if np.isnan(q[joints]).any():
            return None
        qd = np.where(np.isnan(qd), 0.0, qd)
        tset = self._tset
        q_t, qd_t, tau_t = self.target
        pad = np.zeros(zero)
        if self.output == 'effort':
            motor = np.zeros(0)
            if len(joints):
                tau = np.zeros(tset.num_joints)
                tau[joints] = impedance.joint_torques(
                    block.kp, block.kd, q_t[joints], qd_t[joints], tau_t[joints], q[joints],
                    qd[joints])
                at = None if tset.constant_map else np.where(np.isnan(q), 0.0, q)
                # The one commanded law, at the measured motion the spring acts on.
                motor, gain, offset = (x[acts] for x in effort_law.commanded_parts(
                    tset, tau, qd, thetad, at))
                if np.isnan(motor).any():
                    return None
                damped = effort_law.damped(tset, tau[joints], qd[joints], joints)
                if block.stages is None:
                    _, motor, _ = block.limits.scale('effort', damped, motor)
                else:                   # through the gear stages, at the motors' speeds
                    _, motor, _ = block.limits.scale_through_losses(damped, motor, gain,
                                                                    offset)
            return MotorCommand(block.names, None, None, np.concatenate([motor, pad]), None,
                                None)
        theta = np.where(np.isnan(theta), 0.0, theta)
        rows = [np.zeros(0)] * 5
        if len(joints):
            J = (block.linear_j if block.linear_j is not None
                 else impedance.jacobian(tset, theta)[np.ix_(joints, acts)])
            (theta_t, thetad_t), tau_ff = self.motor_goal(block)
            tau_ff = tau_ff + block.damping * qd[joints]    # the law's b q̇ (measured)
            speed = np.where(np.isnan(thetad), 0.0, thetad)[acts]
            target, target_d, k, d, feed = impedance.mit_commands(
                J, block.kp, block.kd, theta_t, thetad_t, tau_ff, theta[acts], speed)
            if not np.isfinite(feed).all():
                return None
            if block.stages is not None:    # the stage's loss at the state, in the feed
                ideal = k * (target - theta[acts]) + d * (target_d - speed) + feed
                feed = feed + (block.stages.commanded(ideal, thetad[acts]) - ideal)
            rows = [target, target_d, feed, k, d]
        return MotorCommand(block.names, *(np.concatenate([r, pad]) for r in rows))
