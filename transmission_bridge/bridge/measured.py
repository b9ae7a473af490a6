"""
The joint state the bridge last published, as arrays: what goals and impedance follow.

:class:`Measured` keeps the positions and velocities of every joint (set order, NaN until
published) from each joint_states the bridge publishes (bytes on the fast route, a message on
the typed one), decoded once per message however many followers read it (:meth:`update`
with the message's sequence number), and which joints that message carried.
"""

import numpy as np
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState


class Measured:
    """Latest published joint positions and velocities (module docstring)."""

    def __init__(self):
        self.position = self.velocity = np.zeros(0)
        self.present = np.zeros(0, dtype=bool)     # the joints the last message carried
        self._index, self._columns, self._seq = {}, {}, None

    def configure(self, tset):
        """Start over for ``tset``'s joints (nothing measured)."""
        self._index = tset.joint_index
        self.position = np.full(tset.num_joints, np.nan)
        self.velocity = np.full(tset.num_joints, np.nan)
        self.present = np.zeros(tset.num_joints, dtype=bool)
        self._columns, self._seq = {}, None

    def update(self, out, seq):
        """Take joint_states ``out`` (bytes or a message), numbered ``seq``: once per message."""
        if seq == self._seq:
            return
        self._seq = seq
        msg = deserialize_message(out, JointState) if isinstance(out, bytes) else out
        names = tuple(msg.name)
        cols = self._columns.get(names)
        if cols is None:
            found = np.array([self._index.get(n, -1) for n in names], dtype=np.intp)
            cols = self._columns[names] = (found >= 0, found[found >= 0])
        mine, idx = cols
        self.position[idx] = np.asarray(msg.position)[mine]
        if len(msg.velocity) == len(names):
            self.velocity[idx] = np.asarray(msg.velocity)[mine]
        self.present[:] = False
        self.present[idx] = True
