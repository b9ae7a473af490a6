"""
Every command block of the README and of the doc/ pages runs, as written, as a person would.

Each ```bash/```python block carries a ``<!-- readme-test: SCENARIO -->`` marker; blocks of
one scenario run in order in one shell (readme_shim.bash lets a script do what a person does
in two terminals). A block without a marker fails the test, so no untested command gets in.
Substituted: ``<this repository>`` (this checkout) and ``~`` (a temporary home). The doc/
pages' shell blocks run in a scratch folder that has the checkout's config/, examples/ and
.venv, so their outputs land there, not in the checkout.
"""

import math
import pathlib
import re
import subprocess
import sys

from cli_harness import base_env, needs_colcon, needs_ros2, REPO, VENV, venv_prelude
import pytest
import yaml

pytestmark = pytest.mark.cli

README = REPO / 'README.md'
SHIM = pathlib.Path(__file__).resolve().parent / 'readme_shim.bash'
MARKER = re.compile(r'<!-- readme-test: (\w+) -->\s*\n```(\w+)\n(.*?)```', re.S)
FENCE = re.compile(r'^```(bash|sh|python|console)\s*$', re.M)


PAGES = sorted((REPO / 'doc').glob('*.md'))


def blocks(path=README):
    """Return [(scenario, language, text)] of the marked blocks of ``path``, in order."""
    return MARKER.findall(path.read_text())


@pytest.mark.parametrize('path', [README, *PAGES], ids=lambda p: p.name)
def test_every_command_block_is_marked(path):
    text = path.read_text()
    assert len(FENCE.findall(text)) == len(blocks(path)), (
        f'a ```bash/```python block of {path.name} has no <!-- readme-test: ... --> marker')
    expected = ({'make', 'venv', 'workspace', 'python'} if path == README
                else {'docs', 'python'})
    assert {s for s, _, _ in blocks(path)} <= expected


def _scratch(tmp_path):
    """Return a folder with the checkout's config/, examples/ and .venv (as links)."""
    work = tmp_path / 'work'
    work.mkdir()
    for name in ('config', 'examples', '.venv'):
        (work / name).symlink_to(REPO / name)
    return work


def _commands(scenario, path=README):
    return '\n'.join(text for s, lang, text in blocks(path)
                     if s == scenario and lang == 'bash')


def _script(scenario, body):
    return f'source {SHIM}\n{venv_prelude()}\nset -e -o pipefail\n{body}\n'


def _run(script, cwd, tmp_path, env=None, timeout=600):
    full_env = dict(base_env(), TB_LOGS=str(tmp_path), **(env or {}))
    proc = subprocess.run(['bash', '-c', script], cwd=cwd, env=full_env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f'{script}\n--- exit {proc.returncode}:\n{proc.stdout}'
    return proc.stdout


def test_two_commands():
    """`make test` is the run executing this test (.ci/run calls it); `make demo` runs here."""
    lines = [line.split('#')[0].strip() for line in _commands('make').splitlines()]
    assert lines == ['make test', 'make demo']
    assert 'make test' in (REPO / '.ci' / 'run').read_text()
    if not (REPO / '.venv').resolve() == VENV.resolve():
        pytest.skip('make demo builds .venv in the checkout; this run uses another venv')
    proc = subprocess.run(['make', 'demo'], cwd=REPO, env=base_env(), text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    assert proc.returncode == 0, proc.stdout
    assert 'gravity' in proc.stdout.lower(), proc.stdout
    # Issue 15: motor torques next to the joint holding torques, live and offline.
    live = re.search(r'(\d+) actuator_commands from transmission_bridge', proc.stdout)
    assert live and int(live.group(1)) > 0, proc.stdout
    assert 'no actuator_commands with this stamp' not in proc.stdout
    assert re.search(r'\| +shoulder_lift_motor +-?\d+\.\d{4}', proc.stdout), proc.stdout
    assert re.search(r'[1-9]\d* actuator_commands \(vectorised\)', proc.stdout), proc.stdout
    # Then on MuJoCo: the holding torques, through the bridge's lossy motors, hold the arm.
    drift = re.search(r'drift over (\d+\.\d) s = (\d+\.\d+) mrad', proc.stdout)
    assert drift and float(drift.group(1)) >= 2.0 and float(drift.group(2)) < 1.0, proc.stdout


def test_the_legged_demo_shows_its_ankle_motors_holding_the_leg(tmp_path):
    """`make demo ROBOT=legged` (run here by the module it calls, with this run's venv)."""
    assert '--robot $(ROBOT)' in (REPO / 'Makefile').read_text()
    proc = subprocess.run([sys.executable, '-m', 'transmission_bridge.tools.demo', '--robot',
                           'legged', '--output', str(tmp_path)], cwd=REPO, env=base_env(),
                          text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout
    live = re.search(r'(\d+) joint_states and (\d+) actuator_commands', proc.stdout)
    assert live and live.group(1) == live.group(2) == '400', proc.stdout
    assert re.search(r'\| +left_ankle_upper_motor +-?\d+\.\d{4}', proc.stdout), proc.stdout
    assert 'no actuator_commands with this stamp' not in proc.stdout
    assert re.search(r'400 actuator_commands \(vectorised\)', proc.stdout), proc.stdout
    assert (tmp_path / 'legged_robot.png').is_file()
    # then on MuJoCo's ground: stands, crouches, stands again by joint impedance through the
    # bridge's linkage maps, whose joint_states equal MuJoCo's own joint state in every state
    heights = [float(h) for h in re.findall(r'base height (\d+\.\d+) m', proc.stdout)]
    assert len(heights) == 4 and heights[0] > 0.9 and heights[2] > 0.9, proc.stdout
    assert heights[1] < heights[0] - 0.03 and heights[3] > 0.8, proc.stdout     # crouched
    agree = re.search(r'closed chains\), (\d+) states: max \|dq\| = (\S+) rad, max \|dv\| = '
                      r'(\S+) rad/s', proc.stdout)
    assert agree and int(agree.group(1)) > 3000, proc.stdout
    assert float(agree.group(2)) < 1e-6 and float(agree.group(3)) < 1e-4, proc.stdout


@needs_ros2
def test_try_it_without_hardware(tmp_path):
    if not (REPO / '.venv').resolve() == VENV.resolve():
        pytest.skip('the README activates .venv of the checkout; this run uses another venv')
    out = _run(_script('venv', _commands('venv')), _scratch(tmp_path), tmp_path)
    message = yaml.safe_load(out[out.index('header:'):].split('---')[0])
    assert message['name'][0] == 'shoulder_pan' and len(message['effort']) == 7


@needs_ros2
@needs_colcon
def test_your_robot_in_three_steps_and_recorded_data(tmp_path):
    home = tmp_path / 'home'
    home.mkdir()
    commands = _commands('workspace').replace('<this repository>', str(REPO))
    # The test's own checks after the README's commands, in the same shell:
    check = ('echo "CHECK offset: $(ros2 param get /transmission_bridge joints.j2.offset)"\n'
             'echo "CHECK bag: $(ls ~/ros2_ws/run1_joints)"')
    out = _run(_script('workspace', f'{commands}\n{check}'), home, tmp_path,
               env={'HOME': str(home), 'TB_STANDIN_MOTORS': '1'})
    assert 'Finished <<< transmission_bridge' in out
    assert 'success=True' in out and 'Set parameter successful' in out
    saved = yaml.safe_load((home / 'ros2_ws' / 'my_calibration.yaml').read_text())
    joints = saved['/transmission_bridge']['ros__parameters']['joints']
    assert joints['j2']['offset'] == 0.0123
    assert 'CHECK offset: Double value is: 0.0123' in out, out
    assert re.search(r'CHECK bag: .*metadata\.yaml', out), out
    assert re.search(r'\d+ messages read, \d+ actuator states -> \d+ joint_states', out), out
    # Each motor's holding torque; the SCARA's two arm joints turn about vertical axes (their
    # motors hold no weight: only their joints' damping at the measured motion, NOTATION.md's
    # one motion, at most b * the stand-in motion's top speed / n), the quill's holds its weight.
    from transmission_bridge.simulation.demo_motion import AMPLITUDE, FREQUENCY
    motors = yaml.safe_load(out[out.index('header:'):].split('---')[0])
    assert motors['name'] == ['j1_motor', 'j2_motor', 'quill_motor'], out
    top_speed = 2 * math.pi * FREQUENCY * AMPLITUDE             # rad/s of each joint
    for effort, (damping, reduction) in zip(motors['effort'][:2], ((0.2, 80.0), (0.1, -50.0))):
        assert abs(effort) <= damping * top_speed / abs(reduction) * (1 + 1e-9), motors
    assert abs(motors['effort'][2]) > 10 * max(abs(e) for e in motors['effort'][:2]), motors


PYTHON_BLOCKS = [(path, k, text) for path in [README, *PAGES]
                 for k, (s, lang, text) in enumerate(blocks(path)) if s == 'python']


@pytest.mark.parametrize('path,k,code', PYTHON_BLOCKS,
                         ids=[f'{p.name}-{k}' for p, k, _ in PYTHON_BLOCKS])
def test_python_blocks(path, k, code):
    proc = subprocess.run([sys.executable, '-c', code], cwd=REPO, text=True,
                          capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


DOC_SESSIONS = [p for p in PAGES if _commands('docs', p)]


@needs_ros2
@pytest.mark.parametrize('path', DOC_SESSIONS, ids=lambda p: p.name)
def test_doc_page_commands(path, tmp_path):
    if not (REPO / '.venv').resolve() == VENV.resolve():
        pytest.skip('the pages activate .venv of the checkout; this run uses another venv')
    work = _scratch(tmp_path)
    _run(_script('docs', _commands('docs', path)), work, tmp_path, timeout=300)
    for output in re.findall(r'(?:convert \S+|_record) (\w+)', _commands('docs', path)):
        assert (work / output / 'metadata.yaml').is_file(), output
