"""
Vectorised chain algorithms over precomputed model arrays.

Body pose in its parent, with the joint's fixed transforms folded into constants::

    R_PB(q) = A0 + sin(a) A1 + (1 - cos(a)) A2          a = rot q   (rotation, rad)
    p_PB(q) = b0 + sin(a) b1 + (1 - cos(a)) b2 + (tr q) axis_P

where ``A0 = R_PJ R_JB``, ``A1 = R_PJ K R_JB``, ``A2 = R_PJ K² R_JB`` (Rodrigues'
formula, ``K = [axis]x``), ``b0 = p_PJ + R_PJ p_JB``, ``b1 = R_PJ K p_JB``,
``b2 = R_PJ K² p_JB``, ``axis_P = R_PJ axis``, ``rot`` the rotation and ``tr`` the
translation per unit q (revolute 1 / 0, prismatic 0 / 1, screw 1 / pitch / 2 pi,
fixed 0 / 0). Poses compose down the tree: ``R_WB = R_WP R_PB``,
``p_WB = p_WP + R_WP p_PB``.

Two layouts run the same formulas. One configuration builds every ``X_PB`` as a
4x4 in one ``einsum`` and composes the tree by pointer jumping: ``P[i] =
P[jump[i]] @ P[i]`` for all bodies at once, ``ceil(log2(depth))`` times, so the
number of numpy calls does not grow with the number of bodies. A batch uses
batch-last arrays ``(3, 3, N)`` so every matrix entry is one contiguous vector
(``einsum`` products per body), in chunks of :data:`CHUNK`.

Gravity uses subtree mass moments. With ``S_k = sum m_i p_WBcm_i`` and ``M_k =
sum m_i`` over the bodies moved by joint k, world axis ``w_k`` through point
``o_k``, and gravity ``g``::

    tau_g[k] = rot_k (S_k - M_k o_k) . (g x w_k) + tr_k M_k (g . w_k)

which is ``-dV/dq`` with ``V = -sum m_i g . p_WBcm_i``.
"""

import numpy as np

CHUNK = 4096     # configurations per chunk: keeps the per-body arrays in cache (bench)


class ChainKinematics:
    """Arrays describing a model's tree, and the algorithms that use them."""

    def __init__(self, bodies, gravity):
        nb = len(bodies)
        index = {b.name: i for i, b in enumerate(bodies)}
        self.nb = nb
        self.parent = [index.get(b.parent, -1) for b in bodies]          # -1: world
        movable = [i for i, b in enumerate(bodies) if b.joint.num_positions]
        self.nq = len(movable)
        self.qidx = [movable.index(i) if i in movable else -1 for i in range(nb)]
        self.qidx_arr = np.array([k if k >= 0 else self.nq for k in self.qidx], dtype=np.intp)
        self.joint_body = np.array(movable, dtype=np.intp)
        joints = [b.joint for b in bodies]
        self.rot = np.array([j.ROTATION_PER_Q for j in joints])
        self.tr = np.array([j.translation_per_q for j in joints])
        axis = np.array([j.axis for j in joints]).reshape(nb, 3)
        K = np.array([_skew(a) for a in axis]).reshape(nb, 3, 3)
        origin = np.array([j.origin for j in joints]).reshape(nb, 4, 4)
        child = np.array([j.child_transform for j in joints]).reshape(nb, 4, 4)
        R_PJ, p_PJ = origin[:, :3, :3], origin[:, :3, 3]
        R_JB, p_JB = child[:, :3, :3], child[:, :3, 3]
        KK = K @ K
        self.A0 = R_PJ @ R_JB
        self.A1 = R_PJ @ K @ R_JB
        self.A2 = R_PJ @ KK @ R_JB
        self.b0 = p_PJ + (R_PJ @ p_JB[..., None])[..., 0]
        self.b1 = (R_PJ @ K @ p_JB[..., None])[..., 0]
        self.b2 = (R_PJ @ KK @ p_JB[..., None])[..., 0]
        self.axis_P = (R_PJ @ axis[..., None])[..., 0]
        self.p_PJ = p_PJ.copy()
        self.mass = np.array([b.inertial.mass for b in bodies])
        self.com = np.array([b.inertial.com for b in bodies]).reshape(nb, 3)
        anc = np.zeros((nb, nb), dtype=bool)                 # anc[i, j]: j is i or above it
        for i in range(nb):
            j = i
            while j >= 0:
                anc[i, j] = True
                j = self.parent[j]
        self.subtree = anc[:, self.joint_body].T.astype(float)   # (nq, nb)
        self.on_path = anc[:, self.joint_body]                   # (nb, nq)
        self.M_sub = self.subtree @ self.mass
        self.rot_q = self.rot[self.joint_body]
        self.tr_q = self.tr[self.joint_body]
        # Parent of each joint's body, with the world as index nb (arrays carry it last).
        self.joint_parent = np.array([self.parent[i] if self.parent[i] >= 0 else nb
                                      for i in movable], dtype=np.intp)
        self.axis_Pq = self.axis_P[self.joint_body]
        self.p_PJq = self.p_PJ[self.joint_body]
        self.gravity = np.array(gravity, dtype=float)
        gx, gy, gz = self.gravity
        self.g_cross = np.array([[0.0, -gz, gy], [gz, 0.0, -gx], [-gy, gx, 0.0]])
        self.damping = np.array([joints[i].damping for i in movable])
        # Single-configuration path: X_PB = H . (1, sin, 1 - cos, tr q), and jump levels.
        H = np.zeros((nb, 4, 4, 4))
        H[:, 0, :3, :3], H[:, 0, :3, 3], H[:, 0, 3, 3] = self.A0, self.b0, 1.0
        H[:, 1, :3, :3], H[:, 1, :3, 3] = self.A1, self.b1
        H[:, 2, :3, :3], H[:, 2, :3, 3] = self.A2, self.b2
        H[:, 3, :3, 3] = self.axis_P
        self.H = H
        # Batch path: R_PB (9, N) = RA[i] (9, 3) @ (1, s, 1 - cos), p_PB (3, N) = PB[i] (3, 4) @ C.
        self.RA = np.stack([self.A0, self.A1, self.A2], axis=-1).reshape(nb, 9, 3)
        self.PB = np.stack([self.b0, self.b1, self.b2, self.axis_P], axis=-1)
        self.jump_levels = _jump_levels(self.parent)
        self.com_h = np.concatenate([self.com, np.ones((nb, 1))], axis=1)
        # Columns (axis_P, 0) and (p_PJ, 1): one product gives each joint's world axis and point.
        V = np.zeros((self.nq, 4, 2))
        V[:, :3, 0], V[:, :3, 1], V[:, 3, 1] = self.axis_Pq, self.p_PJq, 1.0
        self.axis_point = V
        self.trM = self.tr_q * self.M_sub

    # --- one configuration -------------------------------------------------------
    def frames_one(self, q):
        """Return ``X_W`` of every body, (nb + 1, 4, 4), with the world (identity) last."""
        q_ext = np.empty(self.nq + 1)          # per call: models are shared across threads
        q_ext[:self.nq] = q
        q_ext[self.nq] = 0.0
        qb = q_ext[self.qidx_arr]
        angle = qb * self.rot
        c = np.empty((self.nb, 4))
        c[:, 0] = 1.0
        c[:, 1] = np.sin(angle)
        c[:, 2] = 1.0 - np.cos(angle)
        c[:, 3] = qb * self.tr
        X = np.empty((self.nb + 1, 4, 4))
        X[:self.nb] = np.einsum('bk,bkij->bij', c, self.H)
        X[self.nb] = np.eye(4)
        for nodes, src in self.jump_levels:
            X[nodes] = X[src] @ X[nodes]
        return X

    def _joint_axes_one(self, X):
        wo = X[self.joint_parent, :3, :] @ self.axis_point
        return wo[..., 0], wo[..., 1]

    def _gravity_from_frames(self, X):
        mp = self.mass[:, None] * (X[:self.nb, :3, :] @ self.com_h[..., None])[..., 0]
        S = self.subtree @ mp
        w, o = self._joint_axes_one(X)
        r = S - self.M_sub[:, None] * o
        return self.rot_q * (r * (w @ self.g_cross.T)).sum(axis=1) + self.trM * (w @ self.gravity)

    def gravity_one(self, q):
        """Return ``tau_g`` (nq,) for one configuration."""
        return self._gravity_from_frames(self.frames_one(q))

    def poses_and_gravity_one(self, q):
        """Return ``(X_WB (nb, 4, 4), tau_g (nq,))`` from one kinematics pass."""
        X = self.frames_one(q)
        return X[:self.nb], self._gravity_from_frames(X)

    def energy_one(self, q):
        """Return ``V`` for one configuration."""
        X = self.frames_one(q)
        mp = self.mass[:, None] * (X[:self.nb, :3, :] @ self.com_h[..., None])[..., 0]
        return -float(mp.sum(axis=0) @ self.gravity)

    def homogeneous_one(self, q):
        """Return ``X_WB`` of every body, (nb, 4, 4)."""
        return self.frames_one(q)[:self.nb]

    def jacobian_one(self, q, body, point):
        """Return the geometric Jacobian [angular; linear] of a body point, (6, nq)."""
        X = self.frames_one(q)
        x = X[body, :3, :3] @ point + X[body, :3, 3]
        w, o = self._joint_axes_one(X)
        mask = self.on_path[body][:, None]
        j_w = self.rot_q[:, None] * w * mask
        j_v = (self.rot_q[:, None] * np.cross(w, x - o) + self.tr_q[:, None] * w) * mask
        return np.concatenate([j_w, j_v], axis=1).T

    # --- batches (batch-last layout inside) --------------------------------------
    def poses_batch(self, q):
        """Return lists of ``R_W`` (3, 3, N) and ``p_W`` (3, N) per body, world last."""
        n = q.shape[0]
        R = [None] * self.nb + [None]
        p = [None] * self.nb + [None]
        C = np.empty((4, n))
        C[0] = 1.0
        for i, par in enumerate(self.parent):
            k = self.qidx[i]
            if k >= 0:
                qk = q[:, k]
                if self.rot[i]:
                    angle = qk * self.rot[i]
                    np.sin(angle, out=C[1])
                    np.cos(angle, out=C[2])
                    np.subtract(1.0, C[2], out=C[2])
                else:
                    C[1:3] = 0.0
                np.multiply(qk, self.tr[i], out=C[3])
                R_PB = (self.RA[i] @ C[:3]).reshape(3, 3, n)
                p_PB = self.PB[i] @ C
            else:
                R_PB = np.broadcast_to(self.A0[i][..., None], (3, 3, n))
                p_PB = np.broadcast_to(self.b0[i][:, None], (3, n))
            if par < 0:
                R[i] = np.ascontiguousarray(R_PB)
                p[i] = np.ascontiguousarray(p_PB)
            else:
                R[i] = np.einsum('ikn,kjn->ijn', R[par], R_PB)
                p[i] = p[par] + np.einsum('ikn,kn->in', R[par], p_PB)
        R[self.nb] = np.broadcast_to(np.eye(3)[..., None], (3, 3, n))
        p[self.nb] = np.zeros((3, n))
        return R, p

    def _mass_moments_batch(self, R, p):
        return [self.mass[i] * (p[i] + np.einsum('ijn,j->in', R[i], self.com[i]))
                for i in range(self.nb)]

    def _gravity_batch(self, q):
        R, p = self.poses_batch(q)
        S = self._mass_moments_batch(R, p)
        for i in range(self.nb - 1, -1, -1):                     # subtree sums, leaves first
            if self.parent[i] >= 0:
                S[self.parent[i]] = S[self.parent[i]] + S[i]
        S = [S[i] for i in self.joint_body]
        tau = np.empty((self.nq, q.shape[0]))
        for k, par in enumerate(self.joint_parent):
            w = np.einsum('ijn,j->in', R[par], self.axis_Pq[k])
            g_w = self.gravity @ w
            if self.rot_q[k]:
                o = p[par] + np.einsum('ijn,j->in', R[par], self.p_PJq[k])
                r = S[k] - self.M_sub[k] * o
                tau[k] = self.rot_q[k] * np.einsum('in,in->n', r, self.g_cross @ w)
                if self.tr_q[k]:
                    tau[k] += self.tr_q[k] * self.M_sub[k] * g_w
            else:
                tau[k] = self.tr_q[k] * self.M_sub[k] * g_w
        return tau.T

    def _energy_batch(self, q):
        R, p = self.poses_batch(q)
        total = sum(self._mass_moments_batch(R, p))
        return -(self.gravity @ total)

    def _homogeneous_batch(self, q):
        R, p = self.poses_batch(q)
        out = np.zeros((q.shape[0], self.nb, 4, 4))
        for i in range(self.nb):
            out[:, i, :3, :3] = np.moveaxis(R[i], -1, 0)
            out[:, i, :3, 3] = p[i].T
        out[:, :, 3, 3] = 1.0
        return out

    def chunked(self, fn, q, out_shape):
        """Apply ``fn`` to ``q`` (N, nq) in chunks; ``out_shape`` is the per-row shape."""
        n = q.shape[0]
        if n <= CHUNK:
            return fn(q)
        out = np.empty((n,) + out_shape)
        for start in range(0, n, CHUNK):
            out[start:start + CHUNK] = fn(q[start:start + CHUNK])
        return out

    # --- any shape ---------------------------------------------------------------
    def _dispatch(self, q, one, batch, out_shape):
        if q.ndim == 1:
            return one(q)
        flat = q.reshape(-1, q.shape[-1])
        out = self.chunked(batch, flat, out_shape)
        return out.reshape(q.shape[:-1] + out_shape)

    def homogeneous(self, q):
        """Return ``X_WB`` of every body, (..., nb, 4, 4)."""
        return self._dispatch(q, self.homogeneous_one, self._homogeneous_batch,
                              (self.nb, 4, 4))

    def gravity_forces(self, q):
        """Return ``tau_g = -dV/dq`` (..., nq)."""
        return self._dispatch(q, self.gravity_one, self._gravity_batch, (self.nq,))

    def potential_energy(self, q):
        """Return ``V = -sum m_i g . p_WBcm_i`` (...)."""
        return self._dispatch(q, self.energy_one, self._energy_batch, ())

    def jacobian(self, q, body, point):
        """Return the geometric Jacobian [angular; linear] of a body point, (..., 6, nq)."""
        if q.ndim == 1:
            return self.jacobian_one(q, body, point)
        flat = q.reshape(-1, q.shape[-1])
        out = np.array([self.jacobian_one(qi, body, point) for qi in flat])
        return out.reshape(q.shape[:-1] + (6, self.nq))


def _jump_levels(parent):
    """Index arrays for pointer jumping: at each level ``P[nodes] = P[src] @ P[nodes]``."""
    jump = list(parent)
    levels = []
    while any(j >= 0 for j in jump):
        nodes = [i for i, j in enumerate(jump) if j >= 0]
        levels.append((np.array(nodes, dtype=np.intp),
                       np.array([jump[i] for i in nodes], dtype=np.intp)))
        jump = [jump[j] if j >= 0 else -1 for j in jump]
    return levels


def _skew(v):
    x, y, z = v
    return [[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]]
