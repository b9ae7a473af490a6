"""The smooth joint motion of the simulator and the example bags (numpy only)."""

import math

import numpy as np

AMPLITUDE = 0.3       # rad (m for prismatic joints)
FREQUENCY = 0.25      # Hz
PHASE_STEP = 0.7      # rad between consecutive joints, so they do not all move alike


def joint_motion(tset, t, amplitude=AMPLITUDE, frequency=FREQUENCY):
    """
    Return joint positions and velocities at times ``t`` (s), about the default positions.

    ``q_k(t) = default_k + amplitude * sin(2 pi frequency t + PHASE_STEP k)``; ``t`` may be
    a scalar (arrays of shape (num_joints,)) or an array (shape t.shape + (num_joints,)).

    >>> from transmission_bridge.transmissions import load_transmissions
    >>> ts = load_transmissions({'transmissions': [{'name': 't', 'type': 'simple',
    ...     'actuators': [{'name': 'm'}], 'joints': [{'name': 'q', 'default_position': 1.0}]}]})
    >>> q, v = joint_motion(ts, 0.0)
    >>> q.tolist(), round(float(v[0]), 6)          # v = amplitude * 2 pi frequency
    ([1.0], 0.471239)
    """
    t = np.asarray(t, dtype=float)[..., None]
    omega, phase = 2.0 * math.pi * frequency, PHASE_STEP * np.arange(tset.num_joints)
    q = tset.default_positions + amplitude * np.sin(omega * t + phase)
    v = amplitude * omega * np.cos(omega * t + phase)
    return q, v
