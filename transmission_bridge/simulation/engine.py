"""
A robot behind its motors, integrated by MuJoCo: the engine of ``actuator_simulator``.

No ROS here. Each motor of the transmission set is simulated where it is:

* a motor named like a hinge or slide joint of the model **is** that joint (the user modelled
  the mechanism: a rotor geared to a crank, a rod closed by a ``connect`` equality): the drive's
  torque is applied to its degree of freedom, its state read from it, and MuJoCo solves the
  chain;
* any other motor is placed through its transmission: its position and velocity from the
  joints' (the set's maps), its torque to the joints by the effort map at the pose.

Every physics step runs each drive's law (:mod:`.drives`) on the motors' state, passes it through
the gear stage (rotor before the loss; an inefficient stage as its mean gain and MuJoCo dry
friction on the motor's coordinate, as wide as the load the stage passed the step before,
:meth:`.drives.Drives.dry_stage`), applies it, and steps MuJoCo; a rotor's inertia is MuJoCo's
too (``armature``: on a motor joint ``g I``, on the joints of a placed motor the diagonal of
``Tᵀ diag(g I) T``, its coupling terms from the last step's accelerations). Armatures that do
not change are written once and MuJoCo's constants recomputed (``mj_setConst``); where they
change with the pose (a placed linkage's rotors) MuJoCo's compile-time shortcut for simple
bodies (``dof_simplenum``, which reads the mass matrix from ``dof_M0``) is turned off, so no
rotor is silently dropped.
MuJoCo's equality constraints are soft (they open by ~1e-5 m under load at a 1 ms step):
after each state period the chains are closed again on MuJoCo's own residuals and Jacobian,
as an impulse would close them (:class:`.model.ChainCloser`), so a published state is a
closed mechanism to ~1e-9 and its velocities move along it.

Until the first command the robot is held where it starts (the physics waits; the clock runs),
as a robot on its stand with its brakes on.
"""

import numpy as np

from .drives import Drives
from .ground import rest_on_ground
from .model import ChainCloser, import_mujoco, joint_damping, set_pose, SimulationError
from .sea import rotor_pose, spring_rotors, TableSprings
from .stage_friction import StageFriction
from ..transmissions import TransmissionSet

# A stage's dry friction as stiff as a step allows: MuJoCo's soft friction creeps under a
# held load at a speed its impedance sets (at the default 0.9-0.95, a gear holding an arm
# slid 20 mrad/s); at 0.9999 it holds within microradians.
STICK = [0.9999, 0.9999, 0.001, 0.5, 2.0]
# The band of a stage whose load is not known yet (the first step after a start or a reset):
# every stage held, so the friction MuJoCo needs to hold it is the load.
HOLD_ALL = 1e12


class MujocoSimulation:
    """The simulator's state and step (module docstring)."""

    def __init__(self, tset, robot, rate, options):
        self.mujoco = import_mujoco()
        self._bad = int(self.mujoco.mjtWarning.mjWARN_BADQACC)
        # MuJoCo's warnings are counted in data.warning and said by the node; not written
        # to MUJOCO_LOG.TXT in the working folder.
        self.mujoco.set_mju_user_warning(self._warning)
        self.last_warning = ''
        robot, self.spring_rows, sea_warnings = spring_rotors(tset, robot)   # sea.py
        self._tables = TableSprings(tset, robot, self.spring_rows) or None
        self.tset, self.robot, self.options = tset, robot, options
        self._place(tset, robot)
        self.warnings += sea_warnings
        robot = self.robot = self._stage_carriers(tset, robot)
        model = robot.model
        ratio = 1.0 / (rate * model.opt.timestep)
        self.substeps = int(round(ratio))
        if self.substeps < 1:
            raise SimulationError(f"rate {rate:g}: faster than the model's timestep "
                                  f'{model.opt.timestep:g} s (at most {1 / model.opt.timestep:g} '
                                  'states per second)')
        self._timestep = float(model.opt.timestep)
        self.period = self.substeps * self._timestep
        self._all_qpos = np.array([robot.qpos_of[j] for j in robot.joints], dtype=int)
        self._all_dofs = np.array([robot.dof_of[j] for j in robot.joints], dtype=int)
        self.drives = Drives(tset, options)
        self._armature = model.dof_armature.copy()
        self._frictionloss = model.dof_frictionloss.copy()
        if self._dry.any():
            self._stiff_friction()
        self._hot_indices(tset)
        self._constant_armature(tset)
        self._close = ChainCloser(robot)
        self._damp_joints(tset, robot)
        self._accel = np.zeros(tset.num_actuators)      # the motors' last accelerations
        self._load = None         # what each stage passed the last step (None: not known)
        self._out = np.zeros(tset.num_actuators)        # each stage's applied part, last step
        self._motors_now = None                         # (θ, θ̇) after the last period
        # A lossy stage needs its motor's last acceleration, a placed rotor's coupling the joints'.
        self._rotors_seen = not self.drives.lossless or (
            self.placed is not None and bool(self._placed_rotor.any()))
        self._dry_any = bool(self._dry.any())
        self.applied = np.zeros(tset.num_actuators)     # mean motor torque of the last period
        self.steps = 0
        self.unstable = 0          # times MuJoCo found the state diverging (and reset it)
        self.base_start = None     # a floating base put on the ground: (xyz, lift, geom)
        self.reset()

    # --- where each motor is ------------------------------------------------------------
    def _place(self, tset, robot):
        names = tset.actuator_names
        for a in names:
            kind = robot.kind_of.get(a)
            if kind is not None and a not in robot.qpos_of:
                raise SimulationError(
                    f'motor {a!r}: the model has a joint of that name, but not a hinge or '
                    'slide (a motor joint turns or slides about one axis)')
        inside = [i for i, a in enumerate(names) if a in robot.qpos_of]
        self.model_motors = np.array(inside, dtype=int)
        self._motor_qpos = np.array([robot.qpos_of[names[i]] for i in inside], dtype=int)
        self._motor_dof = np.array([robot.dof_of[names[i]] for i in inside], dtype=int)
        placed_specs = [s for s in tset.specs
                        if any(a.name not in robot.qpos_of for a in s.actuators)]
        self._weld([s for s in placed_specs
                    if all(j.name in robot.fixed_joints for j in s.joints)], tset)
        placed_specs = [s for s in placed_specs if s.name not in self.welded]
        for spec in placed_specs:
            for j in spec.joints:
                if j.name not in robot.qpos_of:
                    motor = next(a.name for a in spec.actuators if a.name not in robot.qpos_of)
                    raise SimulationError(
                        f'motor {motor!r}: neither a joint of the model nor placeable through '
                        f'transmission {spec.name!r}: its joint {j.name!r} is not a hinge or '
                        'slide joint of the model')
        self.placed = TransmissionSet(placed_specs) if placed_specs else None
        if self.placed is None:
            self.placed_motors = np.zeros(0, dtype=int)
            return
        self.placed_motors = np.array([tset.actuator_index[a] for a in
                                       self.placed.actuator_names], dtype=int)
        self._joint_qpos = np.array([robot.qpos_of[j] for j in self.placed.joint_names])
        self._joint_dof = np.array([robot.dof_of[j] for j in self.placed.joint_names])
        self._placed_rotor = np.array([self.placed.actuator(a).rotor_inertia
                                       for a in self.placed.actuator_names])
        self._linear = None
        if self.placed.constant_map:      # θ = A (q − offsets), θ̇ = A q̇, τ_j = B τ: made once
            nj, na = self.placed.num_joints, self.placed.num_actuators
            self._linear = (self.placed.joint_to_actuator('velocity', np.eye(nj)).T,
                            np.asarray(self.placed.joint_offsets, dtype=float),
                            self.placed.actuator_to_joint('effort', np.eye(na)).T)

    def _weld(self, specs, tset):
        """
        Hold the motors of transmissions whose joints are all fixed in the URDF, and say so.

        A real file's transmission can name a joint the URDF makes fixed (example-robot-data's
        Kinova fingers, the PR2's casters): its motors report the joints' zero pose and their
        torques move nothing.
        """
        self.welded = {s.name for s in specs}
        self.warnings = [f'transmission {s.name!r}: its joints '
                         f'({", ".join(j.name for j in s.joints)}) are fixed in the URDF; its '
                         f'motors ({", ".join(a.name for a in s.actuators)}) report their zero '
                         'pose and their torques move nothing' for s in specs]
        self.welded_motors = np.array([tset.actuator_index[a.name] for s in specs
                                       for a in s.actuators], dtype=int)
        welded = TransmissionSet(specs) if specs else None
        self._welded_theta = np.zeros(0) if welded is None else welded.joint_to_actuator(
            'position', np.zeros(welded.num_joints))

    def _stage_carriers(self, tset, robot):
        """
        Say where each inefficient stage's dry friction acts; return the robot to run.

        A motor joint's own degree of freedom; a placed motor of a linear set, a fixed tendon
        along its coordinate (``θ = A q``, added to the model here); any other stage (a placed
        motor of a linkage) stays NOTATION's measured stage, explicit.
        """
        n = tset.num_actuators
        self._dry = np.zeros(n, dtype=bool)
        self._tendon = np.full(n, -1, dtype=int)
        if tset.losses.lossless:
            return robot
        inefficient = tset.losses.inefficient
        self._dry[self.model_motors] = inefficient[self.model_motors]
        tendons = {}
        if self.placed is not None and self._linear is not None:
            A = self._linear[0]
            for k, i in enumerate(self.placed_motors):
                if inefficient[i]:
                    tendons[f'{tset.actuator_names[i]}_stage'] = [
                        (j, A[k, c]) for c, j in enumerate(self.placed.joint_names) if A[k, c]]
        if not tendons:
            return robot
        robot = robot.with_tendons(tendons)
        for i in self.placed_motors:
            tendon = robot.tendon_of.get(f'{tset.actuator_names[i]}_stage')
            if tendon is not None:
                self._tendon[i], self._dry[i] = tendon, True
        return robot

    def _hot_indices(self, tset):
        """Index the dry-friction carriers once, not at every physics step (None: none)."""
        inside = self.model_motors[self._dry[self.model_motors]]
        dofs = self._motor_dof[self._dry[self.model_motors]]
        self._dry_inside, self._dry_dofs = (inside, dofs) if len(dofs) else (None, None)
        self._dry_base = self._frictionloss[dofs]
        motors = np.flatnonzero(self._tendon >= 0)
        self._tendon_motors = motors if len(motors) else None
        self._tendon_ids = self._tendon[motors] if len(motors) else None
        # Each such motor's row of the placed set's θ = A q.
        rows = np.array([list(self.placed_motors).index(m) for m in motors], dtype=int)
        self._friction = StageFriction(
            self.mujoco, self.robot.model, self.robot.data, tset.num_actuators,
            (self.model_motors, self._motor_dof), (self._dry_inside, self._dry_dofs),
            (self._tendon_motors, self._tendon_ids,
             None if self._tendon_motors is None else self._linear[0][rows], self._joint_dof
             if self.placed is not None else None))
        explicit = tset.losses.inefficient & ~self._dry
        self._explicit = explicit if explicit.any() else None

    def _constant_armature(self, tset):
        """
        Write the rotors' armature that does not change, once; MuJoCo's constants after it.

        A motor joint's rotor is ``g I`` (``g`` its stage's gain, constant), a placed linear
        set's ``diag(Tᵀ diag(g I) T)`` (``T`` constant); a placed linkage's changes with the
        pose and is written at every step on degrees of freedom whose simple-body shortcut is
        off (``dof_simplenum``: MuJoCo would read the compile-time ``dof_M0`` and drop it).
        """
        model, drives = self.robot.model, self.drives
        gain = np.ones(tset.num_actuators) if drives.lossless else \
            drives.dry_stage(np.zeros(tset.num_actuators), np.zeros(tset.num_actuators),
                             np.zeros(tset.num_actuators), 0.0)[1]
        self._gain = gain
        inside = self.model_motors
        changed = False
        if len(inside) and drives.rotor[inside].any():
            model.dof_armature[self._motor_dof] = (
                self._armature[self._motor_dof] + gain[inside] * drives.rotor[inside])
            changed = True
        self._rotor_coupling = None
        self._moving_armature = False
        if self.placed is not None and self._placed_rotor.any():
            if self._linear is not None and self._explicit is None:
                placed, dofs = self.placed_motors, self._joint_dof
                T = self._linear[0]
                R = T.T @ ((gain[placed] * self._placed_rotor)[:, None] * T)
                model.dof_armature[dofs] = self._armature[dofs] + np.diag(R)
                coupling = R - np.diag(np.diag(R))
                self._rotor_coupling = coupling if coupling.any() else None
                changed = True
            else:
                self._moving_armature = True
        if changed:
            self.mujoco.mj_setConst(model, self.robot.data)
        if self._moving_armature:
            model.dof_simplenum[self._joint_dof] = 0

    def _stiff_friction(self):
        """Make the stages' dry friction stick (MuJoCo's default lets it creep ~2 % / s)."""
        model = self.robot.model
        ref = [2.0 * model.opt.timestep, 1.0]
        dofs = self._motor_dof[self._dry[self.model_motors]]
        model.dof_solref[dofs], model.dof_solimp[dofs] = ref, STICK
        tendons = self._tendon[self._tendon >= 0]
        model.tendon_solref_fri[tendons], model.tendon_solimp_fri[tendons] = ref, STICK

    def _damp_joints(self, tset, robot):
        """Give a joint the model leaves undamped its transmission's damping (implicit)."""
        model = robot.model
        here = [(j, robot.dof_of[j], b) for j, b in zip(tset.joint_names, tset.damping)
                if robot.dof_of.get(j) is not None]
        dofs = np.array([d for _, d, _ in here], dtype=int)
        damping, self.added_damping, warnings = joint_damping(
            [j for j, _, _ in here], model.dof_damping[dofs], [b for _, _, b in here])
        model.dof_damping[dofs] = damping
        self.warnings += warnings

    # --- state -------------------------------------------------------------------------
    @property
    def time(self):
        """Return the simulated time, s."""
        return self.steps * self._timestep

    def start_pose(self):
        """Return {joint: qpos} the robot starts in: keyframe ``home``, else the defaults."""
        robot, tset = self.robot, self.tset
        pose = ({j: v for j, v in robot.home.items() if j in robot.qpos_of} if robot.home else
                {j: q for j, q in zip(tset.joint_names, tset.default_positions)
                 if j in robot.qpos_of})
        return {**pose, **rotor_pose(tset, self.spring_rows, pose)}

    def reset(self, hold_states=0):
        """Put the robot back at rest in its start pose, held (:meth:`.Drives.reset`)."""
        robot = self.robot
        pose = self.start_pose()
        base = None
        if robot.free_qpos is not None and robot.home.get(robot.model.joint(
                self._free_joint()).name) is not None:
            base = robot.home[robot.model.joint(self._free_joint()).name]
        left = set_pose(robot, pose, base)
        if left > 1e-9:
            raise SimulationError(f'the start pose leaves a chain of the model open by '
                                  f"{left:.3g}: the motors' joints cannot close it")
        if robot.free_qpos is not None and base is None:     # on the ground (ground.py)
            lift, touching = rest_on_ground(robot, only_if_inside=not robot.urdf)
            self.base_start = (robot.data.qpos[robot.free_qpos:robot.free_qpos + 3].copy(),
                               lift, touching)
        self.drives.reset(hold_states)
        self._load = None
        self._motors_now = None
        self._accel[:] = 0.0
        self.applied[:] = 0.0

    def _warning(self, text):
        self.last_warning = text

    def _free_joint(self):
        return int(np.flatnonzero(self.robot.model.jnt_qposadr == self.robot.free_qpos)[0])

    def motors(self):
        """Return the motors' exact ``(θ, θ̇)`` now (set order)."""
        data = self.robot.data
        n = self.tset.num_actuators
        theta, thetad = np.empty(n), np.empty(n)
        theta[self.model_motors] = data.qpos[self._motor_qpos]
        thetad[self.model_motors] = data.qvel[self._motor_dof]
        theta[self.welded_motors], thetad[self.welded_motors] = self._welded_theta, 0.0
        if self.placed is not None:
            q, v = data.qpos[self._joint_qpos], data.qvel[self._joint_dof]
            if self._linear is not None:
                A, offsets, _ = self._linear
                th, thd = A @ (q - offsets), A @ v
            else:
                th, thd = self.placed.motion_to_actuator(q, v)
            theta[self.placed_motors], thetad[self.placed_motors] = th, thd
        return theta, thetad

    def report(self):
        """Return what the drivers publish: ``(θ, θ̇, τ)`` (options' noise, delay)."""
        theta, thetad = self._motors_now if self._motors_now is not None else self.motors()
        return self.drives.report(theta, thetad, self.applied)

    def joint_state(self):
        """Return MuJoCo's own ``(names, q, q̇, applied generalized force)`` of every joint."""
        data, qpos, dofs = self.robot.data, self._all_qpos, self._all_dofs
        return self.robot.joints, data.qpos[qpos], data.qvel[dofs], data.qfrc_applied[dofs]

    def base_pose(self):
        """Return the free root's ``(position, quaternion w x y z)``, or None."""
        a = self.robot.free_qpos
        if a is None:
            return None
        q = self.robot.data.qpos
        return q[a:a + 3].copy(), q[a + 3:a + 7].copy()

    # --- the step ------------------------------------------------------------------------
    def advance(self):
        """Run one state period (``substeps`` MuJoCo steps); held before any command."""
        if self.drives.holding():
            self.steps += self.substeps
            return
        mujoco, model, data = self.mujoco, self.robot.model, self.robot.data
        total = np.zeros(self.tset.num_actuators)
        for _ in range(self.substeps):
            theta, thetad = self.motors()
            tau = self.drives.torques(theta, thetad)
            total += tau
            if self._dry_any and self._load is None:
                self._load = self._held_loads(tau, theta, thetad)
            self._apply(tau, theta, thetad)
            mujoco.mj_step(model, data)
            if data.warning[self._bad].number:
                data.warning[self._bad].number = 0
                self.unstable += 1
                self.reset()
                return
            if self._rotors_seen:
                self._remember_accelerations()
            if self._dry_any:
                self._load = self._friction.loads(self._out, self._gain, self.drives.rotor)
        self.steps += self.substeps
        self.applied = total / self.substeps
        if model.neq:
            self._close(self._friction.stuck_dofs())
        self._motors_now = self.motors()

    def _apply(self, tau, theta, thetad):
        model, data = self.robot.model, self.robot.data
        data.qfrc_applied[:] = 0.0
        drives = self.drives
        if drives.lossless:
            out, gain = tau, None
        else:
            # Every stage but an inefficient one with no carrier for its dry friction (a placed
            # linkage's motor) is a mean gain and dry friction; with efficiency 1 that is the
            # measured stage itself (τ − f), so one call serves them all.
            out, gain, band = drives.dry_stage(tau, thetad, self._accel,
                                               0.0 if self._load is None else self._load)
            self._out = out
            explicit = self._explicit
            if explicit is not None:
                out_x, gain_x = drives.stage(tau, thetad, self._accel)
                out[explicit], gain[explicit] = out_x[explicit], gain_x[explicit]
            if self._dry_dofs is not None:
                model.dof_frictionloss[self._dry_dofs] = self._dry_base + band[self._dry_inside]
            if self._tendon_ids is not None:
                model.tendon_frictionloss[self._tendon_ids] = band[self._tendon_motors]
        inside = self.model_motors
        if len(inside):
            data.qfrc_applied[self._motor_dof] += out[inside]
        if self._tables is not None:                # springs given by a table (sea.py)
            self._tables.apply(data)
        if self.placed is None:
            return
        placed = self.placed_motors
        dofs = self._joint_dof
        q = data.qpos[self._joint_qpos]
        if self._linear is not None:
            tau_j = self._linear[2] @ out[placed]
        else:
            tau_j = self.placed.actuator_to_joint('effort', out[placed], theta[placed])
        data.qfrc_applied[dofs] += tau_j
        if self._moving_armature:
            g = np.ones(len(placed)) if gain is None else gain[placed]
            T = self.placed.rotors.motor_jacobian(q)
            R = T.T @ ((g * self._placed_rotor)[:, None] * T)
            model.dof_armature[dofs] = self._armature[dofs] + np.diag(R)
            coupling = R - np.diag(np.diag(R))
            if coupling.any():
                data.qfrc_applied[dofs] -= coupling @ data.qacc[dofs]
        elif self._rotor_coupling is not None:
            data.qfrc_applied[dofs] -= self._rotor_coupling @ data.qacc[dofs]

    def _remember_accelerations(self):
        data = self.robot.data
        self._accel[self.model_motors] = data.qacc[self._motor_dof]
        if self.placed is not None and self._placed_rotor.any():
            T = self.placed.rotors.motor_jacobian(data.qpos[self._joint_qpos])
            self._accel[self.placed_motors] = T @ data.qacc[self._joint_dof]

    def _held_loads(self, tau, theta, thetad):
        """
        Return each stage's load when nothing is known of it (a start, a reset): held.

        One ``mj_forward`` at rest with every stage stuck: the friction MuJoCo needs to hold a
        stage is the load it passes (a free load: none, so a motor starts it at once). A
        stage already sliding then finds its own load within a few steps (the band follows
        ``s`` at the rate ``h / c``, below 1 for every back-drivable stage).
        """
        model, data = self.robot.model, self.robot.data
        self._load = np.full(self.tset.num_actuators, HOLD_ALL)
        self._apply(tau, theta, thetad)
        moving = data.qvel.copy()
        data.qvel[:] = 0.0            # held: the load, not the force that would stop it
        self.mujoco.mj_forward(model, data)
        data.qvel[:] = moving
        return self._friction.loads(self._out, self._gain, self.drives.rotor)
