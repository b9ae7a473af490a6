"""
Rotations and rigid transforms, with batch dimensions first.

URDF's origin convention: ``R = Rz(yaw) Ry(pitch) Rx(roll)``. DH transforms as
MATLAB's ``setFixedTransform``: standard ``Rz(theta) Tz(d) Tx(a) Rx(alpha)``,
modified ``Rx(alpha) Tx(a) Rz(theta) Tz(d)``.

>>> import math

import numpy as np
>>> np.round(rpy_to_rotation([0, 0, np.pi / 2]) @ [1, 0, 0], 12)
array([0., 1., 0.])
"""

import math

import numpy as np


def rot_x(angle):
    """Return the rotation about x by ``angle`` (rad)."""
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_y(angle):
    """Return the rotation about y by ``angle`` (rad)."""
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rot_z(angle):
    """Return the rotation about z by ``angle`` (rad)."""
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rpy_to_rotation(rpy):
    """Return ``Rz(yaw) Ry(pitch) Rx(roll)`` for ``rpy = (roll, pitch, yaw)`` (URDF)."""
    roll, pitch, yaw = rpy
    return rot_z(yaw) @ rot_y(pitch) @ rot_x(roll)


def skew(v):
    """Return the cross-product matrix ``[v]x`` with ``[v]x @ w == v x w``."""
    x, y, z = v
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def transform(rotation=None, translation=None):
    """Return the 4x4 homogeneous transform of a rotation and a translation."""
    out = np.eye(4)
    if rotation is not None:
        out[:3, :3] = rotation
    if translation is not None:
        out[:3, 3] = translation
    return out


def origin_transform(xyz=(0.0, 0.0, 0.0), rpy=(0.0, 0.0, 0.0)):
    """Return ``T(xyz) R(rpy)``: a URDF ``<origin>``."""
    return transform(rpy_to_rotation(rpy), xyz)


def translation_transform(x=0.0, y=0.0, z=0.0):
    """Return a pure translation."""
    return transform(None, (x, y, z))


def dh_parts(a, alpha, d, theta, convention, joint_type):
    """
    Split one DH row into ``(X_PJ, X_JB)`` around the joint motion.

    The joint moves about (revolute) or along (prismatic) z of the joint frame:
    standard ``Rz(theta + q) Tz(d) Tx(a) Rx(alpha)`` gives
    ``X_PJ = Rz(theta)`` (prismatic: ``Rz(theta) Tz(d)``) and ``X_JB = Tz(d) Tx(a) Rx(alpha)``
    (prismatic: ``Tx(a) Rx(alpha)``); modified ``Rx(alpha) Tx(a) Rz(theta + q) Tz(d)``
    gives ``X_PJ = Rx(alpha) Tx(a) Rz(theta)`` and ``X_JB = Tz(d)`` (prismatic: the
    ``Tz(d)`` moves into ``X_PJ``). Fixed rows put the whole product in ``X_PJ``.
    """
    rz = transform(rot_z(theta))
    tz = translation_transform(z=d)
    tx = translation_transform(x=a)
    rx = transform(rot_x(alpha))
    if convention == 'standard':
        if joint_type == 'fixed':
            return rz @ tz @ tx @ rx, np.eye(4)
        if joint_type == 'prismatic':
            return rz @ tz, tx @ rx
        return rz, tz @ tx @ rx
    if joint_type == 'fixed':
        return rx @ tx @ rz @ tz, np.eye(4)
    if joint_type == 'prismatic':
        return rx @ tx @ rz @ tz, np.eye(4)
    return rx @ tx @ rz, tz


def dh_transform(a, alpha, d, theta, convention='standard'):
    """Return the full DH transform of one row (MATLAB's ``'dh'`` / ``'mdh'``)."""
    return np.matmul(*dh_parts(a, alpha, d, theta, convention, 'fixed'))


def rotation_to_quaternion(R):
    """
    Return unit quaternions ``(x, y, z, w)`` of rotations ``R`` (..., 3, 3), with ``w >= 0``.

    Uses the largest of the four candidate components (Shepperd's method), so it is
    accurate for every rotation.

    >>> rotation_to_quaternion(rot_z(np.pi / 2)).round(12).tolist()
    [0.0, 0.0, 0.707106781187, 0.707106781187]
    """
    R = np.asarray(R, dtype=float)
    if R.ndim <= 3 and R.size <= 9 * _FEW:
        # A few rotations (one robot's poses): plain floats beat ~50 tiny numpy calls.
        out = np.array([_quaternion(m) for m in R.reshape(-1, 3, 3).tolist()])
        return out.reshape(R.shape[:-2] + (4,))
    m00, m11, m22 = R[..., 0, 0], R[..., 1, 1], R[..., 2, 2]
    cand = np.stack([1 + m00 - m11 - m22, 1 - m00 + m11 - m22, 1 - m00 - m11 + m22,
                     1 + m00 + m11 + m22], axis=-1)
    k = np.argmax(cand, axis=-1)
    t = np.take_along_axis(cand, k[..., None], axis=-1)[..., 0]
    s = 0.5 / np.sqrt(t)
    x = np.where(k == 0, 0.25 / s, np.where(k == 1, (R[..., 0, 1] + R[..., 1, 0]) * s,
                 np.where(k == 2, (R[..., 0, 2] + R[..., 2, 0]) * s,
                          (R[..., 2, 1] - R[..., 1, 2]) * s)))
    y = np.where(k == 0, (R[..., 0, 1] + R[..., 1, 0]) * s, np.where(
        k == 1, 0.25 / s, np.where(k == 2, (R[..., 1, 2] + R[..., 2, 1]) * s,
                                   (R[..., 0, 2] - R[..., 2, 0]) * s)))
    z = np.where(k == 0, (R[..., 0, 2] + R[..., 2, 0]) * s, np.where(
        k == 1, (R[..., 1, 2] + R[..., 2, 1]) * s, np.where(
            k == 2, 0.25 / s, (R[..., 1, 0] - R[..., 0, 1]) * s)))
    w = np.where(k == 0, (R[..., 2, 1] - R[..., 1, 2]) * s, np.where(
        k == 1, (R[..., 0, 2] - R[..., 2, 0]) * s, np.where(
            k == 2, (R[..., 1, 0] - R[..., 0, 1]) * s, 0.25 / s)))
    q = np.stack([x, y, z, w], axis=-1)
    return q * np.where(q[..., 3:] < 0, -1.0, 1.0)


_FEW = 32


def _quaternion(m):
    """Shepperd's method on one rotation given as nested lists; (x, y, z, w), w >= 0."""
    (m00, m01, m02), (m10, m11, m12), (m20, m21, m22) = m
    cand = (1 + m00 - m11 - m22, 1 - m00 + m11 - m22, 1 - m00 - m11 + m22,
            1 + m00 + m11 + m22)
    k = max(range(4), key=cand.__getitem__)
    s = 0.5 / math.sqrt(cand[k])
    if k == 0:
        q = (0.25 / s, (m01 + m10) * s, (m02 + m20) * s, (m21 - m12) * s)
    elif k == 1:
        q = ((m01 + m10) * s, 0.25 / s, (m12 + m21) * s, (m02 - m20) * s)
    elif k == 2:
        q = ((m02 + m20) * s, (m12 + m21) * s, 0.25 / s, (m10 - m01) * s)
    else:
        q = ((m21 - m12) * s, (m02 - m20) * s, (m10 - m01) * s, 0.25 / s)
    return q if q[3] >= 0 else tuple(-v for v in q)


def invert(X):
    """Return the inverse of rigid transforms ``X`` (..., 4, 4)."""
    X = np.asarray(X, dtype=float)
    out = np.zeros_like(X)
    rt = np.swapaxes(X[..., :3, :3], -1, -2)
    out[..., :3, :3] = rt
    out[..., :3, 3] = -np.einsum('...ij,...j->...i', rt, X[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out
