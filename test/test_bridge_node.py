"""The bridge node over real DDS: started with --params-file, driven as ros2 CLI users do."""

import contextlib
import math
import shutil

from conftest import CONFIG
from diagnostic_msgs.msg import DiagnosticArray
import numpy as np
import pytest
from ros_harness import Graph, latest_status, NodeProcess, started_node, unique_namespace
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
from transmission_bridge.transmissions import load_transmissions
import yaml

pytestmark = pytest.mark.ros

EXAMPLE = CONFIG / 'example_robot_transmissions.yaml'
NODE = 'transmission_bridge'
# Motor readings of the example robot: position (rad), velocity (rad/s), effort (N·m).
MOTORS = ['shoulder_pan_motor', 'shoulder_lift_motor', 'elbow_motor', 'wrist_left_motor',
          'wrist_right_motor', 'finger_proximal_motor', 'finger_distal_motor']
POS = [10.0, -60.0, 80.0, 25.0, -5.0, 30.0, 40.0]
VEL = [1.0, 2.0, 8.0, 5.0, 5.0, 3.0, 6.0]
EFF = [0.5, 0.2, 0.1, 0.3, -0.1, 0.05, 0.02]


@contextlib.contextmanager
def _started_bridge(tmp_path, **params):
    """Start a bridge on a copy of the example file, ``params`` added; yield its graph."""
    tfile = tmp_path / 'transmissions.yaml'
    shutil.copy(EXAMPLE, tfile)
    with started_node(tmp_path, 'transmission_bridge.bridge.node', NODE,
                      {'transmissions_file': str(tfile), 'stale_timeout': 0.3,
                       'diagnostics_period': 0.1, **params},
                      'bridge', 'actuator_states') as graph:
        graph.file = tfile
        graph.actuators = graph.node.create_publisher(JointState, 'actuator_states', 10)
        graph.joint_states = graph.collect(JointState, 'joint_states')
        yield graph


@pytest.fixture
def bridge(tmp_path):
    """Start a bridge on a copy of the example file; yield its graph (process: .proc)."""
    with _started_bridge(tmp_path) as graph:
        yield graph


def _state(names=MOTORS, pos=POS, vel=VEL, eff=EFF, sec=1, nanosec=0):
    msg = JointState(name=list(names), position=list(pos), velocity=list(vel), effort=list(eff))
    msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
    msg.header.frame_id = 'motors'
    return msg


def _exchange(g, msg, accept=lambda m: True):
    """Publish ``msg`` until a joint_states message satisfying ``accept`` arrives; return it."""
    start = len(g.joint_states)
    found = []

    def received():
        found.extend(m for m in g.joint_states[start:] if accept(m) and m not in found)
        return bool(found)

    assert g.spin_until(received, timeout=10, action=lambda: g.actuators.publish(msg)), \
        g.proc.output()
    return found[-1]


def _by_name(msg, field):
    return dict(zip(msg.name, getattr(msg, field)))


def test_actuator_states_become_joint_states(bridge):
    out = _exchange(bridge, _state(sec=7, nanosec=123))
    assert (out.header.stamp.sec, out.header.stamp.nanosec) == (7, 123)
    assert out.header.frame_id == 'motors'
    pos = _by_name(out, 'position')
    # By hand: elbow 80 / (80 * 1) + 0.1; shoulder_pan 10 / 100; shoulder_lift -60 / -120 - 1.5708
    assert pos['elbow'] == pytest.approx(1.1, abs=1e-15)
    assert pos['shoulder_pan'] == pytest.approx(0.1, abs=1e-15)
    assert pos['shoulder_lift'] == pytest.approx(0.5 - 1.5708, abs=1e-15)
    # Whole robot against the library, bit for bit (same functions, same inputs).
    ts = load_transmissions(EXAMPLE)
    assert list(out.name) == list(ts.joint_names)
    assert list(out.position) == list(ts.actuator_to_joint('position', POS))
    vel = ts.actuator_to_joint('velocity', VEL)
    assert list(out.velocity) == list(vel)
    assert list(out.effort) == list(ts.measured_joint_efforts(EFF, VEL) - ts.damping * vel)
    # By hand: elbow effort 80 * (0.1 - its motor's friction at 8 rad/s, 3e-5 * 8 + 0.003)
    # - 0.4 * (8 / 80)
    assert _by_name(out, 'effort')['elbow'] == pytest.approx(
        80 * (0.1 - 0.00024 - 0.003) - 0.04, abs=1e-14)


def test_empty_arrays_stay_empty_and_nan_stays_nan(bridge):
    pos = list(POS)
    pos[MOTORS.index('wrist_left_motor')] = math.nan
    out = _exchange(bridge, _state(pos=pos, vel=[], eff=[]))
    assert len(out.velocity) == 0 and len(out.effort) == 0
    p = _by_name(out, 'position')
    assert math.isnan(p['wrist_pitch']) and math.isnan(p['wrist_roll'])
    assert p['elbow'] == pytest.approx(1.1, abs=1e-15)


def test_partial_robot_publishes_complete_transmissions_only(bridge):
    out = _exchange(bridge, _state(names=['elbow_motor', 'wrist_left_motor'], pos=[80.0, 1.0],
                                   vel=[], eff=[]))
    assert list(out.name) == ['elbow']


def test_set_parameters_take_effect_and_invalid_ones_change_nothing(bridge):
    g = bridge
    base = _by_name(_exchange(g, _state()), 'position')
    res = g.set_parameters(NODE, {'joints.elbow.offset': 0.3})
    assert res[0].successful, res[0].reason
    out = _exchange(g, _state(), lambda m: abs(_by_name(m, 'position')['elbow'] - 1.3) < 1e-12)
    res = g.set_parameters(NODE, {'actuators.elbow_motor.mechanical_reduction': 2.0})
    assert res[0].successful, res[0].reason
    out = _exchange(g, _state(), lambda m: abs(_by_name(m, 'position')['elbow'] - 0.8) < 1e-12)
    assert _by_name(out, 'position')['shoulder_pan'] == base['shoulder_pan']
    before = g.get_parameters(NODE, ['joints.elbow.offset', 'joints.elbow.mechanical_reduction',
                                     'joints.elbow.damping'])
    for name, value, words in [
        ('joints.elbow.mechanical_reduction', 0.0, "joint 'elbow': mechanical_reduction"),
        ('joints.elbow.offset', math.nan, "joint 'elbow': offset must be finite"),
        ('joints.elbow.damping', -1.0, "joint 'elbow': damping must be >= 0"),
        ('actuators.elbow_motor.mechanical_reduction', math.inf, "actuator 'elbow_motor'"),
        ('joints.elbow.offset', 'high', 'type'),
        ('joints.elbow.offset', True, 'type'),
    ]:
        res = g.set_parameters(NODE, {name: value})
        assert not res[0].successful, (name, value)
        assert words in res[0].reason, res[0].reason
    # An atomic batch with one bad value changes nothing either.
    res = g.set_parameters(NODE, {'joints.elbow.offset': 0.9, 'joints.elbow.damping': -2.0},
                           atomically=True)
    assert not res.successful and 'damping must be >= 0' in res.reason
    assert g.get_parameters(NODE, list(before)) == before
    out = _exchange(g, _state(sec=2))
    assert _by_name(out, 'position')['elbow'] == pytest.approx(0.8, abs=1e-12)
    # An integer for a double is that double (the node warns): offset 1 moves the elbow to 1.5.
    res = g.set_parameters(NODE, {'joints.elbow.offset': 1})
    assert res[0].successful, res[0].reason
    got = g.get_parameters(NODE, ['joints.elbow.offset'])['joints.elbow.offset']
    assert got == 1.0 and isinstance(got, float), got
    _exchange(g, _state(sec=3), lambda m: abs(_by_name(m, 'position')['elbow'] - 1.5) < 1e-12)


def test_transmissions_file_is_read_only(bridge):
    res = bridge.set_parameters(NODE, {'transmissions_file': '/tmp/other.yaml'})
    assert not res[0].successful


def test_calibrate_and_reset(bridge):
    g = bridge
    _exchange(g, _state())
    res = g.call(Trigger, f'{NODE}/calibrate_to_default_pose')
    assert res.success, res.message
    assert 'elbow=' in res.message
    ts = load_transmissions(EXAMPLE)
    out = _exchange(g, _state(sec=3), lambda m: abs(_by_name(m, 'position')['elbow'] - 1.5)
                    < 1e-12)
    np.testing.assert_allclose(out.position, ts.default_positions, rtol=0, atol=1e-12)
    offsets = g.get_parameters(NODE, [f'joints.{j}.offset' for j in ts.joint_names])
    np.testing.assert_allclose(list(offsets.values()), ts.calibrated_offsets(POS), atol=1e-15)
    res = g.call(Trigger, f'{NODE}/reset_calibration')
    assert res.success, res.message
    out = _exchange(g, _state(sec=4), lambda m: abs(_by_name(m, 'position')['elbow'] - 1.1)
                    < 1e-12)
    assert g.get_parameters(NODE, ['joints.elbow.offset']) == {'joints.elbow.offset': 0.1}


def test_calibrate_refuses_before_all_actuators_reported(bridge):
    g = bridge
    _exchange(g, _state(names=['elbow_motor'], pos=[80.0], vel=[], eff=[]))
    res = g.call(Trigger, f'{NODE}/calibrate_to_default_pose')
    assert not res.success
    assert 'shoulder_pan_motor' in res.message


def test_reload_keeps_old_config_when_file_is_invalid(bridge):
    g = bridge
    data = yaml.safe_load(g.file.read_text())
    data['transmissions'][2]['joints'][0]['offset'] = 0.5
    g.file.write_text(yaml.safe_dump(data))
    res = g.call(Trigger, f'{NODE}/reload')
    assert res.success, res.message
    _exchange(g, _state(), lambda m: abs(_by_name(m, 'position')['elbow'] - 1.5) < 1e-12)
    assert g.get_parameters(NODE, ['joints.elbow.offset']) == {'joints.elbow.offset': 0.5}
    data['transmissions'][2]['joints'][0]['mechanical_reduction'] = 0.0
    g.file.write_text(yaml.safe_dump(data))
    res = g.call(Trigger, f'{NODE}/reload')
    assert not res.success
    assert 'kept the previous configuration' in res.message
    assert 'transmissions[2].joints[0].mechanical_reduction' in res.message
    g.file.unlink()
    res = g.call(Trigger, f'{NODE}/reload')
    assert not res.success and 'cannot read' in res.message
    out = _exchange(g, _state(sec=5))
    assert _by_name(out, 'position')['elbow'] == pytest.approx(1.5, abs=1e-12)


def test_malformed_messages_are_counted_and_survived(bridge):
    g = bridge
    diagnostics = g.collect(DiagnosticArray, 'diagnostics')
    _exchange(g, _state())
    bad = [
        _state(pos=POS[:3]),                                    # length mismatch
        _state(names=MOTORS[:2] + [MOTORS[0]] + MOTORS[3:]),    # duplicate name
        _state(pos=[math.inf] + POS[1:]),                       # infinite value
    ]
    bad.append(_state(names=MOTORS + ['ghost_motor'], pos=POS + [1.0], vel=VEL + [0.0],
                      eff=EFF + [0.0]))

    def send_bad():
        # Sensor-data QoS is best effort: keep sending until each kind has been counted.
        for msg in bad:
            g.actuators.publish(msg)

    def counters():
        if not diagnostics:
            return {}
        return {kv.key: kv.value for kv in latest_status(diagnostics, NODE).values}

    assert g.spin_until(lambda: all(int(counters().get(k, 0)) >= 1 for k in (
        'rejected_length_mismatch', 'rejected_duplicate_names', 'rejected_non_finite',
        'unknown_names')), timeout=10, action=send_bad, period=0.2), counters()
    assert g.proc.alive()
    out = _exchange(g, _state(sec=9))        # still serving
    assert _by_name(out, 'position')['elbow'] == pytest.approx(1.1, abs=1e-15)
    assert "ignoring unknown actuator 'ghost_motor'" in g.proc.output()


def test_stale_actuators_are_reported(bridge):
    g = bridge
    diagnostics = g.collect(DiagnosticArray, 'diagnostics')
    _exchange(g, _state())
    assert g.spin_until(lambda: diagnostics and 'stale actuators' in
                        latest_status(diagnostics, NODE).message, timeout=5)
    assert 'elbow_motor' in latest_status(diagnostics, NODE).message


def test_stamp_going_backwards_is_counted(bridge):
    g = bridge
    diagnostics = g.collect(DiagnosticArray, 'diagnostics')
    _exchange(g, _state(sec=100))
    out = _exchange(g, _state(sec=50), lambda m: m.header.stamp.sec == 50)
    assert _by_name(out, 'position')['elbow'] == pytest.approx(1.1, abs=1e-15)
    assert g.spin_until(lambda: diagnostics and any(
        kv.key == 'stamp_backwards' and int(kv.value) >= 1
        for kv in latest_status(diagnostics, NODE).values), timeout=5)


def _trajectory(names, points):
    msg = JointTrajectory(joint_names=list(names))
    msg.header.stamp.sec = 42
    for k, (pos, vel, acc, eff) in enumerate(points):
        p = JointTrajectoryPoint(positions=pos, velocities=vel, accelerations=acc, effort=eff)
        p.time_from_start.sec = k + 1
        p.time_from_start.nanosec = 500
        msg.points.append(p)
    return msg


def test_trajectory_maps_to_actuators(bridge):
    g = bridge
    received = g.collect(JointTrajectory, 'actuator_trajectory')
    pub = g.node.create_publisher(JointTrajectory, 'joint_trajectory', 10)
    names = ['wrist_roll', 'elbow', 'wrist_pitch']
    msg = _trajectory(names, [([0.2, 1.1, 0.4], [0.0, 0.1, 0.0], [], [0.0, 2.0, 1.0]),
                              ([0.3, 1.3, 0.5], [0.1, 0.2, 0.0], [], [0.0, 2.5, 1.0])])
    assert g.spin_until(lambda: received, action=lambda: pub.publish(msg)), g.proc.output()
    out = received[0]
    assert list(out.joint_names) == ['elbow_motor', 'wrist_left_motor', 'wrist_right_motor']
    assert out.header.stamp.sec == 42
    assert [(p.time_from_start.sec, p.time_from_start.nanosec) for p in out.points] == \
        [(1, 500), (2, 500)]
    # By hand: elbow motor = (1.1 - 0.1) * 80; wrist: (pitch + roll) * 50 and (pitch - roll) * -50
    p0 = out.points[0]
    assert p0.positions[0] == pytest.approx(80.0, abs=1e-12)
    assert p0.positions[1] == pytest.approx(0.6 * 50.0, abs=1e-12)
    assert p0.positions[2] == pytest.approx(0.2 * -50.0, abs=1e-12)
    assert len(p0.accelerations) == 0
    # Effort adds the damping loss back before the effort map, (2.0 + 0.4 * 0.1) / 80, then
    # the motor's friction at its planned 0.1 * 80 = 8 rad/s: 3e-5 * 8 + 0.003
    assert p0.effort[0] == pytest.approx((2.0 + 0.04) / 80.0 + 0.00024 + 0.003, abs=1e-15)
    # And the state map takes the commanded actuator positions back to the joint positions.
    ts = load_transmissions(EXAMPLE)
    full = ts.actuator_to_joint('position', [0, 0, p0.positions[0], p0.positions[1],
                                             p0.positions[2], 0, 0])
    assert full[2:5] == pytest.approx([1.1, 0.4, 0.2], abs=1e-12)


def test_bad_trajectories_are_rejected(bridge):
    g = bridge
    received = g.collect(JointTrajectory, 'actuator_trajectory')
    pub = g.node.create_publisher(JointTrajectory, 'joint_trajectory', 10)
    # this publisher matched (the graph may list the bridge's subscription before that)
    assert g.spin_until(lambda: pub.get_subscription_count() > 0)
    for msg in [_trajectory(['wrist_pitch'], [([0.1], [], [], [])]),
                _trajectory(['elbow', 'knee'], [([0.1, 0.2], [], [], [])]),
                _trajectory(['elbow'], [([0.1], [], [], []), ([], [], [], [])])]:
        pub.publish(msg)
    g.spin_for(1.0)
    assert received == []
    log = g.proc.output()
    assert "'wrist_trans' is only partly covered" in log
    assert "unknown joints ['knee']" in log
    assert 'must be empty or have 1 values in every point' in log


def test_invalid_config_stops_startup_with_the_key(tmp_path):
    data = yaml.safe_load(EXAMPLE.read_text())
    data['transmissions'][3]['actuators'][1]['mechanical_reduction'] = 0.0
    tfile = tmp_path / 'bad.yaml'
    tfile.write_text(yaml.safe_dump(data))
    proc = NodeProcess('transmission_bridge.bridge.node',
                       ['-p', f'transmissions_file:={tfile}', '-r',
                        f'__ns:={unique_namespace("bad")}'], tmp_path / 'node.log')
    proc.proc.wait(30)
    out = proc.output()
    assert proc.stop() == 1
    assert 'transmissions[3].actuators[1].mechanical_reduction' in out
    assert "actuator 'wrist_right_motor'" in out
    assert 'Traceback' not in out


@pytest.mark.parametrize('sig', ['SIGINT', 'SIGTERM'])
def test_signals_mid_stream_exit_cleanly(tmp_path, sig):
    import signal
    ns = unique_namespace('sig')
    proc = NodeProcess('transmission_bridge.bridge.node',
                       ['-p', f'transmissions_file:={EXAMPLE}', '-r', f'__ns:={ns}'],
                       tmp_path / 'node.log')
    g = Graph(ns)
    try:
        pub = g.node.create_publisher(JointState, 'actuator_states', 10)
        got = g.collect(JointState, 'joint_states')
        assert g.spin_until(lambda: len(got) > 20, timeout=15,
                            action=lambda: pub.publish(_state()), period=0.002)
        for _ in range(50):
            pub.publish(_state())
        rc = proc.stop(getattr(signal, sig))
    finally:
        g.close()
    assert rc == 0, proc.output()
    assert 'Traceback' not in proc.output()


def test_input_time_share_is_validated_and_overload_drops_are_reported(bridge):
    g = bridge
    diagnostics = g.collect(DiagnosticArray, 'diagnostics')
    for value in (0.0, 1.5, math.nan):
        res = g.set_parameters(NODE, {'input_time_share': value})
        assert not res[0].successful, value
        assert f'input_time_share must be a number in (0, 1], got {value!r}' in res[0].reason
    assert g.get_parameters(NODE, ['input_time_share']) == {'input_time_share': 1.0}
    # A tiny share: a flood sent back to back is mostly dropped, counted, and survived.
    res = g.set_parameters(NODE, {'input_time_share': 0.02})
    assert res[0].successful, res[0].reason
    assert g.get_parameters(NODE, ['input_time_share']) == {'input_time_share': 0.02}
    _exchange(g, _state())

    def dropped():
        return _diagnostic(diagnostics, 'dropped_overload')

    def flood():
        for k in range(200):
            g.actuators.publish(_state(sec=10, nanosec=k))

    assert g.spin_until(lambda: dropped() > 0, timeout=20, action=flood, period=0.05)
    assert 'input overload' in g.proc.output()
    assert g.proc.alive()
    res = g.set_parameters(NODE, {'input_time_share': 1.0})
    assert res[0].successful, res[0].reason
    out = _exchange(g, _state(sec=20))        # still serving
    assert _by_name(out, 'position')['elbow'] == pytest.approx(1.1, abs=1e-15)


def _diagnostic(diagnostics, key):
    """Return the integer value ``key`` of the last diagnostics received (0 before any)."""
    values = {kv.key: kv.value for kv in latest_status(diagnostics, NODE).values} if diagnostics \
        else {}
    return int(values.get(key, 0))


def test_drop_on_overload_false_handles_the_flood_the_budget_drops(tmp_path):
    # The flood the test above gets dropped at the same tiny share: with dropping off,
    # every message the node receives is handled (the queue is DDS's, depth 50).
    with _started_bridge(tmp_path, drop_on_overload=False, input_time_share=0.02) as g:
        diagnostics = g.collect(DiagnosticArray, 'diagnostics')
        before = _exchange(g, _state())
        sent = []

        def flood():
            for k in range(200):
                g.actuators.publish(_state(sec=10 + len(sent), nanosec=k))
            sent.append(200)

        assert g.spin_until(lambda: _diagnostic(diagnostics, 'received') >= 600, timeout=30,
                            action=flood, period=0.05), g.proc.output()
        assert _diagnostic(diagnostics, 'dropped_overload') == 0
        assert 'input overload' not in g.proc.output()
        res = g.set_parameters(NODE, {'drop_on_overload': True})
        assert not res[0].successful and 'read-only' in res[0].reason, res[0].reason
        assert g.get_parameters(NODE, ['drop_on_overload']) == {'drop_on_overload': False}
        out = _exchange(g, _state(sec=99))        # still serving, the same map
        assert _by_name(out, 'position') == _by_name(before, 'position')


@pytest.mark.parametrize('param, words', [
    ('input_time_share:=2.0', 'input_time_share must be a number in (0, 1], got 2.0'),
    ('diagnostics_period:=0.0', 'diagnostics_period must be a finite number > 0, got 0.0'),
    ('stale_timeout:=-1.0', 'stale_timeout must be a finite number > 0, got -1.0'),
    ('drop_on_overload:=maybe',
     "parameter 'drop_on_overload' must be a bool (true or false), got 'maybe'"),
])
def test_invalid_node_parameter_stops_startup_with_the_key(tmp_path, param, words):
    proc = NodeProcess('transmission_bridge.bridge.node',
                       ['-p', f'transmissions_file:={EXAMPLE}', '-p', param,
                        '-r', f'__ns:={unique_namespace("share")}'], tmp_path / 'node.log')
    proc.proc.wait(30)
    out = proc.output()
    assert proc.stop() == 1
    assert words in out
    assert 'Traceback' not in out
