"""
How a model's algorithms run: a backend, chosen once per model, behind one small interface.

Two backends compute the same quantities from the same :class:`~.tree.TreeArrays`:
``numpy`` (:mod:`.numpy_backend`, the reference, plain numpy calls) and ``numba``
(:mod:`.kernels`, compiled loops that walk the tree once per call; used where numba
imports). They agree to 1e-12 of each output's scale on every corpus robot
(test_compiled_kernels.py). ``TRANSMISSION_BRIDGE_KERNELS=numpy`` in the environment makes
``numpy`` the default even where numba is installed; :meth:`Model.with_kernels
<transmission_bridge.kinematics.Model.with_kernels>` chooses per model;
:func:`.backend_choice.make_backend` makes one (this module is the interface only: it imports
neither backend).

The interface (what :class:`~transmission_bridge.kinematics.Model` and the kinematics node
call; a backend implements the methods marked *)::

    Backend.name                          'numpy' | 'numba'
    Backend.evaluate(q, what, out=None)   'poses', 'gravity', 'energy' of q (nq,) or (..., nq)
    Backend.workspace()                   this thread's Workspace
    Backend.new_workspace()             * a Workspace of its own (one per caller)
    Backend.warm_up()                     compile now (numba), not on the first call
    Backend._one(q, what, out)          * one configuration, into out or new arrays
    Backend._batch(q, what, out)        * a batch, into out or new arrays

    Backend.inverse_dynamics(q, v, a, gravity=True)   tau (..., nq): Newton-Euler
    Backend.mass_matrix(q, out=None)      M (..., nq, nq): composite bodies
    Backend.forward_dynamics(q, v, tau)   a (..., nq), or None where M is singular
    Backend._rnea(Q, V, A, gravity)     * the same, rows of a batch (N, nq)
    Backend._crba(Q, out=None)          * (N, nq, nq), into out (N, nq, nq) if given
    Backend._rnea_one(q, v, a, gravity)   one configuration (nq,): _rnea of one row

    Workspace.q                           (nq,) the configuration its results are of
    Workspace.XT_PB, Workspace.XT_WB      X_PB^T of every body (nb, 16), X_WB^T (nb + 1, 4, 4)
                                          with the world (identity) last: NOTATION.md
    Workspace.frames(q)                 * fill XT_PB and XT_WB for q; return XT_WB
    Workspace.gravity()                 * tau_g of the frames; energy() V after it
    Workspace.frames_gravity_energy(q)  * both, from one call
    Workspace.jacobians(bodies, points) * (n, 6, nq) of body points, from the frames
    Workspace.poses(), pose_rows(out), parent_pose_writer(bodies)   from the frames (shared)
"""

import threading

import numpy as np

from . import _checks
from .spatial import pick_quaternions, POSE_TABLE_TRANSPOSED

KERNELS_ENV = 'TRANSMISSION_BRIDGE_KERNELS'
KINDS = ('numpy', 'numba')


class Backend:
    """The algorithms of one tree (see the module docstring); subclasses say how."""

    name = None

    def __init__(self, tree):
        self.tree = tree
        self._local = threading.local()     # one Workspace per thread
        self.shapes = {'poses': (tree.nb, 4, 4), 'gravity': (tree.nq,), 'energy': ()}

    def workspace(self):
        """Return this thread's :class:`Workspace` (made on first use)."""
        ws = getattr(self._local, 'workspace', None)
        if ws is None:
            ws = self._local.workspace = self.new_workspace()
        return ws

    def new_workspace(self):
        """Return a new :class:`Workspace` (one configuration at a time, its own buffers)."""
        raise NotImplementedError

    def warm_up(self):
        """Run every algorithm once (numba compiles, or loads from its cache, on first use)."""
        q = np.zeros((1, self.tree.nq))
        self.evaluate(q, ('poses', 'gravity', 'energy'))
        self.evaluate(q[0], ('poses', 'gravity', 'energy'))
        self.workspace().gravity()
        if self.tree.nb:
            self.jacobians(q[0], [self.tree.nb - 1], [np.zeros(3)])

    def evaluate(self, q, what, out=None):
        """
        Return the outputs named in ``what`` for q (nq,) or (..., nq): a tuple in that order.

        ``what`` holds 'poses' (..., nb, 4, 4), 'gravity' (..., nq) and 'energy' (...),
        all from one kinematics pass. ``out``, a tuple of one array per name (float64,
        C-contiguous, writeable, exactly that shape, not overlapping ``q``), receives the
        results instead of new arrays and is returned: a caller that evaluates batch after
        batch reuses its buffers and no fresh pages are zeroed.
        """
        if out is not None:
            lead = q.shape[:-1]
            out = _checks.out_arrays(out, q, [(w, lead + self.shapes[w]) for w in what])
        if q.ndim == 1:
            return self._one(q, what, out)
        return self._batch(q, what, out)

    def _one(self, q, what, out):
        raise NotImplementedError

    def _batch(self, q, what, out):
        raise NotImplementedError

    def inverse_dynamics(self, q, v, a, gravity=True):
        """
        Return the joint forces of accelerations ``a`` at ``q``, ``v``: (..., nq).

        Newton-Euler (:mod:`.newton_euler`), gravity included unless ``gravity`` False;
        ``q``, ``v``, ``a`` of one shape (..., nq), float64.
        """
        if q.ndim == 1:
            return self._rnea_one(q, v, a, bool(gravity))
        n = int(np.prod(q.shape[:-1]))
        rows = [np.ascontiguousarray(x.reshape(n, self.tree.nq)) for x in (q, v, a)]
        return self._rnea(*rows, bool(gravity)).reshape(q.shape)

    def mass_matrix(self, q, out=None):
        """Return the joint-space mass matrix at ``q``: (..., nq, nq), into ``out`` if given."""
        nq = self.tree.nq
        if q.ndim == 1:                     # the usual call, in the fewest steps
            M = self._crba(np.ascontiguousarray(q)[None], None if out is None else out[None])
            return M[0] if out is None else out
        n = int(np.prod(q.shape[:-1]))
        rows = None if out is None else out.reshape(n, nq, nq)
        M = self._crba(np.ascontiguousarray(q.reshape(n, nq)), rows)
        return M.reshape(q.shape[:-1] + (nq, nq)) if out is None else out

    def forward_dynamics(self, q, v, tau):
        """
        Return ``M^-1 (tau - nle)`` at ``q``, ``v`` (..., nq), or None where M is singular.

        The reference: the mass matrix and the nonlinear effects, then a dense solve.
        """
        rhs = tau - self.inverse_dynamics(q, v, np.zeros(q.shape))
        try:
            return np.linalg.solve(self.mass_matrix(q), rhs[..., None])[..., 0]
        except np.linalg.LinAlgError:
            return None

    def fast_inverse_dynamics(self, q, v, a):
        """Return ``tau`` of one configuration by a shorter path, or None: take the checks."""
        return None

    def fast_gravity(self, q):
        """Return ``tau_g`` of one configuration by a shorter path, or None: take the checks."""
        return None

    def fast_mass_matrix(self, q):
        """Return ``M`` of one configuration by a shorter path, or None: take the checks."""
        return None

    def _rnea(self, Q, V, A, gravity):
        raise NotImplementedError

    def _rnea_one(self, q, v, a, gravity):
        """Return :meth:`_rnea` of one configuration (a backend may do it faster)."""
        return self._rnea(q[None], v[None], a[None], gravity)[0]

    def _crba(self, Q, out=None):
        raise NotImplementedError

    def jacobians(self, q, bodies, points):
        """Return the Jacobians of a point on each of ``bodies``: (n, 6, nq), one frames pass."""
        ws = self.workspace()
        ws.frames(q)
        return ws.jacobians(bodies, points)

    def jacobian(self, q, body, point):
        """Return the geometric Jacobian [angular; linear] of a body point, (..., 6, nq)."""
        if q.ndim == 1:
            return self.jacobians(q, [body], [point])[0]
        flat = q.reshape(int(np.prod(q.shape[:-1])), q.shape[-1])
        out = np.array([self.jacobians(qi, [body], [point])[0] for qi in flat])
        return out.reshape(q.shape[:-1] + (6, self.tree.nq))

    def __getstate__(self):
        state = dict(self.__dict__)
        del state['_local']                 # per-thread buffers: not sent, made again
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._local = threading.local()


class Workspace:
    """
    One configuration at a time in preallocated buffers (see the module docstring).

    Results stay in the buffers until the next call, so each thread needs its own
    (:meth:`Backend.workspace`); a caller that evaluates every message, such as the
    kinematics node's core, keeps one and reads the buffers in place. Subclasses allocate
    :attr:`q`, :attr:`XT_PB`, :attr:`XT_WB` and :attr:`tau` and fill them.
    """

    def __init__(self, tree):
        self.tree = tree
        nb = tree.nb
        self._bodies16 = None
        self._pose_terms = np.empty((nb, 19))
        self._starts = np.arange(nb)[:, None] * 19 + 3    # where each body's candidates start

    def poses(self):
        """Return ``X_WB`` of every body (nb, 4, 4) as a view of the frames."""
        return self.XT_WB[:self.tree.nb].transpose(0, 2, 1)

    def pose_rows(self, out):
        """Write ``x, y, z, qx, qy, qz, qw`` of every body's world pose into ``out`` (nb, 7)."""
        if self._bodies16 is None:
            self._bodies16 = self.XT_WB[:self.tree.nb].reshape(self.tree.nb, 16)
        terms = self._bodies16.dot(POSE_TABLE_TRANSPOSED, self._pose_terms)
        out[:, :3] = terms[:, :3]
        pick_quaternions(terms, 3, out[:, 3:], self._starts)
        return out

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
        rows = self.XT_PB

        def write(out):
            rows.take(bodies, 0, picked)
            picked.dot(POSE_TABLE_TRANSPOSED, terms)
            out[:, :3] = terms[:, :3]
            pick_quaternions(terms, 3, out[:, 3:], starts)
            return out
        return write

    def gravity_energy(self):
        """Return ``(tau_g, V)`` of the frames."""
        return self.gravity(), self.energy()
