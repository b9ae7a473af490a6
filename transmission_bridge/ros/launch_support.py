"""
What every launch file of the package shares: its arguments and how nodes get parameters.

Each node gets, in this order (later wins): the package's defaults for it
(``config/bridge.yaml``, ``config/kinematics.yaml``), the user's ``params_file`` if
given (for example a ``ros2 param dump`` calibration; sections apply by node name), then
what the launch arguments say. A robot file argument left empty means "what
``params_file`` names, else the example robot", so a dump relaunches the robot it was
taken from. Mistakes stop the launch with one line: a ``params_file``, robot file or URDF
that does not exist, a ``use_sim_time`` that is not true/false. A node that exits with
an error (an invalid configuration) shuts the whole launch down rather than leaving the
other nodes running without it.
"""

import hashlib
import os
import tempfile

from ament_index_python.packages import get_package_share_directory
from launch.actions import DeclareLaunchArgument, LogInfo, OpaqueFunction
from launch.actions import RegisterEventHandler
from launch.event_handlers import OnProcessExit
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
import yaml

from ..transmissions import ConfigError, load_transmissions

PACKAGE = 'transmission_bridge'
BRIDGE = 'transmission_bridge'
KINEMATICS = 'kinematics'
SIMULATOR = 'actuator_simulator'


def share(*parts):
    """Return a path in the package's installed share folder."""
    return os.path.join(get_package_share_directory(PACKAGE), *parts)


# The launch argument joint_commands_from was called feed_forward until 0.8 (0.7 and before).
DEPRECATED_FEED_FORWARD = 'feed_forward'
# name: (default, description). Defaults that name files are filled in at launch time.
ARGUMENTS = {
    'transmissions_file': (
        '', 'transmissions YAML or URDF of the robot. Empty: the one params_file names, '
            'else the example robot (config/example_robot_transmissions.yaml)'),
    'model_file': (
        '', 'robot model YAML or URDF for the kinematics node. Empty: the one params_file '
            'names, else the example arm (config/example_arm_model.yaml)'),
    'urdf_file': (
        '', 'URDF of the robot, given to both nodes as robot_description. Empty: the example '
            'robot (config/example_robot.urdf)'),
    'use_topic': (
        'false', 'true: the nodes follow the robot_description topic (as '
                 'robot_state_publisher publishes it) instead of urdf_file'),
    'params_file': (
        '', 'ROS parameters file applied on top of the package defaults, e.g. a calibration '
            'saved with `ros2 param dump /transmission_bridge`; sections apply by node name'),
    'tip_links': (
        '', 'bodies whose pose the kinematics node also publishes on ~/<body>/pose, '
            "e.g. '[tool]' (empty: none)"),
    'joint_commands_from': (
        'gravity', "what the bridge's joint_commands come from, mapped to the motors on "
                   "actuator_commands: gravity (the kinematics node's ~/gravity_torques, each "
                   "motor's holding torque), passive (~/passive_torques: gravity and damping "
                   'compensation) or none (the bridge takes joint_commands from you)'),
    DEPRECATED_FEED_FORWARD: (
        '', 'deprecated name of joint_commands_from (until 0.9; the kinematics node has a '
            'parameter feed_forward of another meaning): given, it wins, with a warning'),
    'use_sim_time': ('false', 'true when replaying a bag with --clock'),
    'autostart': (
        'true', 'true: the bridge (a lifecycle node) configures and activates itself at '
                'start-up; false: it stays unconfigured for `ros2 lifecycle set '
                '/transmission_bridge configure` then `activate`, or a lifecycle manager'),
    'follow_joint_trajectory': (
        '', 'false: the bridge serves no FollowJointTrajectory goals (no action servers, no '
            'rclpy.action or control_msgs loaded: a robot that never takes goals); empty: '
            "the params_file's value, else true"),
    'rate': ('100.0', 'actuator_simulator: actuator_states publishing rate, Hz'),
    'floating_base': (
        'true', 'sim2sim: true puts the robot on a free joint on the ground (a legged robot), '
                'false welds its root to the world'),
    'kinematics': (
        'true', 'sim2sim: false leaves the kinematics node out (the simulator and the bridge '
                'only)'),
    'composed': (
        'false', 'true: the bridge and the kinematics node in one process (the robot_stack '
                 'executable, one executor): the messages between them stay in the process '
                 'and the process loads rclpy and the kernels once; a crash of one stops both'),
}

_DEFAULT_FILES = {
    'transmissions_file': ('config', 'example_robot_transmissions.yaml'),
    'model_file': ('config', 'example_arm_model.yaml'),
    'urdf_file': ('config', 'example_robot.urdf'),
}
_NODE_DEFAULTS = {BRIDGE: 'bridge.yaml', KINEMATICS: 'kinematics.yaml'}
STACK = 'robot_stack'
# joint_commands_from -> the kinematics node's topic the bridge maps to actuator_commands
COMMANDS_FROM = {'gravity': 'gravity_torques', 'passive': 'passive_torques', 'none': ''}


class LaunchArgumentError(ValueError):
    """A launch argument is unusable; the message names it and the value."""


def declare_arguments(*names):
    """
    Return a DeclareLaunchArgument, with its description, for each of ``names``.

    ``joint_commands_from`` brings its deprecated name along (``feed_forward``).
    """
    if 'joint_commands_from' in names:
        names += (DEPRECATED_FEED_FORWARD,)
    return [DeclareLaunchArgument(name, default_value=ARGUMENTS[name][0],
                                  description=ARGUMENTS[name][1]) for name in names]


def nodes(function):
    """Return an action that calls ``function(Arguments)`` at launch and adds its nodes."""
    def expand(context):
        args = Arguments(context)
        made = function(args)
        actions = list(args.notes)          # said first: what the arguments asked to say
        for node in made:
            actions.append(node)
            if isinstance(node, Node):
                actions.append(RegisterEventHandler(OnProcessExit(
                    target_action=node, on_exit=_shutdown_on_error)))
        return actions
    return OpaqueFunction(function=expand)


class NodeFailed(RuntimeError):
    """A node of the launch exited with an error; the launch stops with exit code 1."""


def _shutdown_on_error(event, context):
    # Raising here is how a launch ends with a non-zero exit code: launch logs the
    # message as one line, stops the other processes and returns 1.
    if event.returncode not in (0, None) and not context.is_shutdown:
        raise NodeFailed(f'{event.action.name} exited with code {event.returncode} (its '
                         'log line above says why); stopping the other nodes')


class Arguments:
    """The launch arguments of one launch, checked, and the nodes they describe."""

    def __init__(self, context):
        self._values = dict(context.launch_configurations)
        self.use_sim_time = 'use_sim_time' in self._values and self.boolean('use_sim_time')
        self.params_file = self.existing_file('params_file')
        self._user_params = _read_params(self.params_file) if self.params_file else {}
        #: What the launch says before its nodes start (deprecated arguments).
        self.notes = []

    def get(self, name):
        """Return the argument's value as given ('' if empty or not declared)."""
        return self._values.get(name, '').strip()

    def boolean(self, name):
        """Return the argument as a bool; anything but true/false is an error."""
        value = self.get(name).lower()
        if value not in ('true', 'false'):
            raise LaunchArgumentError(f'{name} must be true or false, got {self.get(name)!r}')
        return value == 'true'

    def existing_file(self, name):
        """Return the argument as an absolute path of an existing file ('' if empty)."""
        value = self.get(name)
        if not value:
            return ''
        path = os.path.abspath(os.path.expanduser(value))
        if not os.path.isfile(path):
            raise LaunchArgumentError(f'{name}: no such file {value!r}')
        return path

    def robot_file(self, name, node_name):
        """
        Return {name: path} for a node's robot file, or {} if ``params_file`` gives one.

        Given explicitly, the argument wins; left empty, a ``params_file`` that sets
        ``name`` or ``robot_description`` for the node decides; else the example robot.
        """
        path = self.existing_file(name)
        if path:
            return {name: path}
        given = self._user_params.get(node_name, {})
        if name in given or given.get('robot_description'):
            return {}
        return {name: share(*_DEFAULT_FILES[name])}

    def tip_links(self):
        """Return {'tip_links': [...]} when the argument names bodies, else {}."""
        text = self.get('tip_links')
        if not text:
            return {}
        try:
            value = yaml.safe_load(text) if text.startswith('[') else text.split(',')
        except yaml.YAMLError:
            value = None
        if not (isinstance(value, list) and all(isinstance(v, str) and v.strip()
                                                for v in value)):
            raise LaunchArgumentError(
                f"tip_links must be body names like '[tool]' or 'tool,flange', got {text!r}")
        return {'tip_links': [v.strip() for v in value]} if value else {}

    def node(self, executable, overrides, first=None, **kwargs):
        """
        Return the Node: package defaults, ``first``, ``params_file``, then ``overrides``.

        ``first``: this launch's own defaults, which a ``params_file`` may change.
        """
        parameters = []
        if executable in _NODE_DEFAULTS:
            parameters.append(share('config', _NODE_DEFAULTS[executable]))
        if first:
            parameters.append(first)
        if self.params_file:
            parameters.append(self.params_file)
        parameters.append({'use_sim_time': self.use_sim_time, **overrides})
        return Node(package=PACKAGE, executable=executable, name=executable, output='screen',
                    parameters=parameters, **kwargs)

    def bridge(self, commands_from_kinematics=False, source=None):
        """
        Return the bridge on ``transmissions_file``; with the kinematics node's torques.

        ``commands_from_kinematics``: its joint_commands come from the kinematics node's
        topic that ``joint_commands_from`` names.

        ``source``: the parameters that say where the robot comes from, instead of
        ``transmissions_file`` (a URDF as robot_description).
        """
        overrides, remappings = self._bridge_parts(commands_from_kinematics, source)
        return self.node(BRIDGE, overrides, remappings=remappings)

    def _bridge_parts(self, commands_from_kinematics, source):
        """Return the bridge's ``(parameter overrides, remappings)`` (see :meth:`bridge`)."""
        remappings = []
        if commands_from_kinematics:
            name = 'joint_commands_from'
            if self.get(DEPRECATED_FEED_FORWARD):
                name = DEPRECATED_FEED_FORWARD
                self.notes.append(LogInfo(msg=(
                    f'WARNING: the launch argument {DEPRECATED_FEED_FORWARD}:= is deprecated '
                    'and goes in 0.9: write joint_commands_from:='
                    f'{self.get(DEPRECATED_FEED_FORWARD)} (the same choices)')))
            choice = self.get(name)
            if choice not in COMMANDS_FROM:
                raise LaunchArgumentError(f'{name} must be one of '
                                          f'{", ".join(COMMANDS_FROM)}, got {choice!r}')
            if COMMANDS_FROM[choice]:
                remappings = [('joint_commands', f'/{KINEMATICS}/{COMMANDS_FROM[choice]}')]
        if source is None:
            source = self.robot_file('transmissions_file', BRIDGE)
        if 'autostart' in self._values:
            source = {**source, 'autostart': self.boolean('autostart')}
        if self._values.get('follow_joint_trajectory'):
            source = {**source,
                      'follow_joint_trajectory': self.boolean('follow_joint_trajectory')}
        return source, remappings

    def composed(self):
        """Return True when ``composed:=true`` (the bridge and kinematics in one process)."""
        return 'composed' in self._values and self.boolean('composed')

    def robot_nodes(self):
        """
        Return the bridge (fed the kinematics node's torques) and the kinematics node.

        Two processes, or with ``composed:=true`` one (:meth:`stack`).
        """
        if not self.composed():
            return [self.bridge(commands_from_kinematics=True), self.kinematics()]
        bridge, remappings = self._bridge_parts(True, None)
        return [self.stack(bridge, self._kinematics_params(), remappings)]

    def stack(self, bridge, kinematics, remappings=()):
        """
        Return the ``robot_stack`` process: the bridge and the kinematics node in one.

        Each node gets what :meth:`node` would give it, in the same order: the package's
        defaults, ``params_file``, then ``bridge`` or ``kinematics`` (with ``use_sim_time``),
        these through a file of node-named sections written for the launch, so that each
        reaches its node only. The bridge's ``remappings`` are prefixed with its name.
        """
        own = {BRIDGE: bridge, KINEMATICS: kinematics}
        text = yaml.safe_dump({f'/**/{name}': {'ros__parameters': {
            'use_sim_time': self.use_sim_time, **params}} for name, params in own.items()})
        parameters = [share('config', _NODE_DEFAULTS[n]) for n in (BRIDGE, KINEMATICS)]
        parameters += [self.params_file] if self.params_file else []
        return Node(package=PACKAGE, executable=STACK, output='screen',
                    parameters=parameters + [_written(text)],
                    remappings=[(f'{BRIDGE}:{a}', b) for a, b in remappings])

    def kinematics(self):
        """Return the kinematics node on ``model_file`` with ``tip_links``."""
        return self.node(KINEMATICS, self._kinematics_params())

    def _kinematics_params(self):
        return {**self.robot_file('model_file', KINEMATICS), **self.tip_links()}

    def simulator(self):
        """Return the actuator simulator on the bridge's transmissions."""
        files = self.robot_file('transmissions_file', BRIDGE) or {
            'transmissions_file': self._user_params[BRIDGE].get('transmissions_file', '')}
        try:
            rate = float(self.get('rate'))
        except ValueError:
            rate = float('nan')
        if not rate > 0:
            raise LaunchArgumentError(f'rate must be a number > 0 (Hz), got {self.get("rate")!r}')
        return self.node(SIMULATOR, {**files, 'rate': rate})

    def sim2sim(self):
        """
        Return MuJoCo's drivers, the bridge (MIT output) and the kinematics node, sim time.

        With no ``transmissions_file``, the shipped biped with its gains
        (config/legged_sim2sim.yaml); ``model_file`` defaults to ``transmissions_file`` (a
        URDF). The kinematics node reads ``model_file`` if it is a URDF, else the
        transmissions' URDF; with neither it is left out, said in the log.
        """
        tfile = self.existing_file('transmissions_file')
        model = self.existing_file('model_file')
        if not tfile:
            tfile = share('config', 'legged_robot.urdf')
            model = model or share('config', 'legged_robot.xml')
            if not self.params_file:
                self.params_file = share('config', 'legged_sim2sim.yaml')
        model = model or tfile
        sim_time = {'use_sim_time': True}
        simulator = self.node(SIMULATOR, {'transmissions_file': tfile, 'model_file': model,
                                          'floating_base': self.boolean('floating_base')},
                              first={'engine': 'mujoco', 'dynamics': 'motor_gains'})
        bridge = {'transmissions_file': tfile, 'impedance_output': 'motor_gains', **sim_time}
        kinematics = None
        if self.boolean('kinematics'):
            urdf = next((f for f in (model, tfile) if f.endswith('.urdf')), '')
            if urdf:
                kinematics = {'model_file': urdf, 'transmissions_file': tfile, **sim_time}
            else:
                self.notes.append(LogInfo(msg=(
                    'the kinematics node is left out: neither model_file nor '
                    'transmissions_file is a URDF')))
        if kinematics is not None and self.composed():
            return [simulator, self.stack(bridge, kinematics)]
        made = [simulator, self.node(BRIDGE, bridge)]
        if kinematics is not None:
            made.append(self.node(KINEMATICS, kinematics))
        return made

    def description_nodes(self):
        """
        Return both nodes configured from ``urdf_file``, or following the topic.

        A URDF with no transmission this package maps (a direct-drive arm, drives that
        apply their gear ratio in firmware) starts the kinematics node alone, with a log
        line saying why the bridge is not started: TF and the torques still run.
        """
        if self.boolean('use_topic'):
            source = {'use_robot_description_topic': True}
            text = None
        else:
            path = self.existing_file('urdf_file') or share(*_DEFAULT_FILES['urdf_file'])
            with open(path, encoding='utf-8') as f:
                text = f.read()
            source = {'robot_description': ParameterValue(text, value_type=str)}
        kinematics = self.node(KINEMATICS, {**source, **self.tip_links()})
        nothing = text is not None and _nothing_to_bridge(text)
        if nothing:
            return [LogInfo(msg=f'{BRIDGE} not started: {nothing}'), kinematics]
        return [self.bridge(commands_from_kinematics=True, source=source), kinematics]


def _nothing_to_bridge(text):
    """Return why URDF ``text`` has nothing for the bridge ('' if it has: start it)."""
    try:
        load_transmissions(text)
    except ConfigError as exc:
        # Only "nothing to map" keeps the bridge out; any other error is the bridge's to
        # report (it stops the launch with the reason).
        return str(exc) if str(exc).startswith('the robot description has no') else ''
    return ''


def _read_params(path):
    """Return {node name: {parameter: value}} of a ROS params file, for the package's nodes."""
    try:
        with open(path, encoding='utf-8') as f:
            data = yaml.safe_load(f) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise LaunchArgumentError(f'params_file {path!r} is not readable YAML: {exc}') from None
    if not isinstance(data, dict):
        raise LaunchArgumentError(f'params_file {path!r} must map node names to '
                                  f'ros__parameters, got {type(data).__name__}')
    found = {}
    for key, body in data.items():
        params = body.get('ros__parameters') if isinstance(body, dict) else None
        if not isinstance(params, dict):
            continue
        name = str(key).rstrip('/').split('/')[-1]
        for node_name in (BRIDGE, KINEMATICS, SIMULATOR):
            if name in (node_name, '**'):
                found.setdefault(node_name, {}).update(params)
    return found


def _written(text):
    """
    Return the path of a file holding ``text``, named by its content in one temporary folder.

    A launch has no step after its processes end to delete a file, so the same parameters
    reuse one file instead of leaving one more at every launch.
    """
    folder = os.path.join(tempfile.gettempdir(), 'transmission_bridge_launch')
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f'robot_stack_{hashlib.sha1(text.encode()).hexdigest()[:16]}'
                                '.yaml')
    if not os.path.exists(path):
        partial = f'{path}.{os.getpid()}'
        with open(partial, 'w', encoding='utf-8') as f:
            f.write(text)
        os.replace(partial, path)
    return path
