"""
What the bridge says of itself on ``/diagnostics``, without a node.

:func:`status` turns the state side, the command side and the command deadline into what
``/diagnostics`` carries (counters, warning, error, extra values) and the warnings the node
logs once a period. The node only publishes and logs them (tests call them directly).
"""

import dataclasses

import numpy as np


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
    outputs = states.outputs
    if outputs is not None and (~outputs.in_use).any():
        warnings.append("output encoders stale, the motors' used: " + ', '.join(
            n for n, used in zip(outputs.names, outputs.in_use) if not used))
    since = deadline.timed_out_since_ns()
    error = outputs.tripped_text() if outputs is not None else ''
    if error:
        error = (f'deflection beyond its limit, joints withheld '
                 f'({", ".join(states.deflected_joints)}): {error}')
    if since is not None:
        tripped = np.flatnonzero(deadline.tripped)
        joints = [states.transmissions.joint_names[i] for i in tripped]
        motors = motors_of(states.transmissions, tripped)
        error = (error + '; ' if error else '') + (
                 f'command timeout: no joint_commands for {", ".join(joints)} since '
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
             'command_timeout': 'tripped' if since is not None else 'ok', **routes,
             'refused_linkages': '; '.join(refused),
             'encoders_waiting': '; '.join(f'{t}: {why}' for t, why in waiting.items()),
             'encoder_turns': ','.join(
                 f'{a}={t}' for a, t in states.encoders.turns_by_name().items()),
             'dropped_overload': dropped,
             'deflections': '' if outputs is None else ','.join(
                 f'{a}={d:.6g}' for a, d in zip(outputs.actuators, outputs.deflection)),
             'not_bridged_joints': ','.join(
                 j for t in states.transmissions.skipped for j in t.joints)}
    return Status(counters, '; '.join(warnings), error, extra, tuple(logged))


def motors_of(tset, joints):
    """Return the names of the motors of the transmissions of ``joints`` (set indices)."""
    return tuple(tset.actuator_names[a] for a in tset.membership.motors_of(list(joints)))
