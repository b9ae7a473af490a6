"""
What limits cost on the bridge's command path, and what a coupling costs against its type.

Real bridge nodes built in this process (real rclpy, not spun), fast path on: the time is the
node's whole handling of one serialised message, its subscription's callback called with
the bytes as the executor calls it (decode or layout check, checks, the maps, the limits,
publish).

* ``joint_commands`` of the example arm (7 joints, efforts: the kinematics node's holding
  torques), ``limit_commands`` off, on with every command within its limits, and on with
  every command scaled (the wrist motor's effort limit below what is asked).
* ``actuator_states`` of 12 differentials, and of the same 12 written as 2x2 couplings
  (same numbers, so the same outputs): a coupling costs what its dedicated type does. And 8
  three-motor couplings (24 actuators, three terms per output).

Variants of a comparison alternate in short rounds; each time is the fastest round's, each
ratio the median of the rounds' ratios to the first variant.
"""

import argparse
import pathlib
import statistics
import sys
import tempfile

from bench_nodes import _callback, _messages, _node
from common import per_call, report
import numpy as np
import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
ROUNDS = 20


def _wrists(count, coupling):
    """``count`` differential wrists (reductions 50, -50), or the same as 2x2 couplings."""
    out = []
    for k in range(count):
        actuators = [{'name': f'm{k}_l'}, {'name': f'm{k}_r'}]
        joints = [{'name': f'p{k}'}, {'name': f'r{k}', 'offset': 0.1}]
        if coupling:    # x_j1 = (x_a1/50 + x_a2/-50)/2, x_j2 = (x_a1/50 - x_a2/-50)/2
            out.append({'name': f'w{k}', 'type': 'coupling', 'actuators': actuators,
                        'joints': joints, 'matrix': [[0.01, -0.01], [0.01, 0.01]]})
        else:
            actuators[0]['mechanical_reduction'] = 50.0
            actuators[1]['mechanical_reduction'] = -50.0
            out.append({'name': f'w{k}', 'type': 'differential', 'actuators': actuators,
                        'joints': joints})
    return {'transmissions': out}


def _three_motor(count):
    matrix = [[0.02, 0.0, 0.0], [0.01, 0.02, 0.0], [0.01, -0.01, 0.02]]
    return {'transmissions': [
        {'name': f'w{k}', 'type': 'coupling', 'matrix': matrix,
         'actuators': [{'name': f'm{k}_{i}'} for i in range(3)],
         'joints': [{'name': f'j{k}_{i}'} for i in range(3)]} for k in range(count)]}


def _commands(names, count, scale, seed=3):
    """``count`` serialised effort-only JointStates of ``names`` (stamps going forward)."""
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState
    rng = np.random.default_rng(seed)
    out = []
    for k in range(count):
        msg = JointState(name=list(names), effort=(rng.uniform(0.5, 1.0, len(names))
                                                   * scale).tolist())
        msg.header.stamp.sec, msg.header.stamp.nanosec = 1, k
        out.append(serialize_message(msg))
    return out


def main(argv=None):
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--number', type=int, default=4000,
                        help='messages per variant, timed in 20 alternating rounds')
    args = parser.parse_args(argv)
    import rclpy
    from transmission_bridge.bridge.node import TransmissionBridge
    from transmission_bridge.transmissions import load_transmissions
    context = rclpy.Context()
    rclpy.init(context=context, args=['--ros-args', '--log-level', 'error'], domain_id=229)
    work = pathlib.Path(tempfile.mkdtemp(prefix='bench_commands_'))
    rows = []
    per_round = args.number // ROUNDS

    def compare(title, variants):
        """Time ``variants`` [(label, callback, messages, published)] in alternating rounds."""
        times = {label: [] for label, *_ in variants}
        for label, callback, messages, _ in variants:       # warm up: layouts, caches
            for data in messages[:50]:
                callback(data)
        streams = {label: iter(messages[50:]) for label, _, messages, _ in variants}
        before = {label: published() for label, _, _, published in variants}
        for r in range(ROUNDS):
            order = variants if r % 2 else variants[::-1]
            for label, callback, _, _ in order:
                stream = streams[label]
                times[label].append(per_call(lambda: callback(next(stream)), per_round,
                                             repeat=1))
        first = variants[0][0]
        for label, _, _, published in variants:
            if published() - before[label] != per_round * ROUNDS:
                sys.exit(f'{title}, {label}: not every message was published')
            rows.append({'what': f'{title}: {label}', 'us_per_message': min(times[label]) * 1e6,
                         'ratio': statistics.median(
                             t / f for t, f in zip(times[label], times[first]))})

    def bridge(tag, source, **params):
        return _node(TransmissionBridge, context, tag,
                     {'transmissions_file': str(source), **params}, True)

    example = ROOT / 'config' / 'example_robot_transmissions.yaml'
    joints = load_transmissions(example).joint_names
    needed = 50 + args.number
    low = {'actuators.wrist_left_motor.limits.effort': 1e-3}   # every command scaled
    nodes = [('limits off', bridge('off', example, limit_commands=False), 1.0),
             ('limits on, within', bridge('on', example), 1.0),
             ('limits on, every command scaled', bridge('scaled', example, **low), 1.0)]
    compare('joint_commands, example arm (7 joints)', [
        (label, _callback(node, 'joint_commands'), _commands(joints, needed, scale),
         lambda node=node: node._commands.counters.published)
        for label, node, scale in nodes])
    if nodes[2][1]._commands.counters.limited < args.number:
        sys.exit('the scaled variant was not limited: the figures would be wrong')

    variants = []
    for label, data in (('12 differentials', _wrists(12, False)),
                        ('the same as 2x2 couplings', _wrists(12, True)),
                        ('8 three-motor couplings', _three_motor(8))):
        path = work / f'{len(variants)}.yaml'
        path.write_text(yaml.safe_dump(data))
        node = bridge(f's{len(variants)}', path)
        names = load_transmissions(path).actuator_names
        variants.append((label, _callback(node, 'actuator_states'),
                         _messages(names, needed, 11),
                         lambda node=node: node._states.counters.published))
    compare('actuator_states, 24 actuators', variants)
    report('commands', rows, ['what', 'us_per_message', 'ratio'])
    rclpy.shutdown(context=context)


if __name__ == '__main__':
    main()
