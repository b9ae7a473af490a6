"""
What a mapped command becomes at the bridge's edge, without ROS: springs, then drivers' units.

The command side maps joint commands to SI motor commands (:mod:`.commands`); on their way out:

* a series-elastic actuator's position, where the command carries its effort too, is moved
  by the deflection that passes that effort through its spring: ``θ* = θ - n_a δ*`` with
  ``k(δ*) = -n_a τ_a`` (NOTATION.md, "Second encoder"), so the joint reaches its commanded
  position under the commanded torque. A command of efforts alone to motors that all have
  springs gets positions too: ``θ`` the measured joints' (the outputs'), so the motor
  deflects its spring by the wanted torque (torque control through the spring; the effort
  stays the feed-forward, all a torque-mode drive reads). Otherwise a command is left as it
  is: a stiff gear's, which the spring passes on in steady state;
* then the drivers' units (:mod:`..transmissions.units`).
"""

import numpy as np


class CommandEdge:
    """A set's command edge (module docstring); falsy when it changes nothing."""

    def __init__(self, tset):
        self.units = None if tset.units.identity else tset.units
        self._tset = tset
        self._springs = [(i, tset.actuator(name).mechanical_reduction, tset.actuator(name).spring)
                         for i, name in enumerate(tset.actuator_names)
                         if tset.actuator(name).spring is not None]

    def __bool__(self):
        return self.units is not None or bool(self._springs)

    def out(self, cols, fields, measured=None):
        """
        Return a command's SI fields of actuators ``cols`` (last axis) as the motors take them.

        ``fields``: (position, velocity, effort), or a trajectory's (positions, velocities,
        accelerations, efforts); None where absent. ``measured(None)``: the state measured
        now (:class:`.measurement.Measured`), for efforts alone to springs.
        """
        fields = list(fields)
        if self._springs and fields[-1] is not None:
            if fields[0] is None and measured is not None and self._all_sprung(cols):
                q = measured(None).position
                theta = self._tset.joint_to_actuator('position', q)[cols]
                if np.isfinite(theta).all():
                    fields[0] = theta
            if fields[0] is not None:
                fields[0] = self.spring_positions(cols, fields[0], fields[-1])
        return fields if self.units is None else self.units.fields_to_driver(cols, fields)

    def _all_sprung(self, cols):
        """Return True when every actuator of ``cols`` has a spring."""
        return set(np.asarray(cols).tolist()) <= {col for col, _, _ in self._springs}

    def spring_positions(self, cols, position, effort):
        """Return ``position`` with each spring's motor moved by its deflection at ``effort``."""
        cols = np.asarray(cols)
        position = np.array(position, dtype=float)
        for col, n, spring in self._springs:
            at = np.flatnonzero(cols == col)
            if len(at):
                k = at[0]
                position[..., k] -= n * spring.deflection(-n * np.asarray(effort)[..., k])
        return position
