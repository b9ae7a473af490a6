"""
The bridge node's gear losses over real DDS: every message measured and commanded, vs the oracle.

The robot: a 1:50 planetary elbow (η 0.8 driving, 0.7 driven, friction, a rotor), a lift on
a self-locking ACME lead screw (its efficiencies from the thread's geometry), a differential
wrist (η 0.9 / 0.85 per motor) and an ideal 1:100 pan. The motors report a new random state
every 10 ms (every motor moving faster than 0.1 rad/s in either direction, or at rest), with
random torques; once the bridge takes both streams, a controller streams joint efforts
stamped with the stamp of a state published three periods earlier (as the kinematics node
stamps its torques with the state they come from), then joint springs drive the elbow, wrist
and lift. In the whole window:

* every joint_states message's efforts are the oracle's of the state of its stamp: each
  motor's stage by its branch (η_f when the motor drives, 1/η_b when the load drives,
  friction on the motor side; at rest the mean of its values at ±w), then τ_j = J⁻ᵀ τ_o − b q̇,
  J by central differences of the position map; the ideal pan's to the bit;
* every actuator_commands message (streamed efforts, then the springs' efforts) is the
  oracle's motor torque for that state's motor velocities: C(Jᵀ (τ_j + b q̇)) per motor;
* with control_msgs, every actuator_impedance_commands message's law, at its state, is the
  stage's torque for the lossless law there.
"""

import math

import numpy as np
import pytest
from ros_harness import started_node
from sensor_msgs.msg import JointState
from transmission_bridge.transmissions import load_transmissions
from transmission_bridge.transmissions.losses import REST_ROTARY, screw_efficiency
from transmission_oracles import fd_jacobian, oracle_commanded, oracle_measured
import yaml

pytestmark = pytest.mark.ros

NODE = 'transmission_bridge'
SECOND = 1_000_000_000
STATE_PERIOD = 0.01             # s
LAG = 3                         # a command carries the stamp of the state 3 periods back
RNG_SEED = 5757
FD_TOL = 1e-6                   # relative and N·m: central differences, linear maps
ACME = {'lead': 0.004, 'mean_diameter': 0.011, 'friction_coefficient': 0.15,
        'flank_angle': 0.2531}   # a 13 x 4 mm ACME thread: self-locking (η_b < 0)
LEAD_RATIO = 2 * math.pi / ACME['lead']      # motor rad per m of lift
ROBOT = {'transmissions': [
    {'name': 'elbow', 'type': 'simple',
     'actuators': [{'name': 'elbow_motor', 'mechanical_reduction': 50.0,
                    'rotor_inertia': 2.0e-5, 'efficiency': {'driving': 0.8, 'driven': 0.7},
                    'friction': {'viscous': 1.0e-3, 'coulomb': 0.02}}],
     'joints': [{'name': 'elbow', 'damping': 0.3}]},
    {'name': 'lift', 'type': 'simple',
     'actuators': [{'name': 'lift_motor', 'mechanical_reduction': LEAD_RATIO,
                    'efficiency': ACME, 'friction': {'viscous': 2.0e-4, 'coulomb': 0.01}}],
     'joints': [{'name': 'lift'}]},
    {'name': 'wrist', 'type': 'differential',
     'actuators': [{'name': 'wrist_left_motor', 'mechanical_reduction': 30.0,
                    'efficiency': {'driving': 0.9, 'driven': 0.85}},
                   {'name': 'wrist_right_motor', 'mechanical_reduction': -30.0,
                    'efficiency': {'driving': 0.9, 'driven': 0.85}}],
     'joints': [{'name': 'wrist_pitch', 'damping': 0.05}, {'name': 'wrist_roll'}]},
    {'name': 'pan', 'type': 'simple',
     'actuators': [{'name': 'pan_motor', 'mechanical_reduction': 100.0}],
     'joints': [{'name': 'pan', 'damping': 0.1}]},
]}
SPRUNG = ['elbow', 'lift', 'wrist_pitch', 'wrist_roll']
KP = dict(zip(SPRUNG, [30.0, 2000.0, 8.0, 5.0]))
KD = dict(zip(SPRUNG, [1.0, 50.0, 0.2, 0.1]))
TARGET = 0.05                   # rad or m: every joint's target once the springs drive


def _stage(tset, name):
    a = tset.actuator(name)
    return a.efficiency_driving, a.efficiency_driven, a.viscous_friction, a.coulomb_friction


def _measured_oracle(tau, v, stage):
    """One motor's stage output: its branch moving; at rest the mean of its values at ±w."""
    if v == 0.0:
        return 0.5 * (oracle_measured(tau, REST_ROTARY, *stage)
                      + oracle_measured(tau, -REST_ROTARY, *stage))
    return oracle_measured(tau, v, *stage)


def _commanded_oracle(tau_o, v, stage):
    """One motor's torque: its branch moving; below ±w the line between its values at ±w."""
    if abs(v) < REST_ROTARY:            # a command's own slow motion lands here too
        low = oracle_commanded(tau_o, -REST_ROTARY, *stage)
        high = oracle_commanded(tau_o, REST_ROTARY, *stage)
        return low + (v / REST_ROTARY + 1.0) * 0.5 * (high - low)
    return oracle_commanded(tau_o, v, *stage)


class Motors:
    """The test's side: motors reporting random states, a controller streaming efforts."""

    def __init__(self, graph, tset, rng):
        self.graph, self.tset, self.rng, self.node = graph, tset, rng, graph.node
        self.states = {}                    # stamp -> (θ, θ̇, τ_a)
        self.order = []
        self.commands = {}                  # stamp -> (joint efforts, joint velocities|None)
        self.springs = None                 # (q*, τ*) once the springs drive
        self.received = {'joint_states': [], 'actuator_commands': [], 'mit': []}
        self.state_pub = self.node.create_publisher(JointState, 'actuator_states', 100)
        self.command_pub = self.node.create_publisher(JointState, 'joint_commands', 100)
        for topic in ('joint_states', 'actuator_commands'):
            self.node.create_subscription(JointState, topic, self.received[topic].append,
                                          10000)
        try:
            from control_msgs.msg import DynamicJointState
        except ImportError:
            DynamicJointState = None
        if DynamicJointState is not None:
            self.node.create_subscription(DynamicJointState, 'actuator_impedance_commands',
                                          self.received['mit'].append, 10000)
        self.stamp = 1000 * SECOND
        self.commanding = False             # once the bridge takes both streams
        self.node.create_timer(STATE_PERIOD, self._tick)

    def _tick(self):
        tset, rng, n = self.tset, self.rng, self.tset.num_actuators
        theta = tset.joint_to_actuator('position', rng.uniform(-0.3, 0.3, tset.num_joints))
        thetad = rng.uniform(0.2, 3.0, n) * rng.choice([-1.0, 1.0], n)
        thetad[rng.uniform(size=n) < 0.15] = 0.0                # at rest, now and then
        tau = rng.normal(scale=0.5, size=n)
        self.stamp += 10_000_000
        self.states[self.stamp] = (theta, thetad, tau)
        self.order.append(self.stamp)
        msg = JointState(name=list(tset.actuator_names), position=theta.tolist(),
                         velocity=thetad.tolist(), effort=tau.tolist())
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(self.stamp, SECOND)
        self.state_pub.publish(msg)
        if self.commanding and len(self.order) % 2:
            self._command(self.order[-1 - LAG])

    def _command(self, stamp):
        tset, rng = self.tset, self.rng
        names = list(tset.joint_names)
        if self.springs is not None:
            q_t, tau_t = self.springs
            msg = JointState(name=names, position=q_t.tolist(), effort=tau_t.tolist())
        else:
            effort = rng.normal(scale=3.0, size=len(names))
            velocity = rng.normal(size=len(names)) if len(self.order) % 4 == 1 else None
            self.commands[stamp] = (effort, velocity)
            msg = JointState(name=names, effort=effort.tolist(),
                             velocity=[] if velocity is None else velocity.tolist())
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, SECOND)
        self.command_pub.publish(msg)


def _stamp(msg):
    return msg.header.stamp.sec * SECOND + msg.header.stamp.nanosec


def _run(tmp_path, output):
    path = tmp_path / 'lossy_robot.yaml'
    path.write_text(yaml.safe_dump(ROBOT))
    tset = load_transmissions(path)
    params = {'transmissions_file': str(path), 'command_timeout': 0.0,
              'impedance_output': output}
    with started_node(tmp_path, 'transmission_bridge.bridge.node', NODE, params, 'losses',
                      'actuator_states') as graph:
        motors = Motors(graph, tset, np.random.default_rng(RNG_SEED))
        assert graph.spin_until(lambda: motors.command_pub.get_subscription_count() > 0
                                and len(motors.received['joint_states']) > 5, timeout=15)
        graph.spin_for(0.5)           # DDS settles: no command waits behind 16 states
        motors.commanding = True
        graph.spin_for(2.0)                                         # streamed efforts
        motors.springs = (np.full(tset.num_joints, TARGET),
                          np.linspace(-1.0, 1.0, tset.num_joints))
        results = graph.set_parameters(NODE, {**{f'gains.{j}.p': KP[j] for j in SPRUNG},
                                              **{f'gains.{j}.d': KD[j] for j in SPRUNG}})
        assert all(r.successful for r in results), [r.reason for r in results]
        motors.springs_from = motors.stamp
        graph.spin_for(2.0 if output == 'effort' else 3.0)          # the springs
        motors.log = graph.proc.output()
    return tset, motors


def _geometry(tset, theta, thetad):
    J = fd_jacobian(tset, theta)
    return J, J @ thetad


def _check_joint_states(tset, motors):
    """Every joint_states message: the oracle's efforts of the state of its stamp."""
    pan = tset.joint_index['pan']
    checked = 0
    for msg in motors.received['joint_states']:
        theta, thetad, tau = motors.states[_stamp(msg)]
        J, qd = _geometry(tset, theta, thetad)
        tau_o = [_measured_oracle(tau[i], thetad[i], _stage(tset, m))
                 for i, m in enumerate(tset.actuator_names)]
        want = np.linalg.solve(J.T, tau_o) - tset.damping * qd
        assert list(msg.name) == list(tset.joint_names)
        assert list(msg.effort) == pytest.approx(want, rel=FD_TOL, abs=FD_TOL)
        ideal = tset.actuator_to_joint('effort', tau)[pan] - tset.damping[pan] * qd[pan]
        assert msg.effort[pan] == tset.actuator_to_joint('effort', tau)[pan] - \
            tset.damping[pan] * tset.actuator_to_joint('velocity', thetad)[pan], ideal
        checked += 1
    assert checked > 300, checked


def _check_streamed(tset, motors):
    """
    Every streamed effort command: C(Jᵀ (τ + b q̇)) at one motion (NOTATION.md).

    The command's velocities where it carries them (θ̇ = J⁻¹ q̇), else its state's.
    """
    checked, quadrants = 0, set()
    heard = {_stamp(m) for m in motors.received['joint_states']}
    for msg in motors.received['actuator_commands']:
        stamp = _stamp(msg)
        if stamp not in motors.commands:
            continue                                    # a spring's: checked below
        assert stamp in heard, f'a command of state {stamp} the bridge never published'
        effort, velocity = motors.commands[stamp]
        theta, thetad, _ = motors.states[stamp]
        J, qd = _geometry(tset, theta, thetad)
        if velocity is not None:            # the command's own motion (NOTATION.md)
            qd, thetad = velocity, np.linalg.solve(J, velocity)
        tau_o = J.T @ (effort + tset.damping * qd)
        want = {m: _commanded_oracle(tau_o[i], thetad[i], _stage(tset, m))
                for i, m in enumerate(tset.actuator_names)}
        assert list(msg.name) == list(tset.actuator_names)
        assert len(msg.position) == 0
        assert list(msg.effort) == pytest.approx([want[m] for m in msg.name], rel=FD_TOL,
                                                 abs=FD_TOL), (velocity, thetad)
        quadrants |= {(bool(t > 0), float(np.sign(v))) for t, v in zip(tau_o, thetad)}
        checked += 1
    assert checked > 50, checked
    assert len(quadrants) == 6, quadrants               # both signs moving both ways, at rest


def _spring_law(tset, motors, stamp):
    """Return (motor torques Jᵀ τ_j of the springs at the state of ``stamp``, θ, θ̇)."""
    theta, thetad, _ = motors.states[stamp]
    J, qd = _geometry(tset, theta, thetad)
    q = tset.actuator_to_joint('position', theta)
    q_t, tau_t = motors.springs
    tau_j = np.zeros(tset.num_joints)
    for j in SPRUNG:
        i = tset.joint_index[j]
        # the damping the joint loses, added back by both outputs (NOTATION's one law)
        tau_j[i] = KP[j] * (q_t[i] - q[i]) - KD[j] * qd[i] + tau_t[i] + tset.damping[i] * qd[i]
    return J.T @ tau_j, theta, thetad


def _check_springs(tset, motors, output):
    """Every spring command after the gains: the stage's torque of the law at its state."""
    sprung = {'elbow_motor', 'lift_motor', 'wrist_left_motor', 'wrist_right_motor'}
    start = motors.springs_from + int(0.3 * SECOND)      # the targets taken, gains set
    checked = 0
    pan = tset.joint_index['pan']
    for msg in motors.received['actuator_commands']:
        stamp = _stamp(msg)
        if stamp in motors.commands or stamp < start or not len(msg.position):
            continue
        # the pan (no gains) is still commanded plainly: its target and τ* through 1:100
        assert list(msg.name) == ['pan_motor'], (msg.name, stamp)
        assert list(msg.position) == [TARGET * 100.0]
        # its damping at the motion of the state its stamp names (NOTATION.md: one motion)
        qd_pan = motors.states[stamp][1][tset.actuator_index['pan_motor']] / 100.0
        assert msg.effort[0] == pytest.approx(
            (motors.springs[1][pan] + tset.damping[pan] * qd_pan) / 100.0, rel=1e-12,
            abs=1e-15)
    if output == 'effort':
        for msg in motors.received['actuator_commands']:
            stamp = _stamp(msg)
            if stamp in motors.commands or stamp < start or len(msg.position):
                continue
            assert set(msg.name) == sprung, (msg.name, stamp)
            tau_o, _, thetad = _spring_law(tset, motors, stamp)
            for m, value in zip(msg.name, msg.effort):
                i = tset.actuator_index[m]
                want = _commanded_oracle(tau_o[i], thetad[i], _stage(tset, m))
                assert value == pytest.approx(want, rel=FD_TOL, abs=FD_TOL), (m, stamp)
            checked += 1
    else:
        for msg in motors.received['mit']:
            stamp = _stamp(msg)
            if stamp < start:
                continue
            tau_o, theta, thetad = _spring_law(tset, motors, stamp)
            assert set(msg.joint_names) == sprung
            for m, values in zip(msg.joint_names, msg.interface_values):
                t = dict(zip(values.interface_names, values.values))
                i = tset.actuator_index[m]
                at_state = (t['stiffness'] * (t['position'] - theta[i])
                            + t['damping'] * (t['velocity'] - thetad[i]) + t['effort'])
                want = _commanded_oracle(tau_o[i], thetad[i], _stage(tset, m))
                assert at_state == pytest.approx(want, rel=FD_TOL, abs=FD_TOL), (m, stamp)
            checked += 1
    assert checked > 80, checked


@pytest.mark.parametrize('output', ['effort', 'motor_gains'])
def test_every_effort_the_bridge_measures_and_commands_passes_the_gear_stages(
        tmp_path, output):
    if output == 'motor_gains':
        pytest.importorskip('control_msgs.msg', reason='control_msgs is not installed: no '
                            'motor_gains output')
    tset, motors = _run(tmp_path, output)
    eta_f, eta_b = screw_efficiency(*ACME.values())
    assert (tset.actuator('lift_motor').efficiency_driving,
            tset.actuator('lift_motor').efficiency_driven) == (eta_f, eta_b) and eta_b < 0
    _check_joint_states(tset, motors)
    _check_streamed(tset, motors)
    _check_springs(tset, motors, output)
    assert 'Traceback' not in motors.log


def test_ros2_param_set_changes_an_efficiency_or_refuses_it_naming_the_key(tmp_path):
    """Refused out of range (nothing changes); accepted, every later message has the new η."""
    path = tmp_path / 'lossy_robot.yaml'
    path.write_text(yaml.safe_dump(ROBOT))
    tset = load_transmissions(path)
    names = list(tset.actuator_names)
    theta = tset.joint_to_actuator('position', np.zeros(tset.num_joints))
    thetad = np.array([2.0, -1.5, 0.8, -0.8, 1.0])      # every motor moving
    tau = np.array([0.3, 0.05, 0.2, -0.1, 0.4])         # the elbow motor drives (τ θ̇ > 0)
    elbow = tset.joint_index['elbow']
    key = 'actuators.elbow_motor.efficiency.driving'

    def elbow_effort(eta_f):
        a = tset.actuator('elbow_motor')
        stage = (eta_f, a.efficiency_driven, a.viscous_friction, a.coulomb_friction)
        tau_o = _measured_oracle(tau[0], thetad[0], stage)
        return 50.0 * tau_o - tset.damping[elbow] * thetad[0] / 50.0

    with started_node(tmp_path, 'transmission_bridge.bridge.node', NODE,
                      {'transmissions_file': str(path)}, 'loss_param', 'actuator_states') as g:
        pub = g.node.create_publisher(JointState, 'actuator_states', 10)
        out = g.collect(JointState, 'joint_states')
        msg = JointState(name=names, position=theta.tolist(), velocity=thetad.tolist(),
                         effort=tau.tolist())
        assert g.spin_until(lambda: out, action=lambda: pub.publish(msg)), g.proc.output()
        for value, words in ((1.2, 'efficiency.driving must be in (0, 1], got 1.2'),
                             (0.0, 'got 0.0')):
            res = g.set_parameters(NODE, {key: value})
            assert not res[0].successful and words in res[0].reason, res[0].reason
            assert "actuator 'elbow_motor'" in res[0].reason
        assert g.get_parameters(NODE, [key]) == {key: 0.8}
        before = len(out)
        g.spin_until(lambda: len(out) > before + 3, action=lambda: pub.publish(msg))
        for m in out:
            assert m.effort[elbow] == pytest.approx(elbow_effort(0.8), rel=1e-12)
        res = g.set_parameters(NODE, {key: 0.6})
        assert res[0].successful, res[0].reason
        changed = len(out)
        g.spin_until(lambda: len(out) > changed + 5, action=lambda: pub.publish(msg))
        # published before the answer may carry either; every one after it the new η
        for m in out[changed:]:
            assert m.effort[elbow] == pytest.approx(elbow_effort(0.6), rel=1e-12)
        assert elbow_effort(0.6) != pytest.approx(elbow_effort(0.8), rel=1e-3)
