"""
The bridge's runtime-tunable numbers as flat ROS-style parameter names.

One table, used by the node to declare parameters and by anyone wanting to apply
a calibration dump without ROS::

    joints.<joint>.offset                 rad | m        finite
    joints.<joint>.mechanical_reduction   -              finite, non-zero
    joints.<joint>.default_position       rad | m        finite
    joints.<joint>.damping                N·m·s/rad | N·s/m   >= 0
    actuators.<actuator>.mechanical_reduction   -        finite, non-zero

>>> from transmission_bridge.transmissions import load_transmissions
>>> ts = load_transmissions({'transmissions': [{'name': 't', 'type': 'simple',
...     'actuators': [{'name': 'm'}], 'joints': [{'name': 'q'}]}]})
>>> sorted(parameter_values(ts))[:2]
['actuators.m.mechanical_reduction', 'joints.q.damping']
>>> apply_parameters(ts, {'joints.q.offset': 0.5}).joint('q').offset
0.5
"""

import collections
import re

from .errors import ConfigError

JOINT_FIELDS = collections.OrderedDict((
    ('offset', 'joint position offset added after the transmission map, rad (m if prismatic)'),
    ('mechanical_reduction', 'joint-side mechanical reduction, dimensionless, finite and '
                             'non-zero; negative reverses direction'),
    ('default_position', 'default (home) joint position used by ~/calibrate_to_default_pose, '
                         'rad (m if prismatic)'),
    ('damping', 'viscous loss in the transmission, N*m*s/rad (N*s/m if prismatic), >= 0; '
                'published effort = transmitted effort - damping * joint velocity'),
))
ACTUATOR_FIELDS = collections.OrderedDict((
    ('mechanical_reduction', 'actuator-side mechanical reduction, dimensionless, finite and '
                             'non-zero; negative reverses direction'),
))

# A ROS parameter name token: what `ros2 param set` accepts between dots.
_TOKEN = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')


def joint_parameter(joint, field):
    """Return the parameter name ``joints.<joint>.<field>``."""
    return f'joints.{joint}.{field}'


def actuator_parameter(actuator, field):
    """Return the parameter name ``actuators.<actuator>.<field>``."""
    return f'actuators.{actuator}.{field}'


def parameter_values(tset):
    """Return an ordered mapping of every tunable parameter name to its current value."""
    values = collections.OrderedDict()
    for name in tset.joint_names:
        spec = tset.joint(name)
        for field in JOINT_FIELDS:
            values[joint_parameter(name, field)] = getattr(spec, field)
    for name in tset.actuator_names:
        spec = tset.actuator(name)
        for field in ACTUATOR_FIELDS:
            values[actuator_parameter(name, field)] = getattr(spec, field)
    return values


def parameter_descriptions(tset):
    """Return a mapping parameter name -> description (units and range)."""
    out = collections.OrderedDict()
    for name in tset.joint_names:
        for field, text in JOINT_FIELDS.items():
            out[joint_parameter(name, field)] = f'joint {name!r}: {text}'
    for name in tset.actuator_names:
        for field, text in ACTUATOR_FIELDS.items():
            out[actuator_parameter(name, field)] = f'actuator {name!r}: {text}'
    return out


def check_parameter_names(tset):
    """Raise ConfigError if a joint or actuator name cannot be part of a ROS parameter name."""
    for kind, names in (('joint', tset.joint_names), ('actuator', tset.actuator_names)):
        for name in names:
            if not _TOKEN.match(name):
                raise ConfigError(
                    f'{kind} name {name!r} cannot be used in a ROS parameter name; use letters, '
                    'digits and underscores, not starting with a digit')


def split_parameter(name):
    """Return ``('joints'|'actuators', owner, field)`` for a tunable name, else None."""
    parts = name.split('.')
    if len(parts) != 3:
        return None
    group, owner, field = parts
    if group == 'joints' and field in JOINT_FIELDS:
        return parts
    if group == 'actuators' and field in ACTUATOR_FIELDS:
        return parts
    return None


def apply_parameters(tset, changes):
    """
    Return a new set with ``changes`` ({parameter name: value}) applied, all or nothing.

    Raises ConfigError naming the parameter, joint or actuator and the value if any
    change is unknown or invalid; ``tset`` itself never changes.
    """
    joint_changes = collections.defaultdict(dict)
    actuator_changes = collections.defaultdict(dict)
    for name, value in changes.items():
        parts = split_parameter(name)
        if parts is None:
            raise ConfigError(f'{name!r} is not a transmission parameter')
        group, owner, field = parts
        if group == 'joints':
            tset.joint(owner)
            joint_changes[owner][field] = value
        else:
            tset.actuator(owner)
            actuator_changes[owner][field] = value
    return tset.replace_fields(joints=joint_changes, actuators=actuator_changes)
