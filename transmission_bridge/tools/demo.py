"""
``make demo``: the example robot end to end, with no robot and no ROS install.

Starts the actuator simulator (motor states of the example arm moving slowly),
the bridge (motors -> joint_states) and the kinematics node (joint_states ->
gravity torques) as processes in a private DDS domain on loopback, listens for a
few seconds and prints joint positions next to the torques that hold the arm.
"""

import argparse
import os
import pathlib
import signal
import subprocess
import sys
import time

CONFIG = pathlib.Path(__file__).resolve().parent.parent.parent / 'config'


def _config_dir():
    if (CONFIG / 'example_robot_transmissions.yaml').exists():
        return CONFIG
    from ament_index_python.packages import get_package_share_directory
    return pathlib.Path(get_package_share_directory('transmission_bridge')) / 'config'


def main(argv=None):
    """Run the demo; return 0 when both nodes answered."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--seconds', type=float, default=3.0, help='how long to listen')
    args = parser.parse_args(argv)
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    os.environ.setdefault('ROS_DOMAIN_ID', str(os.getpid() % 100 + 1))
    config = _config_dir()
    tfile = config / 'example_robot_transmissions.yaml'
    nodes = [('transmission_bridge.tools.actuator_simulator',
              ['-p', f'transmissions_file:={tfile}', '-p', 'rate:=50.0']),
             ('transmission_bridge.bridge_node', ['-p', f'transmissions_file:={tfile}']),
             ('transmission_bridge.kinematics_node',
              ['-p', f'model_file:={config / "example_arm_model.yaml"}'])]
    procs = [subprocess.Popen([sys.executable, '-m', module, '--ros-args', *extra])
             for module, extra in nodes]
    try:
        return _listen(args.seconds)
    finally:
        for p in procs:
            p.send_signal(signal.SIGINT)
        for p in procs:
            p.wait(10)


def _listen(seconds):
    import rclpy
    from sensor_msgs.msg import JointState

    rclpy.init()
    node = rclpy.create_node('demo_listener')
    joints, torques = [], []
    node.create_subscription(JointState, 'joint_states', joints.append, 10)
    node.create_subscription(JointState, 'kinematics/gravity_torques', torques.append, 10)
    deadline = time.monotonic() + 15.0
    while time.monotonic() < deadline and not torques:
        rclpy.spin_once(node, timeout_sec=0.05)
    end = time.monotonic() + seconds
    next_print = 0.0
    shown = 0
    while time.monotonic() < end and torques:
        rclpy.spin_once(node, timeout_sec=0.05)
        if time.monotonic() >= next_print:
            _print(torques[-1], header=shown == 0)
            shown += 1
            next_print = time.monotonic() + seconds / 6
    node.destroy_node()
    rclpy.shutdown()
    print(f'\n{len(joints)} joint_states from transmission_bridge, {len(torques)} '
          'gravity_torques from kinematics.')
    print('effort = torque that holds the arm against gravity (N*m), i.e. -tau_g.')
    return 0 if joints and torques else 1


def _print(msg, header):
    if header:
        print('example arm: joint position (rad) / holding torque (N*m)')
        print('  t [s]     ' + ' '.join(f'{n:>15}' for n in msg.name))
    stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
    print(f'  {stamp % 1000:8.3f} q ' + ' '.join(f'{v:15.4f}' for v in msg.position))
    print('         tau ' + ' '.join(f'{v:15.4f}' for v in msg.effort))


if __name__ == '__main__':
    sys.exit(main())
