"""Both nodes together, as robot.launch.py wires them: actuator states in, gravity torques out."""

from conftest import CONFIG
import numpy as np
import pytest
from ros_harness import Graph, NodeProcess, unique_namespace
from sensor_msgs.msg import JointState
from transmission_bridge.kinematics import holding_torques, load_model
from transmission_bridge.transmissions import load_transmissions

pytestmark = pytest.mark.ros

TRANSMISSIONS = CONFIG / 'example_robot_transmissions.yaml'
MODEL = CONFIG / 'example_arm_model.yaml'


def _chain(tmp_path, tag, bridge_args=()):
    """Start the bridge and the kinematics node in a namespace of their own; return both."""
    ns = unique_namespace(tag)
    common = ['-r', f'__ns:={ns}', '-r', f'/diagnostics:={ns}/diagnostics']
    bridge = NodeProcess('transmission_bridge.bridge.node',
                         ['-p', f'transmissions_file:={TRANSMISSIONS}', *bridge_args, *common],
                         tmp_path / 'bridge.log')
    kin = NodeProcess('transmission_bridge.kinematics_node.node',
                      ['-p', f'model_file:={MODEL}', *common], tmp_path / 'kin.log')
    return ns, bridge, kin


def test_actuator_states_become_gravity_torques(tmp_path):
    ns, bridge, kin = _chain(tmp_path, 'robot')
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


# How close the motor torques of the chain must be to the library's (float round-off of the two
# maps and a JointState round trip).
MOTOR_ATOL = 1e-9


def test_motor_space_gravity_compensation_end_to_end(tmp_path):
    """Issue 15: actuator_commands carries each motor's holding torque, power through it kept."""
    # As robot.launch.py wires it (joint_commands_from:=gravity).
    ns, bridge, kin = _chain(tmp_path, 'ff', ['-r', 'joint_commands:=kinematics/gravity_torques'])
    g = Graph(ns)
    try:
        ts = load_transmissions(TRANSMISSIONS)
        model = load_model(MODEL)
        rng = np.random.default_rng(15)
        pub = g.node.create_publisher(JointState, 'actuator_states', 10)
        commands = g.collect(JointState, 'actuator_commands')
        to_ts = [model.joint_names.index(n) for n in ts.joint_names]
        for pose in range(4):
            q_model = model.default_positions + rng.uniform(-0.4, 0.4, model.num_positions)
            q = q_model[to_ts]                                   # transmission-set order
            motors = ts.joint_to_actuator('position', q)
            msg = JointState(name=list(ts.actuator_names), position=motors.tolist())
            msg.header.stamp.sec = 100 + pose
            assert g.spin_until(lambda: any(m.header.stamp.sec == 100 + pose for m in commands),
                                timeout=20, action=lambda: pub.publish(msg)), (
                bridge.output() + kin.output())
            out = [m for m in commands if m.header.stamp.sec == 100 + pose][-1]
            assert list(out.name) == list(ts.actuator_names)
            holding = holding_torques(model.gravity_generalized_forces(q_model))[to_ts]
            expected = ts.joint_to_actuator('effort', holding)
            np.testing.assert_allclose(out.effort, expected, rtol=0, atol=MOTOR_ATOL)
            np.testing.assert_allclose(out.position, motors, rtol=0, atol=MOTOR_ATOL)
            for _ in range(3):              # power through the transmissions, any velocity
                v_joint = rng.normal(size=ts.num_joints)
                v_motor = ts.joint_to_actuator('velocity', v_joint)
                assert np.dot(out.effort, v_motor) == pytest.approx(
                    np.dot(holding, v_joint), rel=0, abs=MOTOR_ATOL)
            assert not np.allclose(expected, holding)    # the maps really do something here
    finally:
        g.close()
        assert bridge.stop() == 0, bridge.output()
        assert kin.stop() == 0, kin.output()


def test_payload_set_at_runtime_changes_each_motors_holding_torque_at_once(tmp_path):
    """Issue 35: one SetParametersAtomically call; the next actuator_commands carry it."""
    ns, bridge, kin = _chain(tmp_path, 'payload',
                             ['-r', 'joint_commands:=kinematics/gravity_torques'])
    g = Graph(ns)
    try:
        ts = load_transmissions(TRANSMISSIONS)
        model = load_model(MODEL)
        to_ts = [model.joint_names.index(n) for n in ts.joint_names]
        q_model = model.default_positions + 0.2
        motors = ts.joint_to_actuator('position', q_model[to_ts])
        pub = g.node.create_publisher(JointState, 'actuator_states', 10)
        commands = g.collect(JointState, 'actuator_commands')

        def motor_torques(m, stamp):
            msg = JointState(name=list(ts.actuator_names), position=motors.tolist())
            msg.header.stamp.sec = stamp
            assert g.spin_until(lambda: any(c.header.stamp.sec == stamp for c in commands),
                                timeout=20, action=lambda: pub.publish(msg)), (
                bridge.output() + kin.output())
            out = [c for c in commands if c.header.stamp.sec == stamp][-1]
            expected = ts.joint_to_actuator(
                'effort', holding_torques(m.gravity_generalized_forces(q_model))[to_ts])
            return np.asarray(out.effort), expected

        got, expected = motor_torques(model, 200)
        np.testing.assert_allclose(got, expected, rtol=0, atol=MOTOR_ATOL)
        result = g.set_parameters('kinematics', {'payload.body': 'tool', 'payload.mass': 1.5,
                                                 'payload.com': [0.0, 0.0, 0.05]},
                                  atomically=True)
        assert result.successful, result.reason
        loaded = model.with_payload('tool', 1.5, (0.0, 0.0, 0.05))
        got, expected = motor_torques(loaded, 201)
        np.testing.assert_allclose(got, expected, rtol=0, atol=MOTOR_ATOL)
        assert np.abs(got - motor_torques(model, 200)[1]).max() > 1e-3    # it did change
        bad = g.set_parameters('kinematics', {'payload.mass': -1.0})[0]
        assert not bad.successful and '>= 0' in bad.reason
        got, _ = motor_torques(loaded, 202)                 # nothing changed
        np.testing.assert_allclose(got, expected, rtol=0, atol=MOTOR_ATOL)
        result = g.set_parameters('kinematics', {'payload.mass': 0.0})[0]
        assert result.successful, result.reason
        got, expected = motor_torques(model, 203)
        np.testing.assert_allclose(got, expected, rtol=0, atol=MOTOR_ATOL)
    finally:
        g.close()
        assert bridge.stop() == 0, bridge.output()
        assert kin.stop() == 0, kin.output()


def _stack(tmp_path, tag, bridge_params):
    """Start both nodes in one process (robot_stack), wired as robot.launch.py wires them."""
    import yaml
    ns = unique_namespace(tag)
    params = tmp_path / 'stack.yaml'
    params.write_text(yaml.safe_dump({
        '/**/transmission_bridge': {'ros__parameters': {
            'transmissions_file': str(TRANSMISSIONS), **bridge_params}},
        '/**/kinematics': {'ros__parameters': {'model_file': str(MODEL)}}}))
    stack = NodeProcess('transmission_bridge.robot_stack',
                        ['--params-file', str(params), '-r', f'__ns:={ns}',
                         '-r', f'/diagnostics:={ns}/diagnostics',
                         '-r', 'transmission_bridge:joint_commands:=kinematics/gravity_torques'],
                        tmp_path / 'stack.log')
    return ns, stack


# Poses sent through the one-process stack, one at a time (the next once the last answered).
STACK_POSES = 150


@pytest.mark.parametrize('burner', ['quiet', 'burner'], indirect=True)
def test_one_process_stack_gives_every_motor_its_holding_torque(tmp_path, burner):
    """
    composed:=true: both nodes in one process, every actuator_commands message checked.

    The bridge and the kinematics node share one executor in ``robot_stack``; the holding
    torques go from one to the other inside the process. Each of STACK_POSES random poses
    comes back exactly once on actuator_commands as the library's holding torque of each
    motor (nothing lost, nothing more: no watchdog hold, no second path), quiet and beside a
    CPU burner; the parameters reached each node by its name (the kinematics node's model,
    the bridge's own command timeout).
    """
    ns, stack = _stack(tmp_path, 'stack', {'command_timeout': 0.0})
    g = Graph(ns)
    sent = {}
    try:
        ts = load_transmissions(TRANSMISSIONS)
        model = load_model(MODEL)
        to_ts = [model.joint_names.index(n) for n in ts.joint_names]
        rng = np.random.default_rng(7101)
        pub = g.node.create_publisher(JointState, 'actuator_states', 100)
        commands = g.collect(JointState, 'actuator_commands', 1000)
        torques = g.collect(JointState, 'kinematics/gravity_torques', 1000)
        assert g.spin_until(lambda: pub.get_subscription_count() > 0
                            and g.node.count_publishers('actuator_commands') > 0, 30), (
            stack.output())
        g.spin_for(0.5)                 # the readers matched both ways (DDS discovery)
        for k in range(STACK_POSES):
            q_model = model.default_positions + rng.uniform(-0.4, 0.4, model.num_positions)
            msg = JointState(name=list(ts.actuator_names),
                             position=ts.joint_to_actuator('position', q_model[to_ts]).tolist())
            msg.header.stamp.sec, msg.header.stamp.nanosec = 300, k + 1
            sent[k + 1] = q_model
            pub.publish(msg)
            assert g.spin_until(lambda: len(commands) > k, 10), (k, stack.output())
        g.spin_for(0.3)
    finally:
        g.close()
        assert stack.stop() == 0, stack.output()
    assert [m.header.stamp.nanosec for m in commands] == list(range(1, STACK_POSES + 1))
    assert len(torques) == STACK_POSES
    for out in commands:                                    # every actuator_commands message
        q_model = sent[out.header.stamp.nanosec]
        holding = holding_torques(model.gravity_generalized_forces(q_model))[to_ts]
        assert list(out.name) == list(ts.actuator_names)
        np.testing.assert_allclose(out.effort, ts.joint_to_actuator('effort', holding),
                                   rtol=0, atol=MOTOR_ATOL)
    assert 'Traceback' not in stack.output()


def test_one_process_stack_stops_whole_on_a_bad_parameter(tmp_path):
    """A bad value for either node stops the process with one line naming it, no traceback."""
    import yaml
    for node, key, value, named in (
            ('kinematics', 'model_file', str(tmp_path / 'missing.yaml'), 'missing.yaml'),
            ('transmission_bridge', 'joints.elbw.offset', 0.1, "'elbw'")):
        params = tmp_path / f'{node}.yaml'
        params.write_text(yaml.safe_dump({
            '/**/transmission_bridge': {'ros__parameters': {
                'transmissions_file': str(TRANSMISSIONS)}},
            '/**/kinematics': {'ros__parameters': {'model_file': str(MODEL)}},
            f'/**/{node}': {'ros__parameters': {
                key: value, **({'transmissions_file': str(TRANSMISSIONS)}
                               if node == 'transmission_bridge' else {})}}}))
        stack = NodeProcess('transmission_bridge.robot_stack',
                            ['--params-file', str(params), '-r',
                             f'__ns:={unique_namespace("bad")}'], tmp_path / f'{node}.log')
        stack.proc.wait(60)
        out = stack.output()
        assert stack.proc.returncode == 1, out
        fatal = [line for line in out.splitlines() if '[FATAL]' in line]
        assert len(fatal) == 1 and f'[{node}]' in fatal[0] and named in fatal[0], out
        assert 'Traceback' not in out, out
