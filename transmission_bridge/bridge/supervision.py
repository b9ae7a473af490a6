"""
What the bridge says and sends on its own: its status, the deadline's timer and safe command.

:func:`status` turns the state side, the command side and the command deadline into what
``/diagnostics`` carries (counters, warning, error, extra values) and the warnings the node
logs once a period; :class:`DeadlineTimer` polls the deadline a few times per timeout, logs
each trip once (:func:`trip_lines`) and sends the plain motors' safe command when due;
:func:`safe_command_messages` builds its JointState messages (``on_command_timeout``) at the
measured positions, for the motors of the plain joints only (a joint spring's timeout is its
own hold: :mod:`transmission_bridge.control.impedance`). The node only publishes and logs
them (tests call them directly).
"""

import dataclasses

import numpy as np
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


def status(routes, deadline, active, dropped, overload, now_ns, stale_ns):
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
    since = deadline.timed_out_since_ns()
    error = ''
    if since is not None:
        tripped = np.flatnonzero(deadline.tripped)
        joints = [states.transmissions.joint_names[i] for i in tripped]
        motors = _motors(states.transmissions, tripped)
        error = (f'command timeout: no joint_commands for {", ".join(joints)} since '
                 f'{(since - deadline.timeout_ns) * 1e-9:.3f} s; {deadline.mode} for '
                 f'{", ".join(motors)}')
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


def _motors(tset, joints):
    """Return the names of the motors of the transmissions of ``joints`` (set indices)."""
    names = {tset.joint_names[i] for i in joints}
    return tuple(a.name for spec in tset.specs if names & {j.name for j in spec.joints}
                 for a in spec.actuators)


class DeadlineTimer:
    """
    The deadline's timer on ``node``: a quarter of ``command_timeout`` (none while it is 0).

    At each tick, while ``armed()`` (active and configured): each joint that timed out is
    said once (:func:`trip_lines`), and ``send(joints)`` gets the joints due a plain safe
    command (the node sends their motors theirs, a joint spring's excepted).
    :meth:`rearm` follows a new timeout.
    """

    def __init__(self, node, deadline, now_ns, armed, springs, send):
        self._node, self._deadline, self._now_ns = node, deadline, now_ns
        self._armed, self._springs, self._send = armed, springs, send
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
        parts.append(f'sending {deadline.mode} to {", ".join(_motors(tset, plain))} every '
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
    motors = _motors(tset, joints)
    theta = states.measured(now_ns).motor_position
    positions = [theta[tset.actuator_index[m]] for m in motors]
    out = []
    for names, *fields in deadline.safe_commands(motors, positions):
        msg = JointState(name=list(names))
        msg.header.stamp = stamp
        msg.position, msg.velocity, msg.effort = (
            [] if a is None else doubles(a) for a in fields)
        out.append(msg)
    return out
