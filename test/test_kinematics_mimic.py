"""
Mimic joints: q_m = multiplier * q_driver + offset, chains resolved, forces folded onto drivers.

Each law is checked against the same robot with every mimic joint made independent (the
"unrolled" model), evaluated at the configuration the mimic rules give, worked out here
from the multipliers and offsets, not by the code under test.
"""

from kinematics_models import random_model
import numpy as np
import pytest
from tolerances import FD_ATOL, PEER_ATOL
from transmission_bridge.kinematics import Body, load_model, Mimic, Model, ModelError

# Mimic rules laid over random_model(seed): mimic joint -> (driver, multiplier, offset).
# j3 mimics j1 and j5 mimics j3: a chain, resolved to j1.
RULES = {'j3': ('j1', 0.5, 0.1), 'j5': ('j3', -2.0, 0.3)}


def _models(seed=5):
    """Return ``(mimic model, unrolled model)``: the same bodies, with and without the rules."""
    unrolled = random_model(seed, num_bodies=8, kinds=('revolute', 'prismatic', 'screw'))
    bodies = []
    for b in unrolled.bodies:
        rule = RULES.get(b.joint.name)
        joint = b.joint if rule is None else b.joint.replace(mimic=Mimic(*rule))
        bodies.append(Body(b.name, joint, b.inertial, b.parent))
    return Model(bodies, 'mimic', unrolled.gravity), unrolled


def _unrolled_q(model, unrolled, q):
    """Return the unrolled model's q: independent values copied, mimic ones by the rules."""
    values = dict(zip(model.joint_names, q))
    for name in ('j3', 'j5'):                # in chain order
        driver, multiplier, offset = RULES[name]
        values[name] = multiplier * values[driver] + offset
    return np.array([values[n] for n in unrolled.joint_names])


def _fold(model, unrolled):
    """Return A with q_unrolled = A q + c: d q_unrolled / d q, from the rules by hand."""
    A = np.zeros((unrolled.num_positions, model.num_positions))
    cols = {n: k for k, n in enumerate(model.joint_names)}
    rows = {n: i for i, n in enumerate(unrolled.joint_names)}
    for n, k in cols.items():
        A[rows[n], k] = 1.0
    A[rows['j3'], cols['j1']] = 0.5
    A[rows['j5'], cols['j1']] = -2.0 * 0.5
    return A


def test_independent_joints_and_resolved_rules():
    model, unrolled = _models()
    assert model.joint_names == tuple(n for n in unrolled.joint_names if n not in RULES)
    assert model.movable_joint_names == unrolled.joint_names
    assert model.mimic_joints['j3'] == ('j1', 0.5, 0.1)
    # q5 = -2 (0.5 q1 + 0.1) + 0.3 = -q1 + 0.1
    driver, multiplier, offset = model.mimic_joints['j5']
    assert (driver, multiplier) == ('j1', -1.0) and offset == pytest.approx(0.1, abs=1e-15)


def test_poses_gravity_energy_jacobian_equal_the_unrolled_model():
    model, unrolled = _models()
    A = _fold(model, unrolled)
    rng = np.random.default_rng(11)
    qs = rng.uniform(-2, 2, (5, model.num_positions))
    batch_poses, batch_tau, batch_energy = model.poses_gravity_and_energy(qs)
    for k, q in enumerate(qs):
        qu = _unrolled_q(model, unrolled, q)
        np.testing.assert_allclose(model.movable_joint_positions(q), qu, atol=1e-15)
        np.testing.assert_allclose(model.body_poses(q), unrolled.body_poses(qu), atol=1e-12)
        # Chain rule: tau_q = A^T tau_unrolled.
        tau = model.gravity_generalized_forces(q)
        np.testing.assert_allclose(tau, A.T @ unrolled.gravity_generalized_forces(qu),
                                   atol=1e-12)
        assert model.potential_energy(q) == pytest.approx(unrolled.potential_energy(qu),
                                                          abs=1e-12)
        np.testing.assert_allclose(model.jacobian(q, 'b7', (0.1, 0.2, 0.3)),
                                   unrolled.jacobian(qu, 'b7', (0.1, 0.2, 0.3)) @ A,
                                   atol=1e-12)
        np.testing.assert_allclose(batch_poses[k], model.body_poses(q), atol=1e-14)
        np.testing.assert_allclose(batch_tau[k], tau, atol=1e-12)
        assert batch_energy[k] == pytest.approx(model.potential_energy(q), abs=1e-12)


def test_gravity_is_minus_the_gradient_of_energy_with_mimics():
    model, _ = _models()
    q = np.random.default_rng(2).uniform(-2, 2, model.num_positions)
    h = 1e-6
    grad = np.array([(model.potential_energy(q + h * e) - model.potential_energy(q - h * e))
                     / (2 * h) for e in np.eye(model.num_positions)])
    np.testing.assert_allclose(model.gravity_generalized_forces(q), -grad, atol=FD_ATOL)


def test_damping_of_a_mimic_joint_folds_onto_its_driver():
    model, unrolled = _models()
    A = _fold(model, unrolled)
    v = np.random.default_rng(3).normal(size=model.num_positions)
    b = np.array([j.damping for j in unrolled.joints])
    np.testing.assert_allclose(model.damping_forces(v), A.T @ (-b * (A @ v)), atol=1e-12)
    # The driver's own damping is what its parameter shows; the folded one is larger.
    j1 = model.joint_names.index('j1')
    assert model.damping[j1] == unrolled.joint('j1').damping
    assert model.effective_damping[j1] == pytest.approx(
        b[1] + 0.25 * b[3] + 1.0 * b[5], rel=1e-14)


def _yaml(mimic_of_j2):
    return {'bodies': [
        {'name': 'a', 'joint': {'name': 'j1', 'type': 'revolute', 'axis': [0, 0, 1]}},
        {'name': 'b', 'parent': 'a', 'joint': {'name': 'j2', 'type': 'revolute',
                                               'axis': [0, 1, 0], 'mimic': mimic_of_j2}},
        {'name': 'c', 'parent': 'b', 'joint': {'name': 'j3', 'type': 'fixed'}},
        {'name': 'd', 'parent': 'c', 'joint': {'name': 'j4', 'type': 'prismatic',
                                               'axis': [1, 0, 0],
                                               'mimic': {'joint': 'j2', 'offset': 0.2}}}]}


def test_mimic_errors_name_the_joints():
    with pytest.raises(ModelError, match="joint 'j2': mimics 'j3', a fixed joint"):
        load_model(_yaml({'joint': 'j3'}))
    with pytest.raises(ModelError, match="joint 'j2': mimics unknown joint 'j9'"):
        load_model(_yaml({'joint': 'j9'}))
    with pytest.raises(ModelError, match='mimic joints form a cycle: j2 -> j4 -> j2'):
        load_model(_yaml({'joint': 'j4'}))
    model = load_model(_yaml({'joint': 'j1', 'multiplier': 2.0}))
    assert model.joint_names == ('j1',)
    np.testing.assert_allclose(model.movable_joint_positions([0.5]), [0.5, 1.0, 1.2])


MIMIC_URDF = """<?xml version="1.0"?>
<robot name="gripper">
  <link name="base"/>
  <link name="arm"><inertial><origin xyz="0.3 0 0.1"/><mass value="2"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="left"><inertial><origin xyz="0 0.02 0.05"/><mass value="0.4"/>
    <inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="right"><inertial><origin xyz="0.01 -0.02 0.05"/><mass value="0.3"/>
    <inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="tip"><inertial><origin xyz="0 0 0.02"/><mass value="0.2"/>
    <inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 0.3" rpy="0.2 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="10" velocity="1"/></joint>
  <joint name="finger_left" type="prismatic"><parent link="arm"/><child link="left"/>
    <origin xyz="0.5 0 0" rpy="0 0.3 0"/><axis xyz="0 1 0"/>
    <limit lower="0" upper="0.04" effort="10" velocity="1"/></joint>
  <joint name="finger_right" type="prismatic"><parent link="arm"/><child link="right"/>
    <origin xyz="0.5 0 0"/><axis xyz="0 -1 0"/>
    <limit lower="0" upper="0.04" effort="10" velocity="1"/>
    <mimic joint="finger_left" multiplier="0.5" offset="0.01"/></joint>
  <joint name="tip_joint" type="revolute"><parent link="right"/><child link="tip"/>
    <origin xyz="0 0 0.1"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/>
    <mimic joint="shoulder" multiplier="-1.5" offset="0.2"/></joint>
</robot>
"""


def test_urdf_mimic_agrees_with_pinocchio():
    pin = pytest.importorskip('pinocchio', reason='Pinocchio is not installed (pip install pin)')
    from robot_corpus import pinocchio_gravity, pinocchio_q
    model = load_model(MIMIC_URDF)
    assert model.joint_names == ('shoulder', 'finger_left') and model.root_frame == 'base'
    pm = pin.buildModelFromXML(MIMIC_URDF, mimic=True)
    data = pm.createData()
    for q in np.random.default_rng(4).uniform([-2, 0], [2, 0.04], (6, 2)):
        qp = pinocchio_q(pin, pm, model.joint_names, q)
        np.testing.assert_allclose(model.gravity_generalized_forces(q),
                                   -pinocchio_gravity(pin, pm, model.joint_names, qp),
                                   rtol=0, atol=PEER_ATOL)
        pin.framesForwardKinematics(pm, data, qp)
        for name, X in model.forward_kinematics(q).items():
            np.testing.assert_allclose(X, data.oMf[pm.getFrameId(name, pin.BODY)].homogeneous,
                                       rtol=0, atol=PEER_ATOL)


def test_rational_forward_kinematics_refuses_mimic_joints():
    from transmission_bridge.kinematics import RationalForwardKinematics
    with pytest.raises(ModelError, match="joint 'j2': mimic joints are not supported by "
                                         'rational forward kinematics'):
        RationalForwardKinematics(load_model(_yaml({'joint': 'j1'})))
