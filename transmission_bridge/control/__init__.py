"""
The bridge's control room, without ROS: the laws by which it executes commands.

A FollowJointTrajectory goal checked (:mod:`.goal`), interpolated (:mod:`.spline`), judged
(:mod:`.tolerances`, :mod:`.results`) and followed (:mod:`.following`); joint springs
(:mod:`.impedance`, :mod:`.impedance_plans`). No module here imports rclpy (a test checks).
"""
