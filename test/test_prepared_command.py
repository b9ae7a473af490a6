"""
A goal's prepared layout maps as the reference does, and hands the reference what it cannot.

The reference is :meth:`CommandMapper.map_command` (checked against NOTATION's oracle in
test_effort_law.py); here the prepared bytes, deserialized, must carry the reference's
motors, values and stamp for random samples inside the limits, and ``None`` (the
reference's turn) beyond a limit, for NaN, for lossy stages and for linkages. A stream's
layout map (StreamedCommand) must give the reference's values to the bit.
"""

import struct
import types

import numpy as np
import pytest
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState

from transmission_bridge.mapping.commands import CommandMapper
from transmission_bridge.mapping.prepared import PreparedCommand, StreamedCommand
from transmission_bridge.transmissions import load_transmissions

CONFIG = 'config/example_robot_transmissions.yaml'
ROUNDING = 1e-12            # relative: the same sums in another order
STAMP = 1_700_000_000_123_456_789
STAMP_HEADER = struct.Struct('<iII')     # a header's bytes: stamp, frame_id's length (1: '')


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
    return load_transmissions(_ideal_document(units))


def _ideal_document(units):
    """Return :func:`_ideal_set`'s document."""
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
    return document


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


# A stream's layouts: which of position, velocity and effort it carries.
STREAMS = [(True, False, True), (False, False, True), (True, True, True), (True, False, False),
           (False, True, False)]


def _three_by_three(units):
    """Return the ideal set with a 3 x 3 coupling added: three terms a motor, summed in order."""
    hand = {'name': 'palm', 'type': 'coupling',
            'matrix': [[1.3, -0.7, 0.45], [0.2, 1.1, -0.35], [0.6, 0.25, 0.9]],
            'actuators': [{'name': f'p{k}', **({'units': UNITS['l']} if units else {})}
                          for k in range(3)],
            'joints': [{'name': f'palm_{k}', 'damping': 0.03 * k} for k in range(3)]}
    document = _ideal_document(units)
    document['transmissions'].append(hand)
    return load_transmissions(document)


@pytest.mark.parametrize('present', STREAMS)
@pytest.mark.parametrize('units', [False, True])
def test_a_streamed_layout_is_the_reference_to_the_bit(present, units):
    # A 3 x 3 coupling (three terms a motor: their order shows in the bits), a 2 x 2 one, a
    # differential and a geared joint, named in a shuffled order; efforts without
    # velocities take the damping at the measured motion.
    tset = _three_by_three(units)
    rng = np.random.default_rng(63)
    speeds = rng.uniform(-2.0, 2.0, tset.num_actuators)
    measured = types.SimpleNamespace(motor_velocity=speeds)
    streamed_mapper, reference_mapper = (CommandMapper(tset, measured=lambda _: measured)
                                         for _ in range(2))
    for _ in range(30):
        names = list(rng.permutation(tset.joint_names))
        k = len(names)
        streamed = StreamedCommand(streamed_mapper, names, [k if p else 0 for p in present])
        assert streamed.usable
        arrays = [rng.uniform(-0.8, 0.8, k) if p else np.zeros(0) for p in present]
        header = STAMP_HEADER.pack(*divmod(STAMP, 10**9), 1) + b'\0'
        got = deserialize_message(streamed.command(arrays, header), JointState)
        want = reference_mapper.map_command(names, *arrays)
        assert tuple(got.name) == tuple(want.names)
        for field in ('position', 'velocity', 'effort'):
            expected = getattr(want, field)
            values = np.array(getattr(got, field))
            if expected is None:
                assert not len(values), field
            else:
                assert values.tobytes() == np.asarray(expected).tobytes(), field
        assert streamed_mapper.counters.as_dict() == reference_mapper.counters.as_dict()


def test_a_streamed_layout_leaves_to_the_reference_what_a_limit_would_change():
    tset = _ideal_set()
    mapper = CommandMapper(tset)
    header = STAMP_HEADER.pack(0, 0, 1) + b'\0'
    streamed = StreamedCommand(mapper, ['pan'], (1, 1, 1))
    assert streamed.command([np.array(x) for x in ([0.5], [0.1], [1.0])], header) is not None
    for q, qd, tau in (([1.5], [0.1], [1.0]),       # past the joint's upper position
                       ([0.5], [2.5], [1.0]),       # past the joint's velocity
                       ([0.5], [0.1], [190.0]),     # past the motor's effort (2 N·m: 200)
                       ([0.5], [np.nan], [1.0]),
                       ([np.inf], [0.1], [1.0])):
        before = mapper.counters.as_dict()
        assert streamed.command([np.array(x) for x in (q, qd, tau)], header) is None
        assert mapper.counters.as_dict() == before                  # nothing counted
    arm = CommandMapper(load_transmissions(CONFIG))
    assert StreamedCommand(arm, ['elbow'], (1, 0, 1)).usable        # a lossy stage: in place
    assert not StreamedCommand(arm, ['wrist_pitch'], (1, 0, 1)).usable   # half a differential
    assert not StreamedCommand(arm, ['elbow'], (1, 0, 2)).usable     # a length mismatch
    ankle = load_transmissions('config/closed_loop_ankle_transmissions.yaml')      # rods
    assert not StreamedCommand(CommandMapper(ankle), ['ankle_pitch', 'ankle_roll'],
                               (2, 0, 2)).usable
