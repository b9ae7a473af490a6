"""rosbag2 reading, writing and offline conversion (rosbags library; no rclpy here)."""

from .errors import BagError

__all__ = ['BagError']
