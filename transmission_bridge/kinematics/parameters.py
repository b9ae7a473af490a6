"""
The kinematics node's runtime-tunable numbers as flat ROS-style parameter names.

One table, pure (no ROS)::

    gravity                              m/s²         3 finite numbers, world frame
    joints.<joint>.damping               N·m·s/rad | N·s/m       >= 0
    joints.<joint>.default_position      rad | m      within the joint's limits
    joints.<joint>.default_translation   m            screw joints only; sets default_position
                                                      (refused for |pitch| < sqrt(eps))
    payload.body                         -            a body's name ('' with mass 0: none)
    payload.mass                         kg           >= 0, finite
    payload.com                          m            3 finite numbers, payload.body's frame

The three payload values are one payload (:meth:`Model.with_payload`); set them together
(one ``set_parameters_atomically`` call) to move it to another body.

>>> from transmission_bridge.kinematics import load_model
>>> m = load_model({'bodies': [{'name': 'b', 'joint': {'name': 's', 'type': 'screw',
...     'axis': [0, 0, 1], 'pitch': 0.02}}]})
>>> list(parameter_values(m))[:4]
['gravity', 'joints.s.damping', 'joints.s.default_position', 'joints.s.default_translation']
>>> moved = apply_parameters(m, {'joints.s.default_translation': 0.01})
>>> round(moved.joint('s').default_position, 6)
3.141593
"""

import collections

from . import _checks
from .errors import ModelError
from .screw import ScrewJoint

GRAVITY = 'gravity'
DAMPING = 'damping'
DEFAULT_POSITION = 'default_position'
DEFAULT_TRANSLATION = 'default_translation'
PAYLOAD_BODY, PAYLOAD_MASS, PAYLOAD_COM = 'payload.body', 'payload.mass', 'payload.com'
PAYLOAD = (PAYLOAD_BODY, PAYLOAD_MASS, PAYLOAD_COM)

DESCRIPTIONS = {
    GRAVITY: 'gravity vector in the world frame, m/s^2, 3 finite numbers',
    DAMPING: 'viscous damping b >= 0, N*m*s/rad (N*s/m if prismatic); damping force -b*v',
    DEFAULT_POSITION: 'default (home) position, rad (m if prismatic), within the limits',
    DEFAULT_TRANSLATION: 'default translation along the screw axis, m; sets default_position '
                         '= 2*pi*translation/pitch',
    PAYLOAD_BODY: "body the payload is fixed to ('' for none); with payload.mass and "
                  'payload.com, one payload',
    PAYLOAD_MASS: 'payload mass, kg, >= 0 (0: no payload); gravity, passive torques, energy '
                  'and trajectory feed-forward include it at once',
    PAYLOAD_COM: "payload's centre of mass in payload.body's frame, m, 3 finite numbers",
}


def joint_parameter(joint, field):
    """Return the parameter name ``joints.<joint>.<field>``."""
    return f'joints.{joint}.{field}'


def parameter_values(model):
    """Return an ordered mapping of every tunable parameter name to its current value."""
    values = collections.OrderedDict()
    values[GRAVITY] = [float(g) for g in model.gravity]
    for joint in model.joints:
        values[joint_parameter(joint.name, DAMPING)] = joint.damping
        values[joint_parameter(joint.name, DEFAULT_POSITION)] = joint.default_position
        if isinstance(joint, ScrewJoint):
            values[joint_parameter(joint.name, DEFAULT_TRANSLATION)] = joint.default_translation
    body, mass, com = model.payload or ('', 0.0, (0.0, 0.0, 0.0))
    values[PAYLOAD_BODY], values[PAYLOAD_MASS], values[PAYLOAD_COM] = body, mass, list(com)
    return values


def parameter_descriptions(model):
    """Return a mapping parameter name -> description (units and range)."""
    out = collections.OrderedDict()
    for name in parameter_values(model):
        if name in PAYLOAD:
            out[name] = DESCRIPTIONS[name]
            continue
        parts = name.split('.')
        field = parts[-1] if len(parts) == 3 else GRAVITY
        lo, hi = ((None, None) if field == GRAVITY else
                  model.joint(parts[1]).position_limits)
        text = DESCRIPTIONS[field]
        if field == DEFAULT_POSITION:
            text += f' [{lo}, {hi}]'
        out[name] = text if field == GRAVITY else f'joint {parts[1]!r}: {text}'
    return out


def split_parameter(name):
    """Return ``(joint, field)`` for a per-joint tunable name, ``(None, 'gravity')``, or None."""
    if name == GRAVITY:
        return None, GRAVITY
    if name in PAYLOAD:
        return None, name
    parts = name.split('.')
    if len(parts) == 3 and parts[0] == 'joints' and parts[2] in (
            DAMPING, DEFAULT_POSITION, DEFAULT_TRANSLATION):
        return parts[1], parts[2]
    return None


def preferred_overrides(given):
    """
    Return the overrides of a params file to apply: of two coupled values, the one given.

    A params file dumped from a node holds both a screw joint's ``default_position`` and its
    ``default_translation``; an override of either wins over the file's other one.
    """
    out = dict(given)
    for name in given:
        if name.endswith('.' + DEFAULT_TRANSLATION):
            out.pop(name[:-len(DEFAULT_TRANSLATION)] + DEFAULT_POSITION, None)
    return out


def apply_parameters(model, changes):
    """
    Return a new model with ``changes`` ({parameter name: value}) applied, all or nothing.

    Raises ModelError naming the joint and value if any change is invalid; ``model``
    never changes.
    """
    per_joint = collections.defaultdict(dict)
    gravity = None
    payload = {}
    for name, value in changes.items():
        parsed = split_parameter(name)
        if parsed is None:
            raise ModelError(f'{name!r} is not a kinematics parameter')
        joint, field = parsed
        if field == GRAVITY:
            gravity = _checks.vector(value, 3, GRAVITY)
            continue
        if field in PAYLOAD:
            payload[field] = value
            continue
        target = model.joint(joint)
        if target.num_positions == 0:
            raise ModelError(f'joint {joint!r} is fixed: it has no {field}')
        if field == DEFAULT_TRANSLATION and not isinstance(target, ScrewJoint):
            raise ModelError(f'joint {joint!r}: default_translation is only for screw joints')
        per_joint[joint][field] = value
    new = model if gravity is None else model.with_gravity(gravity)
    for joint, fields in per_joint.items():
        if DEFAULT_POSITION in fields and DEFAULT_TRANSLATION in fields:
            raise ModelError(f'joint {joint!r}: set default_position or default_translation, '
                             'not both')
        if DEFAULT_TRANSLATION in fields:
            moved = new.joint(joint).with_default_translation(fields.pop(DEFAULT_TRANSLATION))
            fields[DEFAULT_POSITION] = moved.default_position
    new = new.with_joints(per_joint) if per_joint else new
    return _with_payload(new, payload) if payload else new


def _with_payload(model, changes):
    """Return ``model`` with its payload's body, mass and centre of mass changed."""
    current = parameter_values(model)
    body, mass, com = (changes.get(k, current[k]) for k in PAYLOAD)
    if not isinstance(body, str):
        raise ModelError(f'{PAYLOAD_BODY} must be a body name, got {body!r}')
    mass = _checks.non_negative(mass, PAYLOAD_MASS)
    com = _checks.vector(com, 3, PAYLOAD_COM)
    if not body and mass == 0.0:
        return model.without_payload()
    if not body:
        raise ModelError(f'{PAYLOAD_MASS} {mass!r} needs a {PAYLOAD_BODY}: name the body '
                         'the payload is fixed to')
    if body not in model.body_names:
        raise ModelError(f'{PAYLOAD_BODY}: unknown body {body!r}')
    return model.with_payload(body, mass, com)
