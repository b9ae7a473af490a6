"""Conversions between ROS messages and the arrays the libraries take."""

import array

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, Pose, Quaternion

from ..kinematics.spatial import rotation_to_quaternion


def stamp_to_ns(stamp):
    """Return a builtin_interfaces/Time as integer nanoseconds."""
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def ns_to_stamp(ns):
    """Return integer nanoseconds as a builtin_interfaces/Time."""
    sec, nanosec = divmod(int(ns), 1_000_000_000)
    return Time(sec=sec, nanosec=nanosec)


def doubles(values):
    """Return a float64 numpy array (or None) as an ``array('d')`` a message field takes fast."""
    if values is None:
        return array.array('d')
    return array.array('d', values.tobytes())


def poses_to_msgs(X):
    """Return geometry_msgs/Pose messages for homogeneous transforms ``X`` (n, 4, 4)."""
    quats = rotation_to_quaternion(X[:, :3, :3]).tolist()
    points = X[:, :3, 3].tolist()
    return [Pose(position=Point(x=p[0], y=p[1], z=p[2]),
                 orientation=Quaternion(x=q[0], y=q[1], z=q[2], w=q[3]))
            for p, q in zip(points, quats)]
