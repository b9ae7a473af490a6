"""The floor for latency benchmarks: an rclpy node that republishes each JointState unchanged.

Same QoS as the node it stands in for (sensor-data in, reliable depth 10 out) and
the same process entry and executor as the package's nodes.
"""

import sys

from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from transmission_bridge.ros.node_main import run_node


class Relay(Node):
    """Republish ``input`` on ``output``."""

    NODE_NAME = 'relay'

    def __init__(self):
        super().__init__(self.NODE_NAME)
        self._pub = self.create_publisher(
            JointState, 'output', QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))
        self.create_subscription(JointState, 'input', self._pub.publish, qos_profile_sensor_data)


if __name__ == '__main__':
    sys.exit(run_node(Relay))
