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
set's values), ``I_r``, ``b``, ``c`` the rotor inertia and friction before the stage.

The data enter as the square-root normal equations: per motor and power-flow direction,
the triangular factor ``R`` of the rows ``[U_k | θ̈ | θ̇ | sign θ̇ | d_k | τ_a]``
(:class:`.problem.Normal`); every step below reads only ``R``, and many bags' factors stack.

The fit needs nothing of the model to start. At fixed gains γ the torques are linear in
(π, I_r, b, c); at fixed π, in (I_r, b, c, 1/η_f, η_b), motor by motor. Each is a convex
problem with the physics as constraints: every link's pseudo-inertia positive semidefinite
(a linear matrix inequality: Wensing, Kim & Slotine 2017; on the link's own share, the links
fixed to it off), I_r, b, c ≥ 0, 0 < η ≤ 1 (:func:`.convex.least_squares`, Clarabel). The fit
alternates the two from γ = 1, then takes steps of all together (:mod:`.fitting`), each
checked to lower the objective, to a fixed point: a start that is the same for every model.
From motor torques alone one common scale is free (π k, 1/η_f k, η_b k give the same
torques): a soft prior holds the links' scale at the model's (weighted by how much the data
see each parameter) where the bounds on the efficiencies allow it, unless rows carrying a
known payload fix it (``scale_known``).

What the data do not determine (the base parameters of Gautier & Khalil: the combinations
the stacked rows fix; the rest lie in their null space) is filled by the model: the fit is
made twice, first nearly without a prior (each motor's noise from its residual), then with
each motor's rows weighed by its noise and the model as a Gaussian prior on the links (each
parameter known to the scale of its body, :func:`_prior_spread`) and on the gains. A
direction the data fix better than the prior follows the data, whatever the model says; one
they do not see takes the model's value, and the report names it. The ±σ are the data's.
"""

import dataclasses

import numpy as np

from . import convex, fitting
from .least_change import least_change, MOVING_RANK_RTOL
from .problem import Parameters
from ..kinematics import regressor as reg
from ..kinematics.errors import ModelError

MIN_DIRECTION_ROWS = 50     # rows of a power-flow direction that identify its efficiency
PRIOR_SPREAD = 1.0          # a link parameter's prior spread, of its body's scale
GAIN_SPREAD = 0.3           # a gain's prior spread about the model's (1/η_f, η_b)
SCALE_SPREAD = 0.05         # the model's scale, as a prior: known to this (relative)
BODY_EDGE = 1e-6            # a body this near singular (of its trace) is at the edge
FROM_MODEL = 0.5            # posterior spread above this of the prior's: the model's value


@dataclasses.dataclass
class Fit:
    """What :func:`solve` found."""

    parameters: Parameters
    std: Parameters             # one standard deviation of each (NaN: held)
    rank: int                   # combinations of the unknowns the data identify
    num_unknowns: int
    condition: float
    iterations: int
    notes: list
    held: dict                  # label -> why it kept the model's (or a bound's) value
    rows: np.ndarray            # (nA, 2) rows per motor and direction
    rms: float                  # RMS residual over the fitted rows, N·m or N
    combined: list              # lines: what the data identifies only together
    noise: np.ndarray = None    # each motor's torque noise (RMS residual): its rows' weight
    scale_held: bool = False    # the links' common scale held at the model's (efficiencies fitted)
    from_model: tuple = ()      # link parameters the data do not see: the model's values
    scale_known: bool = False   # the common scale from rows carrying a known payload

    def change_from(self, other):
        """Return the largest change of an identified unknown from ``other``'s, in its σ."""
        z, w, s = (fitting.pack(x) for x in (self.parameters, other.parameters, self.std))
        use = np.isfinite(s) & (s > 0)
        return float(np.max(np.abs(z - w)[use] / s[use])) if use.any() else 0.0


def solve(problem, normal, previous=None, scale_known=False):
    """
    Return the :class:`Fit` of the data in ``normal`` (:class:`.problem.Normal`).

    The model's values (``problem.start``) are the prior for the links and gains, the
    scale, and what the data cannot see; the fit itself starts from gains 1. ``previous``
    (the last pass's :class:`Fit`, its rows classified a little differently): its noise
    weighs the rows and the weighed fit starts from its values, so the first fit is not
    made again (the same fixed point in fewer rounds). ``scale_known``: some rows carry a
    known payload (:meth:`.problem.Problem.rows`), which fixes the common scale: no pull to
    the model's. Raises ModelError when no motor has a moving row.
    """
    if normal.count.sum() == 0:
        raise ModelError('no motor moves faster than its rest width in the data: nothing '
                         'to identify (moving data are needed: see identify excite)')
    nA, P = problem.num_motors, problem.num_link
    model = problem.start.copy()
    held, free = _held(problem, normal, model)
    scale_free = bool(problem.efficiency and free[P + 3 * nA:].any()) and not scale_known
    spread = _prior_spread(problem, model)
    rows = int(normal.count.sum())
    stalled, iterations = [], 0
    if previous is None:
        # First nearly without a prior, to its fixed point's neighbourhood only: each
        # motor's noise from its residual.
        start = model.copy()                    # the gains 1: never the model's
        start.alpha = np.where(free[P + 3 * nA:P + 4 * nA], 1.0, model.alpha)
        start.beta = np.where(free[P + 4 * nA:], 1.0, model.beta)
        first = fitting.Alternation(problem, normal, model, free, scale_free)
        p, iterations = first.run(start, first.ridge(spread), first.loose, fitting.ROUGH)
        if not first.moved:
            raise convex.Stalled(first.stalled[-1] if first.stalled else
                                 'the fit found no step from the model')
        noise = _motor_noise(problem, normal, p)
        stalled = [f'the first fit, {text}' for text in first.stalled]
    else:
        z = np.where(free, fitting.pack(previous.parameters), fitting.pack(model))
        p, noise = fitting.unpack(z, nA, P), previous.noise
    # Each motor's rows weighed by its noise (a finger's 1e-4 N m count as much as a
    # shoulder's 10 N m), with the model as the prior.
    weighed = normal.weighed(1.0 / noise)
    fit = fitting.Alternation(problem, weighed, model, free, scale_free)
    p, more = fit.run(p, np.maximum(1.0 / spread, fit.ridge(spread)),
                      max(1.0 / SCALE_SPREAD, fit.loose))
    iterations += more
    J, r = _constrained(*fitting.linearised(problem, weighed, p), fit.scale, fitting.pack(p))
    _, info = least_change(J, -r, np.zeros(P + 5 * nA), free, MOVING_RANK_RTOL)
    r = r[:len(r) - 1] if fit.scale is not None else r
    info.update(rms=float(np.linalg.norm(r) / np.sqrt(max(rows, 1))), rows=rows)
    info['sigma'] = float(np.linalg.norm(r) / np.sqrt(max(rows - info['rank'], 1)))
    z = fitting.pack(p)
    notes = _at_bounds(problem, p, free, fit) + [
        f'{text}; that step was not taken'
        for text in stalled + [f'the weighed fit, {text}' for text in fit.stalled]]
    plain = fitting.linearised(problem, normal, p)[1]
    return Fit(p, _std(problem, info), info['rank'], P + 5 * nA, info['condition'],
               iterations, notes, held, normal.count.copy(),
               float(np.linalg.norm(plain) / np.sqrt(max(rows, 1))),
               _combined(problem, info, z), noise, scale_free,
               _from_model(problem, J, free, 1.0, spread), scale_known)


def _motor_noise(problem, normal, p):
    """Return each motor's RMS residual at ``p`` (its torques' noise; tiny floored)."""
    nA = problem.num_motors
    total = np.zeros(nA)
    for k, _, gain, R in fitting.motor_blocks(normal, p):
        total[k] += float(np.sum(np.square(R @ fitting.block_weights(p, k, gain))))
    count = normal.count.sum(axis=1)
    out = np.where(count > 0, np.sqrt(total / np.maximum(count, 1)), np.nan)
    top = np.nanmax(out) if np.isfinite(out).any() else 1.0
    return np.where(np.isfinite(out), np.maximum(out, 1e-9 * top), top)


def _held(problem, normal, model):
    """Return ``(reasons, free)``: what keeps the model's value for want of data, and why."""
    nA, P = problem.num_motors, problem.num_link
    free = np.ones(P + 5 * nA, dtype=bool)
    reasons = {}
    J = fitting.linearised(problem, normal, model)[0]
    seen = np.linalg.norm(J, axis=0) > 0
    free[P:P + 3 * nA] &= seen[P:P + 3 * nA]
    for k in range(nA):
        for c in range(2):
            column = P + (3 + c) * nA + k
            if not problem.efficiency:
                free[column] = False
                continue
            if normal.count[k, c] < MIN_DIRECTION_ROWS:
                free[column] = False
                which = ('driving', 'driven')[c]
                reasons[f'efficiency.{which}({problem.names[k]})'] = (
                    f'{normal.count[k, c]} rows where the {"motor" if c == 0 else "load"} '
                    f"drives (at least {MIN_DIRECTION_ROWS} needed); the model's kept")
    return reasons, free


def _at_bounds(problem, p, free, fit):
    """Return lines naming what the fit left on a physical bound (a body, 0, η = 1)."""
    nA, P = problem.num_motors, problem.num_link
    notes = []
    for cols, _, floor in fit.psd:
        if free[cols].all():
            J = reg.pseudo_inertia(p.pi[cols])
            if float(np.linalg.eigvalsh(J - floor)[0]) <= BODY_EDGE * float(np.trace(J)):
                notes.append(f'body {problem.bodies[cols[0] // reg.PER_BODY]!r}: at the edge '
                             'of the physical bodies (its pseudo-inertia singular): the data '
                             'ask for a body with less spread than any real one')
    z = fitting.pack(p)
    labels = problem.labels()
    for j in range(P, P + 3 * nA):
        kind = z[P + (j - P) // nA * nA:P + ((j - P) // nA + 1) * nA]
        if free[j] and z[j] <= 1e-6 * max(float(kind.max()), 1e-300):
            notes.append(f'{labels[j]}: at its bound 0 (the data ask for less)')
    for j, bound in ((P + 3 * nA, 1.0), (P + 4 * nA, 1.0)):
        for k in range(nA):
            if free[j + k] and abs(z[j + k] - bound) <= 1e-7:
                notes.append(f'{labels[j + k]}: at 1 (an ideal stage; the data ask for no '
                             'less loss)')
    return notes


def _from_model(problem, J, free, noise, spread):
    """Return the link parameters and gains whose estimate is mostly the model's (unseen)."""
    P = problem.num_link
    use = free.copy()
    use[:P] &= np.isfinite(spread[:P])
    prior = np.where(np.isfinite(spread), 1.0 / spread, 0.0)
    H = J[:, use].T @ J[:, use] / max(noise, 1e-300) ** 2 + np.diag(np.square(prior[use]))
    try:
        cov = np.diag(np.linalg.pinv(H))
    except np.linalg.LinAlgError:
        return ()
    index = np.flatnonzero(use)
    labels = problem.labels()
    return tuple(labels[i] for i, v in zip(index, cov)
                 if np.isfinite(spread[i]) and np.sqrt(max(v, 0.0)) > FROM_MODEL * spread[i])


def _prior_spread(problem, start):
    """
    Return how far each unknown may be from the model a priori (inf: no prior).

    Per body, ``PRIOR_SPREAD`` of its scale: its mass for ``m``, mass times length for the
    first moments, mass times length squared for the inertias (length: the larger of its
    centre of mass's distance, its radius of gyration and 5 cm). The gains (1/η_f, η_b):
    :data:`GAIN_SPREAD` about the model's. Rotors and friction have no prior: a file's are
    often blank, and a gear's are what identification is for.
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
    out[P + 3 * problem.num_motors:] = GAIN_SPREAD / PRIOR_SPREAD
    return out * PRIOR_SPREAD


def _constrained(J, r, scale, z):
    """Return ``(J, r)`` with the scale's row (:func:`_scale_row`) appended, if any."""
    if scale is None:
        return J, r
    row, offset = scale
    return np.vstack([J, row]), np.concatenate([r, [row @ z - offset]])


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
    return fitting.unpack(out, nA, P)


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
