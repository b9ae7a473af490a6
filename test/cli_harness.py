"""
Run the real ``ros2`` command line, ``ros2 launch`` and colcon as a user's shell would.

Where the commands come from: the venv's ``bin/`` (``make test`` installs the ros2 CLI,
launch and launch_ros there from ``../shared/wheelhouse`` when that folder exists), else
a sourced ROS 2 install (``ros2`` on PATH). Where neither exists (a bare pip machine) the
tests that need them skip with :data:`SKIP_REASON`.

Every command runs through ``bash -c`` with the test's own ROS_DOMAIN_ID (conftest), loopback
discovery, and ROS_LOG_DIR/ROS_HOME in a temporary folder, so nothing reaches a robot or the
user's ``~/.ros``.
"""

import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import conftest
import pytest

REPO = conftest.REPO
VENV = pathlib.Path(sys.prefix)
VENV_BIN = pathlib.Path(sys.executable).parent
PACKAGE = 'transmission_bridge'
EXECUTABLES = ['transmission_bridge', 'kinematics', 'robot_stack', 'actuator_simulator',
               'transmission_bridge_replay', 'transmission_bridge_record',
               'transmission_bridge_convert']


def _find_ros2():
    venv_ros2 = VENV_BIN / 'ros2'
    if venv_ros2.is_file():
        return str(venv_ros2)
    return shutil.which('ros2')


ROS2 = _find_ros2()
SKIP_REASON = ('the ros2 command line and launch are not installed: `make test` installs them '
               'from ../shared/wheelhouse when that folder is beside the checkout; or source '
               'a ROS 2 Jazzy install')
needs_ros2 = pytest.mark.skipif(ROS2 is None, reason=SKIP_REASON)
COLCON = shutil.which('colcon', path=str(VENV_BIN)) or shutil.which('colcon')
needs_colcon = pytest.mark.skipif(COLCON is None, reason='colcon is not installed '
                                  '(pip install colcon-common-extensions)')

_HOME = pathlib.Path(tempfile.mkdtemp(prefix='tb_ros_home_'))


def base_env():
    """Return the environment of a user's shell with this test run's isolation."""
    env = dict(os.environ)
    env.update(ROS_HOME=str(_HOME), ROS_LOG_DIR=str(_HOME / 'log'), PYTHONUNBUFFERED='1',
               RCUTILS_LOGGING_BUFFERED_STREAM='0', RMW_IMPLEMENTATION='rmw_fastrtps_cpp',
               ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    # Not in a user's shell: pytest's own, and a no-bytecode switch (with it setuptools warns
    # "byte-compiling is disabled" on stderr during colcon build).
    for name in ('PYTEST_ADDOPTS', 'PYTEST_CURRENT_TEST', 'PYTHONDONTWRITEBYTECODE'):
        env.pop(name, None)
    return env


def venv_prelude():
    """Return the shell lines that make the venv active, as ``source .venv/bin/activate`` does."""
    activate = VENV / 'bin' / 'activate'
    if activate.is_file() and os.environ.get('VIRTUAL_ENV', str(VENV)) == str(VENV):
        return f'source {activate}'
    return f'export PATH={VENV_BIN}:$PATH AMENT_PREFIX_PATH={VENV}:${{AMENT_PREFIX_PATH:-}}'


class Shell:
    """A user's shell: a prelude (``source ...``), a working folder, the test's environment."""

    def __init__(self, cwd, prelude=None):
        self.cwd = pathlib.Path(cwd)
        self.prelude = venv_prelude() if prelude is None else prelude
        self.env = base_env()
        self._background = []

    def script(self, command):
        """Return the bash script that runs ``command`` after the prelude."""
        return f'set -e\n{self.prelude}\nset +e\n{command}'

    def run(self, command, timeout=60, check=True):
        """Run ``command``; return CompletedProcess (stdout and stderr merged, text)."""
        proc = subprocess.run(['bash', '-c', self.script(command)], cwd=self.cwd, env=self.env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
        if check:
            assert proc.returncode == 0, f'$ {command}\n(exit {proc.returncode})\n{proc.stdout}'
        return proc

    def run_until(self, command, predicate, timeout=30, period=0.5):
        """Run ``command`` until ``predicate(CompletedProcess)`` holds; return the last run."""
        end = time.monotonic() + timeout
        while True:
            proc = self.run(command, timeout=max(5.0, end - time.monotonic()), check=False)
            if predicate(proc) or time.monotonic() > end:
                return proc
            time.sleep(period)

    def start(self, command, log_name):
        """Start a long-running ``command`` (``ros2 launch ...``) in the background."""
        proc = Background(self, command, self.cwd / log_name)
        self._background.append(proc)
        return proc

    def close(self):
        """Stop every background command and the ros2 daemon of this domain."""
        for proc in self._background:
            proc.stop()
        subprocess.run(['bash', '-c', self.script('ros2 daemon stop >/dev/null 2>&1 || true')],
                       cwd=self.cwd, env=self.env, timeout=30, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Background:
    """A command running in its own process group, its output in a log file."""

    def __init__(self, shell, command, log_path):
        self.command = command
        self.log_path = log_path
        self._log = open(log_path, 'w')
        self.proc = subprocess.Popen(['bash', '-c', shell.script(f'exec {command}')],
                                     cwd=shell.cwd, env=shell.env, stdout=self._log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)

    def output(self):
        """Return what the command printed so far."""
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(errors='replace')

    def wait_for(self, pattern, timeout=30):
        """Wait until the output matches ``pattern`` (regex); fail with the output if not."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if re.search(pattern, self.output()):
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        assert re.search(pattern, self.output()), (
            f'no {pattern!r} from `{self.command}` (exit {self.proc.poll()}):\n{self.output()}')

    def wait_exit(self, timeout=30):
        """Wait for the command to end by itself; return its exit code."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            raise AssertionError(f'`{self.command}` still running after {timeout} s:\n'
                                 f'{self.output()}') from None

    def stop(self, timeout=20):
        """Ctrl-C (SIGINT to the process group), as a user does; return the exit code."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self._log.close()
        return self.proc.returncode


def colcon_workspace(root):
    """
    Copy the checkout into ``root/src`` and ``colcon build`` it; return (workspace, output).

    What a user does: ``cd ~/ros2_ws/src && git clone ...; cd ..; colcon build``.
    """
    src = root / 'src' / PACKAGE
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(
        '.venv', '.git', 'build', 'install', 'log', '__pycache__', '*.egg-info', '.hypothesis',
        'demo_output', 'results'))
    shell = Shell(root, prelude=venv_prelude())
    result = shell.run('colcon build --packages-select transmission_bridge', timeout=600,
                       check=False)
    assert result.returncode == 0, result.stdout
    return root, result.stdout
