"""
``actuator_simulator`` with ``engine:=mujoco`` or ``builtin``: the topics of a robot's drivers.

ROS wiring only: the robot, its drives and the step are the simulation library's
(:class:`transmission_bridge.simulation.Simulation`, either engine behind the same drives).
Publishes ``actuator_states`` (the drives' reports, stamped with sim time), ``~/joint_states``
(the engine's own state of every joint: the ground truth, same stamps),
``/clock``, and ``~/base_pose`` plus ``/tf`` ``world`` → the root body when the base floats;
subscribes
``actuator_commands`` (``effort``, ``position``) or ``actuator_impedance_commands``
(``motor_gains``); serves ``~/reset`` (std_srvs/Trigger: back to the start pose, held).

Paced by the wall clock (``real_time_factor`` > 0: the states due by now are run, a few at
most per tick; a machine too slow for the pace runs slower than asked, it does not burst;
≤ 0: as fast as it can), or with ``lockstep``
by the commands: each command message advances exactly one state period and publishes
exactly one state. A lockstep simulator publishes its start state, then waits; if no command
comes for ``LOCKSTEP_RESEND`` s of wall time it publishes the same state again (same stamp),
so that a state or a command lost before the graph was connected does not stop the run. With
``lockstep_ahead`` n, the first command after such a wait advances n + 1 states: from then on
n states are in flight, the simulator steps while the bridge answers, and each command takes
effect n states later than with 0 (still one state per command, so as repeatable).
"""

import math
import struct
import time

from geometry_msgs.msg import PoseStamped
import numpy as np
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

from ..messages.wire import (CdrWriter, DoublesTemplate, JointStateLayout, STAMP, Template,
                             TransformsTemplate)
from ..ros.configurable import RELIABLE_10
from ..ros.node_main import StartupError

GAINS = ('position', 'velocity', 'effort', 'stiffness', 'damping')  # the MIT law's order
CATCH_UP = 5                    # states run at most in one tick to catch up with the wall
# Behind the wall clock by more than this, s, the debt is forgiven (the machine cannot keep
# the pace); less is paid back over the next ticks, CATCH_UP states at most in each. A
# process descheduled for a few ms (2 cores, three nodes) then loses no simulated time.
MAX_DEBT = 0.05
STATUS_EVERY = 10.0             # s of wall time between two pace reports in the log
LOCKSTEP_RESEND = 1.0           # s of wall time without a command before a state is resent
WARN_EVERY = 5.0                # s between two warnings about malformed commands
TF_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
# rclcpp's ClockQoS (rclpy's time source reads /clock so): a reader that falls behind loses
# ticks it no longer needs, and never holds the simulator up.
CLOCK_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)


class EngineDrivers:
    """The simulator node's engine side: publishers, subscriptions, pacing (module docstring)."""

    def __init__(self, node, tset, model_file, rate, dynamics, p, engine='mujoco'):
        from ..simulation import Simulation, SimulationError
        self.node, self.tset = node, tset
        self.units = None if tset.units.identity else tset.units    # the drivers' (None: SI)
        try:
            simulation = Simulation(
                model_file, tset, engine=engine, dynamics=dynamics,
                floating_base=p['floating_base'], rate=rate, seed=p['seed'], **{
                    k: p[k] for k in ('position_stiffness', 'position_damping',
                                      'encoder_counts', 'position_noise', 'velocity_noise',
                                      'effort_noise', 'delay')})
        except SimulationError as exc:
            raise StartupError(str(exc)) from None
        self.simulation, self.sim = simulation, simulation.engine
        robot = getattr(self.sim, 'robot', None)        # MuJoCo's; None: the builtin engine
        floating = robot is not None and robot.floating
        log = node.get_logger()
        for warning in simulation.warnings:
            log.warning(warning)
        if self.sim.added_damping:
            log.info('the model has no damping on ' + ', '.join(self.sim.added_damping)
                     + ": the transmissions' damping is applied there")
        self.malformed, self._warned = 0, 0.0
        self._orders = {}           # interface names of a gains message: where each value is
        self.lockstep = p['lockstep']
        self._ahead = self._ahead_due = p['lockstep_ahead']   # states to run ahead, still due
        self._reset_hold = p['reset_hold']
        self._states = node.create_publisher(JointState, 'actuator_states', RELIABLE_10)
        self._truth = node.create_publisher(JointState, '~/joint_states', RELIABLE_10)
        self._clock = node.create_publisher(Clock, '/clock', CLOCK_QOS)
        self._tf = self._base = None
        # The base's pose at pose_rate (default 100 Hz), not with every state: five
        # messages a millisecond would cost the simulator half its time.
        self._pose_every = max(1, round(rate / p['pose_rate']))
        self._clock_every = max(1, round(rate / p['clock_rate'])) if p['clock_rate'] else 1
        self._clock_count = self._clock_every
        self._truth_heard = True
        self._count = self._pose_every
        if floating:
            self._base = node.create_publisher(PoseStamped, '~/base_pose', RELIABLE_10)
            try:
                from tf2_msgs.msg import TFMessage
                self._tf = node.create_publisher(TFMessage, '/tf', TF_QOS)
            except ImportError:
                log.warning('tf2_msgs is not installed: /tf world -> '
                            f'{robot.root} is not published')
        from ..simulation.output_encoders import SimulatedOutputEncoders
        self._second = SimulatedOutputEncoders(tset, p['output_slip'], getattr(
            self.sim, 'spring_rows', None)) or None
        self._out = Outputs(list(tset.actuator_names) + list(
            self._second.names if self._second else ()), list(simulation.joint_names),
            robot.root if floating else '')
        self._pace = PaceReport(log)
        if dynamics == 'motor_gains':
            from control_msgs.msg import DynamicJointState
            self._gains_type, self._wire = DynamicJointState, None
            node.create_subscription(DynamicJointState, 'actuator_impedance_commands',
                                     self._on_gains_bytes, RELIABLE_10, raw=True)
        else:
            node.create_subscription(JointState, 'actuator_commands', self._on_command,
                                     RELIABLE_10)
        node.create_service(Trigger, '~/reset', self._on_reset)
        self._last_sent = time.monotonic()
        if self.lockstep:
            node.create_timer(0.05, self._lockstep_watch)
        else:
            self._rtf = p['real_time_factor']
            self._paced_from = None
            node.create_timer(self.sim.period if self._rtf > 0 else 0.0, self._paced)
        self.publish()
        model = robot.model if robot is not None else None
        log.info(
            (f'MuJoCo: {model_file} ({model.nq} positions, {model.nv} velocities, '
             f'{model.neq} equality constraints{", floating base" if floating else ""})'
             if robot is not None else
             f'builtin dynamics: {model_file} ({len(simulation.joint_names)} joints, fixed '
             'base, no contacts)')
            + '; motors that are joints of the model: '
            f'{", ".join(tset.actuator_names[i] for i in self.sim.model_motors) or "none"}; '
            f'placed through their transmissions: '
            f'{", ".join(tset.actuator_names[i] for i in self.sim.placed_motors) or "none"}; '
            f'{dynamics} drives, {rate:g} states/s of {self.sim.substeps} step(s) of '
            f'{self.sim.period / self.sim.substeps:g} s'
            + (', lockstep' if self.lockstep else ''))
        start = self.sim.base_start
        if start is not None:
            xyz, lift, touching = start
            moved = (f', moved {lift:+.4g} m to rest its lowest collision geometry '
                     f'({touching}) on the ground' if lift else '')
            log.info(f'floating base {robot.root!r} starts at ({xyz[0]:.4g}, {xyz[1]:.4g}, '
                     f"{xyz[2]:.4g}) m{moved} (the keyframe 'home' of an MJCF sets it instead)")

    # --- commands ------------------------------------------------------------------------
    def _count_malformed(self, why):
        self.malformed += 1
        now = time.monotonic()
        if now - self._warned > WARN_EVERY:
            self._warned = now
            self.node.get_logger().warning(f'{self.malformed} malformed command(s) ignored so '
                                           f'far; the last: {why}')

    def _on_command(self, msg):
        index = self.tset.actuator_index
        n = len(msg.name)
        rows = [(index[name], k) for k, name in enumerate(msg.name) if name in index]
        if not rows:
            self._count_malformed('no motor of this robot is named')
            return self._stepped()
        motors, ks = (list(x) for x in zip(*rows))
        drives = self.sim.drives
        if not all(math.isfinite(x) for field in (msg.position, msg.velocity, msg.effort)
                   for x in field):
            self._count_malformed('a value is not finite')
            return self._stepped()
        units = self.units

        def field(k, values):       # the drivers' values in SI; 0.0 where none was sent
            if len(values) != n:
                return 0.0
            picked = [values[j] for j in ks]
            return picked if units is None else units.to_si(k, np.array(picked), motors)
        if self.sim.options.dynamics == 'effort':
            if len(msg.effort) != n:
                self._count_malformed(f'{len(msg.effort)} efforts for {n} names')
                return self._stepped()
            drives.set_efforts(motors, field(2, msg.effort))
        else:
            if len(msg.position) != n:
                self._count_malformed(f'{len(msg.position)} positions for {n} names')
                return self._stepped()
            drives.set_positions(motors, field(0, msg.position), field(1, msg.velocity),
                                 field(2, msg.effort))
        self._stepped()

    def _on_gains_bytes(self, data):
        """Take a gains message as bytes: in place when it has the last one's layout."""
        wire = self._wire
        if wire is not None and len(data) == len(wire.fixed):
            buf = wire.template.buf
            buf[:] = data
            if (wire.bytes[wire.mask] == wire.fixed[wire.mask]).all():
                block = wire.out
                if not np.isfinite(block).all():
                    self._count_malformed('a value is not finite')
                else:
                    self._set_gains(wire.motors, block)
                return self._stepped()
        from rclpy.serialization import deserialize_message
        msg = deserialize_message(data, self._gains_type)
        self._on_gains(msg)
        self._wire = GainsWire.learn(msg, self.tset.actuator_index)

    def _on_gains(self, msg):
        index = self.tset.actuator_index
        motors, values = [], []
        for name, value in zip(msg.joint_names, msg.interface_values):
            i = index.get(name)
            if i is None:
                continue
            names = tuple(value.interface_names)
            order = self._orders.get(names)
            if order is None:
                missing = [k for k in GAINS if k not in names]
                if missing:
                    self._count_malformed(f'{name}: no {", ".join(missing)} interface value')
                    return self._stepped()
                order = self._orders[names] = [names.index(k) for k in GAINS]
            row = value.values
            if len(row) != len(names):
                self._count_malformed(f'{name}: {len(row)} values for {len(names)} names')
                return self._stepped()
            motors.append(i)
            values.append([row[k] for k in order])
        if values:
            block = np.array(values)
            if not np.isfinite(block).all():
                self._count_malformed('a value is not finite')
            else:       # a message is taken whole or not at all
                self._set_gains(motors, block)
        self._stepped()

    def _set_gains(self, motors, rows):
        """Give ``motors`` their MIT rows (m, 5: the law's order), the drivers' units to SI."""
        if self.units is not None:
            rows = self.units.mit_to_si(np.array(rows), motors)
        self.sim.drives.set_gains(motors, *rows.T)

    def _stepped(self):
        if self.lockstep:
            self._tick()
            while self._ahead_due:          # the first command after a pause: get ahead
                self._ahead_due -= 1
                self._tick()

    # --- pacing ---------------------------------------------------------------------------
    def _tick(self):
        began = time.perf_counter()
        unstable = self.sim.unstable
        self.sim.advance()
        if self.sim.unstable != unstable:
            self.node.get_logger().error(
                f'the engine found the simulation unstable at t = {self.sim.time:.3f} s and reset '
                "it to the model's reference pose (a stiffer law than the step allows, or "
                f'a command that flings the robot); {self.sim.unstable} time(s) so far')
        self.publish()
        self._pace.state(time.perf_counter() - began, self.sim.time)

    def _paced(self):
        """Run the states wall time × real_time_factor asks for by now (a few at most)."""
        if self._rtf <= 0:
            return self._tick()
        now = time.monotonic()
        if self._paced_from is None:
            self._paced_from = (now, self.sim.time)
        wall, simulated = self._paced_from
        due = simulated + (now - wall) * self._rtf
        for _ in range(CATCH_UP):
            if self.sim.time + 0.5 * self.sim.period > due:
                return
            self._tick()
        # Still behind: paid back over the next ticks, or, beyond MAX_DEBT, forgiven (go on
        # from here rather than run a long burst later).
        if due - self.sim.time > MAX_DEBT:
            self._paced_from = (time.monotonic(), self.sim.time)

    def _lockstep_watch(self):
        if time.monotonic() - self._last_sent > LOCKSTEP_RESEND:
            self.publish()
            self._ahead_due = self._ahead   # the chain stalled: the next command gets ahead

    def _on_reset(self, request, response):
        held = self.simulation.reset(hold=self._reset_hold)
        if self.lockstep:   # the chain waits for a state: the next one, held at the start pose
            self._tick()    # (paced, the next tick sends it: one state per stamp either way)
        response.success = True
        response.message = (f'reset to the start pose at t = {self.sim.time:.3f} s; held '
                            f'{held:g} s whatever is commanded (reset_hold), '
                            'then until the next command')
        return response

    # --- states --------------------------------------------------------------------------
    def publish(self):
        """Publish the state now: actuator_states, ~/joint_states, /clock (and the base)."""
        sim, out = self.sim, self._out
        nanoseconds = round(sim.time * 1e9)
        stamp = STAMP.pack(*divmod(nanoseconds, 1_000_000_000))
        report, n = sim.report(), self.tset.num_actuators
        state = out.states.state
        state[:, :n] = report if self.units is None else self.units.states_to_driver(report)
        if self._second is not None:                # the gears' output encoders
            state[:, n:] = self._second.rows(report, sim.time, sim.joint_state)
        out.states.set_stamp(stamp)
        self._count += 1
        due = self._count >= self._pose_every   # the slow outputs' turn (pose_rate)
        if due:
            self._count = 0
            self._truth_heard = self._truth.get_subscription_count() > 0
        out.clock.set_stamp(stamp)
        self._clock_count += 1
        if self._clock_count >= self._clock_every:
            self._clock_count = 0
            self._clock.publish(out.clock.to_bytes())
        self._states.publish(out.states.to_bytes())
        if self._truth_heard:       # 26 joints at 1 kHz is worth not sending to no one
            _, q, qd, qf = sim.joint_state()
            truth = out.truth.state
            truth[0], truth[1], truth[2] = q, qd, qf
            out.truth.set_stamp(stamp)
            self._truth.publish(out.truth.to_bytes())
        if self._base is not None and due:
            position, quaternion = sim.base_pose()
            pose = out.pose.values
            pose[:3], pose[3:6], pose[6] = position, quaternion[1:], quaternion[0]
            out.pose.set_stamp(stamp)
            self._base.publish(out.pose.to_bytes())
            if self._tf is not None:
                out.tf.values[0] = pose
                out.tf.fill()
                out.tf.set_stamp(stamp)
                self._tf.publish(out.tf.to_bytes())
        self._last_sent = time.monotonic()


class PaceReport:
    """Every ``STATUS_EVERY`` s of wall time: the real-time factor and the slowest state."""

    def __init__(self, log):
        self._log, self._since, self._slowest = log, None, 0.0

    def state(self, took, sim_time):
        """Count one state that took ``took`` s of wall time, ending at ``sim_time``."""
        now = time.monotonic()
        if self._since is None:
            self._since = (now, sim_time)
        self._slowest = max(self._slowest, took)
        wall, simulated = self._since
        if now - wall >= STATUS_EVERY:
            ran = sim_time - simulated
            self._log.info(f'{ran:.2f} s simulated in {now - wall:.2f} s of wall time '
                           f'(real-time factor {ran / (now - wall):.3f}); the slowest state '
                           f'took {self._slowest * 1e3:.2f} ms to step and publish')
            self._since, self._slowest = (now, sim_time), 0.0


class GainsWire:
    """
    The byte layout of one stream of gains messages: its doubles are read in place.

    The bridge's stream (the same motors, the interfaces in the MIT law's order): a message
    of the same length whose names sit where the learned one's did.
    """

    def __init__(self, names, motors):
        from ..bridge.impedance_wiring import MitWire
        wire = MitWire(names)
        self.template, self.out, self.motors = wire._template, wire.out, motors
        self.bytes = np.frombuffer(self.template.buf, dtype=np.uint8)
        self.fixed = self.bytes.copy()
        # What must match: every name (its CDR length and characters) where the template
        # has it. Not the padding between fields, which rclpy leaves as it finds it.
        self.mask = np.zeros(len(self.fixed), dtype=bool)
        raw = self.fixed.tobytes()
        for text in {*names, *GAINS}:
            word = struct.pack('<I', len(text) + 1) + text.encode() + b'\0'
            at = raw.find(word)
            while at >= 0:
                self.mask[at:at + len(word)] = True
                at = raw.find(word, at + 1)

    @classmethod
    def learn(cls, msg, index):
        """Return the layout of messages like ``msg``, or None (not every motor ours...)."""
        names = list(msg.joint_names)
        if not names or any(n not in index for n in names) or any(
                list(v.interface_names) != list(GAINS) for v in msg.interface_values) or \
                len(msg.interface_values) != len(names):
            return None
        return cls(names, [index[n] for n in names])


class Outputs:
    """The simulator's messages as byte templates, refilled for every state (messages/wire)."""

    def __init__(self, motors, joints, root):
        n, m = len(motors), len(joints)
        self.states = JointStateLayout(motors, '', (n, n, n)).encoder()
        self.truth = JointStateLayout(joints, '', (m, m, m)).encoder()
        w = CdrWriter()
        at = w.stamp()
        self.clock = Template(w.buf, at)
        self.pose = DoublesTemplate.pose_stamped('world')
        self.tf = TransformsTemplate([('world', root)])
