"""
The bridge's fast path without ROS nodes: a relay changes what ingest changes, to the bit.

Messages are serialised by rclpy (Fast-CDR, as a driver's arrive); one ActuatorStates takes
what its relays take and the rest through ingest, learning afterwards, as the node does;
another only ingests. Outputs, counters, positions and staleness must agree.
"""

import subprocess
import sys

from conftest import CONFIG
import numpy as np
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState
from transmission_bridge.mapping.fast_route import FastStateRoute
from transmission_bridge.mapping.state import ActuatorStates
from transmission_bridge.transmissions import load_transmissions

TS = load_transmissions(CONFIG / 'example_robot_transmissions.yaml')
MOTORS = list(TS.actuator_names)


def _message(names, arrays, stamp_ns, frame_id='motors'):
    msg = JointState(name=list(names))
    msg.header.frame_id = frame_id
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(stamp_ns), 1_000_000_000)
    msg.position, msg.velocity, msg.effort = (np.asarray(a, dtype=float).tolist()
                                              for a in arrays)
    return msg


class _Node:
    """The node's two routes around one ActuatorStates: relay first, then ingest and learn."""

    def __init__(self, clock, tset=TS):
        self.states = ActuatorStates(tset)
        self.relays = {}
        self.clock = clock
        self.taken = 0

    def handle(self, source, names, arrays, stamp_ns, frame_id='motors'):
        """Return (names, position, velocity, effort) of the output, or None."""
        msg = _message(names, arrays, stamp_ns, frame_id)
        data = serialize_message(msg)
        relay = self.relays.setdefault(source, FastStateRoute(source, self.clock))
        out = relay.take(data)
        if out is not None:
            self.taken += 1
            decoded = deserialize_message(out, JointState)
            assert decoded.header.frame_id == frame_id
            return (tuple(decoded.name), *(np.array(a) for a in (
                decoded.position, decoded.velocity, decoded.effort)))
        got = self.states.ingest(source, msg.name, msg.position, msg.velocity, msg.effort,
                                 stamp_ns, self.clock())
        relay.learn(self.states, data, msg)
        return got


def _agree(got, want):
    assert (got is None) == (want is None)
    if want is not None:
        assert tuple(got[0]) == want.names
        for g, w in zip(got[1:], want[1:]):
            assert np.array_equal(g, w, equal_nan=True)


@pytest.mark.parametrize('names', [MOTORS, MOTORS[::-1], MOTORS + ['stranger'], MOTORS[1:]],
                         ids=['every', 'reordered', 'unknown', 'some'])
def test_a_relay_changes_what_ingest_changes(names):
    # Same messages, same receive times; every 7th carries a NaN (the typed route's).
    rng = np.random.default_rng(1205)
    now = [10]
    node, plain = _Node(lambda: now[0]), ActuatorStates(TS)
    first = [rng.normal(size=len(MOTORS)) for _ in range(3)]
    node.handle('a', MOTORS, first, 1)
    plain.ingest('a', MOTORS, *first, 1, now_ns=10)
    for k in range(2, 60):
        now[0] = 10 * k
        arrays = [rng.normal(size=len(names)) for _ in range(3)]
        if k % 7 == 0:
            arrays[1][0] = np.nan       # unknown: that joint's effort is not damped
        want = plain.ingest('a', names, *arrays, k, now_ns=10 * k)
        _agree(node.handle('a', names, arrays, k), want)
    assert node.taken > 40
    assert node.states.counters == plain.counters
    assert np.array_equal(node.states.actuator_positions(), plain.actuator_positions(),
                          equal_nan=True)
    for age in (5, 15, 100, 590):
        assert node.states.stale_actuators(600, age) == plain.stale_actuators(600, age)


def test_linkage_states_and_their_refusals_agree_on_both_routes():
    # Issue 44: the legged robot's knees and ankles in motion, with states past a limit and
    # unknown positions among them: what is published, refused and kept agrees to the bit.
    ts = load_transmissions(CONFIG / 'legged_robot.urdf')
    motors = list(ts.actuator_names)
    rng = np.random.default_rng(44)
    now = [10]
    node, plain = _Node(lambda: now[0], ts), ActuatorStates(ts)
    pitch = ts.joint_names.index('left_ankle_pitch')
    for k in range(1, 80):
        now[0] = 10 * k
        q = ts.default_positions + 0.3 * np.sin(0.05 * k + np.arange(ts.num_joints))
        if k % 11 == 0:
            q[pitch] = 0.7              # past its limit: refused
        x = ts.joint_to_actuator('position', q)
        if k % 13 == 0:
            x[motors.index('right_knee_motor')] = np.nan
        arrays = [x, rng.normal(size=len(motors)), rng.normal(size=len(motors))]
        want = plain.ingest('a', motors, *arrays, k, now_ns=10 * k)
        _agree(node.handle('a', motors, arrays, k), want)
        assert node.states.refused == plain.refused
    assert node.taken > 40 and plain.counters.refused_linkage_states >= 7
    assert node.states.counters == plain.counters
    tset = plain.transmissions              # the solves the next states start from, and
    for states in (node.states, plain):     # the state every consumer reads: the same
        states.solved = states.joint_map.linkage_positions(tset.num_joints, tset.joint_index)
    np.testing.assert_array_equal(node.states.solved, plain.solved)
    np.testing.assert_array_equal(node.states.measured().position, plain.measured().position)
    np.testing.assert_array_equal(node.states.measured().velocity, plain.measured().velocity)


def test_a_relays_seen_time_is_forgotten_by_reset_and_not_given_to_new_actuators():
    # The relay stores one seen time for every actuator and writes it in when it is read.
    # A reset must drop it (every actuator is then unheard of), and a new set of actuators
    # must not inherit it for the ones it adds.
    import yaml
    spec = yaml.safe_load((CONFIG / 'example_robot_transmissions.yaml').read_text())
    spec['transmissions'][2]['actuators'][0]['name'] = 'new_elbow_motor'
    renamed = load_transmissions(spec)
    for change in ('reset', 'rename'):
        node = _Node(lambda: 50)
        node.handle('a', MOTORS, [np.zeros(len(MOTORS))] * 3, 10)
        node.handle('a', MOTORS, [np.ones(len(MOTORS))] * 3, 20)
        assert node.taken == 1
        stepped = node.states
        if change == 'reset':
            stepped.reset()
            assert stepped.stale_actuators(60, 100) == TS.actuator_names
        else:
            stepped.set_transmissions(renamed)
            assert stepped.stale_actuators(60, 100) == ('new_elbow_motor',)
            assert stepped.stale_actuators(60, 5) == renamed.actuator_names


def test_relays_of_two_topics_change_what_ingest_changes():
    # Source 'a' names every motor, 'b' the first two; either sometimes jumps back in time,
    # 'a' sends a subset, a NaN or a huge value, changes its frame_id (a counter: the
    # relay keeps taking it and copies it), and the offsets change. A relay that ignored
    # which source wrote a motor last would keep 'b''s motors through 'a''s time jumps;
    # one that outlived a change (another source's jump, new offsets) would publish motors
    # forgotten or the old offsets.
    rng = np.random.default_rng(1206)
    now = [0]
    node, plain = _Node(lambda: now[0]), ActuatorStates(TS)
    stamps = {'a': 100, 'b': 100}
    for k in range(600):
        if k % 150 == 149:
            tset = TS.replace_joint('elbow', offset=float(rng.normal()))
            node.states.set_transmissions(tset)
            plain.set_transmissions(tset)
        source = 'b' if rng.random() < 0.3 else 'a'
        names = MOTORS if source == 'a' else MOTORS[:2]
        stamps[source] += 10
        jump = rng.random() < 0.06
        stamps[source] -= 35 * jump
        if source == 'a' and rng.random() < (0.5 if jump else 0.05):
            names = MOTORS[1:]
        arrays = [rng.normal(size=len(names)) for _ in range(3)]
        if rng.random() < 0.05:
            arrays[rng.integers(3)][0] = np.nan
        elif rng.random() < 0.03:           # finite, but its square overflows
            arrays[rng.integers(3)][-1] = 1e200
        now[0] = 1000 + 10 * k
        want = plain.ingest(source, names, *arrays, stamps[source], now_ns=now[0])
        got = node.handle(source, names, arrays, stamps[source], f'seq{k:04d}')
        _agree(got, want)
        assert node.states.last_result == plain.last_result
        if k % 6 == 5:      # not after every message: a relay's seen time outlives others
            assert node.states.stale_actuators(now[0], 5) == plain.stale_actuators(now[0], 5)
    assert node.taken > 100
    assert node.states.counters == plain.counters and plain.counters.stamp_backwards > 5
    assert plain.counters.shared_actuators > 0
    assert np.array_equal(node.states.actuator_positions(), plain.actuator_positions(),
                          equal_nan=True)
    for age in (5, 15, 100, 590):
        assert node.states.stale_actuators(now[0], age) == plain.stale_actuators(now[0], age)


def test_huge_finite_values_are_taken_without_numpy_warnings():
    # 1e200 is finite, so the bridge takes it, but its one-call finiteness tests overflow
    # on it (x . x in the relay, a sum where 1e308 + 1e308 is checked); inf - inf is an
    # invalid value to numpy (refused as infinite). In a node's process (not under
    # pytest, which resets warning filters after collection) neither may surface as
    # numpy's RuntimeWarning: with -W error it would raise here.
    script = '\n'.join([
        'import numpy as np',
        'from rclpy.serialization import serialize_message',
        'from sensor_msgs.msg import JointState',
        'from transmission_bridge.mapping.fast_route import FastStateRoute',
        'from transmission_bridge.mapping.state import ActuatorStates',
        'from transmission_bridge.messages.named_input import NamedInput',
        'from transmission_bridge.transmissions import load_transmissions',
        f'ts = load_transmissions({str(CONFIG / "example_robot_transmissions.yaml")!r})',
        'states, n, names = ActuatorStates(ts), ts.num_actuators, list(ts.actuator_names)',
        'msg = JointState(name=names, position=[0.0] * n, velocity=[0.0] * n, effort=[0.0] * n)',
        'states.ingest("a", names, [0.0] * n, [0.0] * n, [0.0] * n, 0, now_ns=1)',
        'relay = FastStateRoute("a", lambda: 2)',
        'relay.learn(states, serialize_message(msg), msg)',
        'msg.position[0] = 1e200',
        'msg.header.stamp.nanosec = 2',
        'print(relay.take(serialize_message(msg)) is None,',
        '      states.ingest("a", names, msg.position, [0.0] * n, [0.0] * n, 2) is not None)',
        'check = NamedInput(["x", "y"]).check',
        'print(check(("x", "y"), [[1e308, 1e308]]).rejected == "")',
        'print(check(("x", "y"), [[np.inf, -np.inf]]).rejected)',
    ])
    run = subprocess.run([sys.executable, '-W', 'error::RuntimeWarning', '-c', script],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ['True', 'True', 'True', 'non_finite'] and not run.stderr
