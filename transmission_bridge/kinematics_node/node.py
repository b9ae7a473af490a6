"""
The ``kinematics`` node: joint states in; gravity and damping torques, poses and energy out.

ROS wiring only: parameters, publishers, subscriptions, services. What happens to a
joint_states message is the core's (:mod:`.core`), its outputs' (:mod:`.messages`) and,
for a steady stream, the fast path's (:mod:`.fast`). Topics, parameters and services are
listed in doc/nodes.md (tables generated from here). Efforts published here are torques a
controller **applies**: ``~/gravity_torques`` holds the pose against gravity (``-tau_g``),
``~/passive_torques`` adds damping compensation (``-tau_g + b v``).

TF as robot_state_publisher publishes it: ``/tf`` with one parent -> child transform per
movable joint (mimic and screw joints included) stamped with the joint_states stamp,
``/tf_static`` (transient local) with the fixed joints, again whenever the model changes;
link names as frame ids behind ``frame_prefix``. The other outputs are in ``base_frame`` as
TF names it (the root link for 'world' in a URDF), behind the same prefix. Given a URDF,
the node also publishes it on ``robot_description`` (transient local). Without tf2_msgs (a
bare pip install) the node runs with one warning that TF is off.
"""

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseArray, PoseStamped
from rcl_interfaces.msg import SetParametersResult
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64, Header, String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from .core import KinematicsCore
from .due import OutputsDue, TfRate
from .dynamics import assumed, motor_transmissions, warm_up_dynamics
from .fast import JointStatesRelay
from .messages import TFMessage, TypedOutputs
from .settings import (BASE_FRAME, FEED_FORWARD, FRAME_PREFIX, HELP, MODEL_FILE, OUTPUTS,
                       PUBLISH_EVERY, PUBLISH_FREQUENCY, SETTINGS, SOURCE_HELP, STALE_TIMEOUT,
                       TIP_LINKS, TRANSMISSIONS_FILE)
from ..kinematics import load_model, ModelError
from ..kinematics import parameters as kparams
from ..messages.named_input import report_input, seconds_to_ns
from ..ros.assumed_transmissions import AssumedTransmissions
from ..ros.configurable import ConfigurableNode, LATCHED, RELIABLE_10, STREAM_IN
from ..ros.conversions import (doubles, name_values, now_ns_function, stamp_to_ns,
                               transform_msgs)
from ..ros.diagnostics import diagnostics
from ..ros.node_main import exit_with, run_node
from ..ros.robot_parameters import RobotParameters
from ..ros.settings import declare_settings, refusal

# What tf2_ros' broadcasters offer: /tf reliable with a deep queue, /tf_static latched.
TF_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
TF_STATIC_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                           durability=DurabilityPolicy.TRANSIENT_LOCAL)


class KinematicsNode(ConfigurableNode):
    """Publishes gravity/damping compensation, poses and energy for each joint_states."""

    NODE_NAME = 'kinematics'
    HELP = HELP
    CONFIG_ERROR = ModelError

    def __init__(self, **kwargs):
        super().__init__(self.NODE_NAME, **kwargs)
        sources = self._declare_sources(MODEL_FILE, *SOURCE_HELP)
        self._path = sources.path
        own = declare_settings(self, SETTINGS)
        base, tips, self._prefix = own[BASE_FRAME], own[TIP_LINKS], own[FRAME_PREFIX]
        self._stale_ns = seconds_to_ns(own[STALE_TIMEOUT])
        self._now_ns = now_ns_function(self.get_clock())
        self._mode = own[FEED_FORWARD]
        self._transmissions_file = own[TRANSMISSIONS_FILE]
        self._next_transmissions = None         # found by _load, taken by _configure
        period = self._declare_diagnostics_period()
        budget = self._declare_input_budget()
        self._fast_path = self._declare_fast_path()
        self._relay = self._typed = None        # per model: the fast and the typed outputs
        self._typed_count = 0                   # messages the typed route took
        due = ([own[f'{PUBLISH_EVERY}.{name}'] for name in OUTPUTS], own[PUBLISH_FREQUENCY])
        self._source = sources.label
        self._base = base
        self._tip_names = tips
        self._core = None
        self._robot = RobotParameters(self, kparams, ModelError)
        self._assumed = AssumedTransmissions(self, 'kinematics node')
        self._outputs_to = None                 # made below, before any output is
        if sources.given:
            model = self._start_with(sources.given)
            self._refuse_unknown_overrides(('joints', PUBLISH_EVERY))
        self.add_on_set_parameters_callback(self._validate_parameters)
        self.add_post_set_parameters_callback(self._apply_parameters)

        self._gravity_pub = self.create_publisher(JointState, '~/gravity_torques', RELIABLE_10)
        self._passive_pub = self.create_publisher(JointState, '~/passive_torques', RELIABLE_10)
        self._poses_pub = self.create_publisher(PoseArray, '~/body_poses', RELIABLE_10)
        self._tip_pubs = [self.create_publisher(PoseStamped, f'~/{t}/pose', RELIABLE_10)
                          for t in self._tip_names]
        self._energy_pub = self.create_publisher(Float64, '~/potential_energy', RELIABLE_10)
        self._tf_pub = self._tf_static_pub = None
        if TFMessage is None:
            self.get_logger().warning('tf2_msgs is not installed: TF is off (/tf and '
                                      '/tf_static are not published); install ros-jazzy-tf2-msgs')
        else:
            self._tf_pub = self.create_publisher(TFMessage, '/tf', TF_QOS)
            self._tf_static_pub = self.create_publisher(TFMessage, '/tf_static', TF_STATIC_QOS)
        # Given a URDF, publish it as robot_state_publisher does (not when following it).
        self._description_pub = None
        self._description = sources.description or (
            self._read_urdf(self._path) if self._path.endswith(('.urdf', '.xml')) else '')
        if self._description and not sources.use_topic:
            self._description_pub = self.create_publisher(String, 'robot_description', LATCHED)
            self._description_pub.publish(String(data=self._description))
        self._traj_pub = self.create_publisher(JointTrajectory, '~/trajectory_out', RELIABLE_10)
        self._default_pub = self.create_publisher(JointState, '~/default_joint_states',
                                                  RELIABLE_10)
        self._diag_pub = self.create_publisher(DiagnosticArray, '/diagnostics', RELIABLE_10)
        # Raw: a message dropped by the budget is never decoded (ros/input_budget.py).
        self.create_subscription(JointState, 'joint_states', budget.wrap(self._publish_outputs),
                                 STREAM_IN, raw=True)
        self.create_subscription(JointTrajectory, '~/trajectory_in', self._on_trajectory,
                                 RELIABLE_10)
        self._create_trigger('~/set_default_pose_from_current', self._set_default)
        self._create_trigger('~/reset_default_pose', lambda: self._restore(
            kparams.DEFAULT_POSITION, 'default pose'))
        self._create_trigger('~/reset_damping', lambda: self._restore(kparams.DAMPING,
                                                                      'damping'))
        self._create_trigger('~/go_to_default_pose', self._go_to_default)
        self.create_timer(period, self._publish_diagnostics)
        self._outputs_to = (self._gravity_pub, self._passive_pub, self._poses_pub,
                            self._tip_pubs, self._energy_pub, self._tf_pub)
        self._due = OutputsDue(*due, self._outputs_to)     # what each input publishes
        self._follow(sources, self._core is not None)
        if self._core is not None:
            self._outputs_changed()
            self.get_logger().info(
                f'{self._describe(model)} from {self._source}; outputs in '
                f'{self._core.output_frame(self._prefix)!r}; {model.kernels} kernels ready in '
                f'{self._core.warm_up_seconds:.2f} s'
                f'{f" (compiled {model.kernels_compiled})" * bool(model.kernels_compiled)}')
            self._loaded(self._source_config)

    def _configured(self):
        return self._core is not None

    def _forget_inputs(self):
        if self._core is not None:
            self._core.reset()

    def _read_urdf(self, path):
        with open(path, encoding='utf-8') as stream:      # loaded already: it exists
            return stream.read()

    # --- configuration -----------------------------------------------------------
    def _load(self, source):
        model = self._checked(load_model(source))
        self._next_transmissions = motor_transmissions(model, source, self._transmissions_file,
                                                       self.get_logger().warning)
        return model

    def _config(self):
        return self._core and self._core.model

    @staticmethod
    def _describe(model):
        return (f'model {model.name!r}: {len(model.body_names)} bodies, '
                f'{model.num_positions} joints')

    def _configure(self, model):
        if self._core is None:
            self._core = KinematicsCore(model, self._base)
            self._core.stale_ns, self._core.now_ns = self._stale_ns, self._now_ns
            self._core.feed_forward_mode = self._mode
        else:
            self._core.set_model(model)
        if self._next_transmissions is not None:     # a new source: its transmissions
            self._core.transmissions = self._next_transmissions or None
            self._next_transmissions = None
        if self._mode == 'inverse_dynamics':
            warm_up_dynamics(model)
        self._assumed.state(*assumed(self._mode, self._transmissions_file,
                                     self._core.transmissions))
        if self._outputs_to is not None:        # (at start-up: once they exist)
            self._outputs_changed()

    def _loaded(self, model):
        """Log what the loader assumed (once per model) and publish the fixed joints' TF."""
        super()._loaded(model)
        if self._tf_static_pub is None:
            return
        pairs = self._core.transform_frames(self._prefix, moving=False)
        header = Header(stamp=self.get_clock().now().to_msg())
        self._tf_static_pub.publish(TFMessage(transforms=transform_msgs(
            pairs, self._core.static_transform_rows(), header)))

    def _checked(self, model):
        """Return ``model`` if base_frame is a frame and tip_links bodies of it, else raise."""
        try:
            model.frame_index(self._base)
        except ModelError as exc:
            raise ModelError(f'{BASE_FRAME}: {exc}') from None
        unknown = [t for t in self._tip_names if t not in model.body_names]
        if unknown:
            raise ModelError(f'{TIP_LINKS}: unknown bodies {unknown}')
        return model

    def _validate_parameters(self, params):
        """On-set callback: build the would-be model; refuse with the reason."""
        if self._syncing:
            return SetParametersResult(successful=True)
        reason = refusal(SETTINGS, params) or self._robot.validate(
            params, self._core and self._core.model)
        return SetParametersResult(successful=not reason, reason=reason)

    def _apply_parameters(self, params):
        """Post-set callback: the validated model takes effect; coupled values follow."""
        for p in params:
            if p.name.startswith(PUBLISH_EVERY + '.'):
                self._due.set_every(OUTPUTS.index(p.name.split('.', 1)[1]), p.value)
            elif p.name == PUBLISH_FREQUENCY:
                self._due.tf_rate = TfRate(p.value)
            elif p.name == FEED_FORWARD:
                self._mode = p.value
                if self._core is not None:
                    self._core.feed_forward_mode = p.value
                    if p.value == 'inverse_dynamics':
                        warm_up_dynamics(self._core.model)
                    self._assumed.state(*assumed(p.value, self._transmissions_file,
                                                 self._core.transmissions))
            elif p.name == STALE_TIMEOUT:
                self._stale_ns = seconds_to_ns(p.value)
                if self._core is not None:
                    self._core.stale_ns = self._stale_ns
        model = None if self._syncing else self._robot.take()
        if model is None:
            return
        self._configure(model)
        self._robot.show(model)                 # a screw's rotation and translation agree

    # --- topics ------------------------------------------------------------------
    def _outputs_changed(self):
        """Make the outputs (fast and typed) again for the model in force."""
        core = self._core
        model = core.model
        publishers = self._outputs_to
        tips = [model.body_names.index(t) for t in self._tip_names]
        frame_id, tf_frames = core.output_frame(self._prefix), core.transform_frames(self._prefix)
        self._relay = JointStatesRelay(core, publishers, tips, self._due, frame_id, tf_frames)
        self._typed = TypedOutputs(core, publishers, tips, frame_id, tf_frames)

    def _publish_outputs(self, data):
        """Subscription callback: publish every output of one joint_states message."""
        for publisher, out in self.joint_states(data):
            publisher.publish(out)

    def joint_states(self, data):
        """Return ``[(publisher, message or bytes)]`` for one joint_states message."""
        relay = self._relay
        if relay is None:                       # no model yet
            return ()
        sent = relay.take(data)
        if sent is not None:
            return sent
        core = self._core
        self._typed_count += 1
        msg = deserialize_message(data, JointState)
        stamp_ns = stamp_to_ns(msg.header.stamp)
        out = core.ingest(msg.name, msg.position, msg.velocity, stamp_ns, self._now_ns())
        report_input(self.get_logger(), 'joint_states', 'joint', core.last_new_unknown,
                     core.last_reason if out is None else '')
        if self._fast_path:
            relay.learn(data, msg)
        if out is not None and core.stale_joints:
            self.get_logger().warning(
                f'stale joints {", ".join(core.stale_joints)}: torques, poses and energy '
                'withheld, /tf of the others only', throttle_duration_sec=5.0)
            return self._typed.messages(out, msg.header, self._due(stamp_ns),
                                        fresh=core.fresh_frames())
        return () if out is None else self._typed.messages(out, msg.header, self._due(stamp_ns))

    def _on_trajectory(self, msg):
        points = msg.points
        if self._core is None:
            self.get_logger().error('trajectory_in rejected: no model yet')
            return
        try:
            effort = self._core.feed_forward(msg.joint_names, [p.positions for p in points],
                                             [p.velocities for p in points],
                                             [p.accelerations for p in points])
        except ModelError as exc:
            self.get_logger().error(f'trajectory_in rejected: {exc}')
            return
        out = JointTrajectory(header=msg.header, joint_names=list(msg.joint_names))
        for p, e in zip(points, effort):
            out.points.append(JointTrajectoryPoint(
                positions=p.positions, velocities=p.velocities, accelerations=p.accelerations,
                effort=doubles(e), time_from_start=p.time_from_start))
        self._traj_pub.publish(out)

    # --- services ----------------------------------------------------------------
    def _set_default(self):
        core = self._core
        if not core.received_any:
            return False, 'no joint_states received yet'
        q, _ = core.configuration
        ok, reason = self._set_joint_values(core.model.joint_names, kparams.DEFAULT_POSITION, q)
        return ok, name_values(core.model.joint_names, q) if ok else f'refused: {reason}'

    def _restore(self, field, what):
        """Set every joint's ``field`` back to the source model's values."""
        values = [getattr(j, field) for j in self._source_config.joints]
        ok, reason = self._set_joint_values(self._core.model.joint_names, field, values)
        return ok, f'{what} restored from {self._source}' if ok else reason

    def _go_to_default(self):
        model = self._core.model
        msg = JointState(name=list(model.joint_names), position=doubles(model.default_positions))
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.header.frame_id = self._core.output_frame(self._prefix)
        self._default_pub.publish(msg)
        return True, 'published the default pose on ~/default_joint_states'

    # --- diagnostics -------------------------------------------------------------
    def _publish_diagnostics(self):
        counters = self._core.counters.as_dict() if self._core else {}
        overload = self._overload_warning()
        received = self._core.counters.received if self._core else 0
        routes = {'messages_fast': received - self._typed_count,       # all taken but those
                  'messages_typed': self._typed_count}
        stale = self._core.stale_joints if self._core else ()
        warning = '; '.join(([overload] if overload else []) + (
            [f'stale joints (torques withheld): {", ".join(stale)}'] if stale else []))
        self._diag_pub.publish(diagnostics(
            self.get_clock().now().to_msg(), f'{self.get_name()}: joint states', self._source,
            counters, warning=warning if self._core else 'waiting for a robot_description',
            extra={'dropped_overload': self._budget.dropped, 'stale_joints': ','.join(stale),
                   **routes}))


def main(args=None):
    """Entry point of the ``kinematics`` executable."""
    exit_with(run_node(KinematicsNode, args))


if __name__ == '__main__':
    main()
