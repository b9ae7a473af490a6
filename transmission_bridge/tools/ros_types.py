"""Python classes of ROS message types named as in bags ('sensor_msgs/msg/JointState')."""

import importlib


def message_class(msgtype):
    """Return the rclpy message class for ``msgtype``; LookupError if it is not installed."""
    parts = msgtype.split('/')
    if len(parts) != 3 or parts[1] != 'msg':
        raise LookupError(f'{msgtype!r} is not a message type name (pkg/msg/Type)')
    try:
        return getattr(importlib.import_module(f'{parts[0]}.msg'), parts[2])
    except (ImportError, AttributeError):
        raise LookupError(f'message type {msgtype} is not installed') from None
