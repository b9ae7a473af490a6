"""
The robot of a URDF as a linkage transmission needs it: its joints' axes and points.

A ``LinkageTransmission`` of a URDF (:mod:`.urdf`) may leave its joints' ``type``, ``axis``
and ``origin`` to the robot's ``<joint>`` elements: :class:`UrdfRobot` reads them through
the kinematics library (built when first needed) in the linkage frame, and refuses given
values that disagree with the robot's beyond :data:`GEOMETRY_ATOL`.
"""

import numpy as np

from .errors import ConfigError

GEOMETRY_ATOL = 1e-6        # given joint axes and points must agree with the robot's (m, -)


class UrdfRobot:
    """The robot of a URDF as the kinematics library reads it, built when first needed."""

    def __init__(self, text, joints):
        self._text = text
        #: The robot's ``<joint>`` elements by name (none: a description of transmissions
        #: alone, whose linkages give their joints' axes and points).
        self.joints = joints
        self._model = None
        self._error = None

    def model(self, where):
        """Return the kinematic model; ConfigError naming ``where`` if it cannot be read."""
        if self._model is None and self._error is None:
            from ..kinematics import ModelError
            from ..kinematics.urdf import model_from_urdf
            try:
                # numpy: a few poses for the linkages' geometry, numba not loaded for them
                self._model = model_from_urdf(self._text, kernels='numpy')
            except ModelError as exc:
                self._error = str(exc)
        if self._error is not None:
            raise ConfigError(f"{where}: the joints' axes come from the robot, whose "
                              f'description does not load: {self._error}')
        return self._model

    def fill_linkage_joints(self, where, joints, shapes):
        """
        Complete each joint's ``type``, ``axis`` and ``origin`` from the robot's joints.

        Expressed in the parent link of the first joint with the linkage's joints at their
        geometric zero (the published value ``offset``) and the rest at 0; the joints must be
        a serial chain (fixed joints between them allowed). Given values must agree with
        the robot's to :data:`GEOMETRY_ATOL`, or are refused with both.
        """
        model = self.model(where)
        bodies = {b.joint.name: b for b in model.bodies}
        names = [j.name for j in joints]
        q = np.zeros(model.num_positions)
        order = model.joint_names
        for joint in joints:
            if joint.name not in bodies or bodies[joint.name].joint.TYPE == 'fixed':
                raise ConfigError(f'{where}: joint {joint.name!r} is not a movable joint of '
                                  'the robot')
            if joint.name not in order:
                raise ConfigError(f'{where}: joint {joint.name!r} is a mimic joint; a '
                                  "linkage's joints are driven by its rods")
            q[order.index(joint.name)] = joint.offset
        self._check_serial(where, model, bodies, names)
        poses = model.body_poses(q)
        frame = bodies[names[0]].parent
        index = model.frame_index(frame)
        X_WL = np.eye(4) if index is None else poses[index]
        X_LW = np.linalg.inv(X_WL)
        for joint, (_, shape) in zip(joints, shapes):
            body = bodies[joint.name]
            X_LJ = X_LW @ poses[model.frame_index(body.name)]
            kind = body.joint.TYPE
            if kind not in ('revolute', 'prismatic'):
                raise ConfigError(f'{where}: joint {joint.name!r} is {kind}; a linkage drives '
                                  'revolute and prismatic joints')
            robot = {'type': kind, 'axis': X_LJ[:3, :3] @ np.asarray(body.joint.axis, float),
                     'origin': X_LJ[:3, 3]}
            _agree(where, joint.name, shape, robot)
            shape.update({k: [float(x) for x in v] if k != 'type' else v
                          for k, v in robot.items()})

    @staticmethod
    def _check_serial(where, model, bodies, names):
        """Refuse joints that are not one serial chain, base side first."""
        by_body = {b.name: b for b in model.bodies}
        for k in range(1, len(names)):
            parent = bodies[names[k]].parent
            while parent in by_body and by_body[parent].joint.TYPE == 'fixed':
                parent = by_body[parent].parent
            if parent not in by_body or by_body[parent].joint.name != names[k - 1]:
                raise ConfigError(
                    f'{where}: joint {names[k]!r} does not follow {names[k - 1]!r} in the '
                    "robot; a linkage's joints are a serial chain, base side first")


def _agree(where, joint, given, robot):
    """Refuse a given joint axis, point or type that is not the robot's."""
    if 'type' in given and given['type'] != robot['type']:
        raise ConfigError(f'{where}, joint {joint!r}: <type> {given["type"]!r} but the robot\'s '
                          f'joint is {robot["type"]!r}')
    axis = robot['axis'] / np.linalg.norm(robot['axis'])
    if 'axis' in given:
        mine = np.asarray(given['axis'], float)
        norm = np.linalg.norm(mine)
        if not norm > 0 or np.abs(mine / norm - axis).max() > GEOMETRY_ATOL:
            raise ConfigError(f'{where}, joint {joint!r}: <axis> {given["axis"]} but the '
                              f"robot's axis, in the linkage frame, is {_rounded(axis)}")
    if 'origin' in given and robot['type'] == 'revolute':
        offset = np.asarray(given['origin'], float) - robot['origin']
        off_axis = offset - axis * (offset @ axis)      # any point of the axis will do
        if np.abs(off_axis).max() > GEOMETRY_ATOL:
            raise ConfigError(f'{where}, joint {joint!r}: <origin> {given["origin"]} is not '
                              "on the robot's axis, which passes through "
                              f'{_rounded(robot["origin"])} in the linkage frame')


def _rounded(vector):
    return [round(float(x), 9) + 0.0 for x in vector]
