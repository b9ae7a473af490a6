"""The nodes' spin loop: every callback that is due runs, and each lap comes back to its flag."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

rclpy = pytest.importorskip('rclpy')

from ros_harness import Graph, NodeProcess, unique_namespace  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from transmission_bridge.ros import node_main  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SPIN_S = 0.3        # one lap
TIMER_S = 0.005     # a timer due 60 times within it
# A lap of 0.1 s on a queue that never empties comes back within this, s (its tick waits
# behind the events queued before it: one slow callback here).
BUSY_LAP_BOUND_S = 1.0
STOP_S = 10.0       # s a node has to exit after SIGINT (launch's SIGTERM comes after 5 s)


@pytest.mark.ros
@pytest.mark.parametrize('kind', ['events', 'single'])
def test_a_lap_runs_every_due_callback_then_returns(kind):
    # spin_once (the loop before) ran one callback per pass through Python: a timer due
    # every 5 ms ran once in a pass, however long the pass was allowed to wait.
    context = rclpy.Context()
    rclpy.init(context=context, args=[])
    try:
        node = rclpy.create_node('laps_probe', context=context)
        executor = _executor(kind, context)     # what default_executor picks, by name
        executor.add_node(node)
        ticks = []
        node.create_timer(TIMER_S, lambda: ticks.append(time.monotonic()))
        laps = node_main.Laps(executor, node, SPIN_S)
        start = time.monotonic()
        laps.run()
        took = time.monotonic() - start
        assert len(ticks) >= 3, ticks
        assert took >= SPIN_S * 0.9, took
        # Short laps come back too, lap after lap (a fresh future each).
        short = node_main.Laps(executor, node, 0.0005)
        for _ in range(200):
            short.run()
        executor.shutdown()
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)


BUSY = textwrap.dedent("""
    import sys, time
    import rclpy
    from rclpy.experimental import EventsExecutor
    from rclpy.executors import SingleThreadedExecutor
    from transmission_bridge.ros.node_main import Laps
    rclpy.init(args=[])
    node = rclpy.create_node('busy_queue')
    executor = EventsExecutor() if sys.argv[1] == 'events' else SingleThreadedExecutor()
    executor.add_node(node)
    node.create_timer(0.01, lambda: time.sleep(0.015))   # always due: the queue never empties
    laps = Laps(executor, node, 0.1)
    for _ in range(3):
        start = time.monotonic()
        laps.run()
        print(time.monotonic() - start, flush=True)
""")


@pytest.mark.ros
@pytest.mark.parametrize('kind', ['events', 'single'])
def test_a_lap_ends_on_a_queue_that_never_empties(kind):
    # With the timeout of spin_until_future_complete alone, the EventsExecutor never came back:
    # it looks at the timeout only when its queue is empty. Run apart, so that a lap that
    # never ends fails the test instead of stopping the run.
    try:
        run = subprocess.run([sys.executable, '-c', BUSY, kind], capture_output=True, text=True,
                             timeout=30, cwd=ROOT)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f'a lap did not come back in 30 s: {exc.stdout!r} {exc.stderr!r}')
    laps = [float(line) for line in run.stdout.split()]
    assert run.returncode == 0 and len(laps) == 3, run.stdout + run.stderr
    assert max(laps) < BUSY_LAP_BOUND_S, laps


@pytest.mark.ros
def test_the_simulator_running_as_fast_as_it_can_stops_on_sigint(tmp_path):
    # real_time_factor 0: the simulator's timer is always due. Before laps had their own timer,
    # SIGINT went unanswered (the flag was never looked at) until the process was killed.
    ns = unique_namespace('fastsim')
    proc = NodeProcess('transmission_bridge.tools.actuator_simulator', [
        '-p', f'transmissions_file:={ROOT}/config/example_robot_transmissions.yaml',
        '-p', 'engine:=builtin', '-p', f'model_file:={ROOT}/config/example_robot.urdf',
        '-p', 'real_time_factor:=0.0', '-r', f'__ns:={ns}', '-r', f'/clock:={ns}/clock'],
        tmp_path / 'simulator.log')
    graph = Graph(ns)
    states = graph.collect(JointState, 'actuator_states', 1000)
    try:
        assert graph.spin_until(lambda: len(states) > 200, 60), proc.output()
    finally:
        graph.close()
        start = time.monotonic()
        code = proc.stop(signal.SIGINT, timeout=STOP_S)
    took = time.monotonic() - start
    assert code == 0, (code, took, proc.output())
    assert 'Traceback' not in proc.output(), proc.output()


def _executor(kind, context):
    if kind == 'single':
        return rclpy.executors.SingleThreadedExecutor(context=context)
    from rclpy.experimental import EventsExecutor
    return EventsExecutor(context=context)
