"""
A goal's compiled step per state is the reference step and map, and leaves it everything else.

:func:`goal_loops.follow`, as plain Python and as the module compiled ahead of time, against
:meth:`Execution.step` then :meth:`PreparedCommand.command` (the reference, pinned to the
commanded-effort oracle in test_prepared_command.py and test_effort_law.py): for seeded random
goals (linear, cubic and quintic segments, one to five points) on a differential, a coupling
and a simple joint with limits, at random times before, during and after the trajectory and at
every point's time, with measured states near the desired ones, far off, partly and wholly
unmeasured, and desired states beyond a limit. Where the compiled step follows, the reference
must have followed too (no end decided, a command mapped), with the same command, the same
desired and measured state; where it hands over, the reference must have ended the goal,
judged nothing (before the start), held (past the end), skipped (nothing measured) or taken
the reference map (beyond a limit). Every hand-over reason must occur.
"""

import numpy as np
import pytest
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from test_prepared_command import _ideal_set

from transmission_bridge.control import goal_loops
from transmission_bridge.control.following import Execution
from transmission_bridge.control.goal import plan_goal
from transmission_bridge.control.tolerances import tolerances
from transmission_bridge.mapping.commands import CommandMapper
from transmission_bridge.mapping.prepared import PreparedCommand

#: Relative to the largest term summed: the same polynomial and map in another order (a
#: short quintic segment's terms are large and cancel, so the sum's own size will not do).
ROUNDING = 1e-13
START_NS = 1_700_000_000_000_000_000


def _loops(kind):
    if kind == 'python':
        return goal_loops
    from transmission_bridge._shared import ahead
    module = ahead.GOAL.load()
    if module is None:
        pytest.skip('the goal loops are not compiled ahead of time here (no numba or no '
                    'build: the warm-up builds them)')
    return module


def _goal(rng, tset, names):
    """Return a random plan for ``names`` (1-5 points, linear, cubic or quintic), and n."""
    n = len(names)
    kind = rng.integers(3)
    times = np.cumsum(rng.uniform(0.05, 0.6, rng.integers(1, 6)))
    points = [(float(t), rng.uniform(-0.7, 0.7, n).tolist(),
               [] if kind == 0 else rng.uniform(-0.8, 0.8, n).tolist(),
               rng.uniform(-2.0, 2.0, n).tolist() if kind == 2 else [], [])
              for t in times]
    points[-1][2][:] = [0.0] * n if kind else []
    start = (rng.uniform(-0.5, 0.5, n), rng.uniform(-0.3, 0.3, n) if kind else np.zeros(n))
    path = np.where(rng.random(n) < 0.3, 0.0, rng.uniform(0.05, 0.3, n))
    path_v = np.where(rng.random(n) < 0.5, 0.0, rng.uniform(0.2, 1.0, n))
    tol = tolerances(names, path.tolist(), [0.0] * n, 0.01, 0.0,
                     path_given=[(j, float(a), float(b), 0.0)
                                 for j, a, b in zip(names, path, path_v)])
    # The desired path stays within the joints' limits here (plan_goal checks it): the
    # limits are met by shrinking the motors' rows' bounds below (a command beyond a limit).
    return plan_goal(tset, names, list(names), points, start, START_NS, 0, tol, limits=False)


def _measured(rng, tset, idx, desired):
    """Return every joint's measured (p, v): near ``desired``, far, part or wholly NaN."""
    p = rng.uniform(-1, 1, tset.num_joints)
    v = rng.uniform(-1, 1, tset.num_joints)
    case = rng.integers(6)
    spread = (0.01, 0.01, 0.5, 0.01, 0.01, 0.01)[case]
    p[idx] = desired[0] + rng.normal(0, spread, len(idx))
    v[idx] = desired[1] + rng.normal(0, 1.0 if case == 5 else spread, len(idx))
    if case == 3:
        p[idx[rng.integers(len(idx))]] = v[idx[rng.integers(len(idx))]] = np.nan
    elif case == 4:
        p[idx] = v[idx] = np.nan
    return p, v


def _terms(spline, t):
    """Return the largest |term| summed for position, velocity, acceleration at ``t``."""
    k = min(max(spline.segment(t), 0), len(spline.coefficients) - 1)
    s = t - spline.times[k]
    c = np.abs(spline.coefficients[k])                     # (6, n)
    j = np.arange(6)[:, None]
    return np.concatenate([c * s ** j, j * c * s ** np.maximum(j - 1, 0),
                           j * (j - 1) * c * s ** np.maximum(j - 2, 0)]).max(axis=0) + 1.0


def _stamp(data):
    msg = deserialize_message(data, JointState)
    return msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec


def _values(data):
    msg = deserialize_message(data, JointState)
    return np.concatenate([msg.position, msg.velocity])


@pytest.mark.parametrize('kind', ['python', 'compiled'])
@pytest.mark.parametrize('names', [['pitch', 'roll'], ['roll', 'pitch', 'pan'],
                                   ['h_b', 'h_a'], ['pan']])
@pytest.mark.parametrize('units', [False, True])        # drives in their own units too
def test_the_compiled_step_is_the_reference_step_and_map(kind, names, units):
    loops = _loops(kind)
    tset = _ideal_set(units)
    rng = np.random.default_rng(6200 + len(names))
    idx = np.array([tset.joint_index[j] for j in names], dtype=np.intp)
    handed = {code: 0 for code in ('before', 'past', 'unmeasured', 'ended', 'limit')}
    followed = 0
    for _ in range(60):
        plan = _goal(rng, tset, names)
        prepared = PreparedCommand(CommandMapper(tset), names, False)      # the compiled's
        reference_map = PreparedCommand(CommandMapper(tset), names, False)
        assert prepared.usable
        matrix, offset, lower, upper, *outputs = prepared.affine()
        if rng.random() < 0.2:           # a command beyond a limit: the reference's turn
            lower = np.where(np.isfinite(lower), lower * 0.05, -0.05)
            upper = np.where(np.isfinite(upper), upper * 0.05, 0.05)
            reference_map._lower, reference_map._upper, reference_map._limited = (
                lower, upper, True)
        mapped = (matrix, offset, lower, upper, *outputs)
        end = plan.spline.duration
        times = np.concatenate([rng.uniform(-0.2, end + 0.2, 8), plan.spline.times])
        for t in times:
            now = START_NS + int(round(t * 1e9))
            fast, reference = Execution(plan), Execution(plan)
            desired = plan.desired((now - START_NS) * 1e-9)
            p, v = _measured(rng, tset, idx, desired)
            state = fast.follow(loops, now, p, v, idx, mapped)
            want = reference.step(now, p[idx], v[idx])
            t_s = (now - START_NS) * 1e-9
            command = reference_map.command(want[0], want[1], None, now)
            if state is None:
                reason = ('before' if t_s < 0 else 'past' if t_s > end else
                          'unmeasured' if np.isnan(p[idx]).all() else
                          'ended' if reference.outcome is not None else
                          'limit' if command is None else None)
                assert reason is not None, (t_s, p[idx], v[idx], desired)
                handed[reason] += 1
                continue
            followed += 1
            assert 0 <= t_s <= end and reference.outcome is None and fast.outcome is None
            assert not np.isnan(p[idx]).all() and command is not None
            terms = _terms(plan.spline, t_s)
            got_bytes = prepared.followed(state[0], state[1], now)
            got = _values(got_bytes)
            scale = np.abs(matrix).max() * terms.max() + np.abs(offset).max()
            np.testing.assert_allclose(got, _values(command), rtol=0, atol=ROUNDING * scale)
            assert _stamp(got_bytes) == now
            for ours, theirs in zip(fast.last[1:], reference.last[1:]):
                for a, b in zip(ours, theirs):
                    if a is None or b is None:
                        assert a is None and b is None
                        continue
                    np.testing.assert_allclose(a, b, rtol=0, atol=ROUNDING * terms.max())
            assert fast.last[0] == reference.last[0] and len(got_bytes) == len(command)
    assert followed > 100, followed
    assert min(handed.values()) > 0, handed
