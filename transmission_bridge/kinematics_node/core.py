"""
What the kinematics node does, without ROS: joint-state cache, checks, and the outputs.

Joints a message does not carry keep their last reported value, or the default
position (and zero velocity) until first reported. Mimic joints a message carries (as
joint_state_publisher sends them) are ignored, not counted as unknown: the model derives
their positions from their drivers'. Input checks are
:class:`~transmission_bridge.messages.named_input.NamedInput`'s; in addition a NaN position
or velocity leaves that joint's previous value in place (counted as
``unknown_values``). A stamp older than the previous one (a looping bag) forgets
every reported value. With :attr:`KinematicsCore.stale_ns` set, a joint reported once and
then not for longer (receive time) is stale (:attr:`KinematicsCore.stale_joints`): the node
then publishes nothing computed from the whole configuration, and TF only for the joints
still fresh. Outputs, all for the same configuration::

    holding = -tau_g                 torque that holds the pose against gravity
    passive = -tau_g + b v           holding plus damping compensation (feed-forward)

>>> from transmission_bridge.kinematics import load_model
>>> core = KinematicsCore(load_model({'bodies': [{'name': 'b', 'joint': {
...     'name': 's', 'type': 'screw', 'axis': [0, 0, 1], 'pitch': 0.02},
...     'inertial': {'mass': 1.0}}]}))
>>> out = core.ingest(['s'], [1.0], [], stamp_ns=1)
>>> round(float(out.holding[0]), 6)      # m g pitch / 2 pi
0.031226
"""

import dataclasses
import time
import typing

import numpy as np

from ..kinematics import holding_torques, ModelError
from ..kinematics.spatial import invert, pose_rows
from ..messages import named_input
from ..messages.named_input import NamedInput


SOURCE = 'joint_states'          # the one input whose stamps are checked


@dataclasses.dataclass
class Counters(named_input.TrajectoryCounters):
    """The shared counters, trajectories, NaN values that left a joint's previous value."""

    unknown_values: int = 0


class KinematicsOutput(typing.NamedTuple):
    """The joint-space outputs of one joint_states message (poses: ``pose_rows``)."""

    q: object
    v: object
    holding: object
    passive: object
    potential_energy: float


class KinematicsCore:
    """
    Latest joint state, and gravity, damping and poses computed from it.

    The configuration lives in :attr:`q` and :attr:`v` (:attr:`q` is the workspace's own,
    so evaluating it copies nothing); :attr:`reported` marks the joints reported since the
    last reset. The node's fast path (:mod:`.fast`) reads and writes these, the counters and
    :attr:`stamps` exactly as :meth:`ingest` does, while :attr:`generation` (bumped by a new
    model) is the one it learned with.
    """

    def __init__(self, model, base_frame='world'):
        self.counters = Counters()
        self.last_reason = ''
        self.last_new_unknown = ()
        self._model = None
        self.q = np.zeros(0)
        self.v = np.zeros(0)
        self.reported = np.zeros(0, dtype=bool)
        self._input = NamedInput(())
        self.received_any = False
        self.generation = 0              # bumped by a new model: the fast path relearns
        #: A reported joint not reported for longer (ns) is stale (None: never).
        self.stale_ns = None
        #: The receive clock, ``() -> ns`` (the node's); None: the stamps stand in.
        self.now_ns = None
        #: The joints stale at the last input (reported once, then silent).
        self.stale_joints = ()
        #: The trajectories' efforts: 'gravity' or 'inverse_dynamics' (:meth:`feed_forward`).
        self.feed_forward_mode = 'gravity'
        #: The transmissions whose rotors and friction the inverse dynamics include (None).
        self.transmissions = None
        self.set_model(model, base_frame)

    @property
    def model(self):
        """Return the :class:`~transmission_bridge.kinematics.Model` in force."""
        return self._model

    @property
    def base_frame(self):
        """Return the frame poses are expressed in ('world', the root link's name or a body)."""
        return self._base

    def set_model(self, model, base_frame=None):
        """Switch to ``model``; reported joints that keep their name keep their values."""
        base = self._base if base_frame is None else base_frame
        base_index = model.frame_index(base)     # raises for an unknown frame
        old = self._model
        q = model.default_positions.copy()
        v = np.zeros(model.num_positions)
        reported = np.zeros(model.num_positions, dtype=bool)
        if old is not None:
            index = {n: i for i, n in enumerate(old.joint_names)}
            for k, name in enumerate(model.joint_names):
                i = index.get(name)
                if i is not None and self.reported[i]:
                    q[k], v[k], reported[k] = self.q[i], self.v[i], True
        self._model, self._base = model, base
        self._damping = model.effective_damping    # per model (mimics folded), not per message
        start = time.perf_counter()
        model.warm_up()             # numba compiles now, not on the first message
        #: How long the last model's kernels took to compile or load (s).
        self.warm_up_seconds = time.perf_counter() - start
        self.workspace = model.one_configuration()
        # The configuration lives in the workspace's q: evaluating it copies nothing.
        self.workspace.q[:] = q
        q = self.workspace.q
        self.marked = None                      # the cols the fast path last marked reported
        self._base_index = base_index
        self.q, self.v, self.reported = q, v, reported
        self.last_seen_ns = np.full(model.num_positions, -1, dtype=np.int64)
        self.seen_all_ns = -1           # the fast path's: every joint seen then (-1: settled)
        self.stale_joints = ()
        mimics = model.mimic_joints
        self._frame_joints = np.array([
            model.joint_names.index(mimics.get(b.joint.name, (b.joint.name,))[0])
            for b in model.bodies if b.joint.num_positions], dtype=np.intp)
        self._input = self._input.renamed(model.joint_names, model.mimic_joints)
        self.stamps = self._input.last_stamps       # source -> last stamp, with the fast path
        moving = [i for i, b in enumerate(model.bodies) if b.joint.num_positions]
        self._transforms_into = self.workspace.parent_pose_writer(moving)
        self.generation += 1

    def reset(self):
        """Forget every reported value and stamp: joints go back to their defaults."""
        self._to_defaults()
        self._input.forget_stamps()

    def _to_defaults(self):
        """Put the configuration back to the defaults, nothing reported (in place)."""
        self.q[:] = self._model.default_positions
        self.v[:] = 0.0
        self.reported[:] = False
        self.last_seen_ns[:] = -1
        self.seen_all_ns = -1
        self.stale_joints = ()
        self.marked = None

    @property
    def configuration(self):
        """Return copies of the current ``(q, v)``."""
        return self.q.copy(), self.v.copy()

    def ingest(self, names, position, velocity, stamp_ns, now_ns=None):
        """
        Take one joint_states message; return a :class:`KinematicsOutput` or ``None``.

        ``now_ns``: the receive time (stale detection; defaults to the stamp). With joints
        stale (:attr:`stale_joints`) the output is still returned: the node decides what of
        it to publish.
        """
        c = self.counters
        checked = self._input.check(names, (position, velocity))
        self.last_new_unknown = checked.new_unknown
        if c.count(checked):
            self.last_reason = checked.reason
            return None
        if self._input.stamp_went_back(SOURCE, stamp_ns):
            c.stamp_backwards += 1
            self._to_defaults()
        cols = checked.cols
        pos, vel = checked.arrays
        if pos is not None:
            known = ~np.isnan(pos)
            if not known.all():
                c.unknown_values += int((~known).sum())
            self.q[cols[known]] = pos[known]
            self.reported[cols[known]] = True
            self.settle_seen()
            self.last_seen_ns[cols[known]] = stamp_ns if now_ns is None else now_ns
        if vel is not None:
            known = ~np.isnan(vel)
            if not known.all():
                c.unknown_values += int((~known).sum())
            self.v[cols[known]] = vel[known]
        self.received_any = True
        c.published += 1
        self._note_stale(stamp_ns if now_ns is None else now_ns)
        return self._evaluate()

    def settle_seen(self):
        """Write the fast path's last seen time into every joint's, before it is read."""
        if self.seen_all_ns >= 0:
            self.last_seen_ns.fill(self.seen_all_ns)
            self.seen_all_ns = -1

    def _note_stale(self, now_ns):
        """Set :attr:`stale_joints`: reported joints not heard from within ``stale_ns``."""
        if self.stale_ns is None:
            return
        self.settle_seen()
        stale = self.reported & (now_ns - self.last_seen_ns > self.stale_ns)
        names = self._model.joint_names
        self.stale_joints = tuple(names[i] for i in np.flatnonzero(stale))

    def fresh_frames(self):
        """Return which /tf frames (:meth:`transform_frames`) have a joint that is not stale."""
        stale = np.zeros(len(self.q), dtype=bool)
        if self.stale_joints:
            index = {n: i for i, n in enumerate(self._model.joint_names)}
            stale[[index[n] for n in self.stale_joints]] = True
        return ~stale[self._frame_joints]

    def known_columns(self, names):
        """
        Return ``(rows, cols, num_unknown)`` of messages naming ``names``, or None.

        For the fast path: ``rows`` the message rows of the model's joints (None: all),
        ``cols`` their joints (``slice(None)``: all, in order). None unless a message of
        these names was checked.
        """
        return self._input.known_columns(tuple(names))

    def passive_into(self, holding, q_out, v_out, passive_out):
        """
        Write the configuration the fast path took last and its passive torques.

        ``holding``: that step's holding torques. The outputs are what
        :meth:`ingest` returns as ``q``, ``v`` and ``passive``, to the bit.
        """
        q_out[:] = self.q
        v_out[:] = self.v
        self._passive(holding, passive_out)

    def energy(self):
        """Return the potential energy of the configuration evaluated last."""
        return self.workspace.energy()

    def _evaluate(self):
        """Return the :class:`KinematicsOutput` of the current configuration."""
        q, v = self.q, self.v
        holding, passive = np.empty(len(q)), np.empty(len(q))
        self._gravity_into(holding)
        self._passive(holding, passive)
        return KinematicsOutput(q.copy(), v.copy(), holding, passive, self.energy())

    def _gravity_into(self, holding):
        """Evaluate the frames and gravity of the configuration; write the holding torques."""
        tau_g, _ = self.workspace.frames_gravity_energy(self.q)
        holding_torques(tau_g, holding)

    def _passive(self, holding, out):
        """Write the passive torques ``holding + b v`` of the configuration into ``out``."""
        np.multiply(self._damping, self.v, out)
        out += holding

    def pose_rows(self, out):
        """
        Write ``x, y, z, qx, qy, qz, qw`` of the last output's poses into ``out`` (nb, 7).

        For the configuration evaluated last (call it before the next message); the node's
        two routes, typed and fast, both publish these rows, so they publish the same bits.
        """
        if self._base_index is None:
            return self.workspace.pose_rows(out)
        poses = self.workspace.poses()
        return pose_rows(invert(poses[self._base_index]) @ poses, out)

    def output_frame(self, prefix=''):
        """
        Return the frame id of the outputs (torques, poses): ``base_frame`` as TF names it.

        ``prefix`` before it, as before every TF frame; 'world' is the model's
        :attr:`~transmission_bridge.kinematics.Model.root_frame` (a URDF's root link),
        as in :meth:`transform_frames`, so the outputs' frame is one that TF publishes.
        """
        root = self._model.root_frame
        return prefix + (root if self._base in ('world', root) else self._base)

    def transform_frames(self, prefix='', moving=True):
        """
        Return the ``(parent frame, child frame)`` of each movable (or fixed) joint, TF style.

        Model order; frame ids are link names with ``prefix`` before them, the model's
        world being its :attr:`~transmission_bridge.kinematics.Model.root_frame` (a URDF's
        root link). Mimic joints are movable joints.
        """
        model = self._model
        return [(prefix + (model.root_frame if b.parent == 'world' else b.parent),
                 prefix + b.name) for b in model.bodies
                if bool(b.joint.num_positions) == moving]

    def transform_rows(self, out):
        """
        Write each movable joint's parent -> child pose of the last evaluation into ``out``.

        Rows ``x, y, z, qx, qy, qz, qw`` (len(moving frames), 7), for the configuration of
        the last output (call it before the next message), as :meth:`transform_frames`.
        """
        return self._transforms_into(out)

    def static_transform_rows(self):
        """Return the fixed joints' parent -> child poses (rows as :meth:`transform_rows`)."""
        fixed = [b.joint.transform(0.0) for b in self._model.bodies
                 if not b.joint.num_positions]
        return pose_rows(np.array(fixed).reshape(-1, 4, 4))

    def feed_forward(self, joint_names, positions, velocities, accelerations=()):
        """
        Return the feed-forward efforts of every trajectory point.

        :attr:`feed_forward_mode` ``'gravity'``: the holding torque plus damping
        compensation, ``-tau_g + b v``; ``'inverse_dynamics'``: the whole inverse dynamics
        plus damping compensation, ``M a + C v - tau_g + b v``, with the rotors and
        friction of :attr:`transmissions` when set (doc/dynamics.md). ``positions``,
        ``velocities`` and ``accelerations`` hold one sequence per point (velocities and
        accelerations may all be empty: zero). Joints not named stay at their default
        position, at rest. Returns (points, len(joint_names)) efforts in the order of
        ``joint_names``; raises ModelError with the reason if the trajectory is invalid.
        """
        try:
            out = self._feed_forward(joint_names, positions, velocities, accelerations)
        except ModelError:
            self.counters.trajectories_rejected += 1
            raise
        self.counters.trajectories_mapped += 1
        return out

    def _feed_forward(self, joint_names, positions, velocities, accelerations):
        model = self._model
        index = {n: i for i, n in enumerate(model.joint_names)}
        names = list(joint_names)
        unknown = [n for n in names if n not in index]
        if unknown:
            raise ModelError(f'unknown joints {unknown}')
        if len(set(names)) != len(names):
            raise ModelError('duplicate joint names')
        cols = np.array([index[n] for n in names], dtype=np.intp)
        n_points = len(positions)
        Q = np.tile(model.default_positions, (n_points, 1))
        V = np.zeros((n_points, model.num_positions))
        A = np.zeros((n_points, model.num_positions))
        for label, rows, target, required in (('positions', positions, Q, True),
                                              ('velocities', velocities, V, False),
                                              ('accelerations', accelerations, A, False)):
            lengths = {len(r) for r in rows}
            if not required and lengths <= {0}:
                continue
            if lengths != {len(names)}:
                raise ModelError(f'points[*].{label} must have {len(names)} values in every '
                                 f'point, got lengths {sorted(lengths)}')
            values = np.array([np.asarray(r, dtype=float) for r in rows])
            if not np.isfinite(values).all():
                raise ModelError(f'points[*].{label} contains a non-finite value')
            target[:, cols] = values
        if n_points == 0:
            return np.zeros((0, len(names)))
        if self.feed_forward_mode == 'inverse_dynamics':
            effort = model.inverse_dynamics(Q, V, A, self.transmissions) + self._damping * V
            bad = np.flatnonzero(~np.isfinite(effort).all(axis=1))
            if len(bad):                # a linkage refused the point's configuration
                raise ModelError(f'points[{bad[0]}]: the transmissions cannot map this '
                                 'configuration (a linkage out of its range)')
        else:
            effort = -model.gravity_generalized_forces(Q) + self._damping * V
        return effort[:, cols]
