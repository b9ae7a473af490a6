"""
The reference backend: the chain algorithms in numpy calls (formulas: :mod:`.tree`).

One configuration (:class:`NumpyWorkspace`) builds every ``XT_PB`` in one ``matmul`` and
composes down the tree with one BLAS ``dot`` per body into a preallocated stack,
``XT_WB = XT_PB XT_WP``; everything after that (gravity, energy, joint axes) is a constant
matrix times that stack, because each is linear in the entries of the poses. A batch
(:meth:`NumpyBackend.frames_batch`) keeps the same stack batch-last, ``(nb + 1, 4, 3, N)``
(every entry one contiguous vector), composes it with one ``einsum`` per body and applies
the same constant matrices to all configurations in one ``einsum`` (not a gemm, whose
rounding depends on the thread count), in chunks of :data:`CHUNK`.
"""

import numpy as np

from . import newton_euler
from .backend import Backend, Workspace

CHUNK = 4096     # configurations per chunk: keeps the per-body arrays in cache (bench)
_EYE4 = np.eye(4)


class NumpyBackend(Backend):
    """The reference backend (see the module docstring)."""

    name = 'numpy'

    def __init__(self, tree):
        super().__init__(tree)
        self._widths = {'poses': 16 * tree.nb, 'gravity': tree.nq, 'energy': 1}

    def new_workspace(self):
        """Return a new :class:`NumpyWorkspace`."""
        return NumpyWorkspace(self.tree)

    def warm_up(self):
        """Do nothing: numpy compiles nothing."""

    def _one(self, q, what, out):
        """Return the outputs named in ``what`` for one configuration, copies or ``out``."""
        ws = self.workspace()
        if what == ('poses',):
            ws.frames(q)
            tau, energy = None, None
        else:
            tau, energy = ws.frames_gravity_energy(q)
        values = {'poses': ws.poses(), 'gravity': tau, 'energy': energy}
        if out is None:                     # copies: the views change with the next call
            return tuple([values[w] if w == 'energy' else values[w].copy() for w in what])
        for o, w in zip(out, what):
            o[...] = values[w]
        return out

    def _batch(self, q, what, out):
        """Return the outputs named in ``what`` for a batch, chunk by chunk."""
        lead = q.shape[:-1]
        n = int(np.prod(lead))
        if out is None:
            out = tuple(np.empty(lead + self.shapes[w]) for w in what)
        flat = q.reshape(n, q.shape[-1])
        whole = {w: o.reshape(n, self._widths[w]) for w, o in zip(what, out)}
        for start in range(0, n, CHUNK):
            self._pass_batch(flat[start:start + CHUNK],
                             {w: d[start:start + CHUNK] for w, d in whole.items()})
        return out

    def frames_batch(self, q):
        """
        Return ``XT_WB`` batch-last, (nb + 1, 4, 3, N): ``[i, j]`` is column j of ``X_WB_i``.

        The batch twin of :meth:`NumpyWorkspace.frames`' stack: ``[i, :3]`` is ``R_WB_i``
        transposed and ``[i, 3]`` is ``p_WB_i``, each entry a contiguous vector; the world
        (identity) last.
        """
        tree = self.tree
        n, nb = q.shape[0], tree.nb
        XT_WB = np.empty((nb + 1, 4, 3, n))
        XT_WB[nb] = _EYE4[:, :3, None]
        C = np.empty((4, n))
        C[0] = 1.0
        for i, par in tree.order:
            k = tree.qidx[i]
            if k >= 0:
                qk = q[:, k]
                if tree.qmul[i] != 1.0 or tree.qoff[i] != 0.0:      # a mimic joint
                    qk = qk * tree.qmul[i] + tree.qoff[i]
                if tree.rot[i]:
                    angle = qk * tree.rot[i]
                    np.sin(angle, out=C[1])
                    np.sin(0.5 * angle, out=C[2])
                    np.square(C[2], out=C[2])
                else:
                    C[1:3] = 0.0
                np.multiply(qk, tree.tr[i], out=C[3])
                R_PB = (tree.RA[i] @ C[:3]).reshape(3, 3, n)
                p_PB = tree.PB[i] @ C
            else:
                R_PB = np.broadcast_to(tree.A0[i][..., None], (3, 3, n))
                p_PB = np.broadcast_to(tree.b0[i][:, None], (3, n))
            # Column b of R_WB = R_WP (column b of R_PB); p_WB = p_WP + R_WP p_PB.
            np.einsum('arn,abn->brn', XT_WB[par, :3], R_PB, out=XT_WB[i, :3])
            np.einsum('arn,an->rn', XT_WB[par, :3], p_PB, out=XT_WB[i, 3])
            XT_WB[i, 3] += XT_WB[par, 3]
        return XT_WB

    def _rnea(self, Q, V, A, gravity):
        """Return Newton-Euler's ``tau`` of the rows, chunk by chunk (:mod:`.newton_euler`)."""
        tau = np.empty(Q.shape)
        for start in range(0, len(Q), CHUNK):
            part = slice(start, start + CHUNK)
            frames = newton_euler.BodyFrames(self.tree, self.frames_batch(Q[part]))
            tau[part] = newton_euler.inverse_dynamics(self.tree, frames, V[part], A[part],
                                                      gravity)
        return tau

    def _crba(self, Q, out=None):
        """Return the mass matrices of the rows, chunk by chunk (:mod:`.newton_euler`)."""
        nq = self.tree.nq
        M = np.empty((len(Q), nq, nq)) if out is None else out
        for start in range(0, len(Q), CHUNK):
            part = slice(start, start + CHUNK)
            frames = newton_euler.BodyFrames(self.tree, self.frames_batch(Q[part]))
            M[part] = newton_euler.mass_matrix(self.tree, frames)
        return M

    def _pass_batch(self, q, dest):
        """
        Write the outputs keyed in ``dest`` for the chunk ``q`` (n, nq), from one frames pass.

        ``dest`` maps ``'poses'`` to (n, nb * 16) (each X_WB row-major), ``'gravity'`` to
        (n, nq) and ``'energy'`` to (n, 1). Gravity and energy are the one-configuration
        path's constant matrices applied to every configuration at once.
        """
        tree = self.tree
        XT_WB = self.frames_batch(q)
        n, nb, nc = q.shape[0], tree.nb, tree.nc
        if 'poses' in dest:
            X = dest['poses'].reshape(n, nb, 4, 4)
            X[:, :, :3, :] = XT_WB[:nb].transpose(3, 0, 2, 1)
            X[:, :, 3, :3] = 0.0
            X[:, :, 3, 3] = 1.0
        if 'gravity' not in dest and 'energy' not in dest:
            return
        rows = XT_WB.reshape(4 * (nb + 1), 3 * n)           # row (i, j), column (r, N)
        # einsum, not BLAS: a threaded gemm's rounding depends on the thread count and the
        # chunk size, and a fleet's workers must write the same bytes (test_fleet).
        wr = np.einsum('ck,kx->cx', tree.frame_rows, rows).reshape(2 * nc + 1, 3, n)
        if 'gravity' in dest:
            u = np.einsum('krn,rs->ksn', wr[nc:2 * nc], tree.cross_g)
            u += tree.trMg[..., None]
            u *= wr[:nc]
            if tree.fold is None:
                dest['gravity'][:] = u.sum(axis=1).T                 # w_k . u_k
            else:                                                    # mimics folded
                np.einsum('kc,cn->nk', tree.fold, u.sum(axis=1), out=dest['gravity'])
        if 'energy' in dest:
            dest['energy'][:, 0] = -(wr[2 * nc] * tree.gravity[:, None]).sum(axis=0)


class NumpyWorkspace(Workspace):
    """One configuration at a time: a dozen numpy calls plus one per body."""

    def __init__(self, tree):
        super().__init__(tree)
        nb, nq, nc = tree.nb, tree.nq, tree.nc
        self._q_ext = np.zeros(nq + 1)          # q, then the 0 fixed bodies read
        self.q = self._q_ext[:nq]
        # c = (1, sin a, sin²(a/2), tr q) per body; the last 3 nb first hold the arguments.
        c = np.empty(4 * nb)
        c[:nb] = 1.0
        self._args, self._sin, self._half = c[nb:], c[nb:3 * nb], c[2 * nb:3 * nb]
        self._c_rows = c.reshape(4, nb).T[:, None, :]      # (nb, 1, 4): body b's c
        self.XT_PB = np.empty((nb, 16))         # X_PB^T of every body, row-major
        self.XT_WB = np.empty((nb + 1, 4, 4))   # X_WB^T of every body, the world last
        self.XT_WB[nb] = _EYE4
        self._XT_PB_rows = self.XT_PB.reshape(nb, 1, 16)
        L, X = list(self.XT_PB.reshape(nb, 4, 4)), list(self.XT_WB)
        # ndarray.dot is np.dot without the __array_function__ dispatch: half the cost of
        # a 4x4 product here, same bits.
        self._steps = [(L[i].dot, X[p], X[i]) for i, p in tree.order]
        self._rows_in = self.XT_WB.reshape(-1, 4)
        self._wr = np.empty((2 * nc + 1, 4))
        self._w, self._r = self._wr[:nc, :3], self._wr[nc:2 * nc, :3]
        self._moment = self._wr[2 * nc, :3]
        self._u = np.empty((nc, 3))
        self.tau = np.empty(nq)
        # Mimics: the coordinates' forces, folded onto q (else tau_c is tau itself).
        self._tau_c = self.tau if tree.fold is None else np.empty(nc)

    def frames(self, q):
        """Return ``XT_WB`` of every body, (nb + 1, 4, 4), world (identity) last."""
        tree = self.tree
        if q is not self.q:                 # a caller may keep its configuration in q
            self.q[:] = q
        # Outputs by position: a keyword costs its parsing on every call.
        np.multiply(self._q_ext.take(tree.z_index), tree.z_scale, self._args)
        if tree.z_offset is not None:       # mimic joints with an offset
            self._args += tree.z_offset
        np.sin(self._sin, self._sin)
        np.square(self._half, self._half)
        np.matmul(self._c_rows, tree.HT, self._XT_PB_rows)
        for parent_to_body_dot, world_to_parent, out in self._steps:
            parent_to_body_dot(world_to_parent, out)
        return self.XT_WB

    def gravity(self):
        """Return ``tau_g`` of the frames (this buffer's): one product with the frame rows."""
        tree = self.tree
        tree.frame_rows.dot(self._rows_in, self._wr)
        u = self._r.dot(tree.cross_g, self._u)
        u += tree.trMg
        u *= self._w
        np.add.reduce(u, 1, None, self._tau_c)                  # w_k . u_k
        if tree.fold is not None:
            tree.fold.dot(self._tau_c, self.tau)
        return self.tau

    def energy(self):
        """Return ``V`` of the frames; valid after :meth:`gravity` (it sums the moments)."""
        return -float(self._moment.dot(self.tree.gravity))

    def frames_gravity_energy(self, q):
        """Return ``(tau_g, V)`` of ``q``, its frames left in the buffers."""
        self.frames(q)
        return self.gravity_energy()

    def jacobians(self, bodies, points):
        """Return the Jacobians [angular; linear] of a point on each body, (n, 6, nq)."""
        tree = self.tree
        XT = self.XT_WB
        wo = np.dot(tree.axis_rows, XT.reshape(-1, 4))[:, :3]
        w, o = wo[:tree.nc], wo[tree.nc:]
        out = []
        for body, point in zip(bodies, points):
            x = np.asarray(point, dtype=float) @ XT[body, :3, :3] + XT[body, 3, :3]
            mask = tree.on_path[body][:, None]
            j_w = tree.rot_q[:, None] * w * mask
            j_v = (tree.rot_q[:, None] * np.cross(w, x - o) + tree.tr_q[:, None] * w) * mask
            J = np.concatenate([j_w, j_v], axis=1).T            # (6, nc): per coordinate
            out.append(J if tree.fold is None else J @ tree.fold.T)
        return np.array(out).reshape(len(out), 6, tree.nq)
