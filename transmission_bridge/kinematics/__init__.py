"""
Kinematics of trees of revolute, prismatic, fixed, screw and mimic joints.

Forward kinematics, Jacobians, gravity generalized forces (Drake's sign), potential
energy, damping and rational forward kinematics; models from YAML (bodies or DH
rows), URDF or built in code. The numpy code is the reference; where numba imports, a
compiled backend gives the same results faster (:mod:`.backend`). No ROS import here or
below. Conventions: NOTATION.md.
"""

from .body import Body, WORLD
from .errors import ModelError
from .evaluation import holding_torques
from .fixed import FixedJoint
from .inertial import Inertial
from .joint import Joint, Mimic
from .loader import JOINT_TYPES, load_model, parse_model
from .model import DEFAULT_GRAVITY, Model
from .prismatic import PrismaticJoint
from .rational import RationalForwardKinematics
from .revolute import RevoluteJoint
from .screw import ScrewJoint

__all__ = [
    'Body', 'DEFAULT_GRAVITY', 'FixedJoint', 'Inertial', 'JOINT_TYPES', 'Joint', 'Mimic', 'Model',
    'ModelError', 'PrismaticJoint', 'holding_torques', 'RationalForwardKinematics',
    'RevoluteJoint', 'ScrewJoint',
    'WORLD', 'load_model', 'parse_model',
]
