"""
No timeout is decided against a command already received (issue: a stale hold after a target).

The bridge runs in this process on its own executor, so the test decides when it runs: a
joint spring's targets stop for longer than ``command_timeout`` while the bridge is not
spinning (a stall: a compile, a starved process); then a state and a new target arrive, the
state first. Taken in that order, the state would time the joint out and its hold would go
out after the target had arrived. The bridge takes the queued commands before it judges the
deadline, so every message after the stall carries the new target's law. The same run with
the queue-taking switched off shows the hold: the test can fail.
"""

import time

import numpy as np
import pytest
from ros_harness import Graph, InProcessBridge, publish_still, unique_namespace
from sensor_msgs.msg import JointState

from transmission_bridge.transmissions import load_transmissions

CONFIG = 'config/example_robot_transmissions.yaml'
JOINT, MOTOR = 'elbow', 'elbow_motor'
KP = 40.0
TIMEOUT = 0.2               # s: command_timeout
TARGET_STEP = 0.1           # rad: each new target this far from the measured pose
HOLD_BOUND = 1e-6           # N·m at the motor: a hold at the measured pose, at rest, sends ~0


def _run(drain):
    """Return the elbow motor's efforts sent after the stall, and the expected one."""
    tset = load_transmissions(CONFIG)
    namespace = unique_namespace('queued')
    bridge = InProcessBridge(namespace, {
        'transmissions_file': CONFIG, f'gains.{JOINT}.p': KP, f'gains.{JOINT}.d': 0.0,
        'command_timeout': TIMEOUT, 'on_command_timeout': 'hold'})
    graph = Graph(namespace)
    try:
        if not drain:
            bridge.node._routes.drain = None
        q = tset.default_positions.copy()
        theta = tset.joint_to_actuator('position', q)
        received = []
        graph.node.create_subscription(JointState, 'actuator_commands',
                                       lambda m: received.append(m), 100)
        states = graph.node.create_publisher(JointState, 'actuator_states', 10)
        commands = graph.node.create_publisher(JointState, 'joint_commands', 10)

        def matched():
            bridge.spin_for(0.01)
            return states.get_subscription_count() and commands.get_subscription_count() \
                and graph.node.count_publishers('actuator_commands')

        assert graph.spin_until(matched, timeout=15)

        def state():
            publish_still(graph.node, states, tset, theta)

        def target(value):
            commands.publish(JointState(name=[JOINT], position=[value]))

        # Streaming: targets and states, the spring answering.
        first = q[tset.joint_index[JOINT]] + TARGET_STEP
        for _ in range(20):
            target(first)
            state()
            bridge.spin_for(0.01)
            graph.spin_for(0.005)
        # The stall: nothing handled for twice the timeout; then a state, then a target.
        time.sleep(2 * TIMEOUT)
        second = q[tset.joint_index[JOINT]] - TARGET_STEP
        received.clear()
        state()
        target(second)
        time.sleep(0.1)             # both in the bridge's queue before it runs again
        bridge.spin_for(0.3)
        graph.spin_for(0.2)
        return [dict(zip(m.name, m.effort))[MOTOR] for m in received if MOTOR in m.name]
    finally:
        graph.close()
        bridge.close()


def _expected(step):
    """
    Return the elbow motor's effort for a target ``step`` from the pose, at rest.

    The config's elbow: a simple 80:1 stage, no efficiency; at rest its damping and its
    motor's friction send nothing: τ_m = kp step / 80.
    """
    return KP * step / 80.0


@pytest.mark.parametrize('drain', [True, False], ids=['queue_taken', 'queue_not_taken'])
def test_no_hold_is_decided_against_a_queued_target(drain):
    efforts = _run(drain)
    assert efforts, 'the bridge sent nothing after the stall'
    want = _expected(-TARGET_STEP)
    held = [e for e in efforts if abs(e) < HOLD_BOUND]
    if drain:
        assert not held, f'a hold went out after the target had arrived: {efforts}'
        assert np.allclose(efforts, want, rtol=1e-6), (efforts, want)
    else:       # the test's own control: without taking the queue, the hold goes out first
        assert held, f'no hold without taking the queue: the test cannot fail ({efforts})'
