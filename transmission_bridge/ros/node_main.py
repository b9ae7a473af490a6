"""One ``main`` for every node: clean exit on Ctrl-C, SIGTERM and external shutdown."""

import signal
import sys

import rclpy
from rclpy.executors import ExternalShutdownException


class StartupError(Exception):
    """The node cannot start (invalid configuration); the message says why."""


def run_node(node_class, args=None, executor_class=None):
    """
    Create ``node_class()``, spin it, and return a process exit code.

    A :class:`StartupError` is logged as one line and gives exit code 1, with no
    traceback. SIGINT and SIGTERM shut down cleanly with exit code 0.
    """
    rclpy.init(args=args)
    signal.signal(signal.SIGTERM, lambda *_: rclpy.try_shutdown())
    node = None
    try:
        node = node_class()
        executor = executor_class() if executor_class else rclpy.executors.SingleThreadedExecutor()
        executor.add_node(node)
        executor.spin()
    except StartupError as exc:
        rclpy.logging.get_logger(getattr(node_class, 'NODE_NAME', 'node')).fatal(str(exc))
        return 1
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0


def exit_with(code):
    """Exit the process with ``code`` (for console_scripts ``main``)."""
    sys.exit(code)
