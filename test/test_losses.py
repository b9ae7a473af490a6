"""
Gear losses (transmissions/losses.py, loss_loops.py) against an oracle written from the formulas.

The oracle (transmission_oracles.py) is scalar and per motor, with the issue's branches
written out (Modelica's LossyGear: η_f when the motor drives, 1/η_b when the load drives,
friction on the motor side); the ideal maps it goes through are J by central differences of
each set's position map (never the effort map under test): τ_j = J⁻ᵀ τ_o. States are random,
moving faster than 0.1 rad/s, in every quadrant (τ θ̇ > 0 and < 0), on simple, differential,
coupling and linkage transmissions. Then: inverse consistency, energy, self-locking, the rest
band, the compiled loops' bits, ideal stages to the bit, bad values, URDF, commands with
accelerations (rotors), goals refused through the losses, the library's motor torques against
Pinocchio's links, and each term counted once between the kinematics node and the bridge.
"""

import numpy as np
import pytest

from transmission_bridge.transmissions import ConfigError, load_transmissions
from transmission_bridge.transmissions.losses import Losses, REST_LINEAR, REST_ROTARY
from transmission_bridge.transmissions.losses import screw_efficiency
from transmission_oracles import fd_jacobian, lossy_set as _lossy, oracle_commanded
from transmission_oracles import oracle_measured

RNG_SEED = 57
EXACT = 1e-12           # N·m: the same formulas, rounding apart
FD_TOL = 1e-6           # relative: central differences of the position map
MOVING = 0.1            # rad/s: above it every formula is exact (the bound)


SETS = ['config/example_robot_transmissions.yaml',          # simple, differential, four-bar
        'config/three_motor_wrist_transmissions.yaml',       # a coupling of three motors
        'config/closed_loop_ankle_transmissions.yaml',       # a linkage
        'config/legged_robot.urdf']                          # linkages, from a URDF


def _moving_state(tset, rng):
    """Return (θ, θ̇, q) near the default pose, every motor faster than MOVING."""
    q = tset.default_positions + rng.uniform(-0.05, 0.05, tset.num_joints)
    theta = tset.joint_to_actuator('position', q)
    n = tset.num_actuators
    speed = rng.uniform(2 * MOVING, 3.0, n) * rng.choice([-1, 1], n)
    return theta, speed, q


def _stage_numbers(tset, name):
    a = tset.actuator(name)
    return (a.efficiency_driving, a.efficiency_driven, a.viscous_friction, a.coulomb_friction)


@pytest.mark.parametrize('path', SETS)
def test_measured_and_commanded_efforts_are_the_oracle_s_in_every_quadrant(path):
    rng = np.random.default_rng(RNG_SEED)
    tset = _lossy(path, rng)
    quadrants = set()
    for _ in range(12):
        theta, thetad, q = _moving_state(tset, rng)
        J = fd_jacobian(tset, theta)
        tau_a = rng.normal(scale=2.0, size=tset.num_actuators)
        # measured: the stages per motor, then τ_j = J⁻ᵀ τ_o (power: τ_jᵀ q̇ = τ_oᵀ θ̇)
        tau_o = np.array([oracle_measured(tau_a[i], thetad[i], *_stage_numbers(tset, n))
                          for i, n in enumerate(tset.actuator_names)])
        want = np.linalg.solve(J.T, tau_o)
        got = tset.measured_joint_efforts(tau_a, thetad, None if tset.constant_map else theta)
        assert got == pytest.approx(want, rel=FD_TOL, abs=FD_TOL)
        # commanded: τ_o = Jᵀ (τ_j + b q̇) (the damping the joints lose, added back), then
        # the stages' inverse per motor
        tau_j = rng.normal(scale=3.0, size=tset.num_joints)
        tau_o = J.T @ (tau_j + tset.damping * (J @ thetad))
        want = np.array([oracle_commanded(tau_o[i], thetad[i], *_stage_numbers(tset, n))
                         for i, n in enumerate(tset.actuator_names)])
        got = tset.commanded_motor_efforts(tau_j, thetad, None if tset.constant_map else q)
        assert got == pytest.approx(want, rel=FD_TOL, abs=FD_TOL)
        quadrants |= {(bool(t > 0), bool(v > 0)) for t, v in zip(tau_o, thetad)}
    assert quadrants == {(True, True), (True, False), (False, True), (False, False)}


@pytest.mark.parametrize('self_locking', [False, True])
def test_commanding_what_was_measured_gives_the_motor_torque_back(self_locking):
    rng = np.random.default_rng(RNG_SEED + 1)
    tset = _lossy(SETS[0], rng, self_locking)
    losses = tset.losses
    for _ in range(50):
        n = tset.num_actuators
        thetad = rng.uniform(MOVING, 3.0, n) * rng.choice([-1, 1], n)
        tau_a = rng.normal(scale=2.0, size=tset.num_actuators)
        tau_in = tau_a - losses.friction(thetad)
        reachable = (tau_in * thetad > 0) | (losses.eta_b > 0)   # a self-locking stage
        back = losses.commanded(losses.measured(tau_a, thetad), thetad)    # always drives
        np.testing.assert_allclose(back[reachable], tau_a[reachable], rtol=0, atol=EXACT)


@pytest.mark.parametrize('self_locking', [False, True])
def test_the_gear_never_creates_energy(self_locking):
    """P_motor − P_joints ≥ 0 in every quadrant, both directions; 0 when lossless."""
    rng = np.random.default_rng(RNG_SEED + 2)
    tset = _lossy(SETS[1], rng, self_locking)
    ideal = load_transmissions(SETS[1])
    for k in range(100):
        theta = tset.joint_to_actuator('position', tset.default_positions)
        thetad = rng.uniform(-2.0, 2.0, tset.num_actuators)        # rest included
        qd = tset.actuator_to_joint('velocity', thetad)
        tau_j = rng.normal(scale=2.0, size=tset.num_joints)
        tau_a = tset.commanded_motor_efforts(tau_j, thetad)
        assert tau_a @ thetad - tau_j @ qd >= -EXACT, k
        tau_a = rng.normal(scale=2.0, size=tset.num_actuators)
        if self_locking:        # measured: only what a self-locking stage can be in
            tau_in = tau_a - tset.losses.friction(thetad)
            tau_a = np.where(tau_in * thetad < 0, -tau_a, tau_a)
        tau_j = tset.measured_joint_efforts(tau_a, thetad)
        assert tau_a @ thetad - tau_j @ qd >= -EXACT, k
        lossless = ideal.measured_joint_efforts(tau_a, thetad)
        assert tau_a @ thetad - lossless @ qd == pytest.approx(0.0, abs=1e-9)
        del theta


def test_a_self_locking_screw_lowering_a_load_needs_torque_in_the_direction_of_motion():
    eta_f, eta_b = screw_efficiency(0.004, 0.011, 0.15, 0.2531)      # ACME, 13 x 4
    assert eta_b < 0 < eta_f < 1
    screw = Losses([eta_f], [eta_b], [0.0], [0.0], [REST_ROTARY])
    weight = np.array([2.0])            # the stage must hold back 2 N·m of load (τ_o > 0)
    lowering = np.array([-5.0])         # the motor turns down: the load drives
    tau_a = screw.commanded(weight, lowering)
    assert tau_a[0] * lowering[0] > 0   # the motor pushes down, along the motion
    assert tau_a[0] == pytest.approx(eta_b * weight[0], rel=1e-15)
    lifting = np.array([5.0])
    assert screw.commanded(weight, lifting)[0] == pytest.approx(weight[0] / eta_f)
    at_rest = screw.commanded(weight, np.array([0.0]))
    # the documented rule: the mean of lifting and lowering, inside the stuck band
    assert at_rest[0] == pytest.approx((1 / eta_f + eta_b) / 2 * weight[0], rel=1e-15)
    assert eta_b * weight[0] <= at_rest[0] <= weight[0] / eta_f


@pytest.mark.parametrize('eta_b', [0.6, -0.3])
def test_through_rest_the_motor_torque_is_continuous_and_exact_beyond_the_blend(eta_b):
    """Commanded and measured across θ̇ = 0: no jump, as steep as a linear ±w blend at most."""
    eta_f, b, c = 0.8, 0.01, 0.3
    for rest in (REST_ROTARY, REST_LINEAR):
        stage = Losses([eta_f], [eta_b], [b], [c], [rest])
        speeds = np.linspace(-4 * rest, 4 * rest, 8001)
        step = speeds[1] - speeds[0]
        for tau in (1.5, -1.5, 0.2, -0.2):      # 0.2: the friction flips τ_in's sign at rest
            torque = np.full(1, tau)
            for series, oracle in (
                    (np.array([stage.commanded(torque, np.array([v]))[0] for v in speeds]),
                     oracle_commanded),
                    (np.array([stage.measured(torque, np.array([v]))[0] for v in speeds]),
                     oracle_measured)):
                ends = [oracle(tau, x, eta_f, eta_b, b, c) for x in (-rest, rest)]
                chord = abs(ends[1] - ends[0]) / (2 * rest)   # a linear blend across ±w
                steepest = np.abs(np.diff(series)).max() / step
                assert steepest <= max(chord, 2 * b / eta_f) * (1 + 1e-6) + 1e-9, (tau, rest)
                beyond = np.abs(speeds) >= rest
                want = [oracle(tau, v, eta_f, eta_b, b, c) for v in speeds[beyond]]
                np.testing.assert_allclose(series[beyond], want, rtol=0, atol=EXACT)
            at_rest = stage.commanded(torque, np.array([0.0]))[0]
            assert at_rest == pytest.approx((1 / eta_f + eta_b) / 2 * tau, rel=1e-15)


def test_the_compiled_loops_give_the_reference_s_bits():
    from transmission_bridge.transmissions import loss_loops
    rng = np.random.default_rng(RNG_SEED + 3)
    n = 9
    stage = Losses(rng.uniform(0.3, 1.0, n), rng.uniform(-0.5, 1.0, n),
                   rng.uniform(0, 0.05, n), rng.uniform(0, 0.3, n),
                   [REST_ROTARY] * 6 + [REST_LINEAR] * 3)
    loops = loss_loops.kernels()
    measured = loss_loops.stage_table(stage, measured=True)
    commanded = loss_loops.stage_table(stage, measured=False)
    motors = np.arange(n)
    for trial in range(200):
        scale = 0.06 if trial % 2 else 3.0          # half of them through rest
        v = rng.uniform(-scale, scale, n)
        v[trial % n] = np.nan if trial % 7 == 0 else v[trial % n]
        tau = rng.normal(size=n)
        flat = np.concatenate([rng.normal(size=n), v, tau, [1.0]])
        out = np.empty_like(flat)
        loops.measured_state(flat, n, measured, out)
        assert np.array_equal(out[2 * n:3 * n], stage.measured(tau, v))
        assert np.array_equal(out[:2 * n], flat[:2 * n], equal_nan=True) and out[-1] == 1.0
        cmd = np.empty(n)
        loops.commanded(tau, v, motors, commanded, cmd)
        assert np.array_equal(cmd, stage.commanded(tau, v))


def test_an_ideal_stage_maps_to_the_bit_and_a_set_says_so():
    plain = load_transmissions(SETS[1])
    assert plain.losses.lossless
    explicit = load_transmissions({'transmissions': [{
        'name': 't', 'type': 'simple',
        'actuators': [{'name': 'm', 'mechanical_reduction': 7.0,
                       'efficiency': {'driving': 1.0, 'driven': 1.0}}],
        'joints': [{'name': 'q', 'damping': 0.1}]}]})
    assert explicit.losses.lossless and explicit.state_map().losses is None
    rng = np.random.default_rng(RNG_SEED + 4)
    tau = rng.normal(size=(20, 1))
    v = rng.normal(size=(20, 1))
    assert np.array_equal(explicit.measured_joint_efforts(tau, v),
                          explicit.actuator_to_joint('effort', tau))


@pytest.mark.parametrize('efficiency, words', [
    ({'driving': 0.0}, "efficiency.driving (actuator 'm') must be in (0, 1], got 0.0"),
    ({'driving': 1.2}, 'must be in (0, 1], got 1.2'),
    ({'driven': 1.5}, "efficiency.driven (actuator 'm') must be finite and <= 1"),
    ({'driven': float('nan')}, 'must be finite and <= 1'),
    ({'driving': 0.9, 'lead': 0.004}, 'a screw takes all of lead, mean_diameter'),
    ({'lead': 0.004, 'mean_diameter': 0.011, 'friction_coefficient': 0.15,
      'flank_angle': 2.0}, 'flank_angle must be in [0, pi/2) rad, got 2.0'),
    ({'lead': 1.0, 'mean_diameter': 0.01, 'friction_coefficient': 0.15,
      'flank_angle': 0.2}, 'cannot be driven'),
])
def test_bad_efficiencies_are_refused_naming_the_actuator_and_value(efficiency, words):
    from transmission_bridge.transmissions import ConfigError
    with pytest.raises(ConfigError, match=None) as refused:
        load_transmissions({'transmissions': [{
            'name': 't', 'type': 'simple', 'actuators': [{'name': 'm', 'efficiency': efficiency}],
            'joints': [{'name': 'q'}]}]})
    assert words in str(refused.value), str(refused.value)


def test_the_urdf_efficiency_element_gives_the_yaml_s_numbers():
    urdf = """<robot name="r"><link name="a"/><link name="b"/>
      <joint name="q" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>
        <limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
      <transmission name="t"><type>transmission_interface/SimpleTransmission</type>
        <joint name="q"/><actuator name="m"><mechanicalReduction>50</mechanicalReduction>
          <efficiency driving="0.9" driven="0.6"/></actuator></transmission>
      <joint name="q2" type="prismatic"><parent link="b"/><child link="c"/><axis xyz="0 0 1"/>
        <limit lower="0" upper="0.2" effort="100" velocity="0.1"/></joint><link name="c"/>
      <transmission name="s"><type>transmission_interface/SimpleTransmission</type>
        <joint name="q2"/><actuator name="m2">
          <efficiency lead="0.004" mean_diameter="0.011" friction_coefficient="0.15"
                      flank_angle="0.2531"/></actuator></transmission></robot>"""
    tset = load_transmissions(urdf)
    assert (tset.actuator('m').efficiency_driving, tset.actuator('m').efficiency_driven) == \
        (0.9, 0.6)
    assert (tset.actuator('m2').efficiency_driving, tset.actuator('m2').efficiency_driven) == \
        screw_efficiency(0.004, 0.011, 0.15, 0.2531)


# --- commands with accelerations: the rotors before an efficiency -----------------------------

ROTOR_ROBOT = {'transmissions': [
    {'name': 'elbow', 'type': 'simple',
     'actuators': [{'name': 'elbow_motor', 'mechanical_reduction': 50.0, 'rotor_inertia': 2e-5,
                    'efficiency': {'driving': 0.8, 'driven': 0.7},
                    'friction': {'viscous': 1e-3, 'coulomb': 0.02},
                    'limits': {'effort': 0.5}}],
     'joints': [{'name': 'elbow', 'damping': 0.3}]},
    {'name': 'wrist', 'type': 'differential',
     'actuators': [{'name': 'left', 'mechanical_reduction': 30.0, 'rotor_inertia': 1e-5,
                    'efficiency': {'driving': 0.9, 'driven': 0.85}},
                   {'name': 'right', 'mechanical_reduction': -30.0, 'rotor_inertia': 1e-5,
                    'efficiency': {'driving': 0.9, 'driven': 0.85}}],
     'joints': [{'name': 'pitch'}, {'name': 'roll', 'damping': 0.1}]},
    {'name': 'pan', 'type': 'simple',      # friction only: its rotor is the kinematics node's
     'actuators': [{'name': 'pan_motor', 'mechanical_reduction': 100.0, 'rotor_inertia': 3e-5,
                    'friction': {'viscous': 2e-4, 'coulomb': 0.01}}],
     'joints': [{'name': 'pan'}]},
]}


def _rotor_oracle(tset, tau_j, qd, qdd, thetad):
    """C(Jᵀ (τ + b q̇)) per motor at ``thetad``, plus I θ̈ of the stages below efficiency 1."""
    J = fd_jacobian(tset, np.zeros(tset.num_actuators))        # linear: J is constant
    tau_o = J.T @ (tau_j + tset.damping * qd)
    thetadd = np.linalg.solve(J, qdd)
    out = []
    for i, m in enumerate(tset.actuator_names):
        a = tset.actuator(m)
        rotor = a.rotor_inertia * thetadd[i] if a.efficiency_driving < 1.0 else 0.0
        out.append(oracle_commanded(tau_o[i], thetad[i], *_stage_numbers(tset, m)) + rotor)
    return np.array(out)


def test_a_trajectory_s_efforts_pass_the_stages_at_the_planned_speed_with_the_rotors():
    from transmission_bridge.mapping.commands import CommandMapper
    tset = load_transmissions(ROTOR_ROBOT)
    rng = np.random.default_rng(RNG_SEED + 5)
    mapper = CommandMapper(tset, limit_commands=False)
    names = list(tset.joint_names)
    n = len(names)
    pos = rng.uniform(-0.5, 0.5, (6, n))
    vel = rng.uniform(0.01, 0.1, (6, n)) * rng.choice([-1, 1], (6, n))   # motors > 0.1 rad/s
    acc = rng.normal(size=(6, n))
    eff = rng.normal(scale=5.0, size=(6, n))
    _, (_, motor_v, _, motor_e) = mapper.map_trajectory(names, pos, vel, acc, eff)
    for k in range(6):
        assert np.all(np.abs(motor_v[k]) > MOVING)
        want = _rotor_oracle(tset, eff[k], vel[k], acc[k], motor_v[k])
        np.testing.assert_allclose(motor_e[k], want, rtol=FD_TOL, atol=FD_TOL)


def test_a_goal_s_sample_passes_the_stages_at_its_own_speed_and_an_effort_at_the_measured():
    """
    NOTATION.md's one motion: a command's velocity terms at its own velocities where it has them.

    A goal's sample (positions, velocities, efforts, accelerations) maps the same whatever
    the motors measured; an effort alone takes the measured motion for every term, the
    joints' damping included (q̇ = J θ̇ of the measured motors).
    """
    from transmission_bridge.mapping.commands import CommandMapper
    from transmission_bridge.mapping.measurement import Measured
    tset = load_transmissions(ROTOR_ROBOT)
    rng = np.random.default_rng(RNG_SEED + 6)
    names = list(tset.joint_names)
    J = fd_jacobian(tset, np.zeros(tset.num_actuators))        # linear: J is constant
    for trial in range(10):
        thetad = rng.uniform(0.2, 3.0, tset.num_actuators) * rng.choice([-1, 1], 4)
        now = Measured(np.zeros(4), tset.actuator_to_joint('velocity', thetad),
                       np.zeros(4), thetad)
        mapper = CommandMapper(tset, limit_commands=False,
                               measured=lambda stamp_ns=None: now)
        q, qdd = (rng.normal(scale=0.3, size=4) for _ in range(2))
        planned = rng.uniform(0.2, 3.0, 4) * rng.choice([-1, 1], 4)    # motor speeds
        qd = J @ planned
        tau = rng.normal(scale=5.0, size=4)
        out = mapper.map_command(names, q, qd, tau, accelerations=qdd)
        np.testing.assert_allclose(out.effort, _rotor_oracle(tset, tau, qd, qdd, planned),
                                   rtol=FD_TOL, atol=FD_TOL)
        out = mapper.map_command(names, [], [], tau)
        np.testing.assert_allclose(out.effort, _rotor_oracle(tset, tau, J @ thetad,
                                                             np.zeros(4), thetad),
                                   rtol=FD_TOL, atol=FD_TOL)


def test_a_goal_whose_motor_needs_more_than_its_limit_through_its_losses_is_refused():
    from transmission_bridge.control.goal import plan_goal, Refused
    from transmission_bridge.control.tolerances import tolerances
    tset = load_transmissions(ROTOR_ROBOT)
    group = ('elbow',)
    tol = tolerances(group, [0.0], [0.0], 0.01, 0.0)
    # 20 N·m held at the elbow: 0.4 N·m ideal at the motor (limit 0.5); lifting through the
    # stage: 0.4 / 0.8 + friction = 0.52 > 0.5
    points = [(1.0, [0.5], [0.0], [], [20.0]), (2.0, [1.0], [0.0], [], [20.0])]
    with pytest.raises(Refused) as refused:
        plan_goal(tset, group, list(group), points, ([0.0], [0.0]), 10**9, 0, tol)
    assert "motor 'elbow_motor' reaches effort" in str(refused.value)
    assert "(its gear stage's losses included)" in str(refused.value)
    ideal = load_transmissions(_ideal_robot(ROTOR_ROBOT))
    plan_goal(ideal, group, list(group), points, ([0.0], [0.0]), 10**9, 0, tol)


def _ideal_robot(robot):
    """Return ``robot`` with every gear stage ideal (no efficiency, no friction)."""
    import copy
    ideal = copy.deepcopy(robot)
    for t in ideal['transmissions']:
        for a in t['actuators']:
            a.pop('efficiency', None)
            a.pop('friction', None)
    return ideal


@pytest.mark.parametrize('path', SETS)
def test_the_bridge_s_state_writer_gives_the_reference_map_s_bits_through_losses(path):
    """The per-message writer (one compiled call) against the batch map (numpy, losses.py)."""
    rng = np.random.default_rng(RNG_SEED + 7)
    tset = _lossy(path, rng)
    streamed, batch = tset.state_map(), tset.state_map()
    out = np.empty((3, tset.num_joints))
    write = streamed.writer(out)
    n = tset.num_actuators
    for trial in range(40):
        theta, thetad, _ = _moving_state(tset, rng)
        thetad[rng.uniform(size=n) < 0.3] *= 0.01          # some through rest
        flat = np.concatenate([theta, thetad, rng.normal(size=n), [1.0]])
        assert write(flat)
        assert np.array_equal(out, batch(flat)), trial


def test_the_losses_page_figure_is_what_its_script_draws(tmp_path):
    # doc/losses.md shows it: the same bytes from the committed script.
    import pathlib
    import subprocess
    import sys
    root = pathlib.Path(__file__).resolve().parent.parent
    out = tmp_path / 'loss_torque.svg'
    proc = subprocess.run([sys.executable, str(root / 'examples' / 'loss_torque_figure.py'),
                           str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == (root / 'doc' / 'figures' / 'loss_torque.svg').read_bytes()


# --- the library's motor torques, and each term counted once ----------------------------------

MODEL_TOL = 1e-9        # relative to the largest torque: our inverse dynamics vs Pinocchio's


def _moving_arm(rng):
    """Return (model, lossy set with rotors, q, v, a, motor velocities) of the example arm."""
    from transmission_bridge.kinematics import load_model
    from transmission_bridge.transmissions.parameters import apply_parameters
    model = load_model('config/example_robot.urdf')
    tset = _lossy(SETS[0], rng)
    tset = apply_parameters(tset, {f'actuators.{m}.rotor_inertia': float(rng.uniform(1e-5, 1e-4))
                                   for m in tset.actuator_names})
    q = model.default_positions + rng.uniform(-0.3, 0.3, model.num_positions)
    while True:                             # every motor faster than MOVING
        v = rng.uniform(-1.0, 1.0, model.num_positions)
        cols = [model.joint_names.index(j) for j in tset.joint_names]
        thetad = tset.joint_to_actuator('velocity', v[cols])
        if np.all(np.abs(thetad) > 2 * MOVING):
            break
    return model, tset, q, v, rng.normal(size=model.num_positions), thetad, cols


def test_the_library_s_motor_torques_are_pinocchio_s_links_through_the_oracle_s_stages():
    pin = pytest.importorskip('pinocchio', reason='Pinocchio is not installed (pip install pin)')
    rng = np.random.default_rng(RNG_SEED + 8)
    model, tset, q, v, a, thetad, cols = _moving_arm(rng)
    pm = pin.buildModelFromXML(open('config/example_robot.urdf').read())
    data = pm.createData()
    order = [pm.joints[pm.getJointId(n)].idx_q for n in model.joint_names]
    qp, vp, ap = (np.zeros(pm.nq) for _ in range(3))
    qp[order], vp[order], ap[order] = q, v, a
    links = pin.rnea(pm, data, qp, vp, ap)[order][cols]          # the joints' torques
    J = fd_jacobian(tset, tset.joint_to_actuator('position', q[cols]))
    tau_o = J.T @ (links + tset.damping * v[cols])       # the joints' damping added back
    thetadd = np.linalg.solve(J, a[cols])
    want = [oracle_commanded(tau_o[i], thetad[i], *_stage_numbers(tset, m))
            + tset.actuator(m).rotor_inertia * thetadd[i]
            for i, m in enumerate(tset.actuator_names)]
    got = model.motor_torques(q, v, a, tset)
    scale = np.abs(want).max()
    np.testing.assert_allclose(got, want, rtol=0, atol=MODEL_TOL * scale)


def test_the_kinematics_feed_forward_through_the_bridge_counts_each_term_once():
    """
    Trajectory efforts of the kinematics node, mapped by the bridge: the library's motor torques.

    The node's (links and ideal stages' rotors) through the bridge's (friction, efficiency,
    rotors before a loss), for the same motion.
    """
    from transmission_bridge.mapping.commands import CommandMapper
    from transmission_bridge.kinematics_node.dynamics import joint_side
    rng = np.random.default_rng(RNG_SEED + 9)
    model, tset, q, v, a, thetad, cols = _moving_arm(rng)
    # half of the stages ideal but for friction: their rotors stay the kinematics node's
    from transmission_bridge.transmissions.parameters import apply_parameters
    tset = apply_parameters(tset, {f'actuators.{m}.efficiency.{k}': 1.0
                                   for m in tset.actuator_names[::2]
                                   for k in ('driving', 'driven')})
    kinematics = joint_side(tset)
    kept = kinematics.losses
    assert not (kept.viscous.any() or kept.coulomb.any())   # friction: the bridge's
    assert not kinematics.rotors.inertia[kept.inefficient].any()
    assert kinematics.rotors.inertia[~kept.inefficient].all()   # ideal stages' rotors kept
    node_efforts = model.inverse_dynamics(q, v, a, kinematics)[cols]
    bridge = CommandMapper(tset, limit_commands=False)
    names = list(tset.joint_names)
    _, (_, _, _, motors) = bridge.map_trajectory(
        names, [q[cols]], [v[cols]], [a[cols]], [node_efforts])
    want = model.motor_torques(q, v, a, tset)
    np.testing.assert_allclose(motors[0], want, rtol=0, atol=1e-12 * np.abs(want).max())
    rotors = tset.rotors.inertia
    assert rotors[::2].all() and rotors[1::2].all()          # both kinds of stage have one


def test_a_lossy_robot_whose_zero_pose_is_beyond_its_limits_warms_up():
    """A quadruped's knee (limits [-2.8, -0.9] rad) with a lossy stage: the bridge starts."""
    from transmission_bridge.mapping.warm_up import warm_up
    knee = load_transmissions({'transmissions': [{
        'name': 'knee', 'type': 'simple',
        'actuators': [{'name': 'knee_motor', 'mechanical_reduction': 9.0,
                       'efficiency': {'driving': 0.9, 'driven': 0.8}}],
        'joints': [{'name': 'knee', 'default_position': -1.5,
                    'limits': {'lower': -2.8, 'upper': -0.9}}]}]})
    assert warm_up(knee) >= 0.0


def test_a_streamed_command_past_a_motor_s_limit_after_its_losses_is_scaled_as_a_whole():
    """The limiting motor ends at its limit; every stage output the same fraction k of asked."""
    from transmission_bridge.mapping.commands import CommandMapper
    from transmission_bridge.mapping.measurement import Measured
    from transmission_bridge.transmissions.parameters import apply_parameters
    tset = apply_parameters(load_transmissions(ROTOR_ROBOT),
                            {'actuators.left.limits.effort': 0.3,
                             'actuators.right.limits.effort': 0.3})
    thetad = np.array([20.0, -30.0, 15.0, 40.0])            # every motor moving
    now = Measured(np.zeros(4), tset.actuator_to_joint('velocity', thetad), np.zeros(4),
                   thetad)
    mapper = CommandMapper(tset, measured=lambda stamp_ns=None: now)
    names = list(tset.joint_names)
    tau = np.array([30.0, 12.0, -4.0, 3.0])   # elbow 30 N·m: 0.6 / 0.8 + f = 0.79 > 0.5
    out = mapper.map_command(names, [], [], tau)
    J = fd_jacobian(tset, np.zeros(4))
    tau_o = J.T @ (tau + tset.damping * (J @ thetad))     # damping at the measured motion
    f = np.array([oracle_commanded(0.0, thetad[i], *_stage_numbers(tset, m))
                  for i, m in enumerate(tset.actuator_names)])
    g = np.array([oracle_commanded(tau_o[i], thetad[i], *_stage_numbers(tset, m))
                  for i, m in enumerate(tset.actuator_names)]) - f       # g τ_o
    k = (out.effort - f) / g
    assert np.ptp(k) < FD_TOL and 0.0 < k[0] < 0.99, k
    limits = np.array([0.5, 0.3, 0.3, np.inf])
    assert np.all(np.abs(out.effort) <= limits * (1 + 1e-12))
    assert np.any(np.isclose(np.abs(out.effort), limits, rtol=1e-12))
    note = mapper.last_result.limited[0]
    assert "(its gear stage's losses included): efforts scaled by" in note, note
    assert note.startswith("effort of actuator '"), note


def test_a_stage_that_lowers_harder_than_it_lifts_is_refused_by_name():
    """η_b ≤ −1/η_f: the mean gain (1/η_f + η_b)/2 ≤ 0, which no screw has (Shigley)."""
    with pytest.raises(ConfigError, match=r"actuator 'm'.*efficiency.driven.*-3"):
        load_transmissions({'transmissions': [{
            'name': 't', 'type': 'simple',
            'actuators': [{'name': 'm', 'efficiency': {'driving': 0.5, 'driven': -3.0}}],
            'joints': [{'name': 'j'}]}]})
