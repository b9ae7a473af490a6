"""BridgeCore without ROS: caching, input policy, reconfiguration, trajectories."""

import subprocess
import sys

from conftest import CONFIG
import numpy as np
import pytest
from transmission_bridge.bridge.state import BridgeCore
from transmission_bridge.transmissions import ConfigError, load_transmissions

TS = load_transmissions(CONFIG / 'example_robot_transmissions.yaml')
MOTORS = list(TS.actuator_names)


@pytest.fixture
def core():
    return BridgeCore(TS)


def test_output_waits_for_whole_transmissions(core):
    out = core.ingest('a', ['wrist_left_motor'], [1.0], [], [], 1)
    assert out is None and core.last_result.reason.startswith('no transmission')
    out = core.ingest('a', ['wrist_right_motor', 'elbow_motor'], [1.0, 80.0], [], [], 2)
    assert out.names == ('elbow', 'wrist_pitch', 'wrist_roll')


def test_stale_and_forgetting_per_source(core):
    core.ingest('a', MOTORS[:3], [1.0, 2.0, 3.0], [], [], 10, now_ns=100)
    core.ingest('b', MOTORS[3:], [1.0] * 4, [], [], 10, now_ns=150)
    assert core.stale_actuators(160, 70) == ()
    assert core.stale_actuators(200, 70) == tuple(MOTORS[:3])
    out = core.ingest('a', MOTORS[:1], [5.0], [], [], 5, now_ns=210)    # 'a' went back
    assert core.counters.stamp_backwards == 1
    # What 'a' reported before is forgotten; 'b' keeps its values.
    assert out.names == ('shoulder_pan', 'wrist_pitch', 'wrist_roll', 'finger_proximal',
                         'finger_distal')
    positions = core.actuator_positions()
    assert np.isnan(positions[1]) and positions[3] == 1.0


def test_shared_actuator_reported_once(core):
    core.ingest('a', MOTORS[:1], [1.0], [], [], 1)
    core.ingest('b', MOTORS[:1], [2.0], [], [], 1)
    assert core.last_result.new_shared_actuators == ('shoulder_pan_motor',)
    core.ingest('a', MOTORS[:1], [3.0], [], [], 2)
    assert core.last_result.new_shared_actuators == ()
    assert core.actuator_positions()[0] == 3.0          # the latest message wins


def test_reconfiguration_keeps_values_and_refusals_change_nothing(core):
    core.ingest('a', MOTORS, list(range(7)), [], [], 1)
    bigger = TS.replace_joint('elbow', offset=0.5)
    core.set_transmissions(bigger)
    out = core.ingest('a', ['elbow_motor'], [80.0], [], [], 2)
    assert dict(zip(out.names, out.position))['elbow'] == pytest.approx(1.5)
    before = core.counters.as_dict()
    assert core.ingest('a', ['elbow_motor', 'elbow_motor'], [1.0, 2.0], [], [], 3) is None
    assert core.ingest('a', ['elbow_motor'], [np.inf], [], [], 3) is None
    assert core.ingest('a', ['elbow_motor'], [1.0, 2.0], [], [], 3) is None
    after = core.counters.as_dict()
    assert after['rejected_duplicate_names'] == before['rejected_duplicate_names'] + 1
    assert after['rejected_non_finite'] == before['rejected_non_finite'] + 1
    assert after['rejected_length_mismatch'] == before['rejected_length_mismatch'] + 1
    assert core.actuator_positions()[2] == 80.0          # refused messages left no trace


def test_trajectory_round_trip_and_errors(core):
    names, (pos, vel, acc, eff) = core.map_trajectory(
        ['wrist_roll', 'wrist_pitch'], [[0.1, 0.2]], [[0.0, 0.0]], [[1.0, 0.5]], [[]])
    assert names == ('wrist_left_motor', 'wrist_right_motor')
    assert eff is None
    full = np.zeros(7)
    full[3:5] = pos[0]
    back = TS.actuator_to_joint('position', full)
    np.testing.assert_allclose(back[3:5], [0.2, 0.1], atol=1e-14)
    np.testing.assert_allclose(TS.actuator_to_joint('velocity', np.r_[0, 0, 0, acc[0], 0, 0])
                               [3:5], [0.5, 1.0], atol=1e-14)
    with pytest.raises(ConfigError, match='non-finite'):
        core.map_trajectory(['elbow'], [[np.nan]], [[]], [[]], [[]])
    with pytest.raises(ConfigError, match='duplicate joint'):
        core.map_trajectory(['elbow', 'elbow'], [[1.0, 1.0]], [[]], [[]], [[]])
    assert core.counters.trajectories_rejected == 2
    assert core.counters.trajectories_mapped == 1


# --- streaming joint commands (issue 15) ----------------------------------------------------

JOINTS = list(TS.joint_names)
# Float round-off allowed between the command map and the state map it inverts.
COMMAND_ATOL = 1e-12


def test_command_maps_every_interface_and_inverts_the_state_map(core):
    rng = np.random.default_rng(151)
    q, v, tau = (rng.normal(size=len(JOINTS)) for _ in range(3))
    cmd = core.map_command(JOINTS, q, v, tau)
    assert cmd.names == tuple(MOTORS)
    # The motors, fed back as states, give the commanded joint values again; effort: the
    # bridge publishes tau_transmitted - b v, so the command added b v (NOTATION.md).
    out = BridgeCore(TS).ingest('m', MOTORS, cmd.position, cmd.velocity, cmd.effort, 1)
    np.testing.assert_allclose(out.position, q, rtol=0, atol=COMMAND_ATOL)
    np.testing.assert_allclose(out.velocity, v, rtol=0, atol=COMMAND_ATOL)
    np.testing.assert_allclose(out.effort, tau, rtol=0, atol=COMMAND_ATOL)


def test_command_without_velocity_adds_no_damping(core):
    tau = np.linspace(-1.0, 1.0, len(JOINTS))
    cmd = core.map_command(JOINTS, [], [], tau)
    assert cmd.position is None and cmd.velocity is None
    np.testing.assert_allclose(cmd.effort, TS.joint_to_actuator('effort', tau), rtol=0,
                               atol=COMMAND_ATOL)
    assert TS.damping.any()           # the example has damping: the test can tell


def test_partial_differential_needs_a_last_command_for_the_other_joint(core):
    refused = core.map_command(['wrist_pitch'], [], [], [2.0])
    assert refused is None
    assert "joints ['wrist_roll'] never commanded" in core.last_command_result.reason
    assert core.command_counters.rejected_incomplete == 1
    full = core.map_command(['wrist_pitch', 'wrist_roll'], [], [], [2.0, 0.0])
    half = core.map_command(['wrist_roll'], [], [], [1.0])
    assert half.names == full.names == ('wrist_left_motor', 'wrist_right_motor')
    np.testing.assert_allclose(half.effort, TS.joint_to_actuator(
        'effort', _joints({'wrist_pitch': 2.0, 'wrist_roll': 1.0}))[[3, 4]], atol=COMMAND_ATOL)


def _joints(values):
    full = np.zeros(len(JOINTS))
    for name, value in values.items():
        full[JOINTS.index(name)] = value
    return full


@pytest.mark.parametrize('names,position,reason,counter', [
    (['elbow'], [float('nan')], 'NaN in a command', 'rejected_non_finite'),
    (['elbow'], [float('inf')], 'infinite value', 'rejected_non_finite'),
    (['elbow', 'elbow'], [1.0, 2.0], 'duplicate names', 'rejected_duplicate_names'),
    (['elbow'], [1.0, 2.0], 'array of length 2 for 1 names', 'rejected_length_mismatch'),
    (['nothing'], [1.0], 'no known joint', 'rejected_incomplete'),
])
def test_bad_commands_are_refused_and_change_nothing(core, names, position, reason, counter):
    core.map_command(['wrist_pitch', 'wrist_roll'], [0.5, 0.25], [], [])
    assert core.map_command(names, position, [], []) is None
    assert reason in core.last_command_result.reason
    assert getattr(core.command_counters, counter) == 1
    after = core.map_command(['wrist_roll'], [0.25], [], [])     # pitch: still 0.5
    np.testing.assert_allclose(after.position, TS.joint_to_actuator(
        'position', _joints({'wrist_pitch': 0.5, 'wrist_roll': 0.25}))[[3, 4]],
        atol=COMMAND_ATOL)


def test_command_skips_unknown_joints_and_reports_them_once(core):
    cmd = core.map_command(['elbow', 'tail'], [1.0, 9.0], [], [])
    assert cmd.names == ('elbow_motor',)
    assert core.last_command_result.new_unknown_names == ('tail',)
    core.map_command(['elbow', 'tail'], [1.0, 9.0], [], [])
    assert core.last_command_result.new_unknown_names == ()
    assert core.command_counters.unknown_names == 2


def test_offset_touches_command_position_only(core):
    elbow = TS.joint('elbow')
    cmd = core.map_command(['elbow'], [elbow.offset], [1.0], [1.0])
    assert cmd.position[0] == 0.0          # x_a = (x_j - off) n
    assert cmd.velocity[0] == pytest.approx(80.0)


def _block(arrays):
    """Return a lane's input: the rows one slot apart, the slot a NaN no map may read."""
    return np.concatenate([arrays[0], [np.nan], arrays[1], [np.nan], arrays[2]])


@pytest.mark.parametrize('names', [MOTORS, MOTORS[::-1], MOTORS + ['stranger'], MOTORS[1:]],
                         ids=['every', 'reordered', 'unknown', 'some'])
def test_a_lane_changes_what_ingest_changes(names):
    # Same messages, same receive times: one core through ingest_lane where it takes them,
    # one through ingest. Outputs, counters, positions and staleness agree to the bit.
    rng = np.random.default_rng(1205)
    lane_core, plain = BridgeCore(TS), BridgeCore(TS)
    first = [rng.normal(size=len(MOTORS)) for _ in range(3)]
    for c in (lane_core, plain):
        c.ingest('a', MOTORS, *first, 1, now_ns=10)
    taken = 0
    for k in range(2, 60):
        arrays = [rng.normal(size=len(names)) for _ in range(3)]
        if k % 7 == 0:
            arrays[1][0] = np.nan       # unknown: that joint's effort is not damped
        lane = lane_core.lane('a', names)
        want = plain.ingest('a', names, *arrays, k, now_ns=10 * k)
        got = None if lane is None else lane_core.ingest_lane(lane, _block(arrays), k, 10 * k)
        taken += got is not None
        if got is None:
            got = lane_core.ingest('a', names, *arrays, k, now_ns=10 * k)
        assert got.names == want.names
        for g, w in zip(got[1:], want[1:]):
            assert np.array_equal(g, w, equal_nan=True)
    assert taken > 40
    assert lane_core.counters == plain.counters
    assert np.array_equal(lane_core.actuator_positions(), plain.actuator_positions(),
                          equal_nan=True)
    for age in (5, 15, 100, 590):
        assert lane_core.stale_actuators(600, age) == plain.stale_actuators(600, age)


def test_a_steps_seen_time_is_forgotten_by_reset_and_not_given_to_new_actuators():
    # The step stores one seen time for every actuator and writes it in when it is
    # read. A reset must drop it (every actuator is then unheard of), and a new set of
    # actuators must not inherit it for the ones it adds.
    import yaml
    spec = yaml.safe_load((CONFIG / 'example_robot_transmissions.yaml').read_text())
    spec['transmissions'][2]['actuators'][0]['name'] = 'new_elbow_motor'
    renamed = load_transmissions(spec)
    for change in ('reset', 'rename'):
        stepped = BridgeCore(TS)
        stepped.ingest('a', MOTORS, *[np.zeros(len(MOTORS))] * 3, 10, now_ns=10)
        lane = stepped.lane('a', MOTORS)
        step = stepped.lane_step(lane, np.empty((3, TS.num_joints)), lambda: 50)
        assert step(_block([np.ones(len(MOTORS))] * 3), 20)
        if change == 'reset':
            stepped.reset()
            assert stepped.stale_actuators(60, 100) == TS.actuator_names
        else:
            stepped.set_transmissions(renamed)
            assert stepped.stale_actuators(60, 100) == ('new_elbow_motor',)
            assert stepped.stale_actuators(60, 5) == renamed.actuator_names


def test_a_lane_step_changes_what_ingest_changes():
    # Source 'a' names every motor (the step's case), 'b' the first two; either sometimes
    # jumps back in time, 'a' sends a subset, a NaN or a huge value, and the offsets
    # change. One core takes what its step takes (the rest through ingest_lane and ingest,
    # as the node does), one only ingests. Every output, the counters, positions and
    # staleness agree to the bit. A step that ignored which source wrote a motor last
    # would keep 'b''s motors through 'a''s time jumps; one that outlived a change
    # (another source's jump, new offsets) would publish motors forgotten or the old
    # offsets.
    rng = np.random.default_rng(1206)
    stepped, plain = BridgeCore(TS), BridgeCore(TS)
    state = np.empty((3, TS.num_joints))
    now = [0]
    steps, taken = {}, 0
    stamps = {'a': 100, 'b': 100}
    for k in range(600):
        if k % 150 == 149:
            tset = TS.replace_joint('elbow', offset=float(rng.normal()))
            stepped.set_transmissions(tset)
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
        lane = stepped.lane(source, names)
        step = steps.get((source, tuple(names)))
        got = None
        if step is not None and step(_block(arrays), stamps[source]):
            got, taken = (stepped.transmissions.joint_names, *state), taken + 1
        elif lane is not None:
            got = stepped.ingest_lane(lane, _block(arrays), stamps[source], now[0])
        if got is None:
            got = stepped.ingest(source, names, *arrays, stamps[source], now_ns=now[0])
            lane = stepped.lane(source, names)
            steps[(source, tuple(names))] = lane and stepped.lane_step(
                lane, state, lambda: now[0])
        assert (got is None) == (want is None) and stepped.last_result == plain.last_result
        if want is not None:
            assert tuple(got[0]) == want.names
            for g, w in zip(got[1:], want[1:]):
                assert np.array_equal(g, w, equal_nan=True)
        if k % 6 == 5:      # not after every message: a step's seen time outlives others
            assert stepped.stale_actuators(now[0], 5) == plain.stale_actuators(now[0], 5)
    assert taken > 100
    assert stepped.counters == plain.counters and plain.counters.stamp_backwards > 5
    assert plain.counters.shared_actuators > 0
    assert np.array_equal(stepped.actuator_positions(), plain.actuator_positions(),
                          equal_nan=True)
    for age in (5, 15, 100, 590):
        assert stepped.stale_actuators(now[0], age) == plain.stale_actuators(now[0], age)


def test_huge_finite_values_are_taken_without_numpy_warnings():
    # 1e200 is finite, so the bridge takes it, but its one-call finiteness tests overflow
    # on it (x . x in the lane step, a sum where 1e308 + 1e308 is checked); inf - inf is
    # an invalid value to numpy (refused as infinite). In a node's process (not under
    # pytest, which resets warning filters after collection) neither may surface as
    # numpy's RuntimeWarning: with -W error it would raise here.
    script = '\n'.join([
        'import numpy as np',
        'from transmission_bridge.bridge.state import BridgeCore',
        'from transmission_bridge.ros.named_input import NamedInput',
        'from transmission_bridge.transmissions import load_transmissions',
        f'ts = load_transmissions({str(CONFIG / "example_robot_transmissions.yaml")!r})',
        'core, n, names = BridgeCore(ts), ts.num_actuators, list(ts.actuator_names)',
        'core.ingest("a", names, [0.0] * n, [0.0] * n, [0.0] * n, 1, now_ns=1)',
        'lane = core.lane("a", names)',
        'step = core.lane_step(lane, np.empty((3, ts.num_joints)), lambda: 2)',
        'block = np.zeros(3 * n + 2)',
        'block[0] = 1e200',
        'print(step(block, 2), core.ingest_lane(lane, block, 2, 2) is not None)',
        'check = NamedInput(["x", "y"]).check',
        'print(check(("x", "y"), [[1e308, 1e308]]).rejected == "")',
        'print(check(("x", "y"), [[np.inf, -np.inf]]).rejected)',
    ])
    run = subprocess.run([sys.executable, '-W', 'error::RuntimeWarning', '-c', script],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ['False', 'True', 'True', 'non_finite'] and not run.stderr
