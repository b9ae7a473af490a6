"""
Prismatic joint: translation ``q`` (m) along the unit axis; Drake's ``PrismaticJoint``.

Limits default to MATLAB's ``[-0.5, 0.5]`` m.

>>> PrismaticJoint('slide', axis=(1, 0, 0)).motion(0.25)[:3, 3]
array([0.25, 0.  , 0.  ])
"""

from .joint import Joint


class PrismaticJoint(Joint):
    """Translation along the axis; q in m, velocity m/s, damping N·s/m."""

    TYPE = 'prismatic'
    ROTATION_PER_Q = 0.0
    DEFAULT_LIMITS = (-0.5, 0.5)

    @property
    def translation_per_q(self):
        """Return 1: q is the translation (m)."""
        return 1.0
