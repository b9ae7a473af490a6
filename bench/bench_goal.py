"""
A FollowJointTrajectory goal at 1 kHz over DDS: nothing lost, each command within a period.

    python bench/bench_goal.py [--rate 1000] [--seconds 10] [--rounds 2]

The bridge runs as a process on the example arm (the wrist a group); a load generator
process publishes actuator states at ``--rate`` with send timestamps (bench_latency's); this
process receives ``joint_states`` and ``actuator_commands``. Each round three runs, in
alternating order: ``idle`` (no goal), ``goal`` (a wrist goal running for the whole window: a
slow cubic there and back, sampled at every state) and ``impedance`` (gains on the wrist,
one target given: the spring's motor efforts at every state; doc/impedance.md).
``cpu_percent`` is the bridge process's while the stream runs. Reported per run: states
sent, ``joint_states`` received and lost, wrist commands received (one per state is the
most), the bridge's ``dropped_overload``, and ``command_delay_us``, the median of (a
command's arrival - the send stamp of the last state that arrived before it): the time from
a motor's state leaving its driver to the command it causes arriving back, one DDS round
trip plus the bridge's work (under one state period at 1 kHz: no state period added);
``delay_p99_us`` its 99th percentile and ``late`` the commands whose delay passed one state
period (the receiver's own scheduling counts in both: it is a Python process too).
"""

import argparse
import os
import pathlib
import struct
import subprocess
import sys
import time

from common import report, watch_dropped
import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
CONFIG = ROOT / 'config' / 'example_robot_transmissions.yaml'
SETTLE_S = 4.0
WRIST = ['wrist_pitch', 'wrist_roll']


def run_once(kind, rate, seconds, work):
    """Run the bridge, the generator and (for ``goal``) a goal; return the run's figures."""
    import rclpy
    from rclpy.action import ActionClient
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectoryPoint
    from control_msgs.action import FollowJointTrajectory
    from transmission_bridge.transmissions import load_transmissions
    tset = load_transmissions(CONFIG)
    ns = f'/bench_goal_{os.getpid()}_{kind}_{int(time.monotonic() * 1000)}'
    log = open(work / f'{kind}.log', 'w')
    proc = subprocess.Popen(
        [sys.executable, '-m', 'transmission_bridge.bridge.node', '--ros-args',
         '-p', f'transmissions_file:={CONFIG}', '-p', 'trajectory_controllers:=[wrist]',
         '-p', f'wrist.joints:={WRIST}'.replace("'", ''), '-r', f'__ns:={ns}',
         '-r', f'/diagnostics:={ns}/diagnostics',
         *(['-p', 'gains.wrist_pitch.p:=40.0', '-p', 'gains.wrist_roll.p:=10.0',
            '-p', 'command_timeout:=0.0'] if kind == 'impedance' else [])],
        stdout=log, stderr=subprocess.STDOUT)
    import psutil
    watched = psutil.Process(proc.pid)
    pose = tset.joint_to_actuator('position', tset.default_positions)
    names_file = work / 'names.txt'
    names_file.write_text(' '.join(tset.actuator_names) + '\n'
                          + ' '.join(repr(float(x)) for x in pose))
    context = rclpy.Context()
    rclpy.init(context=context, args=[])
    rx = rclpy.create_node('receiver', namespace=ns, context=context)
    executor = rclpy.executors.SingleThreadedExecutor(context=context)
    executor.add_node(rx)
    unpack = struct.Struct('<iII').unpack_from
    states, commands = [], []           # (stamp or arrival ns)
    last_state = [None]

    def on_state(data):
        sec, nanosec, frame_length = unpack(data, 4)
        if frame_length > 1:            # the stream's (the generator's frame_id)
            stamp = sec * 1_000_000_000 + nanosec
            states.append(stamp)
            last_state[0] = stamp

    def on_command(data):
        if last_state[0] is not None:
            commands.append(time.time_ns() - last_state[0])

    qos = QoSProfile(depth=10000, reliability=ReliabilityPolicy.RELIABLE)
    rx.create_subscription(JointState, 'joint_states', on_state, qos, raw=True)
    rx.create_subscription(JointState, 'actuator_commands', on_command, qos, raw=True)
    dropped = watch_dropped(rx, f'{ns}/diagnostics')
    client = ActionClient(rx, FollowJointTrajectory, 'transmission_bridge/wrist/'
                          'follow_joint_trajectory')
    deadline = time.monotonic() + 30
    while not client.server_is_ready() and time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.05)
    gen = subprocess.Popen([sys.executable, str(HERE / 'load_generator.py'),
                            f'{ns}/actuator_states', str(names_file), str(rate), str(seconds),
                            str(SETTLE_S)], stdout=subprocess.PIPE, text=True)
    end = time.monotonic() + 30.0           # the stream flowing: a goal starts from it
    while not states and time.monotonic() < end:
        executor.spin_once(timeout_sec=0.01)
    result = None
    if kind == 'impedance':             # one target: the wrist's spring at every state
        targets = rx.create_publisher(JointState, 'joint_commands', 10)
        end = time.monotonic() + 30.0       # matched first: a target before is lost
        while not targets.get_subscription_count() and time.monotonic() < end:
            executor.spin_once(timeout_sec=0.01)
        q0 = [tset.joint(j).default_position for j in WRIST]
        end = time.monotonic() + 10.0       # until the spring's first command comes back
        while not commands and time.monotonic() < end:
            targets.publish(JointState(name=WRIST, position=[q + 0.1 for q in q0]))
            for _ in range(5):
                executor.spin_once(timeout_sec=0.01)
    if kind == 'goal':                  # there and back over the whole window
        goal = FollowJointTrajectory.Goal()
        goal.trajectory.joint_names = WRIST
        q0 = [tset.joint(j).default_position for j in WRIST]
        span = seconds + 2.0
        for t, dq in ((span / 2, 0.2), (span, 0.0)):
            point = JointTrajectoryPoint(positions=[q + dq for q in q0], velocities=[0.0, 0.0])
            point.time_from_start.sec = int(t)
            point.time_from_start.nanosec = int((t % 1) * 1e9)
            goal.trajectory.points.append(point)
        sent = client.send_goal_async(goal)
        while not sent.done():
            executor.spin_once(timeout_sec=0.01)
        result = sent.result().get_result_async()
    commands.clear()
    first = len(states)
    watched.cpu_percent()
    while gen.poll() is None:
        executor.spin_once(timeout_sec=0.01)
    cpu = watched.cpu_percent()
    dropped.clear()
    end = time.monotonic() + 2.5
    while time.monotonic() < end and (len(dropped) < 1 or (result and not result.done())):
        executor.spin_once(timeout_sec=0.01)
    sent_count = int(gen.stdout.read().strip() or 0)
    proc.send_signal(2)
    proc.wait(30)
    executor.shutdown()
    rx.destroy_node()
    rclpy.shutdown(context=context)
    warmup = int(0.5 * rate)
    delays = np.array(commands[warmup:]) / 1000.0
    return {'what': kind, 'rate_hz': rate, 'sent': sent_count, 'joint_states': len(states),
            'lost': sent_count - len(states), 'commands': len(commands),
            'states_during': len(states) - first,
            'dropped': sum(dropped.values()) if dropped else -1, 'cpu_percent': cpu,
            'command_delay_us': float(np.median(delays)) if len(delays) else float('nan'),
            'delay_p99_us': float(np.percentile(delays, 99)) if len(delays) else float('nan'),
            'late': int(np.sum(delays > 1e6 / rate))}


def main(argv=None):
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--rate', type=float, default=1000.0)
    parser.add_argument('--seconds', type=float, default=10.0)
    parser.add_argument('--rounds', type=int, default=2)
    parser.add_argument('--results', default='goal', help='results file name')
    args = parser.parse_args(argv)
    import tempfile
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            kinds = ('idle', 'goal', 'impedance')
            for kind in (kinds if r % 2 == 0 else kinds[::-1]):
                rows.append(run_once(kind, args.rate, args.seconds, pathlib.Path(tmp)))
                print(rows[-1], flush=True)
    for row in rows:
        row['round'] = rows.index(row) // 3
    report(args.results, rows, ['round', 'what', 'rate_hz', 'sent', 'joint_states', 'lost',
                                'states_during', 'commands', 'dropped', 'cpu_percent',
                                'command_delay_us', 'delay_p99_us', 'late'])


if __name__ == '__main__':
    main()
