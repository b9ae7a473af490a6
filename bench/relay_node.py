"""The floor for latency benchmarks: an rclpy node that republishes each JointState unchanged.

Same QoS as the node it stands in for (``STREAM_IN`` in, reliable depth 10 out) and
the same process entry and executor as the package's nodes. A second pair,
``input2`` -> ``output2``, stands in for the bridge's second path in a chain
(joint_commands -> actuator_commands); unremapped, nothing uses it.

``--raw`` (before ``--ros-args``): the second floor, a relay that takes each message's
bytes and publishes them as they are (no decoding, no message objects).
``--composed``: two relays, ``relay_a`` and ``relay_b``, in one process on one executor (the
floor of ``robot_stack``; remap each by its name, ``relay_a:input:=...``).
"""

import sys

from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from transmission_bridge.ros.configurable import STREAM_IN
from transmission_bridge.ros.node_main import run_node, run_nodes


class Relay(Node):
    """Republish ``input`` on ``output`` and ``input2`` on ``output2``."""

    NODE_NAME = 'relay'

    RAW = False

    def __init__(self, name=None):
        super().__init__(name or self.NODE_NAME)
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        for suffix in ('', '2'):
            pub = self.create_publisher(JointState, 'output' + suffix, reliable)
            self.create_subscription(JointState, 'input' + suffix, pub.publish,
                                     STREAM_IN, raw=self.RAW)


class RawRelay(Relay):
    """The same, on bytes."""

    RAW = True


def _named(cls, name):
    """Return ``cls`` made as a node called ``name``."""
    return type(f'{cls.__name__}_{name}', (cls,), {'NODE_NAME': name})


if __name__ == '__main__':
    flags = {f for f in ('--raw', '--composed') if f in sys.argv}
    for flag in flags:
        sys.argv.remove(flag)
    kind = RawRelay if '--raw' in flags else Relay
    if '--composed' in flags:
        sys.exit(run_nodes([_named(kind, 'relay_a'), _named(kind, 'relay_b')]))
    sys.exit(run_node(kind))
