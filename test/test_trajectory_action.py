"""
FollowJointTrajectory through the bridge over DDS, as MoveIt's controller handle sends it.

The bridge runs as a process (a params file with two groups, tolerances as a MoveIt user
sets them); the test side is an rclpy ``ActionClient`` and simulated motors that follow
their commands (positions, perfectly; or stuck, or off by an offset, or silent). What the
motors receive is checked against polynomials solved here from the trajectory's ends and
mapped through the transmissions at the stamp each command carries.
"""

import math
import time

from action_msgs.msg import GoalStatus
from diagnostic_msgs.msg import DiagnosticArray
from lifecycle_msgs.srv import ChangeState
import numpy as np
import pytest
from rclpy.action import ActionClient
from ros_harness import started_node
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectoryPoint

from transmission_bridge.transmissions import load_transmissions

_WHY = ('control_msgs is not installed (make test installs it from ../shared/wheelhouse; a ROS '
        'install has ros-jazzy-control-msgs)')
FollowJointTrajectory = pytest.importorskip('control_msgs.action', reason=_WHY) \
    .FollowJointTrajectory
_msgs = pytest.importorskip('control_msgs.msg', reason=_WHY)
JointTolerance, JointTrajectoryControllerState = (_msgs.JointTolerance,
                                                  _msgs.JointTrajectoryControllerState)
QueryTrajectoryState = pytest.importorskip('control_msgs.srv', reason=_WHY).QueryTrajectoryState

CONFIG = 'config/example_robot_transmissions.yaml'
CLOSED_LOOP = 'config/closed_loop_ankle_transmissions.yaml'
NODE = 'transmission_bridge'
WRIST = ['wrist_pitch', 'wrist_roll']
ARM = ['shoulder_pan', 'shoulder_lift', 'elbow']
STATE_PERIOD = 0.005            # the simulated motors' state rate: 200 Hz
SAMPLED = 1e-9          # a command against the polynomial at its own stamp, relative
PATH_TOL, GOAL_TOL, GOAL_TIME = 0.05, 0.01, 0.3
OK = GoalStatus.STATUS_SUCCEEDED
ABORTED, CANCELED = GoalStatus.STATUS_ABORTED, GoalStatus.STATUS_CANCELED
R = FollowJointTrajectory.Result


class Motors:
    """Simulated motors on the test's node: states at 200 Hz; they follow commands."""

    def __init__(self, graph, tset):
        self.graph, self.tset = graph, tset
        self.names = list(tset.actuator_names)
        q = np.array([tset.joint(j).default_position for j in tset.joint_names])
        self.position = tset.joint_to_actuator('position', q)
        self.velocity = np.zeros(len(self.names))
        self.stuck, self.offset, self.silent = set(), {}, set()
        self.commands = []              # (receive time, msg)
        node = graph.node
        node.create_subscription(JointState, 'actuator_commands', self._command, 1000)
        self.pub = node.create_publisher(JointState, 'actuator_states', 10)
        node.create_timer(STATE_PERIOD, self._tick)

    def _command(self, msg):
        self.commands.append((time.monotonic(), msg))
        for k, name in enumerate(msg.name):
            i = self.names.index(name)
            if name in self.stuck:
                continue
            if len(msg.position):
                self.position[i] = msg.position[k]
            self.velocity[i] = msg.velocity[k] if len(msg.velocity) else 0.0

    def _tick(self):
        keep = [i for i, n in enumerate(self.names) if n not in self.silent]
        reported = self.position.copy()
        for name, offset in self.offset.items():
            reported[self.names.index(name)] += offset
        msg = JointState(name=[self.names[i] for i in keep],
                         position=[float(reported[i]) for i in keep],
                         velocity=[float(self.velocity[i]) for i in keep],
                         effort=[0.0] * len(keep))
        msg.header.stamp = self.graph.node.get_clock().now().to_msg()
        self.pub.publish(msg)

    def joints(self):
        """Return the joint positions of the motors' positions (as reported)."""
        reported = self.position.copy()
        for name, offset in self.offset.items():
            reported[self.names.index(name)] += offset
        joints = self.tset.actuator_to_joint('position', reported)
        return dict(zip(self.tset.joint_names, joints))

    def reset(self):
        self.stuck, self.offset, self.silent = set(), {}, set()
        self.commands.clear()


class Rig:
    """The bridge, the motors, and one ActionClient per controller."""

    def __init__(self, graph, tset):
        self.graph, self.tset = graph, tset
        self.motors = Motors(graph, tset)
        self.clients = {}

    def client(self, group=''):
        if group not in self.clients:
            name = f'{NODE}/{group}/follow_joint_trajectory' if group else \
                f'{NODE}/follow_joint_trajectory'
            client = ActionClient(self.graph.node, FollowJointTrajectory, name)
            assert self.graph.spin_until(client.server_is_ready, timeout=15)
            self.clients[group] = client
        return self.clients[group]

    def send(self, goal, group='', feedback=None):
        """Send ``goal``; return its accepted goal handle."""
        future = self.client(group).send_goal_async(goal, feedback_callback=feedback)
        assert self.graph.spin_until(future.done, timeout=10)
        handle = future.result()
        assert handle.accepted
        return handle

    def result(self, handle, timeout=15):
        future = handle.get_result_async()
        assert self.graph.spin_until(future.done, timeout=timeout)
        out = future.result()
        return out.status, out.result

    def run(self, goal, group='', timeout=15):
        return self.result(self.send(goal, group), timeout)

    def settle(self):
        self.graph.spin_for(0.3)


def goal(joints, points, stamp_ns=None, **tolerances):
    """Return a FollowJointTrajectory goal: ``points`` are (t, positions, velocities[, acc])."""
    g = FollowJointTrajectory.Goal()
    g.trajectory.joint_names = list(joints)
    if stamp_ns is not None:
        g.trajectory.header.stamp.sec, g.trajectory.header.stamp.nanosec = divmod(stamp_ns,
                                                                                  10**9)
    for t, *fields in points:
        p = JointTrajectoryPoint(positions=list(fields[0]))
        if len(fields) > 1:
            p.velocities = list(fields[1])
        if len(fields) > 2:
            p.accelerations = list(fields[2])
        if len(fields) > 3:
            p.effort = list(fields[3])
        p.time_from_start.sec = int(t)
        p.time_from_start.nanosec = int(round((t - int(t)) * 1e9))
        g.trajectory.points.append(p)
    for label, given in tolerances.items():
        getattr(g, label).extend(JointTolerance(name=n, position=p) for n, p in given)
    return g


PARAMS = {'transmissions_file': CONFIG, 'trajectory_controllers': ['arm', 'wrist'],
          'arm.joints': ARM, 'wrist.joints': WRIST, 'constraints.goal_time': GOAL_TIME,
          **{f'constraints.{j}.trajectory': PATH_TOL for j in ARM + WRIST},
          **{f'constraints.{j}.goal': GOAL_TOL for j in ARM + WRIST}}


@pytest.fixture(scope='module')
def rig(tmp_path_factory):
    tset = load_transmissions(CONFIG)
    with started_node(tmp_path_factory.mktemp('fjt'), 'transmission_bridge.bridge.node', NODE,
                      PARAMS, 'fjt', 'actuator_states') as graph:
        rig = Rig(graph, tset)
        graph.spin_for(0.5)
        yield rig


@pytest.fixture
def fresh(rig):
    rig.motors.reset()
    rig.settle()
    rig.motors.commands.clear()
    return rig


def now_ns(rig):
    return rig.graph.node.get_clock().now().nanoseconds


def motor_commands(rig, names, since=0.0):
    """Return (stamp ns, {motor: (position, velocity, effort)}) of commands naming ``names``."""
    out = []
    for received, msg in rig.motors.commands:
        if received >= since and set(names) <= set(msg.name):
            stamp = msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec
            out.append((stamp, {n: (msg.position[k] if len(msg.position) else None,
                                    msg.velocity[k] if len(msg.velocity) else None,
                                    msg.effort[k] if len(msg.effort) else None)
                                for k, n in enumerate(msg.name)}))
    return out


def cubic(T_, p0, v0, p1, v1):
    """Coefficients (low first) of the cubic meeting (p0, v0) at 0 and (p1, v1) at T_."""
    A = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [1, T_, T_ ** 2, T_ ** 3],
                  [0, 1, 2 * T_, 3 * T_ ** 2]], dtype=float)
    return np.linalg.solve(A, [p0, v0, p1, v1])


def test_wrist_goal_succeeds_and_commands_are_the_cubic_through_the_differential(fresh):
    rig, tset = fresh, fresh.tset
    start = rig.motors.joints()
    q0 = np.array([start[j] for j in WRIST])
    target = q0 + [0.3, -0.2]
    t0 = now_ns(rig) + int(0.3e9)                      # a start in the near future
    feedback = []
    handle = rig.send(goal(WRIST, [(1.0, target, [0.0, 0.0])], stamp_ns=t0), 'wrist',
                      feedback.append)
    status, result = rig.result(handle)
    assert (status, result.error_code) == (OK, R.SUCCESSFUL), result.error_string
    rig.settle()                        # the result can overtake the last commands
    got = rig.motors.joints()
    assert np.allclose([got[j] for j in WRIST], target, atol=GOAL_TOL)
    assert len(feedback) >= 10                          # 20 Hz over > 1 s
    assert list(feedback[-1].feedback.joint_names) == WRIST
    # every command: the cubic at its own stamp, through the differential
    coeffs = [cubic(1.0, q0[j], 0.0, target[j], 0.0) for j in range(2)]
    motors = ['wrist_left_motor', 'wrist_right_motor']
    commands = motor_commands(rig, motors)
    inside = [(s, c) for s, c in commands if 0 <= s - t0 <= 10**9]
    assert len(inside) > 100                            # about one per state (200 Hz)
    for stamp, cmd in inside:
        t = (stamp - t0) * 1e-9                         # integers first: ns exact
        q = np.zeros(tset.num_joints)
        v = np.zeros(tset.num_joints)
        for j, name in enumerate(WRIST):
            c = coeffs[j]
            q[tset.joint_index[name]] = c[0] + c[1] * t + c[2] * t ** 2 + c[3] * t ** 3
            v[tset.joint_index[name]] = c[1] + 2 * c[2] * t + 3 * c[3] * t ** 2
        want_p = tset.joint_to_actuator('position', q)
        want_v = tset.joint_to_actuator('velocity', v)
        for m in motors:
            i = tset.actuator_index[m]
            assert abs(cmd[m][0] - want_p[i]) < SAMPLED * max(1.0, abs(want_p[i]))
            assert abs(cmd[m][1] - want_v[i]) < SAMPLED * max(1.0, abs(want_v[i]))
    # the differential's law, independently: motors at 50 (pitch +- roll)
    last = commands[-1][1]
    assert last['wrist_left_motor'][0] == pytest.approx(50 * (target[0] + target[1]), abs=1e-6)


def test_a_stuck_motor_violates_the_path_and_the_wrist_holds(fresh):
    rig = fresh
    rig.motors.stuck.add('wrist_left_motor')
    start = rig.motors.joints()
    target = [start['wrist_pitch'] + 0.4, start['wrist_roll']]
    since = time.monotonic()
    status, result = rig.run(goal(WRIST, [(1.0, target, [0.0, 0.0])]), 'wrist')
    assert (status, result.error_code) == (ABORTED, R.PATH_TOLERANCE_VIOLATED)
    assert 'path tolerance 0.05' in result.error_string and 'wrist_' in result.error_string
    rig.settle()
    last = motor_commands(rig, ['wrist_right_motor'], since)[-1][1]
    held = rig.motors.joints()
    assert last['wrist_right_motor'][1] == 0.0                         # velocity 0
    want = rig.tset.joint_to_actuator('position', np.array(
        [held[j] for j in rig.tset.joint_names]))[rig.tset.actuator_index['wrist_right_motor']]
    assert last['wrist_right_motor'][0] == pytest.approx(want, abs=0.05 * 50)


def test_an_offset_motor_misses_the_goal_within_goal_time(fresh):
    rig = fresh
    rig.motors.offset['wrist_left_motor'] = 50 * 0.03      # pitch and roll off by 0.015
    start = rig.motors.joints()
    target = [start['wrist_pitch'] + 0.2, start['wrist_roll']]
    status, result = rig.run(goal(WRIST, [(0.5, target, [0.0, 0.0])]), 'wrist')
    assert (status, result.error_code) == (ABORTED, R.GOAL_TOLERANCE_VIOLATED)
    assert f'goal_time {GOAL_TIME:g} s' in result.error_string


def test_cancel_ends_canceled_and_holds(fresh):
    rig = fresh
    start = rig.motors.joints()
    handle = rig.send(goal(WRIST, [(3.0, [start['wrist_pitch'] + 0.5, start['wrist_roll']],
                                    [0.0, 0.0])]), 'wrist')
    rig.graph.spin_for(0.6)
    cancel = handle.cancel_goal_async()
    assert rig.graph.spin_until(cancel.done, timeout=10)
    status, result = rig.result(handle)
    assert status == CANCELED
    rig.settle()
    before = rig.motors.joints()['wrist_pitch']
    rig.graph.spin_for(0.5)
    assert rig.motors.joints()['wrist_pitch'] == pytest.approx(before, abs=1e-9)   # stopped
    assert start['wrist_pitch'] + 0.01 < before < start['wrist_pitch'] + 0.5


def test_a_new_goal_replaces_the_running_one(fresh):
    rig = fresh
    start = rig.motors.joints()
    first = rig.send(goal(WRIST, [(3.0, [start['wrist_pitch'] + 0.5, start['wrist_roll']],
                                   [0.0, 0.0])]), 'wrist')
    rig.graph.spin_for(0.4)
    second = rig.send(goal(WRIST, [(0.5, [start['wrist_pitch'], start['wrist_roll']],
                                    [0.0, 0.0])]), 'wrist')
    status, result = rig.result(first)
    assert status == ABORTED and 'replaced by a new goal' in result.error_string
    status, result = rig.result(second)
    assert (status, result.error_code) == (OK, R.SUCCESSFUL)


def test_two_groups_run_at_once(fresh):
    rig = fresh
    start = rig.motors.joints()
    wrist = rig.send(goal(WRIST, [(1.0, [start['wrist_pitch'] - 0.2, start['wrist_roll']],
                                   [0.0, 0.0])]), 'wrist')
    arm = rig.send(goal(ARM, [(1.0, [start[j] + 0.1 for j in ARM], [0.0] * 3)]), 'arm')
    for handle in (wrist, arm):
        status, result = rig.result(handle)
        assert (status, result.error_code) == (OK, R.SUCCESSFUL), result.error_string
    end = rig.motors.joints()
    assert end['elbow'] == pytest.approx(start['elbow'] + 0.1, abs=GOAL_TOL)
    assert end['wrist_pitch'] == pytest.approx(start['wrist_pitch'] - 0.2, abs=GOAL_TOL)


@pytest.mark.parametrize('make, code, words', [
    (lambda s: goal(['wrist_pitch', 'elbow'], [(1.0, [0.0, 0.0])]), R.INVALID_JOINTS,
     "['elbow'] are not in this controller"),
    (lambda s: goal(['wrist_pitch'], [(1.0, [0.0])]), R.INVALID_JOINTS,
     'allow_partial_joints_goal is false'),
    (lambda s: goal(WRIST, [(1.0, [0.0, 0.0]), (0.5, [0.1, 0.0])]), R.INVALID_GOAL,
     'times must strictly increase'),
    (lambda s: goal(WRIST, [(1.0, [0.0, math.inf])]), R.INVALID_GOAL, 'is inf'),
    (lambda s: goal(WRIST, [(1.0, [1.0, 0.0], [0.0, 0.0])], stamp_ns=10**9),
     R.OLD_HEADER_TIMESTAMP, 'before now'),
    (lambda s: goal(WRIST, [(1.0, [2.5, 0.0])]), R.INVALID_GOAL,
     "joint 'wrist_pitch' reaches position"),
    (lambda s: goal(WRIST, [(1.0, [0.1, 0.0])], path_tolerance=[('wrist_pitch', -3.0)]),
     R.INVALID_GOAL, 'path_tolerance'),
])
def test_refused_goals_send_nothing(fresh, make, code, words):
    rig = fresh
    since = time.monotonic()
    status, result = rig.run(make(rig.motors.joints()), 'wrist')
    assert (status, result.error_code) == (ABORTED, code), result.error_string
    assert words in result.error_string
    rig.graph.spin_for(0.2)
    assert not motor_commands(rig, ['wrist_left_motor'], since)


def test_motor_limit_needs_one_set_on_the_motor(fresh):
    """The wrist motors have no velocity limit in the example file: give one at runtime."""
    rig = fresh
    ok = rig.graph.set_parameters(NODE, {'actuators.wrist_left_motor.limits.velocity': 100.0})
    assert ok
    try:
        s = rig.motors.joints()
        status, result = rig.run(goal(WRIST, [(0.5, [s['wrist_pitch'] + 0.58,
                                                     s['wrist_roll'] + 0.58], [0.0, 0.0])]),
                                 'wrist')
        assert (status, result.error_code) == (ABORTED, R.INVALID_GOAL)
        assert "motor 'wrist_left_motor' reaches velocity" in result.error_string
        assert 'limit 100' in result.error_string
    finally:
        rig.graph.set_parameters(NODE, {'actuators.wrist_left_motor.limits.velocity': math.inf})


def test_streamed_efforts_are_feed_forward_and_positions_ignored(fresh):
    rig, tset = fresh, fresh.tset
    s = rig.motors.joints()
    pub = rig.graph.node.create_publisher(JointState, 'joint_commands', 10)
    tau = [2.0, -1.0]
    since = time.monotonic()
    handle = rig.send(goal(WRIST, [(1.5, [s['wrist_pitch'], s['wrist_roll']], [0.0, 0.0])]),
                      'wrist')
    # accepted is not yet executing: stream once the goal's own commands flow
    assert rig.graph.spin_until(lambda: motor_commands(rig, ['wrist_left_motor'], since))
    for _ in range(10):
        pub.publish(JointState(name=WRIST, position=[1.0, 1.0], effort=tau))
        rig.graph.spin_for(0.05)
    status, result = rig.result(handle)
    assert status == OK, result.error_string
    full = np.zeros(tset.num_joints)
    for j, name in enumerate(WRIST):
        full[tset.joint_index[name]] = tau[j]
    want = tset.joint_to_actuator('effort', full)
    with_effort = [c for _, c in motor_commands(rig, ['wrist_left_motor'], since)
                   if c['wrist_left_motor'][2] is not None]
    assert with_effort
    for m in ('wrist_left_motor', 'wrist_right_motor'):
        assert with_effort[-1][m][2] == pytest.approx(want[tset.actuator_index[m]], abs=1e-9)
    # the streamed positions (1.0) never reached the motors
    assert abs(rig.motors.joints()['wrist_pitch'] - s['wrist_pitch']) < GOAL_TOL
    diag = rig.graph.collect(DiagnosticArray, 'diagnostics')
    assert rig.graph.spin_until(lambda: any(
        kv.key == 'streamed_commands_ignored' and int(kv.value) > 0
        for m in diag for st in m.status for kv in st.values), timeout=5)
    rig.graph.node.destroy_publisher(pub)


def test_controller_state_and_query_state(fresh):
    rig = fresh
    s = rig.motors.joints()
    states = rig.graph.collect(JointTrajectoryControllerState, f'{NODE}/wrist/controller_state')
    handle = rig.send(goal(WRIST, [(1.0, [s['wrist_pitch'] + 0.1, s['wrist_roll']],
                                    [0.0, 0.0])]), 'wrist')
    rig.graph.spin_for(0.3)
    request = QueryTrajectoryState.Request()
    request.time = rig.graph.node.get_clock().now().to_msg()
    answer = rig.graph.call(QueryTrajectoryState, f'{NODE}/wrist/query_state', request)
    assert answer.success and list(answer.name) == WRIST
    assert s['wrist_pitch'] < answer.position[0] < s['wrist_pitch'] + 0.1
    rig.result(handle)
    assert states and list(states[-1].joint_names) == WRIST
    request.time = rig.graph.node.get_clock().now().to_msg()
    assert not rig.graph.call(QueryTrajectoryState, f'{NODE}/wrist/query_state',
                              request).success


def test_a_silent_motor_aborts_the_goal(fresh):
    rig = fresh
    s = rig.motors.joints()
    handle = rig.send(goal(WRIST, [(3.0, [s['wrist_pitch'] + 0.3, s['wrist_roll']],
                                    [0.0, 0.0])]), 'wrist')
    rig.graph.spin_for(0.3)
    rig.motors.silent.add('wrist_right_motor')
    status, result = rig.result(handle)
    assert status == ABORTED and "['wrist_right_motor'] are stale" in result.error_string


def test_deactivation_aborts_the_goal(fresh):
    rig = fresh
    s = rig.motors.joints()
    handle = rig.send(goal(WRIST, [(3.0, [s['wrist_pitch'] + 0.3, s['wrist_roll']],
                                    [0.0, 0.0])]), 'wrist')
    rig.graph.spin_for(0.3)
    change = ChangeState.Request()
    change.transition.label = 'deactivate'
    assert rig.graph.call(ChangeState, f'{NODE}/change_state', change).success
    try:
        status, result = rig.result(handle)
        assert status == ABORTED and 'deactivated' in result.error_string
        status, result = rig.run(goal(WRIST, [(1.0, [s['wrist_pitch'], s['wrist_roll']])]),
                                 'wrist')
        assert status == ABORTED and 'not active' in result.error_string
    finally:
        change.transition.label = 'activate'
        assert rig.graph.call(ChangeState, f'{NODE}/change_state', change).success


def test_the_all_joints_controller_moves_every_joint(fresh):
    rig, tset = fresh, fresh.tset
    s = rig.motors.joints()
    names = list(tset.joint_names)
    target = [s[j] + (0.05 if j.startswith(('wrist', 'elbow')) else 0.0) for j in names]
    status, result = rig.run(goal(names, [(1.0, target, [0.0] * len(names))]))
    assert (status, result.error_code) == (OK, R.SUCCESSFUL), result.error_string
    assert rig.motors.joints()['elbow'] == pytest.approx(target[names.index('elbow')],
                                                         abs=GOAL_TOL)


def test_a_linkage_goal_succeeds(tmp_path):
    tset = load_transmissions(CLOSED_LOOP)
    params = {'transmissions_file': CLOSED_LOOP,
              **{f'constraints.{j}.goal': GOAL_TOL for j in tset.joint_names},
              **{f'constraints.{j}.trajectory': PATH_TOL for j in tset.joint_names}}
    with started_node(tmp_path, 'transmission_bridge.bridge.node', NODE, params, 'fjtl',
                      'actuator_states') as graph:
        rig = Rig(graph, tset)
        graph.spin_for(0.5)
        target = [0.2, -0.15]
        status, result = rig.run(goal(tset.joint_names, [(1.0, target, [0.0, 0.0])]))
        assert (status, result.error_code) == (OK, R.SUCCESSFUL), result.error_string
        got = rig.motors.joints()
        assert np.allclose([got[j] for j in tset.joint_names], target, atol=GOAL_TOL)


def test_a_ur5_from_example_robot_data_follows_a_quintic_goal(tmp_path):
    """Someone else's URDF: its transmissions and <limit>s, a goal with accelerations."""
    from robot_corpus import robot
    path = robot('ur_description/urdf/ur5_robot.urdf')
    if path is None or not path.is_file():
        pytest.skip('example-robot-data is not installed')
    tset = load_transmissions(path)
    names = list(tset.joint_names)
    params = {'transmissions_file': str(path),
              **{f'constraints.{j}.goal': GOAL_TOL for j in names}}
    with started_node(tmp_path, 'transmission_bridge.bridge.node', NODE, params, 'fjtu',
                      'actuator_states') as graph:
        rig = Rig(graph, tset)
        graph.spin_for(0.5)
        s = rig.motors.joints()
        target = [s[j] + 0.2 for j in names]
        status, result = rig.run(goal(names, [(0.6, [s[j] + 0.1 for j in names],
                                               [0.2] * 6, [0.0] * 6),
                                              (1.2, target, [0.0] * 6, [0.0] * 6)]))
        assert (status, result.error_code) == (OK, R.SUCCESSFUL), result.error_string
        got = rig.motors.joints()
        assert np.allclose([got[j] for j in names], target, atol=GOAL_TOL)
        # beyond the URDF's velocity limit (3.15 rad/s for the shoulder): refused, unsent
        rig.settle()                    # the last commands of the goal before, received
        since = time.monotonic()
        status, result = rig.run(goal(names, [(0.1, [s[j] + 1.0 for j in names])]))
        assert status == ABORTED and 'velocity' in result.error_string
        assert not motor_commands(rig, [tset.actuator_names[0]], since)
