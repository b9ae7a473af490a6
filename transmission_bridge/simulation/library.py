"""
The simulator as a library: a robot behind its motors, stepped in process, no ROS.

For people who test a controller or train a policy in Python; ``actuator_simulator`` is its
ROS wiring (pacing, topics, services). One set of drives (:mod:`.drives`: saturation, the
three laws, NOTATION's gear stage, quantisation, noise, delay) behind either engine:

* ``engine='mujoco'``: MuJoCo integrates the MJCF or URDF (:mod:`.engine`);
* ``engine='builtin'``: the package's own rigid-body dynamics of the model file (a YAML
  model or a URDF; :mod:`.builtin`), no contacts, fixed base.

>>> sim = Simulation('config/example_robot.urdf', 'config/example_robot_transmissions.yaml')
>>> time, motors, joints = sim.step({'elbow_motor': 0.0})     # one state period (1 ms)
>>> round(time, 6), motors['elbow_motor'][2], len(joints['elbow'])    # (θ, θ̇, τ), (q, q̇)
(0.001, 0.0, 2)
"""

import math

from .drives import DriveOptions, MODES
from .model import SimulationError
from ..transmissions import ConfigError, load_transmissions, TransmissionSet

ENGINES = ('mujoco', 'builtin')
GAINS = ('position', 'velocity', 'effort', 'stiffness', 'damping')   # a motor_gains command


class Simulation:
    """
    A robot behind its motors (module docstring; DESIGN's contract, doc/library.md).

    ``model_file``: the robot (MJCF or URDF for MuJoCo; YAML model or URDF for the builtin
    engine); ``transmissions_file``: its motors (YAML or URDF, or a loaded
    :class:`~transmission_bridge.transmissions.TransmissionSet`); ``dynamics``: ``effort``
    (torque control), ``position`` (the drive's PD) or ``motor_gains`` (MIT mode);
    ``rate``: states per second; ``seed``: the drives' noise; ``drive_options``: the other
    fields of :class:`.drives.DriveOptions` (``position_stiffness``, ``encoder_counts``,
    ``position_noise``, ``delay``...). Every refusal is a :class:`.model.SimulationError`
    (a ``ConfigError``) naming the argument.
    """

    def __init__(self, model_file, transmissions_file, engine='mujoco', dynamics='effort',
                 floating_base=False, rate=1000.0, seed=None, **drive_options):
        if engine not in ENGINES:
            raise SimulationError(f'engine must be one of {", ".join(ENGINES)}, got {engine!r}')
        if dynamics not in MODES:
            raise SimulationError(f'dynamics must be one of {", ".join(MODES)}, got '
                                  f'{dynamics!r}')
        if not (isinstance(rate, (int, float)) and math.isfinite(rate) and rate > 0):
            raise SimulationError(f'rate must be a number > 0 (states per second), got {rate!r}')
        known = set(DriveOptions.__dataclass_fields__) - {'dynamics', 'seed'}
        unknown = sorted(set(drive_options) - known)
        if unknown:
            raise SimulationError(f'unknown drive option {unknown[0]!r} (known: '
                                  f'{", ".join(sorted(known))})')
        if isinstance(transmissions_file, TransmissionSet):
            tset = transmissions_file
        else:
            try:
                tset = load_transmissions(str(transmissions_file))
            except ConfigError as exc:
                raise SimulationError(f'transmissions_file {transmissions_file}: '
                                      f'{exc}') from None
        options = DriveOptions(dynamics=dynamics, seed=0 if seed is None else seed,
                               **drive_options)
        if engine == 'mujoco':
            from .engine import MujocoSimulation
            from .model import load
            self.engine = MujocoSimulation(tset, load(model_file, floating_base, rate), rate,
                                           options)
        else:
            if floating_base:
                raise SimulationError('floating_base: the builtin engine has no contacts '
                                      "(engine='mujoco' frees the base on a ground)")
            from .builtin import BuiltinSimulation
            self.engine = BuiltinSimulation(tset, model_file, rate, options)
        self.tset = tset
        self.motor_names = tuple(tset.actuator_names)
        self.joint_names = tuple(self.engine.joint_state()[0])
        #: What the engine assumed of the files (each names the element).
        robot = getattr(self.engine, 'robot', None)
        self.warnings = (list(robot.warnings) if robot is not None else []) + \
            list(self.engine.warnings)

    @property
    def period(self):
        """Return the state period, s."""
        return self.engine.period

    def reset(self, hold=0.0):
        """
        Put the robot back at rest in its start pose, held until the next command.

        ``hold`` (s of simulated time, rounded to states): held at least that long whatever
        is commanded; the commands taken meanwhile move it afterwards. Returns the hold, s.
        """
        if not (isinstance(hold, (int, float)) and hold >= 0.0 and math.isfinite(hold)):
            raise SimulationError(f'reset: hold must be a number of seconds >= 0, got {hold!r}')
        states = round(hold / self.period)
        self.engine.reset(states)
        return states * self.period

    def command(self, command):
        """
        Take ``command``: motor name → effort, or → (θ*, θ̇*, τ, k, d) with ``motor_gains``.

        ``position`` takes (θ*, θ̇*, τ_ff). Motors left out keep their last command. Raises
        SimulationError (nothing taken) for an unknown motor or a value that is not finite.
        """
        index = self.tset.actuator_index
        dynamics = self.engine.options.dynamics
        width = {'effort': 1, 'position': 3, 'motor_gains': 5}[dynamics]
        motors, rows = [], []
        for name, value in command.items():
            if name not in index:
                raise SimulationError(f'command: no motor {name!r} (motors: '
                                      f'{", ".join(self.motor_names)})')
            row = [value] if width == 1 else list(value)
            if len(row) != width or not all(isinstance(x, (int, float)) and math.isfinite(x)
                                            for x in row):
                raise SimulationError(f'command: motor {name!r} takes {width} finite '
                                      f'number(s) with dynamics {dynamics!r}, got {value!r}')
            motors.append(index[name])
            rows.append(row)
        if not motors:
            return
        drives = self.engine.drives
        columns = list(zip(*rows))
        if dynamics == 'effort':
            drives.set_efforts(motors, columns[0])
        elif dynamics == 'position':
            drives.set_positions(motors, *columns)
        else:
            drives.set_gains(motors, columns[0], columns[1], columns[2], columns[3],
                             columns[4])

    def step(self, command=None):
        """Take ``command`` (None: the last ones hold), advance one state period; the state."""
        if command:
            self.command(command)
        self.engine.advance()
        return self.state()

    def state(self):
        """
        Return ``(time, motors, joints)`` now.

        ``motors``: name → (θ, θ̇, τ) as the drivers report them (the mean torque applied
        over the last period; the options' quantisation, noise and delay); ``joints``:
        name → (q, q̇), the engine's own state of every hinge and slide joint.
        """
        theta, thetad, tau = self.engine.report()
        motors = {n: (float(theta[i]), float(thetad[i]), float(tau[i]))
                  for i, n in enumerate(self.motor_names)}
        names, q, qd, _ = self.engine.joint_state()
        joints = {n: (float(q[i]), float(qd[i])) for i, n in enumerate(names)}
        return self.engine.time, motors, joints
