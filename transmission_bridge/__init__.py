"""
transmission_bridge: actuator <-> joint transmissions and chain kinematics for ROS 2.

The two libraries, :mod:`transmission_bridge.transmissions` and
:mod:`transmission_bridge.kinematics`, import only numpy, PyYAML and the standard
library; the ROS nodes are thin shells around them.
"""

__version__ = '0.1.0'
