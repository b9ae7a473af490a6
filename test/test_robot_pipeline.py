"""Both nodes together, as robot.launch.py wires them: actuator states in, gravity torques out."""

from conftest import CONFIG
import numpy as np
import pytest
from ros_harness import Graph, NodeProcess, unique_namespace
from sensor_msgs.msg import JointState
from transmission_bridge.kinematics import load_model
from transmission_bridge.transmissions import load_transmissions

pytestmark = pytest.mark.ros

TRANSMISSIONS = CONFIG / 'example_robot_transmissions.yaml'
MODEL = CONFIG / 'example_arm_model.yaml'


def test_actuator_states_become_gravity_torques(tmp_path):
    ns = unique_namespace('robot')
    common = ['-r', f'__ns:={ns}', '-r', f'/diagnostics:={ns}/diagnostics']
    bridge = NodeProcess('transmission_bridge.bridge_node',
                         ['-p', f'transmissions_file:={TRANSMISSIONS}', *common],
                         tmp_path / 'bridge.log')
    kin = NodeProcess('transmission_bridge.kinematics_node',
                      ['-p', f'model_file:={MODEL}', *common], tmp_path / 'kin.log')
    g = Graph(ns)
    try:
        ts = load_transmissions(TRANSMISSIONS)
        model = load_model(MODEL)
        rng = np.random.default_rng(12)
        q_joint = model.default_positions + rng.uniform(-0.3, 0.3, model.num_positions)
        order = [ts.joint_names.index(n) for n in model.joint_names]
        q_in_ts_order = np.empty(ts.num_joints)
        q_in_ts_order[order] = q_joint
        motors = ts.joint_to_actuator('position', q_in_ts_order)
        msg = JointState(name=list(ts.actuator_names), position=motors.tolist())
        msg.header.stamp.sec = 77
        pub = g.node.create_publisher(JointState, 'actuator_states', 10)
        torques = g.collect(JointState, 'kinematics/gravity_torques')
        assert g.spin_until(lambda: any(m.header.stamp.sec == 77 for m in torques), timeout=20,
                            action=lambda: pub.publish(msg)), bridge.output() + kin.output()
        out = [m for m in torques if m.header.stamp.sec == 77][-1]
        assert list(out.name) == list(model.joint_names)
        # The motors were computed from q_joint, so the chain must give q_joint back
        # (round trip through both transmission maps) and the model's holding torque there.
        np.testing.assert_allclose(out.position, q_joint, rtol=0, atol=1e-12)
        np.testing.assert_allclose(out.effort, -model.gravity_generalized_forces(q_joint),
                                   rtol=0, atol=1e-9)
    finally:
        g.close()
        assert bridge.stop() == 0, bridge.output()
        assert kin.stop() == 0, kin.output()
