"""
The whole dynamic model from moving data, seen from the motors.

Every motor's measured torque, at every sample where it moves faster than ``min_speed``
(default 1 rad/s, 0.1 m/s for a linear motor: slower, friction is not ``c sign θ̇`` but
stiction and Stribeck's dip, or a simulator's regularised friction), is
(doc/identify_dynamics.md, NOTATION.md)::

    τ_a = γ (U(q, q̇, q̈) π + d) + I_r θ̈ + b θ̇ + c sign θ̇
    γ   = 1 / η_f  where the motor drives (τ_o θ̇ > 0, τ_o = U π + d), else η_b

``U = W(q) Y(q, q̇, q̈)`` the links' regressor (:mod:`..kinematics.regressor`, ten parameters
per moving body, bodies welded by fixed joints merged) through the set's effort map ``W``
(``joint_to_actuator('effort')``), ``d = W (b_j q̇)`` the joints' damping (held at the
set's values), ``I_r``, ``b``, ``c`` the rotor inertia and friction before the stage. It is
linear in (π, I_r, b, c) at fixed efficiencies and in (1/η_f, η_b, I_r, b, c) at fixed π:
Gauss-Newton on all of them together converges in a few steps.

The data enter as the square-root normal equations: per motor and power-flow direction,
the triangular factor ``R`` of the rows ``[U_k | θ̈ | θ̇ | sign θ̇ | d_k | τ_a]``
(``R^T R`` is the normal matrix; :class:`.problem.Normal`). Any linear combination of those columns
has the same norm over the rows as over ``R``, so every step of the fit reads only ``R``;
factors of many bags stack and re-factor exactly (Dask: one per bag). The direction of a
row depends on π, so a pass over the data classifies with the current estimate and the fit
is repeated over fresh factors until no row changes direction.

What the data do not determine keeps the model's value: the fit is made a second time with
the model as a prior on the links (each parameter known to the scale of its body:
:func:`_prior_spread`), weighted by the torques' noise from the first; a direction the data
fix better than that follows the data. From motor torques alone one common scale is free
(π k, η_f k, η_b / k give the same torques): while efficiencies are fitted, one heavy row
holds the links' scale at the model's (the parameters the data see most weigh most). A
result that is not physical is refused part by part and the fit repeated without it, each
named: a body that is none (its pseudo-inertia not positive definite) is held at the
nearest one; a rotor inertia or friction below 0 at 0; an efficiency above 1, or an
efficiency known worse than 5 %, at the model's.
"""

import dataclasses

import numpy as np

from .problem import Parameters
from ..kinematics import regressor as reg
from ..kinematics.errors import ModelError

RANK_RTOL = 1e-8
MIN_DIRECTION_ROWS = 50     # rows of a power-flow direction that identify its efficiency
MAX_ITERATIONS = 100
MAX_EFFICIENCY_SPREAD = 0.05  # an efficiency known worse than this (relative) is not fitted
PRIOR_SPREAD = 1.0          # a link parameter's prior spread, of its body's scale
TOLERANCE = 1e-9


@dataclasses.dataclass
class Fit:
    """What :func:`solve` found."""

    parameters: Parameters
    std: Parameters             # one standard deviation of each (NaN: held)
    rank: int                   # combinations of step A's unknowns identified
    num_unknowns: int
    condition: float
    iterations: int
    notes: list
    held: dict                  # label -> why it kept the model's (or a bound's) value
    rows: np.ndarray            # (nA, 2) rows per motor and direction
    rms: float                  # RMS residual over the fitted rows, N·m or N
    combined: list              # lines: what the data identifies only together
    noise: float = float('nan')  # the torques' noise the prior was weighed with
    scale_held: bool = False    # the links' common scale held at the model's (efficiencies fitted)


def solve(problem, normal, guess=None, noise=None):
    """
    Return the :class:`Fit` of the data in ``normal`` (:class:`.problem.Normal`).

    The model's values (``problem.start``) are the prior and what the data do not
    determine keeps; ``guess`` (an earlier :class:`Parameters`, say the last pass's) only
    where Gauss-Newton starts: fewer steps to the same fit; ``noise`` the torques' noise
    (an earlier :attr:`Fit.noise`), else found by a plain fit first. Raises ModelError
    when no motor has a moving row.
    """
    start = problem.start.copy()
    if normal.count.sum() == 0:
        raise ModelError('no motor moves faster than its rest width in the data: nothing '
                         'to identify (moving data are needed: see identify excite)')
    held, notes = {}, []
    bounds = _Bounds(problem, start)
    bounds.noise = noise
    for _ in range(20):
        p, info = _alternate(problem, normal, start, bounds, guess)
        broken = bounds.check(problem, p, info['std'])
        if not broken:
            break
    else:
        raise ModelError('the fit keeps breaking physical bounds: '
                         + '; '.join(f'{k}: {v}' for k, v in list(bounds.reasons.items())[-3:]))
    held.update(bounds.reasons)
    notes.extend(info['realised'])
    return Fit(p, info['std'], info['rank'], problem.num_link + 5 * problem.num_motors,
               info['condition'], info['iterations'], notes, held, normal.count.copy(),
               info['rms'], info['combined'], bounds.noise, bool(info['scale_free']))


class _Bounds:
    """Which unknowns are held, at which value, and why (physical bounds, missing data)."""

    def __init__(self, problem, start):
        nA = problem.num_motors
        self.link = np.ones(problem.num_link, dtype=bool)           # free link columns
        self.motor = np.ones((3, nA), dtype=bool)                   # I_r, b, c free
        self.alpha = np.full(nA, problem.efficiency)
        self.beta = np.full(nA, problem.efficiency)
        self.reasons = {}
        self.start = start
        self.noise = None           # the torques' noise, from the plain fit (once)

    def check(self, problem, p, std):
        """Hold what ``p`` breaks, at the model's value or the bound; return whether any."""
        broken = False
        spreads = (std.rotor, std.viscous, std.coulomb)
        for row, (kind, values) in enumerate((('rotor_inertia', p.rotor),
                                              ('friction.viscous', p.viscous),
                                              ('friction.coulomb', p.coulomb))):
            for k in np.flatnonzero(self.motor[row] & (values < 0)):
                self.motor[row, k] = False
                self.start_values(row)[k] = 0.0
                spread = spreads[row][k]
                if not values[k] < -2.0 * (spread if np.isfinite(spread) else 0.0):
                    values[k] = 0.0             # zero within its spread: no news
                    continue
                self.reasons[f'{kind}({problem.names[k]})'] = (
                    f'the fit gave {values[k]:.4g} < 0; held at 0 and the rest fitted again')
                broken = True
        for gains, spread, free, which in ((p.alpha, std.alpha, self.alpha, 'driving'),
                                           (p.beta, std.beta, self.beta, 'driven')):
            loose = free & ~(spread <= MAX_EFFICIENCY_SPREAD * np.abs(gains))
            for k in np.flatnonzero(loose):
                free[k] = False
                value = 1.0 / gains[k] if which == 'driving' else gains[k]
                self.reasons[f'efficiency.{which}({problem.names[k]})'] = (
                    f'not determined by the data ({value:.3g}, spread '
                    f"{spread[k] / abs(gains[k]):.0%}); the model's kept")
                broken = True
        for gains, spread, free, which, bound in ((p.alpha, std.alpha, self.alpha, 'driving',
                                                   lambda g: g >= 1.0),
                                                  (p.beta, std.beta, self.beta, 'driven',
                                                   lambda g: g <= 1.0)):
            for k in np.flatnonzero(free & ~bound(gains)):
                free[k] = False
                value = 1.0 / gains[k] if which == 'driving' else gains[k]
                if which == 'driving':
                    self.start.alpha[k] = 1.0
                else:
                    self.start.beta[k] = 1.0
                broken = True
                if abs(gains[k] - 1.0) <= 2.0 * spread[k]:
                    continue                    # 1 within its spread: an ideal stage
                self.reasons[f'efficiency.{which}({problem.names[k]})'] = (
                    f'the fit gave {value:.4g}, not in (0, 1]; held at 1 and the rest fitted '
                    'again')
        return broken

    def start_values(self, row):
        """Return the start array of motor unknown ``row`` (0 rotor, 1 viscous, 2 coulomb)."""
        return (self.start.rotor, self.start.viscous, self.start.coulomb)[row]


def _alternate(problem, normal, start, bounds, guess=None):
    """
    Return ``(parameters, info)``: the fit of every unknown still free, from ``start``.

    Gauss-Newton on the bilinear residual (module docstring), twice: plainly, for the
    torques' noise σ; then with the model as a Gaussian prior on the links (each parameter
    within :func:`_prior_spread`), so the directions the data determine worse than the
    model keep the model's values. A body the fit makes no body is held at the nearest one
    and the rest fitted again.
    """
    nA, P = problem.num_motors, problem.num_link
    for k in range(nA):                      # a direction without rows keeps its value
        for c, free in ((0, bounds.alpha), (1, bounds.beta)):
            if free[k] and normal.count[k, c] < MIN_DIRECTION_ROWS:
                free[k] = False
                which = ('driving', 'driven')[c]
                bounds.reasons[f'efficiency.{which}({problem.names[k]})'] = (
                    f'{normal.count[k, c]} rows where the {"motor" if c == 0 else "load"} '
                    f'drives (at least {MIN_DIRECTION_ROWS} needed); '
                    "the model's kept")
    # From motor torques a common scale of the links and the efficiencies is free (exactly
    # when every efficiency is fitted, nearly when a few are held): the model's links fix it.
    scale_free = bool(problem.efficiency and (bounds.alpha.any() or bounds.beta.any()))
    free = np.concatenate([bounds.link, bounds.motor.reshape(-1), bounds.alpha, bounds.beta])
    z0 = _pack(start)
    J, r = _linearised(problem, normal, start)
    scale = _scale_row(J, start.pi, P) if scale_free else None
    rows = int(normal.count.sum())
    # The noise of the torques, from the plain least-squares fit; then the fit again with the
    # model as a prior (each link parameter known to PRIOR_SPREAD of its body's scale): a
    # direction the data determine worse than that stays near the model.
    first = z0.copy() if guess is None else np.where(free, _pack(guess), z0)
    iterations = 0
    if bounds.noise is None:
        z, iterations, info = _gauss_newton(problem, normal, first.copy(), free, scale, None)
        bounds.noise = np.linalg.norm(info['r']) / np.sqrt(max(rows - info['rank'], 1))
    prior = (z0, bounds.noise / _prior_spread(problem, start))
    z, more, info = _gauss_newton(problem, normal, first.copy(), free, scale, prior)
    iterations += more
    # A body the fit makes no body (its pseudo-inertia not positive definite) is held at the
    # nearest one and the rest fitted again, until every body is one.
    realised = []
    for _ in range(len(problem.bodies)):
        bodies = [b for b in range(len(problem.bodies)) if free[reg.PER_BODY * b]
                  and reg.physical_problem(z[reg.PER_BODY * b:reg.PER_BODY * (b + 1)])]
        if not bodies:
            break
        for b in bodies:
            cols = slice(reg.PER_BODY * b, reg.PER_BODY * (b + 1))
            realised.append(f'body {problem.bodies[b]!r}: the fit gave '
                            f'{reg.physical_problem(z[cols])}; held at the nearest body with '
                            'a density and the rest fitted again')
            z[cols] = reg.nearest_physical(z[cols])
            free[cols] = False
        z, more, info = _gauss_newton(problem, normal, z, free, scale, prior)
        iterations += more
    p = _unpack(z, nA, P)
    J, r = _constrained(*_linearised(problem, normal, p), scale, z)
    _, info = least_change(J, -r, np.zeros(P + 5 * nA), free)
    r = r[:len(r) - 1] if scale is not None else r
    info.update(rms=float(np.linalg.norm(r) / np.sqrt(max(rows, 1))), rows=rows,
                iterations=iterations, scale_free=scale_free, realised=realised)
    info['sigma'] = float(np.linalg.norm(r) / np.sqrt(max(rows - info['rank'], 1)))
    info.update(std=_std(problem, info), combined=_combined(problem, info, z))
    return p, info


def _gauss_newton(problem, normal, z, free, scale, prior):
    """
    Return ``(z, iterations, info)``: Gauss-Newton steps to a fixed point.

    ``prior`` None, or ``(z0, w)``: rows ``w (z - z0)`` added (a Gaussian prior at ``z0``,
    each unknown's weight ``sigma / spread``; 0 where none).
    """
    nA, P = problem.num_motors, problem.num_link
    iterations, info = 0, {}
    for iterations in range(1, MAX_ITERATIONS + 1):
        J, r = _constrained(*_linearised(problem, normal, _unpack(z, nA, P)), scale, z)
        if prior is not None:
            z0, w = prior
            held = w > 0
            J = np.vstack([J, np.diag(w)[held]])
            r = np.concatenate([r, (w * (z - z0))[held]])
        step, info = least_change(J, -r, np.zeros_like(z), free)
        z = z + step
        size = np.linalg.norm(step * info['norms'])
        if size <= TOLERANCE * max(np.linalg.norm(z * info['norms']), 1e-300):
            break
    info['r'] = _linearised(problem, normal, _unpack(z, nA, P))[1]
    return z, iterations, info


def _prior_spread(problem, start):
    """
    Return how far each unknown may be from the model a priori (inf: no prior).

    Per body, ``PRIOR_SPREAD`` of its scale: its mass for ``m``, mass times length for the
    first moments, mass times length squared for the inertias (length: the larger of its
    centre of mass's distance, its radius of gyration and 5 cm). The motors' unknowns have
    no prior: nothing about them is known.
    """
    P = problem.num_link
    out = np.full(P + 5 * problem.num_motors, np.inf)
    for b in range(0, P, reg.PER_BODY):
        pi = start.pi[b:b + reg.PER_BODY]
        m = max(float(pi[0]), 1e-6)
        c = pi[1:4] / m
        about_origin = reg.pseudo_inertia(pi)
        gyration = np.sqrt(max(float(np.trace(about_origin[:3, :3])) / m, 0.0))
        length = max(float(np.linalg.norm(c)), gyration, 0.05)
        out[b] = m
        out[b + 1:b + 4] = m * length
        out[b + 4:b + reg.PER_BODY] = m * length ** 2
    return out * PRIOR_SPREAD


def _pack(p):
    return np.concatenate([p.pi, p.rotor, p.viscous, p.coulomb, p.alpha, p.beta])


def _unpack(z, nA, P):
    rest = z[P:].reshape(5, nA)
    return Parameters(z[:P].copy(), *(x.copy() for x in rest))


def _scale_row(J, pi_model, P):
    """
    Return ``(row, offset)``, the residual ``row . z - offset`` that holds ``c . pi = 1``.

    The links' common scale, held at the model's: ``c`` weighs each link parameter by its
    column's norm squared in the data (the parameters the data see most set the scale),
    normalised so the model's ``pi`` has 1; the row is heavy (1000 times the largest
    column), so the fit keeps it to rounding.
    """
    norms = np.linalg.norm(J, axis=0)
    c = np.zeros(J.shape[1])
    c[:P] = np.square(norms[:P]) * pi_model
    at_model = float(c[:P] @ pi_model)
    if not at_model > 0:
        return None
    c /= at_model
    weight = 1e3 * norms.max() / np.linalg.norm(c)
    return c * weight, weight


def _constrained(J, r, scale, z):
    """Return ``(J, r)`` with the scale's row (:func:`_scale_row`) appended, if any."""
    if scale is None:
        return J, r
    row, offset = scale
    return np.vstack([J, row]), np.concatenate([r, [row @ z - offset]])


def _linearised(problem, normal, p):
    """
    Return ``(J, r)``: the residual over every block and its Jacobian in all the unknowns.

    Unknowns: π (P), I_r, b, c, 1/η_f, η_b (nA each). Block (k, direction): residual
    ``R w``, ``w = [γ π; I_r; b; c; γ; -1]``.
    """
    nA, P = problem.num_motors, problem.num_link
    width = P + 5 * nA
    blocks, residuals = [], []
    for k in range(nA):
        for c, gain in ((0, p.alpha[k]), (1, p.beta[k])):
            if normal.count[k, c] == 0:
                continue
            R = normal.R[k, c]
            w = np.concatenate([gain * p.pi, [p.rotor[k], p.viscous[k], p.coulomb[k],
                                              gain, -1.0]])
            residuals.append(R @ w)
            J = np.zeros((P + 5, width))
            J[:, :P] = gain * R[:, :P]
            for j in range(3):
                J[:, P + j * nA + k] = R[:, P + j]
            J[:, P + (3 + c) * nA + k] = R[:, :P] @ p.pi + R[:, P + 3]
            blocks.append(J)
    return np.vstack(blocks), np.concatenate(residuals)


def least_change(A, b, x0, free, rtol=RANK_RTOL):
    """
    Return ``(x, info)``: ``A x ~ b`` changing ``x0`` least in the ``free`` columns.

    Columns scaled to unit norm; the numerical rank: the singular values above ``rtol`` of
    the largest; the step is the minimum-norm one within that many directions. ``info``:
    rank, condition, the scaled SVD's pieces and the column norms, for the spread.
    """
    A = np.asarray(A, dtype=float)
    norms = np.linalg.norm(A, axis=0)
    use = free & (norms > (norms.max() if norms.size else 0.0) * 1e-13)
    x = np.array(x0, dtype=float)
    info = {'rank': 0, 'condition': float('nan'), 'norms': norms, 'use': use,
            'vt': np.zeros((0, int(use.sum()))), 's': np.zeros(0)}
    if not use.any():
        return x, info
    scaled = A[:, use] / norms[use]
    residual = b - A @ x
    width = scaled.shape[1]
    if scaled.shape[0] > 2 * width:     # a tall system: its triangle (and Q^T b), fewer rows
        both = np.linalg.qr(np.column_stack([scaled, residual]), mode='r')
        scaled, residual = both[:width, :width], both[:width, width]
    u, s, vt = np.linalg.svd(scaled, full_matrices=False)
    rank = int((s > s[0] * rtol).sum()) if s.size and s[0] > 0 else 0
    info.update(rank=rank, condition=float(s[0] / s[rank - 1]) if rank else float('inf'),
                vt=vt[:rank], s=s[:rank])
    if rank:
        x[use] += (vt[:rank].T @ ((u[:, :rank].T @ residual) / s[:rank])) / norms[use]
    return x, info


def _std(problem, info):
    """Return one standard deviation of each unknown (NaN where held or not identified)."""
    nA, P = problem.num_motors, problem.num_link
    rows, rank = info['rows'], info['rank']
    out = np.full(P + 5 * nA, np.nan)
    if rank and rows > rank:
        sigma2 = info['rms'] ** 2 * rows / (rows - rank)
        vt, s, use = info['vt'], info['s'], info['use']
        cov_diag = np.einsum('rk,r->k', np.square(vt), 1.0 / np.square(s))
        out[use] = np.sqrt(sigma2 * cov_diag) / info['norms'][use]
    return _unpack(out, nA, P)


def _combined(problem, info, z, loose=0.3, tied=0.9):
    """
    Return what the data identify only together, a line per motor unknown.

    A rotor, friction or efficiency whose spread exceeds ``loose`` of its value is named
    with the link parameters its estimate moves with (correlation above ``tied``): the
    data fix their combination; the prior (the model) splits it.
    """
    use, vt, s = info['use'], info['vt'], info['s']
    if not len(s):
        return []
    labels = np.array(problem.labels())[use]
    values = z[use]
    cov = (vt.T / np.square(s)) @ vt
    spread = np.sqrt(np.maximum(np.diag(cov), 0.0))
    scale = info['norms'][use]
    lines = []
    for j, label in enumerate(labels):
        if not label.startswith(('rotor_inertia', 'friction', '1/efficiency', 'efficiency')):
            continue
        std = spread[j] * info['sigma'] / scale[j] if 'sigma' in info else np.nan
        if not std > loose * abs(values[j]):
            continue
        corr = cov[j] / np.maximum(spread[j] * spread, 1e-300)
        ties = [labels[i] for i in np.argsort(-np.abs(corr))
                if i != j and abs(corr[i]) > tied][:3]
        lines.append(f'{label}: not determined on its own' + (
            f' (moves with {", ".join(ties)}: the data fix their combination)' if ties
            else '') + "; the model's split kept")
    return lines
