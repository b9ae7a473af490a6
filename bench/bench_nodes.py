"""
What one input message costs inside each node, fast path against typed path, same run.

Real nodes built in this process (real rclpy, real publishers, not spun): the time is the
node's whole handling of one serialised message: its subscription's callback, called with
the bytes as the executor calls it, until it returns (the input budget, decode or layout
check, checks and counters, stale bookkeeping, the maps, the outputs and their publish).
``fast_path`` on (bytes in, byte templates out) and off (decode to a message object, build
message objects: the path every message took before). The floor is a raw relay's work:
publish the received bytes as they are. The bridge runs the bench's 24- and 200-actuator
robots, and the example arm's joint commands (positions and torques, as the chain's gravity
torques); the kinematics node the example arm (7 joints, 10 bodies) with every output on
(TF with every input: ``publish_frequency`` 0), with only the torques, and with the torques
and TF; a reader is subscribed to every output (the node computes only what is read).
The two paths alternate in short rounds: each time is the fastest round's (the VM's
neighbours slow whole rounds down), ``typed/fast`` the median of the rounds' ratios.
"""

import argparse
import pathlib
import statistics
import struct
import sys
import tempfile

from common import per_call, report
import numpy as np
from robots import transmissions_24, transmissions_n, write_transmissions

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
_STAMP = struct.Struct('<iI')
_READERS = []
ROUNDS = 20                 # alternating rounds per path; each times number / ROUNDS messages


def _messages(names, count, seed, distinct=500):
    """
    Return ``count`` serialised JointStates whose stamps only go forward (1 ns apart).

    A stamp that goes back is a time jump to the bridge (it forgets the source's values and
    takes the full path), which a user's steady stream never has: ``distinct`` sets of
    values repeat, stamps do not.
    """
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState
    rng = np.random.default_rng(seed)
    bases = []
    for _ in range(distinct):
        msg = JointState(name=list(names))
        msg.position, msg.velocity, msg.effort = (rng.normal(size=len(names)).tolist()
                                                  for _ in range(3))
        bases.append(serialize_message(msg))
    out = []
    for k in range(count):
        data = bytearray(bases[k % distinct])
        _STAMP.pack_into(data, 4, 1, k)     # the header stamp: right after the CDR header
        out.append(bytes(data))
    return out


def _arm_streams(path, count, seed=11):
    """
    Return the example arm's motor states (10, moving) and ``count`` joint commands.

    The commands carry positions near the default pose and small torques, inside every
    limit, each stamped as the last state (as the chain's torques carry their state's stamp,
    so a command's gear losses take that state's motor velocities).
    """
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState
    from transmission_bridge.transmissions import load_transmissions
    tset = load_transmissions(path)
    rng = np.random.default_rng(seed)
    q0 = tset.default_positions

    def message(names, k, arrays):
        msg = JointState(name=list(names))
        msg.header.stamp.sec, msg.header.stamp.nanosec = 1, k
        msg.position, msg.velocity, msg.effort = (np.asarray(a, float).tolist() for a in arrays)
        return serialize_message(msg)
    states = [message(tset.actuator_names, k, [*tset.motion_to_actuator(
        q0 + rng.normal(0, 0.01, len(q0)), rng.normal(0, 0.2, len(q0))), np.zeros(len(q0))])
        for k in range(10)]
    commands = [message(tset.joint_names, 9, [q0 + rng.normal(0, 0.01, len(q0)), [],
                                              rng.normal(0, 0.02, len(q0))])
                for _ in range(count)]
    return states, commands


def _node(cls, context, tag, params, fast):
    from rclpy.parameter import Parameter
    node = cls(context=context, namespace=f'/bench_{tag}_{"fast" if fast else "typed"}',
               parameter_overrides=[Parameter(k, value=v) for k, v in params.items()]
               + [Parameter('fast_path', value=fast)])
    if 'model_file' in params:          # the kinematics node
        _read_every_output(node, context)
    return node


def _read_every_output(node, context):
    """
    Subscribe a reader to every topic ``node`` publishes; wait until each has matched.

    The kinematics node computes only the outputs someone reads: a bench without readers
    would time nothing. (The reader is not spun: DDS keeps what it cannot deliver.)
    """
    import time
    import rclpy
    reader = rclpy.create_node(f'reader_{abs(hash(node.get_namespace()))}', context=context)
    pubs = [p for p in node.publishers if 'rosout' not in p.topic_name
            and 'parameter_events' not in p.topic_name]
    for pub in pubs:
        reader.create_subscription(pub.msg_type, pub.topic_name, lambda _: None, 1, raw=True)
    end = time.monotonic() + 10.0
    while time.monotonic() < end and not all(p.get_subscription_count() for p in pubs):
        time.sleep(0.01)
    unread = [p.topic_name for p in pubs if not p.get_subscription_count()]
    assert not unread, f'no reader matched {unread}'
    _READERS.append(reader)             # a reader left to the collector unsubscribes


def _published(node, topic):
    """Return how many outputs the node's core has published for ``topic``'s inputs."""
    if topic == 'joint_commands':
        return node._commands.counters.published
    core = getattr(node, '_states', None) or node._core
    return core.counters.published


def _callback(node, topic):
    """Return what the executor calls for a message on the node's ``topic`` subscription."""
    subs = [s for s in node.subscriptions if s.topic_name == f'{node.get_namespace()}/{topic}']
    assert len(subs) == 1, [s.topic_name for s in node.subscriptions]
    return subs[0].callback


def main(argv=None):
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--number', type=int, default=2000,
                        help='messages per path, timed in 20 alternating rounds')
    args = parser.parse_args(argv)
    import rclpy
    from transmission_bridge.bridge.node import TransmissionBridge
    from transmission_bridge.kinematics import load_model
    from transmission_bridge.kinematics_node.node import KinematicsNode, OUTPUTS
    from sensor_msgs.msg import JointState
    context = rclpy.Context()
    rclpy.init(context=context, args=['--ros-args', '--log-level', 'warn'], domain_id=231)
    work = pathlib.Path(tempfile.mkdtemp(prefix='bench_nodes_'))
    rows = []
    needed = 50 + args.number               # warm-up, then every round's; never replayed

    def measure(what, nodes, topic, messages):
        """Time fast and typed node side by side (alternating rounds), and the raw floor."""
        callbacks = {fast: _callback(node, topic) for fast, node in nodes.items()}
        for fast in (True, False):          # warm up: learn layouts, fill caches
            for data in messages[:50]:
                callbacks[fast](data)
        published = {fast: _published(node, topic) for fast, node in nodes.items()}
        times, cursor = {}, {True: iter(messages[50:]), False: iter(messages[50:])}
        # Many short rounds, the two paths alternating (and which goes first): the VM's
        # slow spells last seconds, so each pair of rounds shares its conditions.
        for r in range(ROUNDS):
            for fast in ((True, False) if r % 2 else (False, True)):
                callback, stream = callbacks[fast], cursor[fast]
                times.setdefault(fast, []).append(
                    per_call(lambda: callback(next(stream)), args.number // ROUNDS, repeat=1))
        for fast, node in nodes.items():
            handled = _published(node, topic) - published[fast]
            if handled != args.number // ROUNDS * ROUNDS:
                sys.exit(f'{what}: {handled} of {args.number} messages published; '
                         'the figures would be wrong')
        floor_pub = nodes[True].create_publisher(JointState, 'bench_floor', 10)
        data = messages[1]
        floor = min(per_call(lambda: floor_pub.publish(data), args.number // ROUNDS, repeat=1)
                    for _ in range(ROUNDS))
        t_fast, t_typed = min(times[True]), min(times[False])      # the undisturbed rounds
        ratio = statistics.median(t / f for t, f in zip(times[False], times[True]))
        rows.append({'what': what, 'fast_us': t_fast * 1e6, 'typed_us': t_typed * 1e6,
                     'typed/fast': ratio, 'raw_relay_us': floor * 1e6,
                     'fast/raw_relay': t_fast / floor})

    for count, ts in ((24, transmissions_24()), (200, transmissions_n(200))):
        path = write_transmissions(ts, work / f'bench{count}.yaml')
        nodes = {fast: _node(TransmissionBridge, context, f'b{count}',
                             {'transmissions_file': str(path)}, fast) for fast in (True, False)}
        measure(f'bridge, {count} actuators', nodes, 'actuator_states',
                _messages(ts.actuator_names, needed, count))

    # What a controller streams to the bridge (the kinematics node's gravity torques: the
    # state's positions and the torques), inside the limits, to the example arm, whose
    # motors have gear losses and whose joints damping: a joint_commands layout's own map.
    arm = ROOT / 'config' / 'example_robot_transmissions.yaml'
    nodes = {fast: _node(TransmissionBridge, context, 'arm', {'transmissions_file': str(arm)},
                         fast) for fast in (True, False)}
    states, commands = _arm_streams(arm, needed)
    for node in nodes.values():
        for data in states:
            _callback(node, 'actuator_states')(data)
    measure('bridge, example arm, joint_commands (positions, torques)', nodes,
            'joint_commands', commands)

    model_file = ROOT / 'config' / 'example_arm_model.yaml'
    joints = load_model(model_file).joint_names
    for label, every in (('every output', {}),
                         ('torques only', {f'publish_every.{o}': 0 for o in OUTPUTS
                                           if not o.endswith('torques')}),
                         ('torques and tf', {f'publish_every.{o}': 0 for o in OUTPUTS
                                             if not o.endswith('torques') and o != 'tf'})):
        params = {'model_file': str(model_file), 'tip_links': ['tool'],
                  'publish_frequency': 0.0, **every}      # TF with every input: its cost
        tag = 'k' + label.replace(' ', '_')
        nodes = {fast: _node(KinematicsNode, context, tag, params, fast)
                 for fast in (True, False)}
        measure(f'kinematics, example arm, {label}', nodes, 'joint_states',
                _messages(joints, needed, 7))
    report('nodes', rows, ['what', 'fast_us', 'typed_us', 'typed/fast', 'raw_relay_us',
                           'fast/raw_relay'])
    rclpy.shutdown(context=context)


if __name__ == '__main__':
    main()
