"""
The package as a user meets it from the venv: the real ros2 command line, as processes.

``ros2 run``, ``ros2 launch``, ``ros2 param``, ``ros2 service call`` and ``ros2 topic``
on the example robot, the SCARA (``config/scara_*.yaml``) and URDFs, with hand-edited
params files.

Each of the defects of the first-contact report that shows on the command line has a test
here (named in its docstring). From a colcon workspace: test_colcon.py.
"""

import re

from cli_harness import EXECUTABLES, needs_ros2, REPO, Shell, VENV_BIN
import numpy as np
import pytest
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from transmission_bridge.kinematics import holding_torques, load_model
from transmission_bridge.transmissions import load_transmissions
import yaml

pytestmark = [pytest.mark.cli, needs_ros2]

CONFIG = REPO / 'config'
LAUNCH_FILES = sorted(p.name for p in (REPO / 'launch').glob('*.launch.py'))
BRIDGE_UP = r'\[transmission_bridge\]: \d+ transmissions'
KINEMATICS_UP = r"\[kinematics\]: model '"
SIMULATOR_UP = r'\[actuator_simulator\]: (publishing /actuator_states at|MuJoCo: )'
# How close a torque read back from `ros2 topic echo` (YAML text of doubles) must be.
ECHO_ATOL = 1e-9


@pytest.fixture(scope='module')
def shell(tmp_path_factory):
    """Return a shell in the checkout with the venv active (``source .venv/bin/activate``)."""
    sh = Shell(REPO)
    yield sh
    sh.close()


@pytest.fixture
def launches(shell, tmp_path):
    """Start ``ros2 launch``/``ros2 run`` commands in the background; stopped afterwards."""
    started = []

    def start(command):
        proc = shell.start(command, tmp_path / f'bg{len(started)}.log')
        started.append(proc)
        return proc
    yield start
    for proc in started:
        proc.stop()


def _wait_node(shell, node):
    proc = shell.run_until('ros2 node list', lambda p: node in p.stdout.split(), timeout=30)
    assert node in proc.stdout.split(), proc.stdout


# ``ros2 param`` and ``ros2 service call`` wait for an answer without end. Fast DDS drops the
# answer to a client its response writer has not matched within 100 ms (ros2/rmw_fastrtps#392,
# #842), which a loaded 2-core machine hits now and then; a person would press Ctrl-C and run
# the command again, so the tests do that (every call here is idempotent).
LOST = 'timeout 15 '            # coreutils timeout: exit code 124 when no answer came


def _param(shell, verb_args, ok=True):
    """``ros2 param ...`` (retried while the daemon has not discovered the node, or no answer)."""
    proc = shell.run_until(f'{LOST}ros2 param {verb_args}',
                           lambda p: 'Node not found' not in p.stdout and p.returncode != 124,
                           timeout=45)
    if ok:
        assert proc.returncode == 0, proc.stdout
    return proc.stdout


def _dump(shell, node, path):
    """``ros2 param dump NODE > path`` (retried while the daemon has not discovered the node)."""
    proc = shell.run_until(f'{LOST}ros2 param dump {node} > {path}',
                           lambda p: p.returncode == 0, timeout=45)
    assert proc.returncode == 0, proc.stdout


def _expect_up(proc, nodes):
    patterns = {'bridge': BRIDGE_UP, 'kinematics': KINEMATICS_UP, 'simulator': SIMULATOR_UP}
    for node in nodes:
        proc.wait_for(patterns[node], timeout=45)


def _clean_stop(proc):
    code = proc.stop()
    out = proc.output()
    assert code == 0, out
    assert 'Traceback' not in out and '[FATAL]' not in out and 'process has died' not in out, out


# --- executables -------------------------------------------------------------------

@pytest.mark.parametrize('exe', EXECUTABLES)
def test_every_executable_runs_by_ros2_run_and_by_name(shell, exe):
    """Defects 9 and 10: `--help` works (no "[FATAL] cannot read ''"); tools are on PATH."""
    for command in (f'ros2 run transmission_bridge {exe} --help', f'{exe} --help'):
        out = shell.run(command).stdout
        assert 'usage' in out.lower() and exe in out, out
        assert 'FATAL' not in out and 'Traceback' not in out, out
    assert (VENV_BIN / exe).exists(), f'{exe} is not in {VENV_BIN}'


def test_simulator_documents_its_parameters(shell):
    """Defect 9: the simulator's --help names its topic and every parameter with units."""
    out = shell.run('ros2 run transmission_bridge actuator_simulator --help').stdout
    for word in ('actuator_states', 'transmissions_file', 'rate', 'Hz', 'amplitude',
                 'frequency'):
        assert word in out, out


@pytest.mark.parametrize('launch', LAUNCH_FILES)
def test_every_launch_argument_is_described(shell, launch):
    """Defect 13: `ros2 launch ... --show-args` shows no "no description given"."""
    out = shell.run(f'ros2 launch transmission_bridge {launch} --show-args').stdout
    # sim2sim runs on the simulator's /clock: simulated time is not a choice there.
    assert "'params_file'" in out and (
        "'use_sim_time'" in out or launch == 'sim2sim.launch.py'), out
    assert 'no description given' not in out, out


# --- launch files on several robots ------------------------------------------------------

ROBOTS = [
    ('bridge.launch.py', '', ['bridge']),
    ('bridge.launch.py', 'transmissions_file:=config/scara_transmissions.yaml', ['bridge']),
    ('kinematics.launch.py', '', ['kinematics']),
    ('kinematics.launch.py', 'model_file:=config/scara_model.yaml', ['kinematics']),
    ('kinematics.launch.py', 'model_file:=config/scara.urdf tip_links:=[gripper]', ['kinematics']),
    ('robot.launch.py', '', ['bridge', 'kinematics']),
    # defect 3: exactly the command that killed the kinematics node ("unknown bodies ['tool']")
    ('robot.launch.py', 'model_file:=config/scara_model.yaml', ['bridge', 'kinematics']),
    ('robot.launch.py', 'transmissions_file:=config/scara.urdf model_file:=config/scara.urdf',
     ['bridge', 'kinematics']),
    ('robot.launch.py', 'composed:=true', ['bridge', 'kinematics']),
    ('robot_description.launch.py', '', ['bridge', 'kinematics']),
    ('robot_description.launch.py', 'urdf_file:=config/scara.urdf tip_links:=[gripper]',
     ['bridge', 'kinematics']),
    ('demo.launch.py', '', ['simulator', 'bridge', 'kinematics']),
    ('robot_description.launch.py', 'urdf_file:=config/legged_robot.urdf',
     ['bridge', 'kinematics']),
    ('demo.launch.py', 'transmissions_file:=config/legged_robot.urdf '
     'model_file:=config/legged_robot.urdf', ['simulator', 'bridge', 'kinematics']),
    ('sim2sim.launch.py', '', ['simulator', 'bridge', 'kinematics']),
    ('sim2sim.launch.py', 'composed:=true', ['simulator', 'bridge', 'kinematics']),
    ('sim2sim.launch.py', 'transmissions_file:=config/legged_robot.urdf kinematics:=false',
     ['simulator', 'bridge']),
]


@pytest.mark.parametrize('launch,args,nodes', ROBOTS,
                         ids=[f'{launch}-{args or "example"}' for launch, args, _ in ROBOTS])
def test_launch_files_start_every_node_on_every_robot(shell, launches, launch, args, nodes):
    """Defect 3: every launch file works with the example robot, the SCARA and URDFs."""
    proc = launches(f'ros2 launch transmission_bridge {launch} {args}')
    _expect_up(proc, nodes)
    for node in nodes:
        _wait_node(shell, '/' + {'bridge': 'transmission_bridge', 'kinematics': 'kinematics',
                                 'simulator': 'actuator_simulator'}[node])
    _clean_stop(proc)


def _echo_once(shell, launches, topic, msg_type, where=None):
    """``ros2 topic echo --once``; ``where``: its ``--filter`` (the first message it passes)."""
    where = f' --filter "{where}"' if where else ''
    return launches(f'ros2 topic echo --once{where} {topic} {msg_type}')


# The watchdog's hold command carries velocities (0), the holding torques' command none: a stall
# of the CLI publisher past command_timeout (a CI run saw one) puts a hold between the states,
# which an echo that matched late would otherwise read as the motors' holding torques.
NOT_THE_WATCHDOGS = 'not m.velocity'


def _stream_states(launches, names, values):
    """
    Publish actuator states at 5 Hz in the background until the test ends, as a driver does.

    Not a few messages at a time: between two short ``ros2 topic pub`` runs the bridge's
    command watchdog (0.5 s) would rightly send its safe command, which an echo that matched
    late could take for the holding torques.
    """
    return launches(f'ros2 topic pub --rate 5 /actuator_states sensor_msgs/msg/JointState '
                    f'"{{name: [{names}], position: [{values}]}}"')


def _yaml_doc(text):
    """Return the first message `ros2 topic echo` printed (after any 'message lost' note)."""
    return yaml.safe_load(text[text.index('header:'):].split('---')[0])


@pytest.mark.parametrize('launch,args', [
    ('robot.launch.py',
     'transmissions_file:=config/scara_transmissions.yaml model_file:=config/scara_model.yaml'),
    ('robot_description.launch.py', 'urdf_file:=config/scara.urdf'),
    # The launch argument's name until 0.7: still wired, with a warning, until 0.9.
    ('robot.launch.py', 'transmissions_file:=config/scara_transmissions.yaml '
                        'model_file:=config/scara_model.yaml feed_forward:=gravity'),
    # Both nodes in one process (robot_stack): the same wiring.
    ('robot.launch.py', 'transmissions_file:=config/scara_transmissions.yaml '
                        'model_file:=config/scara_model.yaml composed:=true'),
])
def test_scara_end_to_end_through_the_cli(shell, launches, launch, args):
    """Motor states typed with `ros2 topic pub` come out as the library's holding torques."""
    proc = launches(f'ros2 launch transmission_bridge {launch} {args}')
    _expect_up(proc, ['bridge', 'kinematics'])
    deprecated = 'the launch argument feed_forward:= is deprecated'
    assert (deprecated in proc.output()) == ('feed_forward' in args), proc.output()
    tset = load_transmissions(CONFIG / 'scara_transmissions.yaml')
    model = load_model(CONFIG / 'scara_model.yaml')
    q = np.array([0.3, -0.7, 4.0])
    motors = tset.joint_to_actuator('position', q)
    expected = holding_torques(model.gravity_generalized_forces(q))
    echo = _echo_once(shell, launches, '/kinematics/gravity_torques', 'sensor_msgs/msg/JointState')
    # Both launch files wire the holding torques to the bridge (joint_commands_from:=gravity).
    motor_echo = _echo_once(shell, launches, '/actuator_commands', 'sensor_msgs/msg/JointState',
                            where=NOT_THE_WATCHDOGS)
    names = ', '.join(tset.actuator_names)
    values = ', '.join(repr(float(m)) for m in motors)
    # A driver streams its states; the echoes take the first message each sees.
    _stream_states(launches, names, values)
    assert echo.wait_exit(40) == 0, echo.output()
    msg = _yaml_doc(echo.output())
    assert msg['name'] == ['j1', 'j2', 'j3']
    np.testing.assert_allclose(msg['position'], q, rtol=0, atol=ECHO_ATOL)
    np.testing.assert_allclose(msg['effort'], expected, rtol=0, atol=ECHO_ATOL)
    assert motor_echo.wait_exit(20) == 0, motor_echo.output()     # each motor's holding torque
    motor = _yaml_doc(motor_echo.output())
    assert motor['name'] == list(tset.actuator_names)
    np.testing.assert_allclose(motor['effort'], tset.joint_to_actuator('effort', expected),
                               rtol=0, atol=ECHO_ATOL)
    _clean_stop(proc)


def test_legged_robot_ankle_motors_hold_the_leg_through_the_linkage(shell, launches):
    """Issue 44: the legged robot's holding torques reach its motors through each J^T."""
    urdf = CONFIG / 'legged_robot.urdf'
    proc = launches(f'ros2 launch transmission_bridge robot_description.launch.py '
                    f'urdf_file:={urdf}')
    _expect_up(proc, ['bridge', 'kinematics'])
    tset, model = load_transmissions(urdf), load_model(urdf)
    rng = np.random.default_rng(44)
    q = rng.uniform(-0.3, 0.3, tset.num_joints)
    q[[tset.joint_names.index(n) for n in ('left_knee', 'right_knee')]] = [0.7, 1.1]
    motors = tset.joint_to_actuator('position', q)
    q_model = np.array([q[tset.joint_names.index(n)] for n in model.joint_names])
    expected = holding_torques(model.gravity_generalized_forces(q_model))
    motor_echo = _echo_once(shell, launches, '/actuator_commands', 'sensor_msgs/msg/JointState',
                            where=NOT_THE_WATCHDOGS)
    names = ', '.join(tset.actuator_names)
    values = ', '.join(repr(float(m)) for m in motors)
    _stream_states(launches, names, values)
    assert motor_echo.wait_exit(40) == 0, motor_echo.output()
    motor = _yaml_doc(motor_echo.output())
    assert motor['name'] == list(tset.actuator_names)
    tau = np.array([expected[model.joint_names.index(n)] for n in tset.joint_names])
    # The motors' torques do the same work as the joints' for any motion (J^T, power).
    v = rng.normal(size=tset.num_joints)
    v_a = tset.joint_to_actuator('velocity', v, positions=q)
    assert np.dot(motor['effort'], v_a) == pytest.approx(np.dot(tau, v), rel=1e-9)
    expected_motors = tset.joint_to_actuator('effort', tau, positions=q)
    np.testing.assert_allclose(motor['effort'], expected_motors, rtol=0, atol=ECHO_ATOL)
    _clean_stop(proc)


def _lifecycle(shell, verb_args):
    """``ros2 lifecycle ...`` (retried while the daemon has not discovered the node)."""
    proc = shell.run_until(f'{LOST}ros2 lifecycle {verb_args}',
                           lambda p: p.returncode == 0 and 'Node not found' not in p.stdout,
                           timeout=45)
    assert proc.returncode == 0, proc.stdout
    return proc.stdout


def test_a_managed_bridge_brought_up_with_ros2_lifecycle(shell, launches):
    """Issue 45: autostart:=false, then `ros2 lifecycle set` configure and activate."""
    proc = launches('ros2 launch transmission_bridge bridge.launch.py autostart:=false')
    proc.wait_for(r'\[transmission_bridge\]: unconfigured \(autostart false\)', timeout=45)
    assert 'unconfigured [1]' in _lifecycle(shell, 'get /transmission_bridge')
    echo = launches('ros2 topic echo --once /joint_states sensor_msgs/msg/JointState')
    shell.run('ros2 topic pub --times 3 --rate 10 /actuator_states sensor_msgs/msg/JointState '
              '"{name: [elbow_motor], position: [80.0]}"')
    assert echo.proc.poll() is None                 # unconfigured: nothing published
    assert 'Transitioning successful' in _lifecycle(shell, 'set /transmission_bridge configure')
    assert 'inactive [2]' in _lifecycle(shell, 'get /transmission_bridge')
    assert 'Transitioning successful' in _lifecycle(shell, 'set /transmission_bridge activate')
    assert 'active [3]' in _lifecycle(shell, 'get /transmission_bridge')
    shell.run_until('ros2 topic pub --times 3 --rate 10 /actuator_states '
                    'sensor_msgs/msg/JointState "{name: [elbow_motor], position: [80.0]}"',
                    lambda p: echo.proc.poll() is not None, timeout=40)
    assert echo.wait_exit(20) == 0, echo.output()
    assert _yaml_doc(echo.output())['position'] == [1.1]        # 80 / 80 + 0.1
    assert 'Transitioning successful' in _lifecycle(shell, 'set /transmission_bridge deactivate')
    _clean_stop(proc)


def test_a_bridge_that_takes_no_goals_serves_no_action(shell, launches, tmp_path):
    """follow_joint_trajectory:=false on ros2 launch, then in a hand-edited params file."""
    proc = launches('ros2 launch transmission_bridge bridge.launch.py')
    _expect_up(proc, ['bridge'])
    listed = shell.run_until(f'{LOST}ros2 action list',
                             lambda p: 'follow_joint_trajectory' in p.stdout, timeout=40)
    assert '/transmission_bridge/follow_joint_trajectory' in listed.stdout, listed.stdout
    _clean_stop(proc)
    params = tmp_path / 'no_goals.yaml'
    params.write_text('transmission_bridge:\n  ros__parameters:\n'
                      '    follow_joint_trajectory: false    # this robot takes no goals\n')
    for how in ('follow_joint_trajectory:=false', f'params_file:={params}'):
        proc = launches(f'ros2 launch transmission_bridge bridge.launch.py {how}')
        _expect_up(proc, ['bridge'])
        assert 'Boolean value is: False' in _param(
            shell, 'get /transmission_bridge follow_joint_trajectory')
        services = shell.run_until(f'{LOST}ros2 service list',
                                   lambda p: 'calibrate_to_default_pose' in p.stdout,
                                   timeout=40).stdout     # the node's services discovered:
        assert '/transmission_bridge/calibrate_to_default_pose' in services, services
        assert 'query_state' not in services and 'follow_joint_trajectory' not in services \
            and '/transmission_bridge/reload' in services        # the goals' would be there
        assert 'follow_joint_trajectory' not in shell.run(f'{LOST}ros2 action list',
                                                          check=False).stdout
        _clean_stop(proc)


def test_demo_launch_gives_gravity_torques_on_a_fresh_install(shell, launches):
    """Issue item 4: `ros2 launch ... demo.launch.py` then echo the torques; no -0.0 (defect 8)."""
    proc = launches('ros2 launch transmission_bridge demo.launch.py')
    _expect_up(proc, ['simulator', 'bridge', 'kinematics'])
    echo = _echo_once(shell, launches, '/kinematics/gravity_torques', 'sensor_msgs/msg/JointState')
    assert echo.wait_exit(30) == 0, echo.output()
    msg = _yaml_doc(echo.output())
    assert msg['name'] == list(load_model(CONFIG / 'example_arm_model.yaml').joint_names)
    assert msg['effort'][0] == 0.0          # shoulder_pan turns about the vertical
    assert '-0.0\n' not in echo.output(), echo.output()
    _clean_stop(proc)


# --- parameters ----------------------------------------------------------------------------

def test_param_list_get_describe_set_dump(shell, launches, tmp_path):
    """`ros2 param` verbs; defect 7: a typo is refused naming the joint and the known ones."""
    proc = launches('ros2 launch transmission_bridge robot.launch.py')
    _expect_up(proc, ['bridge', 'kinematics'])
    listed = _param(shell, 'list /transmission_bridge')
    assert 'joints.elbow.offset' in listed and 'actuators.elbow_motor.mechanical_reduction' \
        in listed, listed
    assert 'joints.elbow.damping' in _param(shell, 'list /kinematics')
    got = _param(shell, 'get /transmission_bridge joints.elbow.offset')
    assert re.search(r'Double value is: 0\.1\b', got), got
    described = _param(shell, 'describe /transmission_bridge joints.elbow.offset')
    assert 'Type: double' in described and "joint 'elbow'" in described and 'rad' in described
    assert 'Set parameter successful' in _param(
        shell, 'set /transmission_bridge joints.elbow.offset 0.1234')
    refused = _param(shell, 'set /transmission_bridge joints.elbw.offset 0.1', ok=False)
    assert "no joint 'elbw'" in refused and 'elbow' in refused, refused
    assert 'Invalid access to undeclared parameter(s): []' not in refused
    wrong_type = _param(shell, 'set /transmission_bridge joints.elbow.offset true', ok=False)
    assert 'Setting parameter failed' in wrong_type, wrong_type
    assert re.search(r'Double value is: 0\.1234\b', _param(
        shell, 'get /transmission_bridge joints.elbow.offset'))     # the refusal changed nothing
    # An integer for a double is taken as that double, with a warning naming the key.
    assert 'Set parameter successful' in _param(shell, 'set /kinematics joints.elbow.damping 2')
    damping = _param(shell, 'get /kinematics joints.elbow.damping')
    assert re.search(r'Double value is: 2\.0\b', damping), damping
    proc.wait_for(r"\[kinematics\]: parameter 'joints.elbow.damping': 2 is an integer; taken "
                  r'as the double 2\.0')
    negative = _param(shell, 'set /kinematics joints.elbow.damping -1.0', ok=False)
    assert 'Setting parameter failed' in negative and 'damping' in negative, negative
    dump = yaml.safe_load(_param(shell, 'dump /transmission_bridge'))
    assert dump['/transmission_bridge']['ros__parameters']['joints']['elbow']['offset'] == 0.1234
    _clean_stop(proc)


def test_screw_default_translation_exists_for_the_scara_only(shell, launches):
    """Defect 7: the README's default_translation example is a SCARA parameter."""
    proc = launches('ros2 launch transmission_bridge kinematics.launch.py '
                    'model_file:=config/scara_model.yaml')
    _expect_up(proc, ['kinematics'])
    assert 'Set parameter successful' in _param(
        shell, 'set /kinematics joints.j3.default_translation 0.04')
    got = _param(shell, 'get /kinematics joints.j3.default_position')
    value = float(re.search(r'Double value is: (\S+)', got).group(1))
    assert value == pytest.approx(2 * np.pi * 0.04 / 0.02, rel=1e-12)
    _clean_stop(proc)


# --- services ------------------------------------------------------------------------------

BRIDGE_SERVICES = ['calibrate_to_default_pose', 'reset_calibration', 'reload']
KINEMATICS_SERVICES = ['set_default_pose_from_current', 'reset_default_pose', 'reset_damping',
                       'go_to_default_pose']


def test_every_service_answers_ros2_service_call(shell, launches):
    """Every std_srvs/Trigger service; defect 8: answers print plain floats."""
    proc = launches('ros2 launch transmission_bridge demo.launch.py')
    _expect_up(proc, ['simulator', 'bridge', 'kinematics'])
    echo = _echo_once(shell, launches, '/kinematics/gravity_torques', 'sensor_msgs/msg/JointState')
    assert echo.wait_exit(30) == 0, echo.output()       # data flows: both nodes have input
    answers = {}
    for node, services in (('transmission_bridge', BRIDGE_SERVICES),
                           ('kinematics', KINEMATICS_SERVICES)):
        for service in services:
            out = shell.run_until(f'{LOST}ros2 service call /{node}/{service} '
                                  'std_srvs/srv/Trigger', lambda p: p.returncode != 124,
                                  timeout=60).stdout
            assert 'success=True' in out, out
            answers[service] = out
    for out in answers.values():
        assert 'np.float64' not in out, out
    offsets = re.findall(r'(\w+)=(-?\d[\d.e+-]*)', answers['calibrate_to_default_pose']
                         .split('message=')[1])
    assert [name for name, _ in offsets] == list(
        load_transmissions(CONFIG / 'example_robot_transmissions.yaml').joint_names)
    _clean_stop(proc)


# --- calibration round trip: ros2 param dump -> params_file:= ----------------------------

ROUND_TRIPS = [
    ('bridge.launch.py', '', 'elbow'),
    ('robot.launch.py', 'transmissions_file:=config/scara_transmissions.yaml '
                        'model_file:=config/scara_model.yaml', 'j2'),
    ('robot_description.launch.py', 'urdf_file:=config/scara.urdf', 'j3'),
    ('demo.launch.py', '', 'wrist_roll'),
]


@pytest.mark.parametrize('launch,args,joint', ROUND_TRIPS,
                         ids=[r[0] for r in ROUND_TRIPS])
def test_calibration_round_trip_through_every_launch_file(shell, launches, tmp_path, launch,
                                                          args, joint):
    """Defect 4: a `ros2 param dump` given back as params_file is applied by every launch."""
    first = launches(f'ros2 launch transmission_bridge {launch} {args}')
    _expect_up(first, ['bridge'])
    name = f'joints.{joint}.offset'
    assert 'Set parameter successful' in _param(shell, f'set /transmission_bridge {name} 0.4321')
    calibration = tmp_path / 'my_calibration.yaml'
    _dump(shell, '/transmission_bridge', calibration)
    _clean_stop(first)
    again = launches(f'ros2 launch transmission_bridge {launch} {args} '
                     f'params_file:={calibration}')
    _expect_up(again, ['bridge'])
    assert 'Double value is: 0.4321' in _param(shell, f'get /transmission_bridge {name}')
    _clean_stop(again)


def test_dump_alone_relaunches_the_robot_it_was_taken_from(shell, launches, tmp_path):
    """A dump names its transmissions_file: params_file alone brings the same robot back."""
    first = launches('ros2 launch transmission_bridge bridge.launch.py '
                     'transmissions_file:=config/scara_transmissions.yaml')
    _expect_up(first, ['bridge'])
    calibration = tmp_path / 'scara_calibration.yaml'
    _dump(shell, '/transmission_bridge', calibration)
    _clean_stop(first)
    again = launches(f'ros2 launch transmission_bridge bridge.launch.py '
                     f'params_file:={calibration}')
    again.wait_for(r'\[transmission_bridge\]: 3 transmissions, 3 joints from \S+'
                   r'scara_transmissions\.yaml')
    _clean_stop(again)


# --- start-up errors: one line naming the key, exit code 1, no traceback ---------------------

def _params_file(tmp_path, node, params):
    path = tmp_path / 'hand_edited.yaml'
    path.write_text(yaml.safe_dump({f'/**/{node}': {'ros__parameters': params}}))
    return path


@pytest.mark.parametrize('params,message', [
    ({'joints': {'elbow': {'offset': 'abc'}}},                                 # defect 5
     "parameter 'joints.elbow.offset' must be a double (a number: 1.0, or 1), got 'abc' "
     '(a string)'),
    ({'stale_timeout': True}, "parameter 'stale_timeout' must be a double"),  # defect 5
    ({'joints': {'elbw': {'offset': 0.1}}},                                    # defect 6
     "no parameter 'joints.elbw.offset': no joint 'elbw' (joints: elbow, "),
    ({'actuators': {'elbow_motor': {'mechanical_reductoin': 2.0}}},           # defect 6
     "actuator 'elbow_motor' has mechanical_reduction"),
])
def test_hand_edited_params_file_errors_name_the_key(shell, launches, tmp_path, params,
                                                     message):
    """Defects 5 and 6 through `ros2 launch ... params_file:=`: the launch ends with exit 1."""
    path = _params_file(tmp_path, 'transmission_bridge', params)
    proc = launches(f'ros2 launch transmission_bridge robot.launch.py params_file:={path}')
    assert proc.wait_exit(60) == 1, proc.output()
    out = proc.output()
    fatal = [line for line in out.splitlines() if '[FATAL]' in line]
    assert len(fatal) == 1 and message in fatal[0], out
    assert 'Traceback' not in out and 'InvalidParameterTypeException' not in out, out


def test_integers_for_doubles_are_taken_with_a_warning(shell, launches, tmp_path):
    """A hand-edited file's ``offset: 0``: the double 0.0, a warning naming the key."""
    path = _params_file(tmp_path, 'transmission_bridge',
                        {'stale_timeout': 1, 'joints': {'elbow': {'offset': 0}}})
    proc = launches(f'ros2 launch transmission_bridge robot.launch.py params_file:={path}')
    _expect_up(proc, ['bridge', 'kinematics'])
    for key, value in (('joints.elbow.offset', '0'), ('stale_timeout', '1')):
        proc.wait_for(rf"\[transmission_bridge\]: parameter '{key}': {value} is an integer; "
                      rf'taken as the double {value}\.0')
        got = _param(shell, f'get /transmission_bridge {key}')
        assert re.search(rf'Double value is: {value}\.0\b', got), got
    _clean_stop(proc)


@pytest.mark.parametrize('exe,args,message', [
    ('transmission_bridge', '-p joints.elbow.offset:=abc',
     "parameter 'joints.elbow.offset' must be a double (a number: 1.0, or 1), got 'abc'"),
    ('transmission_bridge', '-p stale_timeout:=true',
     "parameter 'stale_timeout' must be a double"),
    ('kinematics', '-p joints.j1.damping:=true', "parameter 'joints.j1.damping' must be a double"),
    ('kinematics', '-p joints.j9.damping:=1.0', "no joint 'j9' (joints: j1, j2, j3)"),
])
def test_ros_args_errors_name_the_key(shell, exe, args, message):
    """Defect 5 with `ros2 run ... -p`: one line, exit code 1."""
    robot = ('transmissions_file:=config/example_robot_transmissions.yaml'
             if exe == 'transmission_bridge' else 'model_file:=config/scara_model.yaml')
    proc = shell.run(f'ros2 run transmission_bridge {exe} --ros-args -p {robot} {args}',
                     check=False, timeout=60)
    assert proc.returncode != 0, proc.stdout
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert any(message in line and '[FATAL]' in line for line in lines), proc.stdout
    assert 'Traceback' not in proc.stdout, proc.stdout


def test_missing_params_file_stops_the_launch(shell, launches):
    """Defect 6: `params_file:=nothere.yaml` is an error, not an uncalibrated robot."""
    for launch in LAUNCH_FILES:
        proc = launches(f'ros2 launch transmission_bridge {launch} params_file:=nothere.yaml')
        assert proc.wait_exit(30) == 1, proc.output()
        assert "params_file: no such file 'nothere.yaml'" in proc.output(), proc.output()
        assert 'process started' not in proc.output(), proc.output()


@pytest.mark.parametrize('arg', ['joint_commands_from', 'feed_forward'])
def test_an_unknown_joint_commands_source_stops_the_launch(shell, launches, arg):
    proc = launches(f'ros2 launch transmission_bridge robot.launch.py {arg}:=gravty')
    assert proc.wait_exit(30) == 1, proc.output()
    assert f"{arg} must be one of gravity, passive, none, got 'gravty'" in proc.output()
    assert 'process started' not in proc.output(), proc.output()


def test_a_node_that_fails_stops_the_whole_launch(shell, launches):
    """Defect 3's other half: the launch does not keep running with only the bridge."""
    proc = launches('ros2 launch transmission_bridge robot.launch.py tip_links:=[nothere]')
    assert proc.wait_exit(60) == 1, proc.output()
    assert "tip_links: unknown bodies ['nothere']" in proc.output()


# --- real robots ----------------------------------------------------------------------------

def test_panda_urdf_launches_kinematics_alone_and_tf_resolves_every_link(shell, launches):
    """Issue 33: `robot_description.launch.py` with the Panda's URDF, as doc/urdf.md shows."""
    from robot_corpus import robot
    from ros_harness import Graph
    import test_tf
    panda = robot('panda_description/urdf/panda.urdf')
    if panda is None:
        pytest.skip('example-robot-data is not installed (pip install example-robot-data)')
    proc = launches(f'ros2 launch transmission_bridge robot_description.launch.py '
                    f'urdf_file:={panda}')
    _expect_up(proc, ['kinematics'])
    # No <transmission>: the bridge is not started, and the launch says why.
    proc.wait_for('transmission_bridge not started: the robot description has no '
                  '<transmission> element', timeout=10)
    g = Graph('/')
    try:
        tf = g.collect(test_tf.tf2_msgs.TFMessage, '/tf', 100)
        static = g.collect(test_tf.tf2_msgs.TFMessage, '/tf_static', test_tf.STATIC)
        description = g.collect(String, '/robot_description', test_tf.LATCHED)
        model = load_model(panda)
        q = model.default_positions + 0.2
        msg = JointState(name=list(model.joint_names), position=list(q))
        msg.header.stamp.sec = 77
        pub = g.node.create_publisher(JointState, '/joint_states', 10)
        assert g.spin_until(lambda: any(m.transforms[0].header.stamp.sec == 77 for m in tf)
                            and static and description, timeout=30,
                            action=lambda: pub.publish(msg)), proc.output()
        buffer = {**test_tf._buffer(static),
                  **test_tf._buffer([m for m in tf if m.transforms[0].header.stamp.sec == 77])}
        for link, X_WB in model.forward_kinematics(q).items():
            np.testing.assert_allclose(test_tf._lookup(buffer, 'panda_link0', link), X_WB,
                                       rtol=0, atol=test_tf.TF_ATOL)
        assert description[-1].data == panda.read_text(encoding='utf-8')
    finally:
        g.close()
    assert 'process started' in proc.output() and 'transmission_bridge-' not in proc.output()
    _clean_stop(proc)
