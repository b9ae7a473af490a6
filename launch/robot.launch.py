"""Bridge and kinematics together: actuator states -> joint_states -> gravity torques."""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    share = FindPackageShare('transmission_bridge')
    config = PathJoinSubstitution([share, 'config'])
    sim_time = LaunchConfiguration('use_sim_time')
    return LaunchDescription([
        DeclareLaunchArgument(
            'transmissions_file',
            default_value=PathJoinSubstitution([config, 'example_robot_transmissions.yaml'])),
        DeclareLaunchArgument(
            'model_file', default_value=PathJoinSubstitution([config, 'example_arm_model.yaml'])),
        DeclareLaunchArgument('use_sim_time', default_value='false'),
        Node(
            package='transmission_bridge', executable='transmission_bridge',
            name='transmission_bridge', output='screen',
            parameters=[PathJoinSubstitution([config, 'bridge.yaml']),
                        {'transmissions_file': LaunchConfiguration('transmissions_file'),
                         'use_sim_time': sim_time}]),
        Node(
            package='transmission_bridge', executable='kinematics', name='kinematics',
            output='screen',
            parameters=[PathJoinSubstitution([config, 'kinematics.yaml']),
                        {'model_file': LaunchConfiguration('model_file'),
                         'use_sim_time': sim_time}]),
    ])
