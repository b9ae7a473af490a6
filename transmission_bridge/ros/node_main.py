"""One ``main`` for every node: clean exit on Ctrl-C, SIGTERM and external shutdown."""

import gc
import os
import signal
import sys

import rclpy
from rclpy.clock import Clock, ClockType
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.signals import SignalHandlerOptions
from rclpy.task import Future

from .exit_deadline import exit_deadline

# How often the spin loop looks at the stop flag, s. Signals only set the flag; the context
# is shut down here, after a lap of the executor returned, never under a running wait set.
_POLL = 0.1
# Once stopped, a node whose teardown has not finished within this many seconds exits anyway,
# with the exit code it was going to return, after one warning line on stderr. Fast DDS 2.14
# can busy-wait for ever in delete_participant while a discovery callback is in flight
# (eProsima/Fast-DDS#6513; seen here twice: under a 1 kHz chain benchmark, and in CI when
# `ros2 launch` stopped the kinematics node). 3 s stays inside the 5 s launch waits between
# SIGINT and SIGTERM (sigint_timeout), so launch still reports a clean finish.
TEARDOWN_TIMEOUT_S = 3.0


# rclpy's EventsExecutor (Jazzy, experimental) dispatches each message without rebuilding a
# wait set of every subscription, timer and service; TRANSMISSION_BRIDGE_EXECUTOR=single
# selects rclpy's SingleThreadedExecutor instead (the benchmarks compare both).
EXECUTOR_ENV = 'TRANSMISSION_BRIDGE_EXECUTOR'


def default_executor():
    """Return the executor the nodes spin on (see :data:`EXECUTOR_ENV`)."""
    if os.environ.get(EXECUTOR_ENV, 'events') == 'single':
        return SingleThreadedExecutor()
    try:
        from rclpy.experimental import EventsExecutor
    except ImportError:
        return SingleThreadedExecutor()
    return EventsExecutor()


# Whether settle_memory acts: in a node's own process (run_node), not where nodes are built
# beside other code (tests, benchmarks), whose objects are not the node's to freeze.
_SETTLE = []


def settle_memory():
    """
    Move every object alive now out of the garbage collector's way (``gc.freeze``).

    A configured node holds some 10^5 objects for as long as it runs (rclpy's, the robot's,
    numba's and LLVM's where kernels are loaded). A full collection walks every one of them
    (50-100 ms here, more under load): no message is handled meanwhile, and the input budget,
    finding its probes late, then drops input while it recovers. Frozen, they are never walked
    again; collections see only what came since. :func:`run_node` calls it once the node is
    built, and nodes once a new configuration is loaded; the previous freeze is undone first,
    so that what an old configuration left is collected. Elsewhere (a node built in a test's
    or a benchmark's process) it does nothing.
    """
    if not _SETTLE:
        return
    gc.unfreeze()
    gc.collect()
    gc.freeze()


class Laps:
    """
    Spin ``executor`` lap by lap: each lap runs callbacks, then returns (to look at a flag).

    A steady-clock timer on ``node`` ends a lap every ``seconds``: it completes the lap's
    future, and ``spin_until_future_complete`` returns after the callback running then.

    Not ``spin_once`` in a loop: rclpy's EventsExecutor returns from ``spin_once`` after each
    callback, and the loop back through Python (the spin lock, rclpy.ok, the flag) then took
    about 4 % of the bridge's core in the 1 kHz chain (py-spy; doc/performance.md). Not the
    timeout of ``spin_until_future_complete`` alone either: Jazzy's EventsExecutor looks at
    it only when its queue is empty, and a queue that never empties (a timer whose callback
    outlasts its period, as the simulator's at real_time_factor 0; a node behind its input)
    kept the lap, and with it SIGINT, waiting for ever. The timer's tick is queued behind the
    events before it, so it comes however busy the queue. A fresh future each lap: a done one
    cannot be waited on again.
    """

    def __init__(self, executor, node, seconds):
        self._executor, self._seconds = executor, seconds
        self._future = Future()
        self._timer = node.create_timer(seconds, self._end,
                                        clock=Clock(clock_type=ClockType.STEADY_TIME))

    def _end(self):
        if not self._future.done():
            self._future.set_result(None)

    def run(self):
        """Run one lap: callbacks until the timer's next tick (``seconds`` at the most, idle)."""
        self._future = Future()
        self._executor.spin_until_future_complete(self._future, timeout_sec=self._seconds)


class StartupError(Exception):
    """The node cannot start (invalid configuration); the message says why."""


def help_requested(args):
    """Return True if ``-h``/``--help`` stands among the arguments before ``--ros-args``."""
    args = sys.argv[1:] if args is None else list(args)[1:]
    own = args[:args.index('--ros-args')] if '--ros-args' in args else args
    return '-h' in own or '--help' in own


def run_node(node_class, args=None, executor_class=default_executor):
    """
    Create ``node_class()``, spin it, and return a process exit code.

    ``-h``/``--help`` prints ``node_class.HELP`` and returns 0 without starting ROS.
    A :class:`StartupError` is logged as one line and gives exit code 1, with no
    traceback. SIGINT and SIGTERM stop the spin loop and give exit code 0.
    """
    return run_nodes([node_class], args, executor_class)


def run_nodes(node_classes, args=None, executor_class=default_executor, help_text=''):
    """
    Create each of ``node_classes`` in this process, spin them on one executor; an exit code.

    As :func:`run_node` for one; for several (a composed process), the ROS arguments are
    shared (a parameters section or a remapping applies by node name, ``name:from:=to``), a
    :class:`StartupError` of any node stops them all, and ``-h`` prints ``help_text`` and
    every node's help.
    """
    if help_requested(args):
        texts = [help_text, *(c.HELP for c in node_classes)]
        print('\n\n'.join(t.strip() for t in texts if t.strip()))
        return 0
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    stop = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda signum, frame: stop.append(signum))
    made = []
    executor = None
    code = 0
    current = node_classes[0]
    try:
        _SETTLE.append(True)
        for current in node_classes:
            made.append(current())
        settle_memory()
        executor = executor_class()
        for node in made:
            executor.add_node(node)
        laps = Laps(executor, made[0], _POLL)
        while not stop and rclpy.ok():
            laps.run()
    except StartupError as exc:
        rclpy.logging.get_logger(getattr(current, 'NODE_NAME', 'node')).fatal(str(exc))
        code = 1
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        shut_down(made, executor, code, getattr(current, 'NODE_NAME', 'node'))
    return code


def shut_down(node, executor=None, code=0, name='node'):
    """
    Stop ROS in this process: the executor, ``node`` (either may be None, or a list), rclpy.

    Further SIGINT/SIGTERM are ignored. If this has not finished within
    :data:`TEARDOWN_TIMEOUT_S`, the process prints one warning line and exits with ``code``,
    the exit code it was going to return (``name`` names the node when there is none).
    """
    ignore_stop_signals()
    made = node if isinstance(node, list) else [] if node is None else [node]
    if made:
        name = made[0].get_logger().name
    with exit_deadline(TEARDOWN_TIMEOUT_S, code, f'[WARN] [{name}]: ROS middleware teardown '
                       f'still running after {TEARDOWN_TIMEOUT_S:g} s '
                       '(eProsima/Fast-DDS#6513); exiting without it. errno'):
        if executor is not None:
            executor.shutdown()
        for one in made:
            one.destroy_node()
        rclpy.try_shutdown()


def ignore_stop_signals():
    """
    Ignore further SIGINT and SIGTERM: the process is stopping already.

    Ctrl-C reaches a launched node twice (from the terminal and from launch). Python
    resets its own handlers to the default while it finalizes, and a SIGINT then
    would kill the process by the signal (exit code -2, 'process has died').
    """
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)


def exit_with(code):
    """Exit the process with ``code`` (for console_scripts ``main``)."""
    sys.exit(code)
