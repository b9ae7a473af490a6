"""
Joint impedance through the bridge over DDS: gains as parameters, both outputs, safety.

The bridge runs as a process; the test's motors hold still at a pose and report it. What
the bridge sends is checked against the joint law computed here: q and q̇ from the motors'
pose through the set's position map, J by central differences of that map (never the
Jacobian under test), τ_a = Jᵀ τ_j by solving Jᵀ's definition through those differences.
"""

import contextlib
import time

from diagnostic_msgs.msg import DiagnosticArray
from lifecycle_msgs.srv import ChangeState
import numpy as np
import pytest
from ros_harness import started_node
from sensor_msgs.msg import JointState

from transmission_bridge.transmissions import load_transmissions
from transmission_oracles import fd_jacobian

CONFIG = 'config/example_robot_transmissions.yaml'
LEGGED = 'config/legged_robot.urdf'
NODE = 'transmission_bridge'
WRIST = ['wrist_pitch', 'wrist_roll']
STATE_PERIOD = 0.005
FD_TOL = 1e-5           # central differences through the position map, relative
EXACT = 1e-9
SETTLED = 0.05          # rad/s: the largest joint speed of legs at rest


class Still:
    """Motors that report a fixed pose at 200 Hz (the bridge's commands are recorded)."""

    def __init__(self, graph, tset, q):
        self.graph, self.tset = graph, tset
        self.theta = tset.joint_to_actuator('position', np.asarray(q, dtype=float))
        self.thetad = np.zeros(tset.num_actuators)
        self.silent = set()
        self.efforts, self.mit = [], []
        node = graph.node
        node.create_subscription(JointState, 'actuator_commands',
                                 lambda m: self.efforts.append((time.monotonic(), m)), 1000)
        self.pub = node.create_publisher(JointState, 'actuator_states', 10)
        node.create_timer(STATE_PERIOD, self._tick)

    def _tick(self):
        names = [n for n in self.tset.actuator_names if n not in self.silent]
        idx = [self.tset.actuator_index[n] for n in names]
        msg = JointState(name=names, position=self.theta[idx].tolist(),
                         velocity=self.thetad[idx].tolist(), effort=[0.0] * len(names))
        msg.header.stamp = self.graph.node.get_clock().now().to_msg()
        self.pub.publish(msg)


def _commands(graph):
    """
    Return a joint_commands publisher matched with the bridge.

    Matched here is not matched there: the bridge's best-effort reader may not yet know this
    writer and drop its first message (seen in CI). A command the test waits on is resent.
    """
    pub = graph.node.create_publisher(JointState, 'joint_commands', 10)
    assert graph.spin_until(lambda: pub.get_subscription_count() > 0, timeout=10)
    return pub


def _last_effort(motors, names, since):
    for received, msg in reversed(motors.efforts):
        if received >= since and set(names) <= set(msg.name) and len(msg.effort):
            return dict(zip(msg.name, msg.effort))
    return None


def _wait_effort(graph, motors, names, since, timeout=5.0, resend=None):
    assert graph.spin_until(lambda: _last_effort(motors, names, since) is not None,
                            timeout=timeout, action=resend, period=0.1)
    return _last_effort(motors, names, since)


@pytest.fixture
def wrist(tmp_path):
    tset = load_transmissions(CONFIG)
    params = {'transmissions_file': CONFIG, 'gains.wrist_pitch.p': 40.0,
              'gains.wrist_pitch.d': 2.0, 'gains.wrist_roll.p': 10.0, 'command_timeout': 0.0}
    with started_node(tmp_path, 'transmission_bridge.bridge.node', NODE, params, 'imp',
                      'actuator_states') as graph:
        q = tset.default_positions.copy()
        motors = Still(graph, tset, q)
        motors.thetad[tset.actuator_index['wrist_left_motor']] = 5.0     # the wrist moving
        graph.spin_for(0.5)
        yield graph, tset, motors


WRIST_KP, WRIST_KD = np.array([40.0, 10.0]), np.array([2.0, 0.0])    # the fixture's gains
WRIST_MOTORS = ['wrist_left_motor', 'wrist_right_motor']


def _wrist_law(graph, tset, motors, target, target_v, tau_ff):
    """
    Send the wrist a target; return (efforts received, the joint law's τ_j at the wrist, J).

    q and q̇ from the motors' pose through the set's position map, J by differences; τ_j
    includes the damping loss b q̇ the bridge adds back.
    """
    pub = _commands(graph)
    q = tset.actuator_to_joint('position', motors.theta)
    J = fd_jacobian(tset, motors.theta)
    qd = J @ motors.thetad
    idx = [tset.joint_index[j] for j in WRIST]
    target = q[idx] if target is None else np.asarray(target)
    since = time.monotonic()
    command = JointState(name=WRIST, position=target.tolist(), velocity=list(target_v),
                         effort=list(tau_ff))
    got = _wait_effort(graph, motors, WRIST_MOTORS, since, resend=lambda: pub.publish(command))
    b = np.array([tset.joint(j).damping for j in WRIST])
    tau_j = np.zeros(tset.num_joints)
    tau_j[idx] = (WRIST_KP * (target - q[idx]) + WRIST_KD * (np.asarray(target_v) - qd[idx])
                  + tau_ff + b * qd[idx])
    return got, tau_j, J, since


def test_effort_output_is_the_transposed_jacobian_of_the_joint_law(wrist):
    graph, tset, motors = wrist
    got, tau_j, J, since = _wrist_law(graph, tset, motors, [0.5, -0.2], [0.1, 0.0],
                                      [1.0, -0.5])
    want = J.T @ tau_j              # virtual work: θ̇ᵀ τ_a = q̇ᵀ τ_j for every θ̇
    for m in WRIST_MOTORS:
        assert got[m] == pytest.approx(want[tset.actuator_index[m]], rel=FD_TOL, abs=EXACT)
    # the streamed positions never reach the wrist motors as positions
    assert all(not len(m.position) for t, m in motors.efforts
               if t >= since and 'wrist_left_motor' in m.name)


def test_an_effort_beyond_a_joint_limit_scales_the_whole_command(wrist):
    """The wrist joints' effort limit (100 N·m): the law's efforts scaled as a whole."""
    graph, tset, motors = wrist
    # at the measured pose, the pitch's feed-forward beyond its 100 N·m
    got, tau_j, J, _ = _wrist_law(graph, tset, motors, None, [0.0, 0.0], [150.0, -30.0])
    idx = [tset.joint_index[j] for j in WRIST]
    limit = np.array([tset.joint(j).effort_limit for j in WRIST])
    factor = 1.0 / np.max(np.abs(tau_j[idx]) / limit)
    assert factor < 0.9                                     # the case: beyond, scaled
    want = J.T @ tau_j * factor
    for m in WRIST_MOTORS:
        assert got[m] == pytest.approx(want[tset.actuator_index[m]], rel=FD_TOL, abs=EXACT)


def test_bad_gains_are_refused_and_change_nothing(wrist):
    graph, _, _ = wrist
    for value in (-1.0, float('nan'), float('inf')):
        result = graph.set_parameters(NODE, {'gains.wrist_pitch.p': value})[0]
        assert not result.successful and 'gains.wrist_pitch.p' in result.reason
    assert graph.get_parameters(NODE, ['gains.wrist_pitch.p'])['gains.wrist_pitch.p'] == 40.0


def test_a_silent_motor_stops_its_transmission_s_commands(wrist):
    graph, tset, motors = wrist
    pub = _commands(graph)
    _wait_effort(graph, motors, ['wrist_left_motor'], time.monotonic(),
                 resend=lambda: pub.publish(JointState(name=WRIST, position=[0.5, 0.0])))
    motors.silent.add('wrist_right_motor')
    graph.spin_for(0.8)                     # stale_timeout 0.5 s
    since = time.monotonic()
    graph.spin_for(0.5)
    assert _last_effort(motors, ['wrist_left_motor'], since) is None


def test_deactivated_bridge_sends_no_impedance(wrist):
    graph, tset, motors = wrist
    pub = _commands(graph)
    _wait_effort(graph, motors, ['wrist_left_motor'], time.monotonic(),
                 resend=lambda: pub.publish(JointState(name=WRIST, position=[0.5, 0.0])))
    change = ChangeState.Request()
    change.transition.label = 'deactivate'
    assert graph.call(ChangeState, f'{NODE}/change_state', change).success
    graph.spin_for(0.2)
    since = time.monotonic()
    graph.spin_for(0.5)
    assert _last_effort(motors, ['wrist_left_motor'], since) is None
    change.transition.label = 'activate'
    assert graph.call(ChangeState, f'{NODE}/change_state', change).success


def test_stopped_targets_take_the_watchdog_s_hold_and_zero_effort(wrist):
    graph, tset, motors = wrist
    motors.thetad[:] = 0.0
    pub = _commands(graph)
    assert graph.set_parameters(NODE, {'command_timeout': 0.3})[0].successful
    names = ['wrist_left_motor', 'wrist_right_motor']
    pushing = _wait_effort(graph, motors, names, time.monotonic(), resend=lambda: pub.publish(
        JointState(name=WRIST, position=[0.5, -0.2])))
    assert abs(pushing['wrist_left_motor']) > 1e-3
    graph.spin_for(0.6)                     # past the timeout: targets at the measured pose
    held = _wait_effort(graph, motors, names, time.monotonic())
    assert max(abs(v) for v in held.values()) < EXACT
    assert graph.set_parameters(NODE, {'on_command_timeout': 'zero_effort'})[0].successful
    pub.publish(JointState(name=WRIST, position=[0.5, -0.2]))
    graph.spin_for(0.6)
    zero = _wait_effort(graph, motors, names, time.monotonic())
    assert max(abs(v) for v in zero.values()) == 0.0
    diag = graph.collect(DiagnosticArray, 'diagnostics')
    assert graph.spin_until(lambda: any(kv.key == 'impedance_commands' and int(kv.value) > 0
                                        for m in diag for s in m.status for kv in s.values))


@contextlib.contextmanager
def _legged(tmp_path, params, tag):
    """Yield (graph, set, still motors, joint_commands publisher) of a legged-robot bridge."""
    tset = load_transmissions(LEGGED)
    with started_node(tmp_path, 'transmission_bridge.bridge.node', NODE,
                      {'transmissions_file': LEGGED, **params}, tag,
                      'actuator_states') as graph:
        motors = Still(graph, tset, tset.default_positions.copy())
        pub = _commands(graph)
        graph.spin_for(0.5)
        yield graph, tset, motors, pub


def test_motor_gains_through_the_legged_robot_s_linkages(tmp_path):
    dyn = pytest.importorskip('control_msgs.msg', reason='control_msgs is not installed')
    joints = ['left_knee', 'left_ankle_pitch', 'left_ankle_roll']
    kp = {'left_knee': 60.0, 'left_ankle_pitch': 30.0, 'left_ankle_roll': 20.0}
    kd = {'left_knee': 1.5, 'left_ankle_pitch': 0.8, 'left_ankle_roll': 0.5}
    params = {'impedance_output': 'motor_gains', 'command_timeout': 0.0,
              **{f'gains.{j}.p': kp[j] for j in joints}, **{f'gains.{j}.d': kd[j] for j in joints}}
    with _legged(tmp_path, params, 'impl') as (graph, tset, motors, pub):
        q0 = tset.default_positions.copy()
        got = graph.collect(dyn.DynamicJointState, 'actuator_impedance_commands')
        graph.spin_for(0.2)
        target = {'left_knee': 0.05, 'left_ankle_pitch': -0.03, 'left_ankle_roll': 0.02}
        tau_ff = {'left_knee': 2.0, 'left_ankle_pitch': 0.0, 'left_ankle_roll': -1.0}
        command = JointState(name=joints,
                             position=[q0[tset.joint_index[j]] + target[j] for j in joints],
                             effort=[tau_ff[j] for j in joints])
        assert graph.spin_until(lambda: len(got) > 5, action=lambda: pub.publish(command),
                                period=0.1)
        msg = got[-1]
        theta = motors.theta
        q = tset.actuator_to_joint('position', theta)
        J = fd_jacobian(tset, theta)
        idx = [tset.joint_index[j] for j in joints]
        names = list(msg.joint_names)
        acts = [tset.actuator_index[n] for n in names]
        Jb = J[np.ix_(idx, acts)]
        K = Jb.T @ np.diag([kp[j] for j in joints]) @ Jb
        D = Jb.T @ np.diag([kd[j] for j in joints]) @ Jb
        table = {n: dict(zip(v.interface_names, v.values))
                 for n, v in zip(names, msg.interface_values)}
        for r, n in enumerate(names):
            assert table[n]['stiffness'] == pytest.approx(K[r, r], rel=FD_TOL)
            assert table[n]['damping'] == pytest.approx(D[r, r], rel=FD_TOL)
        # each motor's own law at the measured (still) state: k (θ* − θ) + d θ̇* + f, against
        # the joint law through Jᵀ, to first order in the small offsets
        motor_law = np.array([table[n]['stiffness'] * (table[n]['position'] - theta[a])
                              + table[n]['damping'] * table[n]['velocity'] + table[n]['effort']
                              for n, a in zip(names, acts)])
        tau_j = np.array([kp[j] * (q0[tset.joint_index[j]] + target[j] - q[tset.joint_index[j]])
                          + tau_ff[j] for j in joints])
        joint_law = Jb.T @ tau_j
        assert np.abs(motor_law - joint_law).max() < 0.05 * np.abs(joint_law).max()
        # passive: the motor-space spring's matrix as the bridge assembles it
        assert np.linalg.eigvalsh(K).min() >= -EXACT * np.abs(K).max()


def test_effort_output_through_the_legged_robot_s_linkages(tmp_path):
    """Torque-controlled motors behind knee and ankle linkages: τ_a = Jᵀ τ_j, J by differences."""
    joints = ['left_knee', 'left_ankle_pitch', 'left_ankle_roll']
    kp = {'left_knee': 60.0, 'left_ankle_pitch': 30.0, 'left_ankle_roll': 20.0}
    params = {'command_timeout': 0.0, **{f'gains.{j}.p': kp[j] for j in joints}}
    with _legged(tmp_path, params, 'impe') as (graph, tset, motors, pub):
        q0 = tset.default_positions.copy()
        target = {'left_knee': 0.05, 'left_ankle_pitch': -0.03, 'left_ankle_roll': 0.02}
        tau_ff = {'left_knee': 2.0, 'left_ankle_pitch': 0.0, 'left_ankle_roll': -1.0}
        command = JointState(name=joints,
                             position=[q0[tset.joint_index[j]] + target[j] for j in joints],
                             effort=[tau_ff[j] for j in joints])
        names = ['left_knee_motor', 'left_ankle_upper_motor', 'left_ankle_lower_motor']
        got = _wait_effort(graph, motors, names, time.monotonic(),
                           resend=lambda: pub.publish(command))
        q = tset.actuator_to_joint('position', motors.theta)
        J = fd_jacobian(tset, motors.theta)
        tau_j = np.zeros(tset.num_joints)
        for j in joints:
            i = tset.joint_index[j]
            tau_j[i] = kp[j] * (q0[i] + target[j] - q[i]) + tau_ff[j]      # still: q̇ = 0
        want = J.T @ tau_j
        assert max(abs(want[tset.actuator_index[m]]) for m in names) > 0.1
        for m in names:
            assert got[m] == pytest.approx(want[tset.actuator_index[m]], rel=FD_TOL, abs=1e-6)


def test_legged_mit_commands_take_the_watchdog_s_hold_and_zero_effort(tmp_path):
    """Behind the linkages too: stopped targets held where measured, then nothing."""
    dyn = pytest.importorskip('control_msgs.msg', reason='control_msgs is not installed')
    joints = ['left_ankle_pitch', 'left_ankle_roll']
    params = {'impedance_output': 'motor_gains', 'command_timeout': 0.3,
              **{f'gains.{j}.p': 30.0 for j in joints}, **{f'gains.{j}.d': 0.5 for j in joints}}
    with _legged(tmp_path, params, 'imph') as (graph, tset, motors, pub):
        q0 = tset.default_positions.copy()
        got = graph.collect(dyn.DynamicJointState, 'actuator_impedance_commands')
        graph.spin_for(0.2)
        idx = [tset.joint_index[j] for j in joints]

        def table_after(since):
            assert graph.spin_until(lambda: len(got) > since + 3)
            msg = got[-1]
            return {n: dict(zip(v.interface_names, v.values))
                    for n, v in zip(msg.joint_names, msg.interface_values)}

        pub.publish(JointState(name=joints, position=(q0[idx] + [0.04, -0.03]).tolist(),
                               effort=[1.0, -0.5]))
        pushing = table_after(len(got))
        assert max(abs(t['effort']) + abs(t['position'] - motors.theta[tset.actuator_index[n]])
                   for n, t in pushing.items()) > 1e-3
        graph.spin_for(0.6)                 # past the timeout: targets at the measured pose
        held = table_after(len(got))
        for n, t in held.items():
            a = tset.actuator_index[n]
            assert t['position'] == pytest.approx(motors.theta[a], abs=1e-9)
            assert t['velocity'] == 0.0 and abs(t['effort']) < 1e-9 and t['stiffness'] > 0
        assert graph.set_parameters(NODE, {'on_command_timeout': 'zero_effort'})[0].successful
        pub.publish(JointState(name=joints, position=(q0[idx] + [0.04, -0.03]).tolist()))
        graph.spin_for(0.6)
        zero = table_after(len(got))
        assert all(t['effort'] == t['stiffness'] == t['damping'] == 0.0 for t in zero.values())


def test_the_legged_robot_holds_a_crouch_by_impedance(tmp_path):
    """
    Simulated MIT-mode motors move the legs' dynamics; the bridge's impedance holds a crouch.

    A closed loop (gravity, the knee and ankle linkages). A sign or a transpose wrong
    anywhere and the legs fall or run away; right, each joint settles within gravity / Kp
    of its target. (Torque-mode
    motors at the simulator's 100 Hz cannot hold a 2 g·m² ankle this stiff: MIT mode's fast
    motor loop is what such joints need.)
    """
    output = 'motor_gains'
    pytest.importorskip('control_msgs.msg', reason='control_msgs is not installed')
    import yaml
    from ros_harness import NodeProcess
    from transmission_bridge.kinematics import load_model
    tset, model = load_transmissions(LEGGED), load_model(LEGGED)
    kp = 60.0
    inertia = np.diag(model.mass_matrix(model.default_positions))
    kd = dict(zip(model.joint_names, 2 * 0.7 * np.sqrt(kp * inertia)))   # damping ratio 0.7
    crouch = dict(zip(tset.joint_names, tset.default_positions))
    for side in ('left', 'right'):
        crouch[f'{side}_hip_pitch'] = -0.4
        crouch[f'{side}_knee'] = 0.9
        crouch[f'{side}_ankle_pitch'] = -0.4
    q = np.array([crouch[j] for j in model.joint_names])
    gravity = np.abs(model.gravity_generalized_forces(q)).max()
    params = {'transmissions_file': LEGGED, 'impedance_output': output,
              'command_timeout': 0.0, **{f'gains.{j}.p': kp for j in tset.joint_names},
              **{f'gains.{j}.d': float(kd[j]) for j in tset.joint_names}}
    with started_node(tmp_path, 'transmission_bridge.bridge.node', NODE, params, 'crouch',
                      'actuator_states') as graph:
        sim_params = tmp_path / 'sim.yaml'
        sim_params.write_text(yaml.safe_dump({'/**/actuator_simulator': {'ros__parameters': {
            'transmissions_file': LEGGED, 'engine': 'mujoco',
            'model_file': LEGGED.replace('.urdf', '.xml'), 'dynamics': output,
            'rate': 100.0}}}))
        sim = NodeProcess('transmission_bridge.tools.actuator_simulator',
                          ['--params-file', str(sim_params), '-r',
                           f'__ns:={graph.namespace}'], tmp_path / 'sim.log')
        try:
            states = graph.collect(JointState, 'joint_states')
            assert graph.spin_until(lambda: len(states) > 5, timeout=30), sim.output()
            pub = _commands(graph)
            names = list(tset.joint_names)
            bound = 1.5 * gravity / kp      # the spring's static deflection, with a margin

            def settled():                  # near the crouch, and still
                last = states[-1]
                got = dict(zip(last.name, last.position))
                return (max(abs(got[j] - crouch[j]) for j in names) < bound
                        and np.abs(np.array(last.velocity)).max() < SETTLED)
            # the targets, as a policy streams them (10 Hz), until the legs settle: some 2 s
            # of simulated time, longer on a loaded machine (the simulator then runs slower)
            graph.spin_until(settled, timeout=20.0, period=0.1, action=lambda: pub.publish(
                JointState(name=names, position=[crouch[j] for j in names])))
            last = states[-1]
            got = dict(zip(last.name, last.position))
            speed = np.abs(np.array(last.velocity)).max()
        finally:
            assert sim.stop() == 0, sim.output()
        errors = {j: got[j] - crouch[j] for j in names}
        assert max(abs(e) for e in errors.values()) < bound, (errors, bound)
        assert abs(got['left_knee'] - tset.default_positions[tset.joint_index['left_knee']]) \
            > 0.2                           # it moved: from the start pose to the crouch
        assert speed < SETTLED, speed       # settled
