"""Validation helpers of the transmissions library: shared checks raising ConfigError."""

import functools
import math

from .errors import ConfigError
from .. import _validate

as_number = functools.partial(_validate.number, error=ConfigError)
finite = functools.partial(_validate.finite, error=ConfigError)
non_negative = functools.partial(_validate.non_negative, error=ConfigError)
name = functools.partial(_validate.name, error=ConfigError)


def reduction(value, what):
    """Return a mechanical reduction: finite and non-zero (a negative one flips direction)."""
    number = as_number(value, what)
    if not math.isfinite(number) or number == 0.0:
        raise ConfigError(f'{what} must be finite and non-zero, got {number!r}')
    return number
