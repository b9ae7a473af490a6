"""
End-to-end latency of the nodes against a bare rclpy relay, measured side by side.

For each target (the bridge on a 24-actuator robot with all three transmission
types; the kinematics node on the 7-DOF example arm) a load generator process
publishes at RATE for SECONDS with send timestamps, this process receives the
node's output and computes latency (receive wall time - send stamp, copied through
by the node), losses, and the node's CPU percent. The same run through a relay
(republishes the message unchanged, same QoS and executor) is the floor.
``--max-rate`` then finds the highest rate each sustains without loss.
"""

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from common import report
import numpy as np
import yaml

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

TARGETS = {
    # name: (node module, input topic, output topic)
    'bridge': ('transmission_bridge.bridge_node', 'actuator_states', 'joint_states'),
    'kinematics': ('transmission_bridge.kinematics_node', 'joint_states',
                   'kinematics/gravity_torques'),
}


def _setup(work):
    """Write the bench robot's files; return {target: (ros args, input names)}."""
    from robots import transmissions_24
    from transmission_bridge.kinematics import load_model
    ts = transmissions_24()
    tfile = work / 'bench24.yaml'
    tfile.write_text(yaml.safe_dump({'transmissions': [
        {'name': s.name, 'type': s.type,
         'actuators': [{'name': a.name, 'mechanical_reduction': a.mechanical_reduction}
                       for a in s.actuators],
         'joints': [{'name': j.name, 'mechanical_reduction': j.mechanical_reduction,
                     'offset': j.offset, 'damping': j.damping} for j in s.joints]}
        for s in ts.specs]}))
    model_file = ROOT / 'config' / 'example_arm_model.yaml'
    return {'bridge': (['-p', f'transmissions_file:={tfile}'], list(ts.actuator_names)),
            'kinematics': (['-p', f'model_file:={model_file}'],
                           list(load_model(model_file).joint_names))}


def run_once(kind, target, setup, rate, seconds, work, extra_env=None):
    """Measure one node (or the relay standing in for it); return a result dict."""
    import psutil
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    module, topic_in, topic_out = TARGETS[target]
    ros_args, names = setup[target]
    ns = f'/bench_{os.getpid()}_{kind}_{target}_{int(rate)}'
    if kind == 'relay':
        cmd = [sys.executable, str(HERE / 'relay_node.py'), '--ros-args', '-r',
               f'input:={topic_in}', '-r', f'output:={topic_out}']
    else:
        cmd = [sys.executable, '-m', module, '--ros-args', *ros_args]
    cmd += ['-r', f'__ns:={ns}', '-r', f'/diagnostics:={ns}/diagnostics']
    env = dict(os.environ, **(extra_env or {}))
    log = open(work / f'{kind}_{target}_{int(rate)}.log', 'w')
    node = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    names_file = work / f'names_{target}.txt'
    names_file.write_text(' '.join(names))
    context = rclpy.Context()
    rclpy.init(context=context, args=[])
    rx = rclpy.create_node('receiver', namespace=ns, context=context)
    executor = rclpy.executors.SingleThreadedExecutor(context=context)
    executor.add_node(rx)
    latencies, seqs = [], []

    def receive(msg):
        stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        latencies.append(time.time_ns() - stamp)
        seqs.append(stamp)          # unique per message; every node copies the stamp

    rx.create_subscription(JointState, topic_out, receive,
                           QoSProfile(depth=10000, reliability=ReliabilityPolicy.RELIABLE))
    deadline = time.monotonic() + 20
    while rx.count_publishers(topic_out) == 0 and time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.05)
    proc = psutil.Process(node.pid)
    gen = subprocess.Popen([sys.executable, str(HERE / 'load_generator.py'),
                            f'{ns}/{topic_in}', str(names_file), str(rate), str(seconds)],
                           stdout=subprocess.PIPE, text=True, env=env)
    time.sleep(1.0)                  # the generator waits 1 s for matching before it starts
    proc.cpu_percent()
    while gen.poll() is None:
        executor.spin_once(timeout_sec=0.01)
    cpu = proc.cpu_percent()
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.01)
    sent = int(gen.stdout.read().strip() or 0)
    rss = proc.memory_info().rss
    node.send_signal(2)
    node.wait(10)
    executor.shutdown()
    rx.destroy_node()
    rclpy.shutdown(context=context)
    # Statistics skip the first 0.5 s: discovery and matching settle there, not the node.
    warmup = int(0.5 * rate)
    lat = np.array(latencies[warmup:]) / 1000.0
    return {'target': target, 'node': kind, 'rate_hz': rate, 'sent': sent,
            'received': len(set(seqs)), 'lost': sent - len(set(seqs)),
            'p50_us': float(np.percentile(lat, 50)) if len(lat) else float('nan'),
            'p99_us': float(np.percentile(lat, 99)) if len(lat) else float('nan'),
            'max_us': float(lat.max()) if len(lat) else float('nan'),
            'cpu_percent': cpu, 'rss_mb': rss / 2 ** 20}


def main(argv=None):
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--rate', type=float, default=1000.0)
    parser.add_argument('--seconds', type=float, default=10.0)
    parser.add_argument('--targets', nargs='+', default=list(TARGETS), choices=list(TARGETS))
    parser.add_argument('--max-rate', nargs='*', type=float, default=None,
                        help='also try these rates (3 s each) to find the highest without loss')
    args = parser.parse_args(argv)
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    os.environ.setdefault('ROS_DOMAIN_ID', str(os.getpid() % 100 + 1))
    work = pathlib.Path(tempfile.mkdtemp(prefix='bench_latency_'))
    setup = _setup(work)
    rows = []
    for target in args.targets:
        pair = {}
        for kind in ('relay', 'node'):
            pair[kind] = run_once(kind, target, setup, args.rate, args.seconds, work)
            rows.append(pair[kind])
        for key in ('p50_us', 'p99_us'):
            pair['node'][key.replace('_us', '_ratio')] = pair['node'][key] / pair['relay'][key]
        for key in ('p50_ratio', 'p99_ratio'):
            pair['relay'][key] = 1.0
    report('latency', rows, ['target', 'node', 'rate_hz', 'sent', 'lost', 'p50_us', 'p99_us',
                             'max_us', 'p50_ratio', 'p99_ratio', 'cpu_percent', 'rss_mb'])
    if args.max_rate:
        best = []
        for target in args.targets:
            for kind in ('relay', 'node'):
                sustained = 0.0
                for rate in sorted(args.max_rate):
                    r = run_once(kind, target, setup, rate, 3.0, work)
                    if r['lost'] == 0:
                        sustained = rate
                    else:
                        break
                best.append({'target': target, 'node': kind, 'max_rate_without_loss': sustained})
        report('max_rate', best, ['target', 'node', 'max_rate_without_loss'])


if __name__ == '__main__':
    main()
