"""The kinematics node: joint states to TF, gravity torques, poses and energy."""
