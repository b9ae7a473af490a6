"""
The bridge on a legged robot with linkages (config/legged_robot.urdf), over real DDS.

The ankles' motor angles come from HuNingHe/closed_loop_ankle's published closed form (the
legged robot's ankle is that layout at a smaller scale), not from this package: joint_states
must give back the pose they were computed for, and a motor command for ankle torques must be
``J^T tau`` with J from central differences of that closed form.
"""

import math

from conftest import CONFIG
from diagnostic_msgs.msg import DiagnosticArray
import numpy as np
import pytest
from ros_harness import latest_status, started_node
from sensor_msgs.msg import JointState
from test_transmissions_linkage import _closed_loop_ankle_ik
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
from transmission_bridge.transmissions import load_transmissions

pytestmark = pytest.mark.ros

URDF = CONFIG / 'legged_robot.urdf'
NODE = 'transmission_bridge'
# The legged robot's ankles (shank frame, ankle at 0.4 m below the knee): motors 0.28 and
# 0.20 m above the ankle, 0.035 m to the side (outer motor higher), cranks 0.05 m.
ANKLE = {'left': (0.035, 0.05, 0.28, 0.2), 'right': (-0.035, 0.05, 0.28, 0.2)}
POSE = {'left_hip_yaw': 0.1, 'left_hip_roll': -0.05, 'left_hip_pitch': -0.4, 'left_knee': 0.8,
        'left_ankle_pitch': -0.25, 'left_ankle_roll': 0.12, 'right_hip_yaw': -0.1,
        'right_hip_roll': 0.05, 'right_hip_pitch': 0.3, 'right_knee': 0.2,
        'right_ankle_pitch': 0.31, 'right_ankle_roll': -0.2}
POSITION_ATOL = 1e-10       # rad: the bridge's solve against the published closed form
JT_RTOL = 1e-6              # J^T tau against central differences (step 1e-6 rad)


def _ankle_motors(side, pitch, roll):
    return _closed_loop_ankle_ik(*ANKLE[side], roll, pitch)


def _motor_state(pose, stamp_sec=1):
    """Actuator positions for ``pose``: ankles by the closed form, the rest by the library."""
    ts = load_transmissions(URDF)
    q = np.array([pose[n] for n in ts.joint_names])
    x = dict(zip(ts.actuator_names, ts.joint_to_actuator('position', q)))
    for side in ANKLE:
        upper, lower = _ankle_motors(side, pose[f'{side}_ankle_pitch'],
                                     pose[f'{side}_ankle_roll'])
        x[f'{side}_ankle_upper_motor'], x[f'{side}_ankle_lower_motor'] = upper, lower
    msg = JointState(name=list(x), position=[float(v) for v in x.values()])
    msg.header.stamp.sec = stamp_sec
    return msg


@pytest.fixture
def legged(tmp_path):
    with started_node(tmp_path, 'transmission_bridge.bridge.node', NODE,
                      {'transmissions_file': str(URDF), 'diagnostics_period': 0.1},
                      'linkage', 'actuator_states') as graph:
        graph.actuators = graph.node.create_publisher(JointState, 'actuator_states', 10)
        graph.joint_states = graph.collect(JointState, 'joint_states')
        graph.commands = graph.node.create_publisher(JointState, 'joint_commands', 10)
        graph.motor_commands = graph.collect(JointState, 'actuator_commands')
        graph.diagnostics = graph.collect(DiagnosticArray, 'diagnostics')
        yield graph


def _exchange(g, msg, inbox, accept=lambda m: True):
    start = len(inbox)
    assert g.spin_until(lambda: any(accept(m) for m in inbox[start:]), timeout=10,
                        action=lambda: g.actuators.publish(msg) if inbox is g.joint_states
                        else g.commands.publish(msg)), g.proc.output()
    return [m for m in inbox[start:] if accept(m)][-1]


def test_joint_states_give_back_the_pose_of_the_published_ankle(legged):
    out = _exchange(legged, _motor_state(POSE, 3), legged.joint_states,
                    lambda m: m.header.stamp.sec == 3)
    got = dict(zip(out.name, out.position))
    assert sorted(got) == sorted(POSE)
    for name, value in POSE.items():
        assert got[name] == pytest.approx(value, abs=POSITION_ATOL), name


def _counter(g, key):
    if not g.diagnostics:
        return None
    return {kv.key: kv.value for kv in latest_status(g.diagnostics, NODE).values}.get(key)


def test_a_state_past_a_limit_is_refused_named_and_the_rest_still_published(legged):
    g = legged
    _exchange(g, _motor_state(POSE, 1), g.joint_states, lambda m: m.header.stamp.sec == 1)
    past = dict(POSE, left_ankle_pitch=0.7)         # its limit is 0.6 rad
    out = _exchange(g, _motor_state(past, 2), g.joint_states, lambda m: m.header.stamp.sec == 2)
    assert 'left_ankle_pitch' not in out.name and 'left_ankle_roll' not in out.name
    got = dict(zip(out.name, out.position))
    assert got['right_ankle_roll'] == pytest.approx(POSE['right_ankle_roll'], abs=POSITION_ATOL)
    assert got['left_knee'] == pytest.approx(POSE['left_knee'], abs=POSITION_ATOL)
    assert g.spin_until(lambda: int(_counter(g, 'refused_linkage_states') or 0) >= 1, timeout=5)
    assert g.spin_until(lambda: 'left_ankle_pitch,left_ankle_roll: a joint beyond its limits'
                        in (_counter(g, 'refused_linkages') or ''), timeout=5)
    assert 'linkage states refused' in latest_status(g.diagnostics, NODE).message
    assert 'linkage states refused, their joints not published: left_ankle_pitch' in \
        g.proc.output()
    # Back within the limits: published again, and the refusal is no longer named.
    out = _exchange(g, _motor_state(POSE, 4), g.joint_states, lambda m: m.header.stamp.sec == 4)
    assert dict(zip(out.name, out.position))['left_ankle_pitch'] == pytest.approx(
        POSE['left_ankle_pitch'], abs=POSITION_ATOL)
    assert g.spin_until(lambda: _counter(g, 'refused_linkages') == '', timeout=5)


def _published_jacobian(side, pitch, roll, h=1e-6):
    """Return J = dq/dx_a of a published ankle: the inverse of central differences."""
    J_x = np.empty((2, 2))
    for k in range(2):
        step = np.zeros(2)
        step[k] = h
        plus = _ankle_motors(side, pitch + step[0], roll + step[1])
        minus = _ankle_motors(side, pitch - step[0], roll - step[1])
        J_x[:, k] = (np.array(plus) - minus) / (2 * h)
    return np.linalg.inv(J_x)


def test_ankle_torques_reach_the_motors_through_J_transposed(legged):
    g = legged
    torque = JointState(name=['right_ankle_pitch', 'right_ankle_roll'], effort=[4.0, -1.5])
    # Before any state the bridge cannot know where the ankle is: refused, with the reason.
    assert g.spin_until(lambda: 'move through a linkage' in g.proc.output(), timeout=10,
                        action=lambda: g.commands.publish(torque), period=0.3), g.proc.output()
    assert not g.motor_commands
    _exchange(g, _motor_state(POSE, 1), g.joint_states)
    out = _exchange(g, torque, g.motor_commands)
    assert list(out.name) == ['right_ankle_upper_motor', 'right_ankle_lower_motor']
    J = _published_jacobian('right', POSE['right_ankle_pitch'], POSE['right_ankle_roll'])
    np.testing.assert_allclose(out.effort, J.T @ [4.0, -1.5], rtol=JT_RTOL)
    # Power: what the motors put in is what the ankle gets (any velocity).
    v_a = np.array([0.3, -0.7])
    assert np.dot(out.effort, v_a) == pytest.approx(np.dot([4.0, -1.5], J @ v_a), rel=JT_RTOL)


def test_a_trajectory_maps_to_the_published_motor_angles(legged):
    g = legged
    received = g.collect(JointTrajectory, 'actuator_trajectory')
    pub = g.node.create_publisher(JointTrajectory, 'joint_trajectory', 10)
    msg = JointTrajectory(joint_names=['left_ankle_roll', 'left_ankle_pitch'])
    points = [(0.1, -0.2), (0.2, 0.3), (-0.3, 0.5)]
    for k, (roll, pitch) in enumerate(points):
        p = JointTrajectoryPoint(positions=[roll, pitch], velocities=[0.0, 0.0])
        p.time_from_start.sec = k + 1
        msg.points.append(p)
    assert g.spin_until(lambda: received, action=lambda: pub.publish(msg)), g.proc.output()
    out = received[0]
    assert list(out.joint_names) == ['left_ankle_upper_motor', 'left_ankle_lower_motor']
    for point, (roll, pitch) in zip(out.points, points):
        np.testing.assert_allclose(point.positions, _ankle_motors('left', pitch, roll),
                                   rtol=0, atol=POSITION_ATOL)
        assert list(point.velocities) == [0.0, 0.0]


def test_a_command_the_rods_cannot_reach_is_refused_with_the_reason(legged):
    g = legged
    # With limits the clamp keeps commands reachable; without, 2 rad of knee is past the rod.
    assert g.set_parameters(NODE, {'limit_commands': False})[0].successful
    far = JointState(name=['left_knee'], position=[2.2])
    assert g.spin_until(lambda: 'cannot reach' in g.proc.output(), timeout=10,
                        action=lambda: g.commands.publish(far), period=0.3), g.proc.output()
    assert not g.motor_commands
    near = JointState(name=['left_knee'], position=[1.0])
    out = _exchange(g, near, g.motor_commands)
    assert list(out.name) == ['left_knee_motor'] and math.isfinite(out.position[0])


def test_parameters_and_calibration_work_on_linkages(legged):
    g = legged
    from std_srvs.srv import Trigger
    _exchange(g, _motor_state(POSE, 1), g.joint_states, lambda m: m.header.stamp.sec == 1)
    # A linkage's joints have no reduction parameter: refused, listing what the joint has.
    res = g.set_parameters(NODE, {'joints.left_knee.mechanical_reduction': 2.0})
    assert not res[0].successful
    assert "joint 'left_knee' has damping, default_position, offset" in res[0].reason
    # An offset shifts the published angle; the motor's reduction scales its crank angle.
    res = g.set_parameters(NODE, {'joints.left_ankle_roll.offset': 0.1,
                                  'actuators.left_knee_motor.mechanical_reduction': 18.0})
    assert all(r.successful for r in res), res
    out = _exchange(g, _motor_state(POSE, 2), g.joint_states, lambda m: m.header.stamp.sec == 2)
    got = dict(zip(out.name, out.position))
    assert got['left_ankle_roll'] == pytest.approx(POSE['left_ankle_roll'] + 0.1,
                                                   abs=POSITION_ATOL)
    # The knee motor reads 9 * u (reduction 9 in the URDF); read as 18 * u' it is u' = u / 2.
    half = load_transmissions(URDF).replace_fields(
        actuators={'left_knee_motor': {'mechanical_reduction': 18.0}})
    x = load_transmissions(URDF).joint_to_actuator('position', [POSE[n] for n in half.joint_names])
    expected = half.actuator_to_joint('position', x)[half.joint_names.index('left_knee')]
    assert np.isfinite(expected) and abs(expected - POSE['left_knee']) > 0.1
    assert got['left_knee'] == pytest.approx(expected, abs=POSITION_ATOL)
    # Calibration: the pose the robot is held in becomes the default pose.
    assert g.set_parameters(NODE, {'actuators.left_knee_motor.mechanical_reduction': 9.0})[
        0].successful
    res = g.call(Trigger, f'{NODE}/calibrate_to_default_pose')
    assert res.success, res.message
    out = _exchange(g, _motor_state(POSE, 3), g.joint_states, lambda m: m.header.stamp.sec == 3)
    got = dict(zip(out.name, out.position))
    assert got['left_knee'] == pytest.approx(0.6, abs=POSITION_ATOL)       # its default
    assert got['left_ankle_pitch'] == pytest.approx(0.0, abs=POSITION_ATOL)
