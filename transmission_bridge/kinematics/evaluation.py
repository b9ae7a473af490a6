"""
What a :class:`~.model.Model` computes: poses, Jacobians, gravity, energy, damping.

A mixin of :class:`~.model.Model`: thin methods that check their arguments and call the
model's backend (:mod:`.backend`), chosen once per model (:meth:`EvaluationMixin.with_kernels`).
Batch dimensions first, as numpy: ``q`` (nq,) or (..., nq).
"""

import numpy as np

from . import _checks
from .backend_choice import make_backend
from .errors import ModelError
from .spatial import invert


class EvaluationMixin:
    """The computations of :class:`~.model.Model` (see the module docstring)."""

    # --- the backend -------------------------------------------------------------
    @property
    def kernels(self):
        """Return ``'numba'`` when the compiled kernels evaluate this model, else ``'numpy'``."""
        return self._backend.name

    @property
    def kernels_compiled(self):
        """
        Return how the compiled kernels were made: ``'ahead of time'`` or ``'by numba'``.

        Ahead of time: a module that imports no numba (:mod:`.._shared.ahead`), the process
        then holds no LLVM; ``''`` for the numpy code.
        """
        return getattr(self._backend, 'compiled', '')

    def warm_up(self):
        """
        Compile the kernels now rather than on the first call, and return the model.

        numba compiles on a machine's first use (about 1.5 s) and loads from its disk cache
        afterwards (about 0.1 s); a node calls this at start-up so that its first message
        does not wait. Nothing to do on the numpy code.
        """
        self._backend.warm_up()
        return self

    def with_kernels(self, kind):
        """
        Return a copy evaluated by ``kind``: ``'numpy'`` or ``'numba'`` (see :attr:`kernels`).

        Models derived from the copy (``with_gravity``, ``with_payload``...) keep the choice.
        ``'numba'`` where numba does not import raises :class:`ModelError` saying why.
        """
        backend = make_backend(self._tree, kind)
        model = self._rebuilt(self._bodies)
        model._backend = backend
        return model

    def one_configuration(self):
        """
        Return new buffers that evaluate one configuration at a time with few numpy calls.

        A :class:`~transmission_bridge.kinematics.backend.Workspace`: its results stay in
        its buffers until its next call, so keep one per thread (the kinematics node's
        core keeps one). The other methods of this class use one per thread themselves and
        return copies.
        """
        return self._backend.new_workspace()

    # --- poses and Jacobians -----------------------------------------------------
    def _q(self, q):
        arr = np.asarray(q, dtype=float)
        if arr.ndim == 0 or arr.shape[-1] != self.num_positions:
            raise ModelError(f'expected q with last dimension {self.num_positions}, '
                             f'got shape {arr.shape}')
        return arr

    def body_poses(self, q, out=None):
        """
        Return ``X_WB`` of every body as one array, (..., nb, 4, 4), model order.

        ``out``: an array of that shape to write into and return instead of a new one
        (float64, C-contiguous): see :meth:`poses_and_gravity`.
        """
        return self._backend.evaluate(self._q(q), ('poses',), _single_out(out))[0]

    def forward_kinematics(self, q):
        """Return a dict body name -> ``X_WB`` (4x4; (N, 4, 4) for a batch q)."""
        poses = self.body_poses(q)
        return {name: poses[..., i, :, :] for i, name in enumerate(self.body_names)}

    def _pose_of(self, poses, frame):
        index = self.frame_index(frame)
        if index is None:
            return np.broadcast_to(np.eye(4), poses.shape[:-3] + (4, 4))
        return poses[..., index, :, :]

    def relative_transform(self, q, frame_A, frame_B):
        """Return ``X_AB``: the pose of body B in body A's frame (the world frame allowed)."""
        poses = self.body_poses(q)
        return invert(self._pose_of(poses, frame_A)) @ self._pose_of(poses, frame_B)

    def jacobian(self, q, body, point=(0.0, 0.0, 0.0)):
        """
        Return the geometric Jacobian of a point fixed on ``body``, world frame.

        ``point`` is ``p_BoBp_B`` (m, body frame). Rows are [angular; linear], so
        ``J @ v`` gives ``(w_WB, v_WBp)``; shape (..., 6, nq).
        """
        p = _checks.vector(point, 3, 'point')
        return self._backend.jacobian(self._q(q), self._index_of(body), p)

    def body_jacobians(self, q, bodies):
        """
        Return the Jacobians of the origins of ``bodies`` (names) at one q, (n, 6, nq).

        As :meth:`jacobian` of each, rows [angular; linear], from one kinematics pass.
        """
        q = self._q(q)
        if q.ndim != 1:
            raise ModelError('body_jacobians takes one configuration')
        index = [self._index_of(b) for b in bodies]
        return self._backend.jacobians(q, index, np.zeros((len(index), 3)))

    # --- gravity, energy, damping ------------------------------------------------
    def poses_and_gravity(self, q, out=None):
        """
        Return ``(X_WB of every body, tau_g)`` from one kinematics pass.

        Shapes (..., nb, 4, 4) and (..., nq): what :meth:`body_poses` and
        :meth:`gravity_generalized_forces` return, for the price of one of them.

        ``out=(poses, tau_g)``: arrays of those shapes (float64, C-contiguous, not
        overlapping ``q``) to write into and return instead of new ones. A loop over
        batches that reuses them skips the kernel's zeroing of fresh pages, which is
        most of the system time of a large batch (doc/performance.md).
        """
        return self._backend.evaluate(self._q(q), ('poses', 'gravity'), out)

    def poses_gravity_and_energy(self, q, out=None):
        """
        Return ``(X_WB of every body, tau_g, V)`` from one kinematics pass.

        What :meth:`poses_and_gravity` returns, plus :meth:`potential_energy` (a float for
        one configuration, (...) for a batch) at almost no extra cost. ``out=(poses,
        tau_g, V)`` as in :meth:`poses_and_gravity` (``V`` then an array, 0-d for one
        configuration).
        """
        poses, tau_g, energy = self._backend.evaluate(
            self._q(q), ('poses', 'gravity', 'energy'), out)
        if out is None and np.ndim(energy) == 0:
            energy = float(energy)
        return poses, tau_g, energy

    def gravity_generalized_forces(self, q, out=None):
        """
        Return ``tau_g = -dV/dq`` (Drake's sign): (..., nq). Hold with ``-tau_g``.

        ``out``: an array of that shape to write into and return instead of a new one
        (float64, C-contiguous): see :meth:`poses_and_gravity`.
        """
        if out is None:                     # one configuration of floats: one compiled call
            tau = self._backend.fast_gravity(q)
            if tau is not None:
                return tau
        return self._backend.evaluate(self._q(q), _GRAVITY, None if out is None else (out,))[0]

    def potential_energy(self, q):
        """Return the gravitational potential energy (J), zero at the world origin's height."""
        out = self._backend.evaluate(self._q(q), ('energy',))[0]
        return float(out) if np.ndim(out) == 0 else out

    def conservative_power(self, q, v):
        """Return the power of gravity, ``v . tau_g`` (W); equals ``-dV/dt``."""
        v = self._q(v)
        return np.einsum('...k,...k->...', v, self.gravity_generalized_forces(q))

    def damping_forces(self, v):
        """Return the viscous damping generalized forces ``-b v`` (N·m or N), mimics folded."""
        return -self._tree.effective_damping * self._q(v)


def holding_torques(tau_g, out=None):
    """
    Return the torques that hold a pose against gravity: ``-tau_g``, with no ``-0.0``.

    ``tau_g`` is :meth:`Model.gravity_generalized_forces` (Drake's sign). A joint that
    gravity does not load gets ``0.0``, not the ``-0.0`` a plain negation gives (which
    ``ros2 topic echo`` would print); every other value is exactly ``-tau_g``. Written
    into ``out`` if given.

    >>> holding_torques(np.array([0.0, 2.5, -1.0])).tolist()
    [0.0, -2.5, 1.0]
    """
    return np.subtract(0.0, np.asarray(tau_g, dtype=float), out=out)


_GRAVITY = ('gravity',)


def _single_out(out):
    """Return ``out`` of a one-output method as the tuple the backend takes."""
    return None if out is None else (out,)
