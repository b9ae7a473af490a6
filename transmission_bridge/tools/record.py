"""
transmission_bridge_record: record live topics into a rosbag2 bag (MCAP by default).

Waits until every topic has a publisher (to learn its type), subscribes with a
QoS that matches the publishers, waits until each publisher has connected (so
--duration is recorded time, not discovery), and stores each message's serialized
bytes with its receive time (the node's clock: the bag time under --use-sim-time).
Stop with Ctrl-C (the bag is closed properly), --duration or --max-messages. The
bag appears at OUT_BAG only once it is complete.
"""

import argparse
import signal
import sys
import time

from . import cli

PROG = 'transmission_bridge_record'


def parser():
    """Return the argument parser."""
    p = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('out_bag', help='output bag folder (must not exist)')
    p.add_argument('--topics', nargs='+', required=True, help='topics to record')
    p.add_argument('--storage', choices=('mcap', 'sqlite3'), default='mcap')
    p.add_argument('--duration', type=float, help='stop after this many seconds (wall time)')
    p.add_argument('--max-messages', type=int, help='stop after this many messages')
    p.add_argument('--wait-timeout', type=float, default=30.0,
                   help='seconds to wait for every topic to have a publisher')
    p.add_argument('--use-sim-time', action='store_true', help='stamp with /clock time')
    return p


def main(argv=None):
    """Run the tool; return the exit code."""
    args = parser().parse_args(argv)
    missing = cli.missing_dependency(cli.ROSBAGS)
    if missing:
        return cli.fail(PROG, missing)
    from ..bag import io
    from ..bag.errors import BagError
    import rclpy
    from rclpy.parameter import Parameter
    from rclpy.qos import QoSProfile
    from rclpy.signals import SignalHandlerOptions

    from .ros_types import message_class
    from ..ros.node_main import shut_down
    stop = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda signum, frame: stop.append(signum))
    topics = [t if t.startswith('/') else '/' + t for t in args.topics]
    rclpy.init(args=[], signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node('transmission_bridge_record', parameter_overrides=[
        Parameter('use_sim_time', value=args.use_sim_time)])
    executor = rclpy.executors.SingleThreadedExecutor()
    executor.add_node(node)
    count = [0]
    code = 1          # what the process returns if its ROS teardown outlasts the deadline
    try:
        timeout = f'{args.wait_timeout:g} s'
        deadline = time.monotonic() + args.wait_timeout
        publishers = {}

        def without_publisher():
            # A topic the graph knows only from its subscribers (the bridge's actuator_states
            # before the drivers start) has nothing to record yet: wait for a publisher.
            publishers.update((t, node.get_publishers_info_by_topic(t)) for t in topics)
            return [t for t in topics if not publishers[t]]

        _wait(without_publisher, f'no publisher on {{}} in {timeout} (--wait-timeout)',
              executor, deadline, stop)
        ts = io.typestore()
        subs = []
        with io.atomic_writer(args.out_bag, args.storage) as writer:
            for topic, infos in publishers.items():
                msgtype = infos[0].topic_type
                if msgtype not in ts.types:
                    raise BagError(f'cannot record {topic!r}: type {msgtype} is unknown to '
                                   'the rosbags ROS 2 Jazzy type store')
                conn = writer.add_connection(topic, msgtype, typestore=ts)
                qos = QoSProfile(depth=1000, reliability=_reliability(infos))

                def store(raw, conn=conn):
                    writer.write(conn, node.get_clock().now().nanoseconds, raw)
                    count[0] += 1

                subs.append(node.create_subscription(message_class(msgtype), topic, store, qos,
                                                     raw=True))
            # Discovery of a new subscription takes its time (seconds on a loaded machine):
            # --duration counts from when every subscription is connected to a publisher.
            _wait(lambda: [s.topic_name for s in subs if s.get_publisher_count() == 0],
                  f'the publishers of {{}} did not connect in {timeout} (--wait-timeout; '
                  'incompatible QoS?)', executor, deadline, stop)
            print(f'recording {", ".join(topics)} to {args.out_bag}', flush=True)
            end = None if args.duration is None else time.monotonic() + args.duration
            while not stop and (end is None or time.monotonic() < end) and (
                    args.max_messages is None or count[0] < args.max_messages):
                executor.spin_once(timeout_sec=0.05)
        print(f'recorded {count[0]} messages to {args.out_bag}', flush=True)
        code = 0
    except _Interrupted:
        code = cli.fail(PROG, 'interrupted before recording started; no output written', 130)
    except (BagError, LookupError) as exc:
        code = cli.fail(PROG, exc)
    finally:
        shut_down(node, executor, code)
    return code


class _Interrupted(Exception):
    """Ctrl-C or SIGTERM came before recording started (the bag is discarded)."""


def _wait(missing, failure, executor, deadline, stop):
    """
    Spin until ``missing()`` returns an empty list.

    At ``deadline`` raise BagError(``failure`` naming what is still missing); on Ctrl-C or
    SIGTERM (``stop``) raise :class:`_Interrupted`.
    """
    from ..bag.errors import BagError
    while not stop:
        left = missing()
        if not left:
            return
        if time.monotonic() > deadline:
            raise BagError(failure.format(', '.join(left)))
        executor.spin_once(timeout_sec=0.05)
    raise _Interrupted


def _reliability(infos):
    """RELIABLE if every publisher (``infos``) is reliable, else BEST_EFFORT (matches any)."""
    from rclpy.qos import ReliabilityPolicy
    if all(i.qos_profile.reliability == ReliabilityPolicy.RELIABLE for i in infos):
        return ReliabilityPolicy.RELIABLE
    return ReliabilityPolicy.BEST_EFFORT


def console():
    """Console-script entry point: exit with :func:`main`'s code."""
    sys.exit(main())


if __name__ == '__main__':
    sys.exit(main())
