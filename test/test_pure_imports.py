"""The math libraries import no ROS: checked on the source, and by importing them bare."""

import ast
import os
import pathlib
import subprocess
import sys

import pytest

PKG = pathlib.Path(__file__).resolve().parent.parent / 'transmission_bridge'
ALLOWED = {'numpy', 'yaml'} | set(sys.stdlib_module_names)
# The one optional compiled dependency, where it may be imported (with a fallback: the tests
# run the libraries without it): the kinematics kernels' folder (the identification's
# regressor) and the one helper that compiles every module of loops.
OPTIONAL = {'kernels': {'numba'}, 'loops.py': {'numba'}}


def _imports(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.split('.')[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split('.')[0]


@pytest.mark.parametrize('library', ['transmissions', 'kinematics', '_shared'])
def test_library_imports_only_numpy_yaml_stdlib_and_optional_numba(library):
    files = sorted((PKG / library).rglob('*.py'))
    if library == 'transmissions':
        assert files, 'no sources found: the check would pass vacuously'
    for path in files:
        allowed = (ALLOWED | {'transmission_bridge'} | OPTIONAL.get(path.parent.name, set())
                   | OPTIONAL.get(path.name, set()))
        foreign = {m for m in _imports(path) if m not in allowed}
        assert not foreign, f'{path.name} imports {sorted(foreign)}'


# The bridge's pure rooms: the mapping (state and commands) and the control laws. They may
# use the libraries and the messages without ROS (the input checks, the CDR layouts), and
# nothing of ros/.
ROOM_ALLOWED = {'transmission_bridge.transmissions', 'transmission_bridge.messages',
                'transmission_bridge.mapping', 'transmission_bridge.control',
                'transmission_bridge._shared'}


def _room_imports(path, room):
    """Yield the absolute name of every module ``path`` (in ``room``) imports."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = f'transmission_bridge.{room}'
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module
            if node.level:
                parts = package.split('.')[:len(package.split('.')) - node.level + 1]
                base = '.'.join(parts + ([node.module] if node.module else []))
            for alias in node.names:            # a name may be a module: judged with it
                yield f'{base}.{alias.name}'


@pytest.mark.parametrize('room', ['mapping', 'control'])
def test_the_bridge_s_pure_rooms_import_no_ros(room):
    files = sorted((PKG / room).glob('*.py'))
    assert len(files) > 3, 'no sources found: the check would pass vacuously'
    for path in files:
        for name in _room_imports(path, room):
            top = name.split('.')[0]
            if top == 'transmission_bridge':
                assert any(name == a or name.startswith(a + '.') for a in ROOM_ALLOWED), (
                    f'{path.name} imports {name}')
            else:
                assert top in ALLOWED, f'{path.name} imports {name}'


@pytest.mark.parametrize('library', ['transmissions', 'kinematics', 'mapping', 'control'])
def test_importing_library_loads_no_rclpy(library):
    code = (f'import sys, pkgutil, importlib, transmission_bridge.{library} as room; '
            '[importlib.import_module(f"{room.__name__}.{m.name}") '
            'for m in pkgutil.iter_modules(room.__path__)]; '
            "bad = [m for m in sys.modules if m.split('.')[0] in ('rclpy', 'rcl_interfaces')]; "
            'print(bad); sys.exit(1 if bad else 0)')
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


# A robot without linkages never loads numba (about 70 MB and half a second of import); one
# with a linkage loads it when the set is built. Both halves in one child process each, so
# the check cannot pass because numba happens not to be installed.
_BRIDGE_SIDES = (
    'import sys\n'
    'from transmission_bridge.transmissions import load_transmissions\n'
    'from transmission_bridge.mapping.state import ActuatorStates\n'
    'from transmission_bridge.mapping.commands import CommandMapper\n'
    'import transmission_bridge.kinematics\n'
    'ts = load_transmissions(sys.argv[1])\n'
    'states, commands = ActuatorStates(ts), CommandMapper(ts, True)\n'
    'out = states.ingest("s", list(ts.actuator_names), [0.0] * ts.num_actuators, [], [], 1)\n'
    'assert out is not None and len(out.names) == ts.num_joints, out\n'
    'commands.map_command(list(ts.joint_names), [0.0] * ts.num_joints, [], [])\n'
    'print("numba" in sys.modules)\n')


@pytest.mark.parametrize('robot, loads', [('example_robot_transmissions.yaml', False),
                                          ('example_robot.urdf', False),
                                          ('scara_transmissions.yaml', False),
                                          ('legged_robot.urdf', True)])
def test_numba_loads_only_for_a_set_with_a_linkage(robot, loads):
    if loads:
        pytest.importorskip('numba', reason='numba is not installed: the Python loops run')
        from transmission_bridge._shared import ahead
        # Compiled ahead of time (make test's warm-up builds it): loaded without numba.
        loads = ahead.LINKAGE.load() is None
    path = PKG.parent / 'config' / robot
    result = subprocess.run([sys.executable, '-c', _BRIDGE_SIDES, str(path)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-1] == str(loads), result.stdout


@pytest.mark.parametrize('node', ['bridge/node.py', 'kinematics_node/node.py'])
def test_node_files_stay_small(node):
    # ROS wiring only: parameter tables, message routes, diagnostics and the deadline's glue
    # live in rooms of their own (settings.py, mapping/routes.py, status.py), which
    # tests drive without a node.
    lines = (PKG / node).read_text().count('\n')
    assert lines <= 350, f'{node}: {lines} lines'


@pytest.mark.parametrize('room', ['bridge', 'mapping', 'control'])
def test_the_bridge_s_rooms_keep_modules_small(room):
    for path in sorted((PKG / room).glob('*.py')):
        lines = path.read_text().count('\n')
        assert lines <= 450, f'{room}/{path.name}: {lines} lines'


def test_a_bridge_without_goals_loads_neither_rclpy_action_nor_control_msgs():
    code = ('import sys, rclpy\n'
            'from rclpy.parameter import Parameter\n'
            'from transmission_bridge.bridge.node import TransmissionBridge\n'
            "rclpy.init(args=['--ros-args', '--log-level', 'fatal'], domain_id=%d)\n"
            'node = TransmissionBridge(parameter_overrides=[\n'
            "    Parameter('transmissions_file', value=sys.argv[1]),\n"
            "    Parameter('follow_joint_trajectory', value=sys.argv[2] == 'true')])\n"
            "print(sorted({m.split('.')[0] if m.startswith('control_msgs') else m\n"
            "              for m in sys.modules if m == 'rclpy.action'\n"
            "              or m.startswith('control_msgs')}))\n"
            'node.destroy_node()\n')
    config = str(PKG.parent / 'config' / 'example_robot_transmissions.yaml')
    seen = {}
    for follow in ('false', 'true'):
        result = subprocess.run([sys.executable, '-c', code % (90 + len(seen)), config,
                                 follow], capture_output=True, text=True, timeout=120,
                                env=dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST'))
        assert result.returncode == 0, result.stderr
        seen[follow] = result.stdout.split('\n')[-2]
    assert seen['false'] == '[]', seen
    assert 'rclpy.action' in seen['true'], seen     # the check can fail: goals load them


def test_the_bridge_node_imports_neither_the_kinematics_library_nor_numba():
    code = ('import sys, transmission_bridge.bridge.node; '
            "print(sorted({m.split('.')[0] if m == 'numba' else m for m in sys.modules "
            "if m == 'numba' or m.startswith('transmission_bridge.kinematics')}))")
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split('\n')[-2] == '[]', result.stdout
