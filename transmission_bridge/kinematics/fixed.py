"""
Fixed joint (Drake's ``WeldJoint``): no coordinate; the body is rigidly attached.

>>> FixedJoint('tool_mount').num_positions
0
"""

import numpy as np

from .errors import ModelError
from .joint import Joint


class FixedJoint(Joint):
    """A weld: ``X_PB = X_PJ X_JB`` whatever q is (there is none)."""

    TYPE = 'fixed'
    NUM_POSITIONS = 0
    DEFAULT_LIMITS = (0.0, 0.0)

    def __init__(self, name, origin=None, child_transform=None, **ignored):
        super().__init__(name, origin=origin, child_transform=child_transform)
        if ignored.get('mimic') is not None:
            raise ModelError(f'joint {name!r}: a fixed joint cannot be a mimic joint')

    def motion(self, q=0.0):
        """Return the identity (..., 4, 4) for any batch shape of ``q``."""
        return np.broadcast_to(np.eye(4), np.shape(q) + (4, 4)).copy()

    def _fields(self):
        return {'name': self._name, 'origin': self._origin, 'child_transform': self._child}
