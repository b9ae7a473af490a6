"""
Read the transmissions YAML (doc/formats.md) into a :class:`TransmissionSet`.

Every problem raises :class:`ConfigError` naming the transmission as written, then the key
path that holds it (the index only locates it), for example ``transmission 'arm':
transmissions[1].joints[0].mechanical_reduction (joint 'elbow'): must be finite and
non-zero, got 0.0``. Unknown keys are errors; values are never
silently replaced by defaults. YAML is parsed with ``yaml.safe_load`` only.
"""

import collections.abc

from . import _checks
from ._checks import checked_mapping as _mapping
from .errors import ConfigError
from .fields import efficiency_fields, linkage_geometry
from .output_encoder import output_encoder, spring
from .spec import ActuatorSpec, JointSpec, TransmissionSpec, unique_names
from .transmission_set import TransmissionSet
from .units import driver_units, fields_in_si
from .urdf import transmissions_from_urdf
from .._shared import sources as _sources

_TOP_KEYS = ('transmissions',)
_TRANSMISSION_KEYS = ('name', 'type', 'actuators', 'joints', 'matrix')
_ACTUATOR_KEYS = {'name': None, 'mechanical_reduction': _checks.reduction, 'limits': None,
                  'encoder': None, 'rotor_inertia': _checks.non_negative, 'friction': None,
                  'efficiency': None, 'linear': None, 'units': None, 'output_encoder': None,
                  'spring': None}
# friction: {key: spec field} (doc/dynamics.md)
FRICTION_KEYS = {'viscous': 'viscous_friction', 'coulomb': 'coulomb_friction'}
_JOINT_KEYS = {
    'name': None,
    'mechanical_reduction': _checks.reduction,
    'offset': _checks.finite,
    'default_position': _checks.finite,
    'damping': _checks.non_negative,
    'limits': None,
}
# limits: {key: (spec field, check)}; the same keys for joints and actuators.
JOINT_LIMIT_KEYS = {
    'lower': ('lower_limit', _checks.bound),
    'upper': ('upper_limit', _checks.bound),
    'velocity': ('velocity_limit', _checks.magnitude_limit),
    'effort': ('effort_limit', _checks.magnitude_limit),
}
ACTUATOR_LIMIT_KEYS = JOINT_LIMIT_KEYS
# A linkage's geometry, per joint and per actuator (doc/formats.md, "Linkage").
LINKAGE_JOINT_KEYS = ('type', 'axis', 'origin')
LINKAGE_ACTUATOR_KEYS = ('kind', 'axis', 'direction', 'origin', 'crank', 'attachment',
                         'rod_length')


def load_transmissions(source):
    """
    Return the :class:`TransmissionSet` described by ``source``.

    ``source`` is a path to a YAML or URDF file (``.urdf``, ``.xml``), URDF text
    (a ``robot_description``), or an already parsed YAML mapping.
    """
    return _sources.load(source, ConfigError, transmissions_from_urdf, parse_transmissions)


def parse_transmissions(data):
    """Build a :class:`TransmissionSet` from the parsed YAML mapping ``data``."""
    _mapping(data, 'top level', _TOP_KEYS)
    if 'transmissions' not in data:
        raise ConfigError("missing key 'transmissions'")
    items = data['transmissions']
    if not isinstance(items, list):
        raise ConfigError(f'transmissions must be a list, got {items!r}')
    specs = [_named(item, f'transmissions[{i}]') for i, item in enumerate(items)]
    outputs = [(a.output_encoder.name, s.name) for s in specs for a in s.actuators
               if a.output_encoder is not None]
    if outputs:                 # one name space with the actuators on their topics
        unique_names([(a.name, s.name) for s in specs for a in s.actuators],
                     'actuator')
        unique_names([(a.name, s.name) for s in specs for a in s.actuators] + outputs,
                     'actuator or output encoder')
    return TransmissionSet(specs)


def _named(item, path):
    """Return the spec of ``item``; a refusal names the transmission as written first."""
    try:
        return _transmission(item, path)
    except ConfigError as exc:
        name = item.get('name') if isinstance(item, collections.abc.Mapping) else None
        if not isinstance(name, str) or not name.strip():
            raise
        raise ConfigError(f'transmission {name!r}: {exc}') from None


def _required_name(value, path):
    if 'name' not in value:
        raise ConfigError(f"{path}: missing key 'name'")
    return _checks.name(value['name'], f'{path}.name')


def _transmission(value, path):
    _mapping(value, path, _TRANSMISSION_KEYS)
    name = _required_name(value, path)
    where = path
    for key in ('type', 'actuators', 'joints'):
        if key not in value:
            raise ConfigError(f'{where}: missing key {key!r}')
    kind = value['type']
    if not isinstance(kind, str):
        raise ConfigError(f'{where}.type must be a string, got {kind!r}')
    linkage = kind == 'linkage'
    actuators, actuator_geometry = _entries(
        value['actuators'], f'{path}.actuators', 'actuator', _ACTUATOR_KEYS, ActuatorSpec,
        LINKAGE_ACTUATOR_KEYS if linkage else ())
    joints, joint_geometry = _entries(value['joints'], f'{path}.joints', 'joint', _JOINT_KEYS,
                                      JointSpec, LINKAGE_JOINT_KEYS if linkage else ())
    geometry = (linkage_geometry(joint_geometry, actuator_geometry, path) if linkage
                else None)
    try:
        return TransmissionSpec(name, kind, actuators, joints, value.get('matrix'), geometry)
    except ConfigError as exc:      # its message names the transmission: _named says so
        message = str(exc).removeprefix(f'transmission {name!r}: ')
        raise ConfigError(f'{path}: {message}') from None


def _entries(items, path, kind, keys, spec_class, geometry_keys=()):
    """Return the specs of ``items`` and, per item, ``(name, {geometry key: value})``."""
    if not isinstance(items, list):
        raise ConfigError(f'{path} must be a list, got {items!r}')
    specs, geometry = [], []
    for i, item in enumerate(items):
        where = f'{path}[{i}]'
        _mapping(item, where, tuple(keys) + tuple(geometry_keys))
        name = _required_name(item, where)
        geometry.append((name, {k: item[k] for k in geometry_keys if k in item}))
        fields = {}
        for key, check in keys.items():
            if key == 'limits' and key in item:
                fields.update(_limits(item[key], f'{where}.limits', kind, name))
            elif key == 'encoder' and key in item:
                _mapping(item[key], f'{where}.encoder', ('period',))
                if 'period' not in item[key]:
                    raise ConfigError(f'{where}.encoder ({kind} {name!r}): missing key '
                                      "'period' (the reading wraps every period)")
                fields['encoder_period'] = _checks.encoder_period(
                    item[key]['period'], f'{where}.encoder.period ({kind} {name!r})')
            elif key == 'friction' and key in item:
                _mapping(item[key], f'{where}.friction', tuple(FRICTION_KEYS))
                fields.update({FRICTION_KEYS[k]: _checks.non_negative(
                    v, f'{where}.friction.{k} ({kind} {name!r})') for k, v in item[key].items()})
            elif key == 'efficiency' and key in item:
                fields.update(efficiency_fields(item[key], f'{where}.efficiency',
                                                f'{kind} {name!r}'))
            elif key == 'linear' and key in item:
                if not isinstance(item[key], bool):
                    raise ConfigError(f'{where}.linear ({kind} {name!r}) must be true or false, '
                                      f'got {item[key]!r}')
                fields['linear'] = item[key]
            elif key in ('output_encoder', 'spring') and key in item:
                fields[key] = (output_encoder if key == 'output_encoder' else spring)(
                    item[key], f'{where}.{key}', f'{kind} {name!r}')
            elif key == 'units' and key in item:
                fields['units'] = driver_units(item[key], f'{where}.units', f'{kind} {name!r}',
                                               item.get('linear') is True
                                               or item.get('kind', 'rotary') != 'rotary')
            elif key not in ('name', 'limits', 'encoder', 'friction') and key in item:
                fields[key] = check(item[key], f'{where}.{key} ({kind} {name!r})')
        if 'units' in fields:
            fields_in_si(fields)
        try:
            specs.append(spec_class(name, **fields))
        except ConfigError as exc:
            raise ConfigError(f'{where}: {exc}') from None
    return tuple(specs), geometry


def _limits(value, path, kind, name):
    """Return the spec fields of a ``limits`` mapping (doc/formats.md)."""
    keys = JOINT_LIMIT_KEYS if kind == 'joint' else ACTUATOR_LIMIT_KEYS
    _mapping(value, path, tuple(keys))
    return {keys[k][0]: keys[k][1](v, f'{path}.{k} ({kind} {name!r})') for k, v in value.items()}
