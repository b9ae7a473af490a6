"""The one exception type of the kinematics library."""


class ModelError(ValueError):
    """
    An invalid joint, body or model.

    The message names the body or joint and the rejected value, e.g.
    ``joint 'j2': damping must be >= 0, got -1.0``.
    """
