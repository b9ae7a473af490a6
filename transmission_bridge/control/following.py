"""
A goal being followed, without ROS: at each measured state, the desired state or the end.

:meth:`Execution.step` returns the desired state to command, or sets the end:
PATH_TOLERANCE_VIOLATED while the trajectory runs, SUCCESSFUL once past the last point with
every joint within its goal tolerances (position; velocity within
``stopped_velocity_tolerance``), GOAL_TOLERANCE_VIOLATED once ``goal_time`` has passed after
the last point without that. Errors are desired - actual (JTC's). Times are seconds from the
trajectory's start.
"""

import numpy as np

from .results import GOAL_TOLERANCE_VIOLATED, Outcome, PATH_TOLERANCE_VIOLATED, SUCCESSFUL
from .tolerances import beyond


class Execution:
    """
    One goal being followed: :meth:`step` at each measured state (module docstring).

    :attr:`last` holds the last step's (t, desired (p, v, a, e), actual (p, v), error (p, v)),
    for feedback and ``controller_state``.
    """

    def __init__(self, plan):
        self.plan = plan
        self.last = None
        self.outcome = None
        path = plan.tolerances.path
        # |error| past these (inf: no tolerance) is a violation; Python floats: a goal has a
        # few joints, and a test per joint in Python beats three array calls per state.
        self._path = np.where(path > 0, path, np.inf).tolist()

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
        self.last = (t, desired, (q, qd), error)
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


def _past(error, bounds):
    """Return whether an ``|error|`` exceeds its bound (NaN: not measured, not judged)."""
    return any(abs(e) > b for e, b in zip(error.tolist(), bounds))
