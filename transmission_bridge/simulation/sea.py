"""
Series-elastic actuators in MuJoCo: each spring's motor a rotor of its own, the spring a tendon.

For an actuator with a ``spring`` whose transmission is linear and whose motors all carry
springs, and a rotor inertia to give the rotor (``> 0``):
the model gains a body with a hinge joint named like the motor (so the engine drives it as
any motor joint: its torque on that degree of freedom, its rotor as the joint's armature),
and a fixed tendon ``θ / n_a - (A q) / n_a`` with the spring's stiffness and damping, relaxed
at the transmission's zero (``springlength`` the joint offsets' share): MuJoCo integrates
the spring between the rotor and the joints. A calibration table's force is applied at every
step instead (:class:`TableSprings`: ``k(δ)`` along the tendon, at the step's own state), its
damping MuJoCo's. Its output encoder then reads the joints' side, ``(A (q - offsets)) / n_a``
(:class:`.output_encoders.SimulatedOutputEncoders`). Any other spring (a linkage, a shared
transmission, no rotor inertia) stays quasi-static, said once.
"""

import numpy as np

from .model import import_mujoco, Robot


def spring_rotors(tset, robot):
    """Return ``(robot with the rotors and tendons, {actuator index: row of A}, warnings)``."""
    mujoco = import_mujoco()
    rows, warnings = {}, []
    for spec in tset.specs:
        sprung = [a for a in spec.actuators if a.spring is not None]
        if not sprung:
            continue
        why = ('not linear' if not spec.is_linear else
               'a motor of it without a spring' if len(sprung) < len(spec.actuators) else
               'no rotor_inertia' if any(a.rotor_inertia <= 0 for a in sprung) else
               'a motor of it already a joint of the model'
               if any(a.name in robot.qpos_of for a in sprung) else
               'a joint of it not in the model'
               if any(j.name not in robot.qpos_of for j in spec.joints) else '')
        if why:
            warnings.append(f'transmission {spec.name!r}: its springs are quasi-static in the '
                            f'simulator ({why}): its output encoders read the deflection '
                            "that carries each drive's torque")
            continue
        for a in sprung:
            rows[tset.actuator_index[a.name]] = _affine_row(tset, a.name)
    if not rows:
        return robot, {}, warnings
    spec = robot.spec
    joints = tset.joint_names
    offsets = np.asarray(tset.joint_offsets, dtype=float)
    for i, row in rows.items():
        actuator = tset.actuator(tset.actuator_names[i])
        n = actuator.mechanical_reduction
        body = spec.worldbody.add_body(name=f'{actuator.name}_rotor')
        body.explicitinertial = True
        body.mass, body.inertia = 1e-6, [1e-9, 1e-9, 1e-9]   # the rotor: its armature
        body.add_joint(name=actuator.name, type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0, 0, 1])
        tendon = spec.add_tendon(name=f'{actuator.name}_spring')
        linear = actuator.spring.stiffness or 0.0       # a table's force: TableSprings
        tendon.stiffness = [linear, 0.0, 0.0]          # (MuJoCo's polynomial, its first term)
        tendon.damping = [actuator.spring.damping, 0.0, 0.0]
        length = float(row @ offsets) / n           # θ / n - (A q) / n at θ = A (q - off)
        tendon.springlength = [-length, -length]
        tendon.wrap_joint(actuator.name, 1.0 / n)
        for c in np.flatnonzero(row):
            tendon.wrap_joint(joints[c], float(-row[c] / n))
    model = spec.compile()
    out = Robot(model, robot.home, robot.floating, spec)
    out.warnings, out.fixed_joints, out.urdf = robot.warnings, robot.fixed_joints, robot.urdf
    return out, rows, warnings


def _affine_row(tset, actuator):
    """Return the actuator's row of the set's position map ``θ = A (q - offsets)``."""
    i = tset.actuator_index[actuator]
    return np.array(tset.joint_to_actuator('velocity', np.eye(tset.num_joints))[:, i])


def rotor_pose(tset, rows, pose):
    """Return the rotors' start positions ({motor: θ}) relaxing the springs at ``pose``."""
    q = np.array([pose.get(j, d) for j, d in zip(tset.joint_names, tset.default_positions)],
                 dtype=float)
    q = np.array([float(np.ravel(v)[0]) for v in q])
    offsets = np.asarray(tset.joint_offsets, dtype=float)
    return {tset.actuator_names[i]: np.array([float(row @ (q - offsets))])
            for i, row in rows.items()}


class TableSprings:
    """The simulated springs given by a table: their force along their tendons, every step."""

    def __init__(self, tset, robot, rows):
        self._items = []
        offsets = np.asarray(tset.joint_offsets, dtype=float)
        for i, row in rows.items():
            actuator = tset.actuator(tset.actuator_names[i])
            if not actuator.spring.table:
                continue
            n = actuator.mechanical_reduction
            cols = np.flatnonzero(row)
            self._items.append((
                actuator.spring, n, robot.qpos_of[actuator.name], robot.dof_of[actuator.name],
                np.array([robot.qpos_of[tset.joint_names[c]] for c in cols], dtype=int),
                np.array([robot.dof_of[tset.joint_names[c]] for c in cols], dtype=int),
                row[cols], float(row @ offsets)))

    def __bool__(self):
        return bool(self._items)

    def apply(self, data):
        """Add each table spring's force to ``data.qfrc_applied`` at the state in ``data``."""
        for spring, n, rotor_q, rotor_dof, qpos, dofs, row, shift in self._items:
            deflection = (row @ data.qpos[qpos] - shift) / n - data.qpos[rotor_q] / n
            force = float(spring.force(deflection))         # the tendon's: k(δ)
            data.qfrc_applied[rotor_dof] += force / n
            data.qfrc_applied[dofs] -= row / n * force
