"""
Value checks shared by the two pure libraries; each passes its own exception type.

>>> finite(float('nan'), 'offset', ValueError)
Traceback (most recent call last):
    ...
ValueError: offset must be finite, got nan
"""

import math
import numbers


def number(value, what, error):
    """Return ``value`` as a float; booleans and strings are errors, not numbers."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise error(f'{what} must be a number, got {value!r}')
    return float(value)


def finite(value, what, error):
    """Return ``value`` as a finite float, or raise ``error`` naming ``what``."""
    x = number(value, what, error)
    if not math.isfinite(x):
        raise error(f'{what} must be finite, got {x!r}')
    return x


def non_negative(value, what, error):
    """Return a finite float >= 0, or raise ``error``."""
    x = finite(value, what, error)
    if x < 0.0:
        raise error(f'{what} must be >= 0, got {x!r}')
    return x


def name(value, what, error):
    """Return a non-empty name without white space, or raise ``error``."""
    if not isinstance(value, str) or not value or any(c.isspace() for c in value):
        raise error(f'{what} must be a non-empty name without spaces, got {value!r}')
    return value
