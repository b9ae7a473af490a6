"""
Absolute encoders behind a reduction: readings modulo a period, made whole again.

An actuator with ``encoder: {period: P}`` reports its position modulo ``P`` (a single-turn
encoder: ``P = 2 pi`` rad, or 4096 counts; a multi-turn counter that overflows). Its whole
position is ``reading + turns P``, ``turns`` an integer the stream has to find:

* **while running** (:func:`unwrap`): a step of more than half a period between two
  consecutive readings is a wrap, so ``turns`` changes by the whole periods of the step
  (``round(step / P)``); a step of exactly half a period is not a wrap. A reading that is
  not finite is skipped: the next one is compared with the last finite reading;
* **at the first reading** (:func:`candidate_turns`): the whole periods to add are those
  that put every joint of the transmission inside its limits. One choice: taken. None, or
  more than one (a 6:1 gear behind a single-turn encoder sees the motor turn six times over
  the joint's range: a joint range wider than one period at the joint is ambiguous): the
  joints are not published until an operator gives the turns, or the joints move where only
  one choice fits.

Order of the maps (NOTATION.md): reading -> ``+ turns P`` (the actuator's whole position)
-> the transmission -> ``+ offset`` (calibration).

>>> import numpy as np
>>> last, turns = np.array([6.2]), np.array([0.0])
>>> unwrap(np.array([0.1]), last, turns, np.array([2 * np.pi]))     # wrapped forwards
array([6.38318531])
>>> turns, last
(array([1.]), array([0.1]))
"""

import itertools
import math

import numpy as np

from .errors import ConfigError

MAX_CANDIDATES = 100_000    # combinations of turns tried at a first reading, at the most
LIMIT_TOL = 1e-9            # rad or m: a joint this close to its limit is within it


def unwrap(readings, last, turns, periods):
    """
    Return the whole positions of ``readings``; ``last`` and ``turns`` are updated in place.

    ``readings``, ``last`` (the previous finite readings, NaN: none yet), ``turns`` (whole
    numbers, as floats: a count beyond 2**53 loses units, none overflows) and ``periods``:
    one per encoder. A reading that is not finite is given back as it is and leaves its
    ``last`` and ``turns`` as they were. ``reading + turns * period``, so a stream and a
    batch of it give the same bits.
    """
    readings = np.asarray(readings, dtype=float)
    with np.errstate(invalid='ignore', over='ignore'):
        step = readings - last
        known = np.isfinite(readings)
        wrapped = known & np.isfinite(step) & (np.abs(step) > 0.5 * periods)
        if wrapped.any():
            turns[wrapped] -= np.rint(step[wrapped] / periods[wrapped])
        last[known] = readings[known]
        return readings + turns * periods


def candidate_turns(transmission, positions, encoders, periods, lower, upper, reach=None):
    """
    Return the turns to add to the ``encoders`` that put every joint within its limits.

    :func:`search_turns`'s list, without its margin.
    """
    return search_turns(transmission, positions, encoders, periods, lower, upper, reach)[0]


def search_turns(transmission, positions, encoders, periods, lower, upper, reach=None,
                 gain=None):
    """
    Return ``(found, margin)``: the turns that fit, and how far the actuators may move.

    ``transmission``: the map (``actuator_to_joint``/``joint_to_actuator``, joint offsets
    included) of one transmission; ``positions``: its actuators' positions (the encoders'
    as read so far, made continuous); ``encoders``: the indices of those whose turns are
    unknown, with their ``periods``; ``lower``, ``upper``: the joint limits; ``reach``:
    :func:`actuator_reach` of the same (computed here when not given: a stream of readings
    passes it once). ``found``: a list of integer tuples (one per encoder), empty if none
    fits. Raises ConfigError when a joint has no limit on a side (any number of turns would
    fit).

    ``margin`` (with ``gain``, :func:`joint_gain` of a linear map; else 0): while no actuator
    moves farther than this from ``positions`` (same unit), ``found`` stays the answer. No
    candidate's joint comes closer to a limit than ``gain`` times the motion allows, and a
    motion under half a period brings no new candidate into reach. Half of that, for the
    rounding of a different position. A stream searched again only beyond it gets every
    answer a search at each reading would give.
    """
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    if reach is None:
        reach = actuator_reach(transmission, lower, upper)
    positions = np.asarray(positions, dtype=float)
    low, high = reach
    ranges = []
    for k, period in zip(encoders, periods):
        span = (low[k] - positions[k]) / period, (high[k] - positions[k]) / period
        if not all(map(math.isfinite, span)) or max(map(abs, span)) > 2.0 ** 52:
            return [], 0.0      # a reading no whole number of turns brings into range
        first, last = math.ceil(span[0] - 1e-9), math.floor(span[1] + 1e-9)
        ranges.append(range(first - 1, last + 2))       # a margin: the grid is not exact
    if math.prod(len(r) for r in ranges) > MAX_CANDIDATES:
        raise ConfigError('too many possible turns to try: give the turns (encoder_turns)')
    # Every candidate at once: one batch through the map (rows are independent).
    combos = np.array(list(itertools.product(*ranges)), dtype=float).reshape(-1, len(ranges))
    trials = np.repeat(positions[None, :], len(combos), axis=0)
    trials[:, list(encoders)] += combos * np.asarray(periods)
    joints = transmission.actuator_to_joint('position', trials)
    fits = (np.isfinite(joints).all(axis=-1) & (joints >= lower - LIMIT_TOL).all(axis=-1)
            & (joints <= upper + LIMIT_TOL).all(axis=-1))
    found = [tuple(int(t) for t in turns) for turns in combos[fits]]
    if gain is None:
        return found, 0.0
    to_limit = np.minimum(np.abs(joints - (lower - LIMIT_TOL)),
                          np.abs(upper + LIMIT_TOL - joints))
    with np.errstate(divide='ignore', invalid='ignore'):
        room = np.where(gain > 0, to_limit / gain, np.inf)
    margin = min(float(room.min()), 0.5 * float(np.min(periods)))
    return found, 0.5 * margin if math.isfinite(margin) else 0.0


def joint_gain(transmission, num_actuators):
    """
    Return how fast each joint follows the actuators at most, ``sum_k |dq_j / dx_k|`` (nJ,).

    For a linear map (its position map is affine: the differences from the zero position
    along each actuator); None for a linkage, whose rate changes with the pose.
    """
    if not transmission_is_linear(transmission):
        return None
    steps = np.vstack([np.zeros(num_actuators), np.eye(num_actuators)])
    joints = transmission.actuator_to_joint('position', steps)
    return np.abs(joints[1:] - joints[0]).sum(axis=0)


def actuator_reach(transmission, lower, upper):
    """
    Return ``(low, high)``: each actuator's least and greatest position within the joint limits.

    Sampled at the limits' box's corners for a linear map, on a grid of it for a linkage
    (whose actuators are not monotonic in every joint); NaN for an actuator no sample
    reaches. Raises ConfigError when a joint has no limit on a side.
    """
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    if not (np.isfinite(lower).all() and np.isfinite(upper).all()):
        raise ConfigError('a joint without both position limits cannot tell the turns '
                          'apart: give the turns (encoder_turns)')
    axes = [np.linspace(lo, hi, 2 if transmission_is_linear(transmission) else 9)
            for lo, hi in zip(lower, upper)]
    samples = np.array(list(itertools.product(*axes)))
    reach = transmission.joint_to_actuator('position', samples)
    finite = np.isfinite(reach)
    low = np.where(finite.any(axis=0), np.where(finite, reach, np.inf).min(axis=0), np.nan)
    high = np.where(finite.any(axis=0), np.where(finite, reach, -np.inf).max(axis=0), np.nan)
    return low, high


def transmission_is_linear(transmission):
    """Return True unless ``transmission`` is a linkage (whose maps are not matrices)."""
    return not hasattr(transmission, 'geometry')
