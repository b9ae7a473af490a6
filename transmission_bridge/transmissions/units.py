"""
An actuator's driver units: what its drive reports and takes, against the SI the maps use.

A drive speaks its own units (CiA 402: encoder increments, increments per second, per mille
of the rated torque; ODrive: turns; a current-mode drive: amps). Each interface of an actuator
has one affine law (NOTATION.md, "Driver units")::

    SI value = factor * driver value + offset          (a state read, as ethercat_driver_ros2)
    driver value = (SI value - offset) / factor        (a command written: the inverse)

and an MIT-mode command's gains follow from it: ``kp_driver = kp * factor_position /
factor_effort``, ``kd_driver = kd * factor_velocity / factor_effort`` (offsets cancel in a
difference; the effort's offset goes into the feed-forward). The bridge applies the law at
its edges only (states in, every command out), the simulator at its own, the bag tools
through the bridge's core; inside, everything is SI.

>>> units = driver_units({'position': 'counts', 'counts_per_revolution': 4096,
...                       'effort': 'per_mille', 'rated_torque': 0.5}, 'units', 'm', False)
>>> units.to_si(0, 1024.0), units.to_si(2, 1000.0)
(1.5707963267948966, 0.5)
"""

import dataclasses
import math

import numpy as np

from . import _checks
from .errors import ConfigError

INTERFACES = ('position', 'velocity', 'effort')
TAU = 2.0 * math.pi
#: Named units per interface: their factor, or the constant key the factor comes from; and
#: which motors they fit (None: either, True: linear only, False: rotary only).
NAMED = {
    'position': {'rad': (1.0, None), 'm': (1.0, None), 'deg': (math.pi / 180.0, False),
                 'turns': (TAU, False), 'mm': (1e-3, True), 'counts': ('counts', None)},
    'velocity': {'rad': (1.0, None), 'm': (1.0, None), 'deg': (math.pi / 180.0, False),
                 'turns': (TAU, False), 'rpm': (TAU / 60.0, False), 'mm': (1e-3, True),
                 'counts': ('counts', None)},
    'effort': {'Nm': (1.0, None), 'N': (1.0, None),
               'amps': ('torque_constant', None), 'per_mille': ('rated_torque', None),
               'counts': ('effort_per_count', None)},
}
CONSTANTS = ('counts_per_revolution', 'counts_per_meter', 'torque_constant', 'rated_torque',
             'effort_per_count')
KEYS = INTERFACES + CONSTANTS + ('limits',)
LIMITS_IN = ('si', 'driver')


@dataclasses.dataclass(frozen=True)
class DriverUnits:
    """One actuator's law per interface (module docstring); SI by default."""

    factor: tuple = (1.0, 1.0, 1.0)
    offset: tuple = (0.0, 0.0, 0.0)
    #: The actuator's ``limits`` (and its encoder's period) are written in the driver's units.
    limits_in_driver: bool = False

    @property
    def identity(self):
        """Return True when every interface is SI already (nothing to convert)."""
        return self.factor == (1.0, 1.0, 1.0) and self.offset == (0.0, 0.0, 0.0)

    def to_si(self, k, value):
        """Return interface ``k``'s driver ``value`` in SI."""
        return self.factor[k] * value + self.offset[k]

    def si_limits(self, lower, upper, velocity, effort):
        """Return the actuator's limits in SI, given as written (the driver's when said)."""
        if not self.limits_in_driver:
            return lower, upper, velocity, effort
        ends = sorted(self.to_si(0, x) for x in (lower, upper))
        return (ends[0], ends[1], abs(self.factor[1]) * velocity,
                abs(self.factor[2]) * effort)


SI = DriverUnits()


def fields_in_si(fields):
    """
    Make an actuator's spec fields SI where its driver's units wrote them (doc/formats.md).

    ``fields['units']``: its :class:`DriverUnits`. The encoder's period is the driver's (the
    reading wraps in its units); the limits are when ``units.limits`` is ``driver``.
    """
    units = fields['units']
    if fields.get('encoder_period') is not None:
        fields['encoder_period'] *= abs(units.factor[0])
    names = ('lower_limit', 'upper_limit', 'velocity_limit', 'effort_limit')
    ends = (-math.inf, math.inf, math.inf, math.inf)
    given = [fields.get(n, d) for n, d in zip(names, ends)]
    fields.update(zip(names, units.si_limits(*given)))


def xml_units(child, where, owner):
    """
    Return the ``units`` mapping of a URDF actuator's ``<units .../>`` (the YAML's, flat).

    Attributes are the YAML's keys (``position="counts" counts_per_revolution="131072"``);
    ``position_factor``, ``position_offset`` (and the velocity's, the effort's) stand for
    ``position: {factor, offset}`` (with a unit: ``{unit, offset}``).
    """
    value = {}
    for key, text in child.attrib.items():
        interface, _, part = key.partition('_')
        if key in CONSTANTS or part in ('factor', 'offset') and interface in INTERFACES:
            try:
                number = float(text)
            except ValueError:
                raise ConfigError(f'{where}, actuator {owner!r}: <units {key}> must be a '
                                  f'number, got {text!r}') from None
            if key in CONSTANTS:
                value[key] = number
            else:
                value.setdefault(interface, {})
                if isinstance(value[interface], str):
                    value[interface] = {'unit': value[interface]}
                value[interface][part] = number
        elif isinstance(value.get(key), dict):
            value[key]['unit'] = text
        else:
            value[key] = text
    return value


def driver_units(value, path, who, linear):
    """
    Return the :class:`DriverUnits` of an actuator's ``units`` mapping (doc/formats.md).

    ``path`` locates the mapping, ``who`` names the actuator, ``linear``: a linear motor.
    Refused, naming the key: an unknown unit or key, a unit for the other kind of motor, a
    missing or non-positive constant, a zero or non-finite factor.
    """
    _checks.checked_mapping(value, f'{path} ({who})', KEYS)
    factors, offsets = [], []
    for interface in INTERFACES:
        factor, offset = _interface(value, interface, f'{path}.{interface}', linear, path,
                                    who)
        factors.append(factor)
        offsets.append(offset)
    limits = value.get('limits', 'si')
    if limits not in LIMITS_IN:
        raise ConfigError(f'{path}.limits ({who}) must be si or driver (the units its limits '
                          f'and encoder period are written in), got {limits!r}')
    return DriverUnits(tuple(factors), tuple(offsets), limits == 'driver')


def _interface(value, interface, where, linear, path, who):
    """Return ``(factor, offset)`` of one interface: a named unit, or a factor and offset."""
    given = value.get(interface, None)
    if given is None:
        return 1.0, 0.0
    offset = 0.0
    if isinstance(given, dict):
        _checks.checked_mapping(given, f'{where} ({who})', ('unit', 'factor', 'offset'))
        if ('unit' in given) == ('factor' in given):
            raise ConfigError(f'{where} ({who}): give one of unit or factor (SI = factor * '
                              f'driver + offset), got {given!r}')
        offset = _checks.finite(given.get('offset', 0.0), f'{where}.offset ({who})')
        if 'factor' in given:
            factor = _checks.as_number(given['factor'], f'{where}.factor ({who})')
            if not math.isfinite(factor) or factor == 0.0:
                raise ConfigError(f'{where}.factor ({who}) must be finite and non-zero (SI = '
                                  f'factor * driver + offset), got {factor!r}')
            return factor, offset
        given, where = given['unit'], f'{where}.unit'
    units = NAMED[interface]
    if not isinstance(given, str) or given not in units:
        raise ConfigError(f'{where} ({who}) must be one of {", ".join(units)} or '
                          f'{{factor: F, offset: O}}, got {given!r}')
    factor, fits = units[given]
    if fits is not None and fits != linear:
        kind = 'a linear' if linear else 'a rotary'
        raise ConfigError(f'{where} ({who}): {given} is not a unit of {kind} motor (it is '
                          f'{"linear: true" if linear else "rotary"})')
    if factor == 'counts' and interface != 'effort':
        key = 'counts_per_meter' if linear else 'counts_per_revolution'
        counts = _constant(value, key, path, who, given)
        factor = (1.0 if linear else TAU) / counts
    elif isinstance(factor, str):
        factor = _constant(value, factor, path, who, given)
        if given == 'per_mille':
            factor /= 1000.0
    return factor, offset


def _constant(value, key, path, who, unit):
    """Return the constant ``key`` a unit needs: finite and > 0 (a torque constant: non-zero)."""
    if key not in value:
        raise ConfigError(f'{path} ({who}): {unit} needs {key}')
    number = _checks.as_number(value[key], f'{path}.{key} ({who})')
    if key == 'torque_constant':
        ok = math.isfinite(number) and number != 0.0
    else:
        ok = math.isfinite(number) and number > 0.0
    if not ok:
        raise ConfigError(f'{path}.{key} ({who}) must be finite and '
                          f'{"non-zero" if key == "torque_constant" else "> 0"}, got {number!r}')
    return number


class UnitTable:
    """
    A set's driver units as arrays, actuator order: the edges' one form of the law.

    ``factor``, ``offset``: (3, nA), rows position, velocity, effort. :attr:`identity`: no
    actuator has units (the edges then do nothing).
    """

    def __init__(self, specs):
        units = [getattr(a, 'units', SI) or SI for a in specs]
        self.factor = np.array([u.factor for u in units], dtype=float).T.copy()
        self.offset = np.array([u.offset for u in units], dtype=float).T.copy()
        if not len(units):
            self.factor, self.offset = np.ones((3, 0)), np.zeros((3, 0))
        self.identity = all(u.identity for u in units)
        #: The state's three rows flattened (the bridge's ``flat`` without its 1.0).
        self.flat_factor = self.factor.reshape(-1)
        self.flat_offset = self.offset.reshape(-1)
        for arr in (self.factor, self.offset):
            arr.flags.writeable = False

    def states_to_si(self, values, cols=slice(None)):
        """Convert (3, k) driver ``values`` of actuators ``cols`` to SI, in place."""
        values *= self.factor[:, cols]
        values += self.offset[:, cols]
        return values

    def states_to_driver(self, values):
        """Return (3, nA) SI states as the drivers report them (a simulated robot's)."""
        return (values - self.offset) / self.factor

    def to_driver(self, k, values, cols=slice(None)):
        """Return interface ``k``'s SI ``values`` of actuators ``cols`` (last axis) as driven."""
        if values is None:
            return None
        return (values - self.offset[k, cols]) / self.factor[k, cols]

    def fields_to_driver(self, cols, fields):
        """
        Return a command's SI fields of actuators ``cols`` (last axis) as the drivers take them.

        ``fields``: (position, velocity, effort), or a trajectory's (positions, velocities,
        accelerations, efforts); None stays None. An acceleration scales as its velocity
        (an offset has no rate).
        """
        kinds = (0, 1, 2) if len(fields) == 3 else (0, 1, None, 2)
        return [None if x is None else
                x / self.factor[1, cols] if k is None else self.to_driver(k, x, cols)
                for k, x in zip(kinds, fields)]

    def to_si(self, k, values, cols=slice(None)):
        """Return interface ``k``'s driver ``values`` of actuators ``cols`` (last axis) in SI."""
        if values is None:
            return None
        return self.factor[k, cols] * values + self.offset[k, cols]

    def mit_to_driver(self, out, cols=slice(None)):
        """Write MIT rows ``out`` (m, 5: θ, θ̇, τ, kp, kd) of ``cols`` as driven, in place."""
        f, o = self.factor[:, cols], self.offset[:, cols]
        for k in range(3):
            out[:, k] -= o[k]
            out[:, k] /= f[k]
        out[:, 3] *= f[0] / f[2]
        out[:, 4] *= f[1] / f[2]
        return out

    def mit_to_si(self, out, cols=slice(None)):
        """Read MIT rows ``out`` (m, 5) of ``cols`` from driver units into SI, in place."""
        f, o = self.factor[:, cols], self.offset[:, cols]
        for k in range(3):
            out[:, k] *= f[k]
            out[:, k] += o[k]
        out[:, 3] *= f[2] / f[0]
        out[:, 4] *= f[2] / f[1]
        return out
