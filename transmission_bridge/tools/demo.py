"""
``make demo``: the bridge on the example robot, fed by the actuator simulator.

Starts both nodes as processes in a private DDS domain on loopback, listens to
``joint_states`` for a few seconds and prints what a person wants to see.
"""

import argparse
import os
import pathlib
import signal
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
CONFIG = HERE.parent.parent / 'config'


def _config_dir():
    if (CONFIG / 'example_robot_transmissions.yaml').exists():
        return CONFIG
    from ament_index_python.packages import get_package_share_directory
    return pathlib.Path(get_package_share_directory('transmission_bridge')) / 'config'


def main(argv=None):
    """Run the demo; return 0 on success."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--seconds', type=float, default=3.0, help='how long to listen')
    args = parser.parse_args(argv)
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    os.environ.setdefault('ROS_DOMAIN_ID', str(os.getpid() % 100 + 1))
    tfile = _config_dir() / 'example_robot_transmissions.yaml'
    procs = [subprocess.Popen([sys.executable, '-m', module, '--ros-args',
                               '-p', f'transmissions_file:={tfile}', *extra])
             for module, extra in [('transmission_bridge.bridge_node', []),
                                   ('transmission_bridge.tools.actuator_simulator',
                                    ['-p', 'rate:=50.0'])]]
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
    received = []
    node.create_subscription(JointState, 'joint_states', received.append, 10)
    end = time.monotonic() + seconds + 10.0
    shown = 0
    while time.monotonic() < end and shown < 8:
        rclpy.spin_once(node, timeout_sec=0.05)
        if received and len(received) >= (shown + 1) * max(1, int(50 * seconds / 8)):
            _print(received[-1], header=shown == 0)
            shown += 1
    node.destroy_node()
    rclpy.shutdown()
    print(f'\n{len(received)} joint_states messages received from the bridge.')
    return 0 if received else 1


def _print(msg, header):
    if header:
        print('joint_states from transmission_bridge (position rad, velocity rad/s):')
        print('  t [s]      ' + ' '.join(f'{n:>16}' for n in msg.name))
    stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
    print(f'  {stamp % 1000:8.3f} p ' + ' '.join(f'{v:16.4f}' for v in msg.position))
    print('           v ' + ' '.join(f'{v:16.4f}' for v in msg.velocity))


if __name__ == '__main__':
    sys.exit(main())
