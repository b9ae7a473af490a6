"""
Try it without hardware: simulated motors -> bridge -> kinematics, on the example robot.

    ros2 launch transmission_bridge demo.launch.py
    ros2 topic echo /kinematics/gravity_torques

``actuator_simulator`` moves every joint slowly about its default position and publishes
the motor states on ``actuator_states``; give ``transmissions_file``/``model_file`` to
try your own robot. ``--show-args`` lists the arguments.
"""

from launch import LaunchDescription

from transmission_bridge.ros.launch_support import declare_arguments, nodes


def generate_launch_description():
    return LaunchDescription([
        *declare_arguments('transmissions_file', 'model_file', 'params_file', 'tip_links',
                           'joint_commands_from', 'rate', 'use_sim_time', 'autostart',
                           'follow_joint_trajectory'),
        nodes(lambda args: [args.simulator(), args.bridge(commands_from_kinematics=True),
                            args.kinematics()]),
    ])
