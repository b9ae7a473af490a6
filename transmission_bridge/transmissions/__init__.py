"""
Transmissions between actuator and joint space, as in ros2_control's transmission_interface.

numpy and PyYAML only: no ROS import here or below (a test enforces it). See NOTATION.md for
signs and units, and each type's module for its formulas.
"""

from .base import Transmission
from .coupling import CouplingTransmission, MAX_CONDITION
from .differential import DifferentialTransmission
from .errors import ConfigError
from .four_bar import FourBarLinkageTransmission
from .interfaces import INTERFACES, map_kind
from .loader import load_transmissions, parse_transmissions
from .simple import SimpleTransmission
from .spec import ActuatorSpec, JointSpec, TRANSMISSION_TYPES, TransmissionSpec
from .transmission_set import TransmissionSet

__all__ = [
    'ActuatorSpec', 'ConfigError', 'CouplingTransmission', 'DifferentialTransmission',
    'FourBarLinkageTransmission', 'INTERFACES', 'JointSpec', 'MAX_CONDITION',
    'SimpleTransmission', 'TRANSMISSION_TYPES', 'Transmission', 'TransmissionSet',
    'TransmissionSpec', 'load_transmissions', 'map_kind', 'parse_transmissions',
]
