"""
What the kinematics node does, without ROS: joint-state cache, checks, and the outputs.

Joints a message does not carry keep their last reported value, or the default
position (and zero velocity) until first reported. Mimic joints a message carries (as
joint_state_publisher sends them) are ignored, not counted as unknown: the model derives
their positions from their drivers'. Input checks are
:class:`~transmission_bridge.ros.named_input.NamedInput`'s; in addition a NaN position
or velocity leaves that joint's previous value in place (counted as
``unknown_values``). A stamp older than the previous one (a looping bag) forgets
every reported value. Outputs, all for the same configuration::

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
import typing

import numpy as np

from ..ros import named_input
from ..kinematics import holding_torques, ModelError
from ..kinematics.spatial import invert, pose_rows
from ..ros.named_input import NamedInput, squares_are_finite


_SOURCE = 'joint_states'         # the one input whose stamps are checked


@dataclasses.dataclass
class Counters(named_input.Counters):
    """The shared counters plus NaN values that left a joint's previous value in place."""

    unknown_values: int = 0


class KinematicsOutput(typing.NamedTuple):
    """The joint-space outputs of one joint_states message (poses: ``pose_rows``)."""

    q: object
    v: object
    holding: object
    passive: object
    potential_energy: float


@dataclasses.dataclass(frozen=True)
class Lane:
    """What :meth:`KinematicsCore.ingest_lane` needs to take messages of one name list."""

    generation: int
    rows: object        # message rows of the known names; None: every row
    cols: object        # their joint indices; slice(None) when all joints in order
    num_names: int
    num_unknown: int


class KinematicsCore:
    """Latest joint state, and gravity, damping and poses computed from it."""

    def __init__(self, model, base_frame='world'):
        self.counters = Counters()
        self.last_reason = ''
        self.last_new_unknown = ()
        self._model = None
        self._q = np.zeros(0)
        self._v = np.zeros(0)
        self._reported = np.zeros(0, dtype=bool)
        self._input = NamedInput(())
        self.received_any = False
        self._generation = 0              # lanes made before a model change are not taken
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
                if i is not None and self._reported[i]:
                    q[k], v[k], reported[k] = self._q[i], self._v[i], True
        self._model, self._base = model, base
        self._damping = model.effective_damping    # per model (mimics folded), not per message
        model.warm_up()             # numba compiles now, not on the first message
        self._workspace = model.one_configuration()
        # The configuration lives in the workspace's q: evaluating it copies nothing.
        self._workspace.q[:] = q
        q = self._workspace.q
        self._marked = None                     # the cols a lane last marked reported
        self._base_index = base_index
        self._q, self._v, self._reported = q, v, reported
        self._input = self._input.renamed(model.joint_names, model.mimic_joints)
        moving = [i for i, b in enumerate(model.bodies) if b.joint.num_positions]
        self._moving_bodies = moving
        self._transforms_into = self._workspace.parent_pose_writer(moving)
        self._generation += 1

    def reset(self):
        """Forget every reported value and stamp: joints go back to their defaults."""
        self._to_defaults()
        self._input.forget_stamps()

    def _to_defaults(self):
        """Put the configuration back to the defaults, nothing reported (in place)."""
        self._q[:] = self._model.default_positions
        self._v[:] = 0.0
        self._reported[:] = False
        self._marked = None

    @property
    def configuration(self):
        """Return copies of the current ``(q, v)``."""
        return self._q.copy(), self._v.copy()

    def ingest(self, names, position, velocity, stamp_ns):
        """Take one joint_states message; return a :class:`KinematicsOutput` or ``None``."""
        c = self.counters
        checked = self._input.check(names, (position, velocity))
        self.last_new_unknown = checked.new_unknown
        if c.count(checked):
            self.last_reason = checked.reason
            return None
        if self._input.stamp_went_back(_SOURCE, stamp_ns):
            c.stamp_backwards += 1
            self._to_defaults()
        cols = checked.cols
        pos, vel = checked.arrays
        if pos is not None:
            known = ~np.isnan(pos)
            if not known.all():
                c.unknown_values += int((~known).sum())
            self._q[cols[known]] = pos[known]
            self._reported[cols[known]] = True
        if vel is not None:
            known = ~np.isnan(vel)
            if not known.all():
                c.unknown_values += int((~known).sum())
            self._v[cols[known]] = vel[known]
        self.received_any = True
        c.published += 1
        return self._evaluate()

    def lane(self, names):
        """Return a :class:`Lane` for messages named ``names`` (checked already), or None."""
        steady = self._input.steady_layout(tuple(names))
        if steady is None:
            return None
        rows, cols, num_unknown = steady
        return Lane(self._generation, rows, cols, len(names), num_unknown)

    def ingest_lane(self, lane, position, velocity, stamp_ns):
        """
        Take a message of ``lane``'s names: what :meth:`ingest` would return, or None.

        ``position`` and ``velocity`` are float arrays in message order (empty if absent).
        None means "not taken, nothing changed: call :meth:`ingest`": the model changed
        since the lane was made, an array's length is not the number of names, the stamp
        went back, or a value is NaN, infinite or beyond 1e154 in magnitude (see
        :meth:`_take`). Otherwise the counters, stamps and the configuration change
        exactly as :meth:`ingest` changes them.
        """
        if not self._take(lane, position, velocity, stamp_ns):
            return None
        return self._evaluate()

    def lane_step(self, lane, q_out, holding_out):
        """
        Return ``step(position, velocity, stamp_ns)``: :meth:`ingest_lane` writing in place.

        ``step`` takes what :meth:`ingest_lane` takes, changing the counters, stamps and
        configuration exactly as it does, and returns True; it writes q into ``q_out`` and
        the holding torques into ``holding_out``, and leaves the rest of the
        outputs to be asked for: :meth:`passive_into`, :meth:`energy` and
        :meth:`pose_rows`, so that what a caller publishes first waits for nothing else.
        Same arithmetic, same bits. Where ingest_lane would not take the message, ``step``
        changes nothing and returns None. Made for a lane of the current model, else
        None. The node calls it for every message: what the message needs is bound here.
        """
        if lane.generation != self._generation:
            return None
        take, workspace, q = self._take, self._workspace, self._q
        frames, gravity = workspace.frames, workspace.gravity

        # _gravity_into written out: the node calls this for every message, and on a core
        # shared with other processes each Python call costs about a microsecond.
        def step(position, velocity, stamp_ns):
            if not take(lane, position, velocity, stamp_ns):
                return None
            frames(q)
            holding_torques(gravity(), holding_out)
            q_out[:] = q
            return True
        return step

    def passive_into(self, holding, q_out, v_out, passive_out):
        """
        Write the configuration a lane step took last and its passive torques.

        ``holding``: that step's holding torques. The outputs are what
        :meth:`ingest` returns as ``q``, ``v`` and ``passive``, to the bit.
        """
        q_out[:] = self._q
        v_out[:] = self._v
        self._passive(holding, passive_out)

    def energy(self):
        """Return the potential energy of the configuration evaluated last."""
        return self._workspace.energy()

    def _take(self, lane, position, velocity, stamp_ns):
        """
        Take a lane's message into the configuration (True), or change nothing (False).

        Finite is tested as ``x . x`` (one BLAS call): a value beyond 1e154 in magnitude
        fails it too, and such a message is left to :meth:`ingest`, which decides.
        """
        if lane.generation != self._generation:
            return False
        for values in (position, velocity):
            if len(values) and (len(values) != lane.num_names
                                or not squares_are_finite(values)):
                return False
        stamps = self._input.last_stamps        # goes_back and record_stamp, written out
        last = stamps.get(_SOURCE)
        if last is not None and stamp_ns < last:
            return False
        stamps[_SOURCE] = stamp_ns
        c = self.counters
        c.received += 1
        c.unknown_names += lane.num_unknown
        self.last_new_unknown = ()
        rows, cols = lane.rows, lane.cols
        if len(position):
            self._q[cols] = position if rows is None else position[rows]
            if self._marked is not cols:    # reported stays marked until a reset
                self._reported[cols] = True
                self._marked = cols
        if len(velocity):
            self._v[cols] = velocity if rows is None else velocity[rows]
        self.received_any = True
        c.published += 1
        return True

    def _evaluate(self):
        """Return the :class:`KinematicsOutput` of the current configuration."""
        q, v = self._q, self._v
        holding, passive = np.empty(len(q)), np.empty(len(q))
        self._gravity_into(holding)
        self._passive(holding, passive)
        return KinematicsOutput(q.copy(), v.copy(), holding, passive, self.energy())

    def _gravity_into(self, holding):
        """Evaluate the frames and gravity of the configuration; write the holding torques."""
        tau_g, _ = self._workspace.frames_gravity_energy(self._q)
        holding_torques(tau_g, holding)

    def _passive(self, holding, out):
        """Write the passive torques ``holding + b v`` of the configuration into ``out``."""
        np.multiply(self._damping, self._v, out)
        out += holding

    def pose_rows(self, out):
        """
        Write ``x, y, z, qx, qy, qz, qw`` of the last output's poses into ``out`` (nb, 7).

        For the configuration of the last :class:`KinematicsOutput` (call it before the next
        message); both nodes' paths publish these rows, so they publish the same bits.
        """
        if self._base_index is None:
            return self._workspace.pose_rows(out)
        poses = self._workspace.poses()
        return pose_rows(invert(poses[self._base_index]) @ poses, out)

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

    def feed_forward(self, joint_names, positions, velocities):
        """
        Return the gravity plus damping compensation of every trajectory point.

        ``positions`` and ``velocities`` hold one sequence per point (velocities may
        all be empty: zero). Joints not named stay at their default position with
        zero velocity. Returns (points, len(joint_names)) efforts in the order of
        ``joint_names``; raises ModelError with the reason if the trajectory is
        invalid.
        """
        try:
            out = self._feed_forward(joint_names, positions, velocities)
        except ModelError:
            self.counters.trajectories_rejected += 1
            raise
        self.counters.trajectories_mapped += 1
        return out

    def _feed_forward(self, joint_names, positions, velocities):
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
        for label, rows, target, required in (('positions', positions, Q, True),
                                              ('velocities', velocities, V, False)):
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
        effort = -model.gravity_generalized_forces(Q) + self._damping * V
        return effort[:, cols]
