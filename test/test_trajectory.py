"""
Trajectory execution without ROS (the control room): splines, refusals, tolerances.

The splines are checked against polynomials solved here from their boundary conditions
(a linear system, not the closed forms the module uses); the limit checks against values
mapped here through the transmissions by hand (a differential's motor runs at the sum of
its joints' speeds over its reduction).
"""

import math

import numpy as np
import pytest

from transmission_bridge.control import following, results, spline
from transmission_bridge.control.goal import plan_goal
from transmission_bridge.control.tolerances import tolerances
from transmission_bridge.transmissions import load_transmissions

RNG_SEED = 20261126
EXACT = 1e-9          # polynomial identities, evaluated in double precision
CONFIG = 'config/example_robot_transmissions.yaml'
CLOSED_LOOP = 'config/closed_loop_ankle_transmissions.yaml'
WRIST = ('wrist_pitch', 'wrist_roll')


def reference_segment(T_, start, end, degree):
    """Coefficients (low first) of the degree-``degree`` polynomial meeting both ends."""
    rows, rhs = [], []
    for t, values in ((0.0, start), (T_, end)):
        for d in range({1: 1, 3: 2, 5: 3}[degree]):
            rows.append([math.factorial(k) / math.factorial(k - d) * t ** (k - d) if k >= d
                         else 0.0 for k in range(degree + 1)])
            rhs.append(values[d])
    if degree == 1:
        rows = [[1.0, 0.0], [1.0, T_]]
        rhs = [start[0], end[0]]
    return np.linalg.solve(np.array(rows), np.array(rhs))


@pytest.mark.parametrize('degree', [1, 3, 5])
def test_segments_are_the_polynomials_meeting_both_ends(degree):
    rng = np.random.default_rng(RNG_SEED + degree)
    for _ in range(20):
        T_ = rng.uniform(0.05, 3.0)
        start, end = rng.normal(size=3), rng.normal(size=3)
        got = spline.segment_coefficients(
            T_, tuple(np.array([x]) for x in start),
            tuple(np.array([x]) if degree >= d else None for d, x in zip((1, 3, 5), end)))
        want = reference_segment(T_, start, end, degree)
        assert np.allclose(got[:degree + 1, 0], want, rtol=EXACT, atol=EXACT)
        assert np.all(got[degree + 1:, 0] == 0)


def test_one_sample_at_a_time_is_the_batch_sample():
    # ``at`` (a goal's per-state sample: powers of s times the coefficients) against
    # ``sample`` (Horner, batch), inside segments, at knots, before and after.
    rng = np.random.default_rng(RNG_SEED)
    times = np.cumsum(np.r_[0.0, rng.uniform(0.2, 1.5, 4)])
    s = spline.Spline(times, rng.normal(size=(5, 3)), rng.normal(size=(5, 3)),
                      rng.normal(size=(5, 3)))
    for t in np.r_[rng.uniform(-0.5, times[-1] + 0.5, 200), times]:
        one = s.at(float(t))
        batch = s.sample([t])
        for k in range(3):
            np.testing.assert_allclose(one[k], batch[k][0], rtol=EXACT, atol=EXACT)


def _points(times, positions, velocities=(), accelerations=(), efforts=()):
    n = len(times)
    pick = (lambda rows, k: list(rows[k]) if len(rows) else [])
    return [(times[k], list(positions[k]), pick(velocities, k), pick(accelerations, k),
             pick(efforts, k)) for k in range(n)]


def _tol(group, path=0.0, goal=0.0, stopped=0.01, goal_time=0.0):
    return tolerances(group, [path] * len(group), [goal] * len(group), stopped, goal_time)


@pytest.fixture(scope='module')
def arm():
    return load_transmissions(CONFIG)


def test_plan_starts_at_the_measured_state_and_passes_every_point(arm):
    rng = np.random.default_rng(RNG_SEED)
    q0, v0 = np.array([0.1, -0.2]), np.array([0.05, 0.0])
    times = [0.5, 1.2, 2.0]
    pos = rng.uniform(-0.5, 0.5, size=(3, 2))
    vel = np.vstack([rng.uniform(-0.3, 0.3, size=(2, 2)), [[0.0, 0.0]]])
    acc = rng.uniform(-0.3, 0.3, size=(3, 2))
    plan = plan_goal(arm, WRIST, list(WRIST), _points(times, pos, vel, acc),
                     (q0, v0), 10**9, 0, _tol(WRIST))
    assert plan.spline.kind == 'quintic'
    p, v, a, _ = plan.desired(0.0)
    assert np.allclose(p, q0, atol=EXACT) and np.allclose(v, v0, atol=EXACT)
    for k, t in enumerate(times):
        p, v, a, _ = plan.desired(t)
        assert np.allclose(p, pos[k], atol=EXACT)
        assert np.allclose(v, vel[k], atol=EXACT)
        assert np.allclose(a, acc[k], atol=EXACT)
    # between points: the independent polynomial of that segment
    knots = [0.0] + times
    ends = [(q0, v0, np.zeros(2))] + list(zip(pos, vel, acc))
    for k in range(3):
        T_ = knots[k + 1] - knots[k]
        s = 0.37 * T_
        for j in range(2):
            c = reference_segment(T_, [ends[k][i][j] for i in range(3)],
                                  [ends[k + 1][i][j] for i in range(3)], 5)
            want = sum(c[i] * s ** i for i in range(6))
            assert abs(plan.desired(knots[k] + s)[0][j] - want) < EXACT
    # after the end: the last point held
    p, v, _, _ = plan.desired(5.0)
    assert np.allclose(p, pos[-1]) and np.allclose(v, 0.0)


def test_linear_when_points_carry_positions_only(arm):
    plan = plan_goal(arm, WRIST, list(WRIST), _points([1.0, 3.0], [[1.0, 0.0], [0.0, 1.0]]),
                     ([0.0, 0.0], [0.7, 0.7]), 10**9, 0, _tol(WRIST))
    assert plan.spline.kind == 'linear'
    assert np.allclose(plan.desired(0.5)[0], [0.5, 0.0])
    assert np.allclose(plan.desired(2.0)[0], [0.5, 0.5])
    assert np.allclose(plan.desired(2.0)[1], [-0.5, 0.5])


def test_partial_goal_holds_the_other_joints(arm):
    with pytest.raises(results.Refused) as refused:
        plan_goal(arm, WRIST, ['wrist_pitch'], _points([1.0], [[0.5]]),
                  ([0.0, 0.3], [0.0, 0.0]), 0, 0, _tol(WRIST))
    assert refused.value.code == results.INVALID_JOINTS and 'wrist_roll' in str(refused.value)
    plan = plan_goal(arm, WRIST, ['wrist_pitch'], _points([1.0], [[0.5]]),
                     ([0.0, 0.3], [0.0, 0.0]), 0, 0, _tol(WRIST), allow_partial=True)
    assert plan.partial == ('wrist_roll',)
    assert np.allclose(plan.desired(0.5)[0], [0.25, 0.3])


@pytest.mark.parametrize('names, points, code, words', [
    (['wrist_pitch', 'elbow'], [(1.0, [0, 0], [], [], [])], results.INVALID_JOINTS,
     "['elbow'] are not in this controller"),
    (['wrist_pitch', 'wristroll'], [(1.0, [0, 0], [], [], [])], results.INVALID_JOINTS,
     "unknown joints ['wristroll']"),
    (list(WRIST), [], results.INVALID_GOAL, 'no points'),
    (list(WRIST), [(1.0, [0, 0], [], [], []), (1.0, [0, 0], [], [], [])], results.INVALID_GOAL,
     'points[1].time_from_start 1.0 s is not after'),
    (list(WRIST), [(1.0, [0, 0, 0], [], [], [])], results.INVALID_GOAL,
     'points[0].positions has 3 values for 2 joints'),
    (list(WRIST), [(1.0, [0, math.nan], [], [], [])], results.INVALID_GOAL,
     "points[0].positions of joint 'wrist_roll' is nan"),
    (list(WRIST), [(1.0, [0, 0], [0.1, 0.0], [], [])], results.INVALID_GOAL,
     "velocity of joint 'wrist_pitch' is 0.1, not 0"),
    (list(WRIST), [(1.0, [], [0.0, 0.0], [], [])], results.INVALID_GOAL, 'carry positions'),
    (list(WRIST), [(1.0, [2.5, 0], [], [], [])], results.INVALID_GOAL,
     "joint 'wrist_pitch' reaches position 2.00"),     # first past it: 2.5 t, t = 0.802 s
    (list(WRIST), [(1.0, [2.5, 0], [], [], [])], results.INVALID_GOAL,
     't = 0.802 s, beyond its limits [-2, 2]'),
])
def test_refusals_name_what_is_wrong(arm, names, points, code, words):
    with pytest.raises(results.Refused) as refused:
        plan_goal(arm, WRIST, names, points, ([0.0, 0.0], [0.0, 0.0]), 10**9, 0, _tol(WRIST))
    assert refused.value.code == code
    assert words in str(refused.value)


def test_old_header_timestamp(arm):
    with pytest.raises(results.Refused) as refused:
        plan_goal(arm, WRIST, list(WRIST), _points([1.0], [[0.1, 0.1]]),
                  ([0.0, 0.0], [0.0, 0.0]), now_ns=10 * 10**9, start_ns=5 * 10**9,
                  tol=_tol(WRIST))
    assert refused.value.code == results.OLD_HEADER_TIMESTAMP


def test_a_differential_motor_limit_is_checked_at_the_sum_of_its_joint_speeds(arm):
    # wrist motors: reduction +-50, joints 1: motor speed = 50 (pitch +- roll) (the
    # differential's law); with both joints at 0.04 rad/s one motor turns 50 * 0.08 = 4 rad/s
    # and the other 0.
    tset = arm.replace_fields(actuators={'wrist_left_motor': {'velocity_limit': 3.0}})
    speed = 0.04
    points = _points([1.0], [[speed, speed]])        # linear: constant speed for 1 s
    with pytest.raises(results.Refused) as refused:
        plan_goal(tset, WRIST, list(WRIST), points, ([0.0, 0.0], [0.0, 0.0]), 0, 0,
                  _tol(WRIST))
    text = str(refused.value)
    assert "motor 'wrist_left_motor' reaches velocity" in text and 'limit 3' in text
    mapped = tset.joint_to_actuator('velocity', np.r_[np.zeros(3), speed, speed, 0, 0])
    assert abs(abs(mapped[tset.actuator_index['wrist_left_motor']]) - 4.0) < EXACT
    # the other direction: the same joint speeds in opposite senses spare the left motor
    plan_goal(tset, WRIST, list(WRIST), _points([1.0], [[speed, -speed]]),
              ([0.0, 0.0], [0.0, 0.0]), 0, 0, _tol(WRIST))


def test_efforts_are_checked_through_the_transmission(arm):
    tau = np.r_[np.zeros(3), 10.0, -4.0, 0, 0]
    motor = np.abs(arm.joint_to_actuator('effort', tau))[arm.actuator_index['wrist_right_motor']]
    assert motor > 0
    tset = arm.replace_fields(actuators={'wrist_right_motor': {'effort_limit': 0.9 * motor}})
    points = _points([1.0], [[0.0, 0.0]], efforts=[[10.0, -4.0]])
    with pytest.raises(results.Refused) as refused:
        plan_goal(tset, WRIST, list(WRIST), points, ([0.0, 0.0], [0.0, 0.0]), 0, 0,
                  _tol(WRIST))
    assert "motor 'wrist_right_motor' reaches effort" in str(refused.value)


def test_a_start_beyond_a_limit_may_move_back_in(arm):
    plan = plan_goal(arm, WRIST, list(WRIST), _points([1.0], [[1.9, 0.0]]),
                     ([2.05, 0.0], [0.0, 0.0]), 0, 0, _tol(WRIST))
    assert plan.desired(0.0)[0][0] == pytest.approx(2.05)


def test_a_linkage_motor_speed_depends_on_the_pose():
    tset = load_transmissions(CLOSED_LOOP)
    joints = tuple(tset.joint_names)
    q = np.zeros(len(joints))
    free = plan_goal(tset, joints, list(joints), _points([2.0], [q + 0.05]),
                     (q, q), 0, 0, _tol(joints))
    t = np.linspace(0, 2.0, 41)
    p, v, _ = free.spline.sample(t)
    full = np.full((len(t), tset.num_joints), np.nan)
    full[:, [tset.joint_index[j] for j in joints]] = p
    fv = full.copy()
    fv[:, [tset.joint_index[j] for j in joints]] = v
    motor = np.abs(tset.joint_to_actuator('velocity', fv, positions=full)).max(axis=0)
    k = int(np.argmax(motor))
    limit = 0.9 * motor[k]
    slow = tset.replace_fields(actuators={tset.actuator_names[k]: {'velocity_limit': limit}})
    with pytest.raises(results.Refused) as refused:
        plan_goal(slow, joints, list(joints), _points([2.0], [q + 0.05]), (q, q), 0, 0,
                  _tol(joints))
    assert f'motor {tset.actuator_names[k]!r} reaches velocity' in str(refused.value)


def test_tolerances_follow_jtc_special_values():
    group = ('a', 'b')
    tol = tolerances(group, [0.1, 0.2], [0.01, 0.02], 0.05, 1.5,
                     path_given=[('a', 0.3, 0.0, 0.0), ('b', -1, 0.0, 0.0)],
                     goal_given=[('b', 0.0, 0.5, 0.0)], goal_time_given=0.0)
    assert list(tol.path[0]) == [0.3, 0.0]          # >0 replaces, -1 removes
    assert list(tol.goal[0]) == [0.01, 0.02]        # 0 keeps the default
    assert list(tol.goal[1]) == [0.05, 0.5]
    assert tol.goal_time == 1.5
    assert tolerances(group, [0, 0], [0, 0], 0.0, 1.5, goal_time_given=0.25).goal_time == 0.25
    for bad in ([('a', -2.0, 0, 0)], [('c', 1.0, 0, 0)]):
        with pytest.raises(results.Refused):
            tolerances(group, [0, 0], [0, 0], 0.0, 0.0, path_given=bad)


def _execution(arm, path=0.0, goal=0.0, goal_time=0.0):
    plan = plan_goal(arm, WRIST, list(WRIST), _points([1.0], [[0.5, 0.0]]),
                     ([0.0, 0.0], [0.0, 0.0]), 0, 1, _tol(WRIST, path, goal, 0.01, goal_time))
    return following.Execution(plan)


def test_execution_succeeds_within_goal_tolerance(arm):
    run = _execution(arm, goal=0.01)
    run.step(int(1.1e9), [0.495, 0.0], [0.0, 0.0])
    assert run.outcome == results.Outcome(results.SUCCESSFUL, '')


def test_execution_path_violation_names_joint_and_time(arm):
    run = _execution(arm, path=0.1)
    run.step(int(0.5e9), [0.25, 0.0], [0.0, 0.0])
    assert run.outcome is None
    run.step(int(0.8e9), [0.0, 0.0], [0.0, 0.0])        # stuck at 0, desired 0.4
    assert run.outcome.code == results.PATH_TOLERANCE_VIOLATED
    assert "joint 'wrist_pitch'" in run.outcome.text and 't = 0.800 s' in run.outcome.text


def test_execution_goal_violation_after_goal_time(arm):
    run = _execution(arm, goal=0.01, goal_time=0.5)
    run.step(int(1.2e9), [0.4, 0.0], [0.0, 0.0])
    assert run.outcome is None                          # still within goal_time
    run.step(int(1.6e9), [0.4, 0.0], [0.0, 0.0])
    assert run.outcome.code == results.GOAL_TOLERANCE_VIOLATED
    assert 'goal tolerance 0.01' in run.outcome.text


def test_execution_waits_while_moving_at_the_end(arm):
    run = _execution(arm, goal=0.01)
    run.step(int(1.1e9), [0.5, 0.0], [0.2, 0.0])        # there, not stopped
    assert run.outcome is None
    run.step(int(1.2e9), [0.5, 0.0], [0.0, 0.0])
    assert run.outcome.code == results.SUCCESSFUL


def test_a_motor_position_limit_is_checked_through_the_differential(arm):
    # wrist_left_motor = 50 (pitch + roll) by the differential's law: both joints at 0.3 rad
    # put it at 30 rad, within each joint's own limits.
    tset = arm.replace_fields(actuators={'wrist_left_motor': {'upper_limit': 25.0}})
    with pytest.raises(results.Refused) as refused:
        plan_goal(tset, WRIST, list(WRIST), _points([1.0], [[0.3, 0.3]]),
                  ([0.0, 0.0], [0.0, 0.0]), 0, 0, _tol(WRIST))
    assert "motor 'wrist_left_motor' reaches position 25" in str(refused.value)
    assert 'beyond its limits [-inf, 25]' in str(refused.value)
    plan_goal(tset, WRIST, list(WRIST), _points([1.0], [[0.3, -0.3]]),
              ([0.0, 0.0], [0.0, 0.0]), 0, 0, _tol(WRIST))     # its sum 0: fine
    # from 30 rad (beyond) back to 20 rad: the first segment may move back within
    plan = plan_goal(tset, WRIST, list(WRIST), _points([1.0], [[0.2, 0.2]]),
                     ([0.3, 0.3], [0.0, 0.0]), 0, 0, _tol(WRIST))
    assert plan.desired(0.0)[0][0] == pytest.approx(0.3)
