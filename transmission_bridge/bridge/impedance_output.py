"""
The bridge's joint impedance: ROS wiring of :mod:`.impedance`.

Parameters ``gains.<joint>.p`` and ``gains.<joint>.d`` (declared per joint with the robot,
runtime-settable) and ``impedance_output`` (``effort`` or ``motor_gains``). Streamed
``joint_commands`` for the joints of impedance transmissions become targets
(:meth:`Impedance.split`); at every published joint_states (:meth:`Impedance.on_joint_state`)
the motors get the law's command: efforts on ``actuator_commands``, or MIT-mode commands on
``actuator_impedance_commands`` (control_msgs/DynamicJointState: motor names; interfaces
position, velocity, effort, stiffness, damping). doc/impedance.md says it for users.
"""

import struct

import numpy as np
from sensor_msgs.msg import JointState

from .impedance import ImpedanceCore, OUTPUTS
from ..ros.configurable import RELIABLE_10
from ..ros.settings import one_of, per_joint_values, prefixed_refusal, Setting
from ..ros.settings import settings_by_name
from ..transmissions import ConfigError

try:        # control_msgs: ros-jazzy-control-msgs on a robot; not on PyPI (doc/impedance.md)
    from control_msgs.msg import DynamicJointState, InterfaceValue
except ImportError:
    DynamicJointState = None

_STAMP = struct.Struct('<iI')     # header.stamp, after CDR's 4-byte encapsulation
IMPEDANCE_OUTPUT = 'impedance_output'
INTERFACES = ['position', 'velocity', 'effort', 'stiffness', 'damping']
SETTINGS = settings_by_name([
    Setting(IMPEDANCE_OUTPUT, 'effort', str,
            'what joints with gains send their motors: effort (torque-controlled motors, on '
            'actuator_commands) or motor_gains (MIT-mode motors, on '
            'actuator_impedance_commands)', check=one_of(IMPEDANCE_OUTPUT, OUTPUTS)),
])
_GAINS = {'p': 'stiffness of the joint spring, N*m/rad (N/m if prismatic), >= 0; 0 with d 0: '
               'no impedance',
          'd': 'damping of the joint spring, N*m*s/rad (N*s/m if prismatic), >= 0'}


def gain_name(joint, which):
    """Return ``gains.<joint>.<which>`` (``which``: p or d)."""
    return f'gains.{joint}.{which}'


class Impedance:
    """The impedance of a bridge node (module docstring)."""

    def __init__(self, node, routes, publish_command, now_ns, values, watchdog):
        self._node, self._routes, self._now_ns = node, routes, now_ns
        self._publish_command, self._watchdog = publish_command, watchdog
        self._output = values[IMPEDANCE_OUTPUT]
        self.core = None
        self.counters = {'impedance_commands': 0, 'impedance_targets_refused': 0}
        self._efforts = self._wire = self._kept = None
        self._kept_ok = False
        self._pub = None
        if DynamicJointState is not None:
            self._pub = node.create_publisher(DynamicJointState, 'actuator_impedance_commands',
                                              RELIABLE_10)

    @property
    def owned(self):
        """Return the joints driven by impedance (their joint_commands are targets)."""
        return self.core.owned if self.core is not None else {}

    def configure(self, tset):
        """Take ``tset``; declare ``gains.<joint>.p|d`` for its joints (a params file's kept)."""
        node = self._node
        if self.core is None:
            self.core = ImpedanceCore(tset, self._output)
        else:
            self.core.set_transmissions(tset)
        self._sync_watchdog()
        fields = {which: (lambda j, w=which: gain_name(j, w), text)
                  for which, text in _GAINS.items()}
        for joint, which, value in per_joint_values(node, tset.joint_names, fields,
                                                    ConfigError):
            self.core.set_gain(joint, which, value)

    def _sync_watchdog(self):
        core, watchdog = self.core, self._watchdog
        core.timeout_ns, core.on_timeout = watchdog.timeout_ns, watchdog.mode

    def refusal(self, params):
        """Return why a runtime change of a ``gains.*`` parameter is refused ('')."""
        return prefixed_refusal(params, 'gains.')

    def apply(self, params):
        """Take new gains and ``impedance_output``; the watchdog's settings too."""
        for p in params:
            if p.name == IMPEDANCE_OUTPUT:
                self._output = p.value
                if self.core is not None:
                    self.core.output = p.value
            elif p.name.startswith('gains.') and self.core is not None:
                _, joint, which = p.name.split('.')
                if joint in self.core.transmissions.joint_index:
                    self.core.set_gain(joint, which, p.value)
        if self.core is not None:
            self._sync_watchdog()

    # --- commands and states ---------------------------------------------------------------
    def split(self, names, position, velocity, effort):
        """Take the impedance joints' targets of a streamed command; return the rest (or None)."""
        owned = self.owned
        keep = [k for k, n in enumerate(names) if n not in owned]
        if len(keep) == len(names):
            return None
        why = self.core.take(names, position, velocity, effort, self._now_ns())
        if why:
            self.counters['impedance_targets_refused'] += 1
            self._node.get_logger().warning(f'joint_commands refused for impedance: {why}',
                                            throttle_duration_sec=1.0)
        arrays = [np.asarray(a, dtype=float) for a in (position, velocity, effort)]
        return ([names[k] for k in keep],
                *(a[keep] if len(a) == len(names) else a[:0] for a in arrays))

    def on_joint_state(self, out):
        """At every published joint_states: the impedance joints' motor command, sent."""
        core = self.core
        if core is None or not len(core.joints):
            return
        routes = self._routes
        states = routes.states
        values = states.values
        now = self._now_ns()
        if core.linear:                 # the motors' state suffices: nothing decoded
            if not self._published(states.last_kept):
                return                  # not measured now (stale, refused): nothing sent
            command = core.step_linear(values[0], values[1], now)
        else:
            measured = routes.measured
            measured.update(out, routes.seq, states)
            if not measured.present[core.joints].all():
                return
            command = core.step(measured.position, measured.velocity, values[0], values[1],
                                now)
        if command is None:
            return
        self.counters['impedance_commands'] += 1
        if core.output == 'effort':
            if self._efforts is None or self._efforts.names != command.names:
                self._efforts = EffortWire(command.names)
            self._publish_command(self._efforts.encode(command.effort, now))
        elif self._pub is not None:
            if self._wire is None or self._wire.names != command.names:
                self._wire = MitWire(command.names)
            self._pub.publish(self._wire.encode(command, now))

    def _published(self, kept):
        """Return whether the last joint_states carried every impedance joint."""
        if kept is None:
            return True
        if kept is not self._kept:
            self._kept = kept
            self._kept_ok = bool(np.isin(self.core.joints, kept).all())
        return self._kept_ok


class EffortWire:
    """A JointState of fixed motor names, efforts only, as bytes (as :class:`MitWire` does)."""

    def __init__(self, names):
        from rclpy.serialization import serialize_message
        self.names = tuple(names)
        markers = [float(2e15 + k) + 0.5 for k in range(len(names))]
        self._template = serialize_message(JointState(name=list(names), effort=markers))
        self._at = self._template.index(struct.pack(f'<{len(names)}d', *markers))

    def encode(self, efforts, now_ns):
        """Return the bytes of the efforts at ``now_ns``."""
        buf = bytearray(self._template)
        _STAMP.pack_into(buf, 4, *divmod(now_ns, 10**9))
        buf[self._at:self._at + 8 * len(self.names)] = np.asarray(efforts, '<f8').tobytes()
        return bytes(buf)


class MitWire:
    """
    A DynamicJointState for fixed motor names, as bytes: a template and where its values go.

    Serialized once with marker values (each found in the bytes: CDR puts each motor's five
    doubles together); each command writes the stamp and the doubles into a copy and is
    published as bytes, without building the 1 + 2n nested message objects per state.
    """

    def __init__(self, names):
        from rclpy.serialization import serialize_message
        self.names = tuple(names)
        msg = DynamicJointState(joint_names=list(names))
        markers = [[float(1e15 + 10 * k + j) + 0.5 for j in range(5)]
                   for k in range(len(names))]
        msg.interface_values = [InterfaceValue(interface_names=INTERFACES, values=m)
                                for m in markers]
        self._template = serialize_message(msg)
        self._offsets = [self._template.index(struct.pack('<5d', *m)) for m in markers]

    def encode(self, command, now_ns):
        """Return the bytes of ``command`` (a :class:`.impedance.MotorCommand`) at ``now_ns``."""
        buf = bytearray(self._template)
        _STAMP.pack_into(buf, 4, *divmod(now_ns, 10**9))
        n = len(self.names)
        zeros = np.zeros(n)
        rows = np.stack([command.position if command.position is not None else zeros,
                         command.velocity if command.velocity is not None else zeros,
                         command.effort, command.stiffness, command.damping], axis=1)
        for k, at in enumerate(self._offsets):
            buf[at:at + 40] = rows[k].astype('<f8').tobytes()
        return bytes(buf)
