"""
How a goal ends, without ROS: joint_trajectory_controller's result codes and their names.

A goal refused before anything moves raises :class:`Refused` (its code and the reason); a
goal that ran ends with an :class:`Outcome` (the code and the ``error_string``).
"""

import typing

SUCCESSFUL = 0
INVALID_GOAL = -1
INVALID_JOINTS = -2
OLD_HEADER_TIMESTAMP = -3
PATH_TOLERANCE_VIOLATED = -4
GOAL_TOLERANCE_VIOLATED = -5
CODE_NAMES = {SUCCESSFUL: 'SUCCESSFUL', INVALID_GOAL: 'INVALID_GOAL',
              INVALID_JOINTS: 'INVALID_JOINTS', OLD_HEADER_TIMESTAMP: 'OLD_HEADER_TIMESTAMP',
              PATH_TOLERANCE_VIOLATED: 'PATH_TOLERANCE_VIOLATED',
              GOAL_TOLERANCE_VIOLATED: 'GOAL_TOLERANCE_VIOLATED'}


class Refused(Exception):
    """A goal that ends before anything moves: its result ``code`` and the reason."""

    def __init__(self, code, reason):
        super().__init__(reason)
        self.code = code


class Unmeasured(Refused):
    """Refused only because joints have no measured state yet: a wait may start it."""


class Outcome(typing.NamedTuple):
    """How a goal ended: a result code and the ``error_string``."""

    code: int
    text: str
