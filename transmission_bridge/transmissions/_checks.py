"""Validation helpers shared by the transmissions library (no ROS, no I/O)."""

import math
import numbers

from .errors import ConfigError


def as_number(value, what):
    """
    Return ``value`` as a float, or raise ConfigError naming ``what``.

    Booleans and strings are refused rather than converted: a YAML ``"50"`` or
    ``yes`` is a mistake, not a reduction.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ConfigError(f'{what} must be a number, got {value!r}')
    return float(value)


def finite(value, what):
    """Return ``value`` as a finite float, or raise ConfigError naming ``what``."""
    number = as_number(value, what)
    if not math.isfinite(number):
        raise ConfigError(f'{what} must be finite, got {number!r}')
    return number


def reduction(value, what):
    """Return a mechanical reduction: finite and non-zero (a negative one flips direction)."""
    number = as_number(value, what)
    if not math.isfinite(number) or number == 0.0:
        raise ConfigError(f'{what} must be finite and non-zero, got {number!r}')
    return number


def non_negative(value, what):
    """Return a finite float >= 0 (a damping coefficient), or raise ConfigError."""
    number = finite(value, what)
    if number < 0.0:
        raise ConfigError(f'{what} must be >= 0, got {number!r}')
    return number


def name(value, what):
    """Return a non-empty name without white space, or raise ConfigError."""
    if not isinstance(value, str) or not value or any(c.isspace() for c in value):
        raise ConfigError(f'{what} must be a non-empty name without spaces, got {value!r}')
    return value
