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

from .impedance import ImpedanceCore, OUTPUTS
from ..ros.configurable import RELIABLE_10
from ..ros.settings import one_of, per_joint_values, prefixed_refusal, Setting
from ..ros.settings import settings_by_name
from ..ros.wire import JointStateLayout, Template
from ..transmissions import ConfigError

try:        # control_msgs: ros-jazzy-control-msgs on a robot; not on PyPI (doc/impedance.md)
    from control_msgs.msg import DynamicJointState, InterfaceValue
except ImportError:
    DynamicJointState = None

_STAMP_AT = 4     # header.stamp, after CDR's 4-byte encapsulation
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
        self._wires, self._kept = {}, None
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
        states = self._routes.states
        if not self._published(states.last_kept):
            return                  # not measured now (stale, refused): nothing sent
        wire = self._wire(core)
        if wire is None:
            return                  # motor_gains without control_msgs: said at start-up
        now = self._now_ns()
        joint_map = states.joint_map
        if not core.fill(states.flat, joint_map.latest, joint_map.jacobian, now, wire.out):
            return
        self.counters['impedance_commands'] += 1
        data = wire.at(now)
        if core.output == 'effort':
            self._publish_command(data)
        else:
            self._pub.publish(data)

    def _wire(self, core):
        """Return the output template of ``core``'s motors and output (kept while they are)."""
        wire = self._wires.get(core.output)
        if wire is None or wire.names != core.actuator_names:
            if core.output == 'effort':
                wire = EffortWire(core.actuator_names)
            elif DynamicJointState is not None:
                wire = MitWire(core.actuator_names)
            self._wires[core.output] = wire
        return wire

    def _published(self, kept):
        """Return whether the last joint_states carried every impedance joint."""
        if kept is None:
            return True
        if kept is not self._kept:
            self._kept = kept
            self._kept_ok = bool(np.isin(self.core.joints, kept).all())
        return self._kept_ok


class EffortWire:
    """A JointState of fixed motor names, efforts only: ``out`` (m,) written in its bytes."""

    def __init__(self, names):
        self.names = tuple(names)
        self._template = JointStateLayout(names, '', (0, 0, len(names))).encoder()
        self.out = self._template.fields[2]

    def at(self, now_ns):
        """Return the message's bytes, stamped ``now_ns``."""
        return self._template.stamped(now_ns)


class MitWire:
    """
    A DynamicJointState for fixed motor names: its doubles as ``out`` (m, 5) in its bytes.

    Serialized once with marker values, each found in the bytes (CDR puts each motor's five
    doubles together, the motors a fixed stride apart: the same interface names each);
    a command writes the doubles in place and is published as bytes, without building the
    1 + 2m nested message objects per state.
    """

    def __init__(self, names):
        from rclpy.serialization import serialize_message
        self.names = tuple(names)
        msg = DynamicJointState(joint_names=list(names))
        markers = [[float(1e15 + 10 * k + j) + 0.5 for j in range(5)]
                   for k in range(len(names))]
        msg.interface_values = [InterfaceValue(interface_names=INTERFACES, values=m)
                                for m in markers]
        data = serialize_message(msg)
        offsets = [data.index(struct.pack('<5d', *m)) for m in markers]
        stride = offsets[1] - offsets[0] if len(offsets) > 1 else 40
        assert all(b - a == stride for a, b in zip(offsets, offsets[1:])), offsets
        self._template = Template(data, _STAMP_AT)
        self.out = self._template.view(offsets[0] if offsets else 0, (len(names), 5),
                                       (stride, 8))

    def at(self, now_ns):
        """Return the message's bytes, stamped ``now_ns``."""
        return self._template.stamped(now_ns)
