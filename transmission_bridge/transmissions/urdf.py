"""
Transmissions from URDF, in ros2_control's schema (and ROS 1's).

ros2_control (inside ``<ros2_control>`` or at the top level)::

    <transmission name="wrist">
      <plugin>transmission_interface/DifferentialTransmission</plugin>
      <actuator name="left_motor" role="actuator1">
        <mechanical_reduction>50</mechanical_reduction>
      </actuator>
      <actuator name="right_motor" role="actuator2">
        <mechanical_reduction>-50</mechanical_reduction>
      </actuator>
      <joint name="wrist_pitch" role="joint1">
        <offset>0.0</offset><mechanical_reduction>1</mechanical_reduction>
      </joint>
      <joint name="wrist_roll" role="joint2"/>
    </transmission>

ROS 1: ``<type>transmission_interface/SimpleTransmission</type>``,
``<hardwareInterface>`` (ignored) and ``<mechanicalReduction>`` on the actuator.
Roles are honoured (upstream sorts by name instead; not here): when given they
must be exactly ``actuator1..n`` / ``joint1..n``; without ``role`` attributes the
document order is the role order. A joint may also carry the transmission_bridge
extensions ``<default_position>`` and ``<damping>`` (ros2_control ignores them).
Absent numbers take the YAML defaults (reduction 1, offset 0); present but
malformed ones ("fifty", NaN, zero reductions) are errors naming the transmission
and the element.
"""

from .errors import ConfigError
from .spec import ActuatorSpec, JointSpec, TransmissionSpec
from .transmission_set import TransmissionSet
from .. import _xml

PLUGINS = {
    'transmission_interface/SimpleTransmission': 'simple',
    'transmission_interface/DifferentialTransmission': 'differential',
    'transmission_interface/FourBarLinkageTransmission': 'four_bar_linkage',
}
_SIZES = {'simple': 1, 'differential': 2, 'four_bar_linkage': 2}
_NUMBERS = {
    'actuator': {'mechanical_reduction': 'mechanical_reduction',
                 'mechanicalReduction': 'mechanical_reduction'},
    'joint': {'mechanical_reduction': 'mechanical_reduction',
              'mechanicalReduction': 'mechanical_reduction', 'offset': 'offset',
              'default_position': 'default_position', 'damping': 'damping'},
}
_IGNORED = {'hardwareInterface', 'role'}


def transmissions_from_urdf(text):
    """Return the :class:`TransmissionSet` of every ``<transmission>`` in URDF ``text``."""
    root = _xml.parse(text, ConfigError)
    elements = list(root.iter('transmission'))
    if not elements:
        raise ConfigError('the robot description has no <transmission> element')
    return TransmissionSet(_transmission(e, i) for i, e in enumerate(elements))


def _transmission(element, index):
    name = element.get('name')
    if not name:
        raise ConfigError(f'<transmission> number {index + 1} has no name attribute')
    where = f'transmission {name!r}'
    kinds = [c.text.strip() if c.text else '' for c in element
             if c.tag in ('plugin', 'type')]
    if len(kinds) != 1:
        raise ConfigError(f'{where}: needs exactly one <plugin> (or ROS 1 <type>), '
                          f'got {len(kinds)}')
    kind = PLUGINS.get(kinds[0])
    if kind is None:
        raise ConfigError(f'{where}: unknown plugin {kinds[0]!r}; expected one of '
                          f'{", ".join(PLUGINS)}')
    size = _SIZES[kind]
    actuators = _members(element, 'actuator', size, where, ActuatorSpec)
    joints = _members(element, 'joint', size, where, JointSpec)
    try:
        return TransmissionSpec(name, kind, actuators, joints)
    except ConfigError as exc:
        raise ConfigError(f'{where}: {exc}') from None


def _members(element, tag, size, where, spec_class):
    items = [c for c in element if c.tag == tag]
    if len(items) != size:
        raise ConfigError(f'{where}: needs {size} <{tag}> element(s), got {len(items)}')
    roles = [c.get('role') for c in items]
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
        fields = {}
        for child in item:
            key = _NUMBERS[tag].get(child.tag)
            if key is None:
                if child.tag in _IGNORED:
                    continue
                raise ConfigError(f'{where}, {tag} {name!r}: unknown element <{child.tag}>')
            text = (child.text or '').strip()
            try:
                fields[key] = float(text)
            except ValueError:
                raise ConfigError(f'{where}, {tag} {name!r}: <{child.tag}> must be a number, '
                                  f'got {text!r}') from None
        try:
            out.append(spec_class(name, **fields))
        except ConfigError as exc:
            raise ConfigError(f'{where}: {exc}') from None
    return tuple(out)
