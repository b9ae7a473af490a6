"""
The common shape of every transmission: validated reductions and offsets, batch maps.

A transmission type is a formula module with two functions,
``actuator_to_joint(kind, a, ar, jr, off)`` and ``joint_to_actuator(kind, j, ar, jr, off)``,
that take one array per role (``a[0]`` is actuator1, ...) and return one array per
role. Every argument broadcasts, so the same formulas serve one transmission and a
whole :class:`~transmission_bridge.transmissions.transmission_set.TransmissionSet`
(many transmissions of a type at once, over a whole bag).
"""

import numpy as np

from . import _checks
from .errors import ConfigError
from .interfaces import map_kind


def last_dimension(values, size, space):
    """Return ``values`` as a float array whose last dimension is ``size``."""
    array = np.asarray(values, dtype=float)
    if array.ndim == 0 or array.shape[-1] != size:
        raise ConfigError(
            f'expected {space} values with last dimension {size}, got shape {array.shape}'
        )
    return array


class Transmission:
    """
    Base class: a fixed number of actuators and joints, reductions and joint offsets.

    Subclasses set ``TYPE``, ``NUM_ACTUATORS``, ``NUM_JOINTS`` and ``FORMULAS``.
    Instances are immutable; build a new one to change a parameter.
    """

    TYPE = None
    NUM_ACTUATORS = 0
    NUM_JOINTS = 0
    FORMULAS = None

    __slots__ = ('_ar', '_jr', '_off')

    def __init__(self, actuator_reductions, joint_reductions, joint_offsets):
        self._ar = self._tuple(actuator_reductions, self.NUM_ACTUATORS, 'actuator_reductions',
                               _checks.reduction)
        self._jr = self._tuple(joint_reductions, self.NUM_JOINTS, 'joint_reductions',
                               _checks.reduction)
        self._off = self._tuple(joint_offsets, self.NUM_JOINTS, 'joint_offsets', _checks.finite)

    @staticmethod
    def _tuple(values, size, what, check):
        try:
            items = list(values)
        except TypeError:
            raise ConfigError(f'{what} must be a sequence of {size} numbers, got {values!r}') \
                from None
        if len(items) != size:
            raise ConfigError(f'{what} must have {size} entries, got {len(items)}')
        return tuple(check(v, f'{what}[{i}]') for i, v in enumerate(items))

    @property
    def num_actuators(self):
        """Return the number of actuators this transmission couples."""
        return self.NUM_ACTUATORS

    @property
    def num_joints(self):
        """Return the number of joints this transmission drives."""
        return self.NUM_JOINTS

    @property
    def actuator_reductions(self):
        """Return the actuator mechanical reductions, in role order (actuator1, ...)."""
        return self._ar

    @property
    def joint_reductions(self):
        """Return the joint mechanical reductions, in role order (joint1, ...)."""
        return self._jr

    @property
    def joint_offsets(self):
        """Return the joint position offsets in joint coordinates (rad or m), role order."""
        return self._off

    def actuator_to_joint(self, interface, values):
        """Map actuator values ``(..., num_actuators)`` to joint values ``(..., num_joints)``."""
        kind = map_kind(interface)
        a = last_dimension(values, self.NUM_ACTUATORS, 'actuator')
        cols = tuple(a[..., i] for i in range(self.NUM_ACTUATORS))
        out = self.FORMULAS.actuator_to_joint(kind, cols, self._ar, self._jr, self._off)
        return np.stack(np.broadcast_arrays(*out), axis=-1)

    def joint_to_actuator(self, interface, values):
        """Map joint values ``(..., num_joints)`` to actuator values ``(..., num_actuators)``."""
        kind = map_kind(interface)
        j = last_dimension(values, self.NUM_JOINTS, 'joint')
        cols = tuple(j[..., i] for i in range(self.NUM_JOINTS))
        out = self.FORMULAS.joint_to_actuator(kind, cols, self._ar, self._jr, self._off)
        return np.stack(np.broadcast_arrays(*out), axis=-1)

    def __eq__(self, other):
        return (type(other) is type(self) and other._ar == self._ar
                and other._jr == self._jr and other._off == self._off)

    def __hash__(self):
        return hash((type(self), self._ar, self._jr, self._off))

    def __repr__(self):
        return (f'{type(self).__name__}(actuator_reductions={self._ar}, '
                f'joint_reductions={self._jr}, joint_offsets={self._off})')
