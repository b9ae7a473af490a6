r"""
The kinematics node alone: joint_states -> gravity torques, poses, energy.

    ros2 launch transmission_bridge kinematics.launch.py model_file:=my_model.yaml \
        tip_links:=[tool]

``ros2 launch transmission_bridge kinematics.launch.py --show-args`` lists the arguments.
"""

from launch import LaunchDescription

from transmission_bridge.ros.launch_support import declare_arguments, nodes


def generate_launch_description():
    return LaunchDescription([
        *declare_arguments('model_file', 'params_file', 'tip_links', 'use_sim_time'),
        nodes(lambda args: [args.kinematics()]),
    ])
