"""
The robot behind its motors, simulated by MuJoCo (``actuator_simulator`` ``engine:=mujoco``).

No ROS here: :mod:`.model` loads the user's MJCF or URDF, :mod:`.drives` are the motors'
drives, :mod:`.engine` steps them together. MuJoCo is an optional dependency, imported when
a model is loaded (``pip install mujoco``).
"""

from .drives import DriveOptions, Drives, MODES
from .engine import MujocoSimulation
from .model import load, set_pose, SimulationError

__all__ = ['DriveOptions', 'Drives', 'load', 'MODES', 'MujocoSimulation', 'set_pose',
           'SimulationError']
