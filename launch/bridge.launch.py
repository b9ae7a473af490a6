"""
The transmission bridge alone: actuator_states -> joint_states (and trajectories back).

    ros2 launch transmission_bridge bridge.launch.py transmissions_file:=my_robot.yaml
    ros2 launch transmission_bridge bridge.launch.py params_file:=my_calibration.yaml

``ros2 launch transmission_bridge bridge.launch.py --show-args`` lists the arguments.
"""

from launch import LaunchDescription

from transmission_bridge.ros.launch_support import declare_arguments, nodes


def generate_launch_description():
    return LaunchDescription([
        *declare_arguments('transmissions_file', 'params_file', 'use_sim_time', 'autostart',
                           'follow_joint_trajectory'),
        nodes(lambda args: [args.bridge()]),
    ])
