"""
Changes to a :class:`~.transmission_set.TransmissionSet`: a new set, validated as one.

A mixin of the set, like the kinematics model's: runtime parameters, calibration and the
loaders' limits from a URDF's joints all come through :meth:`ChangesMixin.replace_fields`.
"""

import dataclasses

import numpy as np

from .base import last_dimension
from .errors import ConfigError


class ChangesMixin:
    """A set's changes (module docstring): each returns a new set, the old one unchanged."""

    def replace_joint(self, name, **changes):
        """Return a new set with fields of joint ``name`` changed (validated)."""
        return self.replace_fields(joints={name: changes})

    def replace_fields(self, joints=None, actuators=None, matrices=None):
        """
        Return a new set with fields of several joints and actuators changed, built once.

        ``joints`` and ``actuators`` map a name to ``{field: value}``, ``matrices`` a
        coupling's name to its new matrix. Validated as one set: raises ConfigError naming
        the item and the value if a change is invalid.
        """
        joints, actuators, matrices = joints or {}, actuators or {}, matrices or {}
        for name in joints:
            self.joint(name)
        for name in actuators:
            self.actuator(name)
        couplings = {s.name for s in self._specs if s.matrix is not None}
        for name in matrices:
            if name not in couplings:
                raise ConfigError(f'no coupling transmission called {name!r}')

        def changed(items, new):
            return tuple(dataclasses.replace(x, **new[x.name]) if x.name in new else x
                         for x in items)
        try:
            return type(self)((dataclasses.replace(
                s, joints=changed(s.joints, joints), actuators=changed(s.actuators, actuators),
                matrix=matrices.get(s.name, s.matrix))
                for s in self._specs), self._warnings, self._skipped)
        except TypeError as exc:
            raise ConfigError(str(exc)) from None

    def with_joint_offsets(self, offsets):
        """Return a new set whose joint offsets are ``offsets`` (joint order)."""
        values = last_dimension(offsets, self.num_joints, 'joint offset')
        return self.replace_fields(joints={name: {'offset': float(v)}
                                           for name, v in zip(self._joint_names, values)})

    def calibrated_offsets(self, actuator_positions):
        """
        Offsets that make ``actuator_positions`` map exactly to the default positions.

        The position map is ``x_j = f(x_a) + off``, so the new offset is
        ``default - f(x_a)``, with ``f`` evaluated at zero offsets. Raises
        ConfigError if a position is not finite.
        """
        x_a = last_dimension(actuator_positions, self.num_actuators, 'actuator position')
        bad = [self._actuator_names[i] for i in np.flatnonzero(~np.isfinite(x_a))]
        if bad:
            raise ConfigError(f'no finite position for actuators {bad}')
        zero = self.with_joint_offsets(np.zeros(self.num_joints))
        f_a = zero.actuator_to_joint('position', x_a)
        return self._defaults - f_a
