"""
The model's dynamics against Pinocchio and against formulas derived by hand.

Pinocchio (``rnea``, ``crba``, ``nonLinearEffects``, ``aba``) on every robot of
example-robot-data it loads (``mimic=True``) and on seeded random trees of every joint type,
screws as its helical joints; both backends (numba's kernels and the numpy reference). No
oracle for a screw press's ram felt through the pitch: the textbook formula. The laws (M
symmetric positive-definite, forward and inverse dynamics inverse of each other, kinetic
energy from the bodies' own velocities) hold on the same models.
"""

from kinematics_models import random_model, random_q as random_tree_q
import numpy as np
import pytest
from robot_corpus import (pinocchio_model, pinocchio_q, random_q, robots_dir, urdf_files,
                          velocity_columns)
from tolerances import PEER_RTOL
from transmission_bridge.kinematics import (Body, Inertial, load_model, Model, ModelError,
                                            RevoluteJoint, ScrewJoint)
from transmission_bridge.kinematics.kernels import AVAILABLE as NUMBA

pin = pytest.importorskip('pinocchio', reason='Pinocchio is not installed (pip install pin)')
from pinocchio_bridge import to_pinocchio  # noqa: E402,I100

KINDS = ['numpy'] + (['numba'] if NUMBA else [])
FILES = urdf_files()
# Forward and inverse dynamics, each the other's inverse: a few ulps of M's condition.
ROUND_TRIP_RTOL = 1e-10


def _pin_dynamics(pm, qp, v, a, tau, cols, depth_first=True):
    """
    Return Pinocchio's (rnea, M, nle, aba) in our joints' order; mimics fold as ours.

    Pinocchio's ``crba`` and ``aba`` take the joints in depth-first order (each subtree's
    velocities contiguous), as its URDF parser makes them; a tree built joint by joint in
    another order (``depth_first`` False) gets M from ``rnea`` column by column instead.
    """
    data = pm.createData()
    vp, ap, tp = (np.zeros(pm.nv) for _ in range(3))
    vp[cols], ap[cols], tp[cols] = v, a, tau
    rnea = pin.rnea(pm, data, qp, vp, ap)[cols]
    nle = pin.nonLinearEffects(pm, data, qp, vp)[cols]
    if depth_first:
        M = pin.crba(pm, data, qp)
        M = np.triu(M) + np.triu(M, 1).T
    else:
        bias = pin.rnea(pm, data, qp, np.zeros(pm.nv), np.zeros(pm.nv))
        M = np.array([pin.rnea(pm, data, qp, np.zeros(pm.nv), e) - bias
                      for e in np.eye(pm.nv)]).T
    M = M[np.ix_(cols, cols)]
    if np.linalg.matrix_rank(M) < len(M):
        aba = None                      # a joint moving no mass: undefined
    elif not depth_first or any(j.shortname() == 'JointModelMimic' for j in pm.joints):
        aba = np.linalg.solve(M, tau - nle)      # from its M and nle
    else:
        aba = pin.aba(pm, data, qp, vp, tp)[cols]
    return rnea, M, nle, aba


def _close(ours, theirs, what, scale=None):
    scale = max(1.0, float(np.abs(theirs).max())) if scale is None else scale
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=PEER_RTOL * scale, err_msg=what)


def _close_accelerations(ours, aba, M, nle, tau):
    """
    Compare forward dynamics: in Pinocchio's own equations, and directly where M allows.

    Accelerations inherit M's condition number (iCub's hands: 1e9 rad/s² from tiny
    inertias), so the direct comparison is kept to cond(M) < 1e6; the residual
    ``M a + nle - tau`` is compared always, at the scale of its terms.
    """
    terms = max(1.0, float(np.abs(tau).max()), float(np.abs(M @ ours).max()))
    _close(M @ ours + nle - tau, np.zeros_like(tau), 'forward dynamics residual', terms)
    if np.linalg.cond(M) < 1e6:
        _close(ours, aba, 'forward dynamics')


@pytest.mark.skipif(robots_dir() is None, reason='example-robot-data is not installed')
@pytest.mark.parametrize('kind', KINDS)
@pytest.mark.parametrize('path', FILES, ids=lambda p: str(p.relative_to(robots_dir())))
def test_robots_match_pinocchio(path, kind):
    pm = pinocchio_model(pin, path)
    if pm is None or pm.njoints == 1:
        pytest.skip('Pinocchio does not load it, or it has no movable joint')
    model = load_model(path).with_kernels(kind)
    cols = velocity_columns(pm, model.joint_names)
    rng = np.random.default_rng(len(model.body_names))
    Q = random_q(model, rng, 3)
    V, A, T = (rng.normal(size=Q.shape) for _ in range(3))
    batch = model.inverse_dynamics(Q, V, A), model.mass_matrix(Q)
    for n in range(len(Q)):
        qp = pinocchio_q(pin, pm, model.joint_names, Q[n])
        rnea, M, nle, aba = _pin_dynamics(pm, qp, V[n], A[n], T[n], cols)
        _close(model.inverse_dynamics(Q[n], V[n], A[n]), rnea, 'inverse dynamics')
        _close(batch[0][n], rnea, 'inverse dynamics, batch')
        _close(model.mass_matrix(Q[n]), M, 'mass matrix')
        _close(batch[1][n], M, 'mass matrix, batch')
        _close(model.nonlinear_effects(Q[n], V[n]), nle, 'nonlinear effects')
        if aba is None:
            with pytest.raises(ModelError, match='mass matrix is singular'):
                model.forward_dynamics(Q[n], V[n], T[n])
        else:
            _close_accelerations(model.forward_dynamics(Q[n], V[n], T[n]), aba, M, nle, T[n])


@pytest.mark.parametrize('kind', KINDS)
@pytest.mark.parametrize('seed', range(8))
def test_random_trees_with_screws_match_pinocchio(seed, kind):
    model = random_model(seed, num_bodies=9,
                         gravity=np.random.default_rng(seed).normal(size=3) * 5)
    model = model.with_kernels(kind)
    pm, _ = to_pinocchio(model)
    cols = np.arange(model.num_positions)
    rng = np.random.default_rng(500 + seed)
    for q in random_tree_q(model, rng, 4):
        v, a, tau = (rng.normal(size=q.shape) for _ in range(3))
        rnea, M, nle, aba = _pin_dynamics(pm, q, v, a, tau, cols, depth_first=False)
        _close(model.inverse_dynamics(q, v, a), rnea, 'inverse dynamics')
        _close(model.mass_matrix(q), M, 'mass matrix')
        _close(model.nonlinear_effects(q, v), nle, 'nonlinear effects')
        _close_accelerations(model.forward_dynamics(q, v, tau), aba, M, nle, tau)


def _press(pitch, mass, izz, offset=0.0):
    """Return a ram of ``mass`` on a vertical screw of ``pitch`` (m per turn), com off axis."""
    return Model([Body('ram', ScrewJoint('screw', axis=(0, 0, 1), pitch=pitch),
                       Inertial(mass, (offset, 0.0, 0.1), ixx=izz, iyy=izz, izz=izz))])


@pytest.mark.parametrize('kind', KINDS)
@pytest.mark.parametrize('pitch', [0.005, -0.02, 0.5])
def test_screw_press_by_hand(pitch, kind):
    # q turns the screw: the ram rises h q (h = pitch / 2 pi) and turns q. Its energy is
    # (I_axis + m h²) v² / 2 with I_axis = izz + m r² about the screw's axis, and gravity
    # takes m g h to hold: tau = (izz + m r² + m h²) a + m g h, no velocity term.
    mass, izz, r, g = 40.0, 0.3, 0.05, 9.81
    model = _press(pitch, mass, izz, r).with_kernels(kind)
    h = pitch / (2 * np.pi)
    inertia = izz + mass * r * r + mass * h * h
    for q, v, a in ((0.0, 0.0, 0.0), (3.0, 5.0, -2.0), (-40.0, -1.0, 7.0)):
        tau = model.inverse_dynamics([q], [v], [a])[0]
        assert tau == pytest.approx(inertia * a + mass * g * h, rel=1e-13, abs=1e-13)
        assert model.mass_matrix([q])[0, 0] == pytest.approx(inertia, rel=1e-13)
        assert model.kinetic_energy([q], [v]) == pytest.approx(0.5 * inertia * v * v,
                                                               rel=1e-13, abs=1e-15)


def test_pitch_sign_moves_the_holding_torque_not_the_inertia():
    up, down = _press(0.02, 10.0, 0.1), _press(-0.02, 10.0, 0.1)
    assert up.inverse_dynamics([0.0], [0.0], [0.0])[0] > 0 > \
        down.inverse_dynamics([0.0], [0.0], [0.0])[0]
    assert up.mass_matrix([0.0])[0, 0] == down.mass_matrix([0.0])[0, 0]


def _body_kinetic_energy(model, q, v):
    """Return the kinetic energy from each body's Jacobian at its com (no mass matrix)."""
    poses = model.body_poses(q)
    total = 0.0
    for i, body in enumerate(model.bodies):
        J = model.jacobian(q, body.name, body.inertial.com)
        w, vc = np.split(J @ v, 2)
        R = poses[i, :3, :3]
        total += 0.5 * body.inertial.mass * vc @ vc + 0.5 * w @ (R @ body.inertial.inertia
                                                                 @ R.T) @ w
    return total


@pytest.mark.parametrize('kind', KINDS)
@pytest.mark.parametrize('seed', range(4))
def test_laws_on_random_trees(seed, kind):
    model = random_model(seed + 40, num_bodies=8).with_kernels(kind)
    rng = np.random.default_rng(seed)
    for q in random_tree_q(model, rng, 3):
        v, tau = rng.normal(size=q.shape), rng.normal(size=q.shape)
        M = model.mass_matrix(q)
        np.testing.assert_array_equal(M, M.T)
        assert np.linalg.eigvalsh(M).min() > 0
        a = model.forward_dynamics(q, v, tau)
        np.testing.assert_allclose(model.inverse_dynamics(q, v, a), tau, rtol=0,
                                   atol=ROUND_TRIP_RTOL * max(1.0, np.abs(tau).max()))
        assert model.kinetic_energy(q, v) == pytest.approx(_body_kinetic_energy(model, q, v),
                                                           rel=1e-12)
        # At rest the inverse dynamics is the holding torque (NOTATION.md).
        np.testing.assert_allclose(model.inverse_dynamics(q, 0 * q, 0 * q),
                                   -model.gravity_generalized_forces(q), rtol=0, atol=1e-12)


@pytest.mark.skipif(not NUMBA, reason='numba is not installed')
def test_backends_agree_on_a_batch_with_leading_dimensions():
    model = random_model(11, num_bodies=12)
    rng = np.random.default_rng(11)
    Q = random_tree_q(model, rng, 6).reshape(2, 3, -1)
    V, A = rng.normal(size=Q.shape), rng.normal(size=Q.shape)
    fast, slow = model.with_kernels('numba'), model.with_kernels('numpy')
    tau, M = fast.inverse_dynamics(Q, V, A), fast.mass_matrix(Q)
    assert tau.shape == Q.shape and M.shape == Q.shape + (Q.shape[-1],)
    np.testing.assert_allclose(tau, slow.inverse_dynamics(Q, V, A), rtol=0,
                               atol=1e-12 * np.abs(tau).max())
    np.testing.assert_allclose(M, slow.mass_matrix(Q), rtol=0, atol=1e-12 * np.abs(M).max())
    out = np.full(M.shape, np.nan)
    assert fast.mass_matrix(Q, out=out) is out
    np.testing.assert_array_equal(out, M)
    with pytest.raises(ModelError, match='out for mass_matrix must be a float64 array of shape'):
        fast.mass_matrix(Q, out=np.empty(M.shape[:-1]))
    np.testing.assert_allclose(fast.kinetic_energy(Q, V)[1, 2],
                               fast.kinetic_energy(Q[1, 2], V[1, 2]), rtol=1e-14)


def test_one_velocity_broadcasts_over_a_batch_and_bad_shapes_are_refused():
    model = Model([Body('arm', RevoluteJoint('shoulder', axis=(0, 1, 0)),
                        Inertial(2.0, (0.5, 0.0, 0.0)))])
    tau = model.inverse_dynamics([[0.0], [np.pi / 2]], [0.0], [1.0])
    np.testing.assert_allclose(tau[:, 0], [0.5 - 9.81, 0.5], atol=1e-12)   # m r² a + hold
    with pytest.raises(ModelError, match='last dimension 1'):
        model.inverse_dynamics([0.0, 1.0], [0.0], [0.0])
