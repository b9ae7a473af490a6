"""
Transmissions from URDF: ros2_control's schema, ROS 1's, and pr2_mechanism's.

ros2_control (inside ``<ros2_control>`` or at the top level)::

    <transmission name="wrist">
      <plugin>transmission_interface/DifferentialTransmission</plugin>
      <actuator name="left_motor" role="actuator1">
        <mechanical_reduction>50</mechanical_reduction>
      </actuator>
      <actuator name="right_motor" role="actuator2">
        <mechanical_reduction>-50</mechanical_reduction>
      </actuator>
      <joint name="wrist_pitch" role="joint1"><offset>0.0</offset></joint>
      <joint name="wrist_roll" role="joint2"/>
    </transmission>

ROS 1: ``<type>transmission_interface/SimpleTransmission</type>``, ``<role>`` as a child
element, ``<hardwareInterface>`` (ignored) and ``<mechanicalReduction>``.

pr2_mechanism (PR2's URDF): the type as an attribute, ``<transmission
type="SimpleTransmission">`` (or ``pr2_mechanism_model/SimpleTransmission``) with the
reduction under ``<transmission>``, and the wrist::

    <transmission name="r_wrist_trans" type="WristTransmission">
      <rightActuator name="r_wrist_r_motor" mechanicalReduction="60.17"/>
      <leftActuator name="r_wrist_l_motor" mechanicalReduction="60.17"/>
      <flexJoint name="r_wrist_flex_joint" mechanicalReduction="-1.0"/>
      <rollJoint name="r_wrist_roll_joint" mechanicalReduction="1.0"/>
    </transmission>

pr2_mechanism_model's ``wrist_transmission.cpp`` computes, with right/left actuator
reductions ``r_R, r_L`` and flex/roll joint reductions ``n_F, n_O``::

    x_flex = (x_R / r_R - x_L / r_L) / (2 n_F) + off_F
    x_roll = (-x_R / r_R - x_L / r_L) / (2 n_O) + off_O
    tau_flex = n_F (r_R tau_R - r_L tau_L),   tau_roll = n_O (-r_R tau_R - r_L tau_L)

which is the differential (actuator1 = right, actuator2 = left, joint1 = flex, joint2 =
roll) with actuator reductions ``(r_R, -r_L)`` and joint reductions ``(n_F, -n_O)``. (Its
calibration ``reference_position`` is not in the URDF; ``offset`` is the joint offset.)

Liberal where the math stays defined: a ``<transmission>`` of a type this package does not
map (PAL's ``HalfDifferentialTransmission``, PR2's gripper) or with no type is skipped,
named in :attr:`TransmissionSet.skipped` with its joints; elements a vendor added inside
a known transmission (``<ignoreTransmissionAbsoluteEncoder>``) are ignored; both with a
note in :attr:`TransmissionSet.warnings`. Refused, naming the transmission and the
element: malformed numbers (an unexpanded xacro ``${reduction}``), zero or non-finite
reductions, wrong member counts or roles. A transmission naming a joint the robot does not
have (a leftover of a larger robot's file, as in Talos' one-arm URDF) is skipped likewise.
Roles are honoured (upstream sorts by name instead; not here): when given they must be
exactly ``actuator1..n`` / ``joint1..n``; without roles the document order is the role
order. A joint may also carry the transmission_bridge extensions ``<default_position>``
and ``<damping>`` (ros2_control ignores them), and an actuator ``<rotor_inertia>``,
``<viscous_friction>``, ``<coulomb_friction>``, ``<efficiency>``, ``<limit effort velocity
lower upper>`` (the YAML's ``limits``), ``<units>`` and ``<output_encoder>`` (attributes: the
YAML's keys). Absent numbers take the YAML defaults (reduction 1, offset 0).
"""

import dataclasses

from .errors import ConfigError
from .fields import efficiency_fields, linkage_geometry, units_in_si, xml_actuator_field
from .spec import ActuatorSpec, INF, JointSpec, SkippedTransmission, TransmissionSpec
from .transmission_set import TransmissionSet
from .urdf_robot import UrdfRobot
from .._shared import urdf_xml as _xml

PLUGINS = {
    'SimpleTransmission': 'simple',
    'DifferentialTransmission': 'differential',
    'FourBarLinkageTransmission': 'four_bar_linkage',
    'WristTransmission': 'wrist',
    'CouplingTransmission': 'coupling',
    'LinkageTransmission': 'linkage',
}
# What may prefix a type: ros2_control's and ROS 1's namespace, pr2_mechanism's, ours, or none.
NAMESPACES = ('transmission_interface/', 'pr2_mechanism_model/', 'transmission_bridge/', '')
_SIZES = {'simple': 1, 'differential': 2, 'four_bar_linkage': 2}
_NUMBERS = {
    'actuator': {'mechanical_reduction': 'mechanical_reduction',
                 'mechanicalReduction': 'mechanical_reduction',
                 'encoder_period': 'encoder_period', 'rotor_inertia': 'rotor_inertia',
                 'viscous_friction': 'viscous_friction',
                 'coulomb_friction': 'coulomb_friction'},
    'joint': {'mechanical_reduction': 'mechanical_reduction',
              'mechanicalReduction': 'mechanical_reduction', 'offset': 'offset',
              'default_position': 'default_position', 'damping': 'damping'},
}
_IGNORED = {'hardwareInterface', 'role'}
# An actuator's <limit> attributes (its own units), a joint's <limit>'s.
_ACTUATOR_LIMITS = ('effort', 'velocity', 'lower', 'upper')
# A linkage's geometry elements (doc/formats.md, "Linkage"): points and directions as
# ``xyz`` attributes, the rest as text.
_LINKAGE_VECTORS = {'actuator': ('axis', 'direction', 'origin', 'crank', 'attachment'),
                    'joint': ('axis', 'origin')}
_LINKAGE_TEXTS = {'actuator': {'kind': str, 'rod_length': float}, 'joint': {'type': str}}
_TRANSMISSION_CHILDREN = {'plugin', 'type', 'actuator', 'joint', 'mechanicalReduction',
                          'matrix'}
_WRIST = (('rightActuator', 'actuator'), ('leftActuator', 'actuator'),
          ('flexJoint', 'joint'), ('rollJoint', 'joint'))


def transmissions_from_urdf(text):
    """
    Return the :class:`TransmissionSet` of every mappable ``<transmission>`` in URDF ``text``.

    Raises ConfigError if there is none to map (no ``<transmission>``, or only skipped
    ones: the message names them).
    """
    notes = _xml.Notes()
    root = _xml.parse(text, ConfigError, notes)
    robot_joints = {j.get('name'): j for j in root.iter('joint') if j.get('name')
                    and j.find('parent') is not None}
    elements = list(root.iter('transmission'))
    if not elements:
        raise ConfigError('the robot description has no <transmission> element')
    specs, skipped = [], []
    robot = UrdfRobot(text, robot_joints)
    for i, element in enumerate(elements):
        spec = _transmission(element, i, notes, robot)
        if isinstance(spec, SkippedTransmission):
            skipped.append(spec)
            continue
        missing = [j.name for j in spec.joints if robot_joints and j.name not in robot_joints]
        if missing:                         # a leftover of a larger robot's file
            spec = SkippedTransmission(spec.name, spec.type, tuple(j.name for j in spec.joints),
                                       f'joint {missing[0]!r} is not a <joint> of the robot')
            skipped.append(spec)
            continue
        specs.append(_with_limits(spec, robot_joints, notes))
    for line in _skipped_lines(skipped):
        notes.add(line)
    if not specs:
        raise ConfigError('the robot description has no transmission this package maps: '
                          + '; '.join(s.describe() for s in skipped))
    return TransmissionSet(specs, notes.lines(), skipped)


def _with_limits(spec, robot_joints, notes):
    """
    Return ``spec`` with its joints' limits from the robot's ``<joint><limit>`` elements.

    Position limits of revolute, prismatic and screw joints (a continuous one has none);
    velocity and effort where positive. URDF requires both attributes, and files write 0
    where they mean "not given": a zero or negative one is no limit, with a note, as are
    lower > upper (pybullet's "unlimited") and lower == upper.
    """
    joints = []
    for joint in spec.joints:
        element = robot_joints.get(joint.name)
        limit = None if element is None else element.find('limit')
        if limit is None:
            joints.append(joint)
            continue
        where = f'transmission {spec.name!r}'
        values = {key: _value(limit.get(key), where, joint.name, 'joint', f'<limit {key}>')
                  for key in ('lower', 'upper', 'velocity', 'effort')
                  if limit.get(key) is not None}
        fields = _limit_fields(values, limit, f'joint {joint.name!r}', notes,
                               element.get('type') in ('revolute', 'prismatic', 'screw'),
                               (0.0, 0.0))
        joints.append(dataclasses.replace(joint, **fields))
    return dataclasses.replace(spec, joints=tuple(joints))


def _limit_fields(values, limit, who, notes, position, missing):
    """
    Return the spec's limit fields of a ``<limit>``'s numbers: one rule, joints and motors.

    A zero or negative velocity or effort is no limit, and so is ``lower >= upper`` (a
    missing bound is ``missing``'s: URDF's 0 for a joint, none for an actuator), each with a
    note naming ``who``; ``position`` False: no position limits (a continuous joint).
    """
    fields = {}
    if position and ('lower' in values or 'upper' in values):
        lower, upper = values.get('lower', missing[0]), values.get('upper', missing[1])
        if lower < upper:
            fields.update(lower_limit=lower, upper_limit=upper)
        else:
            notes.add(f'{who}: <limit> lower {lower} is not below upper {upper}; its commands '
                      'are not limited in position')
    for key in ('velocity', 'effort'):
        if values.get(key, 0.0) > 0.0:
            fields[f'{key}_limit'] = values[key]
        elif key in values:
            notes.add(f'{who}: <limit {key}="{limit.get(key)}"> is not positive; its commands '
                      f'are not limited in {key}')
    return fields


def _skipped_lines(skipped):
    """Return one warning per kind of skip: TIAGo's hand has 33 transmissions of one type."""
    groups = {}
    for s in skipped:
        groups.setdefault((s.type, s.reason), []).append(s)
    lines = []
    for (kind, reason), items in groups.items():
        if len(items) == 1:
            lines.append(items[0].describe())
        else:
            lines.append(f'{len(items)} transmissions of type {kind!r} skipped ({reason}); '
                         'their joints are not bridged: ' + ', '.join(
                             f'{s.name} ({", ".join(s.joints) or "no joint"})' for s in items))
    return lines


def _transmission(element, index, notes, robot=None):
    name = element.get('name')
    if not name:
        raise ConfigError(f'<transmission> number {index + 1} has no name attribute')
    where = f'transmission {name!r}'
    kinds = [c.text.strip() if c.text else '' for c in element if c.tag in ('plugin', 'type')]
    if element.get('type'):
        kinds.append(element.get('type').strip())
    # The type may be given more than once (pybullet's URDFs give the attribute and the
    # element): forms that name the same type are that type, others are ambiguous.
    resolved = {_kind(k) for k in kinds}
    kind = resolved.pop() if len(resolved) == 1 else None
    if kind is None:
        if len(set(kinds)) > 1:
            return SkippedTransmission(name, ' and '.join(sorted(set(kinds))),
                                       _joint_names(element),
                                       'its <plugin>, <type> and type= name different types')
        return SkippedTransmission(name, kinds[0] if kinds else '0 <plugin>/<type> given',
                                   _joint_names(element))
    if kind == 'wrist':
        return _wrist(element, name, where, notes)
    notes.check_children(element, _TRANSMISSION_CHILDREN, 'transmission', name)
    if kind == 'linkage':
        return _linkage(element, name, where, notes, robot)
    size = _SIZES.get(kind) or len([c for c in element if c.tag == 'joint'])
    actuators = _members(element, 'actuator', size, where, ActuatorSpec, notes)
    joints = _members(element, 'joint', size, where, JointSpec, notes)
    if kind == 'coupling':
        return _spec(where, name, kind, actuators, joints, _matrix(element, size, where))
    outer = element.find('mechanicalReduction')
    if outer is not None:                   # pr2_mechanism: the actuator's reduction
        if kind != 'simple':
            raise ConfigError(f'{where}: <mechanicalReduction> under <transmission> is only '
                              'for a simple transmission')
        actuators = (ActuatorSpec(actuators[0].name, _number(outer, where, actuators[0].name,
                                                             'actuator')),)
    return _spec(where, name, kind, actuators, joints)


def _kind(text):
    """Return the type this package maps for a plugin/type string, or None."""
    for namespace in NAMESPACES:
        if text.startswith(namespace) and text[len(namespace):] in PLUGINS:
            return PLUGINS[text[len(namespace):]]
    return None


def _joint_names(element):
    """Return the names of every joint element of a transmission (any schema)."""
    return tuple(c.get('name') for c in element
                 if 'joint' in c.tag.lower() and c.get('name'))


def _matrix(element, size, where):
    """Return a coupling's ``<matrix>``: N*N numbers, row-major, rows may end in ';'."""
    found = element.findall('matrix')
    if len(found) != 1:
        raise ConfigError(f'{where}: a CouplingTransmission needs one <matrix> '
                          f'(got {len(found)})')
    words = (_text(found[0]) or '').replace(';', ' ').replace(',', ' ').split()
    numbers = [_value(w, where, 'matrix', 'coupling', '<matrix>') for w in words]
    if len(numbers) != size * size:
        raise ConfigError(f'{where}: <matrix> must hold {size}x{size} = {size * size} numbers '
                          f'(one row per joint), got {len(numbers)}')
    return [numbers[i * size:(i + 1) * size] for i in range(size)]


def _spec(where, name, kind, actuators, joints, matrix=None, geometry=None):
    try:
        return TransmissionSpec(name, kind, actuators, joints, matrix, geometry)
    except ConfigError as exc:
        raise ConfigError(f'{where}: {exc}') from None


def _wrist(element, name, where, notes):
    """pr2_mechanism's WristTransmission as the differential it is (module docstring)."""
    notes.check_children(element, {tag for tag, _ in _WRIST}, 'transmission', name)
    found = {}
    for tag, kind in _WRIST:
        items = element.findall(tag)
        if len(items) != 1 or not items[0].get('name'):
            raise ConfigError(f'{where}: a WristTransmission needs one <{tag} name="..."> '
                              f'(got {len(items)})')
        item = items[0]
        values = {}
        for attribute in ('mechanicalReduction', 'offset'):
            if item.get(attribute) is not None:
                values[attribute] = _value(item.get(attribute), where, item.get('name'),
                                           kind, attribute)
        if 'mechanicalReduction' not in values:
            raise ConfigError(f'{where}: <{tag} name="{item.get("name")}"> needs a '
                              'mechanicalReduction attribute')
        found[tag] = (item.get('name'), values)
    (right, r_right), (left, r_left) = found['rightActuator'], found['leftActuator']
    (flex, n_flex), (roll, n_roll) = found['flexJoint'], found['rollJoint']
    try:
        actuators = (ActuatorSpec(right, r_right['mechanicalReduction']),
                     ActuatorSpec(left, -r_left['mechanicalReduction']))
        joints = (JointSpec(flex, n_flex['mechanicalReduction'], n_flex.get('offset', 0.0)),
                  JointSpec(roll, -n_roll['mechanicalReduction'], n_roll.get('offset', 0.0)))
    except ConfigError as exc:
        raise ConfigError(f'{where}: {exc}') from None
    return _spec(where, name, 'differential', actuators, joints)


def _members(element, tag, size, where, spec_class, notes, geometry=None):
    """
    Return the specs of the ``<tag>`` members, in role order.

    With ``geometry`` (a list), a linkage's geometry elements of each member are appended
    to it as ``(name, {key: value})``, the YAML form.
    """
    items = [c for c in element if c.tag == tag]
    if len(items) != size:
        raise ConfigError(f'{where}: needs {size} <{tag}> element(s), got {len(items)}')
    roles = [c.get('role') or _text(c.find('role')) for c in items]
    expected = [f'{tag}{k + 1}' for k in range(size)]
    if any(r is not None for r in roles):
        if sorted(r or '' for r in roles) != expected:
            raise ConfigError(f'{where}: <{tag}> roles must be {expected}, got {roles}')
        items = [items[roles.index(r)] for r in expected]
    out = []
    for item in items:
        name = item.get('name')
        if not name:
            raise ConfigError(f'{where}: an <{tag}> has no name attribute')
        fields, shape = {}, {}
        for child in item:
            if tag == 'actuator' and child.tag == 'efficiency':
                fields.update(_efficiency(child, where, name))
                continue
            if tag == 'actuator' and child.tag == 'limit':
                fields.update(_actuator_limit(child, where, name, notes))
                continue
            if tag == 'actuator' and child.tag in ('units', 'output_encoder', 'spring'):
                fields[child.tag] = xml_actuator_field(child, where, name)
                continue
            key = _NUMBERS[tag].get(child.tag)
            if geometry is not None and key is None:
                found = _linkage_value(child, tag, where, name)
                if found is not None:
                    shape[child.tag] = found
                    continue
            if key is None:
                if child.tag not in _IGNORED:
                    notes.unknown(f'transmission {tag}', name, child.tag)
                continue
            fields[key] = _number(child, where, name, tag)
        if 'units' in fields:
            units_in_si(fields, f'{where}: <units>', f'actuator {name!r}', shape)
        try:
            out.append(spec_class(name, **fields))
        except ConfigError as exc:
            raise ConfigError(f'{where}: {exc}') from None
        if geometry is not None:
            geometry.append((name, shape))
    return tuple(out)


def _efficiency(child, where, owner):
    """
    Return the spec fields of an actuator's ``<efficiency>``: attributes as the YAML's keys.

    ``<efficiency driving="0.9" driven="0.7"/>``, or a screw's geometry
    (``lead``, ``mean_diameter``, ``friction_coefficient``, ``flank_angle``; doc/formats.md).
    """
    values = {key: _value(text, where, owner, 'actuator', f'<efficiency {key}>')
              for key, text in child.attrib.items()}
    try:
        return efficiency_fields(values, '<efficiency>', f'actuator {owner!r}')
    except ConfigError as exc:
        raise ConfigError(f'{where}: {exc}') from None


def _actuator_limit(child, where, owner, notes):
    """
    Return the spec fields of an actuator's ``<limit>``, a joint's ``<limit>`` form.

    ``<limit effort="2.5" velocity="300" lower="-10" upper="10"/>``: the motor's own units
    (N·m or N, rad/s or m/s, rad or m); an attribute left out is no limit; the rest as a
    joint's (:func:`_limit_fields`).
    """
    values = {}
    for key, text in child.attrib.items():
        if key not in _ACTUATOR_LIMITS:
            notes.unknown('transmission actuator <limit>', owner, key, attribute=True)
            continue
        values[key] = _value(text, where, owner, 'actuator', f'<limit {key}>')
    return _limit_fields(values, child, f'actuator {owner!r}', notes, True, (-INF, INF))


def _linkage_value(child, tag, where, owner):
    """Return a linkage geometry element's value (a list, text or number), or None."""
    if child.tag in _LINKAGE_VECTORS[tag]:
        words = (child.get('xyz') or '').split()
        if len(words) != 3:
            raise ConfigError(f'{where}, {tag} {owner!r}: <{child.tag}> needs xyz="x y z", '
                              f'got {child.get("xyz")!r}')
        return [_value(w, where, owner, tag, f'<{child.tag} xyz>') for w in words]
    convert = _LINKAGE_TEXTS[tag].get(child.tag)
    if convert is None:
        return None
    if convert is float:
        return _number(child, where, owner, tag)
    return _text(child) or ''


def _linkage(element, name, where, notes, robot):
    """
    Return a LinkageTransmission's spec, or its skip if a joint is not the robot's.

    The geometry from the elements; joints' axes and points not given, from the robot's.
    """
    size = len([c for c in element if c.tag == 'joint'])
    joint_shapes, actuator_shapes = [], []
    actuators = _members(element, 'actuator', size, where, ActuatorSpec, notes, actuator_shapes)
    joints = _members(element, 'joint', size, where, JointSpec, notes, joint_shapes)
    names = tuple(j.name for j in joints)
    missing = [n for n in names if robot is not None and robot.joints and n not in robot.joints]
    if missing:                         # skipped by the caller, as any such transmission
        return SkippedTransmission(name, 'linkage', names,
                                   f'joint {missing[0]!r} is not a <joint> of the robot')
    if robot is not None and robot.joints:
        robot.fill_linkage_joints(where, joints, joint_shapes)
    geometry = linkage_geometry(joint_shapes, actuator_shapes, where)
    return _spec(where, name, 'linkage', actuators, joints, geometry=geometry)


def _text(element):
    return None if element is None or element.text is None else element.text.strip()


def _number(child, where, owner, kind):
    return _value(_text(child) or '', where, owner, kind, f'<{child.tag}>')


def _value(text, where, owner, kind, what):
    try:
        return float(text)
    except ValueError:
        raise ConfigError(f'{where}, {kind} {owner!r}: {what} must be a number, '
                          f'got {text!r}') from None
