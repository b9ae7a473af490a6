"""
What the bridge commands on its own, wired: goals, joint springs, the command deadline.

:class:`CommandSources` holds the command deadline
(:class:`~transmission_bridge.mapping.deadline.CommandDeadline`), the joint springs
(:mod:`.impedance_wiring`), the FollowJointTrajectory servers (:mod:`.goal_servers`, imported only
with ``follow_joint_trajectory``: a robot that takes no goals pays nothing for rclpy.action
and control_msgs), the deadline's timer (:class:`DeadlineTimer`: it polls the deadline a few
times per timeout, says each timeout once, :func:`trip_lines`) and the plain motors' safe
command (:func:`safe_command_messages`, at the measured positions, never to a joint spring's
motors: their timeout is the spring's own hold); their parameters (declared, checked,
applied) and their part of a configuration and of a stop.
The node creates it and calls it; every law it applies is
:mod:`transmission_bridge.control`'s, every map :mod:`transmission_bridge.mapping`'s.
"""

import numpy as np
from sensor_msgs.msg import JointState

from .impedance_wiring import Springs
from .settings import COMMAND_TIMEOUT, GOAL_SETTINGS, ON_COMMAND_TIMEOUT, SPRING_SETTINGS
from .status import motors_of
from ..mapping.deadline import CommandDeadline
from ..messages.named_input import seconds_to_ns
from ..ros.conversions import doubles
from ..ros.node_main import StartupError
from ..ros.settings import declare_settings, refusal
from ..transmissions import ConfigError


class CommandSources:
    """A bridge node's goals, springs and command deadline (module docstring)."""

    def __init__(self, node, own, follow_goals, now_ns, active, publish_command):
        self._node, self._now_ns, self._active = node, now_ns, active
        self._publish_command = publish_command
        self.deadline = CommandDeadline(seconds_to_ns(own[COMMAND_TIMEOUT]),
                                        own[ON_COMMAND_TIMEOUT])
        self._tables = [SPRING_SETTINGS] + ([GOAL_SETTINGS] if follow_goals else [])
        self._values = [declare_settings(node, table) for table in self._tables]
        self.goals = self.springs = self.routes = self._timer = None

    def wire(self, routes):
        """Create the springs, the goal servers and the timer on ``routes``."""
        node, publish = self._node, self._publish_command
        self.routes = routes
        if len(self._tables) > 1:       # rclpy.action and control_msgs load here
            from .goal_servers import GoalServers
            try:
                self.goals = GoalServers(node, routes, publish, self._now_ns, self._values[1],
                                         self._active)
            except ConfigError as exc:
                raise StartupError(str(exc)) from None
        self.springs = Springs(node, routes, publish, self._now_ns, self._values[0])
        self._timer = DeadlineTimer(
            node, self.deadline, self._now_ns,
            lambda: routes.states.transmissions if self._active[0] and routes.states else None,
            self.sprung, self.send_safe_commands, lambda: routes.drain and routes.drain())

    @property
    def per_joint(self):
        """Return the per-joint parameter groups (``gains``, ``constraints`` with goals)."""
        return ('gains',) + (('constraints',) if self.goals is not None else ())

    # --- configuration -------------------------------------------------------------------
    def check(self, tset):
        """Raise ConfigError where ``tset`` does not fit the goal groups."""
        if self.goals is not None:
            self.goals.check(tset)

    def warm(self):
        """Return the first calls a configuration makes ahead of the stream (the goal check)."""
        if self.goals is None:
            return ()
        from ..control.goal import warm_check
        return (warm_check,)

    def configure(self, tset):
        """Take ``tset`` (after the routes did): goals aborted, gains declared and kept."""
        if self.goals is not None:
            self.goals.configure(tset)
        self.springs.configure(tset)

    def refusal(self, params):
        """Return why a runtime change of these parameters is refused ('')."""
        for table in self._tables:
            why = refusal(table, params)
            if why:
                return why
        return self.springs.refusal(params) or (
            self.goals.refusal(params) if self.goals is not None else '')

    def apply(self, params):
        """Take the validated new values (after a new configuration, if any)."""
        if self.goals is not None:
            self.goals.apply(params)
        for p in params:
            if p.name == COMMAND_TIMEOUT:
                self.deadline.set_timeout(seconds_to_ns(p.value))
                self._timer.rearm()
            elif p.name == ON_COMMAND_TIMEOUT:
                self.deadline.mode = p.value
        self.springs.apply(params)

    @property
    def counters(self):
        """Return the springs' and goals' /diagnostics counters."""
        return {**self.springs.counters,
                **(self.goals.counters if self.goals is not None else {})}

    # --- stopping ------------------------------------------------------------------------
    def stop(self, reason):
        """
        Abort every running goal (``reason``); send every commanded motor its safe command once.

        The plain safe command to the motors of the joints a stream or a goal commanded, a
        spring's own to its motors.
        """
        joints = set(self.deadline.streamed().tolist())
        if self.goals is not None:
            index = self.routes.commands.transmissions.joint_index if self.routes.commands \
                else {}
            for run in self.goals.runs:
                joints.update(index[j] for j in run.group.joints if j in index)
            self.goals.abort_all(reason, hold=False)
        sprung = self.sprung()
        self.send_safe_commands(sorted(joints - sprung))
        self.springs.stop()

    def sprung(self):
        """Return the set indices of the joints springs drive."""
        core = self.springs.core
        return set() if core is None else set(core.joints.tolist())

    def send_safe_commands(self, joints):
        """Publish on_command_timeout's command to the motors of ``joints`` (set indices)."""
        states = self.routes.states
        if states is None or not len(joints):
            return
        for msg in safe_command_messages(
                self.deadline, states, joints, self._now_ns(),
                self._node.get_clock().now().to_msg()):
            self._publish_command(msg)


class DeadlineTimer:
    """
    The deadline's timer on ``node``: a quarter of ``command_timeout`` (none while it is 0).

    At each tick, while ``armed()`` (active and configured): each joint that timed out is
    said once (:func:`trip_lines`), and ``send(joints)`` gets the joints due a plain safe
    command (the node sends their motors theirs, a joint spring's excepted). Before a
    deadline is judged, ``drain()`` takes the commands already received.
    :meth:`rearm` follows a new timeout.
    """

    def __init__(self, node, deadline, now_ns, armed, springs, send, drain=lambda: None):
        self._node, self._deadline, self._now_ns = node, deadline, now_ns
        self._armed, self._springs, self._send = armed, springs, send
        self._drain = drain
        self._timer = None
        self.rearm()

    def rearm(self):
        """(Re)make the timer for the deadline's timeout now."""
        if self._timer is not None:
            self._node.destroy_timer(self._timer)
            self._timer = None
        if self._deadline.timeout_ns:
            self._timer = self._node.create_timer(
                max(self._deadline.timeout_ns * 1e-9 / 4, 0.001), self.tick)

    def tick(self):
        """Log new trips; send the plain motors' safe command where due."""
        tset = self._armed()
        if tset is None:
            return
        if self._deadline.passing(self._now_ns()):
            self._drain()
        tripped, due = self._deadline.poll(self._now_ns())
        if not len(due):
            return
        sprung = self._springs()
        for line in trip_lines(self._deadline, tset, tripped, sprung):
            self._node.get_logger().error(line)
        plain = [i for i in due if i not in sprung]
        if plain:
            self._send(np.array(plain, dtype=np.intp))


def trip_lines(deadline, tset, joints, sprung=()):
    """
    Return the log line of ``joints`` (set indices) timing out now (a list: none or one).

    ``sprung``: the joints that joint springs drive (their own hold, in both outputs).
    """
    if not len(joints):
        return []
    seconds = deadline.timeout_ns * 1e-9
    plain = [i for i in joints if i not in sprung]
    springs = [i for i in joints if i in sprung]
    parts = []
    if plain:
        parts.append(f'sending {deadline.mode} to {", ".join(motors_of(tset, plain))} every '
                     f'{seconds:g} s')
    if springs:
        what = {'hold': 'hold at the positions measured now',
                'zero_velocity': 'keep their targets at zero velocity',
                'zero_effort': 'send no torque and no gains',
                'none': 'keep their last targets'}[deadline.mode]
        parts.append(f'the joint springs of {", ".join(tset.joint_names[i] for i in springs)} '
                     f'{what} ({deadline.mode})')
    return [f'no joint_commands for {seconds:g} s: {"; ".join(parts)}, until they resume']


def safe_command_messages(deadline, states, joints, now_ns, stamp):
    """
    Return the JointState messages of the plain safe command to ``joints``' motors.

    ``joints``: set indices (the plain joints due one); stamped ``stamp``; the positions
    measured now (``hold``).
    """
    tset = states.transmissions
    motors = motors_of(tset, joints)
    theta = states.measured(now_ns).motor_position
    positions = [theta[tset.actuator_index[m]] for m in motors]
    out = []
    for names, *fields in deadline.safe_commands(motors, positions):
        if not tset.units.identity:         # the drivers' units (a zero may not be 0)
            fields = tset.units.fields_to_driver([tset.actuator_index[m] for m in names],
                                                 fields)
        msg = JointState(name=list(names))
        msg.header.stamp = stamp
        msg.position, msg.velocity, msg.effort = (
            [] if a is None else doubles(a) for a in fields)
        out.append(msg)
    return out
