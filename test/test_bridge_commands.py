"""The bridge's command side without ROS: streaming commands, trajectories, refusals."""

from conftest import CONFIG
import numpy as np
import pytest
from transmission_bridge.mapping.commands import CommandMapper
from transmission_bridge.mapping.measurement import Measured
from transmission_bridge.mapping.state import ActuatorStates
from transmission_bridge.transmissions import ConfigError, load_transmissions

TS = load_transmissions(CONFIG / 'example_robot_transmissions.yaml')
MOTORS = list(TS.actuator_names)


@pytest.fixture
def core():
    return CommandMapper(TS)


def test_trajectory_round_trip_and_errors(core):
    names, (pos, vel, acc, eff) = core.map_trajectory(
        ['wrist_roll', 'wrist_pitch'], [[0.1, 0.2]], [[0.0, 0.0]], [[1.0, 0.5]], [[]])
    assert names == ('wrist_left_motor', 'wrist_right_motor')
    assert eff is None
    full = np.zeros(7)
    full[3:5] = pos[0]
    back = TS.actuator_to_joint('position', full)
    np.testing.assert_allclose(back[3:5], [0.2, 0.1], atol=1e-14)
    np.testing.assert_allclose(TS.actuator_to_joint('velocity', np.r_[0, 0, 0, acc[0], 0, 0])
                               [3:5], [0.5, 1.0], atol=1e-14)
    with pytest.raises(ConfigError, match='non-finite'):
        core.map_trajectory(['elbow'], [[np.nan]], [[]], [[]], [[]])
    with pytest.raises(ConfigError, match='duplicate joint'):
        core.map_trajectory(['elbow', 'elbow'], [[1.0, 1.0]], [[]], [[]], [[]])
    assert core.counters.trajectories_rejected == 2
    assert core.counters.trajectories_mapped == 1


# --- streaming joint commands (issue 15) ----------------------------------------------------

JOINTS = list(TS.joint_names)
# Float round-off allowed between the command map and the state map it inverts.
COMMAND_ATOL = 1e-12


def test_command_maps_every_interface_and_inverts_the_state_map():
    rng = np.random.default_rng(151)
    q, v, tau = (rng.normal(size=len(JOINTS)) for _ in range(3))
    # The motors move as commanded: their friction (three of them have some) is added at
    # the motor velocity measured, and taken off the state at the velocity it reports.
    moving = Measured(q, v, TS.joint_to_actuator('position', q),
                      TS.joint_to_actuator('velocity', v))
    core = CommandMapper(TS, measured=lambda stamp_ns=None: moving)
    cmd = core.map_command(JOINTS, q, v, tau)
    assert cmd.names == tuple(MOTORS)
    # The motors, fed back as states, give the commanded joint values again; effort: the
    # bridge publishes tau_transmitted - b v, so the command added b v (NOTATION.md).
    out = ActuatorStates(TS).ingest('m', MOTORS, cmd.position, cmd.velocity, cmd.effort, 1)
    np.testing.assert_allclose(out.position, q, rtol=0, atol=COMMAND_ATOL)
    np.testing.assert_allclose(out.velocity, v, rtol=0, atol=COMMAND_ATOL)
    np.testing.assert_allclose(out.effort, tau, rtol=0, atol=COMMAND_ATOL)


def test_command_without_velocity_adds_no_damping(core):
    tau = np.linspace(-1.0, 1.0, len(JOINTS))
    cmd = core.map_command(JOINTS, [], [], tau)
    assert cmd.position is None and cmd.velocity is None
    np.testing.assert_allclose(cmd.effort, TS.joint_to_actuator('effort', tau), rtol=0,
                               atol=COMMAND_ATOL)
    assert TS.damping.any()           # the example has damping: the test can tell


def test_partial_differential_needs_a_last_command_for_the_other_joint(core):
    refused = core.map_command(['wrist_pitch'], [], [], [2.0])
    assert refused is None
    assert "joints ['wrist_roll'] never commanded" in core.last_result.reason
    assert core.counters.rejected_incomplete == 1
    full = core.map_command(['wrist_pitch', 'wrist_roll'], [], [], [2.0, 0.0])
    half = core.map_command(['wrist_roll'], [], [], [1.0])
    assert half.names == full.names == ('wrist_left_motor', 'wrist_right_motor')
    np.testing.assert_allclose(half.effort, TS.joint_to_actuator(
        'effort', _joints({'wrist_pitch': 2.0, 'wrist_roll': 1.0}))[[3, 4]], atol=COMMAND_ATOL)


def _joints(values):
    full = np.zeros(len(JOINTS))
    for name, value in values.items():
        full[JOINTS.index(name)] = value
    return full


@pytest.mark.parametrize('names,position,reason,counter', [
    (['elbow'], [float('nan')], 'NaN in a command', 'rejected_non_finite'),
    (['elbow'], [float('inf')], 'infinite value', 'rejected_non_finite'),
    (['elbow', 'elbow'], [1.0, 2.0], 'duplicate names', 'rejected_duplicate_names'),
    (['elbow'], [1.0, 2.0], 'array of length 2 for 1 names', 'rejected_length_mismatch'),
    (['nothing'], [1.0], 'no known joint', 'rejected_incomplete'),
])
def test_bad_commands_are_refused_and_change_nothing(core, names, position, reason, counter):
    core.map_command(['wrist_pitch', 'wrist_roll'], [0.5, 0.25], [], [])
    assert core.map_command(names, position, [], []) is None
    assert reason in core.last_result.reason
    assert getattr(core.counters, counter) == 1
    after = core.map_command(['wrist_roll'], [0.25], [], [])     # pitch: still 0.5
    np.testing.assert_allclose(after.position, TS.joint_to_actuator(
        'position', _joints({'wrist_pitch': 0.5, 'wrist_roll': 0.25}))[[3, 4]],
        atol=COMMAND_ATOL)


def test_command_skips_unknown_joints_and_reports_them_once(core):
    cmd = core.map_command(['elbow', 'tail'], [1.0, 9.0], [], [])
    assert cmd.names == ('elbow_motor',)
    assert core.last_result.new_unknown_names == ('tail',)
    core.map_command(['elbow', 'tail'], [1.0, 9.0], [], [])
    assert core.last_result.new_unknown_names == ()
    assert core.counters.unknown_names == 2


def test_offset_touches_command_position_only(core):
    elbow = TS.joint('elbow')
    cmd = core.map_command(['elbow'], [elbow.offset], [1.0], [1.0])
    assert cmd.position[0] == 0.0          # x_a = (x_j - off) n
    assert cmd.velocity[0] == pytest.approx(80.0)
