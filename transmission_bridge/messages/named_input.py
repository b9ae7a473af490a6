"""
Checks shared by every node that takes values by name (sensor_msgs/JointState and the like).

A message is rejected whole when a non-empty value array's length differs from the
number of names (``length_mismatch``), when a name repeats (``duplicate_names``) or
when a value is infinite (``non_finite``); NaN is kept (it means unknown). Names
the receiver does not know are skipped and reported once each. Index maps are
cached per name tuple (bounded), so a steady stream costs one dict lookup.

>>> checker = NamedInput(['a', 'b'])
>>> checked = checker.check(('b', 'x'), [[2.0, 9.0], []])
>>> checked.cols.tolist(), checked.arrays[0].tolist(), checked.arrays[1], checked.new_unknown
([1], [2.0], None, ('x',))
>>> checker.check(('a', 'a'), [[1.0, 2.0]]).rejected
'duplicate_names'
"""

import dataclasses
import math
import re
import warnings

import numpy as np

_MAX_CACHED_NAME_LISTS = 64

# The two tests below overflow on purpose for huge finite values, and a sum of +inf and
# -inf is NaN (the caller then looks element by element); numpy's RuntimeWarning about
# either would only alarm a node's user.
warnings.filterwarnings('ignore', r'(overflow|invalid value) encountered in (dot|reduce)',
                        RuntimeWarning, re.escape(__name__))
_add_reduce = np.add.reduce


def sum_is_finite(values):
    """
    Return True if the sum of ``values`` is finite: all are, the usual case, in one call.

    False for an infinity or a NaN (+inf and -inf too), and also for finite values whose
    sum overflows; a caller that must tell these apart then looks element-wise.
    """
    return math.isfinite(_add_reduce(values, None))


def squares_are_finite(values):
    """
    Return True if ``values . values`` is finite (one BLAS call, cheaper than a sum).

    False for an infinity or a NaN, and also for a value beyond about 1e154 in magnitude.
    """
    return math.isfinite(values.dot(values))


@dataclasses.dataclass
class Counters:
    """Running totals every input-taking core keeps (reported on /diagnostics)."""

    received: int = 0
    published: int = 0
    rejected_length_mismatch: int = 0
    rejected_duplicate_names: int = 0
    rejected_non_finite: int = 0
    unknown_names: int = 0
    stamp_backwards: int = 0

    def count(self, checked):
        """Count one message's :class:`Checked` outcome; return True if it was rejected."""
        self.received += 1
        if checked.rejected:
            field = 'rejected_' + checked.rejected
            setattr(self, field, getattr(self, field) + 1)
            return True
        self.unknown_names += checked.num_unknown
        return False

    def as_dict(self):
        """Return the counters as an ordered dict (name -> int)."""
        return dataclasses.asdict(self)


@dataclasses.dataclass
class TrajectoryCounters(Counters):
    """The shared counters plus trajectories mapped and refused (both nodes take them)."""

    trajectories_mapped: int = 0
    trajectories_rejected: int = 0


@dataclasses.dataclass(frozen=True)
class Checked:
    """A checked message: known rows/columns, one array per field (None if empty)."""

    rejected: str = ''
    reason: str = ''
    cols: object = None
    arrays: tuple = ()
    new_unknown: tuple = ()
    num_unknown: int = 0


class NamedInput:
    """
    Validates named-value messages against a fixed list of known names.

    ``ignored_names`` are names a message may carry that are neither taken nor counted as
    unknown (the kinematics node's mimic joints: the model derives their positions).
    """

    def __init__(self, known_names, ignored_names=()):
        self._index = {n: i for i, n in enumerate(known_names)}
        self._ignored = frozenset(ignored_names)
        self._columns = {}          # name tuple -> (rows, cols, unknown names)
        self._unknown_seen = set()
        # source -> its last stamp (ns). One dict for the life of the input, shared by
        # renamed() and cleared, never replaced, by forget_stamps(): a per-message caller
        # (the bridge's lane step) may hold it.
        self.last_stamps = {}

    def check(self, names, fields):
        """Check one message; ``fields`` are its value arrays (each empty or one per name)."""
        names = tuple(names)
        arrays = []
        for values in fields:
            if len(values) == 0:
                arrays.append(None)
                continue
            arr = np.asarray(values, dtype=float).reshape(-1)
            if arr.shape[0] != len(names):
                return Checked('length_mismatch',
                               f'array of length {arr.shape[0]} for {len(names)} names')
            arrays.append(arr)
        columns = self._columns.get(names)
        if columns is None:
            if len(set(names)) != len(names):
                return Checked('duplicate_names', 'duplicate names')
            columns = self._columns_of(names)
        rows, cols, unknown = columns
        for arr in arrays:
            # One sum answers "all finite" for almost every message; only a non-finite sum
            # (an inf, a NaN, or an overflow) needs the element-wise look.
            if arr is not None and not sum_is_finite(arr) and np.isinf(arr).any():
                return Checked('non_finite', 'infinite value')
        new_unknown = ()
        if unknown:
            new_unknown = tuple(n for n in unknown if n not in self._unknown_seen)
            self._unknown_seen.update(new_unknown)
        selected = tuple(None if arr is None else (arr if rows is None else arr[rows])
                         for arr in arrays)
        return Checked('', '', cols, selected, new_unknown, len(unknown))

    def _columns_of(self, names):
        rows, cols, unknown = [], [], []
        for row, name in enumerate(names):
            col = self._index.get(name)
            if col is None and name in self._ignored:
                continue
            if col is None:
                unknown.append(name)
            else:
                rows.append(row)
                cols.append(col)
        rows_arr = None if len(rows) == len(names) else np.array(rows, dtype=np.intp)
        columns = (rows_arr, np.array(cols, dtype=np.intp), tuple(unknown))
        if len(self._columns) >= _MAX_CACHED_NAME_LISTS:
            self._columns.clear()
        self._columns[names] = columns
        return columns

    def known_columns(self, names):
        """
        Return ``(rows, where, num_unknown)`` of a name tuple already checked, else None.

        For a steady stream of messages with these names (the nodes' fast paths): ``rows``
        as in :meth:`check`, and ``where`` the known names' columns, ``slice(None)`` when
        the names are every known name in order, so that writing them needs no index array.
        """
        columns = self._columns.get(names)
        if columns is None:
            return None
        rows, cols, unknown = columns
        every = len(cols) == len(self._index) and (cols == np.arange(len(cols))).all()
        return rows, slice(None) if every else cols, len(unknown)

    def renamed(self, known_names, ignored_names=()):
        """Return a checker for other known names that keeps the stamps and warnings so far."""
        new = NamedInput(known_names, ignored_names)
        new.last_stamps = self.last_stamps
        new._unknown_seen = self._unknown_seen
        return new

    def stamp_went_back(self, source, stamp_ns):
        """Record ``stamp_ns`` for ``source``; return True if it is older than the last one."""
        last = self.last_stamps.get(source)
        self.last_stamps[source] = stamp_ns
        return last is not None and stamp_ns < last

    def forget_stamps(self):
        """Forget every source's last stamp."""
        self.last_stamps.clear()


def seconds_to_ns(seconds):
    """Convert a duration in seconds to integer nanoseconds (rounded)."""
    return int(math.floor(seconds * 1e9 + 0.5))


def report_input(logger, topic, kind, new_unknown_names, refused=''):
    """
    Log what one input message needs said: each unknown name once, and why it was refused.

    ``kind`` names what the names are (``joint``, ``actuator``); refusals are throttled
    (5 s), as a stream of bad messages would otherwise flood the log.
    """
    for name in new_unknown_names:
        logger.warning(f'{topic}: ignoring unknown {kind} {name!r}')
    if refused:
        logger.warning(f'{topic}: refused: {refused}', throttle_duration_sec=5.0)
