"""Timing helpers: best-of-k medians, one table, JSON next to the scripts."""

import json
import pathlib
import platform
import statistics
import sys
import time

RESULTS = pathlib.Path(__file__).resolve().parent / 'results'


def per_call(fn, number, repeat=7):
    """Return the median over ``repeat`` runs of the time per call of ``fn`` (s)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times)


def once(fn, repeat=3):
    """Return the median wall time of ``fn()`` over ``repeat`` runs (s)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def alternating(names, rounds, run):
    """
    Time ``run(name, r)`` for every name in each of ``rounds`` rounds, the order alternating.

    ``run`` handles round ``r``'s messages and returns how many; returns {name: [seconds per
    message, one per round]}: variants compared on the same messages, in turn, so that a
    slow spell of the machine falls on all of them.
    """
    times = {name: [] for name in names}
    for r in range(rounds):
        for name in (list(names) if r % 2 == 0 else list(names)[::-1]):
            start = time.perf_counter()
            count = run(name, r)
            times[name].append((time.perf_counter() - start) / count)
    return times


def in_process_bridges(doc, number, results, domain_id, argv=None):
    """
    Parse a benchmark's ``--number`` and ``--results``; start rclpy for nodes built in-process.

    Returns ``(args, context)``: the nodes are built in this process and timed through their
    callbacks, never spun (bench_nodes.py).
    """
    import argparse
    parser = argparse.ArgumentParser(description=doc,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--number', type=int, default=number, help='messages per path')
    parser.add_argument('--results', default=results, help='results file name')
    args = parser.parse_args(argv)
    import rclpy
    context = rclpy.Context()
    rclpy.init(context=context, args=['--ros-args', '--log-level', 'error'],
               domain_id=domain_id)
    return args, context


def stamped_states(count, fields):
    """
    Return ``count`` serialised JointStates, stamped 1 ms apart from 10^9 s, in order.

    ``fields(k)`` gives message ``k``'s fields (name, position, velocity, effort) as keywords.
    """
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState
    out = []
    for k in range(count):
        msg = JointState(**fields(k))
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(10**18 + k * 10**6, 10**9)
        out.append(serialize_message(msg))
    return out


def machine():
    """Describe the machine the figures were taken on."""
    import os
    return f'{platform.processor() or platform.machine()}, {os.cpu_count()} cores, ' \
           f'Python {platform.python_version()}'


def report(name, rows, columns):
    """Print ``rows`` (list of dicts) as a table and write them to results/<name>.json."""
    widths = [max(len(c), *(len(_fmt(r[c])) for r in rows)) for c in columns]
    print(' | '.join(c.ljust(w) for c, w in zip(columns, widths)))
    print('-|-'.join('-' * w for w in widths))
    for r in rows:
        print(' | '.join(_fmt(r[c]).ljust(w) for c, w in zip(columns, widths)))
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f'{name}.json'
    # The documentation renders its performance tables from these files (doc/_ext).
    command = ' '.join(['python', f'bench/{pathlib.Path(sys.argv[0]).name}', *sys.argv[1:]])
    out.write_text(json.dumps({'machine': machine(), 'date': time.strftime('%Y-%m-%d'),
                               'command': command, 'columns': columns, 'rows': rows}, indent=2))
    print(f'\n{machine()}; written to {out}')


def watch_dropped(node, topic):
    """
    Subscribe ``node`` to the DiagnosticArray ``topic``; return {status name: dropped_overload}.

    The dict is kept current as reports arrive (about 1 s apart): the nodes' count of input
    they dropped on purpose to stay responsive, which tells those apart from transport losses.
    """
    from diagnostic_msgs.msg import DiagnosticArray
    dropped = {}

    def on_diagnostics(msg):
        for status in msg.status:
            for pair in status.values:
                if pair.key == 'dropped_overload':
                    dropped[status.name] = int(pair.value)

    node.create_subscription(DiagnosticArray, topic, on_diagnostics, 10)
    return dropped


def _fmt(v):
    if isinstance(v, float):
        return f'{v:.3g}'
    return str(v)
