"""
The compiled loops of the numba backend: the chain algorithms walking the tree once per call.

The same formulas as the numpy reference (:mod:`..tree`, :mod:`..numpy_backend`), written as
loops over the bodies so that one call has no per-body Python overhead: a humanoid's
gravity costs a few microseconds instead of a numpy call per body. One difference of form:
``sin(a)`` and ``sin²(a/2)`` come from one ``sin``/``cos`` pair of ``a/2`` (``sin a = 2
sin(a/2) cos(a/2)``), which the compiler fuses into one ``sincos``. Compiled on first use
and cached on disk by numba (next to this file, or in numba's user cache directory when
that is read-only), so only the first process on a machine pays for the compilation; or
compiled ahead of time into a module that loads no numba (:mod:`..._shared.ahead`), which
:func:`kernels` returns where it is built. Importing this module loads no numba.

Every loop takes the model as two flat arrays and a work buffer (:mod:`.backend` packs
them): numba types every argument of every call (tens of nanoseconds each), so a call
passes few arrays, and each loop takes its tables apart once.

* ``ints``, the tree: ``nb, nc, nq``, then per body (parent, coordinate or -1), then per
  coordinate (body, parent body, independent joint it folds onto); parents use ``nb`` for
  the world. Bodies come parents first (the model checks it), which is what lets the mass
  moments accumulate up the tree in one backwards loop.
* ``floats``, the tables: per body ``B_WIDTH`` numbers, per coordinate ``C_WIDTH``, then
  gravity (column offsets below).
* ``work``: ``XT_PB`` (nb, 16), ``XT_WB`` (nb + 1, 4, 4, the world last), then the mass
  moments ``S`` (nb, 3), then the coordinates' forces ``tau_c`` (nc); the layouts of the
  numpy workspace (NOTATION.md: transposed poses).
"""

import numpy as np

from ..._shared import loops as _loops

# Columns of the per-body table: the angle a = q zr + zr0 and the translation
# t = q zt + zt0 of the body's joint (mimics: scale and offset folded in), mass, com,
# then HT (4, 16): XT_PB = HT[0] + sin(a) HT[1] + sin²(a/2) HT[2] + t HT[3].
B_ZR, B_ZR0, B_ZT, B_ZT0, B_MASS, B_COM, B_HT, B_WIDTH = 0, 1, 2, 3, 4, 5, 8, 72
# Columns of the per-coordinate table: axis in the parent, joint origin in the parent,
# rot, tr, tr * subtree mass, subtree mass, mimic multiplier.
C_AXIS, C_ORIGIN, C_ROT, C_TR, C_TRM, C_MSUB, C_MUL, C_WIDTH = 0, 3, 6, 7, 8, 9, 10, 11

COMPILED = _loops.installed()      # the backend asked for kernels: numba's, where installed
JIT_OPTIONS = {}
_NOT_COMPILED = ('kernels',)
_compiled = None

# The loops index the flat arrays themselves: a reshape inside a loop costs about as much
# as a body's frame.


def frames(q, ints, floats, work):
    """Fill ``XT_PB`` and ``XT_WB`` of ``work`` for the configuration ``q``."""
    nb = ints[0]
    x = 16 * nb                                  # XT_WB[i, j, r] = work[x + 16 i + 4 j + r]
    for b in range(nb):
        p, k = ints[3 + 2 * b], ints[4 + 2 * b]
        o = b * B_WIDTH
        qv = q[k] if k >= 0 else 0.0
        h = 0.5 * (qv * floats[o + B_ZR] + floats[o + B_ZR0])
        t = qv * floats[o + B_ZT] + floats[o + B_ZT0]
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
        if t == 0.0:                # a revolute or fixed joint: no translation term
            if h == 0.0:
                for e in range(16):
                    work[lb + e] = floats[o + e]
            else:
                for e in range(16):
                    work[lb + e] = (floats[o + e] + s1 * floats[o + 16 + e]
                                    + s2 * floats[o + 32 + e])
        else:
            for e in range(16):
                work[lb + e] = (floats[o + e] + s1 * floats[o + 16 + e]
                                + s2 * floats[o + 32 + e] + t * floats[o + 48 + e])
        xb = x + 16 * b
        xp = x + 16 * p
        # XT_WB = XT_PB XT_WP; XT_PB's last column is (0, 0, 0, 1).
        for j in range(4):
            l0, l1, l2 = work[lb + 4 * j], work[lb + 4 * j + 1], work[lb + 4 * j + 2]
            for r in range(3):
                work[xb + 4 * j + r] = (l0 * work[xp + r] + l1 * work[xp + 4 + r]
                                        + l2 * work[xp + 8 + r])
            work[xb + 4 * j + 3] = 0.0
        for r in range(3):
            work[xb + 12 + r] += work[xp + 12 + r]
        work[xb + 15] = 1.0


def gravity(ints, floats, work, tau):
    """Fill ``tau`` (folded onto the independent joints) and return ``V``, from ``XT_WB``."""
    nb, nc = ints[0], ints[1]
    x, s, tc = 16 * nb, 32 * nb + 16, 35 * nb + 16
    for b in range(nb):          # S_b = m_b p_WBcm_b, then summed over the subtree
        o = b * B_WIDTH
        m = floats[o + B_MASS]
        c0, c1, c2 = floats[o + B_COM], floats[o + B_COM + 1], floats[o + B_COM + 2]
        xb = x + 16 * b
        for r in range(3):
            work[s + 3 * b + r] = m * (c0 * work[xb + r] + c1 * work[xb + 4 + r]
                                       + c2 * work[xb + 8 + r] + work[xb + 12 + r])
    m0 = 0.0
    m1 = 0.0
    m2 = 0.0
    for b in range(nb - 1, -1, -1):
        p = ints[3 + 2 * b]
        sb = s + 3 * b
        if p < nb:
            sp = s + 3 * p
            work[sp] += work[sb]
            work[sp + 1] += work[sb + 1]
            work[sp + 2] += work[sb + 2]
        else:
            m0 += work[sb]
            m1 += work[sb + 1]
            m2 += work[sb + 2]
    tau[:] = 0.0
    gi = nb * B_WIDTH + nc * C_WIDTH
    g0, g1, g2 = floats[gi], floats[gi + 1], floats[gi + 2]
    ci = 3 + 2 * nb
    for c in range(nc):
        b, p, k = ints[ci + 3 * c], ints[ci + 3 * c + 1], ints[ci + 3 * c + 2]
        o = nb * B_WIDTH + c * C_WIDTH
        a0, a1, a2 = floats[o + C_AXIS], floats[o + C_AXIS + 1], floats[o + C_AXIS + 2]
        j0, j1, j2 = floats[o + C_ORIGIN], floats[o + C_ORIGIN + 1], floats[o + C_ORIGIN + 2]
        xp = x + 16 * p
        w0 = a0 * work[xp] + a1 * work[xp + 4] + a2 * work[xp + 8]
        w1 = a0 * work[xp + 1] + a1 * work[xp + 5] + a2 * work[xp + 9]
        w2 = a0 * work[xp + 2] + a1 * work[xp + 6] + a2 * work[xp + 10]
        o0 = j0 * work[xp] + j1 * work[xp + 4] + j2 * work[xp + 8] + work[xp + 12]
        o1 = j0 * work[xp + 1] + j1 * work[xp + 5] + j2 * work[xp + 9] + work[xp + 13]
        o2 = j0 * work[xp + 2] + j1 * work[xp + 6] + j2 * work[xp + 10] + work[xp + 14]
        rot, msub, trm = floats[o + C_ROT], floats[o + C_MSUB], floats[o + C_TRM]
        sb = s + 3 * b
        r0 = rot * (work[sb] - msub * o0)
        r1 = rot * (work[sb + 1] - msub * o1)
        r2 = rot * (work[sb + 2] - msub * o2)
        # w . (r x g + trM g)
        tau_c = (w0 * (r1 * g2 - r2 * g1 + trm * g0)
                 + w1 * (r2 * g0 - r0 * g2 + trm * g1)
                 + w2 * (r0 * g1 - r1 * g0 + trm * g2))
        work[tc + c] = tau_c
        # Mimics: q_c = mul_c q[driver_c] (+ offset), so the forces fold back.
        tau[k] += floats[o + C_MUL] * tau_c
    return -(m0 * g0 + m1 * g1 + m2 * g2)


def one(q, ints, floats, work, poses, tau, want_poses, want_gravity):
    """Frames of ``q``, then the poses (nb, 4, 4) and ``tau``; return ``V`` (or 0)."""
    frames(q, ints, floats, work)
    if want_poses:
        x = 16 * ints[0]
        for b in range(poses.shape[0]):
            for r in range(4):
                for j in range(4):
                    poses[b, r, j] = work[x + 16 * b + 4 * j + r]
    if not want_gravity:
        return 0.0
    return gravity(ints, floats, work, tau)


def gravity_one(q, tables, floats_all, buffer, tau):
    """
    :func:`gravity` of one configuration on packed tables; False if a size is wrong.

    The packing of :func:`.dynamics.rnea_one` (five arguments for numba to type instead of
    eight); the same loops as :func:`one`, so the same bits as a batch's row.
    """
    ints, _, floats, _, work, _ = unpack(tables, floats_all, buffer)
    n = ints[2]
    if q.shape[0] != n or tau.shape[0] != n:
        return False
    frames(q, ints, floats, work)
    gravity(ints, floats, work, tau)
    return True


def unpack(tables, floats_all, buffer):
    """
    Return the views ``(ints, dints, floats, dfloats, work, scratch)`` of a packing.

    ``tables``: ``ints``, the dynamics' ``dints``, then the lengths of ``ints``, ``floats``
    and ``work`` (:meth:`.dynamics.DynamicsTables.pack`); ``floats_all``: ``floats`` then
    ``dfloats``; ``buffer``: a workspace's ``work`` then the dynamics' scratch.
    """
    e = tables.shape[0] - 3
    ni, nf, nw = tables[e], tables[e + 1], tables[e + 2]
    return (tables[:ni], tables[ni:e], floats_all[:nf], floats_all[nf:], buffer[:nw],
            buffer[nw:])


def batch(Q, ints, floats, work, poses, tau, energy, want_poses, want_gravity):
    """
    Every row of ``Q`` (n, nq) into poses (n, nb, 4, 4), tau (n, nq) and energy (n).

    An output not wanted may be a (1, ...) placeholder: its row 0 is written over.
    """
    for n in range(Q.shape[0]):
        energy[n if want_gravity else 0] = one(
            Q[n], ints, floats, work, poses[n if want_poses else 0],
            tau[n if want_gravity else 0], want_poses, want_gravity)


def jacobians(ints, floats, work, on_path, bodies, points, J):
    """Fill ``J`` (n, 6, nq), [angular; linear], of each body point, from the frames."""
    nb, nc = ints[0], ints[1]
    x, ci = 16 * nb, 3 + 2 * nb
    J[:] = 0.0
    w = np.empty(3)
    o = np.empty(3)
    d = np.empty(3)
    for c in range(nc):
        p, k = ints[ci + 3 * c + 1], ints[ci + 3 * c + 2]
        f = nb * B_WIDTH + c * C_WIDTH
        xp = x + 16 * p
        for r in range(3):
            w[r] = (floats[f + C_AXIS] * work[xp + r]
                    + floats[f + C_AXIS + 1] * work[xp + 4 + r]
                    + floats[f + C_AXIS + 2] * work[xp + 8 + r])
            o[r] = (floats[f + C_ORIGIN] * work[xp + r]
                    + floats[f + C_ORIGIN + 1] * work[xp + 4 + r]
                    + floats[f + C_ORIGIN + 2] * work[xp + 8 + r] + work[xp + 12 + r])
        m, rot, tr = floats[f + C_MUL], floats[f + C_ROT], floats[f + C_TR]
        for i in range(bodies.shape[0]):
            b = bodies[i]
            if not on_path[b, c]:
                continue
            xb = x + 16 * b
            for r in range(3):
                d[r] = (points[i, 0] * work[xb + r] + points[i, 1] * work[xb + 4 + r]
                        + points[i, 2] * work[xb + 8 + r] + work[xb + 12 + r] - o[r])
            J[i, 0, k] += m * rot * w[0]
            J[i, 1, k] += m * rot * w[1]
            J[i, 2, k] += m * rot * w[2]
            J[i, 3, k] += m * (rot * (w[1] * d[2] - w[2] * d[1]) + tr * w[0])
            J[i, 4, k] += m * (rot * (w[2] * d[0] - w[0] * d[2]) + tr * w[1])
            J[i, 5, k] += m * (rot * (w[0] * d[1] - w[1] * d[0]) + tr * w[2])


def kernels():
    """
    Return the loops to call: compiled ahead of time where they can be, else by numba.

    Ahead of time (:mod:`..._shared.ahead`): a module that imports no numba, built once; else
    numba's just-in-time loops; else (no numba) this module.
    """
    from ..._shared import ahead
    return ahead.kernels(__name__, _NOT_COMPILED)
