"""
Bridge and kinematics configured from one URDF (robot_description), as on a real robot.

    ros2 launch transmission_bridge robot_description.launch.py urdf_file:=my_robot.urdf
    ros2 launch transmission_bridge robot_description.launch.py use_topic:=true

With ``use_topic:=true`` the nodes follow the ``robot_description`` topic that
robot_state_publisher publishes, and reconfigure when it changes. As in robot.launch.py, the
kinematics node's holding torques feed the bridge's ``joint_commands`` (``joint_commands_from:=``
``passive`` adds damping compensation, ``none`` unwires it).
``ros2 launch transmission_bridge robot_description.launch.py --show-args`` lists the arguments.
"""

from launch import LaunchDescription

from transmission_bridge.ros.launch_support import declare_arguments, nodes


def generate_launch_description():
    return LaunchDescription([
        *declare_arguments('urdf_file', 'use_topic', 'params_file', 'tip_links',
                           'joint_commands_from', 'use_sim_time', 'autostart',
                           'follow_joint_trajectory'),
        nodes(lambda args: args.description_nodes()),
    ])
