"""ScrewJoint: Drake's semantics, worked by hand."""

import math

import numpy as np
import pytest
from transmission_bridge.kinematics import (
    Body, Inertial, Model, ModelError, RevoluteJoint, ScrewJoint)

G = 9.81
M = 3.0


def _mass_on_screw(pitch, axis=(0.0, 0.0, 1.0)):
    return Model([Body('nut', ScrewJoint('screw', axis=axis, pitch=pitch), Inertial(M))])


@pytest.mark.parametrize('pitch', [0.02, 0.5])
def test_vertical_screw_gravity_by_hand(pitch):
    # V = m g z = m g pitch theta / 2 pi, so tau_g = -dV/dtheta = -m g pitch / 2 pi
    for theta in (0.0, 1.3, -7.0):
        tau = _mass_on_screw(pitch).gravity_generalized_forces([theta])
        assert tau[0] == pytest.approx(-M * G * pitch / (2 * math.pi), rel=1e-14)


def test_sign_flips_with_negative_pitch_or_downward_axis():
    up = _mass_on_screw(0.1).gravity_generalized_forces([0.4])[0]
    assert up < 0
    assert _mass_on_screw(-0.1).gravity_generalized_forces([0.4])[0] == pytest.approx(-up)
    assert _mass_on_screw(0.1, axis=(0, 0, -1)).gravity_generalized_forces([0.4])[0] == \
        pytest.approx(-up)


def test_one_revolution_advances_one_pitch():
    m = _mass_on_screw(0.02)
    X = m.forward_kinematics([2 * math.pi])['nut']
    np.testing.assert_allclose(X[:3, 3], [0, 0, 0.02], rtol=0, atol=1e-15)
    np.testing.assert_allclose(X[:3, :3], np.eye(3), atol=1e-14)
    X = m.forward_kinematics([-math.pi])['nut']
    assert X[2, 3] == pytest.approx(-0.01, abs=1e-15)
    assert X[0, 0] == pytest.approx(-1.0, abs=1e-15)


def test_zero_pitch_screw_is_a_revolute_joint():
    rng = np.random.default_rng(5)
    axis, xyz = rng.normal(size=3), rng.normal(size=3)
    origin = np.eye(4)
    origin[:3, 3] = xyz
    inertial = Inertial(2.0, (0.3, 0.1, -0.2))
    screw = Model([Body('b', ScrewJoint('j', axis=axis, pitch=0.0, origin=origin), inertial)])
    rev = Model([Body('b', RevoluteJoint('j', axis=axis, origin=origin,
                                         lower=-np.inf, upper=np.inf), inertial)])
    q = rng.uniform(-4, 4, size=(20, 1))
    assert np.array_equal(screw.body_poses(q), rev.body_poses(q))
    assert np.array_equal(screw.gravity_generalized_forces(q), rev.gravity_generalized_forces(q))


def test_accessors_and_velocity_map():
    s = ScrewJoint('s', axis=(0, 0, 3), pitch=-0.04, damping=0.2)
    assert s.type_name == 'screw'
    assert s.pitch == -0.04
    np.testing.assert_array_equal(s.axis, [0, 0, 1])
    assert s.position_limits == (-math.inf, math.inf)
    assert float(s.translational_velocity(2 * math.pi)) == pytest.approx(-0.04, rel=1e-15)
    assert float(s.angular_velocity(-0.04)) == pytest.approx(2 * math.pi, rel=1e-15)
    assert float(s.rotation_from_translation(0.01)) == pytest.approx(-math.pi / 2, rel=1e-15)
    assert float(s.damping_force(2.0)) == -0.4


def test_default_translation_and_rotation_are_coupled():
    s = ScrewJoint('s', pitch=0.02)
    moved = s.with_default_translation(0.01)
    assert moved.default_position == pytest.approx(math.pi, rel=1e-15)
    assert moved.default_translation == pytest.approx(0.01, rel=1e-15)
    turned = s.with_default_rotation(4 * math.pi)
    assert turned.default_translation == pytest.approx(0.04, rel=1e-15)


@pytest.mark.parametrize('pitch', [0.0, 1e-9, -1e-10])
def test_default_translation_on_near_zero_pitch_is_an_error(pitch):
    with pytest.raises(ModelError, match="joint 's': cannot set a default translation"):
        ScrewJoint('s', pitch=pitch).with_default_translation(0.01)


@pytest.mark.parametrize('kwargs,match', [
    ({'axis': (0, 0, 1e-9)}, "joint 's': axis must have a direction"),
    ({'axis': (0, 0, 0)}, 'must have a direction'),
    ({'damping': -0.1}, "joint 's': damping must be >= 0, got -0.1"),
    ({'pitch': float('nan')}, "joint 's': pitch must be finite"),
    ({'lower': -1.0, 'upper': 1.0, 'default_position': 2.0}, 'outside the limits'),
])
def test_validation(kwargs, match):
    with pytest.raises(ModelError, match=match):
        ScrewJoint('s', **kwargs)
