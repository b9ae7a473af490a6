"""Physical laws over seeded random models mixing every joint type with tilted axes."""

import re

from conftest import CONFIG
from kinematics_models import random_model, random_q
import numpy as np
import pytest
from tolerances import FD_ATOL

SEEDS = range(8)
POSE_ATOL = 1e-12       # m and quaternion units; two orders of composing the same frames
H = 1e-6


@pytest.mark.parametrize('seed', SEEDS)
def test_gravity_is_minus_gradient_of_potential_energy(seed):
    model = random_model(seed)
    rng = np.random.default_rng(100 + seed)
    for q in random_q(model, rng, 5):
        tau = model.gravity_generalized_forces(q)
        grad = np.array([(model.potential_energy(q + H * e) - model.potential_energy(q - H * e))
                         / (2 * H) for e in np.eye(model.num_positions)])
        np.testing.assert_allclose(tau, -grad, rtol=0, atol=FD_ATOL)


@pytest.mark.parametrize('seed', SEEDS)
def test_jacobian_is_derivative_of_forward_kinematics(seed):
    model = random_model(seed)
    rng = np.random.default_rng(200 + seed)
    q = random_q(model, rng)
    for body in model.body_names:
        point = rng.uniform(-0.2, 0.2, 3)
        J = model.jacobian(q, body, point)
        for k, e in enumerate(np.eye(model.num_positions)):
            Xp = model.forward_kinematics(q + H * e)[body]
            Xm = model.forward_kinematics(q - H * e)[body]
            X = model.forward_kinematics(q)[body]
            dp = ((Xp[:3, :3] @ point + Xp[:3, 3]) - (Xm[:3, :3] @ point + Xm[:3, 3])) / (2 * H)
            dR = (Xp[:3, :3] - Xm[:3, :3]) / (2 * H)
            W = dR @ X[:3, :3].T
            w = np.array([W[2, 1], W[0, 2], W[1, 0]])
            np.testing.assert_allclose(J[3:, k], dp, rtol=0, atol=FD_ATOL)
            np.testing.assert_allclose(J[:3, k], w, rtol=0, atol=FD_ATOL)


@pytest.mark.parametrize('seed', SEEDS)
def test_conservative_power_is_minus_energy_rate(seed):
    model = random_model(seed)
    rng = np.random.default_rng(300 + seed)
    q0, v = random_q(model, rng), rng.normal(size=model.num_positions)
    for t in (0.0, 0.3):
        q = q0 + v * t
        dV = (model.potential_energy(q + v * H) - model.potential_energy(q - v * H)) / (2 * H)
        assert model.conservative_power(q, v) == pytest.approx(-dV, abs=FD_ATOL)


@pytest.mark.parametrize('seed', SEEDS[:3])
def test_batch_equals_one_at_a_time(seed):
    model = random_model(seed)
    q = random_q(model, np.random.default_rng(seed), 40)
    poses = model.body_poses(q)
    tau = model.gravity_generalized_forces(q)
    energy = model.potential_energy(q)
    for i in range(len(q)):
        np.testing.assert_allclose(poses[i], model.body_poses(q[i]), rtol=0, atol=1e-15)
        np.testing.assert_allclose(tau[i], model.gravity_generalized_forces(q[i]), atol=1e-13)
        assert energy[i] == pytest.approx(model.potential_energy(q[i]), abs=1e-13)


def test_a_configuration_gives_the_same_gravity_bits_in_any_batch():
    # A fleet's workers convert bags in chunks, with BLAS on however many threads their
    # process has: the result of a configuration must not depend on either (test_fleet).
    from transmission_bridge.kinematics import load_model, numpy_backend as algorithms
    model = load_model(CONFIG / 'example_arm_model.yaml')
    q = random_q(model, np.random.default_rng(9), algorithms.CHUNK + 17)
    idx = [0, 1, 2, 3, 5, 8, 13, 21, 34, 55, algorithms.CHUNK - 1, algorithms.CHUNK, len(q) - 1]
    for backend in {model.kernels: model, 'numpy': model.with_kernels('numpy')}.values():
        tau, energy = backend._backend.evaluate(q, ('gravity', 'energy'))
        for i in idx:
            alone = backend._backend.evaluate(q[i:i + 1], ('gravity', 'energy'))
            np.testing.assert_array_equal(tau[i], alone[0][0])
            assert energy[i] == alone[1][0]


def test_potential_energy_zero_at_origin_height_and_gravity_settable():
    from transmission_bridge.kinematics import Body, Inertial, Model, PrismaticJoint
    m = Model([Body('b', PrismaticJoint('z', axis=(0, 0, 1), lower=-5, upper=5),
                    Inertial(2.0))])
    assert m.potential_energy([0.0]) == 0.0
    assert m.potential_energy([1.5]) == pytest.approx(2.0 * 9.81 * 1.5)
    moon = m.with_gravity((0, 0, -1.62))
    assert moon.gravity_generalized_forces([0.3])[0] == pytest.approx(-2.0 * 1.62)
    assert m.gravity_generalized_forces([0.3])[0] == pytest.approx(-2.0 * 9.81)
    assert m.damping_forces([1.0])[0] == 0.0


@pytest.mark.parametrize('seed', SEEDS[:3])
def test_poses_and_gravity_in_one_pass_equal_the_separate_calls(seed):
    model = random_model(seed)
    rng = np.random.default_rng(seed)
    for q in (random_q(model, rng), random_q(model, rng, 5)):
        poses, tau = model.poses_and_gravity(q)
        np.testing.assert_array_equal(poses, model.body_poses(q))
        np.testing.assert_array_equal(tau, model.gravity_generalized_forces(q))
        poses, tau, energy = model.poses_gravity_and_energy(q)
        np.testing.assert_array_equal(poses, model.body_poses(q))
        np.testing.assert_array_equal(tau, model.gravity_generalized_forces(q))
        np.testing.assert_array_equal(energy, model.potential_energy(q))
    assert isinstance(model.poses_gravity_and_energy(q[0])[2], float)


@pytest.mark.parametrize('seed', SEEDS[:2])
def test_out_buffers_get_the_bits_of_new_results_and_are_returned(seed):
    from transmission_bridge.kinematics import numpy_backend as algorithms
    model = random_model(seed)
    rng = np.random.default_rng(seed)
    nb, nq = len(model.body_names), model.num_positions
    for lead in ((), (3,), (2, algorithms.CHUNK + 5)):     # one, a batch, chunks of a batch
        poses = np.full(lead + (nb, 4, 4), np.nan)      # stale contents must be overwritten
        tau = np.full(lead + (nq,), np.nan)
        energy = np.full(lead, np.nan)
        for _ in range(2):                              # the same buffers again, new q
            q = rng.uniform(-2.0, 2.0, lead + (nq,))
            fresh = model.poses_gravity_and_energy(q)
            got = model.poses_gravity_and_energy(q, out=(poses, tau, energy))
            assert got[0] is poses and got[1] is tau and got[2] is energy
            for a, b in zip(got, fresh):
                np.testing.assert_array_equal(a, b)
            assert model.poses_and_gravity(q, out=(poses, tau))[1] is tau
            np.testing.assert_array_equal(tau, fresh[1])
            assert model.body_poses(q, out=poses) is poses
            assert model.gravity_generalized_forces(q, out=tau) is tau
            np.testing.assert_array_equal(poses, fresh[0])
            np.testing.assert_array_equal(tau, fresh[1])


def test_unusable_out_buffers_are_refused_by_name_and_left_untouched():
    from transmission_bridge.kinematics import ModelError
    model = random_model(SEEDS[0])
    nb, nq = len(model.body_names), model.num_positions
    q = np.zeros((4, nq))
    poses, tau = np.full((4, nb, 4, 4), 7.0), np.full((4, nq), 7.0)
    cases = [((poses,), 'must hold 2 arrays'),
             ((poses, np.full((3, nq), 7.0)), f'out for gravity must be a float64 array '
              f'of shape (4, {nq})'),
             ((poses, tau.astype(np.float32)), 'float32'),
             ((poses, [[7.0] * nq] * 4), 'got list'),
             ((poses, np.full((nq, 4), 7.0).T), 'C-contiguous'),
             ((poses[::-1], tau), 'out for poses must be C-contiguous')]
    for out, message in cases:
        with pytest.raises(ModelError, match=re.escape(message)):
            model.poses_and_gravity(q, out=out)
    in_place = np.zeros((4, nq))                    # tau_g written over q as it is read
    with pytest.raises(ModelError, match='must not overlap q'):
        model.poses_and_gravity(in_place, out=(poses, in_place))
    assert (poses == 7.0).all() and (tau == 7.0).all()


def test_models_without_movable_joints_in_one_call_and_in_batch():
    from transmission_bridge.kinematics import Body, FixedJoint, Inertial, Model
    welded = Model([Body('a', FixedJoint('f'), Inertial(2.0, (0.0, 0.0, 0.5)))])
    poses, tau, energy = welded.poses_gravity_and_energy(np.zeros((3, 0)))
    assert poses.shape == (3, 1, 4, 4) and tau.shape == (3, 0)
    np.testing.assert_allclose(energy, 2.0 * 9.81 * 0.5, rtol=1e-15)    # m g h, h = com z
    assert welded.potential_energy(np.zeros(0)) == pytest.approx(2.0 * 9.81 * 0.5, rel=1e-15)
    poses, tau, energy = Model().poses_gravity_and_energy(np.zeros((2, 0)))
    assert poses.shape == (2, 0, 4, 4) and tau.shape == (2, 0) and energy.tolist() == [0.0, 0.0]


@pytest.mark.parametrize('base', ['world', 'b3'])
def test_core_pose_rows_are_the_poses_in_the_base_frame(base):
    # What both kinematics node paths publish on body_poses, in world or in a body's frame.
    from transmission_bridge.kinematics.spatial import rotation_to_quaternion
    from transmission_bridge.kinematics_node.core import KinematicsCore
    model = random_model(31, 7)
    core = KinematicsCore(model, base_frame=base)
    rows = np.empty((len(model.body_names), 7))
    rng = np.random.default_rng(31)
    for k, q in enumerate(random_q(model, rng, 10)):
        core.ingest(model.joint_names, q, [], stamp_ns=k)
        core.pose_rows(rows)
        for i, body in enumerate(model.body_names):
            X = model.relative_transform(q, base, body)
            np.testing.assert_allclose(rows[i, :3], X[:3, 3], rtol=0, atol=POSE_ATOL)
            np.testing.assert_allclose(rows[i, 3:], rotation_to_quaternion(X[:3, :3]),
                                       rtol=0, atol=POSE_ATOL)
