"""
A goal being followed, without ROS: at each measured state, the desired state or the end.

:meth:`Execution.step` returns the desired state to command, or sets the end:
PATH_TOLERANCE_VIOLATED while the trajectory runs, SUCCESSFUL once past the last point with
every joint within its goal tolerances (position; velocity within
``stopped_velocity_tolerance``), GOAL_TOLERANCE_VIOLATED once ``goal_time`` has passed after
the last point without that. Errors are desired - actual (JTC's). Times are seconds from the
trajectory's start. :meth:`Execution.follow` does a common state's step and its command's map
in one compiled call (:mod:`.goal_loops`), and leaves the rest to :meth:`Execution.step`.
:class:`RunningGoal`: an accepted goal, and the owner of its joints' streamed commands.

How a goal ends is decided here and returned as data (:class:`End`: its terminal status, the
result, and whether its joints hold where they are measured): at a state
(:meth:`RunningGoal.at_state`), canceled, replaced, stale or aborted (:func:`canceled` ...).
The wiring only carries the decision out: the action's terminal state, the hold's command.
"""

import typing

import numpy as np

from . import goal_loops
from .results import (GOAL_TOLERANCE_VIOLATED, INVALID_GOAL, Outcome, PATH_TOLERANCE_VIOLATED,
                      SUCCESSFUL)
from .tolerances import beyond

SUCCEEDED, CANCELED, ABORTED = 'succeeded', 'canceled', 'aborted'


class End(typing.NamedTuple):
    """How a goal ends: its terminal ``status``, the result, whether its joints ``hold``."""

    status: str             # SUCCEEDED, CANCELED or ABORTED
    outcome: Outcome
    hold: bool              # held where measured (a success ends on its last point)


class AtState(typing.NamedTuple):
    """What a running goal does at one measured state: a command, an end, or both."""

    desired: tuple          # (p, v, a, effort or None) to command; None: nothing (held)
    end: End                # None while it runs


def finished(outcome):
    """Return the :class:`End` of a goal whose step set ``outcome``."""
    if outcome.code == SUCCESSFUL:
        return End(SUCCEEDED, outcome, hold=False)
    return End(ABORTED, outcome, hold=True)


def canceled():
    """Return the :class:`End` of a goal canceled while it runs: its joints hold."""
    return End(CANCELED, Outcome(SUCCESSFUL, 'canceled: the joints hold where they are'), True)


def replaced(where):
    """Return the :class:`End` of a goal a new one on ``where`` replaces (no hold: it moves)."""
    return End(ABORTED, Outcome(INVALID_GOAL, f'replaced by a new goal on {where}'), False)


def aborted(reason, hold=True):
    """Return the :class:`End` of a goal aborted for ``reason`` (a new configuration ...)."""
    return End(ABORTED, Outcome(INVALID_GOAL, reason), hold)


def stale(actuators, stale_s):
    """Return the :class:`End` of a goal whose ``actuators`` gave no state within ``stale_s``."""
    return End(ABORTED, Outcome(
        PATH_TOLERANCE_VIOLATED, f'actuators {list(actuators)} are stale (no state within '
        f'stale_timeout {stale_s:g} s): their joints are not measured'), True)


def hold_at(joints, positions):
    """
    Return (names, positions, velocities) holding ``joints`` at their measured positions.

    Joints not measured (NaN) are left out; None if none is measured.
    """
    positions = np.asarray(positions, dtype=float)
    known = np.isfinite(positions)
    if not known.any():
        return None
    return ([j for j, k in zip(joints, known) if k], positions[known],
            np.zeros(int(known.sum())))


class Execution:
    """
    One goal being followed: :meth:`step` at each measured state (module docstring).

    :attr:`last` holds the last step's (t, desired (p, v, a, e), actual (p, v), error (p, v)),
    for feedback and ``controller_state``.
    """

    def __init__(self, plan):
        self.plan = plan
        self._last = self._followed = None
        self.outcome = None
        path = plan.tolerances.path
        # |error| past these (inf: no tolerance) is a violation; Python floats: a goal has a
        # few joints, and a test per joint in Python beats three array calls per state.
        self._bounds = np.where(path > 0, path, np.inf)
        self._path = self._bounds.tolist()
        self._knots = (None if plan.efforts is not None
                       else (plan.spline.times, plan.spline.coefficients))

    @property
    def last(self):
        """Return the last step's (t, desired (p, v, a, e), actual (p, v), error (p, v))."""
        if self._followed is not None:
            t, s = self._followed
            self._last = (t, (s[0], s[1], s[2], None), (s[3], s[4]), (s[0] - s[3], s[1] - s[4]))
            self._followed = None
        return self._last

    def follow(self, loops, now_ns, position, velocity, idx, mapped):
        """
        Follow the state by one compiled call; return the desired state (5, n), or None.

        ``loops``: :func:`.goal_loops.kernels`' module; ``position``, ``velocity`` every
        joint's measured, ``idx`` the goal's joints among them; ``mapped`` the layout's map,
        bounds and outputs (:meth:`..mapping.prepared.PreparedCommand.affine`), into which
        the motors' command is written. Rows of the result: :data:`.goal_loops.P` ... None
        where the state is not the common case (:mod:`.goal_loops`): the caller then takes
        :meth:`step` and maps its result, which decide and word the rest. A plan with
        efforts always takes :meth:`step`.
        """
        if self._knots is None:
            return None
        state = np.empty((5, len(idx)))
        t = (now_ns - self.plan.start_ns) * 1e-9
        if loops.follow(t, *self._knots, position, velocity, idx, self._bounds, *mapped,
                        state) != goal_loops.FOLLOWED:
            return None
        self._followed = (t, state)
        return state

    def step(self, now_ns, positions, velocities):
        """
        Return the desired (p, v, a, effort or None) at ``now_ns`` for the measured state.

        Sets :attr:`outcome` when the goal ends (the returned command is then the last
        desired state; the caller holds instead). Before the start time the first knot
        (the measured start) is desired and nothing is judged.
        """
        plan = self.plan
        t = (now_ns - plan.start_ns) * 1e-9
        desired = plan.desired(t)
        q = np.asarray(positions, dtype=float)
        qd = np.asarray(velocities, dtype=float)
        error = (desired[0] - q, desired[1] - qd)
        self._last, self._followed = (t, desired, (q, qd), error), None
        if t < 0:
            return desired
        tol = plan.tolerances
        end = plan.spline.duration
        if t <= end:
            if _past(error[0], self._path[0]) or _past(error[1], self._path[1]):
                why = beyond(plan.joint_names, error, tol.path, 'path')
                self.outcome = Outcome(PATH_TOLERANCE_VIOLATED, f'{why} at t = {t:.3f} s')
            return desired
        why = beyond(plan.joint_names, error, tol.goal, 'goal', actual_velocity=qd)
        if not why:
            self.outcome = Outcome(SUCCESSFUL, '')
        elif tol.goal_time > 0 and t > end + tol.goal_time:
            self.outcome = Outcome(GOAL_TOLERANCE_VIOLATED, f'{why} {t - end:.3f} s after the '
                                   f'last point (goal_time {tol.goal_time:g} s)')
        return desired


class RunningGoal:
    """
    One accepted goal: its handle, its execution, and the owner of its joints' streams.

    As an owner (:mod:`..mapping.ownership`) it takes a streamed
    command's efforts for its joints as feed-forward and ignores (counts) the rest.
    """

    stream = False          # what it takes is not a command to the motors

    def __init__(self, handle, execution, group, counters=None):
        self.handle, self.execution, self.group = handle, execution, group
        #: (status, Outcome) once the goal has ended; None while it runs.
        self.ended = None
        self.feed_forward = {}          # joint index -> effort streamed on joint_commands
        self._counters, self._columns = {} if counters is None else counters, None

    def take(self, joints, position, velocity, effort, now_ns):
        """Take a streamed command's part for the goal's joints: efforts as feed-forward."""
        if len(position) or len(velocity):
            self._counters['streamed_commands_ignored'] = (
                self._counters.get('streamed_commands_ignored', 0) + 1)
        for j, e in zip(joints, effort):
            self.feed_forward[int(j)] = float(e)
        return ''

    def at_state(self, now_ns, positions, velocities, idx):
        """
        Decide at one measured state of the goal's joints (``idx`` their set indices).

        Returns an :class:`AtState`: the desired state to command (with the streamed
        feed-forward), and the :class:`End` once the goal ends (a success commands its last
        desired state; any other end commands nothing here: its joints hold). None where
        none of its joints is measured.
        """
        if np.isnan(positions).all():
            return None
        desired = self.execution.step(now_ns, positions, velocities)
        outcome = self.execution.outcome
        end = None if outcome is None else finished(outcome)
        if end is not None and end.hold:
            return AtState(None, end)
        return AtState((desired[0], desired[1], desired[2], self.efforts(idx, desired[3])),
                       end)

    def columns(self, joint_index):
        """Return the set indices of the goal's joints (made once: a goal keeps its set)."""
        if self._columns is None:
            self._columns = np.array([joint_index[j] for j in self.group.joints], np.intp)
        return self._columns

    def efforts(self, idx, planned):
        """Return the efforts to send: the points' (if any) plus the streamed feed-forward."""
        ff = self.feed_forward
        if planned is None and not ff:
            return None
        out = np.zeros(len(idx)) if planned is None else planned.copy()
        for k, i in enumerate(idx):
            out[k] += ff.get(i, 0.0)
        return out


def _past(error, bounds):
    """Return whether an ``|error|`` exceeds its bound (NaN: not measured, not judged)."""
    return any(abs(e) > b for e, b in zip(error.tolist(), bounds))
