"""
transmission_bridge_identify --dynamic on data no one here computed: a MuJoCo arm.

The arm (test/mujoco_arm.py) tracks, in MuJoCo, the goal ``transmission_bridge_identify
excite`` writes for its CAD model (links off by up to 25 %), then an independent multi-sine.
Its motors supply the joint torques through a simple ideal gear (MuJoCo's joint armature,
damping and friction loss behind it), a simple, a differential and a coupling lossy gear
(LossyGear written in mujoco_arm.py), with encoder, velocity and torque noise (1 % of
each motor's RMS torque). The tool identifies
from the excitation's bag; the URDF and transmissions YAML it writes, loaded as any user
loads them, predict the multi-sine's motor torques.
"""

import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import mujoco_arm as arm  # noqa: E402, I100
import numpy as np  # noqa: E402, I100
import pytest  # noqa: E402
import yaml  # noqa: E402

pytest.importorskip('mujoco', reason='MuJoCo (pip install mujoco) simulates the test arm')
pytest.importorskip('rosbags', reason='the bags are written with rosbags')

from transmission_bridge.bag.example import write_states_bag  # noqa: E402, I100
from transmission_bridge.control.spline import Spline  # noqa: E402
from transmission_bridge.kinematics import load_model  # noqa: E402
from transmission_bridge.tools.identify import main as identify  # noqa: E402
from transmission_bridge.transmissions import load_transmissions  # noqa: E402

SEED = 11
ENCODER_NOISE = 2e-5        # rad, on the motors' positions
VELOCITY_NOISE = 2e-3       # rad/s
TORQUE_NOISE = 0.01         # of each motor's RMS torque: a drive's current sensing
PREDICTION_TOL = 0.05       # of each motor's RMS torque, on the independent multi-sine
EFFICIENCY_TOL = 0.03       # absolute
ROTOR_TOL = 0.2             # relative: rotor inertias (the wrist's 8e-6 kg m² move ~1 % of
#                             its motor's torque; the yaw's counted with link1's inertia)
FRICTION_TOL = 0.15         # relative: viscous and Coulomb friction at the motors
EXCITATION_S = 60.0
VALIDATION_S = 24.0
START_NS = 1_750_000_000 * 10**9


def cad_links(seed=SEED):
    """Return the arm's links as its CAD knows them: each off by up to 25 %."""
    rng = np.random.default_rng(seed)
    out = []
    for m, c, inertia in arm.TRUE_LINKS:
        out.append((m * rng.uniform(0.75, 1.25), tuple(np.array(c) + rng.uniform(-0.02, 0.02, 3)),
                    tuple(np.array(inertia) * rng.uniform(0.75, 1.25, 3))))
    return out


def write_bag(path, tset, t, q, qd, qdd, tau, seed):
    """Write the motors' states behind MuJoCo's joints (noise added), as a driver would."""
    rng = np.random.default_rng(seed)
    theta, thetad, tau_a = arm.motors(tset, q, qd, qdd, tau)
    stamps = START_NS + np.round(t * 1e9).astype(np.int64)
    write_states_bag(path, tset.actuator_names, stamps,
                     theta + rng.normal(0, ENCODER_NOISE, theta.shape),
                     thetad + rng.normal(0, VELOCITY_NOISE, thetad.shape),
                     tau_a + rng.normal(size=tau_a.shape) * TORQUE_NOISE
                     * np.sqrt(np.mean(tau_a ** 2, axis=0)))
    return theta, thetad, tau_a


def goal_trajectory(goal_path):
    """Return the goal's path as the bridge interpolates it (quintic through its points)."""
    data = yaml.safe_load(pathlib.Path(goal_path).read_text())['trajectory']
    points = data['points']
    times = [0.0] + [p['time_from_start']['sec'] + 1e-9 * p['time_from_start']['nanosec']
                     for p in points]
    first = points[0]['positions']
    spline = Spline(times, [first] + [p['positions'] for p in points],
                    [[0.0] * len(first)] + [p['velocities'] for p in points],
                    [[0.0] * len(first)] + [p['accelerations'] for p in points])
    return (lambda t: spline.sample(np.asarray(t, float))), times[-1]


@pytest.fixture(scope='module')
def rig(tmp_path_factory):
    """Make the CAD files, the excitation's bag, the multi-sine's, and the tool's outputs."""
    root = tmp_path_factory.mktemp('mujoco_arm')
    cad = root / 'cad.urdf'
    cad.write_text(arm.urdf(cad_links(), name='mj_arm'))
    trans = root / 'arm_transmissions.yaml'
    trans.write_text(yaml.safe_dump(arm.transmissions(), sort_keys=False))
    tset = load_transmissions(trans)
    goal = root / 'goal.yaml'
    done = subprocess.run(
        [sys.executable, '-m', 'transmission_bridge.tools.identify', 'excite', '--model',
         str(cad), '--transmissions', str(trans), '--duration', str(EXCITATION_S),
         '--start', '0,0.3,0.4,0,0,0', '--output', str(goal), '--seed', '3'],
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    trajectory, end = goal_trajectory(goal)
    run = arm.simulate(trajectory, end)
    write_bag(root / 'excitation', tset, *run, seed=SEED)
    check = arm.simulate(arm.multisine(np.array([0.0, 0.3, 0.4, 0.0, 0.0, 0.0]), SEED + 1),
                         VALIDATION_S)
    out = {k: root / v for k, v in (('urdf', 'identified.urdf'),
                                    ('yaml', 'identified_transmissions.yaml'),
                                    ('report', 'report.png'))}
    code = identify([str(root / 'excitation'), '--dynamic', '--model', str(cad),
                     '--transmissions', str(trans), '--output', str(out['urdf']),
                     '--output-transmissions', str(out['yaml']), '--report', str(out['report'])])
    return {'root': root, 'cad': cad, 'trans': trans, 'tset': tset, 'check': check,
            'code': code, **out}


def _predicted(model, tset, q, qd, qdd):
    """Return the motors' torques the files predict (the library's dynamics, not the fit's)."""
    Q = np.asarray(q)
    pose = None if tset.linear else Q
    thetad = tset.joint_to_actuator('velocity', qd, pose)
    joint = model.inverse_dynamics(Q, qd, qdd) + tset.damping * qd
    return (tset.commanded_motor_efforts(joint, thetad, pose)
            + tset.rotors.inertia * tset.joint_to_actuator('velocity', qdd))


def test_the_identified_files_predict_an_independent_motion_s_motor_torques(rig):
    assert rig['code'] == 0
    t, q, qd, qdd, tau = rig['check']
    _, thetad, measured = arm.motors(rig['tset'], q, qd, qdd, tau)
    moving = np.abs(thetad) > 0.1
    after = _predicted(load_model(rig['urdf']), load_transmissions(rig['yaml']), q, qd, qdd)
    before = _predicted(load_model(rig['cad']), rig['tset'], q, qd, qdd)
    for k, name in enumerate(rig['tset'].actuator_names):
        rows = moving[:, k]
        scale = np.sqrt(np.mean(measured[rows, k] ** 2))
        err_after = np.sqrt(np.mean((after[rows, k] - measured[rows, k]) ** 2)) / scale
        err_before = np.sqrt(np.mean((before[rows, k] - measured[rows, k]) ** 2)) / scale
        assert err_after < PREDICTION_TOL, (name, err_after, err_before)
        assert err_after < err_before, (name, err_after, err_before)


def test_the_motor_side_values_are_recovered(rig):
    """Efficiencies, friction; the yaw rotor as the data see it: with link1's inertia."""
    assert rig['code'] == 0
    got = load_transmissions(rig['yaml'])
    yaw = got.actuator('shoulder_yaw_motor')
    r = arm.REDUCTION_YAW
    assert yaw.viscous_friction == pytest.approx(arm.DAMPING / r ** 2, rel=FRICTION_TOL)
    assert yaw.coulomb_friction == pytest.approx(arm.FRICTIONLOSS / r, rel=FRICTION_TOL)
    # A rotor behind an ideal gear turns with link1 about the same axis: the data fix only
    # I_r r² + link1's Izz about the axis (the tool keeps the model's split).
    link1 = load_model(rig['urdf']).body('link1').inertial
    m, c = link1.mass, np.asarray(link1.com)
    about_axis = link1.inertia[2, 2] + m * (c[0] ** 2 + c[1] ** 2)
    m0, c0, i0 = arm.TRUE_LINKS[0]
    truth = arm.ARMATURE + i0[2] + m0 * (c0[0] ** 2 + c0[1] ** 2)
    assert yaw.rotor_inertia * r ** 2 + about_axis == pytest.approx(truth, rel=ROTOR_TOL)
    for name, (eta_f, eta_b, rotor, viscous, coulomb) in arm.LOSSY.items():
        a = got.actuator(name)
        assert a.efficiency_driving == pytest.approx(eta_f, abs=EFFICIENCY_TOL), name
        assert a.efficiency_driven == pytest.approx(eta_b, abs=EFFICIENCY_TOL), name
        assert a.rotor_inertia == pytest.approx(rotor, rel=ROTOR_TOL), name
        assert a.viscous_friction == pytest.approx(viscous, rel=FRICTION_TOL), name
        assert a.coulomb_friction == pytest.approx(coulomb, rel=FRICTION_TOL), name
