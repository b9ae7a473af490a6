"""SimpleTransmission: hand-worked values, inverses, validation."""

import math

import numpy as np
import pytest

from transmission_bridge.transmissions import ConfigError, INTERFACES, SimpleTransmission


def test_hand_worked_actuator_to_joint():
    t = SimpleTransmission(10.0, 0.5)
    assert t.actuator_to_joint('position', [20.0]) == pytest.approx([2.5], abs=0)
    assert t.actuator_to_joint('absolute_position', [20.0]) == pytest.approx([2.5], abs=0)
    assert t.actuator_to_joint('velocity', [30.0]) == pytest.approx([3.0], abs=0)
    for effort in ('effort', 'torque', 'force'):
        assert t.actuator_to_joint(effort, [1.5]) == pytest.approx([15.0], abs=0)


def test_hand_worked_joint_to_actuator():
    t = SimpleTransmission(10.0, 0.5)
    assert t.joint_to_actuator('position', [2.5]) == pytest.approx([20.0], abs=0)
    assert t.joint_to_actuator('velocity', [3.0]) == pytest.approx([30.0], abs=0)
    assert t.joint_to_actuator('effort', [15.0]) == pytest.approx([1.5], abs=0)


def test_negative_reduction_flips_direction():
    t = SimpleTransmission(-4.0)
    assert t.actuator_to_joint('position', [2.0]) == pytest.approx([-0.5], abs=0)
    assert t.actuator_to_joint('velocity', [2.0]) == pytest.approx([-0.5], abs=0)
    assert t.actuator_to_joint('effort', [1.0]) == pytest.approx([-4.0], abs=0)


def test_joint_and_actuator_reductions_multiply():
    t = SimpleTransmission(5.0, joint_reduction=2.0)
    assert t.reduction == 10.0
    assert t.actuator_to_joint('position', [20.0]) == pytest.approx([2.0], abs=0)


def test_batch_dimensions_lead():
    t = SimpleTransmission(2.0, 1.0)
    out = t.actuator_to_joint('position', np.arange(12.0).reshape(3, 4, 1))
    assert out.shape == (3, 4, 1)
    assert out[2, 3, 0] == 11.0 / 2.0 + 1.0


@pytest.mark.parametrize('bad', [0.0, -0.0, math.nan, math.inf, -math.inf])
def test_invalid_reduction_is_an_error(bad):
    with pytest.raises(ConfigError, match='must be finite and non-zero'):
        SimpleTransmission(bad)


@pytest.mark.parametrize('bad', ['50', True, None, [1.0]])
def test_non_numeric_reduction_is_an_error(bad):
    with pytest.raises(ConfigError, match='must be a number'):
        SimpleTransmission(bad)


@pytest.mark.parametrize('bad', [math.nan, math.inf])
def test_non_finite_offset_is_an_error(bad):
    with pytest.raises(ConfigError, match='joint_offsets'):
        SimpleTransmission(1.0, bad)


def test_unknown_interface_and_wrong_shape():
    t = SimpleTransmission(2.0)
    with pytest.raises(ConfigError, match="unknown interface 'current'"):
        t.actuator_to_joint('current', [1.0])
    with pytest.raises(ConfigError, match='last dimension 1'):
        t.actuator_to_joint('position', [1.0, 2.0])
    assert set(INTERFACES) == {'position', 'velocity', 'effort', 'torque', 'force',
                               'absolute_position'}
