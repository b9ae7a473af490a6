"""
Screw joint, with the semantics of Drake's ``ScrewJoint``.

The coordinate is the rotation ``theta`` (rad) about the unit axis; the body also
translates along the same axis by::

    z = pitch * theta / (2 pi)          pitch in metres per revolution, any sign
    z_dot = pitch * theta_dot / (2 pi)

so ``theta = 2 pi`` advances exactly one ``pitch``. Pitch 0 makes it a revolute
joint. Position limits default to unbounded (as Drake). Setting a default
translation sets the default rotation and vice versa; on a screw whose ``|pitch|``
is below sqrt(machine epsilon) a default translation is an error (it fixes no
rotation). Damping is N·m·s/rad on theta_dot.

>>> import numpy as np
>>> s = ScrewJoint('lead_screw', pitch=0.02)
>>> float(s.translation(2 * np.pi))
0.02
>>> s.with_default_translation(0.005).default_position == np.pi / 2
True
"""

import math

import numpy as np

from . import _checks
from .errors import ModelError
from .joint import Joint

# |pitch| below this cannot relate a translation to a rotation (Drake uses the same).
PITCH_EPSILON = math.sqrt(np.finfo(float).eps)


class ScrewJoint(Joint):
    """Rotation theta about the axis and translation ``pitch * theta / (2 pi)`` along it."""

    TYPE = 'screw'
    ROTATION_PER_Q = 1.0
    _FIELDS = Joint._FIELDS + ('pitch',)

    def __init__(self, name, axis=(0.0, 0.0, 1.0), pitch=0.0, **fields):
        self._pitch = _checks.finite(pitch, f'joint {name!r}: pitch')
        super().__init__(name, axis=axis, **fields)

    @property
    def pitch(self):
        """Return the pitch: metres of travel along the axis per revolution (any sign)."""
        return self._pitch

    @property
    def translation_per_q(self):
        """Return ``pitch / (2 pi)``, metres per radian."""
        return self._pitch / (2.0 * math.pi)

    def rotation_from_translation(self, z):
        """Return the rotation (rad) that produces translation ``z`` (m)."""
        self._need_pitch('a translation')
        return np.asarray(z, dtype=float) * (2.0 * math.pi) / self._pitch

    def translational_velocity(self, angular_velocity):
        """Return the velocity along the axis (m/s) for ``angular_velocity`` (rad/s)."""
        return np.asarray(angular_velocity, dtype=float) * self.translation_per_q

    def angular_velocity(self, translational_velocity):
        """Return theta_dot (rad/s) for a velocity along the axis (m/s)."""
        self._need_pitch('a translational velocity')
        return np.asarray(translational_velocity, dtype=float) * (2.0 * math.pi) / self._pitch

    @property
    def default_translation(self):
        """Return the translation (m) at the default rotation."""
        return float(self.translation(self._default))

    def with_default_rotation(self, theta):
        """Return a copy whose default rotation is ``theta`` (rad); the translation follows."""
        return self.replace(default_position=theta)

    def with_default_translation(self, z):
        """Return a copy whose default translation is ``z`` (m); the rotation follows."""
        z = _checks.finite(z, f'{self._who}: default_translation')
        self._need_pitch('a default translation')
        return self.replace(default_position=float(self.rotation_from_translation(z)))

    def _need_pitch(self, what):
        if abs(self._pitch) < PITCH_EPSILON:
            raise ModelError(f'{self._who}: cannot set {what} on a screw joint with pitch '
                             f'{self._pitch!r} (|pitch| < {PITCH_EPSILON:.3g} m/rev)')

    def _fields(self):
        fields = super()._fields()
        fields['pitch'] = self._pitch
        return fields
