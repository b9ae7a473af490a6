"""
The ``transmission_bridge`` node: actuator states in, joint states out, commands back.

A thin rclpy shell around :class:`~transmission_bridge.bridge.state.BridgeCore`;
topics, parameters and services are listed in doc/nodes.md (tables generated from here).
"""

import math

from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.msg import SetParametersResult
from rclpy.parameter import Parameter
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from .state import BridgeCore, seconds_to_ns
from ..ros.configurable import ConfigurableNode, positive, RELIABLE_10, STREAM_IN
from ..ros.conversions import doubles, name_values, now_ns_function, stamp_to_ns
from ..ros.diagnostics import diagnostics, report_input
from ..ros.node_main import exit_with, run_node, StartupError
from ..ros.parameters import declare, declare_described, descriptor
from ..transmissions import ConfigError, load_transmissions
from ..transmissions import parameters as tparams
from ..ros.wire import JointStateLayout

TRANSMISSIONS_FILE = 'transmissions_file'
ACTUATOR_STATE_TOPICS = 'actuator_state_topics'
STALE_TIMEOUT = 'stale_timeout'
LIMIT_COMMANDS = 'limit_commands'

HELP = """
transmission_bridge: actuator states -> joint_states through the robot's transmissions.

Usage:
  ros2 run transmission_bridge transmission_bridge --ros-args -p transmissions_file:=FILE
  ros2 launch transmission_bridge bridge.launch.py transmissions_file:=FILE [params_file:=FILE]

Topics: actuator_states (sensor_msgs/JointState, actuator names) in; joint_states out;
joint_trajectory (trajectory_msgs/JointTrajectory, joint names) in; actuator_trajectory out;
joint_commands (sensor_msgs/JointState, joint names: streaming set-points such as the
kinematics node's holding torques) in; actuator_commands (actuator names) out.
Start-up parameters: transmissions_file (YAML or URDF) or robot_description (URDF text) or
use_robot_description_topic:=true; actuator_state_topics, stale_timeout, diagnostics_period,
input_time_share, drop_on_overload. Settable at runtime: limit_commands (default true:
commands to motors kept within the joint and actuator limits); per robot
joints.<joint>.{offset, mechanical_reduction, default_position, damping},
joints.<joint>.limits.{lower, upper, velocity, effort}, actuators.<actuator>.{
mechanical_reduction, limits.velocity, limits.effort}, transmissions.<coupling>.matrix
('ros2 param describe' gives units and ranges).
Services (std_srvs/Trigger): ~/calibrate_to_default_pose, ~/reset_calibration, ~/reload.
"""


class TransmissionBridge(ConfigurableNode):
    """Maps actuator-space JointState to joint space and joint trajectories back."""

    NODE_NAME = 'transmission_bridge'
    HELP = HELP

    def __init__(self, **kwargs):
        super().__init__(self.NODE_NAME, **kwargs)
        sources = self._declare_sources(
            TRANSMISSIONS_FILE, 'path of the transmissions YAML or URDF (doc/formats.md); '
            'required unless robot_description is given',
            'URDF with ros2_control <transmission> elements, instead of transmissions_file')
        self._path = sources.path
        topics = declare(self, ACTUATOR_STATE_TOPICS, ['actuator_states'], 'string_array',
                         'topics of sensor_msgs/JointState carrying actuator names',
                         read_only=True)
        self._stale_ns = seconds_to_ns(positive(STALE_TIMEOUT, declare(
            self, STALE_TIMEOUT, 0.5, float,
            'an actuator not heard from for this long is reported stale, s', constraints='> 0')))
        self._limit_commands = declare(
            self, LIMIT_COMMANDS, True, bool,
            'keep commands to motors within the joint and actuator limits: positions '
            'clamped, velocity and effort vectors scaled as a whole, trajectories past a '
            'limit refused (false: map commands unchanged)')
        period = self._declare_diagnostics_period()
        budget = self._declare_input_budget()
        self._fast_path = self._declare_fast_path()
        self._fast = {}                   # topic -> _FastInput (learned byte layout)
        self._now_ns = now_ns_function(self.get_clock())
        self._source = sources.label
        self._core = None
        self._source_set = None
        if sources.given:
            try:
                self._source_set = self._load(sources.given)
                tset = self._declare_transmission_parameters(self._source_set)
            except ConfigError as exc:
                raise StartupError(str(exc)) from None
            self._core = BridgeCore(tset, self._limit_commands)
            self._refuse_unknown_overrides(('joints', 'actuators'))
        self._pending = None
        self._typed_joint_states = _TypedOutput()
        self._typed_commands = _TypedOutput()
        self.add_on_set_parameters_callback(self._validate_parameters)
        self.add_post_set_parameters_callback(self._apply_parameters)

        self._joint_pub = self.create_publisher(JointState, 'joint_states', RELIABLE_10)
        self._traj_pub = self.create_publisher(JointTrajectory, 'actuator_trajectory',
                                               RELIABLE_10)
        self._command_pub = self.create_publisher(JointState, 'actuator_commands', RELIABLE_10)
        self._diag_pub = self.create_publisher(DiagnosticArray, '/diagnostics', RELIABLE_10)
        for topic in topics:        # raw: a message the budget drops is never decoded
            self.create_subscription(JointState, topic,
                                     budget.wrap(self._actuator_state_callback(topic)),
                                     STREAM_IN, raw=True)
        self.create_subscription(JointTrajectory, 'joint_trajectory', self._on_trajectory,
                                 RELIABLE_10)
        self.create_subscription(
            JointState, 'joint_commands',
            lambda data: self._publish(self._command_pub, self._command(data)),
            STREAM_IN, raw=True)
        self.create_service(Trigger, '~/calibrate_to_default_pose', self._calibrate)
        self.create_service(Trigger, '~/reset_calibration', self._reset_calibration)
        self.create_service(Trigger, '~/reload', self._reload)
        self.create_timer(period, self._publish_diagnostics)
        self._follow(sources)
        if self._core is not None:
            self.get_logger().info(
                f'{len(tset.specs)} transmissions, {tset.num_joints} joints from '
                f'{self._source}; listening on {", ".join(topics)}')
            self._log_warnings(tset)

    def _log_warnings(self, tset):
        """Log, once per loaded file, what the loader assumed or skipped."""
        for warning in tset.warnings:
            self.get_logger().warning(f'{self._source}: {warning}')

    # --- configuration -----------------------------------------------------------
    @staticmethod
    def _load(source):
        tset = load_transmissions(source)
        tparams.check_parameter_names(tset)
        return tset

    def _adopt(self, new):
        """Make ``new`` (a validated set) the configuration; parameters follow it."""
        old_names = (set(tparams.parameter_values(self._core.transmissions))
                     if self._core is not None else set())
        self._replace_parameters(old_names, tparams.parameter_values(new),
                                 tparams.parameter_descriptions(new))
        self._source_set = new
        if self._core is None:
            self._core = BridgeCore(new, self._limit_commands)
        else:
            self._core.set_transmissions(new)

    def _on_description(self, msg):
        try:
            new = self._load(msg.data)
        except ConfigError as exc:
            self.get_logger().error(f'robot_description refused, keeping the previous '
                                    f'configuration: {exc}')
            return
        self._adopt(new)
        self.get_logger().info(f'reconfigured from robot_description: {len(new.specs)} '
                               f'transmissions, {new.num_joints} joints')
        self._log_warnings(new)

    def _declare_transmission_parameters(self, tset):
        """Declare one parameter per tunable number; overrides apply on top of the file."""
        descriptions = tparams.parameter_descriptions(tset)
        values = tparams.parameter_values(tset)
        given = {}
        for name, value in values.items():
            param = declare_described(self, name, value, descriptor(float, descriptions[name]))
            if param.value != value:
                given[name] = param.value
        return tparams.apply_parameters(tset, given) if given else tset

    def _validate_parameters(self, params):
        """On-set callback: build the would-be configuration; refuse with the reason."""
        if self._syncing:
            return SetParametersResult(successful=True)
        changes = {}
        for p in params:
            if tparams.split_parameter(p.name) and self._core is None:
                return SetParametersResult(successful=False, reason='no configuration yet')
            if p.name == STALE_TIMEOUT:
                if not (p.type_ == Parameter.Type.DOUBLE and math.isfinite(p.value)
                        and p.value > 0):
                    return SetParametersResult(
                        successful=False, reason=f'{STALE_TIMEOUT} must be > 0, got {p.value!r}')
            elif tparams.split_parameter(p.name):
                changes[p.name] = p.value
        try:
            self._pending = (tparams.apply_parameters(self._core.transmissions, changes)
                             if changes else None)
        except ConfigError as exc:
            self._pending = None
            return SetParametersResult(successful=False, reason=str(exc))
        return SetParametersResult(successful=True)

    def _apply_parameters(self, params):
        """Post-set callback: the validated configuration takes effect."""
        if self._syncing:
            return
        for p in params:
            if p.name == STALE_TIMEOUT:
                self._stale_ns = seconds_to_ns(p.value)
            elif p.name == LIMIT_COMMANDS:
                self._limit_commands = p.value
                if self._core is not None:
                    self._core.limit_commands = p.value
        if self._pending is not None:
            self._core.set_transmissions(self._pending)
            self._pending = None

    def _set_offsets(self, offsets):
        tset = self._core.transmissions
        params = [Parameter(tparams.joint_parameter(j, 'offset'), Parameter.Type.DOUBLE,
                            float(o)) for j, o in zip(tset.joint_names, offsets)]
        result = self.set_parameters_atomically(params)
        return result.successful, result.reason

    # --- topics ------------------------------------------------------------------
    # Each input is handled from its bytes. A message with the layout of the last one from
    # its topic (same names, frame_id and array lengths: wire.JointStateLayout) is read in
    # place and answered from a byte template; any other is decoded and answered with a
    # message object (the typed path), which then learns its layout. Both give the same
    # output for the same input (test_fast_path.py).
    @staticmethod
    def _publish(publisher, out):
        if out is not None:
            publisher.publish(out)

    def _actuator_state_callback(self, source, publish=None):
        """
        Return the subscription callback of ``source``: each message's joint_states, published.

        A message (bytes, or a message object) goes through its topic's relay, the steady
        stream's bytes in and bytes out, and otherwise through :meth:`_full_path`.
        ``publish`` (default: the joint_states publisher's) takes what there is to send.
        """
        fast, full_path = self._fast, self._full_path
        publish = self._joint_pub.publish if publish is None else publish

        def callback(data):
            entry = fast.get(source)
            out = None if entry is None or entry.relay is None else entry.relay(data)
            if out is None:
                out = full_path(source, data)
                if out is None:
                    return
            publish(out)
        return callback

    def _full_path(self, source, data):
        """Return the joint_states (or None) of a message its topic's relay did not take."""
        core = self._core
        if core is None:
            return None
        fast = self._fast.get(source)
        now = self._now_ns()
        if fast is not None and fast.layout.matches(data):
            layout = fast.layout
            stamp = layout.stamp_ns(data)
            out = None
            if fast.lane is not None:
                out = core.ingest_lane(fast.lane, layout.block(data), stamp, now, fast.into)
            if out is None:
                out = core.ingest(source, layout.names, *layout.arrays(data), stamp, now)
                self._report_actuator_state(source, out)
                fast.set_lane(core.lane(source, layout.names)
                              if out is not None and layout.stacked else None)
            return None if out is None else fast.encode(out, layout.stamp_bytes(data))
        msg = deserialize_message(data, JointState)
        stamp = stamp_to_ns(msg.header.stamp)
        out = core.ingest(source, msg.name, msg.position, msg.velocity, msg.effort, stamp, now)
        self._report_actuator_state(source, out)
        if self._fast_path:
            self._learn(source, data, msg)
        return None if out is None else self._typed_joint_states.fill(out, msg.header)

    def _learn(self, key, data, msg):
        """Learn the byte layout of ``data`` (decoded: ``msg``) for input ``key``."""
        layout = JointStateLayout.learn_message(data, msg)
        if layout is None:
            self._fast.pop(key, None)
        else:           # the lane comes with the first message of the layout taken whole
            self._fast[key] = _FastInput(layout, None if key == _COMMANDS else self._lane_step)

    def _lane_step(self, lane, state):
        return self._core.lane_step(lane, state, self._now_ns)

    def _report_actuator_state(self, source, out):
        result = self._core.last_result
        for name in result.new_shared_actuators:
            self.get_logger().warning(
                f'actuator {name!r} is reported on more than one topic; the latest wins')
        waiting = out is None and result.reason.startswith('no transmission')  # not an error
        report_input(self.get_logger(), source, 'actuator', result.new_unknown_names,
                     '' if waiting else result.reason)

    def _command(self, data):
        """Return the actuator_commands for one joint_commands message, or None."""
        core = self._core
        if core is None:
            return None
        fast = self._fast.get(_COMMANDS)
        if fast is not None and fast.layout.matches(data):
            layout = fast.layout
            out = core.map_command(layout.names, *layout.arrays(data))
            self._report_command()
            return None if out is None else fast.encode(out, layout.stamp_bytes(data))
        msg = deserialize_message(data, JointState)
        out = core.map_command(msg.name, msg.position, msg.velocity, msg.effort)
        self._report_command()
        if self._fast_path:
            self._learn(_COMMANDS, data, msg)
        return None if out is None else self._typed_commands.fill(out, msg.header)

    def _report_command(self):
        result = self._core.last_command_result
        report_input(self.get_logger(), 'joint_commands', 'joint', result.new_unknown_names,
                     result.reason)
        if result.limited:
            self.get_logger().warning('joint_commands limited: ' + '; '.join(result.limited),
                                      throttle_duration_sec=1.0)

    def _on_trajectory(self, msg):
        points = msg.points
        if self._core is None:
            self.get_logger().error('joint_trajectory rejected: no configuration yet')
            return
        try:
            names, (pos, vel, acc, eff) = self._core.map_trajectory(
                msg.joint_names, [p.positions for p in points], [p.velocities for p in points],
                [p.accelerations for p in points], [p.effort for p in points])
        except ConfigError as exc:
            self.get_logger().error(f'joint_trajectory rejected: {exc}')
            return
        out = JointTrajectory()
        out.header = msg.header
        out.joint_names = list(names)
        for k, p in enumerate(points):
            q = JointTrajectoryPoint(time_from_start=p.time_from_start)
            q.positions = doubles(None if pos is None else pos[k])
            q.velocities = doubles(None if vel is None else vel[k])
            q.accelerations = doubles(None if acc is None else acc[k])
            q.effort = doubles(None if eff is None else eff[k])
            out.points.append(q)
        self._traj_pub.publish(out)

    # --- services ----------------------------------------------------------------
    def _calibrate(self, request, response):
        if self._core is None:
            response.success, response.message = False, 'no configuration yet'
            return response
        tset = self._core.transmissions
        try:
            offsets = tset.calibrated_offsets(self._core.actuator_positions())
        except ConfigError as exc:
            response.success, response.message = False, f'cannot calibrate: {exc}'
            return response
        ok, reason = self._set_offsets(offsets)
        response.success = ok
        response.message = (name_values(tset.joint_names, offsets) if ok
                            else f'refused: {reason}')
        return response

    def _reset_calibration(self, request, response):
        if self._core is None:
            response.success, response.message = False, 'no configuration yet'
            return response
        tset = self._core.transmissions
        try:
            offsets = [self._source_set.joint(j).offset for j in tset.joint_names]
        except ConfigError as exc:
            response.success, response.message = False, str(exc)
            return response
        ok, reason = self._set_offsets(offsets)
        response.success = ok
        response.message = ('offsets restored from ' + self._source) if ok else reason
        return response

    def _reload(self, request, response):
        if not self._path:
            response.success = False
            response.message = f'nothing to reload: configured from {self._source}'
            return response
        try:
            new = self._load(self._path)
        except ConfigError as exc:
            response.success = False
            response.message = f'kept the previous configuration: {exc}'
            return response
        self._adopt(new)
        response.success = True
        response.message = f'reloaded {len(new.specs)} transmissions from {self._path}'
        return response

    # --- diagnostics -------------------------------------------------------------
    def _publish_diagnostics(self):
        now = self.get_clock().now()
        overload = self._overload_warning()
        if self._core is None:
            self._diag_pub.publish(diagnostics(
                now.to_msg(), f'{self.get_name()}: actuator states', self._source, {},
                warning='waiting for a robot_description'))
            return
        stale = self._core.stale_actuators(now.nanoseconds, self._stale_ns)
        warnings = ([f'stale actuators: {", ".join(stale)}'] if stale else []) + (
            [overload] if overload else [])
        self._diag_pub.publish(diagnostics(
            now.to_msg(), f'{self.get_name()}: actuator states', self._source,
            {**self._core.counters.as_dict(),
             **{f'commands_{k}': v for k, v in self._core.command_counters.as_dict().items()
                if not k.startswith('trajectories')}},
            warning='; '.join(warnings),
            extra={'stale_actuators': ','.join(stale),
                   'dropped_overload': self._budget.dropped,
                   'not_bridged_joints': ','.join(
                       j for t in self._core.transmissions.skipped for j in t.joints)}))


_COMMANDS = ' joint_commands'     # key of the command input's layout (no topic has a space)


class _TypedOutput:
    """One output's JointState message, reused while the names stay (publish copies it out)."""

    __slots__ = ('_msg', '_names')

    def __init__(self):
        self._msg = None
        self._names = None

    def fill(self, out, header):
        """Return the message carrying ``out`` (JointOutput or ActuatorCommand) and ``header``."""
        if self._names is not out.names:        # the core's cached tuple: same names
            self._msg = JointState(name=list(out.names))
            self._names = out.names
        msg = self._msg
        msg.header = header
        msg.position = doubles(out.position)
        msg.velocity = doubles(out.velocity)
        msg.effort = doubles(out.effort)
        return msg


class _FastInput:
    """One input's learned byte layout, its core lane, and its output templates."""

    __slots__ = ('layout', 'lane', 'into', 'relay', '_names', '_template', '_refit',
                 '_make_step')

    def __init__(self, layout, make_step=None):
        self.layout = layout
        self._names = None
        self._template = None
        self._make_step = make_step         # (lane, state) -> the core's step, or None
        self.set_lane(None)

    def set_lane(self, lane):
        """Take ``lane`` (or None); its output goes in place once a template fits it."""
        self.lane = lane
        self.into = None
        self.relay = None       # bytes -> bytes for the lane's usual message (or None)
        self._refit = True

    def encode(self, out, stamp_bytes):
        """Return ``out`` (JointOutput or ActuatorCommand) as JointState bytes."""
        arrays = (out.position, out.velocity, out.effort)
        if self._names is not out.names:        # the core's cached tuple: same layout
            n = len(out.names)
            self._template = JointStateLayout(
                out.names, self.layout.frame_id,
                [0 if a is None else n for a in arrays]).encoder()
            self._names = out.names
            self._refit = True
        template = self._template
        if self._refit:         # once per new lane or template, not per message
            self._refit = False
            whole = self.lane is not None and self.lane.whole and template.state is not None
            self.into = (template.state, template.fields) if whole else None
            step = whole and self._make_step and self._make_step(self.lane, template.state)
            self.relay = self.layout.relay(step, template) if step else None
        return template.write(stamp_bytes, arrays)


def main(args=None):
    """Entry point of the ``transmission_bridge`` executable."""
    exit_with(run_node(TransmissionBridge, args))


if __name__ == '__main__':
    main()
