"""
The identification's one least-change solver and its one rank rule (no ROS here).

Both fits (the static gravity fit, :mod:`.static`, and the dynamic fit, :mod:`.dynamic`)
change the model's parameters only along the combinations their data identify, and by the
least amount that fits: the regressor's columns scaled to unit norm, the numerical rank the
number of singular values above ``rtol`` of the largest, and the minimum-norm step within
those directions. The threshold is the data's: a still robot's averaged holding torques
(:data:`STILL_RANK_RTOL`) are few and noisier than a moving robot's whitened rows, whose
link parameters span many decades of scale (:data:`MOVING_RANK_RTOL`).
"""

import numpy as np

#: Static samples: directions 1e6 times weaker than the strongest are noise's to decide.
STILL_RANK_RTOL = 1e-6
#: Moving data (thousands of rows per motor, weighed by their noise): down to 1e-8.
MOVING_RANK_RTOL = 1e-8


def least_change(A, b, x0, free, rtol):
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
