"""
The bridge's joint springs: ROS wiring of :mod:`transmission_bridge.control.impedance`.

Parameters ``gains.<joint>.p`` and ``gains.<joint>.d`` (declared per joint with the robot,
runtime-settable) and ``impedance_output`` (``effort`` or ``motor_gains``). Streamed
``joint_commands`` for the joints of driven transmissions are their targets (the routes
give the springs their columns: :mod:`transmission_bridge.mapping.ownership`); at every
published joint_states (:meth:`Springs.on_joint_state`) the motors of the transmissions the
state measured get the law's command: efforts on ``actuator_commands``, or MIT-mode commands
on ``actuator_impedance_commands`` (control_msgs/DynamicJointState: motor names; interfaces
position, velocity, effort, stiffness, damping), returned as data and published by the routes
right after the state. doc/impedance.md says it for users.
"""

import struct

import numpy as np

from .settings import gain_name, GAINS, IMPEDANCE_OUTPUT
from ..control.impedance import ImpedanceCore
from ..messages.wire import JointStateLayout, STAMP, Template
from ..ros.configurable import RELIABLE_10
from ..ros.settings import per_joint_values, prefixed_refusal
from ..transmissions import ConfigError

_STAMP_AT = 4     # header.stamp, after CDR's 4-byte encapsulation
INTERFACES = ['position', 'velocity', 'effort', 'stiffness', 'damping']


class Springs:
    """The joint springs of a bridge node (module docstring)."""

    def __init__(self, node, routes, publish_command, now_ns, values):
        self._node, self._routes, self._now_ns = node, routes, now_ns
        self._publish_command = publish_command
        self._output = values[IMPEDANCE_OUTPUT]
        self.core = None
        self._commands = 0
        self._wires, self._last = {}, (None, None, None)
        self._pub = None
        self._mit_publisher()

    @property
    def counters(self):
        """Return the springs' /diagnostics counters."""
        return {'impedance_commands': self._commands,
                'impedance_targets_refused': 0 if self.core is None else self.core.refused}

    def configure(self, tset):
        """Take ``tset``; declare ``gains.<joint>.p|d`` for its joints (a params file's kept)."""
        node = self._node
        if self.core is None:
            self.core = ImpedanceCore(tset, self._output, self._routes.deadline)
            self._routes.springs = self.core
        else:
            self.core.set_transmissions(tset)
        fields = {which: (lambda j, w=which: gain_name(j, w), text)
                  for which, text in GAINS.items()}
        for joint, which, value in per_joint_values(node, tset.joint_names, fields,
                                                    ConfigError):
            self.core.set_gain(joint, which, value)
        self._owned()

    def _mit_publisher(self):
        """
        Return the ``actuator_impedance_commands`` publisher, made once ``motor_gains`` is used.

        control_msgs (ros-jazzy-control-msgs on a robot; not on PyPI, doc/impedance.md) is
        imported then, not before: some 14 MB a bridge without MIT-mode motors never pays.
        None without control_msgs (said once).
        """
        if self._pub is None and self._output == 'motor_gains':
            try:
                from control_msgs.msg import DynamicJointState
            except ImportError:
                self._node.get_logger().error(
                    'impedance_output motor_gains needs control_msgs (DynamicJointState), '
                    'which is not installed: the joint springs send nothing')
                self._pub = False
                return None
            self._pub = self._node.create_publisher(
                DynamicJointState, 'actuator_impedance_commands', RELIABLE_10)
        return self._pub or None

    def _owned(self):
        """Make the springs' joints take their streamed commands as targets from now on."""
        self._wires, self._last = {}, (None, None, None)
        self._routes.owners.set_springs(self.core.joints, self.core)
        self._routes.follow('springs', self.on_joint_state if len(self.core.joints) else None)

    def refusal(self, params):
        """Return why a runtime change of a ``gains.*`` parameter is refused ('')."""
        return prefixed_refusal(params, 'gains.')

    def apply(self, params):
        """Take new gains and ``impedance_output``."""
        gains = False
        for p in params:
            if p.name == IMPEDANCE_OUTPUT:
                self._output = p.value
                self._mit_publisher()
                if self.core is not None:
                    self.core.output = p.value
            elif p.name.startswith('gains.') and self.core is not None:
                _, joint, which = p.name.split('.')
                if joint in self.core.transmissions.joint_index:
                    self.core.set_gain(joint, which, p.value)
                    gains = True
        if gains:
            self._owned()

    # --- at every state ---------------------------------------------------------------------
    def on_joint_state(self, out):
        """
        Return the springs' motor command at the joint_states ``out`` just published (a list).

        Stamped with the state's stamp (the command is the law at that state); the routes
        publish it (:meth:`~transmission_bridge.mapping.routes.Routes.follow_state`).
        """
        states = self._routes.states
        block = self.core.block_at(states.joint_kept, self._now_ns(), states.joint_state)
        if block is None:
            return None
        sent = self._command(self.core, block, states, out[4:12] if type(out) is bytes
                             else stamp_bytes(out))
        return None if sent is None else [sent]

    def stop(self):
        """Send the springs' ``on_command_timeout`` command once (the bridge stops)."""
        core, states = self.core, self._routes.states
        if (core is None or states is None or states.joint_state is None
                or self._routes.deadline.mode == 'none'):
            return
        now = self._now_ns()
        block = core.block_at(states.joint_kept, now, states.joint_state, timed_out=True)
        if block is not None:
            sent = self._command(core, block, states, STAMP.pack(*divmod(now, 1_000_000_000)))
            if sent is not None:
                send, data = sent
                send(data)

    def _command(self, core, block, states, stamp):
        """Return ``(send, bytes)``: the command of ``block`` at ``states``; None: nothing."""
        last = self._last
        wire = last[2] if last[0] is block and last[1] == core.output else self._wire(core, block)
        if wire is None:
            return None             # motor_gains without control_msgs: said at start-up
        if not core.fill(block, states.map_flat, states.joint_state, states.joint_map.jacobian,
                         wire.out):
            return None
        self._commands += 1
        data = wire.at(stamp)
        return (self._publish_command if core.output == 'effort'
                else self._pub.publish, data)     # the MIT publisher: made with the wire

    def _wire(self, core, block):
        """Return the output template of ``block``'s motors and the output (kept)."""
        key = (id(block), core.output)
        found = self._wires.get(key)
        if found is None or found[0] is not block:
            wire, tset = None, core.transmissions
            units = None if tset.units.identity else (
                tset.units, [tset.actuator_index[n] for n in block.names])
            if core.output == 'effort':
                wire = EffortWire(block.names, units)
            elif self._mit_publisher() is not None:
                wire = MitWire(block.names, units)
            if len(self._wires) > 64:
                self._wires.clear()
            found = self._wires[key] = (block, wire)
        self._last = (block, core.output, found[1])
        return found[1]


def stamp_bytes(out):
    """Return the 8 CDR bytes of the stamp of ``out`` (a JointState: bytes or a message)."""
    if isinstance(out, bytes):
        return out[4:12]            # after CDR's 4-byte encapsulation: the header's stamp
    stamp = out.header.stamp
    return STAMP.pack(stamp.sec, stamp.nanosec)


class EffortWire:
    """
    A JointState of fixed motor names, efforts only: ``out`` (m,) written in its bytes.

    ``units``: ``(UnitTable, the motors' columns)`` of drivers with units (None: SI): then
    ``out`` is SI, and the bytes get the drivers' values (:mod:`..transmissions.units`).
    """

    def __init__(self, names, units=None):
        self.names = tuple(names)
        self._template = JointStateLayout(names, '', (0, 0, len(names))).encoder()
        self._field = self.out = self._template.fields[2]
        self._units = units
        if units is not None:
            self.out = np.zeros(len(names))

    def at(self, stamp):
        """Return the message's bytes, stamped ``stamp`` (8 CDR bytes)."""
        if self._units is not None:
            table, cols = self._units
            self._field[:] = table.to_driver(2, self.out, cols)
        self._template.set_stamp(stamp)
        return self._template.to_bytes()


class MitWire:
    """
    A DynamicJointState for fixed motor names: its doubles as ``out`` (m, 5) in its bytes.

    Serialized once with marker values, each found in the bytes (CDR puts each motor's five
    doubles together, the motors a fixed stride apart: the same interface names each);
    a command writes the doubles in place and is published as bytes, without building the
    1 + 2m nested message objects per state.
    """

    def __init__(self, names, units=None):
        from control_msgs.msg import DynamicJointState, InterfaceValue
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
        self._field = self.out = self._template.view(offsets[0] if offsets else 0,
                                                     (len(names), 5), (stride, 8))
        self._units = units
        if units is not None:       # SI here (a buffer of its own: the law keeps columns)
            self.out = np.zeros(5 * len(names)).reshape(len(names), 5)

    def at(self, stamp):
        """Return the message's bytes, stamped ``stamp`` (8 CDR bytes); the drivers' units."""
        if self._units is not None:
            table, cols = self._units
            self._field[:] = self.out
            table.mit_to_driver(self._field, cols)
        self._template.set_stamp(stamp)
        return self._template.to_bytes()
