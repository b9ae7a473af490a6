"""The math libraries import no ROS: checked on the source, and by importing them bare."""

import ast
import pathlib
import subprocess
import sys

import pytest

PKG = pathlib.Path(__file__).resolve().parent.parent / 'transmission_bridge'
ALLOWED = {'numpy', 'yaml'} | set(sys.stdlib_module_names)
# The one optional compiled dependency, where it may be imported (with a fallback: the tests
# run the libraries without it): the kinematics kernels' folder and the linkage loops.
OPTIONAL = {'kernels': {'numba'}, 'linkage_loops.py': {'numba'}}


def _imports(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.split('.')[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split('.')[0]


@pytest.mark.parametrize('library', ['transmissions', 'kinematics'])
def test_library_imports_only_numpy_yaml_stdlib_and_optional_numba(library):
    files = sorted((PKG / library).rglob('*.py'))
    if library == 'transmissions':
        assert files, 'no sources found: the check would pass vacuously'
    for path in files:
        allowed = (ALLOWED | {'transmission_bridge'} | OPTIONAL.get(path.parent.name, set())
                   | OPTIONAL.get(path.name, set()))
        foreign = {m for m in _imports(path) if m not in allowed}
        assert not foreign, f'{path.name} imports {sorted(foreign)}'


@pytest.mark.parametrize('library', ['transmissions', 'kinematics'])
def test_importing_library_loads_no_rclpy(library):
    code = (f'import sys, transmission_bridge.{library}; '
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
    'from transmission_bridge.bridge.state import ActuatorStates\n'
    'from transmission_bridge.bridge.commands import CommandMapper\n'
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
    path = PKG.parent / 'config' / robot
    result = subprocess.run([sys.executable, '-c', _BRIDGE_SIDES, str(path)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-1] == str(loads), result.stdout


@pytest.mark.parametrize('node', ['bridge/node.py', 'robot_state/node.py'])
def test_node_files_stay_small(node):
    # ROS wiring only: parameter tables, message routes, diagnostics and watchdog glue live
    # in rooms of their own (settings.py, routes.py, supervision.py), which tests drive
    # without a node.
    lines = (PKG / node).read_text().count('\n')
    assert lines <= 350, f'{node}: {lines} lines'


def test_the_bridge_node_imports_neither_the_kinematics_library_nor_numba():
    code = ('import sys, transmission_bridge.bridge.node; '
            "print(sorted({m.split('.')[0] if m == 'numba' else m for m in sys.modules "
            "if m == 'numba' or m.startswith('transmission_bridge.kinematics')}))")
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split('\n')[-2] == '[]', result.stdout
