"""
The legged robot on MuJoCo at 1 kHz with the bridge and the kinematics node, in real time.

    python bench/bench_mujoco.py [--seconds 20] [--rate 1000]

Three processes on this machine, as a user runs them: ``actuator_simulator`` with
``engine:=mujoco`` on ``config/legged_robot.xml`` (floating base on the ground, MIT-mode
drives, 1 ms physics), the bridge with joint impedance gains on every joint
(``impedance_output:=motor_gains``) and the kinematics node on the legged URDF, both on the
simulator's ``/clock``; this process streams a standing target at 50 Hz. Three runs: the
defaults; ``/clock`` and the kinematics node's TF, poses and energy at 100 Hz (its gravity
torques still with every state; robot_state_publisher's TF runs at 20 Hz by default); and
without the kinematics node. Reported: the real-time factor (the lowest of the simulator's
10 s pace reports after the first) and the slowest state (step and publish), each process's
CPU, the states the bridge dropped to keep up (``input overload``), and the base height at
the end (it stood). Real time (1.0) is the anchor.
"""

import argparse
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

from common import report
import psutil

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
URDF, MJCF = ROOT / 'config' / 'legged_robot.urdf', ROOT / 'config' / 'legged_robot.xml'
SETTLE_S = 6.0
# The kinematics node's outputs a 1 kHz robot needs less often (robot_state_publisher's TF
# runs at 20 Hz by default): at 100 Hz; its gravity torques with every state.
EVERY_TENTH = ('tf', 'body_poses', 'tip_poses', 'potential_energy', 'passive_torques')
STAND = {'hip_pitch': -0.3, 'knee': 0.6, 'ankle_pitch': -0.3}


# (name, clock_rate, the kinematics node's slow outputs every Nth state, with it at all)
RUNS = [('defaults: /clock and every output with every state', 0.0, 1, True),
        ('/clock, TF, poses and energy at 100 Hz', 100.0, 10, True),
        ('without the kinematics node', 0.0, 1, False)]


def one_run(label, clock_rate, every, kinematics, seconds, rate, names):
    """Run the three nodes (or two) for ``seconds``; return the row of figures."""
    gains = [x for j in names for x in ('-p', f'gains.{j}.p:=400.0', '-p', f'gains.{j}.d:=4.0')]
    procs = {
        'sim': ['transmission_bridge.tools.actuator_simulator', '-p', 'engine:=mujoco',
                '-p', f'transmissions_file:={URDF}', '-p', f'model_file:={MJCF}',
                '-p', 'floating_base:=true', '-p', 'dynamics:=motor_gains',
                '-p', f'rate:={rate}', '-p', f'clock_rate:={clock_rate}'],
        'bridge': ['transmission_bridge.bridge.node', '-p', f'transmissions_file:={URDF}',
                   '-p', 'impedance_output:=motor_gains', '-p', 'command_timeout:=0.0',
                   '-p', 'use_sim_time:=true', *gains],
        'kin': ['transmission_bridge.kinematics_node.node', '-p', f'model_file:={URDF}',
                '-p', 'use_sim_time:=true',
                *[x for o in EVERY_TENTH for x in ('-p', f'publish_every.{o}:={every}')]]}
    if not kinematics:
        del procs['kin']
    logs = {k: pathlib.Path(f'/tmp/bench_mujoco_{k}.log') for k in procs}
    started = {k: subprocess.Popen([sys.executable, '-m', m[0], '--ros-args', *m[1:]],
                                   stdout=logs[k].open('w'), stderr=subprocess.STDOUT)
               for k, m in procs.items()}
    import rclpy
    from geometry_msgs.msg import PoseStamped
    from sensor_msgs.msg import JointState
    rclpy.init(args=[])
    node = rclpy.create_node('bench_mujoco')
    pub = node.create_publisher(JointState, 'joint_commands', 10)
    base = []
    node.create_subscription(PoseStamped, 'actuator_simulator/base_pose', base.append, 10)
    target = JointState(name=names, position=[
        next((v for k, v in STAND.items() if j.endswith(k)), 0.0) for j in names])
    cpu = {k: psutil.Process(p.pid) for k, p in started.items()}

    def stream(period):
        end = time.monotonic() + period
        while time.monotonic() < end:
            pub.publish(target)
            rclpy.spin_once(node, timeout_sec=0.02)

    try:
        stream(SETTLE_S)
        for p in cpu.values():
            p.cpu_percent()
        stream(seconds)
        usage = {k: p.cpu_percent() for k, p in cpu.items()}
    finally:
        node.destroy_node()
        rclpy.shutdown()
        for p in started.values():
            p.send_signal(signal.SIGINT)
        for p in started.values():
            p.wait(20)
    text = {k: path.read_text() for k, path in logs.items()}
    paces = re.findall(r'real-time factor (\d+\.\d+)\); the slowest state took (\d+\.\d+) ms',
                       text['sim'])[1:]         # the first window holds the start-up
    dropped = sum(int(n) for n in re.findall(r'input overload: (\d+) messages dropped',
                                             text['bridge']))
    return {'what': label,
            'real_time_factor': min(float(f) for f, _ in paces) if paces else float('nan'),
            'slowest_state_ms': max(float(s) for _, s in paces) if paces else float('nan'),
            'sim_cpu_percent': usage['sim'], 'bridge_cpu_percent': usage['bridge'],
            'kinematics_cpu_percent': usage.get('kin', 0.0), 'bridge_dropped': dropped,
            'base_height_m': base[-1].pose.position.z if base else float('nan')}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--seconds', type=float, default=21.0,
                        help='per run (the simulator reports its pace every 10 s)')
    parser.add_argument('--rate', type=float, default=1000.0)
    args = parser.parse_args()
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    os.environ.setdefault('ROS_DOMAIN_ID', str(os.getpid() % 100 + 1))
    from transmission_bridge.transmissions import load_transmissions
    names = list(load_transmissions(URDF).joint_names)
    rows = [one_run(*run, args.seconds, args.rate, names) for run in RUNS]
    report('mujoco_legged', rows, list(rows[0]))


if __name__ == '__main__':
    main()
