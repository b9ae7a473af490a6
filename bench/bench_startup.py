"""
What a bridge costs before its first message: import time and resident memory at start-up.

    python bench/bench_startup.py [--before /path/to/old/checkout] [--rounds 5]

Import: the wall time of ``import transmission_bridge.bridge.node`` in a fresh interpreter (the
median of ``--rounds``), this checkout and, with ``--before``, an older one (``git worktree add
/tmp/v030 4acc6b2`` is 0.3.0), alternating. Resident: the bridge on the example arm
(``config/example_robot_transmissions.yaml``, whose motors have friction: the gear-loss loops;
also with ``follow_joint_trajectory:=false``, the same with every motor's friction set to 0
(ideal gears), and the ``--before`` checkout's) and on the legged robot (four linkages: the
linkage loops; also without the action servers), started as ``ros2 run`` starts it, against
the typed rclpy relay of bench/relay_node.py, each measured once its node answers on the graph
and then idles for a second: the median of ``--rounds`` starts, alternating. First
joint_states: from starting the legged robot's bridge (a driver streaming its motors at 500 Hz
meanwhile) to its first joint_states, with the caches as ``make test`` and an install leave
them (warm) and empty (``NUMBA_CACHE_DIR`` and ``TRANSMISSION_BRIDGE_AOT_DIR`` a new folder:
the loops compiled ahead of time, in a subprocess, while the bridge configures), and the
example arm's with warm caches. The ratios are of one run, side by side.
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


def first_joint_states_s(path, env_extra):
    """Start the bridge on ``path``; return the seconds until its first joint_states."""
    import rclpy
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import JointState
    from transmission_bridge.transmissions import load_transmissions
    names = list(load_transmissions(ROOT / path).actuator_names)
    env = dict(_env(ROOT), **env_extra)
    ns = f'/cold_{os.getpid()}_{time.monotonic_ns() % 10**6}'
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=int(env['ROS_DOMAIN_ID']))
    node = rclpy.create_node('driver', namespace=ns, context=context)
    got = []
    node.create_subscription(JointState, 'joint_states', lambda m: got.append(time.monotonic()),
                             10)
    pub = node.create_publisher(JointState, 'actuator_states', qos_profile_sensor_data)
    msg = JointState(name=names, position=[0.0] * len(names), velocity=[0.0] * len(names),
                     effort=[0.0] * len(names))
    from rclpy.executors import SingleThreadedExecutor
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, '-m', 'transmission_bridge.bridge.node',
                             '--ros-args', '-r', f'__ns:={ns}', '-p',
                             f'transmissions_file:={path}'], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while not got and time.monotonic() - start < 120:
            msg.header.stamp = node.get_clock().now().to_msg()
            pub.publish(msg)
            executor.spin_once(timeout_sec=0.002)
        return got[0] - start if got else float('nan')
    finally:
        proc.send_signal(2)
        proc.wait(20)
        node.destroy_node()
        rclpy.shutdown(context=context)


def _ideal_gears(path):
    """Return ``-p`` arguments that take every motor's friction of ``path`` away."""
    from transmission_bridge.transmissions import load_transmissions
    return [x for m in load_transmissions(ROOT / path).actuator_names
            for k in ('viscous', 'coulomb') for x in ('-p', f'actuators.{m}.friction.{k}:=0.0')]


def main(argv=None):
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--before', type=pathlib.Path, help='an older checkout to compare with')
    parser.add_argument('--rounds', type=int, default=5)
    parser.add_argument('--results', default='startup', help='results file name')
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
    bridge = [sys.executable, '-m', 'transmission_bridge.bridge.node', '--ros-args', '-p']
    arm, legged = ROBOTS['example arm'], ROBOTS['legged robot (linkages)']
    starts = {'typed rclpy relay (bench/relay_node.py)': (
                  [sys.executable, str(HERE / 'relay_node.py')], ROOT, ''),
              'bridge on the example arm': (bridge + [f'transmissions_file:={arm}'], ROOT,
                                            'active:'),
              'bridge on the example arm, follow_joint_trajectory false': (
                  bridge + [f'transmissions_file:={arm}', '-p',
                            'follow_joint_trajectory:=false'], ROOT, 'active:'),
              'bridge on the example arm, ideal gears (friction 0), '
              'follow_joint_trajectory false': (
                  bridge + [f'transmissions_file:={arm}', '-p',
                            'follow_joint_trajectory:=false'] + _ideal_gears(arm), ROOT,
                  'active:'),
              'bridge on the legged robot (linkages)': (
                  bridge + [f'transmissions_file:={legged}'], ROOT, 'active:'),
              'bridge on the legged robot (linkages), follow_joint_trajectory false': (
                  bridge + [f'transmissions_file:={legged}', '-p',
                            'follow_joint_trajectory:=false'], ROOT, 'active:')}
    if args.before:
        starts['bridge on the example arm (before)'] = (
            bridge + [f'transmissions_file:={arm}'], args.before.resolve(), 'active:')
    resident = {what: [] for what in starts}
    order = list(starts)
    for r in range(args.rounds):
        for what in (order if r % 2 == 0 else order[::-1]):
            resident[what].append(resident_mb(*starts[what]))
    relay = statistics.median(resident[order[0]])
    for what, values in resident.items():
        rows.append({'what': f'{what}, resident', 'value': statistics.median(values),
                     'unit': 'MB', 'ratio': statistics.median(values) / relay,
                     'spread': max(values) / min(values)})
    warm = first_joint_states_s(ROBOTS['legged robot (linkages)'], {})
    with tempfile.TemporaryDirectory() as empty:     # nothing compiled: built on this start
        cold = first_joint_states_s(ROBOTS['legged robot (linkages)'],
                                    {'NUMBA_CACHE_DIR': empty,
                                     'TRANSMISSION_BRIDGE_AOT_DIR': empty})
    rows.append({'what': 'legged robot: first joint_states after start, warm cache',
                 'value': warm, 'unit': 's', 'ratio': 1.0, 'spread': 1.0})
    rows.append({'what': 'legged robot: first joint_states after start, empty cache',
                 'value': cold, 'unit': 's', 'ratio': cold / warm, 'spread': 1.0})
    lossy = first_joint_states_s(arm, {})       # its motors' friction: the loss kernels
    rows.append({'what': 'example arm (gear losses): first joint_states after start, warm '
                 'cache', 'value': lossy, 'unit': 's', 'ratio': lossy / warm, 'spread': 1.0})
    report(args.results, rows, ['what', 'value', 'unit', 'ratio', 'spread'])


if __name__ == '__main__':
    main()
