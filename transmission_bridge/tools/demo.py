"""
``make demo``: the example robot end to end, with no robot and no ROS install.

Replays the bundled bag of the example arm's actuator states
(``examples/example_robot_bag``) with ``/clock`` into the bridge and the
kinematics node (both on sim time), prints the joint positions next to the
torques that hold the arm against gravity, then converts the same bag offline
and draws actuator and joint signals to ``demo_output/example_robot.png``.
"""

import argparse
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
    args = parser.parse_args(argv)
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    os.environ.setdefault('ROS_DOMAIN_ID', str(os.getpid() % 100 + 1))
    config, bag = ROOT / 'config', ROOT / 'examples' / 'example_robot_bag'
    tfile, model = config / 'example_robot_transmissions.yaml', config / 'example_arm_model.yaml'
    sim = ['-p', 'use_sim_time:=true']
    procs = [subprocess.Popen([sys.executable, '-m', module, '--ros-args', *extra, *sim])
             for module, extra in [
                 ('transmission_bridge.bridge_node', ['-p', f'transmissions_file:={tfile}']),
                 ('transmission_bridge.kinematics_node', ['-p', f'model_file:={model}'])]]
    try:
        ok = _replay_and_listen(bag)
    finally:
        for p in procs:
            p.send_signal(signal.SIGINT)
        for p in procs:
            p.wait(10)
    print('\nOffline, without a ROS graph:')
    args.output.mkdir(exist_ok=True)
    shutil.rmtree(args.output / 'converted_bag', ignore_errors=True)
    plot = args.output / 'example_robot.png'
    from . import convert
    code = convert.main([str(bag), str(args.output / 'converted_bag'), '--transmissions',
                         str(tfile), '--model', str(model), '--plot', str(plot)])
    if code == 0:
        print(f'plot of actuator and joint signals: {plot}')
    return 0 if ok and code == 0 else 1


def _replay_and_listen(bag):
    import rclpy
    from sensor_msgs.msg import JointState

    rclpy.init(args=[])
    node = rclpy.create_node('demo_listener')
    joints, torques = [], []
    node.create_subscription(JointState, 'joint_states', joints.append, 1000)
    node.create_subscription(JointState, 'kinematics/gravity_torques', torques.append, 1000)
    player = subprocess.Popen([sys.executable, '-m', 'transmission_bridge.tools.replay',
                               str(bag), '--clock', '--wait-for-subscribers'])
    while player.poll() is None:
        rclpy.spin_once(node, timeout_sec=0.05)
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.05)
    node.destroy_node()
    rclpy.shutdown()
    for k, msg in enumerate(torques[::max(1, len(torques) // 6)]):
        _print(msg, header=k == 0)
    print(f'\n{len(joints)} joint_states from transmission_bridge, {len(torques)} '
          'gravity_torques from kinematics, stamped with the bag time.')
    print('tau = torque that holds the arm against gravity (N*m), i.e. -tau_g.')
    return bool(joints and torques)


def _print(msg, header):
    if header:
        print('example arm: joint position (rad) / holding torque (N*m)')
        print('  t [s]     ' + ' '.join(f'{n:>15}' for n in msg.name))
    stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
    print(f'  {stamp % 1000:8.3f} q ' + ' '.join(f'{v:15.4f}' for v in msg.position))
    print('         tau ' + ' '.join(f'{v:15.4f}' for v in msg.effort))


if __name__ == '__main__':
    sys.exit(main())
