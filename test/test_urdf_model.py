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
     "joint 'j': mimic joints are not supported"),
    ('<joint name="j" type="revolute"><parent link="a"/><child link="b"/></joint>',
     "joint 'j': revolute joints need a <limit>"),
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
     '<limit lower="1" upper="-1"/></joint>', 'lower <= upper'),
])
def test_invalid_urdf(joint, message):
    text = f'<robot name="r"><link name="a"/><link name="b"/>{joint}</robot>'
    with pytest.raises(ModelError) as err:
        load_model(text)
    assert message in str(err.value)


def test_tree_errors():
    with pytest.raises(ModelError, match='one tree; roots found'):
        load_model('<robot name="r"><link name="a"/><link name="b"/></robot>')
    with pytest.raises(ModelError, match='declares a DOCTYPE'):
        load_model('<!DOCTYPE robot SYSTEM "file:///etc/passwd"><robot name="r"/>')
