"""
Every message the bridge sends its motors, through a run a legged robot's team would do.

The robot: a 1:9 hip, an elbow (1:50, always plain), a differential wrist and a parallel
ankle (a linkage). A controller streams joint_commands for all six joints at 100 Hz while the
motors report at 200 Hz; then, at runtime: gains make the hip, the wrist and the ankle joint
springs; one ankle motor falls silent past stale_timeout and comes back; the stream stops
past command_timeout and resumes; the springs' output switches (effort <-> motor_gains);
the gains go back to 0. Every message on ``actuator_commands`` and
``actuator_impedance_commands`` in that window is checked, not the first that matches:

* a spring's command is stamped with its state: each joint_states the bridge published while
  springs drive gets exactly one command per driven motor (on one topic), naming exactly
  the motors of the transmissions that state measured (none of a stale one), and its values
  are the joint law at that state, with the targets streamed, or with the hold latched at
  the measured pose once the stream has stopped;
* a plain command (positions) never names a spring's motor; the plain safe command (the
  timeout's hold) goes to the elbow only, and only while the stream is stopped;
* the log says the timeout once and its end once, and no timeout while the stream flows.

The motors hold still at a pose and report a constant velocity (so the damping terms are
not 0): every state is the same, and the law's value in each phase is computed here from
the set's position map, J by central differences (never the bridge's Jacobian).
"""

import bisect
import math

import numpy as np
import pytest
from ros_harness import started_node
from sensor_msgs.msg import JointState
from transmission_bridge.transmissions import load_transmissions
from transmission_oracles import fd_jacobian
import yaml

NODE = 'transmission_bridge'
STATE_PERIOD, COMMAND_PERIOD = 0.005, 0.01
TIMEOUT, STALE = 0.4, 0.25              # s: command_timeout, stale_timeout
SLACK = 0.15            # s: DDS and scheduling around each switch (a loaded 2-core machine)
# s: a publisher made at runtime (actuator_impedance_commands, made when motor_gains is first
# chosen) reaches a subscriber once DDS discovery matches them: no command, never two
DISCOVERY = 1.0
FD_TOL = 1e-5
EXACT = 1e-7            # N·m: linear transmissions, the law through exact maps
LINKAGE_MIT = 0.05      # MIT through a linkage: first order in θ* − θ (of the largest term)
SECOND = 1_000_000_000

ROBOT = {'transmissions': [
    {'name': 'hip', 'type': 'simple',
     'actuators': [{'name': 'hip_motor', 'mechanical_reduction': 9.0}],
     'joints': [{'name': 'hip', 'damping': 0.2, 'default_position': 0.3,
                 'limits': {'lower': -2.0, 'upper': 2.0}}]},
    {'name': 'elbow', 'type': 'simple',
     'actuators': [{'name': 'elbow_motor', 'mechanical_reduction': 50.0}],
     'joints': [{'name': 'elbow', 'default_position': 0.5}]},
    {'name': 'wrist', 'type': 'differential',
     'actuators': [{'name': 'wrist_left_motor', 'mechanical_reduction': 50.0},
                   {'name': 'wrist_right_motor', 'mechanical_reduction': -50.0}],
     'joints': [{'name': 'wrist_pitch', 'damping': 0.05, 'default_position': 0.2},
                {'name': 'wrist_roll', 'default_position': -0.1}]},
    {'name': 'ankle', 'type': 'linkage',
     'joints': [{'name': 'ankle_pitch', 'axis': [0, 1, 0], 'origin': [0, 0, 0],
                 'limits': {'lower': -0.6, 'upper': 0.6}},
                {'name': 'ankle_roll', 'axis': [1, 0, 0], 'origin': [0, 0, 0],
                 'limits': {'lower': -0.5, 'upper': 0.5}}],
     'actuators': [
         {'name': 'ankle_l_motor', 'kind': 'rotary', 'axis': [0, 1, 0],
          'origin': [0.0, 0.06, 0.49], 'crank': [-0.12, 0.06, 0.49],
          'attachment': [-0.12, 0.06, 0.0], 'rod_length': 0.49},
         {'name': 'ankle_r_motor', 'kind': 'rotary', 'axis': [0, 1, 0],
          'origin': [0.0, -0.06, 0.37], 'crank': [-0.12, -0.06, 0.37],
          'attachment': [-0.12, -0.06, 0.0], 'rod_length': 0.37}]},
]}
SPRUNG = ['hip', 'wrist_pitch', 'wrist_roll', 'ankle_pitch', 'ankle_roll']
KP = dict(zip(SPRUNG, [20.0, 8.0, 5.0, 30.0, 20.0]))
KD = dict(zip(SPRUNG, [0.5, 0.2, 0.1, 0.8, 0.5]))
OFFSET = dict(zip(['hip', 'elbow'] + SPRUNG[1:], [0.05, -0.04, 0.03, -0.02, 0.03, -0.02]))
FEED = dict(zip(['hip', 'elbow'] + SPRUNG[1:], [0.5, 1.0, -0.2, 0.1, 0.3, -0.4]))
ANKLE_MOTORS = ('ankle_l_motor', 'ankle_r_motor')


class Law:
    """The joint law at the robot's one state, per phase, as each output shows it."""

    def __init__(self, tset, theta, thetad):
        self.tset, self.theta, self.thetad = tset, theta, thetad
        self.J = fd_jacobian(tset, theta)
        self.q = tset.actuator_to_joint('position', theta)
        self.qd = self.J @ thetad
        idx = tset.joint_index
        self.joints = [idx[j] for j in SPRUNG]
        self.kp = np.zeros(tset.num_joints)
        self.kd = np.zeros(tset.num_joints)
        for j in SPRUNG:
            self.kp[idx[j]], self.kd[idx[j]] = KP[j], KD[j]
        self.target = self.q.copy()
        self.feed = np.zeros(tset.num_joints)
        for j, d in OFFSET.items():
            self.target[idx[j]] += d
            self.feed[idx[j]] = FEED[j]
        self.b = np.array([tset.joint(j).damping for j in tset.joint_names])

    def joint_torque(self, phase):
        """τ_j with the streamed targets (``'targets'``) or the hold at the measured pose."""
        q_t = self.target if phase == 'targets' else self.q
        feed = self.feed if phase == 'targets' else 0.0
        # the damping the joints lose, added back by both outputs (NOTATION's one law)
        tau = self.kp * (q_t - self.q) + self.kd * (0.0 - self.qd) + feed + self.b * self.qd
        out = np.zeros(self.tset.num_joints)
        out[self.joints] = tau[self.joints]
        return out

    def motor_torques(self, phase):
        """Jᵀ τ_j: what the motors apply (both outputs add the damping loss back)."""
        return self.J.T @ self.joint_torque(phase)


class Run:
    """The test's side of the run: motors, controller, and everything the bridge sent."""

    def __init__(self, graph, tset):
        self.graph, self.tset, self.node = graph, tset, graph.node
        q0 = tset.default_positions.copy()
        self.theta = tset.joint_to_actuator('position', q0)
        self.thetad = np.linspace(0.4, -0.3, tset.num_actuators)   # constant: damping seen
        self.law = Law(tset, self.theta, self.thetad)
        self.silent, self.streaming = set(), False
        self.events = {}
        self.commands, self.mit, self.joint_states = [], [], []
        self.sent = []                      # when each joint command was published (ns)
        self.state_pub = self.node.create_publisher(JointState, 'actuator_states', 50)
        self.command_pub = self.node.create_publisher(JointState, 'joint_commands', 50)
        for topic, box in (('actuator_commands', self.commands),
                           ('joint_states', self.joint_states)):
            self.node.create_subscription(JointState, topic, box.append, 5000)
        try:
            from control_msgs.msg import DynamicJointState
        except ImportError:
            DynamicJointState = None
        if DynamicJointState is not None:
            self.node.create_subscription(DynamicJointState, 'actuator_impedance_commands',
                                          self.mit.append, 5000)
        self.node.create_timer(STATE_PERIOD, self._state)
        self.node.create_timer(COMMAND_PERIOD, self._command)

    def now(self):
        return self.node.get_clock().now().nanoseconds

    def mark(self, name):
        self.events[name] = self.now()

    def _state(self):
        tset = self.tset
        names = [n for n in tset.actuator_names if n not in self.silent]
        idx = [tset.actuator_index[n] for n in names]
        msg = JointState(name=names, position=self.theta[idx].tolist(),
                         velocity=self.thetad[idx].tolist(), effort=[0.0] * len(names))
        msg.header.stamp = self.node.get_clock().now().to_msg()
        self.state_pub.publish(msg)

    def _command(self):
        if not self.streaming:
            return
        names = list(self.tset.joint_names)
        idx = [self.tset.joint_index[n] for n in names]
        msg = JointState(name=names, position=self.law.target[idx].tolist(),
                         effort=self.law.feed[idx].tolist())
        msg.header.stamp = self.node.get_clock().now().to_msg()
        self.command_pub.publish(msg)
        self.sent.append(_stamp(msg))

    def set_parameters(self, values):
        results = self.graph.set_parameters(NODE, values)
        assert all(r.successful for r in results), [r.reason for r in results]


def _stamp(msg):
    return msg.header.stamp.sec * SECOND + msg.header.stamp.nanosec


def _motors(tset, joints):
    _, acts = tset.coverage(joints)
    return {tset.actuator_names[i] for i in acts}


def _between(t, start, end):
    return start <= t <= end


def _last_before(times, t):
    """Return the last of the sorted ``times`` at or before ``t`` (-inf: none)."""
    k = bisect.bisect_right(times, t)
    return times[k - 1] if k else -math.inf


def _run(tmp_path, first_output, second_output):
    """Run the scenario (module docstring); return the Run with everything recorded."""
    path = tmp_path / 'robot.yaml'
    path.write_text(yaml.safe_dump(ROBOT))
    tset = load_transmissions(path)
    params = {'transmissions_file': str(path), 'command_timeout': TIMEOUT,
              'on_command_timeout': 'hold', 'stale_timeout': STALE,
              'impedance_output': first_output}
    with started_node(tmp_path, 'transmission_bridge.bridge.node', NODE, params, 'streams',
                      'actuator_states') as graph:
        run = Run(graph, tset)
        assert graph.spin_until(lambda: run.command_pub.get_subscription_count() > 0
                                and len(run.joint_states) > 5, timeout=15)
        run.streaming = True
        run.mark('stream')
        graph.spin_for(1.0)                             # plain commands
        run.mark('gains')
        run.set_parameters({**{f'gains.{j}.p': KP[j] for j in SPRUNG},
                            **{f'gains.{j}.d': KD[j] for j in SPRUNG}})
        run.mark('gains_set')
        graph.spin_for(1.0)                             # springs, targets streamed
        run.silent.add('ankle_l_motor')
        run.mark('silent')
        graph.spin_for(1.0)                             # the ankle stale
        run.silent.clear()
        run.mark('heard')
        graph.spin_for(0.8)
        run.streaming = False
        run.mark('stopped')
        graph.spin_for(1.2)                             # the timeout: holds
        run.streaming = True
        run.mark('resumed')
        graph.spin_for(0.8)
        run.mark('output')
        run.set_parameters({'impedance_output': second_output})
        run.mark('output_set')
        graph.spin_for(0.8)
        run.mark('plain')
        run.set_parameters({**{f'gains.{j}.p': 0.0 for j in SPRUNG},
                            **{f'gains.{j}.d': 0.0 for j in SPRUNG}})
        run.mark('plain_set')
        graph.spin_for(0.8)
        run.streaming = False
        run.mark('end')
        graph.spin_for(0.3)
        run.log = graph.proc.output()
    return run


def _spring_messages(run):
    """Yield (stamp, topic, {motor: motor-side torque at the state}, msg) of every spring one."""
    for msg in run.commands:
        if len(msg.position) == 0 and len(msg.velocity) == 0 and len(msg.effort):
            yield _stamp(msg), 'effort', dict(zip(msg.name, msg.effort)), msg
    theta, thetad, index = run.theta, run.thetad, run.tset.actuator_index
    for msg in run.mit:
        table = {n: dict(zip(v.interface_names, v.values))
                 for n, v in zip(msg.joint_names, msg.interface_values)}
        torque = {n: t['stiffness'] * (t['position'] - theta[index[n]])
                  + t['damping'] * (t['velocity'] - thetad[index[n]]) + t['effort']
                  for n, t in table.items()}
        yield _stamp(msg), 'motor_gains', torque, table


def _check(run, first_output, second_output):
    tset, law, ev = run.tset, run.law, run.events
    sprung_motors = _motors(tset, SPRUNG)
    slack = int(SLACK * SECOND)
    timeout = int(TIMEOUT * SECOND)
    springs_from, springs_to = ev['gains_set'] + slack, ev['plain'] - slack
    # The deadline runs from the last command the bridge got: the last one published before
    # streaming stopped (a busy test process may publish its last well before the flag flips),
    # and the first published after it resumed.
    last_sent = max(t for t in run.sent if t <= ev['stopped'])
    first_again = min(t for t in run.sent if t >= ev['resumed'])
    hold_from = ev['stopped'] + timeout + slack
    hold_to = ev['resumed'] - slack
    targets_again = first_again + slack
    stale_from, stale_to = ev['silent'] + int(STALE * SECOND) + slack, ev['heard'] - slack

    # --- the springs' commands: one per state, for exactly the measured transmissions ------
    by_stamp = {}
    for stamp, topic, torque, msg in _spring_messages(run):
        assert _between(stamp, ev['gains'], ev['plain_set'] + slack), \
            f'a spring command outside the springs phase ({topic})'
        assert set(torque) <= sprung_motors, set(torque)
        by_stamp.setdefault(stamp, []).append((topic, torque, msg))
    states = {_stamp(m): m for m in run.joint_states}
    checked = {'targets': 0, 'hold': 0, 'stale': 0}
    discovery = int(DISCOVERY * SECOND) if first_output == 'effort' else slack
    for stamp, state in states.items():
        sent = by_stamp.pop(stamp, [])
        if not _between(stamp, springs_from, springs_to):
            continue
        measured = set(state.name)
        want = _motors(tset, [j for j in SPRUNG if j in measured])
        motors = [m for _, torque, _ in sent for m in torque]
        switched = ev['output'] - slack <= stamp <= ev['output_set'] + discovery
        if switched and not motors:
            continue                    # the new topic not matched yet: nothing, never two
        assert sorted(motors) == sorted(want), (stamp - ev['stream'], motors, want)
        if _between(stamp, stale_from, stale_to):
            assert not set(motors) & set(ANKLE_MOTORS)
            checked['stale'] += 1
        # Targets while the test's commands flow: the last one published before this state
        # is younger than the deadline (a starved test process may pause its stream).
        flowing = stamp - _last_before(run.sent, stamp) < timeout - slack
        phase = ('hold' if _between(stamp, hold_from, hold_to) else
                 'targets' if flowing and (stamp < last_sent + timeout - slack
                                           or stamp > targets_again)
                 else None)
        if phase is None:
            continue
        for topic, torque, msg in sent:
            if not switched:
                expected_topic = first_output if stamp < ev['output'] else second_output
                assert topic == expected_topic, (stamp - ev['stream'], topic)
            want = law.motor_torques(phase)
            for m, value in torque.items():
                a = tset.actuator_index[m]
                if topic == 'motor_gains' and m in ANKLE_MOTORS and phase == 'targets':
                    scale = np.abs(want[[tset.actuator_index[n] for n in ANKLE_MOTORS]]).max()
                    assert abs(value - want[a]) < LINKAGE_MIT * scale, (m, phase, value, want[a])
                else:
                    assert value == pytest.approx(want[a], rel=FD_TOL, abs=EXACT), \
                        (m, phase, topic, value, want[a], (stamp - ev['stopped']) / SECOND,
                         (stamp - ev['resumed']) / SECOND)
            if topic == 'motor_gains':
                _check_gains(tset, law, msg)
        checked[phase] += 1
    assert not by_stamp, f'spring commands for states never published: {len(by_stamp)}'
    assert min(checked.values()) > 20, checked          # every phase seen at its states

    # --- actuator_commands: plain commands, and the plain safe command ------------------------
    plain_motors = {'elbow_motor'}
    holds = []
    for msg in run.commands:
        if not len(msg.position):
            continue                    # a spring's efforts: checked above
        stamp, names = _stamp(msg), set(msg.name)
        held = (not any(msg.velocity) and not any(msg.effort) and len(msg.velocity)
                and len(msg.effort))
        if held:
            holds.append((stamp, msg))
            assert names == plain_motors, f'a plain safe command to {names}'
            continue
        if _between(stamp, springs_from, springs_to):
            assert names <= plain_motors, f'a plain command to a spring: {names}'
        want = tset.joint_to_actuator('position', law.target)
        for m, p in zip(msg.name, msg.position):
            assert p == pytest.approx(want[tset.actuator_index[m]], abs=1e-9)
        if names == plain_motors:
            assert list(msg.effort) == pytest.approx([FEED['elbow'] / 50.0])
    assert holds, 'the elbow never held: the timeout sent it nothing'
    for stamp, msg in holds:
        assert _between(stamp, last_sent + timeout - slack, targets_again), \
            (stamp - ev['stream']) * 1e-9
        assert list(msg.position) == [run.theta[tset.actuator_index['elbow_motor']]]

    # --- the log: the timeout said once, its end once, nothing while commands flow -----------
    log = run.log
    assert log.count('no joint_commands for') == 1, log
    assert log.count('joint_commands resumed') == 1, log
    line = next(x for x in log.splitlines() if 'no joint_commands for' in x)
    assert 'sending hold to elbow_motor' in line and 'the joint springs of hip' in line, line


def _check_gains(tset, law, table):
    """Check the MIT stiffness and damping: the diagonals of Jᵀ Kp J and Jᵀ Kd J there."""
    names = list(table)
    acts = [tset.actuator_index[n] for n in names]
    K = law.J.T @ np.diag(law.kp) @ law.J
    D = law.J.T @ np.diag(law.kd) @ law.J
    for n, a in zip(names, acts):
        assert table[n]['stiffness'] == pytest.approx(K[a, a], rel=FD_TOL)
        assert table[n]['damping'] == pytest.approx(D[a, a], rel=FD_TOL, abs=1e-12)


@pytest.mark.parametrize('first, second', [('effort', 'motor_gains'),
                                           ('motor_gains', 'effort')])
def test_every_motor_command_through_switches_stale_motors_and_a_timeout(
        tmp_path, first, second):
    pytest.importorskip('control_msgs.msg', reason='control_msgs is not installed: no '
                        'motor_gains output')
    run = _run(tmp_path, first, second)
    _check(run, first, second)
