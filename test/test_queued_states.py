"""
No goal is aborted as stale while the states that measure it wait in the bridge's queue.

The bridge runs in this process on its own executor, so the test decides when it runs. A goal
holds the arm; the motors report at 200 Hz throughout; the bridge stalls (a compile, a starved
process) for three times ``stale_timeout``. When it runs again, its monitor timer may come
before the queued states: judged then, every actuator looks stale and the goal is aborted
although the robot never stopped reporting. The bridge takes the queued states before it
judges, so the goal runs on. The same run without taking them aborts: the test can fail.
(A clean clone's CI aborted the identification run's goal this way: a simulator compiling
its dynamics on the first command.)
"""

import time

from action_msgs.msg import GoalStatus
import pytest
from ros_harness import Graph, InProcessBridge, publish_still, unique_namespace
from sensor_msgs.msg import JointState

from transmission_bridge.transmissions import load_transmissions

CONFIG = 'config/example_robot_transmissions.yaml'
STALE = 0.2                 # s: stale_timeout
STATE_PERIOD = 0.005        # s: the motors' 200 Hz
HOLD = 30                   # s: the goal's one point, far beyond the test
QUIET = 0.05                # s: the bridge spun without states before the stall (< STALE)
# The bridge's goal stays accepted while it runs (executing is its way to its end state).
RUNNING = GoalStatus.STATUS_ACCEPTED


def _run(take_states):
    """Return the goal's status after the stall and the bridge's catching up."""
    action = pytest.importorskip('control_msgs.action', reason='control_msgs is not installed')
    from rclpy.action import ActionClient
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    tset = load_transmissions(CONFIG)
    namespace = unique_namespace('stall')
    bridge = InProcessBridge(namespace, {'transmissions_file': CONFIG, 'stale_timeout': STALE,
                                         'action_monitor_rate': 50.0})
    graph = Graph(namespace)
    try:
        if not take_states:
            bridge.node._routes.take_states = None
        theta = tset.joint_to_actuator('position', tset.default_positions)
        states = graph.node.create_publisher(JointState, 'actuator_states', 10)
        client = ActionClient(graph.node, action.FollowJointTrajectory,
                              'transmission_bridge/follow_joint_trajectory')

        def state():
            publish_still(graph.node, states, tset, theta)

        def run_both(seconds):
            bridge.run_with(graph, seconds, state, STATE_PERIOD)

        assert bridge.wait_for(graph, states, client)
        run_both(0.3)
        goal = action.FollowJointTrajectory.Goal()
        goal.trajectory = JointTrajectory(joint_names=list(tset.joint_names), points=[
            JointTrajectoryPoint(positions=tset.default_positions.tolist())])
        goal.trajectory.points[0].time_from_start.sec = HOLD
        sent = client.send_goal_async(goal)
        end = time.monotonic() + 10
        while not sent.done() and time.monotonic() < end:
            run_both(0.01)
        handle = sent.result()
        assert handle is not None and handle.accepted, 'the hold was not accepted'
        run_both(0.3)
        assert handle.status == RUNNING, handle.status
        # rclpy's executor keeps the handlers its last wait found ready and runs them first on
        # the next spin: a state's handler left from before the stall would take a queued state
        # before the monitor and hide the control's abort. A quiet spin (far below STALE) uses
        # them up, so after the stall the monitor's timer comes first, as in a starved bridge.
        bridge.spin_for(QUIET)
        # The stall: the motors report on, the bridge runs nothing.
        end = time.monotonic() + 3 * STALE
        while time.monotonic() < end:
            state()
            time.sleep(STATE_PERIOD)
        run_both(0.5)
        status = handle.status
        result = handle.get_result_async()
        if status == RUNNING:
            handle.cancel_goal_async()
        end = time.monotonic() + 10
        while not result.done() and time.monotonic() < end:      # ended before closing
            run_both(0.01)
        return status
    finally:
        graph.close()
        bridge.close()


@pytest.mark.parametrize('take_states', [True, False], ids=['queue_taken', 'queue_not_taken'])
def test_no_goal_is_aborted_against_queued_states(take_states):
    status = _run(take_states)
    if take_states:
        assert status == RUNNING, f'the goal ended: status {status}'
    else:       # the test's own control: judged before the queue, the goal is aborted
        assert status == GoalStatus.STATUS_ABORTED, (
            f'no abort without taking the queue: the test cannot fail (status {status})')
