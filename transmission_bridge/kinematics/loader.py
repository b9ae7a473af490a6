"""
Read the robot model YAML (doc/formats.md: bodies form or DH form) into a :class:`Model`.

Every problem raises :class:`ModelError` with the key path that holds it, e.g.
``bodies[1].joint: joint 'j2': damping must be >= 0, got -1.0``. Unknown keys are
errors. YAML is parsed with ``yaml.safe_load`` only.
"""

import collections.abc

import numpy as np

from . import _checks
from .body import Body, WORLD
from .errors import ModelError
from .fixed import FixedJoint
from .inertial import inertia_problem, Inertial
from .joint import Mimic
from .model import DEFAULT_GRAVITY, Model
from .prismatic import PrismaticJoint
from .revolute import RevoluteJoint
from .screw import ScrewJoint
from .spatial import dh_parts, origin_transform
from .._shared import sources as _sources

JOINT_TYPES = {cls.TYPE: cls for cls in (RevoluteJoint, PrismaticJoint, ScrewJoint, FixedJoint)}

_TOP_KEYS = ('name', 'gravity', 'bodies', 'dh')
_BODY_KEYS = ('name', 'parent', 'joint', 'inertial')
_JOINT_KEYS = ('name', 'type', 'axis', 'pitch', 'origin', 'damping', 'limits',
               'default_position', 'default_translation', 'mimic')
_MIMIC_KEYS = ('joint', 'multiplier', 'offset')
_ORIGIN_KEYS = ('xyz', 'rpy')
_LIMIT_KEYS = ('lower', 'upper', 'velocity')
_INERTIAL_KEYS = ('mass', 'com', 'inertia')
_INERTIA_KEYS = ('ixx', 'iyy', 'izz', 'ixy', 'ixz', 'iyz')
_DH_KEYS = ('convention', 'rows')
_DH_ROW_KEYS = ('name', 'link', 'a', 'alpha', 'd', 'theta', 'type', 'inertial', 'limits',
                'damping', 'default_position')


def load_model(source):
    """
    Return the :class:`Model` described by ``source``.

    ``source`` is a path to a YAML or URDF file (``.urdf``, ``.xml``), URDF text
    (a ``robot_description``), or an already parsed YAML mapping.
    """
    from .urdf import model_from_urdf
    return _computable(_sources.load(source, ModelError, model_from_urdf, parse_model))


def _computable(model):
    """
    Return ``model``, or raise ModelError where its numbers overflow at the default pose.

    Each number may be finite and their products not (an origin or a centre of mass at
    1e308 m): then no pose or torque can be computed. Names the first body.
    """
    q = model.default_positions
    with np.errstate(all='ignore'):
        poses = model.forward_kinematics(q)
        for name in model.body_names:
            if not np.isfinite(poses[name]).all():
                raise ModelError(f'body {name!r}: its pose at the default positions overflows '
                                 '(an origin too far out to compute with)')
        if not np.isfinite(model.gravity_generalized_forces(q)).all():
            raise ModelError('gravity at the default positions overflows (a mass or a centre '
                             'of mass too large to compute with)')
    return model


def parse_model(data):
    """
    Build a :class:`Model` from the parsed YAML mapping ``data``.

    A non-physical inertia is kept with a note in the model's ``warnings`` (gravity and
    poses do not use it); everything else that is wrong is a ModelError.
    """
    _mapping(data, 'top level', _TOP_KEYS)
    name = _checks.name(data.get('name', 'robot'), 'name')
    gravity = _checks.vector(data.get('gravity', DEFAULT_GRAVITY), 3, 'gravity')
    if ('bodies' in data) == ('dh' in data):
        raise ModelError("give exactly one of 'bodies' and 'dh'")
    notes = []
    if 'bodies' in data:
        items = _list(data['bodies'], 'bodies')
        bodies = [_body(item, f'bodies[{i}]', notes) for i, item in enumerate(items)]
    else:
        bodies = _dh(data['dh'], notes)
    return Model(bodies, name, gravity, warnings=notes)


def _mapping(value, path, allowed):
    if not isinstance(value, collections.abc.Mapping):
        raise ModelError(f'{path} must be a mapping, got {value!r}')
    unknown = [k for k in value if k not in allowed]
    if unknown:
        raise ModelError(f'{path}: unknown key {unknown[0]!r}; allowed keys are '
                         f'{", ".join(allowed)}')
    return value


def _list(value, path):
    if not isinstance(value, list):
        raise ModelError(f'{path} must be a list, got {value!r}')
    return value


def _required(value, key, path):
    if key not in value:
        raise ModelError(f'{path}: missing key {key!r}')
    return value[key]


def _body(item, path, notes):
    _mapping(item, path, _BODY_KEYS)
    name = _checks.name(_required(item, 'name', path), f'{path}.name')
    parent = _checks.name(item.get('parent', WORLD), f'{path}.parent')
    joint = _joint(_required(item, 'joint', path), f'{path}.joint')
    inertial = _inertial(item.get('inertial', {}), f'{path}.inertial', f'body {name!r}',
                         notes)
    try:
        return Body(name, joint, inertial, parent)
    except ModelError as exc:
        raise ModelError(f'{path}: {exc}') from None


def _joint(item, path):
    _mapping(item, path, _JOINT_KEYS)
    name = _checks.name(_required(item, 'name', path), f'{path}.name')
    kind = _required(item, 'type', path)
    cls = JOINT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ModelError(f'{path}.type: unknown joint type {kind!r}; expected one of '
                         f'{", ".join(JOINT_TYPES)}')
    origin = _origin(item.get('origin', {}), f'{path}.origin')
    if cls is FixedJoint:
        extra = set(item) - {'name', 'type', 'origin'}
        if extra:
            raise ModelError(f'{path}: a fixed joint takes no {sorted(extra)[0]!r}')
        return FixedJoint(name, origin=origin)
    if 'pitch' in item and cls is not ScrewJoint:
        raise ModelError(f"{path}: 'pitch' is only for screw joints")
    if 'default_translation' in item and cls is not ScrewJoint:
        raise ModelError(f"{path}: 'default_translation' is only for screw joints")
    if 'default_position' in item and 'default_translation' in item:
        raise ModelError(f"{path}: give 'default_position' or 'default_translation', not both")
    fields = {'origin': origin, 'axis': _required(item, 'axis', path)}
    fields.update(_limits(item.get('limits', {}), f'{path}.limits'))
    if 'mimic' in item:
        fields['mimic'] = _mimic(item['mimic'], f'{path}.mimic')
    for key in ('damping', 'default_position'):
        if key in item:
            fields[key] = item[key]
    if cls is ScrewJoint:
        fields['pitch'] = item.get('pitch', 0.0)
    try:
        if 'default_translation' in item:
            joint = cls(name, **fields)
            return joint.with_default_translation(item['default_translation'])
        return cls(name, **fields)
    except ModelError as exc:
        raise ModelError(f'{path}: {exc}') from None


def _mimic(item, path):
    _mapping(item, path, _MIMIC_KEYS)
    joint = _checks.name(_required(item, 'joint', path), f'{path}.joint')
    return Mimic(joint, _checks.finite(item.get('multiplier', 1.0), f'{path}.multiplier'),
                 _checks.finite(item.get('offset', 0.0), f'{path}.offset'))


def _origin(item, path):
    _mapping(item, path, _ORIGIN_KEYS)
    xyz = _checks.vector(item.get('xyz', (0.0, 0.0, 0.0)), 3, f'{path}.xyz')
    rpy = _checks.vector(item.get('rpy', (0.0, 0.0, 0.0)), 3, f'{path}.rpy')
    return origin_transform(xyz, rpy)


def _limits(item, path):
    _mapping(item, path, _LIMIT_KEYS)
    out = {}
    for key, field in (('lower', 'lower'), ('upper', 'upper'), ('velocity', 'velocity_limit')):
        if key in item:
            out[field] = _checks.number(item[key], f'{path}.{key}')
    return out


def _inertial(item, path, owner, notes):
    _mapping(item, path, _INERTIAL_KEYS)
    inertia = _mapping(item.get('inertia', {}), f'{path}.inertia', _INERTIA_KEYS)
    try:
        out = Inertial(item.get('mass', 0.0), item.get('com', (0.0, 0.0, 0.0)),
                       owner=owner, physical=False, **inertia)
    except ModelError as exc:
        raise ModelError(f'{path}: {exc}') from None
    problem = inertia_problem(out.inertia)
    if problem:
        notes.append(f'{path} ({owner}): {problem}; kept as written (poses and gravity do '
                     'not use it)')
    return out


def _dh(item, notes):
    _mapping(item, 'dh', _DH_KEYS)
    convention = item.get('convention', 'standard')
    if convention not in ('standard', 'modified'):
        raise ModelError(f"dh.convention must be 'standard' or 'modified', got {convention!r}")
    rows = _list(_required(item, 'rows', 'dh'), 'dh.rows')
    bodies = []
    parent = WORLD
    for i, row in enumerate(rows):
        path = f'dh.rows[{i}]'
        _mapping(row, path, _DH_ROW_KEYS)
        name = _checks.name(_required(row, 'name', path), f'{path}.name')
        link = _checks.name(_required(row, 'link', path), f'{path}.link')
        kind = row.get('type', 'revolute')
        if kind not in ('revolute', 'prismatic', 'fixed'):
            raise ModelError(f'{path}.type must be revolute, prismatic or fixed, got {kind!r}')
        a, alpha, d, theta = (_checks.finite(row.get(k, 0.0), f'{path}.{k}')
                              for k in ('a', 'alpha', 'd', 'theta'))
        X_PJ, X_JB = dh_parts(a, alpha, d, theta, convention, kind)
        try:
            if kind == 'fixed':
                extra = set(row) & {'limits', 'damping', 'default_position'}
                if extra:
                    raise ModelError(f'a fixed row takes no {sorted(extra)[0]!r}')
                joint = FixedJoint(name, origin=X_PJ, child_transform=X_JB)
            else:
                fields = _limits(row.get('limits', {}), f'{path}.limits')
                for key in ('damping', 'default_position'):
                    if key in row:
                        fields[key] = row[key]
                joint = JOINT_TYPES[kind](name, axis=(0.0, 0.0, 1.0), origin=X_PJ,
                                          child_transform=X_JB, **fields)
        except ModelError as exc:
            raise ModelError(f'{path}: {exc}') from None
        inertial = _inertial(row.get('inertial', {}), f'{path}.inertial', f'body {link!r}',
                             notes)
        bodies.append(Body(link, joint, inertial, parent))
        parent = link
    return bodies


def dh_table(rows, convention='standard', types=None):
    """Build a DH model from ``[[a, alpha, d, theta], ...]`` rows (MATLAB's order)."""
    types = types or ['revolute'] * len(rows)
    return parse_model({'dh': {'convention': convention, 'rows': [
        {'name': f'joint{i + 1}', 'link': f'link{i + 1}', 'a': float(r[0]),
         'alpha': float(r[1]), 'd': float(r[2]), 'theta': float(r[3]), 'type': t}
        for i, (r, t) in enumerate(zip(np.asarray(rows, dtype=float), types))]}})
