"""Shared test set-up: seeded hypothesis, named tolerances, ROS isolation helpers."""

import gc
import os
import pathlib
import signal
import subprocess
import sys

import hypothesis
import pytest

# Every generated case is reproducible: hypothesis derives examples from the test itself.
hypothesis.settings.register_profile(
    'seeded', derandomize=True, deadline=None, max_examples=200,
    suppress_health_check=[hypothesis.HealthCheck.too_slow])
hypothesis.settings.load_profile(os.environ.get('HYPOTHESIS_PROFILE', 'seeded'))

REPO = pathlib.Path(__file__).resolve().parent.parent
CONFIG = REPO / 'config'

# Set this to choose the tests' DDS domain; otherwise they derive one from the pid.
TEST_DOMAIN_ENV = 'TRANSMISSION_BRIDGE_TEST_DOMAIN_ID'


#: Set (appended to) by a test that made rclpy nodes in this process (ros_harness).
MADE_NODES = []


@pytest.hookimpl(trylast=True)       # after the fixtures' own teardown
def pytest_runtest_teardown(item, nextitem):
    """
    After a test that made rclpy nodes here, collect its reference cycles in this process.

    rclpy handles left in cycles (an action client's goal handles, futures) were collected
    later in a process forked from this one (flake8's workers), and crashed it.
    """
    if MADE_NODES:
        MADE_NODES.clear()
        gc.collect()


def choose_test_domain(environ, pid):
    """
    Return the ROS_DOMAIN_ID the tests use: never the caller's own ROS_DOMAIN_ID.

    On a robot the caller's domain is the robot's: tests must neither see its nodes nor
    be seen by them (nor by a ros2 daemon running there). 1..100, derived from ``pid``
    so that parallel runs differ, unless :data:`TEST_DOMAIN_ENV` names one.
    """
    if environ.get(TEST_DOMAIN_ENV):
        return int(environ[TEST_DOMAIN_ENV])
    domain = pid % 100 + 1
    if str(domain) == environ.get('ROS_DOMAIN_ID', '').strip():
        domain = domain % 100 + 1
    return domain


# A shell without job control starts a background command (`make test &`, nohup, cron) with
# SIGINT ignored, and every process started from it inherits that: the nodes and the ros2
# commands the tests stop with Ctrl-C's SIGINT would then ignore it until they install a
# handler of their own. A handler is reset to the default in a child, so they see Ctrl-C as
# in a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Every node, CLI call and colcon run the tests start inherits these.
os.environ['ROS_DOMAIN_ID'] = str(choose_test_domain(os.environ, os.getpid()))
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Print how many generated cases each fuzz target ran (test_fuzz.py)."""
    cases = getattr(config, '_fuzz_cases', None)
    if cases:
        terminalreporter.write_line('generated cases per fuzz target: ' + ', '.join(
            f'{name} {count}' for name, count in sorted(cases.items())))


@pytest.fixture
def burner(request):
    """Keep one core busy in another process (the 'burner' case), or do nothing ('quiet')."""
    if request.param != 'burner':
        yield None
        return
    proc = subprocess.Popen([sys.executable, '-c', 'while True: pass'])
    yield proc
    proc.kill()
    proc.wait()
