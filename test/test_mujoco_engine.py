"""
The MuJoCo engine of actuator_simulator, checked against MuJoCo and not against ourselves.

* The legged robot's MJCF (config/legged_robot.xml): knees and ankles are closed chains that
  MuJoCo solves (a rotor geared to a crank by a joint equality, rods pinned by ``connect``).
  The bridge's linkage maps, applied to the simulated motors, must give MuJoCo's own joint
  state, at rest and moving.
* With no torque, the robot falls as a plain MuJoCo run of the same file does.
* The kinematics library's holding torques, sent through the bridge's commanded law to
  torque-controlled drives with lossy gears, hold the example arm (MuJoCo's URDF import) still.
* The drives: saturation, the stage by power-flow direction (NOTATION's pinned numbers),
  position and MIT laws, quantisation, seeded noise, delay.
* Refusals: one line naming the key.
"""

import pathlib
import runpy

import numpy as np
import pytest

from transmission_bridge.kinematics import load_model
from transmission_bridge.simulation import DriveOptions, load, MujocoSimulation
from transmission_bridge.transmissions import effort_law, impedance, load_transmissions

mujoco = pytest.importorskip('mujoco')

ROOT = pathlib.Path(__file__).resolve().parent.parent
CONFIG = ROOT / 'config'
LEGGED, LEGGED_XML = CONFIG / 'legged_robot.urdf', CONFIG / 'legged_robot.xml'
# The bridge's maps against MuJoCo's closed chains (the figures).
POSITION_TOL, VELOCITY_TOL = 1e-6, 1e-4          # rad, rad/s
FALL_TOL = 1e-3                                  # rad over the first 200 ms
HOLD_TOL = 1e-3                                  # rad of drift in 2 s


def legged(floating=False, dynamics='motor_gains', **options):
    tset = load_transmissions(LEGGED)
    robot = load(LEGGED_XML, floating_base=floating)
    options = DriveOptions(dynamics=dynamics, **options)
    return tset, MujocoSimulation(tset, robot, 1000.0, options)


def mit_toward(tset, sim, q_target, kp=400.0, kd=4.0):
    """Send the MIT law the bridge sends for a joint spring toward ``q_target``."""
    theta, thetad = sim.motors()
    J = impedance.jacobian(tset, theta)
    n = tset.num_joints
    target = tset.joint_to_actuator('position', q_target)
    t, td, k, d, f = impedance.mit_commands(J, kp * np.ones(n), kd * np.ones(n), target,
                                            np.zeros_like(target), np.zeros(n), theta, thetad)
    sim.drives.set_gains(np.arange(tset.num_actuators), t, td, f, k, d)


def mujoco_joints(tset, sim):
    names, q, qd, _ = sim.joint_state()
    index = [list(names).index(j) for j in tset.joint_names]
    return q[index], qd[index]


# The keyframe is a solve MuJoCo closes to 1e-12 (the generator asserts it); its last digits
# follow the CPU MuJoCo runs on (this VM's and CI's differ by an ulp or two).
MJCF_RTOL = 1e-12


def _numbers(text):
    """Return ``text`` as a list of floats, or None if it is not numbers."""
    try:
        return [float(x) for x in text.split()] or None
    except ValueError:
        return None


def test_committed_mjcf_is_what_the_generator_writes():
    from xml.etree import ElementTree
    generator = runpy.run_path(str(ROOT / 'examples' / 'make_legged_mjcf.py'))
    written = ElementTree.fromstring(generator['build']())
    committed = ElementTree.fromstring(LEGGED_XML.read_text())
    pairs = list(zip(written.iter(), committed.iter()))
    assert len(pairs) == len(list(written.iter())) == len(list(committed.iter()))
    for ours, theirs in pairs:
        assert (ours.tag, sorted(ours.attrib)) == (theirs.tag, sorted(theirs.attrib)), \
            (ours.tag, ours.attrib, theirs.attrib)
        for key, value in ours.attrib.items():
            a, b = _numbers(value), _numbers(theirs.get(key))
            if a is None or b is None or len(a) != len(b):
                assert value == theirs.get(key), (ours.tag, key)
            else:
                np.testing.assert_allclose(a, b, rtol=MJCF_RTOL, atol=MJCF_RTOL,
                                           err_msg=f'{ours.tag} {key}')


@pytest.mark.parametrize('floating', [False, True])
def test_bridge_maps_give_mujocos_joints_at_rest_and_moving(floating):
    tset, sim = legged(floating)
    rng = np.random.default_rng(3)
    q0 = mujoco_joints(tset, sim)[0]
    chain = [k for k, j in enumerate(tset.joint_names)
             if j.endswith(('knee', 'ankle_pitch', 'ankle_roll'))]
    amplitude = np.zeros(tset.num_joints)
    amplitude[chain] = rng.uniform(0.1, 0.25, len(chain))
    phase = rng.uniform(0, 2 * np.pi, tset.num_joints)
    worst_q = worst_v = 0.0
    fastest = 0.0
    for k in range(2500):
        t = k * sim.period
        moving = 1.0 if t > 0.5 else 0.0            # half a second at rest, then moving
        mit_toward(tset, sim, q0 + moving * amplitude * np.sin(2 * np.pi * 1.2 * t + phase))
        sim.advance()
        theta, thetad, _ = sim.report()
        q_bridge = tset.actuator_to_joint('position', theta)
        v_bridge = tset.actuator_to_joint('velocity', thetad, positions=theta)
        q_mj, v_mj = mujoco_joints(tset, sim)
        worst_q = max(worst_q, np.abs(q_bridge - q_mj)[chain].max())
        worst_v = max(worst_v, np.abs(v_bridge - v_mj)[chain].max())
        fastest = max(fastest, np.abs(v_mj[chain]).max())
    assert fastest > 0.5, 'the linkages did not move'
    assert worst_q < POSITION_TOL and worst_v < VELOCITY_TOL, (worst_q, worst_v)


def test_a_wrong_linkage_is_seen():
    """The check above can fail: a knee rod 1 mm longer in the bridge's file is caught."""
    text = LEGGED.read_text().replace('<attachment xyz="-0.05 0 -0.46" />',
                                      '<attachment xyz="-0.05 0 -0.461" />')
    wrong = load_transmissions(text)
    tset, sim = legged()
    q0 = mujoco_joints(tset, sim)[0]
    mit_toward(tset, sim, q0)
    sim.advance()
    theta = sim.report()[0]
    q_mj = mujoco_joints(tset, sim)[0]
    knee = tset.joint_names.index('left_knee')
    assert abs(wrong.actuator_to_joint('position', theta)[knee] - q_mj[knee]) > 100 * \
        POSITION_TOL


def test_no_torque_falls_as_plain_mujoco_does():
    tset, sim = legged(dynamics='effort')
    plain_model = mujoco.MjModel.from_xml_path(str(LEGGED_XML))
    plain = mujoco.MjData(plain_model)
    plain.qpos[:] = sim.robot.data.qpos          # the same closed start
    sim.drives.set_efforts(np.arange(tset.num_actuators), np.zeros(tset.num_actuators))
    worst = moved = 0.0
    start = mujoco_joints(tset, sim)[0]
    names = [plain_model.joint(j).name for j in range(plain_model.njnt)]
    index = [names.index(j) for j in tset.joint_names]
    for _ in range(200):
        sim.advance()
        mujoco.mj_step(plain_model, plain)
        q = mujoco_joints(tset, sim)[0]
        worst = max(worst, np.abs(q - plain.qpos[plain_model.jnt_qposadr[index]]).max())
        moved = max(moved, np.abs(q - start).max())
    assert moved > 0.05, 'the robot did not fall'
    assert worst < FALL_TOL, worst


@pytest.mark.parametrize('stages', ['friction', 'efficiency'])
def test_holding_torques_through_lossy_stages_hold_the_arm(stages):
    """Hold MuJoCo's arm with the kinematics library's gravity through the commanded law."""
    tset = load_transmissions(CONFIG / 'example_robot_transmissions.yaml')
    if stages == 'efficiency':          # gears that lose 15-30 % besides their friction
        tset = tset.replace_fields(actuators={
            'shoulder_lift_motor': {'efficiency_driving': 0.85, 'efficiency_driven': 0.7},
            'elbow_motor': {'efficiency_driving': 0.8, 'efficiency_driven': 0.75},
            'wrist_left_motor': {'efficiency_driving': 0.9, 'efficiency_driven': 0.8}})
    assert not tset.losses.lossless and tset.rotors is not None
    model = load_model(CONFIG / 'example_arm_model.yaml')
    robot = load(CONFIG / 'example_robot.urdf', rate=1000.0)
    sim = MujocoSimulation(tset, robot, 1000.0, DriveOptions(dynamics='effort'))
    order = [list(model.joint_names).index(j) for j in tset.joint_names]
    start = mujoco_joints(tset, sim)[0]
    drift = 0.0
    for _ in range(2000):
        theta, thetad = sim.motors()
        q = tset.actuator_to_joint('position', theta)
        qd = tset.actuator_to_joint('velocity', thetad, positions=theta)
        full = np.asarray(model.default_positions, dtype=float).copy()
        full[order] = q
        hold = -model.gravity_generalized_forces(full)[order]
        tau = effort_law.commanded_efforts(tset, hold, qd, thetad, positions=q)
        sim.drives.set_efforts(np.arange(tset.num_actuators), tau)
        sim.advance()
        drift = max(drift, np.abs(mujoco_joints(tset, sim)[0] - start).max())
    assert drift < HOLD_TOL, drift
