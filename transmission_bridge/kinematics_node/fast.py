"""
The kinematics node's fast path: a steady joint_states stream answered from byte templates.

As in the bridge (``bridge/fast.py``), every message has two routes. The **typed** route,
in the node, decodes it, calls :meth:`KinematicsCore.ingest <.core.KinematicsCore.ingest>`
and publishes message objects (:mod:`.messages`); afterwards the fast path *learns* its
byte layout (:class:`~transmission_bridge.messages.wire.JointStateLayout`; the input's frame_id
is not read: the outputs are in the node's base frame). The **fast** route,
:attr:`JointStatesRelay.take`, takes the next messages of that layout from their bytes
while the invariants of the steady state hold: both arrays empty or one value per name,
every value finite (no NaN "unknown", which keeps a joint's previous value), the stamp not
going back, the model unchanged (:attr:`KinematicsCore.generation`). Within them it changes
the configuration, stamps and counters exactly as ``ingest`` does, and returns the outputs
as ``(publisher, bytes)``: the torques first, computed before anything else, the rest
(passive torques, poses, energy, TF) only when the generator is drawn. Both routes give
the same bytes (test_fast_path.py). Its ``take`` returns None when it did not take the
message and changed nothing: the typed route's turn.
"""

from .core import SOURCE
from ..kinematics import holding_torques
from ..messages.named_input import squares_are_finite
from ..messages.wire import DoublesTemplate, JointStateLayout, TransformsTemplate


def _never(data):
    """Take nothing: the relay with no learned stream."""
    return None


class Templates:
    """The outputs' byte templates for one model and output frame; refilled for every input."""

    def __init__(self, model, frame_id, num_tips, tf_frames):
        n = model.num_positions
        self.model = model
        self.tf = TransformsTemplate(tf_frames)
        self.gravity = JointStateLayout(model.joint_names, frame_id, (n, 0, n)).encoder()
        self.passive = JointStateLayout(model.joint_names, frame_id, (n, n, n)).encoder()
        self.poses = DoublesTemplate.pose_array(frame_id, len(model.body_names))
        self.tips = [DoublesTemplate.pose_stamped(frame_id) for _ in range(num_tips)]
        self.energy = DoublesTemplate.float64()


class JointStatesRelay:
    """
    The steady joint_states stream, bytes in and the due outputs' bytes out.

    ``publishers``: the node's (gravity, passive, poses, tips (list), energy, tf (or None)),
    ``tips``: the tip bodies' indices, ``due(stamp_ns)``: which outputs this input publishes
    (publish_every, publish_frequency), ``frame_id`` and ``tf_frames``: the outputs' frame and
    TF pairs.
    """

    def __init__(self, core, publishers, tips, due, frame_id, tf_frames):
        self._core = core
        self._publishers = publishers
        self._tips = tips
        self._due = due
        self._frame_id = frame_id
        self._tf_frames = tf_frames
        self._templates = None
        self.take = _never

    def learn(self, data, msg):
        """Set :attr:`take` up for messages like ``msg`` (``data`` decoded), which ingest took."""
        self.take = _never
        core = self._core
        layout = JointStateLayout.learn_message(data, msg)
        if layout is None:
            return
        found = core.known_columns(layout.names)
        if found is None or core.stale_joints:
            return
        t = self._templates
        if t is None or t.model is not core.model:
            t = self._templates = Templates(core.model, self._frame_id, len(self._tips),
                                            self._tf_frames)
        step = _step(core, found, len(layout.names), t.gravity.fields[0],
                     t.gravity.fields[2])
        inbox = layout.inbox()
        receive, (position, velocity, _), stamp = inbox.take, inbox.arrays, inbox.stamp
        send, due = self._send, self._due

        def take(data):
            stamp_ns = receive(data)
            if stamp_ns is None or not step(position, velocity, stamp_ns):
                return None
            return send(t, due(stamp_ns), stamp)
        self.take = take

    def _send(self, t, due, stamp_bytes):
        """
        Yield the due outputs as ``(publisher, bytes)``: ``t`` holds the torques and q.

        A generator, so that the subscription publishes the torques before anything else
        is even computed: the torques are what a 1 kHz controller waits for.
        """
        gravity, passive, poses, tips, energy, tf = due
        core = self._core
        gravity_pub, passive_pub, poses_pub, tip_pubs, energy_pub, tf_pub = self._publishers
        if gravity:
            t.gravity.set_stamp(stamp_bytes)
            yield gravity_pub, t.gravity.to_bytes()
        if passive:
            core.passive_into(t.gravity.fields[2], *t.passive.fields)
            t.passive.set_stamp(stamp_bytes)
            yield passive_pub, t.passive.to_bytes()
        if poses or (tips and self._tips):
            core.pose_rows(t.poses.values)
        if poses:
            t.poses.set_stamp(stamp_bytes)
            yield poses_pub, t.poses.to_bytes()
        if tips:
            for i, pub, tip in zip(self._tips, tip_pubs, t.tips):
                tip.set_stamp(stamp_bytes)
                tip.values[:] = t.poses.values[i]
                yield pub, tip.to_bytes()
        if energy:
            t.energy.values[0] = core.energy()
            yield energy_pub, t.energy.to_bytes()
        if tf and tf_pub is not None and len(t.tf.values):
            core.transform_rows(t.tf.values)
            t.tf.fill()
            t.tf.set_stamp(stamp_bytes)
            yield tf_pub, t.tf.to_bytes()


def _step(core, found, num_names, q_out, holding_out):
    """
    Return ``step(position, velocity, stamp_ns) -> bool``: one message into ``core``.

    ``position`` and ``velocity`` are in message order (empty if absent). It changes the
    counters, stamps and configuration exactly as :meth:`KinematicsCore.ingest` does, writes
    q into ``q_out`` and the holding torques into ``holding_out`` and returns True; the rest
    of the outputs are asked of the core when due. False: not taken, nothing changed.
    Finite is tested as ``x . x`` (one BLAS call): a value beyond 1e154 in magnitude fails
    it too, and such a message is left to ``ingest``, which decides.
    """
    rows, cols, num_unknown = found
    generation = core.generation
    counters, stamps = core.counters, core.stamps
    q, v, reported = core.q, core.v, core.reported
    workspace = core.workspace
    frames, gravity = workspace.frames, workspace.gravity
    every = len(q[cols]) == len(q)          # the message carries every joint
    others = reported.copy()
    others[cols] = False

    def step(position, velocity, stamp_ns):
        if core.generation != generation:
            return False
        for values in (position, velocity):
            if len(values) and (len(values) != num_names or not squares_are_finite(values)):
                return False
        last = stamps.get(SOURCE)
        if last is not None and stamp_ns < last:
            return False
        if core.stale_ns is not None and len(position):
            # Every joint in the message: none can be stale. Else the joints reported
            # before by others must still be fresh (if not: the typed route's).
            now = core.now_ns()
            if every:
                core.seen_all_ns = now
            else:
                core.settle_seen()
                if (others & (now - core.last_seen_ns > core.stale_ns)).any():
                    return False
                core.last_seen_ns[cols] = now
        stamps[SOURCE] = stamp_ns
        counters.received += 1
        counters.unknown_names += num_unknown
        core.last_new_unknown = ()
        if len(position):
            q[cols] = position if rows is None else position[rows]
            if core.marked is not cols:    # reported stays marked until a reset
                reported[cols] = True
                core.marked = cols
        if len(velocity):
            v[cols] = velocity if rows is None else velocity[rows]
        core.received_any = True
        counters.published += 1
        frames(q)
        holding_torques(gravity(), holding_out)
        q_out[:] = q
        return True
    return step
