"""Conversions between ROS messages and the arrays the libraries take."""

import array
import time

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Pose, TransformStamped
import numpy as np
from rclpy.clock import JumpThreshold, ROSClock
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint


def stamp_to_ns(stamp):
    """Return a builtin_interfaces/Time as integer nanoseconds."""
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def ns_to_stamp(ns):
    """Return integer nanoseconds as a builtin_interfaces/Time."""
    sec, nanosec = divmod(int(ns), 1_000_000_000)
    return Time(sec=sec, nanosec=nanosec)


def now_ns_function(clock):
    """
    Return a function giving ``clock``'s time in integer nanoseconds, for per-message use.

    ``Clock.now()`` builds a ``Time`` object (microseconds on a slow machine). A ROS-time
    clock that is not overridden (no ``use_sim_time``) reads the system clock, as
    ``time.time_ns()`` does (CLOCK_REALTIME), so that is what the function reads until
    ROS time is activated; it follows the clock from then on (rclpy calls back on every
    activation and deactivation). Other clocks are read through rcl.
    """
    handle = getattr(clock, '_Clock__clock', None)
    if handle is not None and hasattr(handle, 'get_now'):
        def rcl_now():
            with clock.handle:
                return handle.get_now().nanoseconds
    else:
        def rcl_now():
            return clock.now().nanoseconds
    if not isinstance(clock, ROSClock):
        return rcl_now
    simulated = [clock.ros_time_is_active]
    system_now = time.time_ns

    def follow(_jump):
        simulated[0] = clock.ros_time_is_active

    jumps = clock.create_jump_callback(
        JumpThreshold(min_forward=None, min_backward=None, on_clock_change=True),
        post_callback=follow)

    def now_ns():
        return rcl_now() if simulated[0] else system_now()
    now_ns.jump_handle = jumps          # the callback lives as long as the function
    return now_ns


def doubles(values):
    """Return a float64 numpy array (or None) as an ``array('d')`` a message field takes fast."""
    if values is None:
        return array.array('d')
    return array.array('d', values.tobytes())


def poses_to_msgs(X):
    """Return geometry_msgs/Pose messages for homogeneous transforms ``X`` (n, 4, 4)."""
    # Here, not at the top: the bridge imports this module and needs no kinematics library.
    from ..kinematics.spatial import pose_rows
    poses = [Pose() for _ in range(len(X))]
    fill_poses(poses, pose_rows(X))
    return poses


def fill_poses(poses, rows):
    """Write rows ``x, y, z, qx, qy, qz, qw`` (n, 7) into existing Pose messages."""
    for pose, (x, y, z, qx, qy, qz, qw) in zip(poses, rows.tolist()):
        position, orientation = pose.position, pose.orientation
        position.x, position.y, position.z = x, y, z
        orientation.x, orientation.y, orientation.z, orientation.w = qx, qy, qz, qw


def name_values(names, values):
    """Return ``'a=0.1, b=-0.2'`` with plain floats (never ``np.float64(...)``) for answers."""
    return ', '.join(f'{name}={float(value)!r}' for name, value in zip(names, values))


def transform_msgs(pairs, rows, header):
    """
    Return geometry_msgs/TransformStamped messages, one per ``(parent, child)`` pair.

    ``rows``: x, y, z, qx, qy, qz, qw per pair; every message gets ``header``'s stamp.
    """
    out = []
    for (parent, child), row in zip(pairs, np.asarray(rows, dtype=float).tolist()):
        t = TransformStamped(child_frame_id=child)
        t.header.stamp, t.header.frame_id = header.stamp, parent
        tr, rot = t.transform.translation, t.transform.rotation
        tr.x, tr.y, tr.z, rot.x, rot.y, rot.z, rot.w = row
        out.append(t)
    return out


class ReusedJointState:
    """One output's JointState message, reused while the names stay (publish copies it out)."""

    __slots__ = ('_msg', '_names')

    def __init__(self):
        self._msg = None
        self._names = None

    def fill(self, out, header):
        """Return the message carrying ``out`` (names, position, velocity, effort), ``header``."""
        if self._names is not out.names:        # the core's cached tuple: same names
            self._msg = JointState(name=list(out.names))
            self._names = out.names
        msg = self._msg
        msg.header = header
        msg.position = doubles(out.position)
        msg.velocity = doubles(out.velocity)
        msg.effort = doubles(out.effort)
        return msg


def trajectory_msg(header, names, fields, times_from_start):
    """
    Return a JointTrajectory: ``fields`` are (positions, velocities, accelerations, efforts).

    Each field is (points, len(names)) or None (empty in every point).
    """
    out = JointTrajectory(header=header, joint_names=list(names))
    pos, vel, acc, eff = fields
    for k, time_from_start in enumerate(times_from_start):
        out.points.append(JointTrajectoryPoint(
            positions=doubles(None if pos is None else pos[k]),
            velocities=doubles(None if vel is None else vel[k]),
            accelerations=doubles(None if acc is None else acc[k]),
            effort=doubles(None if eff is None else eff[k]),
            time_from_start=time_from_start))
    return out


class TypedJointStates:
    """
    The typed route's decoding and message building, for a core that imports no ROS.

    ``decode(data)``: a serialized JointState as its message; ``joint_states`` and
    ``commands`` fill one reused JointState each (names, position, velocity, effort of a
    core's output, and a header); ``trajectory`` builds a JointTrajectory
    (:func:`trajectory_msg`).
    """

    def __init__(self):
        from rclpy.serialization import deserialize_message
        self._deserialize = deserialize_message
        self._states, self._commands = ReusedJointState(), ReusedJointState()

    def decode(self, data):
        """Return the JointState serialized in ``data``."""
        return self._deserialize(data, JointState)

    def joint_states(self, out, header):
        """Return the joint_states message of a core's output ``out``."""
        return self._states.fill(out, header)

    def commands(self, out, header):
        """Return the actuator_commands message of a core's output ``out``."""
        return self._commands.fill(out, header)

    @staticmethod
    def trajectory(header, names, fields, times_from_start):
        """Return the actuator_trajectory message (:func:`trajectory_msg`)."""
        return trajectory_msg(header, names, fields, times_from_start)
