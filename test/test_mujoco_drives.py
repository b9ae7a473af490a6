"""
The simulated drives on a one-joint MuJoCo pendulum: what each motor applies and reports.

The stage's numbers are NOTATION.md's pinned gear losses (written there by hand), not this
package's functions; the laws' are written out here.
"""

import math

import mujoco
import numpy as np
import pytest

from transmission_bridge.simulation import DriveOptions, load, MujocoSimulation, \
    SimulationError
from transmission_bridge.transmissions import load_transmissions


PENDULUM = """<mujoco><option timestep="0.001" gravity="0 0 0"/><worldbody>
<body name="arm"><joint name="{joint}" type="{kind}" axis="0 1 0"/>
<geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="1"/></body>
</worldbody></mujoco>"""
TIGHT = 1e-12                     # the same arithmetic, rounded differently
DRY_TOL = 1e-6                    # N m: MuJoCo's soft friction constraint at its bound
HELD = 1e-3                       # rad in 0.5 s: a stuck gear
SETTLE = 40                       # physics steps: a sliding stage's band meets its load


def pendulum(tmp_path, stage=None, dynamics='effort', joint='joint', kind='hinge',
             reduction=1.0, limit=None, rate=1000.0, **options):
    xml = tmp_path / 'pendulum.xml'
    xml.write_text(PENDULUM.format(joint=joint, kind=kind))
    actuator = {'name': 'motor', 'mechanical_reduction': reduction}
    if stage:
        actuator['efficiency'] = {'driving': stage[0], 'driven': stage[1]}
    if limit:
        actuator['limits'] = {'effort': limit}
    tset = load_transmissions({'transmissions': [{
        'name': 't', 'type': 'simple', 'actuators': [actuator], 'joints': [{'name': 'joint'}]}]})
    robot = load(xml)
    return MujocoSimulation(tset, robot, rate, DriveOptions(dynamics=dynamics, **options))


@pytest.mark.parametrize('w, tau_a, tau_o', [(1.0, 1.25, 1.0), (-1.0, 0.5, 1.0),
                                             (0.0, 1.0, 0.8)])
def test_the_stage_passes_notations_pinned_torques(tmp_path, w, tau_a, tau_o):
    """
    eta_f 0.8, eta_b 0.5: NOTATION's 'Pinned gear losses', measured direction, moving.

    What reaches the joint is the stage's pass plus its dry friction (MuJoCo's constraint
    force). From rest the motor drives a free load: eta_f of its torque, from the first step.
    Moving, the stage's band follows the load it passed the step before: the pinned torque
    once it has (SETTLE steps; the pendulum started fast enough to keep its direction).
    """
    sim = pendulum(tmp_path, stage=(0.8, 0.5))
    sim.drives.set_efforts([0], [tau_a])
    sim.robot.data.qvel[0] = 10.0 * w
    for _ in range(1 if w == 0.0 else SETTLE):
        sim.advance()
    data = sim.robot.data
    assert np.sign(data.qvel[0]) == np.sign(w) or w == 0.0
    assert data.qfrc_applied[0] + data.qfrc_constraint[0] == pytest.approx(tau_o, abs=DRY_TOL)
    assert sim.report()[2][0] == tau_a                  # the driver reports its own torque


@pytest.mark.parametrize('factor, holds', [
    (1.0, True), (0.6, True), (1.2, True), (0.4, False), (1.4, False)])
def test_a_stuck_stage_holds_a_load_within_its_band(tmp_path, factor, holds):
    """
    At rest a stage holds a load whose torque lies within [eta_b, 1/eta_f] of the motor's.

    eta_f 0.8, eta_b 0.5: a motor torque of 0.6-1.2 times the load holds it (the gear
    sticks); 0.4 lets the load drive it down, 1.4 drives the load up.
    """
    sim = pendulum(tmp_path, stage=(0.8, 0.5))
    sim.robot.model.opt.gravity[:] = (0.0, 0.0, -9.81)
    load = 1.0 * 9.81 * 0.15            # the 1 kg capsule at its middle, lever 0.15 m
    sim.drives.set_efforts([0], [-load * factor])     # gravity turns it about +y
    start = sim.robot.data.qpos[0]
    for _ in range(500):
        sim.advance()
    assert (abs(sim.robot.data.qpos[0] - start) < HELD) == holds


def test_torque_saturates_at_the_effort_limit(tmp_path):
    sim = pendulum(tmp_path, limit=2.0, reduction=10.0)
    sim.drives.set_efforts([0], [-5.0])
    sim.advance()
    assert sim.report()[2][0] == -2.0
    assert sim.robot.data.qfrc_applied[0] == pytest.approx(-20.0, abs=TIGHT)


def test_position_drive_runs_its_own_pd(tmp_path):
    sim = pendulum(tmp_path, dynamics='position', position_stiffness=3.0,
                   position_damping=0.2)
    sim.robot.data.qvel[0] = 0.5
    sim.drives.set_positions([0], [0.1], [0.0], [0.05])
    sim.advance()
    assert sim.report()[2][0] == pytest.approx(3.0 * 0.1 + 0.2 * (0.0 - 0.5) + 0.05,
                                               abs=TIGHT)


def test_mit_drive_evaluates_its_law_every_step(tmp_path):
    """Four physics steps per state: the report is the mean of the law at each step."""
    sim = pendulum(tmp_path, dynamics='motor_gains', rate=250.0)
    assert sim.substeps == 4
    sim.drives.set_gains([0], [0.2], [0.0], [0.0], [5.0], [0.0])
    expected = []
    model, data = sim.robot.model, sim.robot.data
    twin = mujoco.MjData(model)
    twin.qpos[:], twin.qvel[:] = data.qpos, data.qvel
    for _ in range(4):
        tau = 5.0 * (0.2 - twin.qpos[0])
        expected.append(tau)
        twin.qfrc_applied[0] = tau
        mujoco.mj_step(model, twin)
    sim.advance()
    assert sim.report()[2][0] == pytest.approx(np.mean(expected), abs=1e-9)
    assert data.qpos[0] == pytest.approx(twin.qpos[0], abs=1e-12)


def test_encoder_counts_quantise_reported_positions(tmp_path):
    counts = 4096
    sim = pendulum(tmp_path, encoder_counts=counts)
    sim.robot.data.qpos[0] = 0.123456
    theta = sim.report()[0][0]
    step = 2 * math.pi / counts
    assert theta / step == pytest.approx(round(theta / step), abs=1e-9)
    assert abs(theta - 0.123456) <= step / 2


def test_noise_is_seeded_and_as_large_as_asked(tmp_path):
    a = pendulum(tmp_path, velocity_noise=0.01, seed=7)
    b = pendulum(tmp_path, velocity_noise=0.01, seed=7)
    ra = np.array([a.report()[1][0] for _ in range(4000)])
    rb = np.array([b.report()[1][0] for _ in range(4000)])
    assert (ra == rb).all()
    assert ra.std() == pytest.approx(0.01, rel=0.05)


def test_delay_reports_the_state_of_n_periods_before(tmp_path):
    sim = pendulum(tmp_path, delay=3)
    sim.drives.set_efforts([0], [0.5])
    exact, reported = [], []
    for _ in range(10):
        sim.advance()
        exact.append(float(sim.motors()[0][0]))
        reported.append(float(sim.report()[0][0]))
    assert reported[3:] == exact[:-3]


def test_a_motor_joint_of_another_kind_is_refused(tmp_path):
    xml = tmp_path / 'ball.xml'
    xml.write_text(PENDULUM.format(joint='motor', kind='ball').replace(
        'axis="0 1 0"', '').replace('<body name="arm">', '<body name="arm">'
                                    '<joint name="joint" axis="0 1 0"/>'))
    tset = load_transmissions({'transmissions': [{
        'name': 't', 'type': 'simple', 'actuators': [{'name': 'motor'}],
        'joints': [{'name': 'joint'}]}]})
    with pytest.raises(SimulationError, match="motor 'motor'.*not a hinge or slide"):
        MujocoSimulation(tset, load(xml), 1000.0, DriveOptions())


def test_a_motor_in_neither_the_model_nor_placeable_is_refused(tmp_path):
    tset = load_transmissions({'transmissions': [{
        'name': 't', 'type': 'simple', 'actuators': [{'name': 'motor'}],
        'joints': [{'name': 'elbow'}]}]})
    xml = tmp_path / 'p.xml'
    xml.write_text(PENDULUM.format(joint='joint', kind='hinge'))
    with pytest.raises(SimulationError, match="motor 'motor'.*joint 'elbow' is not"):
        MujocoSimulation(tset, load(xml), 1000.0, DriveOptions())


def test_a_model_mujoco_cannot_compile_is_refused_with_its_message(tmp_path):
    xml = tmp_path / 'bad.xml'
    xml.write_text(PENDULUM.format(joint='joint', kind='hinge').replace(
        'size="0.02"', 'size="0.02" material="nowhere"'))
    with pytest.raises(SimulationError, match='MuJoCo cannot .*nowhere'):
        load(xml)


def test_a_urdf_with_a_doctype_is_refused_in_one_line_as_the_bridge_refuses_it(tmp_path):
    """The guarded parser every XML of the package goes through: no entity expansion."""
    urdf = tmp_path / 'laughs.urdf'
    urdf.write_text('<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY a "aaaa">]>'
                    '<robot name="r"><link name="base">&a;</link></robot>')
    with pytest.raises(SimulationError) as refused:
        load(urdf)
    message = str(refused.value)
    assert 'DOCTYPE' in message and str(urdf) in message and '\n' not in message
