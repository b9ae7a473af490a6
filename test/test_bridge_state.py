"""The bridge's state side without ROS: caching, input policy, staleness, reconfiguration."""

from conftest import CONFIG
import numpy as np
import pytest
from transmission_bridge.mapping.state import ActuatorStates
from transmission_bridge.transmissions import load_transmissions

TS = load_transmissions(CONFIG / 'example_robot_transmissions.yaml')
MOTORS = list(TS.actuator_names)


@pytest.fixture
def core():
    return ActuatorStates(TS)


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


def test_the_measured_state_is_the_last_published_less_what_is_stale_now(core):
    """The one measured state: joints as last published; with a time, stale ones unknown."""
    core.stale_ns = 50
    theta = np.linspace(-1.0, 1.0, len(MOTORS))
    thetad = np.linspace(0.5, -0.5, len(MOTORS))
    core.ingest('a', MOTORS[:3], theta[:3], thetad[:3], [], 1, now_ns=0)
    core.ingest('b', MOTORS[3:], theta[3:], thetad[3:], [], 1, now_ns=0)
    m = core.measured()
    assert np.array_equal(m.position, TS.actuator_to_joint('position', theta))
    assert np.array_equal(m.velocity, TS.actuator_to_joint('velocity', thetad))
    assert np.array_equal(m.motor_position, theta)
    bad = core.ingest('a', MOTORS[:2], [1.0], [], [], 2, now_ns=10)     # refused: no change
    assert bad is None and np.array_equal(core.measured().position, m.position)
    core.ingest('b', MOTORS[3:], theta[3:], thetad[3:], [], 3, now_ns=40)
    later = core.measured(now_ns=80)            # 'a' (the shoulders, the elbow) stale now
    stale = [TS.joint_index[j] for j in ('shoulder_pan', 'shoulder_lift', 'elbow')]
    assert np.isnan(later.position[stale]).all() and np.isnan(later.motor_position[:3]).all()
    fresh = np.setdiff1d(np.arange(TS.num_joints), stale)
    assert np.array_equal(later.position[fresh], m.position[fresh])
    assert not np.isnan(core.measured().position).any()   # without a time: as published
