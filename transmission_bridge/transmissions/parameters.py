"""
The bridge's runtime-tunable numbers as flat ROS-style parameter names.

One table, used by the node to declare parameters and by anyone wanting to apply
a calibration dump without ROS::

    joints.<joint>.offset                 rad | m        finite
    joints.<joint>.mechanical_reduction   -              finite, non-zero
    joints.<joint>.default_position       rad | m        finite
    joints.<joint>.damping                N·m·s/rad | N·s/m   >= 0
    joints.<joint>.limits.lower           rad | m        not NaN; -.inf: no limit
    joints.<joint>.limits.upper           rad | m        >= lower; .inf: no limit
    joints.<joint>.limits.velocity        rad/s | m/s    > 0; .inf: no limit
    joints.<joint>.limits.effort          N·m | N        > 0; .inf: no limit
    actuators.<actuator>.mechanical_reduction   -        finite, non-zero
    actuators.<actuator>.limits.velocity  rad/s | m/s    > 0; .inf: no limit
    actuators.<actuator>.limits.effort    N·m | N        > 0; .inf: no limit
    actuators.<actuator>.rotor_inertia    kg·m² | kg     >= 0
    actuators.<actuator>.friction.viscous N·m·s/rad | N·s/m   >= 0
    actuators.<actuator>.friction.coulomb N·m | N        >= 0
    actuators.<actuator>.efficiency.driving  -           in (0, 1]
    actuators.<actuator>.efficiency.driven   -           <= 1 (<= 0: self-locking)
    transmissions.<coupling>.matrix       -              N*N numbers, row-major, invertible

A coupling's joints and actuators have no ``mechanical_reduction`` parameter: the
matrix holds its ratios; nor have a linkage's joints (its rods and its actuators'
reductions are its ratio; its geometry changes by reloading the file, ``~/reload``).

>>> from transmission_bridge.transmissions import load_transmissions
>>> ts = load_transmissions({'transmissions': [{'name': 't', 'type': 'simple',
...     'actuators': [{'name': 'm'}], 'joints': [{'name': 'q'}]}]})
>>> list(parameter_values(ts))[:3]
['joints.q.offset', 'joints.q.mechanical_reduction', 'joints.q.default_position']
>>> apply_parameters(ts, {'joints.q.offset': 0.5}).joint('q').offset
0.5
"""

import collections
import re

from .errors import ConfigError

# Parameter field -> JointSpec / ActuatorSpec attribute, where the two differ.
ATTRIBUTES = {'limits.lower': 'lower_limit', 'limits.upper': 'upper_limit',
              'limits.velocity': 'velocity_limit', 'limits.effort': 'effort_limit',
              'friction.viscous': 'viscous_friction', 'friction.coulomb': 'coulomb_friction',
              'efficiency.driving': 'efficiency_driving',
              'efficiency.driven': 'efficiency_driven'}
_LIMIT_TEXT = {
    'limits.lower': 'lowest position the bridge commands, rad (m if prismatic); -.inf: none',
    'limits.upper': 'highest position the bridge commands, rad (m if prismatic); .inf: none',
    'limits.velocity': 'largest speed the bridge commands, rad/s (m/s if prismatic), > 0; '
                       '.inf: none',
    'limits.effort': 'largest effort the bridge commands, N*m (N if prismatic), > 0; '
                     '.inf: none',
}
MATRIX_TEXT = ('coupling matrix, rows = joints, columns = actuators, row-major '
               '(x_j = M x_a + offset); must stay invertible')
JOINT_FIELDS = collections.OrderedDict((
    ('offset', 'joint position offset added after the transmission map, rad (m if prismatic)'),
    ('mechanical_reduction', 'joint-side mechanical reduction, dimensionless, finite and '
                             'non-zero; negative reverses direction'),
    ('default_position', 'default (home) joint position used by ~/calibrate_to_default_pose, '
                         'rad (m if prismatic)'),
    ('damping', 'viscous loss in the transmission, N*m*s/rad (N*s/m if prismatic), >= 0; '
                'published effort = transmitted effort - damping * joint velocity'),
    *_LIMIT_TEXT.items(),
))
ACTUATOR_FIELDS = collections.OrderedDict((
    ('mechanical_reduction', 'actuator-side mechanical reduction, dimensionless, finite and '
                             'non-zero; negative reverses direction'),
    *((k, _LIMIT_TEXT[k].replace(' (m if prismatic)', '').replace(' (m/s if prismatic)', '')
       .replace(' (N if prismatic)', '') + ' (the motor side)') for k in _LIMIT_TEXT),
    ('rotor_inertia', "the motor's rotor inertia about its axis, kg*m^2 (kg if linear), "
                      '>= 0; reflected to the joints by the dynamics'),
    ('friction.viscous', "the motor's viscous friction, N*m*s/rad (N*s/m if linear), >= 0"),
    ('friction.coulomb', "the motor's Coulomb friction, N*m (N if linear), >= 0"),
    ('efficiency.driving', "the gear stage's efficiency when the motor drives the load, "
                           'in (0, 1]'),
    ('efficiency.driven', "the gear stage's efficiency when the load drives the motor, "
                          '<= 1; <= 0: self-locking (cannot be back-driven)'),
))

# A ROS parameter name token: what `ros2 param set` accepts between dots.
_TOKEN = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')


def joint_parameter(joint, field):
    """Return the parameter name ``joints.<joint>.<field>``."""
    return f'joints.{joint}.{field}'


def actuator_parameter(actuator, field):
    """Return the parameter name ``actuators.<actuator>.<field>``."""
    return f'actuators.{actuator}.{field}'


def matrix_parameter(transmission):
    """Return the parameter name ``transmissions.<transmission>.matrix``."""
    return f'transmissions.{transmission}.matrix'


def _owners(tset):
    """Yield (parameter name, description, value) of every tunable number, in order."""
    coupled = {m.name for s in tset.specs if s.matrix is not None
               for m in s.joints + s.actuators}
    coupled |= {j.name for s in tset.specs if s.geometry is not None for j in s.joints}
    for kind, names, fields, spec_of, param in (
            ('joint', tset.joint_names, JOINT_FIELDS, tset.joint, joint_parameter),
            ('actuator', tset.actuator_names, ACTUATOR_FIELDS, tset.actuator,
             actuator_parameter)):
        for name in names:
            spec = spec_of(name)
            for field, text in fields.items():
                if field == 'mechanical_reduction' and name in coupled:
                    continue
                yield (param(name, field), f'{kind} {name!r}: {text}',
                       getattr(spec, ATTRIBUTES.get(field, field)))
    for spec in tset.specs:
        if spec.matrix is not None:
            yield (matrix_parameter(spec.name), f'transmission {spec.name!r}: {MATRIX_TEXT}',
                   [x for row in spec.matrix for x in row])


def parameter_values(tset):
    """Return an ordered mapping of every tunable parameter name to its current value."""
    return collections.OrderedDict((name, value) for name, _, value in _owners(tset))


def parameter_descriptions(tset):
    """Return a mapping parameter name -> description (units and range)."""
    return collections.OrderedDict((name, text) for name, text, _ in _owners(tset))


def check_parameter_names(tset):
    """Raise ConfigError if a joint or actuator name cannot be part of a ROS parameter name."""
    for kind, names in (('joint', tset.joint_names), ('actuator', tset.actuator_names)):
        for name in names:
            if not _TOKEN.match(name):
                raise ConfigError(
                    f'{kind} name {name!r} cannot be used in a ROS parameter name; use letters, '
                    'digits and underscores, not starting with a digit')


def split_parameter(name):
    """Return ``('joints'|'actuators'|'transmissions', owner, field)`` for a tunable name."""
    parts = name.split('.', 2)
    if len(parts) != 3:
        return None
    group, owner, field = parts
    if group == 'joints' and field in JOINT_FIELDS:
        return parts
    if group == 'actuators' and field in ACTUATOR_FIELDS:
        return parts
    if group == 'transmissions' and field == 'matrix':
        return parts
    return None


def preferred_overrides(given):
    """Return the overrides of a params file to apply: all of them (none are coupled)."""
    return given


def apply_parameters(tset, changes):
    """
    Return a new set with ``changes`` ({parameter name: value}) applied, all or nothing.

    Raises ConfigError naming the parameter, joint or actuator and the value if any
    change is unknown or invalid; ``tset`` itself never changes.
    """
    joint_changes = collections.defaultdict(dict)
    actuator_changes = collections.defaultdict(dict)
    matrices = {}
    known = parameter_values(tset)
    for name, value in changes.items():
        parts = split_parameter(name)
        if parts is None:
            raise ConfigError(f'{name!r} is not a transmission parameter')
        group, owner, field = parts
        if group == 'joints':
            tset.joint(owner)
        elif group == 'actuators':
            tset.actuator(owner)
        if name not in known:
            raise ConfigError(f'{name!r} is not a parameter of this robot (the ratios of a '
                              'coupling are in its transmissions.<name>.matrix; a '
                              "linkage's joints have no mechanical_reduction)")
        if group == 'transmissions':
            matrices[owner] = _square(value, name)
        elif group == 'joints':
            joint_changes[owner][ATTRIBUTES.get(field, field)] = value
        else:
            actuator_changes[owner][ATTRIBUTES.get(field, field)] = value
    return tset.replace_fields(joints=joint_changes, actuators=actuator_changes,
                               matrices=matrices)


def _square(values, name):
    """Return a row-major list of N*N numbers as N rows; ConfigError otherwise."""
    try:
        flat = [float(x) for x in values]
    except (TypeError, ValueError):
        raise ConfigError(f'{name} must be a list of numbers, got {values!r}') from None
    size = int(round(len(flat) ** 0.5))
    if size * size != len(flat) or not flat:
        raise ConfigError(f'{name} must hold N*N numbers (row-major), got {len(flat)}')
    return [flat[i * size:(i + 1) * size] for i in range(size)]
