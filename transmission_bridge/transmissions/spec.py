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
import math

from . import _checks
from .coupling import coupling_matrix, CouplingTransmission
from .differential import DifferentialTransmission
from .errors import ConfigError
from .four_bar import FourBarLinkageTransmission
from .linkage import LinkageGeometry, LinkageTransmission
from .simple import SimpleTransmission

TRANSMISSION_TYPES = {
    cls.TYPE: cls
    for cls in (SimpleTransmission, DifferentialTransmission, FourBarLinkageTransmission,
                CouplingTransmission, LinkageTransmission)
}
INF = math.inf


@dataclasses.dataclass(frozen=True)
class ActuatorSpec:
    """
    One actuator of a transmission: its name, mechanical reduction (dimensionless) and limits.

    ``lower_limit`` and ``upper_limit`` (rad or m of the motor, as it reports its position),
    ``velocity_limit`` (rad/s or m/s of the motor) and ``effort_limit`` (N·m or N) bound
    the commands the bridge sends it; ``inf`` (``-inf`` for the lower) is no limit.
    ``encoder_period``: the actuator reports its position modulo this (an absolute
    single-turn encoder, a counter that overflows), in its position unit; None: the position
    is whole.

    The motor's own dynamics, in its units (doc/dynamics.md): ``rotor_inertia`` (kg·m² of
    a rotary motor's rotor about its axis, kg of a linear actuator's moving part),
    ``viscous_friction`` (N·m·s/rad or N·s/m) and ``coulomb_friction`` (N·m or N); all
    >= 0, 0 by default. Its gear stage's efficiency (:mod:`.losses`): ``efficiency_driving``
    in (0, 1] when the motor drives, ``efficiency_driven`` <= 1 when the load drives (<= 0: a
    self-locking stage); 1 and 1 by default, an ideal gear. ``linear``: a linear motor
    (positions in m), whose stage is exact above 0.01 m/s instead of 0.1 rad/s. ``units``:
    its driver's (:class:`.units.DriverUnits`; None: SI), applied at the bridge's edges only:
    every other field is SI. ``output_encoder``: a second encoder at its gear's output
    (:class:`.output_encoder.OutputEncoderSpec`; None: none); ``spring``: a series-elastic
    actuator's (:class:`.output_encoder.SpringSpec`), measured by the two encoders.
    """

    name: str
    mechanical_reduction: float = 1.0
    velocity_limit: float = INF
    effort_limit: float = INF
    encoder_period: float = None
    lower_limit: float = -INF
    upper_limit: float = INF
    rotor_inertia: float = 0.0
    viscous_friction: float = 0.0
    coulomb_friction: float = 0.0
    efficiency_driving: float = 1.0
    efficiency_driven: float = 1.0
    linear: bool = False
    units: object = None
    output_encoder: object = None
    spring: object = None

    def __post_init__(self):
        _checks.name(self.name, 'actuator name')
        who = f'actuator {self.name!r}'
        object.__setattr__(self, 'mechanical_reduction', _checks.reduction(
            self.mechanical_reduction, f'{who}: mechanical_reduction'))
        _check_bounds(self, who)
        _check_magnitude_limits(self, who)
        if self.encoder_period is not None:
            object.__setattr__(self, 'encoder_period', _checks.encoder_period(
                self.encoder_period, f'{who}: encoder period'))
        for field, label in _DYNAMICS.items():
            object.__setattr__(self, field, _checks.non_negative(getattr(self, field),
                                                                 f'{who}: {label}'))
        object.__setattr__(self, 'efficiency_driving', _checks.efficiency_driving(
            self.efficiency_driving, f'{who}: efficiency.driving'))
        object.__setattr__(self, 'efficiency_driven', _checks.efficiency_driven(
            self.efficiency_driven, f'{who}: efficiency.driven'))
        if self.efficiency_driven * self.efficiency_driving <= -1.0:
            # The stage's mean gain (1/η_f + η_b) / 2 would be <= 0: lowering a load would
            # take more torque than lifting it, which no screw or worm does (Shigley).
            raise ConfigError(
                f'{who}: efficiency.driven must be above -1/efficiency.driving '
                f'({-1.0 / self.efficiency_driving:.6g}: lowering a load cannot take more '
                f'torque than lifting it), got {self.efficiency_driven!r}')
        if not isinstance(self.linear, bool):
            raise ConfigError(f'{who}: linear must be true or false, got {self.linear!r}')
        if self.spring is not None and self.output_encoder is None:
            raise ConfigError(f'{who}: spring needs output_encoder (its deflection is the '
                              'output encoder less the motor through the gear)')
        if self.spring is not None and (self.efficiency_driving != 1.0 or self.efficiency_driven
                                        != 1.0 or self.coulomb_friction or self.viscous_friction):
            raise ConfigError(f'{who}: spring with a lossy stage (efficiency, friction) is not '
                              "supported: the spring measures the torque after the stage's losses")


# An actuator's dynamics: spec field -> its name in the YAML and the parameters.
_DYNAMICS = {'rotor_inertia': 'rotor_inertia', 'viscous_friction': 'friction.viscous',
             'coulomb_friction': 'friction.coulomb'}


@dataclasses.dataclass(frozen=True)
class JointSpec:
    """
    One joint of a transmission.

    ``offset`` and ``default_position`` are in joint coordinates (rad or m);
    ``damping`` is the viscous loss in the transmission, N·m·s/rad or N·s/m, >= 0.
    The limits bound the commands the bridge sends: positions in ``[lower_limit,
    upper_limit]`` (rad or m), speeds below ``velocity_limit`` and efforts below
    ``effort_limit``; ``inf`` (``-inf`` for the lower) is no limit.
    """

    name: str
    mechanical_reduction: float = 1.0
    offset: float = 0.0
    default_position: float = 0.0
    damping: float = 0.0
    lower_limit: float = -INF
    upper_limit: float = INF
    velocity_limit: float = INF
    effort_limit: float = INF

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
        _check_bounds(self, who)
        _check_magnitude_limits(self, who)


_LABEL = {'lower_limit': 'limits.lower', 'upper_limit': 'limits.upper',
          'velocity_limit': 'limits.velocity', 'effort_limit': 'limits.effort'}


def _check_bounds(spec, who):
    for field in ('lower_limit', 'upper_limit'):
        object.__setattr__(spec, field, _checks.bound(getattr(spec, field),
                                                      f'{who}: {_LABEL[field]}'))
    if spec.lower_limit > spec.upper_limit:
        raise ConfigError(f'{who}: limits.lower {spec.lower_limit!r} is above limits.upper '
                          f'{spec.upper_limit!r}')


def _check_magnitude_limits(spec, who):
    for field in ('velocity_limit', 'effort_limit'):
        object.__setattr__(spec, field, _checks.magnitude_limit(getattr(spec, field),
                                                                f'{who}: {_LABEL[field]}'))


@dataclasses.dataclass(frozen=True)
class TransmissionSpec:
    """
    A named transmission of a given ``type`` with actuators and joints in role order.

    ``matrix`` (rows = joints, columns = actuators) is given for ``type: coupling`` and
    only for it; its joints and actuators keep mechanical reduction 1 (the matrix has it).
    ``geometry`` (a :class:`~.linkage.LinkageGeometry`) is given for ``type: linkage`` and
    only for it; its joints keep mechanical reduction 1 (the rods are their ratio).
    """

    name: str
    type: str  # noqa: A003 (the YAML key)
    actuators: tuple
    joints: tuple
    matrix: tuple = None
    geometry: LinkageGeometry = None

    def __post_init__(self):
        _checks.name(self.name, 'transmission name')
        cls = TRANSMISSION_TYPES.get(self.type)
        if cls is None:
            raise ConfigError(
                f'transmission {self.name!r}: unknown type {self.type!r}; expected one of '
                f'{", ".join(TRANSMISSION_TYPES)}')
        object.__setattr__(self, 'actuators', tuple(self.actuators))
        object.__setattr__(self, 'joints', tuple(self.joints))
        if cls is CouplingTransmission:
            sizes = self._check_coupling()
        elif self.matrix is not None:
            raise ConfigError(f'transmission {self.name!r}: matrix is only for type coupling, '
                              f'not {self.type!r}')
        if cls is LinkageTransmission:
            sizes = self._check_linkage()
        elif self.geometry is not None:
            raise ConfigError(f'transmission {self.name!r}: a geometry is only for type '
                              f'linkage, not {self.type!r}')
        elif cls is not CouplingTransmission:
            sizes = (cls.NUM_ACTUATORS, cls.NUM_JOINTS)
        for items, kind, size in ((self.actuators, 'actuators', sizes[0]),
                                  (self.joints, 'joints', sizes[1])):
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

    def _check_coupling(self):
        """Validate a coupling's matrix and members; return its (actuator, joint) counts."""
        where = f'transmission {self.name!r}'
        if self.matrix is None:
            raise ConfigError(f"{where}: type 'coupling' needs a matrix (one row per joint, "
                              'one column per actuator)')
        try:
            matrix = coupling_matrix(self.matrix)
        except ConfigError as exc:
            raise ConfigError(f'{where}: {exc}') from None
        object.__setattr__(self, 'matrix', matrix)
        for member in self.actuators + self.joints:
            if getattr(member, 'mechanical_reduction', 1.0) != 1.0:
                raise ConfigError(
                    f'{where}: {member.name!r} has mechanical_reduction '
                    f'{member.mechanical_reduction!r}; a coupling takes its ratios in the '
                    'matrix')
        return len(matrix), len(matrix)

    def _check_linkage(self):
        """Validate a linkage's members against its geometry; return its counts."""
        where = f'transmission {self.name!r}'
        if not isinstance(self.geometry, LinkageGeometry):
            raise ConfigError(f"{where}: type 'linkage' needs its geometry (joints' axes and "
                              "origins, actuators' kinds and points)")
        for joint in self.joints:
            if getattr(joint, 'mechanical_reduction', 1.0) != 1.0:
                raise ConfigError(
                    f'{where}: joint {joint.name!r} has mechanical_reduction '
                    f"{joint.mechanical_reduction!r}; a linkage's joints take none (the rods "
                    "and the actuators' reductions are its ratio)")
        n = len(self.geometry.joints)
        # A slider's or a cylinder's motor is linear (its stage's rest width in m/s).
        object.__setattr__(self, 'actuators', tuple(
            dataclasses.replace(a, linear=True) if g.kind != 'rotary' and not a.linear else a
            for a, g in zip(self.actuators, self.geometry.actuators)))
        return n, n

    @property
    def is_linear(self):
        """Return True for the types whose maps are constant matrices (all but linkage)."""
        return self.type != LinkageTransmission.TYPE

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
        if self.type == CouplingTransmission.TYPE:
            return CouplingTransmission(self.matrix, off)
        if self.type == LinkageTransmission.TYPE:
            return LinkageTransmission(self.geometry, ar, off,
                                       [j.lower_limit for j in self.joints],
                                       [j.upper_limit for j in self.joints],
                                       [j.damping for j in self.joints])
        return self.transmission_class(ar, jr, off)


@dataclasses.dataclass(frozen=True)
class SkippedTransmission:
    """A transmission of a robot file that was not bridged: its name, type and joints."""

    name: str
    type: str  # noqa: A003 (as in the file)
    joints: tuple
    reason: str = 'not a type this package maps'

    def describe(self):
        """Return one sentence naming it, its type, why, and its joints."""
        return (f'transmission {self.name!r} of type {self.type!r} skipped ({self.reason}); '
                f'its joints are not bridged: {", ".join(self.joints) or "none"}')


def unique_names(named, kind):
    """Refuse a name given twice; ``named``: (name, its transmission's name or None) pairs."""
    seen = {}
    for n, owner in named:
        if n in seen:
            where = ('' if owner is None else f' (in transmission {seen[n]!r} and in '
                     f'transmission {owner!r})' if seen[n] != owner else
                     f' (twice in transmission {owner!r})')
            raise ConfigError(f'duplicate {kind} name {n!r}{where}')
        seen[n] = owner
