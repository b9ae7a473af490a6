"""
The bridge's output encoders on ROS: ``~/deflections`` and what is said of them.

At every joint_states published (a follower of the routes, :mod:`..mapping.routes`), a robot
with output encoders gets ``~/deflections`` (sensor_msgs/JointState: the actuators' names,
position = each one's deflection ``x_o - x_a / n_a``, NaN where its output encoder is not in
use; velocity its rate; effort the motor's own torque through its gear, ``n_a τ_a`` from its
current, beside a spring's in joint_states; the state's stamp), and the log says once when
an output encoder goes stale (the motor's encoder is used) and when it is back. The law and
the trip: :mod:`..mapping.outputs`.
"""

from sensor_msgs.msg import JointState

from ..ros.configurable import RELIABLE_10


class Deflections:
    """``~/deflections`` of a bridge node (module docstring); nothing without output encoders."""

    def __init__(self, node, routes):
        self._node, self._routes = node, routes
        self._pub = self._msg = None

    def configure(self, states):
        """Follow ``states`` (a new configuration): publish while it has output encoders."""
        outputs = states.outputs
        if outputs is None:
            self._routes.follow('deflections', None)
            return
        if self._pub is None:
            self._pub = self._node.create_publisher(JointState, '~/deflections', RELIABLE_10)
        self._msg = JointState(name=list(outputs.actuators))
        self._routes.follow('deflections', self.on_joint_state)

    def on_joint_state(self, out):
        """Publish the deflections of the state ``out`` just published; say what changed."""
        outputs, msg = self._routes.states.outputs, self._msg
        if outputs is None or msg is None:
            return None
        if isinstance(out, bytes):
            from rclpy.serialization import deserialize_message
            out = deserialize_message(out, JointState)
        msg.header = out.header
        msg.position = outputs.deflection.tolist()
        msg.velocity = outputs.rate.tolist()
        msg.effort = outputs.motor_torque.tolist()
        self._pub.publish(msg)
        log = self._node.get_logger()
        for name, what in outputs.changes:
            if what == 'stale':
                log.warning(f"output encoder {name!r} is stale: its joint follows the motor's "
                            'encoder until it is back')
            else:
                log.info(f'output encoder {name!r} is back: its joint follows it again')
        outputs.changes.clear()
        return None
