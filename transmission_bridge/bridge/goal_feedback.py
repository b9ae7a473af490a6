"""
A running goal's messages: ROS wiring of :class:`..control.following.Execution`'s steps.

The action's feedback and the ``controller_state`` topic, as joint_trajectory_controller
fills them: the desired, measured and error points at the time along the trajectory.
Imported with :mod:`.goal_servers` (control_msgs present).
"""

from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTrajectoryControllerState
from trajectory_msgs.msg import JointTrajectoryPoint


def feedback_messages(joints, last, stamp):
    """
    Return ``(feedback, controller_state)`` of an execution's ``last`` step, stamped ``stamp``.

    ``last`` is ``(t, desired, actual, error)``: the time along the trajectory, then (p, v, a)
    desired and (p, v) measured and error, in the order of ``joints``.
    """
    t, desired, actual, error = last
    feedback = FollowJointTrajectory.Feedback()
    feedback.header.stamp = stamp
    feedback.joint_names = list(joints)
    feedback.desired = _point(desired[0], desired[1], desired[2], t)
    feedback.actual = _point(actual[0], actual[1], None, t)
    feedback.error = _point(error[0], error[1], None, t)
    state = JointTrajectoryControllerState()
    state.header.stamp = stamp
    state.joint_names = feedback.joint_names
    state.reference = feedback.desired
    state.feedback, state.error = feedback.actual, feedback.error
    state.speed_scaling_factor = 1.0
    return feedback, state


def seconds(duration):
    """Return a builtin_interfaces Duration in seconds."""
    return duration.sec + duration.nanosec * 1e-9


def _point(p, v, a, t):
    point = JointTrajectoryPoint(positions=[float(x) for x in p],
                                 velocities=[float(x) for x in v])
    if a is not None:
        point.accelerations = [float(x) for x in a]
    point.time_from_start.sec = int(t // 1)
    point.time_from_start.nanosec = int((t % 1) * 1e9)
    return point
