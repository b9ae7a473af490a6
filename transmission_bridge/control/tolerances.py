"""
A goal's tolerances, without ROS: joint_trajectory_controller's defaults and overrides.

Defaults come from the ``constraints`` parameters, each overridden by the goal's: a value
> 0 replaces the default, 0 keeps it, -1 removes it; any other negative value refuses the
goal (:func:`tolerances`). 0 is "not checked" everywhere, as in JTC; a ``goal_time`` of 0
waits without bound. :func:`beyond` judges errors (desired - actual) against a table.
"""

import dataclasses
import math

import numpy as np

from .results import INVALID_GOAL, INVALID_JOINTS, Refused

_INTERFACES = ('position', 'velocity', 'acceleration')


@dataclasses.dataclass
class Tolerances:
    """A goal's tolerances, per joint of the goal's group (0: not checked)."""

    path: np.ndarray            # (3, n): position, velocity, acceleration
    goal: np.ndarray            # (3, n)
    goal_time: float            # s after the last point; 0: no bound


def tolerances(joint_names, trajectory_tol, goal_tol, stopped_velocity, goal_time,
               path_given=(), goal_given=(), goal_time_given=0.0):
    """
    Return the :class:`Tolerances` of a goal on ``joint_names``.

    ``trajectory_tol`` and ``goal_tol``: the ``constraints.<joint>.trajectory`` and
    ``.goal`` defaults, per joint; ``stopped_velocity`` and ``goal_time`` the
    ``constraints`` ones. ``path_given`` and ``goal_given``: the goal's JointTolerance
    entries as (name, position, velocity, acceleration); ``goal_time_given`` its
    ``goal_time_tolerance``, s. Raises :class:`Refused` for a joint not in the group or a
    negative value other than -1.
    """
    n = len(joint_names)
    index = {name: i for i, name in enumerate(joint_names)}
    path = np.zeros((3, n))
    path[0] = trajectory_tol
    goal = np.zeros((3, n))
    goal[0] = goal_tol
    goal[1] = stopped_velocity
    for label, table, given in (('path_tolerance', path, path_given),
                                ('goal_tolerance', goal, goal_given)):
        for name, *values in given:
            if name not in index:
                raise Refused(INVALID_JOINTS, f'{label}: joint {name!r} is not in this goal '
                              f'(joints: {", ".join(joint_names)})')
            for k, value in enumerate(values):
                if not math.isfinite(value) or (value < 0 and value != -1):
                    raise Refused(INVALID_GOAL, f'{label} of joint {name!r}: {_INTERFACES[k]} '
                                  f'{value!r} must be > 0, 0 (the default) or -1 (none)')
                if value > 0:
                    table[k, index[name]] = value
                elif value == -1:
                    table[k, index[name]] = 0.0
    if not math.isfinite(goal_time_given) or goal_time_given < 0:
        raise Refused(INVALID_GOAL, f'goal_time_tolerance {goal_time_given!r} s must be >= 0')
    return Tolerances(path, goal, goal_time_given if goal_time_given > 0 else goal_time)


def beyond(names, error, table, label, actual_velocity=None):
    """Return the first tolerance ``error`` exceeds, as a sentence ('' if none)."""
    for k in range(2):
        values = error[k] if actual_velocity is None or k == 0 else actual_velocity
        limit = table[k]
        over = (limit > 0) & (np.abs(values) > limit)     # NaN (not measured): not judged
        if over.any():
            j = int(np.flatnonzero(over)[0])
            what = ('velocity' if k else 'position') + (' error' if actual_velocity is None
                                                        or k == 0 else '')
            return (f'joint {names[j]!r}: {what} {values[j]:.6g} beyond its {label} tolerance '
                    f'{limit[j]:g}')
    return ''
