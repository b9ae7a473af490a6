"""
The bridge's state side, without ROS: the latest value of every actuator, and joint states.

The node decodes an actuator-state message into names and arrays, calls
:meth:`ActuatorStates.ingest` and publishes what comes back; the offline bag converter calls
the very same method, so both produce bit-identical joint states for the same input. The
node's fast path (:mod:`.fast_route`) takes a steady stream's messages from their bytes and
changes this object exactly as ``ingest`` would (its tests compare the two message by
message).

Input policy (doc/nodes.md, "Bad input"):

* a message whose non-empty position/velocity/effort array length differs from
  ``len(name)``, that repeats a name, or carries an infinite value is rejected
  whole and counted; NaN means "unknown" and is kept;
* unknown actuator names are skipped (the rest is used) and reported once per name;
* a stamp older than the previous one from the same source (a bag that loops)
  forgets what that source reported before the new message is used;
* an actuator reported by two sources takes the latest message (last writer wins);
  the node warns once per actuator;
* with :attr:`ActuatorStates.stale_ns` set, a joint is published only while every actuator
  of its transmission was heard from within it (on the receive clock): the joints of a
  transmission with a stale actuator are left out (named in :attr:`stale_joints`) and come
  back with the actuator.

:meth:`ActuatorStates.measured` is the one measured state that every consumer of the bridge
reads (goals, joint springs, the safe commands, commands to a linkage without positions):
the joint state last published and the motors' positions, unknown where not measured.

>>> from transmission_bridge.transmissions import load_transmissions
>>> states = ActuatorStates(load_transmissions({'transmissions': [
...     {'name': 't', 'type': 'simple', 'actuators': [{'name': 'm', 'mechanical_reduction': 10.0}],
...      'joints': [{'name': 'q'}]}]}))
>>> out = states.ingest('s', ['m'], [5.0], [], [], stamp_ns=1)
>>> out.names, out.position, out.velocity
(('q',), array([0.5]), None)
"""

import dataclasses
import typing

import numpy as np

from .encoders import EncoderTracks
from .measurement import measure, VelocityHistory
from .outputs import OutputEncoders
from ..messages import named_input
from ..messages.named_input import NamedInput
from ..transmissions.linkage import STATUS_TEXT


@dataclasses.dataclass
class StateCounters(named_input.Counters):
    """The shared counters, actuators reported on two topics, linkage states refused."""

    shared_actuators: int = 0
    refused_linkage_states: int = 0


class JointOutput(typing.NamedTuple):
    """Joint states computed from one actuator message; ``None`` where the input had no array."""

    names: tuple
    position: object
    velocity: object
    effort: object


@dataclasses.dataclass(frozen=True)
class IngestResult:
    """Why a message was not turned into an output (``reason``) and what to warn about."""

    reason: str = ''
    new_unknown_names: tuple = ()
    new_shared_actuators: tuple = ()
    limited: tuple = ()         # commands: what limiting changed, one note each


ACCEPTED = IngestResult()


class ActuatorStates:
    """
    Latest actuator values per interface, and joint states for complete transmissions.

    The actuator values live in :attr:`flat`: the position, velocity and effort rows of
    every actuator (transmission-set order), then a 1.0, the form the set's joint-state map
    reads (:meth:`TransmissionSet.state_map`); :attr:`values` is the same memory as (3, nA).
    The fast path (:mod:`.fast_route`) reads and writes this object's public attributes as
    :meth:`ingest` does, and holds to them only while :attr:`generation` is unchanged:
    ingest, reset and a new configuration bump it whenever what a steady stream relies on
    (the reported actuators, the sources, the transmissions) may have changed.
    """

    def __init__(self, tset):
        self.counters = StateCounters()
        self.last_result = ACCEPTED
        self.generation = 0
        self.source_ids = {}        # source -> small int (owner ids)
        self.shared_seen = set()     # actuators warned of: reported on two topics
        self._tset = None
        self._input = NamedInput(())
        #: source id -> its last stamp (ns); the input's, shared with the fast path.
        self.stamps = self._input.last_stamps
        n = tset.num_actuators
        self.flat, self.values = _actuator_values(n)
        self.spare_flat, self.spare_values = _actuator_values(n)    # a fast step's next state
        self.reported = np.zeros(n, dtype=bool)
        self.last_seen_ns = np.full(n, -1, dtype=np.int64)
        # When the fast path last took every actuator at once (-1: not since last_seen_ns
        # was settled); settle_seen() writes it in before last_seen_ns is read.
        self.seen_all_ns = -1
        self.owner = np.full(n, -1, dtype=np.intp)       # source id of the last writer
        #: The linkages the last state refused: {their joints (a tuple): why}; kept until
        #: they are computed again.
        self.refused = {}
        #: An actuator not heard from for longer (ns, receive time) is stale: its
        #: transmission's joints are not published (None: never stale).
        self.stale_ns = None
        #: The joints the last output left out because an actuator of theirs was stale, or
        #: deflected beyond its limit (an output encoder's).
        self.stale_joints = self.deflected_joints = ()
        #: The joints the last message published: their indices (None: every joint), or
        #: False when it published nothing. The fast path keeps to them (:mod:`.fast_route`).
        self.last_kept = False
        #: The (3, nJ) joint state of the last message that published, and its joints
        #: (``last_kept`` then): what :meth:`measured` reads. Both routes set them.
        self.joint_state, self.joint_kept = None, False
        self.measured_cache = None          # (key, Measured): :func:`.measurement.measure`'s
        #: The motors' velocities of the last states by stamp (:class:`VelocityHistory`), for
        #: a set whose gear stages lose: None otherwise (nothing recorded).
        self.velocity_history = None
        self._all_reported = False
        self.set_transmissions(tset)

    # --- configuration -----------------------------------------------------------
    @property
    def transmissions(self):
        """Return the :class:`TransmissionSet` in force."""
        return self._tset

    def set_transmissions(self, tset):
        """Switch to ``tset``; values of actuators that keep their name are kept."""
        old = self._tset
        self.settle_seen()
        if old is not None and old.actuator_names != tset.actuator_names:
            index = old.actuator_index
            keep = [index.get(name) for name in tset.actuator_names]
            flat, values = _actuator_values(tset.num_actuators)
            reported = np.zeros(tset.num_actuators, dtype=bool)
            seen = np.full(tset.num_actuators, -1, dtype=np.int64)
            owner = np.full(tset.num_actuators, -1, dtype=np.intp)
            for new_i, old_i in enumerate(keep):
                if old_i is not None:
                    values[:, new_i] = self.values[:, old_i]
                    reported[new_i] = self.reported[old_i]
                    seen[new_i] = self.last_seen_ns[old_i]
                    owner[new_i] = self.owner[old_i]
            self.flat, self.values, self.reported = flat, values, reported
            self.spare_flat, self.spare_values = _actuator_values(tset.num_actuators)
            self._all_reported = False
            self.last_seen_ns, self.owner = seen, owner
        self._tset = tset
        #: The drivers' units (:class:`~..transmissions.units.UnitTable`; None: all SI): a
        #: message's values are taken into SI, the fast path's too.
        self.units = None if tset.units.identity else tset.units
        self.generation += 1
        self.joint_state, self.joint_kept, self.measured_cache = None, False, None
        self.velocity_history = (None if tset.losses.lossless
                                 else VelocityHistory(tset.num_actuators))
        #: The second encoders at some actuators' gear outputs (:mod:`.outputs`; None: none).
        self.outputs = OutputEncoders(tset) or None
        self._input = self._input.renamed(tset.actuator_names + (
            self.outputs.names if self.outputs is not None else ()))
        encoders = EncoderTracks(tset)
        if old is not None and getattr(self, 'encoders', None):
            encoders.carry_from(self.encoders)
        #: The absolute encoders' readings and turns (:class:`.encoders.EncoderTracks`).
        self.encoders = encoders
        #: The joint-state map of this stream (it keeps what a non-linear member needs
        #: from one state to the next).
        self.joint_map = tset.state_map()
        self.refused = {}
        self._complete = None
        self._joint_index = tset.joint_index
        #: Per joint, the actuators of its transmission (the set's membership table).
        self.joint_actuators = tset.membership.joint_actuators

    # --- input -------------------------------------------------------------------
    def ingest(self, source, names, position, velocity, effort, stamp_ns, now_ns=None):
        """
        Take one actuator-state message; return a :class:`JointOutput` or ``None``.

        ``source`` identifies the topic (or publisher); ``stamp_ns`` is the header
        stamp in nanoseconds; ``now_ns`` the receive time on the node's clock (for
        stale detection; defaults to the stamp). When ``None`` is returned,
        :attr:`last_result` says why.
        """
        c = self.counters
        checked = self._input.check(names, (position, velocity, effort))
        if c.count(checked):
            return self._refuse(checked.reason)
        self.settle_seen()
        cols, arrays, new_unknown = checked.cols, checked.arrays, checked.new_unknown
        now = stamp_ns if now_ns is None else now_ns
        if self.outputs is not None:        # the second encoders' readings, kept apart
            cols, arrays = self.outputs.split(cols, arrays, now)
        sid = self.source_ids.setdefault(source, len(self.source_ids))
        if self._input.stamp_went_back(sid, stamp_ns):
            c.stamp_backwards += 1
            self._forget(sid)
        shared, owners = (), self.owner[cols] if len(self.source_ids) > 1 else None
        if owners is not None and ((owners >= 0) & (owners != sid)).any():
            names_a = self._tset.actuator_names
            shared = tuple(names_a[i] for i in cols[(owners >= 0) & (owners != sid)]
                           if names_a[i] not in self.shared_seen)
            c.shared_actuators += len(shared)
            self.shared_seen.update(shared)
        units = self.units
        for k, arr in enumerate(arrays):
            if arr is not None:
                self.values[k, cols] = arr if units is None else units.to_si(k, arr, cols)
        if self.encoders and arrays[0] is not None:
            self.encoders.take(self.values[0], cols)        # readings -> whole positions
        if self.outputs is not None and self.encoders and not self.encoders.resolved:
            self.outputs.resolve(self)                  # an output encoder knows the turns
        if not self._all_reported and len(cols) and not self.reported[cols].all():
            self.reported[cols] = True
            self._complete = None
            self.generation += 1
            self._all_reported = bool(self.reported.all())
        self.last_seen_ns[cols] = now
        self.owner[cols] = sid
        self.last_result = IngestResult('', new_unknown, shared)
        self._published_stamp = stamp_ns
        return self._joint_output([arr is not None for arr in arrays], now)

    def known_columns(self, source, names):
        """
        Return ``(source id, rows, cols, num_unknown)`` for ``source``'s messages of ``names``.

        What the fast path needs to take such messages itself: ``rows`` the message rows
        of the known names (None: all), ``cols`` their actuators (``slice(None)``: all, in
        order). None unless a message of these names from ``source`` was taken and every
        actuator it names has been reported.
        """
        columns = self._input.known_columns(tuple(names))
        if columns is None or source not in self.source_ids:
            return None
        rows, cols, num_unknown = columns
        reported = self.reported[cols]
        if not reported.size or not reported.all():
            return None
        return self.source_ids[source], rows, cols, num_unknown

    def complete_joints(self):
        """
        Return ``(indices, names)`` of the joints whose transmissions have every actuator.

        ``indices`` is None when that is every joint (the steady state). Cached until the
        reported actuators or the configuration change.
        """
        if self._complete is None:
            joints = np.array([bool(self.reported[m].all()) for m in self.joint_actuators])
            idx = np.flatnonzero(joints)
            names = tuple(self._tset.joint_names[i] for i in idx)
            self._complete = (None if len(idx) == len(joints) else idx, names)
        return self._complete

    def settle_seen(self):
        """Write the fast path's last seen time into every actuator's, before it is read."""
        if self.seen_all_ns >= 0:
            self.last_seen_ns.fill(self.seen_all_ns)
            self.seen_all_ns = -1

    def _refuse(self, reason):
        self.last_result = IngestResult(reason)
        self.last_kept = False
        return None

    def _forget(self, sid):
        self.generation += 1
        self._all_reported = False
        mask = self.owner == sid
        self.values[:, mask] = np.nan
        self.reported[mask] = False
        self.last_seen_ns[mask] = -1
        self.owner[mask] = -1
        self._complete = None

    def _joint_output(self, present, now_ns):
        idx, names = self.complete_joints()
        if not names:
            return self._refuse('no transmission has all its actuators reported yet')
        if self.stale_ns is not None:
            idx, names = self._without_stale(idx, names, now_ns)
            if not names:
                return self._refuse('every transmission has a stale actuator: '
                                    + ', '.join(self.stale_actuators(now_ns, self.stale_ns)))
        if self.encoders and len(self.encoders.blocked):
            blocked = set(self.encoders.blocked.tolist())
            keep = [i for i in (range(self._tset.num_joints) if idx is None else idx)
                    if i not in blocked]
            idx = np.array(keep, dtype=np.intp)
            names = tuple(self._tset.joint_names[i] for i in keep)
            if not names:
                return self._refuse("the encoders' turns are not known yet: "
                                    + '; '.join(self.encoders.ambiguous.values()))
        flat = self.flat
        if self.outputs is not None:        # a second encoder's position, where heard from
            flat, idx, names = self.outputs.state_input(self, idx, names, now_ns)
            if not names:
                return self._refuse('deflection beyond its limit: '
                                    + self.outputs.tripped_text())
        # All three interfaces in one pass (the velocity and effort of the last message
        # that had them where this one has none: damping needs the velocity).
        joint_map = self.joint_map
        state = joint_map(flat)
        pos, vel, eff = (row if p else None for row, p in zip(state, present))
        self._note_refusals(joint_map)
        if joint_map.refused:
            idx, names = self._without_refused(idx, joint_map)
            if not names:
                return self._refuse('every transmission with all its actuators reported was '
                                    'refused (a linkage state: see refused on /diagnostics)')
        self.joint_state, self.joint_kept = state, idx
        if self.velocity_history is not None:
            self.velocity_history.record(self._published_stamp, self.values[1])
        if idx is not None:
            pos, vel, eff = (None if x is None else x[idx] for x in (pos, vel, eff))
        self.counters.published += 1
        self.last_kept = idx
        return JointOutput(names, pos, vel, eff)

    def _note_refusals(self, joint_map):
        """Count the linkage states ``joint_map`` refused; remember which, and why."""
        self.counters.refused_linkage_states += len(joint_map.refused)
        members = joint_map.members if joint_map.refused or self.refused else ()
        computed = {tuple(members[m]) for m in range(len(members))} - {
            tuple(members[m]) for m, _ in joint_map.refused}
        for joints in computed:
            self.refused.pop(joints, None)
        for m, status in joint_map.refused:
            self.refused[tuple(members[m])] = STATUS_TEXT.get(status, f'status {status}')

    def stale_mask(self, now_ns, timeout_ns=None):
        """
        Return which actuators are stale at ``now_ns`` (never heard from: stale too).

        Stale: not heard from within ``timeout_ns`` (default :attr:`stale_ns`).
        """
        self.settle_seen()
        return stale_at(self.last_seen_ns, now_ns,
                        self.stale_ns if timeout_ns is None else timeout_ns)

    def _without_stale(self, idx, names, now_ns):
        """Return the complete joints without those of transmissions with a stale actuator."""
        stale = self.stale_mask(now_ns)
        if not stale.any():
            self.stale_joints = ()
            return idx, names
        withheld = self._tset.membership.joints_of_motors(stale)
        considered = np.arange(self._tset.num_joints) if idx is None else idx
        keep, dropped = considered[~withheld[considered]], considered[withheld[considered]]
        self.stale_joints = tuple(self._tset.joint_names[i] for i in dropped)
        return keep.astype(np.intp), tuple(self._tset.joint_names[i] for i in keep)

    def _without_refused(self, idx, joint_map):
        """Return ``complete_joints()`` without the joints of the linkages just refused."""
        drop = {self._tset.joint_index[j] for m, _ in joint_map.refused
                for j in joint_map.members[m]}
        keep = [i for i in (range(self._tset.num_joints) if idx is None else idx)
                if i not in drop]
        return np.array(keep, dtype=np.intp), tuple(self._tset.joint_names[i] for i in keep)

    # --- state -------------------------------------------------------------------
    def reset(self):
        """Forget every actuator value and stamp (a time jump, or a fresh start)."""
        self.generation += 1
        self._all_reported = False
        self.values[:] = np.nan
        self.reported[:] = False
        self.seen_all_ns = -1
        self.last_seen_ns[:] = -1
        self.owner[:] = -1
        self._input.forget_stamps()
        self.joint_map.reset()
        self.encoders.reset()
        if self.outputs is not None:
            self.outputs.reset()
        self.refused = {}
        self.stale_joints = ()
        self._complete = None
        self.joint_state, self.joint_kept, self.measured_cache = None, False, None
        if self.velocity_history is not None:
            self.velocity_history = VelocityHistory(self._tset.num_actuators)

    def set_encoder_turns(self, actuator, turns):
        """Give an encoder actuator's whole turns (``encoder_turns``); its position now."""
        position = self.encoders.set_turns(actuator, turns)
        self.encoders.whole_positions(self.values[0])
        self.generation += 1
        return position

    @property
    def map_flat(self):
        """Return the transmission's input of the last state (output encoders' positions in)."""
        return self.flat if self.outputs is None else self.outputs.last_input

    def actuator_positions(self):
        """Latest actuator positions (NaN where unknown), actuator order; a copy."""
        return self.values[0].copy()

    def joints_now(self):
        """
        Return the joints' (positions, velocities) just published, every joint; else None.

        The published state itself, no copy (valid until the next state): what a goal's
        per-state step reads at once. None where the last state left joints out: then
        :meth:`measured`.
        """
        if self.joint_state is None or self.joint_kept is not None:
            return None
        return self.joint_state[0], self.joint_state[1]

    def measured(self, now_ns=None, stamp_ns=None):
        """
        Return the :class:`~.measurement.Measured` state: the one every consumer reads.

        :func:`.measurement.measure` says what it holds (``now_ns``: stale values unknown;
        ``stamp_ns``: the motors' velocities of that state, where held).
        """
        return measure(self, now_ns, stamp_ns)

    def stale_actuators(self, now_ns, timeout_ns):
        """Names of actuators not heard from within ``timeout_ns`` before ``now_ns`` (or never)."""
        names = self._tset.actuator_names
        return tuple(names[i] for i in np.flatnonzero(self.stale_mask(now_ns, timeout_ns)))


def _actuator_values(n):
    """Return (flat, values): ``flat`` the three rows of ``values`` (all NaN) then a 1.0."""
    flat = np.full(3 * n + 1, np.nan)
    flat[-1] = 1.0
    return flat, flat[:-1].reshape(3, n)


def stale_at(last_seen_ns, now_ns, timeout_ns):
    """Return which actuators are stale at ``now_ns``: never heard from (-1), or too long ago."""
    return (last_seen_ns < 0) | (now_ns - last_seen_ns > timeout_ns)
