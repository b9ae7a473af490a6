"""
Every input message's two routes through the bridge, fast and typed, without ROS.

:class:`Routes` holds the state side (:class:`.state.ActuatorStates`), the command side
(:class:`.commands.CommandMapper`), one :class:`.fast_route.FastStateRoute` per actuator-state
topic, the joint commands' :class:`.fast_route.CommandCodec`, the command deadline
(:class:`.deadline.CommandDeadline`) and the owners of the joints' commands
(:class:`.ownership.Ownership`). For one message (its serialized bytes) it returns what to
publish: the fast route's bytes when a relay or the codec takes it, else the typed route's
message (decoded, through the core, the fast path then learning it), or None. Decoding and
building message objects are the wiring's (``typed``: ``decode(data)``,
``joint_states(out, header)``, ``commands(out, header)``, ``trajectory(header, names,
fields, times)``), so this room imports no ROS. It logs what a message needs said (unknown
names, refusals, commands resumed after a timeout) through ``logger``. The node subscribes,
publishes and decides when (its lifecycle state); tests and benchmarks call
:meth:`Routes.actuator_states` and :meth:`Routes.joint_commands` directly.

Each idea beside it has its own room: who owns a joint's commands and each owner's columns
(:mod:`.ownership`), a running goal's commands and its compiled step, springs' targets
included (:mod:`.goal_route`), and the kernels compiled before the first message
(:mod:`.warm_up`).
"""

import numpy as np

from .commands import CommandMapper
from .fast_route import CommandCodec, FastStateRoute
from .goal_route import GoalRoute
from .measurement import motor_velocities
from .ownership import Ownership
from .state import ActuatorStates
from .warm_up import warm_up
from ..messages.named_input import report_input
from ..messages.wire import STAMP
from ..transmissions import ConfigError

_NONE = np.zeros(0, dtype=np.intp)
#: The followers of the states published, in the order they see each (:meth:`Routes.follow`).
FOLLOWERS = ('goals', 'springs', 'deflections')


class Routes:
    """The bridge's message routes for ``topics`` (see the module docstring)."""

    def __init__(self, topics, now_ns, logger, deadline, typed, fast_path=True):
        self.states = self.commands = None
        self.relays = {topic: FastStateRoute(topic, now_ns) for topic in topics}
        self.codec = CommandCodec()
        #: Messages each input took by the typed route (all others: the fast route).
        self.typed_count = {'actuator_states': 0, 'joint_commands': 0}
        self.deadline = deadline
        #: Who takes each joint's streamed commands (:mod:`.ownership`).
        self.owners = Ownership()
        #: The joint springs (:class:`~transmission_bridge.control.impedance.ImpedanceCore`),
        #: which a goal's desired states reach as targets; None: none.
        self.springs = None
        self._now_ns, self._logger, self._typed = now_ns, logger, typed
        self._fast_path = fast_path
        #: Called with every joint_states published (bytes or a message), in order: the
        #: followers (:meth:`follow`), then anything else added; they read
        #: :meth:`.state.ActuatorStates.measured` and return what to publish
        #: (:meth:`follow_state`).
        self.after_state = []
        self._followers = {}
        #: Called before a deadline is judged: takes the joint_commands already received
        #: and not yet handled (the node's; None: none). A state that would time a joint
        #: out first sees every command that arrived before it was decided.
        self.drain = None
        #: Takes the actuator states already received and not yet handled (the node's;
        #: None: none): :meth:`stale` judges after them.
        self.take_states = None
        #: How running goals command their joints (:class:`.goal_route.GoalRoute`).
        self.goals = GoalRoute(self)

    def listen(self, topic):
        """Take actuator states on ``topic`` too (its fast route made once)."""
        self.relays.setdefault(topic, FastStateRoute(topic, self._now_ns))

    def configure(self, tset, stale_ns, limit_commands, warm=()):
        """Make ``tset`` the configuration of both sides (created on the first one)."""
        seconds = warm_up(tset, warm)
        if (len(tset.linkage_joints) or not tset.losses.lossless) and seconds > 0.01:
            what = ' and '.join(w for w, has in (('linkage', len(tset.linkage_joints)),
                                                 ('gear loss', not tset.losses.lossless))
                                if has)
            self._logger.info(f'{what} kernels ready in {seconds:.2f} s (compiled, or loaded '
                              "from numba's cache)")
        if self.states is None:
            self.states = ActuatorStates(tset)
            self.states.stale_ns = stale_ns
            self.commands = CommandMapper(tset, limit_commands, measured=self._measured,
                                          motor_velocities=self._motor_velocities)
        else:
            self.states.set_transmissions(tset)
            self.commands.set_transmissions(tset)
        self.owners.configure(tset)
        self.deadline.configure(tset.joint_names)

    def follow(self, name, hook):
        """
        Make ``hook`` (None: none) the follower ``name`` of every state published.

        Followers see a state in the order of :data:`FOLLOWERS` (goals command their
        springs' targets before the springs compute); one with nothing to do is taken off
        (None), so a state costs nothing for goals not running or springs not set.
        """
        old = set(map(id, self._followers.values()))
        self._followers[name] = hook
        others = [h for h in self.after_state if id(h) not in old]
        # A new list: a state being followed goes on through the list it started with.
        self.after_state = [self._followers[n] for n in FOLLOWERS
                            if self._followers.get(n) is not None] + others

    def drop(self):
        """Forget the configuration: nothing is taken until the next :meth:`configure`."""
        self.states = self.commands = None
        self.codec = CommandCodec()
        for relay in self.relays.values():
            relay.forget()

    def _measured(self, stamp_ns=None):
        """Return the state measured and fresh now (NaN otherwise): what a command needs."""
        return self.states.measured(self._now_ns(), stamp_ns)

    def _motor_velocities(self, stamp_ns=None):
        """Return the motors' velocities a command stamped ``stamp_ns`` takes its losses at."""
        return motor_velocities(self.states, self._now_ns(), stamp_ns)

    # --- actuator states ---------------------------------------------------------------
    def state_callback(self, source, publish, active):
        """
        Return the subscription callback of ``source``: its fast route, else its typed one.

        States are taken whatever the lifecycle state (a linkage's and an encoder's stream
        stays continuous) and published only while ``active[0]``; then every
        :attr:`after_state` follower sees them (:meth:`follow_state`).
        """
        relay, typed, follow = self.relays[source], self._typed_state, self.follow_state

        def callback(data):
            out = relay.take(data)
            if out is None:
                out = typed(source, relay, data)
                if out is None:
                    return
            if active[0]:
                publish(out)
                if self.after_state:
                    follow(out)
        return callback

    def follow_state(self, out):
        """
        Let every follower decide on the state ``out`` just published; publish what it returns.

        A follower returns its commands as data: ``(send, message)`` pairs (or None), sent
        here, in the followers' order, right after the state. If a joint's deadline may have
        passed, the commands received meanwhile are taken first (:attr:`drain`): no
        timeout is decided against a command already in the queue.
        """
        if self.drain is not None and self.deadline.passing(self._now_ns()):
            self.drain()
        for after in self.after_state:
            for send, message in after(out) or ():
                send(message)

    def stale(self, act_idx):
        """
        Return which actuators ``act_idx`` are stale now (a mask), judged after the queue.

        Where one seems stale, the states received and not yet handled are taken first
        (:attr:`take_states`): a timer that runs late, after a stall, does not find the
        robot stale while its states wait behind it.
        """
        stale = self.states.stale_mask(self._now_ns())[act_idx]
        if stale.any() and self.take_states is not None:
            self.take_states()
            stale = self.states.stale_mask(self._now_ns())[act_idx]
        return stale

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
        msg = self._typed.decode(data)
        stamp = msg.header.stamp
        out = states.ingest(source, msg.name, msg.position, msg.velocity, msg.effort,
                            stamp.sec * 1_000_000_000 + stamp.nanosec, self._now_ns())
        result = states.last_result
        for name in result.new_shared_actuators:
            self._logger.warning(
                f'actuator {name!r} is reported on more than one topic; the latest wins')
        waiting = out is None and result.reason.startswith('no transmission')  # not an error
        report_input(self._logger, source, 'actuator', result.new_unknown_names,
                     '' if waiting else result.reason)
        if self._fast_path:
            relay.learn(states, data, msg)
        return None if out is None else self._typed.joint_states(out, msg.header)

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
        """
        Return the actuator_commands (bytes or a message) for one joint_commands message.

        While joints have owners other than the plain mapping (:attr:`owners`), each owner
        takes its columns (a spring its targets, a goal its feed-forward); the plain
        mapping gets the rest. Every part taken as a stream feeds the deadline.
        """
        commands, codec = self.commands, self.codec
        if commands is None:
            return None
        decoded = codec.decode(data)
        msg = None
        if decoded is None:
            self.typed_count['joint_commands'] += 1
            msg = self._typed.decode(data)
            if self._fast_path:
                codec.learn(data, msg)
            names = msg.name
            arrays = [np.asarray(a, dtype=float)
                      for a in (msg.position, msg.velocity, msg.effort)]
        else:
            names, arrays, header = decoded
            streamed = None if self.owners.any else codec.streamed(commands)
            if streamed is not None:    # the layout's own map: the same bytes, looked up once
                now = self._now_ns()
                stamp = (None if self.states.velocity_history is None
                         else self._stamp_ns(header))
                out = streamed.command(arrays, header, stamp)
                if out is not None:
                    self._resumed(self._report_command(out, now_ns=now))
                    return out
        resumed = _NONE
        now = self._now_ns()            # one receipt time: its joints' deadlines pass together
        if self.owners.any:
            split = self.owners.split(names)
            count = len(names)
            if split.owned and all(len(a) in (0, count) for a in arrays):
                resumed = self.owners.dispatch(split, count, arrays, now, self.deadline,
                                               self._warn)
                if not len(split.plain):        # received, and all its joints' owners'
                    commands.counters.received += 1
                    self._resumed(resumed)
                    return None
                plain = split.plain
                names = [names[k] for k in plain]
                arrays = [a[plain] if len(a) else a for a in arrays]
        stamp = None
        if self.states.velocity_history is not None:        # losses: the state of its stamp
            stamp = (self._stamp_ns(header) if msg is None else
                     msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec)
        out = commands.map_command(names, *arrays, stamp_ns=stamp)
        back = self._report_command(out, now_ns=now)
        self._resumed(np.concatenate([resumed, back]) if len(resumed) else back)
        if out is None:
            return None
        return codec.encode(out, header) if msg is None else self._typed.commands(out,
                                                                                  msg.header)

    @staticmethod
    def _stamp_ns(header):
        """Return the stamp (ns) of a message's header bytes."""
        sec, nanosec = STAMP.unpack_from(header)
        return sec * 1_000_000_000 + nanosec

    def command(self, names, position, velocity, effort, header, stream=True,
                accelerations=None):
        """
        Map one joint command; return its actuator_commands message (None if refused).

        ``stream``: a streamed command, which feeds the deadline (a goal's do not);
        ``accelerations``: a goal's sample's (the rotors before a gear's efficiency).
        """
        out = self.commands.map_command(names, position, velocity, effort, accelerations)
        self._resumed(self._report_command(out, stream))
        return None if out is None else self._typed.commands(out, header)

    def trajectory(self, msg, active):
        """Return the actuator_trajectory message of one joint_trajectory ``msg``, or None."""
        commands = self.commands
        if commands is None or not active:
            self._logger.error('joint_trajectory rejected: ' + (
                'no configuration yet' if commands is None else 'the bridge is inactive'))
            return None
        points = msg.points
        try:
            names, fields = commands.map_trajectory(
                msg.joint_names, [p.positions for p in points], [p.velocities for p in points],
                [p.accelerations for p in points], [p.effort for p in points])
        except ConfigError as exc:
            self._logger.error(f'joint_trajectory rejected: {exc}')
            return None
        return self._typed.trajectory(msg.header, names, fields,
                                      [p.time_from_start for p in points])

    def _warn(self, text):
        """Log an owner's refusal (at most once a second)."""
        self._logger.warning(text, throttle_duration_sec=1.0)

    def _report_command(self, out, stream=True, now_ns=None):
        """Report one mapped command (received at ``now_ns``); return the joints it resumes."""
        resumed = _NONE
        if out is not None and stream:
            resumed = self.deadline.commanded(self.commands.last_joints,
                                              self._now_ns() if now_ns is None else now_ns)
        result = self.commands.last_result
        report_input(self._logger, 'joint_commands', 'joint', result.new_unknown_names,
                     result.reason)
        if result.limited:
            self._logger.warning('joint_commands limited: ' + '; '.join(result.limited),
                                 throttle_duration_sec=1.0)
        return resumed

    def _resumed(self, joints):
        """Say once that commands resumed for ``joints`` (indices), which had timed out."""
        if len(joints):
            names = self.deadline.joint_names
            self._logger.info('joint_commands resumed for '
                              f'{", ".join(names[i] for i in joints)}: timeout cleared')
