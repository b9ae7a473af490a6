"""
Fields both transmission loaders read (YAML :mod:`.loader`, URDF :mod:`.urdf`): one parser each.

An actuator's ``efficiency`` (driving and driven, or a power screw's geometry), a linkage's
geometry from its entries, a URDF actuator's ``<units>`` and ``<output_encoder>``. Refusals
name the key path and the item as written.
"""

from . import _checks
from ._checks import checked_mapping
from .errors import ConfigError
from .linkage import LinkageActuator, LinkageGeometry, LinkageJoint
from .losses import screw_efficiency
from .output_encoder import output_encoder, spring
from .units import driver_units, fields_in_si, xml_units

# efficiency: {driving, driven} (doc/formats.md, "Losses"), or a screw's geometry instead
EFFICIENCY_KEYS = {'driving': ('efficiency_driving', _checks.efficiency_driving),
                   'driven': ('efficiency_driven', _checks.efficiency_driven)}
SCREW_KEYS = ('lead', 'mean_diameter', 'friction_coefficient', 'flank_angle')


def efficiency_fields(value, path, who):
    """
    Return the spec fields of an ``efficiency`` mapping: driving and driven, or a screw's.

    ``{driving: η_f, driven: η_b}`` (each 1 when left out), or the four keys of a power
    screw's or worm's geometry (:func:`.losses.screw_efficiency`), not both. ``path`` locates
    the mapping, ``who`` names its actuator in a refusal.
    """
    checked_mapping(value, f'{path} ({who})', tuple(EFFICIENCY_KEYS) + SCREW_KEYS)
    screw = [k for k in SCREW_KEYS if k in value]
    if not screw:
        return {EFFICIENCY_KEYS[k][0]: EFFICIENCY_KEYS[k][1](v, f'{path}.{k} ({who})')
                for k, v in value.items()}
    if len(screw) != len(SCREW_KEYS) or any(k in value for k in EFFICIENCY_KEYS):
        raise ConfigError(f'{path} ({who}): a screw takes all of {", ".join(SCREW_KEYS)} and '
                          f'neither driving nor driven, got {", ".join(value)}')
    eta_f, eta_b = screw_efficiency(*(value[k] for k in SCREW_KEYS), who=f'{path} ({who})')
    return {'efficiency_driving': eta_f, 'efficiency_driven': eta_b}


def linkage_geometry(joints, actuators, path):
    """Build a linkage's geometry from its entries' geometry keys; errors name the entry."""
    built = []
    for items, where, make in ((joints, 'joints', _linkage_joint),
                               (actuators, 'actuators', _linkage_actuator)):
        parts = []
        for i, (name, given) in enumerate(items):
            try:
                parts.append(make(given))
            except ConfigError as exc:
                raise ConfigError(f'{path}.{where}[{i}] ({name!r}): {exc}') from None
        built.append(parts)
    try:
        return LinkageGeometry(*built)
    except ConfigError as exc:
        message = str(exc)
        for k, (name, _) in enumerate(actuators):       # name the actuator, not its index
            message = message.replace(f'actuators[{k}]', f'actuator {name!r}')
        raise ConfigError(f'{path}: {message}') from None


def _linkage_joint(given):
    return LinkageJoint(given.get('type', 'revolute'), given.get('axis', (0.0, 0.0, 1.0)),
                        given.get('origin', (0.0, 0.0, 0.0)))


def _linkage_actuator(given):
    if 'kind' not in given:
        raise ConfigError("missing key 'kind' (rotary, slider or cylinder)")
    if 'axis' in given and 'direction' in given:
        raise ConfigError('give axis (rotary) or direction (slider), not both')
    axis = given.get('direction', given.get('axis'))
    if given['kind'] == 'slider' and 'axis' in given:
        raise ConfigError("a slider takes 'direction', not 'axis'")
    if given['kind'] == 'rotary' and 'direction' in given:
        raise ConfigError("a rotary actuator takes 'axis', not 'direction'")
    for key in ('origin', 'attachment'):
        if key not in given:
            raise ConfigError(f'missing key {key!r}')
    return LinkageActuator(given['kind'], given['origin'], given['attachment'], axis,
                           given.get('crank'), given.get('rod_length'))


def xml_actuator_field(child, where, owner):
    """
    Return a URDF actuator's ``<units .../>`` (raw), ``<output_encoder .../>`` or ``<spring>``.

    Attributes are the YAML's keys; a refusal names the element and the actuator.
    """
    if child.tag == 'units':
        return xml_units(child, where, owner)
    value = dict(child.attrib)
    for key in ('deflection_limit', 'offset', 'stiffness', 'damping'):
        if key in value:
            try:
                value[key] = float(value[key])
            except ValueError:
                raise ConfigError(f'{where}, actuator {owner!r}: <{child.tag} {key}> must '
                                  f'be a number, got {value[key]!r}') from None
    parse = output_encoder if child.tag == 'output_encoder' else spring
    return parse(value, f'{where}: <{child.tag}>', f'actuator {owner!r}')


def units_in_si(fields, path, who, shape):
    """Parse a URDF actuator's raw ``units`` in ``fields``; make its fields SI (the YAML's way)."""
    linear = fields.get('linear', False) or shape.get('kind', 'rotary') != 'rotary'
    fields['units'] = driver_units(fields['units'], path, who, linear)
    fields_in_si(fields)
