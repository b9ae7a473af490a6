"""Start the kinematics node on a robot model YAML (default: the example arm)."""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    share = FindPackageShare('transmission_bridge')
    return LaunchDescription([
        DeclareLaunchArgument(
            'model_file',
            default_value=PathJoinSubstitution([share, 'config', 'example_arm_model.yaml']),
            description='robot model YAML'),
        DeclareLaunchArgument(
            'params_file',
            default_value=PathJoinSubstitution([share, 'config', 'kinematics.yaml']),
            description='ROS parameters of the kinematics node'),
        DeclareLaunchArgument('use_sim_time', default_value='false',
                              description='true when replaying a bag with --clock'),
        Node(
            package='transmission_bridge',
            executable='kinematics',
            name='kinematics',
            output='screen',
            parameters=[
                LaunchConfiguration('params_file'),
                {'model_file': LaunchConfiguration('model_file'),
                 'use_sim_time': LaunchConfiguration('use_sim_time')},
            ],
        ),
    ])
