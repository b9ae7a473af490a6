"""
Each node states the transmissions it assumes; a node that assumes others is warned at start.

The kinematics node's feed-forward carries the rotors of ideal stages and the bridge's
commanded law adds the rest (:func:`~transmission_bridge.transmissions.effort_law.joint_side`):
each term is counted once only if both read the same transmissions. Both publish on
``transmissions_assumed`` (std_msgs/String, latched: a node started later still hears it)
one line, ``<node> | <file> | <terms>`` (:func:`~transmission_bridge.transmissions.
effort_law.joint_side_terms`), and each warns once, naming both files, when another node in
its namespace states other terms. Nodes in other namespaces never meet here.
"""

from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

TOPIC = 'transmissions_assumed'
# Latched, and deep enough for every node's statement: a reader keeping one sample (all
# writers share the topic's one instance) would lose the others' to its own.
STATEMENTS = QoSProfile(depth=16, reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.TRANSIENT_LOCAL)
_SEP = ' | '


class AssumedTransmissions:
    """A node's statement of its transmissions, and the check of the others' (module doc)."""

    def __init__(self, node, role):
        self._node, self._role = node, role
        self._mine = None
        self._heard = {}
        self._warned = set()
        self._pub = node.create_publisher(String, TOPIC, STATEMENTS)
        node.create_subscription(String, TOPIC, self._on_statement, STATEMENTS)

    def state(self, source, terms):
        """Say that this node assumes ``terms`` from ``source`` (a file, or '' for none)."""
        if terms is None:
            return                  # nothing to say (a feed-forward without rotors' terms)
        self._mine = (source or 'no transmissions', terms)
        self._warned.clear()
        self._pub.publish(String(data=_SEP.join(
            (self._node.get_fully_qualified_name(), self._role, *self._mine))))
        for other, said in list(self._heard.items()):
            self._compare(other, *said)

    def _on_statement(self, msg):
        parts = msg.data.split(_SEP)
        if len(parts) != 4 or parts[0] == self._node.get_fully_qualified_name():
            return
        other, role, source, terms = parts
        self._heard[other] = (role, source, terms)
        self._compare(other, role, source, terms)

    def _compare(self, other, role, source, terms):
        mine = self._mine
        if mine is None or terms == mine[1] or (other, terms) in self._warned:
            return
        self._warned.add((other, terms))
        self._node.get_logger().warning(
            f'{role} {other} assumes the transmissions of {source} ({terms}); this '
            f'{self._role} assumes {mine[0]} ({mine[1]}): the rotors of ideal stages would '
            'be counted twice or not at all. Give both nodes the same transmissions_file '
            '(the kinematics node its feed-forward, the bridge its law)')
