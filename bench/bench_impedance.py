"""
What joint impedance costs the bridge per actuator-state message, against the plain bridge.

    python bench/bench_impedance.py [--number 2500]

Real bridges built in this process (real rclpy, not spun), timed as bench_nodes.py times
them: the subscriptions' callbacks called with the serialized messages. Two robots: the
example arm with gains on every joint and ``impedance_output:=effort`` (each state also
evaluates the joint law through Jᵀ, checks the effort limits and publishes the motors'
efforts), and the legged robot with gains on every joint and
``impedance_output:=motor_gains`` (J at the pose through the knee and ankle linkages,
the diagonals of Jᵀ Kp J and Jᵀ Kd J and the coupling feed-forward, a DynamicJointState
published), and the legged robot's torque-controlled form (``effort``: Jᵀ of the joint law
at the pose, from the J and joint state the state map leaves). Each beside, in alternating
rounds on the same stream, ``plain`` (no gains) and ``floor``: the plain bridge publishing
one more message of the impedance output's size per state (what sending the motors anything
per state costs, whatever the law). Two target rates: ``held`` (one target: a policy
holding a pose) and 500 Hz (a new joint_commands message before every second state, as a
model-predictive controller sends; the plain and floor bridges get the same messages, as
streamed commands). Per
message: the median of the rounds' times of everything the bridge did, states and
commands. ``vs_plain`` and ``vs_floor`` are the median per-round ratios.
"""

import pathlib
import statistics
import sys

from bench_nodes import _callback, _node
from common import alternating, in_process_bridges, report, stamped_states

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CONFIG = ROOT / 'config'
ROUNDS = 10
CASES = (('example arm', 'example_robot_transmissions.yaml', 'effort'),
         ('legged robot', 'legged_robot.urdf', 'motor_gains'),
         ('legged robot', 'legged_robot.urdf', 'effort'))


def _stream(tset, count):
    """Return ``count`` JointState bytes of the robot at its default pose, 1 ms apart."""
    pose = tset.joint_to_actuator('position', tset.default_positions).tolist()
    zeros = [0.0] * len(pose)
    return stamped_states(count, lambda k: {'name': list(tset.actuator_names),
                                            'position': pose, 'velocity': zeros,
                                            'effort': zeros})


def _targets(tset, count, rng):
    """Return ``count`` joint_commands bytes: targets near the default pose, all joints."""
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState
    out = []
    for _ in range(count):
        q = tset.default_positions + rng.uniform(-0.01, 0.01, tset.num_joints)
        out.append(serialize_message(JointState(name=list(tset.joint_names),
                                                position=q.tolist())))
    return out


def _floor(node, output, names):
    """Make the plain ``node`` publish one more message per state, of the output's size."""
    from rclpy.serialization import serialize_message
    from transmission_bridge.bridge.impedance_wiring import EffortWire, MitWire
    if output == 'effort':
        wire, pub = EffortWire(names), node._command_pub
        data = wire.at(bytes(8))
    else:
        from control_msgs.msg import DynamicJointState
        wire = MitWire(names)
        pub = node.create_publisher(DynamicJointState, 'actuator_impedance_commands', 10)
        data = wire.at(bytes(8))
    assert isinstance(data, bytes) and serialize_message is not None
    node._routes.after_state.append(lambda out: [(pub.publish, data)])


def main(argv=None):
    """Run the benchmark and print the table."""
    args, context = in_process_bridges(__doc__, 2500, 'impedance', 230, argv)
    import numpy as np
    import rclpy
    from transmission_bridge.bridge.node import TransmissionBridge
    from transmission_bridge.transmissions import load_transmissions
    rows = []
    rng = np.random.default_rng(51)
    for k, (robot, file, output) in enumerate(CASES):
        tset = load_transmissions(CONFIG / file)
        base = {'transmissions_file': str(CONFIG / file), 'command_timeout': 0.0}
        gains = {f'gains.{j}.p': 20.0 for j in tset.joint_names}
        gains.update({f'gains.{j}.d': 0.5 for j in tset.joint_names})
        stream = _stream(tset, 100 + args.number)
        targets = _targets(tset, args.number, rng)
        for rate in ('held', 500):
            tag = f'{k}_{rate}'
            plain = _node(TransmissionBridge, context, f'imp_plain_{tag}', base, True)
            floor = _node(TransmissionBridge, context, f'imp_floor_{tag}', base, True)
            spring = _node(TransmissionBridge, context, f'imp_{tag}',
                           {**base, 'impedance_output': output, **gains}, True)
            _floor(floor, output, tset.actuator_names)
            nodes = {'plain': plain, 'floor': floor, output: spring}
            states = {w: _callback(n, 'actuator_states') for w, n in nodes.items()}
            commands = {w: _callback(n, 'joint_commands') for w, n in nodes.items()}
            for what in nodes:
                commands[what](targets[0])
                for data in stream[:100]:
                    states[what](data)
            sent = spring._execution.springs.counters['impedance_commands']
            per_round = args.number // ROUNDS

            def run(what, r):
                at = r * per_round
                chunk = stream[100 + at:100 + at + per_round]
                given = targets[at:at + per_round] if rate != 'held' else [None] * per_round
                state, command = states[what], commands[what]
                for i, data in enumerate(chunk):
                    if i % 2 == 0 and given[i] is not None:
                        command(given[i])
                    state(data)
                return len(chunk)
            times = alternating(nodes, ROUNDS, run)
            sent = spring._execution.springs.counters['impedance_commands'] - sent
            assert sent == ROUNDS * per_round, sent
            assert not spring._execution.springs.counters['impedance_targets_refused']
            rows.append({
                'robot': robot, 'output': output,
                'targets': 'held' if rate == 'held' else f'{rate} Hz',
                'plain_us': statistics.median(times['plain']) * 1e6,
                'floor_us': statistics.median(times['floor']) * 1e6,
                'impedance_us': statistics.median(times[output]) * 1e6,
                'vs_plain': statistics.median(
                    [b / a for a, b in zip(times['plain'], times[output])]),
                'vs_floor': statistics.median(
                    [b / a for a, b in zip(times['floor'], times[output])]),
                'commands': sent})
            for node in nodes.values():
                node.destroy_node()
    report(args.results, rows, ['robot', 'output', 'targets', 'plain_us', 'floor_us',
                                'impedance_us', 'vs_plain', 'vs_floor', 'commands'])
    rclpy.shutdown(context=context)


if __name__ == '__main__':
    main()
