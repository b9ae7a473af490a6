"""
The joint state the bridge last published, as arrays: what goals and impedance follow.

:class:`Measured` keeps the positions and velocities of every joint (set order, NaN until
published) from each joint_states the bridge publishes (bytes on the fast route, a message on
the typed one), read once per message however many followers read it (:meth:`update` with
the message's sequence number), and which joints that message carried. For a set without
linkages the joint state is an affine map of the motors' (the state side's values): it is
mapped again from them, which costs less than decoding the message (the same numbers).
"""

import numpy as np
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState


class Measured:
    """Latest published joint positions and velocities (module docstring)."""

    def __init__(self):
        self.position = self.velocity = np.zeros(0)
        self.present = np.zeros(0, dtype=bool)     # the joints the last message carried
        self._index, self._columns, self._seq, self._tset = {}, {}, None, None

    def configure(self, tset):
        """Start over for ``tset``'s joints (nothing measured)."""
        self._tset = tset if tset.linear else None
        self._index = tset.joint_index
        self.position = np.full(tset.num_joints, np.nan)
        self.velocity = np.full(tset.num_joints, np.nan)
        self.present = np.zeros(tset.num_joints, dtype=bool)
        self._columns, self._seq = {}, None

    def update(self, out, seq, states=None):
        """
        Take joint_states ``out`` (bytes or a message), numbered ``seq``: once per message.

        ``states``: the state side (:class:`.state.ActuatorStates`) that published it.
        """
        if seq == self._seq:
            return
        self._seq = seq
        tset = self._tset
        if tset is not None and states is not None:
            kept = states.last_kept
            values = states.values
            self.position[:] = tset.actuator_to_joint('position', values[0])
            velocity = tset.actuator_to_joint('velocity', values[1])
            known = ~np.isnan(velocity)
            self.velocity[known] = velocity[known]
            self.present[:] = kept is None
            if kept is not None:
                self.present[kept] = True
            return
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
