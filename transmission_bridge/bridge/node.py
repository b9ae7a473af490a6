"""
The ``transmission_bridge`` node: actuator states in, joint states out, commands back.

ROS wiring only: parameters, publishers, subscriptions, services. What happens to a message
is the state side's (:mod:`.state`), the command side's (:mod:`.commands`) and, for a steady
stream, the fast path's (:mod:`.fast`). Topics, parameters and services are listed in
doc/nodes.md (tables generated from here).
"""

import math

from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.msg import SetParametersResult
from rclpy.lifecycle import LifecycleNodeMixin, TransitionCallbackReturn
from rclpy.parameter import Parameter
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from .commands import CommandMapper
from .fast import CommandCodec, StateRelay
from .state import ActuatorStates
from .watchdog import CommandWatchdog, MODES
from ..ros.configurable import ConfigurableNode, positive, RELIABLE_10, STREAM_IN
from ..ros.conversions import (doubles, name_values, now_ns_function, ReusedJointState,
                               stamp_to_ns, trajectory_msg)
from ..ros.diagnostics import diagnostics, report_input
from ..ros.named_input import seconds_to_ns
from ..ros.node_main import exit_with, run_node, StartupError
from ..ros.parameters import declare, descriptor
from ..ros.robot_parameters import RobotParameters
from ..transmissions import ConfigError, load_transmissions
from ..transmissions import parameters as tparams

TRANSMISSIONS_FILE = 'transmissions_file'
ACTUATOR_STATE_TOPICS = 'actuator_state_topics'
STALE_TIMEOUT = 'stale_timeout'
LIMIT_COMMANDS = 'limit_commands'
COMMAND_TIMEOUT = 'command_timeout'
ON_COMMAND_TIMEOUT = 'on_command_timeout'
AUTOSTART = 'autostart'
ENCODER_TURNS = 'encoder_turns'             # actuators.<name>.encoder_turns
SUCCESS, FAILURE = TransitionCallbackReturn.SUCCESS, TransitionCallbackReturn.FAILURE

HELP = """
transmission_bridge: actuator states -> joint_states through the robot's transmissions.

Usage:
  ros2 run transmission_bridge transmission_bridge --ros-args -p transmissions_file:=FILE
  ros2 launch transmission_bridge bridge.launch.py transmissions_file:=FILE [params_file:=FILE]

Topics: actuator_states (sensor_msgs/JointState, actuator names) in; joint_states out;
joint_trajectory (trajectory_msgs/JointTrajectory, joint names) in; actuator_trajectory out;
joint_commands (sensor_msgs/JointState, joint names: streaming set-points such as the
kinematics node's holding torques) in; actuator_commands (actuator names) out.
A managed (lifecycle) node: configure loads the robot, activate publishes joint_states and
maps commands, deactivate sends the motors on_command_timeout's safe command once and stops
('ros2 lifecycle set'); autostart (default true) does configure and activate at start-up.
Start-up parameters: transmissions_file (YAML or URDF) or robot_description (URDF text) or
use_robot_description_topic:=true; actuator_state_topics, autostart, diagnostics_period,
input_time_share, drop_on_overload. Settable at runtime: stale_timeout (joints of an actuator
not heard from for this long are left out), command_timeout and on_command_timeout (the
watchdog: hold | zero_velocity | zero_effort | none when joint_commands stop), limit_commands
(default true: commands to motors kept within the joint and actuator limits); per robot
joints.<joint>.{offset, mechanical_reduction, default_position, damping},
joints.<joint>.limits.{lower, upper, velocity, effort}, actuators.<actuator>.{
mechanical_reduction, limits.velocity, limits.effort}, transmissions.<coupling>.matrix
('ros2 param describe' gives units and ranges).
Services (std_srvs/Trigger): ~/calibrate_to_default_pose, ~/reset_calibration, ~/reload.
"""


class TransmissionBridge(LifecycleNodeMixin, ConfigurableNode):
    """Maps actuator-space JointState to joint space and joint commands back; managed."""

    NODE_NAME = 'transmission_bridge'
    HELP = HELP
    CONFIG_ERROR = ConfigError

    def __init__(self, **kwargs):
        ConfigurableNode.__init__(self, self.NODE_NAME, **kwargs)
        LifecycleNodeMixin.__init__(self)
        self._sources = sources = self._declare_sources(
            TRANSMISSIONS_FILE, 'path of the transmissions YAML or URDF (doc/formats.md); '
            'required unless robot_description is given',
            'URDF with ros2_control <transmission> elements, instead of transmissions_file')
        self._path, self._source = sources.path, sources.label
        topics = declare(self, ACTUATOR_STATE_TOPICS, ['actuator_states'], 'string_array',
                         'topics of sensor_msgs/JointState carrying actuator names',
                         read_only=True)
        self._stale_ns = seconds_to_ns(positive(STALE_TIMEOUT, declare(
            self, STALE_TIMEOUT, 0.5, float,
            "an actuator not heard from for this long is stale, s: its transmission's "
            'joints are left out of joint_states until it is heard again', constraints='> 0')))
        timeout = declare(self, COMMAND_TIMEOUT, 0.5, float,
                          'joint_commands that stop for this long trip the watchdog, s '
                          f'(then {ON_COMMAND_TIMEOUT}, repeated as often); 0: off',
                          constraints='>= 0')
        mode = declare(self, ON_COMMAND_TIMEOUT, 'hold', str,
                       'what every commanded motor is sent when the watchdog trips and on '
                       'deactivation: hold (measured position, velocity 0, effort 0), '
                       'zero_velocity, zero_effort or none')
        for name, value in ((COMMAND_TIMEOUT, timeout), (ON_COMMAND_TIMEOUT, mode)):
            reason = _watchdog_reason(name, value)
            if reason:
                raise StartupError(reason)
        self._watchdog = CommandWatchdog(seconds_to_ns(timeout), mode)
        self._watchdog_timer = None
        self._active = [False]              # a cell: the subscription callbacks read it
        self._autostart = declare(self, AUTOSTART, True, bool,
                                  'configure and activate at start-up (false: stay '
                                  'unconfigured for ros2 lifecycle or a lifecycle manager)',
                                  read_only=True)
        self._configure_error = ''
        self._pending_description = None
        self._encoder_params = set()
        self._limit_commands = declare(
            self, LIMIT_COMMANDS, True, bool,
            'keep commands to motors within the joint and actuator limits: positions '
            'clamped, velocity and effort vectors scaled as a whole, trajectories past a '
            'limit refused (false: map commands unchanged)')
        period = self._declare_diagnostics_period()
        budget = self._declare_input_budget()
        self._fast_path = self._declare_fast_path()
        self._now_ns = now_ns_function(self.get_clock())
        self._states = self._commands = None
        self._relays = {}                       # topic -> StateRelay
        self._command_codec = CommandCodec()
        self._typed_count = {'actuator_states': 0, 'joint_commands': 0}
        self._robot = RobotParameters(self, tparams, ConfigError)
        self._typed_joint_states, self._typed_commands = ReusedJointState(), ReusedJointState()
        self.add_on_set_parameters_callback(self._validate_parameters)
        self.add_post_set_parameters_callback(self._apply_parameters)

        self._joint_pub = self.create_publisher(JointState, 'joint_states', RELIABLE_10)
        self._traj_pub = self.create_publisher(JointTrajectory, 'actuator_trajectory',
                                               RELIABLE_10)
        self._command_pub = self.create_publisher(JointState, 'actuator_commands', RELIABLE_10)
        self._diag_pub = self.create_publisher(DiagnosticArray, '/diagnostics', RELIABLE_10)
        for topic in topics:        # raw: a message the budget drops is never decoded
            self._relays[topic] = StateRelay(topic, self._now_ns)
            self.create_subscription(JointState, topic, budget.wrap(self._state_callback(topic)),
                                     STREAM_IN, raw=True)
        self.create_subscription(JointTrajectory, 'joint_trajectory', self._on_trajectory,
                                 RELIABLE_10)
        self.create_subscription(JointState, 'joint_commands',
                                 self._subscriber(self._command_pub, self.joint_commands),
                                 STREAM_IN, raw=True)
        self._create_trigger('~/calibrate_to_default_pose', self._calibrate)
        self._create_trigger('~/reset_calibration', self._reset_calibration)
        self._create_trigger('~/reload', self._reload)
        self.create_timer(period, self._publish_diagnostics)
        self._topics = topics
        self._follow(sources, True)
        self._set_watchdog_timer()
        if not self._autostart:
            self.get_logger().info('unconfigured (autostart false): waiting for '
                                   f'ros2 lifecycle set {self.get_fully_qualified_name()} '
                                   'configure, then activate')
            return
        if self.trigger_configure() != SUCCESS:
            raise StartupError(self._configure_error)
        self.trigger_activate()

    # --- lifecycle ---------------------------------------------------------------
    def on_configure(self, state):
        """Load and validate the robot (a bad one leaves the node unconfigured, saying why)."""
        given = self._sources.given or self._pending_description
        self._syncing = True        # the robot's parameters are declared, not set
        try:
            if given:
                tset = self._start_with(given)
                self._refuse_unknown_overrides(('joints', 'actuators'))
        except StartupError as exc:
            self._configure_error = str(exc)
            self._drop_configuration()
            if not self._autostart:
                self.get_logger().error(f'configure failed, still unconfigured: {exc}')
            return FAILURE
        finally:
            self._syncing = False
        if self._states is None:
            self.get_logger().info('waiting for a robot_description')
        else:
            self.get_logger().info(f'{self._describe(tset)} from {self._source}; listening on '
                                   f'{", ".join(self._topics)}')
            self._loaded(tset)
        return SUCCESS

    def on_activate(self, state):
        """Publish joint_states and map commands from now on."""
        self._watchdog.forget()
        self._active[0] = True
        self.get_logger().info('active: publishing joint_states, mapping commands')
        return SUCCESS

    def on_deactivate(self, state):
        """Send the motors the safe command once, then publish and map nothing."""
        self._send_safe_commands()
        self._active[0] = False
        self._watchdog.forget()
        self.get_logger().info('inactive: nothing published, commands refused')
        return SUCCESS

    def on_cleanup(self, state):
        """Forget the robot: configure reads it again."""
        self._drop_configuration()
        return SUCCESS

    def on_shutdown(self, state):
        """Send the safe command if active, and forget the robot."""
        if self._active[0]:
            self._send_safe_commands()
            self._active[0] = False
        self._drop_configuration()
        return SUCCESS

    def destroy_node(self):
        """Destroy the node; stopped while active (Ctrl-C), it sends the safe command first."""
        if self._active[0]:
            self._send_safe_commands()
            self._active[0] = False
        super().destroy_node()

    def _drop_configuration(self):
        """Undeclare the robot's parameters and drop both sides (unconfigured)."""
        config = self._config()
        if config is not None:
            self._robot.undeclare(config)
            for name in self._encoder_params:
                self.undeclare_parameter(name)
            self._encoder_params = set()
        self._states = self._commands = None
        self._source_config = None
        self._command_codec = CommandCodec()
        for relay in self._relays.values():
            relay.forget()

    # --- configuration -----------------------------------------------------------
    def _load(self, source):
        tset = load_transmissions(source)
        tparams.check_parameter_names(tset)
        return tset

    def _config(self):
        return self._states and self._states.transmissions

    @staticmethod
    def _describe(tset):
        return f'{len(tset.specs)} transmissions, {tset.num_joints} joints'

    def _configure(self, tset):
        """Make ``tset`` the configuration of both sides (created on the first one)."""
        if self._states is None:
            self._states = ActuatorStates(tset)
            self._states.stale_ns = self._stale_ns
            self._commands = CommandMapper(tset, self._limit_commands,
                                           measured=self._measured_linkages)
        else:
            self._states.set_transmissions(tset)
            self._commands.set_transmissions(tset)
        self._watchdog.forget()
        self._declare_encoder_turns(tset)

    def _declare_encoder_turns(self, tset):
        """Make ``actuators.<name>.encoder_turns`` exist for exactly the encoder actuators."""
        wanted = {f'actuators.{a.name}.{ENCODER_TURNS}' for s in tset.specs
                  for a in s.actuators if a.encoder_period is not None}
        self._syncing = True
        try:
            for name in self._encoder_params - wanted:
                self.undeclare_parameter(name)
            for name in sorted(wanted - self._encoder_params):
                # Not from a params file: turns saved at one power-on are wrong at the next.
                self.declare_parameter(name, Parameter.Type.INTEGER, descriptor(
                    int, "whole periods to add to this encoder's reading now (its position "
                    'becomes reading + turns * period); unset until an operator gives it'),
                    ignore_override=True)
        finally:
            self._syncing = False
        self._encoder_params = wanted

    def _measured_linkages(self):
        """Return the linkages' joint positions measured and fresh now (NaN otherwise)."""
        return self._states.linkage_positions(self._now_ns())

    def _on_description(self, msg):
        """Take a robot_description: kept for configure while unconfigured, else adopted."""
        if self._lifecycle_state() == 'unconfigured':
            self._pending_description = msg.data
            return
        super()._on_description(msg)

    def _lifecycle_state(self):
        return self._state_machine.current_state[1]

    def _configured(self):
        return self._states is not None

    def _forget_inputs(self):
        if self._states is not None:
            self._states.reset()

    def _validate_parameters(self, params):
        """On-set callback: build the would-be configuration; refuse with the reason."""
        if self._syncing:
            return SetParametersResult(successful=True)
        for p in params:
            if p.name == STALE_TIMEOUT and not (
                    p.type_ == Parameter.Type.DOUBLE and math.isfinite(p.value) and p.value > 0):
                return SetParametersResult(
                    successful=False, reason=f'{STALE_TIMEOUT} must be > 0, got {p.value!r}')
            reason = _watchdog_reason(p.name, p.value)
            if p.name in self._encoder_params and p.type_ != Parameter.Type.INTEGER:
                reason = f'{p.name} must be a whole number of periods, got {p.value!r}'
            if reason:
                return SetParametersResult(successful=False, reason=reason)
        reason = self._robot.validate(params, self._states and self._states.transmissions)
        return SetParametersResult(successful=not reason, reason=reason)

    def _apply_parameters(self, params):
        """Post-set callback: the validated configuration takes effect."""
        if self._syncing:
            return
        for p in params:
            if p.name == STALE_TIMEOUT:
                self._stale_ns = seconds_to_ns(p.value)
                if self._states is not None:
                    self._states.stale_ns = self._stale_ns
            elif p.name == COMMAND_TIMEOUT:
                self._watchdog.timeout_ns = seconds_to_ns(p.value)
                self._set_watchdog_timer()
            elif p.name == ON_COMMAND_TIMEOUT:
                self._watchdog.mode = p.value
            elif p.name in self._encoder_params and self._states is not None:
                actuator = p.name.split('.')[1]
                position = self._states.set_encoder_turns(actuator, p.value)
                self.get_logger().info(
                    f'{actuator}: {p.value} whole turns given; position now {position:.6g}'
                    if position == position else
                    f'{actuator}: {p.value} whole turns given, for its first reading')
            elif p.name == LIMIT_COMMANDS:
                self._limit_commands = p.value
                if self._commands is not None:
                    self._commands.limit_commands = p.value
        new = self._robot.take()
        if new is not None:
            self._configure(new)

    # --- topics ------------------------------------------------------------------
    @staticmethod
    def _subscriber(publisher, handle):
        """Return a subscription callback publishing what ``handle(data)`` returns, if any."""
        publish = publisher.publish

        def callback(data):
            out = handle(data)
            if out is not None:
                publish(out)
        return callback

    def _state_callback(self, source):
        """
        Return the subscription callback of ``source``: its fast route, else its typed one.

        States are taken whatever the lifecycle state (a linkage's and an encoder's stream
        stays continuous) and published only while active.
        """
        relay, typed, publish = self._relays[source], self._typed_state, self._joint_pub.publish
        active = self._active

        def callback(data):
            out = relay.take(data)
            if out is None:
                out = typed(source, relay, data)
                if out is None:
                    return
            if active[0]:
                publish(out)
        return callback

    def actuator_states(self, source, data):
        """Return the joint_states (bytes or a message) for one message of ``source``, or None."""
        relay = self._relays[source]
        out = relay.take(data)
        return out if out is not None else self._typed_state(source, relay, data)

    def _typed_state(self, source, relay, data):
        """Return the joint_states message of ``data`` taken by the typed route, or None."""
        states = self._states
        if states is None:
            return None
        self._typed_count['actuator_states'] += 1
        msg = deserialize_message(data, JointState)
        out = states.ingest(source, msg.name, msg.position, msg.velocity, msg.effort,
                            stamp_to_ns(msg.header.stamp), self._now_ns())
        result = states.last_result
        for name in result.new_shared_actuators:
            self.get_logger().warning(
                f'actuator {name!r} is reported on more than one topic; the latest wins')
        waiting = out is None and result.reason.startswith('no transmission')  # not an error
        report_input(self.get_logger(), source, 'actuator', result.new_unknown_names,
                     '' if waiting else result.reason)
        if self._fast_path:
            relay.learn(states, data, msg)
        return None if out is None else self._typed_joint_states.fill(out, msg.header)

    def joint_commands(self, data):
        """Return the actuator_commands (bytes or a message) for one joint_commands message."""
        commands, codec = self._commands, self._command_codec
        if commands is None or not self._active[0]:
            return None
        decoded = codec.decode(data)
        if decoded is not None:
            names, arrays, header = decoded
            out = commands.map_command(names, *arrays)
            self._report_command(out)
            return None if out is None else codec.encode(out, header)
        self._typed_count['joint_commands'] += 1
        msg = deserialize_message(data, JointState)
        out = commands.map_command(msg.name, msg.position, msg.velocity, msg.effort)
        self._report_command(out)
        if self._fast_path:
            codec.learn(data, msg)
        return None if out is None else self._typed_commands.fill(out, msg.header)

    def _report_command(self, out):
        if out is not None and self._watchdog.commanded(out.names, self._now_ns()):
            self.get_logger().info('joint_commands resumed: watchdog cleared')
        result = self._commands.last_result
        report_input(self.get_logger(), 'joint_commands', 'joint', result.new_unknown_names,
                     result.reason)
        if result.limited:
            self.get_logger().warning('joint_commands limited: ' + '; '.join(result.limited),
                                      throttle_duration_sec=1.0)

    def _on_trajectory(self, msg):
        if self._commands is None or not self._active[0]:
            self.get_logger().error('joint_trajectory rejected: ' + (
                'no configuration yet' if self._commands is None else 'the bridge is inactive'))
            return
        points = msg.points
        try:
            names, fields = self._commands.map_trajectory(
                msg.joint_names, [p.positions for p in points], [p.velocities for p in points],
                [p.accelerations for p in points], [p.effort for p in points])
        except ConfigError as exc:
            self.get_logger().error(f'joint_trajectory rejected: {exc}')
            return
        self._traj_pub.publish(trajectory_msg(msg.header, names, fields,
                                              [p.time_from_start for p in points]))

    # --- services ----------------------------------------------------------------
    def _calibrate(self):
        tset = self._states.transmissions
        try:
            offsets = tset.calibrated_offsets(self._states.actuator_positions())
        except ConfigError as exc:
            return False, f'cannot calibrate: {exc}'
        ok, reason = self._set_joint_values(tset.joint_names, 'offset', offsets)
        return ok, name_values(tset.joint_names, offsets) if ok else f'refused: {reason}'

    def _reset_calibration(self):
        names = self._states.transmissions.joint_names
        try:
            offsets = [self._source_config.joint(j).offset for j in names]
        except ConfigError as exc:
            return False, str(exc)
        ok, reason = self._set_joint_values(names, 'offset', offsets)
        return ok, ('offsets restored from ' + self._source) if ok else reason

    def _reload(self):
        if not self._path:
            return False, f'nothing to reload: configured from {self._source}'
        try:
            new = self._load(self._path)
        except ConfigError as exc:
            return False, f'kept the previous configuration: {exc}'
        self._adopt(new, self._path)
        return True, f'reloaded {len(new.specs)} transmissions from {self._path}'

    # --- the watchdog ------------------------------------------------------------
    def _set_watchdog_timer(self):
        """(Re)make the watchdog's timer: a quarter of command_timeout (none when off)."""
        if self._watchdog_timer is not None:
            self.destroy_timer(self._watchdog_timer)
            self._watchdog_timer = None
        if self._watchdog.timeout_ns:
            self._watchdog_timer = self.create_timer(
                max(self._watchdog.timeout_ns * 1e-9 / 4, 0.001), self._check_watchdog)

    def _check_watchdog(self):
        if not self._active[0] or self._states is None:
            return
        due = self._watchdog.due(self._now_ns())
        if due is None:
            return
        if due == 'tripped':
            w = self._watchdog
            self.get_logger().error(
                f'no joint_commands for {w.timeout_ns * 1e-9:g} s: sending {w.mode} to '
                f'{", ".join(w.commanded_names)} every {w.timeout_ns * 1e-9:g} s until they '
                'resume')
        self._send_safe_commands()

    def _send_safe_commands(self):
        """Publish on_command_timeout's command to every motor commanded (if any)."""
        if self._states is None:
            return
        now = self.get_clock().now()
        positions = dict(zip(self._states.transmissions.actuator_names,
                             self._states.fresh_actuator_positions(self._now_ns())))
        for command in self._watchdog.safe_commands(positions):
            msg = JointState(name=list(command.names))
            msg.header.stamp = now.to_msg()
            msg.position, msg.velocity, msg.effort = (
                [] if a is None else doubles(a)
                for a in (command.position, command.velocity, command.effort))
            self._command_pub.publish(msg)

    # --- diagnostics -------------------------------------------------------------
    def _publish_diagnostics(self):
        now = self.get_clock().now()
        overload = self._overload_warning()
        name = f'{self.get_name()}: actuator states'
        if self._states is None:
            self._diag_pub.publish(diagnostics(
                now.to_msg(), name, self._source, {},
                warning=self._configure_error or ('unconfigured (lifecycle)' if
                                                  self._lifecycle_state() == 'unconfigured'
                                                  else 'waiting for a robot_description')))
            return
        stale = self._states.stale_actuators(now.nanoseconds, self._stale_ns)
        refused = [f'{",".join(joints)}: {why}' for joints, why in self._states.refused.items()]
        if refused:         # said here, once a period, not per message
            self.get_logger().warning('linkage states refused, their joints not published: '
                                      + '; '.join(refused), throttle_duration_sec=5.0)
        left_out = self._states.stale_joints
        waiting = self._states.encoders.ambiguous
        if waiting:
            self.get_logger().warning('encoder turns unknown, joints not published: ' + '; '.join(
                f'{t}: {why}' for t, why in waiting.items()), throttle_duration_sec=5.0)
        warnings = ([f'stale actuators: {", ".join(stale)}'] if stale else []) + (
            [f'joints left out (stale actuators): {", ".join(left_out)}'] if left_out
            else []) + ([overload] if overload else []) + (
            [f'linkage states refused: {"; ".join(refused)}'] if refused else []) + (
            [f'encoder turns unknown: {"; ".join(waiting)}'] if waiting else []) + (
            [] if self._active[0] else ['inactive (lifecycle): nothing published'])
        w = self._watchdog
        error = (f'command timeout: no joint_commands since '
                 f'{w.tripped_ns * 1e-9 - w.timeout_ns * 1e-9:.3f} s; sending {w.mode} to '
                 f'{", ".join(w.commanded_names)}' if w.tripped_ns is not None else '')
        commands = self._commands.counters.as_dict()
        trajectories = {k: commands.pop(k) for k in list(commands) if k.startswith('traj')}
        typed = self._typed_count       # the fast route's: every message taken but these
        routes = {'messages_fast': self._states.counters.received - typed['actuator_states'],
                  'messages_typed': typed['actuator_states'],
                  'commands_fast': self._commands.counters.received - typed['joint_commands'],
                  'commands_typed': typed['joint_commands']}
        self._diag_pub.publish(diagnostics(
            now.to_msg(), name, self._source,
            {**self._states.counters.as_dict(), **trajectories,
             **{f'commands_{k}': v for k, v in commands.items()}},
            warning='; '.join(warnings), error=error,
            extra={'stale_actuators': ','.join(stale), 'stale_joints': ','.join(left_out),
                   'command_timeout': 'tripped' if error else 'ok', **routes,
                   'refused_linkages': '; '.join(refused),
                   'encoders_waiting': '; '.join(f'{t}: {why}' for t, why in waiting.items()),
                   'encoder_turns': ','.join(
                       f'{a}={t}' for a, t in self._states.encoders.turns_by_name().items()),
                   'dropped_overload': self._budget.dropped,
                   'not_bridged_joints': ','.join(
                       j for t in self._states.transmissions.skipped for j in t.joints)}))


def _watchdog_reason(name, value):
    """Return why ``value`` is not valid for the watchdog parameter ``name`` ('' if it is)."""
    if name == COMMAND_TIMEOUT and not (isinstance(value, float) and math.isfinite(value)
                                        and value >= 0):
        return f'{COMMAND_TIMEOUT} must be a finite number of seconds >= 0, got {value!r}'
    if name == ON_COMMAND_TIMEOUT and value not in MODES:
        return f'{ON_COMMAND_TIMEOUT} must be one of {", ".join(MODES)}, got {value!r}'
    return ''


def main(args=None):
    """Entry point of the ``transmission_bridge`` executable."""
    exit_with(run_node(TransmissionBridge, args))


if __name__ == '__main__':
    main()
