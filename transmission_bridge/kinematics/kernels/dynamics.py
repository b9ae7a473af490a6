"""
The compiled dynamics: Newton-Euler and composite bodies as loops over the tree.

The formulas of the numpy reference (:mod:`..newton_euler`: world frame, spatial vectors at
W's origin), one configuration per call, with the poses from :func:`.loops.frames`. The
tables (packed by :class:`DynamicsTables`):

* ``dints``: the number of moving bodies and their indices (parents first), then per body
  ``DI_WIDTH`` integers: the moving body it hangs from (``nb`` for the world), its
  independent joint and coordinate (-1 for a fixed joint), its parent (``nb``: the world);
* ``dfloats`` per body ``D_WIDTH`` numbers (columns below), then gravity.

Bodies on fixed joints are merged into the moving body they hang from, as Pinocchio does
(mass, centre of mass and inertia added in that body's frame; those hanging from the world
drop out: the world does not move), so the loops walk the moving bodies only. The numpy
reference keeps every body: the two agree to 1e-12 (test_dynamics.py), an independent check
of the merging.
* ``scratch`` per body (and the world, last) ``S_WIDTH`` numbers: the joint's motion S,
  the velocity V, the acceleration A, the force F; then the composite m, h, J_O. Then
  ``T_WIDTH`` numbers the loops use as temporaries.
"""

import numpy as np

from .loops import frames, unpack as _unpack
from ..._shared import loops as _loops

D_MASS, D_COM, D_INERTIA, D_ROT, D_TR, D_MUL, D_AXIS, D_ORIGIN, D_WIDTH = (
    0, 1, 4, 13, 14, 15, 16, 19, 22)
DI_UP, DI_Q, DI_C, DI_PARENT, DI_WIDTH = 0, 1, 2, 3, 4
S_S, S_V, S_A, S_F, S_M, S_H, S_J, S_WIDTH = 0, 6, 12, 18, 24, 25, 28, 37
# After the bodies, the loops' temporaries (an allocation in a loop costs ~50 ns a call):
# R J_c (9), the centre of mass (3), I V, I A (6 each), then a force (6).
T_RJ, T_CW, T_IV, T_IA, T_F, T_WIDTH = 0, 9, 12, 18, 24, 30

# 'contract': the compiler may fuse a multiply and an add (one rounding instead of two; on
# this project's CPUs about 7 % of a humanoid's inverse dynamics). Nothing reassociates, so a
# call's result is the same on every run; against the numpy reference it differs by rounding
# only (test_compiled_kernels: 1e-12 of each robot's scale).
COMPILED = _loops.installed()
JIT_OPTIONS = {'fastmath': {'contract'}}
_NOT_COMPILED = ('kernels',)
_compiled = None


class DynamicsTables:
    """The dynamics' constant tables of a tree (see the module docstring)."""

    def __init__(self, tree):
        nb = tree.nb
        anchor, mass, com, inertia = _merged_bodies(tree)
        D = np.zeros((nb, D_WIDTH))
        D[:, D_MASS], D[:, D_COM:D_COM + 3] = mass, com
        D[:, D_INERTIA:D_INERTIA + 9] = inertia.reshape(nb, 9)
        D[:, D_ROT], D[:, D_TR] = tree.rot, tree.tr
        D[:, D_MUL] = tree.qmul
        D[:, D_AXIS:D_AXIS + 3], D[:, D_ORIGIN:D_ORIGIN + 3] = tree.axis_P, tree.p_PJ
        self.dfloats = np.concatenate([D.ravel(), np.asarray(tree.gravity, dtype=float)])
        moving = [i for i in range(nb) if tree.coord[i] >= 0]
        rows = []
        for i, p in enumerate(tree.parent):
            up = anchor[p] if p >= 0 and anchor[p] >= 0 else nb
            rows.append((up, tree.qidx[i], tree.coord[i], p if p >= 0 else nb))
        self.dints = np.array([len(moving)] + moving + [v for row in rows for v in row],
                              dtype=np.intp)

    @staticmethod
    def scratch_size(nb):
        """Return the length of the scratch buffer of a tree of ``nb`` bodies."""
        return (nb + 1) * S_WIDTH + T_WIDTH

    def pack(self, ints, floats, work_size):
        """
        Return ``(tables, floats_all)`` for :func:`rnea_one`, and take views of them.

        ``ints``, ``floats``: the loops' tables (:mod:`.loops`); ``work_size``: the length of
        a workspace's ``work``. ``self.dints`` and ``self.dfloats`` become views of the
        packing, so the tables exist once; the caller takes its own views of ``ints`` and
        ``floats`` (``tables[:len(ints)]``, ``floats_all[:len(floats)]``).
        """
        tables = np.concatenate([ints, self.dints, [len(ints), len(floats), work_size]])
        tables = tables.astype(np.intp)
        floats_all = np.concatenate([floats, self.dfloats])
        self.dints = tables[len(ints):len(tables) - 3]
        self.dfloats = floats_all[len(floats):]
        return tables, floats_all


def _merged_bodies(tree):
    """
    Return ``(anchor, mass, com, inertia)``: fixed bodies merged into the moving ones.

    ``anchor[i]``: the moving body that body i is welded to (itself if it moves, -1 for the
    world). The moving bodies' mass properties, in their own frames, include every body welded
    to them (parallel-axis theorem); the others' are zero.
    """
    nb = tree.nb
    anchor = np.full(nb, -1, dtype=np.intp)
    placed = [None] * nb                    # (R, p) of each body in its anchor's frame
    for i in range(nb):
        p = tree.parent[i]
        if tree.coord[i] >= 0:
            anchor[i], placed[i] = i, (np.eye(3), np.zeros(3))
        elif p >= 0 and anchor[p] >= 0:     # a fixed joint's pose in its parent: A0, b0
            R, t = placed[p]
            anchor[i], placed[i] = anchor[p], (R @ tree.A0[i], t + R @ tree.b0[i])
    mass, com, inertia = np.zeros(nb), np.zeros((nb, 3)), np.zeros((nb, 3, 3))
    parts = [[] for _ in range(nb)]
    for i in range(nb):
        if anchor[i] >= 0:
            R, t = placed[i]
            parts[anchor[i]].append((tree.mass[i], t + R @ tree.com[i],
                                     R @ tree.inertia[i] @ R.T))
    for a, items in enumerate(parts):
        if not items:
            continue
        total = sum(m for m, _, _ in items)
        mass[a] = total
        com[a] = sum(m * c for m, c, _ in items) / total if total > 0 else 0.0
        for m, c, J in items:
            d = c - com[a]
            inertia[a] += J + m * (d @ d * np.eye(3) - np.outer(d, d))
    return anchor, mass, com, inertia


def _body_terms(ints, floats, work, dints, dfloats, scratch):
    """Write each moving body's S and its m, h, J_O (about W's origin) into ``scratch``."""
    nb, nm = ints[0], dints[0]
    base = 1 + nm
    x = 16 * nb                 # XT_WB[i, j, r] = work[x + 16 i + 4 j + r]; R_WB[r, j]
    tmp = (nb + 1) * S_WIDTH
    RJ = scratch[tmp + T_RJ:tmp + T_RJ + 9]
    cw = scratch[tmp + T_CW:tmp + T_CW + 3]
    for m in range(nm):
        i = dints[1 + m]
        r = base + DI_WIDTH * i
        p, c = dints[r + DI_PARENT], dints[r + DI_C]      # its joint's axis: in its parent
        d = i * D_WIDTH
        s = i * S_WIDTH
        for e in range(6):
            scratch[s + S_S + e] = 0.0
        if c >= 0:
            xp = x + 16 * p
            ax0, ax1, ax2 = (dfloats[d + D_AXIS], dfloats[d + D_AXIS + 1],
                             dfloats[d + D_AXIS + 2])
            or0, or1, or2 = (dfloats[d + D_ORIGIN], dfloats[d + D_ORIGIN + 1],
                             dfloats[d + D_ORIGIN + 2])
            w0 = work[xp] * ax0 + work[xp + 4] * ax1 + work[xp + 8] * ax2
            w1 = work[xp + 1] * ax0 + work[xp + 5] * ax1 + work[xp + 9] * ax2
            w2 = work[xp + 2] * ax0 + work[xp + 6] * ax1 + work[xp + 10] * ax2
            o0 = work[xp + 12] + work[xp] * or0 + work[xp + 4] * or1 + work[xp + 8] * or2
            o1 = work[xp + 13] + work[xp + 1] * or0 + work[xp + 5] * or1 + work[xp + 9] * or2
            o2 = work[xp + 14] + work[xp + 2] * or0 + work[xp + 6] * or1 + work[xp + 10] * or2
            rot, tr = dfloats[d + D_ROT], dfloats[d + D_TR]
            scratch[s + S_S] = rot * w0
            scratch[s + S_S + 1] = rot * w1
            scratch[s + S_S + 2] = rot * w2
            scratch[s + S_S + 3] = rot * (o1 * w2 - o2 * w1) + tr * w0
            scratch[s + S_S + 4] = rot * (o2 * w0 - o0 * w2) + tr * w1
            scratch[s + S_S + 5] = rot * (o0 * w1 - o1 * w0) + tr * w2
        xb = x + 16 * i
        m = dfloats[d + D_MASS]
        k0, k1, k2 = dfloats[d + D_COM], dfloats[d + D_COM + 1], dfloats[d + D_COM + 2]
        c0 = work[xb + 12] + work[xb] * k0 + work[xb + 4] * k1 + work[xb + 8] * k2
        c1 = work[xb + 13] + work[xb + 1] * k0 + work[xb + 5] * k1 + work[xb + 9] * k2
        c2 = work[xb + 14] + work[xb + 2] * k0 + work[xb + 6] * k1 + work[xb + 10] * k2
        scratch[s + S_M] = m
        scratch[s + S_H] = m * c0
        scratch[s + S_H + 1] = m * c1
        scratch[s + S_H + 2] = m * c2
        cc = c0 * c0 + c1 * c1 + c2 * c2
        # J_O = R J_c R^T + m (|c|² E - c c^T), symmetric: RJ = R J_c first.
        cw[0], cw[1], cw[2] = c0, c1, c2
        for r in range(3):
            R0, R1, R2 = work[xb + r], work[xb + 4 + r], work[xb + 8 + r]
            for t in range(3):
                RJ[3 * r + t] = (R0 * dfloats[d + D_INERTIA + t]
                                 + R1 * dfloats[d + D_INERTIA + 3 + t]
                                 + R2 * dfloats[d + D_INERTIA + 6 + t])
        for r in range(3):
            for t in range(r, 3):
                acc = (RJ[3 * r] * work[xb + t] + RJ[3 * r + 1] * work[xb + 4 + t]
                       + RJ[3 * r + 2] * work[xb + 8 + t]) - m * cw[r] * cw[t]
                if r == t:
                    acc += m * cc
                scratch[s + S_J + 3 * r + t] = acc
                scratch[s + S_J + 3 * t + r] = acc


def _inertia_times(scratch, s, a0, a1, a2, b0, b1, b2, out):
    """Write ``I [a; b] = [J a + h x b; m b + a x h]`` of the inertia at ``s`` into out."""
    m = scratch[s + S_M]
    h0, h1, h2 = scratch[s + S_H], scratch[s + S_H + 1], scratch[s + S_H + 2]
    j = s + S_J
    out[0] = scratch[j] * a0 + scratch[j + 1] * a1 + scratch[j + 2] * a2 + h1 * b2 - h2 * b1
    out[1] = scratch[j + 3] * a0 + scratch[j + 4] * a1 + scratch[j + 5] * a2 + h2 * b0 - h0 * b2
    out[2] = scratch[j + 6] * a0 + scratch[j + 7] * a1 + scratch[j + 8] * a2 + h0 * b1 - h1 * b0
    out[3] = m * b0 + a1 * h2 - a2 * h1
    out[4] = m * b1 + a2 * h0 - a0 * h2
    out[5] = m * b2 + a0 * h1 - a1 * h0


def rnea(q, v, a, with_gravity, ints, floats, work, dints, dfloats, scratch, tau):
    """Write ``tau`` (nq) of one configuration: :func:`..newton_euler.inverse_dynamics`."""
    frames(q, ints, floats, work)
    _body_terms(ints, floats, work, dints, dfloats, scratch)
    _rnea_pass(v, a, with_gravity, ints, dints, dfloats, scratch, tau)


def _rnea_pass(v, a, with_gravity, ints, dints, dfloats, scratch, tau):
    """Newton-Euler on the body terms already in ``scratch``."""
    nb = ints[0]
    g = nb * D_WIDTH
    w = nb * S_WIDTH                    # the world
    for e in range(6):
        scratch[w + S_V + e] = 0.0
        scratch[w + S_A + e] = 0.0
        scratch[w + S_F + e] = 0.0
    if with_gravity:
        for r in range(3):
            scratch[w + S_A + 3 + r] = -dfloats[g + r]
    tmp = (nb + 1) * S_WIDTH
    Iv = scratch[tmp + T_IV:tmp + T_IV + 6]
    Ia = scratch[tmp + T_IA:tmp + T_IA + 6]
    nm = dints[0]
    base = 1 + nm
    for m in range(nm):
        i = dints[1 + m]
        r = base + DI_WIDTH * i
        p, k, c = dints[r + DI_UP], dints[r + DI_Q], dints[r + DI_C]
        s, sp = i * S_WIDTH, p * S_WIDTH
        for e in range(6):
            scratch[s + S_V + e] = scratch[sp + S_V + e]
            scratch[s + S_A + e] = scratch[sp + S_A + e]
        if c >= 0:
            mul = dfloats[i * D_WIDTH + D_MUL]
            vc, ac = mul * v[k], mul * a[k]
            for e in range(6):
                scratch[s + S_V + e] += scratch[s + S_S + e] * vc
                scratch[s + S_A + e] += scratch[s + S_S + e] * ac
            w0, w1, w2 = scratch[s + S_V], scratch[s + S_V + 1], scratch[s + S_V + 2]
            l0, l1, l2 = scratch[s + S_V + 3], scratch[s + S_V + 4], scratch[s + S_V + 5]
            u0, u1, u2 = (scratch[s + S_S] * vc, scratch[s + S_S + 1] * vc,
                          scratch[s + S_S + 2] * vc)
            t0, t1, t2 = (scratch[s + S_S + 3] * vc, scratch[s + S_S + 4] * vc,
                          scratch[s + S_S + 5] * vc)
            # A += V x (S v_c): [w x u; w x t + l x u]
            scratch[s + S_A] += w1 * u2 - w2 * u1
            scratch[s + S_A + 1] += w2 * u0 - w0 * u2
            scratch[s + S_A + 2] += w0 * u1 - w1 * u0
            scratch[s + S_A + 3] += w1 * t2 - w2 * t1 + l1 * u2 - l2 * u1
            scratch[s + S_A + 4] += w2 * t0 - w0 * t2 + l2 * u0 - l0 * u2
            scratch[s + S_A + 5] += w0 * t1 - w1 * t0 + l0 * u1 - l1 * u0
        V = scratch[s + S_V:s + S_V + 6]
        A = scratch[s + S_A:s + S_A + 6]
        _inertia_times(scratch, s, V[0], V[1], V[2], V[3], V[4], V[5], Iv)
        _inertia_times(scratch, s, A[0], A[1], A[2], A[3], A[4], A[5], Ia)
        w0, w1, w2, l0, l1, l2 = V[0], V[1], V[2], V[3], V[4], V[5]
        # F = I A + V x* (I V): [w x n + l x f; w x f]
        scratch[s + S_F] = Ia[0] + w1 * Iv[2] - w2 * Iv[1] + l1 * Iv[5] - l2 * Iv[4]
        scratch[s + S_F + 1] = Ia[1] + w2 * Iv[0] - w0 * Iv[2] + l2 * Iv[3] - l0 * Iv[5]
        scratch[s + S_F + 2] = Ia[2] + w0 * Iv[1] - w1 * Iv[0] + l0 * Iv[4] - l1 * Iv[3]
        scratch[s + S_F + 3] = Ia[3] + w1 * Iv[5] - w2 * Iv[4]
        scratch[s + S_F + 4] = Ia[4] + w2 * Iv[3] - w0 * Iv[5]
        scratch[s + S_F + 5] = Ia[5] + w0 * Iv[4] - w1 * Iv[3]
    for e in range(tau.shape[0]):
        tau[e] = 0.0
    for m in range(nm - 1, -1, -1):
        i = dints[1 + m]
        r = base + DI_WIDTH * i
        p, k, c = dints[r + DI_UP], dints[r + DI_Q], dints[r + DI_C]
        s, sp = i * S_WIDTH, p * S_WIDTH
        for e in range(6):
            scratch[sp + S_F + e] += scratch[s + S_F + e]
        if c >= 0:
            t = 0.0
            for e in range(6):
                t += scratch[s + S_S + e] * scratch[s + S_F + e]
            tau[k] += dfloats[i * D_WIDTH + D_MUL] * t


def crba(q, ints, floats, work, dints, dfloats, scratch, M):
    """Write ``M`` (nq, nq) of one configuration: :func:`..newton_euler.mass_matrix`."""
    frames(q, ints, floats, work)
    _body_terms(ints, floats, work, dints, dfloats, scratch)
    _crba_pass(ints, dints, dfloats, scratch, M)


def _crba_pass(ints, dints, dfloats, scratch, M):
    """Composite bodies on the body terms in ``scratch`` (which it sums into subtrees)."""
    nb, nm = ints[0], dints[0]
    base = 1 + nm
    for m in range(nm - 1, -1, -1):             # composite inertias, leaves first
        i = dints[1 + m]
        p = dints[base + DI_WIDTH * i + DI_UP]
        if p < nb:
            s, sp = i * S_WIDTH, p * S_WIDTH
            for e in range(S_M, S_WIDTH):
                scratch[sp + e] += scratch[s + e]
    M[:, :] = 0.0
    tmp = (nb + 1) * S_WIDTH
    F = scratch[tmp + T_F:tmp + T_F + 6]
    for m in range(nm):
        i = dints[1 + m]
        ki = dints[base + DI_WIDTH * i + DI_Q]
        s = i * S_WIDTH
        S = scratch[s + S_S:s + S_S + 6]
        _inertia_times(scratch, s, S[0], S[1], S[2], S[3], S[4], S[5], F)
        mi = dfloats[i * D_WIDTH + D_MUL]
        j = i
        while j < nb:
            kj = dints[base + DI_WIDTH * j + DI_Q]
            sj = j * S_WIDTH
            val = 0.0
            for e in range(6):
                val += scratch[sj + S_S + e] * F[e]
            val *= mi * dfloats[j * D_WIDTH + D_MUL]
            M[ki, kj] += val
            if j != i:
                M[kj, ki] += val
            j = dints[base + DI_WIDTH * j + DI_UP]


def forward_dynamics(q, v, tau, ints, floats, work, dints, dfloats, scratch, M, a):
    """
    Write ``a = M^-1 (tau - nle)`` of one configuration into ``a``; False if M is singular.

    One frames pass for both: Newton-Euler with no acceleration (the nonlinear effects,
    into ``a``), then the composite bodies (``M``), then Cholesky's ``M = L L^T`` in place
    of M's lower triangle and two triangular solves.
    """
    n = a.shape[0]
    frames(q, ints, floats, work)
    _body_terms(ints, floats, work, dints, dfloats, scratch)
    _rnea_pass(v, np.zeros(n), True, ints, dints, dfloats, scratch, a)      # a = nle
    _crba_pass(ints, dints, dfloats, scratch, M)
    for k in range(n):
        a[k] = tau[k] - a[k]
    for j in range(n):
        d = M[j, j]
        for k in range(j):
            d -= M[j, k] * M[j, k]
        if not d > 0.0:
            return False
        d = np.sqrt(d)
        M[j, j] = d
        for i in range(j + 1, n):
            x = M[i, j]
            for k in range(j):
                x -= M[i, k] * M[j, k]
            M[i, j] = x / d
    for i in range(n):                          # L y = rhs
        x = a[i]
        for k in range(i):
            x -= M[i, k] * a[k]
        a[i] = x / M[i, i]
    for i in range(n - 1, -1, -1):              # L^T a = y
        x = a[i]
        for k in range(i + 1, n):
            x -= M[k, i] * a[k]
        a[i] = x / M[i, i]
    return True


def forward_dynamics_batch(Q, V, T, ints, floats, work, dints, dfloats, scratch, M, A):
    """Write ``A`` (N, nq): :func:`forward_dynamics` of each row; False if any M is singular."""
    for n in range(Q.shape[0]):
        if not forward_dynamics(Q[n], V[n], T[n], ints, floats, work, dints, dfloats, scratch,
                                M, A[n]):
            return False
    return True


def rnea_one(q, v, a, tables, floats_all, buffer, tau):
    """
    :func:`rnea` with gravity, its tables packed in three arrays; False if a length is wrong.

    numba types every argument of a call, so the one-configuration call (a controller's,
    once a tick) passes seven instead of eleven: ``tables`` is ``ints``, ``dints`` and
    their lengths (:meth:`DynamicsTables.pack`), ``floats_all`` ``floats`` then
    ``dfloats``, ``buffer`` the workspace's ``work`` then ``scratch``. Writes nothing
    unless ``q``, ``v``, ``a`` and ``tau`` all have nq entries.
    """
    ints, dints, floats, dfloats, work, scratch = _unpack(tables, floats_all, buffer)
    n = ints[2]
    if q.shape[0] != n or v.shape[0] != n or a.shape[0] != n or tau.shape[0] != n:
        return False
    rnea(q, v, a, True, ints, floats, work, dints, dfloats, scratch, tau)
    return True


def crba_one(q, tables, floats_all, buffer, M):
    """:func:`crba` on the packed tables of :func:`rnea_one`; False if a size is wrong."""
    ints, dints, floats, dfloats, work, scratch = _unpack(tables, floats_all, buffer)
    n = ints[2]
    if q.shape[0] != n or M.shape[0] != n or M.shape[1] != n:
        return False
    crba(q, ints, floats, work, dints, dfloats, scratch, M)
    return True


def rnea_batch(Q, V, A, with_gravity, ints, floats, work, dints, dfloats, scratch, tau):
    """Write ``tau`` (N, nq): :func:`rnea` of each row."""
    for n in range(Q.shape[0]):
        rnea(Q[n], V[n], A[n], with_gravity, ints, floats, work, dints, dfloats, scratch,
             tau[n])


def crba_batch(Q, ints, floats, work, dints, dfloats, scratch, M):
    """Write ``M`` (N, nq, nq): :func:`crba` of each row."""
    for n in range(Q.shape[0]):
        crba(Q[n], ints, floats, work, dints, dfloats, scratch, M[n])


def kernels():
    """Return the loops to call, as :func:`.loops.kernels` (these call its :func:`.frames`)."""
    from ..._shared import ahead
    return ahead.kernels(__name__, _NOT_COMPILED)
