"""
Driver units (NOTATION.md, "Driver units"): states in and commands out in what drives speak.

The expected values are the drives' documented definitions, worked here by the test's own
arithmetic (never read back from the code under test):

* CiA 402 (CANopen, EtherCAT): the torque actual value 0x6077 is in thousandths of the motor
  rated torque 0x6076 ("500 means 50 % of the rated torque; 1100 is 110 %", Nanotec's PD4-E
  manual; "1000 corresponds to the rated motor torque", Bonfiglioli's CM-EtherCAT manual);
  positions in encoder increments, so 2**16 of a 17-bit encoder is half a turn.
* ODrive: positions in turns, velocities in turns/s, a motor's torque constant 8.27 / KV
  (N·m/A; its docs).
* Dynamixel XM430: 4096 position ticks a turn (0.088° a tick), 0.229 rpm a velocity unit
  (its e-manual).

Then every transmission type round-trips: a robot whose drives report in random units gives
the joint states of the same robot in SI, and its commands read back through the drives'
own law are the SI robot's, to 1e-12 relative.
"""

import copy
import math

from conftest import CONFIG
import numpy as np
import pytest
from sensor_msgs.msg import JointState
from tolerances import ROUND_TRIP_ATOL, ROUND_TRIP_RTOL
from transmission_bridge.mapping.commands import CommandMapper
from transmission_bridge.mapping.state import ActuatorStates
from transmission_bridge.transmissions import ConfigError, load_transmissions
import yaml

TAU = 2 * math.pi


def _one_motor(units, reduction=1.0, **extra):
    return load_transmissions({'transmissions': [{
        'name': 't', 'type': 'simple',
        'actuators': [{'name': 'm', 'mechanical_reduction': reduction, 'units': units,
                       **extra}],
        'joints': [{'name': 'q'}]}]})


def _joint(tset, position, velocity, effort):
    out = ActuatorStates(tset).ingest('s', ['m'], [position], [velocity], [effort], 1)
    return out.position[0], out.velocity[0], out.effort[0]


def test_a_cia402_drive_reports_increments_and_per_mille_of_its_rated_torque():
    rated = 0.64                                    # 0x6076: 640 mN·m, as configured
    tset = _one_motor({'position': 'counts', 'velocity': 'counts',
                       'counts_per_revolution': 2**17, 'effort': 'per_mille',
                       'rated_torque': rated})
    for per_mille, share in ((500, 0.5), (1100, 1.1), (1000, 1.0), (-3000, -3.0)):
        q, v, tau = _joint(tset, 2**16, 2**17, per_mille)
        assert q == pytest.approx(math.pi, rel=ROUND_TRIP_RTOL)       # half a turn
        assert v == pytest.approx(TAU, rel=ROUND_TRIP_RTOL)           # a turn a second
        assert tau == pytest.approx(share * rated, rel=ROUND_TRIP_RTOL)
    # Commands go back in the drive's units: 50 % of the rated torque is 500.
    out = CommandMapper(tset).map_command(['q'], [math.pi / 2], [0.0], [0.32])
    assert out.position[0] == pytest.approx(2**15, rel=ROUND_TRIP_RTOL)
    assert out.effort[0] == pytest.approx(500.0, rel=ROUND_TRIP_RTOL)


def test_an_odrive_reports_turns_and_takes_amps_through_its_torque_constant():
    kv = 270.0
    tset = _one_motor({'position': 'turns', 'velocity': 'turns', 'effort': 'amps',
                       'torque_constant': 8.27 / kv}, reduction=9.0)
    q, v, tau = _joint(tset, 0.25, 2.0, 10.0)
    assert q == pytest.approx(TAU * 0.25 / 9.0, rel=ROUND_TRIP_RTOL)
    assert v == pytest.approx(TAU * 2.0 / 9.0, rel=ROUND_TRIP_RTOL)
    assert tau == pytest.approx(10.0 * 8.27 / kv * 9.0, rel=ROUND_TRIP_RTOL)
    out = CommandMapper(tset).map_command(['q'], [], [], [9.0 * 8.27 / kv])
    assert out.effort[0] == pytest.approx(1.0, rel=ROUND_TRIP_RTOL)  # one amp


def test_a_dynamixel_reports_ticks_and_units_of_0229_rpm():
    tset = _one_motor({'position': 'counts', 'counts_per_revolution': 4096,
                       'velocity': {'factor': 0.229 * TAU / 60.0}})
    q, v, _ = _joint(tset, 1, 100, 0.0)
    assert math.degrees(q) == pytest.approx(0.088, abs=5e-4)           # its e-manual's 0.088°
    assert v * 60 / TAU == pytest.approx(22.9, rel=ROUND_TRIP_RTOL)    # rpm


def test_degrees_rpm_and_a_factor_with_an_offset():
    tset = _one_motor({'position': {'unit': 'deg', 'offset': 0.5}, 'velocity': 'rpm',
                       'effort': {'factor': -0.01, 'offset': 0.2}})
    q, v, tau = _joint(tset, 90.0, 60.0, 30.0)
    assert q == pytest.approx(math.pi / 2 + 0.5, rel=ROUND_TRIP_RTOL)
    assert v == pytest.approx(TAU, rel=ROUND_TRIP_RTOL)
    assert tau == pytest.approx(-0.3 + 0.2, rel=ROUND_TRIP_RTOL)


def test_a_linear_motor_in_millimetres_and_counts_per_meter():
    tset = _one_motor({'position': 'mm', 'velocity': 'counts', 'counts_per_meter': 200000},
                      linear=True)
    q, v, _ = _joint(tset, 12.5, 4000.0, 0.0)
    assert q == pytest.approx(0.0125, rel=ROUND_TRIP_RTOL)
    assert v == pytest.approx(0.02, rel=ROUND_TRIP_RTOL)


def test_limits_and_an_encoder_period_written_in_the_drivers_units():
    tset = _one_motor({'position': 'counts', 'counts_per_revolution': 4096,
                       'velocity': 'rpm', 'effort': 'per_mille', 'rated_torque': 2.0,
                       'limits': 'driver'},
                      limits={'lower': -1024, 'upper': 2048, 'velocity': 3000,
                              'effort': 1500}, encoder={'period': 4096})
    limits = tset.command_limits(np.array([0]), np.array([0]))
    assert limits.actuator_lower[0] == pytest.approx(-math.pi / 2, rel=ROUND_TRIP_RTOL)
    assert limits.actuator_upper[0] == pytest.approx(math.pi, rel=ROUND_TRIP_RTOL)
    velocity = limits.magnitude_limits('velocity')[1][0]
    assert velocity == pytest.approx(100 * math.pi, rel=ROUND_TRIP_RTOL)     # 3000 rpm
    assert limits.magnitude_limits('effort')[1][0] == pytest.approx(3.0, rel=ROUND_TRIP_RTOL)
    states = ActuatorStates(tset)
    states.set_encoder_turns('m', 0)
    for reading in (4000.0, 10.0):              # wraps past 4096: one turn on
        out = states.ingest('s', ['m'], [reading], [0.0], [0.0], 1)
    assert out.position[0] == pytest.approx(TAU * (4096 + 10) / 4096, rel=ROUND_TRIP_RTOL)


@pytest.mark.parametrize('units, words', [
    ({'position': 'furlongs'}, ['units.position', "actuator 'm'", 'furlongs']),
    ({'position': 'counts'}, ['units', "actuator 'm'", 'counts_per_revolution']),
    ({'effort': 'per_mille'}, ['rated_torque']),
    ({'effort': 'amps', 'torque_constant': 0.0}, ['units.torque_constant', '0.0']),
    ({'position': {'factor': 0.0}}, ['units.position.factor', 'non-zero']),
    ({'velocity': {'factor': float('nan')}}, ['units.velocity.factor']),
    ({'position': {'factor': 2.0, 'unit': 'deg'}}, ['one of unit or factor']),
    ({'position': 'mm'}, ['units.position', 'rotary']),
    ({'limits': 'both'}, ['units.limits', 'both']),
    ({'gear': 3}, ["unknown key 'gear'"]),
])
def test_a_bad_unit_is_refused_naming_the_actuator_and_key(units, words):
    with pytest.raises(ConfigError) as raised:
        _one_motor(units)
    assert all(w in str(raised.value) for w in words), str(raised.value)


def test_an_mit_command_in_driver_units_gives_the_same_torque():
    # The drive evaluates kp (θ* - θ) + kd (θ̇* - θ̇) + τ_ff in its own units; read back as
    # SI (factor * driver + offset) its torque is the SI law's.
    rng = np.random.default_rng(7201)
    tset = load_transmissions(CONFIG / 'cia402_arm_transmissions.yaml')
    units = tset.units
    n = tset.num_actuators
    f, o = _expected_factors(CONFIG / 'cia402_arm_transmissions.yaml')
    for _ in range(20):
        target, theta = rng.normal(0, 3, (2, n))
        target_v, theta_v = rng.normal(0, 30, (2, n))
        kp, kd, ff = rng.uniform(0.1, 50, n), rng.uniform(0.01, 2, n), rng.normal(0, 1, n)
        si = kp * (target - theta) + kd * (target_v - theta_v) + ff
        rows = units.mit_to_driver(np.stack([target, target_v, ff, kp, kd], axis=1))
        d_theta, d_theta_v = (theta - o[0]) / f[0], (theta_v - o[1]) / f[1]
        driver = (rows[:, 3] * (rows[:, 0] - d_theta) + rows[:, 4] * (rows[:, 1] - d_theta_v)
                  + rows[:, 2])
        np.testing.assert_allclose(f[2] * driver + o[2], si, rtol=1e-11, atol=1e-11)
        back = units.mit_to_si(rows.copy())
        np.testing.assert_allclose(back, np.stack([target, target_v, ff, kp, kd], axis=1),
                                   rtol=ROUND_TRIP_RTOL, atol=ROUND_TRIP_ATOL)


def _expected_factors(path):
    """Return (3, nA) factors and offsets of the CiA 402 arm, from its comments' numbers."""
    counts = TAU / 2**17
    ticks = TAU / 4096
    rows = {  # motor: (position factor, offset), velocity factor, effort factor
        'shoulder_pan_motor': ((counts, 0.0), counts, 0.64e-3),
        'shoulder_lift_motor': ((counts, -0.5), counts, 0.64e-3),
        'elbow_motor': ((math.pi / 180, 0.0), TAU / 60, 0.095),
        'wrist_left_motor': ((TAU, 0.0), TAU, 0.030630),
        'wrist_right_motor': ((TAU, 0.0), TAU, 0.030630),
        'finger_proximal_motor': ((ticks, 0.0), 0.023980823, 0.0047882),
        'finger_distal_motor': ((ticks, 0.0), 0.023980823, 0.0047882),
    }
    names = load_transmissions(path).actuator_names
    f = np.array([[rows[m][0][0], rows[m][1], rows[m][2]] for m in names]).T
    o = np.zeros_like(f)
    o[0] = [rows[m][0][1] for m in names]
    return f, o


# --- every transmission type: the same robot in driver units and in SI ---------------------
# A menu of drives: (units mapping, factors (position, velocity, effort), position offset).
ROTARY = [
    ({'position': 'counts', 'velocity': 'counts', 'counts_per_revolution': 131072,
      'effort': 'per_mille', 'rated_torque': 0.64}, (TAU / 131072, TAU / 131072, 0.64e-3), 0.0),
    ({'position': 'turns', 'velocity': 'turns', 'effort': 'amps', 'torque_constant': 0.0306},
     (TAU, TAU, 0.0306), 0.0),
    ({'position': 'deg', 'velocity': 'rpm', 'effort': 'counts', 'effort_per_count': 0.002},
     (math.pi / 180, TAU / 60, 0.002), 0.0),
    ({'position': {'factor': -0.003, 'offset': 0.7}, 'velocity': {'factor': -0.003},
      'effort': {'factor': 0.25}}, (-0.003, -0.003, 0.25), 0.7),
]
LINEAR = [
    ({'position': 'mm', 'velocity': 'counts', 'counts_per_meter': 50000, 'effort': 'amps',
      'torque_constant': 12.0}, (1e-3, 1 / 50000, 12.0), 0.0),
]
SETS = ['example_robot_transmissions.yaml', 'three_motor_wrist_transmissions.yaml',
        'closed_loop_ankle_transmissions.yaml']


def _driver_twin(name, rng):
    """Return (SI set, driver-units set, factors (3, nA), offsets (3, nA)) of a config."""
    document = yaml.safe_load((CONFIG / name).read_text())
    si = load_transmissions(copy.deepcopy(document))
    factors, offsets = [], []
    for item in document['transmissions']:
        for actuator in item['actuators']:
            linear = actuator.get('kind', 'rotary') != 'rotary' or actuator.get('linear')
            menu = LINEAR if linear else ROTARY
            units, f, offset = menu[rng.integers(len(menu))]
            actuator['units'] = copy.deepcopy(units)
            factors.append(f)
            offsets.append((offset, 0.0, 0.0))
    return si, load_transmissions(document), np.array(factors).T, np.array(offsets).T


@pytest.mark.parametrize('name', SETS)
def test_every_transmission_type_round_trips_states_and_commands(name):
    rng = np.random.default_rng(7202 + SETS.index(name))
    si, driven, f, o = _driver_twin(name, rng)
    joints = list(si.joint_names)
    checked = 0
    si_states, driver_states = ActuatorStates(si), ActuatorStates(driven)
    si_cmd, driver_cmd = CommandMapper(si), CommandMapper(driven)
    for k in range(30):
        q = si.default_positions + rng.normal(0, 0.05, si.num_joints)
        qd, tau = rng.normal(0, 1, (2, si.num_joints))
        theta = si.joint_to_actuator('position', q)
        theta_d = si.joint_to_actuator('velocity', qd, positions=q)
        effort = rng.normal(0, 2, si.num_actuators)
        values = np.stack([theta, theta_d, effort])
        as_driven = (values - o) / f                     # what the drives report
        names = list(si.actuator_names)
        want = si_states.ingest('s', names, *values, stamp_ns=k + 1)
        got = driver_states.ingest('s', names, *as_driven, stamp_ns=k + 1)
        for a, b in zip(got[1:], want[1:]):
            np.testing.assert_allclose(a, b, rtol=ROUND_TRIP_RTOL, atol=ROUND_TRIP_ATOL)
        want = si_cmd.map_command(joints, q, qd, tau)
        got = driver_cmd.map_command(joints, q, qd, tau)
        assert got.names == want.names
        cols = [si.actuator_index[m] for m in got.names]
        for i, (a, b) in enumerate(zip(got[1:], want[1:])):
            np.testing.assert_allclose(f[i, cols] * a + o[i, cols], b, rtol=ROUND_TRIP_RTOL,
                                       atol=ROUND_TRIP_ATOL)
        checked += 1
    points = [si.default_positions + rng.normal(0, 0.05, si.num_joints) for _ in range(5)]
    rates = [list(rng.normal(0, 0.3, si.num_joints)) for _ in range(5)]
    want = si_cmd.map_trajectory(joints, points, rates, rates, rates)
    got = driver_cmd.map_trajectory(joints, points, rates, rates, rates)
    cols = [si.actuator_index[m] for m in got[0]]
    for (a, b), k, shift in zip(zip(got[1], want[1]), (0, 1, 1, 2), (True, True, False, True)):
        expected = f[k, cols] * a + (o[k, cols] if shift else 0.0)
        np.testing.assert_allclose(expected, b, rtol=ROUND_TRIP_RTOL, atol=ROUND_TRIP_ATOL)
    assert checked == 30


def test_a_robot_without_units_is_untouched():
    tset = load_transmissions(CONFIG / 'example_robot_transmissions.yaml')
    assert tset.units.identity
    assert ActuatorStates(tset).units is None


@pytest.mark.parametrize('output', ['effort', 'motor_gains'])
def test_joint_springs_send_both_outputs_in_the_drivers_units(output):
    # The springs' per-state command (the bridge's wires: bytes in a template), read back
    # through the drives' law, is the SI arm's, for the effort and the MIT output.
    pytest.importorskip('control_msgs')
    from rclpy.serialization import deserialize_message
    from transmission_bridge.bridge.impedance_wiring import EffortWire, MitWire
    from transmission_bridge.control.impedance import ImpedanceCore
    rng = np.random.default_rng(7203)
    path = CONFIG / 'cia402_arm_transmissions.yaml'
    driven = load_transmissions(path)
    si = load_transmissions(CONFIG / 'example_robot_transmissions.yaml')
    f, o = _expected_factors(path)
    cores = [ImpedanceCore(t, output) for t in (si, driven)]
    for j in si.joint_names:
        p, d = float(rng.uniform(5, 50)), float(rng.uniform(0.1, 2))
        for core in cores:
            core.set_gain(j, 'p', p)
            core.set_gain(j, 'd', d)
    for _ in range(10):
        q = si.default_positions + rng.normal(0, 0.05, si.num_joints)
        targets = si.default_positions + rng.normal(0, 0.05, si.num_joints)
        theta = si.joint_to_actuator('position', q)
        flat = np.concatenate([theta, rng.normal(0, 1, (2, si.num_actuators)).ravel(), [1.0]])
        sent = []
        for core, tset in zip(cores, (si, driven)):
            joints = core.joints
            assert core.take(joints, targets[joints], np.zeros(len(joints)),
                             np.zeros(len(joints)), 0) == ''
            state = np.empty((3, tset.num_joints))
            assert tset.state_map().writer(state)(flat)
            block = core.block_at(None, 0, state)
            units = None if tset.units.identity else (
                tset.units, [tset.actuator_index[n] for n in block.names])
            wire = (EffortWire if output == 'effort' else MitWire)(block.names, units)
            assert core.fill(block, flat, state, tset.state_map().jacobian, wire.out)
            sent.append((block.names, wire.at(b'\0' * 8)))
        (names, si_bytes), (names_d, driver_bytes) = sent
        assert names == names_d
        cols = [si.actuator_index[n] for n in names]
        if output == 'effort':
            want = deserialize_message(si_bytes, JointState).effort
            got = np.array(deserialize_message(driver_bytes, JointState).effort)
            np.testing.assert_allclose(f[2, cols] * got + o[2, cols], want, rtol=1e-12,
                                       atol=1e-12)
            continue
        from control_msgs.msg import DynamicJointState
        want, got = (np.array([v.values for v in deserialize_message(
            data, DynamicJointState).interface_values]) for data in (si_bytes, driver_bytes))
        back = np.stack([f[0, cols] * got[:, 0] + o[0, cols], f[1, cols] * got[:, 1],
                         f[2, cols] * got[:, 2] + o[2, cols],
                         got[:, 3] * f[2, cols] / f[0, cols],
                         got[:, 4] * f[2, cols] / f[1, cols]], axis=1)
        np.testing.assert_allclose(back, want, rtol=1e-12, atol=1e-12)


def _write_bag(path, names, stamps, rows, regular):
    """Write actuator states (``rows``: three (N, nA)); irregular: every other reversed."""
    from transmission_bridge.bag import io
    from transmission_bridge.bag.joint_state_cdr import build, MSGTYPE
    ts = io.typestore()
    with io.atomic_writer(path, 'mcap') as writer:
        conn = writer.add_connection('/actuator_states', MSGTYPE, typestore=ts)
        for k, stamp in enumerate(stamps):
            order = np.arange(len(names))[::1 if regular or k % 2 == 0 else -1]
            sec, nanosec = divmod(int(stamp), 10**9)
            msg = build(ts, [names[i] for i in order], 'motors', sec, nanosec,
                        [r[k][order] for r in rows])
            writer.write(conn, int(stamp), bytes(ts.serialize_cdr(msg, MSGTYPE)))


@pytest.mark.parametrize('regular', [True, False])
def test_a_bag_recorded_in_driver_units_converts_as_the_si_one(tmp_path, regular):
    # The same motion recorded from drives in their units and in SI: convert (the offline
    # bridge) gives the same joint_states, and its motors' holding torques read back through
    # the drives' law are the SI ones. Irregular (two layouts): the message-by-message path.
    from bag_harness import joint_states, tool
    path = CONFIG / 'cia402_arm_transmissions.yaml'
    si = load_transmissions(CONFIG / 'example_robot_transmissions.yaml')
    f, o = _expected_factors(path)
    rng = np.random.default_rng(7205)
    n = 40
    q = si.default_positions + rng.normal(0, 0.05, (n, si.num_joints))
    values = np.stack([si.joint_to_actuator('position', q),
                       rng.normal(0, 1, (n, si.num_actuators)),
                       rng.normal(0, 0.5, (n, si.num_actuators))])       # (3, n, nA)
    stamps = 1_700_000_000_000_000_000 + np.arange(n) * 10_000_000
    bags = {}
    for key, rows in (('si', values), ('units', (values - o[:, None]) / f[:, None])):
        _write_bag(tmp_path / f'{key}_in', si.actuator_names, stamps, rows, regular)
        config = path if key == 'units' else CONFIG / 'example_robot_transmissions.yaml'
        done = tool('convert', tmp_path / f'{key}_in', tmp_path / f'{key}_out',
                    '--transmissions', config, '--model', CONFIG / 'example_arm_model.yaml')
        assert done.returncode == 0, done.stderr
        bags[key] = (joint_states(tmp_path / f'{key}_out', '/joint_states'),
                     joint_states(tmp_path / f'{key}_out', '/actuator_commands'))
    (si_joints, si_motors), (joints, motors) = bags['si'], bags['units']
    assert sorted(joints) == sorted(si_joints) and len(joints) == n
    for stamp, [(_, names, *arrays)] in joints.items():
        [(_, si_names, *want)] = si_joints[stamp]
        assert names == si_names
        for a, b in zip(arrays, want):
            np.testing.assert_allclose(a, b, rtol=ROUND_TRIP_RTOL, atol=ROUND_TRIP_ATOL)
    assert sorted(motors) == sorted(si_motors) and len(motors) == n
    for stamp, [(_, names, pos, _, eff)] in motors.items():
        [(_, si_names, si_pos, _, si_eff)] = si_motors[stamp]
        cols = [si.actuator_index[m] for m in names]
        assert names == si_names
        np.testing.assert_allclose(f[0, cols] * pos + o[0, cols], si_pos, rtol=1e-11,
                                   atol=1e-11)
        np.testing.assert_allclose(f[2, cols] * eff + o[2, cols], si_eff, rtol=1e-11,
                                   atol=1e-11)


def test_identification_reads_a_bag_in_driver_units_as_si(tmp_path):
    from transmission_bridge.bag.states import read_states
    path = CONFIG / 'cia402_arm_transmissions.yaml'
    driven = load_transmissions(path)
    f, o = _expected_factors(path)
    rng = np.random.default_rng(7206)
    values = rng.normal(0, 1, (3, 20, driven.num_actuators))
    stamps = 1_700_000_000_000_000_000 + np.arange(20) * 10_000_000
    _write_bag(tmp_path / 'in', driven.actuator_names, stamps,
               (values - o[:, None]) / f[:, None], True)
    _, got = read_states(tmp_path / 'in', '/actuator_states', driven.actuator_names,
                         driven.units)
    np.testing.assert_allclose(got, values.transpose(1, 0, 2), rtol=ROUND_TRIP_RTOL,
                               atol=ROUND_TRIP_ATOL)


def test_a_urdf_actuator_gives_units_and_an_output_encoder_as_attributes():
    # The YAML's keys as attributes of <units> and <output_encoder> in ros2_control's
    # <transmission>: the same set as the YAML's.
    urdf = """<robot name="r">
      <link name="a"/><link name="b"/>
      <joint name="q" type="revolute"><parent link="a"/><child link="b"/>
        <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="10" velocity="5"/></joint>
      <transmission name="t">
        <plugin>transmission_interface/SimpleTransmission</plugin>
        <actuator name="m" role="actuator1">
          <mechanical_reduction>9</mechanical_reduction>
          <units position="counts" counts_per_revolution="4096" velocity="rpm"
                 effort="per_mille" rated_torque="0.5" position_offset="0.25" limits="driver"/>
          <limit effort="2000"/>
          <output_encoder name="m_out" deflection_limit="0.05"/>
        </actuator>
        <joint name="q" role="joint1"/>
      </transmission>
    </robot>"""
    tset = load_transmissions(urdf)
    spec = tset.actuator('m')
    assert spec.units.factor == pytest.approx((TAU / 4096, TAU / 60, 0.5e-3), rel=1e-15)
    assert spec.units.offset == (0.25, 0.0, 0.0)
    assert spec.effort_limit == pytest.approx(1.0, rel=1e-15)          # 2000 per mille
    assert spec.output_encoder.name == 'm_out'
    assert spec.output_encoder.deflection_limit == 0.05
    with pytest.raises(ConfigError, match=r"<units>.*actuator 'm'.*furlongs"):
        load_transmissions(urdf.replace('position="counts"', 'position="furlongs"'))
