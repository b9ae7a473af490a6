"""
A second encoder at an actuator's gear output (NOTATION.md, "Second encoder").

The expected values are worked here from the law on the page: the transmission maps
``n_a x_o`` in place of the motor's position, the deflection is ``x_o - x_a / n_a``; beyond
its limit the transmission's joints are withheld; a stale output encoder falls back to the
motor's and comes back; an absolute output encoder gives a single-turn motor its turns.
"""

import math

import numpy as np
import pytest
from tolerances import ROUND_TRIP_ATOL, ROUND_TRIP_RTOL
from transmission_bridge.mapping.state import ActuatorStates
from transmission_bridge.transmissions import ConfigError, load_transmissions

STALE = 500_000_000         # ns: the bridge's stale_timeout default


def _arm(**output):
    """Return a simple joint (motor 10:1, offset 0.1) with an output encoder; a wrist."""
    return load_transmissions({'transmissions': [
        {'name': 'knee', 'type': 'simple',
         'actuators': [{'name': 'knee_motor', 'mechanical_reduction': 10.0,
                        'output_encoder': {'name': 'knee_out', **output}}],
         'joints': [{'name': 'knee', 'offset': 0.1}]},
        {'name': 'wrist', 'type': 'differential',
         'actuators': [{'name': 'wl', 'mechanical_reduction': 5.0,
                        'output_encoder': {'name': 'wl_out', 'velocity_from': 'output'}},
                       {'name': 'wr', 'mechanical_reduction': -5.0}],
         'joints': [{'name': 'pitch'}, {'name': 'roll'}]}]})


def _states(tset):
    states = ActuatorStates(tset)
    states.stale_ns = STALE
    return states


NAMES = ['knee_motor', 'knee_out', 'wl', 'wl_out', 'wr']


def test_the_joint_follows_the_output_encoder_and_the_deflection_is_published():
    tset = _arm()
    states = _states(tset)
    # The knee motor at 10 rad (1 rad through the gear), its output encoder at 1.02 rad: the
    # joint is 1.02 + 0.1; the wrist's left gear output at 0.3 (motor 1.4, 0.28 through the
    # gear), its right motor at -1.0: pitch, roll from n_a x_o = 1.5 and -1.0.
    out = states.ingest('s', NAMES, [10.0, 1.02, 1.4, 0.3, -1.0], [1.0, 0.2, 2.0, 0.5, 1.0],
                        [0.0] * 5, stamp_ns=1)
    pos = dict(zip(out.names, out.position))
    vel = dict(zip(out.names, out.velocity))
    assert pos['knee'] == pytest.approx(1.12, rel=ROUND_TRIP_RTOL)
    assert vel['knee'] == pytest.approx(0.1, rel=ROUND_TRIP_RTOL)        # the motor's
    left, right = 1.5 / 5.0, -1.0 / -5.0            # the differential's own formulas
    assert pos['pitch'] == pytest.approx((left + right) / 2, rel=ROUND_TRIP_RTOL)
    assert pos['roll'] == pytest.approx((left - right) / 2, rel=ROUND_TRIP_RTOL)
    left_v, right_v = 0.5, 1.0 / -5.0               # velocity_from: output on the left
    assert vel['pitch'] == pytest.approx((left_v + right_v) / 2, rel=ROUND_TRIP_RTOL)
    np.testing.assert_allclose(states.outputs.deflection, [1.02 - 1.0, 0.3 - 0.28],
                               rtol=ROUND_TRIP_RTOL, atol=ROUND_TRIP_ATOL)
    assert list(states.outputs.actuators) == ['knee_motor', 'wl']


def test_beyond_its_deflection_limit_the_transmission_is_withheld():
    tset = _arm(deflection_limit=0.05)
    states = _states(tset)
    out = states.ingest('s', NAMES, [10.0, 1.04, 1.4, 0.28, -1.0], [0.0] * 5, [0.0] * 5, 1)
    assert set(out.names) == {'knee', 'pitch', 'roll'}
    out = states.ingest('s', NAMES, [10.0, 1.06, 1.4, 0.28, -1.0], [0.0] * 5, [0.0] * 5, 2)
    assert set(out.names) == {'pitch', 'roll'}          # a slipping belt: the knee withheld
    assert states.deflected_joints == ('knee',)
    assert 'knee_motor' in states.outputs.tripped_text()
    assert '+0.06' in states.outputs.tripped_text()
    out = states.ingest('s', NAMES, [10.0, 1.04, 1.4, 0.28, -1.0], [0.0] * 5, [0.0] * 5, 3)
    assert set(out.names) == {'knee', 'pitch', 'roll'}  # back within: published again


def test_a_stale_output_encoder_falls_back_to_the_motor_and_comes_back():
    tset = _arm()
    states = _states(tset)
    motors = ['knee_motor', 'wl', 'wr']
    states.ingest('s', NAMES, [10.0, 1.02, 1.4, 0.3, -1.0], [0.0] * 5, [0.0] * 5, 1, now_ns=0)
    # Only the motors for longer than stale_timeout: the knee from its motor (10 / 10 + 0.1).
    out = states.ingest('m', motors, [10.0, 1.4, -1.0], [0.0] * 3, [0.0] * 3, 2,
                        now_ns=STALE + 1)
    assert dict(zip(out.names, out.position))['knee'] == pytest.approx(1.1, rel=1e-15)
    assert sorted(states.outputs.changes) == [('knee_out', 'stale'), ('wl_out', 'stale')]
    assert np.isnan(states.outputs.deflection).all()
    states.outputs.changes.clear()
    out = states.ingest('s', NAMES, [10.0, 1.03, 1.4, 0.3, -1.0], [0.0] * 5, [0.0] * 5, 3,
                        now_ns=STALE + 2)
    assert dict(zip(out.names, out.position))['knee'] == pytest.approx(1.13, rel=1e-15)
    assert sorted(states.outputs.changes) == [('knee_out', 'back'), ('wl_out', 'back')]


def test_an_absolute_output_encoder_gives_a_single_turn_motor_its_turns():
    # A 10:1 knee whose motor encoder counts one turn: 2.0 rad read, the output at 2.825 rad
    # means the motor is at 28.25 rad = 2.0 + 4 turns (25.13...) + the 0.05 rad deflection.
    tset = load_transmissions({'transmissions': [{
        'name': 'knee', 'type': 'simple',
        'actuators': [{'name': 'm', 'mechanical_reduction': 10.0,
                       'encoder': {'period': 2 * math.pi},
                       'output_encoder': {'name': 'out'}}],
        'joints': [{'name': 'q', 'limits': {'lower': -4.0, 'upper': 4.0}}]}]})
    states = _states(tset)
    assert states.ingest('s', ['m'], [2.0], [0.0], [0.0], 1) is None     # ambiguous alone
    out = states.ingest('s', ['m', 'out'], [2.0, 2.825], [0.0, 0.0], [0.0, 0.0], 2)
    assert out.position[0] == pytest.approx(2.825, rel=1e-15)             # the output's
    assert states.encoders.turns_by_name() == {'m': 4}
    assert states.actuator_positions()[0] == pytest.approx(2.0 + 8 * math.pi, rel=1e-15)


@pytest.mark.parametrize('output, words', [
    ({'name': 'knee_motor'}, ['duplicate', 'knee_motor']),
    ({'name': 'wl_out2', 'velocity_from': 'joint'},
     ['output_encoder.velocity_from', "actuator 'knee_motor'", 'joint']),
    ({'name': 'x', 'deflection_limit': 0.0}, ['output_encoder.deflection_limit']),
    ({'velocity_from': 'motor'}, ["missing key 'name'"]),
    ({'name': 'x', 'turns': 3}, ["unknown key 'turns'"]),
])
def test_a_bad_output_encoder_is_refused_naming_the_key(output, words):
    with pytest.raises(ConfigError) as raised:
        load_transmissions({'transmissions': [{
            'name': 'knee', 'type': 'simple',
            'actuators': [{'name': 'knee_motor', 'output_encoder': output}],
            'joints': [{'name': 'knee'}]}]})
    assert all(w in str(raised.value) for w in words), str(raised.value)


def test_a_bag_with_output_encoders_converts_as_the_bridge_publishes(tmp_path):
    from bag_harness import joint_states, tool
    from test_driver_units import _write_bag
    import yaml
    tset = _arm(deflection_limit=0.05)
    document = {'transmissions': [
        {'name': s.name, 'type': s.type,
         'actuators': [{'name': a.name, 'mechanical_reduction': a.mechanical_reduction,
                        **({'output_encoder': {
                            'name': a.output_encoder.name,
                            'velocity_from': a.output_encoder.velocity_from,
                            'deflection_limit': a.output_encoder.deflection_limit}}
                           if a.output_encoder else {})} for a in s.actuators],
         'joints': [{'name': j.name, 'offset': j.offset} for j in s.joints]}
        for s in tset.specs]}
    path = tmp_path / 'arm.yaml'
    path.write_text(yaml.safe_dump(document))
    rng = np.random.default_rng(7301)
    n = 30
    motors = rng.normal(0, 1, (3, n, 3))
    outputs = motors[:, :, :2] / np.array([10.0, 5.0]) + rng.normal(0, 0.03, (3, n, 2))
    rows = np.concatenate([motors[:, :, :1], outputs[:, :, :1], motors[:, :, 1:2],
                           outputs[:, :, 1:], motors[:, :, 2:]], axis=2)
    stamps = 1_700_000_000_000_000_000 + np.arange(n) * 10_000_000
    _write_bag(tmp_path / 'in', NAMES, stamps, rows, True)
    done = tool('convert', tmp_path / 'in', tmp_path / 'out', '--transmissions', path)
    assert done.returncode == 0, done.stderr
    got = joint_states(tmp_path / 'out', '/joint_states')
    live = _states(load_transmissions(path))
    assert len(got) == n
    for k, stamp in enumerate(stamps.tolist()):
        want = live.ingest('/actuator_states', NAMES, *rows[:, k], stamp_ns=stamp)
        [(_, names, pos, vel, eff)] = got[stamp]
        assert names == want.names and np.array_equal(pos, want.position)
        assert np.array_equal(vel, want.velocity)


# --- series-elastic actuators --------------------------------------------------------------
SEA_MJCF = """<mujoco>
  <option timestep="0.0005" gravity="0 0 -9.81"/>
  <worldbody>
    <body name="rotor">
      <joint name="motor" type="hinge" axis="0 1 0" armature="2e-5"/>
      <geom type="cylinder" fromto="0 -0.1 0 0 -0.12 0" size="0.02" mass="0.05"/>
    </body>
    <body name="link">
      <joint name="out" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="1.2"/>
    </body>
  </worldbody>
  <tendon>
    <fixed name="spring" stiffness="{k}" damping="{d}">
      <joint joint="motor" coef="{inverse}"/><joint joint="out" coef="-1"/>
    </fixed>
  </tendon>
  <actuator><motor name="drive" joint="motor"/></actuator>
</mujoco>"""


def _sea(spring, reduction=8.0):
    return load_transmissions({'transmissions': [{
        'name': 'hip', 'type': 'simple',
        'actuators': [{'name': 'hip_motor', 'mechanical_reduction': reduction,
                       'output_encoder': {'name': 'hip_output'}, 'spring': spring}],
        'joints': [{'name': 'hip'}]}]})


def test_an_sea_joint_effort_is_mujocos_own_spring_force():
    # MuJoCo integrates a rotor geared 8:1 to a link through a spring (a fixed tendon
    # θ/8 - q with stiffness and damping: MuJoCo's own solution); the bridge reads the rotor
    # and the link as the motor and output encoders: its joint effort is the force MuJoCo's
    # spring applies to the link, every state.
    mujoco = pytest.importorskip('mujoco')
    k, d, n = 320.0, 1.5, 8.0
    model = mujoco.MjModel.from_xml_string(SEA_MJCF.format(k=k, d=d, inverse=1 / n))
    data = mujoco.MjData(model)
    states = _states(_sea({'stiffness': k, 'damping': d}, n))
    rng = np.random.default_rng(7302)
    out_dof = model.jnt_dofadr[model.joint('out').id]
    motor_q, out_q = (model.jnt_qposadr[model.joint(j).id] for j in ('motor', 'out'))
    motor_v = model.jnt_dofadr[model.joint('motor').id]
    worst, largest = 0.0, 0.0
    for step in range(2000):
        data.ctrl[0] = 0.4 * math.sin(0.01 * step) + rng.normal(0, 0.05)
        mujoco.mj_step(model, data)
        mujoco.mj_forward(model, data)          # qfrc_passive of this state
        out = states.ingest('s', ['hip_motor', 'hip_output'],
                            [data.qpos[motor_q], data.qpos[out_q]],
                            [data.qvel[motor_v], data.qvel[out_dof]],
                            [data.ctrl[0], 0.0], stamp_ns=step + 1)
        theirs = data.qfrc_passive[out_dof]
        worst = max(worst, abs(out.effort[0] - theirs))
        largest = max(largest, abs(theirs))
    assert largest > 1.0                        # the spring did carry the load
    assert worst <= 1e-9 * largest, (worst, largest)


def test_an_sea_table_is_interpolated_and_extended_along_its_ends():
    # k(δ) from the calibration table, worked here: between points on the segment, beyond
    # the ends along the end segment; the joint gets -k(δ) (the motor leads: positive).
    table = [[-0.1, -20.0], [0.0, 0.0], [0.05, 20.0], [0.1, 60.0]]
    states = _states(_sea({'table': table}, 1.0))
    for deflection, force in ((0.025, 10.0), (0.075, 40.0), (-0.05, -10.0), (0.2, 140.0),
                              (-0.2, -40.0)):
        out = states.ingest('s', ['hip_motor', 'hip_output'], [0.3, 0.3 + deflection],
                            [0.0, 0.0], [0.0, 0.0], stamp_ns=1)
        assert out.effort[0] == pytest.approx(-force, rel=1e-12)


@pytest.mark.parametrize('spring, extra, words', [
    ({'stiffness': 100.0}, {'output_encoder': None}, ['spring needs output_encoder']),
    ({'stiffness': -1.0}, {}, ['spring.stiffness', '-1.0']),
    ({'stiffness': 1.0, 'table': [[0, 0], [1, 1]]}, {}, ['one of stiffness']),
    ({'table': [[0, 0], [1, -1]]}, {}, ['spring.table', 'increase']),
    ({'table': [[0, 0]]}, {}, ['spring.table', 'two or more']),
    ({'stiffness': 1.0}, {'efficiency': {'driving': 0.9}}, ['lossy stage']),
])
def test_a_bad_spring_is_refused_naming_the_key(spring, extra, words):
    actuator = {'name': 'm', 'output_encoder': {'name': 'o'}, 'spring': spring, **extra}
    actuator = {k: v for k, v in actuator.items() if v is not None}
    with pytest.raises(ConfigError) as raised:
        load_transmissions({'transmissions': [{'name': 't', 'type': 'simple',
                                               'actuators': [actuator],
                                               'joints': [{'name': 'q'}]}]})
    assert all(w in str(raised.value) for w in words), str(raised.value)


def test_the_simulators_quasi_static_spring_is_the_bridges_law_inverted():
    # One physics: the simulator's output encoders read the deflection that carries each
    # drive's torque (k⁻¹(-n_a τ_a)); read back by the bridge's law, the joint's effort is
    # that torque through the gear, for the linear spring, the table and a stiff gear.
    from conftest import CONFIG
    from transmission_bridge.simulation.output_encoders import SimulatedOutputEncoders
    tset = load_transmissions(CONFIG / 'sea_leg_transmissions.yaml')
    sim = SimulatedOutputEncoders(tset)
    rng = np.random.default_rng(7303)
    names = list(tset.actuator_names) + list(sim.names)
    states = _states(tset)
    reductions = np.array([tset.actuator(a).mechanical_reduction for a in tset.actuator_names])
    for k in range(50):
        motors = np.stack([rng.normal(0, 2, 3), np.zeros(3), rng.normal(0, 2, 3)])
        rows = sim.rows(motors, 0.0)
        out = states.ingest('sim', names, *np.concatenate([motors, rows], axis=1),
                            stamp_ns=k + 1)
        np.testing.assert_allclose(out.effort, reductions * motors[2], rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize('damping', [0.0, 1.5])
def test_a_springs_stiffness_is_identified_from_mujoco_data(damping):
    # MuJoCo's own spring (stiffness 320, its damping) between a rotor and a link, driven by
    # a smooth excitation; the file's stiffness 30 % off (224): the fit finds MuJoCo's within
    # 2 %, and its damping and the rotor's inertia (MuJoCo's armature plus the rotor body's).
    mujoco = pytest.importorskip('mujoco')
    from transmission_bridge.identification.springs import fit_springs
    k, n = 320.0, 8.0
    model = mujoco.MjModel.from_xml_string(SEA_MJCF.format(k=k, d=damping, inverse=1 / n))
    data = mujoco.MjData(model)
    tset = _sea({'stiffness': 0.7 * k, 'damping': 0.0}, n)
    dofs = [model.jnt_dofadr[model.joint(j).id] for j in ('motor', 'out')]
    qpos = [model.jnt_qposadr[model.joint(j).id] for j in ('motor', 'out')]
    steps, recordings = 6000, []
    motors, outputs = np.zeros((steps, 3, 1)), np.zeros((steps, 2, 1))
    for step in range(steps):
        t = step * model.opt.timestep
        data.ctrl[0] = 0.3 * math.sin(2.1 * t) + 0.15 * math.sin(5.3 * t + 1.0)
        motors[step, :, 0] = data.qpos[qpos[0]], data.qvel[dofs[0]], data.ctrl[0]
        outputs[step, :, 0] = data.qpos[qpos[1]], data.qvel[dofs[1]]
        mujoco.mj_step(model, data)
    recordings.append((np.arange(steps) * model.opt.timestep, motors, outputs))
    [fit] = fit_springs(tset, recordings)
    assert fit.actuator == 'hip_motor' and fit.samples > 1000
    assert fit.stiffness == pytest.approx(k, rel=0.02), fit
    assert fit.damping == pytest.approx(damping, abs=0.05), fit
    unit, column = np.zeros(model.nv), np.zeros(model.nv)
    unit[dofs[0]] = 1.0
    mujoco.mj_mulM(model, data, column, unit)  # MuJoCo's own rotor: armature and body
    assert fit.rotor_inertia == pytest.approx(column[dofs[0]], rel=0.02), fit


SEA_URDF = """<robot name="sea">
  <link name="base"/>
  <link name="link">
    <inertial><origin xyz="0.15 0 0"/><mass value="1.2"/>
      <inertia ixx="0.0003" iyy="0.0093" izz="0.0093" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="hip" type="revolute"><parent link="base"/><child link="link"/>
    <axis xyz="0 1 0"/><limit lower="-6" upper="6" effort="50" velocity="20"/></joint>
</robot>"""


def test_identify_dynamic_writes_the_springs_stiffness(tmp_path):
    # The command a user runs on bags of the SEA (motor and output encoder, MuJoCo's spring):
    # it says the spring's stiffness and writes it into the transmissions file it outputs,
    # which loads; the file's stiffness was 30 % off.
    mujoco = pytest.importorskip('mujoco')
    import yaml
    from transmission_bridge.bag.example import write_states_bag
    from transmission_bridge.tools.identify import main as identify
    k, n = 320.0, 8.0
    model = mujoco.MjModel.from_xml_string(SEA_MJCF.format(k=k, d=0.5, inverse=1 / n))
    data = mujoco.MjData(model)
    dofs = [model.jnt_dofadr[model.joint(j).id] for j in ('motor', 'out')]
    steps = 20000
    rows = np.zeros((3, steps, 2))
    for step in range(steps):
        t = step * model.opt.timestep
        data.ctrl[0] = 0.3 * math.sin(2.1 * t) + 0.15 * math.sin(5.3 * t + 1.0)
        rows[:, step] = [[data.qpos[0], data.qpos[1]], [data.qvel[dofs[0]], data.qvel[dofs[1]]],
                         [data.ctrl[0], 0.0]]
        mujoco.mj_step(model, data)
    write_states_bag(tmp_path / 'bag', ['hip_motor', 'hip_output'],
                     1_750_000_000 * 10**9 + np.arange(steps) * 500_000, *rows)
    (tmp_path / 'sea.urdf').write_text(SEA_URDF)
    (tmp_path / 'sea.yaml').write_text(yaml.safe_dump({'transmissions': [{
        'name': 'hip', 'type': 'simple',
        'actuators': [{'name': 'hip_motor', 'mechanical_reduction': n,
                       'output_encoder': {'name': 'hip_output'},
                       'spring': {'stiffness': 0.7 * k}}],
        'joints': [{'name': 'hip'}]}]}))
    code = identify([str(tmp_path / 'bag'), '--dynamic', '--model', str(tmp_path / 'sea.urdf'),
                     '--transmissions', str(tmp_path / 'sea.yaml'),
                     '--output', str(tmp_path / 'out.urdf'),
                     '--output-transmissions', str(tmp_path / 'out.yaml')])
    assert code == 0
    written = load_transmissions(tmp_path / 'out.yaml').actuator('hip_motor')
    assert written.spring.stiffness == pytest.approx(k, rel=0.02)
    assert written.spring.damping == pytest.approx(0.5, abs=0.05)


def test_a_torque_command_deflects_mujocos_spring_to_the_wanted_torque():
    # Hold the SEA's link at q* against gravity: the wanted joint torque is MuJoCo's own
    # holding torque there; the bridge's command (its position and effort) drives the rotor
    # by a stiff position servo with that feed-forward; settled, MuJoCo's spring passes the
    # wanted torque within 1 % and the link is at q*.
    mujoco = pytest.importorskip('mujoco')
    from transmission_bridge.mapping.commands import CommandMapper
    k, n, target = 320.0, 8.0, 0.4
    model = mujoco.MjModel.from_xml_string(SEA_MJCF.format(k=k, d=0.5, inverse=1 / n))
    data = mujoco.MjData(model)
    dofs = [model.jnt_dofadr[model.joint(j).id] for j in ('motor', 'out')]
    data.qpos[1] = target
    mujoco.mj_forward(model, data)
    wanted = data.qfrc_bias[dofs[1]]            # MuJoCo's torque holding the link at q*
    command = CommandMapper(_sea({'stiffness': k, 'damping': 0.5}, n)).map_command(
        ['hip'], [target], [0.0], [wanted])
    theta, feed = command.position[0], command.effort[0]
    data.qpos[:] = [theta, target]
    for _ in range(8000):                       # 4 s: the servo settles
        data.ctrl[0] = feed + 2.0 * (theta - data.qpos[0]) - 0.02 * data.qvel[dofs[0]]
        mujoco.mj_step(model, data)
    mujoco.mj_forward(model, data)
    assert data.qfrc_passive[dofs[1]] == pytest.approx(wanted, rel=0.01)
    assert data.qpos[1] == pytest.approx(target, abs=1e-3)
    assert abs(wanted) > 0.5                    # a load the spring must carry


def test_a_goal_to_an_sea_takes_the_reference_mapping():
    # The goals' prepared map is the stiff gear's: a layout with a spring takes the reference
    # (map_command), which moves the spring's motor.
    from transmission_bridge.mapping.commands import CommandMapper
    from transmission_bridge.mapping.prepared import PreparedCommand
    mapper = CommandMapper(_sea({'stiffness': 100.0}))
    assert not PreparedCommand(mapper, ['hip'], True).usable
    plain = CommandMapper(load_transmissions({'transmissions': [{
        'name': 'hip', 'type': 'simple', 'joints': [{'name': 'hip'}],
        'actuators': [{'name': 'hip_motor', 'mechanical_reduction': 8.0}]}]}))
    assert PreparedCommand(plain, ['hip'], True).usable


@pytest.mark.parametrize('output', ['effort', 'motor_gains'])
def test_joint_impedance_through_mujocos_spring_is_stable(output):
    # The bridge's joint spring (Kp 20 N*m/rad, Kd 1 at the joint) on the SEA, closed through
    # MuJoCo every step: the state read as the bridge reads it (the joint from the output
    # encoder, its effort from the spring), the command as the bridge's per-state law gives
    # it (efforts; or MIT targets and gains, which the drive evaluates at the motor). It
    # settles at its target less the sag of the spring and the gains in series, and does not
    # ring: the last second's motion is below a thousandth of the first's.
    mujoco = pytest.importorskip('mujoco')
    from transmission_bridge.control.impedance import ImpedanceCore
    k, n, target, kp, kd = 320.0, 8.0, 0.3, 20.0, 1.0
    model = mujoco.MjModel.from_xml_string(SEA_MJCF.format(k=k, d=0.5, inverse=1 / n))
    data = mujoco.MjData(model)
    dofs = [model.jnt_dofadr[model.joint(j).id] for j in ('motor', 'out')]
    tset = _sea({'stiffness': k, 'damping': 0.5}, n)
    states, core = _states(tset), ImpedanceCore(tset, output)
    core.set_gain('hip', 'p', kp)
    core.set_gain('hip', 'd', kd)
    assert core.take(core.joints, np.array([target]), np.zeros(1), np.zeros(1), 0) == ''
    out = np.zeros((1,) if output == 'effort' else (1, 5))
    speeds = []
    for step in range(8000):
        states.ingest('s', ['hip_motor', 'hip_output'], [data.qpos[0], data.qpos[1]],
                      [data.qvel[dofs[0]], data.qvel[dofs[1]]], [data.ctrl[0], 0.0],
                      stamp_ns=step + 1)
        block = core.block_at(states.joint_kept, 0, states.joint_state)
        assert core.fill(block, states.map_flat, states.joint_state, states.joint_map.jacobian,
                         out)
        if output == 'effort':
            data.ctrl[0] = out[0]
        else:                                   # the MIT drive's own law, at the motor
            goal, goal_v, feed, stiffness, damping = out[0]
            data.ctrl[0] = (stiffness * (goal - data.qpos[0])
                            + damping * (goal_v - data.qvel[dofs[0]]) + feed)
        mujoco.mj_step(model, data)
        speeds.append(abs(data.qvel[dofs[1]]))
    final = float(data.qpos[1])
    data.qpos[1] = target
    mujoco.mj_forward(model, data)
    holding = data.qfrc_bias[dofs[1]]           # MuJoCo's torque holding the link there
    sag = -holding * (1 / kp + (1 / k if output == 'motor_gains' else 0.0))   # under it
    assert max(speeds[-2000:]) < 1e-3 * max(speeds[:2000])
    assert 0.8 < (final - target) / sag < 1.2, (final - target, sag)


def _driven_state(sim, outputs, states, k):
    """Drive the simulated SEA one state (a slow sine); return the bridge's joint state of it."""
    engine = sim.engine
    sim.step({'hip_motor': 0.25 * math.sin(0.004 * k)})
    report = np.asarray(engine.report())
    rows = outputs.rows(report, engine.time, engine.joint_state)
    return states.ingest('sim', ['hip_motor', 'hip_output'],
                         *np.concatenate([report, rows], axis=1), stamp_ns=k + 1)


def test_the_mujoco_engine_simulates_an_sea_spring_the_bridge_reads(tmp_path):
    # The simulator's MuJoCo engine on a URDF whose motor drives its joint through a spring:
    # the motor becomes a rotor of its own joined by a tendon spring (stiffness, damping),
    # started relaxed. Under a sinusoidal drive the link swings; at every state the bridge,
    # reading the drives' report and the output encoders as published, gives the joint the
    # torque MuJoCo's own spring applies to it, and the deflection is not zero (the spring
    # is not quasi-static).
    pytest.importorskip('mujoco')
    from transmission_bridge.simulation import Simulation
    from transmission_bridge.simulation.output_encoders import SimulatedOutputEncoders
    (tmp_path / 'sea.urdf').write_text(SEA_URDF)
    tset = load_transmissions({'transmissions': [{
        'name': 'hip', 'type': 'simple', 'joints': [{'name': 'hip', 'offset': 0.1}],
        'actuators': [{'name': 'hip_motor', 'mechanical_reduction': 8.0,
                       'rotor_inertia': 3e-5, 'output_encoder': {'name': 'hip_output'},
                       'spring': {'stiffness': 320.0, 'damping': 0.5}}]}]})
    sim = Simulation(str(tmp_path / 'sea.urdf'), tset, engine='mujoco', dynamics='effort')
    engine = sim.engine
    assert 0 in engine.spring_rows and not engine.warnings
    outputs = SimulatedOutputEncoders(tset, 0.0, engine.spring_rows)
    states = _states(tset)
    model, data = engine.robot.model, engine.robot.data
    hip = engine.robot.dof_of['hip']
    worst, largest, deflected = 0.0, 0.0, 0.0
    for k in range(1500):
        out = _driven_state(sim, outputs, states, k)
        import mujoco
        mujoco.mj_forward(model, data)
        theirs = data.qfrc_passive[hip]
        worst = max(worst, abs(out.effort[0] - theirs))
        largest = max(largest, abs(theirs))
        deflected = max(deflected, abs(states.outputs.deflection[0]))
    assert largest > 0.5 and deflected > 1e-3
    assert worst <= 1e-9 * largest, (worst, largest)


def test_the_mujoco_engine_applies_a_table_spring_the_bridge_reads(tmp_path):
    # A spring given by a table, simulated: its force along the tendon at every step; the
    # bridge's joint effort (the table at the published deflection) is the force MuJoCo
    # applied to the joint in that state (its qfrc_applied, and the tendon's damping).
    pytest.importorskip('mujoco')
    import mujoco
    from transmission_bridge.simulation import Simulation
    from transmission_bridge.simulation.output_encoders import SimulatedOutputEncoders
    (tmp_path / 'sea.urdf').write_text(SEA_URDF)
    table = [[-0.1, -40.0], [0.0, 0.0], [0.02, 4.0], [0.1, 60.0]]
    tset = load_transmissions({'transmissions': [{
        'name': 'hip', 'type': 'simple', 'joints': [{'name': 'hip'}],
        'actuators': [{'name': 'hip_motor', 'mechanical_reduction': 8.0,
                       'rotor_inertia': 3e-5, 'output_encoder': {'name': 'hip_output'},
                       'spring': {'table': table}}]}]})
    sim = Simulation(str(tmp_path / 'sea.urdf'), tset, engine='mujoco', dynamics='effort')
    engine = sim.engine
    outputs = SimulatedOutputEncoders(tset, 0.0, engine.spring_rows)
    states = _states(tset)
    data, hip = engine.robot.data, engine.robot.dof_of['hip']
    worst, largest, soft = 0.0, 0.0, 0
    for k in range(1500):
        out = _driven_state(sim, outputs, states, k)
        engine._apply(np.zeros(1), *engine.motors())      # the forces of this state
        mujoco.mj_forward(engine.robot.model, data)
        theirs = data.qfrc_applied[hip] + data.qfrc_passive[hip]
        worst = max(worst, abs(out.effort[0] - theirs))
        largest = max(largest, abs(theirs))
        soft += abs(states.outputs.deflection[0]) < 0.02          # the table's soft part
    assert largest > 0.5 and 0 < soft < 1500
    assert worst <= 1e-9 * largest, (worst, largest)


def test_a_torque_alone_to_an_sea_is_torque_control_through_its_spring():
    # A command of efforts alone to a motor with a spring: the bridge adds the position that
    # deflects the spring by the wanted torque from the output measured now; a stiff position
    # servo (with the feed-forward) on MuJoCo's rotor then makes the spring pass that torque:
    # settled, MuJoCo's spring force is the wanted torque within 1 % and gravity balances it.
    mujoco = pytest.importorskip('mujoco')
    from transmission_bridge.mapping.commands import CommandMapper
    k, n, wanted = 320.0, 8.0, 1.0
    model = mujoco.MjModel.from_xml_string(SEA_MJCF.format(k=k, d=0.5, inverse=1 / n))
    data = mujoco.MjData(model)
    dofs = [model.jnt_dofadr[model.joint(j).id] for j in ('motor', 'out')]
    tset = _sea({'stiffness': k, 'damping': 0.5}, n)
    states = _states(tset)
    mapper = CommandMapper(tset, measured=lambda stamp: states.measured())
    for step in range(24000):                               # 12 s: the link settles
        states.ingest('s', ['hip_motor', 'hip_output'], [data.qpos[0], data.qpos[1]],
                      [data.qvel[dofs[0]], data.qvel[dofs[1]]], [data.ctrl[0], 0.0],
                      stamp_ns=step + 1)
        command = mapper.map_command(['hip'], [], [], [wanted])
        assert command.position is not None and command.velocity is None
        data.ctrl[0] = (command.effort[0] + 2.0 * (command.position[0] - data.qpos[0])
                        - 0.05 * data.qvel[dofs[0]])
        mujoco.mj_step(model, data)
    mujoco.mj_forward(model, data)
    assert data.qfrc_passive[dofs[1]] == pytest.approx(wanted, rel=0.01)
    assert data.qfrc_bias[dofs[1]] == pytest.approx(wanted, rel=0.01)   # gravity balances it
