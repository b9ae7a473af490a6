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
     "no transmission this package maps: transmission 'transmission1' of type "
     "'transmission_interface/HarmonicTransmission' skipped (not a type this package maps); "
     'its joints are not bridged: joint1, joint2'),
    (('<plugin>transmission_interface/DifferentialTransmission</plugin>', ''),
     "transmission 'transmission1' of type '0 <plugin>/<type> given' skipped"),
    (('<mechanical_reduction>50</mechanical_reduction>',
      '<mechanical_reduction>${reduction}</mechanical_reduction>'),
     "transmission 'transmission1', actuator 'joint1_motor': <mechanical_reduction> must be a "
     "number, got '${reduction}'"),
    (('role="joint2"', 'role="joint1"'), "<joint> roles must be ['joint1', 'joint2']"),
    (('<actuator name="joint2_motor" role="actuator2">', '<actuator role="actuator2">'),
     "transmission 'transmission1': an <actuator> has no name attribute"),
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


def _robot(transmissions, joints=('a', 'b', 'c', 'd')):
    """Return a URDF whose chain of revolute joints carries ``transmissions``."""
    links = ''.join(f'<link name="l{i}"/>' for i in range(len(joints) + 1))
    chain = ''.join(f'<joint name="{j}" type="revolute"><parent link="l{i}"/>'
                    f'<child link="l{i + 1}"/><limit lower="-1" upper="1"/></joint>'
                    for i, j in enumerate(joints))
    return f'<robot name="r">{links}{chain}{transmissions}</robot>'


# pr2_mechanism's wrist, with reductions chosen so the numbers can be worked by hand from
# wrist_transmission.cpp's propagatePosition (module docstring of transmissions/urdf.py).
PR2_WRIST = _robot("""
  <transmission name="wrist" type="WristTransmission">
    <rightActuator name="right_motor" mechanicalReduction="10"/>
    <leftActuator name="left_motor" mechanicalReduction="20"/>
    <flexJoint name="a" mechanicalReduction="2" offset="0.1"/>
    <rollJoint name="b" mechanicalReduction="-4" offset="-0.2"/>
  </transmission>""")


def test_pr2_wrist_transmission_follows_wrist_transmission_cpp():
    ts = load_transmissions(PR2_WRIST)
    assert ts.actuator_names == ('right_motor', 'left_motor') and ts.joint_names == ('a', 'b')
    # x_R / r_R = 30 / 10 = 3, x_L / r_L = 20 / 20 = 1:
    # flex = (3 - 1) / (2 * 2) + 0.1 = 0.6;  roll = (-3 - 1) / (2 * -4) - 0.2 = 0.3
    np.testing.assert_allclose(ts.actuator_to_joint('position', [30.0, 20.0]), [0.6, 0.3],
                               rtol=0, atol=1e-15)
    np.testing.assert_allclose(ts.actuator_to_joint('velocity', [30.0, 20.0]), [0.5, 0.5],
                               rtol=0, atol=1e-15)
    # r_R tau_R = 10, r_L tau_L = 40: flex = 2 (10 - 40) = -60;  roll = -4 (-10 - 40) = 200
    np.testing.assert_allclose(ts.actuator_to_joint('effort', [1.0, 2.0]), [-60.0, 200.0],
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(ts.joint_to_actuator('position', [0.6, 0.3]), [30.0, 20.0],
                               rtol=0, atol=1e-12)


def test_pr2_simple_transmission_with_the_reduction_under_transmission():
    ts = load_transmissions(_robot("""
  <transmission name="caster" type="SimpleTransmission">
    <actuator name="caster_motor"/><joint name="c"/>
    <mechanicalReduction>-79.2380952381</mechanicalReduction>
  </transmission>
  <transmission name="other" type="pr2_mechanism_model/SimpleTransmission">
    <actuator name="m"/><joint name="d"/><mechanicalReduction>2</mechanicalReduction>
  </transmission>"""))
    assert ts.actuator_to_joint('position', [-79.2380952381, 4.0]).tolist() == [1.0, 2.0]
    assert ts.warnings == ()


def test_a_type_given_as_attribute_and_element_is_one_type_when_they_agree():
    # pybullet's husky and racecar give both forms; agreeing forms are one type, only
    # disagreeing ones are ambiguous (skipped by name, with both).
    ts = load_transmissions(_robot("""
  <transmission name="left" type="SimpleTransmission">
    <type>transmission_interface/SimpleTransmission</type>
    <actuator name="m1"><mechanicalReduction>2</mechanicalReduction></actuator>
    <joint name="a"/>
  </transmission>
  <transmission name="right" type="transmission_interface/DifferentialTransmission">
    <type>transmission_interface/SimpleTransmission</type>
    <actuator name="m2"/><joint name="b"/>
  </transmission>"""))
    assert ts.joint_names == ('a',)
    assert ts.actuator_to_joint('position', [4.0]).tolist() == [2.0]
    [skipped] = ts.skipped
    assert skipped.name == 'right' and skipped.joints == ('b',)
    assert 'transmission_interface/SimpleTransmission' in skipped.type
    assert 'transmission_interface/DifferentialTransmission' in skipped.type


def test_unknown_types_and_missing_joints_are_skipped_by_name_the_rest_works():
    ts = load_transmissions(_robot("""
  <transmission name="head">
    <type>transmission_interface/HalfDifferentialTransmission</type>
    <actuator name="m1"><role>actuator1</role></actuator>
    <actuator name="m2"><role>actuator2</role></actuator>
    <joint name="a"><role>joint1</role></joint><joint name="b"><role>joint2</role></joint>
  </transmission>
  <transmission name="gone"><type>transmission_interface/SimpleTransmission</type>
    <actuator name="m0"/><joint name="not_here"/></transmission>
  <transmission name="elbow"><type>transmission_interface/SimpleTransmission</type>
    <actuator name="m3"><mechanicalReduction>4</mechanicalReduction></actuator>
    <joint name="c"><hardwareInterface>x</hardwareInterface>
      <ignoreTransmissionAbsoluteEncoder>1</ignoreTransmissionAbsoluteEncoder></joint>
  </transmission>"""))
    assert ts.joint_names == ('c',)
    assert [(s.name, s.type, s.joints) for s in ts.skipped] == [
        ('head', 'transmission_interface/HalfDifferentialTransmission', ('a', 'b')),
        ('gone', 'simple', ('not_here',))]
    assert ts.warnings == (
        "transmission 'head' of type 'transmission_interface/HalfDifferentialTransmission' "
        'skipped (not a type this package maps); its joints are not bridged: a, b',
        "transmission 'gone' of type 'simple' skipped (joint 'not_here' is not a <joint> of "
        'the robot); its joints are not bridged: not_here',
        'ignored unknown element <ignoreTransmissionAbsoluteEncoder> in transmission joint '
        "'c'")
    assert ts.actuator_to_joint('position', [8.0]).tolist() == [2.0]


def test_ros1_role_elements_are_honoured():
    ts = load_transmissions(_robot("""
  <transmission name="w"><type>transmission_interface/DifferentialTransmission</type>
    <actuator name="m2"><role>actuator2</role></actuator>
    <actuator name="m1"><role>actuator1</role></actuator>
    <joint name="b"><role>joint2</role></joint><joint name="a"><role>joint1</role></joint>
  </transmission>"""))
    assert ts.actuator_names == ('m1', 'm2') and ts.joint_names == ('a', 'b')


def test_skipped_transmissions_of_one_type_are_one_warning_naming_each():
    ts = load_transmissions(_robot("""
  <transmission name="t1"><type>vendor/Reducer</type><actuator name="m1"/><joint name="a"/>
  </transmission>
  <transmission name="t2"><type>vendor/Reducer</type><actuator name="m2"/><joint name="b"/>
  </transmission>
  <transmission name="ok"><type>transmission_interface/SimpleTransmission</type>
    <actuator name="m3"/><joint name="c"/></transmission>"""))
    assert ts.warnings == ("2 transmissions of type 'vendor/Reducer' skipped (not a type this "
                           'package maps); their joints are not bridged: t1 (a), t2 (b)',)
    assert [s.name for s in ts.skipped] == ['t1', 't2'] and ts.joint_names == ('c',)


SIMPLE_LIMITED = urdf("""
  <transmission name="t"><plugin>transmission_interface/SimpleTransmission</plugin>
    <actuator name="m" role="actuator1"><mechanical_reduction>50</mechanical_reduction>
      <limit effort="0.4" velocity="120" lower="-40" upper="40"/></actuator>
    <joint name="joint1" role="joint1"/>
  </transmission>""")


def test_an_actuator_s_limit_element_is_the_yaml_s_limits():
    from_urdf = load_transmissions(SIMPLE_LIMITED).specs[0].actuators[0]
    from_yaml = load_transmissions({'transmissions': [{
        'name': 't', 'type': 'simple', 'joints': [{'name': 'joint1'}],
        'actuators': [{'name': 'm', 'mechanical_reduction': 50.0, 'limits': {
            'effort': 0.4, 'velocity': 120.0, 'lower': -40.0, 'upper': 40.0}}]}]}
    ).specs[0].actuators[0]
    assert from_urdf == from_yaml
    assert (from_urdf.effort_limit, from_urdf.velocity_limit) == (0.4, 120.0)


@pytest.mark.parametrize('limit, unlimited, note', [
    ('effort="0" velocity="120"', 'effort_limit',
     "actuator 'm': <limit effort=\"0\"> is not positive; its commands are not limited in "
     'effort'),
    ('velocity="-1"', 'velocity_limit',
     "actuator 'm': <limit velocity=\"-1\"> is not positive"),
    ('lower="1" upper="-1"', 'lower_limit',
     "actuator 'm': <limit> lower 1.0 is not below upper -1.0; its commands are not limited "
     'in position'),
    ('effort="0.4" peak="9"', None,
     "ignored unknown attribute peak= in transmission actuator <limit> 'm'"),
])
def test_an_actuator_limit_that_is_no_limit_is_none_with_a_note(limit, unlimited, note):
    old = '<limit effort="0.4" velocity="120" lower="-40" upper="40"/>'
    tset = load_transmissions(SIMPLE_LIMITED.replace(old, f'<limit {limit}/>'))
    actuator = tset.specs[0].actuators[0]
    if unlimited:
        assert abs(getattr(actuator, unlimited)) == np.inf
    assert any(note in w for w in tset.warnings), tset.warnings


def test_an_actuator_limit_must_be_a_number():
    with pytest.raises(ConfigError, match="actuator 'm': <limit effort> must be a number, "
                                          "got 'lots'"):
        load_transmissions(SIMPLE_LIMITED.replace('effort="0.4"', 'effort="lots"'))


def test_the_simulated_drive_saturates_at_a_urdf_actuator_s_effort_limit(tmp_path):
    # Newton's own bound: a drive limited to 0.05 N·m applies 0.05, whatever it is asked.
    from transmission_bridge.simulation import Simulation
    text = (CONFIG / 'example_robot.urdf').read_text()
    old = '<actuator name="elbow_motor" role="actuator1">'
    assert old in text
    path = tmp_path / 'limited.urdf'
    path.write_text(text.replace(old, old + '<limit effort="0.05"/>'))
    sim = Simulation(path, path, engine='builtin', rate=500.0)
    for asked in (3.0, -3.0, 0.02):
        _, motors, _ = sim.step({'elbow_motor': asked})
        assert motors['elbow_motor'][2] == pytest.approx(max(-0.05, min(0.05, asked)),
                                                         rel=1e-12)
