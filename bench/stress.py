"""
``make stress``: the bridge under 10 kHz bursts, with parameter and service calls meanwhile.

A load generator process publishes 24-actuator states at RATE (default 10 kHz) for SECONDS
(default 10) into the bridge; this process receives joint_states with a reliable
subscription, and a third (``call_timer.py``, a caller's process as ``ros2 param set`` and
``ros2 service call`` are) sets a parameter and calls ``~/calibrate_to_default_pose`` every
0.2 s during the burst, timing both. The same calls go to a second bridge, idle, in the same
run: what a call costs on these cores under the same load, a floor measured side by side.
Both bridges are given one actuator state first, so that every calibration can succeed.
The burst runs BURSTS times (default 3): the first ones warm DDS's buffer pools (how far one
burst warms them varies from run to run), so memory is compared after the last two bursts
(a leak grows again; a pool does not). Prints: messages sent / received / lost, how many
the node dropped on purpose to stay responsive (``dropped_overload`` on /diagnostics), call
latencies (p50, p95, p99, max) for both bridges, the flooded node's memory before and after
every burst, and whether it is still alive. Exit code 1 if the node died, a call took longer
than MAX_CALL_S (1 s; a call not answered within 5 s counts as unanswered), a call was
refused, or memory grew by more than 1 MB in the last burst.
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

MAX_CALL_S = 1.0
HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))


def main(argv=None):
    """Run the stress test; return the exit code."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--rate', type=float, default=10000.0)
    parser.add_argument('--seconds', type=float, default=10.0)
    parser.add_argument('--bursts', type=int, default=3, help='>= 2')
    args = parser.parse_args(argv)
    import numpy as np
    import psutil
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    from bench_latency import _setup
    from common import watch_dropped
    from transmission_bridge.ros.configurable import STREAM_IN
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    os.environ.setdefault('ROS_DOMAIN_ID', str(os.getpid() % 100 + 1))
    work = pathlib.Path(tempfile.mkdtemp(prefix='stress_'))
    (cmd,), _, names, *_ = _setup(work)['bridge']
    ns = f'/stress_{os.getpid()}'
    idle_ns = f'{ns}_idle'
    node, idle = (subprocess.Popen([sys.executable, *cmd, '-r', f'__ns:={space}',
                                    '-r', f'/diagnostics:={space}/diagnostics'],
                                   stdout=open(work / f'{log}.log', 'w'),
                                   stderr=subprocess.STDOUT)
                  for space, log in ((ns, 'node'), (idle_ns, 'idle')))
    proc = psutil.Process(node.pid)
    rclpy.init(args=[])
    rx = rclpy.create_node('stress', namespace=ns)
    executor = rclpy.executors.SingleThreadedExecutor()
    executor.add_node(rx)
    received = []
    # Raw: this process only counts. Decoding each message into objects took a core from
    # the node under test at these rates, and their garbage cost 30-190 ms collections.
    rx.create_subscription(JointState, 'joint_states', lambda data: received.append(1),
                           QoSProfile(depth=100000, reliability=ReliabilityPolicy.RELIABLE),
                           raw=True)
    overload = watch_dropped(rx, f'{ns}/diagnostics')
    deadline = time.monotonic() + 20
    while rx.count_publishers('joint_states') == 0 and time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.05)
    (work / 'names.txt').write_text(' '.join(names))
    for space in (ns, idle_ns):     # calibrations before the first burst's data work
        _give_state(rx, executor, space, names)
    rss_before = proc.memory_info().rss
    joint = _first_joint(work)

    def burst():
        received.clear()
        gen = subprocess.Popen([sys.executable, str(HERE / 'load_generator.py'),
                                f'{ns}/actuator_states', str(work / 'names.txt'), str(args.rate),
                                str(args.seconds)], stdout=subprocess.PIPE, text=True)
        caller = subprocess.Popen([sys.executable, str(HERE / 'call_timer.py'), joint,
                                   str(args.seconds + 1.0), ns, idle_ns],
                                  stdout=subprocess.PIPE, text=True)
        while gen.poll() is None:
            executor.spin_once(timeout_sec=0.005)
        end = time.monotonic() + 2.0
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.01)
        calls = json.loads(caller.communicate(timeout=60)[0])
        return (int(gen.stdout.read() or 0), len(received),
                {'flooded': calls[ns], 'idle': calls[idle_ns]})

    def dropped():
        end = time.monotonic() + 3.0         # the next /diagnostics (1 s period)
        overload.clear()
        while not overload and time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)
        return sum(overload.values()) if overload else -1

    sent = got = 0
    calls = {key: {'param_ms': [], 'service_ms': [], 'unanswered': 0, 'refused': 0}
             for key in ('flooded', 'idle')}
    rss = []
    for _ in range(max(2, args.bursts)):
        s1, g1, timed = burst()
        sent, got = sent + s1, got + g1
        for key, one in timed.items():
            for field, value in one.items():
                calls[key][field] += value
        rss.append(proc.memory_info().rss)
    rss_first = rss[-2]
    rss_after = proc.memory_info().rss
    node_dropped = dropped()
    alive = node.poll() is None
    node.send_signal(2)
    idle.send_signal(2)
    code = node.wait(10)
    idle.wait(10)
    rx.destroy_node()
    rclpy.shutdown()
    growth = (rss_after - rss_first) / 2 ** 20
    print(f'{len(rss)} bursts: {args.rate:.0f} Hz for {args.seconds:.0f} s each, '
          '24-actuator states')
    print(f'messages sent {sent}, joint_states received {got}, lost {sent - got} '
          f'({100.0 * (sent - got) / max(sent, 1):.1f} %; reliable publisher and output, '
          f'best-effort input, depth {STREAM_IN.depth}), of which the node dropped '
          f'{node_dropped} to stay responsive (dropped_overload)')
    slow = 0
    for label, field in (('SetParameters', 'param_ms'), ('Trigger service', 'service_ms')):
        for key, box in ((key, calls[key][field]) for key in calls):
            if box:
                slow += sum(ms > MAX_CALL_S * 1e3 for ms in box)
                print(f'{label} during the burst, {key} bridge: {len(box)} calls, '
                      f'p50 {np.median(box):.1f} ms, p95 {np.percentile(box, 95):.1f} ms, '
                      f'p99 {np.percentile(box, 99):.1f} ms, max {max(box):.1f} ms')
    unanswered = sum(one['unanswered'] for one in calls.values())
    refused = sum(one['refused'] for one in calls.values())
    print(f'unanswered calls (5 s): {unanswered}; calls over {MAX_CALL_S:.0f} s: {slow}; '
          f'answered but refused: {refused}')
    print(f'node memory: {rss_before / 2 ** 20:.1f} MB before, after each burst '
          + ', '.join(f'{r / 2 ** 20:.1f}' for r in rss)
          + f' MB (last burst {growth:+.2f} MB); alive: {alive}; exit code {code}')
    return 0 if alive and code == 0 and unanswered == slow == refused == 0 and growth < 1.0 \
        else 1


def _give_state(rx, executor, space, names):
    """Feed the bridge in ``space`` one actuator state, so that calibrating it works."""
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import JointState
    pub = rx.create_publisher(JointState, f'{space}/actuator_states', qos_profile_sensor_data)
    seen = []
    sub = rx.create_subscription(JointState, f'{space}/joint_states', seen.append, 10)
    msg = JointState(name=list(names), position=[0.1] * len(names),
                     velocity=[0.0] * len(names), effort=[0.0] * len(names))
    deadline = time.monotonic() + 20
    while not seen and time.monotonic() < deadline:
        msg.header.stamp = rx.get_clock().now().to_msg()
        pub.publish(msg)
        executor.spin_once(timeout_sec=0.05)
    # Left in place, it decoded and kept every message of the bursts: a core taken from the
    # node under test, and garbage collections of this process of 100-250 ms.
    rx.destroy_subscription(sub)
    rx.destroy_publisher(pub)


def _first_joint(work):
    import yaml
    doc = yaml.safe_load((work / 'bench24.yaml').read_text())
    return doc['transmissions'][0]['joints'][0]['name']


if __name__ == '__main__':
    sys.exit(main())
