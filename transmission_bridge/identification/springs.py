"""
A series-elastic actuator's spring from recordings: its stiffness (or its table's scale).

The motor's side of the spring (NOTATION.md, "Second encoder"): the rotor ``I_r`` turns under
the motor's torque ``τ_a`` and the spring's reaction through the gear, so

    n_a τ_a = n_a I_r θ̈ - s k(δ) - d δ̇

with ``δ = x_o - x_a / n_a``, ``δ̇ = v_o - v_a / n_a``, ``k(δ)`` the spring's shape (``δ`` for
a linear spring, whose ``s`` is then its stiffness; the calibration table's, whose ``s`` is its
scale). Linear in ``(I_r, s, d)``: one least-squares solve over every recording's samples,
the motion low-passed and differentiated as the dynamic identification's
(:mod:`.signals`), the torques trimmed to the filtered motion, not filtered. Nothing is
started from: the file's values only name the shape.
"""

import dataclasses

import numpy as np

from . import signals


@dataclasses.dataclass(frozen=True)
class SpringFit:
    """One spring's identified values, and the torque residual's RMS (N·m at the output)."""

    actuator: str
    stiffness: float            # N·m/rad (N/m); None for a table
    scale: float                # the table's factor (1.0 for a linear spring)
    damping: float
    rotor_inertia: float
    rms: float
    samples: int


def fit_springs(tset, recordings, cutoff=signals.DEFAULT_CUTOFF):
    """
    Return one :class:`SpringFit` per spring of ``tset`` from ``recordings``.

    ``recordings``: ``(stamps s, motors (N, 3, nA) SI, outputs (N, 2, nO))`` each, the
    outputs' positions as read (their offsets are added here) and velocities, in the order of
    the set's output encoders (actuator order). A spring with too few samples is left out.
    """
    found = [(i, tset.actuator(n)) for i, n in enumerate(tset.actuator_names)
             if tset.actuator(n).output_encoder is not None]
    fits = []
    for k, (i, actuator) in enumerate(found):
        spring = actuator.spring
        if spring is None:
            continue
        n = actuator.mechanical_reduction
        rows, ys = [], []
        for stamps, motors, outputs in recordings:
            columns = np.stack([motors[:, 0, i], motors[:, 1, i], motors[:, 2, i],
                                outputs[:, 0, k] + actuator.output_encoder.offset,
                                outputs[:, 1, k]], axis=1)
            dt, segments = signals.uniform(stamps, columns)
            for _, x in segments or ():
                smooth = signals.low_pass(x, dt, cutoff)
                if len(smooth) < 3:
                    continue
                tau = signals.trim(x[:, 2], dt, cutoff)
                theta, theta_d, out, out_d = smooth[:, 0], smooth[:, 1], smooth[:, 3], \
                    smooth[:, 4]
                theta_dd = signals.derivative(theta_d, dt)
                deflection = out - theta / n
                rate = out_d - theta_d / n
                shape = deflection if not spring.table else spring.force(deflection)
                keep = slice(1, len(theta) - 1)
                rows.append(np.stack([n * theta_dd, -shape, -rate], axis=1)[keep])
                ys.append(n * tau[keep])
        if not rows:
            continue
        X, y = np.concatenate(rows), np.concatenate(ys)
        good = np.isfinite(X).all(axis=1) & np.isfinite(y)
        X, y = X[good], y[good]
        if len(y) < 10:
            continue
        (rotor, s, damping), *_ = np.linalg.lstsq(X, y, rcond=None)
        rms = float(np.sqrt(np.mean((X @ [rotor, s, damping] - y) ** 2)))
        fits.append(SpringFit(actuator.name, None if spring.table else float(s),
                              float(s) if spring.table else 1.0, float(damping), float(rotor),
                              rms, len(y)))
    return fits
