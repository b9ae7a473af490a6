r"""
actuator_simulator: motor states of a robot moving smoothly, for trying things without hardware.

Usage:
  ros2 run transmission_bridge actuator_simulator --ros-args \
      -p transmissions_file:=my_robot.yaml [-p rate:=100.0] \
      [-p amplitude:=0.3] [-p frequency:=0.25]
  ros2 run transmission_bridge actuator_simulator --ros-args \
      -p transmissions_file:=my_robot.yaml -p follow_commands:=true
  ros2 launch transmission_bridge demo.launch.py      (simulator + bridge + kinematics)

Publishes sensor_msgs/JointState with the actuator names on ``actuator_states`` (reliable,
depth 10), stamped with the node's clock. Each joint k follows

  q_k(t) = default_position_k + amplitude * sin(2 pi frequency t + 0.7 k)

about its ``default_position`` from the transmissions file; positions and velocities are
mapped to actuator space with the same library the bridge uses (joint_to_actuator; a
linkage's velocities at the positions), so a bridge on the same file publishes exactly this
motion on ``joint_states``. Efforts are 0.

With ``follow_commands``, the motors start at the joints' default positions and follow
``actuator_commands`` instead: each motor named in a command is at its commanded position
(velocity: the commanded one, else 0) from the next state on, a perfect position-controlled
drive (what a FollowJointTrajectory goal sent through the bridge needs to move).

With ``dynamics`` (``effort`` or ``motor_gains``) the motors move a robot instead: the joints
follow the rigid-body dynamics of ``model_file`` (default: ``transmissions_file``, a URDF),
gravity included, under the motors' torques: the builtin engine
(:mod:`transmission_bridge.simulation.builtin`, the drives and gear stages MuJoCo's engine
has: saturation, rotors, friction, efficiency): torque-controlled motors take the efforts of
``actuator_commands``; MIT-mode motors the target, stiffness, damping and feed-forward of
``actuator_impedance_commands`` (control_msgs/DynamicJointState), their law evaluated at
every step. The joints start at their default positions, held there until the first
command.

With ``engine:=mujoco`` MuJoCo integrates the robot of ``model_file`` (an MJCF or a URDF):
its bodies, joints, contacts and equality constraints; each motor named like a hinge or
slide joint of the model is that joint, any other is placed through its transmission; the
drives (``dynamics`` effort, position or motor_gains) saturate, carry their rotors before the
gear's loss, friction and efficiency; ``/clock`` and ``~/joint_states`` (MuJoCo's own state)
are published, ``lockstep`` makes each command advance one state (doc/simulation.md).
``engine:=builtin`` is the same node on the package's own rigid-body dynamics of
``model_file`` (a YAML model or a URDF: fixed base, no contacts, no joint limits; screw and
mimic joints), behind the same drives.

Parameters (read-only, given at start-up):
  transmissions_file  string  required  transmissions YAML or URDF of the robot
  engine              string  ''        '' (the package's own motion), mujoco or builtin
  rate                double  100.0     publishing rate, Hz (> 0; 1000.0 with an engine)
  amplitude           double  0.3       joint motion amplitude, rad (m for prismatic), >= 0
  frequency           double  0.25      joint motion frequency, Hz, >= 0
  follow_commands     bool    false     follow actuator_commands instead of the sine motion
  dynamics            string  ''        effort | motor_gains: motors move the robot's dynamics
  model_file          string  ''        the robot's URDF for dynamics (default: transmissions_file)
  substeps            int     4         integration steps per state published (dynamics)
  floating_base, lockstep, real_time_factor, seed, position_stiffness, position_damping,
  encoder_counts, position_noise, velocity_noise, effort_noise, delay: the engines'
  (doc/simulation.md)
"""

import math

import numpy as np
from rclpy.node import Node
from rclpy.time import Time
from sensor_msgs.msg import JointState

from ..ros.configurable import RELIABLE_10
from ..ros.conversions import doubles
from ..ros.node_main import exit_with, run_node, StartupError
from ..ros.parameters import accept_integers_as_doubles, declare
from ..simulation.demo_motion import AMPLITUDE, FREQUENCY, joint_motion, PHASE_STEP
from ..transmissions import ConfigError, load_transmissions

HELP = __doc__


def _at_least(name, value, low, strict):
    ok = math.isfinite(value) and (value > low if strict else value >= low)
    if not ok:
        raise StartupError(f'parameter {name!r} must be a number {">" if strict else ">="} '
                           f'{low}, got {value!r}')
    return value


class ActuatorSimulator(Node):
    """Publishes ``actuator_states`` at ``rate`` Hz."""

    NODE_NAME = 'actuator_simulator'
    HELP = HELP

    def __init__(self, **kwargs):
        super().__init__(self.NODE_NAME, **kwargs)
        accept_integers_as_doubles(self)
        path = declare(self, 'transmissions_file', '', str,
                       'transmissions YAML or URDF of the robot to simulate', read_only=True)
        engine = declare(self, 'engine', '', str, "'' (the package's own motion), mujoco or "
                         'builtin (the rigid-body dynamics of model_file)', read_only=True)
        if engine not in ('', 'mujoco', 'builtin'):
            raise StartupError(f"parameter 'engine' must be '', mujoco or builtin, got "
                               f'{engine!r}')
        rate = _at_least('rate', declare(self, 'rate', 1000.0 if engine else 100.0, float,
                                         'publishing rate, Hz', read_only=True,
                                         constraints='> 0'), 0.0, True)
        self._amplitude = _at_least('amplitude', declare(
            self, 'amplitude', AMPLITUDE, float, 'joint motion amplitude, rad (m if prismatic)',
            read_only=True, constraints='>= 0'), 0.0, False)
        self._frequency = _at_least('frequency', declare(
            self, 'frequency', FREQUENCY, float, 'joint motion frequency, Hz', read_only=True,
            constraints='>= 0'), 0.0, False)
        follow = declare(self, 'follow_commands', False, bool,
                         'follow actuator_commands instead of the sine motion', read_only=True)
        dynamics = declare(self, 'dynamics', 'effort' if engine else '', str,
                           "'', effort, position (an engine) or motor_gains: motors move "
                           "the robot's dynamics", read_only=True)
        model_file = declare(self, 'model_file', '', str, "the robot's URDF for dynamics "
                             '(default: transmissions_file)', read_only=True)
        substeps = declare(self, 'substeps', 4, int, 'integration steps per state published',
                           read_only=True, constraints='>= 1')
        kinds = ('effort', 'position', 'motor_gains') if engine else ('', 'effort',
                                                                      'motor_gains')
        if dynamics not in kinds:
            raise StartupError(f"parameter 'dynamics' must be {', '.join(map(repr, kinds))}, "
                               f'got {dynamics!r}')
        if not path:
            raise StartupError("parameter 'transmissions_file' is required: the transmissions "
                               'YAML or URDF of the robot to simulate (--help says more)')
        try:
            self._tset = load_transmissions(path)
        except ConfigError as exc:
            raise StartupError(str(exc)) from None
        if engine:
            from .engine_parameters import declare_engine
            from .engine_simulator import EngineDrivers
            self.drivers = EngineDrivers(self, self._tset, model_file or path, rate, dynamics,
                                         declare_engine(self), engine)
            return
        self._pub = self.create_publisher(JointState, 'actuator_states', RELIABLE_10)
        self._msg = JointState(name=list(self._tset.actuator_names))
        self._t0 = self.get_clock().now()
        self._followed = self._robot = None
        if dynamics:
            self._robot = self._dynamics(dynamics, model_file or path, max(1, substeps), rate)
        if follow:
            q, _ = joint_motion(self._tset, 0.0, 0.0, 0.0)
            self._followed = np.stack([self._tset.joint_to_actuator('position', q),
                                       np.zeros(self._tset.num_actuators)])
            self.create_subscription(JointState, 'actuator_commands', self._follow, RELIABLE_10)
        self._period = 1.0 / rate
        self._start, self._steps = None, 0      # the physics' clock (dynamics only)
        self.create_timer(1.0 / rate, self._tick)
        self.get_logger().info(
            f'publishing {self._pub.topic_name} at {rate:g} Hz: {self._tset.num_actuators} '
            f'actuators ({", ".join(self._tset.actuator_names)}) of {path}; joints '
            + ('start at ' if follow or dynamics else 'move ')
            + (f'their default positions, moved by {dynamics} motors' if dynamics else
               'their default positions, then follow actuator_commands' if follow else
               f'{self._amplitude:g} * sin(2 pi {self._frequency:g} t + {PHASE_STEP} k) about '
               'their default positions'))

    def _dynamics(self, kind, model_file, substeps, rate):
        """Return the builtin engine the motors move; subscribe to the commands of ``kind``."""
        from ..kinematics import load_model, ModelError
        from ..simulation import DriveOptions, SimulationError
        from ..simulation.builtin import BuiltinSimulation
        try:
            robot = BuiltinSimulation(self._tset, load_model(model_file), rate,
                                      DriveOptions(dynamics=kind), substeps)
        except (ModelError, ValueError) as exc:
            raise StartupError(f'dynamics: {model_file}: {exc}') from None
        except SimulationError as exc:
            raise StartupError(f'dynamics: {exc}') from None
        for warning in robot.warnings:
            self.get_logger().warning(warning)
        index, drives, units = self._tset.actuator_index, robot.drives, self._tset.units
        if kind == 'effort':
            def on_effort(msg):
                pairs = [(index[n], e) for n, e in zip(msg.name, msg.effort) if n in index]
                if pairs:
                    motors, efforts = map(list, zip(*pairs))
                    drives.set_efforts(motors, units.to_si(2, np.array(efforts), motors))
            self.create_subscription(JointState, 'actuator_commands', on_effort, RELIABLE_10)
        else:
            from control_msgs.msg import DynamicJointState

            def on_gains(msg):
                for name, value in zip(msg.joint_names, msg.interface_values):
                    if name in index:
                        v = dict(zip(value.interface_names, value.values))
                        row = units.mit_to_si(np.array([[v[k] for k in (
                            'position', 'velocity', 'effort', 'stiffness', 'damping')]]),
                            [index[name]])
                        drives.set_gains(index[name], *row[0])
            self.create_subscription(DynamicJointState, 'actuator_impedance_commands', on_gains,
                                     RELIABLE_10)
        return robot

    def _follow(self, msg):
        index = self._tset.actuator_index
        for k, name in enumerate(msg.name):
            i = index.get(name)
            if i is None:
                continue
            units = self._tset.units            # the drivers' units to SI
            if len(msg.position) == len(msg.name):
                self._followed[0, i] = units.to_si(0, msg.position[k], i)
            self._followed[1, i] = (units.to_si(1, msg.velocity[k], i)
                                    if len(msg.velocity) == len(msg.name) else 0.0)

    def _tick(self):
        now = self.get_clock().now()
        t = (now - self._t0).nanoseconds * 1e-9
        q, v = joint_motion(self._tset, t, self._amplitude, self._frequency)
        msg = self._msg
        msg.header.stamp = now.to_msg()
        if self._robot is not None:
            # Stamped with the physics' own time (one period a tick from the first tick's
            # clock), not the clock at a late tick: a recording's time base is its dynamics'.
            if self._start is None:
                self._start = now
            self._robot.advance()
            self._steps += 1
            msg.header.stamp = Time(nanoseconds=self._start.nanoseconds + round(
                self._steps * self._period * 1e9), clock_type=now.clock_type).to_msg()
            state = self._robot.report()
        elif self._followed is not None:
            state = np.vstack([self._followed, np.zeros(self._tset.num_actuators)])
        else:
            state = np.stack([self._tset.joint_to_actuator('position', q),
                              self._tset.joint_to_actuator('velocity', v, positions=q),
                              np.zeros(self._tset.num_actuators)])
        if not self._tset.units.identity:      # as the drivers report them
            state = self._tset.units.states_to_driver(state)
        msg.position, msg.velocity, msg.effort = (doubles(x) for x in state)
        self._pub.publish(msg)


def main(args=None):
    """Entry point of ``actuator_simulator``."""
    exit_with(run_node(ActuatorSimulator, args))


if __name__ == '__main__':
    main()
