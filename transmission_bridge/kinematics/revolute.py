"""
Revolute joint: rotation ``q`` (rad) about the unit axis; Drake's ``RevoluteJoint``.

Limits default to MATLAB's ``[-pi, pi]``; give ``lower=-inf, upper=inf`` for a
continuous joint.

>>> import numpy as np
>>> j = RevoluteJoint('elbow', axis=(0, 0, 2))
>>> j.axis
array([0., 0., 1.])
>>> np.round(j.motion(np.pi / 2)[:3, :3] @ [1, 0, 0], 12)
array([0., 1., 0.])
"""

import math

from .joint import Joint


class RevoluteJoint(Joint):
    """Rotation about the axis; q in rad, velocity rad/s, damping N·m·s/rad."""

    TYPE = 'revolute'
    ROTATION_PER_Q = 1.0
    DEFAULT_LIMITS = (-math.pi, math.pi)
