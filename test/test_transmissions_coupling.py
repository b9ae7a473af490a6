"""
CouplingTransmission: the dedicated types written as matrices, random matrices, refusals.

The matrices of the simple, differential and four-bar types are written here from the
formulas in their docstrings (x_j = M x_a), not taken from the code under test.
"""

import numpy as np
import pytest

from tolerances import COMPILED_ATOL, COMPILED_RTOL, POWER_RTOL, ROUND_TRIP_ATOL, \
    ROUND_TRIP_RTOL
from transmission_bridge.transmissions import (
    ConfigError, CouplingTransmission, DifferentialTransmission, FourBarLinkageTransmission,
    load_transmissions, MAX_CONDITION, parameters, SimpleTransmission)

INTERFACES = ('position', 'velocity', 'effort', 'absolute_position', 'torque')


def _reductions(rng, size):
    """Non-zero reductions of both signs, magnitudes 0.1 to 100."""
    return tuple(rng.choice([-1.0, 1.0]) * 10.0 ** rng.uniform(-1, 2) for _ in range(size))


def _dedicated_and_matrix(kind, rng):
    if kind == 'simple':
        (na,), (nj,), off = _reductions(rng, 1), _reductions(rng, 1), (rng.normal(),)
        return SimpleTransmission(na, off[0], joint_reduction=nj), [[1 / (na * nj)]], off
    (na1, na2), (nj1, nj2) = _reductions(rng, 2), _reductions(rng, 2)
    off = tuple(rng.normal(size=2))
    if kind == 'differential':
        # x_j1 = (x_a1/n_a1 + x_a2/n_a2) / (2 n_j1), x_j2 = (x_a1/n_a1 - x_a2/n_a2) / (2 n_j2)
        matrix = [[1 / (2 * nj1 * na1), 1 / (2 * nj1 * na2)],
                  [1 / (2 * nj2 * na1), -1 / (2 * nj2 * na2)]]
        return DifferentialTransmission((na1, na2), (nj1, nj2), off), matrix, off
    # four-bar: x_j1 = x_a1 / (n_j1 n_a1), x_j2 = (x_a2 / n_a2 - x_a1 / (n_j1 n_a1)) / n_j2
    matrix = [[1 / (nj1 * na1), 0.0], [-1 / (nj1 * na1 * nj2), 1 / (na2 * nj2)]]
    return FourBarLinkageTransmission((na1, na2), (nj1, nj2), off), matrix, off


@pytest.mark.parametrize('kind', ['simple', 'differential', 'four_bar_linkage'])
@pytest.mark.parametrize('seed', range(5))
def test_dedicated_types_written_as_couplings_give_their_results(kind, seed):
    rng = np.random.default_rng(seed)
    dedicated, matrix, off = _dedicated_and_matrix(kind, rng)
    coupling = CouplingTransmission(matrix, off)
    n = dedicated.num_joints
    values = rng.normal(size=(4, 3, n)) * 10
    for interface in INTERFACES:
        for direction in ('actuator_to_joint', 'joint_to_actuator'):
            expected = getattr(dedicated, direction)(interface, values)
            got = getattr(coupling, direction)(interface, values)
            np.testing.assert_allclose(got, expected, rtol=ROUND_TRIP_RTOL,
                                       atol=ROUND_TRIP_ATOL * np.abs(expected).max(),
                                       err_msg=f'{kind} {direction} {interface}')


def _well_conditioned(rng, n):
    return rng.normal(size=(n, n)) + n * np.eye(n) * rng.choice([-1.0, 1.0], size=n)


@pytest.mark.parametrize('n', [1, 2, 3, 5, 8])
def test_random_couplings_conserve_power_and_invert_exactly(n):
    rng = np.random.default_rng(100 + n)
    m = _well_conditioned(rng, n)
    t = CouplingTransmission(m.tolist(), rng.normal(size=n))
    assert (t.num_actuators, t.num_joints) == (n, n)
    v_a, tau_a = rng.normal(size=(2, 6, n))            # batch dimensions kept
    v_j, tau_j = t.actuator_to_joint('velocity', v_a), t.actuator_to_joint('effort', tau_a)
    np.testing.assert_allclose(v_j, v_a @ m.T, rtol=1e-13)        # x_j = M x_a, by numpy
    np.testing.assert_allclose(np.einsum('...i,...i', tau_j, v_j),
                               np.einsum('...i,...i', tau_a, v_a), rtol=POWER_RTOL,
                               atol=POWER_RTOL * np.abs(tau_a).max() * np.abs(v_a).max() * n)
    x_a = rng.normal(size=(2, 3, n))
    for interface in ('position', 'velocity', 'effort'):
        back = t.joint_to_actuator(interface, t.actuator_to_joint(interface, x_a))
        np.testing.assert_allclose(back, x_a, rtol=ROUND_TRIP_RTOL, atol=ROUND_TRIP_ATOL)


def test_a_three_by_three_wrist_by_hand():
    # Joints a, b, c; motors 1, 2, 3: a = m1, b = m1 + m2, c = m2 - m3 (rows = joints).
    t = CouplingTransmission([[1, 0, 0], [1, 1, 0], [0, 1, -1]], joint_offsets=[0.5, 0, 0])
    assert t.actuator_to_joint('position', [1.0, 2.0, 3.0]).tolist() == [1.5, 3.0, -1.0]
    assert t.joint_to_actuator('position', [1.5, 3.0, -1.0]).tolist() == [1.0, 2.0, 3.0]
    # Efforts: tau_a = M^T tau_j: tau_j = (1, 0, 0) needs motor 1 only.
    assert t.joint_to_actuator('effort', [1.0, 0.0, 0.0]).tolist() == [1.0, 0.0, 0.0]
    # tau_j = (0, 1, 0) needs m1 = 1, m2 = 1: m1 feels b's torque through the coupling.
    assert t.joint_to_actuator('effort', [0.0, 1.0, 0.0]).tolist() == [1.0, 1.0, 0.0]


@pytest.mark.parametrize('matrix, words', [
    ([[1, 2], [2, 4]], 'singular'),
    ([[1, 0], [0, 1 / (MAX_CONDITION * 1.5)]], 'ill-conditioned'),
    ([[1, 2, 3], [4, 5, 6]], 'square'),
    ([[1, 2], [3]], 'square'),
    ([], 'square'),
    ([[1, float('nan')], [0, 1]], 'matrix[0][1] must be finite'),
    ([[1, float('inf')], [0, 1]], 'matrix[0][1] must be finite'),
    ([[1, 'x'], [0, 1]], 'matrix[0][1] must be a number'),
    (3.0, 'list of rows'),
])
def test_bad_matrices_are_refused_with_the_reason(matrix, words):
    with pytest.raises(ConfigError) as info:
        CouplingTransmission(matrix)
    assert words in str(info.value)


def test_condition_bound_is_the_documented_one():
    CouplingTransmission([[1, 0], [0, 1 / (MAX_CONDITION * 0.9)]])      # accepted


def _yaml(**coupling):
    spec = {'name': 'wrist', 'type': 'coupling', 'matrix': [[1, 0, 0], [1, 1, 0], [0, 1, -1]],
            'actuators': [{'name': 'm1'}, {'name': 'm2'}, {'name': 'm3'}],
            'joints': [{'name': 'a'}, {'name': 'b'}, {'name': 'c'}]}
    spec.update(coupling)
    return {'transmissions': [spec, {
        'name': 'elbow', 'type': 'simple', 'actuators': [{'name': 'm4',
                                                          'mechanical_reduction': 10.0}],
        'joints': [{'name': 'd'}]}]}


def test_coupling_in_a_set_maps_as_alone_and_keeps_nan_inside():
    ts = load_transmissions(_yaml())
    alone = CouplingTransmission([[1, 0, 0], [1, 1, 0], [0, 1, -1]])
    rng = np.random.default_rng(7)
    a = rng.normal(size=(5, 4))
    for interface in ('position', 'velocity', 'effort'):
        got = ts.actuator_to_joint(interface, a)
        np.testing.assert_allclose(got[:, :3], alone.actuator_to_joint(interface, a[:, :3]),
                                   rtol=COMPILED_RTOL, atol=COMPILED_ATOL)
        back = ts.joint_to_actuator(interface, got)
        np.testing.assert_allclose(back, a, rtol=ROUND_TRIP_RTOL, atol=ROUND_TRIP_ATOL)
    a[0, 1] = np.nan                                    # motor 2 unknown
    joints = ts.actuator_to_joint('position', a[0])
    assert np.isnan(joints[1]) and np.isnan(joints[2]) and not np.isnan(joints[0])
    assert joints[3] == a[0, 3] / 10.0                  # the elbow never sees it
    state = ts.joint_state(np.stack([a, a, a], axis=-2))      # the bridge's one-pass map
    np.testing.assert_array_equal(state[:, 0], ts.actuator_to_joint('position', a))


@pytest.mark.parametrize('change, words', [
    ({'matrix': [[1, 0], [0, 1]]}, 'takes 2 actuators, got 3'),
    ({'matrix': None}, 'needs a matrix'),
    ({'joints': [{'name': 'a', 'mechanical_reduction': 2.0}, {'name': 'b'}, {'name': 'c'}]},
     "'a' has mechanical_reduction 2.0; a coupling takes its ratios in the matrix"),
    ({'type': 'differential', 'actuators': [{'name': 'm1'}, {'name': 'm2'}],
      'joints': [{'name': 'a'}, {'name': 'b'}]}, 'matrix is only for type coupling'),
    ({'matrix': [[1, 0, 0], [0, 1, 0], [1, 0, 0]]}, 'singular'),
])
def test_yaml_coupling_refusals_name_the_transmission(change, words):
    data = _yaml(**change)
    if change.get('matrix', 0) is None:
        del data['transmissions'][0]['matrix']
    with pytest.raises(ConfigError, match='wrist') as info:
        load_transmissions(data)
    assert words in str(info.value)


def test_matrix_parameter_changes_atomically_and_refuses_singular():
    ts = load_transmissions(_yaml())
    name = parameters.matrix_parameter('wrist')
    values = parameters.parameter_values(ts)
    assert values[name] == [1, 0, 0, 1, 1, 0, 0, 1, -1]
    assert 'joints.a.mechanical_reduction' not in values    # the matrix holds the ratios
    assert 'joints.d.mechanical_reduction' in values
    new = parameters.apply_parameters(ts, {name: [2, 0, 0, 1, 1, 0, 0, 1, -1],
                                           'joints.a.offset': 0.25})
    assert new.actuator_to_joint('position', [1.0, 0, 0, 0])[0] == 2.25
    with pytest.raises(ConfigError, match='singular'):
        parameters.apply_parameters(ts, {name: [1, 0, 0, 1, 0, 0, 0, 1, -1],
                                         'joints.a.offset': 0.25})
    with pytest.raises(ConfigError, match='N\\*N'):
        parameters.apply_parameters(ts, {name: [1, 0, 0]})
    assert ts.joint('a').offset == 0.0 and ts.specs[0].matrix[0] == (1.0, 0.0, 0.0)


URDF = """<robot name="r">
  <link name="base"/><link name="l1"/><link name="l2"/><link name="l3"/>
  <joint name="a" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" velocity="2" effort="30"/></joint>
  <joint name="b" type="continuous"><parent link="l1"/><child link="l2"/><axis xyz="0 1 0"/>
    <limit velocity="3" effort="0"/></joint>
  <joint name="c" type="revolute"><parent link="l2"/><child link="l3"/><axis xyz="1 0 0"/>
    <limit lower="0.5" upper="-0.5" velocity="4" effort="20"/></joint>
  <transmission name="wrist">
    <plugin>transmission_bridge/CouplingTransmission</plugin>
    <actuator name="m1"/><actuator name="m2"/><actuator name="m3"/>
    <joint name="a"><offset>0.5</offset></joint><joint name="b"/><joint name="c"/>
    <matrix>1 0 0; 1 1 0; 0 1 -1</matrix>
  </transmission>
</robot>"""


def test_urdf_coupling_and_the_joint_limits_of_the_robot():
    ts = load_transmissions(URDF)
    assert ts.specs[0].matrix == ((1, 0, 0), (1, 1, 0), (0, 1, -1))
    assert ts.actuator_to_joint('position', [1.0, 2.0, 3.0]).tolist() == [1.5, 3.0, -1.0]
    a, b, c = (ts.joint(n) for n in 'abc')
    assert (a.lower_limit, a.upper_limit, a.velocity_limit, a.effort_limit) == (-1, 1, 2, 30)
    assert (b.lower_limit, b.upper_limit, b.velocity_limit, b.effort_limit) == (
        -np.inf, np.inf, 3, np.inf)                      # continuous; effort="0": none
    assert (c.lower_limit, c.upper_limit, c.effort_limit) == (-np.inf, np.inf, 20)
    notes = ' '.join(ts.warnings)
    assert "joint 'b': <limit effort=\"0\"> is not positive" in notes
    assert "joint 'c': <limit> lower 0.5 is not below upper -0.5" in notes


@pytest.mark.parametrize('old, new, words', [
    ('1 0 0; 1 1 0; 0 1 -1', '1 0 0; 1 1 0', 'must hold 3x3 = 9 numbers'),
    ('1 0 0; 1 1 0; 0 1 -1', '1 0 0; 1 1 0; 0 1 ${k}', 'must be a number'),
    ('1 0 0; 1 1 0; 0 1 -1', '1 0 0; 1 1 0; 1 0 0', 'singular'),
])
def test_urdf_coupling_refusals(old, new, words):
    with pytest.raises(ConfigError, match="transmission 'wrist'") as info:
        load_transmissions(URDF.replace(old, new))
    assert words in str(info.value)


@pytest.mark.parametrize('source', ['scara_transmissions.yaml',
                                    'example_robot_transmissions.yaml',
                                    'three_motor_wrist_transmissions.yaml'])
def test_the_bridges_one_state_writer_gives_the_batch_maps_bits(source):
    # Sets of simple transmissions only (one term each), of two-term and of three-term
    # types: the per-message writer the bridge binds equals the batch map bit for bit.
    from conftest import CONFIG
    ts = load_transmissions(CONFIG / source)
    rng = np.random.default_rng(5)
    state = rng.normal(size=(3, ts.num_actuators)) * 10
    flat = np.append(state.reshape(-1), 1.0)
    out = np.empty((3, ts.num_joints))
    ts.state_map().writer(out)(flat)
    np.testing.assert_array_equal(out, ts.joint_state(state))
