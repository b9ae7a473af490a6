"""
The bridge's mapping room, without ROS: actuator states to joint states, commands to motors.

The state side (:mod:`.state`, :mod:`.encoders`), the command side (:mod:`.commands`), their
bytes fast path (:mod:`.fast_route`), the command deadline (:mod:`.deadline`), who takes each
joint's streamed commands (:mod:`.ownership`), and every message's two routes
(:mod:`.routes`). No module here imports rclpy (a test checks).
"""
