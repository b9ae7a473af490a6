"""load_transmissions: the YAML format, and errors that name the exact key."""


from conftest import CONFIG
import pytest
from transmission_bridge.transmissions import ConfigError, load_transmissions
import yaml
from yaml_cases import broken

GOOD = {'transmissions': [
    {'name': 'wrist', 'type': 'differential',
     'actuators': [{'name': 'l', 'mechanical_reduction': 50.0},
                   {'name': 'r', 'mechanical_reduction': -50.0}],
     'joints': [{'name': 'pitch', 'mechanical_reduction': 1.0, 'offset': 0.0},
                {'name': 'roll', 'mechanical_reduction': 1.0, 'offset': 0.0}]},
    {'name': 'elbow', 'type': 'simple', 'actuators': [{'name': 'elbow_motor'}],
     'joints': [{'name': 'elbow', 'mechanical_reduction': 100.0, 'offset': 0.1,
                 'default_position': 0.5, 'damping': 0.2}]},
]}


def _broken(path, value):
    return broken(GOOD, path, value)


def test_good_mapping_and_file(tmp_path):
    ts = load_transmissions(GOOD)
    assert ts.joint_names == ('pitch', 'roll', 'elbow')
    assert ts.joint('elbow').default_position == 0.5
    assert ts.transmissions[1].reduction == 100.0          # 1 (actuator) * 100 (joint)
    f = tmp_path / 't.yaml'
    f.write_text(yaml.safe_dump(GOOD))
    assert load_transmissions(f) == ts
    assert load_transmissions(str(f)) == ts


def test_shipped_example_loads():
    assert load_transmissions(CONFIG / 'example_robot_transmissions.yaml').num_joints == 7


@pytest.mark.parametrize('path,value,message', [
    (('transmissions', 1, 'joints', 0, 'mechanical_reduction'), 0.0,
     r"transmissions\[1\]\.joints\[0\]\.mechanical_reduction \(joint 'elbow'\) must be finite "
     r'and non-zero, got 0.0'),
    (('transmissions', 0, 'actuators', 1, 'mechanical_reduction'), float('nan'),
     r"transmissions\[0\]\.actuators\[1\]\.mechanical_reduction \(actuator 'r'\) must be "
     r'finite and non-zero, got nan'),
    (('transmissions', 0, 'actuators', 0, 'mechanical_reduction'), float('inf'),
     r'actuators\[0\]\.mechanical_reduction .* got inf'),
    (('transmissions', 1, 'joints', 0, 'offset'), 'fifty',
     r"transmissions\[1\]\.joints\[0\]\.offset \(joint 'elbow'\) must be a number, got 'fifty'"),
    (('transmissions', 1, 'joints', 0, 'offset'), True, r'offset .* must be a number, got True'),
    (('transmissions', 1, 'joints', 0, 'damping'), -0.1,
     r"transmissions\[1\]\.joints\[0\]\.damping \(joint 'elbow'\) must be >= 0, got -0.1"),
    (('transmissions', 1, 'joints', 0, 'colour'), 'red',
     r"transmissions\[1\]\.joints\[0\]: unknown key 'colour'"),
    (('transmissions', 1, 'gearbox'), 'x', r"transmissions\[1\]: unknown key 'gearbox'"),
    (('extra',), 1, r"top level: unknown key 'extra'"),
    (('transmissions', 1, 'type'), 'harmonic',
     r"transmission 'elbow': transmissions\[1\]: unknown type 'harmonic'"),
    (('transmissions', 1, 'type'), KeyError,
     r"transmission 'elbow': transmissions\[1\]: missing key 'type'"),
    (('transmissions', 1, 'name'), KeyError, r"transmissions\[1\]: missing key 'name'"),
    (('transmissions', 1, 'joints', 0, 'name'), KeyError,
     r"transmissions\[1\]\.joints\[0\]: missing key 'name'"),
    (('transmissions', 1, 'joints', 0, 'name'), '', r'joints\[0\]\.name must be a non-empty name'),
    (('transmissions', 0, 'joints'), [{'name': 'pitch'}],
     r"transmission 'wrist': transmissions\[0\]: type 'differential' takes 2 joints, got 1"),
    (('transmissions', 1, 'actuators'), [{'name': 'a'}, {'name': 'b'}],
     r"type 'simple' takes 1 actuators, got 2"),
    (('transmissions', 1, 'joints', 0, 'name'), 'pitch',
     r"duplicate joint name 'pitch' \(in transmission 'wrist' and in transmission 'elbow'\)"),
    (('transmissions', 1, 'actuators', 0, 'name'), 'l',
     r"duplicate actuator name 'l' \(in transmission 'wrist' and in transmission 'elbow'\)"),
    (('transmissions', 1, 'joints', 0, 'mechanical_reduction'), 0.0,
     r"transmission 'elbow': transmissions\[1\]\.joints\[0\]\.mechanical_reduction "
     r"\(joint 'elbow'\)"),
    (('transmissions', 1, 'name'), 'wrist', r"duplicate transmission name 'wrist'"),
    (('transmissions',), {'name': 'x'}, r'transmissions must be a list'),
    (('transmissions', 1, 'joints'), {'name': 'x'}, r'transmissions\[1\]\.joints must be a list'),
    (('transmissions', 1), 'elbow', r'transmissions\[1\] must be a mapping'),
])
def test_errors_name_the_key(path, value, message):
    with pytest.raises(ConfigError, match=message):
        load_transmissions(_broken(path, value))


def test_file_errors_name_the_path(tmp_path):
    missing = tmp_path / 'nope.yaml'
    with pytest.raises(ConfigError, match=f"cannot read '{missing}'"):
        load_transmissions(missing)
    bad = tmp_path / 'bad.yaml'
    bad.write_text('transmissions: [\n')
    with pytest.raises(ConfigError, match=f"'{bad}' is not valid YAML"):
        load_transmissions(bad)
    empty = tmp_path / 'empty.yaml'
    empty.write_text('')
    with pytest.raises(ConfigError, match=f'{empty}: top level must be a mapping'):
        load_transmissions(empty)
    sneaky = tmp_path / 'sneaky.yaml'
    sneaky.write_text('transmissions: !!python/object/apply:os.system ["true"]\n')
    with pytest.raises(ConfigError, match='not valid YAML'):
        load_transmissions(sneaky)


def test_a_path_with_a_nul_byte_is_a_clean_error():
    # Found by test_fuzz.py: open() raises ValueError, not OSError, for such a path.
    from transmission_bridge.kinematics import load_model, ModelError
    with pytest.raises(ConfigError, match='cannot read'):
        load_transmissions('\x00robot.yaml')
    with pytest.raises(ModelError, match='cannot read'):
        load_model('\x00robot.yaml')
    with pytest.raises(ConfigError, match='cannot read'):
        load_transmissions('robot\x00.urdf')
