"""
The bridge and the kinematics node in one process: ``ros2 run transmission_bridge robot_stack``.

What ``robot.launch.py composed:=true`` starts. The two nodes are the same as in their own
processes (the same names, parameters, topics, services and lifecycle); they share one
executor, so a message between them (joint_states, the holding torques) is handed over
inside the process rather than sent to another one and woken there, and the process loads
rclpy, numpy and the kernels once. What is lost: a crash of one takes the other down.
"""

from .bridge.node import TransmissionBridge
from .kinematics_node.node import KinematicsNode
from .ros.node_main import exit_with, run_nodes

HELP = """
robot_stack: the transmission_bridge and kinematics nodes in one process (one executor).

Usage:
  ros2 launch transmission_bridge robot.launch.py composed:=true [the launch's arguments]
  ros2 run transmission_bridge robot_stack --ros-args --params-file FILE \\
      -r transmission_bridge:joint_commands:=/kinematics/gravity_torques

Parameters apply by node name: a params file's /**/transmission_bridge and /**/kinematics
sections (a /** section reaches both); a remapping for one node is prefixed with its name.
Both nodes are as below.
"""

NODES = (TransmissionBridge, KinematicsNode)


def main(args=None):
    """Entry point of the ``robot_stack`` executable."""
    exit_with(run_nodes(list(NODES), args, help_text=HELP))


if __name__ == '__main__':
    main()
