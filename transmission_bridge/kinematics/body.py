"""A body of the model tree: its name, its parent's name, the joint to the parent, its mass."""

import dataclasses

from . import _checks
from .errors import ModelError
from .inertial import Inertial
from .joint import Joint

WORLD = 'world'


@dataclasses.dataclass(frozen=True, eq=True)
class Body:
    """
    One rigid body attached to ``parent`` ('world' or another body) through ``joint``.

    >>> from transmission_bridge.kinematics import RevoluteJoint
    >>> Body('link1', RevoluteJoint('j1')).parent
    'world'
    """

    name: str
    joint: Joint
    inertial: Inertial = Inertial()
    parent: str = WORLD

    def __post_init__(self):
        _checks.name(self.name, 'body name')
        if self.name == WORLD:
            raise ModelError(f'body name {WORLD!r} is reserved for the root')
        _checks.name(self.parent, f'body {self.name!r}: parent')
        if not isinstance(self.joint, Joint):
            raise ModelError(f'body {self.name!r}: joint must be a Joint, got {self.joint!r}')
        if not isinstance(self.inertial, Inertial):
            raise ModelError(f'body {self.name!r}: inertial must be an Inertial')
        if self.parent == self.name:
            raise ModelError(f'body {self.name!r} cannot be its own parent')
