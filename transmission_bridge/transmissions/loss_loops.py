"""
The gear stages' losses per message: :mod:`.losses`' formulas as loops over the motors.

Plain Python on numpy arrays and floats, compiled by numba on the first call of
:func:`kernels` (a set with a lossy stage; importing this module loads no numba), the same
arithmetic in the same order as :class:`.losses.Losses` (the reference, for batches): the
results are equal to the bit (test_losses.py). ``stages`` holds per motor, in columns,
1/w (the rest width's inverse), the gain's two slopes of the direction (driving − 1,
driven − 1: measured or commanded), the viscous and the Coulomb friction
(:func:`stage_table`).
"""

import numpy as np

from .._shared import loops as _loops

INV_REST, GAIN_A, GAIN_B, VISCOUS, COULOMB, EDGE, WIDTH = 0, 1, 2, 3, 4, 5, 6
_NOT_COMPILED = ('kernels', 'stage_table')
COMPILED = _loops.wanted()
_compiled = None


def kernels():
    """
    Return the loops to call: compiled ahead of time where they can be, else by numba.

    Ahead of time (:mod:`.._shared.ahead`): a module that imports no numba, built once; else
    numba's just-in-time loops; else (no numba, or ``TRANSMISSION_BRIDGE_KERNELS=numpy``) this
    module.
    """
    from .._shared import ahead
    return ahead.kernels(__name__, _NOT_COMPILED)


def stage_table(losses, measured):
    """Return the (nA, WIDTH) table of :class:`.losses.Losses`, measured or commanded."""
    table = np.empty((len(losses.eta_f), WIDTH))
    table[:, INV_REST] = losses.inverse_rest
    if measured:
        table[:, GAIN_A], table[:, GAIN_B] = losses.measured_gains
    else:
        up, back = losses.commanded_gains
        table[:, GAIN_A] = (up + back) * 0.5
        table[:, GAIN_B] = (up - back) * 0.5
    table[:, VISCOUS] = losses.viscous
    table[:, COULOMB] = losses.coulomb
    table[:, EDGE] = losses.viscous / losses.inverse_rest + losses.coulomb
    return table


def _sign(x):
    return 1.0 if x > 0.0 else -1.0 if x < 0.0 else 0.0 if x == 0.0 else x


def _exact(stages, i, tau_in, direction):
    """Return motor ``i``'s stage output of ``tau_in`` moving in ``direction`` (measured)."""
    gain = stages[i, GAIN_A] if tau_in * direction > 0 else stages[i, GAIN_B]
    return gain * tau_in


def measured_one(stages, i, v, tau_a):
    """Return motor ``i``'s stage output of torque ``tau_a`` at velocity ``v``."""
    if v != v:
        v = 0.0
    s = min(max(v * stages[i, INV_REST], -1.0), 1.0)
    if abs(s) < 1.0:
        edge = stages[i, EDGE]
        high = _exact(stages, i, tau_a - edge, 1.0)
        low = _exact(stages, i, tau_a + edge, -1.0)
        return low + (s + 1.0) * 0.5 * (high - low)
    sign = _sign(v)
    return _exact(stages, i, tau_a - stages[i, VISCOUS] * v - stages[i, COULOMB] * sign, sign)


def commanded_one(stages, i, v, tau_o):
    """Return motor ``i``'s torque giving stage output ``tau_o`` at velocity ``v``."""
    if v != v:
        s = 0.0
        viscous = 0.0
    else:
        s = min(max(v * stages[i, INV_REST], -1.0), 1.0)
        viscous = stages[i, VISCOUS] * v
    gain = stages[i, GAIN_A] + s * _sign(tau_o) * stages[i, GAIN_B]
    return gain * tau_o + (viscous + stages[i, COULOMB] * s)


def measured_state(flat, n_act, stages, out):
    """
    Write a bridge state into ``out``, its efforts as their stages' outputs (measured).

    ``flat``: the state (positions, velocities, efforts of ``n_act`` motors, then 1.0).
    """
    for k in range(2 * n_act):
        out[k] = flat[k]
    for i in range(n_act):
        out[2 * n_act + i] = measured_one(stages, i, flat[n_act + i], flat[2 * n_act + i])
    out[3 * n_act] = flat[3 * n_act]


def measured_linear(flat, n_act, stages, index, coef, minus_b, scratch, out):
    """
    Write a state's measured flat into ``scratch`` and its linear joint state into ``out``.

    :func:`measured_state` into ``scratch``, then :class:`.compiled.LinearStateMap`'s
    writer of ``scratch`` in one loop: ``out[r, j]`` the terms ``scratch[index[t, r, j]] *
    coef[t, r, j]`` summed in their order, the last one (``t = K``) taking ``minus_b[j] *
    out[1, j]`` on effort rows where ``minus_b`` is not empty (the damping loss): the
    writer's arithmetic in its order, so the same bits.
    """
    measured_state(flat, n_act, stages, scratch)
    terms, rows, cols = index.shape
    last = terms - 1
    for r in range(rows):
        for j in range(cols):
            acc = scratch[index[0, r, j]] * coef[0, r, j] + scratch[index[1, r, j]] * \
                coef[1, r, j]
            for t in range(2, last):
                acc = acc + scratch[index[t, r, j]] * coef[t, r, j]
            out[r, j] = acc
    for r in range(rows):
        for j in range(cols):
            if r == 2 and len(minus_b):
                tail = out[1, j] * minus_b[j]
            else:
                tail = scratch[index[last, r, j]] * coef[last, r, j]
            out[r, j] = out[r, j] + tail


def commanded_in_place(values, velocities, at, motors, stages, inverse_limits):
    """
    Make ``values`` (stage outputs of ``motors``) their motors' torques; return the worst.

    Motor ``motors[r]``'s velocity is ``velocities[at + motors[r]]`` (NaN: at rest);
    ``inverse_limits``: 1 / each motor's effort limit (0: none), in the order of
    ``motors``. Returns the largest |τ_a| / limit (NaN where a torque is not finite).
    """
    worst = 0.0
    for r in range(len(motors)):
        m = motors[r]
        t = commanded_one(stages, m, velocities[at + m], values[r])
        values[r] = t
        if not abs(t) < np.inf:
            return np.nan
        worst = max(worst, abs(t) * inverse_limits[r])
    return worst


def commanded(outputs, velocities, motors, stages, out):
    """
    Write into ``out`` the torques of ``motors`` (set indices) giving stage ``outputs``.

    ``velocities``: every motor's (set order; NaN: unknown, taken at rest).
    """
    for r in range(len(motors)):
        m = motors[r]
        out[r] = commanded_one(stages, m, velocities[m], outputs[r])


def mit_feed_forward(commands, flat, n_act, motors, stages):
    """
    Add to each MIT command's feed-forward what its gear stage loses at the measured state.

    ``commands`` (m, 5): θ*, θ̇*, feed-forward, stiffness, damping per motor of ``motors``;
    ``flat``: the motors' state. The motor's own law at the state, ``τ = k (θ* − θ) + d
    (θ̇* − θ̇) + f``, is the ideal torque; its feed-forward gets ``C(τ) − τ``, so that the law
    there gives the torque the stage needs (:func:`commanded`).
    """
    for r in range(len(motors)):
        m = motors[r]
        v = flat[n_act + m]
        speed = v if v == v else 0.0
        ideal = (commands[r, 3] * (commands[r, 0] - flat[m])
                 + commands[r, 4] * (commands[r, 1] - speed) + commands[r, 2])
        commands[r, 2] = commands[r, 2] + (commanded_one(stages, m, v, ideal) - ideal)
