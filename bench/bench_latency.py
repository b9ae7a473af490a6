"""
End-to-end latency of the nodes against a bare rclpy relay, measured side by side.

For each target (the bridge on a 24-actuator robot with all three transmission
types; the kinematics node on the 7-DOF example arm, with /tf on as by default and, as
``kinematics_tf_off``, off; the **chain** of
robot.launch.py on the example arm: actuator_states -> bridge -> joint_states ->
kinematics -> gravity_torques -> bridge -> actuator_commands, motor reading to
each motor's holding torque) a load generator process publishes at RATE for
SECONDS with send timestamps, this process receives the last output and computes
latency (receive wall time - send stamp, copied through by every node), losses
(and of those, how many the nodes dropped on purpose to stay responsive:
``dropped_overload`` on their /diagnostics), stalls (no message received for 0.1 s,
every message held and then released at once), and the nodes' CPU percent (summed).
The same run through relays (republish the message unchanged, same QoS and executor;
two relay processes and three hops for the chain; for ``chain_composed``, the chain as
``robot.launch.py composed:=true`` runs it, both nodes in one process, the two relays in one
process) is the floor, twice: a typed relay
(decodes each message and publishes the object, what a plain rclpy node does) and a raw
relay (publishes the received bytes).
The generator publishes pre-serialised bytes and the receiver takes raw bytes on rclpy's
EventsExecutor, so neither is the bottleneck at high rates.
``--rounds N`` runs the three kinds N times in turn per target and reports medians: one
10 s window each leaves the ratios to the VM's slow spells.
``--max-rate`` then finds the highest rate each sustains without loss; ``--rates``
reports losses and p50 at each given rate (3 s each) for relays and nodes. ``--no-drop``
starts the nodes with ``drop_on_overload:=false``: no input budget, as a relay.
``--model FILE`` runs the kinematics targets on another robot (a humanoid's URDF, say),
``--actuators N`` the bridge on an N-actuator robot, ``--transmissions FILE`` the bridge on a
robot's transmissions (YAML or URDF; its actuators sent at the default pose's positions, so a
linkage solves a reachable state: the legged robot of config/ with its knee and ankle
linkages, say), ``--losses`` gives every motor of the bridge's robots a lossy gear stage
(bench_losses.py's), and ``--results NAME`` writes the table to results/NAME.json instead of
latency.json.
"""

import argparse
import os
import pathlib
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

from common import report, watch_dropped
import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

TARGETS = {
    # name: (input topic, output topic)
    'bridge': ('actuator_states', 'joint_states'),
    'kinematics': ('joint_states', 'kinematics/gravity_torques'),
    # The same node with /tf off (publish_every.tf 0): what TF costs, against the same relays.
    'kinematics_tf_off': ('joint_states', 'kinematics/gravity_torques'),
    'chain': ('actuator_states', 'actuator_commands'),
    'chain_composed': ('actuator_states', 'actuator_commands'),
}
BRIDGE = ['-m', 'transmission_bridge.bridge.node']
KINEMATICS = ['-m', 'transmission_bridge.kinematics_node.node']
STACK = ['-m', 'transmission_bridge.robot_stack']
RELAY = [str(HERE / 'relay_node.py')]


def _setup(work, model_file=None, actuators=24, transmissions=None):
    """
    Write the bench robot's files; return {target: (processes, relays, input names, ...)}.

    The bridge's entry adds the positions to send (None: random values).
    """
    from robots import transmissions_24, transmissions_n, write_transmissions
    from transmission_bridge.kinematics import load_model
    from transmission_bridge.transmissions import load_transmissions
    if transmissions is not None:
        ts, tfile = load_transmissions(transmissions), transmissions
    else:
        ts = transmissions_24() if actuators == 24 else transmissions_n(actuators)
        tfile = write_transmissions(ts, work / f'bench{actuators}.yaml')
    pose = ts.joint_to_actuator('position', ts.default_positions).tolist()
    model_file = model_file or ROOT / 'config' / 'example_arm_model.yaml'
    arm = ROOT / 'config' / 'example_robot_transmissions.yaml'

    stack = work / 'robot_stack.yaml'
    stack.write_text(
        f'/**/transmission_bridge:\n  ros__parameters:\n    transmissions_file: {arm}\n'
        f'/**/kinematics:\n  ros__parameters:\n    model_file: {model_file}\n')

    def relay(name, *pairs):
        return RELAY + ['--ros-args', '-r', f'__node:={name}'] + [
            x for a, b in pairs for x in ('-r', f'{a}:={b}')]

    return {
        'bridge': ([BRIDGE + ['--ros-args', '-p', f'transmissions_file:={tfile}']],
                   [relay('relay', ('input', 'actuator_states'), ('output', 'joint_states'))],
                   list(ts.actuator_names), pose if transmissions is not None else None),
        'kinematics': ([KINEMATICS + ['--ros-args', '-p', f'model_file:={model_file}']],
                       [relay('relay', ('input', 'joint_states'),
                              ('output', 'kinematics/gravity_torques'))],
                       list(load_model(model_file).joint_names)),
        'kinematics_tf_off': ([KINEMATICS + ['--ros-args', '-p', f'model_file:={model_file}',
                                             '-p', 'publish_every.tf:=0']],
                              [relay('relay', ('input', 'joint_states'),
                                     ('output', 'kinematics/gravity_torques'))],
                              list(load_model(model_file).joint_names)),
        # robot.launch.py joint_commands_from:=gravity, node for node
        'chain': ([BRIDGE + ['--ros-args', '-p', f'transmissions_file:={arm}', '-r',
                             'joint_commands:=kinematics/gravity_torques'],
                   KINEMATICS + ['--ros-args', '-p', f'model_file:={model_file}']],
                  [relay('relay_a', ('input', 'actuator_states'), ('output', 'joint_states'),
                         ('input2', 'kinematics/gravity_torques'),
                         ('output2', 'actuator_commands')),
                   relay('relay_b', ('input', 'joint_states'),
                         ('output', 'kinematics/gravity_torques'))],
                  list(load_transmissions(arm).actuator_names)),
        # robot.launch.py composed:=true: the same two nodes in one process (robot_stack)
        'chain_composed': ([STACK + ['--ros-args', '--params-file', str(stack), '-r',
                                     'transmission_bridge:joint_commands:='
                                     'kinematics/gravity_torques']],
                           # its floor: the two relays in one process too
                           [RELAY + ['--composed', '--ros-args'] + [
                               x for node, a, b in (
                                   ('relay_a', 'input', 'actuator_states'),
                                   ('relay_a', 'output', 'joint_states'),
                                   ('relay_a', 'input2', 'kinematics/gravity_torques'),
                                   ('relay_a', 'output2', 'actuator_commands'),
                                   ('relay_b', 'input', 'joint_states'),
                                   ('relay_b', 'output', 'kinematics/gravity_torques'))
                               for x in ('-r', f'{node}:{a}:={b}')]],
                           list(load_transmissions(arm).actuator_names)),
    }


def _with_losses(setup, work):
    """Return ``setup`` with every bridge's motors given a lossy gear stage (a params file)."""
    import yaml
    from bench_losses import LOSSY
    from transmission_bridge.transmissions import load_transmissions
    out = {}
    for target, (nodes, *rest) in setup.items():
        changed = []
        for k, cmd in enumerate(nodes):
            if cmd[:2] == BRIDGE:
                tfile = next(a.split(':=', 1)[1] for a in cmd
                             if a.startswith('transmissions_file:='))
                names = load_transmissions(tfile).actuator_names
                path = work / f'losses_{target}_{k}.yaml'
                path.write_text(yaml.safe_dump({'/**': {'ros__parameters': {
                    f'actuators.{m}.{key}': value for m in names
                    for key, value in LOSSY.items()}}}))
                cmd = cmd + ['--params-file', str(path)]
            changed.append(cmd)
        out[target] = (changed, *rest)
    return out


KINDS = ('raw_relay', 'relay', 'node')
# s between the first match and the first message. Something in DDS is not settled at 1 s: with
# 1 s, in 4 runs of 15 (--targets kinematics) the process under test (a relay as often as the
# node) held every message for 263-336 ms, each time 1.81-1.95 s into the stream, about 3 s
# after the generator's process came up; with 4 s, 0 stalls in 9 runs (doc/performance.md,
# "Stalls").
SETTLE_S = 4.0
# A stall: no message received for STALL_S (or STALL_PERIODS send periods, if longer).
STALL_S = 0.1
STALL_PERIODS = 20


def _raw(cmd):
    """Return the raw relay's command for a relay command."""
    return cmd[:1] + ['--raw'] + cmd[1:]


def run_once(kind, target, setup, rate, seconds, work, extra_env=None):
    """Measure one target's nodes (or the relays standing in); return a result dict."""
    import psutil
    import rclpy
    from rclpy.experimental import EventsExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from transmission_bridge.ros.node_main import Laps
    topic_in, topic_out = TARGETS[target]
    nodes, relays, names, *positions = setup[target]
    ns = f'/bench_{os.getpid()}_{kind}_{target}_{int(rate)}'
    env = dict(os.environ, **(extra_env or {}))
    log = open(work / f'{kind}_{target}_{int(rate)}.log', 'w')
    commands = {'node': nodes, 'relay': relays, 'raw_relay': [_raw(c) for c in relays]}[kind]
    procs = [subprocess.Popen([sys.executable, *cmd, '-r', f'__ns:={ns}', '-r',
                               f'/diagnostics:={ns}/diagnostics'],
                              env=env, stdout=log, stderr=subprocess.STDOUT)
             for cmd in commands]
    names_file = work / f'names_{target}.txt'
    names_file.write_text(' '.join(names) + (
        '\n' + ' '.join(map(repr, positions[0])) if positions and positions[0] else ''))
    context = rclpy.Context()
    rclpy.init(context=context, args=[])
    rx = rclpy.create_node('receiver', namespace=ns, context=context)
    # The receiver on the EventsExecutor, run in laps of 10 ms (Laps, as the nodes): a wait set
    # rebuilt in Python per message (SingleThreadedExecutor) cost this process about a
    # fifth of a core at 1 kHz, taken from the two cores the chain under test shares.
    executor = EventsExecutor(context=context)
    executor.add_node(rx)
    laps = Laps(executor, rx, 0.01)
    latencies, seqs, own = [], [], []

    unpack = struct.Struct('<iII').unpack_from

    def receive(data):              # raw: the stamp is the first field after the CDR header
        sec, nanosec, frame_length = unpack(data, 4)
        stamp = sec * 1_000_000_000 + nanosec
        if frame_length <= 1:
            # Not the stream's: the generator's frame_id (or the kinematics node's base
            # frame, in the chain) is copied through every hop. The bridge's watchdog sends
            # its safe command with none, 0.5 s after the stream ends (counted as messages,
            # these once made every run's 'stalls' and a negative 'lost').
            own.append(stamp)
            return
        latencies.append(time.time_ns() - stamp)
        seqs.append(stamp)          # unique per message; every node copies the stamp

    rx.create_subscription(JointState, topic_out, receive,
                           QoSProfile(depth=10000, reliability=ReliabilityPolicy.RELIABLE),
                           raw=True)
    dropped = watch_dropped(rx, f'{ns}/diagnostics')
    deadline = time.monotonic() + 20
    while rx.count_publishers(topic_out) == 0 and time.monotonic() < deadline:
        laps.run()
    watched = [psutil.Process(p.pid) for p in procs]
    gen = subprocess.Popen([sys.executable, str(HERE / 'load_generator.py'),
                            f'{ns}/{topic_in}', str(names_file), str(rate), str(seconds),
                            str(SETTLE_S)], stdout=subprocess.PIPE, text=True, env=env)
    time.sleep(SETTLE_S)             # CPU: from about when the generator starts sending
    for proc in watched:
        proc.cpu_percent()
    while gen.poll() is None:
        laps.run()
    cpu = sum(proc.cpu_percent() for proc in watched)
    dropped.clear()                  # counts are cumulative: keep the reports after the run
    end = time.monotonic() + 1.0
    last = end + 2.0                 # and wait for every node's (1 s period)
    reporters = sum(2 if cmd[:2] == STACK else 1 for cmd in commands)   # nodes, not processes
    while time.monotonic() < end or (
            kind == 'node' and len(dropped) < reporters and time.monotonic() < last):
        laps.run()
    sent = int(gen.stdout.read().strip() or 0)
    rss = sum(proc.memory_info().rss for proc in watched)
    for p in procs:
        p.send_signal(2)
    for p in procs:
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:      # say so, and do not lose the run's figures
            print(f'warning: {p.args[1:3]} did not stop 30 s after Ctrl-C; killed',
                  file=sys.stderr)
            p.kill()
            p.wait()
    executor.shutdown()
    rx.destroy_node()
    rclpy.shutdown(context=context)
    # Statistics skip the first 0.5 s: discovery and matching settle there, not the node.
    warmup = int(0.5 * rate)
    lat = np.array(latencies[warmup:]) / 1000.0
    # Receive times (stamp + latency), for the stalls: every message held at once, then
    # released together (doc/performance.md, "Stalls").
    arrived = np.sort(np.array(seqs[warmup:]) + np.array(latencies[warmup:])) / 1e9
    gaps = np.diff(arrived)
    stall_s = max(STALL_S, STALL_PERIODS / rate)
    return {'target': target, 'node': kind, 'rate_hz': rate, 'sent': sent,
            'received': len(set(seqs)), 'lost': sent - len(set(seqs)),
            # of the lost, how many the nodes dropped on purpose (input budget); -1: no report
            'dropped': (sum(dropped.values()) if len(dropped) == reporters else -1)
            if kind == 'node' else 0,
            'p50_us': float(np.percentile(lat, 50)) if len(lat) else float('nan'),
            'p99_us': float(np.percentile(lat, 99)) if len(lat) else float('nan'),
            'max_us': float(lat.max()) if len(lat) else float('nan'),
            'stalls': int((gaps > stall_s).sum()),
            'max_gap_ms': float(gaps.max() * 1e3) if len(gaps) else float('nan'),
            'cpu_percent': cpu, 'rss_mb': rss / 2 ** 20,
            'own_messages': len(own)}       # the nodes' own (the watchdog's), not counted


def combine(runs):
    """
    Return a row per kind from ``runs`` ({kind: [result per round]}).

    Latencies, CPU and memory are medians over the rounds; the ratios to the floors are the
    median of each round's ratio (a round's rows ran back to back, under the same
    conditions); counts are summed and maxima are the largest.
    """
    rows = []
    for kind, results in runs.items():
        row = dict(results[0])
        for key in ('sent', 'received', 'lost', 'stalls', 'own_messages'):
            row[key] = sum(r[key] for r in results)
        dropped = [r['dropped'] for r in results]
        row['dropped'] = -1 if -1 in dropped else sum(dropped)
        for key in ('max_us', 'max_gap_ms'):
            row[key] = max(r[key] for r in results)
        for key in ('p50_us', 'p99_us', 'cpu_percent', 'rss_mb'):
            row[key] = statistics.median(r[key] for r in results)
        for key in ('p50_us', 'p99_us', 'cpu_percent'):     # against each floor
            name = key.split('_')[0]
            for floor, label in (('relay', 'relay'), ('raw_relay', 'raw')):
                row[f'{name}/{label}'] = statistics.median(
                    r[key] / f[key] for r, f in zip(results, runs[floor]))
        rows.append(row)
    return rows


def main(argv=None):
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--rate', type=float, nargs='+', default=[1000.0],
                        help='publishing rate(s), Hz (default 1000)')
    parser.add_argument('--seconds', type=float, default=10.0)
    parser.add_argument('--rounds', type=int, default=1,
                        help='alternate the relays and the node this many times per target; '
                        'figures are medians over the rounds, ratios the median of each '
                        "round's, counts summed")
    parser.add_argument('--targets', nargs='+', default=list(TARGETS), choices=list(TARGETS))
    parser.add_argument('--max-rate', nargs='*', type=float, default=None,
                        help='also try these rates (3 s each) to find the highest without loss')
    parser.add_argument('--rates', nargs='*', type=float, default=None,
                        help='also report losses and p50 at each of these rates (3 s each)')
    parser.add_argument('--no-drop', action='store_true',
                        help='start the nodes with drop_on_overload:=false (no input budget)')
    parser.add_argument('--model', type=pathlib.Path,
                        help='robot of the kinematics targets (model YAML or URDF; default: the '
                             'example arm)')
    parser.add_argument('--actuators', type=int, default=24,
                        help='actuators of the bridge target (default 24)')
    parser.add_argument('--transmissions', type=pathlib.Path,
                        help="the bridge target's robot (transmissions YAML or URDF)")
    parser.add_argument('--losses', action='store_true',
                        help="give every motor of the bridge's robots a lossy gear stage "
                        '(efficiency 0.85 driving, 0.75 driven, viscous 1e-4 and Coulomb 0.01 '
                        'friction; bench_losses.py)')
    parser.add_argument('--results', default='latency',
                        help='name of the results file (results/NAME.json)')
    args = parser.parse_args(argv)
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    os.environ.setdefault('ROS_DOMAIN_ID', str(os.getpid() % 100 + 1))
    work = pathlib.Path(tempfile.mkdtemp(prefix='bench_latency_'))
    try:
        _measure(args, work)
    finally:        # the nodes' logs and the generated configuration go with the run
        shutil.rmtree(work, ignore_errors=True)


def _measure(args, work):
    """Run what ``args`` asks for, with the nodes' files in ``work``; report the tables."""
    setup = _setup(work, args.model, args.actuators, args.transmissions)
    if args.no_drop:
        setup = {target: ([cmd + ['-p', 'drop_on_overload:=false'] for cmd in nodes], *rest)
                 for target, (nodes, *rest) in setup.items()}
    if args.losses:
        setup = _with_losses(setup, work)
    rows = []
    for rate in args.rate:
        for target in args.targets:
            runs = {kind: [] for kind in KINDS}
            for r in range(args.rounds):    # each kind goes first in turn
                for kind in KINDS[r % len(KINDS):] + KINDS[:r % len(KINDS)]:
                    runs[kind].append(run_once(kind, target, setup, rate, args.seconds, work))
            rows.extend(combine(runs))
    for row in rows:                    # say which robot, where it is not the default
        if args.model and row['target'].startswith('kinematics'):
            row['target'] += f' ({args.model.stem}, {len(setup[row["target"]][2])} joints)'
        elif args.transmissions and row['target'] == 'bridge':
            row['target'] += f' ({args.transmissions.stem}, {len(setup["bridge"][2])} actuators)'
        elif args.actuators != 24 and row['target'] == 'bridge':
            row['target'] += f' ({args.actuators} actuators)'
    report(args.results, rows, [
        'target', 'node', 'rate_hz', 'sent', 'lost', 'dropped', 'p50_us', 'p99_us', 'max_us',
        'stalls', 'max_gap_ms', 'p50/relay', 'p50/raw', 'p99/relay', 'p99/raw', 'cpu_percent',
        'cpu/relay', 'rss_mb', 'own_messages'])
    if args.rates:
        swept = []
        for rate in sorted(args.rates):
            for target in args.targets:
                for kind in KINDS:
                    r = run_once(kind, target, setup, rate, 3.0, work)
                    swept.append({k: r[k] for k in ('target', 'node', 'rate_hz', 'sent',
                                                    'lost', 'dropped', 'p50_us',
                                                    'cpu_percent')})
        report('high_rate', swept, ['target', 'node', 'rate_hz', 'sent', 'lost', 'dropped',
                                    'p50_us', 'cpu_percent'])
    if args.max_rate:
        best = []
        for target in args.targets:
            for kind in KINDS:
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
