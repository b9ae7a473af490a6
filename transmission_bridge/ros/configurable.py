"""What both nodes share: where the robot comes from, and parameters that follow it."""

import dataclasses

from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String
from std_srvs.srv import Trigger

from .input_budget import DEFAULT_SHARE, InputBudget, PROBE_PERIOD, share_error
from .node_main import settle_memory, StartupError
from .parameters import accept_integers_as_doubles, declare, descriptor, unknown_parameter
from .settings import finite_positive
from .time_jumps import on_backward_jump

ROBOT_DESCRIPTION = 'robot_description'
USE_DESCRIPTION_TOPIC = 'use_robot_description_topic'
INPUT_SHARE = 'input_time_share'
DROP_ON_OVERLOAD = 'drop_on_overload'
FAST_PATH = 'fast_path'
DIAGNOSTICS_PERIOD = 'diagnostics_period'

RELIABLE_10 = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
# Streaming inputs (actuator states, joint states, joint commands): rclpy's sensor-data
# profile (best effort, volatile, keep last: matches reliable and best-effort publishers)
# with depth 50 instead of 5. At 1-5 kHz, 5 messages are 1-5 ms: one scheduling delay of the
# node overwrote messages in DDS before it could take them. Under sustained overload the
# input budget, not the queue, decides what is dropped. A/B figures: doc/performance.md.
STREAM_IN = QoSProfile(depth=50, reliability=ReliabilityPolicy.BEST_EFFORT,
                       durability=DurabilityPolicy.VOLATILE)
# What robot_state_publisher offers on robot_description: the latest description, kept.
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)


def queued_taker(subscription, callback):
    """
    Return a function that hands ``callback`` the messages ``subscription`` holds, now.

    For a decision that must not be taken against a message already received and still in
    the queue (the executor's turn for it not yet come): the bridge's command deadline.
    """
    handle, msg_type, raw = subscription.handle, subscription.msg_type, subscription.raw
    most = max(subscription.qos_profile.depth, 1)   # what the queue holds: a flood ends too

    def take_queued():
        for _ in range(most):
            with handle:
                taken = handle.take_message(msg_type, raw)
            if taken is None:
                return
            callback(taken[0])
    return take_queued


def positive(name, value):
    """Return ``value`` if it is a finite float > 0; else raise StartupError naming ``name``."""
    why = finite_positive(name)(value)
    if why:
        raise StartupError(why)
    return value


@dataclasses.dataclass(frozen=True)
class Sources:
    """The configured sources: a file path, URDF text, and whether to follow the topic."""

    path: str
    description: str
    use_topic: bool

    @property
    def given(self):
        """Return the file path or the URDF text to load at start-up ('' if none)."""
        return self.path or self.description

    @property
    def label(self):
        """Return where the configuration came from, for messages."""
        return self.path or ('parameter robot_description' if self.description else
                             'topic robot_description')


class ConfigurableNode(Node):
    """
    A node configured from a file, ``robot_description``, or the ``robot_description`` topic.

    A subclass says how to load a configuration (:meth:`_load`, raising its library's
    :attr:`CONFIG_ERROR`), how to make one the core's (:meth:`_configure`), which is in
    force (:meth:`_config`), and how to summarise one for the log (:meth:`_describe`); its
    per-robot parameters are :attr:`_robot` (:class:`~.robot_parameters.RobotParameters`).
    """

    CONFIG_ERROR = ValueError

    def __init__(self, name, **kwargs):
        super().__init__(name, **kwargs)
        accept_integers_as_doubles(self)
        self._syncing = False
        self._budget = None
        self._dropped_reported = 0
        self._robot = None
        self._source = ''
        self._source_config = None      # the configuration as loaded, before any parameter

    def set_parameters_atomically(self, parameter_list):
        """
        Set parameters all or nothing; an undeclared name is refused with what exists.

        rclpy's own refusal reads "Invalid access to undeclared parameter(s): []" (the
        names are lost); ``ros2 param set`` shows this reason instead, e.g. "no parameter
        'joints.elbw.offset': no joint 'elbw' (joints: elbow, ...)".
        """
        unknown = [p.name for p in parameter_list if not self.has_parameter(p.name)]
        if unknown:
            declared = list(self._parameters)
            return SetParametersResult(successful=False, reason='; '.join(
                unknown_parameter(name, declared) for name in unknown))
        return super().set_parameters_atomically(parameter_list)

    def _refuse_unknown_overrides(self, groups):
        """
        Stop start-up on a given value (params file, ``-p``) for a parameter that does not exist.

        Names under ``groups`` (``joints``, ``actuators``) are per-robot: a typo there
        would silently leave a calibration out, so it is an error naming the key and
        what exists. Other unknown names may be meant for other nodes (``/**:`` sections)
        and are only warned about.
        """
        unknown = [name for name in getattr(self, '_parameter_overrides', {})
                   if not self.has_parameter(name) and not name.startswith('qos_overrides.')]
        declared = list(self._parameters)
        for name in unknown:
            if name.split('.')[0] in groups:
                raise StartupError(unknown_parameter(name, declared))
        if unknown:
            self.get_logger().warning(
                f'ignoring parameters this node does not have: {", ".join(sorted(unknown))}')

    def _follow(self, sources, configured):
        """Forget inputs on backward clock jumps; follow the robot_description topic if asked."""
        self._jump_handler = on_backward_jump(self, self._forget_inputs)
        if sources.use_topic:
            self.create_subscription(String, 'robot_description', self._on_description, LATCHED)
        if not configured:
            self.get_logger().info('waiting for a robot_description')

    def _forget_inputs(self):
        """Forget every input value and stamp (the clock jumped back): each node says what."""
        raise NotImplementedError

    def _load(self, source):
        """Return the configuration ``source`` (a path or URDF text) describes, checked."""
        raise NotImplementedError

    def _configure(self, config):
        """Make ``config`` the one in force (creating the core on the first)."""
        raise NotImplementedError

    def _config(self):
        """Return the configuration in force, or None."""
        raise NotImplementedError

    def _describe(self, config):
        """Return a few words on ``config`` for the log."""
        raise NotImplementedError

    def _loaded(self, config):
        """Log, once per loaded configuration, what the loader assumed; settle the memory."""
        for warning in config.warnings:
            self.get_logger().warning(f'{self._source}: {warning}')
        settle_memory()         # the configuration out of the collector's way (node_main)

    def _start_with(self, given):
        """Load ``given`` at start-up, declare its parameters and configure; return the config."""
        try:
            self._source_config = self._load(given)
            config = self._robot.declare(self._source_config)
            self._configure(config)
        except self.CONFIG_ERROR as exc:
            raise StartupError(str(exc)) from None
        return config

    def _adopt(self, new, origin):
        """Make ``new`` (loaded from ``origin``) the configuration; parameters follow it."""
        self._robot.replace(self._config(), new)
        self._source_config = new
        self._configure(new)
        self.get_logger().info(f'reconfigured from {origin}: {self._describe(new)}')
        self._loaded(new)

    def _on_description(self, msg):
        """Take a robot_description message: a valid one reconfigures the node."""
        try:
            new = self._load(msg.data)
        except self.CONFIG_ERROR as exc:
            self.get_logger().error(f'robot_description refused, keeping the previous '
                                    f'configuration: {exc}')
            return
        self._adopt(new, 'robot_description')

    def _declare_sources(self, file_param, file_help, description_help):
        """Declare the three source parameters; exactly one source (or the topic) or fail."""
        path = declare(self, file_param, '', str, file_help, read_only=True)
        description = declare(self, ROBOT_DESCRIPTION, '', str, description_help,
                              read_only=True)
        use_topic = declare(self, USE_DESCRIPTION_TOPIC, False, bool,
                            'also follow the robot_description topic (std_msgs/String, '
                            'transient local): each valid description reconfigures the node',
                            read_only=True)
        if path and description:
            raise StartupError(f'give {file_param!r} or {ROBOT_DESCRIPTION!r}, not both')
        if not (path or description or use_topic):
            raise StartupError(f'parameter {file_param!r} or {ROBOT_DESCRIPTION!r} is required '
                               f'(or {USE_DESCRIPTION_TOPIC}:=true)')
        return Sources(path, description, use_topic)

    def _declare_diagnostics_period(self):
        """Declare ``diagnostics_period`` and return it (s, validated)."""
        return positive(DIAGNOSTICS_PERIOD, declare(
            self, DIAGNOSTICS_PERIOD, 1.0, float, 'period of /diagnostics messages, s',
            read_only=True, constraints='> 0'))

    def _declare_fast_path(self):
        """Declare ``fast_path`` and return it."""
        return declare(self, FAST_PATH, True, bool,
                       'handle input messages of a known layout as bytes and write outputs '
                       'into byte templates (false: decode and build every message; the '
                       'outputs are the same)', read_only=True)

    def _declare_input_budget(self):
        """Declare ``drop_on_overload`` and ``input_time_share``; return the InputBudget."""
        drops = declare(self, DROP_ON_OVERLOAD, True, bool,
                        'drop input messages beyond input_time_share while the executor '
                        'falls behind, so parameter and service calls are answered under '
                        'overload (false: never drop; input and calls queue, as in a relay)',
                        read_only=True)
        share = declare(self, INPUT_SHARE, DEFAULT_SHARE, float,
                        'largest share of wall time spent on input messages; input beyond it '
                        'is dropped and counted (dropped_overload). The node lowers the share '
                        'by itself while its executor falls behind, so parameter and service '
                        'calls are answered under overload (only with drop_on_overload)',
                        constraints='0 < value <= 1')
        reason = share_error(share)
        if reason:
            raise StartupError(f'{INPUT_SHARE} {reason}')
        self._budget = InputBudget(share, drops=drops)
        # The budget owns its parameter: the nodes' own callbacks never see to it.
        self.add_on_set_parameters_callback(self._validate_share)
        self.add_post_set_parameters_callback(self._apply_share)
        if drops:
            probe = self.create_timer(PROBE_PERIOD, self._budget.probe,
                                      clock=Clock(clock_type=ClockType.STEADY_TIME))
            self._budget.on_demand(probe.reset, probe.cancel)     # runs under load only
        return self._budget

    def _validate_share(self, params):
        """On-set callback of ``input_time_share``: refuse an invalid value with the reason."""
        for param in params:
            if param.name == INPUT_SHARE:
                reason = share_error(param.value)
                if reason:
                    return SetParametersResult(successful=False, reason=f'{INPUT_SHARE} {reason}')
        return SetParametersResult(successful=True)

    def _apply_share(self, params):
        """Post-set callback of ``input_time_share``: the budget takes the new ceiling."""
        for param in params:
            if param.name == INPUT_SHARE:
                self._budget.max_share = param.value

    def _overload_warning(self):
        """Log and return a warning if input was dropped since the last call ('' if not)."""
        dropped = self._budget.dropped
        new, self._dropped_reported = dropped - self._dropped_reported, dropped
        if not new:
            return ''
        warning = (f'input overload: {new} messages dropped since the last report to keep '
                   f'up (share of time for input now {self._budget.share:.2f})')
        self.get_logger().warning(warning)
        return warning

    def _configured(self):
        """Return True once the node has a robot (from its file or a robot_description)."""
        raise NotImplementedError

    def _create_trigger(self, name, action):
        """
        Create a std_srvs/Trigger service answered by ``action()``: ``(success, message)``.

        Refused with 'no configuration yet' while the node has no robot.
        """
        def callback(request, response):
            if not self._configured():
                response.success, response.message = False, 'no configuration yet'
            else:
                response.success, response.message = action()
            return response
        return self.create_service(Trigger, name, callback)

    def _set_joint_values(self, names, field, values):
        """Set ``joints.<name>.<field>`` of every joint at once; return (success, reason)."""
        result = self.set_parameters_atomically([
            Parameter(f'joints.{name}.{field}', Parameter.Type.DOUBLE, float(value))
            for name, value in zip(names, values)])
        return result.successful, result.reason

    def _replace_parameters(self, old_names, values, descriptions):
        """Make the declared per-robot parameters exactly ``values`` (a new configuration)."""
        self._syncing = True
        try:
            for name in set(old_names) - set(values):
                self.undeclare_parameter(name)
            for name, value in values.items():
                if name in old_names:
                    self.set_parameters([Parameter(name, value=value)])
                else:
                    kind = ('double_array' if isinstance(value, list) else
                            str if isinstance(value, str) else float)
                    # The new configuration's own value: parameters show what is in force.
                    self.declare_parameter(name, value, descriptor(kind, descriptions[name]),
                                           ignore_override=True)
        finally:
            self._syncing = False
