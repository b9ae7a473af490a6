"""
The kinematics node's outputs as message objects: the typed route, and the reference.

The node's fast route (:mod:`.fast`) writes the same outputs into byte templates; for the
same input both give the same bytes (test_fast_path.py).
"""

from geometry_msgs.msg import PoseArray, PoseStamped
import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64

from ..ros.conversions import doubles, fill_poses, poses_to_msgs, transform_msgs

try:                                    # from the ROS install (here: ../shared/wheelhouse)
    from tf2_msgs.msg import TFMessage
except ImportError:                     # pragma: no cover - a bare pip install
    TFMessage = None


class TypedOutputs:
    """
    The messages published for each input, allocated once per model and refilled.

    ``publishers`` as :class:`.fast.JointStatesRelay` takes them; ``tips`` the tip bodies'
    indices; ``frame_id`` the outputs' frame; ``tf_frames`` the (parent, child) of /tf.
    """

    def __init__(self, core, publishers, tips, frame_id, tf_frames):
        model = core.model
        names = list(model.joint_names)
        self._core = core
        self._publishers = publishers
        self._tips = tips
        self._frame_id = frame_id
        self._tf_frames = tf_frames
        self._gravity = JointState(name=names)
        self._passive = JointState(name=names)
        self._poses = PoseArray(poses=poses_to_msgs(np.tile(np.eye(4),
                                                            (len(model.body_names), 1, 1))))
        self._tip_msgs = [PoseStamped() for _ in tips]
        self._energy = Float64()

    def messages(self, out, header, due, fresh=None):
        """
        Return ``[(publisher, message)]`` for one :class:`KinematicsOutput` ``out``.

        ``fresh`` (a mask of the /tf frames): some joints are stale; only /tf is published,
        of the frames whose joint is fresh.
        """
        header.frame_id = self._frame_id
        gravity, passive, poses, tips, energy, tf = due
        if fresh is not None:
            gravity = passive = poses = tips = energy = False
        gravity_pub, passive_pub, poses_pub, tip_pubs, energy_pub, tf_pub = self._publishers
        sent = []
        q = doubles(out.q)
        if gravity:
            self._gravity.header, self._gravity.position = header, q
            self._gravity.effort = doubles(out.holding)
            sent.append((gravity_pub, self._gravity))
        if passive:
            self._passive.header, self._passive.position = header, q
            self._passive.velocity = doubles(out.v)
            self._passive.effort = doubles(out.passive)
            sent.append((passive_pub, self._passive))
        pose_msgs = self._poses.poses
        if poses or (tips and self._tips):
            fill_poses(pose_msgs, self._core.pose_rows(np.empty((len(pose_msgs), 7))))
        if poses:
            self._poses.header = header
            sent.append((poses_pub, self._poses))
        if tips:
            for i, pub, tip in zip(self._tips, tip_pubs, self._tip_msgs):
                tip.header, tip.pose = header, pose_msgs[i]
                sent.append((pub, tip))
        if energy:
            self._energy.data = out.potential_energy
            sent.append((energy_pub, self._energy))
        if tf and tf_pub is not None and self._tf_frames:
            rows = self._core.transform_rows(np.empty((len(self._tf_frames), 7)))
            frames = self._tf_frames
            if fresh is not None:
                frames = [f for f, keep in zip(frames, fresh) if keep]
                rows = rows[fresh]
            if frames:
                sent.append((tf_pub, TFMessage(transforms=transform_msgs(frames, rows,
                                                                         header))))
        return sent
