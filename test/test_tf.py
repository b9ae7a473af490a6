"""
TF from the kinematics node, checked as a tf2 listener sees it.

The node runs as its own process on a real robot's URDF (the Franka Panda of
example-robot-data, whose gripper has a mimic joint) and on the SCARA with a lead screw. The
test subscribes to /tf and /tf_static, keeps the latest transform per child frame as a tf2
buffer does, composes the chain from each link up to the root, and compares every link's
pose with the library's forward kinematics (itself checked against Pinocchio).
"""

import math

from conftest import CONFIG
import numpy as np
import pytest
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from robot_corpus import robot
from ros_harness import Graph, NodeProcess, status_values, unique_namespace
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from transmission_bridge.kinematics import load_model
import yaml

tf2_msgs = pytest.importorskip('tf2_msgs.msg', reason='tf2_msgs is not installed (it comes '
                               'with a ROS install; here from ../shared/wheelhouse)')
pytestmark = pytest.mark.ros

# A transform goes through the message as 7 float64: equal to the library's to rounding.
TF_ATOL = 1e-12
STATIC = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                    durability=DurabilityPolicy.TRANSIENT_LOCAL)
LATCHED = STATIC


def _start(tmp_path, urdf, extra=None):
    ns = unique_namespace('tf')
    params = {'model_file': str(urdf)}
    params.update(extra or {})
    pfile = tmp_path / 'params.yaml'
    pfile.write_text(yaml.safe_dump({'/**/kinematics': {'ros__parameters': params}}))
    proc = NodeProcess('transmission_bridge.kinematics_node.node',
                       ['--params-file', str(pfile), '-r', f'__ns:={ns}',
                        '-r', f'/tf:={ns}/tf', '-r', f'/tf_static:={ns}/tf_static',
                        '-r', f'/diagnostics:={ns}/diagnostics'], tmp_path / 'node.log')
    g = Graph(ns)
    g.proc = proc
    g.joints = g.node.create_publisher(JointState, 'joint_states', 10)
    g.tf = g.collect(tf2_msgs.TFMessage, 'tf', 100)
    g.static = g.collect(tf2_msgs.TFMessage, 'tf_static', STATIC)
    g.description = g.collect(String, 'robot_description', LATCHED)
    assert g.spin_until(lambda: g.node.count_subscribers('joint_states') > 0, timeout=15), \
        proc.output()
    return g


def _matrix(t):
    x, y, z, w = (t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w)
    X = np.eye(4)
    X[:3, :3] = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                 [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                 [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
    X[:3, 3] = t.translation.x, t.translation.y, t.translation.z
    return X


def _buffer(messages):
    """Return child frame -> (parent frame, X_parent_child, stamp): the latest of each."""
    out = {}
    for msg in messages:
        for t in msg.transforms:
            out[t.child_frame_id] = (t.header.frame_id, _matrix(t.transform), t.header.stamp)
    return out


def _lookup(buffer, root, frame):
    """Compose the chain from ``frame`` up to ``root``, as tf2's lookupTransform(root, frame)."""
    X = np.eye(4)
    seen = []
    while frame != root:
        assert frame in buffer, f'{frame!r} does not resolve to {root!r} (chain {seen})'
        parent, X_pc, _ = buffer[frame]
        X = X_pc @ X
        seen.append(frame)
        frame = parent
    return X


def _publish_and_collect(g, msg, stamp_sec):
    def have():
        return any(t.header.stamp.sec == stamp_sec for m in g.tf for t in m.transforms)
    assert g.spin_until(have, timeout=15, action=lambda: g.joints.publish(msg)), \
        g.proc.output()
    assert g.spin_until(lambda: g.static, timeout=10), g.proc.output()


@pytest.fixture
def panda(tmp_path):
    path = robot('panda_description/urdf/panda.urdf')
    if path is None:
        pytest.skip('example-robot-data is not installed (pip install example-robot-data)')
    g = _start(tmp_path, path, {'frame_prefix': 'r1/'})
    g.path = path
    yield g
    g.close()
    assert g.proc.stop() == 0, g.proc.output()
    assert 'Traceback' not in g.proc.output()


def test_panda_tf_resolves_every_link_to_the_library_pose(panda):
    model = load_model(panda.path)
    rng = np.random.default_rng(7)
    q = rng.uniform(model.position_lower_limits, model.position_upper_limits)
    names = list(model.joint_names)
    # joint_state_publisher also sends the mimic finger: its value is ignored, not unknown.
    msg = JointState(name=names + ['panda_finger_joint2'], position=list(q) + [0.5])
    msg.header.stamp.sec, msg.header.stamp.nanosec = 42, 7
    _publish_and_collect(panda, msg, 42)
    static = _buffer(panda.static)
    moving = _buffer([m for m in panda.tf if m.transforms[0].header.stamp.sec == 42])
    # One transform per movable joint, mimic included; one per fixed joint on /tf_static.
    assert set(moving) == {'r1/' + b.name for b in model.bodies if b.joint.num_positions}
    assert 'r1/panda_rightfinger' in moving and 'r1/panda_hand' in static
    assert all((s.sec, s.nanosec) == (42, 7) for _, _, s in moving.values())
    buffer = {**static, **moving}
    poses = model.forward_kinematics(q)
    for link, X_WB in poses.items():
        np.testing.assert_allclose(_lookup(buffer, 'r1/panda_link0', 'r1/' + link), X_WB,
                                   rtol=0, atol=TF_ATOL)
    # The mimic finger follows its driver (multiplier 1): both fingers open alike.
    left = _lookup(buffer, 'r1/panda_hand', 'r1/panda_leftfinger')
    right = _lookup(buffer, 'r1/panda_hand', 'r1/panda_rightfinger')
    assert left[1, 3] == pytest.approx(q[-1], abs=TF_ATOL)
    assert right[1, 3] == pytest.approx(-q[-1], abs=TF_ATOL)
    # robot_description is republished, transient local, as robot_state_publisher does.
    assert panda.spin_until(lambda: panda.description, timeout=10)
    assert panda.description[-1].data == panda.path.read_text(encoding='utf-8')


def test_the_screw_joint_is_on_tf_with_its_translation(tmp_path):
    g = _start(tmp_path, CONFIG / 'scara.urdf')
    try:
        model = load_model(CONFIG / 'scara.urdf')
        q = np.array([0.3, -0.4, 2.5])       # j3: the screw, 2.5 rad
        msg = JointState(name=list(model.joint_names), position=list(q))
        msg.header.stamp.sec = 9
        _publish_and_collect(g, msg, 9)
        buffer = {**_buffer(g.static), **_buffer(g.tf)}
        parent, X, _ = buffer['quill']
        # Origin (0.3, 0, 0) in link2, then 2.5 rad about -z and pitch * theta / 2 pi along it.
        assert parent == 'link2'
        assert X[2, 3] == pytest.approx(-0.02 * 2.5 / (2 * math.pi), abs=TF_ATOL)
        assert X[0, 3] == pytest.approx(0.3, abs=TF_ATOL)
        np.testing.assert_allclose(X[:2, :2], [[math.cos(2.5), math.sin(2.5)],
                                               [-math.sin(2.5), math.cos(2.5)]], atol=TF_ATOL)
        for link, X_WB in model.forward_kinematics(q).items():
            np.testing.assert_allclose(_lookup(buffer, model.root_frame, link), X_WB,
                                       rtol=0, atol=TF_ATOL)
    finally:
        g.close()
        assert g.proc.stop() == 0, g.proc.output()


def _stamped_stream(g, names, first_ms, count):
    """Publish ``count`` joint_states stamped 1 ms apart from ``first_ms``; spin between."""
    for i in range(count):
        ms = first_ms + i
        msg = JointState(name=names, position=[0.001 * i] * len(names))
        msg.header.stamp.sec, msg.header.stamp.nanosec = ms // 1000, ms % 1000 * 1_000_000
        g.joints.publish(msg)
        g.spin_for(0.003)


def _ms(stamp):
    return stamp.sec * 1000 + stamp.nanosec // 1_000_000


def test_tf_goes_out_at_publish_frequency_by_the_stamps_and_the_poses_at_every_input(
        tmp_path):
    # robot_state_publisher's publish_frequency (default 20 Hz) caps /tf; the body poses,
    # which a consumer may need at every state, are not capped.
    from geometry_msgs.msg import PoseArray
    g = _start(tmp_path, CONFIG / 'scara.urdf')
    try:
        names = list(load_model(CONFIG / 'scara.urdf').joint_names)
        poses = g.collect(PoseArray, 'kinematics/body_poses', 1000)
        assert g.get_parameters('kinematics', ['publish_frequency']) == {
            'publish_frequency': 20.0}
        _stamped_stream(g, names, 100_000, 240)            # 1 kHz for 0.24 s of stamps
        assert g.spin_until(lambda: len(poses) >= 240, 10), (len(poses), g.proc.output())
        # Every /tf message of the window: one per 50 ms slot from the first stamp.
        assert [_ms(m.transforms[0].header.stamp) for m in g.tf] == [100_000, 100_050,
                                                                     100_100, 100_150, 100_200]
        assert [_ms(m.header.stamp) for m in poses] == list(range(100_000, 100_240))
        # No cap: /tf at every input, as publish_every.tf alone decides.
        assert g.set_parameters('kinematics', {'publish_frequency': 0.0})[0].successful
        refused = g.set_parameters('kinematics', {'publish_frequency': -1.0})[0]
        assert not refused.successful and 'publish_frequency' in refused.reason
        g.tf.clear()
        _stamped_stream(g, names, 200_000, 30)
        assert g.spin_until(lambda: len(g.tf) >= 30, 10), len(g.tf)
        assert [_ms(m.transforms[0].header.stamp) for m in g.tf] == list(range(200_000,
                                                                               200_030))
    finally:
        g.close()
        assert g.proc.stop() == 0, g.proc.output()


MESSY = """
  <?xml version="1.0"?>
<robot name="messy">
  <link name="base"/>
  <link name="arm"><contact/><inertial><origin xyz="0.2 0 0"/><mass value="1.5"/>
    <inertia ixx="0.001" iyy="0.001" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="hand"><inertial><mass value="0.5"/>
    <inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="a" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
    <limit lower="0" upper="-1" effort="1" velocity="1"/></joint>
  <joint name="b" type="revolute"><parent link="arm"/><child link="hand"/>
    <origin xyz="0.4 0 0"/><axis xyz="0 1 0"/><limit lower="-2" upper="2"/></joint>
  <transmission name="head"><type>transmission_interface/HalfDifferentialTransmission</type>
    <actuator name="m1"/><actuator name="m2"/><joint name="a"/><joint name="b"/></transmission>
  <transmission name="elbow"><type>transmission_interface/SimpleTransmission</type>
    <actuator name="elbow_motor"><mechanicalReduction>10</mechanicalReduction></actuator>
    <joint name="b"/></transmission>
</robot>
"""


def test_a_messy_urdf_runs_both_nodes_with_each_warning_logged_once(tmp_path):
    from diagnostic_msgs.msg import DiagnosticArray
    path = tmp_path / 'messy.urdf'
    path.write_text(MESSY)
    ns = unique_namespace('messy')
    common = ['-r', f'__ns:={ns}', '-r', f'/diagnostics:={ns}/diagnostics',
              '-r', f'/tf:={ns}/tf', '-r', f'/tf_static:={ns}/tf_static']
    bridge = NodeProcess('transmission_bridge.bridge.node',
                         ['-p', f'transmissions_file:={path}', '-p', 'diagnostics_period:=0.2',
                          *common], tmp_path / 'bridge.log')
    kin = NodeProcess('transmission_bridge.kinematics_node.node',
                      ['-p', f'model_file:={path}', *common], tmp_path / 'kin.log')
    g = Graph(ns)
    try:
        diagnostics = g.collect(DiagnosticArray, 'diagnostics')
        torques = g.collect(JointState, 'kinematics/gravity_torques')
        pub = g.node.create_publisher(JointState, 'actuator_states', 10)
        joints = g.collect(JointState, 'joint_states')
        msg = JointState(name=['elbow_motor'], position=[5.0])
        msg.header.stamp.sec = 3
        assert g.spin_until(lambda: joints and torques and diagnostics, timeout=20,
                            action=lambda: pub.publish(msg)), bridge.output() + kin.output()
        # The bridge maps what it can: the skipped transmission's joints are named.
        assert joints[-1].name == ['b'] and joints[-1].position[0] == pytest.approx(0.5)
        assert g.spin_until(lambda: 'not_bridged_joints' in status_values(
            diagnostics, 'transmission_bridge'), timeout=10)
        values = status_values(diagnostics, 'transmission_bridge')
        assert values['not_bridged_joints'] == 'a,b'
        # The bridge's joint_states reach the kinematics node: b at 0.5, a at its default.
        assert g.spin_until(lambda: any(list(m.position) == [0.0, 0.5] for m in torques),
                            timeout=10), kin.output()
    finally:
        g.close()
        for proc in (bridge, kin):
            assert proc.stop() == 0, proc.output()
    bridge_log, kin_log = bridge.output(), kin.output()
    assert bridge_log.count("transmission 'head' of type 'transmission_interface/"
                            "HalfDifferentialTransmission' skipped") == 1, bridge_log
    for warning in ('white space before the XML declaration', 'has lower > upper',
                    "ignored unknown element <contact> in link 'arm'",
                    "link 'arm' <inertial>: inertia is not physical"):
        assert kin_log.count(warning) == 1, kin_log
    assert 'Traceback' not in bridge_log + kin_log


def test_without_tf2_msgs_the_node_runs_with_one_warning(tmp_path):
    # A bare pip install has no tf2_msgs: a package of that name that fails to import, first
    # on the path, stands for its absence (rclpy, DDS and the node are the real ones).
    hidden = tmp_path / 'hide' / 'tf2_msgs'
    hidden.mkdir(parents=True)
    (hidden / '__init__.py').write_text("raise ImportError('tf2_msgs is hidden by the test')\n")
    ns = unique_namespace('notf')
    import os
    env = {'PYTHONPATH': os.pathsep.join([str(hidden.parent), os.environ.get('PYTHONPATH', '')])}
    kin = NodeProcess('transmission_bridge.kinematics_node.node',
                      ['-p', f'model_file:={CONFIG / "scara.urdf"}', '-r', f'__ns:={ns}',
                       '-r', f'/diagnostics:={ns}/diagnostics'], tmp_path / 'kin.log', env=env)
    g = Graph(ns)
    try:
        torques = g.collect(JointState, 'kinematics/gravity_torques')
        pub = g.node.create_publisher(JointState, 'joint_states', 10)
        msg = JointState(name=['j1', 'j2', 'j3'], position=[0.0, 0.0, 1.0])
        assert g.spin_until(lambda: torques, timeout=20, action=lambda: pub.publish(msg)), \
            kin.output()
    finally:
        g.close()
        assert kin.stop() == 0, kin.output()
    log = kin.output()
    assert log.count('tf2_msgs is not installed: TF is off') == 1, log
    assert 'Traceback' not in log


def test_outputs_are_in_the_tf_frame_of_base_frame_behind_the_prefix(panda):
    # With frame_prefix r1/, TF's root is r1/panda_link0: the torques and poses say so too
    # (base_frame 'world' is the model's world, the URDF's root link), so a tf2 user can
    # look their frame up.
    from geometry_msgs.msg import PoseArray
    model = load_model(panda.path)
    poses = panda.collect(PoseArray, 'kinematics/body_poses')
    torques = panda.collect(JointState, 'kinematics/gravity_torques')
    msg = JointState(name=list(model.joint_names), position=[0.1] * model.num_positions)
    # /tf_static (latched) can arrive before the first /tf: wait for both.
    assert panda.spin_until(lambda: poses and torques and panda.static and panda.tf,
                            timeout=15, action=lambda: panda.joints.publish(msg)), \
        panda.proc.output()
    assert poses[-1].header.frame_id == torques[-1].header.frame_id == 'r1/panda_link0'
    parents = {t.header.frame_id for m in panda.static + panda.tf for t in m.transforms}
    children = {t.child_frame_id for m in panda.static + panda.tf for t in m.transforms}
    assert 'r1/panda_link0' in parents - children         # the root of TF's tree


def test_base_frame_may_be_the_urdf_root_link_by_its_tf_name(tmp_path):
    """A URDF user names the fixed frame as TF does (the root link), not 'world'."""
    from geometry_msgs.msg import PoseArray
    path = robot('panda_description/urdf/panda.urdf')
    if path is None:
        pytest.skip('example-robot-data is not installed (pip install example-robot-data)')
    g = _start(tmp_path, path, {'base_frame': 'panda_link0'})
    try:
        model = load_model(path)
        q = np.random.default_rng(11).uniform(model.position_lower_limits,
                                              model.position_upper_limits)
        poses = g.collect(PoseArray, 'kinematics/body_poses')
        msg = JointState(name=list(model.joint_names), position=list(q))
        assert g.spin_until(lambda: poses, timeout=15, action=lambda: g.joints.publish(msg)), \
            g.proc.output()
        assert poses[-1].header.frame_id == 'panda_link0'
        fk = model.forward_kinematics(q)      # in the root link's frame, the model's world
        for body, pose in zip(model.body_names, poses[-1].poses):
            p = pose.position
            np.testing.assert_allclose([p.x, p.y, p.z], fk[body][:3, 3], rtol=0, atol=TF_ATOL)
    finally:
        g.close()
        assert g.proc.stop() == 0, g.proc.output()


def test_a_base_frame_that_is_no_frame_stops_startup_naming_it(tmp_path):
    path = robot('panda_description/urdf/panda.urdf')
    if path is None:
        pytest.skip('example-robot-data is not installed (pip install example-robot-data)')
    proc = NodeProcess('transmission_bridge.kinematics_node.node',
                       ['-p', f'model_file:={path}', '-p', 'base_frame:=pelvis',
                        '-r', f'__ns:={unique_namespace("base")}'], tmp_path / 'node.log')
    proc.proc.wait(30)
    out = proc.output()
    assert proc.stop() == 1, out
    assert ("base_frame: unknown frame 'pelvis': neither 'world', the root link "
            "'panda_link0', nor a body of the model") in out
    assert 'Traceback' not in out
