"""
Every robot of example-robot-data (PyPI) that Pinocchio loads, against Pinocchio.

Someone else's files, the measure of what the loaders accept: for each URDF Pinocchio
loads (``mimic=True``) with a movable joint, the model loads here with the same
independent joints, and its generalized gravity and every link's world pose equal
Pinocchio's at random configurations within the limits.
"""

import numpy as np
import pytest
from robot_corpus import (independent_joints, pinocchio_gravity, pinocchio_model, pinocchio_q,
                          random_q, robots_dir, urdf_files)
from tolerances import PEER_ATOL
from transmission_bridge.kinematics import load_model
from transmission_bridge.transmissions import load_transmissions

pin = pytest.importorskip('pinocchio', reason='Pinocchio is not installed (pip install pin)')
if robots_dir() is None:
    pytest.skip('example-robot-data is not installed (pip install example-robot-data)',
                allow_module_level=True)

FILES = urdf_files()
WITH_TRANSMISSIONS = [p for p in FILES if '<transmission' in p.read_text(errors='replace')]


def _id(path):
    return str(path.relative_to(robots_dir()))


@pytest.mark.parametrize('path', FILES, ids=_id)
def test_urdf_matches_pinocchio(path):
    pm = pinocchio_model(pin, path)
    if pm is None or pm.njoints == 1:
        pytest.skip('Pinocchio does not load it, or it has no movable joint')
    model = load_model(path)
    assert sorted(model.joint_names) == sorted(independent_joints(pm))
    data = pm.createData()
    frames = {name: pm.getFrameId(name, pin.BODY) for name in model.body_names}
    for q in random_q(model, np.random.default_rng(len(model.body_names)), 3):
        qp = pinocchio_q(pin, pm, model.joint_names, q)
        tau = model.gravity_generalized_forces(q)
        # Pinocchio's gravity vector is the holding torque: minus ours. Heavy robots
        # (Talos, 100 kg) load joints with hundreds of N·m: the tolerance scales with them.
        holding = pinocchio_gravity(pin, pm, model.joint_names, qp)
        scale = max(1.0, float(np.abs(holding).max()))
        np.testing.assert_allclose(tau, -holding, rtol=0, atol=PEER_ATOL * scale)
        pin.framesForwardKinematics(pm, data, qp)
        poses = model.body_poses(q)
        for i, name in enumerate(model.body_names):
            np.testing.assert_allclose(poses[i], data.oMf[frames[name]].homogeneous,
                                       rtol=0, atol=PEER_ATOL)


def test_the_corpus_is_the_one_the_issue_measured():
    """62 URDFs with a movable joint that Pinocchio loads: a smaller set would hide a refusal."""
    loaded = [p for p in FILES if (pm := pinocchio_model(pin, p)) is not None and pm.njoints > 1]
    assert len(loaded) >= 62


@pytest.mark.parametrize('path', WITH_TRANSMISSIONS, ids=_id)
def test_transmissions_load_and_cover_joints_of_the_robot(path):
    ts = load_transmissions(path)
    model = load_model(path)
    joints = set(model.movable_joint_names) | {b.joint.name for b in model.bodies}
    assert set(ts.joint_names) <= joints
    # Everything not bridged is named, with its joints.
    for skipped in ts.skipped:
        assert any(skipped.name in w and skipped.type in w for w in ts.warnings)


def test_all_thirty_transmission_files_and_the_pr2_wrists():
    assert len(WITH_TRANSMISSIONS) == 30
    pr2 = load_transmissions(robots_dir() / 'pr2_description/urdf/pr2.urdf')
    wrist = [s for s in pr2.specs if s.name == 'r_wrist_trans'][0]
    assert wrist.type == 'differential'
    assert [a.name for a in wrist.actuators] == ['r_wrist_r_motor', 'r_wrist_l_motor']
    assert [j.name for j in wrist.joints] == ['r_wrist_flex_joint', 'r_wrist_roll_joint']
    assert {s.name for s in pr2.skipped} == {'r_gripper_trans', 'l_gripper_trans'}
