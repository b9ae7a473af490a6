"""NOTATION.md's pinned examples hold in the code; flipping a sign in either fails here."""

from conftest import REPO
import numpy as np
import pytest
from transmission_bridge.transmissions import (
    CouplingTransmission, DifferentialTransmission, FourBarLinkageTransmission,
    SimpleTransmission)


def _rows():
    text = (REPO / 'NOTATION.md').read_text()
    section = text.split('### Pinned examples', 1)[1].split('\n##', 1)[0]
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
