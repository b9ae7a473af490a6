"""
The compiled twin of :func:`..regressor._chunk`'s loops: each sample's ten columns per body.

The numpy reference (:mod:`..regressor`) works on the whole batch as arrays; here one
sample at a time, the same formulas (its module docstring): the bodies' world velocities and
accelerations down the tree, each chosen body's 6 x 10 map of its ten parameters in its own
frame, and each joint at or above it dotted with that map, the joint's motion taken to the
body's frame. They agree to 1e-12 of the torques' scale (test_dynamic_regressor.py).
"""

import numba
import numpy as np

_jit = numba.njit(cache=True, nogil=True)


@_jit
def body_columns(S, XT, v, a, gravity, parent, coord, qidx, qmul, index, on_path, joint_body,
                 out):
    """
    Write each sample's columns into ``out`` (n, nc, 10 * len(index)).

    Sample-major inputs: ``S`` (n, nb, 6) each body's joint motion in the world (zero for a
    fixed joint), ``XT`` (n, nb + 1, 4, 3) the poses (:meth:`..numpy_backend.NumpyBackend.
    frames_batch`, moved), ``v``, ``a`` (n, nq). The tree: ``parent`` (nb, -1 the world),
    ``coord``, ``qidx``, ``qmul`` per body; ``index`` the chosen bodies; ``on_path``
    (nb, nc) the coordinates at or above each body; ``joint_body`` (nc).
    """
    n, nb = S.shape[0], S.shape[1]
    nc = on_path.shape[1]
    V = np.zeros((nb + 1, 6))
    A = np.zeros((nb + 1, 6))
    Yb = np.zeros((6, 10))
    R = np.zeros((3, 3))
    p = np.zeros(3)
    w, vb, al, ab = np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3)
    sw, sv = np.zeros(3), np.zeros(3)
    Lw = np.zeros((3, 6))
    for s in range(n):
        A[nb, :] = 0.0
        A[nb, 3] = -gravity[0]
        A[nb, 4] = -gravity[1]
        A[nb, 5] = -gravity[2]
        for i in range(nb):                     # velocities and accelerations, the tree down
            up = parent[i] if parent[i] >= 0 else nb
            for r in range(6):
                V[i, r] = V[up, r]
                A[i, r] = A[up, r]
            if coord[i] >= 0:
                speed = qmul[i] * v[s, qidx[i]]
                rate = qmul[i] * a[s, qidx[i]]
                for r in range(6):
                    V[i, r] += S[s, i, r] * speed
                    A[i, r] += S[s, i, r] * rate
                x0, x1, x2 = S[s, i, 0] * speed, S[s, i, 1] * speed, S[s, i, 2] * speed
                y0, y1, y2 = S[s, i, 3] * speed, S[s, i, 4] * speed, S[s, i, 5] * speed
                w0, w1, w2 = V[i, 0], V[i, 1], V[i, 2]
                u0, u1, u2 = V[i, 3], V[i, 4], V[i, 5]
                A[i, 0] += w1 * x2 - w2 * x1
                A[i, 1] += w2 * x0 - w0 * x2
                A[i, 2] += w0 * x1 - w1 * x0
                A[i, 3] += w1 * y2 - w2 * y1 + u1 * x2 - u2 * x1
                A[i, 4] += w2 * y0 - w0 * y2 + u2 * x0 - u0 * x2
                A[i, 5] += w0 * y1 - w1 * y0 + u0 * x1 - u1 * x0
        for col in range(index.shape[0]):
            i = index[col]
            for j in range(3):
                p[j] = XT[s, i, 3, j]
                for r in range(3):
                    R[r, j] = XT[s, i, j, r]           # R_WB[r, j]
            _to_body(R, p, V[i], w, vb)
            _to_body(R, p, A[i], al, ab)
            _body_map(w, vb, al, ab, Yb, Lw)
            base = 10 * col
            for c in range(nc):
                if not on_path[i, c]:
                    for k in range(10):
                        out[s, c, base + k] = 0.0
                    continue
                _to_body(R, p, S[s, joint_body[c]], sw, sv)     # the joint's motion, here
                # n (rows 0-2) is zero in column 0, f (rows 3-5) beyond column 3
                out[s, c, base] = sv[0] * Yb[3, 0] + sv[1] * Yb[4, 0] + sv[2] * Yb[5, 0]
                for k in range(1, 4):
                    out[s, c, base + k] = (sw[0] * Yb[0, k] + sw[1] * Yb[1, k]
                                           + sw[2] * Yb[2, k] + sv[0] * Yb[3, k]
                                           + sv[1] * Yb[4, k] + sv[2] * Yb[5, k])
                for k in range(4, 10):
                    out[s, c, base + k] = sw[0] * Yb[0, k] + sw[1] * Yb[1, k] + sw[2] * Yb[2, k]


@_jit
def _to_body(R, p, motion, wb, vb):
    """Write a world motion (at W's origin) at the body's origin, in its frame."""
    w0, w1, w2 = motion[0], motion[1], motion[2]
    v0 = motion[3] + w1 * p[2] - w2 * p[1]
    v1 = motion[4] + w2 * p[0] - w0 * p[2]
    v2 = motion[5] + w0 * p[1] - w1 * p[0]
    for j in range(3):
        wb[j] = R[0, j] * w0 + R[1, j] * w1 + R[2, j] * w2
        vb[j] = R[0, j] * v0 + R[1, j] * v1 + R[2, j] * v2


@_jit
def _body_map(w, v, al, a, Y, Lw):
    """Write the 6 x 10 map of a body's ten parameters to its wrench (the reference's)."""
    Y[:, :] = 0.0
    # m: [0; a + w x v]
    Y[3, 0] = a[0] + w[1] * v[2] - w[2] * v[1]
    Y[4, 0] = a[1] + w[2] * v[0] - w[0] * v[2]
    Y[5, 0] = a[2] + w[0] * v[1] - w[1] * v[0]
    # h: n = (v x w - a) x h; f = al x h + w x (w x h)
    e0 = v[1] * w[2] - v[2] * w[1] - a[0]
    e1 = v[2] * w[0] - v[0] * w[2] - a[1]
    e2 = v[0] * w[1] - v[1] * w[0] - a[2]
    Y[0, 2], Y[0, 3] = -e2, e1
    Y[1, 1], Y[1, 3] = e2, -e0
    Y[2, 1], Y[2, 2] = -e1, e0
    ww = w[0] * w[0] + w[1] * w[1] + w[2] * w[2]
    for r in range(3):
        for c in range(3):
            Y[3 + r, 1 + c] = w[r] * w[c] - (ww if r == c else 0.0)
    Y[3, 2] -= al[2]
    Y[3, 3] += al[1]
    Y[4, 1] += al[2]
    Y[4, 3] -= al[0]
    Y[5, 1] -= al[1]
    Y[5, 2] += al[0]
    # I: n = I al + w x (I w), I x = L(x) (I_xx, I_xy, I_yy, I_xz, I_yz, I_zz)
    Lw[:, :] = 0.0
    Lw[0, 0], Lw[0, 1], Lw[0, 3] = w[0], w[1], w[2]
    Lw[1, 1], Lw[1, 2], Lw[1, 4] = w[0], w[1], w[2]
    Lw[2, 3], Lw[2, 4], Lw[2, 5] = w[0], w[1], w[2]
    Y[0, 4], Y[0, 5], Y[0, 7] = al[0], al[1], al[2]
    Y[1, 5], Y[1, 6], Y[1, 8] = al[0], al[1], al[2]
    Y[2, 7], Y[2, 8], Y[2, 9] = al[0], al[1], al[2]
    for k in range(6):
        Y[0, 4 + k] += w[1] * Lw[2, k] - w[2] * Lw[1, k]
        Y[1, 4 + k] += w[2] * Lw[0, k] - w[0] * Lw[2, k]
        Y[2, 4 + k] += w[0] * Lw[1, k] - w[1] * Lw[0, k]
