"""Cross-check against Pinocchio: poses, gravity, energy on random models, every joint type."""

from kinematics_models import random_model, random_q
import numpy as np
import pytest
from tolerances import PEER_ATOL

# package.xml declares it (rosdep key pinocchio; PyPI: pin); a machine without it skips.
pin = pytest.importorskip('pinocchio', reason='Pinocchio is not installed (pip install pin, '
                          'or rosdep install --from-paths src -y)')
from pinocchio_bridge import pinocchio_poses_and_holding_torque, to_pinocchio  # noqa: E402,I100


@pytest.mark.parametrize('seed', range(12))
def test_poses_and_gravity_agree_with_pinocchio(seed):
    model = random_model(seed, num_bodies=8,
                         gravity=np.random.default_rng(seed).normal(size=3) * 5)
    pm, frames = to_pinocchio(model)
    assert pm.nq == model.num_positions
    rng = np.random.default_rng(1000 + seed)
    qs = random_q(model, rng, 6)
    batch = model.poses_gravity_and_energy(qs)
    data = pm.createData()
    for k, q in enumerate(qs):
        poses, holding = pinocchio_poses_and_holding_torque(pm, frames, model.body_names, q)
        ours = model.forward_kinematics(q)
        for name in model.body_names:
            np.testing.assert_allclose(ours[name], poses[name], rtol=0, atol=PEER_ATOL)
        # Pinocchio returns the holding torque: minus Drake's tau_g.
        np.testing.assert_allclose(model.gravity_generalized_forces(q), -holding, rtol=0,
                                   atol=PEER_ATOL)
        # Both put the zero of V = -sum m g . c at the world origin; Pinocchio's sum leaves
        # out the bodies welded to the world (its joint 0), so they are added here.
        welded = pm.inertias[0]
        pin_energy = (pin.computePotentialEnergy(pm, data, q)
                      - welded.mass * float(np.dot(model.gravity, welded.lever)))
        one = model.poses_gravity_and_energy(q)
        assert one[2] == pytest.approx(pin_energy, rel=0, abs=PEER_ATOL)
        for ours_one, ours_batch in zip(one, batch):
            np.testing.assert_allclose(ours_batch[k], ours_one, rtol=0, atol=PEER_ATOL)


def test_serial_chain_with_screws_agrees_with_pinocchio():
    model = random_model(77, num_bodies=7, kinds=('screw', 'revolute'), tree=False)
    pm, frames = to_pinocchio(model)
    q = random_q(model, np.random.default_rng(77), 10)
    for qi in q:
        _, holding = pinocchio_poses_and_holding_torque(pm, frames, model.body_names, qi)
        np.testing.assert_allclose(model.gravity_generalized_forces(qi), -holding,
                                   atol=PEER_ATOL)


def test_dh_model_agrees_with_pinocchio():
    from test_kinematics_dh import PUMA
    from transmission_bridge.kinematics.loader import dh_table
    model = dh_table(PUMA, 'modified')
    pm, frames = to_pinocchio(model)
    for q in np.random.default_rng(3).uniform(-3, 3, (5, 6)):
        poses, _ = pinocchio_poses_and_holding_torque(pm, frames, model.body_names, q)
        for name in model.body_names:
            np.testing.assert_allclose(model.forward_kinematics(q)[name], poses[name],
                                       atol=PEER_ATOL)
