"""
A goal checked before anything moves, without ROS: its points, and its whole path.

The semantics are joint_trajectory_controller's (ros2_controllers, Jazzy), read through the
bridge's transmissions (:func:`plan_goal`). Refused, with the result code
(:mod:`.results`) and a reason naming what is wrong: unknown joints (INVALID_JOINTS),
partial goals unless allowed, sizes that do not match, non-finite values,
``time_from_start`` not strictly increasing, a last velocity not 0 (INVALID_GOAL), a start
time whose whole trajectory is already past (OLD_HEADER_TIMESTAMP); then the whole
interpolated path (:mod:`.spline`: the first segment runs from the measured state at the
goal's start, position, velocity too for cubic and quintic, acceleration 0; efforts, where
the points carry them, interpolated linearly), at every point, at each joint's extremes and
every :data:`CHECK_STEP` seconds, against the joints' position, velocity and effort limits
and, through the transmissions at each pose, the motors' position, velocity and effort
limits (:func:`check_path`: INVALID_GOAL naming the joint or motor, the time along the
trajectory and the limit). A joint or motor that starts beyond a position limit may move
back within it: the first segment is allowed as far out as the start. Tolerances:
:mod:`.tolerances`; following: :mod:`.following`.
"""

import dataclasses
import math

import numpy as np

from . import goal_loops
from .results import INVALID_GOAL, INVALID_JOINTS, OLD_HEADER_TIMESTAMP, Refused, Unmeasured
from .spline import Spline
from .tolerances import Tolerances, tolerances
from ..transmissions import ConfigError, effort_law

#: The path is checked against the limits at least this often, s (and at every point and at
#: every joint's extremes, where the joint limits are exact).
CHECK_STEP = 0.002
#: At most this many samples per checked path (a longer one is checked more coarsely).
MAX_CHECK_SAMPLES = 200_000


@dataclasses.dataclass
class Plan:
    """A goal checked and ready to follow (what :func:`plan_goal` returns)."""

    joint_names: tuple          # the group's joints, group order
    joint_idx: np.ndarray       # their indices in the transmission set
    spline: Spline
    efforts: object             # Spline of the efforts (linear), or None
    tolerances: Tolerances      # (:func:`.tolerances.tolerances`)
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
    ``tol``: the goal's :class:`~.tolerances.Tolerances`. ``limits``: check the
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
        raise Unmeasured(INVALID_GOAL, f'joints {unknown_start} have no measured position '
                         'to start from (their actuators have not reported, or are stale)')
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
    it, and the motors' gear losses, friction and rotors before an efficiency).
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
    linkage = not tset.constant_map
    try:
        motor_p = tset.joint_to_actuator('position', full_p)[:, act_idx]
        all_v = tset.joint_to_actuator('velocity', full_v, positions=full_p if linkage
                                       else None)
        motor_v = all_v[:, act_idx]
        sides = [('velocity', v, motor_v)]
        if plan.efforts is not None:
            e = plan.efforts.sample(t)[0]
            full_e = np.full_like(full_p, np.nan)
            full_e[:, joint_idx] = e
            full_a = np.zeros_like(full_p)
            full_a[:, joint_idx] = spline.sample(t)[2]
            motors = effort_law.commanded_efforts(tset, full_e, full_v, all_v, full_p, full_a)
            sides.append(('effort', e + tset.damping[joint_idx] * v, motors[:, act_idx]))
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
                losses = (" (its gear stage's losses included)" if kind == 'effort'
                          and space == 'motor' and not tset.losses.lossless else '')
                raise Refused(INVALID_GOAL, f'{space} {names[k]!r} reaches {kind} '
                              f'{values[s, k]:.6g} at t = {t[s]:.3f} s, beyond its limit '
                              f'{limit[k]:g}{losses}')


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


def warm_check(tset):
    """
    Check one small goal now: the first goal's check is not paid while states stream in.

    (Its first call loads and compiles what numpy's polynomials and the maps use: some 25 ms,
    during which a 1 kHz stream would wait, and the input budget drop some.) The compiled
    step of :mod:`.goal_loops` is loaded too (built first, once, where it is missing).
    """
    goal_loops.kernels()
    joints = tuple(tset.joint_names)
    q = tset.default_positions
    zeros = np.zeros(len(joints))
    try:
        plan_goal(tset, joints, list(joints), [(1.0, q, zeros, zeros, [])], (q, zeros), 0, 0,
                  tolerances(joints, zeros, zeros, 0.0, 0.0))
    except (Refused, ConfigError):
        pass                            # a robot whose default pose is refused: still warm
