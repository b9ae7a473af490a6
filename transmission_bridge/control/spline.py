"""
Trajectory interpolation, without ROS: joint_trajectory_controller's segments.

Each segment is the one polynomial matching both its ends: linear when the points carry
positions only, cubic with velocities, quintic with accelerations too
(:func:`segment_coefficients`); :class:`Spline` strings them through the knots, holds the
first knot before the start and the last after the end.
"""

import bisect

import numpy as np


def segment_coefficients(duration, start, end):
    """
    Return the (6, n) coefficients c_k of p(s) = sum c_k s^k, 0 <= s <= ``duration``.

    ``start`` and ``end`` are (position, velocity, acceleration) rows, each (n,) or None;
    with positions only the segment is linear, with velocities cubic, with accelerations
    quintic (the unique polynomial of that degree matching both ends).
    """
    p0, v0, a0 = start
    p1, v1, a1 = end
    T = float(duration)
    c = np.zeros((6, len(p0)))
    c[0] = p0
    h = np.asarray(p1) - np.asarray(p0)
    if v1 is None:
        c[1] = h / T
        return c
    c[1] = v0
    if a1 is None:
        c[2] = (3 * h - (2 * v0 + v1) * T) / T ** 2
        c[3] = (-2 * h + (v0 + v1) * T) / T ** 3
        return c
    c[2] = a0 / 2
    c[3] = (20 * h - (8 * v1 + 12 * v0) * T - (3 * a0 - a1) * T ** 2) / (2 * T ** 3)
    c[4] = (-30 * h + (14 * v1 + 16 * v0) * T + (3 * a0 - 2 * a1) * T ** 2) / (2 * T ** 4)
    c[5] = (12 * h - 6 * (v1 + v0) * T + (a1 - a0) * T ** 2) / (2 * T ** 5)
    return c


class Spline:
    """
    Piecewise polynomials through knots at ``times`` (s, strictly increasing, from 0).

    ``positions`` (m, n); ``velocities`` and ``accelerations`` (m, n) or None: the kind of
    every segment (module docstring). :meth:`sample` gives position, velocity and
    acceleration at any times; before 0 the first knot, after the last the last knot held.
    """

    def __init__(self, times, positions, velocities=None, accelerations=None):
        self.times = np.asarray(times, dtype=float)
        self._knots = self.times.tolist()       # bisect on a list: one sample at a time
        self._basis = np.zeros((3, 6))
        self.positions = np.asarray(positions, dtype=float)
        m, n = self.positions.shape
        self.kind = ('linear' if velocities is None else
                     'cubic' if accelerations is None else 'quintic')
        v = np.zeros((m, n)) if velocities is None else np.asarray(velocities, dtype=float)
        a = np.zeros((m, n)) if accelerations is None else np.asarray(accelerations, float)
        self.end_velocity = v[-1] if velocities is not None else np.zeros(n)
        self.coefficients = np.empty((max(m - 1, 0), 6, n))
        for k in range(m - 1):
            self.coefficients[k] = segment_coefficients(
                self.times[k + 1] - self.times[k],
                (self.positions[k], v[k], a[k]),
                (self.positions[k + 1], None if velocities is None else v[k + 1],
                 None if accelerations is None else a[k + 1]))

    @property
    def duration(self):
        """Return the time of the last knot, s."""
        return float(self.times[-1])

    def segment(self, t):
        """Return the index of the segment holding time ``t`` (-1 before, m-1 after)."""
        return int(np.searchsorted(self.times, t, side='right')) - 1

    def sample(self, t):
        """Return (position, velocity, acceleration), each (len(t), n), at times ``t`` (s)."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        n = self.positions.shape[1]
        out = np.zeros((3, len(t), n))
        k = np.searchsorted(self.times, t, side='right') - 1
        if len(self.coefficients):          # the last knot itself: its segment's end
            k[t == self.times[-1]] = len(self.coefficients) - 1
        held = (k < 0) | (k >= len(self.coefficients))
        if held.any():
            out[0, held] = self.positions[np.where(k[held] < 0, 0, -1)]
            out[1, held & (k >= 0)] = self.end_velocity
        moving = ~held
        if moving.any():
            c = self.coefficients[k[moving]]                  # (s, 6, n)
            s = (t[moving] - self.times[k[moving]])[:, None]
            out[0, moving] = ((((c[:, 5] * s + c[:, 4]) * s + c[:, 3]) * s + c[:, 2]) * s
                              + c[:, 1]) * s + c[:, 0]
            out[1, moving] = (((5 * c[:, 5] * s + 4 * c[:, 4]) * s + 3 * c[:, 3]) * s
                              + 2 * c[:, 2]) * s + c[:, 1]
            out[2, moving] = ((20 * c[:, 5] * s + 12 * c[:, 4]) * s + 6 * c[:, 3]) * s \
                + 2 * c[:, 2]
        return out[0], out[1], out[2]

    def at(self, t):
        """Return (position, velocity, acceleration), each (n,), at one time ``t`` (s)."""
        times, coefficients = self._knots, self.coefficients
        k = bisect.bisect_right(times, t) - 1
        if len(coefficients) and t == times[-1]:
            k = len(coefficients) - 1
        if k < 0 or k >= len(coefficients):
            n = self.positions.shape[1]
            return (self.positions[0 if k < 0 else -1].copy(),
                    np.zeros(n) if k < 0 else self.end_velocity.copy(), np.zeros(n))
        # One (3, 6) @ (6, n) product: the powers of s (Python floats) times the coefficients;
        # per element what :meth:`sample` sums by Horner's rule, without ~20 small array ops.
        s = t - times[k]
        s2 = s * s
        s3 = s2 * s
        basis = self._basis         # (3, 6), written in place: the product is a new array
        basis.reshape(-1)[:] = (1.0, s, s2, s3, s3 * s, s3 * s2,
                                0.0, 1.0, 2 * s, 3 * s2, 4 * s3, 5 * s3 * s,
                                0.0, 0.0, 2.0, 6 * s, 12 * s2, 20 * s3)
        p, v, a = basis @ coefficients[k]
        return p, v, a

    def extremes(self, derivative):
        """Return the times inside segments where a joint's ``derivative``-th derivative peaks."""
        found = []
        for k, c in enumerate(self.coefficients):
            T = self.times[k + 1] - self.times[k]
            # d/ds of the (derivative)-th derivative: its coefficients, highest first.
            poly = np.polynomial.polynomial.Polynomial
            for j in range(c.shape[1]):
                roots = poly(c[:, j]).deriv(derivative + 1).roots()
                real = roots[np.abs(roots.imag) < 1e-9].real
                found.extend(self.times[k] + r for r in real if 0 < r < T)
        return np.array(found)
