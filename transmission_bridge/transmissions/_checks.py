"""Validation helpers of the transmissions library: shared checks raising ConfigError."""

import collections.abc
import functools
import math

from .errors import ConfigError
from .._shared import checks as _validate

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


def bound(value, what):
    """Return a position limit: any number but NaN (an infinite one means no limit)."""
    number = as_number(value, what)
    if math.isnan(number):
        raise ConfigError(f'{what} must be a number or .inf (no limit), got nan')
    return number


def encoder_period(value, what):
    """Return an absolute encoder's period: finite and > 0."""
    number = as_number(value, what)
    if not (math.isfinite(number) and number > 0.0):
        raise ConfigError(f'{what} must be finite and > 0 (the reading wraps every period), '
                          f'got {number!r}')
    return number


def magnitude_limit(value, what):
    """Return a velocity or effort limit: > 0, and .inf for no limit."""
    number = as_number(value, what)
    if not number > 0.0:                    # NaN included
        raise ConfigError(f'{what} must be > 0 (.inf for no limit), got {number!r}')
    return number


def efficiency_driving(value, what):
    """Return a gear stage's efficiency when the motor drives: in (0, 1]."""
    number = as_number(value, what)
    if not 0.0 < number <= 1.0:             # NaN included
        raise ConfigError(f'{what} must be in (0, 1], got {number!r}')
    return number


def efficiency_driven(value, what):
    """Return a gear stage's efficiency when the load drives: finite, <= 1 (<= 0: self-locking)."""
    number = as_number(value, what)
    if not (math.isfinite(number) and number <= 1.0):
        raise ConfigError(f'{what} must be finite and <= 1 (<= 0: self-locking), got '
                          f'{number!r}')
    return number


def checked_mapping(value, path, allowed):
    """Refuse ``value`` unless it is a mapping whose keys are all ``allowed``; name ``path``."""
    if not isinstance(value, collections.abc.Mapping):
        raise ConfigError(f'{path} must be a mapping, got {value!r}')
    unknown = [k for k in value if k not in allowed]
    if unknown:
        raise ConfigError(
            f'{path}: unknown key {unknown[0]!r}; allowed keys are {", ".join(allowed)}')
