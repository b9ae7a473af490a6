"""
Messages without ROS: the checks of named-value messages and their CDR byte layouts.

What the nodes' cores and fast paths (``mapping/``, ``kinematics_node/``) and the bag tools
share, none of it needing rclpy: :mod:`.named_input` (lengths, duplicates, finite values,
what to report) and :mod:`.wire` (sensor_msgs/JointState and tf2_msgs/TFMessage bytes at
fixed offsets, templates to write them).
"""
