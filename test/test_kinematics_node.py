"""The kinematics node over real DDS: started with --params-file, driven as ros2 CLI users do."""

import math

from conftest import CONFIG
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseArray, PoseStamped
import numpy as np
import pytest
from ros_harness import Graph, latest_status, NodeProcess, unique_namespace
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
from transmission_bridge.kinematics import load_model
import yaml

pytestmark = pytest.mark.ros

ARM = CONFIG / 'example_arm_model.yaml'
SCARA = CONFIG / 'scara_model.yaml'
NODE = 'kinematics'
# Equal up to the float64 round trip through the message (values are copied, not recomputed).
MSG_ATOL = 1e-12


def _start(tmp_path, model_file, extra=None):
    ns = unique_namespace('kin')
    params = {'model_file': str(model_file), 'diagnostics_period': 0.1}
    params.update(extra or {})
    pfile = tmp_path / 'params.yaml'
    pfile.write_text(yaml.safe_dump({f'/**/{NODE}': {'ros__parameters': params}}))
    proc = NodeProcess('transmission_bridge.kinematics_node.node',
                       ['--params-file', str(pfile), '-r', f'__ns:={ns}',
                        '-r', f'/diagnostics:={ns}/diagnostics'], tmp_path / 'node.log')
    g = Graph(ns)
    g.proc = proc
    g.joint_pub = g.node.create_publisher(JointState, 'joint_states', 10)
    g.gravity = g.collect(JointState, f'{NODE}/gravity_torques')
    g.passive = g.collect(JointState, f'{NODE}/passive_torques')
    g.poses = g.collect(PoseArray, f'{NODE}/body_poses')
    g.energy = g.collect(Float64, f'{NODE}/potential_energy')
    assert g.spin_until(lambda: g.node.count_subscribers('joint_states') > 0, timeout=15), \
        proc.output()
    return g


@pytest.fixture
def arm(tmp_path):
    g = _start(tmp_path, ARM, {'tip_links': ['tool']})
    yield g
    g.close()
    assert g.proc.stop() == 0, g.proc.output()
    assert 'Traceback' not in g.proc.output()


def _js(names, pos, vel=(), sec=1):
    msg = JointState(name=list(names), position=list(pos), velocity=list(vel))
    msg.header.stamp.sec = sec
    return msg


def _exchange(g, msg, box, accept=lambda m: True):
    start = len(box)
    found = []

    def ready():
        found.extend(m for m in box[start:] if accept(m) and m not in found)
        return bool(found)

    assert g.spin_until(ready, timeout=10, action=lambda: g.joint_pub.publish(msg)), \
        g.proc.output()
    return found[-1]


def _rotation(q):
    x, y, z, w = q.x, q.y, q.z, q.w
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def test_outputs_match_the_library(arm):
    g = arm
    model = load_model(ARM)
    tip = g.collect(PoseStamped, f'{NODE}/tool/pose')
    names = ['elbow', 'shoulder_lift', 'shoulder_pan']           # others stay at default
    out = _exchange(g, _js(names, [1.0, -0.7, 0.3], [0.5, -0.2, 0.1], sec=42), g.gravity)
    assert out.header.stamp.sec == 42 and out.header.frame_id == 'world'
    q = model.default_positions.copy()
    v = np.zeros(model.num_positions)
    for n, qi, vi in zip(names, [1.0, -0.7, 0.3], [0.5, -0.2, 0.1]):
        q[model.joint_names.index(n)] = qi
        v[model.joint_names.index(n)] = vi
    assert list(out.name) == list(model.joint_names)
    np.testing.assert_allclose(out.position, q, atol=0)
    np.testing.assert_allclose(out.effort, -model.gravity_generalized_forces(q), atol=MSG_ATOL)
    assert g.spin_until(lambda: g.passive and g.poses and g.energy and tip)
    passive = g.passive[-1]
    np.testing.assert_allclose(passive.effort, -model.gravity_generalized_forces(q)
                               + model.damping * v, atol=MSG_ATOL)
    np.testing.assert_allclose(passive.velocity, v, atol=0)
    fk = model.forward_kinematics(q)
    poses = g.poses[-1].poses
    assert len(poses) == len(model.body_names)
    for name, pose in zip(model.body_names, poses):
        p = pose.position
        np.testing.assert_allclose([p.x, p.y, p.z], fk[name][:3, 3], atol=MSG_ATOL)
        np.testing.assert_allclose(_rotation(pose.orientation), fk[name][:3, :3], atol=1e-12)
    tp = tip[-1].pose.position
    np.testing.assert_allclose([tp.x, tp.y, tp.z], fk['tool'][:3, 3], atol=MSG_ATOL)
    assert g.energy[-1].data == pytest.approx(model.potential_energy(q), abs=1e-12)


def test_holding_torque_sign_by_hand(tmp_path):
    # One 2 kg link along +x, revolute about +y: +q lowers it, so gravity pushes toward +q
    # (tau_g = +m g x = 2 * 9.81 * 0.5) and the torque that holds it is negative.
    model = {'bodies': [{'name': 'arm', 'joint': {'name': 'shoulder', 'type': 'revolute',
                                                  'axis': [0, 1, 0]},
                         'inertial': {'mass': 2.0, 'com': [0.5, 0, 0]}}]}
    f = tmp_path / 'one.yaml'
    f.write_text(yaml.safe_dump(model))
    g = _start(tmp_path, f)
    try:
        out = _exchange(g, _js(['shoulder'], [0.0]), g.gravity)
        assert out.effort[0] == pytest.approx(-9.81, abs=1e-12)
    finally:
        g.close()
        assert g.proc.stop() == 0


def test_parameters_change_outputs_and_bad_values_change_nothing(arm):
    g = arm
    model = load_model(ARM)
    msg = _js(['shoulder_lift'], [-0.5], [1.0])
    before = _exchange(g, msg, g.gravity)
    res = g.set_parameters(NODE, {'gravity': [0.0, 0.0, -1.62]})
    assert res[0].successful, res[0].reason
    moon = model.with_gravity((0, 0, -1.62))
    q = model.default_positions.copy()
    q[1] = -0.5
    out = _exchange(g, msg, g.gravity, lambda m: abs(m.effort[1] - before.effort[1]) > 1e-6)
    np.testing.assert_allclose(out.effort, -moon.gravity_generalized_forces(q), atol=MSG_ATOL)
    res = g.set_parameters(NODE, {'joints.shoulder_lift.damping': 2.5})
    assert res[0].successful, res[0].reason
    out = _exchange(g, msg, g.passive, lambda m: abs(
        m.effort[1] - (-moon.gravity_generalized_forces(q)[1] + 2.5)) < 1e-9)
    names = ['gravity', 'joints.shoulder_lift.damping', 'joints.elbow.default_position',
             'input_time_share']
    kept = g.get_parameters(NODE, names)
    for name, value, words in [
        ('input_time_share', 0.0, 'input_time_share must be a number in (0, 1], got 0.0'),
        ('joints.elbow.damping', -1.0, "joint 'elbow': damping must be >= 0, got -1.0"),
        ('joints.elbow.default_position', 9.0, "joint 'elbow': default_position 9.0 is outside"),
        ('gravity', [0.0, math.nan, -9.81], 'gravity[1] must be finite'),
        ('gravity', [0.0, -9.81], 'gravity must have 3 entries'),
        ('joints.elbow.damping', 'lots', 'type'),
    ]:
        res = g.set_parameters(NODE, {name: value})
        assert not res[0].successful, (name, value)
        assert words in res[0].reason, res[0].reason
    assert g.get_parameters(NODE, names) == kept
    out = _exchange(g, _js(['shoulder_lift'], [-0.5], [1.0], sec=5), g.passive,
                    lambda m: m.header.stamp.sec == 5)
    assert out.effort[1] == pytest.approx(-moon.gravity_generalized_forces(q)[1] + 2.5,
                                          abs=1e-9)


def test_screw_default_translation_and_rotation_are_coupled(tmp_path):
    g = _start(tmp_path, SCARA)
    try:
        res = g.set_parameters(NODE, {'joints.j3.default_translation': 0.01})
        assert res[0].successful, res[0].reason
        values = g.get_parameters(NODE, ['joints.j3.default_position',
                                         'joints.j3.default_translation'])
        assert values['joints.j3.default_position'] == pytest.approx(math.pi, rel=1e-12)
        res = g.set_parameters(NODE, {'joints.j3.default_position': 2 * math.pi})
        assert res[0].successful, res[0].reason
        assert g.get_parameters(NODE, ['joints.j3.default_translation']) == \
            {'joints.j3.default_translation': pytest.approx(0.02, rel=1e-12)}
        res = g.set_parameters(NODE, {'joints.j3.default_position': 1.0,
                                      'joints.j3.default_translation': 0.01}, atomically=True)
        assert not res.successful and 'not both' in res.reason
    finally:
        g.close()
        assert g.proc.stop() == 0, g.proc.output()


def test_default_translation_refused_on_zero_pitch_screw(tmp_path):
    data = yaml.safe_load(SCARA.read_text())
    joint = data['bodies'][2]['joint']
    joint['pitch'] = 0.0
    del joint['default_translation']
    f = tmp_path / 'flat_screw.yaml'
    f.write_text(yaml.safe_dump(data))
    g = _start(tmp_path, f)
    try:
        res = g.set_parameters(NODE, {'joints.j3.default_translation': 0.01})
        assert not res[0].successful
        assert "joint 'j3': cannot set a default translation" in res[0].reason
        assert g.get_parameters(NODE, ['joints.j3.default_position']) == \
            {'joints.j3.default_position': 0.0}
    finally:
        g.close()
        assert g.proc.stop() == 0, g.proc.output()


def test_services(arm):
    g = arm
    model = load_model(ARM)
    res = g.call(Trigger, f'{NODE}/set_default_pose_from_current')
    assert not res.success and 'no joint_states' in res.message
    _exchange(g, _js(['elbow', 'wrist_pitch'], [0.9, -0.4]), g.gravity)
    res = g.call(Trigger, f'{NODE}/set_default_pose_from_current')
    assert res.success, res.message
    got = g.get_parameters(NODE, ['joints.elbow.default_position',
                                  'joints.wrist_pitch.default_position',
                                  'joints.shoulder_lift.default_position'])
    assert got == {'joints.elbow.default_position': 0.9,
                   'joints.wrist_pitch.default_position': -0.4,
                   'joints.shoulder_lift.default_position': -1.2}
    defaults = g.collect(JointState, f'{NODE}/default_joint_states')
    res = g.call(Trigger, f'{NODE}/go_to_default_pose')
    assert res.success
    assert g.spin_until(lambda: defaults)
    assert dict(zip(defaults[-1].name, defaults[-1].position))['elbow'] == 0.9
    res = g.call(Trigger, f'{NODE}/reset_default_pose')
    assert res.success, res.message
    assert g.get_parameters(NODE, ['joints.elbow.default_position']) == \
        {'joints.elbow.default_position': 1.5}
    g.set_parameters(NODE, {'joints.elbow.damping': 3.0})
    res = g.call(Trigger, f'{NODE}/reset_damping')
    assert res.success, res.message
    assert g.get_parameters(NODE, ['joints.elbow.damping']) == \
        {'joints.elbow.damping': model.joint('elbow').damping}


def test_trajectory_feed_forward(arm):
    g = arm
    model = load_model(ARM)
    out_box = g.collect(JointTrajectory, f'{NODE}/trajectory_out')
    pub = g.node.create_publisher(JointTrajectory, f'{NODE}/trajectory_in', 10)
    names = ['shoulder_lift', 'elbow']
    traj = JointTrajectory(joint_names=names)
    pts = [([-1.0, 1.2], [0.3, -0.1]), ([-0.8, 1.0], [0.2, 0.0]), ([-0.6, 0.8], [0.0, 0.0])]
    for k, (p, v) in enumerate(pts):
        traj.points.append(JointTrajectoryPoint(positions=p, velocities=v))
        traj.points[-1].time_from_start.sec = k
    assert g.spin_until(lambda: out_box, action=lambda: pub.publish(traj)), g.proc.output()
    out = out_box[0]
    assert list(out.joint_names) == names
    for point, (p, v) in zip(out.points, pts):
        q = model.default_positions.copy()
        vel = np.zeros(model.num_positions)
        q[[1, 2]] = p
        vel[[1, 2]] = v
        expected = (-model.gravity_generalized_forces(q) + model.damping * vel)[[1, 2]]
        np.testing.assert_allclose(point.effort, expected, atol=MSG_ATOL)
        np.testing.assert_allclose(point.positions, p, atol=0)


def test_bad_input_is_counted_and_survived(arm):
    g = arm
    diagnostics = g.collect(DiagnosticArray, 'diagnostics')
    _exchange(g, _js(['elbow'], [1.0]), g.gravity)
    bad = [_js(['elbow', 'wrist_roll'], [1.0]), _js(['elbow', 'elbow'], [1.0, 2.0]),
           _js(['elbow'], [math.inf]), _js(['elbow', 'ghost'], [1.0, 2.0]),
           _js(['elbow'], [math.nan]), _js(['elbow'], [1.0], sec=0)]

    def counters():         # the counts (other values are names: stale_joints)
        return {kv.key: int(kv.value) for kv in latest_status(diagnostics, 'kinematics').values
                if kv.value.isdigit()} if diagnostics else {}

    def send():
        for m in bad:
            g.joint_pub.publish(m)

    keys = ('rejected_length_mismatch', 'rejected_duplicate_names', 'rejected_non_finite',
            'unknown_names', 'unknown_values', 'stamp_backwards')
    assert g.spin_until(lambda: all(counters().get(k, 0) >= 1 for k in keys), timeout=10,
                        action=send, period=0.2), counters()
    assert g.proc.alive()
    out = _exchange(g, _js(['elbow'], [0.5], sec=100), g.gravity,
                    lambda m: m.header.stamp.sec == 100)
    assert dict(zip(out.name, out.position))['elbow'] == 0.5
    assert "ignoring unknown joint 'ghost'" in g.proc.output()


@pytest.mark.parametrize('change,words', [
    ({'bodies': 'oops'}, 'bodies must be a list'),
    ({'extra': 1}, "top level: unknown key 'extra'"),
])
def test_invalid_model_stops_startup(tmp_path, change, words):
    data = yaml.safe_load(ARM.read_text())
    data.update(change)
    f = tmp_path / 'bad.yaml'
    f.write_text(yaml.safe_dump(data))
    proc = NodeProcess('transmission_bridge.kinematics_node.node',
                       ['-p', f'model_file:={f}', '-r', f'__ns:={unique_namespace("bad")}'],
                       tmp_path / 'node.log')
    proc.proc.wait(30)
    out = proc.output()
    assert proc.stop() == 1
    assert words in out and 'Traceback' not in out
