"""
The set's maps compiled: linear members as gathers and sums, one state at a time or a bag.

Every linear transmission (simple, differential, four-bar, coupling) maps its own
actuators to its own joints with constant coefficients, so the whole set's map is
``out[k] = x[i0[k]] * c0[k] + x[i1[k]] * c1[k] (+ ...)`` (:class:`LinearTerms`), and the
bridge's whole (position, velocity, effort) state one take, one multiply and K adds
(:class:`LinearStateMap`). Element-wise, so one sample and a whole bag get the same bits,
and a NaN (unknown) actuator value never reaches the joints of another transmission.

:class:`JointStateMap` is what a stream of actuator states goes through: the compiled
linear map, the damping loss, and room for members that are not linear (their own maps,
written over their joints' columns after the linear ones).
"""

import math

import numpy as np

from .linkage_loops import J_OFFSET, J_WIDTH, kernels, L_HEADER, L_WIDTH


class LinearTerms:
    """
    A linear map whose every output reads the inputs of its own transmission only.

    ``out[k] = x[i[0, k]] * c[0, k] + x[i[1, k]] * c[1, k] + ...``, summed in that order,
    with ``K`` terms (the most inputs any output reads: 2 for differentials and four-bars,
    N for an N x N coupling, never fewer than 2). Built from a dense coefficient matrix
    ``(n_out, n_in)`` and, per output, the inputs of its transmission (the only entries
    read). Inputs whose coefficient is zero are left out; a term with nothing to read
    repeats the output's first input with coefficient 0, so an unknown (NaN) input reaches
    only the outputs that depend on it.
    """

    __slots__ = ('index', 'coef')

    def __init__(self, matrix, inputs_of, size=2):
        n_out = matrix.shape[0]
        used_of = [[i for i in inputs if matrix[k, i] != 0] or list(inputs[:1])
                   for k, inputs in enumerate(inputs_of)]
        size = max([size] + [len(u) for u in used_of])
        self.index = np.zeros((size, n_out), dtype=np.intp)
        self.coef = np.zeros((size, n_out))
        for k, used in enumerate(used_of):
            self.index[:, k] = used[0]
            for t, i in enumerate(used):
                self.index[t, k] = i
                self.coef[t, k] = matrix[k, i]

    @property
    def size(self):
        """Return ``K``, the number of terms per output."""
        return len(self.index)

    def taken(self, outputs, inputs):
        """
        Return the map of ``outputs`` only, reading its inputs as ``x[..., k]`` for ``inputs[k]``.

        The same terms in the same order, so each output has the bits it has here. Every
        input an output reads must be among ``inputs`` (KeyError otherwise): a command
        naming its transmissions' joints whole, in any order.
        """
        where = {int(i): k for k, i in enumerate(inputs)}
        taken = LinearTerms.__new__(LinearTerms)
        index = self.index[:, outputs]
        taken.index = np.array([[where[int(i)] for i in row] for row in index],
                               dtype=np.intp).reshape(index.shape)
        taken.coef = self.coef[:, outputs].copy()
        return taken

    def __call__(self, x):
        """Apply the map along the last axis of ``x``."""
        index, coef = self.index, self.coef
        if x.ndim == 1:                 # one sample (a command): the same sums, fewer steps
            out = x[index[0]] * coef[0]
            for t in range(1, len(index)):
                out += x[index[t]] * coef[t]
            return out
        out = x[..., self.index[0]] * self.coef[0]
        for t in range(1, len(self.index)):
            out = out + x[..., self.index[t]] * self.coef[t]
        return out


class LinearStateMap:
    """
    The bridge's map of a whole actuator state as one take, one multiply and K adds.

    The input is the actuator (position, velocity, effort) rows flattened, then a 1.0:
    ``(..., 3 * nA + 1)``. The output is ``(..., 3, nJ)``: joint positions with their
    offsets, velocities, and efforts before the damping loss. Each output is the sum, in
    this order, of K + 1 terms ``x[i0] * c0 + x[i1] * c1 + ... + 1.0 * k``, the first K
    those of :class:`LinearTerms` (K = 2 unless a coupling is larger); ``k`` is the joint offset
    on position rows and -0.0 elsewhere, and adding -0.0 changes no value (not even a
    zero's sign). So every element has the bits of the velocity or effort map (plus the
    offset), for one state or a batch.
    """

    __slots__ = ('index', 'coef', 'n_act')

    def __init__(self, motion, effort, offsets, n_act):
        self.n_act = n_act
        size = motion.size                          # the effort map's too (built so)
        shape = (size + 1, 3, len(offsets))         # term, interface, joint
        self.index = np.full(shape, 3 * n_act, dtype=np.intp)   # default: the 1.0
        self.coef = np.full(shape, -0.0)
        for row, m in enumerate((motion, motion, effort)):
            self.index[:size, row] = m.index + row * n_act
            self.coef[:size, row] = m.coef
        self.coef[size, 0] = offsets

    def __call__(self, flat, out=None):
        """Map ``flat`` (see the class docstring); write into ``out`` if given."""
        terms = np.take(flat, self.index, axis=-1)  # (..., term, interface, joint)
        terms *= self.coef
        # The terms summed in order, as :meth:`writer` sums them for one state.
        out = np.add(terms[..., 0, :, :], terms[..., 1, :, :], out=out)
        for t in range(2, len(self.index)):
            out = np.add(out, terms[..., t, :, :], out=out)
        return out

    def writer(self, out, damping=None):
        """
        Return ``write(flat)``: this map of one state into ``out`` (3, nJ), then True.

        With ``damping`` (b per joint), the efforts lose ``b * v`` as well, in the last sum:
        its last term is ``-0.0`` on effort rows, and ``(-b) v`` takes its place. The bits
        are those of :meth:`__call__` followed by ``eff - b * v`` (``x + (-0.0)`` is ``x``,
        ``x - y`` is ``x + (-y)`` and ``(-b) v`` is ``-(b v)`` in IEEE arithmetic), for
        finite velocities.
        """
        index, coef, terms = self.index, self.coef, np.empty(self.index.shape)
        first, second, *middle, last = terms
        velocity, loss = out[1], last[2]
        minus_b = None if damping is None else -np.asarray(damping, dtype=float)
        multiply, add = np.multiply, np.add

        # Outputs passed by position (no keyword to parse) and take in 'wrap' mode: the
        # indices are valid, and in its default mode take first copies into a scratch array.
        def write(flat):
            flat.take(index, None, terms, 'wrap')
            multiply(terms, coef, terms)
            add(first, second, out)
            if minus_b is not None:
                multiply(velocity, minus_b, loss)
            add(out, last, out)
            return True

        def write_wide(flat):               # a coupling of more than two actuators
            flat.take(index, None, terms, 'wrap')
            multiply(terms, coef, terms)
            add(first, second, out)
            for term in middle:
                add(out, term, out)
            if minus_b is not None:
                multiply(velocity, minus_b, loss)
            add(out, last, out)
            return True
        return write_wide if middle else write


class JointStateMap:
    """
    One stream's actuator states to joint states: what the bridge publishes for each state.

    ``map(flat)`` takes the three actuator rows flattened, then a 1.0 (``(..., 3 * nA + 1)``),
    and returns ``(..., 3, nJ)``: joint positions with their offsets, velocities, and efforts
    after the gear stages' losses (``losses``, where any) and the damping loss ``b v``. A batch
    is taken row after row, as a stream would be. :meth:`writer` gives the per-message form
    with its buffers bound once. Made by :meth:`TransmissionSet.state_map`; a new configuration
    makes a new one, :meth:`reset` forgets what the stream taught it.

    The linear members are the compiled map; the linkages (``linkages``: their packed
    layout and numbers, :func:`.linkage.pack`, and each one's joint names) then write their
    own joints, each solved from its last solution. A linkage state refused (its solve did
    not converge, left a joint's limits or met a singularity) is NaN in its joints; after
    each state, :attr:`refused` holds ``(linkage index, status)`` of those refused, and
    :attr:`refusals` counts the refused rows of batches.
    """

    def __init__(self, linear, damping, linkages=None, losses=None):
        self._linear = linear
        self._damping = damping
        #: The gear stages' losses (:class:`.losses.Losses`), None for ideal gears: the
        #: actuator efforts become their stages' outputs before the maps.
        self.losses = losses
        self._damped = bool(damping.any())
        self._n_act = linear.n_act
        self.refusals = 0
        self.refused = ()
        self._linkages = None
        #: J = ∂q/∂θ (nJ, nA) at the last state mapped one at a time: the linear members'
        #: constant coefficients, each linkage's block as its solve left it (NaN unsolved).
        self.jacobian = np.zeros((linear.index.shape[-1], self._n_act))
        velocity = linear.index[:-1, 1] - self._n_act
        for t in range(len(velocity)):
            np.add.at(self.jacobian, (np.arange(velocity.shape[-1]), velocity[t]),
                      linear.coef[t, 1])
        #: The (3, nJ) joint state of the last state mapped one at a time (sets with
        #: linkages: their joint positions are the solves'; None before the first).
        self.latest = None
        if linkages is not None:
            layout, floats, members = linkages
            self.members = members
            self._linkages = (layout, floats)
            self._loops = kernels()         # numba loads here: only with a linkage
            self._warm = np.zeros(sum(len(m) for m in members))
            self._status = np.zeros(len(members), dtype=np.int64)
            self._solved = np.zeros(len(members), dtype=bool)
            for m in range(layout[0]):          # unsolved yet
                n, i_at = layout[L_HEADER + L_WIDTH * m], layout[L_HEADER + L_WIDTH * m + 3]
                self.jacobian[np.ix_(layout[i_at:i_at + n], layout[i_at + n:i_at + 2 * n])] = (
                    np.nan)

    def __call__(self, flat, out=None):
        """Map ``flat`` (see the class docstring); write into ``out`` if given."""
        if self.losses is not None:
            flat = self._measured(flat)
        state = self._linear(flat, out)
        if self._damped:
            vel, eff = state[..., 1, :], state[..., 2, :]
            loss = vel * self._damping
            if math.isfinite(vel.sum()):    # every velocity known (the usual case): no mask
                np.subtract(eff, loss, out=eff)
            else:
                np.subtract(eff, loss, out=eff, where=np.isfinite(vel))
        if self._linkages is None:
            return state
        layout, floats = self._linkages
        if state.ndim == 2:
            self._loops.set_state(flat, self._n_act, state, layout, floats, self._warm,
                                  self._status, self.jacobian)
            self._settle()
            self.latest = state
            return state
        rows = flat.reshape(-1, flat.shape[-1])
        shaped = state.reshape(-1, 3, state.shape[-1])
        status = np.zeros((len(rows), len(self.members)), dtype=np.int64)
        self.refusals += self._loops.set_state_rows(rows, self._n_act, shaped, layout, floats,
                                                    self._warm, status)
        if len(rows):
            self._status[:] = status[-1]
            self._settle()
        return state

    def _measured(self, flat):
        """Return a copy of ``flat`` whose efforts are their stages' outputs (any batch)."""
        n = self._n_act
        out = np.array(flat, dtype=float)
        out[..., 2 * n:3 * n] = self.losses.measured(out[..., 2 * n:3 * n], out[..., n:2 * n])
        return out

    def _lossy_writer(self, out):
        """
        Return ``(write, scratch)``: the linear writer of a state whose efforts pass losses.

        One compiled call (:func:`.loss_loops.measured_linear`): the state, its efforts
        their stages' outputs, into ``scratch`` (what a linkage then reads), and its linear
        joint state into ``out``, with the bits of the numpy writer of ``scratch`` (which,
        after :meth:`.losses.Losses.measured`, is the form without numba).
        """
        from . import loss_loops
        loops = loss_loops.kernels()
        scratch = np.empty(3 * self._n_act + 1)
        linear, n_act = self._linear, self._n_act
        if not loss_loops.COMPILED:         # no numba: numpy's stages, then numpy's writer
            plain, losses, efforts = linear.writer(out, self._damping if self._damped
                                                   else None), self.losses, scratch[2 * n_act:-1]

            def write_numpy(flat):
                scratch[:] = flat
                efforts[:] = losses.measured(flat[2 * n_act:3 * n_act], flat[n_act:2 * n_act])
                return plain(scratch)
            return write_numpy, scratch
        measured_linear = loops.measured_linear
        stages = loss_loops.stage_table(self.losses, measured=True)
        minus_b = -self._damping if self._damped else np.zeros(0)

        def write(flat):
            measured_linear(flat, n_act, stages, linear.index, linear.coef, minus_b, scratch,
                            out)
            return True
        return write, scratch

    def _settle(self):
        """Note which linkages were solved and which refused by the last state."""
        self.refused = tuple((int(m), int(self._status[m]))
                             for m in np.flatnonzero(self._status > 0))
        self._solved |= self._status == 0

    def writer(self, out):
        """
        Return ``write(flat)``: this map of one finite state into ``out`` (3, nJ): True.

        ``flat`` must hold no NaN or infinity (the bridge's fast path checks), so no
        velocity is unknown. The same bits as :meth:`__call__`, with buffers bound once:
        the bridge's per-message path, where each Python step costs about as much as a
        numpy call. False where a linkage refused the state: then ``out`` holds NaN in its
        joints and the stream's solutions are as they were.
        """
        if self.losses is None:
            linear, measured = self._linear.writer(out, self._damping if self._damped
                                                   else None), None
        else:                               # the linkages read the stages' outputs
            linear, measured = self._lossy_writer(out)
        if self._linkages is None:
            return linear
        n_act, layout, floats, warm, status, jac = (self._n_act, *self._linkages, self._warm,
                                                    self._status, self.jacobian)
        set_state = self._loops.set_state
        owner = self

        def write(flat):
            linear(flat)
            owner.latest = out
            if set_state(flat if measured is None else measured, n_act, out, layout, floats,
                         warm, status, jac):
                return False
            return True

        def write_linkages(flat):           # every joint a linkage's: nothing linear to map
            owner.latest = out
            if set_state(flat, n_act, out, layout, floats, warm, status, jac):
                return False
            return True
        return write_linkages if len(warm) == out.shape[-1] and measured is None else write

    def linkage_positions(self, num_joints, joint_index):
        """
        Return the linkages' joint positions last solved, (nJ,): NaN elsewhere, or unsolved.

        What a command needs where it carries no positions (a linkage's velocity and effort
        maps depend on the configuration); ``joint_index`` maps joint names to columns.
        """
        out = np.full(num_joints, np.nan)
        if self._linkages is None:
            return out
        layout, floats = self._linkages
        at = 0
        for m, names in enumerate(self.members):
            n = len(names)
            if self._solved[m]:
                g = layout[L_HEADER + L_WIDTH * m + 2]
                for i, name in enumerate(names):
                    offset = floats[g + i * J_WIDTH + J_OFFSET]
                    out[joint_index[name]] = self._warm[at + i] + offset
            at += n
        return out

    def reset(self):
        """Forget what earlier states taught the map: a linkage starts from its zero pose."""
        if self._linkages is not None:
            self._warm[:] = 0.0
            self._solved[:] = False
            self.refused = ()
