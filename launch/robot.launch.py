r"""
Bridge and kinematics together: actuator_states -> joint_states -> gravity torques.

    ros2 launch transmission_bridge robot.launch.py transmissions_file:=my_robot.yaml \
        model_file:=my_model.yaml params_file:=my_calibration.yaml

One ``params_file`` serves both nodes (its sections apply by node name). The kinematics node's
holding torques feed the bridge's ``joint_commands``, so ``actuator_commands`` carries each
motor's holding torque (``joint_commands_from:=passive`` adds damping compensation, ``none``
unwires it). ``composed:=true`` runs both nodes in one process (the ``robot_stack``
executable): the same nodes, parameters and topics, messages between them kept in the process.
``ros2 launch transmission_bridge robot.launch.py --show-args`` lists the arguments.
"""

from launch import LaunchDescription

from transmission_bridge.ros.launch_support import declare_arguments, nodes


def generate_launch_description():
    return LaunchDescription([
        *declare_arguments('transmissions_file', 'model_file', 'params_file', 'tip_links',
                           'joint_commands_from', 'use_sim_time', 'autostart',
                           'follow_joint_trajectory', 'composed'),
        nodes(lambda args: args.robot_nodes()),
    ])
