"""
Gravity parameters from measured holding torques: the regressor and the least-change fit.

At rest the torque that holds the robot is linear in each body's mass ``m`` and first
moment ``h = m p_BBcm`` (body frame, kg·m)::

    tau_hold(q) = Y(q) pi,     pi = (m_1, h_1x, h_1y, h_1z, m_2, ...)    (body order)

with, per body B (``J`` its Jacobian at the body origin, rows [angular; linear], ``R_WB``
its orientation, ``g`` gravity)::

    Y_B(q) = [ -J_v^T g ,  J_w^T [g]x R_WB ]                   (nq x 4)

(the holding torque is the negative of Drake's generalized gravity force, NOTATION.md).
Static data identifies only some combinations of ``pi``: a body's moment about a joint
axis through its own centre of mass moves no torque, the masses of bodies that no joint
lifts never show, and a chain's bodies beyond a joint show only through their sum. So
:func:`fit` changes ``pi`` only along the combinations the samples identify (the numerical
rank of the stacked regressor, its columns scaled to unit norm) and by the least amount
that fits (least squares, minimum norm in the scaled parameters); the rest keep the
model's values. A mass the fit drives to zero or below is kept at the model's value and the
fit repeated without it; the result names those bodies.
"""

import dataclasses

import numpy as np

from .least_change import least_change, STILL_RANK_RTOL
from ..kinematics.errors import ModelError
from ..kinematics.spatial import skew

PER_BODY = 4                # m, h_x, h_y, h_z


def regressor(model, q, bodies=None):
    """
    Return ``Y(q)`` (nq x 4 per body of ``bodies``, default every body; batch q (N, nq)).

    ``Y(q) @ parameters(model)`` is the holding torque ``-model.gravity_generalized_forces(q)``.
    """
    q = np.asarray(q, dtype=float)
    if q.ndim == 2:
        return np.stack([regressor(model, x, bodies) for x in q])
    names = model.body_names if bodies is None else list(bodies)
    g = np.asarray(model.gravity, dtype=float)
    g_cross = skew(g)
    poses = model.forward_kinematics(q)
    out = np.zeros((model.num_positions, PER_BODY * len(names)))
    for k, (name, jac) in enumerate(zip(names, model.body_jacobians(q, names))):
        j_w, j_v = jac[:3], jac[3:]
        out[:, PER_BODY * k] = -j_v.T @ g
        out[:, PER_BODY * k + 1:PER_BODY * (k + 1)] = j_w.T @ g_cross @ poses[name][:3, :3]
    return out


def parameters(model, bodies=None):
    """Return ``pi``: (m, m * com) of each body of ``bodies`` (default every body)."""
    names = model.body_names if bodies is None else list(bodies)
    out = []
    for name in names:
        inertial = model.body(name).inertial
        out.extend([inertial.mass, *(inertial.mass * np.asarray(inertial.com))])
    return np.array(out)


def with_parameters(model, pi, bodies=None):
    """
    Return the model whose bodies have the masses and centres of mass of ``pi``.

    Rotational inertia is kept (static torques say nothing of it). A body whose mass is
    zero keeps its centre of mass.
    """
    names = model.body_names if bodies is None else list(bodies)
    pi = np.asarray(pi, dtype=float).reshape(len(names), PER_BODY)
    new = model
    for name, (m, *h) in zip(names, pi):
        old = model.body(name).inertial
        com = np.asarray(h) / m if m > 0 else old.com
        if m == old.mass and np.array_equal(com, old.com):
            continue
        new = new.with_mass_properties(name, m, com)
    return new


@dataclasses.dataclass
class Fit:
    """What :func:`fit` found: parameters, rank, conditioning and what it refused."""

    parameters: np.ndarray          # pi after the fit
    rank: int                       # combinations identified
    num_parameters: int             # columns that move any torque
    condition: float                # sigma_1 / sigma_rank of the scaled regressor
    kept_masses: tuple = ()         # (body, the mass the fit wanted) kept at the model's
    directions: np.ndarray = None   # the identified combinations (rank x free columns)
    columns: np.ndarray = None      # which parameters those columns are (indices into pi)

    def combinations(self, labels, terms=3):
        """Return one line per identified combination: its largest ``terms`` parameters."""
        lines = []
        for direction in self.directions:
            order = np.argsort(-np.abs(direction))[:terms]
            lines.append(' '.join(f'{direction[k]:+.2f} {labels[self.columns[k]]}'
                                  for k in order))
        return lines


def fit(stacked, torques, start, names=None, min_mass=0.0, rank_rtol=STILL_RANK_RTOL):
    """
    Return the :class:`Fit` of ``torques ~ stacked @ pi`` changing ``start`` least.

    ``stacked`` is the regressors of every sample stacked (S*nq x P), ``torques`` the
    measured holding torques (S*nq), ``start`` the model's ``pi``. ``names`` (one per body)
    name the bodies whose mass the fit wanted at or below ``min_mass``. The step is the
    identification's one least-change solver (:func:`.least_change.least_change`).
    """
    a = np.asarray(stacked, dtype=float)
    b = np.asarray(torques, dtype=float)
    norms = np.linalg.norm(a, axis=0)
    free = norms > norms.max() * 1e-12 if norms.size and norms.max() > 0 else norms > 0
    if not free.any():
        raise ModelError('the samples move no torque: nothing can be identified')
    kept = []
    while True:
        pi, info = least_change(a, b, start, free, rank_rtol)
        masses = pi[::PER_BODY]
        low = [k for k in range(len(masses)) if masses[k] <= min_mass and free[PER_BODY * k]]
        if not low:
            break
        for k in low:
            kept.append(((names or range(len(masses)))[k], float(masses[k])))
            free[PER_BODY * k] = False          # mass fixed at the model's value
    return Fit(pi, info['rank'], int(info['use'].sum()), info['condition'], tuple(kept),
               info['vt'], np.flatnonzero(info['use']))


def labels(bodies):
    """Return the name of each entry of ``pi``: ``m(body)``, ``mx(body)``, ... (first moments)."""
    return [f'{p}({b})' for b in bodies for p in ('m', 'mx', 'my', 'mz')]


def payload_fit(model, body, samples_q, torques, rank_needed=PER_BODY):
    """
    Return ``(mass, com, Fit)`` of a point payload on ``body`` from static samples.

    ``torques`` are the measured holding torques (S x nq) at ``samples_q`` (S x nq); the
    model's own prediction is taken off and the rest fitted with the payload's four
    parameters. Raises ModelError if the samples identify fewer than ``rank_needed`` of
    them, or the mass comes out at or below zero.
    """
    y = regressor(model, samples_q, [body]).reshape(-1, PER_BODY)
    holding = -model.gravity_generalized_forces(np.asarray(samples_q, dtype=float))
    rest = (np.asarray(torques, dtype=float) - holding).reshape(-1)
    result = fit(y, rest, np.zeros(PER_BODY))
    if result.rank < rank_needed:
        raise ModelError(f'the samples identify {result.rank} of the 4 payload parameters '
                         '(mass and centre of mass): hold the robot in more varied poses')
    mass, h = result.parameters[0], result.parameters[1:]
    if not mass > 0:
        raise ModelError(f'the fitted payload mass is {mass:.4g} kg: no payload, or the '
                         'efforts are not holding torques')
    return float(mass), h / mass, result


def static_samples(stamps, positions, efforts, velocities=None, speed_threshold=0.02,
                   min_duration=0.3):
    """
    Return ``(q, tau, spans)``: one averaged sample per stretch where the robot stood still.

    ``stamps`` (s, N), ``positions`` and ``efforts`` (N x nq; NaN where a message had
    none). A message is still when every joint's speed is below ``speed_threshold``
    (rad/s or m/s): from ``velocities`` where every message carries them all, else from
    the positions' differences. A stretch of still messages lasting ``min_duration``
    seconds or more gives the mean position and effort over it; ``spans`` holds each
    stretch's (first, last) stamp.
    """
    t = np.asarray(stamps, dtype=float)
    q = np.asarray(positions, dtype=float)
    tau = np.asarray(efforts, dtype=float)
    if len(t) < 2:
        return np.empty((0, q.shape[1])), np.empty((0, q.shape[1])), []
    if velocities is not None and np.isfinite(velocities).all():
        speed = np.abs(np.asarray(velocities, dtype=float)).max(axis=1)
    else:
        dt = np.diff(t)
        step = np.abs(np.diff(q, axis=0)).max(axis=1) / np.where(dt > 0, dt, np.inf)
        speed = np.concatenate([step[:1], step])
        speed = np.maximum(speed, np.concatenate([step, step[-1:]]))    # both neighbours
    still = speed < speed_threshold
    samples_q, samples_tau, spans = [], [], []
    k = 0
    while k < len(t):
        if not still[k]:
            k += 1
            continue
        end = k
        while end + 1 < len(t) and still[end + 1]:
            end += 1
        if t[end] - t[k] >= min_duration:
            samples_q.append(np.nanmean(q[k:end + 1], axis=0))
            with np.errstate(all='ignore'):
                samples_tau.append(np.nanmean(tau[k:end + 1], axis=0))
            spans.append((float(t[k]), float(t[end])))
        k = end + 1
    nq = q.shape[1]
    return (np.array(samples_q).reshape(-1, nq), np.array(samples_tau).reshape(-1, nq), spans)
