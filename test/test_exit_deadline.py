"""The teardown deadline: it ends a process stuck in C code that holds the GIL, and only that."""

import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith('linux'),
                                reason='POSIX timers with SIGEV_THREAD: Linux only')

SCRIPT = """
import ctypes, sys
from transmission_bridge.ros.exit_deadline import exit_deadline
with exit_deadline({seconds}, {code}, 'deadline passed'):
    ctypes.PyDLL(None).sleep({body})    # holds the GIL: no Python thread could run
print('body finished', flush=True)
sys.exit(3)
"""


def _run(seconds, code, body):
    return subprocess.run([sys.executable, '-c', SCRIPT.format(seconds=seconds, code=code,
                                                               body=body)],
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize('code', [0, 7])
def test_a_body_stuck_past_the_deadline_ends_with_the_given_code_and_the_message(code):
    done = _run(seconds=0.5, code=code, body=30)
    assert done.returncode == code, done
    assert done.stderr.startswith('deadline passed: '), done.stderr
    assert 'body finished' not in done.stdout


def test_a_body_that_finishes_in_time_goes_on_and_no_timer_fires_later():
    # The body ends at 1 s, the deadline would be at 2 s; the script then lives on to 4 s.
    script = SCRIPT.replace('sys.exit(3)', 'import time; time.sleep(3); sys.exit(3)')
    done = subprocess.run([sys.executable, '-c', script.format(seconds=2, code=0, body=1)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 3, done
    assert done.stdout == 'body finished\n'
    assert 'deadline passed' not in done.stderr


def test_settle_memory_freezes_only_in_a_nodes_own_process():
    # run_node enables it; a node built beside other code (a test, a benchmark) freezes
    # nothing of its host's.
    code = ('import gc\n'
            'from transmission_bridge.ros import node_main\n'
            'node_main.settle_memory()\n'
            'before = gc.get_freeze_count()\n'
            'node_main._SETTLE.append(True)\n'
            'node_main.settle_memory()\n'
            'print(before, gc.get_freeze_count() > 1000)\n')
    done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ['0', 'True']
