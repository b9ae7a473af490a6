"""
The kinematic model from URDF: links, joints, inertials, limits, damping, screws.

Joint types: ``revolute``, ``continuous`` (revolute without limits),
``prismatic``, ``fixed``, and ``screw`` as Drake's URDF extension writes it::

    <robot name="r" xmlns:drake="http://drake.mit.edu">
      <joint name="lead" type="screw">
        <parent link="a"/><child link="b"/><axis xyz="0 0 1"/>
        <drake:screw_thread_pitch value="0.02"/>     <!-- m per revolution -->
      </joint>

``<origin>`` is the joint frame in the parent link (``R = Rz(yaw) Ry(pitch)
Rx(roll)``), the joint frame is the child link's frame, ``<axis>`` defaults to
(1, 0, 0) as in URDF, ``<limit lower upper velocity>`` gives the limits,
``<dynamics damping>`` the viscous damping, ``<mimic joint multiplier offset>`` makes
the joint follow another (``q = multiplier * q_joint + offset``). ``<inertial><origin>``
places the centre of mass and rotates the inertia into the link frame. The root link
becomes the world frame (its own inertial is fixed to the world and ignored); its name is
the model's :attr:`~transmission_bridge.kinematics.Model.root_frame`.

Liberal in what it accepts (the robots of ``example-robot-data`` are the measure):
refused are only what leaves poses or gravity undefined (malformed or non-finite
numbers, unknown links, cycles, zero axes, negative masses, mimics of unknown joints,
floating and planar joints). The rest is accepted with a note in ``Model.warnings``
naming the element and what was assumed: non-physical inertia (kept as written; poses
and gravity never use it), ``lower > upper`` (pybullet's "unlimited": no limits), a
revolute or prismatic joint without ``<limit>`` (no limits), an ``<inertial>``
without ``<mass>`` (mass 0), white space before the XML declaration, and unknown
elements and attributes (ignored).
"""

import math
import re

import numpy as np

from .body import Body, WORLD
from .errors import ModelError
from .fixed import FixedJoint
from .inertial import inertia_problem, Inertial
from .joint import Mimic
from .model import Model
from .prismatic import PrismaticJoint
from .revolute import RevoluteJoint
from .screw import ScrewJoint
from .spatial import origin_transform, rpy_to_rotation
from .._shared import urdf_xml as _xml

DRAKE_NS = 'http://drake.mit.edu'


# What URDF (and the tools that share it) puts where; anything else is noted and ignored.
_ROBOT_CHILDREN = {'link', 'joint', 'material', 'transmission', 'gazebo', 'ros2_control'}
_LINK_CHILDREN = {'inertial', 'visual', 'collision'}
_JOINT_CHILDREN = {'origin', 'parent', 'child', 'axis', 'calibration', 'dynamics', 'limit',
                   'mimic', 'safety_controller', f'{{{DRAKE_NS}}}screw_thread_pitch'}
_JOINT_ATTRIBUTES = {'name', 'type'}
_LINK_ATTRIBUTES = {'name'}


def model_from_urdf(text, kernels=None):
    """
    Return the :class:`Model` of URDF ``text``; what was assumed is in its ``warnings``.

    ``kernels``: its backend, as :meth:`Model.with_kernels` takes it (None: the default).
    """
    notes = _xml.Notes()
    root = _xml.parse(text, ModelError, notes)
    if root.tag != 'robot':
        raise ModelError(f'the robot description must have <robot> at its root, got <{root.tag}>')
    name = root.get('name') or 'robot'
    notes.check_children(root, _ROBOT_CHILDREN, 'robot', name)
    links = {}
    for link in root.findall('link'):
        lname = link.get('name')
        if not lname:
            raise ModelError('a <link> has no name attribute')
        if lname in links:
            raise ModelError(f'duplicate link name {lname!r}')
        notes.check_children(link, _LINK_CHILDREN, 'link', lname)
        notes.check_attributes(link, _LINK_ATTRIBUTES, 'link', lname)
        links[lname] = link
    if not links:
        raise ModelError('the robot has no <link> (an empty <robot>, e.g. a xacro file whose '
                         'macros were never called)')
    joints = []
    for joint in root.findall('joint'):
        jname = joint.get('name')
        if not jname:
            raise ModelError('a <joint> has no name attribute')
        parent, child = _link_of(joint, 'parent', jname), _link_of(joint, 'child', jname)
        for link in (parent, child):
            if link not in links:
                raise ModelError(f'joint {jname!r}: unknown link {link!r}')
        notes.check_children(joint, _JOINT_CHILDREN, 'joint', jname)
        notes.check_attributes(joint, _JOINT_ATTRIBUTES, 'joint', jname)
        joints.append((jname, joint, parent, child))
    children = [c for _, _, _, c in joints]
    roots = [n for n in links if n not in children]
    if len(roots) != 1:
        raise ModelError(f'the links must form one tree; roots found: {roots}')
    if len(set(children)) != len(children):
        dup = sorted({c for c in children if children.count(c) > 1})[0]
        raise ModelError(f'link {dup!r} is the child of more than one joint')
    base = roots[0]
    # Stable: a document that already lists parents first keeps its order (model order).
    placed, order, pending = {base}, [], list(joints)
    while pending:
        progressed = False
        for item in list(pending):
            if item[2] in placed:
                placed.add(item[3])
                order.append(item)
                pending.remove(item)
                progressed = True
        if not progressed:
            raise ModelError('the joints form a cycle')
    bodies = []
    for jname, element, parent, child in order:
        bodies.append(Body(child, _joint(jname, element, notes),
                           _inertial(links[child], child, notes),
                           WORLD if parent == base else parent))
    return Model(bodies, name, root_frame=base, warnings=notes.lines(), kernels=kernels)


def _link_of(joint, tag, jname):
    element = joint.find(tag)
    if element is None or not element.get('link'):
        raise ModelError(f'joint {jname!r}: missing <{tag} link="...">')
    return element.get('link')


def _numbers(element, attribute, count, default, where):
    text = element.get(attribute) if element is not None else None
    if text is None:
        return default
    try:
        values = [float(v) for v in text.split()]
    except ValueError:
        raise ModelError(f'{where}: {attribute}={text!r} is not {count} numbers') from None
    if len(values) != count or not all(math.isfinite(v) for v in values):
        raise ModelError(f'{where}: {attribute}={text!r} must be {count} finite numbers')
    return values


def _joint(name, element, notes):
    where = f'joint {name!r}'
    kind = element.get('type')
    origin = element.find('origin')
    X = origin_transform(_numbers(origin, 'xyz', 3, (0.0, 0.0, 0.0), where),
                         _numbers(origin, 'rpy', 3, (0.0, 0.0, 0.0), where))
    if kind == 'fixed':
        return FixedJoint(name, origin=X)
    if kind not in ('revolute', 'continuous', 'prismatic', 'screw'):
        raise ModelError(f'{where}: joint type {kind!r} is not supported (revolute, continuous, '
                         'prismatic, fixed, screw)')
    fields = {'origin': X, 'axis': _numbers(element.find('axis'), 'xyz', 3, (1.0, 0.0, 0.0),
                                            f'{where} <axis>')}
    limit = element.find('limit')
    if kind in ('revolute', 'prismatic') and limit is None:
        notes.add(f'{where}: {kind} joint without <limit>; assumed unlimited')
        fields.update(lower=-math.inf, upper=math.inf)
    if kind == 'continuous':
        fields.update(lower=-math.inf, upper=math.inf)
    elif limit is not None:
        default = 0.0 if kind != 'screw' else None
        lower = _numbers(limit, 'lower', 1, [default], f'{where} <limit>')[0]
        upper = _numbers(limit, 'upper', 1, [default], f'{where} <limit>')[0]
        if lower is not None and upper is not None and lower > upper:
            notes.add(f'{where}: <limit lower="{lower:g}" upper="{upper:g}"> has lower > upper '
                      '(how pybullet writes "unlimited"); assumed unlimited')
            lower, upper = -math.inf, math.inf
        if lower is not None:
            fields['lower'] = lower
        if upper is not None:
            fields['upper'] = upper
    if limit is not None and limit.get('velocity') is not None:
        velocity = _numbers(limit, 'velocity', 1, [None], f'{where} <limit>')[0]
        if velocity > 0:
            fields['velocity_limit'] = velocity
    dynamics = element.find('dynamics')
    if dynamics is not None:
        fields['damping'] = _numbers(dynamics, 'damping', 1, [0.0], f'{where} <dynamics>')[0]
    mimic = element.find('mimic')
    if mimic is not None:
        driver = mimic.get('joint')
        if not driver:
            raise ModelError(f'{where}: <mimic> needs a joint attribute')
        fields['mimic'] = Mimic(
            driver, _numbers(mimic, 'multiplier', 1, [1.0], f'{where} <mimic>')[0],
            _numbers(mimic, 'offset', 1, [0.0], f'{where} <mimic>')[0])
    try:
        if kind == 'screw':
            pitch = element.find(f'{{{DRAKE_NS}}}screw_thread_pitch')
            if pitch is None:
                raise ModelError('screw joints need <drake:screw_thread_pitch value="..."/> '
                                 f'(xmlns:drake="{DRAKE_NS}")')
            value = _numbers(pitch, 'value', 1, None, f'{where} <screw_thread_pitch>')
            if value is None:
                raise ModelError('<drake:screw_thread_pitch> needs a value attribute')
            return ScrewJoint(name, pitch=value[0], **fields)
        cls = PrismaticJoint if kind == 'prismatic' else RevoluteJoint
        return cls(name, **fields)
    except ModelError as exc:
        message = str(exc)
        raise ModelError(message if message.startswith(where) else f'{where}: {message}') \
            from None


def _inertial(link, name, notes):
    where = f'link {name!r} <inertial>'
    element = link.find('inertial')
    if element is None:
        return Inertial(owner=f'body {name!r}')
    origin = element.find('origin')
    com = _numbers(origin, 'xyz', 3, (0.0, 0.0, 0.0), where)
    R = rpy_to_rotation(_numbers(origin, 'rpy', 3, (0.0, 0.0, 0.0), where))
    mass = _numbers(element.find('mass'), 'value', 1, None, where)
    if mass is None:
        notes.add(f'{where}: no <mass value="...">; assumed 0 kg')
        mass = [0.0]
    inertia = element.find('inertia')
    keys = ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz')
    vals = {k: _numbers(inertia, k, 1, [0.0], where)[0] for k in keys}
    matrix = np.array([[vals['ixx'], vals['ixy'], vals['ixz']],
                       [vals['ixy'], vals['iyy'], vals['iyz']],
                       [vals['ixz'], vals['iyz'], vals['izz']]])
    rotated = R @ matrix @ R.T
    problem = inertia_problem(rotated)
    if problem:
        notes.add(f'{where}: {problem}; kept as written (poses and gravity do not use it)')
    return Inertial.from_matrix(mass[0], com, rotated, f'body {name!r}', physical=False)


def with_inertials(text, changes):
    """
    Return URDF ``text`` with the ``<inertial>`` of some links replaced.

    ``changes`` maps a link name to ``(mass kg, com m)`` or ``(mass, com, inertia)``: the
    centre of mass is the inertial origin's ``xyz`` (its ``rpy`` orients only the inertia,
    kept with the inertia); a 3x3 ``inertia`` (about the centre of mass, link axes) replaces
    the ``<inertia>`` and sets that ``rpy`` to zero. Everything else stays byte for byte:
    only the numbers change, and a link without ``<inertial>`` gets one before its
    ``</link>``. Raises ModelError for a link not in the text.
    """
    for link, change in changes.items():
        mass, com = change[0], change[1]
        inertia = change[2] if len(change) > 2 else None
        xyz = ' '.join(repr(float(x)) for x in com)
        opening = re.search(r'<link\s[^>]*?name\s*=\s*(["\'])' + re.escape(link)
                            + r'\1[^>]*?(/?)>', text)
        if opening is None:
            raise ModelError(f'no <link name="{link}"> in the URDF')
        values = np.zeros((3, 3)) if inertia is None else np.asarray(inertia, dtype=float)
        numbers = ' '.join(f'{k}="{float(values[i, j])!r}"' for k, (i, j) in (
            ('ixx', (0, 0)), ('ixy', (0, 1)), ('ixz', (0, 2)), ('iyy', (1, 1)),
            ('iyz', (1, 2)), ('izz', (2, 2))))
        new_inertial = (f'<inertial><origin xyz="{xyz}" rpy="0 0 0"/><mass value='
                        f'"{float(mass)!r}"/><inertia {numbers}/></inertial>')
        if opening.group(2) == '/':         # <link name="x"/>
            text = (text[:opening.start()] + opening.group(0)[:-2].rstrip() + '>'
                    + new_inertial + '</link>' + text[opening.end():])
            continue
        start = opening.end()
        end = text.index('</link>', start)
        inner = text[start:end]
        found = re.search(r'(<inertial\b[^>]*>)(.*?)(</inertial>)', inner, re.S)
        if found is None:
            inner = inner + new_inertial
        else:
            block = _set_attribute(found.group(2), 'mass', 'value', repr(float(mass)))
            if re.search(r'<origin\b', block):
                block = _set_attribute(block, 'origin', 'xyz', xyz)
            else:
                block = f'<origin xyz="{xyz}" rpy="0 0 0"/>' + block
            if inertia is not None:
                block = _set_attribute(block, 'origin', 'rpy', '0 0 0')
                for key, (i, j) in (('ixx', (0, 0)), ('ixy', (0, 1)), ('ixz', (0, 2)),
                                    ('iyy', (1, 1)), ('iyz', (1, 2)), ('izz', (2, 2))):
                    block = _set_attribute(block, 'inertia', key, repr(float(values[i, j])))
            inner = inner[:found.start(2)] + block + inner[found.end(2):]
        text = text[:start] + inner + text[end:]
    return text


def _set_attribute(text, tag, attribute, value):
    """Set ``attribute`` of the first ``<tag>`` in ``text`` to ``value`` (added if absent)."""
    element = re.search(r'<' + tag + r'\b[^>]*?/?>', text)
    if element is None:
        return text + f'<{tag} {attribute}="{value}"/>'
    old = element.group(0)
    pattern = r'(\b' + attribute + r'\s*=\s*)(["\'])[^"\']*\2'
    if re.search(pattern, old):
        new = re.sub(pattern, lambda m: f'{m.group(1)}{m.group(2)}{value}{m.group(2)}', old,
                     count=1)
    else:
        new = re.sub(r'^<' + tag, f'<{tag} {attribute}="{value}"', old)
    return text[:element.start()] + new + text[element.end():]
