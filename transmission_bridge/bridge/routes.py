"""
Every input message's two routes through the bridge, fast and typed, without a node.

:class:`Routes` holds the state side (:class:`.state.ActuatorStates`), the command side
(:class:`.commands.CommandMapper`), one :class:`.fast.StateRelay` per actuator-state topic
and the joint commands' :class:`.fast.CommandCodec`. For one message (its serialized bytes)
it returns what to publish: the fast route's bytes when a relay or the codec takes it, else
the typed route's message (decoded, through the core, the fast path then learning it), or
None. It logs what a message needs said (unknown names, refusals, a resumed watchdog). The
node subscribes, publishes and decides when (its lifecycle state); tests and benchmarks call
:meth:`Routes.actuator_states` and :meth:`Routes.joint_commands` directly.
"""

import time

import numpy as np
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState

from .commands import CommandMapper
from .fast import CommandCodec, StateRelay
from .measured import Measured
from .state import ActuatorStates
from ..ros.conversions import ReusedJointState, stamp_to_ns, trajectory_msg
from ..ros.diagnostics import report_input
from ..ros.wire import JointStateLayout
from ..transmissions import ConfigError


def warm_up(tset):
    """
    Compile every linkage kernel a stream of ``tset`` calls; return the seconds it took.

    numba compiles a kernel for each kind of array it is called with, on its first call (or
    loads it from its disk cache): here, before the first message, not on it. The kinds the
    bridge uses: a state in and a new joint state out (the typed route), into a contiguous
    array (a degraded relay) and into a message template's view (the fast route), a bag's
    rows (the converter), streaming commands and trajectories. 0 for a set without linkages
    (nothing is compiled, numba is not imported).
    """
    if not len(tset.linkage_joints):
        return 0.0
    start = time.perf_counter()
    n_act, n = tset.num_actuators, tset.num_joints
    flat = np.zeros(3 * n_act + 1)
    flat[-1] = 1.0
    joint_map = tset.state_map()
    joint_map(flat)
    joint_map(flat, np.empty((3, n)))
    joint_map.writer(JointStateLayout(tset.joint_names, '', (n, n, n)).encoder().state)(flat)
    joint_map(np.stack([flat, flat]))
    zeros, mapper = [0.0] * n, CommandMapper(tset)
    mapper.map_command(tset.joint_names, zeros, zeros, zeros)
    mapper.map_trajectory(tset.joint_names, *([zeros, zeros],) * 4)
    return time.perf_counter() - start


class Routes:
    """The bridge's message routes for ``topics`` (see the module docstring)."""

    def __init__(self, topics, now_ns, logger, watchdog, fast_path=True):
        self.states = self.commands = None
        self.relays = {topic: StateRelay(topic, now_ns) for topic in topics}
        self.codec = CommandCodec()
        #: Messages each input took by the typed route (all others: the fast route).
        self.typed_count = {'actuator_states': 0, 'joint_commands': 0}
        self._now_ns, self._logger, self._watchdog = now_ns, logger, watchdog
        self._fast_path = fast_path
        self._typed_joint_states, self._typed_commands = ReusedJointState(), ReusedJointState()
        #: Called with every joint_states published (bytes or a message): the trajectory
        #: controllers' and the impedance's; they read it through :attr:`measured`.
        self.after_state = []
        self.measured = Measured()
        self.seq = 0                # joint_states published: :attr:`measured`'s message number
        #: Each owns some joints' streamed commands while its ``owned`` is not empty:
        #: ``owner.split(names, position, velocity, effort)`` takes its part and returns the
        #: rest (None: it took nothing).
        self.owners = []

    def configure(self, tset, stale_ns, limit_commands):
        """Make ``tset`` the configuration of both sides (created on the first one)."""
        seconds = warm_up(tset)
        if seconds > 0.01:
            self._logger.info(f'linkage kernels ready in {seconds:.2f} s (compiled, or loaded '
                              "from numba's cache)")
        self.measured.configure(tset)
        if self.states is None:
            self.states = ActuatorStates(tset)
            self.states.stale_ns = stale_ns
            self.commands = CommandMapper(tset, limit_commands, measured=self._measured)
        else:
            self.states.set_transmissions(tset)
            self.commands.set_transmissions(tset)

    def drop(self):
        """Forget the configuration: nothing is taken until the next :meth:`configure`."""
        self.states = self.commands = None
        self.codec = CommandCodec()
        for relay in self.relays.values():
            relay.forget()

    def _measured(self):
        """Return the linkages' joint positions measured and fresh now (NaN otherwise)."""
        return self.states.linkage_positions(self._now_ns())

    # --- actuator states ---------------------------------------------------------------
    def state_callback(self, source, publish, active):
        """
        Return the subscription callback of ``source``: its fast route, else its typed one.

        States are taken whatever the lifecycle state (a linkage's and an encoder's stream
        stays continuous) and published only while ``active[0]``.
        """
        relay, typed = self.relays[source], self._typed_state

        def callback(data):
            out = relay.take(data)
            if out is None:
                out = typed(source, relay, data)
                if out is None:
                    return
            if active[0]:
                publish(out)
                if self.after_state:
                    self.seq += 1
                    for after in self.after_state:
                        after(out)
        return callback

    def actuator_states(self, source, data):
        """Return the joint_states (bytes or a message) for one message of ``source``, or None."""
        relay = self.relays[source]
        out = relay.take(data)
        return out if out is not None else self._typed_state(source, relay, data)

    def _typed_state(self, source, relay, data):
        """Return the joint_states message of ``data`` taken by the typed route, or None."""
        states = self.states
        if states is None:
            return None
        self.typed_count['actuator_states'] += 1
        msg = deserialize_message(data, JointState)
        out = states.ingest(source, msg.name, msg.position, msg.velocity, msg.effort,
                            stamp_to_ns(msg.header.stamp), self._now_ns())
        result = states.last_result
        for name in result.new_shared_actuators:
            self._logger.warning(
                f'actuator {name!r} is reported on more than one topic; the latest wins')
        waiting = out is None and result.reason.startswith('no transmission')  # not an error
        report_input(self._logger, source, 'actuator', result.new_unknown_names,
                     '' if waiting else result.reason)
        if self._fast_path:
            relay.learn(states, data, msg)
        return None if out is None else self._typed_joint_states.fill(out, msg.header)

    # --- joint commands ----------------------------------------------------------------
    def command_callback(self, publish, active):
        """Return the joint_commands subscription callback: commands mapped while ``active[0]``."""
        handle = self.joint_commands

        def callback(data):
            if active[0]:
                out = handle(data)
                if out is not None:
                    publish(out)
        return callback

    def joint_commands(self, data):
        """Return the actuator_commands (bytes or a message) for one joint_commands message."""
        commands, codec = self.commands, self.codec
        if commands is None:
            return None
        for owner in self.owners:
            if owner.owned:
                return self._shared_commands(data)
        decoded = codec.decode(data)
        if decoded is not None:
            names, arrays, header = decoded
            out = commands.map_command(names, *arrays)
            self._report_command(out)
            return None if out is None else codec.encode(out, header)
        self.typed_count['joint_commands'] += 1
        msg = deserialize_message(data, JointState)
        out = commands.map_command(msg.name, msg.position, msg.velocity, msg.effort)
        self._report_command(out)
        if self._fast_path:
            codec.learn(data, msg)
        return None if out is None else self._typed_commands.fill(out, msg.header)

    def _shared_commands(self, data):
        """
        Take joint commands while goals or impedance own joints (theirs split off).

        A message of the learned layout is read as views (an impedance policy's targets,
        every joint its own, need nothing else); a remainder for the command side is mapped
        by the typed route, with the message's header.
        """
        decoded = self.codec.decode(data)
        msg = None
        if decoded is None:
            self.typed_count['joint_commands'] += 1
            msg = deserialize_message(data, JointState)
            if self._fast_path:
                self.codec.learn(data, msg)
            rest = (msg.name, msg.position, msg.velocity, msg.effort)
        else:
            names, arrays, _ = decoded
            rest = (names, *arrays)
        for owner in self.owners:
            if owner.owned:
                rest = owner.split(*rest) or rest
        if not len(rest[0]):
            return None
        if msg is None:
            msg = deserialize_message(data, JointState)
        return self.command(*rest, msg.header)

    def command(self, names, position, velocity, effort, header, stream=True):
        """
        Map one joint command; return its actuator_commands message (None if refused).

        ``stream``: a streamed command, which feeds the watchdog (a goal's do not).
        """
        out = self.commands.map_command(names, position, velocity, effort)
        self._report_command(out, stream)
        return None if out is None else self._typed_commands.fill(out, header)

    def trajectory(self, msg, active, publish):
        """Map one joint_trajectory message and ``publish`` it, or log why not."""
        commands = self.commands
        if commands is None or not active:
            self._logger.error('joint_trajectory rejected: ' + (
                'no configuration yet' if commands is None else 'the bridge is inactive'))
            return
        points = msg.points
        try:
            names, fields = commands.map_trajectory(
                msg.joint_names, [p.positions for p in points], [p.velocities for p in points],
                [p.accelerations for p in points], [p.effort for p in points])
        except ConfigError as exc:
            self._logger.error(f'joint_trajectory rejected: {exc}')
            return
        publish(trajectory_msg(msg.header, names, fields, [p.time_from_start for p in points]))

    def _report_command(self, out, stream=True):
        if out is not None and stream and self._watchdog.commanded(out.names, self._now_ns()):
            self._logger.info('joint_commands resumed: watchdog cleared')
        result = self.commands.last_result
        report_input(self._logger, 'joint_commands', 'joint', result.new_unknown_names,
                     result.reason)
        if result.limited:
            self._logger.warning('joint_commands limited: ' + '; '.join(result.limited),
                                 throttle_duration_sec=1.0)
