"""
The bridge's fast path: a steady stream's messages taken from their bytes, answered in bytes.

Every message has two routes, and only two. The **typed** route, in the node, decodes it,
calls the core (:meth:`ActuatorStates.ingest <.state.ActuatorStates.ingest>`,
:meth:`CommandMapper.map_command <.commands.CommandMapper.map_command>`) and publishes a
message object: it is the reference, and it handles everything. Afterwards it lets the fast
path *learn* the message. The **fast** route takes the next messages of the same byte
layout (:class:`~transmission_bridge.messages.wire.JointStateLayout`: names, frame_id length,
array sizes; the frame_id's characters may change) without decoding them, and publishes
bytes written into a template. Both routes give the same bytes for the same input
(test_fast_path.py, message by message over a hostile stream), and a message the fast
route does not take leaves everything as it was, for the typed route.

Actuator states (:class:`FastStateRoute`, one per topic) take the fast route while what ingest
would do is short: every value finite, the stamp not going back, no other topic having
written these actuators last, the configuration and the set of reported actuators
unchanged since the relay learned (:attr:`ActuatorStates.generation`), and the same joints
withheld for the same reasons as when it learned: an actuator never reported, or stale
(another topic's), an encoder waiting for its turns (no turns found in this state), a
linkage refusing the state (the same linkages, the same status). A degraded robot so
keeps its other joints on the fast route; what changes the withheld set is the typed
route's, which then learns the new set. Within those invariants the relay's step changes
the counters, stamps, seen times, encoder readings and values exactly as ``ingest``
does, and writes the joint state straight into the output bytes. Anything else (NaN, a
new actuator, a time jump, a new configuration) is the typed route's.

Joint commands (:class:`CommandCodec`): the fast route reads a message of the learned layout
as views and writes a template. While no owner but the plain mapping takes joints (no spring,
no goal), a layout that names its transmissions whole, without linkages or springs, is
mapped by :class:`~.prepared.StreamedCommand` (the reference's operations, looked up once per
layout, the same bytes), unless a limit would change it; otherwise by the core's
:meth:`~.commands.CommandMapper.map_command`, with all its checks.

The convention of both fast paths (this one and the kinematics node's): a ``take`` returns
what to publish, or None when it did not take the message and changed nothing.
"""

import numpy as np

from .prepared import StreamedCommand
from .state import ACCEPTED, stale_at
from ..messages.named_input import squares_are_finite
from ..messages.wire import JointStateLayout, STAMP

_NOT_TAKEN = None


def _never(data):
    """Take nothing: the relay of a topic with no learned stream."""
    return _NOT_TAKEN


class FastStateRoute:
    """
    One actuator-state topic's steady stream, bytes in and joint_states bytes out.

    :attr:`take` (``data -> bytes or None``) is the relay for the layout learned last;
    :meth:`learn` sets it up after the typed route took a message.
    """

    def __init__(self, source, now_ns):
        self._source = source
        self._now_ns = now_ns
        self.take = _never

    def forget(self):
        """Take nothing until the next :meth:`learn` (the configuration was dropped)."""
        self.take = _never

    def learn(self, states, data, msg):
        """
        Set :attr:`take` up for messages like ``msg`` (``data`` decoded), which ``states`` took.

        No relay (``take`` takes nothing) unless the layout decodes ``data`` back, has all
        three arrays, every actuator it names was reported and the message published
        joints. A degraded state (joints withheld: an actuator never reported or stale, an
        encoder waiting for its turns, a linkage refusing the state) is learned as it is:
        the relay publishes the same joints while the same ones are withheld for the same
        reasons, and leaves the message to the typed route when that changes.
        """
        self.take = _never
        layout = JointStateLayout.learn_message(data, msg)
        if layout is None or not layout.stacked or states.outputs is not None:
            return                  # (output encoders: the typed route's, every message)
        found = states.known_columns(self._source, layout.names)
        keep = states.last_kept
        if found is None or keep is False:
            return
        names = states.transmissions.joint_names
        joint_names = names if keep is None else tuple(names[i] for i in keep)
        n = len(joint_names)
        template = JointStateLayout(joint_names, msg.header.frame_id, (n, n, n)).encoder()
        step = _state_step(states, found, len(layout.names), template.state, self._now_ns,
                           keep)
        self.take = self._relay(layout, step, template)

    def _relay(self, layout, step, template):
        """Return ``take``: bytes of ``layout`` through ``step``, out as the template's bytes."""
        inbox = layout.inbox()
        matches, inbuf, block, header = layout.matches, inbox.buf, inbox.block, inbox.header
        unpack_stamp, stamp_at = STAMP.unpack_from, layout.stamp_offset
        out, start, end = template.buf, layout.stamp_offset, layout.header_end

        # Each call saved here is one per message; on a core shared with other processes a
        # Python call costs about a microsecond. The input is copied into the inbox (one
        # memcpy) so its doubles are aligned: numpy's loops on misaligned bytes are slower.
        def take(data):
            if not matches(data):
                return _NOT_TAKEN
            inbuf[:] = data
            sec, nanosec = unpack_stamp(inbuf, stamp_at)
            if not step(block, sec * 1_000_000_000 + nanosec):
                return _NOT_TAKEN
            out[start:end] = header
            return bytes(out)
        return take


def _state_step(states, found, num_names, out, now_ns, keep=None):
    """
    Return ``step(block, stamp_ns) -> bool``: one message into ``states`` and ``out``.

    ``block``: the message's position, velocity and effort rows, ``num_names + 1`` apart
    (:meth:`JointStateLayout.block`); ``out``: the (3, len(keep)) joint state to write.
    ``keep``: the joints the last message published (None: every joint). False: not
    taken, nothing changed. Two forms: in the steady state a message naming every actuator
    and nothing else is gathered into a spare state buffer that then becomes the state (no
    scatter); any other message, or a degraded state, writes its actuators' values into a
    copy of the state.
    """
    sid, rows, cols, num_unknown = found
    generation = states.generation
    counters, stamps, source_ids, owner = (states.counters, states.stamps, states.source_ids,
                                           states.owner)
    rows = np.arange(num_names) if rows is None else rows
    gather = np.arange(3)[:, None] * (num_names + 1) + rows     # (3, k) indices into block

    names = states.transmissions.actuator_names
    lane_names = frozenset(np.array(names, dtype=object)[cols])

    def owned():
        """
        Return True if no other source wrote one of these actuators last, or they become ours.

        ``ingest`` lets the latest writer own an actuator and warns once per actuator
        reported on two topics: once every one of these was warned about, taking them
        over is all it does, and so does this.
        """
        mine = owner[cols]
        if not ((mine >= 0) & (mine != sid)).any():
            return True
        if not states.shared_seen.issuperset(lane_names):
            return False
        owner[cols] = sid
        return True

    encoders = states.encoders
    in_message = np.isin(encoders.cols, np.arange(len(owner))[cols])   # encoders it reads
    unwraps = bool(in_message.any())
    steady = keep is None and not states.refused and encoders.resolved
    if steady and num_unknown == 0 and len(rows) == states.transmissions.num_actuators:
        # Every actuator, in the message's order: its values gathered in actuator order.
        order = np.empty((3, len(rows)), dtype=np.intp)
        order[:, cols] = gather
        fill = order.reshape(-1)
        write = states.joint_map.writer(out)
        n_act = len(rows)
        history = states.velocity_history
        units = states.units
        if units is not None:
            scale, shift = units.flat_factor, units.flat_offset

        # What ingest does for such a message, in few Python steps: every actuator's
        # values gathered into the spare state, which becomes the state if they are
        # finite (tested as x . x: one BLAS call, cheaper than a sum, which a value beyond
        # 1e154 in magnitude fails too and the typed route then decides) and no linkage
        # refuses it (the joint state is written first: a refused one changed nothing).
        # The take's indices are valid: 'wrap' mode spares numpy a scratch copy.
        def step(block, stamp_ns):
            last = stamps.get(sid)
            if (states.generation != generation or last is not None and stamp_ns < last
                    or len(source_ids) > 1 and not owned()):
                return False
            spare = states.spare_flat
            block.take(fill, None, spare[:-1], 'wrap')
            if units is not None:           # the driver's units into SI (ingest's to_si)
                body = spare[:-1]
                body *= scale
                body += shift
            if not squares_are_finite(spare):
                return False
            if unwraps:
                tracked = encoders.trial(spare[:n_act], in_message)
            if not write(spare):
                return False
            if unwraps:
                encoders.commit(in_message, *tracked)
            states.spare_flat, states.flat = states.flat, spare
            states.spare_values, states.values = states.values, states.spare_values
            states.joint_state, states.joint_kept = out, None
            states.seen_all_ns = now_ns()         # every actuator: settled when read
            stamps[sid] = stamp_ns
            if history is not None:
                history.record(stamp_ns, spare[n_act:2 * n_act])
            counters.received += 1
            states.last_result = ACCEPTED
            counters.published += 1
            return True
        return step

    return _general_step(states, found, gather, in_message, owned, out, now_ns, keep)


def _general_step(states, found, gather, in_message, owned, out, now_ns, keep):
    """
    Return the step of a message naming some actuators, or of any in a degraded state.

    The message's values are written into a copy of the state, the whole of it mapped
    (other topics' values may hold a NaN, which the general map handles), and the copy made
    the state, provided the joints it withholds are the ones ``ingest`` withheld when the
    relay learned (``keep``: those it published), for the same reasons: the same actuators
    of other topics stale, no encoder finding its turns in this state, the same linkages
    refusing it with the same status. Anything else is the typed route's.
    """
    sid, _, cols, num_unknown = found
    generation = states.generation
    counters, stamps, source_ids = states.counters, states.stamps, states.source_ids
    joint_map, encoders = states.joint_map, states.encoders
    others = np.setdiff1d(np.arange(states.transmissions.num_actuators), cols)
    was_stale = (states.stale_mask(now_ns())[others] if states.stale_ns is not None
                 else np.zeros(len(others), dtype=bool))
    any_others = len(others) > 0
    refusing = joint_map.refused            # the same linkages, for the same reasons
    unwraps = bool(in_message.any())
    waiting = unwraps and not encoders.resolved
    full = out if keep is None else np.empty((3, states.transmissions.num_joints))
    units = states.units

    def step(block, stamp_ns):
        last = stamps.get(sid)
        if (states.generation != generation or last is not None and stamp_ns < last
                or len(source_ids) > 1 and not owned()):
            return False
        now = now_ns()
        stale_ns = states.stale_ns          # live: ros2 param set changes it, not the layout
        if any_others and stale_ns is not None:
            states.settle_seen()
            if not np.array_equal(stale_at(states.last_seen_ns[others], now, stale_ns),
                                  was_stale):
                return False
        values = block.take(gather)
        if units is not None:
            units.states_to_si(values, cols)
        if not squares_are_finite(values.reshape(-1)):
            return False
        spare, spare_values = states.spare_flat, states.spare_values
        spare[:] = states.flat
        spare_values[:, cols] = values
        if unwraps:
            tracked = encoders.trial(spare_values[0], in_message)
            if waiting:
                resolves, reasons = encoders.attempt(spare_values[0])
                if resolves:                # more joints from now on: the typed route's
                    return False
        joint_map(spare, full)
        if joint_map.refused != refusing:
            return False
        if keep is not None:
            full.take(keep, 1, out, 'wrap')
        if unwraps:
            encoders.commit(in_message, *tracked)
            if waiting:
                encoders.note(reasons)
        states.spare_flat, states.flat = states.flat, spare
        states.spare_values, states.values = states.values, spare_values
        states.joint_state, states.joint_kept = full, keep
        states.settle_seen()
        states.last_seen_ns[cols] = now
        stamps[sid] = stamp_ns
        if states.velocity_history is not None:
            states.velocity_history.record(stamp_ns, spare_values[1])
        counters.received += 1
        counters.unknown_names += num_unknown
        counters.refused_linkage_states += len(refusing)
        states.last_result = ACCEPTED
        counters.published += 1
        return True
    return step


class CommandCodec:
    """
    Joint commands of the last learned layout read as views, actuator commands as templates.

    :meth:`decode` returns ``(names, (position, velocity, effort), header)`` of a message
    of the learned layout, else None; :meth:`encode` writes an
    :class:`~.commands.ActuatorCommand` with that header into a template of its names.
    """

    def __init__(self):
        self._layout = None
        self._names = None
        self._template = None
        self._streamed = (None, None, None, None)   # mapper, its set, limiting, the map

    def learn(self, data, msg):
        """Learn the layout of ``data`` (decoded: ``msg``); None if it does not decode back."""
        self._layout = JointStateLayout.learn_message(data, msg)
        self._names = None          # the output template follows the header's length
        self._streamed = (None, None, None, None)

    def streamed(self, mapper):
        """
        Return the learned layout's :class:`~.prepared.StreamedCommand` under ``mapper``, or None.

        Made once per layout, mapper, transmission set and ``limit_commands``; None where it
        is not usable (the reference maps every message of the layout).
        """
        kept_mapper, kept_set, kept_limit, found = self._streamed
        if (kept_mapper is not mapper or kept_set is not mapper.transmissions
                or kept_limit != mapper.limit_commands):
            layout = self._layout
            found = StreamedCommand(mapper, layout.names, layout.sizes, layout.frame_id)
            self._streamed = (mapper, mapper.transmissions, mapper.limit_commands, found)
        return found if found.usable else None

    def decode(self, data):
        """Return the names, arrays and header bytes of ``data`` if it has the layout."""
        layout = self._layout
        if layout is None or not layout.matches(data):
            return None
        return layout.names, layout.arrays(data), layout.header_bytes(data)

    def encode(self, out, header):
        """Return ``out`` as JointState bytes with ``header`` (stamp and frame_id)."""
        arrays = (out.position, out.velocity, out.effort)
        if self._names is not out.names:        # the mapper's cached tuple: same names
            n = len(out.names)
            self._template = JointStateLayout(
                out.names, self._layout.frame_id,
                [0 if a is None else n for a in arrays]).encoder()
            self._names = out.names
        template = self._template
        template.set_header(header)
        template.fill(arrays)
        return template.to_bytes()
