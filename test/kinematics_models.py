"""Seeded random models mixing every joint type with tilted axes, for the law and peer tests."""

import numpy as np

from transmission_bridge.kinematics import (
    Body, FixedJoint, Inertial, Model, PrismaticJoint, RevoluteJoint, ScrewJoint)
from transmission_bridge.kinematics.spatial import origin_transform

JOINT_KINDS = ('revolute', 'prismatic', 'screw', 'fixed')


def random_model(seed, num_bodies=7, kinds=JOINT_KINDS, tree=True, gravity=(0.0, 0.0, -9.81)):
    """Return a random model: random parents (a tree), axes, origins, masses, pitches."""
    rng = np.random.default_rng(seed)
    bodies = []
    for i in range(num_bodies):
        parent = 'world' if i == 0 or (tree and rng.random() < 0.2) else \
            (f'b{rng.integers(0, i)}' if tree else f'b{i - 1}')
        kind = kinds[rng.integers(0, len(kinds))] if i else kinds[0]
        origin = origin_transform(rng.uniform(-0.5, 0.5, 3), rng.uniform(-np.pi, np.pi, 3))
        axis = rng.normal(size=3)
        name = f'j{i}'
        if kind == 'revolute':
            joint = RevoluteJoint(name, axis=axis, origin=origin, damping=rng.uniform(0, 2))
        elif kind == 'prismatic':
            joint = PrismaticJoint(name, axis=axis, origin=origin, damping=rng.uniform(0, 2))
        elif kind == 'screw':
            joint = ScrewJoint(name, axis=axis, origin=origin,
                               pitch=rng.uniform(0.01, 0.5) * rng.choice([-1, 1]))
        else:
            joint = FixedJoint(name, origin=origin)
        moments = rng.uniform(0.01, 0.1, 3)
        inertial = Inertial(rng.uniform(0.3, 3.0), rng.uniform(-0.3, 0.3, 3),
                            ixx=moments[0] + moments[1], iyy=moments[1] + moments[2],
                            izz=moments[0] + moments[2])
        bodies.append(Body(f'b{i}', joint, inertial, parent))
    return Model(bodies, f'random{seed}', gravity)


def random_q(model, rng, n=None):
    """Return random configurations, (nq,) or (n, nq)."""
    shape = (model.num_positions,) if n is None else (n, model.num_positions)
    return rng.uniform(-1.5, 1.5, shape)
