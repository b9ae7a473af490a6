"""
Rotations and rigid transforms, with batch dimensions first.

URDF's origin convention: ``R = Rz(yaw) Ry(pitch) Rx(roll)``. DH transforms as
MATLAB's ``setFixedTransform``: standard ``Rz(theta) Tz(d) Tx(a) Rx(alpha)``,
modified ``Rx(alpha) Tx(a) Rz(theta) Tz(d)``.

>>> np.round(rpy_to_rotation([0, 0, np.pi / 2]) @ [1, 0, 0], 12)
array([0., 1., 0.])
"""

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


def rotation_to_quaternion(R):
    """
    Return unit quaternions ``(x, y, z, w)`` of rotations ``R`` (..., 3, 3), with ``w >= 0``.

    Shepperd's method: row k of the 4x4 :data:`_SHEPPERD` table applied to ``R`` is
    ``4 q_k (x, y, z, w)``, its diagonal ``4 q_k²``; the row with the largest diagonal is
    divided by ``4 |q_k|``, so it is accurate for every rotation. One matrix product
    gives all four rows of every rotation, so a robot's poses cost a dozen numpy calls.

    >>> rotation_to_quaternion(rot_z(np.pi / 2)).round(12).tolist()
    [0.0, 0.0, 0.707106781187, 0.707106781187]
    """
    R = np.asarray(R, dtype=float)
    lead = R.shape[:-2]
    terms = R.reshape(-1, 9) @ _SHEPPERD + _SHEPPERD_ONE          # (n, 16): 4 rows of 4
    return pick_quaternions(terms, 0, np.empty((len(terms), 4))).reshape(lead + (4,))


def pose_rows(X, out=None):
    """Return (or write into ``out``) poses ``X`` (n, 4, 4) as rows ``x, y, z, qx, qy, qz, qw``."""
    X = np.asarray(X, dtype=float)
    out = np.empty((len(X), 7)) if out is None else out
    out[:, :3] = X[:, :3, 3]
    out[:, 3:] = rotation_to_quaternion(X[:, :3, :3])
    return out


def pick_quaternions(terms, first, out, starts=None):
    """
    Write into ``out`` (n, 4) the quaternions of Shepperd's candidates in ``terms``.

    ``terms`` is C-contiguous (n, width); columns ``first`` to ``first + 16`` of row i
    hold rotation i's candidates, a 4x4: row k is ``4 q_k (x, y, z, w)`` and its diagonal
    ``4 q_k²``. The row with the largest diagonal is divided by ``4 |q_k|``, with the
    sign that makes ``w >= 0``. ``starts``, the column ``arange(n)[:, None] * width +
    first``, may be passed by a caller that keeps it. One gather reads the chosen row
    and its diagonal entry together (:data:`_PICK`).
    """
    if starts is None:
        starts = (np.arange(len(terms)) * terms.shape[1] + first)[:, None]
    at = _PICK.take(terms[:, first:first + 16:5].argmax(axis=1), axis=0)   # largest 4 q_k²
    at += starts
    best = terms.reshape(-1).take(at)                      # 4 q_k (x, y, z, w), then 4 q_k²
    s = np.copysign(0.5 / np.sqrt(best[:, 4]), best[:, 3])     # 1 / (4 q_k), w >= 0
    return np.multiply(best[:, :4], s[:, None], out=out)


def _shepperd_table():
    """Return ``(T (9, 16), c (16,))``: ``R.ravel() @ T + c`` is the 4x4 of candidate rows."""
    terms = (('+00 -11 -22', '+01 +10', '+02 +20', '+21 -12'),
             ('+01 +10', '-00 +11 -22', '+12 +21', '+02 -20'),
             ('+02 +20', '+12 +21', '-00 -11 +22', '+10 -01'),
             ('+21 -12', '+02 -20', '+10 -01', '+00 +11 +22'))
    T = np.zeros((9, 16))
    for k, row in enumerate(terms):
        for c, entry in enumerate(row):
            for term in entry.split():
                T[3 * int(term[1]) + int(term[2]), 4 * k + c] = 1.0 if term[0] == '+' else -1.0
    return T, np.eye(4).ravel()


_SHEPPERD, _SHEPPERD_ONE = _shepperd_table()
# Where candidate row k (x, y, z, w) and its diagonal entry 4 q_k² sit among the 16.
_PICK = np.array([[4 * k, 4 * k + 1, 4 * k + 2, 4 * k + 3, 5 * k] for k in range(4)])


def _pose_table_transposed():
    """
    Return ``T`` (16, 19): a transposed pose ``X^T`` flattened, times ``T``, is ``(p, terms)``.

    ``p`` the translation and ``terms`` Shepperd's 16 candidates of the rotation;
    ``X^T[3, 3] = 1`` carries the table's constant.
    """
    T = np.zeros((16, 19))
    for r in range(3):
        T[12 + r, r] = 1.0                                      # p_r = X[r, 3] = X^T[3, r]
        for c in range(3):
            T[4 * c + r, 3:] = _SHEPPERD[3 * r + c]             # R[r, c] = X^T[c, r]
    T[15, 3:] = _SHEPPERD_ONE
    return T


POSE_TABLE_TRANSPOSED = _pose_table_transposed()


def invert(X):
    """Return the inverse of rigid transforms ``X`` (..., 4, 4)."""
    X = np.asarray(X, dtype=float)
    out = np.zeros_like(X)
    rt = np.swapaxes(X[..., :3, :3], -1, -2)
    out[..., :3, :3] = rt
    out[..., :3, 3] = -np.einsum('...ij,...j->...i', rt, X[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out
