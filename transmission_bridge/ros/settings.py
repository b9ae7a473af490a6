"""
A node's own parameters as one table: declared, and checked alike at start-up and at runtime.

Each :class:`Setting` names a parameter, its default, type, description (units) and, where a
value can be wrong beyond its type, a ``check`` returning why (``''``: fine). A node declares
its table with :func:`declare_settings` (an invalid value stops start-up with that reason) and
refuses a runtime change with :func:`refusal` (the same words). Tests check a table without a
node: the checks are plain functions of the value.

>>> table = settings_by_name([Setting('stale_timeout', 0.5, float, 'a time, s',
...                                   check=finite_positive('stale_timeout'))])
>>> refusal(table, [('stale_timeout', 0.0)])
'stale_timeout must be a finite number > 0, got 0.0'
>>> refusal(table, [('other', 0.0), ('stale_timeout', 2.0)])
''
"""

import dataclasses
import math

from .node_main import StartupError
from .parameters import declare


@dataclasses.dataclass(frozen=True)
class Setting:
    """One parameter of a node's own: what :func:`.parameters.declare` takes, and a check."""

    name: str
    default: object
    kind: object                # float, int, bool, str, 'string_array', 'double_array'
    description: str
    constraints: str = ''
    read_only: bool = False
    check: object = None        # value -> '' or why it is refused (the whole sentence)

    def reason(self, value):
        """Return why ``value`` is refused ('' if it is fine)."""
        return self.check(value) if self.check is not None else ''


def settings_by_name(settings):
    """Return ``{name: Setting}`` of ``settings`` (a table, in declaration order)."""
    return {s.name: s for s in settings}


def declare_settings(node, table):
    """Declare every setting of ``table`` on ``node``; return ``{name: value}``, checked."""
    values = {}
    for s in table.values():
        value = declare(node, s.name, s.default, s.kind, s.description, read_only=s.read_only,
                        constraints=s.constraints)
        why = s.reason(value)
        if why:
            raise StartupError(why)
        values[s.name] = value
    return values


def refusal(table, params):
    """
    Return why the first of ``params`` that ``table`` holds is refused ('' if none is).

    ``params``: rclpy Parameters, or ``(name, value)`` pairs.
    """
    for p in params:
        name, value = (p.name, p.value) if hasattr(p, 'name') else p
        setting = table.get(name)
        why = setting.reason(value) if setting is not None else ''
        if why:
            return why
    return ''


def per_joint_values(node, joints, fields, error):
    """
    Declare each joint's parameters (0.0, ``>= 0``) where missing; yield (joint, field, value).

    ``fields``: ``{field: (name_of, description)}``, ``name_of(joint)`` the parameter's name.
    A params file's value is kept; one that is not a finite number >= 0 raises ``error``.
    """
    for joint in joints:
        for field, (name_of, text) in fields.items():
            name = name_of(joint)
            value = (node.get_parameter(name).value if node.has_parameter(name)
                     else declare(node, name, 0.0, float, text, constraints='>= 0'))
            why = finite_non_negative(name)(value)
            if why:
                raise error(why)
            yield joint, field, value


def prefixed_refusal(params, prefix, skip=()):
    """Return why a value of ``params`` under ``prefix`` is not a finite number >= 0 ('')."""
    for p in params:
        if p.name.startswith(prefix) and p.name not in skip:
            why = finite_non_negative(p.name)(p.value)
            if why:
                return why
    return ''


# --- checks ------------------------------------------------------------------------------

def finite_positive(name):
    """Return a check: a finite float > 0."""
    def check(value):
        if isinstance(value, float) and math.isfinite(value) and value > 0:
            return ''
        return f'{name} must be a finite number > 0, got {value!r}'
    return check


def finite_non_negative(name, unit='number'):
    """Return a check: a finite float >= 0."""
    def check(value):
        if isinstance(value, float) and math.isfinite(value) and value >= 0:
            return ''
        return f'{name} must be a finite {unit} >= 0, got {value!r}'
    return check


def one_of(name, choices):
    """Return a check: one of ``choices``."""
    def check(value):
        return '' if value in choices else (
            f'{name} must be one of {", ".join(choices)}, got {value!r}')
    return check


def whole_non_negative(name):
    """Return a check: an integer >= 0 (bool is not one)."""
    def check(value):
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return ''
        return f'{name} must be an integer >= 0, got {value!r}'
    return check
