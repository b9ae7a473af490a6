"""
A floating robot starts resting on the ground: someone else's quadrupeds, MuJoCo as the judge.

example-robot-data's URDFs put the base's origin at z = 0, legs through the floor. The
simulator must start each with its lowest collision geometry on the ground: MuJoCo's own
distance between the ground plane and every collision geometry of the robot
(``mj_geomDistance``, its convex-collision code, not the package's support functions) must be
zero at the closest and never negative, in the zero pose and in a bent start pose from the
transmissions' ``default_position``. An MJCF's own base height is kept unless it starts in
the ground; a keyframe ``home`` is kept as it is.
"""

import numpy as np
import pytest
from robot_corpus import robot

from transmission_bridge.simulation import DriveOptions, load, MujocoSimulation
from transmission_bridge.transmissions import load_transmissions

mujoco = pytest.importorskip('mujoco')
QUADRUPEDS = ['go1_description/urdf/go1.urdf', 'a1_description/urdf/a1.urdf',
              'solo_description/robots/solo12.urdf',
              'anymal_c_simple_description/urdf/anymal.urdf']
TOUCH = 1e-6        # m: MuJoCo's convex distance (GJK on meshes) against exact contact
FAR = 10.0          # m: distances beyond are not computed


def _simulation(path, bend=0.0):
    model = load(path, floating_base=True, rate=1000.0)
    joints = [model.model.joint(j).name for j in model.joint_ids]
    rng = np.random.default_rng(71)
    tset = load_transmissions({'transmissions': [
        {'name': j, 'type': 'simple', 'actuators': [{'name': f'{j}_motor'}],
         'joints': [{'name': j, 'default_position': float(rng.uniform(-bend, bend))}]}
        for j in joints]})
    return MujocoSimulation(tset, model, 1000.0, DriveOptions())


def _distances(sim):
    """Return MuJoCo's distance from the ground to each collision geometry of the robot."""
    m, d = sim.robot.model, sim.robot.data
    mujoco.mj_forward(m, d)
    ground = next(g for g in range(m.ngeom) if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_PLANE)
    return np.array([mujoco.mj_geomDistance(m, d, ground, g, FAR, None)
                     for g in range(m.ngeom) if m.geom_bodyid[g]
                     and (m.geom_contype[g] or m.geom_conaffinity[g])])


@pytest.mark.parametrize('relative', QUADRUPEDS)
@pytest.mark.parametrize('bend', [0.0, 0.4])
def test_a_urdf_quadruped_starts_on_the_ground(relative, bend):
    path = robot(relative)
    if path is None or not path.is_file():
        pytest.skip(f'example-robot-data is not installed (or has no {relative})')
    sim = _simulation(path, bend)
    distances = _distances(sim)
    assert distances.min() == pytest.approx(0.0, abs=TOUCH), distances.min()
    xyz, lift, touching = sim.base_start
    assert lift > 0.0 and xyz[2] == pytest.approx(lift) and touching, sim.base_start
    sim.reset()                                     # the same place again
    assert _distances(sim).min() == pytest.approx(0.0, abs=TOUCH)


BOX = """<mujoco><option timestep="0.001"/>
  <worldbody><geom name="floor" type="plane" size="0 0 1"/>
  <body name="box" pos="0 0 {z}"><freejoint/><geom type="box" size="0.2 0.1 0.1" mass="1"
    euler="0 0.3 0"/><body name="arm" pos="0.3 0 0"><joint name="hinge" axis="0 1 0"/>
    <geom type="capsule" size="0.02" fromto="0 0 0 0 0 -0.3" mass="0.1"/></body></body>
  </worldbody>{keyframe}</mujoco>"""


@pytest.mark.parametrize('z, moved', [(0.05, True), (0.8, False)])
def test_an_mjcf_base_moves_only_out_of_the_ground(tmp_path, z, moved):
    path = tmp_path / 'box.xml'
    path.write_text(BOX.format(z=z, keyframe=''))
    sim = _simulation(path)
    distances = _distances(sim)
    if moved:
        assert distances.min() == pytest.approx(0.0, abs=TOUCH)
    else:
        assert sim.base_start[1] == 0.0 and sim.robot.data.qpos[2] == pytest.approx(z)
        assert distances.min() > 0.1


def test_a_keyframe_home_places_the_base_as_it_says(tmp_path):
    path = tmp_path / 'box.xml'
    path.write_text(BOX.format(z=0.0, keyframe='<keyframe><key name="home" '
                               'qpos="0 0 0.02 1 0 0 0 0.1"/></keyframe>'))
    sim = _simulation(path)
    assert sim.base_start is None
    assert sim.robot.data.qpos[2] == pytest.approx(0.02)      # in the ground: as asked
