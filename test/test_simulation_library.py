"""
The simulator as a library (``transmission_bridge.simulation.Simulation``), both engines.

The builtin engine (the package's rigid-body dynamics) against MuJoCo on a fixed-base
five-joint arm no one here tuned for it: the same drives and commands give the same motor
states, to machine precision with ideal gear stages (both integrate semi-implicit Euler with
the joints' damping implicit), within the two friction solvers' difference with lossy ones
(MuJoCo's soft constraint, the builtin's hard Coulomb law). Then the library's contract:
``step``, ``state``, ``reset`` and its refusals, each naming what was wrong.
"""

import math

import numpy as np
import pytest
from transmission_bridge.kinematics import load_model
from transmission_bridge.simulation import DriveOptions, load, MujocoSimulation, Simulation, \
    SimulationError
from transmission_bridge.simulation.builtin import BuiltinSimulation
from transmission_bridge.transmissions import load_transmissions
import yaml

ARM = """<robot name="arm5">
<link name="base"><inertial><mass value="5"/><origin xyz="0 0 0.05"/>
<inertia ixx="0.05" iyy="0.05" izz="0.05" ixy="0" ixz="0" iyz="0"/></inertial></link>
<joint name="pan" type="revolute"><parent link="base"/><child link="upper"/>
<origin xyz="0 0 0.1"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="100" velocity="5"/>
</joint>
<link name="upper"><inertial><mass value="2"/><origin xyz="0 0 0.15"/>
<inertia ixx="0.02" iyy="0.02" izz="0.005" ixy="0" ixz="0" iyz="0"/></inertial></link>
<joint name="lift" type="revolute"><parent link="upper"/><child link="fore"/>
<origin xyz="0 0 0.3"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="100" velocity="5"/>
</joint>
<link name="fore"><inertial><mass value="1.5"/><origin xyz="0.15 0 0"/>
<inertia ixx="0.003" iyy="0.015" izz="0.015" ixy="0" ixz="0" iyz="0"/></inertial></link>
<joint name="pitch" type="revolute"><parent link="fore"/><child link="hand"/>
<origin xyz="0.3 0 0"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="100" velocity="5"/>
</joint>
<link name="hand"><inertial><mass value="0.8"/><origin xyz="0.05 0 0.02"/>
<inertia ixx="0.002" iyy="0.003" izz="0.003" ixy="0" ixz="0" iyz="0"/></inertial></link>
<joint name="roll" type="revolute"><parent link="hand"/><child link="tool"/>
<origin xyz="0.1 0 0"/><axis xyz="1 0 0"/><limit lower="-3" upper="3" effort="100" velocity="5"/>
</joint>
<link name="tool"><inertial><mass value="0.4"/><origin xyz="0.03 0.02 0"/>
<inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
</robot>"""
SAME = 1e-9             # rad, rad/s: the same arithmetic in another order
DRY_POSITION = 1e-5     # rad at the motor: MuJoCo's soft stiction against a hard Coulomb law
DRY_VELOCITY = 5e-3     # rad/s at the motor, at the stick-slip instants
STATES = 1000           # one second at 1 kHz
RNG_SEED = 7300


def stage(eta_f, eta_b, lossy):
    return {'efficiency': {'driving': eta_f, 'driven': eta_b},
            'friction': {'viscous': 1e-4, 'coulomb': 2e-3}} if lossy else {}


def transmissions(lossy):
    return {'transmissions': [
        {'name': 'pan', 'type': 'simple', 'actuators': [dict(
            name='pan_motor', mechanical_reduction=50.0, rotor_inertia=3e-5,
            **stage(0.85, 0.7, lossy))], 'joints': [{'name': 'pan', 'damping': 0.2}]},
        {'name': 'lift', 'type': 'simple', 'actuators': [dict(
            name='lift_motor', mechanical_reduction=100.0, rotor_inertia=5e-5,
            **stage(0.8, 0.6, lossy))], 'joints': [{'name': 'lift', 'default_position': 0.3}]},
        {'name': 'wrist', 'type': 'differential', 'actuators': [
            dict(name='wrist_left', mechanical_reduction=30.0, rotor_inertia=1e-5,
                 **stage(0.9, 0.8, lossy)),
            dict(name='wrist_right', mechanical_reduction=-30.0, rotor_inertia=1e-5,
                 **stage(0.88, 0.75, lossy))],
         'joints': [{'name': 'pitch', 'default_position': -0.4, 'damping': 0.05},
                    {'name': 'roll'}]}]}


@pytest.fixture
def arm(tmp_path):
    path = tmp_path / 'arm5.urdf'
    path.write_text(ARM)
    return path


@pytest.mark.parametrize('lossy', [False, True])
def test_the_builtin_engine_moves_the_motors_as_mujoco_does(arm, lossy):
    """
    MIT drives about a moving target with the holding torques as feed-forward, 1 s.

    Joint gains 60 N·m/rad and 2 N·m·s/rad seen through the transmissions; the targets swing
    0.3 rad at the motors. The two engines' motor states, every state.
    """
    tset = load_transmissions(transmissions(lossy))
    options = DriveOptions(dynamics='motor_gains')
    sims = [MujocoSimulation(tset, load(arm, False, 1000.0), 1000.0, options),
            BuiltinSimulation(tset, arm, 1000.0, options)]
    n = tset.num_actuators
    q0 = sims[1].start_pose()
    hold = load_model(str(arm)).motor_torques(q0, 0 * q0, 0 * q0, tset)
    J = np.linalg.inv(tset.joint_to_actuator('velocity', np.eye(tset.num_joints)).T)
    k, d = np.diag(J.T @ (60.0 * J)), np.diag(J.T @ (2.0 * J))
    start = tset.joint_to_actuator('position', tset.default_positions)
    phase = np.random.default_rng(RNG_SEED).uniform(0.0, 2 * math.pi, n)
    moved, worst = 0.0, np.zeros(2)
    for step in range(STATES):
        target = start + 0.3 * np.sin(2 * math.pi * step / STATES + phase)
        reports = []
        for sim in sims:
            sim.drives.set_gains(list(range(n)), target, np.zeros(n), hold, k, d)
            sim.advance()
            reports.append(sim.report())
        (theta_m, thetad_m, _), (theta_b, thetad_b, _) = reports
        worst = np.maximum(worst, [np.abs(theta_m - theta_b).max(),
                                   np.abs(thetad_m - thetad_b).max()])
        moved = max(moved, np.abs(theta_m - start).max())
    assert moved > 0.2                                  # it did move
    assert sims[0].unstable == 0
    if lossy:
        assert worst[0] < DRY_POSITION and worst[1] < DRY_VELOCITY, worst
    else:
        assert worst[0] < SAME and worst[1] < SAME, worst


@pytest.mark.parametrize('engine', ['mujoco', 'builtin'])
def test_step_state_and_reset(arm, tmp_path, engine):
    trans = tmp_path / 't.yaml'
    trans.write_text(yaml.safe_dump(transmissions(True)))
    sim = Simulation(arm, trans, engine=engine, rate=500.0)
    time0, motors0, joints0 = sim.state()
    assert time0 == 0.0 and set(motors0) == {'pan_motor', 'lift_motor', 'wrist_left',
                                             'wrist_right'}
    assert set(joints0) >= {'pan', 'lift', 'pitch', 'roll'}
    assert joints0['lift'] == (pytest.approx(0.3), 0.0)      # the transmissions' default
    for _ in range(50):
        t, motors, joints = sim.step({'lift_motor': 0.0})
    assert t == pytest.approx(50 * sim.period)
    assert abs(joints['lift'][0] - 0.3) > 1e-3                 # unpowered, it falls
    assert motors['lift_motor'][2] == 0.0                      # the torque it applied
    sim.reset()
    _, motors, joints = sim.state()
    assert joints['lift'] == (pytest.approx(0.3), 0.0)
    for _ in range(5):                                         # held until commanded
        _, _, joints = sim.step()
    assert joints['lift'] == (pytest.approx(0.3), 0.0)


@pytest.mark.parametrize('engine', ['mujoco', 'builtin'])
def test_a_reset_holds_for_its_time_whatever_is_commanded(arm, tmp_path, engine):
    trans = tmp_path / 't.yaml'
    trans.write_text(yaml.safe_dump(transmissions(True)))
    sim = Simulation(arm, trans, engine=engine, rate=500.0)
    for _ in range(20):
        sim.step({'lift_motor': 0.0})
    sim.reset(hold=0.1)                          # 50 states of 2 ms
    for k in range(50):                          # commanded to fall at every state: held
        _, _, joints = sim.step({'lift_motor': 0.0})
        assert joints['lift'] == (pytest.approx(0.3), 0.0), k
    for _ in range(10):                          # then the commands in force move it
        _, _, joints = sim.step()
    assert abs(joints['lift'][0] - 0.3) > 1e-4
    for bad in (-0.1, float('nan'), 'long'):
        with pytest.raises(SimulationError, match='reset: hold must be a number of seconds'):
            sim.reset(hold=bad)


def test_seeded_noise_repeats_and_a_new_seed_changes_it(arm, tmp_path):
    trans = tmp_path / 't.yaml'
    trans.write_text(yaml.safe_dump(transmissions(False)))

    def run(seed):
        sim = Simulation(arm, trans, engine='builtin', seed=seed, position_noise=1e-3)
        return [sim.step({'pan_motor': 0.0})[1]['pan_motor'][0] for _ in range(5)]
    assert run(3) == run(3)
    assert run(3) != run(4)


@pytest.mark.parametrize('kwargs, words', [
    ({'engine': 'gazebo'}, "engine must be one of mujoco, builtin, got 'gazebo'"),
    ({'dynamics': 'torque'}, 'dynamics must be one of'),
    ({'rate': 0.0}, 'rate must be a number > 0'),
    ({'stiffness': 3.0}, "unknown drive option 'stiffness'"),
    ({'engine': 'builtin', 'floating_base': True}, 'floating_base: the builtin engine'),
])
def test_arguments_are_refused_by_name(arm, tmp_path, kwargs, words):
    trans = tmp_path / 't.yaml'
    trans.write_text(yaml.safe_dump(transmissions(False)))
    with pytest.raises(SimulationError, match=words.replace('(', r'\(')):
        Simulation(arm, trans, **kwargs)


def test_commands_are_refused_by_name_and_change_nothing(arm, tmp_path):
    trans = tmp_path / 't.yaml'
    trans.write_text(yaml.safe_dump(transmissions(False)))
    sim = Simulation(arm, trans, engine='builtin', dynamics='motor_gains')
    with pytest.raises(SimulationError, match="no motor 'elbow_motor'"):
        sim.step({'elbow_motor': (0.0, 0.0, 0.0, 1.0, 0.1)})
    with pytest.raises(SimulationError, match="'pan_motor' takes 5 finite"):
        sim.step({'pan_motor': (0.0, 0.0, float('nan'), 1.0, 0.1)})
    assert not sim.engine.drives.commanded


def test_a_transmission_joint_the_model_lacks_is_refused_naming_both(arm, tmp_path):
    spec = transmissions(False)
    spec['transmissions'][0]['joints'][0]['name'] = 'yaw'
    trans = tmp_path / 't.yaml'
    trans.write_text(yaml.safe_dump(spec))
    with pytest.raises(SimulationError, match="transmission 'pan': its joint 'yaw'"):
        Simulation(arm, trans, engine='builtin')


@pytest.mark.parametrize('engine', ['mujoco', 'builtin'])
def test_a_joint_damped_twice_applies_the_model_s_and_says_both(arm, tmp_path, engine):
    """
    The URDF damps ``pan`` 0.3, its transmission 0.2: the model's is the robot's, said.

    ``lift`` (undamped in the URDF, 0.4 in its transmission) takes the transmission's;
    ``pitch`` carries 0.05 in both: nothing said. Read back through the engine's own model.
    """
    text = ARM.replace('<origin xyz="0 0 0.1"/><axis xyz="0 0 1"/>',
                       '<origin xyz="0 0 0.1"/><axis xyz="0 0 1"/><dynamics damping="0.3"/>')
    text = text.replace('<origin xyz="0.3 0 0"/><axis xyz="0 1 0"/>',
                        '<origin xyz="0.3 0 0"/><axis xyz="0 1 0"/><dynamics damping="0.05"/>')
    urdf = tmp_path / 'damped.urdf'
    urdf.write_text(text)
    spec = transmissions(False)
    spec['transmissions'][1]['joints'][0]['damping'] = 0.4
    trans = tmp_path / 't.yaml'
    trans.write_text(yaml.safe_dump(spec))
    sim = Simulation(urdf, trans, engine=engine)
    said = [w for w in sim.warnings if 'damping' in w]
    assert len(said) == 1 and "joint 'pan'" in said[0] and '0.3' in said[0] \
        and '0.2' in said[0], sim.warnings
    assert sim.engine.added_damping == ['lift']
    if engine == 'mujoco':
        robot = sim.engine.robot
        applied = {j: robot.model.dof_damping[robot.dof_of[j]] for j in ('pan', 'lift', 'pitch')}
    else:
        model = sim.engine.model
        applied = {j: sim.engine._damping[model.joint_names.index(j)]
                   for j in ('pan', 'lift', 'pitch')}
    assert applied == pytest.approx({'pan': 0.3, 'lift': 0.4, 'pitch': 0.05}, rel=1e-12)
