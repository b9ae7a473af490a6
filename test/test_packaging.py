"""colcon builds the package as on a ROS machine: executables, launch, config, ament index."""

import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.packaging

EXECUTABLES = ['transmission_bridge', 'kinematics', 'actuator_simulator',
               'transmission_bridge_replay', 'transmission_bridge_record',
               'transmission_bridge_convert']


@pytest.fixture(scope='module')
def install(tmp_path_factory):
    ws = tmp_path_factory.mktemp('ws')
    src = ws / 'src' / 'transmission_bridge'
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        '.venv', '.git', 'build', 'install', 'log', '__pycache__', '*.egg-info', '.hypothesis'))
    colcon = pathlib.Path(sys.executable).parent / 'colcon'
    result = subprocess.run(
        [str(colcon), '--log-base', str(ws / 'log'), 'build', '--base-paths', str(ws / 'src'),
         '--build-base', str(ws / 'build'), '--install-base', str(ws / 'install'),
         '--event-handlers', 'console_cohesion-'],
        cwd=ws, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    return ws / 'install' / 'transmission_bridge'


def test_executables_in_lib(install):
    for name in EXECUTABLES:
        exe = install / 'lib' / 'transmission_bridge' / name
        assert exe.is_file(), sorted(p.name for p in (install / 'lib').rglob('*'))
        assert exe.stat().st_mode & 0o111


def test_share_files_and_ament_index(install):
    share = install / 'share' / 'transmission_bridge'
    assert (share / 'package.xml').is_file()
    for path in (ROOT / 'launch').glob('*.launch.py'):
        assert (share / 'launch' / path.name).is_file()
    for path in [*(ROOT / 'config').glob('*.yaml'), *(ROOT / 'config').glob('*.urdf')]:
        assert (share / 'config' / path.name).is_file()
    marker = install / 'share' / 'ament_index' / 'resource_index' / 'packages'
    assert (marker / 'transmission_bridge').is_file()


def test_console_scripts_match_setup():
    setup = (ROOT / 'setup.py').read_text()
    for name in EXECUTABLES:
        assert f"'{name} = " in setup
