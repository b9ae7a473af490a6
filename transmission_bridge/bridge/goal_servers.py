"""
The bridge's FollowJointTrajectory action servers: ROS wiring of :mod:`..control`'s goals.

One controller for all of the bridge's joints (``~/follow_joint_trajectory``) and one per
group ``N`` of ``trajectory_controllers`` (``~/N/follow_joint_trajectory``), each with its
``controller_state`` and ``query_state``. A goal is checked whole before anything moves
(:func:`~transmission_bridge.control.goal.plan_goal`); an accepted one owns its joints
(:mod:`transmission_bridge.mapping.ownership`: streamed ``joint_commands`` efforts for them
are its feed-forward, their positions and velocities are ignored) and is followed at every
actuator state that measures its joints (:meth:`GoalServers.on_joint_state`, after
joint_states is published): the desired state goes to the motors through the routes
(:meth:`~transmission_bridge.mapping.goal_route.GoalRoute.command`: mapped, or a spring's
targets); a common state in one compiled call into the layout's message
(:meth:`~transmission_bridge.control.following.Execution.follow`). A goal is not a stream:
its joints leave the command deadline while it runs and after it ends. A goal that ends
other than by success leaves its joints holding where they are measured; stale actuators
abort it (judged after the queued states). A goal sent before its joints are measured waits
up to :data:`START_WAIT` for their states. doc/moveit.md.

Imported only by a bridge with ``follow_joint_trajectory`` true: rclpy.action loads with it.
"""

from action_msgs.msg import GoalStatus
import numpy as np
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from std_msgs.msg import Header

from .settings import (ALLOW_NONZERO_END, ALLOW_PARTIAL, constraint_name, CONTROLLERS,
                       GOAL_SETTINGS as SETTINGS, GOAL_TIME, MONITOR_RATE, PER_JOINT_TOLERANCES,
                       STOPPED_VELOCITY)
from ..control import following, goal_loops, results
from ..control.following import Execution, RunningGoal
from ..control.goal import plan_goal
from ..control.results import Outcome, Refused, Unmeasured
from ..control.tolerances import tolerances
from ..ros.configurable import RELIABLE_10
from ..ros.conversions import stamp_to_ns
from ..ros.parameters import declare
from ..ros.settings import per_joint_values, prefixed_refusal
from ..transmissions import ConfigError

try:        # control_msgs: ros-jazzy-control-msgs on a robot; not on PyPI (doc/moveit.md)
    from control_msgs.action import FollowJointTrajectory
    from control_msgs.msg import JointTrajectoryControllerState
    from control_msgs.srv import QueryTrajectoryState
    from .goal_feedback import FeedbackMessages, seconds
except ImportError:
    FollowJointTrajectory = None

#: Each end's action status and counter.
STATUS = {following.SUCCEEDED: GoalStatus.STATUS_SUCCEEDED,
          following.CANCELED: GoalStatus.STATUS_CANCELED,
          following.ABORTED: GoalStatus.STATUS_ABORTED}
COUNTERS = {following.SUCCEEDED: 'goals_succeeded', following.CANCELED: 'goals_canceled',
            following.ABORTED: 'goals_aborted'}
#: How long a goal waits for its joints' first states, s (DDS found new motors in 1-3 s here).
START_WAIT = 5.0


class TrajectoryController:
    """One controller: its joints, its action server, state publisher and query service."""

    def __init__(self, name, joints):
        self.name, self.joints = name, tuple(joints)
        self.run = None
        self.server = self.state_pub = self.query = None
        self.messages = None            # FeedbackMessages, made at the first feedback
        self.motors = (None, None)      # (the set, its motors these joints reach)

    @property
    def prefix(self):
        """Return the controller's namespace under the node: ``~/`` or ``~/N/``."""
        return f'~/{self.name}/' if self.name else '~/'


class GoalServers:
    """Every FollowJointTrajectory controller of a bridge node (module docstring)."""

    def __init__(self, node, routes, publish_command, now_ns, values, active):
        self._node, self._routes, self._active = node, routes, active
        self._publish_command, self._now_ns = publish_command, now_ns
        self._values = dict(values)
        self.counters = {'goals_accepted': 0, 'goals_refused': 0, 'goals_succeeded': 0,
                         'goals_aborted': 0, 'goals_canceled': 0,
                         'streamed_commands_ignored': 0}
        self._joint_index = {}
        self._header = Header()
        self._ended = {}            # id(goal handle) -> (status, Outcome): for _finish
        self._waiting = {}          # id(goal handle) -> (group, handle, deadline ns)
        self._loops = None          # goal_loops.kernels(): the compiled step, False: none
        self.groups = [TrajectoryController('', ())]
        for name in self._values[CONTROLLERS]:
            joints = declare(node, f'{name}.joints', [], 'string_array',
                             f"joints of the controller '{name}' "
                             f'(~/{name}/follow_joint_trajectory)', read_only=True)
            if not joints:
                raise ConfigError(f"{name}.joints: the controller '{name}' named in "
                                  f'{CONTROLLERS} has no joints')
            self.groups.append(TrajectoryController(name, joints))
        if FollowJointTrajectory is None:
            node.get_logger().warning('control_msgs is not installed: no FollowJointTrajectory '
                                      'action (~/follow_joint_trajectory); doc/moveit.md')
            return
        for group in self.groups:
            self._serve(group)
        node.create_timer(1.0 / self._values[MONITOR_RATE], self._monitor)

    def destroy(self):
        """Destroy the action servers (before the node: collected later, they crash rclpy)."""
        for group in self.groups:
            if group.server is not None:
                group.server.destroy()

    @property
    def runs(self):
        """Return the goals running now."""
        return [g.run for g in self.groups if g.run is not None]

    def _serve(self, group):
        node = self._node
        # A goal is followed from the state callbacks, not by a coroutine that waits for its
        # end: rclpy resumes a waiting coroutine at every turn of the executor, which then
        # never sleeps (a whole core while a goal runs). So a goal is checked and started
        # when it is accepted, and "executed" once it has ended: the execute callback only
        # sets the terminal state and returns the result.
        group.server = ActionServer(
            node, FollowJointTrajectory, group.prefix + 'follow_joint_trajectory',
            execute_callback=self._finish,
            goal_callback=lambda goal: GoalResponse.ACCEPT,
            handle_accepted_callback=lambda handle: self._accepted(group, handle),
            cancel_callback=lambda handle: self._cancel(group, handle))
        group.state_pub = node.create_publisher(JointTrajectoryControllerState,
                                                group.prefix + 'controller_state', RELIABLE_10)
        group.query = node.create_service(
            QueryTrajectoryState, group.prefix + 'query_state',
            lambda request, response: self._query(group, request, response))

    # --- configuration -------------------------------------------------------------------
    def check(self, tset):
        """
        Raise ConfigError naming ``N.joints`` where a group does not fit ``tset``.

        An unknown joint, or a transmission a group covers only in part (two controllers
        would drive its motors).
        """
        for group in self.groups[1:]:
            try:
                tset.coverage(group.joints)
            except ConfigError as exc:
                raise ConfigError(f'{group.name}.joints {list(group.joints)}: {exc}') from None

    def configure(self, tset):
        """
        Make ``tset`` (checked) the configuration; declare ``constraints.<joint>.*``.

        Goals running are aborted (the configuration changed under them) and hold.
        """
        self.abort_all('the configuration changed (reload, a parameter or a new robot)')
        self.groups[0].joints = tuple(tset.joint_names)
        self._joint_index = tset.joint_index
        node = self._node
        fields = {which: (lambda j, w=which: constraint_name(j, w), text)
                  for which, text in PER_JOINT_TOLERANCES.items()}
        for _ in per_joint_values(node, tset.joint_names, fields, ConfigError):
            pass                        # read where used: a goal takes them when it starts

    def refusal(self, params):
        """Return why a runtime change of a ``constraints.*`` parameter is refused ('')."""
        return prefixed_refusal(params, 'constraints.', SETTINGS)

    def apply(self, params):
        """Take the new values of the settings (a goal running keeps its tolerances)."""
        for p in params:
            if p.name in SETTINGS:
                self._values[p.name] = p.value

    # --- goals ---------------------------------------------------------------------------
    def _accepted(self, group, handle, deadline_ns=None):
        """Check and start an accepted goal; a refused one ends, an unmeasured one waits."""
        try:
            self._waiting.pop(id(handle), None)
            self._start(group, handle)
        except Unmeasured as exc:
            if deadline_ns is None:
                deadline_ns = self._now_ns() + int(START_WAIT * 1e9)
                self._node.get_logger().info(f'{group.prefix}follow_joint_trajectory waits up '
                                             f'to {START_WAIT:g} s: {exc}')
            if self._now_ns() < deadline_ns and self._active[0]:
                self._waiting[id(handle)] = (group, handle, deadline_ns)    # _monitor retries
                return
            self._refuse(group, handle, Refused(exc.code, f'{exc} (waited {START_WAIT:g} s)'))
        except Refused as exc:
            self._refuse(group, handle, exc)

    def _refuse(self, group, handle, exc):
        self.counters['goals_refused'] += 1
        text = f'{results.CODE_NAMES[exc.code]}: {exc}'
        self._node.get_logger().error(f'{group.prefix}follow_joint_trajectory refused '
                                      f'before any command: {text}')
        self._ended[id(handle)] = (GoalStatus.STATUS_ABORTED, Outcome(exc.code, text))
        handle.execute()

    def _finish(self, handle):
        """Execute callback of an ended goal: its terminal state, and its result."""
        status, outcome = self._ended.pop(id(handle))
        if status == GoalStatus.STATUS_SUCCEEDED:
            handle.succeed()
        elif status == GoalStatus.STATUS_CANCELED:
            handle.canceled()
        else:
            handle.abort()
        return FollowJointTrajectory.Result(error_code=outcome.code, error_string=outcome.text)

    def _start(self, group, handle):
        """Check ``handle``'s goal and make it ``group``'s run; raise Refused otherwise."""
        routes, goal = self._routes, handle.request
        if routes.commands is None or not self._active[0]:
            raise Refused(results.INVALID_GOAL, 'the bridge is not active (lifecycle): '
                          'nothing is commanded')
        if goal.multi_dof_trajectory.points:
            raise Refused(results.INVALID_GOAL, 'multi_dof_trajectory is not supported')
        traj, values = goal.trajectory, self._values
        tset = routes.commands.transmissions
        idx = [self._joint_index[j] for j in group.joints]
        tol = tolerances(
            group.joints, [self._param(constraint_name(j, 'trajectory')) for j in group.joints],
            [self._param(constraint_name(j, 'goal')) for j in group.joints],
            values[STOPPED_VELOCITY], values[GOAL_TIME],
            [(t.name, t.position, t.velocity, t.acceleration) for t in goal.path_tolerance],
            [(t.name, t.position, t.velocity, t.acceleration) for t in goal.goal_tolerance],
            seconds(goal.goal_time_tolerance))
        points = [(seconds(p.time_from_start), p.positions, p.velocities, p.accelerations,
                   p.effort) for p in traj.points]
        now = self._now_ns()
        measured = routes.states.measured(now)
        if not np.isfinite(measured.position[idx]).all() and routes.take_states is not None:
            routes.take_states()        # the states queued behind the goal, taken first
            now = self._now_ns()
            measured = routes.states.measured(now)
        plan = plan_goal(
            tset, group.joints, list(traj.joint_names), points,
            (measured.position[idx], measured.velocity[idx]), now,
            stamp_to_ns(traj.header.stamp), tol, values[ALLOW_PARTIAL],
            values[ALLOW_NONZERO_END], routes.commands.limit_commands)
        run = RunningGoal(handle, Execution(plan), group, self.counters)
        for key, (other, older, _) in list(self._waiting.items()):     # waiting ones too
            if set(other.joints) & set(group.joints):
                del self._waiting[key]
                self._refuse(other, older, Refused(results.INVALID_GOAL, 'replaced by a '
                                                   f'new goal on {group.prefix}follow_joint_'
                                                   'trajectory'))
        for other in self.runs:         # a new goal replaces those it shares joints with
            if set(other.group.joints) & set(group.joints):
                self._end(other, following.replaced(f'{group.prefix}follow_joint_trajectory'))
        group.run = run
        routes.owners.set_goal(idx, run)
        routes.follow('goals', self.on_joint_state)
        routes.deadline.forget(idx)     # a goal is not a stream: its joints never time out
        self.counters['goals_accepted'] += 1
        self._node.get_logger().info(
            f'{group.prefix}follow_joint_trajectory: {len(points)} points over '
            f'{plan.spline.duration:g} s ({plan.spline.kind}) for {", ".join(traj.joint_names)}')
        return run

    def _cancel(self, group, handle):
        run = group.run
        if self._waiting.pop(id(handle), None) is not None:
            self._ended[id(handle)] = (GoalStatus.STATUS_CANCELED, Outcome(
                results.SUCCESSFUL, 'canceled before it started'))
            handle.execute()
        elif run is not None and run.handle is handle:
            self._publish(self._end(run, following.canceled()))
        return CancelResponse.ACCEPT

    def _end(self, run, end):
        """
        Carry out ``end`` (:class:`~transmission_bridge.control.following.End`) once.

        The goal's joints are freed, its action ends; returns the hold's ``(send, message)``
        pairs (none if ``end`` does not hold), which the caller publishes.
        """
        if run.ended is not None:
            return ()
        self._routes.owners.clear_goal(run)
        if run.group.run is run:
            run.group.run = None
        if not self.runs:
            self._routes.follow('goals', None)
        self.counters[COUNTERS[end.status]] += 1
        if end.status == following.ABORTED:
            self._node.get_logger().error(f'{run.group.prefix}follow_joint_trajectory aborted: '
                                          f'{results.CODE_NAMES[end.outcome.code]}: '
                                          f'{end.outcome.text}')
        run.ended = (STATUS[end.status], end.outcome)
        self._ended[id(run.handle)] = run.ended
        run.handle.execute()
        return self._hold(run.group.joints) if end.hold else ()

    def abort_all(self, reason, hold=True):
        """Abort every goal, running or waiting (INVALID_GOAL, ``reason``); joints held."""
        for group, handle, _ in list(self._waiting.values()):
            del self._waiting[id(handle)]
            self._refuse(group, handle, Refused(results.INVALID_GOAL, reason))
        for run in self.runs:
            self._publish(self._end(run, following.aborted(reason, hold)))

    def _hold(self, joints):
        """Return the ``(send, message)`` pairs holding ``joints`` where they are measured."""
        states = self._routes.states
        if states is None or self._routes.commands is None:
            return ()
        idx = [self._joint_index[j] for j in joints if j in self._joint_index]
        held = following.hold_at([j for j in joints if j in self._joint_index],
                                 states.measured().position[idx])
        if held is None:
            return ()
        msg = self._command(*held, None)
        return () if msg is None else ((self._publish_command, msg),)

    @staticmethod
    def _publish(pairs):
        for send, message in pairs:
            send(message)

    def _command(self, names, positions, velocities, efforts, stamp_ns=None,
                 accelerations=None):
        """Return the message commanding a goal's joints, stamped ``stamp_ns`` (None: none)."""
        now = self._now_ns() if stamp_ns is None else stamp_ns
        return self._routes.goals.command(names, positions, velocities, efforts,
                                          self._header_at, now, accelerations)

    def _header_at(self, now_ns):
        """Return the header stamped ``now_ns`` (one, reused: publishing copies it out)."""
        header = self._header
        header.stamp.sec, header.stamp.nanosec = divmod(now_ns, 10**9)
        return header

    # --- at every state ------------------------------------------------------------------
    def on_joint_state(self, out):
        """
        Follow the running goals whose joints the state just published measured.

        A generator of ``(send, message)``: each goal's command, published by the routes
        (:meth:`~transmission_bridge.mapping.routes.Routes.follow_state`) before the next's.
        """
        runs = self.runs
        if not runs:
            return
        measured, now = None, self._now_ns()
        if self._loops is None:
            self._loops = goal_loops.kernels() or False
        for run in runs:
            joints = run.group.joints
            idx = run.columns(self._joint_index)
            # The common state in one compiled call (sampled, judged, mapped), else the steps.
            data = (self._routes.goals.step(run.execution, self._loops, joints, idx, now)
                    if self._loops and not run.feed_forward else None)
            if data is not None:
                yield self._publish_command, data
                continue
            measured = measured or self._routes.states.measured()
            at = run.at_state(now, measured.position[idx], measured.velocity[idx], idx)
            if at is None:
                continue
            if at.desired is not None:
                p, v, a, e = at.desired
                msg = self._command(joints, p, v, e, now, a)
                if msg is not None:
                    yield self._publish_command, msg
            if at.end is not None:
                yield from self._end(run, at.end)

    # --- monitoring ----------------------------------------------------------------------
    def _monitor(self):
        """At action_monitor_rate: waiting goals retried, stale actuators abort; feedback."""
        for group, handle, deadline_ns in list(self._waiting.values()):
            self._accepted(group, handle, deadline_ns)
        states = self._routes.states
        for group in self.groups:
            run = group.run
            if run is None:
                continue
            if states is not None and states.stale_ns is not None:
                tset = states.transmissions
                if group.motors[0] is not tset:
                    group.motors = (tset, tset.coverage(group.joints)[1])
                act_idx = group.motors[1]
                stale = self._routes.stale(act_idx)     # may take queued states: and end it
                if group.run is not run:
                    continue
                if stale.any():
                    mine = [tset.actuator_names[i] for i in np.asarray(act_idx)[stale]]
                    self._publish(self._end(run, following.stale(mine, states.stale_ns * 1e-9)))
                    continue
            last = run.execution.last
            if last is None:
                continue
            if group.messages is None:
                group.messages = FeedbackMessages(group.joints)
            feedback, state = group.messages.fill(last, self._node.get_clock().now().to_msg())
            run.handle.publish_feedback(feedback)
            group.state_pub.publish(state)

    def _query(self, group, request, response):
        run = group.run
        if run is None:
            response.success, response.message = False, 'no trajectory is running'
            return response
        plan = run.execution.plan
        p, v, a, _ = plan.desired((stamp_to_ns(request.time) - plan.start_ns) * 1e-9)
        response.success = True
        response.name = list(group.joints)
        response.position, response.velocity, response.acceleration = (
            p.tolist(), v.tolist(), a.tolist())
        return response

    def _param(self, name):
        return self._node.get_parameter(name).value
