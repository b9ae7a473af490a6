"""Revolute, prismatic and fixed joints: accessors, MATLAB's default limits, validation."""

import math

import numpy as np
import pytest
from transmission_bridge.kinematics import FixedJoint, ModelError, PrismaticJoint, RevoluteJoint


def test_default_limits_follow_matlab():
    assert RevoluteJoint('r').position_limits == (-math.pi, math.pi)
    assert PrismaticJoint('p').position_limits == (-0.5, 0.5)
    assert RevoluteJoint('r', lower=-math.inf, upper=math.inf).position_limits == \
        (-math.inf, math.inf)


def test_default_position_defaults_to_zero_clipped_into_limits():
    assert RevoluteJoint('r').default_position == 0.0
    assert RevoluteJoint('r', lower=0.5, upper=1.0).default_position == 0.5
    with pytest.raises(ModelError, match="joint 'r': default_position 2.0 is outside"):
        RevoluteJoint('r', lower=-1.0, upper=1.0, default_position=2.0)


def test_motion_by_hand():
    r = RevoluteJoint('r', axis=(1, 0, 0))
    np.testing.assert_allclose(r.motion(math.pi / 2)[:3, :3] @ [0, 1, 0], [0, 0, 1], atol=1e-15)
    p = PrismaticJoint('p', axis=(0, 3, 4))
    np.testing.assert_allclose(p.motion(0.5)[:3, 3], [0, 0.3, 0.4], atol=1e-15)
    assert r.motion(np.zeros((2, 3))).shape == (2, 3, 4, 4)


def test_fixed_joint():
    origin = np.eye(4)
    origin[:3, 3] = [1, 2, 3]
    f = FixedJoint('weld', origin=origin)
    assert f.num_positions == 0 and f.type_name == 'fixed'
    np.testing.assert_array_equal(f.transform(0.0), origin)


def test_replace_and_velocity_limit():
    r = RevoluteJoint('r', damping=0.1, velocity_limit=2.0)
    assert r.replace(damping=0.5).damping == 0.5
    assert r.damping == 0.1
    assert r.velocity_limit == 2.0
    with pytest.raises(ModelError, match='velocity_limit must be > 0'):
        RevoluteJoint('r', velocity_limit=0.0)
    with pytest.raises(ModelError, match='unknown field'):
        r.replace(colour='red')
    assert float(r.damping_force(3.0)) == pytest.approx(-0.3)


@pytest.mark.parametrize('kwargs,match', [
    ({'lower': 1.0, 'upper': -1.0}, 'lower <= upper'),
    ({'lower': float('nan')}, 'lower <= upper'),
    ({'axis': [1, 0]}, 'axis must have 3 entries'),
    ({'axis': 'z'}, 'axis must have 3 entries'),
    ({'origin': np.diag([2.0, 1, 1, 1])}, 'rigid transform'),
    ({'damping': True}, 'damping must be a number'),
])
def test_validation(kwargs, match):
    with pytest.raises(ModelError, match=match):
        RevoluteJoint('r', **kwargs)
