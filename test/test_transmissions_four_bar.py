"""FourBarLinkageTransmission: hand-worked values and the upstream effort fix."""

import numpy as np
import pytest

from transmission_bridge.transmissions import ConfigError, FourBarLinkageTransmission

AR, JR, OFF = (2.0, 4.0), (3.0, 0.5), (0.1, -0.2)


@pytest.fixture
def t():
    return FourBarLinkageTransmission(AR, JR, OFF)


def test_position_both_directions(t):
    # a = (12, 8): j1 = 12/(3*2) + 0.1 = 2.1; j2 = (8/4 - 2)/0.5 - 0.2 = -0.2
    assert t.actuator_to_joint('position', [12.0, 8.0]) == pytest.approx([2.1, -0.2], abs=1e-15)
    assert t.joint_to_actuator('position', [2.1, -0.2]) == pytest.approx([12.0, 8.0], abs=1e-14)


def test_velocity_both_directions(t):
    # a = (6, 20): j1 = 6/6 = 1; j2 = (20/4 - 1)/0.5 = 8
    assert t.actuator_to_joint('velocity', [6.0, 20.0]) == pytest.approx([1.0, 8.0], abs=0)
    assert t.joint_to_actuator('velocity', [1.0, 8.0]) == pytest.approx([6.0, 20.0], abs=0)


def test_effort_is_the_power_conserving_fix(t):
    # ros2_control PR #1837: tau_j1 = n_j1 n_a1 tau_a1 + n_a2 tau_a2 = 6 + 8; tau_j2 = 0.5*4*2
    assert t.actuator_to_joint('effort', [1.0, 2.0]) == pytest.approx([14.0, 4.0], abs=0)
    assert t.joint_to_actuator('effort', [14.0, 4.0]) == pytest.approx([1.0, 2.0], abs=0)


def test_upstream_counter_example_conserves_power():
    # ros2_control issue #1746: unit reductions, v_a = (1, 0), tau_a = (0, 1).
    t = FourBarLinkageTransmission((1.0, 1.0), (1.0, 1.0))
    v_j = t.actuator_to_joint('velocity', [1.0, 0.0])
    tau_j = t.actuator_to_joint('effort', [0.0, 1.0])
    assert v_j == pytest.approx([1.0, -1.0], abs=0)
    assert tau_j == pytest.approx([1.0, 1.0], abs=0)
    assert float(tau_j @ v_j) == 0.0


def test_validation():
    with pytest.raises(ConfigError, match=r'joint_reductions\[1\] must be finite and non-zero'):
        FourBarLinkageTransmission((1.0, 1.0), (1.0, float('-inf')))
    with pytest.raises(ConfigError, match='must have 2 entries'):
        FourBarLinkageTransmission((1.0, 1.0, 1.0), (1.0, 1.0))


def test_batch(t):
    a = np.array([[12.0, 8.0], [6.0, 20.0]])
    out = t.actuator_to_joint('velocity', a)
    assert out.shape == (2, 2)
    assert out[1] == pytest.approx([1.0, 8.0], abs=0)
