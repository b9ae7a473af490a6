"""
What the bridge says and sends on its own, without a node: its status, the watchdog's command.

:func:`status` turns the state side, the command side and the watchdog into what
``/diagnostics`` carries (counters, warning, error, extra values) and the warnings the node
logs once a period; :func:`safe_command_messages` builds the JointState messages of the
watchdog's safe command (``on_command_timeout``) at the measured positions; :func:`trip_text`
is the log line of a trip. The node only publishes and logs them (tests call them directly).
"""

import dataclasses

from sensor_msgs.msg import JointState

from ..ros.conversions import doubles


@dataclasses.dataclass(frozen=True)
class Status:
    """One ``/diagnostics`` report of the bridge, and the warnings to log with it."""

    counters: dict
    warning: str
    error: str
    extra: dict
    logged: tuple       # (text, throttle s) warnings the node logs


def unconfigured(lifecycle_state):
    """Return the warning of a bridge without a configuration, in ``lifecycle_state``."""
    return ('unconfigured (lifecycle)' if lifecycle_state == 'unconfigured'
            else 'waiting for a robot_description')


def status(routes, watchdog, active, dropped, overload, now_ns, stale_ns):
    """
    Return the bridge's :class:`Status` now, from its configured :class:`.routes.Routes`.

    ``dropped``: input the budget dropped; ``overload``: its warning since the last report
    ('' if none).
    """
    states, commands, typed_count = routes.states, routes.commands, routes.typed_count
    stale = states.stale_actuators(now_ns, stale_ns)
    refused = [f'{",".join(joints)}: {why}' for joints, why in states.refused.items()]
    waiting = states.encoders.ambiguous
    logged = []
    if refused:
        logged.append(('linkage states refused, their joints not published: '
                       + '; '.join(refused), 5.0))
    if waiting:
        logged.append(('encoder turns unknown, joints not published: '
                       + '; '.join(f'{t}: {why}' for t, why in waiting.items()), 5.0))
    left_out = states.stale_joints
    warnings = ([f'stale actuators: {", ".join(stale)}'] if stale else []) + (
        [f'joints left out (stale actuators): {", ".join(left_out)}'] if left_out
        else []) + ([overload] if overload else []) + (
        [f'linkage states refused: {"; ".join(refused)}'] if refused else []) + (
        [f'encoder turns unknown: {"; ".join(waiting)}'] if waiting else []) + (
        [] if active else ['inactive (lifecycle): nothing published'])
    error = (f'command timeout: no joint_commands since '
             f'{watchdog.tripped_ns * 1e-9 - watchdog.timeout_ns * 1e-9:.3f} s; sending '
             f'{watchdog.mode} to {", ".join(watchdog.commanded_names)}'
             if watchdog.tripped_ns is not None else '')
    command_counts = commands.counters.as_dict()
    trajectories = {k: command_counts.pop(k) for k in list(command_counts)
                    if k.startswith('traj')}
    routes = {'messages_fast': states.counters.received - typed_count['actuator_states'],
              'messages_typed': typed_count['actuator_states'],
              'commands_fast': commands.counters.received - typed_count['joint_commands'],
              'commands_typed': typed_count['joint_commands']}
    counters = {**states.counters.as_dict(), **trajectories,
                **{f'commands_{k}': v for k, v in command_counts.items()}}
    extra = {'stale_actuators': ','.join(stale), 'stale_joints': ','.join(left_out),
             'command_timeout': 'tripped' if error else 'ok', **routes,
             'refused_linkages': '; '.join(refused),
             'encoders_waiting': '; '.join(f'{t}: {why}' for t, why in waiting.items()),
             'encoder_turns': ','.join(
                 f'{a}={t}' for a, t in states.encoders.turns_by_name().items()),
             'dropped_overload': dropped,
             'not_bridged_joints': ','.join(
                 j for t in states.transmissions.skipped for j in t.joints)}
    return Status(counters, '; '.join(warnings), error, extra, tuple(logged))


class WatchdogTimer:
    """
    The watchdog's timer on ``node``: a quarter of ``command_timeout`` (none while it is 0).

    At each tick, while ``armed()`` (active and configured), a trip or a repeat logs and calls
    ``send()`` (the node publishes the safe command). :meth:`rearm` follows a new timeout.
    """

    def __init__(self, node, watchdog, now_ns, armed, send):
        self._node, self._watchdog, self._now_ns = node, watchdog, now_ns
        self._armed, self._send = armed, send
        self._timer = None
        self.rearm()

    def rearm(self):
        """(Re)make the timer for the watchdog's timeout now."""
        if self._timer is not None:
            self._node.destroy_timer(self._timer)
            self._timer = None
        if self._watchdog.timeout_ns:
            self._timer = self._node.create_timer(
                max(self._watchdog.timeout_ns * 1e-9 / 4, 0.001), self.tick)

    def tick(self):
        """Send the safe command if the watchdog is due (log the trip)."""
        if not self._armed():
            return
        due = self._watchdog.due(self._now_ns())
        if due == 'tripped':
            self._node.get_logger().error(trip_text(self._watchdog))
        if due is not None:
            self._send()


def trip_text(watchdog):
    """Return the log line of the watchdog tripping."""
    seconds = watchdog.timeout_ns * 1e-9
    return (f'no joint_commands for {seconds:g} s: sending {watchdog.mode} to '
            f'{", ".join(watchdog.commanded_names)} every {seconds:g} s until they resume')


def safe_command_messages(watchdog, states, now_ns, stamp):
    """Return the JointState messages of the watchdog's safe command, stamped ``stamp``."""
    positions = dict(zip(states.transmissions.actuator_names,
                         states.fresh_actuator_positions(now_ns)))
    out = []
    for command in watchdog.safe_commands(positions):
        msg = JointState(name=list(command.names))
        msg.header.stamp = stamp
        msg.position, msg.velocity, msg.effort = (
            [] if a is None else doubles(a)
            for a in (command.position, command.velocity, command.effort))
        out.append(msg)
    return out
