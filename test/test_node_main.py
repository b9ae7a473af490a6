"""The nodes' spin loop: every callback that is due runs, and the loop comes back to its flag."""

import time

import pytest

rclpy = pytest.importorskip('rclpy')

from transmission_bridge.ros import node_main  # noqa: E402

SPIN_S = 0.3        # one spin_for
TIMER_S = 0.005     # a timer due 60 times within it


@pytest.mark.ros
@pytest.mark.parametrize('kind', ['events', 'single'])
def test_spin_for_runs_every_due_callback_then_returns(kind):
    # spin_once (the loop before) ran one callback per pass through Python: a timer due
    # every 5 ms ran once in a pass, however long the pass was allowed to wait.
    context = rclpy.Context()
    rclpy.init(context=context, args=[])
    try:
        node = rclpy.create_node('spin_for_probe', context=context)
        executor = _executor(kind, context)     # what default_executor picks, by name
        executor.add_node(node)
        ticks = []
        node.create_timer(TIMER_S, lambda: ticks.append(time.monotonic()))
        start = time.monotonic()
        node_main.spin_for(executor, SPIN_S)
        took = time.monotonic() - start
        assert len(ticks) >= 3, ticks
        assert took >= SPIN_S * 0.9, took
        # Short spins come back too, call after call (a fresh future each).
        for _ in range(200):
            node_main.spin_for(executor, 0.0005)
        executor.shutdown()
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)


def _executor(kind, context):
    if kind == 'single':
        return rclpy.executors.SingleThreadedExecutor(context=context)
    from rclpy.experimental import EventsExecutor
    return EventsExecutor(context=context)
