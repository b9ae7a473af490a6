"""Both nodes configured from a URDF: the robot_description parameter and topic."""

from conftest import CONFIG
import numpy as np
import pytest
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from ros_harness import Graph, NodeProcess, unique_namespace
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from transmission_bridge.kinematics import load_model
from transmission_bridge.transmissions import load_transmissions

pytestmark = pytest.mark.ros

URDF = CONFIG / 'example_robot.urdf'
YAML_T = CONFIG / 'example_robot_transmissions.yaml'
YAML_M = CONFIG / 'example_arm_model.yaml'
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)


def _start(tmp_path, bridge_args, kin_args):
    ns = unique_namespace('desc')
    common = ['-r', f'__ns:={ns}', '-r', f'/diagnostics:={ns}/diagnostics']
    bridge = NodeProcess('transmission_bridge.bridge.node', [*bridge_args, *common],
                         tmp_path / 'bridge.log')
    kin = NodeProcess('transmission_bridge.kinematics_node.node', [*kin_args, *common],
                      tmp_path / 'kin.log')
    return ns, bridge, kin


def _motors(q_joint):
    ts = load_transmissions(YAML_T)
    return ts.joint_to_actuator('position', q_joint)


def _run_once(g, pub, motors, sec, box, accept=lambda m: True):
    msg = JointState(name=list(load_transmissions(YAML_T).actuator_names),
                     position=list(motors))
    msg.header.stamp.sec = sec
    assert g.spin_until(lambda: any(m.header.stamp.sec == sec and accept(m) for m in box), 20,
                        action=lambda: pub.publish(msg))
    return [m for m in box if m.header.stamp.sec == sec and accept(m)][-1]


def _stop(g, *procs):
    g.close()
    for p in procs:
        assert p.stop() == 0, p.output()
        assert 'Traceback' not in p.output()


def test_robot_description_parameter_gives_the_yaml_results(tmp_path):
    text = URDF.read_text()
    ns, bridge, kin = _start(tmp_path, ['-p', f'robot_description:={text}'],
                             ['-p', f'robot_description:={text}'])
    g = Graph(ns)
    try:
        model = load_model(YAML_M)
        q = model.default_positions + 0.1
        pub = g.node.create_publisher(JointState, 'actuator_states', 10)
        joints = g.collect(JointState, 'joint_states')
        torques = g.collect(JointState, 'kinematics/gravity_torques')
        # Each box waits for its own message: the two subscriptions match at their own pace.
        js = _run_once(g, pub, _motors(q), 11, joints)
        out = _run_once(g, pub, _motors(q), 11, torques)
        yaml_joints = load_transmissions(YAML_T).actuator_to_joint('position', _motors(q))
        assert list(js.position) == list(yaml_joints)
        np.testing.assert_allclose(out.effort, -model.gravity_generalized_forces(
            np.array(js.position)), rtol=0, atol=1e-12)
    finally:
        _stop(g, bridge, kin)


@pytest.mark.parametrize('module,args,words', [
    ('transmission_bridge.bridge.node',
     ['-p', f'transmissions_file:={YAML_T}', '-p', 'robot_description:=<robot name="x"/>'],
     "give 'transmissions_file' or 'robot_description', not both"),
    ('transmission_bridge.bridge.node', [], "parameter 'transmissions_file' or "
                                            "'robot_description' is required"),
    ('transmission_bridge.kinematics_node.node',
     ['-p', f'model_file:={YAML_M}', '-p', 'robot_description:=<robot name="x"/>'],
     "give 'model_file' or 'robot_description', not both"),
    ('transmission_bridge.kinematics_node.node', ['-p', 'robot_description:=<robot name="x">'],
     'robot description is not valid XML'),
])
def test_sources_are_exactly_one(tmp_path, module, args, words):
    proc = NodeProcess(module, [*args, '-r', f'__ns:={unique_namespace("src")}'],
                       tmp_path / 'node.log')
    proc.proc.wait(30)
    out = proc.output()
    assert proc.stop() == 1
    assert words in out and 'Traceback' not in out


def test_nodes_follow_the_robot_description_topic(tmp_path):
    ns, bridge, kin = _start(tmp_path, ['-p', 'use_robot_description_topic:=true'],
                             ['-p', 'use_robot_description_topic:=true'])
    g = Graph(ns)
    try:
        desc = g.node.create_publisher(String, 'robot_description', LATCHED)
        pub = g.node.create_publisher(JointState, 'actuator_states', 10)
        joints = g.collect(JointState, 'joint_states')
        torques = g.collect(JointState, 'kinematics/gravity_torques')
        model = load_model(YAML_M)
        q = model.default_positions.copy()
        text = URDF.read_text()
        desc.publish(String(data=text))        # latched: the nodes get it when they connect
        out = _run_once(g, pub, _motors(q), 21, torques)
        np.testing.assert_allclose(out.effort, -model.gravity_generalized_forces(q), atol=1e-9)
        # A new description: the elbow offset moves by 0.25 rad and the forearm gets heavier.
        changed = text.replace('<offset>0.1</offset>', '<offset>0.35</offset>', 1).replace(
            '<mass value="1.5" />', '<mass value="3.0" />', 1)
        assert changed.count('0.35') == 1 and '"3.0"' in changed
        desc.publish(String(data=changed))
        out2 = _run_once(g, pub, _motors(q), 22, joints,
                         lambda m: abs(dict(zip(m.name, m.position))['elbow'] - q[2] - 0.25)
                         < 1e-9)
        heavy = load_model(changed)
        t2 = _run_once(g, pub, _motors(q), 23, torques)
        np.testing.assert_allclose(t2.effort, -heavy.gravity_generalized_forces(
            np.array(t2.position)), atol=1e-9)
        assert not np.allclose(t2.effort, out.effort)
        # An invalid description is refused; the last good one stays in force.
        desc.publish(String(data=changed.replace('<offset>0.35</offset>',
                                                 '<offset>lots</offset>')))
        g.spin_for(1.0)
        again = _run_once(g, pub, _motors(q), 24, joints)
        assert dict(zip(again.name, again.position))['elbow'] == \
            dict(zip(out2.name, out2.position))['elbow']
        assert 'robot_description refused' in bridge.output()
        assert g.get_parameters('transmission_bridge', ['joints.elbow.offset']) == \
            {'joints.elbow.offset': 0.35}
    finally:
        _stop(g, bridge, kin)


def test_converter_takes_urdf(tmp_path):
    from bag_harness import joint_states, tool
    from transmission_bridge.bag.example import write_actuator_bag
    bag = tmp_path / 'in'
    write_actuator_bag(bag, load_transmissions(YAML_T), seconds=0.2)
    a = tool('convert', bag, tmp_path / 'yaml', '--transmissions', YAML_T, '--model', YAML_M)
    b = tool('convert', bag, tmp_path / 'urdf', '--transmissions', URDF, '--model', URDF)
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    for topic in ('/joint_states', '/kinematics/gravity_torques'):
        ya, ub = joint_states(tmp_path / 'yaml', topic), joint_states(tmp_path / 'urdf', topic)
        assert sorted(ya) == sorted(ub)
        for stamp in ya:
            for x, y in zip(ya[stamp][0][2:], ub[stamp][0][2:]):
                np.testing.assert_allclose(x, y, rtol=0, atol=1e-12)


def test_converter_says_what_a_messy_urdf_made_it_assume(tmp_path):
    from bag_harness import joint_states, tool
    from transmission_bridge.bag.example import write_actuator_bag
    bag = tmp_path / 'in'
    write_actuator_bag(bag, load_transmissions(YAML_T), seconds=0.2)
    messy = tmp_path / 'messy.urdf'
    messy.write_text('\n  ' + URDF.read_text().replace('</robot>', '<sensor name="cam"/></robot>'))
    out = tool('convert', bag, tmp_path / 'out', '--transmissions', messy, '--model', messy)
    assert out.returncode == 0, out.stderr
    # The model's loader reads links and joints, the transmissions' loader transmissions: each
    # says what it assumed, once.
    assert out.stderr.count(f'warning: {messy}: ignored unknown element <sensor> in robot '
                            "'example_arm'") == 1, out.stderr
    assert out.stderr.count(f'warning: {messy}: white space before the XML declaration') == 2
    assert joint_states(tmp_path / 'out', '/joint_states')
