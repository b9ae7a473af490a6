"""
The robot behind its motors, simulated by MuJoCo (``actuator_simulator`` ``engine:=mujoco``).

No ROS here: :class:`.library.Simulation` is the simulator as a library (``step``,
``state``, ``reset``); :mod:`.model` loads the user's MJCF or URDF, :mod:`.drives` are the
motors' drives, :mod:`.engine` steps them with MuJoCo, :mod:`.builtin` with the package's own
rigid-body dynamics. MuJoCo is an optional dependency, imported when
a model is loaded (``pip install mujoco``).
"""

from .drives import DriveOptions, Drives, MODES
from .engine import MujocoSimulation
from .library import ENGINES, Simulation
from .model import load, set_pose, SimulationError

__all__ = ['DriveOptions', 'Drives', 'ENGINES', 'load', 'MODES', 'MujocoSimulation', 'set_pose',
           'Simulation', 'SimulationError']
