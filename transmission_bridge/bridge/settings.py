"""
The bridge's own parameters (not the robot's), as one table, and the encoders' turns.

The table is declared by the node (:func:`~transmission_bridge.ros.settings.declare_settings`)
and checked by the same functions at start-up and for ``ros2 param set``; the per-robot
parameters (``joints.*``, ``actuators.*``, ``transmissions.*``) are
:mod:`transmission_bridge.transmissions.parameters`'. ``actuators.<name>.encoder_turns``
exists for exactly the actuators with an ``encoder`` period (:func:`encoder_turn_names`).

>>> from ..ros.settings import refusal
>>> refusal(SETTINGS, [(ON_COMMAND_TIMEOUT, 'brake')])
"on_command_timeout must be one of hold, zero_velocity, zero_effort, none, got 'brake'"
"""

from rclpy.parameter import Parameter

from .watchdog import MODES
from ..ros.parameters import descriptor
from ..ros.settings import finite_non_negative, finite_positive, one_of, Setting
from ..ros.settings import settings_by_name

TRANSMISSIONS_FILE = 'transmissions_file'
ACTUATOR_STATE_TOPICS = 'actuator_state_topics'
STALE_TIMEOUT = 'stale_timeout'
LIMIT_COMMANDS = 'limit_commands'
COMMAND_TIMEOUT = 'command_timeout'
ON_COMMAND_TIMEOUT = 'on_command_timeout'
AUTOSTART = 'autostart'
ENCODER_TURNS = 'encoder_turns'             # actuators.<name>.encoder_turns

HELP = """
transmission_bridge: actuator states -> joint_states through the robot's transmissions.

Usage:
  ros2 run transmission_bridge transmission_bridge --ros-args -p transmissions_file:=FILE
  ros2 launch transmission_bridge bridge.launch.py transmissions_file:=FILE [params_file:=FILE]

Topics: actuator_states (sensor_msgs/JointState, actuator names) in; joint_states out;
joint_trajectory (trajectory_msgs/JointTrajectory, joint names) in; actuator_trajectory out;
joint_commands (sensor_msgs/JointState, joint names: streaming set-points such as the
kinematics node's holding torques) in; actuator_commands (actuator names) out.
A managed (lifecycle) node: configure loads the robot, activate publishes joint_states and
maps commands, deactivate sends the motors on_command_timeout's safe command once and stops
('ros2 lifecycle set'); autostart (default true) does configure and activate at start-up.
Start-up parameters: transmissions_file (YAML or URDF) or robot_description (URDF text) or
use_robot_description_topic:=true; actuator_state_topics, autostart, diagnostics_period,
input_time_share, drop_on_overload. Settable at runtime: stale_timeout (joints of an actuator
not heard from for this long are left out), command_timeout and on_command_timeout (the
watchdog: hold | zero_velocity | zero_effort | none when joint_commands stop), limit_commands
(default true: commands to motors kept within the joint and actuator limits); per robot
joints.<joint>.{offset, mechanical_reduction, default_position, damping},
joints.<joint>.limits.{lower, upper, velocity, effort}, actuators.<actuator>.{
mechanical_reduction, limits.velocity, limits.effort}, transmissions.<coupling>.matrix
('ros2 param describe' gives units and ranges).
Services (std_srvs/Trigger): ~/calibrate_to_default_pose, ~/reset_calibration, ~/reload.
"""

SETTINGS = settings_by_name([
    Setting(ACTUATOR_STATE_TOPICS, ['actuator_states'], 'string_array',
            'topics of sensor_msgs/JointState carrying actuator names', read_only=True),
    Setting(STALE_TIMEOUT, 0.5, float,
            "an actuator not heard from for this long is stale, s: its transmission's joints "
            'are left out of joint_states until it is heard again', constraints='> 0',
            check=finite_positive(STALE_TIMEOUT)),
    Setting(COMMAND_TIMEOUT, 0.5, float,
            'joint_commands that stop for this long trip the watchdog, s (then '
            f'{ON_COMMAND_TIMEOUT}, repeated as often); 0: off', constraints='>= 0',
            check=finite_non_negative(COMMAND_TIMEOUT, 'number of seconds')),
    Setting(ON_COMMAND_TIMEOUT, 'hold', str,
            'what every commanded motor is sent when the watchdog trips and on deactivation: '
            'hold (measured position, velocity 0, effort 0), zero_velocity, zero_effort or '
            'none', check=one_of(ON_COMMAND_TIMEOUT, MODES)),
    Setting(AUTOSTART, True, bool,
            'configure and activate at start-up (false: stay unconfigured for ros2 lifecycle '
            'or a lifecycle manager)', read_only=True),
    Setting(LIMIT_COMMANDS, True, bool,
            'keep commands to motors within the joint and actuator limits: positions clamped, '
            'velocity and effort vectors scaled as a whole, trajectories past a limit refused '
            '(false: map commands unchanged)'),
])

SOURCE_HELP = ('path of the transmissions YAML or URDF (doc/formats.md); required unless '
               'robot_description is given',
               'URDF with ros2_control <transmission> elements, instead of transmissions_file')
ENCODER_TURNS_HELP = ("whole periods to add to this encoder's reading now (its position "
                      'becomes reading + turns * period); unset until an operator gives it')


class EncoderTurns:
    """
    The ``actuators.<name>.encoder_turns`` parameters: which exist, what a value is, and does.

    They exist for exactly the actuators with an ``encoder`` period; they are never read from
    a params file (turns saved at one power-on are wrong at the next).
    """

    def __init__(self):
        #: The parameters that exist now.
        self.names = set()

    def change(self, tset):
        """Return ``(gone, new)``: the parameters to undeclare and to declare for ``tset``."""
        wanted = {f'actuators.{a.name}.{ENCODER_TURNS}' for s in tset.specs
                  for a in s.actuators if a.encoder_period is not None}
        gone, new = self.names - wanted, sorted(wanted - self.names)
        self.names = wanted
        return gone, new

    def declare(self, node, tset):
        """Make the parameters exist on ``node`` for exactly ``tset``'s encoder actuators."""
        gone, new = self.change(tset)
        for name in gone:
            node.undeclare_parameter(name)
        for name in new:            # not from a params file (the class docstring)
            node.declare_parameter(name, Parameter.Type.INTEGER,
                                   descriptor(int, ENCODER_TURNS_HELP), ignore_override=True)

    def refusal(self, params):
        """Return why a value among ``params`` is not whole turns ('' if none is refused)."""
        for p in params:
            if p.name in self.names and not (isinstance(p.value, int)
                                             and not isinstance(p.value, bool)):
                return f'{p.name} must be a whole number of periods, got {p.value!r}'
        return ''

    def apply(self, states, name, turns):
        """Give ``states`` the turns of parameter ``name``; return the line to log."""
        actuator = name.split('.')[1]
        position = states.set_encoder_turns(actuator, turns)
        if position == position:
            return f'{actuator}: {turns} whole turns given; position now {position:.6g}'
        return f'{actuator}: {turns} whole turns given, for its first reading'
