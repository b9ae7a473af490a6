"""DH models against DH matrices written out by hand (closed forms, not our spatial helpers)."""

import numpy as np
import pytest
from transmission_bridge.kinematics import load_model, ModelError
from transmission_bridge.kinematics.loader import dh_table

# MATLAB's Puma 560 example, rows [a alpha d theta].
PUMA = np.array([[0, np.pi / 2, 0, 0], [0.4318, 0, 0, 0], [0.0203, -np.pi / 2, 0.15005, 0],
                 [0, np.pi / 2, 0.4318, 0], [0, -np.pi / 2, 0, 0], [0, 0, 0, 0]])
POSE_ATOL = 1e-14


def standard(a, alpha, d, theta):
    ct, st, ca, sa = np.cos(theta), np.sin(theta), np.cos(alpha), np.sin(alpha)
    return np.array([[ct, -st * ca, st * sa, a * ct], [st, ct * ca, -ct * sa, a * st],
                     [0, sa, ca, d], [0, 0, 0, 1]])


def modified(a, alpha, d, theta):
    ct, st, ca, sa = np.cos(theta), np.sin(theta), np.cos(alpha), np.sin(alpha)
    return np.array([[ct, -st, 0, a], [st * ca, ct * ca, -sa, -d * sa],
                     [st * sa, ct * sa, ca, d * ca], [0, 0, 0, 1]])


@pytest.mark.parametrize('convention,matrix', [('standard', standard), ('modified', modified)])
def test_puma560_against_hand_products(convention, matrix):
    model = dh_table(PUMA, convention)
    rng = np.random.default_rng(560)
    for q in rng.uniform(-np.pi, np.pi, size=(25, 6)):
        poses = model.forward_kinematics(q)
        X = np.eye(4)
        for i, (a, alpha, d, theta) in enumerate(PUMA):
            X = X @ matrix(a, alpha, d, theta + q[i])
            np.testing.assert_allclose(poses[f'link{i + 1}'], X, rtol=0, atol=POSE_ATOL)


def test_puma560_home_pose_by_hand():
    # All zero, standard DH: alpha1 = pi/2 turns z1 into -y0, so d3 runs along -y0;
    # a2 + a3 run along x0 and alpha3 = -pi/2 turns z3 back to z0, so d4 runs along z0.
    X = dh_table(PUMA).forward_kinematics(np.zeros(6))['link6']
    np.testing.assert_allclose(X[:3, 3], [0.4318 + 0.0203, -0.15005, 0.4318], atol=1e-15)


@pytest.mark.parametrize('convention,matrix', [('standard', standard), ('modified', modified)])
def test_prismatic_rows_add_q_to_d(convention, matrix):
    rows = [[0.1, 0.3, 0.2, 0.4], [0.2, -0.5, 0.1, 0.0], [0.05, 0.0, 0.3, 0.2]]
    model = dh_table(rows, convention, types=['revolute', 'prismatic', 'revolute'])
    q = np.array([0.3, 0.25, -0.7])
    X = np.eye(4)
    for (a, alpha, d, theta), qi, kind in zip(rows, q, ['r', 'p', 'r']):
        X = X @ (matrix(a, alpha, d + qi, theta) if kind == 'p' else
                 matrix(a, alpha, d, theta + qi))
    np.testing.assert_allclose(model.forward_kinematics(q)['link3'], X, atol=POSE_ATOL)


def test_dh_yaml_with_inertials_and_errors():
    model = load_model({'gravity': [0, -9.81, 0], 'dh': {'convention': 'standard', 'rows': [
        {'name': 'j1', 'link': 'l1', 'a': 0.5, 'alpha': 0.0, 'd': 0.0, 'theta': 0.0,
         'inertial': {'mass': 2.0, 'com': [-0.25, 0, 0]}}]}})
    # DH frame 1 sits at the link's end; its COM is halfway back, at 0.25 (cos q, sin q, 0).
    # V = -m g . p = 2 * 9.81 * 0.25 sin q, so tau_g = -dV/dq = -4.905 cos q.
    for q in (0.0, 0.7):
        tau = model.gravity_generalized_forces([q])
        assert tau[0] == pytest.approx(-4.905 * np.cos(q), rel=1e-14)
    assert model.body_names == ('l1',)
    with pytest.raises(ModelError, match=r"dh.rows\[0\]: unknown key 'offset'"):
        load_model({'dh': {'rows': [{'name': 'j1', 'link': 'l1', 'offset': 1.0}]}})
    with pytest.raises(ModelError, match=r"dh.convention must be 'standard' or 'modified'"):
        load_model({'dh': {'convention': 'craig', 'rows': []}})


def test_joint_set_fixed_transform_like_matlab():
    from transmission_bridge.kinematics import Body, Model, PrismaticJoint, RevoluteJoint
    row = [0.3, 0.7, 0.2, 0.1]
    for kind, matrix in (('dh', standard), ('mdh', modified)):
        joint = RevoluteJoint('j', axis=(1, 0, 0)).with_fixed_transform(row, kind)
        np.testing.assert_array_equal(joint.axis, [0, 0, 1])
        model = Model([Body('b', joint)])
        np.testing.assert_allclose(model.forward_kinematics([0.4])['b'],
                                   matrix(0.3, 0.7, 0.2, 0.1 + 0.4), atol=POSE_ATOL)
        slide = PrismaticJoint('p').with_fixed_transform(row, kind)
        np.testing.assert_allclose(Model([Body('b', slide)]).forward_kinematics([0.25])['b'],
                                   matrix(0.3, 0.7, 0.2 + 0.25, 0.1), atol=POSE_ATOL)
    moved = RevoluteJoint('j').with_fixed_transform(([1, 2, 3], [0, 0, np.pi]), 'xyz_rpy')
    np.testing.assert_allclose(moved.origin[:3, 3], [1, 2, 3])
    with pytest.raises(ModelError, match="kind must be 'matrix'"):
        RevoluteJoint('j').with_fixed_transform(row, 'craig')
