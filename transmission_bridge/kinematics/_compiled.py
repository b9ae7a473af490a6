"""
Compiled kernels of the chain algorithms (numba), used when numba imports.

The same formulas as :mod:`.algorithms` (its module docstring), written as loops over the
bodies so that one call walks the tree once with no per-body Python overhead: a humanoid's
gravity costs a few microseconds instead of a numpy call per body. The numpy code stays the
reference and the fallback; the two agree to rounding (tests: 1e-12 on every corpus robot).
One difference of form: ``sin(a)`` and ``sin²(a/2)`` come from one ``sin``/``cos`` pair of
``a/2`` (``sin a = 2 sin(a/2) cos(a/2)``), which the compiler fuses into one ``sincos``.

Set ``TRANSMISSION_BRIDGE_KERNELS=numpy`` in the environment to use the numpy code even
where numba is installed. Kernels are compiled on first use and cached on disk by numba
(next to this file, or in numba's user cache directory when that is read-only), so only
the first process on a machine pays for the compilation (a few seconds in all).

Layouts are the numpy code's: ``XT`` (nb + 1, 4, 4) holds ``X_WB^T`` of every body with the
world (identity) last, ``L`` (nb, 16) holds ``X_PB^T`` row-major, parents use ``nb`` for
the world. Bodies come parents first (the model checks it), which is what lets the mass
moments accumulate up the tree in one backwards loop.

A model's constants travel as two flat arrays (:class:`Kernels`): numba types every
argument of every call (tens of nanoseconds each), so a call passes few arrays, and each
kernel takes its tables apart once.
"""

import os

import numpy as np

KERNELS_ENV = 'TRANSMISSION_BRIDGE_KERNELS'

# Columns of the per-body table: the angle a = q zr + zr0 and the translation
# t = q zt + zt0 of the body's joint (mimics: scale and offset folded in), mass, com,
# then HT (4, 16): X_PB^T = HT[0] + sin(a) HT[1] + sin²(a/2) HT[2] + t HT[3].
B_ZR, B_ZR0, B_ZT, B_ZT0, B_MASS, B_COM, B_HT, B_WIDTH = 0, 1, 2, 3, 4, 5, 8, 72
# Columns of the per-coordinate table: axis in the parent, joint origin in the parent,
# rot, tr, tr * subtree mass, subtree mass, mimic multiplier.
C_AXIS, C_ORIGIN, C_ROT, C_TR, C_TRM, C_MSUB, C_MUL, C_WIDTH = 0, 3, 6, 7, 8, 9, 10, 11

try:
    if os.environ.get(KERNELS_ENV, '').strip().lower() == 'numpy':
        raise ImportError(f'{KERNELS_ENV}=numpy')
    import numba
except ImportError as exc:
    AVAILABLE = False
    REASON = str(exc)
else:
    AVAILABLE = True
    REASON = f'numba {numba.__version__}'
    _jit = numba.njit(cache=True, nogil=True)

    # The kernels index the flat arrays themselves: a reshape inside a kernel costs about
    # as much as a body's frame. Offsets into the work buffer W: L (nb, 16), then
    # XT (nb + 1, 4, 4), then S (nb, 3), then tau_c (nc).

    @_jit
    def _frames(q, T, F, W):
        """Fill ``L`` and ``XT`` of ``W`` for the configuration ``q``."""
        nb = T[0]
        x = 16 * nb                                  # XT[i, j, r] = W[x + 16 i + 4 j + r]
        for b in range(nb):
            p, k = T[3 + 2 * b], T[4 + 2 * b]
            o = b * B_WIDTH
            qv = q[k] if k >= 0 else 0.0
            h = 0.5 * (qv * F[o + B_ZR] + F[o + B_ZR0])
            t = qv * F[o + B_ZT] + F[o + B_ZT0]
            if h != 0.0:
                sh = np.sin(h)
                ch = np.cos(h)
                s1 = 2.0 * sh * ch
                s2 = sh * sh
            else:
                s1 = 0.0
                s2 = 0.0
            o += B_HT
            lb = 16 * b
            for e in range(16):
                W[lb + e] = (F[o + e] + s1 * F[o + 16 + e] + s2 * F[o + 32 + e]
                             + t * F[o + 48 + e])
            xb = x + 16 * b
            xp = x + 16 * p
            # X_WB^T = X_PB^T X_WP^T; X_PB^T's last column is (0, 0, 0, 1).
            for j in range(4):
                l0, l1, l2 = W[lb + 4 * j], W[lb + 4 * j + 1], W[lb + 4 * j + 2]
                for r in range(3):
                    W[xb + 4 * j + r] = l0 * W[xp + r] + l1 * W[xp + 4 + r] + l2 * W[xp + 8 + r]
                W[xb + 4 * j + 3] = 0.0
            for r in range(3):
                W[xb + 12 + r] += W[xp + 12 + r]
            W[xb + 15] = 1.0

    @_jit
    def _gravity(T, F, W, tau):
        """Fill ``tau`` (folded onto the independent joints) and return ``V``, from ``XT``."""
        nb, nc = T[0], T[1]
        x, s, tc = 16 * nb, 32 * nb + 16, 35 * nb + 16
        for b in range(nb):          # S_b = m_b p_WBcm_b, then summed over the subtree
            o = b * B_WIDTH
            m, c0, c1, c2 = F[o + B_MASS], F[o + B_COM], F[o + B_COM + 1], F[o + B_COM + 2]
            xb = x + 16 * b
            for r in range(3):
                W[s + 3 * b + r] = m * (c0 * W[xb + r] + c1 * W[xb + 4 + r]
                                        + c2 * W[xb + 8 + r] + W[xb + 12 + r])
        m0 = 0.0
        m1 = 0.0
        m2 = 0.0
        for b in range(nb - 1, -1, -1):
            p = T[3 + 2 * b]
            sb = s + 3 * b
            if p < nb:
                sp = s + 3 * p
                W[sp] += W[sb]
                W[sp + 1] += W[sb + 1]
                W[sp + 2] += W[sb + 2]
            else:
                m0 += W[sb]
                m1 += W[sb + 1]
                m2 += W[sb + 2]
        tau[:] = 0.0
        gi = nb * B_WIDTH + nc * C_WIDTH
        g0, g1, g2 = F[gi], F[gi + 1], F[gi + 2]
        ci = 3 + 2 * nb
        for c in range(nc):
            b, p, k = T[ci + 3 * c], T[ci + 3 * c + 1], T[ci + 3 * c + 2]
            o = nb * B_WIDTH + c * C_WIDTH
            a0, a1, a2 = F[o + C_AXIS], F[o + C_AXIS + 1], F[o + C_AXIS + 2]
            j0, j1, j2 = F[o + C_ORIGIN], F[o + C_ORIGIN + 1], F[o + C_ORIGIN + 2]
            xp = x + 16 * p
            w0 = a0 * W[xp] + a1 * W[xp + 4] + a2 * W[xp + 8]
            w1 = a0 * W[xp + 1] + a1 * W[xp + 5] + a2 * W[xp + 9]
            w2 = a0 * W[xp + 2] + a1 * W[xp + 6] + a2 * W[xp + 10]
            o0 = j0 * W[xp] + j1 * W[xp + 4] + j2 * W[xp + 8] + W[xp + 12]
            o1 = j0 * W[xp + 1] + j1 * W[xp + 5] + j2 * W[xp + 9] + W[xp + 13]
            o2 = j0 * W[xp + 2] + j1 * W[xp + 6] + j2 * W[xp + 10] + W[xp + 14]
            rot, msub, trm = F[o + C_ROT], F[o + C_MSUB], F[o + C_TRM]
            sb = s + 3 * b
            r0 = rot * (W[sb] - msub * o0)
            r1 = rot * (W[sb + 1] - msub * o1)
            r2 = rot * (W[sb + 2] - msub * o2)
            # w . (r x g + trM g)
            tau_c = (w0 * (r1 * g2 - r2 * g1 + trm * g0)
                     + w1 * (r2 * g0 - r0 * g2 + trm * g1)
                     + w2 * (r0 * g1 - r1 * g0 + trm * g2))
            W[tc + c] = tau_c
            # Mimics: q_c = mul_c q[driver_c] (+ offset), so the forces fold back.
            tau[k] += F[o + C_MUL] * tau_c
        return -(m0 * g0 + m1 * g1 + m2 * g2)

    @_jit
    def _one(q, T, F, W, poses, tau, want_poses, want_gravity):
        """Frames of ``q``, then the poses (nb, 4, 4) and ``tau``; return ``V`` (or 0)."""
        _frames(q, T, F, W)
        if want_poses:
            x = 16 * T[0]
            for b in range(poses.shape[0]):
                for r in range(4):
                    for j in range(4):
                        poses[b, r, j] = W[x + 16 * b + 4 * j + r]
        if not want_gravity:
            return 0.0
        return _gravity(T, F, W, tau)

    @_jit
    def _batch(Q, T, F, W, poses, tau, energy, want_poses, want_gravity):
        """
        Every row of ``Q`` (n, nq) into poses (n, nb, 4, 4), tau (n, nq) and energy (n).

        An output not wanted may be a (1, ...) placeholder: its row 0 is written over.
        """
        for n in range(Q.shape[0]):
            energy[n if want_gravity else 0] = _one(
                Q[n], T, F, W, poses[n if want_poses else 0], tau[n if want_gravity else 0],
                want_poses, want_gravity)

    @_jit
    def _jacobians(T, F, W, on_path, bodies, points, J):
        """Fill ``J`` (n, 6, nq), [angular; linear], of each body point, from the frames."""
        nb, nc = T[0], T[1]
        x, ci = 16 * nb, 3 + 2 * nb
        J[:] = 0.0
        w = np.empty(3)
        o = np.empty(3)
        d = np.empty(3)
        for c in range(nc):
            p, k = T[ci + 3 * c + 1], T[ci + 3 * c + 2]
            f = nb * B_WIDTH + c * C_WIDTH
            xp = x + 16 * p
            for r in range(3):
                w[r] = (F[f + C_AXIS] * W[xp + r] + F[f + C_AXIS + 1] * W[xp + 4 + r]
                        + F[f + C_AXIS + 2] * W[xp + 8 + r])
                o[r] = (F[f + C_ORIGIN] * W[xp + r] + F[f + C_ORIGIN + 1] * W[xp + 4 + r]
                        + F[f + C_ORIGIN + 2] * W[xp + 8 + r] + W[xp + 12 + r])
            m, rot, tr = F[f + C_MUL], F[f + C_ROT], F[f + C_TR]
            for i in range(bodies.shape[0]):
                b = bodies[i]
                if not on_path[b, c]:
                    continue
                xb = x + 16 * b
                for r in range(3):
                    d[r] = (points[i, 0] * W[xb + r] + points[i, 1] * W[xb + 4 + r]
                            + points[i, 2] * W[xb + 8 + r] + W[xb + 12 + r] - o[r])
                J[i, 0, k] += m * rot * w[0]
                J[i, 1, k] += m * rot * w[1]
                J[i, 2, k] += m * rot * w[2]
                J[i, 3, k] += m * (rot * (w[1] * d[2] - w[2] * d[1]) + tr * w[0])
                J[i, 4, k] += m * (rot * (w[2] * d[0] - w[0] * d[2]) + tr * w[1])
                J[i, 5, k] += m * (rot * (w[0] * d[1] - w[1] * d[0]) + tr * w[2])


class Kernels:
    """
    A model's constants packed for the compiled kernels, and calls on them.

    Integers ``T`` (the tree): ``nb, nc, nq``, then per body (parent, coordinate or -1), then per
    coordinate (body, parent body, independent joint it folds onto). floats ``F``: the
    per-body table (nb, ``B_WIDTH``), the per-coordinate table (nc, ``C_WIDTH``), gravity.
    Each configuration's intermediate results go in one work buffer ``W`` (:meth:`work`).
    """

    def __init__(self, kin):
        nb, nc = kin.nb, kin.nc
        if any(p >= i for i, p in enumerate(kin.parent)):
            raise ValueError('bodies must come parents first')
        offset = kin.z_offset if kin.z_offset is not None else np.zeros(3 * nb)
        B = np.zeros((nb, B_WIDTH))
        B[:, B_ZR], B[:, B_ZR0] = kin.z_scale[:nb], offset[:nb]
        B[:, B_ZT], B[:, B_ZT0] = kin.z_scale[2 * nb:], offset[2 * nb:]
        B[:, B_MASS], B[:, B_COM:B_COM + 3] = kin.mass, kin.com
        B[:, B_HT:] = kin.HT.reshape(nb, 64)
        C = np.zeros((nc, C_WIDTH))
        C[:, C_AXIS:C_AXIS + 3], C[:, C_ORIGIN:C_ORIGIN + 3] = kin.axis_Pq, kin.p_PJq
        C[:, C_ROT], C[:, C_TR], C[:, C_TRM], C[:, C_MSUB] = (kin.rot_q, kin.tr_q, kin.trM,
                                                              kin.M_sub)
        C[:, C_MUL] = [kin.qmul[i] for i in kin.joint_body]
        body_ints = [(p if p >= 0 else nb, k) for p, k in zip(kin.parent, kin.qidx)]
        coord_ints = [(i, p, kin.qidx[i]) for i, p in zip(kin.joint_body, kin.joint_parent)]
        self.nb, self.nc, self.nq = nb, nc, kin.nq
        self.T = np.array([nb, nc, kin.nq] + [v for row in body_ints for v in row]
                          + [v for row in coord_ints for v in row], dtype=np.intp)
        self.F = np.concatenate([B.ravel(), C.ravel(), np.asarray(kin.gravity, dtype=float)])
        self.on_path = np.ascontiguousarray(kin.on_path)

    def work(self):
        """
        Return a new work buffer and its views ``(W, L, XT, S, tau_c)``.

        ``XT``'s world entry is set to the identity here; the kernels never write it.
        """
        nb, nc = self.nb, self.nc
        W = np.zeros(35 * nb + 16 + nc)
        a, b, c = 16 * nb, 32 * nb + 16, 35 * nb + 16
        L, XT = W[:a].reshape(nb, 16), W[a:b].reshape(nb + 1, 4, 4)
        XT[nb] = np.eye(4)
        return W, L, XT, W[b:c].reshape(nb, 3), W[c:]

    def one(self, q, W, poses, tau, want_poses, want_gravity):
        """Frames of ``q`` into ``W``, then the poses and ``tau`` if wanted; return ``V``."""
        return _one(q, self.T, self.F, W, poses, tau, want_poses, want_gravity)

    def gravity(self, W, tau):
        """Fill ``tau`` from the frames in ``W`` and return ``V``."""
        return _gravity(self.T, self.F, W, tau)

    def batch(self, Q, W, poses, tau, energy, want_poses, want_gravity):
        """Fill the outputs for every row of ``Q`` (n, nq) (see ``_batch``)."""
        _batch(Q, self.T, self.F, W, poses, tau, energy, want_poses, want_gravity)

    def jacobians(self, W, bodies, points, J):
        """Fill ``J`` (n, 6, nq) for the body points, from the frames in ``W``."""
        _jacobians(self.T, self.F, W, self.on_path, bodies, points, J)
