"""
Sim2sim through ``ros2 launch``: a quadruped someone else modelled stands from its first step.

Unitree's Go1 from example-robot-data (its URDF as published), the transmissions written from
its data sheet (config/go1_transmissions.yaml) and the gains of config/go1_sim2sim.yaml, run
by ``ros2 launch transmission_bridge sim2sim.launch.py`` as doc/simulation.md says: MuJoCo as
the drivers, the bridge in MIT mode, the kinematics node. The test commands the stance at
50 Hz and reads every ``~/base_pose`` MuJoCo publishes:

* from the first command, the base stays within 2 cm of the height the simulator started it
  at (its lowest collision geometry on the ground) and within 1 cm of itself: no drop, no
  bounce; upright within 2 degrees;
* ``~/reset`` while the bridge streams its commands puts the base back where it started and
  holds it there, still, for ``reset_hold`` (1 s of simulated time); then it stands again.

The same with ``composed:=true`` (the bridge and the kinematics node in one process): the
gains of the params file reach the bridge there too.
"""

import math
import re

from cli_harness import needs_ros2, Shell
from conftest import REPO
from geometry_msgs.msg import PoseStamped
import pytest
from robot_corpus import robot
from ros_harness import Graph
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

from transmission_bridge.transmissions import load_transmissions

pytest.importorskip('mujoco')
pytest.importorskip('control_msgs')
pytestmark = [pytest.mark.ros, needs_ros2]

NEAR = 0.02        # m: the stance's base height from the start height (the 2 cm)
BOUNCE = 0.01      # m: the base height's range over the window (the 1 cm)
UPRIGHT = math.radians(2.0)
HELD = 1e-9        # m: a held base does not move (its pose is copied, not integrated)
WINDOW = 3.0       # s of simulated time after the first command
TRANSMISSIONS = REPO / 'config' / 'go1_transmissions.yaml'


def _time(msg):
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


def _tilt(q):
    """Return the angle between the base's z axis and the world's, rad."""
    return math.acos(max(-1.0, min(1.0, 1.0 - 2.0 * (q.x * q.x + q.y * q.y))))


@pytest.fixture
def go1():
    path = robot('go1_description/urdf/go1.urdf')
    if path is None or not path.is_file():
        pytest.skip('example-robot-data is not installed (pip install example-robot-data)')
    return path


@pytest.mark.parametrize('composed', ['', 'composed:=true'])
def test_go1_stands_from_its_first_command_and_a_reset_puts_it_back_held(go1, tmp_path,
                                                                         composed):
    shell = Shell(REPO)
    launch = shell.start(f'ros2 launch transmission_bridge sim2sim.launch.py '
                         f'transmissions_file:=config/go1_transmissions.yaml '
                         f'model_file:={go1} params_file:=config/go1_sim2sim.yaml {composed}',
                         tmp_path / 'launch.log')
    tset = load_transmissions(TRANSMISSIONS)
    names = list(tset.joint_names)
    stance = JointState(name=names, position=[float(x) for x in tset.default_positions])
    g = Graph('/')
    try:
        poses = g.collect(PoseStamped, '/actuator_simulator/base_pose', 10000)
        pub = g.node.create_publisher(JointState, '/joint_commands', 10)
        # Where the base starts, and the simulator's own words for it.
        assert g.spin_until(lambda: poses, 60), launch.output()
        start = poses[-1].pose.position.z
        said = r"floating base '\w+' starts at \(0, 0, ([\d.]+)\) m"
        launch.wait_for(said, 30)
        assert float(re.search(said, launch.output()).group(1)) == pytest.approx(start, abs=1e-3)
        assert g.spin_until(lambda: g.node.count_subscribers('/joint_commands') > 0, 30)
        poses.clear()
        assert g.spin_until(lambda: poses and _time(poses[-1]) - _time(poses[0]) > WINDOW,
                            120, lambda: pub.publish(stance), 0.02), launch.output()
        window = list(poses)
        heights = [m.pose.position.z for m in window]
        assert len(window) > 100 * WINDOW       # base_pose at 100 Hz or more
        assert max(abs(z - start) for z in heights) < NEAR, (start, min(heights), max(heights))
        assert max(heights) - min(heights) < BOUNCE, (min(heights), max(heights))
        assert max(_tilt(m.pose.orientation) for m in window) < UPRIGHT
        assert min(heights) < start - 1e-4, 'the base never moved: was the physics running?'

        # ~/reset while the bridge keeps commanding: back at the start, held, then standing.
        answer = g.call(Trigger, '/actuator_simulator/reset')
        assert answer.success, answer.message
        poses.clear()
        assert g.spin_until(lambda: poses and _time(poses[-1]) - _time(poses[0]) > 2.0, 120,
                            lambda: pub.publish(stance), 0.02), launch.output()
        after = list(poses)
        first = next(i for i, m in enumerate(after)
                     if abs(m.pose.position.z - start) < HELD)
        held = [m for m in after[first:] if _time(m) - _time(after[first]) < 0.9]
        assert len(held) > 50 and all(abs(m.pose.position.z - start) < HELD for m in held)
        later = [m.pose.position.z for m in after if _time(m) - _time(after[first]) > 1.0]
        assert later and max(abs(z - start) for z in later) < NEAR, later
        assert min(later) < start - 1e-4, 'the hold never ended'
    finally:
        g.close()
        code = launch.stop()
        shell.close()
    out = launch.output()
    assert code == 0 and 'Traceback' not in out and 'process has died' not in out, out
