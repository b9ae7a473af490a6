"""
example-robot-data's URDFs on the MuJoCo engine: someone else's files, taken as they are.

Every one compiles; what MuJoCo would refuse (inertias with a non-positive or unbalanced
moment, massless moving links, meshes it cannot use) is replaced by the nearest it takes and
said, naming the link. Those with transmissions run 50 states with their motors idle, each
motor placed through its transmission (or held, said, where the URDF fixes its joints).
"""

import numpy as np
import pytest
from robot_corpus import urdf_files

from transmission_bridge.simulation import DriveOptions, load, MujocoSimulation
from transmission_bridge.simulation.urdf_repair import physical
from transmission_bridge.transmissions import ConfigError, load_transmissions

pytest.importorskip('mujoco')
FILES = urdf_files()
STATES = 50


@pytest.mark.skipif(not FILES, reason='example-robot-data is not installed')
@pytest.mark.parametrize('urdf', FILES, ids=lambda p: p.name)
def test_every_robot_compiles_and_its_motors_run(urdf):
    robot = load(urdf, rate=1000.0)
    # Each names what it changed: a link (or a transmission), or every collision mesh.
    assert all("'" in w or w.startswith('collision meshes left out') for w in robot.warnings)
    try:
        tset = load_transmissions(str(urdf))
    except ConfigError:
        return
    if not tset.num_actuators:
        return
    sim = MujocoSimulation(tset, robot, 1000.0, DriveOptions())
    sim.drives.set_efforts(np.arange(tset.num_actuators), np.zeros(tset.num_actuators))
    for _ in range(STATES):
        sim.advance()
    assert sim.unstable == 0
    theta, thetad, _ = sim.report()
    assert np.isfinite(theta).all() and np.isfinite(thetad).all()


def test_a_non_physical_inertia_becomes_the_nearest_physical_one(tmp_path):
    urdf = tmp_path / 'bad.urdf'
    urdf.write_text(
        '<robot name="r"><link name="base"/><link name="arm"><inertial><mass value="1"/>'
        '<inertia ixx="0.01" iyy="0.01" izz="0.05" ixy="0" ixz="0" iyz="0"/></inertial>'
        '</link><link name="tip"/><joint name="j" type="revolute"><parent link="base"/>'
        '<child link="arm"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" '
        'velocity="1"/></joint><joint name="k" type="revolute"><parent link="arm"/>'
        '<child link="tip"/><axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" '
        'velocity="1"/></joint></robot>')
    robot = load(urdf)
    said = ' '.join(robot.warnings)
    assert "link 'arm': inertia not physical" in said and "link 'tip': no inertial" in said
    moments = np.sort(robot.model.body_inertia[robot.model.body('arm').id])
    assert moments[0] + moments[1] >= moments[2] and moments[2] == pytest.approx(0.05)


def test_physical_keeps_a_physical_tensor_as_it_is():
    tensor = np.array([[0.02, 0.001, 0.0], [0.001, 0.03, 0.0], [0.0, 0.0, 0.04]])
    assert physical(tensor) is tensor
