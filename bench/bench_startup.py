"""
What a bridge costs before its first message: import time and resident memory at start-up.

    python bench/bench_startup.py [--before /path/to/old/checkout] [--rounds 5]

Import: the wall time of ``import transmission_bridge.bridge.node`` in a fresh interpreter
(the median of ``--rounds``), this checkout and, with ``--before``, an older one (``git
worktree add /tmp/v030 4acc6b2`` is 0.3.0), alternating. Resident: the bridge on the
example arm (``config/example_robot_transmissions.yaml``) and on the legged robot (four
linkages: numba loads for them), started as ``ros2 run`` starts it, against the typed rclpy
relay of bench/relay_node.py, each measured once its node answers on the graph and then
idles for a second. The ratios are of one run, side by side.
"""

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

from common import report

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
ROBOTS = {'example arm': 'config/example_robot_transmissions.yaml',
          'legged robot (linkages)': 'config/legged_robot.urdf'}


def _env(root):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root),
                                                       os.environ.get('PYTHONPATH', '')]))
    env.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    env.setdefault('ROS_DOMAIN_ID', str(os.getpid() % 100 + 101))
    return env


def import_seconds(root):
    """Return the wall time of importing the bridge node's module in a fresh interpreter."""
    code = ('import time; t = time.perf_counter(); import transmission_bridge.bridge.node; '
            'print(time.perf_counter() - t)')
    done = subprocess.run([sys.executable, '-c', code], cwd=root, env=_env(root),
                          capture_output=True, text=True, check=True)
    return float(done.stdout.split()[-1])


def resident_mb(cmd, cwd, ready_text):
    """Start ``cmd``; once its log says ``ready_text`` and one second passed, its RSS (MB)."""
    import psutil
    with tempfile.TemporaryFile('w+') as log:
        proc = subprocess.Popen(cmd, cwd=cwd, env=_env(cwd), stdout=log,
                                stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                log.seek(0)
                if ready_text in log.read():
                    break
                if proc.poll() is not None:
                    log.seek(0)
                    sys.exit(f'{" ".join(cmd)} stopped:\n{log.read()}')
                time.sleep(0.05)
            else:
                sys.exit(f'{" ".join(cmd)}: not ready in 60 s')
            time.sleep(1.0)
            return psutil.Process(proc.pid).memory_info().rss / 2 ** 20
        finally:
            proc.send_signal(2)
            proc.wait(10)


def main(argv=None):
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--before', type=pathlib.Path, help='an older checkout to compare with')
    parser.add_argument('--rounds', type=int, default=5)
    args = parser.parse_args(argv)
    sides = [('this checkout', ROOT)] + ([('before', args.before.resolve())]
                                         if args.before else [])
    times = {label: [] for label, _ in sides}
    for r in range(args.rounds):
        for label, root in (sides if r % 2 == 0 else sides[::-1]):
            times[label].append(import_seconds(root))
    rows = [{'what': f'import transmission_bridge.bridge.node ({label})',
             'value': statistics.median(times[label]), 'unit': 's',
             'ratio': statistics.median(times['this checkout']) / statistics.median(times[label]),
             'spread': max(times[label]) / min(times[label])} for label, _ in sides]
    relay = resident_mb([sys.executable, str(HERE / 'relay_node.py')], ROOT, '')
    rows.append({'what': 'typed rclpy relay (bench/relay_node.py), resident', 'value': relay,
                 'unit': 'MB', 'ratio': 1.0, 'spread': 1.0})
    for robot, path in ROBOTS.items():
        rss = resident_mb([sys.executable, '-m', 'transmission_bridge.bridge.node', '--ros-args',
                           '-p', f'transmissions_file:={path}'], ROOT, 'active:')
        rows.append({'what': f'bridge on the {robot}, resident', 'value': rss, 'unit': 'MB',
                     'ratio': rss / relay, 'spread': 1.0})
    report('startup', rows, ['what', 'value', 'unit', 'ratio', 'spread'])


if __name__ == '__main__':
    main()
