"""The kinematic model from URDF agrees with YAML and with hand checks; bad URDF is refused."""

import math

from conftest import CONFIG
from kinematics_models import random_q
import numpy as np
import pytest
from transmission_bridge.kinematics import load_model, ModelError

EQUAL_ATOL = 1e-12


@pytest.mark.parametrize('urdf,model_yaml', [
    ('example_robot.urdf', 'example_arm_model.yaml'), ('scara.urdf', 'scara_model.yaml')])
def test_shipped_urdf_equals_yaml_model(urdf, model_yaml):
    u = load_model(CONFIG / urdf)
    y = load_model(CONFIG / model_yaml)
    assert u.body_names == y.body_names and u.joint_names == y.joint_names
    np.testing.assert_array_equal(u.damping, y.damping)
    for q in random_q(y, np.random.default_rng(8), 20):
        np.testing.assert_allclose(u.body_poses(q), y.body_poses(q), rtol=0, atol=EQUAL_ATOL)
        np.testing.assert_allclose(u.gravity_generalized_forces(q),
                                   y.gravity_generalized_forces(q), rtol=0, atol=EQUAL_ATOL)


SCREW = """<?xml version="1.0"?>
<robot name="press" xmlns:drake="http://drake.mit.edu">
  <link name="base"/>
  <link name="nut"><inertial><origin xyz="0 0 0"/><mass value="3.0"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="lead" type="screw">
    <parent link="base"/><child link="nut"/><axis xyz="0 0 1"/>
    <drake:screw_thread_pitch value="0.02"/>
    <dynamics damping="0.1"/>
  </joint>
</robot>"""


def test_drake_screw_extension_by_hand():
    m = load_model(SCREW)
    assert m.body_names == ('nut',)              # the root link is the world frame
    j = m.joint('lead')
    assert j.type_name == 'screw' and j.pitch == 0.02 and j.damping == 0.1
    assert j.position_limits == (-math.inf, math.inf)
    X = m.forward_kinematics([2 * math.pi])['nut']
    assert X[2, 3] == pytest.approx(0.02, abs=1e-15)
    assert m.gravity_generalized_forces([0.3])[0] == pytest.approx(
        -3.0 * 9.81 * 0.02 / (2 * math.pi), rel=1e-14)


def test_continuous_default_axis_and_rotated_inertial():
    m = load_model("""<robot name="r"><link name="a"/>
      <link name="b"><inertial><origin xyz="0.5 0 0" rpy="0 0 1.5707963267948966"/>
        <mass value="2"/><inertia ixx="0.1" iyy="0.3" izz="0.2" ixy="0" ixz="0" iyz="0"/>
      </inertial></link>
      <joint name="spin" type="continuous"><parent link="a"/><child link="b"/></joint>
    </robot>""")
    j = m.joint('spin')
    np.testing.assert_array_equal(j.axis, [1, 0, 0])      # URDF's default axis
    assert j.position_limits == (-math.inf, math.inf)
    # Rz(90 deg) swaps the x and y moments into the link frame.
    np.testing.assert_allclose(np.diag(m.body('b').inertial.inertia), [0.3, 0.1, 0.2],
                               atol=1e-15)


@pytest.mark.parametrize('joint,message', [
    ('<joint name="j" type="revolute"><parent link="a"/><child link="b"/>'
     '<mimic joint="k"/><limit lower="-1" upper="1"/></joint>',
     "joint 'j': mimics unknown joint 'k'"),
    ('<joint name="j" type="revolute"><parent link="a"/><child link="b"/>'
     '<mimic joint="j"/><limit lower="-1" upper="1"/></joint>',
     "joint 'j': a joint cannot mimic itself"),
    ('<joint name="j" type="revolute"><parent link="a"/><child link="b"/>'
     '<mimic joint="k" multiplier="x"/><limit lower="-1" upper="1"/></joint>',
     "joint 'j' <mimic>: multiplier='x' is not 1 numbers"),
    ('<joint name="j" type="floating"><parent link="a"/><child link="b"/></joint>',
     "joint 'j': joint type 'floating' is not supported"),
    ('<joint name="j" type="screw"><parent link="a"/><child link="b"/></joint>',
     'screw joints need <drake:screw_thread_pitch'),
    ('<joint name="j" type="revolute"><parent link="a"/><child link="c"/>'
     '<limit lower="-1" upper="1"/></joint>', "joint 'j': unknown link 'c'"),
    ('<joint name="j" type="revolute"><parent link="a"/><child link="b"/>'
     '<origin xyz="1 two 3"/><limit lower="-1" upper="1"/></joint>',
     "joint 'j': xyz='1 two 3' is not 3 numbers"),
    ('<joint name="j" type="revolute"><parent link="a"/><child link="b"/>'
     '<axis xyz="0 0 0"/><limit lower="-1" upper="1"/></joint>', 'axis must have a direction'),
    ('<joint name="j" type="revolute"><parent link="a"/><child link="b"/>'
     '<limit lower="nan" upper="1"/></joint>', "lower='nan' must be 1 finite numbers"),
    ('<link name="c"><inertial><mass value="-1"/></inertial></link>'
     '<joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint>'
     '<joint name="k" type="fixed"><parent link="b"/><child link="c"/></joint>',
     "body 'c': mass must be >= 0, got -1.0"),
])
def test_invalid_urdf(joint, message):
    text = f'<robot name="r"><link name="a"/><link name="b"/>{joint}</robot>'
    with pytest.raises(ModelError) as err:
        load_model(text)
    assert message in str(err.value)


def test_tree_errors():
    with pytest.raises(ModelError, match='one tree; roots found'):
        load_model('<robot name="r"><link name="a"/><link name="b"/></robot>')
    # example-robot-data's ur3.urdf: xacro output of a file that only defines macros.
    with pytest.raises(ModelError, match='the robot has no <link>'):
        load_model('<robot xmlns:xacro="http://wiki.ros.org/xacro"><!-- x --></robot>')
    with pytest.raises(ModelError, match='declares a DOCTYPE'):
        load_model('<!DOCTYPE robot SYSTEM "file:///etc/passwd"><robot name="r"/>')


LENIENT = """
  <?xml version="1.0"?>
<robot name="messy">
  <link name="a" type="base"/>
  <link name="b"><contact><lateral_friction value="1"/></contact>
    <inertial><mass value="1"/><origin xyz="0.1 0 0"/>
      <inertia ixx="0.001" iyy="0.001" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="c"><contact/><inertial><origin xyz="0 0 0.2"/></inertial></link>
  <link name="d"/>
  <joint name="j" type="revolute" dont_collapse="true"><parent link="a"/><child link="b"/>
    <axis xyz="0 1 0"/><limit lower="0" upper="-1" effort="1" velocity="1"/></joint>
  <joint name="k" type="prismatic"><parent link="b"/><child link="c"/></joint>
  <joint name="m" type="continuous"><parent link="c"/><child link="d"/><wobble/></joint>
  <sensor name="cam"/>
</robot>
"""


def test_what_real_files_contain_is_accepted_with_a_warning_naming_it():
    model = load_model(LENIENT)
    assert model.joint_names == ('j', 'k', 'm') and model.root_frame == 'a'
    warnings = '\n'.join(model.warnings)
    for expected in [
            'white space before the XML declaration',
            "joint 'j': <limit lower=\"0\" upper=\"-1\"> has lower > upper",
            "joint 'k': prismatic joint without <limit>; assumed unlimited",
            "link 'b' <inertial>: inertia is not physical",
            "link 'c' <inertial>: no <mass value=\"...\">; assumed 0 kg",
            "ignored unknown element <contact> in 2 links (link 'b', link 'c')",
            "ignored unknown element <wobble> in joint 'm'",
            "ignored unknown element <sensor> in robot 'messy'",
            "ignored unknown attribute type= in link 'a'",
            "ignored unknown attribute dont_collapse= in joint 'j'"]:
        assert expected in warnings
    assert len(model.warnings) == 10
    for name in ('j', 'k'):     # what was assumed: no limits
        assert model.joint(name).position_limits == (-math.inf, math.inf)
    # The non-physical tensor is kept as written; gravity uses the mass and centre only.
    assert model.body('b').inertial.inertia[2, 2] == 0.01
    assert model.gravity_generalized_forces([0.0, 0.0, 0.0])[0] == pytest.approx(9.81 * 0.1)
    assert model.body('c').inertial.mass == 0.0


def test_a_clean_file_has_no_warnings():
    assert load_model(CONFIG / 'example_robot.urdf').warnings == ()
