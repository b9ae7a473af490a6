"""
The public robots of ``example-robot-data`` (PyPI), and Pinocchio's view of them.

The URDFs are someone else's files (Franka, UR, PAL, Unitree, Willow Garage...): the
measure of what the loaders must accept. Tests that use them skip, saying why, where the
package is not installed.
"""

import importlib.metadata
import pathlib

import numpy as np

ROBOTS_IN_PACKAGE = 'cmeel.prefix/share/example-robot-data/robots'


def robots_dir():
    """Return the folder of example-robot-data's robots, or None if it is not installed."""
    try:
        dist = importlib.metadata.distribution('example-robot-data')
    except importlib.metadata.PackageNotFoundError:
        return None
    path = pathlib.Path(dist.locate_file(ROBOTS_IN_PACKAGE))
    return path if path.is_dir() else None


def urdf_files():
    """Return every URDF of the package, sorted by path (empty if not installed)."""
    root = robots_dir()
    return sorted(root.rglob('*.urdf')) if root else []


def robot(relative):
    """Return the path of one robot's URDF, e.g. ``panda_description/urdf/panda.urdf``."""
    root = robots_dir()
    return None if root is None else root / relative


def pinocchio_model(pin, path):
    """Return Pinocchio's model of the URDF at ``path`` with mimic joints, or None if refused."""
    text = path.read_text(encoding='utf-8', errors='replace')
    try:
        return pin.buildModelFromXML(text, mimic=True)
    except (RuntimeError, ValueError):
        return None


def independent_joints(pm):
    """Return ``{name: joint index}`` of Pinocchio's joints that have coordinates of their own."""
    return {pm.names[i]: i for i in range(1, pm.njoints)
            if pm.joints[i].shortname() != 'JointModelMimic'}


def velocity_columns(pm, names):
    """Return the columns of Pinocchio's velocity (and torque) vectors of our joint ``names``."""
    index = independent_joints(pm)
    return np.array([pm.idx_vs[index[n]] for n in names])


def pinocchio_q(pin, pm, names, q):
    """
    Return Pinocchio's configuration for our ``q`` (joint ``names`` order).

    Continuous joints take (cos, sin) in Pinocchio (RevoluteUnbounded, nq 2).
    """
    out = pin.neutral(pm)
    index = independent_joints(pm)
    for name, value in zip(names, q):
        j = index[name]
        at, nq = pm.idx_qs[j], pm.nqs[j]
        if nq == 2:
            out[at:at + 2] = np.cos(value), np.sin(value)
        else:
            out[at] = value
    return out


def pinocchio_gravity(pin, pm, names, q_pin):
    """Return Pinocchio's holding torque (its gravity vector) in joint ``names`` order."""
    data = pm.createData()
    g = pin.computeGeneralizedGravity(pm, data, q_pin)
    index = independent_joints(pm)
    return np.array([g[pm.idx_vs[index[n]]] for n in names])


def random_q(model, rng, count):
    """Return ``count`` configurations within the joints' limits (within ±pi where unlimited)."""
    lo = np.maximum(model.position_lower_limits, -np.pi)
    hi = np.minimum(model.position_upper_limits, np.pi)
    return rng.uniform(lo, hi, (count, model.num_positions))
