"""
identification.convex.least_squares against solvers and facts it does not share.

- Bounds alone: scipy.optimize.lsq_linear (a bounded least-squares solver, BVLS) gives the
  same objective on seeded random problems of condition number CONDITION; and on harder
  ones (condition 1e5 to 1e9, bounds 1e4 times the unknowns' scale), where Clarabel's first
  attempt can stall or run out of iterations, every one is answered within ILL_EXCESS of
  BVLS's optimum (the second attempt's settings, ``convex.RETRY``).
- A solver that stops short twice: ``Stalled``, naming Clarabel's status, never an answer.
- An equality: the same as the closed-form constrained least squares (its KKT system).
- A pseudo-inertia LMI: a body whose data ask for a negative principal moment comes out
  physical (the pseudo-inertia's eigenvalues >= the floor), and fits the data at least as
  well as the nearest physical body (the eigenvalue-clipped one, feasible too).
"""

import numpy as np
import pytest

pytest.importorskip('clarabel', reason='the fit needs Clarabel (pip install clarabel)')
scipy_optimize = pytest.importorskip('scipy.optimize')

from transmission_bridge.identification import convex  # noqa: E402
from transmission_bridge.kinematics import regressor as reg  # noqa: E402

SEEDS = range(8)
CONDITION = 1e5             # of the random problems' matrices (columns of mixed units besides)
OBJECTIVE_RTOL = 1e-7       # relative: two solvers' optimal objective values
VALUE_RTOL = 1e-6           # relative: a unique optimum's unknowns
ILL_CONDITIONS = (1e5, 1e6, 1e7, 1e8, 1e9)
ILL_SEEDS = range(40)
ILL_EXCESS = 1e-3           # relative: the objective above BVLS's on those (6e-4 measured)
F = np.array([reg.pseudo_inertia(np.eye(reg.PER_BODY)[i]) for i in range(reg.PER_BODY)])


def _problem(seed, rows=60, n=8, condition=CONDITION):
    rng = np.random.default_rng(seed)
    u, _ = np.linalg.qr(rng.normal(size=(rows, n)))
    v, _ = np.linalg.qr(rng.normal(size=(n, n)))
    s = np.logspace(0, -np.log10(condition), n)
    A = (u * s) @ v.T * rng.uniform(0.1, 10.0, n)           # columns of mixed units
    return A, rng.normal(size=rows), rng


@pytest.mark.parametrize('seed', SEEDS)
def test_bounds_agree_with_scipy_bvls(seed):
    A, y, rng = _problem(seed)
    lower = np.where(rng.random(A.shape[1]) < 0.5, 0.0, -np.inf)
    upper = np.where(rng.random(A.shape[1]) < 0.3, 0.5, np.inf)
    x = convex.least_squares(A, y, lower=lower, upper=upper)
    want = scipy_optimize.lsq_linear(A, y, bounds=(lower, upper), method='bvls', tol=1e-14)
    assert np.all(x >= lower) and np.all(x <= upper)
    got, best = np.sum((A @ x - y) ** 2), np.sum((A @ want.x - y) ** 2)
    assert got == pytest.approx(best, rel=OBJECTIVE_RTOL)
    assert x == pytest.approx(want.x, rel=VALUE_RTOL, abs=VALUE_RTOL * np.abs(want.x).max())


def _hard_bounds(rng, n):
    """Return bounds 1e4 times the unknowns' scale, every third unknown unbounded below."""
    lower = rng.uniform(-1.0, 0.0, n) * 1e4
    upper = lower + rng.uniform(0.1, 2.0, n) * 1e4
    lower[::3] = -np.inf
    return lower, upper


@pytest.mark.parametrize('condition', ILL_CONDITIONS)
def test_ill_conditioned_bounded_problems_are_all_answered_near_the_optimum(condition):
    excess = []
    for seed in ILL_SEEDS:
        A, y, rng = _problem(seed, condition=condition)
        lower, upper = _hard_bounds(rng, A.shape[1])
        x = convex.least_squares(A, y, lower=lower, upper=upper)
        want = scipy_optimize.lsq_linear(A, y, bounds=(lower, upper), method='bvls',
                                         tol=1e-14)
        assert np.all(x >= lower) and np.all(x <= upper)
        excess.append(np.sum((A @ x - y) ** 2) / np.sum((A @ want.x - y) ** 2) - 1.0)
    assert max(excess) <= ILL_EXCESS, (np.argmax(excess), max(excess))


def test_a_solver_that_stops_short_twice_gives_no_answer_and_names_why(monkeypatch):
    A, y, rng = _problem(0)
    monkeypatch.setattr(convex, 'MAX_ITERATIONS', 1)      # Clarabel's own limit, both times
    with pytest.raises(convex.Stalled, match=r'Clarabel stopped short.*MaxIterations'):
        convex.least_squares(A, y, lower=np.zeros(A.shape[1]))


@pytest.mark.parametrize('seed', SEEDS)
def test_an_equality_and_a_prior_as_their_closed_form(seed):
    A, y, rng = _problem(seed, condition=1e3)
    n = A.shape[1]
    E, e = rng.normal(size=(2, n)), rng.normal(size=2)
    w, x0 = rng.uniform(0.0, 0.5, n), rng.normal(size=n)
    x = convex.least_squares(A, y, x0=x0, weights=w, equal=(E, e))
    H = A.T @ A + np.diag(w ** 2)
    kkt = np.block([[H, E.T], [E, np.zeros((2, 2))]])
    want = np.linalg.solve(kkt, np.concatenate([A.T @ y + w ** 2 * x0, e]))[:n]
    assert x == pytest.approx(want, rel=VALUE_RTOL, abs=VALUE_RTOL * np.abs(want).max())


@pytest.mark.parametrize('seed', SEEDS)
def test_a_body_the_data_make_unphysical_comes_out_physical_and_no_worse(seed):
    rng = np.random.default_rng(seed)
    # A body: 2 kg, centre 5 cm out, a rotated inertia; the data ask for one principal moment
    # of -0.01 kg m^2 (seen directly: A the identity, in each unknown's own unit).
    principal = np.array([0.02, 0.03, -0.01])
    axes, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    c = np.array([0.05, 0.0, 0.0])
    inertia = axes @ np.diag(principal) @ axes.T + 2.0 * (c @ c * np.eye(3) - np.outer(c, c))
    asked = np.array([2.0, *(2.0 * c), inertia[0, 0], inertia[0, 1], inertia[1, 1],
                      inertia[0, 2], inertia[1, 2], inertia[2, 2]])
    assert reg.physical_problem(asked)
    floor = 1e-9 * np.eye(4)
    x = convex.least_squares(np.eye(reg.PER_BODY), asked,
                             psd=[(np.arange(reg.PER_BODY), F, floor)])
    assert np.linalg.eigvalsh(reg.pseudo_inertia(x) - floor)[0] >= -1e-12
    assert not reg.physical_problem(x)
    projected = reg.nearest_physical(asked)
    assert not reg.physical_problem(projected)
    assert np.sum((x - asked) ** 2) <= np.sum((projected - asked) ** 2) * (1 + 1e-9)
