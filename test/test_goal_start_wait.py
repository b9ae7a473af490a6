"""
A goal sent before its joints are measured waits for their first states, then runs.

Motors just started are discovered by the bridge a second or two after they publish (DDS, on
this machine): a goal sent at once (a script, ``ros2 action send_goal`` right after
``actuator_simulator``) came before any state. It was refused; a clean clone's CI failed the
identification page that way. Now it waits up to ``START_WAIT`` and starts from the first
measured state. The bridge runs in this process, so the test decides when the motors report.
Controls: with no state at all the goal is refused, after the wait, saying why; one canceled
while it waits ends canceled.
"""

import time

from action_msgs.msg import GoalStatus
import pytest
from ros_harness import Graph, InProcessBridge, publish_still, unique_namespace
from sensor_msgs.msg import JointState

from transmission_bridge.transmissions import load_transmissions

CONFIG = 'config/example_robot_transmissions.yaml'
WAIT = 2.0              # s: START_WAIT here (5 s in the node), to keep the test short
QUIET = 1.0             # s: the goal is sent, then the motors start reporting this later
DURATION = 0.5          # s: the goal's one point
STATE_PERIOD = 0.005    # s: the motors' 200 Hz


def _goal(motors_report, cancel=False):
    """Return (status, result, seconds from sending to the result)."""
    action = pytest.importorskip('control_msgs.action', reason='control_msgs is not installed')
    from rclpy.action import ActionClient
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    from transmission_bridge.bridge import goal_servers
    tset = load_transmissions(CONFIG)
    namespace = unique_namespace('startwait')
    saved, goal_servers.START_WAIT = goal_servers.START_WAIT, WAIT
    bridge = InProcessBridge(namespace, {'transmissions_file': CONFIG,
                                         'action_monitor_rate': 50.0})
    graph = Graph(namespace)
    try:
        theta = tset.joint_to_actuator('position', tset.default_positions)
        states = graph.node.create_publisher(JointState, 'actuator_states', 10)
        client = ActionClient(graph.node, action.FollowJointTrajectory,
                              'transmission_bridge/follow_joint_trajectory')
        reporting = [False]

        def run_both(seconds):
            bridge.run_with(graph, seconds, lambda: reporting[0] and publish_still(
                graph.node, states, tset, theta), STATE_PERIOD)

        assert bridge.wait_for(graph, states, client)
        goal = action.FollowJointTrajectory.Goal()
        goal.trajectory = JointTrajectory(joint_names=list(tset.joint_names), points=[
            JointTrajectoryPoint(positions=tset.default_positions.tolist())])
        goal.trajectory.points[0].time_from_start.nanosec = int(DURATION * 1e9)
        sent_at = time.monotonic()
        sent = client.send_goal_async(goal)
        while not sent.done() and time.monotonic() < sent_at + 10:
            run_both(0.01)
        handle = sent.result()
        assert handle is not None and handle.accepted, 'the goal was not accepted'
        run_both(QUIET)
        if cancel:
            handle.cancel_goal_async()
        reporting[0] = motors_report
        result = handle.get_result_async()
        while not result.done() and time.monotonic() < sent_at + 3 * WAIT + 10:
            run_both(0.01)
        assert result.done(), 'the goal never ended'
        return result.result().status, result.result().result, time.monotonic() - sent_at
    finally:
        goal_servers.START_WAIT = saved
        graph.close()
        bridge.close()


def test_a_goal_before_the_first_state_waits_and_succeeds():
    status, result, _ = _goal(motors_report=True)
    assert status == GoalStatus.STATUS_SUCCEEDED, (status, result.error_string)


def test_a_goal_without_states_is_refused_after_the_wait():
    status, result, seconds = _goal(motors_report=False)
    assert status == GoalStatus.STATUS_ABORTED, status
    assert 'no measured position' in result.error_string, result.error_string
    assert f'waited {WAIT:g} s' in result.error_string, result.error_string
    assert seconds >= WAIT, f'refused after {seconds:.2f} s, before the wait of {WAIT:g} s'


def test_a_goal_canceled_while_it_waits_ends_canceled():
    status, result, seconds = _goal(motors_report=False, cancel=True)
    assert status == GoalStatus.STATUS_CANCELED, (status, result.error_string)
    assert seconds < WAIT + QUIET, f'the cancel took {seconds:.2f} s'
