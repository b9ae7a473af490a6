"""
Limits on commands sent to motors: positions clamped, velocity and effort vectors scaled.

A command names some joints; through the transmissions it becomes set-points of some
actuators. Positions are clamped per joint to ``[lower, upper]``, then each motor's to its own
``[lower, upper]`` (:meth:`CommandLimits.clamp_actuators`: a motor is never sent a position
beyond its travel, even where that moves a differential's other joint). A velocity (or effort)
command is checked in both spaces at once: if any joint or actuator would exceed its
limit, the whole vector, joints and actuators alike, is multiplied by the one factor

    s = min(1, min_k limit_k / |x_k|)   over the command's joints and actuators

so its direction is kept (each motor gets the same share of what was asked) and the one
that limits it ends exactly at its limit. A trajectory is not limited but checked: a
point beyond a limit refuses it whole (:meth:`CommandLimits.check_points`).

>>> lim = CommandLimits(['a', 'b'], ['m1', 'm2'], lower=[-1, -1], upper=[1, 1],
...                     joint_velocity=[10, 10], joint_effort=[10, 10],
...                     actuator_velocity=[100, 100], actuator_effort=[2, 4])
>>> lim.clamp([1.5, 0.5])
(array([1. , 0.5]), ["position of joint 'a' 1.5 clamped to 1.0"])
>>> tau_a, notes = lim.scale('effort', [3.0, 1.0], [4.0, -2.0])[1:]
>>> tau_a, notes
(array([ 2., -1.]), ["effort of actuator 'm1' 4.0 beyond its limit 2.0: efforts scaled by 0.5"])
"""

import math

import numpy as np

from .errors import ConfigError


def _inverse(limits):
    """Return 1 / limit (0 where there is none, inf)."""
    return 1.0 / np.asarray(limits, dtype=float)


class CommandLimits:
    """The limits of the joints and actuators one command layout reaches (module docstring)."""

    __slots__ = ('joint_names', 'actuator_names', 'lower', 'upper', 'limited_position',
                 'actuator_lower', 'actuator_upper', 'limited_actuator_position',
                 '_inverse', '_limits', '_limited')

    def __init__(self, joint_names, actuator_names, lower, upper, joint_velocity,
                 joint_effort, actuator_velocity, actuator_effort, actuator_lower=None,
                 actuator_upper=None):
        self.joint_names = tuple(joint_names)
        self.actuator_names = tuple(actuator_names)
        self.lower = np.asarray(lower, dtype=float)
        self.upper = np.asarray(upper, dtype=float)
        self.limited_position = bool(np.isfinite(self.lower).any()
                                     or np.isfinite(self.upper).any())
        n_act = len(self.actuator_names)
        self.actuator_lower = np.full(n_act, -np.inf) if actuator_lower is None else \
            np.asarray(actuator_lower, dtype=float)
        self.actuator_upper = np.full(n_act, np.inf) if actuator_upper is None else \
            np.asarray(actuator_upper, dtype=float)
        self.limited_actuator_position = bool(np.isfinite(self.actuator_lower).any()
                                              or np.isfinite(self.actuator_upper).any())
        self._limits = {'velocity': (np.asarray(joint_velocity, dtype=float),
                                     np.asarray(actuator_velocity, dtype=float)),
                        'effort': (np.asarray(joint_effort, dtype=float),
                                   np.asarray(actuator_effort, dtype=float))}
        self._inverse = {kind: tuple(_inverse(x) for x in pair)
                         for kind, pair in self._limits.items()}
        # Per kind, (joint side limited, actuator side limited); () when neither is.
        self._limited = {}
        for kind, pair in self._limits.items():
            sides = tuple(bool(np.isfinite(x).any()) for x in pair)
            self._limited[kind] = sides if any(sides) else ()

    def joints_within(self, kind, joint_values):
        """Return whether every joint's |value| of ``kind`` is within its limit (NaN: no)."""
        sides = self._limited[kind]
        if not sides or not sides[0]:
            return True
        return bool((np.abs(joint_values) * self._inverse[kind][0]).max() <= 1.0)

    def magnitude_limits(self, kind):
        """Return (joint limits, actuator limits) of ``kind`` ('velocity' or 'effort')."""
        return self._limits[kind]

    def clamp(self, positions):
        """Return ``(positions clamped to the joint limits, one note per clamped joint)``."""
        x = np.asarray(positions, dtype=float)
        if not self.limited_position:
            return x, []
        out = np.minimum(np.maximum(x, self.lower), self.upper)
        if (out == x).all():            # the usual case: nothing to say (NaN is not equal)
            return out, []
        changed = np.flatnonzero(out != x)
        return out, [f'position of joint {self.joint_names[i]!r} {float(x[i])!r} clamped to '
                     f'{float(out[i])!r}' for i in changed]

    def clamp_actuators(self, positions):
        """Return ``(motor positions clamped to the motors' limits, one note per motor)``."""
        x = np.asarray(positions, dtype=float)
        if not self.limited_actuator_position:
            return x, []
        out = np.minimum(np.maximum(x, self.actuator_lower), self.actuator_upper)
        if (out == x).all():
            return out, []
        changed = np.flatnonzero(out != x)
        return out, [f'position of actuator {self.actuator_names[i]!r} {float(x[i])!r} '
                     f'clamped to {float(out[i])!r}' for i in changed]

    def scale(self, kind, joint_values, actuator_values):
        """
        Return ``(joint values, actuator values, notes)`` of a ``kind`` command, limited.

        ``kind`` is 'velocity' or 'effort'. Unchanged (the same arrays) when within every
        limit; otherwise both scaled by the one factor, the limiting value set exactly to
        its limit, and one note naming it, the value asked, the limit and the factor.
        """
        sides = self._limited[kind]
        if not sides:
            return joint_values, actuator_values, []
        joint_values = np.asarray(joint_values, dtype=float)
        actuator_values = np.asarray(actuator_values, dtype=float)
        inv_j, inv_a = self._inverse[kind]
        # Only the sides with a finite limit are looked at: a message costs three numpy
        # calls per limited side when nothing is exceeded.
        ratio_j = np.abs(joint_values) * inv_j if sides[0] else None
        ratio_a = np.abs(actuator_values) * inv_a if sides[1] else None
        worst_j = ratio_j.max() if sides[0] else 0.0
        worst_a = ratio_a.max() if sides[1] else 0.0
        if not (worst_j > 1.0 or worst_a > 1.0):
            return joint_values, actuator_values, []
        limits_j, limits_a = self._limits[kind]
        if worst_a >= worst_j:
            k = int(np.argmax(ratio_a))
            asked, limit, who = actuator_values[k], limits_a[k], ('actuator', self.actuator_names)
        else:
            k = int(np.argmax(ratio_j))
            asked, limit, who = joint_values[k], limits_j[k], ('joint', self.joint_names)
        factor = float(limit / abs(asked))     # one rounding: x * (L / |x|) is L or next to it
        joints = joint_values * factor
        actuators = actuator_values * factor
        (actuators if who[0] == 'actuator' else joints)[k] = math.copysign(limit, asked)
        note = (f'{kind} of {who[0]} {who[1][k]!r} {float(asked)!r} beyond its limit '
                f'{float(limit)!r}: {kind}s scaled by {factor:.3g}')
        return joints, actuators, [note]

    def scale_through_losses(self, joint_values, outputs, gain, offset):
        """
        Return ``(joint efforts, motor efforts, notes)`` of an effort command through losses.

        The motors' efforts are ``gain * outputs + offset`` (:meth:`.losses.Losses.
        commanded_parts`: the stage's gain of each output's direction, its motor's friction
        and rotor, which do not scale with the command). Within every limit: unchanged;
        otherwise the joint efforts and the stage outputs are scaled by the one largest
        factor ``k`` in [0, 1] that keeps every joint and motor within its limit (the
        command's direction kept, as :meth:`scale` does), and a note names the one that
        limits it, its effort asked and its limit. Where a motor's friction alone is beyond
        its limit (k = 0 cannot help), its effort is held at the limit, said too.
        """
        joint_values = np.asarray(joint_values, dtype=float)
        a = np.asarray(gain, dtype=float) * np.asarray(outputs, dtype=float)
        offset = np.asarray(offset, dtype=float)
        motors = a + offset
        limit_j, limit_a = self._limits['effort']
        if (not self._limited['effort'] or ((np.abs(joint_values) <= limit_j).all()
                                            and (np.abs(motors) <= limit_a).all())):
            return joint_values, motors, []
        # The largest k with |k x_j| <= L_j and |k a + offset| <= L_a, per joint and motor.
        with np.errstate(divide='ignore', invalid='ignore'):
            k_j = np.where(joint_values != 0, limit_j / np.abs(joint_values), np.inf)
            room = np.where(a > 0, limit_a - offset, limit_a + offset)
            k_a = np.where(a != 0, room / np.abs(a), np.inf)
        k_all = np.concatenate([k_j, k_a])
        worst = int(np.argmin(k_all))
        factor = float(min(1.0, max(0.0, k_all[worst])))
        joints = joint_values * factor
        out = np.clip(a * factor + offset, -limit_a, limit_a)
        lossy = ''
        if worst < len(k_j):
            who, asked, limit = f'joint {self.joint_names[worst]!r}', joint_values[worst], \
                limit_j[worst]
        else:
            m = worst - len(k_j)
            who, asked, limit = f'actuator {self.actuator_names[m]!r}', motors[m], limit_a[m]
            lossy = " (its gear stage's losses included)"
        notes = [f'effort of {who} {float(asked)!r} beyond its limit {float(limit)!r}{lossy}: '
                 f'efforts scaled by {factor:.3g}']
        stuck = np.flatnonzero(np.abs(offset) > limit_a)
        notes += [f'friction of actuator {self.actuator_names[m]!r} {float(offset[m])!r} '
                  f'beyond its effort limit {float(limit_a[m])!r}: held at the limit'
                  for m in stuck]
        return joints, out, notes

    def check_points(self, kind, joint_values, actuator_values=None, lossy=False):
        """
        Raise ConfigError naming the first point beyond a limit, its joint or actuator.

        ``joint_values`` and ``actuator_values`` are ``(points, n)``; ``kind`` is
        'position', 'velocity' or 'effort'; ``lossy``: the actuators' efforts include their
        gear stages' losses (the refusal says so).
        """
        if kind == 'position':
            for values, lower, upper, space, names in (
                    (joint_values, self.lower, self.upper, 'joint', self.joint_names),
                    (actuator_values, self.actuator_lower, self.actuator_upper, 'actuator',
                     self.actuator_names)):
                if values is None:
                    continue
                bad = (values < lower) | (values > upper)
                if bad.any():
                    p, k = np.argwhere(bad)[0]
                    raise ConfigError(
                        f'point {p}: position of {space} {names[k]!r} '
                        f'{float(values[p, k])!r} is beyond its limits '
                        f'[{float(lower[k])!r}, {float(upper[k])!r}]')
            return
        if not self._limited[kind]:
            return
        for values, limits, space, names in (
                (joint_values, self._limits[kind][0], 'joint', self.joint_names),
                (actuator_values, self._limits[kind][1], 'actuator', self.actuator_names)):
            bad = np.abs(values) > limits
            if bad.any():
                p, k = np.argwhere(bad)[0]
                raise ConfigError(f'point {p}: {kind} of {space} {names[k]!r} '
                                  f'{float(values[p, k])!r} is beyond its limit '
                                  f'{float(limits[k])!r}' + (
                                      " (its gear stage's losses included)" if lossy
                                      and space == 'actuator' else ''))
