"""
Excitation trajectories: periodic Fourier series that make the regressor well conditioned.

Each joint j follows (Swevers, Ganseman, Tükel, De Schutter, Van Brussel 1997, "Optimal
robot excitation and identification", IEEE T-RA 13(5))::

    q_j(t) = q*_j + sum_{l=1..L} a_jl / (w l) sin(w l t) - b_jl / (w l) cos(w l t) + c_j

``w = 2 pi / period``. It starts and ends each period at rest at the pose ``q*``: velocity
``sum_l a_jl = 0`` and acceleration ``sum_l b_jl l = 0`` (so ``a_j1`` and ``b_j1`` follow
from the others) and ``c_j = sum_l b_jl / (w l)``. Everything but ``q*`` is linear in the
coefficients, so a candidate is a direction ``x`` and an amplitude ``s``: the largest
amplitude within every limit is found by bisection (:func:`fit_within`), checked on a grid
of :data:`CHECK_RATE` Hz over one period:

* each joint's position, velocity and acceleration limits (the set's, else the model's);
* through the transmissions, each motor's position, velocity and effort limits, the effort
  being what the motors must give to follow the trajectory: the links' inverse dynamics,
  the joints' damping, the gear losses, friction and rotors
  (:meth:`~transmission_bridge.kinematics.model.Model.motor_torques`).

Among seeded random directions (and then perturbations of the best), the one whose
regressor (:mod:`.dynamic`'s columns over one period, scaled to unit norm) has the smallest
condition number over its base (the numerical rank of a rich trajectory) wins.
"""

import dataclasses

import numpy as np

CHECK_RATE = 50.0           # Hz: the limit checks' and the condition number's grid
MARGIN = 0.9                # of the largest amplitude within the limits


@dataclasses.dataclass
class Excitation:
    """A Fourier excitation: joints, start pose, period, harmonics' coefficients (nJ, L)."""

    joint_names: list
    start: np.ndarray
    period: float
    a: np.ndarray
    b: np.ndarray

    def sample(self, t):
        """Return ``(q, q̇, q̈)`` (N, nJ) at times ``t`` (s)."""
        t = np.asarray(t, dtype=float)[:, None, None]
        w = 2 * np.pi / self.period
        L = self.a.shape[1]
        wl = w * np.arange(1, L + 1)[None, None, :]
        s, c = np.sin(wl * t), np.cos(wl * t)
        a, b = self.a[None], self.b[None]
        offset = np.sum(self.b / (w * np.arange(1, L + 1)), axis=1)
        q = self.start + offset + np.sum(a / wl * s - b / wl * c, axis=2)
        v = np.sum(a * c + b * s, axis=2)
        acc = np.sum(-a * wl * s + b * wl * c, axis=2)
        return q, v, acc


def coefficients(x, nj, harmonics):
    """Return ``(a, b)`` of a free direction ``x`` (the start-at-rest rules applied)."""
    x = np.asarray(x, dtype=float).reshape(2, nj, harmonics - 1)
    a = np.concatenate([-x[0].sum(axis=1, keepdims=True), x[0]], axis=1)
    ls = np.arange(2, harmonics + 1)
    b = np.concatenate([-(x[1] * ls).sum(axis=1, keepdims=True), x[1]], axis=1)
    return a, b


class Limits:
    """The limits an excitation keeps (module docstring), and its check."""

    def __init__(self, model, tset, joint_names, acceleration=None, base=None):
        self.model, self.tset = model, tset
        self.names = list(joint_names)
        # Where the model's other joints stay (default: their default positions).
        self.base = np.asarray(model.default_positions if base is None else base, float)
        self.columns = [model.joint_names.index(j) for j in self.names]
        nj = len(self.names)
        lower = np.asarray(model.position_lower_limits, float)[self.columns].copy()
        upper = np.asarray(model.position_upper_limits, float)[self.columns].copy()
        velocity = np.array([_finite_or(model.joint(j).velocity_limit, np.inf)
                             for j in self.names])
        if tset is not None:
            for k, j in enumerate(self.names):
                if j in tset.joint_names:
                    spec = tset.joint(j)
                    lower[k] = max(lower[k], _finite_or(spec.lower_limit, -np.inf))
                    upper[k] = min(upper[k], _finite_or(spec.upper_limit, np.inf))
                    velocity[k] = min(velocity[k], _finite_or(spec.velocity_limit, np.inf))
        self.lower, self.upper, self.velocity = lower, upper, velocity
        self.acceleration = (np.full(nj, np.inf) if acceleration is None
                             else np.broadcast_to(np.asarray(acceleration, float), (nj,)))
        if tset is not None:
            acts = [tset.actuator(n) for n in tset.actuator_names]
            self.motor_lower = np.array([_finite_or(a.lower_limit, -np.inf) for a in acts])
            self.motor_upper = np.array([_finite_or(a.upper_limit, np.inf) for a in acts])
            self.motor_velocity = np.array([_finite_or(a.velocity_limit, np.inf)
                                            for a in acts])
            self.motor_effort = np.array([_finite_or(a.effort_limit, np.inf) for a in acts])
            self.set_columns = model.set_columns(tset).tolist()

    def violation(self, excitation, t):
        """Return '' if the excitation keeps every limit on ``t``, else what it passes."""
        q, v, a = excitation.sample(t)
        for values, lo, hi, what in ((q, self.lower, self.upper, 'position'),
                                     (v, -self.velocity, self.velocity, 'velocity'),
                                     (a, -self.acceleration, self.acceleration,
                                      'acceleration')):
            bad = (values < lo) | (values > hi)
            if bad.any():
                s, k = np.argwhere(bad)[0]
                return (f'joint {self.names[k]!r} {what} {values[s, k]:.4g} at t = '
                        f'{t[s]:.2f} s')
        if self.tset is None:
            return ''
        return self._motor_violation(q, v, a, t)

    def full(self, q, v, a):
        """Return the model's (q, q̇, q̈) (N, nq): the other joints at ``base``, at rest."""
        n = len(q)
        Q = np.tile(self.base, (n, 1))
        V, A = np.zeros_like(Q), np.zeros_like(Q)
        Q[:, self.columns], V[:, self.columns], A[:, self.columns] = q, v, a
        return Q, V, A

    def _motor_violation(self, q, v, a, t):
        tset = self.tset
        Q, V, A = self.full(q, v, a)
        effort, theta, theta_d = motor_efforts(self.model, tset, Q, V, A, self.set_columns)
        names = tset.actuator_names
        for values, lo, hi, what in ((theta, self.motor_lower, self.motor_upper, 'position'),
                                     (theta_d, -self.motor_velocity, self.motor_velocity,
                                      'velocity'),
                                     (effort, -self.motor_effort, self.motor_effort,
                                      'effort')):
            bad = ~((values >= lo) & (values <= hi))
            if bad.any():
                s, k = np.argwhere(bad)[0]
                return (f'motor {names[k]!r} {what} {values[s, k]:.4g} at t = {t[s]:.2f} s')
        return ''


def motor_efforts(model, tset, Q, V, A, columns):
    """
    Return ``(τ_a, θ, θ̇)``: what the motors give and do to move the model along (Q, V, A).

    :meth:`~transmission_bridge.kinematics.model.Model.motor_torques`: the one commanded law
    (NOTATION.md, "Gear losses"), as the bridge will send the goal's points.
    """
    qt, vt = Q[:, columns], V[:, columns]
    theta, theta_d = tset.motion_to_actuator(qt, vt)
    return model.motor_torques(Q, V, A, tset), theta, theta_d


def _finite_or(value, default):
    return default if value is None or not np.isfinite(value) else float(value)


def fit_within(limits, names, start, period, harmonics, x, t, margin=MARGIN, steps=18):
    """
    Return ``(excitation, scale)``: direction ``x`` at the largest amplitude within limits.

    None when even a tiny amplitude passes a limit (the start pose itself is outside one).
    """
    nj = len(names)
    a, b = coefficients(x, nj, harmonics)

    def at(s):
        return Excitation(list(names), np.asarray(start, float), period, s * a, s * b)

    lo, hi = 0.0, 1.0
    while not limits.violation(at(hi), t) and hi < 1e6:
        lo, hi = hi, hi * 4.0
    if lo == 0.0 and limits.violation(at(hi * 1e-6), t):
        return None, 0.0
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        if limits.violation(at(mid), t):
            hi = mid
        else:
            lo = mid
    return at(lo * margin), lo * margin


def condition(problem, excitation, limits, t, rank=None):
    """Return ``(condition number, rank)`` of the regressor over ``t`` (columns unit norm)."""
    q, v, a = limits.full(*excitation.sample(t))
    cols = problem.columns
    if problem.tset is None:
        mv, ma = v[:, cols], a[:, cols]
    else:
        tset = problem.tset
        at = None if tset.constant_map else q[:, cols]
        mv = tset.joint_to_actuator('velocity', v[:, cols], at)
        ma = tset.joint_accelerations_to_actuator(a[:, cols], q[:, cols], v[:, cols])
    rows = problem.rows(q, v, a, mv, ma, np.zeros_like(mv))
    n, nA = mv.shape
    blocks = [rows.U.reshape(n * nA, -1)]
    for values in (ma, mv, np.sign(mv)):
        block = np.zeros((n * nA, nA))
        block[np.arange(n * nA), np.tile(np.arange(nA), n)] = values.reshape(-1)
        blocks.append(block)
    A = np.hstack(blocks)
    norms = np.linalg.norm(A, axis=0)
    A = A[:, norms > norms.max() * 1e-12] / norms[norms > norms.max() * 1e-12]
    s = np.linalg.svd(A, compute_uv=False)
    if rank is None:
        rank = int((s > s[0] * 1e-6).sum())
    return float(s[0] / s[rank - 1]) if s[rank - 1] > 0 else float('inf'), rank


def optimise(problem, limits, names, start, period=10.0, harmonics=5, candidates=24,
             refinements=24, seed=0, progress=None):
    """
    Return ``(excitation, condition number)``: the best of seeded random directions.

    Raises ValueError when no direction moves the robot within its limits.
    """
    rng = np.random.default_rng(seed)
    nj = len(names)
    t = np.arange(0.0, period, 1.0 / CHECK_RATE)
    best, best_cond, rank = None, np.inf, None
    width = 2 * nj * (harmonics - 1)
    x_best = None
    for k in range(candidates + refinements):
        if k < candidates or x_best is None:
            x = rng.normal(size=width) / np.repeat(np.arange(2, harmonics + 1), 1)[
                np.tile(np.arange(harmonics - 1), 2 * nj)]
        else:
            sigma = 0.3 * (1.0 - (k - candidates) / max(refinements, 1)) + 0.02
            x = x_best + sigma * np.linalg.norm(x_best) / np.sqrt(width) * rng.normal(
                size=width)
        excitation, scale = fit_within(limits, names, start, period, harmonics, x, t)
        if excitation is None or scale == 0.0:
            continue
        if rank is None:
            _, rank = condition(problem, excitation, limits, t)
        cond, _ = condition(problem, excitation, limits, t, rank)
        if cond < best_cond:
            best, best_cond, x_best = excitation, cond, x * scale
        if progress:
            progress(k + 1, candidates + refinements, best_cond)
    if best is None:
        raise ValueError('no excitation moves the robot within its limits from this pose '
                         '(is the start pose outside a limit?)')
    return best, best_cond
