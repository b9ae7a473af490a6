"""
A second encoder at an actuator's gear output: what it reads, and what the bridge makes of it.

Harmonic-drive arms, belt-driven legs and series-elastic actuators measure the output after the
gear as well as the motor before it. The output encoder of actuator ``a`` reads the gear's
output position ``x_o`` (rad or m: the motor's position divided by its
``mechanical_reduction`` ``n_a`` when nothing deflects, plus its ``offset``). NOTATION.md,
"Second encoder":

* the transmission maps ``n_a x_o`` in place of the motor's position (the joint's position comes
  from the output encoder, through the transmission), and ``n_a v_o`` in place of its velocity
  where ``velocity_from`` is ``output`` (the motor's, smoother, by default);
* the deflection is ``x_o - x_a / n_a`` (at the gear's output: the joint's units for a simple
  transmission without a joint reduction); beyond ``deflection_limit`` the joints of the
  actuator's transmission are withheld and /diagnostics goes to error, naming the actuator;
* an output encoder not heard from within the bridge's ``stale_timeout`` falls back to the
  motor's position (said once), and is taken again when it returns.

A series-elastic actuator's ``spring`` sits between the gear and the joint, its deflection
measured by the two encoders: the torque it passes to the joint (at the gear's output) is
``-(k(δ) + d δ̇)`` with ``k(δ)`` = ``stiffness · δ`` or the calibration ``table``
(interpolated, extended along its end segments), ``δ̇ = v_o - v_a / n_a``: positive where the
motor leads the output. The bridge maps it through the transmission (as ``τ / n_a`` at the
motor) in place of the motor's own torque.

>>> spec = output_encoder({'name': 'knee_out', 'deflection_limit': 0.05}, 'encoder', 'knee')
>>> spec.name, spec.velocity_from, spec.deflection_limit
('knee_out', 'motor', 0.05)
"""

import dataclasses
import math

import numpy as np

from . import _checks
from .errors import ConfigError

KEYS = ('name', 'velocity_from', 'deflection_limit', 'offset', 'topic')
SPRING_KEYS = ('stiffness', 'damping', 'table')
VELOCITY_FROM = ('motor', 'output')


@dataclasses.dataclass(frozen=True)
class OutputEncoderSpec:
    """One actuator's output encoder: its name on the actuator-state topics, and its use."""

    name: str
    velocity_from: str = 'motor'
    deflection_limit: float = math.inf
    offset: float = 0.0
    topic: str = ''                 # its own topic, which the bridge then subscribes ('': none)


def output_encoder(value, path, who):
    """Return the :class:`OutputEncoderSpec` of an ``output_encoder`` mapping (or refuse it)."""
    _checks.checked_mapping(value, f'{path} ({who})', KEYS)
    if 'name' not in value:
        raise ConfigError(f"{path} ({who}): missing key 'name' (the output encoder's name on "
                          'the actuator-state topics)')
    name = _checks.name(value['name'], f'{path}.name ({who})')
    velocity_from = value.get('velocity_from', 'motor')
    if velocity_from not in VELOCITY_FROM:
        raise ConfigError(f'{path}.velocity_from ({who}) must be motor or output, got '
                          f'{velocity_from!r}')
    limit = _checks.magnitude_limit(value.get('deflection_limit', math.inf),
                                    f'{path}.deflection_limit ({who})')
    offset = _checks.finite(value.get('offset', 0.0), f'{path}.offset ({who})')
    topic = value.get('topic', '')
    if not isinstance(topic, str) or topic != topic.strip():
        raise ConfigError(f'{path}.topic ({who}) must be a topic name, got {topic!r}')
    return OutputEncoderSpec(name, velocity_from, limit, offset, topic)


@dataclasses.dataclass(frozen=True)
class SpringSpec:
    """A series-elastic actuator's spring (module docstring): a stiffness, or a table."""

    stiffness: float = None
    damping: float = 0.0
    table: tuple = ()               # ((deflection, k(deflection)), ...), both increasing

    def force(self, deflection):
        """Return ``k(δ)`` of ``deflection`` (any shape): the spring's restoring magnitude."""
        deflection = np.asarray(deflection, dtype=float)
        if not self.table:
            return self.stiffness * deflection
        x, y = (np.array(c, dtype=float) for c in zip(*self.table))
        inside = np.interp(deflection, x, y)
        below = y[0] + (deflection - x[0]) * (y[1] - y[0]) / (x[1] - x[0])
        above = y[-1] + (deflection - x[-1]) * (y[-1] - y[-2]) / (x[-1] - x[-2])
        return np.where(deflection < x[0], below, np.where(deflection > x[-1], above, inside))

    def deflection(self, force):
        """Return the ``δ`` with ``k(δ) = force``: :meth:`force`'s inverse (both increase)."""
        force = np.asarray(force, dtype=float)
        if not self.table:
            return force / self.stiffness
        return SpringSpec(None, 0.0, tuple((y, x) for x, y in self.table)).force(force)

    def torque(self, deflection, rate):
        """Return the torque the spring passes to the joint side: ``-(k(δ) + d δ̇)``."""
        return -(self.force(deflection) + self.damping * np.asarray(rate, dtype=float))


def spring(value, path, who):
    """Return the :class:`SpringSpec` of a ``spring`` mapping (or refuse it, naming the key)."""
    _checks.checked_mapping(value, f'{path} ({who})', SPRING_KEYS)
    if ('stiffness' in value) == ('table' in value):
        raise ConfigError(f'{path} ({who}): give one of stiffness (N*m/rad or N/m) or table '
                          '([[deflection, torque], ...])')
    damping = _checks.non_negative(value.get('damping', 0.0), f'{path}.damping ({who})')
    if 'stiffness' in value:
        stiffness = _checks.as_number(value['stiffness'], f'{path}.stiffness ({who})')
        if not (math.isfinite(stiffness) and stiffness > 0.0):
            raise ConfigError(f'{path}.stiffness ({who}) must be finite and > 0, got '
                              f'{stiffness!r}')
        return SpringSpec(stiffness, damping)
    rows = value['table']
    where = f'{path}.table ({who})'
    if not isinstance(rows, list) or len(rows) < 2 or any(
            not isinstance(r, list) or len(r) != 2 for r in rows):
        raise ConfigError(f'{where} must be two or more [deflection, torque] pairs, got '
                          f'{rows!r}')
    table = tuple((_checks.finite(d, where), _checks.finite(t, where)) for d, t in rows)
    x, y = np.array(table).T
    if not ((np.diff(x) > 0).all() and (np.diff(y) > 0).all()):
        raise ConfigError(f'{where} must increase in both deflection and torque (a spring '
                          f'that stiffens or softens, never back), got {rows!r}')
    return SpringSpec(None, damping, table)
