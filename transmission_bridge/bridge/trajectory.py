"""
Trajectory execution without ROS: a goal checked, interpolated, followed and judged.

The semantics are joint_trajectory_controller's (ros2_controllers, Jazzy), read through the
bridge's transmissions:

* **Interpolation** (:class:`Spline`). Each segment is the one polynomial matching both its
  ends: linear when the points carry positions only, cubic with velocities, quintic with
  accelerations too. The first segment runs from the measured state at the goal's start
  (position; velocity too for cubic and quintic; acceleration 0) to the first point; after
  the last point the trajectory holds it. Efforts, where the points carry them, are
  interpolated linearly (the first segment holds the first point's).
* **Checks before anything moves** (:func:`plan_goal`). Refused, with the result code and a
  reason naming what is wrong: unknown joints (INVALID_JOINTS), partial goals unless
  allowed, sizes that do not match, non-finite values, ``time_from_start`` not strictly
  increasing, a last velocity not 0 (INVALID_GOAL), a start time whose whole trajectory is
  already past (OLD_HEADER_TIMESTAMP); then the whole interpolated path, at every point,
  at each joint's extremes and every :data:`CHECK_STEP` seconds, against the joints'
  position, velocity and effort limits and, through the transmissions at each pose, the
  motors' position, velocity and effort limits (INVALID_GOAL naming the joint or motor, the
  time along the trajectory and the limit). A joint or motor that starts beyond a position
  limit may move back within it: the first segment is allowed as far out as the start.
* **Tolerances** (:class:`Tolerances`): defaults from the ``constraints`` parameters, each
  overridden by the goal's: a value > 0 replaces the default, 0 keeps it, -1 removes it; any
  other negative value refuses the goal. 0 is "not checked" everywhere, as in JTC; a
  ``goal_time`` of 0 waits without bound.
* **Following** (:class:`Execution`): at each measured state it returns the desired state
  to command, or the end: PATH_TOLERANCE_VIOLATED while the trajectory runs, SUCCESSFUL once
  past the last point with every joint within its goal tolerances (position; velocity
  within ``stopped_velocity_tolerance``), GOAL_TOLERANCE_VIOLATED once ``goal_time`` has
  passed after the last point without that.

Errors are desired - actual (JTC's). Times are seconds from the trajectory's start.
"""

import bisect
import dataclasses
import math
import typing

import numpy as np

from ..transmissions import ConfigError

SUCCESSFUL = 0
INVALID_GOAL = -1
INVALID_JOINTS = -2
OLD_HEADER_TIMESTAMP = -3
PATH_TOLERANCE_VIOLATED = -4
GOAL_TOLERANCE_VIOLATED = -5
CODE_NAMES = {SUCCESSFUL: 'SUCCESSFUL', INVALID_GOAL: 'INVALID_GOAL',
              INVALID_JOINTS: 'INVALID_JOINTS', OLD_HEADER_TIMESTAMP: 'OLD_HEADER_TIMESTAMP',
              PATH_TOLERANCE_VIOLATED: 'PATH_TOLERANCE_VIOLATED',
              GOAL_TOLERANCE_VIOLATED: 'GOAL_TOLERANCE_VIOLATED'}

#: The path is checked against the limits at least this often, s (and at every point and at
#: every joint's extremes, where the joint limits are exact).
CHECK_STEP = 0.002
#: At most this many samples per checked path (a longer one is checked more coarsely).
MAX_CHECK_SAMPLES = 200_000
_INTERFACES = ('position', 'velocity', 'acceleration')


class Refused(Exception):
    """A goal that ends before anything moves: its result ``code`` and the reason."""

    def __init__(self, code, reason):
        super().__init__(reason)
        self.code = code


class Outcome(typing.NamedTuple):
    """How a goal ended: a result code and the ``error_string``."""

    code: int
    text: str


# --- interpolation -------------------------------------------------------------------------

def segment_coefficients(duration, start, end):
    """
    Return the (6, n) coefficients c_k of p(s) = sum c_k s^k, 0 <= s <= ``duration``.

    ``start`` and ``end`` are (position, velocity, acceleration) rows, each (n,) or None;
    with positions only the segment is linear, with velocities cubic, with accelerations
    quintic (the unique polynomial of that degree matching both ends).
    """
    p0, v0, a0 = start
    p1, v1, a1 = end
    T = float(duration)
    c = np.zeros((6, len(p0)))
    c[0] = p0
    h = np.asarray(p1) - np.asarray(p0)
    if v1 is None:
        c[1] = h / T
        return c
    c[1] = v0
    if a1 is None:
        c[2] = (3 * h - (2 * v0 + v1) * T) / T ** 2
        c[3] = (-2 * h + (v0 + v1) * T) / T ** 3
        return c
    c[2] = a0 / 2
    c[3] = (20 * h - (8 * v1 + 12 * v0) * T - (3 * a0 - a1) * T ** 2) / (2 * T ** 3)
    c[4] = (-30 * h + (14 * v1 + 16 * v0) * T + (3 * a0 - 2 * a1) * T ** 2) / (2 * T ** 4)
    c[5] = (12 * h - 6 * (v1 + v0) * T + (a1 - a0) * T ** 2) / (2 * T ** 5)
    return c


class Spline:
    """
    Piecewise polynomials through knots at ``times`` (s, strictly increasing, from 0).

    ``positions`` (m, n); ``velocities`` and ``accelerations`` (m, n) or None: the kind of
    every segment (module docstring). :meth:`sample` gives position, velocity and
    acceleration at any times; before 0 the first knot, after the last the last knot held.
    """

    def __init__(self, times, positions, velocities=None, accelerations=None):
        self.times = np.asarray(times, dtype=float)
        self._knots = self.times.tolist()       # bisect on a list: one sample at a time
        self.positions = np.asarray(positions, dtype=float)
        m, n = self.positions.shape
        self.kind = ('linear' if velocities is None else
                     'cubic' if accelerations is None else 'quintic')
        v = np.zeros((m, n)) if velocities is None else np.asarray(velocities, dtype=float)
        a = np.zeros((m, n)) if accelerations is None else np.asarray(accelerations, float)
        self.end_velocity = v[-1] if velocities is not None else np.zeros(n)
        self.coefficients = np.empty((max(m - 1, 0), 6, n))
        for k in range(m - 1):
            self.coefficients[k] = segment_coefficients(
                self.times[k + 1] - self.times[k],
                (self.positions[k], v[k], a[k]),
                (self.positions[k + 1], None if velocities is None else v[k + 1],
                 None if accelerations is None else a[k + 1]))

    @property
    def duration(self):
        """Return the time of the last knot, s."""
        return float(self.times[-1])

    def segment(self, t):
        """Return the index of the segment holding time ``t`` (-1 before, m-1 after)."""
        return int(np.searchsorted(self.times, t, side='right')) - 1

    def sample(self, t):
        """Return (position, velocity, acceleration), each (len(t), n), at times ``t`` (s)."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        n = self.positions.shape[1]
        out = np.zeros((3, len(t), n))
        k = np.searchsorted(self.times, t, side='right') - 1
        if len(self.coefficients):          # the last knot itself: its segment's end
            k[t == self.times[-1]] = len(self.coefficients) - 1
        held = (k < 0) | (k >= len(self.coefficients))
        if held.any():
            out[0, held] = self.positions[np.where(k[held] < 0, 0, -1)]
            out[1, held & (k >= 0)] = self.end_velocity
        moving = ~held
        if moving.any():
            c = self.coefficients[k[moving]]                  # (s, 6, n)
            s = (t[moving] - self.times[k[moving]])[:, None]
            out[0, moving] = ((((c[:, 5] * s + c[:, 4]) * s + c[:, 3]) * s + c[:, 2]) * s
                              + c[:, 1]) * s + c[:, 0]
            out[1, moving] = (((5 * c[:, 5] * s + 4 * c[:, 4]) * s + 3 * c[:, 3]) * s
                              + 2 * c[:, 2]) * s + c[:, 1]
            out[2, moving] = ((20 * c[:, 5] * s + 12 * c[:, 4]) * s + 6 * c[:, 3]) * s \
                + 2 * c[:, 2]
        return out[0], out[1], out[2]

    def at(self, t):
        """Return (position, velocity, acceleration), each (n,), at one time ``t`` (s)."""
        times, coefficients = self._knots, self.coefficients
        k = bisect.bisect_right(times, t) - 1
        if len(coefficients) and t == times[-1]:
            k = len(coefficients) - 1
        if k < 0 or k >= len(coefficients):
            n = self.positions.shape[1]
            return (self.positions[0 if k < 0 else -1].copy(),
                    np.zeros(n) if k < 0 else self.end_velocity.copy(), np.zeros(n))
        c = coefficients[k]
        s = t - times[k]
        c0, c1, c2, c3, c4, c5 = c
        return (((((c5 * s + c4) * s + c3) * s + c2) * s + c1) * s + c0,
                (((5 * c5 * s + 4 * c4) * s + 3 * c3) * s + 2 * c2) * s + c1,
                ((20 * c5 * s + 12 * c4) * s + 6 * c3) * s + 2 * c2)

    def extremes(self, derivative):
        """Return the times inside segments where a joint's ``derivative``-th derivative peaks."""
        found = []
        for k, c in enumerate(self.coefficients):
            T = self.times[k + 1] - self.times[k]
            # d/ds of the (derivative)-th derivative: its coefficients, highest first.
            poly = np.polynomial.polynomial.Polynomial
            for j in range(c.shape[1]):
                roots = poly(c[:, j]).deriv(derivative + 1).roots()
                real = roots[np.abs(roots.imag) < 1e-9].real
                found.extend(self.times[k] + r for r in real if 0 < r < T)
        return np.array(found)


# --- tolerances ----------------------------------------------------------------------------

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


# --- a goal, checked -----------------------------------------------------------------------

@dataclasses.dataclass
class Plan:
    """A goal checked and ready to follow (what :func:`plan_goal` returns)."""

    joint_names: tuple          # the group's joints, group order
    joint_idx: np.ndarray       # their indices in the transmission set
    spline: Spline
    efforts: object             # Spline of the efforts (linear), or None
    tolerances: Tolerances
    start_ns: int               # when t = 0 is, ns of the node's clock
    partial: tuple = ()         # the group's joints the goal did not name (held)
    measured_start: bool = True     # the first segment runs from the measured state

    def desired(self, t):
        """Return (position, velocity, acceleration, effort or None), each (n,), at ``t`` s."""
        p, v, a = self.spline.at(t)
        e = None if self.efforts is None else self.efforts.at(t)[0]
        return p, v, a, e


def plan_goal(tset, group, goal_names, points, measured, now_ns, start_ns, tol,
              allow_partial=False, allow_nonzero_end_velocity=False, limits=True):
    """
    Check a goal on ``group`` (joint names) and return its :class:`Plan`; or raise Refused.

    ``points``: (time_from_start s, positions, velocities, accelerations, efforts) per
    point, each sequence possibly empty. ``measured``: (positions, velocities) of the
    group's joints now, NaN where unknown. ``start_ns``: the goal's header stamp (0: now).
    ``tol``: the goal's :class:`Tolerances` (:func:`tolerances`). ``limits``: check the
    path against the joint and motor limits.
    """
    group = tuple(group)
    in_group = {name: i for i, name in enumerate(group)}
    unknown = [n for n in goal_names if n not in in_group]
    if unknown:
        other = [n for n in unknown if n in tset.joint_index]
        raise Refused(INVALID_JOINTS, (
            f'joints {other} are not in this controller (joints: {", ".join(group)})' if other
            else f'unknown joints {unknown} (this controller: {", ".join(group)})'))
    if len(set(goal_names)) != len(goal_names):
        raise Refused(INVALID_JOINTS, f'joint names repeated: {list(goal_names)}')
    if not goal_names:
        raise Refused(INVALID_JOINTS, 'the trajectory names no joint')
    missing = tuple(n for n in group if n not in set(goal_names))
    if missing and not allow_partial:
        raise Refused(INVALID_JOINTS, f'joints {list(missing)} of this controller are not in '
                      'the goal, and allow_partial_joints_goal is false')
    if not points:
        raise Refused(INVALID_GOAL, 'the trajectory has no points')
    cols = [in_group[n] for n in goal_names]
    n = len(group)
    times = np.array([p[0] for p in points], dtype=float)
    if not np.isfinite(times).all() or (times < 0).any():
        raise Refused(INVALID_GOAL, 'points[*].time_from_start must be finite and >= 0')
    if (np.diff(times) <= 0).any():
        k = int(np.flatnonzero(np.diff(times) <= 0)[0]) + 1
        raise Refused(INVALID_GOAL, f'points[{k}].time_from_start {float(times[k])!r} s is not '
                      f"after points[{k - 1}]'s {float(times[k - 1])!r} s: times must strictly "
                      'increase')
    fields = []
    for f, label in enumerate(('positions', 'velocities', 'accelerations', 'effort')):
        rows = [p[1 + f] for p in points]
        lengths = {len(r) for r in rows}
        if lengths == {0}:
            fields.append(None)
            continue
        if lengths != {len(goal_names)}:
            bad = next(k for k, r in enumerate(rows) if len(r) != len(goal_names))
            raise Refused(INVALID_GOAL, f'points[{bad}].{label} has {len(rows[bad])} values for '
                          f'{len(goal_names)} joints (all points the same: none, or one each)')
        values = np.array(rows, dtype=float)
        if not np.isfinite(values).all():
            k, j = np.argwhere(~np.isfinite(values))[0]
            raise Refused(INVALID_GOAL, f'points[{k}].{label} of joint {goal_names[j]!r} is '
                          f'{float(values[k, j])!r}')
        fields.append(values)
    pos, vel, acc, eff = fields
    if pos is None:
        raise Refused(INVALID_GOAL, 'every point must carry positions (the bridge commands '
                      'positions)')
    if acc is not None and vel is None:
        raise Refused(INVALID_GOAL, 'points carry accelerations without velocities')
    if vel is not None and not allow_nonzero_end_velocity and (vel[-1] != 0).any():
        j = int(np.flatnonzero(vel[-1] != 0)[0])
        raise Refused(INVALID_GOAL, f"the last point's velocity of joint {goal_names[j]!r} is "
                      f'{float(vel[-1, j])!r}, not 0 (allow_nonzero_velocity_at_trajectory_end is '
                      'false)')
    q0, v0 = (np.asarray(x, dtype=float) for x in measured)
    unknown_start = [group[i] for i in range(n) if not math.isfinite(q0[i])]
    if unknown_start:
        raise Refused(INVALID_GOAL, f'joints {unknown_start} have no measured position to '
                      'start from (their actuators have not reported, or are stale)')
    start = start_ns if start_ns > 0 else now_ns
    if start + times[-1] * 1e9 < now_ns:
        raise Refused(OLD_HEADER_TIMESTAMP, f'the trajectory starts at {start * 1e-9:.3f} s and '
                      f'ends {times[-1]:g} s later, before now ({now_ns * 1e-9:.3f} s)')
    # Knots: the measured start, then the points; the goal's joints into group columns,
    # the group's other joints held where they are.
    first = 1 if times[0] > 0 else 0
    knot_t = np.concatenate([[0.0], times]) if first else times
    rows_p = np.repeat(q0[None], len(knot_t), axis=0)
    rows_p[first:, cols] = pos
    rows_v = rows_a = None
    if vel is not None:
        rows_v = np.zeros_like(rows_p)
        rows_v[first:, cols] = vel
        if first:                       # the goal's joints start moving as measured
            rows_v[0, cols] = np.where(np.isfinite(v0[cols]), v0[cols], 0.0)
    if acc is not None:
        rows_a = np.zeros_like(rows_p)
        rows_a[first:, cols] = acc
    spline = Spline(knot_t, rows_p, rows_v, rows_a)
    efforts = None
    if eff is not None:
        rows = np.zeros((len(times) + first, n))
        rows[first:, cols] = eff
        if first:
            rows[0] = rows[1]
        efforts = Spline(knot_t, rows)
    idx = np.array([tset.joint_index[name] for name in group], dtype=np.intp)
    plan = Plan(group, idx, spline, efforts, tol, start,
                missing, bool(first))
    if limits:
        check_path(tset, plan, q0)
    return plan


def check_path(tset, plan, start_positions):
    """
    Raise :class:`Refused` (INVALID_GOAL) where ``plan``'s path passes a joint or motor limit.

    Checked at every knot, at each joint's position and velocity extremes and every
    :data:`CHECK_STEP` s: joint positions (the first segment allowed as far out as
    ``start_positions``), joint velocities and efforts, and the motors' positions (the same
    allowance), velocities and efforts through the transmissions at each sampled pose
    (efforts only where the points carry them; damping's ``b v`` added as the bridge sends
    it).
    """
    spline = plan.spline
    end = spline.duration
    step = max(CHECK_STEP, end / MAX_CHECK_SAMPLES)
    t = np.unique(np.concatenate([np.arange(0.0, end, step), spline.times, [end],
                                  spline.extremes(0), spline.extremes(1)]))
    p, v, _ = spline.sample(t)
    joint_idx, act_idx = tset.coverage(plan.joint_names)
    limits = tset.command_limits(joint_idx, act_idx)
    first = (t <= spline.times[1]) if plan.measured_start else None
    _within(t, p, limits.lower, limits.upper, first, start_positions, 'joint',
            plan.joint_names)
    full_p = np.full((len(t), tset.num_joints), np.nan)
    full_p[:, joint_idx] = p
    full_v = np.full_like(full_p, np.nan)
    full_v[:, joint_idx] = v
    linkage = not tset.linear
    try:
        motor_p = tset.joint_to_actuator('position', full_p)[:, act_idx]
        motor_v = tset.joint_to_actuator('velocity', full_v, positions=full_p if linkage
                                         else None)[:, act_idx]
        sides = [('velocity', v, motor_v)]
        if plan.efforts is not None:
            e = plan.efforts.sample(t)[0] + tset.damping[joint_idx] * v
            full_e = np.full_like(full_p, np.nan)
            full_e[:, joint_idx] = e
            sides.append(('effort', e, tset.joint_to_actuator(
                'effort', full_e, positions=full_p if linkage else None)[:, act_idx]))
    except ConfigError as exc:
        raise Refused(INVALID_GOAL, f'the path cannot be mapped to the motors: {exc}') from None
    if linkage and np.isnan(motor_v).any():
        s = int(np.argwhere(np.isnan(motor_v))[0][0])
        raise Refused(INVALID_GOAL, f"at t = {t[s]:.3f} s a linkage's rods cannot reach the "
                      'pose, or it is singular there (a dead point)')
    if limits.limited_actuator_position:    # a motor too may move back within its travel
        _within(t, motor_p, limits.actuator_lower, limits.actuator_upper, first, motor_p[0],
                'motor', limits.actuator_names)
    for kind, joint_values, motor_values in sides:
        joint_limit, motor_limit = limits.magnitude_limits(kind)
        for values, limit, space, names in ((joint_values, joint_limit, 'joint',
                                             limits.joint_names),
                                            (motor_values, motor_limit, 'motor',
                                             limits.actuator_names)):
            over = np.abs(values) > limit
            if over.any():
                s, k = np.argwhere(over)[0]
                raise Refused(INVALID_GOAL, f'{space} {names[k]!r} reaches {kind} '
                              f'{values[s, k]:.6g} at t = {t[s]:.3f} s, beyond its limit '
                              f'{limit[k]:g}')


def _within(t, values, lower, upper, first, start, space, names):
    """
    Raise :class:`Refused` at the first sample of ``values`` (time, n) beyond [lower, upper].

    ``first``: the samples of the first segment (None: none), where a start beyond a limit
    (``start``, per column) widens it: the path may move back within.
    """
    low = np.broadcast_to(lower, values.shape).copy()
    high = np.broadcast_to(upper, values.shape).copy()
    if first is not None:
        low[first] = np.minimum(low[first], start)
        high[first] = np.maximum(high[first], start)
    bad = (values < low) | (values > high)
    if bad.any():
        s, k = np.argwhere(bad)[0]
        raise Refused(INVALID_GOAL, f'{space} {names[k]!r} reaches position '
                      f'{values[s, k]:.6g} at t = {t[s]:.3f} s, beyond its limits '
                      f'[{lower[k]:g}, {upper[k]:g}]')


# --- following -----------------------------------------------------------------------------

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
            why = _beyond(plan.joint_names, error, tol.path, 'path')
            if why:
                self.outcome = Outcome(PATH_TOLERANCE_VIOLATED, f'{why} at t = {t:.3f} s')
            return desired
        why = _beyond(plan.joint_names, error, tol.goal, 'goal', actual_velocity=qd)
        if not why:
            self.outcome = Outcome(SUCCESSFUL, '')
        elif tol.goal_time > 0 and t > end + tol.goal_time:
            self.outcome = Outcome(GOAL_TOLERANCE_VIOLATED, f'{why} {t - end:.3f} s after the '
                                   f'last point (goal_time {tol.goal_time:g} s)')
        return desired


def _beyond(names, error, table, label, actual_velocity=None):
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
