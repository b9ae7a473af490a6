"""KinematicsCore without ROS nodes: ingest, and the node's fast path against it."""

from conftest import CONFIG
from geometry_msgs.msg import PoseArray
import numpy as np
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64
from transmission_bridge.kinematics import load_model
from transmission_bridge.kinematics.parameters import (
    apply_parameters, joint_parameter, parameter_values)
from transmission_bridge.kinematics_node.core import KinematicsCore
from transmission_bridge.kinematics_node.fast import JointStatesRelay

MODEL = load_model(CONFIG / 'example_arm_model.yaml')
JOINTS = list(MODEL.joint_names)


def _relay(core):
    """Return the node's fast path around ``core``, every output due, publishers named."""
    publishers = ('gravity', 'passive', 'poses', [], 'energy', None)
    return JointStatesRelay(core, publishers, [], lambda stamp_ns: (True,) * 6, 'world', [])


def _decoded(sent):
    """Return {output: message} of a relay's ``(publisher, bytes)``."""
    types = {'gravity': JointState, 'passive': JointState, 'poses': PoseArray,
             'energy': Float64}
    return {p: deserialize_message(data, types[p]) for p, data in sent}


def test_a_relay_changes_what_ingest_changes():
    # One core takes what its relay takes (the rest through ingest, then learning, as the
    # node does), one only ingests: every joint plus a name the model lacks, or a subset;
    # NaN; stamps going back; resets (a clock jump) and model changes (damping) in
    # between. Outputs, poses, counters and the configuration agree to the bit, and so do
    # the values a model change keeps (those of joints reported since the last reset).
    rng = np.random.default_rng(1208)
    stepped, plain = KinematicsCore(MODEL, 'forearm'), KinematicsCore(MODEL, 'forearm')
    relay = _relay(stepped)
    n, nb = MODEL.num_positions, len(MODEL.body_names)
    rows = {core: np.empty((nb, 7)) for core in (stepped, plain)}
    taken, stamp = 0, 10**9
    for k in range(600):
        if k % 150 == 140:
            for core in (stepped, plain):
                core.reset()
        if k % 150 == 149:
            model = apply_parameters(stepped.model, {
                joint_parameter(JOINTS[rng.integers(n)], 'damping'): float(rng.uniform(0, 2))})
            for core in (stepped, plain):
                core.set_model(model)
            relay = _relay(stepped)             # the node makes its outputs again
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
        msg = JointState(name=names, position=position.tolist(), velocity=velocity.tolist())
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 10**9)
        data = serialize_message(msg)
        sent = relay.take(data)
        if sent is not None:
            taken += 1
            out = _decoded(sent)
            got = (out['gravity'].position, out['passive'].velocity, out['gravity'].effort,
                   out['passive'].effort, out['energy'].data)
            assert np.array_equal(out['passive'].position, out['gravity'].position)
            poses = np.array([[p.position.x, p.position.y, p.position.z, p.orientation.x,
                               p.orientation.y, p.orientation.z, p.orientation.w]
                              for p in out['poses'].poses])
        else:
            got = stepped.ingest(names, position, velocity, stamp)
            relay.learn(data, msg)
            poses = None if got is None else stepped.pose_rows(rows[stepped])
        assert (got is None) == (want is None)
        if want is not None:
            for g, w in zip(got, want):
                assert np.array_equal(g, w)
            assert np.array_equal(poses, plain.pose_rows(rows[plain]))
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
    # The fast path takes the next message of the same names the same way.
    relay = _relay(core)
    msg = JointState(name=names, position=[0.3, 0.02, 0.9, 0.9])
    relay.learn(serialize_message(msg), msg)
    msg.position, msg.header.stamp.nanosec = [0.1, 0.03, 5.0, 5.0], 2
    out = _decoded(relay.take(serialize_message(msg)))['gravity']
    np.testing.assert_array_equal(out.position, [0.1, 0.03])
    assert core.counters.unknown_names == 0
    core.ingest(names + ['stranger'], [0.1, 0.03, 5.0, 5.0, 1.0], [], stamp_ns=3)
    assert core.counters.unknown_names == 1
