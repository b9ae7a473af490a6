"""
The bridge's wiring around its node, driven without one.

Its own parameters' table, the encoders' turns parameters, its /diagnostics status and the
command deadline's log lines and plain safe command.
"""

import math
import types

from conftest import CONFIG
import numpy as np
import pytest
from transmission_bridge.bridge import command_sources, status
from transmission_bridge.bridge.settings import EncoderTurns, SETTINGS
from transmission_bridge.mapping.commands import CommandMapper
from transmission_bridge.mapping.deadline import CommandDeadline
from transmission_bridge.mapping.state import ActuatorStates
from transmission_bridge.ros.settings import refusal
from transmission_bridge.transmissions import load_transmissions

ENCODERS = load_transmissions(CONFIG / 'single_turn_encoder_transmissions.yaml')
ARM = load_transmissions(CONFIG / 'example_robot_transmissions.yaml')
SECOND = 1_000_000_000


@pytest.mark.parametrize('name, value, words', [
    ('stale_timeout', 0.0, 'stale_timeout must be a finite number > 0, got 0.0'),
    ('stale_timeout', math.inf, 'stale_timeout must be a finite number > 0, got inf'),
    ('stale_timeout', 1, 'stale_timeout must be a finite number > 0, got 1'),
    ('command_timeout', -1.0, 'command_timeout must be a finite number of seconds >= 0'),
    ('command_timeout', math.nan, 'command_timeout must be a finite number of seconds >= 0'),
    ('on_command_timeout', 'brake', 'on_command_timeout must be one of hold, zero_velocity, '
                                    "zero_effort, none, got 'brake'"),
])
def test_the_bridges_own_settings_refuse_with_the_key_and_value(name, value, words):
    assert refusal(SETTINGS, [(name, value)]).startswith(words)


@pytest.mark.parametrize('name, value', [('stale_timeout', 0.01), ('command_timeout', 0.0),
                                         ('on_command_timeout', 'zero_effort'),
                                         ('limit_commands', False)])
def test_the_bridges_own_settings_take_what_is_valid(name, value):
    assert refusal(SETTINGS, [(name, value)]) == ''


def test_encoder_turns_exist_for_the_encoders_only_and_take_whole_numbers():
    turns = EncoderTurns()
    gone, new = turns.change(ENCODERS)
    assert not gone and new == ['actuators.hip_motor.encoder_turns',
                                'actuators.knee_motor.encoder_turns']
    param = types.SimpleNamespace
    assert turns.refusal([param(name=new[1], value=2)]) == ''
    for bad in (1.5, True, 'two'):
        assert 'must be a whole number of periods' in turns.refusal(
            [param(name=new[1], value=bad)])
    assert turns.refusal([param(name='actuators.knee_motor.offset', value=1.5)]) == ''
    gone, new = turns.change(ARM)                     # a robot without encoders
    assert gone == {'actuators.hip_motor.encoder_turns', 'actuators.knee_motor.encoder_turns'}
    assert not new and not turns.names


def test_encoder_turns_given_move_the_reading_by_whole_periods():
    states = ActuatorStates(ENCODERS)
    states.ingest('s', ['knee_motor', 'hip_motor'], [1.0, 0.2], [], [], 1)
    turns = EncoderTurns()
    turns.change(ENCODERS)
    line = turns.apply(states, 'actuators.knee_motor.encoder_turns', -1)
    expected = 1.0 - 2 * math.pi                      # the reading and one period back
    assert line == f'knee_motor: -1 whole turns given; position now {expected:.6g}'
    assert states.actuator_positions()[ENCODERS.actuator_index['knee_motor']] == expected


def _deadline(timeout_ns, mode='hold', tset=ARM):
    deadline = CommandDeadline(timeout_ns, mode)
    deadline.configure(tset.joint_names)
    return deadline


def _routes(tset, states):
    commands = CommandMapper(tset)
    return types.SimpleNamespace(states=states, commands=commands,
                                 typed_count={'actuator_states': 1, 'joint_commands': 0})


def test_status_names_stale_actuators_and_the_joints_left_out():
    states = ActuatorStates(ARM)
    states.stale_ns = SECOND // 2
    wrist = [n for n in ARM.actuator_names if n.startswith('wrist')]
    arm = [n for n in ARM.actuator_names if n not in wrist]
    zeros = [0.0] * len(arm)
    states.ingest('w', wrist, [0.0, 0.0], [], [], 1, now_ns=0)
    states.ingest('a', arm, zeros, zeros, zeros, 2, now_ns=SECOND)     # the wrist is stale
    report = status.status(_routes(ARM, states), _deadline(0), True, 0, '',
                           SECOND, SECOND // 2)
    assert report.warning.startswith('stale actuators: ' + ', '.join(wrist))
    assert 'joints left out (stale actuators): wrist_pitch, wrist_roll' in report.warning
    assert report.extra['stale_joints'] == 'wrist_pitch,wrist_roll'
    assert report.extra['messages_typed'] == 1 and report.extra['messages_fast'] == 1
    assert report.error == '' and report.logged == ()


def test_status_says_what_encoders_and_linkages_withhold_and_logs_it():
    states = ActuatorStates(ENCODERS)
    states.ingest('s', ['knee_motor', 'hip_motor'], [1.0, 0.2], [], [], 1)
    report = status.status(_routes(ENCODERS, states), _deadline(0), False, 3,
                           'overloaded', 2, SECOND)
    assert 'encoder turns unknown: knee' in report.warning
    assert report.warning.endswith('overloaded; encoder turns unknown: knee; inactive '
                                   '(lifecycle): nothing published')
    assert report.logged[0][0].startswith('encoder turns unknown, joints not published: knee: ')
    assert report.extra['dropped_overload'] == 3
    legged = load_transmissions(CONFIG / 'legged_robot.urdf')
    states = ActuatorStates(legged)
    position = np.zeros(legged.num_actuators)
    position[legged.actuator_index['right_ankle_lower_motor']] = 3.0     # beyond its limits
    states.ingest('s', legged.actuator_names, position, [], [], 1)
    report = status.status(_routes(legged, states), _deadline(0), True, 0, '', 2,
                           SECOND)
    assert 'linkage states refused: right_ankle_pitch,right_ankle_roll: a joint beyond its ' \
           'limits' in report.warning
    assert report.logged[0][0].startswith('linkage states refused, their joints not published')


def test_a_timed_out_joint_is_an_error_and_holds_the_measured_positions():
    states = ActuatorStates(ARM)
    measured = np.linspace(-1.0, 1.0, ARM.num_actuators)
    states.ingest('s', ARM.actuator_names, measured, [], [], 1, now_ns=0)
    deadline = _deadline(SECOND // 10)
    deadline.commanded(np.array([0, 1]), now_ns=0)        # shoulder_pan, shoulder_lift
    tripped, due = deadline.poll(SECOND // 10)
    assert tripped.tolist() == due.tolist() == [0, 1]
    report = status.status(_routes(ARM, states), deadline, True, 0, '', SECOND // 10,
                           SECOND)
    assert report.error.startswith('command timeout: no joint_commands for shoulder_pan, '
                                   'shoulder_lift since 0.000 s; hold for '
                                   f'{ARM.actuator_names[0]}, {ARM.actuator_names[1]}')
    lines = command_sources.trip_lines(deadline, ARM, tripped)
    assert len(lines) == 1 and lines[0].startswith('no joint_commands for 0.1 s: sending hold '
                                                   'to shoulder_pan_motor, shoulder_lift_motor')
    messages = command_sources.safe_command_messages(deadline, states, due, SECOND // 10, None)
    assert [list(m.name) for m in messages] == [list(ARM.actuator_names[:2])]
    assert list(messages[0].position) == list(measured[:2])
    assert list(messages[0].velocity) == [0.0, 0.0] and list(messages[0].effort) == [0.0, 0.0]


def test_a_joint_spring_s_timeout_is_said_as_its_own_hold_not_a_plain_command():
    deadline = _deadline(SECOND // 10)
    deadline.commanded(np.array([2, 3, 4]), now_ns=0)     # elbow, the wrist's two joints
    tripped, _ = deadline.poll(SECOND // 10)
    [line] = command_sources.trip_lines(deadline, ARM, tripped, sprung={3, 4})
    assert line == ('no joint_commands for 0.1 s: sending hold to elbow_motor every 0.1 s; the '
                    'joint springs of wrist_pitch, wrist_roll hold at the positions measured '
                    'now (hold), until they resume')
