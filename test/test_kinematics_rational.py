"""Rational forward kinematics (Drake's RationalForwardKinematics semantics)."""

from kinematics_models import random_model
import numpy as np
import pytest
from transmission_bridge.kinematics import ModelError, RationalForwardKinematics


@pytest.mark.parametrize('seed', range(4))
def test_rational_pose_equals_forward_kinematics(seed):
    model = random_model(seed, num_bodies=4, kinds=('revolute', 'prismatic', 'fixed'))
    rfk = RationalForwardKinematics(model)
    rng = np.random.default_rng(seed)
    q_star = rng.uniform(-1, 1, model.num_positions)
    q = rng.uniform(-2, 2, (5, model.num_positions))
    s = rfk.compute_s_value(q, q_star)
    fk = model.forward_kinematics(q)
    for body in model.body_names:
        np.testing.assert_allclose(rfk.body_pose(body, q_star).evaluate(s), fk[body],
                                   rtol=0, atol=1e-12)


def test_denominator_is_product_of_one_plus_s_squared():
    model = random_model(2, num_bodies=3, kinds=('revolute',), tree=False)
    pose = RationalForwardKinematics(model).body_pose(model.body_names[-1], np.zeros(3))
    assert pose.denominator.degree() == 6
    s = np.array([0.3, -0.2, 1.5])
    assert pose.denominator.evaluate(s) == pytest.approx(np.prod(1 + s ** 2))


def test_s_and_q_conversions_match_drake():
    model = random_model(3, num_bodies=3, kinds=('revolute', 'prismatic'), tree=False)
    rfk = RationalForwardKinematics(model)
    kinds = [j.type_name for j in model.joints]
    q_star = np.array([0.2, -0.1, 0.3])
    q = np.array([0.7, 0.4, -0.2])
    s = rfk.compute_s_value(q, q_star)
    for k, kind in enumerate(kinds):
        expected = np.tan((q[k] - q_star[k]) / 2) if kind == 'revolute' else q[k] - q_star[k]
        assert s[k] == pytest.approx(expected, rel=1e-15)
    np.testing.assert_allclose(rfk.compute_q_value(s, q_star), q, atol=1e-15)
    # Drake's wrap-around: |q - q*| >= pi gives +-inf for revolute joints only.
    far = q_star + np.array([1.1 * np.pi, -1.2 * np.pi, 4.0])
    wrapped = rfk.compute_s_value(far, q_star, angles_wrap_to_inf=True)
    plain = rfk.compute_s_value(far, q_star)
    for k, kind in enumerate(kinds):
        if kind == 'revolute':
            assert wrapped[k] == (np.inf if far[k] > q_star[k] else -np.inf)
            assert np.isfinite(plain[k])
        else:
            assert wrapped[k] == plain[k] == pytest.approx(far[k] - q_star[k])
    near = rfk.compute_s_value(q, q_star, angles_wrap_to_inf=True)
    np.testing.assert_array_equal(near, s)


def test_screw_joints_are_refused():
    model = random_model(5, num_bodies=3, kinds=('revolute', 'screw'), tree=False)
    if not any(j.type_name == 'screw' for j in model.joints):
        pytest.fail('the seed must produce a screw joint')
    with pytest.raises(ModelError, match='screw joints are not supported by rational'):
        RationalForwardKinematics(model)
