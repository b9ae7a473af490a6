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
BLOCK_S, HELD_OUT_EVERY = 2.0, 5   # the tool's held-out split (identification/data.py)
PUSH = 0.3                  # a training-only push's RMS, of each motor's RMS torque


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
    return model.motor_torques(np.asarray(q), qd, qdd, tset)


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
    # A rotor behind an ideal gear turns with the arm about the yaw axis: the data fix the
    # axis's whole inertia (the rotor's I_r r², link1's, the constant part of the links
    # beyond), not its split (the tool keeps the model's). That whole, along the check motion:
    q = rig['check'][1][::500]
    true_urdf = rig['root'] / 'true.urdf'
    true_urdf.write_text(arm.urdf(arm.TRUE_LINKS, name='mj_arm'))

    def about_yaw(model):
        zero, unit = np.zeros_like(q), np.zeros_like(q)
        unit[:, 0] = 1.0
        rest = model.inverse_dynamics(q, zero, zero)
        return (model.inverse_dynamics(q, zero, unit) - rest)[:, 0]
    truth = about_yaw(load_model(str(true_urdf))) + arm.ARMATURE
    assert about_yaw(load_model(rig['urdf'])) + yaw.rotor_inertia * r ** 2 == pytest.approx(
        truth, rel=ROTOR_TOL)
    for name, (eta_f, eta_b, rotor, viscous, coulomb) in arm.LOSSY.items():
        a = got.actuator(name)
        assert a.efficiency_driving == pytest.approx(eta_f, abs=EFFICIENCY_TOL), name
        assert a.efficiency_driven == pytest.approx(eta_b, abs=EFFICIENCY_TOL), name
        assert a.rotor_inertia == pytest.approx(rotor, rel=ROTOR_TOL), name
        assert a.viscous_friction == pytest.approx(viscous, rel=FRICTION_TOL), name
        assert a.coulomb_friction == pytest.approx(coulomb, rel=FRICTION_TOL), name


# --- many bags on Dask; joint_states; what the tool refuses ------------------------------

def _run_tool(args):
    """Run the tool as users do; return (exit code, stdout, stderr)."""
    done = subprocess.run([sys.executable, '-m', 'transmission_bridge.tools.identify', *args],
                          capture_output=True, text=True, timeout=600)
    return done.returncode, done.stdout, done.stderr


def _split_bag(rig, name, start, end):
    """Write the excitation's [start, end) seconds again as its own bag."""
    from transmission_bridge.bag.states import read_states
    stamps, values = read_states(rig['root'] / 'excitation', '/actuator_states',
                                 rig['tset'].actuator_names)
    keep = (stamps - stamps[0] >= start) & (stamps - stamps[0] < end)
    ns = np.round(stamps[keep] * 1e9).astype(np.int64)
    path = rig['root'] / 'fleet' / name
    path.parent.mkdir(exist_ok=True)
    if not path.exists():
        write_states_bag(path, rig['tset'].actuator_names, ns, values[keep, 0],
                         values[keep, 1], values[keep, 2])
    return path


def test_many_bags_on_dask_give_what_one_process_gives_and_a_corrupt_bag_is_named(rig):
    pytest.importorskip('distributed', reason='Dask runs the fleet')
    _split_bag(rig, 'a', 0.0, 32.0)
    _split_bag(rig, 'b', 32.0, 70.0)
    broken = rig['root'] / 'fleet' / 'c_corrupt'
    broken.mkdir(exist_ok=True)
    (broken / 'metadata.yaml').write_text('not: [a bag')
    outputs = []
    for workers in ('1', '2'):
        out = rig['root'] / f'fleet_{workers}.urdf'
        trans = rig['root'] / f'fleet_{workers}.yaml'
        code, stdout, stderr = _run_tool([str(rig['root'] / 'fleet'), '--dynamic', '--model',
                                          str(rig['cad']), '--transmissions', str(rig['trans']),
                                          '--output', str(out), '--output-transmissions',
                                          str(trans), '--workers', workers])
        assert code == 0, stderr
        assert 'skipped' in stdout and 'c_corrupt' in stdout, stdout
        assert "common scale is the model's" in stdout       # the one free scale, said
        outputs.append((out.read_text(), trans.read_text()))
    assert outputs[0] == outputs[1]           # the factors merge in bag order: the same bytes
    single = rig['root'] / 'single.urdf'
    dask_one = rig['root'] / 'dask_one.urdf'
    for target, extra in ((single, []), (dask_one, ['--workers', '1'])):
        code, _, stderr = _run_tool([str(rig['root'] / 'fleet' / 'a'), '--dynamic', '--model',
                                     str(rig['cad']), '--transmissions', str(rig['trans']),
                                     '--output', str(target), *extra])
        assert code == 0, stderr
    assert single.read_text() == dask_one.read_text()


def test_joint_states_alone_identify_the_links_and_each_joint_s_losses(rig):
    """No transmissions: joint torques; each joint its own ideal motor (armature, friction)."""
    t, q, qd, qdd, tau = arm.simulate(arm.multisine(np.array([0.0, 0.3, 0.4, 0.0, 0.0, 0.0]),
                                                    SEED + 2), 40.0)
    bag = rig['root'] / 'joint_states'
    if not bag.exists():
        write_states_bag(bag, arm.JOINTS, START_NS + np.round(t * 1e9).astype(np.int64), q, qd,
                         tau, topic='/joint_states')
    out = rig['root'] / 'from_joint_states.urdf'
    code, stdout, stderr = _run_tool([str(bag), '--dynamic', '--model', str(rig['cad']),
                                      '--output', str(out), '--min-speed', '0.05'])
    assert code == 0, stderr
    check_t, cq, cqd, cqdd, ctau = rig['check']
    model = load_model(out)
    moving = np.abs(cqd) > 0.05
    predicted = model.inverse_dynamics(cq, cqd, cqdd)
    # the yaw joint's armature, damping and friction loss are not the links': the URDF
    # carries only the links, the printout the rest
    row = [line for line in stdout.splitlines() if line.startswith('shoulder_yaw ')][0]
    armature, damping, friction = (float(x.split('±')[0]) for x in row.split()[1:4])
    predicted[:, 0] += armature * cqdd[:, 0] + damping * cqd[:, 0] + friction * np.sign(
        cqd[:, 0])
    assert damping == pytest.approx(arm.DAMPING, rel=FRICTION_TOL)
    assert friction == pytest.approx(arm.FRICTIONLOSS, rel=FRICTION_TOL)
    for k in range(1, 4):                     # the joints that carry a torque worth the name
        rows = moving[:, k]
        scale = np.sqrt(np.mean(ctau[rows, k] ** 2))
        err = np.sqrt(np.mean((predicted[rows, k] - ctau[rows, k]) ** 2)) / scale
        assert err < PREDICTION_TOL, (arm.JOINTS[k], err)


@pytest.mark.parametrize('case', ['still', 'no_efforts', 'another_robot', 'too_short',
                                  'one_motor_idle', 'output_is_input'])
def test_what_cannot_be_identified_is_refused_by_name_and_nothing_is_written(
        rig, tmp_path, case):
    tset = rig['tset']
    names = list(tset.actuator_names)
    n = 4000
    stamps = START_NS + np.arange(n) * 1_000_000
    rng = np.random.default_rng(SEED)
    motion = np.sin(np.arange(n)[:, None] * 0.003 + np.arange(len(names))) * 20.0
    speed = np.gradient(motion, 0.001, axis=0)
    effort = rng.normal(0.0, 0.05, (n, len(names)))
    bag = tmp_path / 'bag'
    output = tmp_path / 'out.urdf'
    want = None
    if case == 'still':
        write_states_bag(bag, names, stamps, np.zeros((n, len(names))),
                         np.zeros((n, len(names))), effort)
        want = 'never move'
    elif case == 'no_efforts':
        write_states_bag(bag, names, stamps, motion, speed, None)
        want = 'carry no efforts'
    elif case == 'another_robot':
        write_states_bag(bag, [f'other_{m}' for m in names], stamps, motion, speed, effort)
        want = 'another robot?'
    elif case == 'too_short':
        write_states_bag(bag, names, stamps[:100], motion[:100], speed[:100], effort[:100])
        want = 'shorter than the filter'
    elif case == 'one_motor_idle':
        motion[:, 2], speed[:, 2] = 0.0, 0.0
        write_states_bag(bag, names, stamps, motion, speed, effort)
        want = names[2]
    else:
        write_states_bag(bag, names, stamps, motion, speed, effort)
        output = rig['cad']
        want = 'is the input model'
    before = sorted(p.name for p in tmp_path.iterdir())
    code, stdout, stderr = _run_tool([str(bag), '--dynamic', '--model', str(rig['cad']),
                                      '--transmissions', str(rig['trans']), '--output',
                                      str(output)])
    assert code != 0
    assert 'Traceback' not in stderr and want in stderr, stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    if case == 'output_is_input':
        assert rig['cad'].read_text() == arm.urdf(cad_links(), name='mj_arm')


def test_a_motor_is_judged_only_on_enough_held_out_rows(capsys):
    """
    A finger nudged past the rest speed a handful of times is named, not judged.

    Two motors whose identified errors are ten times the given model's: the one with
    ``MIN_JUDGED_ROWS`` held-out rows is refused, the one with fewer (NaN elsewhere, as
    :func:`held_out_of` leaves a motor below the rest speed) is said and not judged.
    """
    from types import SimpleNamespace
    from transmission_bridge.tools.identify_report import judge, MIN_JUDGED_ROWS
    rng = np.random.default_rng(11)
    n = 4 * MIN_JUDGED_ROWS
    tau = rng.normal(0.1, 0.01, (n, 2))
    before = rng.normal(0.0, 1e-3, (n, 2))
    after = 10 * before
    few = MIN_JUDGED_ROWS - 1
    before[few:, 1] = after[few:, 1] = np.nan
    problem = SimpleNamespace(names=['arm_motor', 'finger_motor'])
    fit = SimpleNamespace(rows=np.ones((2, 2), int))

    class Refused(Exception):
        pass

    with pytest.raises(Refused) as refused:
        judge(problem, fit, (np.arange(n), tau, before, after), False, Refused)
    assert 'arm_motor' in str(refused.value) and 'finger_motor' not in str(refused.value)
    assert f'finger_motor ({few})' in capsys.readouterr().out
    before[:, 0], after[:, 0] = np.nan, np.nan       # the arm idle: nothing left to judge
    judge(problem, fit, (np.arange(n), tau, before, after), False, Refused)


def test_a_model_worse_on_the_held_out_blocks_is_refused_unless_accepted(rig, tmp_path):
    """
    Never a worse model written silently: a push the held-out blocks never see.

    The excitation's motor torques get a velocity-proportional push (as if a hand dragged
    every motor) inside the blocks the tool trains on only, smoothly on and off well inside
    each block; the held-out blocks (every fifth of 2 s) stay clean. The model as given is
    the one identified from the clean bag. The fit absorbs the push into the motors'
    friction and gains, so it predicts the clean blocks worse: refused, naming the motors,
    nothing written; --accept-worse writes it and says so, and what it wrote predicts the
    independent multi-sine worse than the model as given for every motor named.
    """
    from transmission_bridge.bag.states import read_states
    assert rig['code'] == 0
    names = rig['tset'].actuator_names
    stamps, values = read_states(rig['root'] / 'excitation', '/actuator_states', names)
    t = stamps - stamps[0]
    inside = np.mod(t, BLOCK_S) - 0.4
    window = np.where((inside > 0) & (inside < BLOCK_S - 0.8),
                      np.sin(np.pi * inside / (BLOCK_S - 0.8)) ** 2, 0.0)
    window[np.floor(t / BLOCK_S).astype(int) % HELD_OUT_EVERY == HELD_OUT_EVERY - 1] = 0.0
    thetad, effort = values[:, 1], values[:, 2]
    push = PUSH * np.sqrt(np.mean(effort ** 2, axis=0) / np.mean(thetad ** 2, axis=0))
    bag = tmp_path / 'pushed'
    write_states_bag(bag, names, np.round(stamps * 1e9).astype(np.int64), values[:, 0],
                     thetad, effort + window[:, None] * push * thetad)
    given = load_transmissions(rig['yaml'])
    out = tmp_path / 'out'
    out.mkdir()
    args = [str(bag), '--dynamic', '--model', str(rig['urdf']), '--transmissions',
            str(rig['yaml']), '--output', str(out / 'm.urdf'), '--output-transmissions',
            str(out / 't.yaml')]
    code, stdout, stderr = _run_tool(args)
    assert code == 1 and 'Traceback' not in stderr, stderr
    assert 'worse than the model as given' in stderr and '--accept-worse' in stderr, stderr
    named = [n for n in names if n in stderr]
    assert named, stderr
    assert not list(out.iterdir())
    code, stdout, stderr = _run_tool(args + ['--accept-worse'])
    assert code == 0, stderr
    assert '--accept-worse: writing' in stdout, stdout
    # And it is worse: on the independent multi-sine (MuJoCo's, never pushed), for the motors
    # named, than the model as given.
    t, q, qd, qdd, tau = rig['check']
    _, thetad, measured = arm.motors(rig['tset'], q, qd, qdd, tau)
    after = _predicted(load_model(out / 'm.urdf'), load_transmissions(out / 't.yaml'),
                       q, qd, qdd)
    before = _predicted(load_model(rig['urdf']), given, q, qd, qdd)
    for name in named:
        k = list(names).index(name)
        rows = np.abs(thetad[:, k]) > 0.1
        err_after = np.sqrt(np.mean((after[rows, k] - measured[rows, k]) ** 2))
        err_before = np.sqrt(np.mean((before[rows, k] - measured[rows, k]) ** 2))
        assert err_after > err_before, (name, err_after, err_before)


# --- a solver that stops short ------------------------------------------------------------

def _stalling_after(monkeypatch, answered):
    """Let Clarabel answer ``answered`` steps, then give it one iteration per attempt."""
    from transmission_bridge.identification import convex
    calls, real = [0], convex._solve

    def solve(clarabel, problem, changes):
        calls[0] += 1
        if calls[0] > answered:
            changes = {**changes, 'max_iter': 1}
        return real(clarabel, problem, changes)
    monkeypatch.setattr(convex, '_solve', solve)
    return calls


@pytest.mark.parametrize('answered', [0, 12])
def test_a_solver_that_stops_short_loses_nothing_and_is_said(
        rig, tmp_path, monkeypatch, capsys, answered):
    """
    Clarabel itself is made to stop short (one iteration per attempt) after some steps.

    With none answered: refused, naming Clarabel's status, nothing written. After some: the
    steps it did not answer are not taken and said, and what is written is no worse than
    the CAD on the independent multi-sine for any motor.
    """
    assert rig['code'] == 0
    out = tmp_path / 'out'
    out.mkdir()
    calls = _stalling_after(monkeypatch, answered)
    code = identify([str(rig['root'] / 'excitation'), '--dynamic', '--model', str(rig['cad']),
                     '--transmissions', str(rig['trans']), '--output', str(out / 'm.urdf'),
                     '--output-transmissions', str(out / 't.yaml')])
    stdout, stderr = capsys.readouterr()
    assert calls[0] > answered
    if not answered:
        assert code == 1 and 'stopped short' in stderr and 'MaxIterations' in stderr, stderr
        assert 'Traceback' not in stderr and not list(out.iterdir())
        return
    assert code == 0, stderr
    assert 'stopped short' in stdout and 'not taken' in stdout, stdout
    t, q, qd, qdd, tau = rig['check']
    _, thetad, measured = arm.motors(rig['tset'], q, qd, qdd, tau)
    after = _predicted(load_model(out / 'm.urdf'), load_transmissions(out / 't.yaml'),
                       q, qd, qdd)
    before = _predicted(load_model(rig['cad']), rig['tset'], q, qd, qdd)
    for k, name in enumerate(rig['tset'].actuator_names):
        rows = np.abs(thetad[:, k]) > 0.1
        err_after = np.sqrt(np.mean((after[rows, k] - measured[rows, k]) ** 2))
        err_before = np.sqrt(np.mean((before[rows, k] - measured[rows, k]) ** 2))
        assert err_after <= err_before, (name, err_after, err_before)
