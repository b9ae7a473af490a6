"""TransmissionSet: the whole robot at once equals each transmission on its own."""

from conftest import CONFIG
import numpy as np
import pytest
from tolerances import COMPILED_ATOL, COMPILED_RTOL
from transmission_bridge.transmissions import (
    ConfigError, INTERFACES, load_transmissions, TransmissionSet)
from transmission_bridge.transmissions.interfaces import map_kind
from transmission_bridge.transmissions.parameters import (
    apply_parameters, check_parameter_names, parameter_values)

EXAMPLE = CONFIG / 'example_robot_transmissions.yaml'


@pytest.fixture
def ts():
    return load_transmissions(EXAMPLE)


def test_example_uses_all_types_in_file_order(ts):
    assert [s.type for s in ts.specs] == ['simple', 'simple', 'simple', 'differential',
                                          'four_bar_linkage']
    assert ts.joint_names[3:5] == ('wrist_pitch', 'wrist_roll')
    assert ts.actuator_names[3:5] == ('wrist_left_motor', 'wrist_right_motor')


def _there_and_back(ts, interface, seed, rows):
    """Seeded actuator values, their joint values, and those mapped back to actuators."""
    a = np.random.default_rng(seed).normal(size=(rows, ts.num_actuators)) * 10
    j = ts.actuator_to_joint(interface, a)
    return a, j, ts.joint_to_actuator(interface, j)


@pytest.mark.parametrize('interface', INTERFACES)
def test_set_equals_each_transmission(ts, interface):
    """The compiled set maps agree with each type's own formulas to rounding (a few ulps)."""
    a, j, back = _there_and_back(ts, interface, seed=7, rows=5)
    ai = ts.actuator_index
    ji = ts.joint_index
    for spec, t in zip(ts.specs, ts.transmissions):
        cols_a = [ai[x.name] for x in spec.actuators]
        cols_j = [ji[x.name] for x in spec.joints]
        np.testing.assert_allclose(j[:, cols_j], t.actuator_to_joint(interface, a[:, cols_a]),
                                   rtol=COMPILED_RTOL, atol=COMPILED_ATOL)
        np.testing.assert_allclose(back[:, cols_a], t.joint_to_actuator(interface, j[:, cols_j]),
                                   rtol=COMPILED_RTOL, atol=COMPILED_ATOL)


@pytest.mark.parametrize('interface', INTERFACES)
def test_a_batch_maps_each_row_as_alone_bit_for_bit(ts, interface):
    """What keeps the live bridge (one message) and the converter (a whole bag) equal."""
    a, batch, back = _there_and_back(ts, interface, seed=11, rows=6)
    for k in range(len(a)):
        assert np.array_equal(batch[k], ts.actuator_to_joint(interface, a[k]))
        assert np.array_equal(back[k], ts.joint_to_actuator(interface, batch[k]))
    stacked = ts.joint_state(np.stack([a, a, a], axis=-2))
    kind = map_kind(interface)
    if kind == 'effort':        # the stages' and the damping loss, with the same velocities
        velocity = ts.actuator_to_joint('velocity', a)
        assert np.array_equal(stacked[:, 2], ts.after_damping(
            ts.measured_joint_efforts(a, a), velocity))
    else:
        assert np.array_equal(stacked[:, {'position': 0, 'velocity': 1}[kind]], batch)
    for k in range(len(a)):     # one (3, n) state: the bridge's per-message path
        assert np.array_equal(ts.joint_state(np.stack([a[k]] * 3)), stacked[k])


def test_nan_stays_inside_its_transmission(ts):
    a = np.ones(ts.num_actuators)
    a[ts.actuator_index['wrist_left_motor']] = np.nan
    j = ts.actuator_to_joint('position', a)
    bad = {ts.joint_names[i] for i in np.flatnonzero(np.isnan(j))}
    assert bad == {'wrist_pitch', 'wrist_roll'}


def test_duplicate_names_across_the_set_are_errors(ts):
    specs = list(ts.specs)
    with pytest.raises(ConfigError, match="duplicate joint name 'elbow'"):
        TransmissionSet(specs + [specs[2].__class__(
            'other', 'simple', (specs[0].actuators[0].__class__('spare_motor'),),
            specs[2].joints)])
    with pytest.raises(ConfigError, match="duplicate actuator name 'elbow_motor'"):
        TransmissionSet(specs + [specs[2].__class__(
            'other', 'simple', specs[2].actuators,
            (specs[2].joints[0].__class__('spare_joint'),))])
    with pytest.raises(ConfigError, match="duplicate transmission name 'elbow_trans'"):
        TransmissionSet(specs + [specs[2].__class__(
            'elbow_trans', 'simple', (specs[0].actuators[0].__class__('m2'),),
            (specs[2].joints[0].__class__('j2'),))])
    with pytest.raises(ConfigError, match='at least one transmission'):
        TransmissionSet([])


def test_coverage_rejects_unknown_and_partial(ts):
    joints, actuators = ts.coverage(['elbow', 'wrist_roll', 'wrist_pitch'])
    assert [ts.joint_names[i] for i in joints] == ['elbow', 'wrist_roll', 'wrist_pitch']
    assert [ts.actuator_names[i] for i in actuators] == [
        'elbow_motor', 'wrist_left_motor', 'wrist_right_motor']
    with pytest.raises(ConfigError, match=r"unknown joints \['knee'\]"):
        ts.coverage(['elbow', 'knee'])
    with pytest.raises(ConfigError, match="'wrist_trans' is only partly covered.*wrist_roll"):
        ts.coverage(['wrist_pitch'])


def test_calibrated_offsets_map_readings_to_default(ts):
    rng = np.random.default_rng(3)
    a = rng.normal(size=ts.num_actuators) * 30
    new = ts.with_joint_offsets(ts.calibrated_offsets(a))
    np.testing.assert_allclose(new.actuator_to_joint('position', a), ts.default_positions,
                               rtol=0, atol=1e-12)
    a[0] = np.nan
    with pytest.raises(ConfigError, match='shoulder_pan_motor'):
        ts.calibrated_offsets(a)


def test_damped_effort(ts):
    tau = np.arange(7.0)
    v = np.full(7, 2.0)
    v[1] = np.nan
    out = ts.after_damping(tau, v)
    assert out[0] == 0.0 - 0.5 * 2.0
    assert out[1] == 1.0            # unknown velocity: effort unchanged
    assert out[5] == 5.0            # no damping on finger_proximal


def test_parameters_round_trip_and_refusal(ts):
    values = parameter_values(ts)
    assert values['joints.elbow.offset'] == 0.1
    assert values['actuators.shoulder_lift_motor.mechanical_reduction'] == -120.0
    changed = apply_parameters(ts, {'joints.elbow.offset': 0.2,
                                    'actuators.elbow_motor.mechanical_reduction': 2.0})
    assert changed.joint('elbow').offset == 0.2
    assert changed.actuator_to_joint('position', np.full(7, 160.0))[2] == pytest.approx(1.2)
    # Every joint's offset at once (calibration), with other fields: one new set, the
    # rest of it as it was.
    many = {f'joints.{j}.offset': 0.01 * k for k, j in enumerate(ts.joint_names)}
    many.update({'joints.elbow.damping': 0.7, 'actuators.elbow_motor.mechanical_reduction': 3.0})
    assert parameter_values(apply_parameters(ts, many)) == {**values, **many}
    with pytest.raises(ConfigError, match="joint 'elbow': damping must be >= 0, got -1.0"):
        apply_parameters(ts, {'joints.elbow.offset': 0.3, 'joints.elbow.damping': -1.0})
    with pytest.raises(ConfigError, match="unknown joint 'knee'"):
        apply_parameters(ts, {'joints.knee.offset': 0.3})
    with pytest.raises(ConfigError, match='not a transmission parameter'):
        apply_parameters(ts, {'joints.elbow.colour': 1.0})
    assert ts.joint('elbow').offset == 0.1   # the original is untouched
    check_parameter_names(ts)


def test_position_is_velocity_map_plus_offsets_bit_for_bit(ts):
    # BridgeCore relies on this to map position and velocity in one call.
    rng = np.random.default_rng(11)
    a = rng.normal(size=(100, ts.num_actuators)) * 50
    assert np.array_equal(ts.actuator_to_joint('position', a),
                          ts.actuator_to_joint('velocity', a) + ts.joint_offsets)


def test_one_pass_state_map_equals_the_three_maps_bit_for_bit(ts):
    # BridgeCore's per-message path and the offline converter's batch.
    rng = np.random.default_rng(12)
    a = rng.normal(size=(50, 3, ts.num_actuators)) * 40
    a[3, 1, 2] = np.nan                 # an unknown velocity: that joint's effort undamped
    a[5, 0, 4] = a[6, 2, 0] = np.nan
    out = ts.joint_state(a)
    velocities = ts.actuator_to_joint('velocity', a[:, 1])
    assert np.isnan(velocities[3]).any() and ts.damping.any()     # the test can tell
    assert np.array_equal(out[:, 0], ts.actuator_to_joint('position', a[:, 0]), equal_nan=True)
    assert np.array_equal(out[:, 1], velocities, equal_nan=True)
    assert np.array_equal(out[:, 2], ts.after_damping(
        ts.measured_joint_efforts(a[:, 2], a[:, 1]), velocities), equal_nan=True)
    for k in range(len(a)):
        assert np.array_equal(ts.joint_state(a[k]), out[k], equal_nan=True)


def test_joint_state_of_a_long_batch_is_taken_in_chunks_with_the_same_bits(ts):
    rng = np.random.default_rng(13)
    a = rng.normal(size=(2, 5000, 3, ts.num_actuators)) * 40   # more than one chunk
    out = ts.joint_state(a)
    assert out.shape == (2, 5000, 3, ts.num_joints)
    for k in (0, 4095, 4096, 4999):
        assert np.array_equal(out[1, k], ts.joint_state(a[1, k]))
    with pytest.raises(ConfigError, match=r'shape \(\.\.\., 3, 7\), got \(2, 5000, 2, 7\)'):
        ts.joint_state(a[..., :2, :])
