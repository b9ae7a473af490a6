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

>>> spec = output_encoder({'name': 'knee_out', 'deflection_limit': 0.05}, 'encoder', 'knee')
>>> spec.name, spec.velocity_from, spec.deflection_limit
('knee_out', 'motor', 0.05)
"""

import dataclasses
import math

from . import _checks
from .errors import ConfigError

KEYS = ('name', 'velocity_from', 'deflection_limit', 'offset')
VELOCITY_FROM = ('motor', 'output')


@dataclasses.dataclass(frozen=True)
class OutputEncoderSpec:
    """One actuator's output encoder: its name on the actuator-state topics, and its use."""

    name: str
    velocity_from: str = 'motor'
    deflection_limit: float = math.inf
    offset: float = 0.0


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
    return OutputEncoderSpec(name, velocity_from, limit, offset)
