"""
The reference dynamics: inverse dynamics (Newton-Euler) and the mass matrix (composite bodies).

numpy over a batch, batch-last like :meth:`.numpy_backend.NumpyBackend.frames_batch`: every
quantity of a body is an array of its (N) configurations, one numpy call per body and step.
The compiled twin is :mod:`.kernels.dynamics`; the two agree to 1e-12 of each output's scale
(test_dynamics.py), and both agree with Pinocchio's ``rnea``/``crba``.

Everything is written in the world frame W, spatial vectors taken at W's origin
(NOTATION.md, "Dynamics"): a motion ``[w; v]`` (angular velocity, velocity of the body
point at W's origin) and a force ``[n; f]`` (moment about W's origin, force). Then no
vector is ever transformed between bodies, and a body's quantities simply add:

* joint k's motion per unit coordinate velocity: ``S = [rot w; rot (o x w) + tr w]``, ``w``
  its world axis through the point ``o`` (rot, tr: :mod:`.tree`); a coordinate's velocity
  is ``m v[driver]`` (mimics: m the multiplier);
* velocity and acceleration: ``V_i = V_p + S v_c``, ``A_i = A_p + S a_c + V_i x (S v_c)``,
  from ``V_W = 0``, ``A_W = [0; -g]`` (gravity as an upward acceleration of the world);
* a body's spatial inertia about W's origin, from its mass m, first moment ``h = m c``
  (c its world centre of mass) and rotational inertia ``J_O = J_c + m (|c|² E - c c^T)``:
  ``I [a; b] = [J_O a + h x b; m b + a x h]``;
* inverse dynamics: ``f_i = I_i A_i + V_i x* (I_i V_i)`` (``[w; v] x* [n; f] = [w x n +
  v x f; w x f]``), summed from the leaves, ``tau_c = S . F_i``, folded onto the
  independent joints (``tau = fold tau_c``): Pinocchio's ``rnea`` sign, the torques the
  joints must apply (at rest, the holding torque ``-tau_g``);
* mass matrix: composite inertias (m, h, J_O summed over each subtree), ``M_c[i, j] = S_j
  . (I_sub_i S_i)`` for every joint j at or above i's body, folded ``fold M_c fold^T``.
"""

import numpy as np


def _cross(a, b, out=None):
    """Return ``a x b`` of two (3, N) arrays (rows x, y, z)."""
    if out is None:
        out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]
    return out


class BodyFrames:
    """Per body of a batch, batch-last: the world quantities both algorithms read."""

    def __init__(self, tree, XT_WB, mass_properties=True):
        nb, n = tree.nb, XT_WB.shape[-1]
        R = XT_WB[:, :3]                            # [i, j, r]: R_WB_i[r, j]
        p = XT_WB[:, 3]                             # (nb + 1, 3, N)
        # Joint axes: world axis w and the point o of each body's joint (in its parent).
        par = [pp if pp >= 0 else nb for pp in tree.parent]
        self.S = np.zeros((nb, 6, n))
        for i in np.flatnonzero(tree.coord >= 0):
            Rp, pp = R[par[i]], p[par[i]]
            w = np.einsum('jrn,j->rn', Rp, tree.axis_P[i])
            o = pp + np.einsum('jrn,j->rn', Rp, tree.p_PJ[i])
            self.S[i, :3] = tree.rot[i] * w
            self.S[i, 3:] = tree.rot[i] * _cross(o, w) + tree.tr[i] * w
        if not mass_properties:         # the joints' motions only (the regressor's need)
            return
        # Mass properties about W's origin: m, h = m c, J_O.
        c = p[:nb] + np.einsum('ijrn,ij->irn', R[:nb], tree.com)
        self.h = tree.mass[:, None, None] * c
        J = np.einsum('iarn,iab,ibsn->irsn', R[:nb], tree.inertia, R[:nb])
        cc = np.einsum('irn,irn->in', c, c)
        J += tree.mass[:, None, None, None] * (
            np.eye(3)[None, :, :, None] * cc[:, None, None, :]
            - np.einsum('irn,isn->irsn', c, c))
        self.J = J                                  # (nb, 3, 3, N)
        self.m = tree.mass


def _inertia_times(J, h, m, a, b):
    """Return ``I [a; b] = [J a + h x b; m b + a x h]`` for one body (arrays (3, N))."""
    top = np.einsum('rsn,sn->rn', J, a) + _cross(h, b)
    return top, m * b + _cross(a, h)


def inverse_dynamics(tree, frames, v, a, gravity=True):
    """
    Return ``tau`` (N, nq) for velocities ``v`` and accelerations ``a`` (N, nq).

    ``frames``: :class:`BodyFrames` of the same N configurations. ``gravity`` False leaves
    the world unaccelerated (the velocity and acceleration terms only).
    """
    nb, n = tree.nb, v.shape[0]
    par = [pp if pp >= 0 else nb for pp in tree.parent]
    V = np.zeros((nb + 1, 6, n))
    A = np.zeros((nb + 1, 6, n))
    if gravity:
        A[nb, 3:] = -np.asarray(tree.gravity)[:, None]
    F = np.zeros((nb + 1, 6, n))
    for i in range(nb):
        V[i], A[i] = V[par[i]], A[par[i]]
        c = tree.coord[i]
        if c >= 0:
            k, m = tree.qidx[i], tree.qmul[i]
            Sv = frames.S[i] * (m * v[:, k])
            V[i] += Sv
            A[i] += frames.S[i] * (m * a[:, k])
            w, lin = V[i, :3], V[i, 3:]
            A[i, :3] += _cross(w, Sv[:3])
            A[i, 3:] += _cross(w, Sv[3:]) + _cross(lin, Sv[:3])
        J, h, m = frames.J[i], frames.h[i], frames.m[i]
        n_a, f_a = _inertia_times(J, h, m, A[i, :3], A[i, 3:])
        n_v, f_v = _inertia_times(J, h, m, V[i, :3], V[i, 3:])
        w, lin = V[i, :3], V[i, 3:]
        F[i, :3] = n_a + _cross(w, n_v) + _cross(lin, f_v)
        F[i, 3:] = f_a + _cross(w, f_v)
    tau_c = np.zeros((n, tree.nc))
    for i in range(nb - 1, -1, -1):
        F[par[i]] += F[i]
        c = tree.coord[i]
        if c >= 0:
            tau_c[:, c] = np.einsum('kn,kn->n', frames.S[i], F[i])
    return tau_c if tree.fold is None else tau_c @ tree.fold.T


def mass_matrix(tree, frames):
    """Return ``M`` (N, nq, nq) of the configurations of ``frames``."""
    nb = tree.nb
    n = frames.S.shape[-1]
    m = frames.m.astype(float).copy()
    h, J = frames.h.copy(), frames.J.copy()
    for i in range(nb - 1, -1, -1):              # composite inertias, leaves first
        p = tree.parent[i]
        if p >= 0:
            m[p] += m[i]
            h[p] += h[i]
            J[p] += J[i]
    M_c = np.zeros((n, tree.nc, tree.nc))
    for i in np.flatnonzero(tree.coord >= 0):
        S = frames.S[i]
        top, bottom = _inertia_times(J[i], h[i], m[i], S[:3], S[3:])
        F = np.concatenate([top, bottom])
        c = tree.coord[i]
        above = np.flatnonzero(tree.on_path[i])     # coordinates at or above body i
        bodies = tree.joint_body[above]
        values = np.einsum('jkn,kn->nj', frames.S[bodies], F)
        M_c[:, c, above] = values
        M_c[:, above, c] = values
    if tree.fold is None:
        return M_c
    return np.einsum('kc,ncd,ld->nkl', tree.fold, M_c, tree.fold)
