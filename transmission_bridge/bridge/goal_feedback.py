"""
A running goal's messages: ROS wiring of :class:`..control.following.Execution`'s steps.

The action's feedback and the ``controller_state`` topic, as joint_trajectory_controller
fills them: the desired, measured and error points at the time along the trajectory.
Imported with :mod:`.goal_servers` (control_msgs present).
"""

from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTrajectoryControllerState


class FeedbackMessages:
    """
    One controller's feedback and ``controller_state``, made once and refilled at each tick.

    (Making the two anew cost some 250 µs, ten nested messages, at every tick of the action
    monitor: a state arriving meanwhile waited that long for its command.)
    """

    def __init__(self, joints):
        self.feedback = FollowJointTrajectory.Feedback(joint_names=list(joints))
        state = self.state = JointTrajectoryControllerState(
            joint_names=self.feedback.joint_names, speed_scaling_factor=1.0)
        # The same points in both: the controller's state is the feedback's, filled once.
        state.reference, state.feedback = self.feedback.desired, self.feedback.actual
        state.error = self.feedback.error

    def fill(self, last, stamp):
        """
        Return ``(feedback, controller_state)`` of an execution's ``last`` step at ``stamp``.

        ``last`` is ``(t, desired, actual, error)``: the time along the trajectory, then
        (p, v, a) desired and (p, v) measured and error, in the order of the joints.
        """
        t, desired, actual, error = last
        feedback = self.feedback
        feedback.header.stamp = self.state.header.stamp = stamp
        _fill(feedback.desired, desired[0], desired[1], desired[2], t)
        _fill(feedback.actual, actual[0], actual[1], None, t)
        _fill(feedback.error, error[0], error[1], None, t)
        return feedback, self.state


def seconds(duration):
    """Return a builtin_interfaces Duration in seconds."""
    return duration.sec + duration.nanosec * 1e-9


def _fill(point, p, v, a, t):
    point.positions = [float(x) for x in p]
    point.velocities = [float(x) for x in v]
    if a is not None:
        point.accelerations = [float(x) for x in a]
    point.time_from_start.sec = int(t // 1)
    point.time_from_start.nanosec = int((t % 1) * 1e9)
