"""
The simulated gear stage against Newton and Shigley, not against this package's functions.

A vertical lift: a carriage of mass m on a slide joint, driven by a lead screw whose motor is
placed through a simple transmission (reduction N = 2π / lead, rad per metre) with a rotor of
inertia I before the stage. Each number the tests expect is written out from first principles:

* Shigley's power-screw efficiencies from the thread's geometry (lead angle λ, friction angle
  φ′ with the flank taken in): η_f = tan λ / tan(λ + φ′), η_b = tan(λ − φ′) / tan λ;
* Newton along the screw: m a = N s − m g, with s the stage's output (motor units), the motor's
  input τ_in = τ_a − I N a, and the stage law s = η_f τ_in (motor drives) or τ_in = η_b s
  (load drives): an unpowered back-drivable lift falls at a = −m g / (m + N² I / η_b), a
  driven one rises at a = (N η_f τ_a − m g) / (m + η_f N² I).

Both a carriage centred on its joint (a body MuJoCo treats as 'simple', whose mass matrix it
reads from compile-time constants) and one off-centre (which it does not).
"""

import math

import numpy as np
import pytest
from transmission_bridge.simulation import DriveOptions, load, MujocoSimulation
from transmission_bridge.simulation.builtin import BuiltinSimulation
from transmission_bridge.transmissions import load_transmissions
from transmission_bridge.transmissions.effort_law import commanded_efforts
import yaml

LIFT = """<mujoco><option timestep="0.0005" gravity="0 0 -9.81"/><worldbody>
<body name="carriage" pos="0 0 1"><joint name="lift" type="slide" axis="0 0 1"/>
<inertial pos="{com}" mass="{mass}" diaginertia="0.01 0.01 0.01"/></body>
</worldbody></mujoco>"""
MASS = 10.0                     # kg
G = 9.81                        # m/s²
LEAD = 0.004                    # m per revolution: a 13 x 4 ACME screw
N = 2.0 * math.pi / LEAD        # rad per m
ROTOR = 2e-6                    # kg m²: N² I = 4.9 kg reflected
CARRIAGES = {'centred': '0 0 0', 'off-centre': '0.1 0 0'}
ACCEL_TOL = 1e-6                # relative: MuJoCo's stiff dry friction at its bound
HELD = 1e-6                     # m in 1 s: a stuck stage
SETTLE = 40                     # physics steps for a sliding stage's band to meet its load
LOWER_TOL = 1e-5                # m/s over 0.1 s: the first steps while the band meets the load


def shigley(lead, mean_diameter, mu, flank):
    """Return (η_f, η_b) of a power screw, written out (Shigley, 'Power screws')."""
    lam = math.atan(lead / (math.pi * mean_diameter))
    phi = math.atan(mu / math.cos(flank))
    return math.tan(lam) / math.tan(lam + phi), math.tan(lam - phi) / math.tan(lam)


ACME = shigley(LEAD, 0.011, 0.15, math.radians(14.5))      # self-locking: η_b < 0
BALL = (0.9, 0.6)                                           # a back-drivable ball screw


LIFT_YAML = {'name': 'lift', 'gravity': [0, 0, -9.81], 'bodies': [{
    'name': 'carriage', 'parent': 'world',
    'joint': {'name': 'lift', 'type': 'prismatic', 'axis': [0, 0, 1],
              'origin': {'xyz': [0, 0, 1], 'rpy': [0, 0, 0]}},
    'inertial': {'mass': MASS, 'com': None, 'inertia': {
        'ixx': 0.01, 'iyy': 0.01, 'izz': 0.01, 'ixy': 0, 'ixz': 0, 'iyz': 0}}}]}
ENGINES = ('mujoco', 'builtin')


def lift(tmp_path, stage, carriage='centred', rotor=ROTOR, viscous=0.0, coulomb=0.0,
         engine='mujoco'):
    actuator = {'name': 'motor', 'mechanical_reduction': N, 'rotor_inertia': rotor,
                'efficiency': {'driving': stage[0], 'driven': stage[1]},
                'friction': {'viscous': viscous, 'coulomb': coulomb}}
    tset = load_transmissions({'transmissions': [{
        'name': 'screw', 'type': 'simple', 'actuators': [actuator],
        'joints': [{'name': 'lift'}]}]})
    rate = 2000.0                                       # one physics step per state
    if engine == 'builtin':
        model = dict(LIFT_YAML)
        body = dict(model['bodies'][0])
        body['inertial'] = dict(body['inertial'],
                                com=[float(x) for x in CARRIAGES[carriage].split()])
        model['bodies'] = [body]
        path = tmp_path / 'lift.yaml'
        path.write_text(yaml.safe_dump(model))
        return tset, BuiltinSimulation(tset, path, rate, DriveOptions())
    xml = tmp_path / 'lift.xml'
    xml.write_text(LIFT.format(com=CARRIAGES[carriage], mass=MASS))
    return tset, MujocoSimulation(tset, load(xml), rate, DriveOptions())


def joint(sim):
    """Return the lift's (position, velocity, last acceleration), either engine."""
    if isinstance(sim, BuiltinSimulation):
        return sim.q[0], sim.v[0], sim.qacc[0]
    data = sim.robot.data
    return data.qpos[0], data.qvel[0], data.qacc[0]


def set_speed(sim, speed):
    if isinstance(sim, BuiltinSimulation):
        sim.v[0] = speed
    else:
        sim.robot.data.qvel[0] = speed


def run(sim, torque, steps):
    """Hold the motor torque ``torque`` (a callable of the state, or a number) for steps."""
    for _ in range(steps):
        sim.drives.set_efforts([0], [torque() if callable(torque) else torque])
        sim.advance()
    return joint(sim)


def test_shigleys_acme_screw_is_self_locking():
    eta_f, eta_b = ACME
    assert 0.40 < eta_f < 0.45 and eta_b < 0.0       # Shigley's example range for ACME


@pytest.mark.parametrize('engine', ENGINES)
@pytest.mark.parametrize('carriage', sorted(CARRIAGES))
def test_an_unpowered_self_locking_lift_holds_its_load(engine, tmp_path, carriage):
    """No motor torque: the screw holds 10 kg (it fell 4.6 m in 1 s before)."""
    _, sim = lift(tmp_path, ACME, carriage, engine=engine)
    start = joint(sim)[0]
    position, velocity, _ = run(sim, 0.0, 2000)
    assert abs(position - start) < HELD
    assert abs(velocity) < HELD


@pytest.mark.parametrize('engine', ENGINES)
@pytest.mark.parametrize('carriage', sorted(CARRIAGES))
def test_a_self_locking_lift_holds_under_any_load(engine, tmp_path, carriage):
    """Five times the load (the motor pushing down with less than lowering needs): held."""
    eta_f, eta_b = ACME
    _, sim = lift(tmp_path, ACME, carriage, engine=engine)
    start = joint(sim)[0]
    # A push down of half what lowering the load would take (|η_b| m g / N): still held.
    position, _, _ = run(sim, 0.5 * eta_b * MASS * G / N, 2000)
    assert abs(position - start) < HELD


@pytest.mark.parametrize('engine', ENGINES)
@pytest.mark.parametrize('carriage', sorted(CARRIAGES))
def test_a_driven_self_locking_lift_rises_at_its_driving_efficiency(engine, tmp_path, carriage):
    eta_f, _ = ACME
    _, sim = lift(tmp_path, ACME, carriage, engine=engine)
    tau = 2.0 * MASS * G / (N * eta_f)             # twice the holding torque
    _, velocity, accel = run(sim, tau, SETTLE)
    expected = (N * eta_f * tau - MASS * G) / (MASS + eta_f * N * N * ROTOR)
    assert velocity > 0.0
    assert accel == pytest.approx(expected, rel=ACCEL_TOL)


@pytest.mark.parametrize('engine', ENGINES)
@pytest.mark.parametrize('carriage', sorted(CARRIAGES))
def test_an_unpowered_back_drivable_lift_falls_at_newtons_rate_with_its_rotor(
        engine, tmp_path, carriage):
    """-m g / (m + N² I / η_b): the rotor's inertia counts whatever MuJoCo simplifies."""
    _, eta_b = BALL
    _, sim = lift(tmp_path, BALL, carriage, engine=engine)
    _, velocity, accel = run(sim, 0.0, SETTLE)
    expected = -MASS * G / (MASS + N * N * ROTOR / eta_b)
    assert velocity < 0.0
    assert accel == pytest.approx(expected, rel=ACCEL_TOL)


# (wanted acceleration, starting velocity): the four quadrants of power flow at the joint.
QUADRANTS = {'lifting, accelerating': (2.0, 0.5), 'lowering, braking': (1.0, -0.5),
             'rising, pulled down': (-12.0, 0.5), 'falling, pushed down': (-12.0, -0.5)}


@pytest.mark.parametrize('engine', ENGINES)
@pytest.mark.parametrize('carriage', sorted(CARRIAGES))
@pytest.mark.parametrize('quadrant', sorted(QUADRANTS))
def test_the_commanded_law_applied_by_the_simulated_stage_gives_the_wanted_force(
        engine, tmp_path, carriage, quadrant):
    """
    The bridge's commanded torque for m (a + g), applied by the sliding stage, gives a.

    Efficiencies, viscous and Coulomb friction and the rotor all on: the law's inverse is
    the simulator's stage, in every quadrant (the starting speeds are above the law's rest
    band, so each is exact).
    """
    wanted, speed = QUADRANTS[quadrant]
    tset, sim = lift(tmp_path, BALL, carriage, viscous=2e-4, coulomb=0.02,
                     engine=engine)
    set_speed(sim, speed)

    def law():
        force, v = MASS * (wanted + G), joint(sim)[1]
        return float(commanded_efforts(tset, [force], [v], [N * v],
                                       joint_accelerations=[wanted])[0])

    _, velocity, accel = run(sim, law, SETTLE)
    assert np.sign(velocity) == np.sign(speed)
    assert accel == pytest.approx(wanted, rel=ACCEL_TOL)


# A motor that is a joint of the model: a rotor geared 9:1 to an arm by a joint equality
# (the user's own mechanism, as the legged robot's knees), the arm's centre of mass out at r.
GEARED = """<mujoco><option timestep="0.0005" gravity="0 0 -9.81"/><worldbody>
<body name="arm" pos="0 0 1"><joint name="shoulder" type="hinge" axis="0 1 0"/>
<inertial pos="{r} 0 0" mass="{mass}" diaginertia="0.01 0.01 0.01"/></body>
<body name="rotor" pos="0 0 2"><joint name="motor" type="hinge" axis="0 1 0"/>
<inertial pos="0 0 0" mass="0.1" diaginertia="1e-6 1e-6 1e-6"/></body>
</worldbody><equality><joint joint1="motor" joint2="shoulder" polycoef="0 {gear} 0 0 0"/>
</equality></mujoco>"""
GEAR = 9.0
ARM_MASS = 2.0
ARM_ROTOR = 1e-4                # kg m²
SOFT = 2e-2                     # relative: MuJoCo's soft joint equality, closed after each step
ARM_HELD = 1e-4                 # rad in 1 s: MuJoCo's soft stiction creeps ~1e-5 rad/s here


def geared_arm(tmp_path, stage, r, rotor=ARM_ROTOR):
    xml = tmp_path / 'geared.xml'
    xml.write_text(GEARED.format(r=r, mass=ARM_MASS, gear=GEAR))
    actuator = {'name': 'motor', 'mechanical_reduction': GEAR, 'rotor_inertia': rotor,
                'efficiency': {'driving': stage[0], 'driven': stage[1]}}
    tset = load_transmissions({'transmissions': [{
        'name': 'gear', 'type': 'simple', 'actuators': [actuator],
        'joints': [{'name': 'shoulder'}]}]})
    return MujocoSimulation(tset, load(xml), 2000.0, DriveOptions())


@pytest.mark.parametrize('r', [1e-4, 0.2])
def test_a_self_locking_motor_joint_holds_its_arm_unpowered(tmp_path, r):
    sim = geared_arm(tmp_path, ACME, r)
    start = sim.robot.data.qpos[0]
    position, _, _ = run(sim, 0.0, 2000)
    assert abs(position - start) < ARM_HELD


@pytest.mark.parametrize('r', [1e-4, 0.05])
def test_a_back_driven_motor_joint_reflects_its_rotor_over_eta_b(tmp_path, r):
    """
    Newton, with the gear's reflected inertia: α = m g r / (J + N² (I_0 + I / η_b)).

    The mean acceleration over 50 ms (the arm turns less than 0.05 rad: its gravity torque
    stays within 0.1 %), within the soft equality's and the closure's effect on the steps.
    """
    _, eta_b = BALL
    sim = geared_arm(tmp_path, BALL, r)
    data = sim.robot.data
    run(sim, 0.0, 1)
    v0, t0 = data.qvel[0], sim.time
    run(sim, 0.0, 100)
    accel = (data.qvel[0] - v0) / (sim.time - t0)
    inertia = ARM_MASS * r * r + 0.01 + GEAR ** 2 * (1e-6 + ARM_ROTOR / eta_b)
    assert accel == pytest.approx(ARM_MASS * G * r / inertia, rel=SOFT)


@pytest.mark.parametrize('engine', ENGINES)
@pytest.mark.parametrize('speed', [-0.05, -0.5])
def test_a_self_locking_lift_lowers_at_the_commanded_laws_torque(engine, tmp_path, speed):
    """
    The law's lowering torque (pushing down, |η_b| of the load) keeps the lift's speed.

    Held by its screw, the load goes down only because the motor drives it: at the law's
    torque for no acceleration, the speed stays (a tenth of a second, LOWER_TOL). The rotor
    reflects N² I = 4.9 kg here; a stage's load lags one physics step, which holds its speed
    while the reflected rotor outweighs (h/c − 1) of the load (NOTATION, doc/simulation.md).
    """
    tset, sim = lift(tmp_path, ACME, viscous=2e-4, coulomb=0.02, engine=engine)
    set_speed(sim, speed)

    def law():
        v = joint(sim)[1]
        return float(commanded_efforts(tset, [MASS * G], [v], [N * v],
                                       joint_accelerations=[0.0])[0])

    assert law() < 0.0                       # the motor pushes the load down
    speeds = [run(sim, law, 1)[1] for _ in range(200)]
    assert max(abs(v - speed) for v in speeds) < LOWER_TOL
