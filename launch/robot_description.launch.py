"""
Bridge and kinematics configured from one URDF (robot_description), as on a real robot.

Pass ``urdf_file:=/path/robot.urdf`` (default: the example robot). With
``use_topic:=true`` the nodes instead follow the ``robot_description`` topic that
robot_state_publisher publishes, and reconfigure when it changes.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition, UnlessCondition
from launch.substitutions import Command, LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    share = FindPackageShare('transmission_bridge')
    description = ParameterValue(Command(['cat ', LaunchConfiguration('urdf_file')]),
                                 value_type=str)
    sim_time = LaunchConfiguration('use_sim_time')
    use_topic = LaunchConfiguration('use_topic')
    nodes = []
    for executable in ('transmission_bridge', 'kinematics'):
        nodes.append(Node(package='transmission_bridge', executable=executable,
                          name=executable, output='screen', condition=UnlessCondition(use_topic),
                          parameters=[{'robot_description': description,
                                       'use_sim_time': sim_time}]))
        nodes.append(Node(package='transmission_bridge', executable=executable,
                          name=executable, output='screen', condition=IfCondition(use_topic),
                          parameters=[{'use_robot_description_topic': True,
                                       'use_sim_time': sim_time}]))
    return LaunchDescription([
        DeclareLaunchArgument(
            'urdf_file',
            default_value=PathJoinSubstitution([share, 'config', 'example_robot.urdf'])),
        DeclareLaunchArgument('use_topic', default_value='false'),
        DeclareLaunchArgument('use_sim_time', default_value='false'),
        *nodes,
    ])
