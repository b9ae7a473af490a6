"""
The inverse dynamics as a linear map of the bodies' inertial parameters, against Pinocchio.

Pinocchio's ``computeJointTorqueRegressor`` (its ``Inertia.toDynamicParameters`` order: m,
m c, the inertia about the body's origin) is the oracle, column by column, on
example-robot-data's arms; on random trees with screw, prismatic and fixed joints (and a
mimic arm) ``Y pi`` must be the model's Newton-Euler.
"""

from kinematics_models import random_model, random_q
import numpy as np
import pytest
from robot_corpus import robot
from transmission_bridge.kinematics import kernels as compiled
from transmission_bridge.kinematics import load_model
from transmission_bridge.kinematics import regressor as reg

SEED = 20
SAMPLES = 25
TOL = 1e-9                  # relative to the largest torque of the batch


def _motion(model, rng, n=SAMPLES):
    q = random_q(model, rng, n)
    return q, rng.normal(size=q.shape), rng.normal(size=q.shape)


KERNELS = ['numpy', pytest.param('numba', marks=pytest.mark.skipif(
    not compiled.AVAILABLE, reason=f'numba: {compiled.REASON}'))]


@pytest.mark.parametrize('kernels', KERNELS)
@pytest.mark.parametrize('relative', ['ur_description/urdf/ur5_robot.urdf',
                                      'talos_data/robots/talos_left_arm.urdf',
                                      'xarm_description/urdf/xarm7.urdf'])
def test_each_body_s_columns_are_pinocchio_s(relative, kernels):
    pin = pytest.importorskip('pinocchio')
    path = robot(relative)
    if path is None or not path.is_file():
        pytest.skip('example-robot-data is not installed')
    model = load_model(path)
    pmodel = pin.buildModelFromXML(path.read_text())
    pdata = pmodel.createData()
    assert pmodel.nq == model.num_positions
    # Pinocchio merges a joint's child link and the links fixed to it; a link whose frame is
    # its joint's (every URDF link is) and that has nothing fixed to it with mass has the
    # same ten columns.
    groups = reg.moving_bodies(model)
    alone = [b for b, members in groups.items()
             if all(model.body(m).inertial.mass == 0 for m in members if m != b)]
    rng = np.random.default_rng(SEED)
    q, v, a = _motion(model, rng)
    Y = reg.regressor(model, q, v, a, alone, kernels=kernels)
    checked = 0
    for k in range(SAMPLES):
        Yp = pin.computeJointTorqueRegressor(pmodel, pdata, q[k], v[k], a[k])
        scale = np.abs(Yp).max()
        for col, body in enumerate(alone):
            joint = model.body(body).joint.name
            j = pmodel.getJointId(joint)
            want = Yp[:, reg.PER_BODY * (j - 1):reg.PER_BODY * j]
            got = Y[k][:, reg.PER_BODY * col:reg.PER_BODY * (col + 1)]
            np.testing.assert_allclose(got, want, rtol=0, atol=TOL * scale, err_msg=body)
            checked += 1
    assert checked >= 5 * SAMPLES


@pytest.mark.parametrize('kernels', KERNELS)
@pytest.mark.parametrize('seed', range(4))
def test_y_pi_is_newton_euler_on_random_trees_with_screws(seed, kernels):
    model = random_model(seed, num_bodies=7)
    rng = np.random.default_rng(seed)
    q, v, a = _motion(model, rng)
    tau = model.inverse_dynamics(q, v, a)
    got = reg.regressor(model, q, v, a, kernels=kernels) @ reg.body_parameters(model)
    np.testing.assert_allclose(got, tau, rtol=0, atol=TOL * np.abs(tau).max())
    groups = reg.moving_bodies(model)          # merged bodies: the same torques
    Y = reg.regressor(model, q, v, a, list(groups), kernels=kernels)
    np.testing.assert_allclose(Y @ reg.merged_parameters(model, groups), tau, rtol=0,
                               atol=TOL * np.abs(tau).max())
    other = reg.regressor(model, q, v, a, list(groups),
                          kernels='numba' if kernels == 'numpy' else 'numpy')
    np.testing.assert_allclose(Y, other, rtol=0, atol=1e-12 * np.abs(Y).max())


def test_a_mimic_joint_s_columns_fold_onto_its_driver():
    path = robot('panda_description/urdf/panda.urdf')
    if path is None or not path.is_file():
        pytest.skip('example-robot-data is not installed')
    model = load_model(path)
    assert model.mimic_joints                 # the fingers
    rng = np.random.default_rng(SEED)
    q, v, a = _motion(model, rng)
    tau = model.inverse_dynamics(q, v, a)
    for kernels in ('numpy', 'numba') if compiled.AVAILABLE else ('numpy',):
        got = reg.regressor(model, q, v, a, kernels=kernels) @ reg.body_parameters(model)
        np.testing.assert_allclose(got, tau, rtol=0, atol=TOL * np.abs(tau).max())


def test_a_changed_body_goes_to_its_own_link_and_round_trips():
    model = load_model(robot('ur_description/urdf/ur5_robot.urdf'))
    groups = reg.moving_bodies(model)
    pi = reg.merged_parameters(model, groups)
    heavier = pi.copy()
    heavier[reg.PER_BODY * 2:reg.PER_BODY * 3] *= 1.3        # a 30 % heavier forearm
    new, changes, notes = reg.with_merged_parameters(model, heavier, groups)
    assert list(changes) == [list(groups)[2]] and not notes
    np.testing.assert_allclose(reg.merged_parameters(new, groups), heavier, rtol=1e-12,
                               atol=1e-15)


def test_the_nearest_body_is_one_and_a_body_stays_itself():
    model = load_model(robot('ur_description/urdf/ur5_robot.urdf'))
    pi = reg.merged_parameters(model)[:reg.PER_BODY]
    assert not reg.physical_problem(pi)
    np.testing.assert_allclose(reg.nearest_physical(pi, floor=0.0), pi, rtol=1e-9,
                               atol=1e-12)
    broken = pi.copy()
    broken[4] = -abs(broken[4])                # I_xx < 0: no body
    assert reg.physical_problem(broken)
    assert not reg.physical_problem(reg.nearest_physical(broken))
    assert np.linalg.eigvalsh(reg.pseudo_inertia(reg.nearest_physical(broken))).min() > 0
