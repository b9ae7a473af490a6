"""load_model: the shipped examples, and errors that name the exact key."""

import math

from conftest import CONFIG
import numpy as np
import pytest
from transmission_bridge.kinematics import load_model, ModelError
from transmission_bridge.transmissions import load_transmissions
import yaml
from yaml_cases import broken

GOOD = {'name': 'two', 'bodies': [
    {'name': 'l1', 'parent': 'world',
     'joint': {'name': 'j1', 'type': 'revolute', 'axis': [0, 0, 1],
               'origin': {'xyz': [0, 0, 0.4], 'rpy': [0, 0, 0]}, 'damping': 0.8,
               'limits': {'lower': -2.6, 'upper': 2.6}, 'default_position': 0.0},
     'inertial': {'mass': 5.0, 'com': [0.2, 0, 0.02],
                  'inertia': {'ixx': 0.01, 'iyy': 0.08, 'izz': 0.08, 'ixy': 0, 'ixz': 0,
                              'iyz': 0}}},
    {'name': 'l2', 'parent': 'l1',
     'joint': {'name': 'j2', 'type': 'screw', 'axis': [0, 0, 1], 'pitch': 0.02}},
]}


def _broken(path, value):
    return broken(GOOD, path, value)


def test_good_and_shipped_models():
    m = load_model(GOOD)
    assert m.name == 'two' and m.joint_names == ('j1', 'j2')
    assert m.joint('j2').pitch == 0.02
    arm = load_model(CONFIG / 'example_arm_model.yaml')
    bridge = load_transmissions(CONFIG / 'example_robot_transmissions.yaml')
    assert set(bridge.joint_names) <= set(arm.joint_names)
    scara = load_model(CONFIG / 'scara_model.yaml')
    assert scara.joint('j3').type_name == 'screw'
    assert scara.joint('j3').default_position == pytest.approx(5 * math.pi)
    # The quill hangs below link2 by the default translation along -z.
    z = scara.forward_kinematics(scara.default_positions)['quill'][2, 3]
    assert z == pytest.approx(0.4 - 0.05, abs=1e-12)


@pytest.mark.parametrize('path,value,message', [
    (('bodies', 1, 'parent'), 'ghost', r"bodies\[1\]: body 'l2': unknown parent 'ghost'|"
                                       r"unknown parent 'ghost'"),
    (('bodies', 0, 'joint', 'damping'), -1.0,
     r"bodies\[0\]\.joint: joint 'j1': damping must be >= 0, got -1.0"),
    (('bodies', 0, 'joint', 'default_position'), 3.0,
     r"bodies\[0\]\.joint: joint 'j1': default_position 3.0 is outside the limits"),
    (('bodies', 0, 'joint', 'axis'), [0, 0, 0], r"bodies\[0\]\.joint: joint 'j1': axis must"),
    (('bodies', 0, 'joint', 'type'), 'ball', r'bodies\[0\]\.joint\.type: unknown joint type'),
    (('bodies', 0, 'joint', 'colour'), 1, r"bodies\[0\]\.joint: unknown key 'colour'"),
    (('bodies', 0, 'joint', 'pitch'), 0.1, r"'pitch' is only for screw joints"),
    (('bodies', 0, 'joint', 'origin', 'xyz'), [0, 0], r'origin\.xyz must have 3 entries'),
    (('bodies', 0, 'joint', 'limits', 'lo'), 1, r"limits: unknown key 'lo'"),
    (('bodies', 0, 'inertial', 'mass'), -5.0,
     r"bodies\[0\]\.inertial: body 'l1': mass must be >= 0, got -5.0"),
    (('bodies', 0, 'joint', 'mimic'), {'joint': 'j9'}, r"joint 'j1': mimics unknown joint 'j9'"),
    (('bodies', 0, 'joint', 'mimic'), {'joint': 'j2', 'gain': 2},
     r"bodies\[0\]\.joint\.mimic: unknown key 'gain'"),
    (('bodies', 0, 'joint', 'mimic'), {'joint': 'j2', 'multiplier': float('inf')},
     r'bodies\[0\]\.joint\.mimic\.multiplier must be finite'),
    (('bodies', 0, 'inertial', 'inertia', 'jxx'), 1.0, r"inertia: unknown key 'jxx'"),
    (('bodies', 0, 'inertial', 'com'), ['a', 0, 0], r'com\[0\] must be a number'),
    (('bodies', 1, 'joint', 'default_translation'), 0.01, None),
    (('bodies', 1, 'joint', 'pitch'), 0.0, r'cannot set a default translation'),
    (('bodies', 1, 'name'), 'l1', r"duplicate body name 'l1'"),
    (('bodies', 1, 'joint', 'name'), 'j1', r"duplicate joint name 'j1'"),
    (('bodies', 0, 'name'), KeyError, r"bodies\[0\]: missing key 'name'"),
    (('gravity',), [0, 0, float('nan')], r'gravity\[2\] must be finite'),
    (('links',), [], r"top level: unknown key 'links'"),
])
def test_errors_name_the_key(path, value, message):
    data = _broken(path, value)
    if path[-1] == 'pitch' and value == 0.0:
        data['bodies'][1]['joint']['default_translation'] = 0.01
    if path == ('bodies', 1, 'name'):
        data['bodies'][1]['parent'] = 'world'      # else it would be its own parent first
    if message is None:
        assert load_model(data).joint('j2').default_translation == pytest.approx(0.01)
        return
    with pytest.raises(ModelError, match=message):
        load_model(data)


def test_file_errors_and_safe_loading(tmp_path):
    with pytest.raises(ModelError, match='cannot read'):
        load_model(tmp_path / 'missing.yaml')
    evil = tmp_path / 'evil.yaml'
    evil.write_text('bodies: !!python/object/apply:os.system ["true"]\n')
    with pytest.raises(ModelError, match='not valid YAML'):
        load_model(evil)
    good = tmp_path / 'good.yaml'
    good.write_text(yaml.safe_dump(GOOD))
    assert load_model(good) == load_model(GOOD)
    with pytest.raises(ModelError, match="exactly one of 'bodies' and 'dh'"):
        load_model({'name': 'x'})


def test_default_positions_and_limits_arrays():
    arm = load_model(CONFIG / 'example_arm_model.yaml')
    np.testing.assert_array_equal(arm.default_positions, [0, -1.2, 1.5, 0.3, 0, 0.2, 0.1])
    assert arm.position_lower_limits[0] == -3.0
