"""
transmission_bridge_replay: publish a rosbag2 bag into the live ROS graph, like ros2 bag play.

Messages go out as recorded (serialized bytes, untouched) with their original
timing scaled by --rate; --clock also publishes /clock with the bag's time so
nodes started with use_sim_time:=true run on it; --loop starts again at the end
(the time jumps back: the nodes' caches reset). Stop with Ctrl-C.
"""

import argparse
import signal
import sys
import time

from . import cli

PROG = 'transmission_bridge_replay'


def parser():
    """Return the argument parser."""
    p = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('bag', help='rosbag2 bag (folder with metadata.yaml)')
    p.add_argument('--rate', type=float, default=1.0, help='playback speed factor (> 0)')
    p.add_argument('--topics', nargs='+', help='only these topics (default: all)')
    p.add_argument('--loop', action='store_true', help='start again at the end')
    p.add_argument('--clock', action='store_true', help='publish /clock from the bag time')
    p.add_argument('--delay', type=float, default=0.0, help='seconds to wait before playing')
    p.add_argument('--wait-for-subscribers', action='store_true',
                   help='wait until every replayed topic has a subscriber')
    p.add_argument('--timeout', type=float, default=30.0,
                   help='seconds --wait-for-subscribers waits at most')
    p.add_argument('--settle', type=float, default=1.0,
                   help='with --wait-for-subscribers: seconds to wait after they appear, so '
                        'both ends of each connection have matched (default 1)')
    p.add_argument('--remap', nargs='+', default=[], metavar='FROM:=TO',
                   help='publish topic FROM (also /clock) under the name TO')
    return p


def main(argv=None):
    """Run the tool; return the exit code."""
    args = parser().parse_args(argv)
    if not args.rate > 0:
        return cli.fail(PROG, f'--rate must be > 0, got {args.rate}')
    remap = {}
    for rule in args.remap:
        old, sep, new = rule.partition(':=')
        if not sep or not old or not new:
            return cli.fail(PROG, f'--remap takes FROM:=TO, got {rule!r}')
        remap[old] = new
    missing = cli.missing_dependency(cli.ROSBAGS)
    if missing:
        return cli.fail(PROG, missing)
    from ..bag import io
    from ..bag.errors import BagError
    try:
        messages, topics = _load(io, args.bag, args.topics)
        classes = {t: _class(t, m) for t, m in topics.items()}
    except (BagError, LookupError) as exc:
        return cli.fail(PROG, exc)
    if not messages:
        return cli.fail(PROG, f'bag {args.bag!r} holds no messages to play')
    return _play(args, messages, classes, remap)


def _load(io, path, wanted):
    reader = io.open_reader(path)
    try:
        conns = reader.connections
        if wanted:
            wanted = [t if t.startswith('/') else '/' + t for t in wanted]
            missing = sorted(set(wanted) - {c.topic for c in conns})
            if missing:
                raise io.BagError(f'topic {missing[0]!r} is not in bag {str(path)!r}')
            conns = [c for c in conns if c.topic in wanted]
        topics = {c.topic: c.msgtype for c in conns}
        messages = [(c.topic, stamp, bytes(raw))
                    for c, stamp, raw in io.iter_messages(reader, conns)]
    finally:
        reader.close()
    return messages, topics


def _class(topic, msgtype):
    from .ros_types import message_class
    try:
        return message_class(msgtype)
    except LookupError as exc:
        raise LookupError(f'cannot replay {topic!r}: {exc}') from None


def _play(args, messages, classes, remap):
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from rclpy.signals import SignalHandlerOptions
    from rosgraph_msgs.msg import Clock

    from ..ros.conversions import ns_to_stamp
    from ..ros.node_main import shut_down
    stop = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda signum, frame: stop.append(signum))
    rclpy.init(args=[], signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node('transmission_bridge_replay')
    qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
    pubs = {t: node.create_publisher(cls, remap.get(t, t), qos) for t, cls in classes.items()}
    clock_pub = (node.create_publisher(Clock, remap.get('/clock', '/clock'), qos)
                 if args.clock else None)
    progress = cli.Progress()
    played = 0
    code = 1          # what the process returns if its ROS teardown outlasts the deadline
    try:
        if args.wait_for_subscribers:
            deadline = time.monotonic() + args.timeout
            while not stop and not all(p.get_subscription_count() for p in pubs.values()):
                if time.monotonic() > deadline:
                    waiting = [t for t, p in pubs.items() if not p.get_subscription_count()]
                    code = cli.fail(PROG, f'no subscriber on {", ".join(waiting)} after '
                                          f'{args.timeout} s')
                    return code
                time.sleep(0.02)
            # A publisher sees a subscriber before that subscriber has matched the
            # publisher; best-effort readers drop what arrives in between.
            time.sleep(max(0.0, args.settle))
        time.sleep(max(0.0, args.delay))
        first = messages[0][1]
        loops = 0
        began = time.monotonic()
        while not stop:
            start = time.monotonic()
            for k, (topic, stamp, raw) in enumerate(messages):
                if stop:
                    break
                wait = start + (stamp - first) * 1e-9 / args.rate - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                if clock_pub is not None:
                    clock_pub.publish(Clock(clock=ns_to_stamp(stamp)))
                pubs[topic].publish(raw)
                played += 1
                progress('playing', k + 1, len(messages))
            loops += 1
            if not args.loop:
                break
        progress.done()
        duration = time.monotonic() - began
        time.sleep(0.2)          # let the last messages leave before the publishers go
        print(f'played {played} messages' + (f' in {loops} loops' if args.loop else '')
              + f' in {duration:.3f} s', flush=True)
        code = 0
    finally:
        shut_down(node, None, code)
    return code


def console():
    """Console-script entry point: exit with :func:`main`'s code."""
    sys.exit(main())


if __name__ == '__main__':
    sys.exit(main())
