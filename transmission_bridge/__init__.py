"""
transmission_bridge: actuator <-> joint transmissions and chain kinematics for ROS 2.

The two libraries, :mod:`transmission_bridge.transmissions` and
:mod:`transmission_bridge.kinematics`, import only numpy, PyYAML and the standard
library, and numba where it is installed (the kinematics library's compiled backend, with
the numpy code as the reference and the fallback); the ROS nodes are thin shells around
them. doc/architecture.md shows where each idea lives.
"""

__version__ = '0.8.0'
