"""
What the bridge commands on its own, wired: goals, joint springs, the command deadline.

:class:`ExecutionWiring` holds the command deadline
(:class:`~transmission_bridge.mapping.deadline.CommandDeadline`), the joint springs
(:mod:`.springs`), the FollowJointTrajectory servers (:mod:`.goal_servers`, imported only
with ``follow_joint_trajectory``: a robot that takes no goals pays nothing for rclpy.action
and control_msgs), the deadline's timer and the plain motors' safe command; their
parameters (declared, checked, applied) and their part of a configuration and of a stop.
The node creates it and calls it; every law it applies is
:mod:`transmission_bridge.control`'s, every map :mod:`transmission_bridge.mapping`'s.
"""

from . import supervision
from .settings import (COMMAND_TIMEOUT, GOAL_SETTINGS, ON_COMMAND_TIMEOUT, SPRING_SETTINGS)
from .springs import Springs
from ..mapping.deadline import CommandDeadline
from ..ros.named_input import seconds_to_ns
from ..ros.node_main import StartupError
from ..ros.settings import declare_settings, refusal
from ..transmissions import ConfigError


class ExecutionWiring:
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
        self._timer = supervision.DeadlineTimer(
            node, self.deadline, self._now_ns,
            lambda: routes.states.transmissions if self._active[0] and routes.states else None,
            self.sprung, self.send_safe_commands)

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
        from .goal_servers import warm_check
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
        for msg in supervision.safe_command_messages(
                self.deadline, states, joints, self._now_ns(),
                self._node.get_clock().now().to_msg()):
            self._publish_command(msg)
