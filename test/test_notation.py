"""NOTATION.md's pinned examples hold in the code; flipping a sign in either fails here."""

from conftest import REPO
import numpy as np
import pytest
from transmission_bridge.transmissions import (
    CouplingTransmission, DifferentialTransmission, FourBarLinkageTransmission,
    SimpleTransmission)


def _rows(heading='### Pinned examples'):
    text = (REPO / 'NOTATION.md').read_text()
    section = text.split(heading, 1)[1].split('\n##', 1)[0]
    rows = [line for line in section.splitlines() if line.startswith('| ') and '---' not in line]
    return [[c.strip() for c in row.strip('|').split('|')] for row in rows[1:]]


def _floats(cell):
    return [float(x) for x in cell.split(',')]


ROWS = _rows()


def test_table_is_found():
    assert len(ROWS) >= 10


@pytest.mark.parametrize('row', ROWS, ids=lambda r: '-'.join(r[:1] + r[4:7]))
def test_pinned_example(row):
    kind, n_a, n_j, off, interface, direction, given, expected = row
    if kind == 'coupling':
        t = CouplingTransmission([[float(x) for x in r.split()] for r in n_a.split(';')],
                                 _floats(off))
    elif kind == 'simple':
        t = SimpleTransmission(_floats(n_a)[0], _floats(off)[0], joint_reduction=_floats(n_j)[0])
    else:
        cls = {'differential': DifferentialTransmission,
               'four_bar_linkage': FourBarLinkageTransmission}[kind]
        t = cls(_floats(n_a), _floats(n_j), _floats(off))
    fn = t.actuator_to_joint if direction == 'a2j' else t.joint_to_actuator
    np.testing.assert_allclose(fn(interface, _floats(given)), _floats(expected), rtol=0,
                               atol=1e-14)


def test_pinned_linkage_example():
    # NOTATION.md's slider pushing a y-axis joint: its value and sign, from the page.
    import re
    from transmission_bridge.transmissions.linkage import (
        LinkageActuator, LinkageGeometry, LinkageJoint, LinkageTransmission)
    text = (REPO / 'NOTATION.md').read_text()
    found = re.search(r'joint turns to\s+`q = (-?[0-9.]+)` rad', text)
    assert found, 'the pinned linkage example is not on the page'
    t = LinkageTransmission(LinkageGeometry(
        joints=[LinkageJoint('revolute', (0, 1, 0), (0, 0, 0))],
        actuators=[LinkageActuator('slider', origin=(0.05, 0, 0.2), axis=(0, 0, 1),
                                   attachment=(0.05, 0, 0))]))
    assert t.actuator_to_joint('position', [0.01])[0] == pytest.approx(
        float(found.group(1)), abs=1e-12)


def _loss_rows():
    text = (REPO / 'NOTATION.md').read_text()
    section = text.split('### Pinned gear losses', 1)[1].split('\n## ', 1)[0]
    rows = [line for line in section.splitlines() if line.startswith('| ') and '---' not in line]
    return [[c.strip() for c in row.strip('|').split('|')] for row in rows[1:]]


LOSS_ROWS = _loss_rows()


def test_loss_table_is_found():
    assert len(LOSS_ROWS) >= 10
    assert {r[4] for r in LOSS_ROWS} == {'measured', 'commanded'}


@pytest.mark.parametrize('row', LOSS_ROWS, ids=lambda r: '-'.join(r[4:8]))
def test_pinned_gear_loss(row):
    from transmission_bridge.transmissions.losses import Losses, REST_ROTARY
    eta_f, eta_b, b, c, direction, speed, given, expected = row
    stage = Losses([float(eta_f)], [float(eta_b)], [float(b)], [float(c)], [REST_ROTARY])
    fn = stage.measured if direction == 'measured' else stage.commanded
    got = fn([float(given)], [float(speed)])[0]
    assert got == pytest.approx(float(expected), rel=1e-15, abs=1e-15)


def test_dynamic_parameters_are_pinocchio_s_order_about_the_body_origin():
    """NOTATION.md "Dynamic parameters": (m, m c, I about the origin), Pinocchio's order."""
    pin = pytest.importorskip('pinocchio')
    from transmission_bridge.kinematics import load_model
    from transmission_bridge.kinematics import regressor as reg
    urdf = """<robot name="one"><link name="base"/><link name="arm"><inertial>
      <origin xyz="0.1 0.2 0.3" rpy="0 0 0"/><mass value="2.0"/>
      <inertia ixx="0.05" ixy="0.004" ixz="-0.003" iyy="0.06" iyz="0.002" izz="0.07"/>
      </inertial></link><joint name="j" type="revolute"><parent link="base"/>
      <child link="arm"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1"
      velocity="1"/></joint></robot>"""
    model = load_model(urdf)
    inertia = np.array([[0.05, 0.004, -0.003], [0.004, 0.06, 0.002], [-0.003, 0.002, 0.07]])
    want = pin.Inertia(2.0, np.array([0.1, 0.2, 0.3]), inertia).toDynamicParameters()
    np.testing.assert_allclose(reg.body_parameters(model, ['arm']), want, rtol=0, atol=1e-15)


def test_a_motor_that_drives_pays_one_over_eta_f_and_a_driven_one_gets_eta_b():
    """NOTATION.md: gamma = 1/eta_f where the motor drives (tau_o v_a > 0), else eta_b."""
    from transmission_bridge.identification.problem import Parameters, Rows
    U = np.array([[[0.2]], [[0.2]]])               # the stage output 0.2 N·m, twice
    p = Parameters(np.array([1.0]), *(np.array([x]) for x in (0.0, 0.0, 0.0, 1 / 0.8, 0.5)))
    rows = Rows(U, np.zeros((2, 1)), np.array([[1.0], [-1.0]]), np.zeros((2, 1)),
                np.zeros((2, 1)))
    np.testing.assert_allclose(rows.predict(p)[:, 0], [0.25, 0.1], rtol=0, atol=1e-15)


UNIT_ROWS = _rows('### Pinned driver units')


def test_driver_units_table_is_found():
    assert len(UNIT_ROWS) >= 6


@pytest.mark.parametrize('row', UNIT_ROWS, ids=lambda r: r[0])
def test_pinned_driver_unit(row):
    # The page's law both ways: a state read into SI by the bridge, a command written back.
    import yaml
    from transmission_bridge.mapping.commands import CommandMapper
    from transmission_bridge.mapping.state import ActuatorStates
    from transmission_bridge.transmissions import load_transmissions
    units, interface, driver, si = row
    tset = load_transmissions({'transmissions': [{
        'name': 't', 'type': 'simple', 'joints': [{'name': 'q'}],
        'actuators': [{'name': 'm', 'units': yaml.safe_load(units)}]}]})
    k = ('position', 'velocity', 'effort').index(interface)
    arrays = [[0.0], [0.0], [0.0]]
    arrays[k] = [float(driver)]
    out = ActuatorStates(tset).ingest('s', ['m'], *arrays, stamp_ns=1)
    assert out[1 + k][0] == pytest.approx(float(si), rel=1e-15, abs=1e-15)
    command = [[], [], []]
    command[k] = [float(si)]
    back = CommandMapper(tset, limit_commands=False).map_command(['q'], *command)
    assert back[1 + k][0] == pytest.approx(float(driver), rel=1e-12)
