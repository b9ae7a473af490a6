"""
What one actuator-state message costs the bridge while some joints are withheld, against healthy.

    python bench/bench_degraded.py [--number 2000]

Real bridges built in this process (real rclpy, not spun), timed as bench_nodes.py times
them: the subscription's callback called with the serialized message, as the executor calls
it. Each degraded case beside its healthy twin, alternating rounds, on the same robot:

* one encoder waiting for its turns (the single-turn encoder example: the knee's readings
  fit two turns; healthy: its turns given),
* one actuator stale (the example arm on two topics, the wrist's driver silent; healthy: the
  wrist's driver heard),
* one linkage refusing the state (the legged robot with one ankle motor beyond its joints'
  limits; healthy: inside them).

``degraded/healthy`` is the median of the rounds' ratios; ``typed`` counts the degraded
bridge's messages that took the typed route (decode, message objects) while timed. Run with
an older checkout first on ``PYTHONPATH`` to see the same cases before the fast path kept
degraded states (bench/ab.py does that).
"""

import argparse
import pathlib
import statistics
import sys
import time

from bench_nodes import _callback, _node, ROUNDS
from common import per_call, report
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CONFIG = ROOT / 'config'


def _serialized(names, rows, first_stamp):
    """Return JointState bytes of ``rows`` (position, velocity, effort), stamps 1 ms apart."""
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState
    out = []
    for k, (p, v, e) in enumerate(rows):
        msg = JointState(name=list(names), position=list(p), velocity=list(v), effort=list(e))
        stamp = first_stamp + k * 1_000_000
        msg.header.stamp.sec, msg.header.stamp.nanosec = stamp // 10**9, stamp % 10**9
        out.append(serialize_message(msg))
    return out


def _rows(rng, count, n, position):
    return [(position(rng), rng.normal(size=n), rng.normal(size=n)) for _ in range(count)]


def _typed(node):
    routes = getattr(node, '_routes', None)
    counts = routes.typed_count if routes is not None else node._typed_count
    return counts['actuator_states']


def main(argv=None):
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--number', type=int, default=2000,
                        help='messages per case, timed in 20 alternating rounds')
    parser.add_argument('--results', default='degraded', help='results file name')
    args = parser.parse_args(argv)
    import rclpy
    from rclpy.parameter import Parameter
    from transmission_bridge.bridge.node import TransmissionBridge
    from transmission_bridge.transmissions import load_transmissions
    context = rclpy.Context()
    rclpy.init(context=context, args=['--ros-args', '--log-level', 'error'], domain_id=232)
    rng = np.random.default_rng(49)
    needed = 50 + args.number
    rows = []

    def measure(what, nodes, topic, streams):
        """Time the degraded and the healthy bridge in alternating rounds."""
        callbacks = {k: _callback(node, topic) for k, node in nodes.items()}
        for k in nodes:
            for data in streams[k][:50]:
                callbacks[k](data)
        typed_before = _typed(nodes['degraded'])
        cursor = {k: iter(streams[k][50:]) for k in nodes}
        times = {}
        for r in range(ROUNDS):
            for k in (('degraded', 'healthy') if r % 2 else ('healthy', 'degraded')):
                callback, stream = callbacks[k], cursor[k]
                times.setdefault(k, []).append(
                    per_call(lambda: callback(next(stream)), args.number // ROUNDS, repeat=1))
        rows.append({'what': what, 'healthy_us': min(times['healthy']) * 1e6,
                     'degraded_us': min(times['degraded']) * 1e6,
                     'degraded/healthy': statistics.median(
                         d / h for d, h in zip(times['degraded'], times['healthy'])),
                     'typed': _typed(nodes['degraded']) - typed_before})

    # One encoder waiting for its turns.
    path = CONFIG / 'single_turn_encoder_transmissions.yaml'
    nodes = {k: _node(TransmissionBridge, context, f'enc_{k}',
                      {'transmissions_file': str(path)}, True) for k in ('degraded', 'healthy')}
    nodes['healthy'].set_parameters([Parameter('actuators.knee_motor.encoder_turns', value=0)])
    names = ['knee_motor', 'hip_motor']
    stream = _serialized(names, _rows(rng, needed, 2, lambda r: np.array(
        [1.0 + r.uniform(-0.2, 0.2), r.uniform(-1.0, 1.0)])), 10**9)
    measure('one encoder waiting for its turns (2 motors)', nodes, 'actuator_states',
            {'degraded': stream, 'healthy': stream})

    # One actuator stale: the example arm's wrist on a topic of its own, silent.
    ts = load_transmissions(CONFIG / 'example_robot_transmissions.yaml')
    wrist = [n for n in ts.actuator_names if n.startswith('wrist')]
    arm = [n for n in ts.actuator_names if n not in wrist]
    params = {'transmissions_file': str(CONFIG / 'example_robot_transmissions.yaml'),
              'actuator_state_topics': ['actuator_states', 'wrist_states'],
              'stale_timeout': 0.2}
    nodes = {k: _node(TransmissionBridge, context, f'stale_{k}', params, True)
             for k in ('degraded', 'healthy')}
    wrist_msgs = _serialized(wrist, _rows(rng, 2, 2, lambda r: r.normal(size=2)), 10**9)
    for node in nodes.values():
        _callback(node, 'wrist_states')(wrist_msgs[0])
    time.sleep(0.3)                                     # the wrist goes stale ...
    _callback(nodes['healthy'], 'wrist_states')(wrist_msgs[1])
    nodes['healthy'].set_parameters([Parameter('stale_timeout', value=3600.0)])  # ... or not
    stream = _serialized(arm, _rows(rng, needed, len(arm), lambda r: r.normal(size=len(arm))),
                         2 * 10**9)
    measure('one actuator stale (example arm, two topics)', nodes, 'actuator_states',
            {'degraded': stream, 'healthy': stream})

    # One linkage refusing the state: the legged robot's right ankle beyond its limits.
    legged = load_transmissions(CONFIG / 'legged_robot.urdf')
    names = list(legged.actuator_names)
    ankle = names.index('right_ankle_lower_motor')
    nodes = {k: _node(TransmissionBridge, context, f'link_{k}',
                      {'transmissions_file': str(CONFIG / 'legged_robot.urdf')}, True)
             for k in ('degraded', 'healthy')}

    def legged_rows(at):
        def position(r):
            p = r.uniform(-0.02, 0.02, len(names))
            p[ankle] += at
            return p
        return _serialized(names, _rows(rng, needed, len(names), position), 10**9)
    measure('one linkage refusing (legged robot, 12 motors)', nodes, 'actuator_states',
            {'degraded': legged_rows(3.0), 'healthy': legged_rows(0.0)})
    report(args.results, rows, ['what', 'healthy_us', 'degraded_us', 'degraded/healthy', 'typed'])


if __name__ == '__main__':
    main()
