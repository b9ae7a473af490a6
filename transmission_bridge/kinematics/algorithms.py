"""
Vectorised chain algorithms over precomputed model arrays (batch dimensions first).

Per call, the joint motions of all bodies are built in one numpy pass (Rodrigues'
formula with precomputed ``[axis]x`` and ``[axis]x²``); only the composition along
the tree is a Python loop over bodies. The same code takes one configuration
(shape ``(nq,)``) or many (``(N, nq)``); large batches go in chunks of
:data:`CHUNK` to bound memory.

Gravity uses subtree mass moments. With ``S_k = sum m_i p_WBcm_i`` and ``M_k =
sum m_i`` over the bodies moved by joint k, world axis ``w_k`` through point
``o_k``, and gravity ``g``::

    tau_g[k] = rot_k (S_k - M_k o_k) . (g x w_k) + trans_k M_k (g . w_k)

where ``rot_k`` is 1 for revolute and screw joints (0 for prismatic) and
``trans_k`` is the translation per unit q (1 prismatic, pitch / 2 pi screw). That
is ``-dV/dq`` with ``V = -sum m_i g . p_WBcm_i``.
"""

import numpy as np

CHUNK = 16384


class ChainKinematics:
    """Arrays describing a model's tree, and the algorithms that use them."""

    def __init__(self, bodies, gravity):
        nb = len(bodies)
        index = {b.name: i for i, b in enumerate(bodies)}
        self.nb = nb
        self.parent = [index.get(b.parent, nb) for b in bodies]   # nb = world
        movable = [i for i, b in enumerate(bodies) if b.joint.num_positions]
        self.nq = len(movable)
        qidx = np.full(nb, self.nq, dtype=np.intp)
        for k, i in enumerate(movable):
            qidx[i] = k
        self.qidx = qidx
        self.joint_body = np.array(movable, dtype=np.intp)
        joints = [b.joint for b in bodies]
        self.rot = np.array([j.ROTATION_PER_Q for j in joints])
        self.trans = np.array([j.translation_per_q for j in joints])
        self.axis = np.array([j.axis for j in joints]).reshape(nb, 3)
        x, y, z = self.axis[:, 0], self.axis[:, 1], self.axis[:, 2]
        zero = np.zeros(nb)
        self.K = np.stack([np.stack([zero, -z, y], -1), np.stack([z, zero, -x], -1),
                           np.stack([-y, x, zero], -1)], -2)
        self.KK = self.K @ self.K
        origins = np.array([j.origin for j in joints]).reshape(nb, 4, 4)
        childs = np.array([j.child_transform for j in joints]).reshape(nb, 4, 4)
        self.R_PJ, self.p_PJ = origins[:, :3, :3].copy(), origins[:, :3, 3].copy()
        self.R_JB, self.p_JB = childs[:, :3, :3].copy(), childs[:, :3, 3].copy()
        self.has_child = not np.array_equal(childs, np.broadcast_to(np.eye(4), childs.shape))
        self.axis_P = np.einsum('bij,bj->bi', self.R_PJ, self.axis)
        self.mass = np.array([b.inertial.mass for b in bodies])
        self.com = np.array([b.inertial.com for b in bodies]).reshape(nb, 3)
        # Tree relations: ancestor-or-self.
        anc = np.zeros((nb, nb), dtype=bool)
        for i in range(nb):
            j = i
            while j != nb:
                anc[i, j] = True
                j = self.parent[j]
        self.subtree = anc[:, self.joint_body].T.astype(float)         # (nq, nb)
        self.on_path = anc[:, self.joint_body]                         # (nb, nq)
        self.M_sub = self.subtree @ self.mass
        self.rot_q = self.rot[self.joint_body]
        self.trans_q = self.trans[self.joint_body]
        self.joint_parent = np.array([self.parent[i] for i in movable], dtype=np.intp)
        self.axis_Pq = self.axis_P[self.joint_body]
        self.p_PJq = self.p_PJ[self.joint_body]
        self.gravity = np.array(gravity, dtype=float)
        self.damping = np.array([joints[i].damping for i in movable])
        self.eye3 = np.eye(3)

    # --- helpers -----------------------------------------------------------------
    def chunked(self, fn, q, out_shape):
        """Apply ``fn`` to ``q`` (N, nq) in chunks; ``out_shape`` is the per-row shape."""
        n = q.shape[0]
        if n <= CHUNK:
            return fn(q)
        out = np.empty((n,) + out_shape)
        for start in range(0, n, CHUNK):
            out[start:start + CHUNK] = fn(q[start:start + CHUNK])
        return out

    # --- kinematics --------------------------------------------------------------
    def poses(self, q):
        """Return ``(R_W, p_W)``: (..., nb + 1, 3, 3) and (..., nb + 1, 3), world last."""
        nb = self.nb
        batch = q.shape[:-1]
        qext = np.concatenate([q, np.zeros(batch + (1,))], axis=-1)
        qb = qext[..., self.qidx]
        angle = qb * self.rot
        s = np.sin(angle)[..., None, None]
        c1 = (1.0 - np.cos(angle))[..., None, None]
        R_J = self.eye3 + s * self.K + c1 * self.KK
        t_J = (qb * self.trans)[..., None] * self.axis
        R_PB = self.R_PJ @ R_J
        p_PB = self.p_PJ + (self.R_PJ @ t_J[..., None])[..., 0]
        if self.has_child:
            p_PB = p_PB + (R_PB @ self.p_JB[..., None])[..., 0]
            R_PB = R_PB @ self.R_JB
        R_W = np.empty(batch + (nb + 1, 3, 3))
        p_W = np.empty(batch + (nb + 1, 3))
        R_W[..., nb, :, :] = self.eye3
        p_W[..., nb, :] = 0.0
        for i, par in enumerate(self.parent):
            if par == nb:
                R_W[..., i, :, :] = R_PB[..., i, :, :]
                p_W[..., i, :] = p_PB[..., i, :]
            else:
                R_par = R_W[..., par, :, :]
                R_W[..., i, :, :] = R_par @ R_PB[..., i, :, :]
                p_W[..., i, :] = p_W[..., par, :] + (R_par @ p_PB[..., i, :, None])[..., 0]
        return R_W, p_W

    def homogeneous(self, q):
        """Return X_WB of every body, (..., nb, 4, 4)."""
        def one(qc):
            R_W, p_W = self.poses(qc)
            out = np.zeros(qc.shape[:-1] + (self.nb, 4, 4))
            out[..., :3, :3] = R_W[..., :self.nb, :, :]
            out[..., :3, 3] = p_W[..., :self.nb, :]
            out[..., 3, 3] = 1.0
            return out
        if q.ndim == 2:
            return self.chunked(one, q, (self.nb, 4, 4))
        return one(q)

    def joint_axes(self, R_W, p_W):
        """Return world axes ``w`` and axis points ``o`` of the movable joints, (..., nq, 3)."""
        R_par = R_W[..., self.joint_parent, :, :]
        w = (R_par @ self.axis_Pq[..., None])[..., 0]
        o = p_W[..., self.joint_parent, :] + (R_par @ self.p_PJq[..., None])[..., 0]
        return w, o

    def com_moments(self, R_W, p_W):
        """Return ``m_i p_WBcm_i`` of every body, (..., nb, 3)."""
        nb = self.nb
        p_cm = p_W[..., :nb, :] + (R_W[..., :nb, :, :] @ self.com[..., None])[..., 0]
        return self.mass[:, None] * p_cm

    # --- gravity and energy ------------------------------------------------------
    def _gravity(self, q):
        R_W, p_W = self.poses(q)
        mp = self.com_moments(R_W, p_W)
        S = np.einsum('kb,...bj->...kj', self.subtree, mp)
        w, o = self.joint_axes(R_W, p_W)
        g = self.gravity
        r = S - self.M_sub[:, None] * o
        return (self.rot_q * np.einsum('...kj,...kj->...k', r, np.cross(g, w))
                + self.trans_q * self.M_sub * (w @ g))

    def gravity_forces(self, q):
        """Return ``tau_g = -dV/dq`` (..., nq)."""
        if q.ndim == 2:
            return self.chunked(self._gravity, q, (self.nq,))
        return self._gravity(q)

    def _energy(self, q):
        R_W, p_W = self.poses(q)
        return -(self.com_moments(R_W, p_W).sum(axis=-2) @ self.gravity)

    def potential_energy(self, q):
        """Return ``V = -sum m_i g . p_WBcm_i`` (...)."""
        if q.ndim == 2:
            return self.chunked(self._energy, q, ())
        return self._energy(q)

    def jacobian(self, q, body, point):
        """Return the geometric Jacobian [angular; linear] of a body point, (..., 6, nq)."""
        R_W, p_W = self.poses(q)
        p = p_W[..., body, :] + (R_W[..., body, :, :] @ point)
        w, o = self.joint_axes(R_W, p_W)
        mask = self.on_path[body][:, None]
        j_w = self.rot_q[:, None] * w * mask
        j_v = (self.rot_q[:, None] * np.cross(w, p[..., None, :] - o)
               + self.trans_q[:, None] * w) * mask
        return np.swapaxes(np.concatenate([j_w, j_v], axis=-1), -1, -2)
