"""
The bridge's own parameters (not the robot's), as tables, and the encoders' turns.

:data:`SETTINGS` (the node's), :data:`GOAL_SETTINGS` (FollowJointTrajectory, declared only
with ``follow_joint_trajectory``) and :data:`SPRING_SETTINGS` (joint impedance) are declared
by the node (:func:`~transmission_bridge.ros.settings.declare_settings`) and checked by the
same functions at start-up and for ``ros2 param set``; so are the per-joint
``constraints.<joint>.*`` and ``gains.<joint>.*`` (:data:`PER_JOINT_TOLERANCES`,
:data:`GAINS`). The per-robot parameters (``joints.*``, ``actuators.*``,
``transmissions.*``) are :mod:`transmission_bridge.transmissions.parameters`'.
``actuators.<name>.encoder_turns`` exists for exactly the actuators with an ``encoder``
period (:class:`EncoderTurns`).

>>> from ..ros.settings import refusal
>>> refusal(SETTINGS, [(ON_COMMAND_TIMEOUT, 'brake')])
"on_command_timeout must be one of hold, zero_velocity, zero_effort, none, got 'brake'"
"""

from rclpy.parameter import Parameter

from ..control.impedance import OUTPUTS
from ..mapping.deadline import MODES
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
FOLLOW_JOINT_TRAJECTORY = 'follow_joint_trajectory'
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
use_robot_description_topic:=true; actuator_state_topics, autostart, follow_joint_trajectory
(false: no FollowJointTrajectory servers), diagnostics_period, input_time_share,
drop_on_overload. Settable at runtime: stale_timeout (joints of an actuator not heard from for
this long are left out), command_timeout and on_command_timeout (each joint's command
deadline: hold | zero_velocity | zero_effort | none when its joint_commands stop),
impedance_output and gains.<joint>.{p, d} (joint springs), limit_commands
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
            'a joint whose streamed joint_commands stop for this long times out, s (its '
            f'motors then get {ON_COMMAND_TIMEOUT}); 0: off', constraints='>= 0',
            check=finite_non_negative(COMMAND_TIMEOUT, 'number of seconds')),
    Setting(ON_COMMAND_TIMEOUT, 'hold', str,
            'what the motors of a timed-out joint get, and every commanded motor on '
            'deactivation: hold (measured position, velocity 0, effort 0; a joint spring: '
            'its targets latched there), zero_velocity, zero_effort or none',
            check=one_of(ON_COMMAND_TIMEOUT, MODES)),
    Setting(AUTOSTART, True, bool,
            'configure and activate at start-up (false: stay unconfigured for ros2 lifecycle '
            'or a lifecycle manager)', read_only=True),
    Setting(FOLLOW_JOINT_TRAJECTORY, True, bool,
            'serve FollowJointTrajectory (~/follow_joint_trajectory, for MoveIt); false: no '
            'action servers (rclpy.action and control_msgs are not loaded)', read_only=True),
    Setting(LIMIT_COMMANDS, True, bool,
            'keep commands to motors within the joint and actuator limits: positions clamped, '
            'velocity and effort vectors scaled as a whole, trajectories past a limit refused '
            '(false: map commands unchanged)'),
])

# --- FollowJointTrajectory (bridge/goal_servers.py) --------------------------------------
CONTROLLERS = 'trajectory_controllers'
ALLOW_PARTIAL = 'allow_partial_joints_goal'
ALLOW_NONZERO_END = 'allow_nonzero_velocity_at_trajectory_end'
MONITOR_RATE = 'action_monitor_rate'
GOAL_TIME = 'constraints.goal_time'
STOPPED_VELOCITY = 'constraints.stopped_velocity_tolerance'
PER_JOINT_TOLERANCES = {
    'trajectory': 'position tolerance along the path, rad (m if prismatic); 0: not checked',
    'goal': 'position tolerance at the goal, rad (m if prismatic); 0: not checked'}

GOAL_SETTINGS = settings_by_name([
    Setting(CONTROLLERS, [], 'string_array',
            'FollowJointTrajectory groups: each N has N.joints and ~/N/follow_joint_trajectory '
            '(~/follow_joint_trajectory drives every joint)', read_only=True),
    Setting(ALLOW_PARTIAL, False, bool,
            "accept goals naming some of a controller's joints (the others hold)"),
    Setting(ALLOW_NONZERO_END, False, bool,
            "accept goals whose last point's velocities are not 0"),
    Setting(MONITOR_RATE, 20.0, float,
            'rate of action feedback and controller_state while a goal runs, Hz',
            constraints='> 0', read_only=True, check=finite_positive(MONITOR_RATE)),
    Setting(GOAL_TIME, 0.0, float,
            'time a goal may take past its last point to be within its goal tolerances, s; '
            '0: no bound', constraints='>= 0', check=finite_non_negative(GOAL_TIME, 'time')),
    Setting(STOPPED_VELOCITY, 0.01, float,
            'velocity under which a joint counts as stopped at the goal, rad/s (m/s if '
            'prismatic); 0: not checked', constraints='>= 0',
            check=finite_non_negative(STOPPED_VELOCITY)),
])


def constraint_name(joint, which):
    """Return ``constraints.<joint>.<which>`` (``which``: trajectory or goal)."""
    return f'constraints.{joint}.{which}'


# --- joint springs (bridge/impedance_wiring.py) --------------------------------------------------
IMPEDANCE_OUTPUT = 'impedance_output'
SPRING_SETTINGS = settings_by_name([
    Setting(IMPEDANCE_OUTPUT, 'effort', str,
            'what joints with gains send their motors: effort (torque-controlled motors, on '
            'actuator_commands) or motor_gains (MIT-mode motors, on '
            'actuator_impedance_commands)', check=one_of(IMPEDANCE_OUTPUT, OUTPUTS)),
])
GAINS = {'p': 'stiffness of the joint spring, N*m/rad (N/m if prismatic), >= 0; 0 with d 0: '
              'no impedance',
         'd': 'damping of the joint spring, N*m*s/rad (N*s/m if prismatic), >= 0'}


def gain_name(joint, which):
    """Return ``gains.<joint>.<which>`` (``which``: p or d)."""
    return f'gains.{joint}.{which}'


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
