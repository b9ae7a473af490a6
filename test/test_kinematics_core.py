"""KinematicsCore without ROS: the node's per-message step against ingest."""

from conftest import CONFIG
import numpy as np
from transmission_bridge.kinematics import load_model
from transmission_bridge.kinematics.parameters import (
    apply_parameters, joint_parameter, parameter_values)
from transmission_bridge.robot_state.core import KinematicsCore

MODEL = load_model(CONFIG / 'example_arm_model.yaml')
JOINTS = list(MODEL.joint_names)


def test_a_lane_step_changes_what_ingest_changes():
    # One core takes what its lane step takes (the rest through ingest_lane and ingest, as
    # the node does), one only ingests: every joint plus a name the model lacks, or a
    # subset; NaN; stamps going back; resets (a clock jump) and model changes (damping) in
    # between. Outputs, poses, counters and the configuration agree to the bit, and so do
    # the values a model change keeps (those of joints reported since the last reset).
    rng = np.random.default_rng(1208)
    stepped, plain = KinematicsCore(MODEL, 'forearm'), KinematicsCore(MODEL, 'forearm')
    n, nb = MODEL.num_positions, len(MODEL.body_names)
    q_out, v_out = (np.empty(n), np.empty(n)), np.empty(n)
    holding, passive = np.empty(n), np.empty(n)
    rows = {core: np.empty((nb, 7)) for core in (stepped, plain)}
    steps, taken, stamp = {}, 0, 10**9
    for k in range(600):
        if k % 150 == 140:
            for core in (stepped, plain):
                core.reset()
        if k % 150 == 149:
            model = apply_parameters(stepped.model, {
                joint_parameter(JOINTS[rng.integers(n)], 'damping'): float(rng.uniform(0, 2))})
            for core in (stepped, plain):
                core.set_model(model)
            for g, w in zip(stepped.configuration, plain.configuration):
                assert np.array_equal(g, w)
        names = JOINTS + ['gripper'] if rng.random() < 0.8 else JOINTS[1:]
        position, velocity = rng.normal(size=len(names)), rng.normal(size=len(names))
        if rng.random() < 0.05:
            (position, velocity)[rng.integers(2)][rng.integers(len(names))] = np.nan
        elif rng.random() < 0.03:           # finite, but its square overflows
            (position, velocity)[rng.integers(2)][rng.integers(len(names))] = 1e200
        stamp += int(rng.integers(1, 1000)) - (3000 if rng.random() < 0.04 else 0)
        want = plain.ingest(names, position, velocity, stamp)
        step = steps.get(tuple(names))
        if step is not None and step(position, velocity, stamp):
            taken += 1
            # What the step leaves to be asked for, asked for as the node does.
            stepped.passive_into(holding, q_out[1], v_out, passive)
            got = (q_out[0], v_out, holding, passive, stepped.energy())
            assert np.array_equal(q_out[1], q_out[0])
        else:
            lane = stepped.lane(names)
            got = None if lane is None else stepped.ingest_lane(lane, position, velocity,
                                                                stamp)
            if got is None:
                got = stepped.ingest(names, position, velocity, stamp)
                lane = stepped.lane(names)
                steps[tuple(names)] = lane and stepped.lane_step(lane, q_out[0], holding)
        assert (got is None) == (want is None)
        if want is not None:
            for g, w in zip(got, want):
                assert np.array_equal(g, w)
            for core in (stepped, plain):
                core.pose_rows(rows[core])
            assert np.array_equal(rows[stepped], rows[plain])
        assert stepped.counters == plain.counters
        for g, w in zip(stepped.configuration, plain.configuration):
            assert np.array_equal(g, w)
    assert taken > 300
    assert plain.counters.stamp_backwards > 5 and plain.counters.unknown_values > 5


def test_many_parameters_at_once_change_those_and_nothing_else():
    # A default pose or a damping reset sets every joint's parameter in one call (one new
    # model); gravity with them.
    values = parameter_values(MODEL)
    many = {joint_parameter(j, 'damping'): 0.1 * (k + 1) for k, j in enumerate(JOINTS)}
    many.update({joint_parameter(JOINTS[2], 'default_position'): 0.4,
                 'gravity': [0.0, 0.5, -9.0]})
    assert parameter_values(apply_parameters(MODEL, many)) == {**values, **many}
    assert parameter_values(MODEL) == values        # the original is untouched


def test_a_mimic_joint_in_joint_states_is_ignored_not_unknown():
    from test_kinematics_mimic import MIMIC_URDF
    model = load_model(MIMIC_URDF)
    core = KinematicsCore(model)
    names = ['shoulder', 'finger_left', 'finger_right', 'tip_joint']
    out = core.ingest(names, [0.3, 0.02, 0.9, 0.9], [], stamp_ns=1)
    assert core.counters.unknown_names == 0 and core.last_new_unknown == ()
    np.testing.assert_array_equal(out.q, [0.3, 0.02])          # the mimic values are not used
    np.testing.assert_array_equal(out.holding, -model.gravity_generalized_forces([0.3, 0.02]))
    # The lane of the same names takes the next message the same way.
    lane = core.lane(names)
    assert lane is not None and lane.num_unknown == 0
    out = core.ingest_lane(lane, np.array([0.1, 0.03, 5.0, 5.0]), np.empty(0), 2)
    np.testing.assert_array_equal(out.q, [0.1, 0.03])
    core.ingest(names + ['stranger'], [0.1, 0.03, 5.0, 5.0, 1.0], [], stamp_ns=3)
    assert core.counters.unknown_names == 1
