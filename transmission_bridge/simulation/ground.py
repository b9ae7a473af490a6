"""
Where a floating robot starts: resting on the ground, its lowest collision geometry touching it.

A URDF says nothing of how high its root stands (its origin is wherever the author put the
base's frame, often the base's centre at z = 0, the legs through the floor). A floating base
whose start pose is not given (MJCF keyframe ``home``) is therefore lowered or raised until
the lowest point of its collision geometries, in the start pose, lies on the ground plane; an
MJCF's base is moved only where its geometry starts inside the ground.

The lowest point is each geometry's support in −z, exact for MuJoCo's primitives (a sphere's
centre less its radius, a box's centre less ``Σ |R_zi| h_i``, a capsule's and a cylinder's
from their axis, an ellipsoid's ``|S Rᵀ e_z|``) and a mesh's lowest vertex; anything else by
its bounding box (``geom_aabb``). Geometries that collide with nothing (``contype`` and
``conaffinity`` 0: visuals) and the ground itself are left out.
"""

import numpy as np

from .model import import_mujoco


def lowest_point(robot):
    """
    Return ``(z, geom name)``: the lowest point of the robot's collision geometries now.

    The model's positions must be current (``mj_fwdPosition``). ``(inf, '')`` if none.
    """
    mujoco = import_mujoco()
    model, data = robot.model, robot.data
    T = mujoco.mjtGeom
    best, name = np.inf, ''
    for g in range(model.ngeom):
        kind = int(model.geom_type[g])
        if model.geom_bodyid[g] == 0 or kind == int(T.mjGEOM_PLANE) or not (
                model.geom_contype[g] or model.geom_conaffinity[g]):
            continue
        z, R, s = data.geom_xpos[g][2], data.geom_xmat[g].reshape(3, 3), model.geom_size[g]
        rz = R[2]                                   # the geometry's axes' z components
        if kind == int(T.mjGEOM_SPHERE):
            low = z - s[0]
        elif kind == int(T.mjGEOM_CAPSULE):
            low = z - abs(rz[2]) * s[1] - s[0]
        elif kind == int(T.mjGEOM_CYLINDER):
            low = z - abs(rz[2]) * s[1] - s[0] * np.sqrt(max(0.0, 1.0 - rz[2] ** 2))
        elif kind == int(T.mjGEOM_BOX):
            low = z - np.abs(rz) @ s
        elif kind == int(T.mjGEOM_ELLIPSOID):
            low = z - np.linalg.norm(rz * s)
        elif kind == int(T.mjGEOM_MESH) and model.geom_dataid[g] >= 0:
            m = model.geom_dataid[g]
            start, count = model.mesh_vertadr[m], model.mesh_vertnum[m]
            low = z + float(np.min(model.mesh_vert[start:start + count] @ rz))
        else:
            centre, half = model.geom_aabb[g][:3], model.geom_aabb[g][3:]
            low = z + rz @ centre - np.abs(rz) @ half
        if low < best:
            best, name = float(low), model.geom(g).name or f'#{g} of body ' \
                f'{model.body(model.geom_bodyid[g]).name!r}'
    return best, name


def ground_height(robot):
    """Return the height of the model's ground plane (the lowest horizontal plane), or 0."""
    mujoco = import_mujoco()
    model, data = robot.model, robot.data
    planes = [data.geom_xpos[g][2] for g in range(model.ngeom)
              if model.geom_type[g] == int(mujoco.mjtGeom.mjGEOM_PLANE)
              and abs(data.geom_xmat[g][8]) > 1.0 - 1e-9]
    return float(min(planes)) if planes else 0.0


def rest_on_ground(robot, only_if_inside=False):
    """
    Move the free base vertically so its lowest collision point is on the ground.

    ``only_if_inside``: move it only if that point starts below the ground. Returns
    ``(lift, geom name)``: how far the base moved (m, 0 if not) and the geometry that touches.
    """
    mujoco = import_mujoco()
    mujoco.mj_fwdPosition(robot.model, robot.data)
    low, name = lowest_point(robot)
    if not np.isfinite(low):
        return 0.0, ''
    lift = ground_height(robot) - low
    if only_if_inside and lift <= 0.0:
        return 0.0, name
    robot.data.qpos[robot.free_qpos + 2] += lift
    mujoco.mj_fwdPosition(robot.model, robot.data)
    return lift, name
