"""
Validated, immutable descriptions of transmissions, as written in the YAML file.

A spec carries names and every tunable number; :meth:`TransmissionSpec.build`
turns it into the nameless math object. Validation happens at construction and
every message names the transmission, joint or actuator:

>>> try:
...     JointSpec('elbow', mechanical_reduction=0.0)
... except ConfigError as exc:
...     print(exc)
joint 'elbow': mechanical_reduction must be finite and non-zero, got 0.0
"""

import dataclasses

from . import _checks
from .differential import DifferentialTransmission
from .errors import ConfigError
from .four_bar import FourBarLinkageTransmission
from .simple import SimpleTransmission

TRANSMISSION_TYPES = {
    cls.TYPE: cls
    for cls in (SimpleTransmission, DifferentialTransmission, FourBarLinkageTransmission)
}


@dataclasses.dataclass(frozen=True)
class ActuatorSpec:
    """One actuator of a transmission: its name and mechanical reduction (dimensionless)."""

    name: str
    mechanical_reduction: float = 1.0

    def __post_init__(self):
        _checks.name(self.name, 'actuator name')
        object.__setattr__(self, 'mechanical_reduction', _checks.reduction(
            self.mechanical_reduction, f'actuator {self.name!r}: mechanical_reduction'))


@dataclasses.dataclass(frozen=True)
class JointSpec:
    """
    One joint of a transmission.

    ``offset`` and ``default_position`` are in joint coordinates (rad or m);
    ``damping`` is the viscous loss in the transmission, N·m·s/rad or N·s/m, >= 0.
    """

    name: str
    mechanical_reduction: float = 1.0
    offset: float = 0.0
    default_position: float = 0.0
    damping: float = 0.0

    def __post_init__(self):
        _checks.name(self.name, 'joint name')
        who = f'joint {self.name!r}'
        object.__setattr__(self, 'mechanical_reduction', _checks.reduction(
            self.mechanical_reduction, f'{who}: mechanical_reduction'))
        object.__setattr__(self, 'offset', _checks.finite(self.offset, f'{who}: offset'))
        object.__setattr__(self, 'default_position', _checks.finite(
            self.default_position, f'{who}: default_position'))
        object.__setattr__(self, 'damping', _checks.non_negative(
            self.damping, f'{who}: damping'))


@dataclasses.dataclass(frozen=True)
class TransmissionSpec:
    """A named transmission of a given ``type`` with actuators and joints in role order."""

    name: str
    type: str  # noqa: A003 (the YAML key)
    actuators: tuple
    joints: tuple

    def __post_init__(self):
        _checks.name(self.name, 'transmission name')
        cls = TRANSMISSION_TYPES.get(self.type)
        if cls is None:
            raise ConfigError(
                f'transmission {self.name!r}: unknown type {self.type!r}; expected one of '
                f'{", ".join(TRANSMISSION_TYPES)}')
        object.__setattr__(self, 'actuators', tuple(self.actuators))
        object.__setattr__(self, 'joints', tuple(self.joints))
        for items, kind, size in ((self.actuators, 'actuators', cls.NUM_ACTUATORS),
                                  (self.joints, 'joints', cls.NUM_JOINTS)):
            if len(items) != size:
                raise ConfigError(
                    f'transmission {self.name!r}: type {self.type!r} takes {size} {kind}, '
                    f'got {len(items)}')
        for a in self.actuators:
            if not isinstance(a, ActuatorSpec):
                raise ConfigError(f'transmission {self.name!r}: actuators must be ActuatorSpec')
        for j in self.joints:
            if not isinstance(j, JointSpec):
                raise ConfigError(f'transmission {self.name!r}: joints must be JointSpec')

    @property
    def transmission_class(self):
        """Return the :class:`Transmission` subclass for ``type``."""
        return TRANSMISSION_TYPES[self.type]

    def build(self):
        """Return the math object (a :class:`Transmission`) for this spec."""
        ar = tuple(a.mechanical_reduction for a in self.actuators)
        jr = tuple(j.mechanical_reduction for j in self.joints)
        off = tuple(j.offset for j in self.joints)
        if self.type == SimpleTransmission.TYPE:
            return SimpleTransmission(ar[0], off[0], joint_reduction=jr[0])
        return self.transmission_class(ar, jr, off)
