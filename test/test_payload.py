"""
A payload at runtime: Model.with_payload against Pinocchio with the payload added as a body.

Pinocchio gets the payload its own way: a point mass appended to the joint that carries the
body (``appendBodyToJoint``), placed through the body's frame; its generalized gravity
is the holding torque, the negative of ours.
"""

import numpy as np
import pytest
from robot_corpus import pinocchio_gravity, pinocchio_model, pinocchio_q, random_q, robots_dir
from tolerances import PEER_ATOL
from transmission_bridge.kinematics import load_model, ModelError
from transmission_bridge.kinematics import parameters as kparams

pin = pytest.importorskip('pinocchio', reason='Pinocchio is not installed (pip install pin)')
if robots_dir() is None:
    pytest.skip('example-robot-data is not installed (pip install example-robot-data)',
                allow_module_level=True)

ROBOTS = [('ur_description/urdf/ur5_robot.urdf', 'wrist_3_link'),
          ('panda_description/urdf/panda.urdf', 'panda_hand'),
          ('z1_description/urdf/z1.urdf', 'link06')]


def _pinocchio_with_payload(pm, body, mass, com):
    frame = pm.frames[pm.getFrameId(body, pin.BODY)]
    lever = frame.placement.act(np.asarray(com, dtype=float))     # in the joint's frame
    pm.appendBodyToJoint(frame.parentJoint, pin.Inertia(mass, lever, np.zeros((3, 3))),
                         pin.SE3.Identity())
    return pm


@pytest.mark.parametrize('path, body', ROBOTS)
def test_payload_matches_pinocchio_with_the_payload_as_a_body(path, body):
    urdf = robots_dir() / path
    model = load_model(urdf)
    rng = np.random.default_rng(35)
    mass, com = 1.5, rng.uniform(-0.1, 0.1, 3)
    loaded = model.with_payload(body, mass, com)
    pm = _pinocchio_with_payload(pinocchio_model(pin, urdf), body, mass, com)
    for q in random_q(model, rng, 4):
        holding = pinocchio_gravity(pin, pm, model.joint_names, pinocchio_q(pin, pm,
                                                                            model.joint_names, q))
        scale = max(1.0, float(np.abs(holding).max()))
        np.testing.assert_allclose(loaded.gravity_generalized_forces(q), -holding, rtol=0,
                                   atol=PEER_ATOL * scale)
        # The payload changes the torques (the test would pass on a missing payload otherwise).
        assert np.abs(loaded.gravity_generalized_forces(q)
                      - model.gravity_generalized_forces(q)).max() > 1e-3
        np.testing.assert_array_equal(loaded.body_poses(q), model.body_poses(q))


def test_mass_zero_gives_back_the_model_without_payload_exactly():
    model = load_model(robots_dir() / ROBOTS[0][0])
    loaded = model.with_payload('wrist_3_link', 2.0, (0, 0, 0.1))
    back = loaded.with_payload('wrist_3_link', 0.0, (0, 0, 0))
    assert back.payload == ('wrist_3_link', 0.0, (0.0, 0.0, 0.0))    # set one value at a time
    assert back.without_payload().payload is None
    q = np.full(6, 0.4)
    np.testing.assert_array_equal(back.gravity_generalized_forces(q),
                                  model.gravity_generalized_forces(q))
    assert back.body('wrist_3_link').inertial == model.body('wrist_3_link').inertial
    # Moving the payload replaces it: not added to the first.
    moved = loaded.with_payload('forearm_link', 2.0, (0, 0, 0.1))
    direct = model.with_payload('forearm_link', 2.0, (0, 0, 0.1))
    np.testing.assert_array_equal(moved.gravity_generalized_forces(q),
                                  direct.gravity_generalized_forces(q))


def test_payload_parameters_are_one_atomic_change_and_bad_ones_change_nothing():
    model = load_model(robots_dir() / ROBOTS[0][0])
    values = kparams.parameter_values(model)
    assert (values['payload.body'], values['payload.mass'], values['payload.com']) == (
        '', 0.0, [0.0, 0.0, 0.0])
    new = kparams.apply_parameters(model, {'payload.body': 'wrist_3_link', 'payload.mass': 1.5,
                                           'payload.com': [0.0, 0.0, 0.05]})
    assert new.payload == ('wrist_3_link', 1.5, (0.0, 0.0, 0.05))
    assert kparams.parameter_values(new)['payload.mass'] == 1.5
    # Other changes keep the payload.
    kept = kparams.apply_parameters(new, {'joints.elbow_joint.damping': 0.5})
    assert kept.payload == new.payload
    for bad, words in (({'payload.mass': 1.0}, 'needs a payload.body'),
                       ({'payload.body': 'nope', 'payload.mass': 1.0}, "unknown body 'nope'"),
                       ({'payload.body': 'wrist_3_link', 'payload.mass': -1.0}, '>= 0'),
                       ({'payload.body': 'wrist_3_link', 'payload.mass': float('nan')},
                        'finite'),
                       ({'payload.com': [0.0, 0.0]}, '3 entries')):
        with pytest.raises(ModelError, match=words):
            kparams.apply_parameters(model, bad)
