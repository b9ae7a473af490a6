"""
A model's tree as constant arrays: what every backend's algorithms read.

Made once per model (:class:`TreeArrays`); nothing here depends on a configuration. Body pose
in its parent, with the joint's fixed transforms folded into constants::

    R_PB(q) = A0 + sin(a) A1 + (1 - cos(a)) A2          a = rot q   (rotation, rad)
    p_PB(q) = b0 + sin(a) b1 + (1 - cos(a)) b2 + (tr q) axis_P

where ``A0 = R_PJ R_JB``, ``A1 = R_PJ K R_JB``, ``A2 = R_PJ K² R_JB`` (Rodrigues'
formula, ``K = [axis]x``), ``b0 = p_PJ + R_PJ p_JB``, ``b1 = R_PJ K p_JB``,
``b2 = R_PJ K² p_JB``, ``axis_P = R_PJ axis``, ``rot`` the rotation and ``tr`` the
translation per unit q (revolute 1 / 0, prismatic 0 / 1, screw 1 / pitch / 2 pi,
fixed 0 / 0). ``1 - cos(a)`` is computed as ``2 sin²(a/2)`` (the factor 2 folded into
``A2`` and ``b2``), which keeps its precision for small angles. As one table:
``XT_PB = sum_k c[k] HT[b, k]`` with ``c = (1, sin a, sin²(a/2), tr q)``, where ``XT_PB``
is ``X_PB`` transposed (NOTATION.md: the backends keep poses transposed, so that a pose's
columns are contiguous rows).

Coordinates are the movable joints, mimic ones included, model order; a mimic joint's is
``m q[k] + o`` of its independent joint k (``qidx``, ``qmul``, ``qoff``), and generalized
forces fold back onto q through ``fold`` (the chain rule).

Gravity uses subtree mass moments. With ``S_k = sum m_i p_WBcm_i`` and ``M_k = sum m_i``
over the bodies moved by joint k, world axis ``w_k`` through point ``o_k``, and gravity
``g``::

    tau_g[k] = rot_k (S_k - M_k o_k) . (g x w_k) + tr_k M_k (g . w_k)

which is ``-dV/dq`` with ``V = -sum m_i g . p_WBcm_i``. Written as ``tau_g[k] = w_k .
u_k`` with ``u_k = r_k x g + tr_k M_k g`` and ``r_k = rot_k (S_k - M_k o_k)``: ``w_k``,
``r_k`` and ``V`` are linear in the world poses, so :attr:`TreeArrays.frame_rows` gets
them as one product with the stacked poses.
"""

import numpy as np

from .spatial import skew


class TreeArrays:
    """The constant arrays of a tree of bodies (see the module docstring)."""

    def __init__(self, bodies, gravity, rules=None):
        nb = len(bodies)
        index = {b.name: i for i, b in enumerate(bodies)}
        self.nb = nb
        self.parent = [index.get(b.parent, -1) for b in bodies]          # -1: world
        movable = [i for i, b in enumerate(bodies) if b.joint.num_positions]
        self.nc = len(movable)
        if rules is None:
            rules = [(c, 1.0, 0.0) for c in range(self.nc)]
        rules = list(rules)
        self.nq = len({k for k, _, _ in rules})
        coord_of = {i: c for c, i in enumerate(movable)}
        self.qidx = [rules[coord_of[i]][0] if i in coord_of else -1 for i in range(nb)]
        self.qmul = [rules[coord_of[i]][1] if i in coord_of else 0.0 for i in range(nb)]
        self.qoff = [rules[coord_of[i]][2] if i in coord_of else 0.0 for i in range(nb)]
        self.mimics = any(m != 1.0 or o != 0.0 for _, m, o in rules) or self.nc != self.nq
        self.qidx_arr = np.array([k if k >= 0 else self.nq for k in self.qidx], dtype=np.intp)
        self.joint_body = np.array(movable, dtype=np.intp)
        # fold[k, c]: d q_c / d q_k. Generalized forces of the coordinates fold onto the
        # independent joints as fold @ tau_c (the chain rule); None when it is the identity.
        fold = np.zeros((self.nq, self.nc))
        for c, (k, m, _) in enumerate(rules):
            fold[k, c] = m
        self.fold = fold if self.mimics else None
        joints = [b.joint for b in bodies]
        self.rot = np.array([j.ROTATION_PER_Q for j in joints])
        self.tr = np.array([j.translation_per_q for j in joints])
        axis = np.array([j.axis for j in joints]).reshape(nb, 3)
        K = np.array([skew(a) for a in axis]).reshape(nb, 3, 3)
        origin = np.array([j.origin for j in joints]).reshape(nb, 4, 4)
        child = np.array([j.child_transform for j in joints]).reshape(nb, 4, 4)
        R_PJ, p_PJ = origin[:, :3, :3], origin[:, :3, 3]
        R_JB, p_JB = child[:, :3, :3], child[:, :3, 3]
        KK = K @ K
        self.A0 = R_PJ @ R_JB
        self.A1 = R_PJ @ K @ R_JB
        self.A2 = 2.0 * (R_PJ @ KK @ R_JB)       # times sin²(a/2): (1 - cos a) = 2 sin²(a/2)
        self.b0 = p_PJ + (R_PJ @ p_JB[..., None])[..., 0]
        self.b1 = (R_PJ @ K @ p_JB[..., None])[..., 0]
        self.b2 = 2.0 * (R_PJ @ KK @ p_JB[..., None])[..., 0]
        self.axis_P = (R_PJ @ axis[..., None])[..., 0]
        self.p_PJ = p_PJ.copy()
        self.mass = np.array([b.inertial.mass for b in bodies])
        self.com = np.array([b.inertial.com for b in bodies]).reshape(nb, 3)
        # Rotational inertia about the centre of mass, body frame (the dynamics read it).
        self.inertia = np.array([b.inertial.inertia for b in bodies]).reshape(nb, 3, 3)
        # Per body: its coordinate (-1 for a fixed joint); its velocity is qmul times its
        # independent joint's.
        self.coord = np.full(nb, -1, dtype=np.intp)
        self.coord[movable] = np.arange(self.nc)
        anc = np.zeros((nb, nb), dtype=bool)                 # anc[i, j]: j is i or above it
        for i in range(nb):
            j = i
            while j >= 0:
                anc[i, j] = True
                j = self.parent[j]
        self.subtree = anc[:, self.joint_body].T.astype(float)   # (nc, nb)
        self.on_path = anc[:, self.joint_body]                   # (nb, nc)
        self.M_sub = self.subtree @ self.mass
        self.rot_q = self.rot[self.joint_body]
        self.tr_q = self.tr[self.joint_body]
        # Parent of each joint's body, with the world as index nb (arrays carry it last).
        self.joint_parent = np.array([self.parent[i] if self.parent[i] >= 0 else nb
                                      for i in movable], dtype=np.intp)
        self.axis_Pq = self.axis_P[self.joint_body]
        self.p_PJq = self.p_PJ[self.joint_body]
        self.gravity = np.array(gravity, dtype=float)
        coord_damping = np.array([joints[i].damping for i in movable])
        independent = [c for c, i in enumerate(movable) if joints[i].mimic is None]
        self.damping = coord_damping[independent] if self.mimics else coord_damping
        # -b_c v_c with v_c = m v_k, folded by m: each mimic adds m² b_c to its driver.
        self.effective_damping = (self.damping if self.fold is None
                                  else (self.fold ** 2) @ coord_damping)
        # Batches: R_PB (9, N) = RA[i] (9, 3) @ C, p_PB (3, N) = PB[i] (3, 4) @ C,
        # C = (1, sin a, sin²(a/2), tr q).
        self.RA = np.stack([self.A0, self.A1, self.A2], axis=-1).reshape(nb, 9, 3)
        self.PB = np.stack([self.b0, self.b1, self.b2, self.axis_P], axis=-1)
        self.trM = self.tr_q * self.M_sub
        self._configuration_tables()

    def _configuration_tables(self):
        """Make the tables one configuration's evaluation reads (see the module docstring)."""
        nb, nq = self.nb, self.nc        # per coordinate from here on (mimics included)
        # z = q_ext[z_index] * z_scale (+ z_offset) = (angle, angle / 2, tr q) per body, a
        # mimic body's q being m q_driver + o; q_ext ends in 0.
        self.z_index = np.tile(self.qidx_arr, 3)
        mul, off = np.array(self.qmul), np.array(self.qoff)
        self.z_scale = np.concatenate([self.rot, 0.5 * self.rot, self.tr]) * np.tile(mul, 3)
        self.z_offset = (np.concatenate([self.rot * off, 0.5 * self.rot * off, self.tr * off])
                         if off.any() else None)
        # XT_PB = sum_k c[k, b] HT[b, k], c = (1, sin a, sin²(a/2), tr q): per body a
        # (1, 4) @ (4, 16) product, all bodies in one matmul.
        H = np.zeros((4, nb, 4, 4))
        H[0, :, :3, :3], H[0, :, :3, 3], H[0, :, 3, 3] = self.A0, self.b0, 1.0
        H[1, :, :3, :3], H[1, :, :3, 3] = self.A1, self.b1
        H[2, :, :3, :3], H[2, :, :3, 3] = self.A2, self.b2
        H[3, :, :3, 3] = self.axis_P
        self.HT = np.ascontiguousarray(H.transpose(1, 0, 3, 2)).reshape(nb, 4, 16)
        self.order = [(i, p if p >= 0 else nb) for i, p in enumerate(self.parent)]
        # Linear maps of the stacked transposed world poses, XT_WB.reshape(4 (nb + 1), 4):
        # row (i, j) is column j of X_WB_i, so  X_WB_i v = sum_j v[j] XT_WB[4 i + j, :3].
        cols = 4 * (nb + 1)
        axis_h = np.concatenate([self.axis_Pq, np.zeros((nq, 1))], axis=1)
        point_h = np.concatenate([self.p_PJq, np.ones((nq, 1))], axis=1)
        com_h = self.com_h = np.concatenate([self.com, np.ones((nb, 1))], axis=1)
        w_rows, o_rows, s_rows = (np.zeros((nq, nb + 1, 4)) for _ in range(3))
        for k, par in enumerate(self.joint_parent):
            w_rows[k, par], o_rows[k, par] = axis_h[k], point_h[k]
        s_rows[:, :nb] = (self.subtree * self.mass)[..., None] * com_h
        r_rows = self.rot_q[:, None, None] * (s_rows - self.M_sub[:, None, None] * o_rows)
        self.axis_rows = np.concatenate([w_rows, o_rows]).reshape(2 * nq, cols)   # w_k, o_k
        # w_k, r_k, and the total mass moment sum_i m_i p_WBcm_i (V = -g . that).
        moment = np.zeros((1, nb + 1, 4))
        moment[0, :nb] = self.mass[:, None] * com_h
        self.frame_rows = np.concatenate([w_rows, r_rows, moment]).reshape(2 * nq + 1, cols)
        self.cross_g = np.array([np.cross(e, self.gravity) for e in np.eye(3)])   # r @ = r x g
        self.trMg = self.trM[:, None] * self.gravity
