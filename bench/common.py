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
