"""
Limits on what the bridge sends to motors: clamped positions, scaled vectors, refused points.

Expected values are worked from the example robot's numbers by hand or taken from the
same core with limiting off (the unlimited command), never from the limiting code.
"""

import contextlib

from conftest import CONFIG
from diagnostic_msgs.msg import DiagnosticArray
import numpy as np
import pytest
from ros_harness import started_node
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
from transmission_bridge.mapping.commands import CommandMapper
from transmission_bridge.transmissions import ConfigError, load_transmissions, parameters

EXAMPLE = CONFIG / 'example_robot_transmissions.yaml'
WRIST = ['wrist_pitch', 'wrist_roll']


def _core(limit=True, **changes):
    ts = load_transmissions(EXAMPLE)
    if changes:
        ts = parameters.apply_parameters(ts, changes)
    return CommandMapper(ts, limit_commands=limit)


def test_differential_motor_beyond_its_limit_ends_exactly_there_the_other_scaled_alike():
    # Wrist: tau_a1 = (tau_p + tau_r) / (2 * 50), tau_a2 = (tau_p - tau_r) / (2 * -50).
    # 30 and 10 N·m are inside the joints' 100 N·m, and ask 0.4 and -0.2 N·m of the motors.
    limited = _core(**{'actuators.wrist_left_motor.limits.effort': 0.25})
    free = _core(limit=False, **{'actuators.wrist_left_motor.limits.effort': 0.25})
    asked = free.map_command(WRIST, [], [], [30.0, 10.0]).effort
    assert asked == pytest.approx([0.4, -0.2], rel=1e-15)
    out = limited.map_command(WRIST, [], [], [30.0, 10.0])
    assert out.names == ('wrist_left_motor', 'wrist_right_motor')
    assert out.effort[0] == 0.25                                  # exactly at its limit
    assert out.effort[1] == pytest.approx(asked[1] * 0.25 / asked[0], rel=1e-15)
    assert np.cross(np.append(out.effort, 0), np.append(asked, 0))[2] == pytest.approx(
        0, abs=1e-15)                                             # direction kept
    assert limited.counters.limited == 1
    note = limited.last_result.limited[0]
    assert "effort of actuator 'wrist_left_motor' 0.4" in note and 'limit 0.25' in note
    # Within the limit: nothing changes, nothing counted.
    small = limited.map_command(WRIST, [], [], [3.0, 1.0])
    assert small.effort.tolist() == free.map_command(WRIST, [], [], [3.0, 1.0]).effort.tolist()
    assert limited.counters.limited == 1
    assert limited.last_result.limited == ()


def test_negative_command_at_a_joint_limit_keeps_its_sign():
    core = _core(**{'joints.elbow.limits.effort': 40.0})
    free = _core(limit=False)
    out = core.map_command(['elbow'], [], [], [-50.0])
    # elbow: simple, n = 80: tau_a = tau_j / 80; the joint limits it to -40 N·m.
    assert out.effort[0] == pytest.approx(-40.0 / 80.0, rel=1e-15)
    assert free.map_command(['elbow'], [], [], [-50.0]).effort[0] == -50.0 / 80.0


def test_positions_are_clamped_per_joint_before_the_map():
    core, free = _core(), _core(limit=False)
    # Example limits: wrist_pitch [-2, 2], wrist_roll [-3, 3]. Pitch 2.5 is clamped to 2.
    out = core.map_command(WRIST, [2.5, 0.5], [], [])
    assert out.position.tolist() == free.map_command(WRIST, [2.0, 0.5], [], []).position.tolist()
    assert "position of joint 'wrist_pitch' 2.5 clamped to 2.0" in \
        core.last_result.limited


def test_a_motor_position_is_clamped_to_its_travel_after_the_joint_limits():
    # wrist_left_motor = 50 (pitch + roll): 0.3 and 0.3 rad, within the joints' limits, put it
    # at 30 rad; its travel ends at 25.
    core = _core(**{'actuators.wrist_left_motor.limits.upper': 25.0})
    free = _core(limit=False)
    asked = free.map_command(WRIST, [0.3, 0.3], [], []).position
    assert asked[0] == pytest.approx(30.0, rel=1e-15)
    out = core.map_command(WRIST, [0.3, 0.3], [], [])
    assert out.position.tolist() == [25.0, asked[1]]
    assert "position of actuator 'wrist_left_motor' 30.0" in core.last_result.limited[0]
    with pytest.raises(ConfigError, match="position of actuator 'wrist_left_motor'"):
        core.map_trajectory(WRIST, [[0.3, 0.3]], [[]], [[]], [[]])


def test_velocity_vector_scaled_by_the_joint_that_limits_it():
    # shoulder_pan velocity limit 2 rad/s (n = 100): 4 rad/s asks twice too much.
    core = _core()
    out = core.map_command(['shoulder_pan'], [], [4.0], [])
    assert out.velocity[0] == 2.0 * 100.0
    # A differential: pitch 4, roll 1 (limits 3 and 3): both scaled by 3/4.
    free = _core(limit=False).map_command(WRIST, [], [4.0, 1.0], []).velocity
    wrist = core.map_command(WRIST, [], [4.0, 1.0], []).velocity
    np.testing.assert_allclose(wrist, free * 0.75, rtol=1e-15)


def test_damping_compensation_uses_the_limited_velocity():
    # wrist damping 0.05: effort sent = map(tau + b v) with v the velocity after limiting.
    core = _core()
    out = core.map_command(WRIST, [], [4.0, 1.0], [1.0, 0.0])
    expected = _core(limit=False).map_command(
        WRIST, [], [3.0, 0.75], [1.0, 0.0]).effort
    np.testing.assert_allclose(out.effort, expected, rtol=1e-15)


def test_limit_commands_off_maps_unchanged():
    core = _core(limit=False, **{'actuators.wrist_left_motor.limits.effort': 0.25})
    assert core.map_command(WRIST, [], [], [30.0, 10.0]).effort[0] == pytest.approx(0.4)
    assert core.counters.limited == 0


@pytest.mark.parametrize('point, words', [
    (([0.1, 2.5], [], [0.0, 0.0]), "point 1: position of joint 'wrist_roll' 2.5"),
    (([], [3.5, 0.0], []), "point 1: velocity of joint 'wrist_pitch' 3.5 is beyond its "
                           'limit 3.0'),
    (([], [], [30.0, 10.0]), "point 1: effort of actuator 'wrist_left_motor' 0.4 is beyond "
                             'its limit 0.25'),
])
def test_trajectory_past_a_limit_is_refused_whole_with_the_reason(point, words):
    core = _core(**{'actuators.wrist_left_motor.limits.effort': 0.25,
                    'joints.wrist_roll.limits.upper': 2.0})
    pos, vel, eff = point
    first = ([0.0, 0.0] if pos else [], [0.0, 0.0] if vel else [], [0.0, 0.0] if eff else [])
    with pytest.raises(ConfigError) as info:
        core.map_trajectory(WRIST, [first[0], pos], [first[1], vel], [[], []], [first[2], eff])
    assert words in str(info.value)
    assert core.counters.trajectories_rejected == 1
    core.limit_commands = False
    core.map_trajectory(WRIST, [first[0], pos], [first[1], vel], [[], []], [first[2], eff])
    assert core.counters.trajectories_mapped == 1


def test_trajectory_at_the_limit_is_accepted():
    core = _core()
    names, (pos, _, _, _) = core.map_trajectory(WRIST, [[2.0, -3.0]], [[]], [[]], [[]])
    assert pos.shape == (1, 2)


def test_limits_change_with_parameters_and_bad_ones_are_refused():
    ts = load_transmissions(EXAMPLE)
    core = CommandMapper(ts)
    assert core.map_command(WRIST, [], [], [30.0, 10.0]).effort[0] == pytest.approx(0.4)
    core.set_transmissions(parameters.apply_parameters(
        ts, {'actuators.wrist_left_motor.limits.effort': 0.25}))
    assert core.map_command(WRIST, [], [], [30.0, 10.0]).effort[0] == 0.25
    for bad, words in (({'joints.elbow.limits.effort': 0.0}, 'limits.effort must be > 0'),
                       ({'joints.elbow.limits.lower': 3.0}, 'limits.lower 3.0 is above'),
                       ({'joints.elbow.limits.upper': float('nan')}, 'got nan')):
        with pytest.raises(ConfigError, match=words):
            parameters.apply_parameters(ts, bad)


# --- over DDS: the bridge node ---------------------------------------------------------

WRIST3 = CONFIG / 'three_motor_wrist_transmissions.yaml'
MOTORS3 = ['wrist_motor_1', 'wrist_motor_2', 'wrist_motor_3']
JOINTS3 = ['wrist_roll', 'wrist_pitch', 'wrist_yaw']


@contextlib.contextmanager
def _bridge(tmp_path, source, **params):
    """
    Start the bridge node for ``source`` with ``params`` in a params file; yield its graph.

    The command timeout is off: its hold is a second path on actuator_commands (every 0.5 s
    once a stream stops; test_command_deadline, test_bridge_status), and a reply taken by
    :func:`_command` must be the command's own, however long a step between two commands
    takes on a loaded machine.
    """
    with started_node(tmp_path, 'transmission_bridge.bridge.node', 'transmission_bridge',
                      {'transmissions_file': str(source), 'diagnostics_period': 0.1,
                       'command_timeout': 0.0, **params},
                      'limits', 'joint_commands') as graph:
        graph.commands = graph.node.create_publisher(JointState, 'joint_commands', 10)
        graph.actuator_commands = graph.collect(JointState, 'actuator_commands')
        yield graph


def _command(graph, names, position=(), velocity=(), effort=()):
    """Publish a joint command until an actuator command comes back; return that."""
    start = len(graph.actuator_commands)
    msg = JointState(name=list(names), position=list(position), velocity=list(velocity),
                     effort=list(effort))
    assert graph.spin_until(lambda: len(graph.actuator_commands) > start, timeout=10,
                            action=lambda: graph.commands.publish(msg)), graph.proc.output()
    return graph.actuator_commands[-1]


@pytest.mark.ros
def test_three_motor_wrist_end_to_end(tmp_path):
    with _bridge(tmp_path, WRIST3) as g:
        states = g.collect(JointState, 'joint_states')
        pub = g.node.create_publisher(JointState, 'actuator_states', 10)
        msg = JointState(name=MOTORS3, position=[10.0, 20.0, 30.0], velocity=[50.0, 0.0, 0.0],
                         effort=[1.0, 0.0, 0.0])
        assert g.spin_until(lambda: states, timeout=10, action=lambda: pub.publish(msg)), \
            g.proc.output()
        out = states[-1]
        assert list(out.name) == JOINTS3
        # By hand, from the file's comments: roll = 10/50 + 0.1, pitch = 10/100 + 20/50,
        # yaw = 10/100 - 20/100 + 30/50.
        assert list(out.position) == pytest.approx([0.3, 0.5, 0.5], abs=1e-15)
        assert list(out.velocity) == pytest.approx([1.0, 0.5, 0.5], abs=1e-15)
        # Motor 1's 1 N·m alone: tau_j = M^-T (1, 0, 0). M^T's first row is
        # (0.02, 0.01, 0.01): tau_j = (50, 0, 0) gives it, and the other rows give 0.
        assert list(out.effort) == pytest.approx([50.0, 0.0, 0.0], abs=1e-12)
        # Commands back: tau_a = M^T tau_j.
        back = _command(g, JOINTS3, effort=[10.0, 20.0, 30.0])
        assert list(back.name) == MOTORS3
        assert list(back.effort) == pytest.approx(
            [0.02 * 10 + 0.01 * 20 + 0.01 * 30, 0.02 * 20 - 0.01 * 30, 0.02 * 30], abs=1e-15)
        # A singular matrix is refused and changes nothing; a valid one takes effect.
        name = 'transmissions.wrist.matrix'
        [bad] = g.set_parameters('transmission_bridge', {
            name: [0.02, 0.0, 0.0, 0.02, 0.0, 0.0, 0.01, -0.01, 0.02]})
        assert not bad.successful and 'singular' in bad.reason
        assert list(_command(g, JOINTS3, effort=[10.0, 20.0, 30.0]).effort) == \
            list(back.effort)
        [ok] = g.set_parameters('transmission_bridge', {
            name: [0.04, 0.0, 0.0, 0.01, 0.02, 0.0, 0.01, -0.01, 0.02]})
        assert ok.successful, ok.reason
        assert _command(g, JOINTS3, effort=[10.0, 0.0, 0.0]).effort[0] == \
            pytest.approx(0.4, abs=1e-15)


@pytest.mark.ros
def test_node_limits_a_differential_command_and_refuses_a_trajectory(tmp_path):
    limit = {'actuators.wrist_left_motor.limits.effort': 0.25}
    with _bridge(tmp_path, EXAMPLE, **limit) as g:
        diagnostics = g.collect(DiagnosticArray, 'diagnostics')
        out = _command(g, WRIST, effort=[30.0, 10.0])
        assert list(out.name) == ['wrist_left_motor', 'wrist_right_motor']
        assert out.effort[0] == 0.25
        assert out.effort[1] == pytest.approx(-0.2 * 0.25 / 0.4, rel=1e-15)

        def counted():
            return any(kv.key == 'commands_limited' and int(kv.value) >= 1
                       for d in diagnostics for s in d.status for kv in s.values)
        assert g.spin_until(counted, timeout=10), g.proc.output()
        assert g.spin_until(lambda: "effort of actuator 'wrist_left_motor' 0.4" in
                            g.proc.output(), timeout=5), g.proc.output()

        trajectories = g.collect(JointTrajectory, 'actuator_trajectory')
        pub = g.node.create_publisher(JointTrajectory, 'joint_trajectory', 10)
        traj = JointTrajectory(joint_names=WRIST, points=[
            JointTrajectoryPoint(effort=[1.0, 0.0]), JointTrajectoryPoint(effort=[30.0, 10.0])])
        assert g.spin_until(lambda: g.node.count_subscribers('joint_trajectory') > 0)
        pub.publish(traj)
        assert g.spin_until(lambda: 'point 1: effort of actuator' in g.proc.output(),
                            timeout=10), g.proc.output()
        g.spin_for(0.5)
        assert trajectories == []

        [ok] = g.set_parameters('transmission_bridge', {'limit_commands': False})
        assert ok.successful
        assert _command(g, WRIST, effort=[30.0, 10.0]).effort[0] == pytest.approx(0.4)
        [bad] = g.set_parameters('transmission_bridge', {'limit_commands': 'yes'})
        assert not bad.successful
