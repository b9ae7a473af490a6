"""
A goal's prepared layout maps as the reference does, and hands the reference what it cannot.

The reference is :meth:`CommandMapper.map_command` (checked against NOTATION's oracle in
test_effort_law.py); here the prepared bytes, deserialized, must carry the reference's
motors, values and stamp for random samples inside the limits, and ``None`` (the
reference's turn) beyond a limit, for NaN, for lossy stages and for linkages.
"""

import numpy as np
import pytest
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState

from transmission_bridge.mapping.commands import CommandMapper
from transmission_bridge.mapping.prepared import PreparedCommand
from transmission_bridge.transmissions import load_transmissions

CONFIG = 'config/example_robot_transmissions.yaml'
ROUNDING = 1e-12            # relative: the same sums in another order
STAMP = 1_700_000_000_123_456_789


# Drives in their own units: an offset, a negative factor, counts and per mille.
UNITS = {'l': {'position': {'factor': -0.01, 'offset': 0.3}, 'velocity': {'factor': -0.01},
               'effort': {'factor': 0.02, 'offset': 0.001}},
         'r': {'position': 'turns', 'velocity': 'rpm', 'effort': 'amps',
               'torque_constant': 0.05},
         'pan_motor': {'position': 'counts', 'velocity': 'counts',
                       'counts_per_revolution': 4096, 'effort': 'per_mille',
                       'rated_torque': 0.5}}


def _ideal_set(units=False):
    """Return a differential, a coupling and a simple joint, with damping, ideal stages, limits."""
    document = {'transmissions': [
        {'name': 'wrist', 'type': 'differential',
         'actuators': [{'name': 'l', 'mechanical_reduction': 50.0, 'rotor_inertia': 1e-5},
                       {'name': 'r', 'mechanical_reduction': -50.0}],
         'joints': [{'name': 'pitch', 'damping': 0.05, 'offset': 0.1,
                     'limits': {'lower': -2.0, 'upper': 2.0, 'velocity': 3.0, 'effort': 40.0}},
                    {'name': 'roll', 'damping': 0.02,
                     'limits': {'lower': -3.0, 'upper': 3.0, 'velocity': 3.0, 'effort': 40.0}}]},
        {'name': 'hand', 'type': 'coupling', 'matrix': [[2.0, 0.5], [-0.3, 1.5]],
         'actuators': [{'name': 'h1'}, {'name': 'h2'}],
         'joints': [{'name': 'h_a', 'damping': 0.1}, {'name': 'h_b'}]},
        {'name': 'pan', 'type': 'simple',
         'actuators': [{'name': 'pan_motor', 'mechanical_reduction': 100.0,
                        'limits': {'velocity': 300.0, 'effort': 2.0}}],
         'joints': [{'name': 'pan', 'offset': -0.2, 'damping': 0.3,
                     'limits': {'lower': -1.0, 'upper': 1.0, 'velocity': 2.0,
                                'effort': 150.0}}]}]}
    if units:
        for item in document['transmissions']:
            for actuator in item['actuators']:
                actuator['units'] = UNITS.get(actuator['name'], {})
    return load_transmissions(document)


def _reference(tset, names, q, qd, tau):
    mapper = CommandMapper(tset)
    out = mapper.map_command(names, q, qd, [] if tau is None else tau)
    return out


@pytest.mark.parametrize('names', [['pitch', 'roll'], ['roll', 'pitch', 'pan'],
                                   ['h_b', 'h_a'], ['pan']])
@pytest.mark.parametrize('with_effort', [True, False])
@pytest.mark.parametrize('units', [False, True])
def test_inside_the_limits_the_prepared_map_is_the_reference(names, with_effort, units):
    tset = _ideal_set(units)
    rng = np.random.default_rng(62)
    prepared = PreparedCommand(CommandMapper(tset), names, with_effort)
    assert prepared.usable
    for _ in range(50):
        q = rng.uniform(-0.8, 0.8, len(names))
        qd = rng.uniform(-1.0, 1.0, len(names))
        tau = rng.uniform(-1.0, 1.0, len(names)) if with_effort else None
        want = _reference(tset, names, q, qd, tau)
        got = deserialize_message(prepared.command(q, qd, tau, STAMP), JointState)
        assert tuple(got.name) == tuple(want.names)
        assert (got.header.stamp.sec, got.header.stamp.nanosec) == divmod(STAMP, 10**9)
        for field, expected in (('position', want.position), ('velocity', want.velocity),
                                ('effort', want.effort)):
            values = np.array(getattr(got, field))
            if expected is None or not len(expected):
                assert not len(values), field
            else:
                np.testing.assert_allclose(values, expected, rtol=ROUNDING,
                                           atol=ROUNDING * np.abs(expected).max(),
                                           err_msg=field)


@pytest.mark.parametrize('units', [False, True])
def test_beyond_a_limit_or_unknown_the_reference_decides(units):
    tset = _ideal_set(units)
    prepared = PreparedCommand(CommandMapper(tset), ['pan'], True)
    assert prepared.command([0.5], [0.1], [1.0], STAMP) is not None
    for q, qd, tau in (([1.5], [0.1], [1.0]),       # past the joint's upper position
                       ([0.5], [2.5], [1.0]),       # past the joint's velocity
                       ([0.5], [0.1], [190.0]),     # past the motor's effort (2 N·m: 200)
                       ([0.5], [np.nan], [1.0]),
                       ([np.inf], [0.1], [1.0])):
        assert prepared.command(q, qd, tau, STAMP) is None, (q, qd, tau)


def test_a_prepared_command_is_remembered_as_the_reference_would_be():
    tset = _ideal_set()
    prepared_mapper, reference_mapper = CommandMapper(tset), CommandMapper(tset)
    PreparedCommand(prepared_mapper, ['pitch', 'roll'], True).command(
        [0.3, -0.2], [0.1, 0.0], [1.0, 2.0], STAMP)
    reference_mapper.map_command(['pitch', 'roll'], [0.3, -0.2], [0.1, 0.0], [1.0, 2.0])
    # One joint of the differential alone: the other's last commanded value completes it.
    a = prepared_mapper.map_command(['pitch'], [0.5], [0.2], [3.0])
    b = reference_mapper.map_command(['pitch'], [0.5], [0.2], [3.0])
    for field in ('position', 'velocity', 'effort'):
        np.testing.assert_allclose(getattr(a, field), getattr(b, field), rtol=ROUNDING)
    assert prepared_mapper.counters.published == reference_mapper.counters.published


def test_lossy_stages_linkages_and_partial_layouts_take_the_reference():
    arm = load_transmissions(CONFIG)
    mapper = CommandMapper(arm)
    assert not PreparedCommand(mapper, ['elbow'], True).usable          # motor friction
    assert PreparedCommand(mapper, ['finger_proximal', 'finger_distal'], True).usable  # 4-bar
    assert PreparedCommand(mapper, ['wrist_pitch', 'wrist_roll'], True).usable
    assert not PreparedCommand(mapper, ['wrist_pitch'], True).usable    # half a differential
    assert not PreparedCommand(mapper, ['wrist_pitch', 'nope'], True).usable
    ankle = load_transmissions('config/closed_loop_ankle_transmissions.yaml')      # rods
    assert not PreparedCommand(CommandMapper(ankle), ['ankle_pitch', 'ankle_roll'],
                               True).usable
