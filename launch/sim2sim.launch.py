"""
Sim2sim: MuJoCo as the robot's drivers, the bridge in MIT mode, the kinematics node.

    ros2 launch transmission_bridge sim2sim.launch.py
    ros2 launch transmission_bridge sim2sim.launch.py \
        transmissions_file:=go1_transmissions.yaml model_file:=go1.urdf \
        params_file:=go1_sim2sim.yaml

``actuator_simulator`` (``engine:=mujoco``, ``dynamics:=motor_gains``, a floating base on the
ground, ``/clock``) runs ``model_file`` behind the motors of ``transmissions_file``; the
bridge (simulated time) maps ``joint_commands`` (impedance targets, with the gains of
``params_file``) to ``actuator_impedance_commands``; the kinematics node (simulated time)
publishes TF, poses and gravity torques of ``model_file`` (a URDF; an MJCF model is for the
simulator only, and the kinematics node then reads ``transmissions_file``'s URDF). Defaults:
the shipped biped (config/legged_robot.urdf and .xml, config/legged_sim2sim.yaml).
``composed:=true`` runs the bridge and the kinematics node in one process (``robot_stack``):
two processes on two cores rather than three.
``--show-args`` lists the arguments.
"""

from launch import LaunchDescription

from transmission_bridge.ros.launch_support import declare_arguments, nodes


def generate_launch_description():
    return LaunchDescription([
        *declare_arguments('transmissions_file', 'model_file', 'params_file',
                           'floating_base', 'kinematics', 'composed'),
        nodes(lambda args: args.sim2sim()),
    ])
