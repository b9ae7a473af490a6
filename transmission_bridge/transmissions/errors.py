"""The one exception type of the transmissions library."""


class ConfigError(ValueError):
    """
    An invalid transmission parameter or configuration.

    The message names the offending transmission, joint or actuator, the key and
    the rejected value, e.g. ``joint 'elbow': mechanical_reduction must be finite
    and non-zero, got 0.0``.
    """
