"""Validation helpers of the kinematics library (no ROS, no I/O)."""

import functools
import math

import numpy as np

from .errors import ModelError
from .._shared import checks as _validate

number = functools.partial(_validate.number, error=ModelError)
finite = functools.partial(_validate.finite, error=ModelError)
non_negative = functools.partial(_validate.non_negative, error=ModelError)
name = functools.partial(_validate.name, error=ModelError)

# Below this norm an axis has no direction (Drake's threshold for joint axes).
AXIS_EPSILON = math.sqrt(np.finfo(float).eps)


def vector(value, size, what):
    """Return a finite float vector of ``size`` entries (read-only array)."""
    try:
        items = list(value)
    except TypeError:
        raise ModelError(f'{what} must be a list of {size} numbers, got {value!r}') from None
    if len(items) != size:
        raise ModelError(f'{what} must have {size} entries, got {len(items)}')
    arr = np.array([finite(v, f'{what}[{i}]') for i, v in enumerate(items)])
    arr.flags.writeable = False
    return arr


def unit_axis(value, what):
    """Return ``value`` normalised; a norm below sqrt(machine epsilon) is an error."""
    axis = vector(value, 3, what)
    norm = float(np.linalg.norm(axis))
    if norm < AXIS_EPSILON:
        raise ModelError(f'{what} must have a direction (norm >= {AXIS_EPSILON:.3g}), '
                         f'got {list(axis)} with norm {norm:.3g}')
    out = axis / norm
    out.flags.writeable = False
    return out


def transform(value, what):
    """Return a read-only 4x4 homogeneous transform with a proper rotation."""
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f'{what} must be a 4x4 matrix, got {value!r}') from None
    if arr.shape != (4, 4) or not np.isfinite(arr).all():
        raise ModelError(f'{what} must be a finite 4x4 matrix, got shape {arr.shape}')
    rot = arr[:3, :3]
    if (not np.allclose(rot.T @ rot, np.eye(3), atol=1e-9)
            or not np.isclose(np.linalg.det(rot), 1.0, atol=1e-9)
            or not np.array_equal(arr[3], [0.0, 0.0, 0.0, 1.0])):
        raise ModelError(f'{what} must be a rigid transform (orthonormal rotation, '
                         f'last row 0 0 0 1)')
    arr.flags.writeable = False
    return arr


def out_arrays(out, q, expected):
    """
    Return ``out`` as a tuple of arrays to write results into, checked against ``expected``.

    ``expected`` lists ``(name, shape)`` per output. Each array must be float64 of exactly
    that shape, C-contiguous, writeable and not overlapping ``q``; else ModelError names
    the output and what is wrong, and nothing has been written.
    """
    items = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    if len(items) != len(expected):
        raise ModelError(f'out must hold {len(expected)} arrays '
                         f'({", ".join(w for w, _ in expected)}), got {len(items)}')
    for o, (what, shape) in zip(items, expected):
        if not isinstance(o, np.ndarray) or o.dtype != np.float64 or o.shape != shape:
            got = (f'{o.dtype} array of shape {o.shape}' if isinstance(o, np.ndarray)
                   else type(o).__name__)
            raise ModelError(f'out for {what} must be a float64 array of shape {shape}, '
                             f'got {got}')
        if not o.flags.c_contiguous or not o.flags.writeable:
            raise ModelError(f'out for {what} must be C-contiguous and writeable')
        if np.may_share_memory(o, q):
            raise ModelError(f'out for {what} must not overlap q')
    return items
