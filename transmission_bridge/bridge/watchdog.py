"""
The command watchdog, without ROS: when streaming commands stop, what the motors get instead.

A stream of ``joint_commands`` feeds :meth:`CommandWatchdog.commanded` with the actuators each
published command reached. When none came for ``timeout_ns``, :meth:`CommandWatchdog.due`
says so (``'tripped'``), then again every ``timeout_ns`` (``'repeat'``) until commands
resume (:meth:`commanded` then returns True: the node says so). :meth:`safe_commands` builds
what the motors are sent, for every actuator commanded since the stream began:

=================  ================================================================
``hold``           position at the measured actuator position, velocity 0, effort 0
                   (a motor whose position is stale or unknown: velocity 0, effort 0)
``zero_velocity``  velocity 0
``zero_effort``    effort 0
``none``           nothing (the timeout is still reported)
=================  ================================================================

``hold`` carries all three interfaces so that a driver in any mode stops: a position
servo holds where it is, a velocity loop stops, a torque-mode motor stops pushing.
Trajectories are not a stream and do not feed the watchdog.

>>> w = CommandWatchdog(timeout_ns=100, mode='zero_velocity')
>>> w.commanded(('m1', 'm2'), now_ns=0)
False
>>> w.due(50), w.due(100), w.due(150), w.due(200)
(None, 'tripped', None, 'repeat')
>>> [(c.names, c.velocity.tolist()) for c in w.safe_commands({})]
[(('m1', 'm2'), [0.0, 0.0])]
>>> w.commanded(('m1',), now_ns=210)         # resumed
True
"""

import math

import numpy as np

from .commands import ActuatorCommand

MODES = ('hold', 'zero_velocity', 'zero_effort', 'none')


class CommandWatchdog:
    """Streaming commands' watchdog (see the module docstring); ``timeout_ns`` 0: off."""

    def __init__(self, timeout_ns, mode='hold'):
        if mode not in MODES:
            raise ValueError(f'on_command_timeout must be one of {", ".join(MODES)}, '
                             f'got {mode!r}')
        self.timeout_ns = int(timeout_ns)
        self.mode = mode
        self.commanded_names = {}       # actuator name -> None, in the order first commanded
        self.last_ns = None             # when the last command was published
        self.tripped_ns = None          # when the timeout began (None: commands flowing)
        self._next_ns = None
        self._names = None

    def commanded(self, names, now_ns):
        """Note a command published to ``names`` at ``now_ns``; True if it ends a timeout."""
        if names is not self._names:        # the mapper's cached tuple: most often the same
            self._names = names
            for name in names:
                self.commanded_names.setdefault(name)
        self.last_ns = now_ns
        if self.tripped_ns is None:
            return False
        self.tripped_ns = self._next_ns = None
        return True

    def due(self, now_ns):
        """
        Return ``'tripped'`` or ``'repeat'`` when a safe command is due at ``now_ns``, else None.

        Nothing is due while off, before the first command, or while commands flow.
        """
        if not self.timeout_ns or self.last_ns is None:
            return None
        if self.tripped_ns is None:
            if now_ns - self.last_ns < self.timeout_ns:
                return None
            self.tripped_ns = self.last_ns + self.timeout_ns
            self._next_ns = now_ns + self.timeout_ns
            return 'tripped'
        if now_ns < self._next_ns:
            return None
        self._next_ns = now_ns + self.timeout_ns
        return 'repeat'

    def forget(self):
        """Forget the stream (new configuration, deactivation): nothing due until it restarts."""
        self.commanded_names = {}
        self.last_ns = self.tripped_ns = self._next_ns = self._names = None

    def safe_commands(self, positions):
        """
        Return the :class:`~.commands.ActuatorCommand` list to send every commanded actuator.

        ``positions``: {actuator name: measured position}, NaN or missing where unknown or
        stale (``hold`` gives those velocity and effort 0 in a message of their own).
        """
        names = tuple(self.commanded_names)
        if not names or self.mode == 'none':
            return []
        zeros = np.zeros(len(names))
        if self.mode == 'zero_velocity':
            return [ActuatorCommand(names, None, zeros, None)]
        if self.mode == 'zero_effort':
            return [ActuatorCommand(names, None, None, zeros)]
        known = [n for n in names if math.isfinite(positions.get(n, math.nan))]
        unknown = tuple(n for n in names if n not in set(known))
        out = []
        if known:
            z = np.zeros(len(known))
            out.append(ActuatorCommand(tuple(known), np.array([positions[n] for n in known]),
                                       z, z.copy()))
        if unknown:
            z = np.zeros(len(unknown))
            out.append(ActuatorCommand(unknown, None, z, z.copy()))
        return out
