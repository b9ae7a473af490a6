"""
Hardware interface names and the map each one travels through.

ros2_control names six state/command interfaces a transmission can carry. They
use three maps: the position map (affine, with joint offsets), the velocity map
(its linear part) and the effort map (the inverse transpose of the velocity map,
so that power is conserved).

>>> INTERFACES
('position', 'velocity', 'effort', 'torque', 'force', 'absolute_position')
>>> map_kind('torque')
'effort'
"""

from .errors import ConfigError

POSITION = 'position'
VELOCITY = 'velocity'
EFFORT = 'effort'

INTERFACES = ('position', 'velocity', 'effort', 'torque', 'force', 'absolute_position')

_KIND = {
    'position': POSITION,
    'absolute_position': POSITION,
    'velocity': VELOCITY,
    'effort': EFFORT,
    'torque': EFFORT,
    'force': EFFORT,
}


def map_kind(interface):
    """
    Return ``'position'``, ``'velocity'`` or ``'effort'``: the map ``interface`` uses.

    Raises ConfigError for a name outside :data:`INTERFACES`.
    """
    try:
        return _KIND[interface]
    except (KeyError, TypeError):
        raise ConfigError(
            f'unknown interface {interface!r}; expected one of {", ".join(INTERFACES)}'
        ) from None
