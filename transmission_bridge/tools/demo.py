"""
``make demo``: the example robot end to end, with no robot and no ROS install.

Replays the bundled bag of the example arm's actuator states
(``examples/example_robot_bag``) with ``/clock`` into the bridge and the
kinematics node (both on sim time), the bridge fed the kinematics node's holding
torques as ``robot.launch.py`` does; prints, for a few instants, the joint
positions and holding torques next to the motor torques that produce them
(``actuator_commands``), then converts the same bag offline and draws actuator and
joint positions, joint holding torques and motor torques to
``demo_output/example_robot.png``.

``make demo ROBOT=legged`` (``--robot legged``) does the same for the legged robot of
``config/legged_robot.urdf``, whose knees and ankles move through linkages (a crank and a
rod; a parallel ankle of two motors): its bag is written first, from a smooth motion, and
the left leg is printed. Then the robot stands on MuJoCo's ground (doc/simulation.md): its
MJCF's knees and ankles are closed chains MuJoCo solves, a bridge with joint impedance gains
sends MIT-mode drives their stiffness, damping and feed-forward through its linkage maps, and
the robot crouches and stands again; the base height and the bridge's joint_states against
MuJoCo's own joint state are printed. The example arm's run ends on MuJoCo too: its holding
torques, through the bridge's lossy motors, hold it still (:mod:`.demo_ground`).
"""

import argparse
import itertools
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent


def main(argv=None):
    """Run the demo; return 0 when both nodes answered and the conversion worked."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--output', default=ROOT / 'demo_output', type=pathlib.Path,
                        help='folder for the converted bag and the plot')
    parser.add_argument('--robot', choices=('example', 'legged'), default='example',
                        help='the example arm (default), or the legged robot with linkages')
    args = parser.parse_args(argv)
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    os.environ.setdefault('ROS_DOMAIN_ID', str(os.getpid() % 100 + 1))
    config, bag = ROOT / 'config', ROOT / 'examples' / 'example_robot_bag'
    tfile, model = config / 'example_robot_transmissions.yaml', config / 'example_arm_model.yaml'
    title, shown = 'example arm', None
    if args.robot == 'legged':
        tfile = model = config / 'legged_robot.urdf'
        bag, title, shown = args.output / 'legged_robot_bag', 'legged robot, left leg', 'left_'
        _write_bag(bag, tfile)
    sim = ['-p', 'use_sim_time:=true']
    procs = [subprocess.Popen([sys.executable, '-m', module, '--ros-args', *extra, *sim])
             for module, extra in [
                 ('transmission_bridge.bridge.node', ['-p', f'transmissions_file:={tfile}',
                                                      '-r', 'joint_commands:=kinematics/'
                                                      'gravity_torques']),
                 ('transmission_bridge.kinematics_node.node', ['-p', f'model_file:={model}'])]]
    try:
        ok = _replay_and_listen(bag, title, shown)
    finally:
        for p in procs:
            p.send_signal(signal.SIGINT)
        for p in procs:
            p.wait(10)
    print('\nOffline, without a ROS graph:')
    args.output.mkdir(exist_ok=True)
    shutil.rmtree(args.output / 'converted_bag', ignore_errors=True)
    plot = args.output / f'{args.robot}_robot.png'
    from . import convert
    code = convert.main([str(bag), str(args.output / 'converted_bag'), '--transmissions',
                         str(tfile), '--model', str(model), '--plot', str(plot)])
    if code == 0:
        print(f'plot of positions and torques, actuator and joint side: {plot}')
    held = _on_mujoco(args.robot, tfile, model)
    return 0 if ok and code == 0 and held else 1


def _on_mujoco(robot, tfile, model):
    """Run the robot's MuJoCo part (demo_ground); return whether it held."""
    try:
        import mujoco  # noqa: F401
        from control_msgs.msg import DynamicJointState  # noqa: F401
    except ImportError as exc:
        print(f'\n({exc.name} is not installed: the MuJoCo part of the demo is skipped)')
        return True
    from . import demo_ground
    config = ROOT / 'config'
    if robot == 'legged':
        return demo_ground.stand_crouch_stand(tfile, config / 'legged_robot.xml')
    return demo_ground.hold_arm(tfile, config / 'example_robot.urdf', model)


def _write_bag(bag, urdf):
    """Write 4 s of the legged robot's motors moving smoothly (a fresh bag each run)."""
    from ..bag.example import write_actuator_bag
    from ..transmissions import load_transmissions
    bag.parent.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(bag, ignore_errors=True)
    write_actuator_bag(bag, load_transmissions(urdf), seconds=4.0, rate=100.0)


def _replay_and_listen(bag, title, shown):
    import rclpy
    from sensor_msgs.msg import JointState

    rclpy.init(args=[])
    node = rclpy.create_node('demo_listener')
    joints, torques, motors = [], [], []
    node.create_subscription(JointState, 'joint_states', joints.append, 1000)
    node.create_subscription(JointState, 'kinematics/gravity_torques', torques.append, 1000)
    node.create_subscription(JointState, 'actuator_commands', motors.append, 1000)
    # Replay once this listener has found the nodes' outputs (the player waits only for the
    # bridge's input): what the nodes publish before that would not reach it.
    deadline = time.monotonic() + 20.0
    while time.monotonic() < deadline and not all(
            node.count_publishers(topic) for topic in (
                'joint_states', 'kinematics/gravity_torques', 'actuator_commands')):
        rclpy.spin_once(node, timeout_sec=0.05)
    player = subprocess.Popen([sys.executable, '-m', 'transmission_bridge.tools.replay',
                               str(bag), '--clock', '--wait-for-subscribers'])
    while player.poll() is None:
        rclpy.spin_once(node, timeout_sec=0.05)
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.05)
    node.destroy_node()
    rclpy.shutdown()
    by_stamp = {_stamp(m): m for m in motors}
    for k, msg in enumerate(torques[::max(1, len(torques) // 4)]):
        _print(msg, by_stamp.get(_stamp(msg)), title if k == 0 else None, shown)
    print(f'\n{len(joints)} joint_states and {len(motors)} actuator_commands from '
          f'transmission_bridge, {len(torques)} gravity_torques from kinematics, stamped with '
          'the bag time.')
    print('tau = joint torque that holds the robot against gravity (N*m), i.e. -tau_g;\n'
          'motor = what each motor supplies through the transmissions for it (N*m).')
    return bool(joints and torques and motors)


def _stamp(msg):
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


def _print(msg, motor, title, shown):
    """Print one instant: joints (q, holding torque) beside motors (torque)."""
    if title:
        print(f'{title}, held against gravity: joint side | motor side')
    stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
    joints = [f'{n:<18}{q:9.4f}{t:11.4f}' for n, q, t in zip(msg.name, msg.position, msg.effort)
              if shown is None or n.startswith(shown)]
    motors = ([f'{n:<24}{t:10.4f}' for n, t in zip(motor.name, motor.effort)
               if shown is None or n.startswith(shown)] if motor
              else ['(no actuator_commands with this stamp)'])
    print(f'\n  t = {stamp % 1000:.3f} s')
    print(f'    {"joint":<18}{"q":>9}{"tau [N*m]":>11}  |  {"motor":<24}{"torque":>10}')
    for left, right in itertools.zip_longest(joints, motors, fillvalue=''):
        print(f'    {left:<38}  |  {right}')


if __name__ == '__main__':
    sys.exit(main())
