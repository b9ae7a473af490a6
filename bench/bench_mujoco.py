"""
A legged robot on MuJoCo at 1 kHz with the bridge and the kinematics node, in real time.

    python bench/bench_mujoco.py [--robot legged|go1] [--seconds 60] [--rate 1000]

The processes of ``sim2sim.launch.py`` on this machine, as a user runs them:
``actuator_simulator`` with ``engine:=mujoco`` (floating base on the ground, MIT-mode drives,
1 ms physics), the bridge with the robot's joint impedance gains
(``config/<robot>_sim2sim.yaml``, ``impedance_output:=motor_gains``) and the kinematics
node with its defaults (TF at 20 Hz; it computes only the outputs someone reads), both on
the simulator's ``/clock``; this process streams the stance at 50 Hz and reads the base's
pose. ``legged``: the shipped biped (config/legged_robot.xml, its knees and ankles closed
chains); ``go1``: Unitree's Go1 from example-robot-data (its URDF,
config/go1_transmissions.yaml).
Six runs: the defaults; without the kinematics node; the bridge and the kinematics node in
one process (``composed:=true``, the ``robot_stack`` executable); ``lockstep`` with
``real_time_factor`` 0 (as fast as the chain goes: each command advances one state); the
same with ``lockstep_ahead`` 1 (the simulator steps the next state while the bridge answers
the last), and that composed. ``--rounds N`` runs the chosen ones N times in turn.
Reported: the real-time factor (the lowest of the simulator's 10 s pace reports after the
first; lockstep: simulated over wall time of the whole run) and the slowest state (step and
publish; paced runs), each process's CPU, the states the bridge dropped to keep up
(``input overload``), and the base height at the end (it stood). Real time (1.0) is the
anchor.
"""

import argparse
import importlib.metadata
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
CONFIG = ROOT / 'config'
SETTLE_S = 6.0
STAND = {'hip_pitch': -0.3, 'knee': 0.6, 'ankle_pitch': -0.3}
GO1 = 'cmeel.prefix/share/example-robot-data/robots/go1_description/urdf/go1.urdf'


def robot_files(name):
    """Return (transmissions file, model file, parameters file) of ``name``."""
    if name == 'legged':
        return (CONFIG / 'legged_robot.urdf', CONFIG / 'legged_robot.xml',
                CONFIG / 'legged_sim2sim.yaml')
    try:
        urdf = pathlib.Path(importlib.metadata.distribution('example-robot-data')
                            .locate_file(GO1))
    except importlib.metadata.PackageNotFoundError:
        sys.exit('--robot go1 needs example-robot-data (pip install example-robot-data)')
    return CONFIG / 'go1_transmissions.yaml', urdf, CONFIG / 'go1_sim2sim.yaml'


# (name, with the kinematics node, lockstep, lockstep_ahead, bridge and kinematics composed)
RUNS = [('defaults', True, False, 0, False),
        ('without the kinematics node', False, False, 0, False),
        ('composed: bridge and kinematics in one process', True, False, 0, True),
        ('lockstep, real_time_factor 0', True, True, 0, False),
        ('lockstep 1 state ahead, real_time_factor 0', True, True, 1, False),
        ('lockstep 1 state ahead, composed', True, True, 1, True)]


def _composed(procs):
    """Return ``procs`` with the bridge and the kinematics node in one robot_stack process."""
    import yaml
    sections = {}
    for key, node in (('bridge', 'transmission_bridge'), ('kin', 'kinematics')):
        args = procs.pop(key)[1:]
        params = {}
        for flag, value in zip(args[::2], args[1::2]):
            if flag == '--params-file':
                params.update(yaml.safe_load(pathlib.Path(value).read_text())[
                    'transmission_bridge']['ros__parameters'])
            else:
                name, text = value.split(':=', 1)
                params[name] = yaml.safe_load(text)
        sections[f'/**/{node}'] = {'ros__parameters': params}
    path = pathlib.Path('/tmp/bench_mujoco_stack.yaml')
    path.write_text(yaml.safe_dump(sections))
    # 'bridge' names the process: its log carries the bridge's overload lines
    return {**procs, 'bridge': ['transmission_bridge.robot_stack', '--params-file',
                                str(path)]}


def one_run(label, kinematics, lockstep, ahead, composed, seconds, rate, files, stance):
    """Run the three nodes (or two) for ``seconds``; return the row of figures."""
    transmissions, model, params = files
    procs = {
        'sim': ['transmission_bridge.tools.actuator_simulator', '-p', 'engine:=mujoco',
                '-p', f'transmissions_file:={transmissions}', '-p', f'model_file:={model}',
                '-p', 'floating_base:=true', '-p', 'dynamics:=motor_gains',
                '-p', f'rate:={rate}', '-p', f'lockstep:={str(lockstep).lower()}',
                '-p', f'real_time_factor:={0.0 if lockstep else 1.0}',
                '-p', f'lockstep_ahead:={ahead}'],
        'bridge': ['transmission_bridge.bridge.node', '--params-file', str(params),
                   '-p', f'transmissions_file:={transmissions}',
                   '-p', 'impedance_output:=motor_gains', '-p', 'command_timeout:=0.0',
                   '-p', 'use_sim_time:=true'],
        'kin': ['transmission_bridge.kinematics_node.node', '-p', f'model_file:={model}'
                if str(model).endswith('.urdf') else f'model_file:={transmissions}',
                '-p', f'transmissions_file:={transmissions}', '-p', 'use_sim_time:=true']}
    if not kinematics:
        del procs['kin']
    if composed:
        procs = _composed(procs)
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
    target = JointState(name=list(stance), position=list(stance.values()))
    cpu = {k: psutil.Process(p.pid) for k, p in started.items()}
    clock = []

    def stream(period):
        end = time.monotonic() + period
        while time.monotonic() < end:
            pub.publish(target)
            rclpy.spin_once(node, timeout_sec=0.02)

    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from rosgraph_msgs.msg import Clock
    node.create_subscription(Clock, '/clock', clock.append,       # as rclpy's time source
                             QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT))

    def now():
        return clock[-1].clock.sec + clock[-1].clock.nanosec * 1e-9 if clock else 0.0
    try:
        stream(SETTLE_S)
        for p in cpu.values():
            p.cpu_percent()
        sim_start, wall_start = now(), time.monotonic()
        stream(seconds)
        usage = {k: p.cpu_percent() for k, p in cpu.items()}
        lockstep_factor = (now() - sim_start) / (time.monotonic() - wall_start)
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
    dropped = sum(int(n) for n in re.findall(   # the bridge's (the stack's log has both)
        r'\[transmission_bridge\]: input overload: (\d+) messages dropped', text['bridge']))
    nan = float('nan')
    return {'what': label,
            'real_time_factor': lockstep_factor if lockstep else (
                min(float(f) for f, _ in paces) if paces else nan),
            'slowest_state_ms': nan if lockstep or not paces else max(float(s) for _, s in paces),
            'sim_cpu_percent': usage['sim'], 'bridge_cpu_percent': usage['bridge'],
            'kinematics_cpu_percent': usage.get('kin', 0.0), 'bridge_dropped': dropped,
            'base_height_m': base[-1].pose.position.z if base else float('nan')}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--robot', choices=('legged', 'go1'), default='legged')
    parser.add_argument('--seconds', type=float, default=60.0,
                        help='per run (the simulator reports its pace every 10 s)')
    parser.add_argument('--rate', type=float, default=1000.0)
    parser.add_argument('--only', nargs='*', default=[''],
                        help='run only the runs whose name has one of these texts (e.g. '
                        'lockstep)')
    parser.add_argument('--rounds', type=int, default=1,
                        help='run the chosen runs this many times in turn (a column says '
                        "which round; the VM's slow spells last minutes)")
    args = parser.parse_args()
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    os.environ.setdefault('ROS_DOMAIN_ID', str(os.getpid() % 100 + 1))
    from transmission_bridge.transmissions import load_transmissions
    files = robot_files(args.robot)
    tset = load_transmissions(files[0])
    stance = dict(zip(tset.joint_names, (float(q) for q in tset.default_positions)))
    if args.robot == 'legged':           # the biped's stance: knees bent
        stance.update({j: v for j in stance for k, v in STAND.items() if j.endswith(k)})
    chosen = [run for run in RUNS if any(text in run[0] for text in args.only)]
    rows = [{'round': k + 1, **one_run(*run, args.seconds, args.rate, files, stance)}
            if args.rounds > 1 else one_run(*run, args.seconds, args.rate, files, stance)
            for k in range(args.rounds) for run in chosen]
    report(f'mujoco_{args.robot}', rows, list(rows[0]))


if __name__ == '__main__':
    main()
