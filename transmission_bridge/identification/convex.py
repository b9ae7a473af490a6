"""
Least squares under physical constraints, solved as a convex cone program (Clarabel).

:func:`least_squares` minimises ``|A x - y|^2 + |W (x - x0)|^2`` subject to linear
equalities, bounds on single unknowns and linear matrix inequalities ``sum_i x_i F_i >=
floor`` (each body's pseudo-inertia positive semidefinite: Wensing, Kim & Slotine, "Linear
Matrix Inequalities for Physically Consistent Inertial Parameter Identification", IEEE RA-L
2017). Clarabel (Goulart & Chen, 2024; Apache-2.0, from PyPI, a compiled interior-point solver
for quadratic objectives over such cones) solves it to its tolerances in tens of
iterations whatever the start: the problem is convex, so the answer is the problem's, not
the start's. ``pip install clarabel`` (the ``identify`` extra) when it is missing.
"""

import numpy as np

from ..kinematics.errors import ModelError

MISSING = ('clarabel', 'pip install clarabel scipy')
TOLERANCE = 1e-10           # Clarabel's gap and feasibility tolerances
MAX_ITERATIONS = 500        # Clarabel's iterations, each attempt
# Settings of the second attempt, when Clarabel stops short of even its reduced tolerances
# (it stalled, or ran out of iterations): looser tolerances, more static regularisation of
# its KKT system. Chosen on seeded random bounded problems of condition 1e5 to 1e9
# (test_convex): the first attempt stops short on 2 of 200, the second answers both.
RETRY = {'tol_gap_abs': 1e-8, 'tol_gap_rel': 1e-8, 'tol_feas': 1e-8,
         'static_regularization_constant': 1e-7}
_INFEASIBLE = ('PrimalInfeasible', 'AlmostPrimalInfeasible', 'DualInfeasible',
               'AlmostDualInfeasible')
_SQRT2 = np.sqrt(2.0)


class Stalled(ModelError):
    """The solver stopped short of an answer twice (it does not say that none exists)."""


def available():
    """Return None when Clarabel imports, else ``(module, how to install)``."""
    try:
        import clarabel  # noqa: F401
        import scipy.sparse  # noqa: F401
    except ImportError:
        return MISSING
    return None


def svec(M):
    """Return a symmetric matrix's upper triangle, column by column, off-diagonals times √2."""
    n = M.shape[-1]
    return np.array([M[..., i, j] * (1.0 if i == j else _SQRT2)
                     for j in range(n) for i in range(j + 1)])


def least_squares(A, y, x0=None, weights=None, equal=None, lower=None, upper=None, psd=()):
    """
    Return ``x`` minimising ``|A x - y|^2 + |weights * (x - x0)|^2`` under the constraints.

    ``equal``: ``(E, e)``, ``E x = e``; ``lower`` / ``upper``: per unknown (``±inf``: none);
    ``psd``: ``(columns, F, floor)`` each: ``sum_k x[columns[k]] F[k] - floor`` positive
    semidefinite (``F`` (len(columns), n, n) and ``floor`` (n, n) symmetric). Unknowns are
    scaled to unit column norm for the solver. Raises ModelError when the solver finds no answer.
    """
    import clarabel
    import scipy.sparse as sp
    A = np.asarray(A, dtype=float)
    n = A.shape[1]
    weights = np.zeros(n) if weights is None else np.asarray(weights, dtype=float)
    x0 = np.zeros(n) if x0 is None else np.asarray(x0, dtype=float)
    norms = np.sqrt(np.square(A).sum(axis=0) + np.square(weights))
    norms = np.where(norms > 0, norms, 1.0)
    D = 1.0 / norms                                   # x = D u
    # The residual's triangle as its own unknowns e = R u - c (the data's conditioning, not
    # its square as A^T A would have): minimise |e|^2 + |weights (D u - x0)|^2.
    both = np.linalg.qr(np.column_stack([A * D, y]), mode='r')
    width = min(both.shape[0], n)
    R, c = both[:width, :n], both[:width, n]
    m = n + width
    H = np.zeros(m)
    H[:n] = np.square(weights * D)
    H[n:] = 1.0
    g = np.zeros(m)
    g[:n] = D * np.square(weights) * x0
    rows, rhs, cones = [np.column_stack([R, -np.eye(width)])], [c], [clarabel.ZeroConeT(width)]
    if equal is not None:
        E, e = np.atleast_2d(equal[0]), np.atleast_1d(equal[1])
        rows.append(np.column_stack([E * D, np.zeros((len(e), width))]))
        rhs.append(e)
        cones.append(clarabel.ZeroConeT(len(e)))
    bounded = []
    for values, sign in ((lower, -1.0), (upper, 1.0)):
        if values is None:
            continue
        for j in np.flatnonzero(np.isfinite(values)):
            row = np.zeros(m)              # on u_j = x_j / D_j: rows of one scale
            row[j] = sign
            bounded.append((row, sign * values[j] / D[j]))
    if bounded:
        rows.append(np.array([b[0] for b in bounded]))
        rhs.append(np.array([b[1] for b in bounded]))
        cones.append(clarabel.NonnegativeConeT(len(bounded)))
    for columns, F, floor in psd:
        size = F.shape[-1]
        block = np.zeros((size * (size + 1) // 2, m))
        block[:, columns] = -svec(F) * D[columns]
        rows.append(block)
        rhs.append(-svec(floor))
        cones.append(clarabel.PSDTriangleConeT(size))
    P = sp.diags(2.0 * H, format='csc')
    problem = (P, -2.0 * g, sp.csc_matrix(np.vstack(rows)), np.concatenate(rhs), cones)
    for retry in (False, True):
        result = _solve(clarabel, problem, RETRY if retry else {})
        status = str(result.status)
        if status.startswith(('Solved', 'AlmostSolved')):
            break
        if status in _INFEASIBLE:
            raise ModelError(f'the constrained fit found no answer (Clarabel: {status}): the '
                             'constraints cannot all hold')
    else:
        raise Stalled(f'Clarabel stopped short of an answer twice ({status})')
    x = D * np.asarray(result.x)[:n]
    # An interior-point answer meets a bound to the solver's tolerance: on it, exactly.
    if lower is not None:
        x = np.maximum(x, lower)
    if upper is not None:
        x = np.minimum(x, upper)
    return x


def _solve(clarabel, problem, changes):
    """Return Clarabel's result on ``(P, q, A, b, cones)``, its settings changed by ``changes``."""
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.max_iter = MAX_ITERATIONS
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = TOLERANCE
    for key, value in changes.items():
        setattr(settings, key, value)
    return clarabel.DefaultSolver(*problem, settings).solve()
