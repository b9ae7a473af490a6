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

``1 - cos(a)`` is computed as ``2 sin²(a/2)`` (the factor 2 folded into ``A2`` and
``b2``), which keeps its precision for small angles.

Two layouts run the same formulas. One configuration builds every ``X_PB`` (stored
transposed, ``X_PB^T``) in one ``matmul`` and composes down the tree with one BLAS
``dot`` per body into a preallocated stack, ``X_WB^T = X_PB^T X_WP^T``; everything after
that (gravity, energy, joint axes) is a constant matrix times that stack, because each
is linear in the entries of the frames. A batch keeps the same stack batch-last, ``(nb + 1,
4, 3, N)`` (every entry one contiguous vector), composes it with one ``einsum`` per body
and applies the same constant matrices to all configurations in one ``einsum`` (not a
gemm, whose rounding depends on the thread count), in chunks of :data:`CHUNK`.

Gravity uses subtree mass moments. With ``S_k = sum m_i p_WBcm_i`` and ``M_k =
sum m_i`` over the bodies moved by joint k, world axis ``w_k`` through point
``o_k``, and gravity ``g``::

    tau_g[k] = rot_k (S_k - M_k o_k) . (g x w_k) + tr_k M_k (g . w_k)

which is ``-dV/dq`` with ``V = -sum m_i g . p_WBcm_i``. Written as ``tau_g[k] = w_k .
u_k`` with ``u_k = r_k x g + tr_k M_k g`` and ``r_k = rot_k (S_k - M_k o_k)``: ``w_k``,
``r_k`` and ``V`` are linear in the world frames: both layouts get them as one product of
constant matrices with the frame stack.
"""

import threading

import numpy as np

from . import _checks
from .errors import ModelError
from .spatial import pick_quaternions, POSE_TABLE_TRANSPOSED

CHUNK = 4096     # configurations per chunk: keeps the per-body arrays in cache (bench)
_EYE4 = np.eye(4)
_NO_POSES, _NO_TAU = np.empty((0, 4, 4)), np.empty(0)   # the compiled kernels' placeholders


class ChainKinematics:
    """Arrays describing a model's tree, and the algorithms that use them."""

    def __init__(self, bodies, gravity, rules=None):
        nb = len(bodies)
        index = {b.name: i for i, b in enumerate(bodies)}
        self.nb = nb
        self.parent = [index.get(b.parent, -1) for b in bodies]          # -1: world
        # Coordinates: every movable joint, mimic ones included, model order. ``rules``
        # gives each its (independent joint k, multiplier, offset): q_c = m q[k] + o.
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
        K = np.array([_skew(a) for a in axis]).reshape(nb, 3, 3)
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
        # Batch path: R_PB (9, N) = RA[i] (9, 3) @ C, p_PB (3, N) = PB[i] (3, 4) @ C,
        # C = (1, sin a, sin²(a/2), tr q).
        self.RA = np.stack([self.A0, self.A1, self.A2], axis=-1).reshape(nb, 9, 3)
        self.PB = np.stack([self.b0, self.b1, self.b2, self.axis_P], axis=-1)
        self.trM = self.tr_q * self.M_sub
        self._one_configuration_constants()

    def _one_configuration_constants(self):
        """Constants of the one-configuration path (see the module docstring)."""
        nb, nq = self.nb, self.nc        # per coordinate from here on (mimics included)
        # z = q_ext[z_index] * z_scale (+ z_offset) = (angle, angle / 2, tr q) per body, a
        # mimic body's q being m q_driver + o; q_ext ends in 0.
        self.z_index = np.tile(self.qidx_arr, 3)
        mul, off = np.array(self.qmul), np.array(self.qoff)
        self.z_scale = np.concatenate([self.rot, 0.5 * self.rot, self.tr]) * np.tile(mul, 3)
        self.z_offset = (np.concatenate([self.rot * off, 0.5 * self.rot * off, self.tr * off])
                         if off.any() else None)
        # X_PB^T = sum_k c[k, b] HT[b, k], c = (1, sin a, sin²(a/2), tr q): per body a
        # (1, 4) @ (4, 16) product, all bodies in one matmul.
        H = np.zeros((4, nb, 4, 4))
        H[0, :, :3, :3], H[0, :, :3, 3], H[0, :, 3, 3] = self.A0, self.b0, 1.0
        H[1, :, :3, :3], H[1, :, :3, 3] = self.A1, self.b1
        H[2, :, :3, :3], H[2, :, :3, 3] = self.A2, self.b2
        H[3, :, :3, 3] = self.axis_P
        self.HT = np.ascontiguousarray(H.transpose(1, 0, 3, 2)).reshape(nb, 4, 16)
        self.order = [(i, p if p >= 0 else nb) for i, p in enumerate(self.parent)]
        # Linear maps of the stacked transposed frames F = XT.reshape(4 (nb + 1), 4):
        # row (i, j) of F is column j of X_WB_i, so  X_WB_i v = sum_j v[j] F[4 i + j, :3].
        cols = 4 * (nb + 1)
        axis_h = np.concatenate([self.axis_Pq, np.zeros((nq, 1))], axis=1)
        point_h = np.concatenate([self.p_PJq, np.ones((nq, 1))], axis=1)
        com_h = self.com_h = np.concatenate([self.com, np.ones((nb, 1))], axis=1)
        W, O, S = (np.zeros((nq, nb + 1, 4)) for _ in range(3))
        for k, par in enumerate(self.joint_parent):
            W[k, par], O[k, par] = axis_h[k], point_h[k]
        S[:, :nb] = (self.subtree * self.mass)[..., None] * com_h
        R = self.rot_q[:, None, None] * (S - self.M_sub[:, None, None] * O)
        self.axis_rows = np.concatenate([W, O]).reshape(2 * nq, cols)        # w_k, o_k
        # w_k, r_k, and the total mass moment sum_i m_i p_WBcm_i (V = -g . that).
        moment = np.zeros((1, nb + 1, 4))
        moment[0, :nb] = self.mass[:, None] * com_h
        self.frame_rows = np.concatenate([W, R, moment]).reshape(2 * nq + 1, cols)
        self.cross_g = np.array([np.cross(e, self.gravity) for e in np.eye(3)])   # r @ = r x g
        self.trMg = self.trM[:, None] * self.gravity
        # evaluate's outputs, per configuration: shapes, and widths of a batch's flat rows.
        self._shapes = {'poses': (self.nb, 4, 4), 'gravity': (self.nq,), 'energy': ()}
        self._widths = {'poses': 16 * self.nb, 'gravity': self.nq, 'energy': 1}
        self._local = threading.local()     # one OneConfiguration per thread
        self._kernels = _compiled_kernels(self)

    # --- one configuration -------------------------------------------------------
    def workspace(self):
        """Return this thread's :class:`OneConfiguration` (made on first use)."""
        ws = getattr(self._local, 'workspace', None)
        if ws is None:
            ws = self._local.workspace = OneConfiguration(self)
        return ws

    def __getstate__(self):
        state = dict(self.__dict__)
        del state['_local']                 # per-thread buffers: not sent, made again
        # The receiver may or may not have numba: it gets the choice, and makes the kernels.
        state['_kernels'] = self._kernels is not None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._local = threading.local()
        self._kernels = _compiled_kernels(self) if state['_kernels'] else None

    def warm_up(self):
        """Run every kernel once (numba compiles, or loads from its cache, on first use)."""
        if self._kernels is None:
            return
        q = np.zeros((1, self.nq))
        self.evaluate(q, ('poses', 'gravity', 'energy'))
        self.evaluate(q[0], ('poses', 'gravity', 'energy'))
        self.workspace().gravity()
        if self.nb:
            self.jacobians_one(q[0], [self.nb - 1], [np.zeros(3)])

    def use_kernels(self, kind):
        """Evaluate with ``kind``: 'numpy' or 'numba' (a :class:`ModelError` if unavailable)."""
        if kind == 'numpy':
            self._kernels = None
        elif kind == 'numba':
            from . import _compiled
            if not _compiled.AVAILABLE:
                raise ModelError(f"kernels 'numba': not available ({_compiled.REASON})")
            self._kernels = _compiled.Kernels(self)
        else:
            raise ModelError(f"kernels must be 'numpy' or 'numba', got {kind!r}")
        self._local = threading.local()     # workspaces laid out for the other kernels

    @property
    def compiled(self):
        """Return True when the compiled kernels (numba) run this model, False for numpy."""
        return self._kernels is not None

    def jacobian_one(self, q, body, point):
        """Return the geometric Jacobian [angular; linear] of a body point, (6, nq)."""
        return self.jacobians_one(q, [body], [point])[0]

    def jacobians_one(self, q, bodies, points):
        """Return the Jacobians of a point on each of ``bodies``: (n, 6, nq), one frames pass."""
        ws = self.workspace()
        XT = ws.frames(q)
        if self._kernels is not None:
            points = np.ascontiguousarray(points, dtype=float).reshape(len(bodies), 3)
            J = np.empty((len(bodies), 6, self.nq))
            self._kernels.jacobians(ws._W, np.asarray(bodies, dtype=np.intp), points, J)
            return J
        wo = np.dot(self.axis_rows, XT.reshape(-1, 4))[:, :3]
        w, o = wo[:self.nc], wo[self.nc:]
        out = []
        for body, point in zip(bodies, points):
            x = point @ XT[body, :3, :3] + XT[body, 3, :3]
            mask = self.on_path[body][:, None]
            j_w = self.rot_q[:, None] * w * mask
            j_v = (self.rot_q[:, None] * np.cross(w, x - o) + self.tr_q[:, None] * w) * mask
            J = np.concatenate([j_w, j_v], axis=1).T            # (6, nc): per coordinate
            out.append(J if self.fold is None else J @ self.fold.T)
        return np.array(out).reshape(len(out), 6, self.nq)

    # --- batches (batch-last layout inside) --------------------------------------
    def frames_batch(self, q):
        """
        Return ``F`` (nb + 1, 4, 3, N): ``F[i, j]`` is column j of ``X_WB_i``, world last.

        The batch-last twin of :meth:`OneConfiguration.frames`' transposed stack: ``F[i, :3]`` is
        ``R_WB_i`` transposed and ``F[i, 3]`` is ``p_WB_i``, each entry a contiguous vector.
        """
        n, nb = q.shape[0], self.nb
        F = np.empty((nb + 1, 4, 3, n))
        F[nb] = _EYE4[:, :3, None]                  # the world: identity columns, origin 0
        C = np.empty((4, n))
        C[0] = 1.0
        for i, par in self.order:
            k = self.qidx[i]
            if k >= 0:
                qk = q[:, k]
                if self.qmul[i] != 1.0 or self.qoff[i] != 0.0:      # a mimic joint
                    qk = qk * self.qmul[i] + self.qoff[i]
                if self.rot[i]:
                    angle = qk * self.rot[i]
                    np.sin(angle, out=C[1])
                    np.sin(0.5 * angle, out=C[2])
                    np.square(C[2], out=C[2])
                else:
                    C[1:3] = 0.0
                np.multiply(qk, self.tr[i], out=C[3])
                R_PB = (self.RA[i] @ C[:3]).reshape(3, 3, n)
                p_PB = self.PB[i] @ C
            else:
                R_PB = np.broadcast_to(self.A0[i][..., None], (3, 3, n))
                p_PB = np.broadcast_to(self.b0[i][:, None], (3, n))
            # Column b of R_WB = R_WP (column b of R_PB); p_WB = p_WP + R_WP p_PB.
            np.einsum('arn,abn->brn', F[par, :3], R_PB, out=F[i, :3])
            np.einsum('arn,an->rn', F[par, :3], p_PB, out=F[i, 3])
            F[i, 3] += F[par, 3]
        return F

    def _pass_batch(self, q, dest):
        """
        Write the outputs keyed in ``dest`` for the chunk ``q`` (n, nq), from one frames pass.

        ``dest`` maps ``'poses'`` to (n, nb * 16) (each X_WB row-major), ``'gravity'`` to
        (n, nq) and ``'energy'`` to (n, 1). Gravity and energy are the one-configuration
        path's constant matrices applied to every configuration at once.
        """
        F = self.frames_batch(q)
        n, nb, nq = q.shape[0], self.nb, self.nc
        if 'poses' in dest:
            X = dest['poses'].reshape(n, nb, 4, 4)
            X[:, :, :3, :] = F[:nb].transpose(3, 0, 2, 1)
            X[:, :, 3, :3] = 0.0
            X[:, :, 3, 3] = 1.0
        if 'gravity' not in dest and 'energy' not in dest:
            return
        rows = F.reshape(4 * (nb + 1), 3 * n)           # row (i, j), column (r, N)
        # einsum, not BLAS: a threaded gemm's rounding depends on the thread count and the
        # chunk size, and a fleet's workers must write the same bytes (test_fleet).
        wr = np.einsum('ck,kx->cx', self.frame_rows, rows).reshape(2 * nq + 1, 3, n)
        if 'gravity' in dest:
            u = np.einsum('krn,rs->ksn', wr[nq:2 * nq], self.cross_g)
            u += self.trMg[..., None]
            u *= wr[:nq]
            if self.fold is None:
                dest['gravity'][:] = u.sum(axis=1).T                 # w_k . u_k
            else:                                                    # mimics folded
                np.einsum('kc,cn->nk', self.fold, u.sum(axis=1), out=dest['gravity'])
        if 'energy' in dest:
            dest['energy'][:, 0] = -(wr[2 * nq] * self.gravity[:, None]).sum(axis=0)

    def evaluate(self, q, what, out=None):
        """
        Return the outputs named in ``what`` for q (nq,) or (..., nq): a tuple in that order.

        ``what`` holds 'poses' (..., nb, 4, 4), 'gravity' (..., nq) and 'energy' (...),
        all from one kinematics pass. One configuration runs in this thread's
        :class:`OneConfiguration`; a batch runs batch-last in chunks of :data:`CHUNK`
        configurations. ``out``, a tuple of one array per name (float64, C-contiguous,
        writeable, exactly that shape, not overlapping ``q``), receives the results
        instead of new arrays and is returned: a caller that evaluates batch after batch
        reuses its buffers and the kernel zeroes no fresh pages.
        """
        lead = q.shape[:-1]
        if out is not None:
            out = _checks.out_arrays(out, q, [(w, lead + self._shapes[w]) for w in what])
        if self._kernels is not None:
            if q.ndim == 1:
                return self._one_compiled(q, what, out)
            return self._batch_compiled(q, what, out)
        if q.ndim == 1:
            values = self._one(q, what)
            if out is None:                 # copies: the views change with the next call
                return tuple([v if w == 'energy' else v.copy() for w, v in zip(what, values)])
            for o, v in zip(out, values):
                o[...] = v
            return out
        n = int(np.prod(lead))
        if out is None:
            out = tuple(np.empty(lead + self._shapes[w]) for w in what)
        flat = q.reshape(n, q.shape[-1])
        whole = {w: o.reshape(n, self._widths[w]) for w, o in zip(what, out)}
        for start in range(0, n, CHUNK):
            self._pass_batch(flat[start:start + CHUNK],
                             {w: d[start:start + CHUNK] for w, d in whole.items()})
        return out

    def _one_compiled(self, q, what, out):
        """One configuration in the compiled kernels: into ``out``, or new arrays."""
        ws = self.workspace()
        ws.q[:] = q                         # float64, contiguous: the kernel's one typing
        want_poses, want_gravity = 'poses' in what, what != ('poses',)
        if out is None:
            poses = np.empty((self.nb, 4, 4)) if want_poses else _NO_POSES
            tau = np.empty(self.nq) if 'gravity' in what else ws.tau
            energy = self._kernels.one(ws.q, ws._W, poses, tau, want_poses, want_gravity)
            if what == ('gravity',):
                return (tau,)
            values = {'poses': poses, 'gravity': tau, 'energy': energy}
            return tuple([values[w] for w in what])
        dest = dict(zip(what, out))
        energy = self._kernels.one(ws.q, ws._W, dest.get('poses', _NO_POSES),
                                   dest.get('gravity', ws.tau), want_poses, want_gravity)
        if 'energy' in dest:
            dest['energy'][...] = energy
        return out

    def _batch_compiled(self, q, what, out):
        """Evaluate a batch (..., nq) in the compiled kernels, which write the outputs in place."""
        lead = q.shape[:-1]
        if out is None:
            out = tuple([np.empty(lead + self._shapes[w]) for w in what])
        dest = dict(zip(what, out))
        want_poses = 'poses' in dest
        want_gravity = 'gravity' in dest or 'energy' in dest
        n = int(np.prod(lead))
        flat = np.ascontiguousarray(q.reshape(n, self.nq), dtype=float)
        if not flat.flags.writeable:        # numba compiles read-only arrays apart: copy
            flat = flat.copy()
        poses = dest['poses'].reshape(n, self.nb, 4, 4) if want_poses else \
            np.empty((1, self.nb, 4, 4))
        tau = dest['gravity'].reshape(n, self.nq) if 'gravity' in dest else \
            np.empty((n if want_gravity else 1, self.nq))
        energy = dest['energy'].reshape(n) if 'energy' in dest else \
            np.empty(n if want_gravity else 1)
        kernels = self._kernels
        kernels.batch(flat, kernels.work()[0], poses, tau, energy, want_poses, want_gravity)
        return out

    def _one(self, q, what):
        """Return the outputs named in ``what`` for one configuration: this thread's views."""
        ws = self.workspace()
        if what == ('poses',):
            ws.frames(q)
            tau, energy = None, None
        else:
            tau, energy = ws.frames_gravity_energy(q)
        values = {'poses': ws.poses(), 'gravity': tau, 'energy': energy}
        return [values[w] for w in what]

    # --- any shape ---------------------------------------------------------------
    def jacobian(self, q, body, point):
        """Return the geometric Jacobian [angular; linear] of a body point, (..., 6, nq)."""
        if q.ndim == 1:
            return self.jacobian_one(q, body, point)
        flat = q.reshape(int(np.prod(q.shape[:-1])), q.shape[-1])
        out = np.array([self.jacobian_one(qi, body, point) for qi in flat])
        return out.reshape(q.shape[:-1] + (6, self.nq))


def _compiled_kernels(kin):
    """Return the model's :class:`._compiled.Kernels`, or None where numba is not used."""
    from . import _compiled         # imports numba (once): only when a model is built
    return _compiled.Kernels(kin) if _compiled.AVAILABLE else None


def _skew(v):
    x, y, z = v
    return [[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]]


class OneConfiguration:
    """
    One configuration at a time, in preallocated buffers: a dozen numpy calls plus one per body.

    Results stay in the buffers until the next call, so each thread needs its own
    (:meth:`ChainKinematics.workspace`); a caller that evaluates every message, such as
    the kinematics node's core, keeps one and reads the buffers in place.
    """

    def __init__(self, kin):
        nb, nq, nc = kin.nb, kin.nq, kin.nc
        self._kin = kin
        self._q_ext = np.zeros(nq + 1)          # q, then the 0 fixed bodies read
        self.q = self._q_ext[:nq]
        # c = (1, sin a, sin²(a/2), tr q) per body; the last 3 nb first hold the arguments.
        c = self._c = np.empty(4 * nb)
        c[:nb] = 1.0
        self._args, self._sin, self._half = c[nb:], c[nb:3 * nb], c[2 * nb:3 * nb]
        self._c_rows = c.reshape(4, nb).T[:, None, :]      # (nb, 1, 4): body b's c
        self._kernels = kin._kernels
        if self._kernels is not None:           # the kernels' buffer holds L and XT
            self._W, self._L, self.XT, _, _ = self._kernels.work()
        else:
            self._L = np.empty((nb, 16))        # X_PB^T of every body, row-major
            self.XT = np.empty((nb + 1, 4, 4))  # X_WB^T of every body, the world last
            self.XT[nb] = _EYE4
        self._L_rows = self._L.reshape(nb, 1, 16)
        L, X = list(self._L.reshape(nb, 4, 4)), list(self.XT)
        # ndarray.dot is np.dot without the __array_function__ dispatch: half the cost of
        # a 4x4 product here, same bits.
        self._steps = [(L[i].dot, X[p], X[i]) for i, p in kin.order]
        self._rows_in = self.XT.reshape(-1, 4)
        self._bodies16 = self.XT[:nb].reshape(nb, 16)
        self._wr = np.empty((2 * nc + 1, 4))
        self._w, self._r = self._wr[:nc, :3], self._wr[nc:2 * nc, :3]
        self._moment = self._wr[2 * nc, :3]
        self._u = np.empty((nc, 3))
        self.tau = np.empty(nq)
        # Mimics: the coordinates' forces, folded onto q (else tau_c is tau itself).
        self._tau_c = self.tau if kin.fold is None else np.empty(nc)
        self._pose_terms = np.empty((nb, 19))
        self._starts = np.arange(nb)[:, None] * 19 + 3    # where each body's candidates start
        self._energy = 0.0                      # the compiled gravity's V

    def frames(self, q):
        """Return ``X_WB^T`` of every body, (nb + 1, 4, 4), world (identity) last."""
        kin = self._kin
        if q is not self.q:                 # a caller may keep its configuration in q
            self.q[:] = q
        if self._kernels is not None:
            self._kernels.one(self.q, self._W, _NO_POSES, _NO_TAU, False, False)
            return self.XT
        # Outputs by position: a keyword costs its parsing on every call.
        np.multiply(self._q_ext.take(kin.z_index), kin.z_scale, self._args)
        if kin.z_offset is not None:        # mimic joints with an offset
            self._args += kin.z_offset
        np.sin(self._sin, self._sin)
        np.square(self._half, self._half)
        np.matmul(self._c_rows, kin.HT, self._L_rows)
        for parent_to_body_dot, world_to_parent, out in self._steps:
            parent_to_body_dot(world_to_parent, out)
        return self.XT

    def poses(self):
        """Return ``X_WB`` of every body (nb, 4, 4) as a view of the frames."""
        return self.XT[:self._kin.nb].transpose(0, 2, 1)

    def gravity(self):
        """Return ``tau_g`` of the frames (this buffer's): one product with the frame rows."""
        kin = self._kin
        if self._kernels is not None:
            self._energy = self._kernels.gravity(self._W, self.tau)
            return self.tau
        kin.frame_rows.dot(self._rows_in, self._wr)
        u = self._r.dot(kin.cross_g, self._u)
        u += kin.trMg
        u *= self._w
        np.add.reduce(u, 1, None, self._tau_c)                  # w_k . u_k
        if kin.fold is not None:
            kin.fold.dot(self._tau_c, self.tau)
        return self.tau

    def energy(self):
        """Return ``V`` of the frames; valid after :meth:`gravity` (it sums the moments)."""
        if self._kernels is not None:
            return self._energy
        return -float(self._moment.dot(self._kin.gravity))

    def gravity_energy(self):
        """Return ``(tau_g, V)`` of the frames."""
        return self.gravity(), self.energy()

    def frames_gravity_energy(self, q):
        """Return ``(tau_g, V)`` of ``q``, its frames left in the buffers: one kernel call."""
        if self._kernels is None:
            self.frames(q)
            return self.gravity_energy()
        if q is not self.q:
            self.q[:] = q
        self._energy = self._kernels.one(self.q, self._W, _NO_POSES, self.tau, False, True)
        return self.tau, self._energy

    def parent_pose_writer(self, bodies):
        """
        Return ``write(out)``: each listed body's pose in its parent, as of the last frames.

        ``bodies``: body indices (model order). ``write`` puts ``x, y, z, qx, qy, qz, qw``
        of ``X_PB`` (the joint's parent -> child transform, what a TF publisher sends) for
        each into ``out`` (len(bodies), 7): the same formulas as :meth:`pose_rows`, on the
        per-body transforms :meth:`frames` built before composing them.
        """
        bodies = np.asarray(bodies, dtype=np.intp)
        n = len(bodies)
        picked, terms = np.empty((n, 16)), np.empty((n, 19))
        starts = np.arange(n)[:, None] * 19 + 3
        rows = self._L

        def write(out):
            rows.take(bodies, 0, picked)
            picked.dot(POSE_TABLE_TRANSPOSED, terms)
            out[:, :3] = terms[:, :3]
            pick_quaternions(terms, 3, out[:, 3:], starts)
            return out
        return write

    def pose_rows(self, out):
        """Write ``x, y, z, qx, qy, qz, qw`` of every body's world pose into ``out`` (nb, 7)."""
        terms = self._bodies16.dot(POSE_TABLE_TRANSPOSED, self._pose_terms)
        out[:, :3] = terms[:, :3]
        pick_quaternions(terms, 3, out[:, 3:], self._starts)
        return out
