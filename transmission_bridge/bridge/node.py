"""
The ``transmission_bridge`` node: actuator states in, joint states out, commands back.

ROS wiring only: parameters, publishers, subscriptions, services, timers. A message's routes
are :mod:`transmission_bridge.mapping`'s (:mod:`~transmission_bridge.mapping.routes`); goals
and joint springs are :mod:`transmission_bridge.control`'s, wired by :mod:`.goal_servers`
(imported only with ``follow_joint_trajectory``) and :mod:`.impedance_wiring`; the node's own
parameters are :mod:`.settings`', its /diagnostics status :mod:`.status`'.
Topics, parameters, services in doc/nodes.md (tables generated from here).
"""

from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.msg import SetParametersResult
from rclpy.lifecycle import LifecycleNodeMixin, TransitionCallbackReturn
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from . import status
from .command_sources import CommandSources
from .deflections import Deflections
from .settings import (ACTUATOR_STATE_TOPICS, AUTOSTART, EncoderTurns, FOLLOW_JOINT_TRAJECTORY,
                       HELP, LIMIT_COMMANDS, SETTINGS, SOURCE_HELP, STALE_TIMEOUT,
                       TRANSMISSIONS_FILE)
from ..mapping.routes import Routes
from ..messages.named_input import seconds_to_ns
from ..ros.assumed_transmissions import AssumedTransmissions
from ..ros.configurable import ConfigurableNode, queued_taker, RELIABLE_10, STREAM_IN
from ..ros.conversions import name_values, now_ns_function, TypedJointStates
from ..ros.diagnostics import diagnostics
from ..ros.node_main import exit_with, run_node, StartupError
from ..ros.robot_parameters import RobotParameters
from ..ros.settings import declare_settings, refusal
from ..transmissions import ConfigError, load_transmissions
from ..transmissions import parameters as tparams
from ..transmissions.effort_law import joint_side_terms

SUCCESS, FAILURE = TransitionCallbackReturn.SUCCESS, TransitionCallbackReturn.FAILURE


class TransmissionBridge(LifecycleNodeMixin, ConfigurableNode):
    """Maps actuator-space JointState to joint space and joint commands back; managed."""

    NODE_NAME = 'transmission_bridge'
    HELP = HELP
    CONFIG_ERROR = ConfigError

    def __init__(self, **kwargs):
        ConfigurableNode.__init__(self, self.NODE_NAME, **kwargs)
        LifecycleNodeMixin.__init__(self)
        self._sources = sources = self._declare_sources(TRANSMISSIONS_FILE, *SOURCE_HELP)
        self._path, self._source = sources.path, sources.label
        own = declare_settings(self, SETTINGS)
        topics = own[ACTUATOR_STATE_TOPICS]
        self._stale_ns = seconds_to_ns(own[STALE_TIMEOUT])
        self._active = [False]              # a cell: the subscription callbacks read it
        self._autostart = own[AUTOSTART]
        self._limit_commands = own[LIMIT_COMMANDS]
        self._configure_error = ''
        self._pending_description = None
        self._encoders = EncoderTurns()
        period = self._declare_diagnostics_period()
        self._declare_input_budget()       # self._budget: wraps every state subscription
        self._fast_path = self._declare_fast_path()
        self._now_ns = now_ns_function(self.get_clock())
        self._execution = execution = CommandSources(
            self, own, own[FOLLOW_JOINT_TRAJECTORY], self._now_ns, self._active,
            lambda m: self._command_pub.publish(m))
        self._routes = routes = Routes(topics, self._now_ns, self.get_logger(),
                                       execution.deadline, TypedJointStates(), self._fast_path)
        execution.wire(routes)
        self._deflections = Deflections(self, routes)
        self._robot = RobotParameters(self, tparams, ConfigError)
        self._assumed = AssumedTransmissions(self, 'bridge')
        self.add_on_set_parameters_callback(self._validate_parameters)
        self.add_post_set_parameters_callback(self._apply_parameters)

        self._joint_pub = self.create_publisher(JointState, 'joint_states', RELIABLE_10)
        self._traj_pub = self.create_publisher(JointTrajectory, 'actuator_trajectory',
                                               RELIABLE_10)
        self._command_pub = self.create_publisher(JointState, 'actuator_commands', RELIABLE_10)
        self._diag_pub = self.create_publisher(DiagnosticArray, '/diagnostics', RELIABLE_10)
        self._takers, self._subscribed = [], set()
        for topic in topics:
            self._state_topic(topic)
        routes.take_states = lambda: [take() for take in self._takers]
        self.create_subscription(JointTrajectory, 'joint_trajectory', self._trajectory,
                                 RELIABLE_10)
        on_command = routes.command_callback(self._command_pub.publish, self._active)
        routes.drain = queued_taker(self.create_subscription(
            JointState, 'joint_commands', on_command, STREAM_IN, raw=True), on_command)
        self._create_trigger('~/calibrate_to_default_pose', self._calibrate)
        self._create_trigger('~/reset_calibration', self._reset_calibration)
        self._create_trigger('~/reload', self._reload)
        self.create_timer(period, self._publish_diagnostics)
        self._topics = topics
        self._follow(sources, True)
        if not self._autostart:
            self.get_logger().info('unconfigured (autostart false): waiting for ros2 lifecycle '
                                   f'set {self.get_fully_qualified_name()} configure, then '
                                   'activate')
            return
        if self.trigger_configure() != SUCCESS:
            raise StartupError(self._configure_error)
        self.trigger_activate()

    def _state_topic(self, topic):
        """Subscribe actuator states on ``topic`` (once): raw, a dropped message never decoded."""
        if topic in self._subscribed:
            return
        self._subscribed.add(topic)
        self._routes.listen(topic)
        callback = self._budget.wrap(self._routes.state_callback(
            topic, self._joint_pub.publish, self._active))
        self._takers.append(queued_taker(self.create_subscription(
            JointState, topic, callback, STREAM_IN, raw=True), callback))

    # --- lifecycle ---------------------------------------------------------------
    def on_configure(self, state):
        """Load and validate the robot (a bad one leaves the node unconfigured, saying why)."""
        execution = self._execution
        given = self._sources.given or self._pending_description
        self._syncing = True        # the robot's parameters are declared, not set
        try:
            if given:
                tset = self._start_with(given)
                self._refuse_unknown_overrides(('joints', 'actuators') + execution.per_joint)
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
        self._execution.deadline.forget()
        self._active[0] = True
        self.get_logger().info('active: publishing joint_states, mapping commands')
        return SUCCESS

    def on_deactivate(self, state):
        """Abort goals; send the motors the safe command once, then publish and map nothing."""
        self._stop_if_active('the bridge was deactivated (lifecycle)')
        self._execution.deadline.forget()
        self.get_logger().info('inactive: nothing published, commands refused')
        return SUCCESS

    def on_cleanup(self, state):
        """Forget the robot: configure reads it again."""
        self._drop_configuration()
        return SUCCESS

    def on_shutdown(self, state):
        """Send the safe command if active, and forget the robot."""
        self._stop_if_active()
        self._drop_configuration()
        return SUCCESS

    def destroy_node(self):
        """Destroy the node; stopped while active (Ctrl-C), it sends the safe command first."""
        self._stop_if_active()
        if self._execution.goals is not None:
            self._execution.goals.destroy()     # rclpy's destroy_node leaves them to the GC
        super().destroy_node()

    def _stop_if_active(self, reason='the bridge stopped'):
        if self._active[0]:
            self._execution.stop(reason)
            self._active[0] = False
        elif self._execution.goals is not None:
            self._execution.goals.abort_all(reason, hold=False)

    def _drop_configuration(self):
        """Undeclare the robot's parameters and drop both sides (unconfigured)."""
        config = self._config()
        if config is not None:
            self._robot.undeclare(config)
            for name in self._encoders.names:
                self.undeclare_parameter(name)
            self._encoders = EncoderTurns()
        self._routes.drop()
        self._source_config = None

    # --- configuration -----------------------------------------------------------
    def _load(self, source):
        tset = load_transmissions(source)
        tparams.check_parameter_names(tset)
        self._execution.check(tset)
        return tset

    def _config(self):
        return self._states and self._states.transmissions

    @staticmethod
    def _describe(tset):
        return f'{len(tset.specs)} transmissions, {tset.num_joints} joints'

    @property
    def _states(self):
        return self._routes.states

    @property
    def _commands(self):
        return self._routes.commands

    def _configure(self, tset):
        """Make ``tset`` the configuration of both sides (created on the first one)."""
        self._routes.configure(tset, self._stale_ns, self._limit_commands,
                               self._execution.warm())
        self._execution.configure(tset)
        self._deflections.configure(self._routes.states)
        for topic in self._routes.states.outputs.topics if self._routes.states.outputs else ():
            self._state_topic(topic)            # an output encoder's own topic
        self._assumed.state(self._source, joint_side_terms(tset))
        self._syncing = True
        try:
            self._encoders.declare(self, tset)
        finally:
            self._syncing = False

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
        reason = (refusal(SETTINGS, params) or self._execution.refusal(params)
                  or self._encoders.refusal(params)
                  or self._robot.validate(params, self._states and self._states.transmissions))
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
            elif p.name in self._encoders.names and self._states is not None:
                self.get_logger().info(self._encoders.apply(self._states, p.name, p.value))
            elif p.name == LIMIT_COMMANDS:
                self._limit_commands = p.value
                if self._commands is not None:
                    self._commands.limit_commands = p.value
        new = self._robot.take()
        if new is not None:
            self._configure(new)
        self._execution.apply(params)

    # --- topics ------------------------------------------------------------------
    def actuator_states(self, source, data):
        """Return the joint_states (bytes or a message) for one message of ``source``, or None."""
        return self._routes.actuator_states(source, data)

    def joint_commands(self, data):
        """Return the actuator_commands (bytes or a message) for one joint_commands message."""
        return self._routes.joint_commands(data) if self._active[0] else None

    def _trajectory(self, msg):
        out = self._routes.trajectory(msg, self._active[0])
        if out is not None:
            self._traj_pub.publish(out)

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

    # --- diagnostics -------------------------------------------------------------
    def _publish_diagnostics(self):
        now = self.get_clock().now()
        overload = self._overload_warning()
        name = f'{self.get_name()}: actuator states'
        if self._states is None:
            self._diag_pub.publish(diagnostics(now.to_msg(), name, self._source, {}, warning=(
                self._configure_error or status.unconfigured(self._lifecycle_state()))))
            return
        report = status.status(self._routes, self._execution.deadline, self._active[0],
                               self._budget.dropped, overload, now.nanoseconds,
                               self._stale_ns)
        for text, throttle in report.logged:        # said here, once a period, not per message
            self.get_logger().warning(text, throttle_duration_sec=throttle)
        counters = {**report.counters, **self._execution.counters}
        self._diag_pub.publish(diagnostics(now.to_msg(), name, self._source, counters,
                                           warning=report.warning, error=report.error,
                                           extra=report.extra))


def main(args=None):
    """Entry point of the ``transmission_bridge`` executable."""
    exit_with(run_node(TransmissionBridge, args))


if __name__ == '__main__':
    main()
