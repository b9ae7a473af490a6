"""
The bridge node on drives that speak their own units, over DDS, as a user starts it.

``config/cia402_arm_transmissions.yaml`` (the example arm on CiA 402 drives, a current-mode
drive, ODrives and Dynamixels) from a params file: actuator states published in the drives'
units (worked here from each unit's definition) give, in every joint_states message of the
window, the SI arm's joint state; every actuator_commands message, read back through the
drives' law, is the SI arm's command. One message at a time (the next sent once the last
was answered), quiet and beside a CPU burner.
"""

from conftest import CONFIG
import numpy as np
import pytest
from ros_harness import started_node
from sensor_msgs.msg import JointState
from test_driver_units import _expected_factors
from transmission_bridge.mapping.commands import CommandMapper
from transmission_bridge.transmissions import load_transmissions

FILE = CONFIG / 'cia402_arm_transmissions.yaml'
SI = load_transmissions(CONFIG / 'example_robot_transmissions.yaml')
SENT = 120
SAME = 1e-9         # rad, rad/s, N·m: the law's rounding, far below any unit's step


@pytest.mark.parametrize('burner', ['quiet', 'burner'], indirect=True)
def test_every_state_and_command_of_a_bridge_in_driver_units(tmp_path, burner):
    f, o = _expected_factors(FILE)
    rng = np.random.default_rng(7204)
    names = list(SI.actuator_names)
    sent_states = {}
    with started_node(tmp_path, 'transmission_bridge.bridge.node', 'transmission_bridge',
                      {'transmissions_file': str(FILE), 'command_timeout': 0.0},
                      'units_node', 'actuator_states') as graph:
        joints = graph.collect(JointState, 'joint_states', 1000)
        motors = graph.collect(JointState, 'actuator_commands', 1000)
        states = graph.node.create_publisher(JointState, 'actuator_states', 100)
        commands = graph.node.create_publisher(JointState, 'joint_commands', 100)
        assert graph.spin_until(lambda: graph.node.count_subscribers('joint_commands') > 0
                                and states.get_subscription_count() > 0
                                and graph.node.count_publishers('joint_states') > 0
                                and graph.node.count_publishers('actuator_commands') > 0, 15)
        graph.spin_for(0.5)             # the readers matched both ways (DDS discovery)
        for k in range(SENT):
            q = SI.default_positions + rng.normal(0, 0.05, SI.num_joints)
            values = np.stack([SI.joint_to_actuator('position', q),
                               rng.normal(0, 1, SI.num_actuators),
                               rng.normal(0, 0.5, SI.num_actuators)])
            driven = (values - o) / f
            msg = JointState(name=names, position=list(driven[0]), velocity=list(driven[1]),
                             effort=list(driven[2]))
            msg.header.stamp.sec, msg.header.stamp.nanosec = 100, k + 1
            sent_states[k + 1] = values
            states.publish(msg)
            assert graph.spin_until(lambda: len(joints) > k, 5), (k, graph.proc.output())
        sent_commands = []
        for k in range(SENT):
            q = SI.default_positions + rng.normal(0, 0.05, SI.num_joints)
            qd, tau = rng.normal(0, 0.3, (2, SI.num_joints))
            msg = JointState(name=list(SI.joint_names), position=list(q), velocity=list(qd),
                             effort=list(tau))
            msg.header.stamp.sec, msg.header.stamp.nanosec = 200, k + 1
            sent_commands.append(msg)
            commands.publish(msg)
            assert graph.spin_until(lambda: len(motors) > k, 5), (k, graph.proc.output())
        graph.spin_for(0.2)
    assert len(joints) == SENT and len(motors) == SENT     # nothing lost, nothing more
    reference = SI.state_map()
    for msg in joints:                                       # every joint_states message
        values = sent_states[msg.header.stamp.nanosec]
        want = np.empty((3, SI.num_joints))
        assert reference.writer(want)(np.concatenate([values.ravel(), [1.0]]))
        assert list(msg.name) == list(SI.joint_names)
        for got, expected in zip((msg.position, msg.velocity, msg.effort), want):
            np.testing.assert_allclose(got, expected, rtol=SAME, atol=SAME)
    mapper = CommandMapper(SI)
    by_stamp = {m.header.stamp.nanosec: m for m in motors}
    for sent in sent_commands:                               # every actuator_commands message
        want = mapper.map_command(sent.name, sent.position, sent.velocity, sent.effort)
        got = by_stamp[sent.header.stamp.nanosec]
        cols = [SI.actuator_index[m] for m in got.name]
        assert tuple(got.name) == want.names
        for i, (values, expected) in enumerate(zip((got.position, got.velocity, got.effort),
                                                   want[1:])):
            np.testing.assert_allclose(f[i, cols] * np.array(values) + o[i, cols], expected,
                                       rtol=SAME, atol=SAME)
