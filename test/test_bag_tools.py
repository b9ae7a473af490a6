"""Rosbag replay testing: replay through the live nodes, record, and compare with the converter."""

import os
import shutil
import signal
import subprocess
import sys
import time

from bag_harness import joint_states, start_tool, tool, topics
from conftest import CONFIG
from diagnostic_msgs.msg import DiagnosticArray
import numpy as np
import pytest
from ros_harness import Graph, latest_status, NodeProcess, unique_namespace
from sensor_msgs.msg import JointState
from tolerances import PEER_ATOL, POWER_RTOL
from transmission_bridge.bag.example import write_actuator_bag
from transmission_bridge.transmissions import load_transmissions

pytestmark = pytest.mark.ros

TRANSMISSIONS = CONFIG / 'example_robot_transmissions.yaml'
MODEL = CONFIG / 'example_arm_model.yaml'
LEGGED = CONFIG / 'legged_robot.urdf'       # its transmissions and its model
LINKAGE_ATOL = 1e-12        # live and offline linkage solves start from different states
RATE_HZ = 50.0
WARMUP_START_NS = 1_600_000_000_000_000_000
BAG_START_NS = 1_700_000_000_000_000_000    # write_actuator_bag's stamps start here


class LiveRobot:
    """Bridge and kinematics on sim time in a private namespace, plus a test node."""

    def __init__(self, tmp_path, transmissions=TRANSMISSIONS, model=MODEL):
        self.transmissions, self.model = transmissions, model
        self.ns = ns = unique_namespace('bag')
        common = ['-r', f'__ns:={ns}', '-r', f'/clock:={ns}/clock', '-r',
                  f'/diagnostics:={ns}/diagnostics', '-p', 'use_sim_time:=true']
        # Fed the holding torques, as robot.launch.py joint_commands_from:=gravity does.
        self.bridge = NodeProcess('transmission_bridge.bridge.node',
                                  ['-p', f'transmissions_file:={transmissions}',
                                   '-p', 'diagnostics_period:=0.2', '-r',
                                   'joint_commands:=kinematics/gravity_torques',
                                   # the watchdog's holds are live-only: compared with the
                                   # converter here, the replays' gaps would add them
                                   '-p', 'command_timeout:=0.0', *common],
                                  tmp_path / 'bridge.log')
        self.kin = NodeProcess('transmission_bridge.kinematics_node.node',
                               ['-p', f'model_file:={model}', *common], tmp_path / 'kin.log')
        self.graph = Graph(ns)
        # Ready when each says so (the bridge once active, its kernels compiled; the
        # kinematics node once its model's kernels are): never after a fixed time.
        assert self.graph.spin_until(
            lambda: 'active: publishing joint_states' in self.bridge.output()
            and 'kernels ready in' in self.kin.output()
            and self.graph.node.count_publishers('joint_states') > 0
            and self.graph.node.count_publishers('kinematics/gravity_torques') > 0, 60), \
            self.bridge.output() + self.kin.output()

    def replay_args(self):
        return ['--clock', '--wait-for-subscribers', '--remap',
                f'/actuator_states:={self.ns}/actuator_states', f'/clock:={self.ns}/clock']

    def warm_up(self, got, tmp_path):
        """
        Replay a short bag with earlier stamps until ``got`` receives from it, then empty it.

        A new subscription can still be matching with the node's publisher when the replay
        starts (seen on a loaded CI machine: the first fifth of a bag missing).
        """
        warm = tmp_path / 'warm_up'
        write_actuator_bag(warm, load_transmissions(self.transmissions), seconds=0.2, rate=RATE_HZ,
                           start_ns=WARMUP_START_NS)
        for _ in range(5):
            assert tool('replay', warm, *self.replay_args()).returncode == 0
            if self.graph.spin_until(lambda: len(got) > 0, 2):
                break
        assert got, 'no output from the warm-up replay'
        self.graph.spin_until(lambda: False, 0.5)     # drain what is still in flight
        got.clear()

    def close(self):
        self.graph.close()
        for proc in (self.bridge, self.kin):
            assert proc.stop() == 0, proc.output()
            assert 'Traceback' not in proc.output()


@pytest.fixture
def robot(tmp_path):
    r = LiveRobot(tmp_path)
    yield r
    r.close()


def _record(robot, out, tmp_path):
    rec = start_tool('record', out, '--topics', f'{robot.ns}/joint_states',
                     f'{robot.ns}/kinematics/gravity_torques', f'{robot.ns}/actuator_commands',
                     '--use-sim-time', log=tmp_path / 'record.log')
    log = tmp_path / 'record.log'
    # The tool says 'recording' once each of its subscriptions is connected to a publisher.
    assert robot.graph.spin_until(lambda: 'recording' in log.read_text(), 30), log.read_text()
    return rec


def _without_warmup(messages):
    return {stamp: m for stamp, m in messages.items() if stamp >= BAG_START_NS}


@pytest.mark.parametrize('storage', ['sqlite3', 'mcap'])
def test_replay_record_equals_offline_conversion(robot, tmp_path, storage):
    _replay_record_convert(robot, tmp_path, storage, atol=0.0)


def test_a_legged_robot_with_linkages_converts_as_the_live_bridge_publishes(tmp_path):
    # Issue 44: knee and ankle linkages solved live and offline. The live bridge's solves
    # start from the warm-up's last state, the converter's from the zero pose: the same
    # solution to the residual, not to the bit.
    robot = LiveRobot(tmp_path, LEGGED, LEGGED)
    try:
        _replay_record_convert(robot, tmp_path, 'mcap', atol=LINKAGE_ATOL)
    finally:
        robot.close()


def _replay_record_convert(robot, tmp_path, storage, atol):
    """Replay a bag through the live nodes, record, convert it: the same messages."""
    ts = load_transmissions(robot.transmissions)
    bag = tmp_path / 'in'
    n = write_actuator_bag(bag, ts, seconds=1.0, rate=RATE_HZ, storage=storage)
    warm = tmp_path / 'warm'                 # earlier stamps: set apart below
    write_actuator_bag(warm, ts, seconds=0.2, rate=RATE_HZ, storage=storage,
                       start_ns=WARMUP_START_NS)
    rec = _record(robot, tmp_path / 'recorded', tmp_path)
    # On a busy machine the bridge -> recorder link can still be matching after _record's
    # wait; a short warm-up replay gives it time, so the bag under test is recorded whole.
    seen = []           # the last output of the chain, as the recorder sees it
    robot.graph.node.create_subscription(JointState, 'actuator_commands',
                                         lambda m: seen.append(m), 100)
    assert tool('replay', warm, *robot.replay_args()).returncode == 0
    played = tool('replay', bag, *robot.replay_args())
    assert played.returncode == 0, played.stderr
    assert f'played {n} messages' in played.stdout
    bag_stamps = lambda: sum(  # noqa: E731
        m.header.stamp.sec * 10**9 + m.header.stamp.nanosec >= BAG_START_NS for m in seen)
    assert robot.graph.spin_until(lambda: bag_stamps() >= n, 20), bag_stamps()
    robot.graph.spin_for(0.2)       # what the recorder, another process, still has in flight
    rec.send_signal(signal.SIGINT)
    assert rec.wait(20) == 0, (tmp_path / 'record.log').read_text()
    converted = tool('convert', bag, tmp_path / 'converted', '--transmissions',
                     robot.transmissions, '--model', robot.model, '--keep-input')
    assert converted.returncode == 0, converted.stderr
    assert topics(tmp_path / 'converted') == {'/actuator_states': n, '/joint_states': n,
                                              '/kinematics/gravity_torques': n,
                                              '/actuator_commands': n}
    live = _without_warmup(joint_states(tmp_path / 'recorded', f'{robot.ns}/joint_states'))
    offline = joint_states(tmp_path / 'converted', '/joint_states')
    assert sorted(live) == sorted(offline) and len(live) == n
    for stamp, [(frame, names, pos, vel, eff)] in offline.items():
        [(lframe, lnames, lpos, lvel, leff)] = live[stamp]
        assert (lframe, lnames) == (frame, names)
        # Same code, same inputs: equal to the last bit (linear maps).
        for a, b in ((lpos, pos), (lvel, vel), (leff, eff)):
            np.testing.assert_allclose(a, b, rtol=0, atol=atol)
    live_g = _without_warmup(joint_states(tmp_path / 'recorded',
                                          f'{robot.ns}/kinematics/gravity_torques'))
    offline_g = joint_states(tmp_path / 'converted', '/kinematics/gravity_torques')
    assert sorted(live_g) == sorted(offline_g)
    for stamp, [(frame, names, pos, _, eff)] in offline_g.items():
        [(lframe, lnames, lpos, _, leff)] = live_g[stamp]
        assert (lframe, lnames) == (frame, names)
        np.testing.assert_allclose(lpos, pos, rtol=0, atol=atol)
        # The node computes one configuration at a time, the converter in batch.
        np.testing.assert_allclose(leff, eff, rtol=0, atol=PEER_ATOL * 1e-3)
    # Issue 15: the motor holding torques the live chain published, offline.
    live_c = _without_warmup(joint_states(tmp_path / 'recorded', f'{robot.ns}/actuator_commands'))
    offline_c = joint_states(tmp_path / 'converted', '/actuator_commands')
    assert sorted(live_c) == sorted(offline_c)
    for stamp, [(frame, names, pos, vel, eff)] in offline_c.items():
        [(lframe, lnames, lpos, lvel, leff)] = live_c[stamp]
        assert (lframe, lnames) == (frame, names) and len(lvel) == len(vel) == 0
        np.testing.assert_allclose(lpos, pos, rtol=0, atol=atol)
        np.testing.assert_allclose(leff, eff, rtol=0, atol=PEER_ATOL * 1e-3)


def test_rate_five_with_sim_time_keeps_bag_stamps(robot, tmp_path):
    ts = load_transmissions(TRANSMISSIONS)
    bag = tmp_path / 'in'
    n = write_actuator_bag(bag, ts, seconds=2.0, rate=RATE_HZ)
    got = robot.graph.collect(JointState, 'joint_states', qos=1000)
    robot.warm_up(got, tmp_path)
    player = start_tool('replay', bag, '--rate', 5, *robot.replay_args(),
                        log=tmp_path / 'replay.log')
    assert robot.graph.spin_until(lambda: len(got) >= n and player.poll() is not None, 30), \
        (len(got), (tmp_path / 'replay.log').read_text())
    assert player.returncode == 0
    assert len(got) == n
    # 2 s of bag (last message at 1.98 s) at rate 5 plays in 0.396 s; sleeps only overshoot.
    played = float((tmp_path / 'replay.log').read_text().split(' in ')[-1].split(' s')[0])
    assert 0.396 <= played < 0.396 + 0.5
    stamps = sorted(m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec for m in got)
    assert stamps[0] == 1_700_000_000_000_000_000
    assert stamps[-1] - stamps[0] == round(2.0e9 - 1e9 / RATE_HZ)


def test_loop_across_the_time_jump(robot, tmp_path):
    ts = load_transmissions(TRANSMISSIONS)
    bag = tmp_path / 'in'
    n = write_actuator_bag(bag, ts, seconds=0.5, rate=RATE_HZ)
    got = robot.graph.collect(JointState, 'joint_states', qos=1000)
    diag = robot.graph.collect(DiagnosticArray, 'diagnostics')
    robot.warm_up(got, tmp_path)
    player = start_tool('replay', bag, '--loop', *robot.replay_args(),
                        log=tmp_path / 'replay.log')
    first_stamp = 1_700_000_000_000_000_000

    def looped():
        stamps = [m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec for m in got]
        return stamps.count(first_stamp) >= 2 and len(stamps) > 2 * n - 4

    assert robot.graph.spin_until(looped, 20), (tmp_path / 'replay.log').read_text()
    player.send_signal(signal.SIGINT)
    assert player.wait(20) == 0
    assert 'loops' in (tmp_path / 'replay.log').read_text()

    def counted():
        return diag and any(kv.key == 'stamp_backwards' and int(kv.value) >= 1
                            for node in ('transmission_bridge', 'kinematics')
                            for kv in getattr(latest_status(diag, node), 'values', ()))

    # The jump is caught one of two ways, whichever message the node handles first: the
    # /clock jump clears the caches (logged), or the older stamp is counted.
    cleared = 'time jumped backwards: cached states cleared'
    assert robot.graph.spin_until(lambda: counted() or cleared in robot.bridge.output(), 5)
    assert cleared in robot.kin.output() or cleared in robot.bridge.output()
    # After the jump the outputs start again from the bag's first stamp, values intact.
    after = [m for m in got if m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec
             == first_stamp]
    np.testing.assert_array_equal(after[0].position, after[-1].position)
    assert robot.bridge.alive() and robot.kin.alive()


def _assert_clean_failure(result, words, out=None):
    assert result.returncode != 0
    assert words in result.stderr, result.stderr
    assert 'Traceback' not in result.stderr + result.stdout
    if out is not None:
        assert not out.exists()
        assert not [p for p in out.parent.iterdir() if '.partial' in p.name]


def test_bad_bags_fail_cleanly(tmp_path):
    ts = load_transmissions(TRANSMISSIONS)
    args = ('--transmissions', TRANSMISSIONS)
    out = tmp_path / 'out'
    _assert_clean_failure(tool('convert', tmp_path / 'missing', out, *args), 'no bag at', out)
    _assert_clean_failure(tool('replay', tmp_path / 'missing'), 'no bag at')
    other = tmp_path / 'other'
    write_actuator_bag(other, ts, seconds=0.2, topic='/motor_states')
    _assert_clean_failure(tool('convert', other, out, *args),
                          "topic '/actuator_states' is not in bag", out)
    _assert_clean_failure(tool('replay', other, '--topics', '/nothing'),
                          "topic '/nothing' is not in bag")
    wrong = tmp_path / 'wrong'
    _write_wrong_type(wrong)
    _assert_clean_failure(tool('convert', wrong, out, *args),
                          'has type std_msgs/msg/Float64, expected sensor_msgs/msg/JointState',
                          out)
    for storage, suffix in (('mcap', '.mcap'), ('sqlite3', '.db3')):
        bad = tmp_path / f'corrupt_{storage}'
        write_actuator_bag(bad, ts, seconds=1.0, storage=storage)
        data = next(bad.glob('*' + suffix))
        raw = data.read_bytes()
        data.write_bytes(raw[:len(raw) // 2] + b'\x00garbage' * 64)
        _assert_clean_failure(tool('convert', bad, out, *args), 'cannot read bag', out)
    file_not_bag = tmp_path / 'plain.txt'
    file_not_bag.write_text('hello')
    _assert_clean_failure(tool('convert', file_not_bag, out, *args), 'is a file', out)
    good = tmp_path / 'good'
    write_actuator_bag(good, ts, seconds=0.2)
    existing = tmp_path / 'existing'
    existing.mkdir()
    _assert_clean_failure(tool('convert', good, existing, *args), 'already exists')
    _assert_clean_failure(tool('convert', good, out, '--transmissions', tmp_path / 'no.yaml'),
                          'cannot read', out)


def _write_wrong_type(path):
    from transmission_bridge.bag import io
    store = io.typestore()
    with io.atomic_writer(path) as w:
        c = w.add_connection('/actuator_states', 'std_msgs/msg/Float64', typestore=store)
        w.write(c, 1, store.serialize_cdr(store.types['std_msgs/msg/Float64'](data=1.0),
                                          'std_msgs/msg/Float64'))


def test_convert_interrupted_leaves_nothing(tmp_path):
    ts = load_transmissions(TRANSMISSIONS)
    bag = tmp_path / 'big'
    write_actuator_bag(bag, ts, seconds=400.0, rate=500.0)      # 200,000 messages
    out = tmp_path / 'out'
    proc = start_tool('convert', bag, out, '--transmissions', TRANSMISSIONS, '--model', MODEL,
                      log=tmp_path / 'convert.log')
    time.sleep(2.0)
    assert proc.poll() is None, 'conversion finished before the interrupt; make the bag larger'
    proc.send_signal(signal.SIGINT)
    assert proc.wait(60) == 130
    log = (tmp_path / 'convert.log').read_text()
    assert 'interrupted; no output written' in log and 'Traceback' not in log
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if '.partial' in p.name]


def test_record_stopped_with_ctrl_c_leaves_a_complete_bag(robot, tmp_path):
    ts = load_transmissions(TRANSMISSIONS)
    bag = tmp_path / 'in'
    write_actuator_bag(bag, ts, seconds=1.0, rate=RATE_HZ)
    rec = _record(robot, tmp_path / 'rec', tmp_path)
    seen = robot.graph.collect(JointState, 'joint_states', qos=1000)
    player = start_tool('replay', bag, '--loop', *robot.replay_args(),
                        log=tmp_path / 'replay.log')
    assert robot.graph.spin_until(lambda: len(seen) > 30, 20)
    rec.send_signal(signal.SIGINT)          # mid-stream
    assert rec.wait(20) == 0
    player.send_signal(signal.SIGINT)
    assert player.wait(20) == 0
    counts = topics(tmp_path / 'rec')
    assert counts[f'{robot.ns}/joint_states'] > 10
    assert not [p for p in tmp_path.iterdir() if '.partial' in p.name]


def test_record_waits_for_a_publisher_not_a_subscriber(tmp_path):
    # A topic the graph knows from a subscriber only (the bridge's actuator_states before
    # the motor drivers start) is not recorded as if it were live: the tool waits for a
    # publisher, and when none comes it fails, naming the topic, and writes nothing.
    ns = unique_namespace('rec')
    graph = Graph(ns)
    try:
        graph.collect(JointState, 'actuator_states')
        assert graph.spin_until(lambda: graph.node.count_subscribers('actuator_states') > 0)
        out = tmp_path / 'rec'
        result = tool('record', out, '--topics', f'{ns}/actuator_states', '--duration', '1',
                      '--wait-timeout', '3')
    finally:
        graph.close()
    _assert_clean_failure(result, f'no publisher on {ns}/actuator_states in 3 s', out)


def test_record_says_recording_once_connected_and_stores_what_follows(tmp_path):
    # 'recording' comes once the subscription is connected, and --duration counts from there
    # (the old tool started its clock on subscribing; on a loaded machine a three-second
    # recording held nothing). The test's publisher also waits for its own side of the link.
    ns = unique_namespace('rec')
    graph = Graph(ns)
    out = tmp_path / 'rec'
    log = tmp_path / 'record.log'
    try:
        pub = graph.node.create_publisher(JointState, 'actuator_states', 10)
        rec = start_tool('record', out, '--topics', f'{ns}/actuator_states', '--duration', '3',
                         log=log)
        assert graph.spin_until(lambda: 'recording' in log.read_text(), 30), log.read_text()
        assert graph.spin_until(lambda: pub.get_subscription_count() > 0, 10)
        pub.publish(JointState(name=['m'], position=[1.0]))
        assert rec.wait(30) == 0, log.read_text()
    finally:
        graph.close()
    assert topics(out) == {f'{ns}/actuator_states': 1}


def test_tools_have_help():
    for name in ('replay', 'record', 'convert'):
        result = tool(name, '--help')
        assert result.returncode == 0 and 'usage:' in result.stdout


def test_exact_path_equals_vectorised_path(tmp_path):
    """The message-by-message path (irregular bags) gives what the vectorised path gives."""
    from transmission_bridge.bag.convert import convert_bag
    from transmission_bridge.kinematics import load_model
    ts = load_transmissions(TRANSMISSIONS)
    model = load_model(MODEL)
    bag = tmp_path / 'in'
    write_actuator_bag(bag, ts, seconds=0.5, rate=RATE_HZ)
    fast = convert_bag(bag, tmp_path / 'fast', ts, model)
    assert fast.vectorised
    import transmission_bridge.bag.convert as conv
    original = conv._vectorised_joint_states
    conv._vectorised_joint_states = lambda *a: None
    try:
        slow = convert_bag(bag, tmp_path / 'slow', ts, model)
    finally:
        conv._vectorised_joint_states = original
    assert not slow.vectorised
    a = joint_states(tmp_path / 'fast', '/joint_states')
    b = joint_states(tmp_path / 'slow', '/joint_states')
    assert sorted(a) == sorted(b)
    for stamp in a:
        for x, y in zip(a[stamp][0][2:], b[stamp][0][2:]):
            assert np.array_equal(x, y)
    ga = joint_states(tmp_path / 'fast', '/kinematics/gravity_torques')
    gb = joint_states(tmp_path / 'slow', '/kinematics/gravity_torques')
    for stamp in ga:
        np.testing.assert_allclose(ga[stamp][0][4], gb[stamp][0][4], rtol=0, atol=1e-12)
    shutil.rmtree(tmp_path / 'fast')
    assert os.listdir(tmp_path)


def test_refused_linkage_states_convert_as_the_bridge_leaves_them_out(tmp_path):
    """Issue 44: a bag with ankle states past a limit takes the bridge's path, and says so."""
    from transmission_bridge.bag import io
    from transmission_bridge.bag.example import one_message
    ts = load_transmissions(LEGGED)
    rng = np.random.default_rng(3)
    q = np.tile(ts.default_positions, (30, 1)) + rng.uniform(-0.2, 0.2, (30, ts.num_joints))
    pitch = ts.joint_names.index('left_ankle_pitch')
    q[10:13, pitch] = 0.7                       # its limit is 0.6 rad
    x = ts.joint_to_actuator('position', q)
    bag, stamps = tmp_path / 'in', 1_700_000_000_000_000_000 + np.arange(30) * 10_000_000
    with io.atomic_writer(bag, 'mcap') as writer:
        conn = writer.add_connection('/actuator_states', 'sensor_msgs/msg/JointState',
                                     typestore=io.typestore())
        for stamp, row in zip(stamps.tolist(), x):
            writer.write(conn, stamp, one_message(ts, stamp, row))
    converted = tool('convert', bag, tmp_path / 'out', '--transmissions', LEGGED)
    assert converted.returncode == 0, converted.stderr
    assert '3 linkage states refused' in converted.stderr
    assert 'message by message' in converted.stdout
    out = joint_states(tmp_path / 'out', '/joint_states')
    assert len(out) == 30
    for k, stamp in enumerate(stamps.tolist()):
        [(_, names, pos, _, _)] = out[stamp]
        expected = [n for n in ts.joint_names if not (10 <= k < 13 and 'left_ankle' in n)]
        assert list(names) == expected
        np.testing.assert_allclose(pos, [q[k, ts.joint_names.index(n)] for n in names],
                                   rtol=0, atol=LINKAGE_ATOL)


def test_motor_holding_torques_are_what_the_bridge_makes_of_the_gravity_torques(tmp_path):
    """Issue 15: --model also writes /actuator_commands, each motor's holding torque."""
    ts = load_transmissions(TRANSMISSIONS)
    bag = tmp_path / 'in'
    n = write_actuator_bag(bag, ts, seconds=0.5, rate=RATE_HZ)
    done = tool('convert', bag, tmp_path / 'out', '--transmissions', TRANSMISSIONS,
                '--model', MODEL)
    assert done.returncode == 0, done.stderr
    assert f'{n} actuator_commands' in done.stdout
    gravity = joint_states(tmp_path / 'out', '/kinematics/gravity_torques')
    commands = joint_states(tmp_path / 'out', '/actuator_commands')
    assert sorted(gravity) == sorted(commands) and len(commands) == n
    core, speeds = _live_mapper(ts, bag)    # what the live bridge does, message by message
    rng = np.random.default_rng(15)
    for stamp, [(frame, names, q, _, tau)] in gravity.items():
        [(cframe, cnames, cpos, cvel, ceff)] = commands[stamp]
        expected = core.map_command(names, q, [], tau, stamp_ns=stamp)
        assert (cframe, cnames) == (frame, expected.names) and len(cvel) == 0
        assert np.array_equal(cpos, expected.position)
        assert np.array_equal(ceff, expected.effort)      # the batch path: the same bits
        # Power through the transmissions: tau . v equal on both sides of the ideal maps,
        # the motors' friction (three have some; their stages are ideal) taken off first,
        # the joints' damping at the state's motion added (NOTATION.md: one motion).
        tau_joint = np.array([tau[names.index(j)] for j in ts.joint_names]) + ts.damping * \
            ts.actuator_to_joint('velocity', speeds[stamp])
        motor = dict(zip(cnames, ceff))
        tau_motor = np.array([motor[a] for a in ts.actuator_names]) - ts.losses.friction(
            speeds[stamp])
        v_joint = rng.normal(size=ts.num_joints)
        v_motor = ts.joint_to_actuator('velocity', v_joint)
        power_joint = np.dot(tau_joint, v_joint)
        assert np.dot(tau_motor, v_motor) == pytest.approx(power_joint, rel=POWER_RTOL,
                                                           abs=POWER_RTOL)
    assert any(not np.allclose(commands[s][0][4], gravity[s][0][4][:len(commands[s][0][4])])
               for s in commands)           # the maps really do something on this robot


def _live_mapper(ts, bag):
    """
    Return (a command mapper as the live bridge has it, {stamp: the motors' velocities}).

    The bridge takes a command's gear losses (here the motors' friction) at the motor
    velocities of the state of the command's stamp: those of the bag's actuator states.
    """
    from transmission_bridge.mapping.commands import CommandMapper
    from transmission_bridge.mapping.measurement import Measured
    speeds = {stamp: np.array([dict(zip(names, vel))[a] for a in ts.actuator_names])
              for stamp, [(_, names, _, vel, _)] in joint_states(
                  bag, '/actuator_states').items()}
    n_j, n_a = ts.num_joints, ts.num_actuators

    def measured(stamp_ns=None):
        return Measured(np.full(n_j, np.nan), np.full(n_j, np.nan), np.full(n_a, np.nan),
                        speeds[stamp_ns])
    return CommandMapper(ts, measured=measured), speeds


def test_holding_torques_beyond_a_motors_limit_convert_to_what_the_bridge_sends(tmp_path):
    # The live bridge keeps a streaming command within the limits (scaled as a whole); a
    # recorded bag whose holding torques exceed a motor's effort limit must convert to
    # those same limited commands, not stop the conversion.
    import yaml
    spec = yaml.safe_load(TRANSMISSIONS.read_text())
    elbow = next(t for t in spec['transmissions'] if t['name'] == 'elbow_trans')
    elbow['actuators'][0]['limits'] = {'effort': 0.05}        # far below what holds the arm
    limited = tmp_path / 'limited.yaml'
    limited.write_text(yaml.safe_dump(spec))
    ts = load_transmissions(limited)
    bag = tmp_path / 'in'
    n = write_actuator_bag(bag, load_transmissions(TRANSMISSIONS), seconds=0.3, rate=RATE_HZ)
    done = tool('convert', bag, tmp_path / 'out', '--transmissions', limited, '--model', MODEL)
    assert done.returncode == 0, done.stderr
    gravity = joint_states(tmp_path / 'out', '/kinematics/gravity_torques')
    commands = joint_states(tmp_path / 'out', '/actuator_commands')
    assert len(commands) == n
    core, _ = _live_mapper(ts, bag)          # what the live bridge does, message by message
    for stamp, [(frame, names, q, _, tau)] in gravity.items():
        [(_, cnames, cpos, _, ceff)] = commands[stamp]
        expected = core.map_command(names, q, [], tau, stamp_ns=stamp)
        assert core.last_result.limited            # the bridge had to limit every one
        assert cnames == expected.names
        assert np.array_equal(cpos, expected.position)
        assert np.array_equal(ceff, expected.effort)
        assert abs(dict(zip(cnames, ceff))['elbow_motor']) <= 0.05


def test_converted_torques_are_in_the_frame_the_kinematics_node_publishes_them(tmp_path):
    # The node's outputs (and so the bridge's actuator_commands) are in base_frame as TF
    # names it: a URDF's root link. The converter writes what the nodes would have.
    from transmission_bridge.kinematics import load_model
    urdf = tmp_path / 'robot.urdf'            # the example robot, its root link not 'world'
    urdf.write_text((CONFIG / 'example_robot.urdf').read_text().replace('"world"', '"stand"'))
    root = load_model(urdf).root_frame
    assert root == 'stand'
    bag = tmp_path / 'in'
    write_actuator_bag(bag, load_transmissions(urdf), seconds=0.1, rate=RATE_HZ)
    done = tool('convert', bag, tmp_path / 'out', '--transmissions', urdf, '--model', urdf)
    assert done.returncode == 0, done.stderr
    for topic in ('/kinematics/gravity_torques', '/actuator_commands'):
        frames = {m[0] for rows in joint_states(tmp_path / 'out', topic).values() for m in rows}
        assert frames == {root}, topic


def test_other_topics_are_copied_and_input_replaced_by_default(tmp_path):
    from transmission_bridge.bag import io
    ts = load_transmissions(TRANSMISSIONS)
    bag = tmp_path / 'in'
    write_actuator_bag(bag, ts, seconds=0.2, rate=RATE_HZ)
    mixed = tmp_path / 'mixed'
    store = io.typestore()
    reader = io.open_reader(bag)
    with io.atomic_writer(mixed) as w:
        act = w.add_connection('/actuator_states', 'sensor_msgs/msg/JointState', typestore=store)
        temp = w.add_connection('/temperature', 'std_msgs/msg/Float64', typestore=store)
        for k, (_, stamp, raw) in enumerate(io.iter_messages(reader)):
            w.write(act, stamp, raw)
            w.write(temp, stamp, store.serialize_cdr(
                store.types['std_msgs/msg/Float64'](data=float(k)), 'std_msgs/msg/Float64'))
    reader.close()
    out = tool('convert', mixed, tmp_path / 'out', '--transmissions', TRANSMISSIONS)
    assert out.returncode == 0, out.stderr
    assert topics(tmp_path / 'out') == {'/temperature': 10, '/joint_states': 10}
    r = io.open_reader(tmp_path / 'out')
    values = [store.deserialize_cdr(raw, 'std_msgs/msg/Float64').data
              for c, _, raw in io.iter_messages(r) if c.topic == '/temperature']
    r.close()
    assert values == [float(k) for k in range(10)]


def _without(module, tool_name, *args):
    """Run a tool in a Python where ``import module`` fails, as where it is not installed."""
    code = (f'import sys; sys.modules[{module!r}] = None; '
            f'from transmission_bridge.tools import {tool_name}; '
            f'sys.exit({tool_name}.main({[str(a) for a in args]!r}))')
    return subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          timeout=120)


def test_missing_optional_dependency_is_reported_before_anything_is_written(tmp_path):
    """Defect 11: --plot without matplotlib wrote the bag, then died with a traceback."""
    bag = tmp_path / 'in'
    write_actuator_bag(bag, load_transmissions(TRANSMISSIONS), seconds=0.2)
    out, plot = tmp_path / 'out', tmp_path / 'z.png'
    result = _without('matplotlib', 'convert', bag, out, '--transmissions', TRANSMISSIONS,
                      '--plot', plot)
    _assert_clean_failure(result, "needs the Python package 'matplotlib'", out)
    assert 'pip install matplotlib' in result.stderr and not plot.exists()
    assert tool('convert', bag, out, '--transmissions', TRANSMISSIONS).returncode == 0
    for name, args in (('convert', (bag, tmp_path / 'o2', '--transmissions', TRANSMISSIONS)),
                       ('replay', (bag,)), ('record', (tmp_path / 'o3', '--topics', '/x'))):
        _assert_clean_failure(_without('rosbags', name, *args),
                              "needs the Python package 'rosbags'", tmp_path / 'o3')
