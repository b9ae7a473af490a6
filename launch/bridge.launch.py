"""Start the transmission bridge on a transmissions YAML (default: the example robot)."""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    share = FindPackageShare('transmission_bridge')
    return LaunchDescription([
        DeclareLaunchArgument(
            'transmissions_file',
            default_value=PathJoinSubstitution([share, 'config',
                                                'example_robot_transmissions.yaml']),
            description='transmissions YAML of the robot'),
        DeclareLaunchArgument(
            'params_file', default_value=PathJoinSubstitution([share, 'config', 'bridge.yaml']),
            description='ROS parameters of the bridge (calibration overrides go here)'),
        DeclareLaunchArgument('use_sim_time', default_value='false',
                              description='true when replaying a bag with --clock'),
        Node(
            package='transmission_bridge',
            executable='transmission_bridge',
            name='transmission_bridge',
            output='screen',
            parameters=[
                LaunchConfiguration('params_file'),
                {'transmissions_file': LaunchConfiguration('transmissions_file'),
                 'use_sim_time': LaunchConfiguration('use_sim_time')},
            ],
        ),
    ])
