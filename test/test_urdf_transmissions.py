"""Transmissions from URDF: ros2_control's schema, ROS 1's, roles honoured, clear errors."""

from conftest import CONFIG
import numpy as np
import pytest
from transmission_bridge.transmissions import ConfigError, load_transmissions

HEAD = '<?xml version="1.0"?>\n<robot name="r">\n<ros2_control name="S" type="system">\n'
TAIL = '</ros2_control>\n</robot>\n'


def urdf(body):
    return HEAD + body + TAIL


DIFFERENTIAL_FULL = urdf("""
  <transmission name="transmission1">
    <plugin>transmission_interface/DifferentialTransmission</plugin>
    <actuator name="joint1_motor" role="actuator1">
      <mechanical_reduction>50</mechanical_reduction></actuator>
    <actuator name="joint2_motor" role="actuator2">
      <mechanical_reduction>-50</mechanical_reduction></actuator>
    <joint name="joint1" role="joint1">
      <offset>0.5</offset><mechanical_reduction>2.0</mechanical_reduction></joint>
    <joint name="joint2" role="joint2">
      <offset>-0.5</offset><mechanical_reduction>-2.0</mechanical_reduction></joint>
  </transmission>""")


def test_upstream_differential_full_spec():
    t = load_transmissions(DIFFERENTIAL_FULL).transmissions[0]
    assert t.actuator_reductions == (50.0, -50.0)
    assert t.joint_reductions == (2.0, -2.0)
    assert t.joint_offsets == (0.5, -0.5)


def test_upstream_reductions_and_offsets_not_specified_default_to_one_and_zero():
    ts = load_transmissions(urdf("""
  <transmission name="transmission1">
    <plugin>transmission_interface/DifferentialTransmission</plugin>
    <actuator name="joint1_motor" role="actuator1"/>
    <actuator name="joint2_motor" role="actuator2"/>
    <joint name="joint1" role="joint1"/>
    <joint name="joint2" role="joint2"/>
  </transmission>"""))
    t = ts.transmissions[0]
    assert t.actuator_reductions == (1.0, 1.0) and t.joint_offsets == (0.0, 0.0)


def test_upstream_four_bar_and_simple_with_ros1_form():
    ts = load_transmissions("""<robot name="r">
  <transmission name="fb">
    <plugin>transmission_interface/FourBarLinkageTransmission</plugin>
    <actuator name="m1" role="actuator1">
      <mechanical_reduction>50</mechanical_reduction></actuator>
    <actuator name="m2" role="actuator2">
      <mechanical_reduction>-50</mechanical_reduction></actuator>
    <joint name="j1" role="joint1">
      <offset>0.5</offset><mechanical_reduction>2.0</mechanical_reduction></joint>
    <joint name="j2" role="joint2">
      <offset>-0.5</offset><mechanical_reduction>-2.0</mechanical_reduction></joint>
  </transmission>
  <transmission name="legacy">
    <type>transmission_interface/SimpleTransmission</type>
    <joint name="elbow">
      <hardwareInterface>hardware_interface/EffortJointInterface</hardwareInterface>
    </joint>
    <actuator name="elbow_motor">
      <hardwareInterface>hardware_interface/EffortJointInterface</hardwareInterface>
      <mechanicalReduction>325.949</mechanicalReduction>
    </actuator>
  </transmission>
</robot>""")
    assert [s.type for s in ts.specs] == ['four_bar_linkage', 'simple']
    assert ts.transmissions[1].reduction == 325.949
    assert ts.transmissions[0].joint_offsets == (0.5, -0.5)


def test_roles_are_honoured_not_sorted_by_name():
    swapped = DIFFERENTIAL_FULL.replace('role="actuator1"', 'role="X"').replace(
        'role="actuator2"', 'role="actuator1"').replace('role="X"', 'role="actuator2"')
    ts = load_transmissions(swapped)
    assert ts.actuator_names == ('joint2_motor', 'joint1_motor')
    assert ts.transmissions[0].actuator_reductions == (-50.0, 50.0)
    # By hand, actuator1 = joint2_motor (-50) = 3, actuator2 = joint1_motor (50) = 1:
    # j1 = (3/-50 + 1/50) / (2*2) + 0.5 = 0.49;  j2 = (3/-50 - 1/50) / (2*-2) - 0.5 = -0.48
    np.testing.assert_allclose(ts.actuator_to_joint('position', [3.0, 1.0]), [0.49, -0.48],
                               rtol=0, atol=1e-15)
    # Sorting by name (upstream) would have made joint1_motor actuator1: a different robot.
    original = load_transmissions(DIFFERENTIAL_FULL)
    assert not np.allclose(original.actuator_to_joint('position', [1.0, 3.0]), [0.49, -0.48])


@pytest.mark.parametrize('change,message', [
    (('<mechanical_reduction>50</mechanical_reduction>',
      '<mechanical_reduction>fifty</mechanical_reduction>'),
     "transmission 'transmission1', actuator 'joint1_motor': <mechanical_reduction> must be a "
     "number, got 'fifty'"),
    (('<offset>0.5</offset>', '<offset>two</offset>'),
     "transmission 'transmission1', joint 'joint1': <offset> must be a number, got 'two'"),
    (('<mechanical_reduction>50</mechanical_reduction>',
      '<mechanical_reduction>0</mechanical_reduction>'),
     "transmission 'transmission1': actuator 'joint1_motor': mechanical_reduction must be "
     'finite and non-zero, got 0.0'),
    (('<mechanical_reduction>2.0</mechanical_reduction>',
      '<mechanical_reduction>nan</mechanical_reduction>'),
     "joint 'joint1': mechanical_reduction must be finite and non-zero, got nan"),
    (('DifferentialTransmission', 'HarmonicTransmission'),
     "transmission 'transmission1': unknown plugin 'transmission_interface/HarmonicTransmission'"),
    (('<plugin>transmission_interface/DifferentialTransmission</plugin>', ''),
     "transmission 'transmission1': needs exactly one <plugin>"),
    (('role="joint2"', 'role="joint1"'), "<joint> roles must be ['joint1', 'joint2']"),
    (('<actuator name="joint2_motor" role="actuator2">', '<actuator role="actuator2">'),
     "transmission 'transmission1': an <actuator> has no name attribute"),
    (('<offset>0.5</offset>', '<offset>0.5</offset><speed>3</speed>'),
     "transmission 'transmission1', joint 'joint1': unknown element <speed>"),
    (('name="transmission1"', ''), 'has no name attribute'),
])
def test_invalid_specs_name_transmission_and_element(change, message):
    old, new = change
    assert old in DIFFERENTIAL_FULL
    with pytest.raises(ConfigError) as err:
        load_transmissions(DIFFERENTIAL_FULL.replace(old, new, 1))
    assert message in str(err.value)


def test_missing_elements_are_errors():
    text = urdf("""
  <transmission name="t"><plugin>transmission_interface/SimpleTransmission</plugin>
    <joint name="joint1" role="joint1"><mechanical_reduction>50</mechanical_reduction></joint>
  </transmission>""")
    with pytest.raises(ConfigError, match=r"transmission 't': needs 1 <actuator> element\(s\), "
                                          'got 0'):
        load_transmissions(text)
    with pytest.raises(ConfigError, match='no <transmission> element'):
        load_transmissions('<robot name="r"><link name="a"/></robot>')


def test_unsafe_or_broken_xml_is_refused():
    bomb = ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
            '<!ENTITY lol2 "&lol;&lol;&lol;">]><robot name="&lol2;"/>')
    with pytest.raises(ConfigError, match='declares a DOCTYPE'):
        load_transmissions(bomb)
    with pytest.raises(ConfigError, match='not valid XML'):
        load_transmissions('<robot><transmission></robot>')


@pytest.mark.parametrize('urdf,transmissions_yaml', [
    ('example_robot.urdf', 'example_robot_transmissions.yaml'),
    ('scara.urdf', 'scara_transmissions.yaml')])
def test_shipped_urdf_equals_yaml(urdf, transmissions_yaml):
    assert load_transmissions(CONFIG / urdf) == load_transmissions(CONFIG / transmissions_yaml)
