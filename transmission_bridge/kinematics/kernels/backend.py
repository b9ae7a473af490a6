"""
The numba backend's side of :mod:`..backend`'s interface: the model packed, the loops called.

A model's constants travel as two flat arrays (``ints``, ``floats``: :mod:`.loops`), made
once per model; each workspace has one ``work`` buffer whose views are the workspace's
``XT_PB`` and ``XT_WB``, so the shared pose writers of :class:`..backend.Workspace` read what
the loops wrote.
"""

import importlib.machinery

import numpy as np

from . import dynamics, loops
from .loops import B_COM, B_HT, B_MASS, B_WIDTH, B_ZR, B_ZR0, B_ZT, B_ZT0
from .loops import C_AXIS, C_MSUB, C_MUL, C_ORIGIN, C_ROT, C_TR, C_TRM, C_WIDTH
from ..backend import Backend, Workspace

_NO_POSES, _NO_TAU = np.empty((0, 4, 4)), np.empty(0)   # what the loops fill when not asked
_GRAVITY = ('gravity',)
_F8 = np.dtype(np.float64)
_EXTENSIONS = tuple(importlib.machinery.EXTENSION_SUFFIXES)     # a module compiled ahead


class NumbaBackend(Backend):
    """The compiled backend: every call one pass of a loop over the tree."""

    name = 'numba'

    def __init__(self, tree):
        super().__init__(tree)
        nb, nc = tree.nb, tree.nc
        if any(p >= i for i, p in enumerate(tree.parent)):
            raise ValueError('bodies must come parents first')
        offset = tree.z_offset if tree.z_offset is not None else np.zeros(3 * nb)
        B = np.zeros((nb, B_WIDTH))
        B[:, B_ZR], B[:, B_ZR0] = tree.z_scale[:nb], offset[:nb]
        B[:, B_ZT], B[:, B_ZT0] = tree.z_scale[2 * nb:], offset[2 * nb:]
        B[:, B_MASS], B[:, B_COM:B_COM + 3] = tree.mass, tree.com
        B[:, B_HT:] = tree.HT.reshape(nb, 64)
        C = np.zeros((nc, C_WIDTH))
        C[:, C_AXIS:C_AXIS + 3], C[:, C_ORIGIN:C_ORIGIN + 3] = tree.axis_Pq, tree.p_PJq
        C[:, C_ROT], C[:, C_TR], C[:, C_TRM], C[:, C_MSUB] = (tree.rot_q, tree.tr_q, tree.trM,
                                                              tree.M_sub)
        C[:, C_MUL] = [tree.qmul[i] for i in tree.joint_body]
        body_ints = [(p if p >= 0 else nb, k) for p, k in zip(tree.parent, tree.qidx)]
        coord_ints = [(i, p, tree.qidx[i]) for i, p in zip(tree.joint_body, tree.joint_parent)]
        self.ints = np.array([nb, nc, tree.nq] + [v for row in body_ints for v in row]
                             + [v for row in coord_ints for v in row], dtype=np.intp)
        self.floats = np.concatenate([B.ravel(), C.ravel(),
                                      np.asarray(tree.gravity, dtype=float)])
        self.on_path = np.ascontiguousarray(tree.on_path)
        self._nb, self._nq = nb, tree.nq
        self._dynamics = dynamics.DynamicsTables(tree)
        # Compiled ahead of time (no numba in the process) where built, else numba's.
        self._loops, self._dyn = loops.kernels(), dynamics.kernels()
        self.compiled = ('ahead of time' if all(k.__file__.endswith(_EXTENSIONS) for k in (
            self._loops, self._dyn)) else 'by numba')
        ni, nf = len(self.ints), len(self.floats)
        self._tables, self._floats_all = self._dynamics.pack(self.ints, self.floats,
                                                             _work_size(tree))
        self.ints, self.floats = self._tables[:ni], self._floats_all[:nf]

    def new_workspace(self):
        """Return a new :class:`NumbaWorkspace`."""
        return NumbaWorkspace(self)

    def _one(self, q, what, out):
        """Evaluate one configuration in the loops: into ``out``, or new arrays."""
        ws = self.workspace()
        ws.q[:] = q                         # float64, contiguous: the loop's one typing
        if out is None and what == _GRAVITY:        # the usual call, in the fewest steps
            tau = np.empty(self._nq)
            self._loops.one(ws.q, self.ints, self.floats, ws.work, _NO_POSES, tau, False, True)
            return (tau,)
        want_poses, want_gravity = 'poses' in what, what != ('poses',)
        if out is None:
            poses = np.empty((self._nb, 4, 4)) if want_poses else _NO_POSES
            tau = np.empty(self._nq) if 'gravity' in what else ws.tau
            energy = self._loops.one(ws.q, self.ints, self.floats, ws.work, poses, tau, want_poses,
                                     want_gravity)
            values = {'poses': poses, 'gravity': tau, 'energy': energy}
            return tuple([values[w] for w in what])
        dest = dict(zip(what, out))
        energy = self._loops.one(ws.q, self.ints, self.floats, ws.work,
                                 dest.get('poses', _NO_POSES), dest.get('gravity', ws.tau),
                                 want_poses, want_gravity)
        if 'energy' in dest:
            dest['energy'][...] = energy
        return out

    def _batch(self, q, what, out):
        """Evaluate a batch (..., nq) in the loops, which write the outputs in place."""
        tree = self.tree
        lead = q.shape[:-1]
        if out is None:
            out = tuple([np.empty(lead + self.shapes[w]) for w in what])
        dest = dict(zip(what, out))
        want_poses = 'poses' in dest
        want_gravity = 'gravity' in dest or 'energy' in dest
        n = int(np.prod(lead))
        flat = np.ascontiguousarray(q.reshape(n, tree.nq), dtype=float)
        if not flat.flags.writeable:        # numba compiles read-only arrays apart: copy
            flat = flat.copy()
        poses = dest['poses'].reshape(n, tree.nb, 4, 4) if want_poses else \
            np.empty((1, tree.nb, 4, 4))
        tau = dest['gravity'].reshape(n, tree.nq) if 'gravity' in dest else \
            np.empty((n if want_gravity else 1, tree.nq))
        energy = dest['energy'].reshape(n) if 'energy' in dest else \
            np.empty(n if want_gravity else 1)
        self._loops.batch(flat, self.ints, self.floats, _work(tree)[0], poses, tau, energy,
                          want_poses, want_gravity)
        return out

    def _scratch(self):
        """Return this thread's workspace and its dynamics scratch buffer."""
        ws = self.workspace()
        return ws, ws.scratch

    def fast_inverse_dynamics(self, q, v, a):
        """
        Return ``tau`` of one configuration in one compiled call, or None to take the checks.

        The path of a controller's call once a tick: three contiguous 1-D float64 arrays of
        nq entries; anything else (a batch, a list, a view with a stride, another dtype or
        length) returns None.
        """
        try:
            if not (q.dtype is _F8 and v.dtype is _F8 and a.dtype is _F8
                    and q.ndim == v.ndim == a.ndim == 1 and q.flags.c_contiguous
                    and v.flags.c_contiguous and a.flags.c_contiguous):
                return None
        except AttributeError:
            return None
        tau = np.empty(self._nq)
        ok = self._dyn.rnea_one(q, v, a, self._tables, self._floats_all, self.workspace().buffer,
                                tau)
        return tau if ok else None

    def fast_gravity(self, q):
        """Return ``tau_g`` of one configuration in one compiled call, or None (as above)."""
        return self._one_call(self._loops.gravity_one, q, (self._nq,))

    def fast_mass_matrix(self, q):
        """Return ``M`` of one configuration in one compiled call, or None (as above)."""
        return self._one_call(self._dyn.crba_one, q, (self._nq, self._nq))

    def _one_call(self, kernel, q, shape):
        """Return ``kernel``'s output of this shape for one 1-D float64 ``q``, or None."""
        try:
            if not (q.dtype is _F8 and q.ndim == 1 and q.flags.c_contiguous):
                return None
        except AttributeError:
            return None
        out = np.empty(shape)
        ok = kernel(q, self._tables, self._floats_all, self.workspace().buffer, out)
        return out if ok else None

    def _rnea(self, Q, V, A, gravity):
        """Return Newton-Euler's ``tau`` of the rows: one compiled loop."""
        ws, scratch = self._scratch()
        tau = np.empty(Q.shape)
        d = self._dynamics
        self._dyn.rnea_batch(Q, V, A, gravity, self.ints, self.floats, ws.work, d.dints,
                             d.dfloats, scratch, tau)
        return tau

    def _rnea_one(self, q, v, a, gravity):
        """Return Newton-Euler's ``tau`` of one configuration: one compiled loop."""
        ws, scratch = self._scratch()
        tau = np.empty(self._nq)
        d = self._dynamics
        self._dyn.rnea(np.ascontiguousarray(q), np.ascontiguousarray(v), np.ascontiguousarray(a),
                       gravity, self.ints, self.floats, ws.work, d.dints, d.dfloats, scratch, tau)
        return tau

    def forward_dynamics(self, q, v, tau):
        """Return ``M^-1 (tau - nle)``, one compiled loop (Cholesky); None if M is singular."""
        ws, scratch = self._scratch()
        nq, d = self._nq, self._dynamics
        M = np.empty((nq, nq))
        if q.ndim == 1:
            a = np.empty(nq)
            ok = self._dyn.forward_dynamics(
                 np.ascontiguousarray(q), np.ascontiguousarray(v), np.ascontiguousarray(tau),
                 self.ints, self.floats, ws.work, d.dints, d.dfloats, scratch, M, a)
            return a if ok else None
        n = int(np.prod(q.shape[:-1]))
        rows = [np.ascontiguousarray(x.reshape(n, nq)) for x in (q, v, tau)]
        A = np.empty((n, nq))
        ok = self._dyn.forward_dynamics_batch(*rows, self.ints, self.floats, ws.work, d.dints,
                                              d.dfloats, scratch, M, A)
        return A.reshape(q.shape) if ok else None

    def _crba(self, Q, out=None):
        """Return the mass matrices of the rows: one compiled loop."""
        ws, scratch = self._scratch()
        M = np.empty((len(Q), self._nq, self._nq)) if out is None else out
        d = self._dynamics
        self._dyn.crba_batch(Q, self.ints, self.floats, ws.work, d.dints, d.dfloats, scratch,
                             M)
        return M


def _work_size(tree):
    """Return the length of a work buffer of ``tree``."""
    return 35 * tree.nb + 16 + tree.nc


def _work(tree, tail=0):
    """
    Return a new work buffer and its views ``(work, XT_PB, XT_WB, S, tau_c)``.

    ``tail``: that many more numbers after ``work`` in the same allocation (``work.base``).
    """
    nb, size = tree.nb, _work_size(tree)
    work = np.zeros(size + tail)[:size]
    a, b, c = 16 * nb, 32 * nb + 16, 35 * nb + 16
    XT_PB, XT_WB = work[:a].reshape(nb, 16), work[a:b].reshape(nb + 1, 4, 4)
    XT_WB[nb] = np.eye(4)                   # the world: the loops never write it
    return work, XT_PB, XT_WB, work[b:c].reshape(nb, 3), work[c:]


class NumbaWorkspace(Workspace):
    """Evaluate one configuration at a time: one call of a compiled loop each."""

    def __init__(self, backend):
        super().__init__(backend.tree)
        self._backend = backend
        nb = backend.tree.nb
        self.work, self.XT_PB, self.XT_WB, _, _ = _work(
            backend.tree, dynamics.DynamicsTables.scratch_size(nb))
        self.buffer = self.work.base            # work, then the dynamics' scratch
        self.scratch = self.buffer[len(self.work):]
        self.q = np.zeros(backend.tree.nq)
        self.tau = np.empty(backend.tree.nq)
        self._energy = 0.0                      # the last gravity's V

    def frames(self, q):
        """Return ``XT_WB`` of every body, (nb + 1, 4, 4), world (identity) last."""
        if q is not self.q:                 # a caller may keep its configuration in q
            self.q[:] = q
        b = self._backend
        b._loops.one(self.q, b.ints, b.floats, self.work, _NO_POSES, _NO_TAU, False, False)
        return self.XT_WB

    def gravity(self):
        """Return ``tau_g`` of the frames (this buffer's)."""
        b = self._backend
        self._energy = b._loops.gravity(b.ints, b.floats, self.work, self.tau)
        return self.tau

    def energy(self):
        """Return ``V`` of the frames; valid after :meth:`gravity`."""
        return self._energy

    def frames_gravity_energy(self, q):
        """Return ``(tau_g, V)`` of ``q``, its frames left in the buffers: one loop call."""
        if q is not self.q:
            self.q[:] = q
        b = self._backend
        self._energy = b._loops.one(self.q, b.ints, b.floats, self.work, _NO_POSES, self.tau,
                                    False, True)
        return self.tau, self._energy

    def jacobians(self, bodies, points):
        """Return the Jacobians [angular; linear] of a point on each body, (n, 6, nq)."""
        b = self._backend
        points = np.ascontiguousarray(points, dtype=float).reshape(len(bodies), 3)
        J = np.empty((len(bodies), 6, self.tree.nq))
        b._loops.jacobians(b.ints, b.floats, self.work, b.on_path,
                           np.asarray(bodies, dtype=np.intp), points, J)
        return J
