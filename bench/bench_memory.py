"""
Resident memory of each node after 10,000 and after N messages (default 1,000,000), and its CPU.

A load generator publishes at RATE until N messages are sent; the node's RSS is
sampled every 0.5 s. No growth means the two figures are equal (allocator noise
aside: the table shows both and the difference).
"""

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from bench_latency import _setup, HERE, TARGETS
from common import report


def measure(target, setup, rate, messages, work):
    """Run one node under load; return its RSS at 10k messages and at the end."""
    import psutil
    topic_in, _ = TARGETS[target]
    (cmd,), _, names, *_ = setup[target]
    ns = f'/mem_{os.getpid()}_{target}'
    node = subprocess.Popen([sys.executable, *cmd, '-r', f'__ns:={ns}',
                             '-r', f'/diagnostics:={ns}/diagnostics'],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    names_file = work / f'names_{target}.txt'
    names_file.write_text(' '.join(names))
    proc = psutil.Process(node.pid)
    time.sleep(2.0)
    start_rss = proc.memory_info().rss
    gen = subprocess.Popen([sys.executable, str(HERE / 'load_generator.py'), f'{ns}/{topic_in}',
                            str(names_file), str(rate), str(messages / rate)],
                           stdout=subprocess.PIPE, text=True)
    begin = time.monotonic() + 1.0          # the generator starts after 1 s of matching
    at_10k = None
    proc.cpu_percent()
    while gen.poll() is None:
        time.sleep(0.5)
        if at_10k is None and (time.monotonic() - begin) * rate >= 10_000:
            at_10k = proc.memory_info().rss
    cpu = proc.cpu_percent()
    end_rss = proc.memory_info().rss
    node.send_signal(2)
    node.wait(10)
    return {'target': target, 'rate_hz': rate, 'messages': int(gen.stdout.read() or 0),
            'rss_start_mb': start_rss / 2 ** 20, 'rss_10k_mb': at_10k / 2 ** 20,
            'rss_end_mb': end_rss / 2 ** 20, 'growth_mb': (end_rss - at_10k) / 2 ** 20,
            'cpu_percent': cpu}


def main(argv=None):
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--messages', type=int, default=1_000_000)
    parser.add_argument('--rate', type=float, default=2000.0)
    single = [t for t in TARGETS if t != 'chain']       # one node each
    parser.add_argument('--targets', nargs='+', default=single, choices=single)
    args = parser.parse_args(argv)
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    os.environ.setdefault('ROS_DOMAIN_ID', str(os.getpid() % 100 + 1))
    work = pathlib.Path(tempfile.mkdtemp(prefix='bench_memory_'))
    setup = _setup(work)
    rows = [measure(t, setup, args.rate, args.messages, work) for t in args.targets]
    report('memory', rows, ['target', 'rate_hz', 'messages', 'rss_start_mb', 'rss_10k_mb',
                            'rss_end_mb', 'growth_mb', 'cpu_percent'])


if __name__ == '__main__':
    main()
