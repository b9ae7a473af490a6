"""DifferentialTransmission: values worked by hand from the formulas in its docstring."""

import numpy as np
import pytest

from transmission_bridge.transmissions import ConfigError, DifferentialTransmission

AR, JR, OFF = (2.0, 4.0), (1.0, 0.5), (0.1, -0.2)


@pytest.fixture
def t():
    return DifferentialTransmission(AR, JR, OFF)


def test_position_both_directions(t):
    # a = (4, 8): a1/n_a1 = 2, a2/n_a2 = 2 -> j1 = 4/2 + 0.1, j2 = 0/1 - 0.2
    assert t.actuator_to_joint('position', [4.0, 8.0]) == pytest.approx([2.1, -0.2], abs=1e-15)
    # a = (6, -4): 3 and -1 -> j1 = 2/2 + 0.1 = 1.1, j2 = 4/(2*0.5) - 0.2 = 3.8
    assert t.actuator_to_joint('position', [6.0, -4.0]) == pytest.approx([1.1, 3.8], abs=1e-15)
    assert t.joint_to_actuator('position', [1.1, 3.8]) == pytest.approx([6.0, -4.0], abs=1e-14)


def test_velocity_has_no_offset(t):
    assert t.actuator_to_joint('velocity', [6.0, -4.0]) == pytest.approx([1.0, 4.0], abs=0)
    assert t.joint_to_actuator('velocity', [1.0, 4.0]) == pytest.approx([6.0, -4.0], abs=0)


def test_effort_both_directions(t):
    # tau_j1 = 1 * (2*1 + 4*2) = 10; tau_j2 = 0.5 * (2*1 - 4*2) = -3
    assert t.actuator_to_joint('effort', [1.0, 2.0]) == pytest.approx([10.0, -3.0], abs=0)
    assert t.joint_to_actuator('torque', [10.0, -3.0]) == pytest.approx([1.0, 2.0], abs=1e-15)


def test_power_of_hand_example(t):
    v_a, tau_a = np.array([6.0, -4.0]), np.array([1.0, 2.0])
    v_j = t.actuator_to_joint('velocity', v_a)
    tau_j = t.actuator_to_joint('effort', tau_a)
    assert tau_j @ v_j == pytest.approx(tau_a @ v_a, abs=1e-14) == -2.0


def test_roles_follow_list_order_not_names():
    swapped = DifferentialTransmission(AR[::-1], JR, OFF)
    a = np.array([4.0, 8.0])
    assert not np.allclose(swapped.actuator_to_joint('position', a),
                           DifferentialTransmission(AR, JR, OFF).actuator_to_joint('position', a))


@pytest.mark.parametrize('kwargs,match', [
    ({'actuator_reductions': (1.0,), 'joint_reductions': (1.0, 1.0)}, 'must have 2 entries'),
    ({'actuator_reductions': (1.0, 0.0), 'joint_reductions': (1.0, 1.0)},
     r'actuator_reductions\[1\] must be finite and non-zero, got 0.0'),
    ({'actuator_reductions': (1.0, 1.0), 'joint_reductions': (float('nan'), 1.0)},
     r'joint_reductions\[0\] must be finite and non-zero, got nan'),
    ({'actuator_reductions': (1.0, 1.0), 'joint_reductions': (1.0, 1.0),
      'joint_offsets': (0.0, float('inf'))}, r'joint_offsets\[1\] must be finite'),
    ({'actuator_reductions': 3.0, 'joint_reductions': (1.0, 1.0)}, 'sequence of 2'),
])
def test_validation(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        DifferentialTransmission(**kwargs)
