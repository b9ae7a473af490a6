"""
Absolute encoders behind a reduction (issue 45): readings modulo a period made whole.

The truth is a motor position written down before it is wrapped; the readings are what a
single-turn encoder reports of it (``position % period``). What the bridge makes of the
readings must be the truth again, through wraps, NaN and restarts, and a start that the
joint limits cannot decide must wait for the operator.
"""

import math

from bag_harness import joint_states, tool
import numpy as np
import pytest
from transmission_bridge.bag import io
from transmission_bridge.bag.example import one_message
from transmission_bridge.mapping.fast_route import FastStateRoute
from transmission_bridge.mapping.state import ActuatorStates
from transmission_bridge.transmissions import ConfigError, load_transmissions
from transmission_bridge.transmissions.encoders import unwrap

TWO_PI = 2 * math.pi
EPS = np.finfo(float).eps
# A whole position is reading + turns * period: two roundings of the motor's magnitude.
WHOLE_ULPS = 4


def _gear(reduction=6.0, lower=-1.0, upper=1.0, period=TWO_PI):
    return load_transmissions({'transmissions': [{
        'name': 'knee', 'type': 'simple',
        'actuators': [{'name': 'motor', 'mechanical_reduction': reduction,
                       'encoder': {'period': period}}],
        'joints': [{'name': 'joint', 'limits': {'lower': lower, 'upper': upper}}]}]})


def test_a_stream_wrapping_a_thousand_times_stays_continuous():
    # A 6:1 knee turning its motor 1000 times, 7 readings a turn: the joint is the motor's
    # position / 6 to its rounding, every step of the way.
    ts = _gear(lower=-2000.0, upper=2000.0)
    states = ActuatorStates(ts)
    states.set_encoder_turns('motor', 0)         # the start is given: 0 turns
    motor = np.arange(7001) * (TWO_PI / 7) + 0.25
    worst = 0.0
    for k, m in enumerate(motor):
        out = states.ingest('a', ['motor'], [m % TWO_PI], [], [], k + 1)
        bound = WHOLE_ULPS * EPS * abs(m) / 6 + EPS
        worst = max(worst, abs(out.position[0] - m / 6) / bound)
    assert worst <= 1.0
    assert states.encoders.turns_by_name() == {'motor': 1000}


def test_half_a_period_is_not_a_wrap_and_more_is():
    last, turns, periods = np.array([0.0]), np.array([0.0]), np.array([TWO_PI])
    assert unwrap(np.array([math.pi]), last, turns, periods)[0] == math.pi
    assert turns[0] == 0                        # up exactly half a period: not a wrap
    assert unwrap(np.array([0.0]), last, turns, periods)[0] == 0.0
    assert turns[0] == 0                        # down exactly half: not either
    out = unwrap(np.array([math.pi + 0.1]), last, turns, periods)
    assert turns[0] == -1 and out[0] == math.pi + 0.1 - TWO_PI     # more than half: a wrap


def test_nan_in_the_middle_of_a_wrap_is_skipped():
    last, turns, periods = np.array([6.1]), np.array([3.0]), np.array([TWO_PI])
    out = unwrap(np.array([np.nan]), last, turns, periods)
    assert np.isnan(out[0]) and last[0] == 6.1 and turns[0] == 3
    out = unwrap(np.array([0.1]), last, turns, periods)
    assert turns[0] == 4 and out[0] == 0.1 + 4 * TWO_PI


def _at(states, m, stamp):
    return states.ingest('a', ['motor'], [m % TWO_PI], [], [], stamp)


def test_an_ambiguous_start_waits_for_the_turns_and_then_is_exact():
    # 6:1 and a joint range of 2 rad: the motor spans 12 rad, about two turns, so at
    # q = 0.5 (motor 3 rad) a second choice (q = 0.5 - pi/3) is also within the limits.
    states = ActuatorStates(_gear())
    assert _at(states, 3.0, 1) is None
    why = states.encoders.ambiguous['knee']
    assert '2 choices' in why and 'joint [-1, 1]' in why and 'reduction 6' in why
    assert states.set_encoder_turns('motor', 0) == 3.0
    out = _at(states, 3.2, 2)
    assert out.position[0] == pytest.approx(3.2 / 6, abs=1e-15)


def test_moving_where_only_one_choice_fits_resolves_and_keeps_counting():
    # Start ambiguous at q = 0.5, move down through 0 (unique within |q| < 0.047 rad) and on
    # to -0.9: once resolved, every position is the truth, wraps included.
    states = ActuatorStates(_gear())
    path = np.concatenate([np.linspace(0.5, 0.0, 60), np.linspace(0.0, -0.9, 120)])
    seen = []
    for k, q in enumerate(path):
        out = _at(states, 6 * q, k + 1)
        seen.append(None if out is None else out.position[0])
    first = next(k for k, v in enumerate(seen) if v is not None)
    assert abs(path[first]) < 0.05 and not states.encoders.ambiguous
    np.testing.assert_allclose(seen[first:], path[first:], rtol=0, atol=1e-14)


def test_two_encoders_of_a_differential_are_found_together():
    ts = load_transmissions({'transmissions': [{
        'name': 'wrist', 'type': 'differential',
        'actuators': [{'name': 'left', 'mechanical_reduction': 3.0,
                       'encoder': {'period': TWO_PI}},
                      {'name': 'right', 'mechanical_reduction': -3.0,
                       'encoder': {'period': TWO_PI}}],
        'joints': [{'name': 'pitch', 'limits': {'lower': -0.5, 'upper': 0.5}},
                   {'name': 'roll', 'limits': {'lower': -0.4, 'upper': 0.4}}]}]})
    q = np.array([0.3, -0.2])
    motors = ts.joint_to_actuator('position', q)
    states = ActuatorStates(ts)
    out = states.ingest('a', ['left', 'right'], motors % TWO_PI, [], [], 1)
    np.testing.assert_allclose(out.position, q, rtol=0, atol=1e-14)


def test_the_fast_route_unwraps_as_ingest_does():
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState
    ts = _gear(lower=-100.0, upper=100.0)
    node, plain = ActuatorStates(ts), ActuatorStates(ts)
    for states in (node, plain):
        states.set_encoder_turns('motor', 2)
    relay = FastStateRoute('a', lambda: 0)
    taken = 0
    for k, m in enumerate(np.arange(300) * 1.2 + 2 * TWO_PI):     # twice 1.2 < pi
        reading = m % TWO_PI if k != 150 else math.nan
        msg = JointState(name=['motor'], position=[reading], velocity=[1.0], effort=[0.5])
        msg.header.stamp.sec = k + 1
        data = serialize_message(msg)
        got = relay.take(data)
        if got is None:
            node.ingest('a', msg.name, msg.position, msg.velocity, msg.effort,
                        (k + 1) * 10**9, 0)
            relay.learn(node, data, msg)
        else:
            taken += 1
        ref = plain.ingest('a', msg.name, msg.position, msg.velocity, msg.effort,
                           (k + 1) * 10**9, 0)
        np.testing.assert_array_equal(node.actuator_positions(), plain.actuator_positions())
        if ref is not None and k != 150:
            assert node.actuator_positions()[0] == pytest.approx(m, abs=1e-12)
    assert taken > 250
    np.testing.assert_array_equal(node.encoders.turns, plain.encoders.turns)


def test_a_bag_converts_as_the_bridge_unwraps_it(tmp_path):
    # Offline, in order, as the live bridge: the same positions, a start the limits decide
    # (2:1, a joint range of 3.1 rad: at q = -0.175 the next turn, q + pi, is past 2.9), and
    # the reading wrapping once on the way to q = 2.85.
    ts = _gear(lower=-0.2, upper=2.9, reduction=2.0)
    motor = np.linspace(-0.35, 5.7, 400)
    bag = tmp_path / 'in'
    with io.atomic_writer(bag, 'mcap') as writer:
        conn = writer.add_connection('/actuator_states', 'sensor_msgs/msg/JointState',
                                     typestore=io.typestore())
        for k, m in enumerate(motor):
            stamp = 1_700_000_000_000_000_000 + k * 10_000_000
            writer.write(conn, stamp, one_message(ts, stamp, [m % TWO_PI]))
    from transmission_bridge.bag.convert import convert_bag
    result = convert_bag(bag, tmp_path / 'out', ts)
    assert not result.vectorised and result.joint_states == len(motor)
    out = joint_states(tmp_path / 'out', '/joint_states')
    got = np.array([out[s][0][2][0] for s in sorted(out)])
    np.testing.assert_allclose(got, motor / 2, rtol=0, atol=1e-13)
    converted = tool('convert', bag, tmp_path / 'cli', '--transmissions', _yaml(tmp_path, ts))
    assert converted.returncode == 0, converted.stderr


def _yaml(tmp_path, ts):
    """Write ``ts`` (one simple transmission with an encoder) as a YAML file; its path."""
    import yaml
    spec = ts.specs[0]
    a, j = spec.actuators[0], spec.joints[0]
    path = tmp_path / 'gear.yaml'
    path.write_text(yaml.safe_dump({'transmissions': [{
        'name': spec.name, 'type': 'simple',
        'actuators': [{'name': a.name, 'mechanical_reduction': a.mechanical_reduction,
                       'encoder': {'period': a.encoder_period}}],
        'joints': [{'name': j.name,
                    'limits': {'lower': j.lower_limit, 'upper': j.upper_limit}}]}]}))
    return path


def test_calibration_composes_after_the_turns():
    # NOTATION.md's order: reading -> + turns * period -> the reduction -> + offset.
    ts = _gear(lower=-10.0, upper=10.0)
    states = ActuatorStates(ts)
    states.set_encoder_turns('motor', 1)
    _at(states, 8.0, 1)
    offsets = ts.calibrated_offsets(states.actuator_positions())     # default 0
    assert offsets[0] == pytest.approx(-(8.0 % TWO_PI + TWO_PI) / 6, abs=1e-15)
    calibrated = ts.with_joint_offsets(offsets)
    states.set_transmissions(calibrated)          # turns kept across a new configuration
    assert _at(states, 8.1, 2).position[0] == pytest.approx(0.1 / 6, abs=1e-14)


@pytest.mark.parametrize('encoder, words', [
    ({'period': 0.0}, 'encoder.period .* must be finite and > 0'),
    ({'period': 'six'}, 'encoder.period'),
    ({}, "missing key 'period'"),
    ({'period': 1.0, 'turns': 2}, "unknown key 'turns'"),
])
def test_bad_encoders_are_refused_naming_the_key(encoder, words):
    with pytest.raises(ConfigError, match=words):
        load_transmissions({'transmissions': [{
            'name': 't', 'type': 'simple',
            'actuators': [{'name': 'm', 'encoder': encoder}], 'joints': [{'name': 'q'}]}]})


def test_the_urdf_form_takes_the_period():
    ts = load_transmissions("""<robot name="r"><link name="a"/><link name="b"/>
          <joint name="q" type="revolute"><parent link="a"/><child link="b"/>
            <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
          <transmission name="t"><plugin>transmission_interface/SimpleTransmission</plugin>
            <actuator name="m"><mechanical_reduction>6</mechanical_reduction>
              <encoder_period>6.283185307179586</encoder_period></actuator>
            <joint name="q"/></transmission></robot>""")
    assert ts.actuator('m').encoder_period == TWO_PI
    assert ts.joint('q').lower_limit == -1.0
