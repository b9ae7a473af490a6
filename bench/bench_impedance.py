"""
What joint impedance costs the bridge per actuator-state message, against the plain bridge.

    python bench/bench_impedance.py [--number 2500]

Real bridges built in this process (real rclpy, not spun), timed as bench_nodes.py times
them: the actuator-state subscription's callback called with the serialized message. Two
robots, each bridge beside its plain twin (no gains) in alternating rounds on the same
stream: the example arm with gains on every joint and ``impedance_output:=effort`` (each
message also decodes joint_states, evaluates the joint law, maps it through Jᵀ, limits and
publishes the motor efforts), and the legged robot with gains on every joint and
``impedance_output:=motor_gains`` (J at the pose through the knee and ankle linkages, Jᵀ Kp J,
Jᵀ Kd J, a DynamicJointState published). ``vs_plain`` is the median per-message ratio.
"""

import argparse
import pathlib
import statistics
import sys
import time

from bench_nodes import _callback, _node
from common import report

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CONFIG = ROOT / 'config'
ROUNDS = 10
CASES = (('example arm', 'example_robot_transmissions.yaml', 'effort'),
         ('legged robot', 'legged_robot.urdf', 'motor_gains'))


def _stream(tset, count):
    """Return ``count`` JointState bytes of the robot at its default pose, 1 ms apart."""
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState
    pose = tset.joint_to_actuator('position', tset.default_positions).tolist()
    out = []
    for k in range(count):
        msg = JointState(name=list(tset.actuator_names), position=pose,
                         velocity=[0.0] * len(pose), effort=[0.0] * len(pose))
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(10**18 + k * 10**6, 10**9)
        out.append(serialize_message(msg))
    return out


def main(argv=None):
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--number', type=int, default=2500, help='messages per bridge')
    parser.add_argument('--results', default='impedance', help='results file name')
    args = parser.parse_args(argv)
    import rclpy
    from transmission_bridge.bridge.node import TransmissionBridge
    from transmission_bridge.transmissions import load_transmissions
    context = rclpy.Context()
    rclpy.init(context=context, args=['--ros-args', '--log-level', 'error'], domain_id=230)
    rows = []
    for k, (robot, file, output) in enumerate(CASES):
        tset = load_transmissions(CONFIG / file)
        base = {'transmissions_file': str(CONFIG / file), 'command_timeout': 0.0}
        gains = {f'gains.{j}.p': 20.0 for j in tset.joint_names}
        gains.update({f'gains.{j}.d': 0.5 for j in tset.joint_names})
        plain = _node(TransmissionBridge, context, f'imp_plain_{k}', base, True)
        spring = _node(TransmissionBridge, context, f'imp_{k}',
                       {**base, 'impedance_output': output, **gains}, True)
        spring._impedance.core.take(list(tset.joint_names), tset.default_positions + 0.01,
                                    [], [], 0)
        stream = _stream(tset, 100 + args.number)
        callbacks = {'plain': _callback(plain, 'actuator_states'),
                     output: _callback(spring, 'actuator_states')}
        for callback in callbacks.values():
            for data in stream[:100]:
                callback(data)
        sent = spring._impedance.counters['impedance_commands']
        per_round = args.number // ROUNDS
        times = {what: [] for what in callbacks}
        for r in range(ROUNDS):
            chunk = stream[100 + r * per_round:100 + (r + 1) * per_round]
            for what in (list(callbacks) if r % 2 == 0 else list(callbacks)[::-1]):
                start = time.perf_counter()
                for data in chunk:
                    callbacks[what](data)
                times[what].append((time.perf_counter() - start) / len(chunk))
        commands = spring._impedance.counters['impedance_commands'] - sent
        assert commands == ROUNDS * per_round, commands
        ratios = [b / a for a, b in zip(times['plain'], times[output])]
        rows.append({'robot': robot, 'output': output,
                     'plain_us': statistics.median(times['plain']) * 1e6,
                     'impedance_us': statistics.median(times[output]) * 1e6,
                     'vs_plain': statistics.median(ratios), 'commands': commands})
        plain.destroy_node()
        spring.destroy_node()
    report(args.results, rows, ['robot', 'output', 'plain_us', 'impedance_us', 'vs_plain',
                                'commands'])
    rclpy.shutdown(context=context)


if __name__ == '__main__':
    main()
