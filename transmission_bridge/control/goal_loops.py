"""
A running goal's step per state as one loop: sample, judge, map (compiled where it can be).

What :meth:`.following.Execution.step` and a layout's prepared map
(:class:`..mapping.prepared.PreparedCommand`) do per state while a goal runs, for the case
that is nearly every state of a goal: inside the trajectory (0 <= t <= its last point), its
joints measured, within the path tolerances, the command within every limit, no efforts. The
spline is sampled as :meth:`.spline.Spline.at` samples it (the segment that holds ``t``, the
last point's time in the last segment), the errors are desired - actual, a NaN error is not
judged, and the command is ``y = M z + y0`` with ``z = (q, q̇)`` the desired position and
velocity, every ``y`` within its ``[lower, upper]`` and finite. Anything else returns a code
(:data:`OUTSIDE`, :data:`UNMEASURED`, :data:`VIOLATED`, :data:`REFERENCE`) and the caller
takes the reference step, whole, which then decides (and words) what happens.

Plain Python on numpy arrays and floats, compiled ahead of time like the gear-loss loops
(:mod:`.._shared.ahead`): a bridge following a goal loads no numba. Where that module is
missing the reference step runs (:func:`kernels`). test_goal_loops.py pins both forms to the
reference step and map.
"""

from .._shared import loops as _loops

#: :func:`follow`'s results: the command is in ``y``; t before the start or past the end;
#: no joint measured; a path tolerance exceeded; a command value beyond a limit or not finite.
FOLLOWED, OUTSIDE, UNMEASURED, VIOLATED, REFERENCE = 0, 1, 2, 3, 4
#: Rows of :func:`follow`'s ``state``: desired position, velocity, acceleration; measured
#: position, velocity.
P, V, A, Q, QD = 0, 1, 2, 3, 4
COMPILED = _loops.wanted()


def kernels():
    """
    Return the module compiled ahead of time, or None (no numba, refused, or not built).

    Never numba's just-in-time loops: a goal's step does not win what numba and LLVM cost a
    bridge in memory (some 130 MB); without the compiled module the reference step runs.
    """
    if not COMPILED:
        return None
    from .._shared import ahead
    return ahead.GOAL.ensure()


def follow(t, times, coefficients, measured_p, measured_v, idx, path, matrix, offset, lower,
           upper, y, motor_p, motor_v, at_p, at_v, state):
    """
    Follow one state: write ``state`` (5, n) and the motors' command; return a code (module).

    ``t`` s from the start; ``times`` (m,) the points', ``coefficients`` (m-1, 6, n) the
    segments' (:class:`.spline.Spline`); ``measured_p``/``measured_v`` every joint's, ``idx``
    the goal's joints among them; ``path`` (2, n) the position and velocity bounds on
    ``|error|`` (inf: none); ``matrix`` (r, 2n), ``offset``, ``lower``, ``upper`` (r,) the
    layout's affine map and bounds, ``y`` (r,) scratch; the motors' positions ``y[at_p:]``
    and velocities ``y[at_v:]`` are written into ``motor_p`` and ``motor_v`` (the message's
    fields) once every row is within its bounds.
    """
    m = len(times)
    n = len(idx)
    if m < 2 or not (t >= times[0] and t <= times[m - 1]):
        return OUTSIDE
    lo, hi = 0, m - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if times[mid] <= t:
            lo = mid
        else:
            hi = mid
    s = t - times[lo]
    s2 = s * s
    s3 = s2 * s
    s4 = s3 * s
    s5 = s3 * s2
    measured = False
    violated = False
    for j in range(n):
        c0, c1, c2 = coefficients[lo, 0, j], coefficients[lo, 1, j], coefficients[lo, 2, j]
        c3, c4, c5 = coefficients[lo, 3, j], coefficients[lo, 4, j], coefficients[lo, 5, j]
        p = c0 + c1 * s + c2 * s2 + c3 * s3 + c4 * s4 + c5 * s5
        v = c1 + 2.0 * s * c2 + 3.0 * s2 * c3 + 4.0 * s3 * c4 + 5.0 * s4 * c5
        a = 2.0 * c2 + 6.0 * s * c3 + 12.0 * s2 * c4 + 20.0 * s3 * c5
        q = measured_p[idx[j]]
        qd = measured_v[idx[j]]
        state[P, j], state[V, j], state[A, j], state[Q, j], state[QD, j] = p, v, a, q, qd
        if q == q:
            measured = True
        if abs(p - q) > path[0, j] or abs(v - qd) > path[1, j]:
            violated = True
    if not measured:
        return UNMEASURED
    if violated:
        return VIOLATED
    for r in range(len(offset)):
        value = offset[r]
        for j in range(n):
            value += matrix[r, j] * state[P, j] + matrix[r, n + j] * state[V, j]
        if not (value >= lower[r] and value <= upper[r] and value - value == 0.0):
            return REFERENCE
        y[r] = value
    for i in range(len(motor_p)):
        motor_p[i] = y[at_p + i]
        motor_v[i] = y[at_v + i]
    return FOLLOWED
