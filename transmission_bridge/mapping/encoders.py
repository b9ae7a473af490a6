"""
The bridge's absolute encoders, without ROS: each stream's readings made whole positions.

:class:`EncoderTracks` keeps, for every actuator with an ``encoder`` period, its last finite
reading and its whole turns (the maths: :mod:`transmission_bridge.transmissions.encoders`).
At the first readings of a transmission it finds the turns that put every joint within its
limits; until one choice is left (or an operator gives the turns) that transmission's joints
are not published and :attr:`EncoderTracks.ambiguous` says why. The state side calls
:meth:`EncoderTracks.take` on every message's positions (in place: readings in, whole
positions out); the fast path calls :meth:`EncoderTracks.trial` and, once the message is
taken, :meth:`EncoderTracks.commit`, so a message it does not take changes nothing.
"""

import numpy as np

from ..transmissions import ConfigError
from ..transmissions.encoders import actuator_reach, joint_gain, search_turns, unwrap


class EncoderTracks:
    """Every encoder actuator's last reading and turns, per transmission set (see above)."""

    def __init__(self, tset):
        self._tset = tset
        cols, periods, groups = [], [], []
        table = tset.membership
        for t, (spec, transmission) in enumerate(zip(tset.specs, tset.transmissions)):
            members = table.actuators[t].tolist()
            mine = [k for k, a in enumerate(spec.actuators) if a.encoder_period is not None]
            if not mine:
                continue
            at = len(cols)
            cols += [members[k] for k in mine]
            periods += [spec.actuators[k].encoder_period for k in mine]
            groups.append((spec, transmission, members, mine, list(range(at, len(cols))),
                           table.joints[t].tolist()))
        #: The encoder actuators (set order) and their periods.
        self.cols = np.array(cols, dtype=np.intp)
        self.periods = np.array(periods, dtype=float)
        self._groups = groups
        self._position_of = {c: k for k, c in enumerate(cols)}
        self.last = np.full(len(cols), np.nan)
        self.turns = np.zeros(len(cols))             # whole numbers (floats: no overflow)
        self.known = np.zeros(len(cols), dtype=bool)
        self._pending = {}                  # encoder position -> turns given before a reading
        # transmission -> its joints' limits and its actuators' reach within them
        self._limits = {}
        self._reasons = {}                  # (transmission, encoders, choices) -> why
        # transmission -> (positions, encoders, margin, finding) of its last search: the
        # same finding while no actuator moved beyond the margin (search_turns)
        self._searched = {}
        #: Why a transmission's joints wait: {transmission name: reason}.
        self.ambiguous = {}
        #: The joints not published until their turns are known (set indices).
        self.blocked = np.zeros(0, dtype=np.intp)

    def __bool__(self):
        return bool(len(self.cols))

    def carry_from(self, old):
        """Keep ``old``'s readings and turns of the encoders both have (same name, period)."""
        names, old_names = self._tset.actuator_names, old._tset.actuator_names
        before = {old_names[c]: k for k, c in enumerate(old.cols)}
        for k, c in enumerate(self.cols):
            j = before.get(names[c])
            if j is not None and old.periods[j] == self.periods[k]:
                self.last[k], self.turns[k], self.known[k] = old.last[j], old.turns[j], \
                    old.known[j]
                if j in old._pending:
                    self._pending[k] = old._pending[j]
        self._update_blocked()
        for spec, *_ in self._groups:
            if spec.name in old.ambiguous and spec.name in {
                    g[0].name for g in self._groups if not self.known[g[4]].all()}:
                self.ambiguous[spec.name] = old.ambiguous[spec.name]

    @property
    def resolved(self):
        """Return True when every encoder's turns are known."""
        return bool(self.known.all())

    # --- per message -----------------------------------------------------------------
    def take(self, positions, cols):
        """
        Make the encoder readings among ``cols`` of ``positions`` (a row, set order) whole.

        In place, committed; then, for a transmission whose turns are not yet known, try
        to find them (:attr:`ambiguous`, :attr:`blocked`).
        """
        mask = np.isin(self.cols, cols)
        if not mask.any():
            return
        for k in np.flatnonzero(mask):
            if k in self._pending and np.isfinite(positions[self.cols[k]]):
                self.turns[k] = self._pending.pop(k)
                self.known[k] = True
        last, turns = self.last[mask], self.turns[mask]
        positions[self.cols[mask]] = unwrap(positions[self.cols[mask]], last, turns,
                                            self.periods[mask])
        self.last[mask], self.turns[mask] = last, turns
        if not self.known.all():
            self._resolve(positions)

    def trial(self, positions, mask):
        """
        Return ``(last, turns)`` after making ``positions[self.cols[mask]]`` whole, in place.

        Nothing of this object changes until :meth:`commit` (the fast path's step, which
        may still not take the message).
        """
        last, turns = self.last[mask], self.turns[mask]
        positions[self.cols[mask]] = unwrap(positions[self.cols[mask]], last, turns,
                                            self.periods[mask])
        return last, turns

    def commit(self, mask, last, turns):
        """Keep what :meth:`trial` computed: the message was taken."""
        self.last[mask], self.turns[mask] = last, turns

    # --- turns ---------------------------------------------------------------------------
    def set_turns(self, actuator, turns):
        """
        Give ``actuator``'s whole turns now: its position is its last reading + turns period.

        Before its first reading they are applied to that reading. Returns the actuator's
        position (NaN before a reading).
        """
        k = self._position_of[self._tset.actuator_index[actuator]]
        if not np.isfinite(self.last[k]):
            self._pending[k] = float(turns)
            return float('nan')
        self.turns[k] = float(turns)
        self.known[k] = True
        self._update_blocked()
        return float(self.last[k] + self.turns[k] * self.periods[k])

    def whole_positions(self, positions):
        """Rewrite every read encoder's position in ``positions`` from its last reading."""
        read = np.isfinite(self.last)
        positions[self.cols[read]] = self.last[read] + self.turns[read] * self.periods[read]

    def reset(self):
        """Forget every reading and turn (a time jump): turns are found again."""
        self._searched = {}
        self.last[:] = np.nan
        self.turns[:] = 0.0
        self.known[:] = False
        self._pending = {}
        self.ambiguous = {}
        self.blocked = np.zeros(0, dtype=np.intp)

    def turns_by_name(self):
        """Return {actuator: whole turns} of the encoders whose turns are known."""
        names = self._tset.actuator_names
        return {names[c]: int(t) for c, t, ok in zip(self.cols, self.turns, self.known) if ok}

    def _resolve(self, positions):
        """Find the turns of each transmission still unknown, if its joints allow only one."""
        for spec, found, why in self._findings(positions):
            if found is not None:
                where, turns = found
                for k, t in zip(where, turns):
                    self.turns[k] += t
                    self.known[k] = True
                self.ambiguous.pop(spec.name, None)
            elif why:
                self.ambiguous[spec.name] = why
            else:
                self.ambiguous.pop(spec.name, None)
        self.whole_positions(positions)
        self._update_blocked()

    def attempt(self, positions):
        """
        Return ``(resolves, reasons)``: what :meth:`take` would find in ``positions``.

        Nothing it says changes (the search is remembered: a transmission whose actuators
        stay within its margin is not searched again). ``resolves``: the turns of some
        transmission would be found (its
        joints published from this state on); ``reasons``: {transmission: why it still
        waits}, what :attr:`ambiguous` would say. The fast path's step asks this while an
        encoder waits, and says ``reasons`` with :meth:`note` once it took the message.
        """
        resolves, reasons = False, {}
        for spec, found, why in self._findings(positions):
            resolves = resolves or found is not None
            if why:
                reasons[spec.name] = why
        return resolves, reasons

    def note(self, reasons):
        """Say ``reasons`` (from :meth:`attempt`) in :attr:`ambiguous`."""
        self.ambiguous.update(reasons)

    def _findings(self, positions):
        """Yield ``(spec, (where, turns) or None, why or '')`` per encoder transmission."""
        for spec, transmission, members, mine, at, _ in self._groups:
            unknown = [j for j, k in zip(mine, at) if not self.known[k]]
            if not unknown:
                yield spec, None, ''
                continue
            local = positions[members]
            if not np.isfinite(local).all():
                yield spec, None, 'waiting for every actuator of it to report'
                continue
            where = [at[mine.index(j)] for j in unknown]
            last = self._searched.get(spec.name)
            if (last is not None and last[1] == unknown
                    and np.abs(local - last[0]).max() < last[2]):
                yield (spec, *last[3])          # nothing moved far enough to change it
                continue
            try:
                limits = self._limits.get(spec.name)
                if limits is None:              # the same for every reading: found once
                    lower = np.array([j.lower_limit for j in spec.joints], dtype=float)
                    upper = np.array([j.upper_limit for j in spec.joints], dtype=float)
                    limits = self._limits[spec.name] = (
                        lower, upper, actuator_reach(transmission, lower, upper),
                        joint_gain(transmission, len(members)))
                found, margin = search_turns(transmission, local, unknown,
                                             self.periods[where], *limits)
            except ConfigError as exc:
                yield spec, None, str(exc)
                continue
            if len(found) == 1:
                finding = (where, found[0]), ''
            else:
                key = (spec.name, tuple(unknown), tuple(found))
                why = self._reasons.get(key)
                if why is None:                 # said alike for the same choices
                    if len(self._reasons) > 64:
                        self._reasons.clear()
                    why = self._reasons[key] = self._why(spec, found, unknown)
                finding = None, why
            self._searched[spec.name] = (local.copy(), unknown, margin, finding)
            yield (spec, *finding)

    def _update_blocked(self):
        blocked = []
        for spec, _, _, _, at, joints in self._groups:
            if not self.known[at].all():
                blocked += joints
            else:
                self.ambiguous.pop(spec.name, None)
        self.blocked = np.array(sorted(blocked), dtype=np.intp)

    @staticmethod
    def _why(spec, found, unknown):
        """Say why the turns of ``spec`` are not known: the range, the reductions, the choices."""
        joints = ', '.join(f'{j.name} [{j.lower_limit:g}, {j.upper_limit:g}]' for j in spec.joints)
        motors = ', '.join(f'{spec.actuators[k].name} (reduction '
                           f'{spec.actuators[k].mechanical_reduction:g}, period '
                           f'{spec.actuators[k].encoder_period:g})' for k in unknown)
        if not found:
            return (f'no whole number of turns of {motors} puts {joints} within its limits: '
                    'give the turns (encoder_turns)')
        shown = ', '.join(str(list(c)) for c in found[:6]) + (' ...' if len(found) > 6 else '')
        return (f'{len(found)} choices of turns of {motors} put {joints} within its limits '
                f'({shown}): give the turns (encoder_turns), or move the joints where only '
                'one fits')
