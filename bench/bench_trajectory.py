"""
What a FollowJointTrajectory goal costs the bridge per actuator-state message.

    python bench/bench_trajectory.py [--number 2000]

A real bridge built in this process (real rclpy, not spun; the example arm with an ``arm``
and a ``wrist`` group), timed as bench_nodes.py times it: the actuator-state subscription's
callback called with the serialized message, as the executor calls it. Three cases, in
alternating rounds on the same stream:

* ``no hook``: the state route alone (the bridge as before goals existed: nothing called
  after joint_states is published),
* ``idle``: with the trajectory controllers hooked in and no goal running (every bridge now),
* ``goal``: a goal running on the wrist (a 2 s cubic through the differential): each
  message also decodes joint_states, samples the trajectory, judges its tolerances and maps
  and publishes the wrist motors' command, in the same callback.

``per_message_us`` is the median time per message; ``vs_no_hook`` its ratio to the first
case; ``budget_1khz`` the share of a 1 ms period (1 kHz motors) one message takes. The goal's
command leaves in the callback of the state that causes it: the delay it adds is this time,
not a state period.
"""

import argparse
import pathlib
import statistics
import sys
import time

from bench_nodes import _callback, _node, ROUNDS
from common import report
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CONFIG = ROOT / 'config'


def _stream(tset, count):
    """Return ``count`` JointState bytes of the arm at rest (stamps 1 ms apart)."""
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState
    q = np.array([tset.joint(j).default_position for j in tset.joint_names])
    position = tset.joint_to_actuator('position', q).tolist()
    out = []
    for k in range(count):
        msg = JointState(name=list(tset.actuator_names), position=position,
                         velocity=[0.0] * len(position), effort=[0.0] * len(position))
        stamp = 10**18 + k * 1_000_000
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 10**9)
        out.append(serialize_message(msg))
    return out


def _start_goal(node, tset):
    """Make a 2 s wrist goal the running one, as the action server's accept does."""
    from transmission_bridge.bridge.goal_servers import RunningGoal
    from transmission_bridge.control.following import Execution
    from transmission_bridge.control.goal import plan_goal
    from transmission_bridge.control.tolerances import tolerances
    goals = node._execution.goals
    group = next(g for g in goals.groups if g.name == 'wrist')
    idx = [tset.joint_index[j] for j in group.joints]
    q0 = np.array([tset.joint(j).default_position for j in group.joints])
    tol = tolerances(group.joints, [0.0] * 2, [0.0] * 2, 0.01, 0.0)
    plan = plan_goal(tset, group.joints, list(group.joints),
                     [(2.0, list(q0 + 0.1), [0.0, 0.0], [], [])],
                     (q0, np.zeros(2)), node._now_ns(), 0, tol)
    run = RunningGoal(None, Execution(plan), group)
    node._routes.owners.set_goal(idx, run)
    node._routes.follow('goals', goals.on_joint_state)
    group.run = run
    return run


def main(argv=None):
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--number', type=int, default=2000,
                        help='messages per case, timed in 20 alternating rounds')
    parser.add_argument('--results', default='trajectory', help='results file name')
    args = parser.parse_args(argv)
    import rclpy
    from transmission_bridge.bridge.node import TransmissionBridge
    from transmission_bridge.transmissions import load_transmissions
    context = rclpy.Context()
    rclpy.init(context=context, args=['--ros-args', '--log-level', 'error'], domain_id=231)
    tset = load_transmissions(CONFIG / 'example_robot_transmissions.yaml')
    params = {'transmissions_file': str(CONFIG / 'example_robot_transmissions.yaml'),
              'trajectory_controllers': ['arm', 'wrist'],
              'arm.joints': ['shoulder_pan', 'shoulder_lift', 'elbow'],
              'wrist.joints': ['wrist_pitch', 'wrist_roll']}
    nodes = {what: _node(TransmissionBridge, context, f'traj_{k}', params, True)
             for k, what in enumerate(('no hook', 'idle', 'goal'))}
    nodes['no hook']._routes.after_state.clear()
    stream = _stream(tset, 50 + args.number)
    callbacks = {what: _callback(node, 'actuator_states') for what, node in nodes.items()}
    for what, callback in callbacks.items():          # warm: the fast path learns
        for data in stream[:50]:
            callback(data)
    run = _start_goal(nodes['goal'], tset)
    sent = nodes['goal']._routes.commands.counters.published
    per_round = args.number // ROUNDS
    times = {what: [] for what in callbacks}
    order = list(callbacks)
    for r in range(ROUNDS):
        chunk = stream[50 + r * per_round:50 + (r + 1) * per_round]
        for what in (order if r % 2 == 0 else order[::-1]):
            callback = callbacks[what]
            start = time.perf_counter()
            for data in chunk:
                callback(data)
            times[what].append((time.perf_counter() - start) / len(chunk))
    commands = nodes['goal']._routes.commands.counters.published - sent
    assert run.execution.outcome is None and commands >= ROUNDS * per_round, commands
    base = statistics.median(times['no hook'])
    rows = []
    for what, values in times.items():
        median = statistics.median(values)
        rows.append({'what': what, 'per_message_us': median * 1e6,
                     'vs_no_hook': median / base, 'budget_1khz': median / 1e-3,
                     'commands': commands if what == 'goal' else 0})
    report(args.results, rows, ['what', 'per_message_us', 'vs_no_hook', 'budget_1khz',
                                'commands'])
    run.group.run = None            # the bench's own run (no action handle): nothing to abort
    nodes['goal']._routes.owners.clear_goal(run)
    for node in nodes.values():
        node.destroy_node()
    rclpy.shutdown(context=context)


if __name__ == '__main__':
    main()
