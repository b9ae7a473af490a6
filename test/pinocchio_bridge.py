"""Build the same robot in Pinocchio (the peer implementation used as an oracle)."""

import numpy as np
import pinocchio as pin

from transmission_bridge.kinematics import PrismaticJoint, RevoluteJoint, ScrewJoint


def to_pinocchio(model):
    """
    Return ``(pin_model, frames)``: the model in Pinocchio, and body -> (joint id, X_JB).

    Fixed joints are merged into their parent joint (Pinocchio's joints all move);
    the screw pitch becomes Pinocchio's helical pitch in m/rad (``pitch / 2 pi``).
    """
    pm = pin.Model()
    pm.gravity.linear = np.array(model.gravity)
    frames = {'world': (0, pin.SE3.Identity())}
    for b in model.bodies:
        parent_joint, X_parent = frames[b.parent]
        joint = b.joint
        placement = X_parent * pin.SE3(joint.origin)
        inertia = pin.Inertia(b.inertial.mass, np.array(b.inertial.com),
                              np.array(b.inertial.inertia))
        if isinstance(joint, ScrewJoint):
            jm = pin.JointModelHelicalUnaligned(np.array(joint.axis), joint.translation_per_q)
        elif isinstance(joint, RevoluteJoint):
            jm = pin.JointModelRevoluteUnaligned(np.array(joint.axis))
        elif isinstance(joint, PrismaticJoint):
            jm = pin.JointModelPrismaticUnaligned(np.array(joint.axis))
        else:
            X = placement * pin.SE3(joint.child_transform)
            frames[b.name] = (parent_joint, X)
            pm.appendBodyToJoint(parent_joint, inertia, X)
            continue
        jid = pm.addJoint(parent_joint, jm, placement, joint.name)
        X = pin.SE3(joint.child_transform)
        frames[b.name] = (jid, X)
        pm.appendBodyToJoint(jid, inertia, X)
    return pm, frames


def pinocchio_poses_and_holding_torque(pm, frames, body_names, q):
    """Return ({body: X_WB}, holding torque) from Pinocchio for configuration ``q``."""
    data = pm.createData()
    pin.forwardKinematics(pm, data, q)
    poses = {}
    for name in body_names:
        jid, X = frames[name]
        poses[name] = (data.oMi[jid] * X).homogeneous
    return poses, pin.computeGeneralizedGravity(pm, data, q).copy()
