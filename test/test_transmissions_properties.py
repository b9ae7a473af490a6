"""Physical laws of every transmission type, over seeded random reductions and values."""

from hypothesis import given, strategies as st
import numpy as np

from tolerances import POWER_RTOL, ROUND_TRIP_ATOL, ROUND_TRIP_RTOL
from transmission_bridge.transmissions import (
    DifferentialTransmission, FourBarLinkageTransmission, SimpleTransmission)

SENTINEL = -123456.789

magnitudes = st.floats(0.05, 200.0)
signs = st.sampled_from([-1.0, 1.0])
reductions = st.builds(lambda m, s: m * s, magnitudes, signs)
offsets = st.floats(-3.0, 3.0)
values = st.floats(-50.0, 50.0)


@st.composite
def transmissions(draw):
    kind = draw(st.sampled_from(['simple', 'differential', 'four_bar']))
    if kind == 'simple':
        return SimpleTransmission(draw(reductions), draw(offsets),
                                  joint_reduction=draw(reductions))
    cls = DifferentialTransmission if kind == 'differential' else FourBarLinkageTransmission
    return cls((draw(reductions), draw(reductions)), (draw(reductions), draw(reductions)),
               (draw(offsets), draw(offsets)))


def _with_offsets(t, offsets):
    if isinstance(t, SimpleTransmission):
        return SimpleTransmission(t.actuator_reductions[0], offsets[0],
                                  joint_reduction=t.joint_reductions[0])
    return type(t)(t.actuator_reductions, t.joint_reductions, offsets)


def _vector(draw, n):
    return np.array([draw(values) for _ in range(n)])


def _gain(t):
    """Return a bound on how much the maps amplify a value (and its rounding error)."""
    return 2.0 * max(map(abs, t.actuator_reductions)) * max(map(abs, t.joint_reductions))


def _close(actual, expected, t, intermediate):
    """Equal up to rounding of the largest intermediate term, amplified by the gain."""
    scale = max(1.0, float(np.max(np.abs(expected))),
                _gain(t) * (float(np.max(np.abs(intermediate))) + max(map(abs, t.joint_offsets))))
    np.testing.assert_allclose(actual, expected, rtol=ROUND_TRIP_RTOL,
                               atol=ROUND_TRIP_ATOL * scale)


@given(transmissions(), st.data())
def test_round_trip_actuator_joint_actuator(t, data):
    for interface in ('position', 'velocity', 'effort'):
        a = _vector(data.draw, t.num_actuators)
        j = np.full(t.num_joints, SENTINEL)
        j[:] = t.actuator_to_joint(interface, a)
        back = np.full(t.num_actuators, SENTINEL)
        back[:] = t.joint_to_actuator(interface, j)
        assert not np.any(back == SENTINEL)
        _close(back, a, t, j)


@given(transmissions(), st.data())
def test_round_trip_joint_actuator_joint(t, data):
    for interface in ('absolute_position', 'velocity', 'force'):
        j = _vector(data.draw, t.num_joints)
        a = np.full(t.num_actuators, SENTINEL)
        a[:] = t.joint_to_actuator(interface, j)
        back = t.actuator_to_joint(interface, a)
        _close(back, j, t, a)


@given(transmissions(), st.data())
def test_power_is_conserved(t, data):
    v_a = _vector(data.draw, t.num_actuators)
    tau_a = _vector(data.draw, t.num_actuators)
    p_a = float(tau_a @ v_a)
    p_j = float(t.actuator_to_joint('effort', tau_a) @ t.actuator_to_joint('velocity', v_a))
    scale = max(1.0, float(np.abs(tau_a).max() * np.abs(v_a).max()) * t.num_actuators)
    assert abs(p_j - p_a) <= POWER_RTOL * scale * 100
    # and the other way round
    v_j = _vector(data.draw, t.num_joints)
    tau_j = _vector(data.draw, t.num_joints)
    p_j = float(tau_j @ v_j)
    p_a = float(t.joint_to_actuator('effort', tau_j) @ t.joint_to_actuator('velocity', v_j))
    scale = max(1.0, float(np.abs(tau_j).max() * np.abs(v_j).max()) * t.num_joints)
    assert abs(p_j - p_a) <= POWER_RTOL * scale * 100


@given(transmissions(), st.data())
def test_offsets_affect_position_only(t, data):
    shift = np.array([data.draw(offsets) for _ in range(t.num_joints)])
    moved = _with_offsets(t, tuple(o + s for o, s in zip(t.joint_offsets, shift)))
    a = _vector(data.draw, t.num_actuators)
    for interface in ('velocity', 'effort', 'torque', 'force'):
        assert np.array_equal(moved.actuator_to_joint(interface, a),
                              t.actuator_to_joint(interface, a))
        assert np.array_equal(moved.joint_to_actuator(interface, a[:t.num_joints]),
                              t.joint_to_actuator(interface, a[:t.num_joints]))
    delta = moved.actuator_to_joint('position', a) - t.actuator_to_joint('position', a)
    np.testing.assert_allclose(delta, np.array(moved.joint_offsets) - np.array(t.joint_offsets),
                               atol=1e-12)


@given(transmissions(), st.integers(1, 5), st.integers(1, 4), st.data())
def test_batch_equals_loop(t, n1, n2, data):
    batch = np.array([[_vector(data.draw, t.num_actuators) for _ in range(n2)]
                      for _ in range(n1)])
    out = t.actuator_to_joint('position', batch)
    assert out.shape == (n1, n2, t.num_joints)
    for i in range(n1):
        for k in range(n2):
            assert np.array_equal(out[i, k], t.actuator_to_joint('position', batch[i, k]))
