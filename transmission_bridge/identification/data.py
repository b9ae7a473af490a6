"""
Recorded motor states made into the samples a fit reads: motion, its derivatives, torques.

:func:`prepare` takes one recording's stamps and the motors' positions, velocities (NaN
where not recorded) and efforts, in the :class:`~.problem.Problem`'s motor order, and
returns :class:`Samples`:

1. resampled onto a uniform grid at the recording's median step (:func:`.signals.uniform`;
   a gap splits the recording);
2. positions and velocities low-passed by one zero-phase filter (cut-off ``cutoff`` Hz);
   velocities that were not recorded are the filtered positions' derivative,
   accelerations the filtered velocities' derivative. The efforts are taken as measured:
   a motor's torque steps where its friction and its power flow change sign, and a
   low-pass would smear each step over the filter's width (a fifth of the torque there,
   measured on a lossy arm), while the noise of a torque is what least squares averages;
3. the joints' motion from the motors' (the set's position and velocity maps; a joint of
   the model outside the set held at its default position, at rest);
4. decimated to about ``rate`` Hz (the content is below the cut-off, so nothing is lost but
   rows) and split in time: every fifth block of :data:`BLOCK` seconds is held out to test
   the fit on data it never saw.
"""

import dataclasses

import numpy as np

from . import signals

BLOCK = 2.0                 # s: the held-out split's block
HELD_OUT_EVERY = 5          # every fifth block held out
DEFAULT_RATE = 200.0        # Hz after decimation


@dataclasses.dataclass
class Samples:
    """Joint q, q̇, q̈ (N, nq), the motors' θ̇, θ̈ and torques (N, nA), and the stamps (N)."""

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    motor_v: np.ndarray
    motor_a: np.ndarray
    tau: np.ndarray

    def take(self, mask):
        """Return the samples where ``mask``."""
        return Samples(*(x[mask] for x in dataclasses.astuple(self)))

    def __len__(self):
        return len(self.t)

    @classmethod
    def joined(cls, parts):
        """Return the samples of ``parts`` one after the other."""
        parts = [p for p in parts if len(p)]
        if not parts:
            return None
        return cls(*(np.concatenate(x) for x in zip(*(dataclasses.astuple(p) for p in parts))))


def prepare(problem, stamps, positions, velocities, efforts, cutoff=signals.DEFAULT_CUTOFF,
            rate=DEFAULT_RATE):
    """
    Return ``(train, held_out)`` :class:`Samples` of one recording (module docstring).

    Either is None when nothing is left of it (a recording shorter than the filter).
    """
    positions = np.asarray(positions, dtype=float)
    efforts = np.asarray(efforts, dtype=float)
    velocities = np.asarray(velocities, dtype=float)
    measured_v = bool(np.isfinite(velocities).all())
    columns = [positions, efforts] + ([velocities] if measured_v else [])
    dt, segments = signals.uniform(stamps, np.stack(columns, axis=1))
    parts = []
    for t, x in segments or ():
        theta = signals.low_pass(x[:, 0], dt, cutoff)
        if not len(theta) or len(theta) < 3:
            continue
        tau = signals.trim(x[:, 1], dt, cutoff)
        t = signals.trim(t, dt, cutoff)
        theta_d = (signals.low_pass(x[:, 2], dt, cutoff) if measured_v
                   else signals.derivative(theta, dt))
        theta_dd = signals.derivative(theta_d, dt)
        q, v = _joint_motion(problem, theta, theta_d)
        a = signals.derivative(v, dt)
        step = max(1, int(round(1.0 / (rate * dt))))
        keep = slice(1, len(t) - 1, step)        # one-sided differences at the ends: dropped
        parts.append(Samples(t[keep], q[keep], v[keep], a[keep], theta_d[keep],
                             theta_dd[keep], tau[keep]))
    whole = Samples.joined(parts)
    if whole is None:
        return None, None
    finite = np.all([np.isfinite(x).all(axis=1) for x in
                     (whole.q, whole.v, whole.a, whole.motor_v, whole.motor_a, whole.tau)],
                    axis=0)
    whole = whole.take(finite)
    block = np.floor((whole.t - whole.t[:1]) / BLOCK).astype(np.int64) if len(whole) else []
    held = (np.asarray(block) % HELD_OUT_EVERY) == HELD_OUT_EVERY - 1
    train, test = whole.take(~held), whole.take(held)
    return (train if len(train) else None), (test if len(test) else None)


def _joint_motion(problem, theta, theta_d):
    """Return the model's joint (q, q̇) (N, nq) of the motors' positions and velocities."""
    model, tset = problem.model, problem.tset
    n = len(theta)
    q = np.tile(np.asarray(model.default_positions, dtype=float), (n, 1))
    v = np.zeros_like(q)
    if tset is None:
        q[:, problem.columns], v[:, problem.columns] = theta, theta_d
        return q, v
    qj = tset.actuator_to_joint('position', theta)
    vj = tset.actuator_to_joint('velocity', theta_d, None if tset.constant_map else theta)
    q[:, problem.columns], v[:, problem.columns] = qj, vj
    return q, v
