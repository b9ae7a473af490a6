"""Declaring typed, described parameters from one table, with one-line errors."""

from rcl_interfaces.msg import ParameterDescriptor, ParameterType
from rclpy.exceptions import InvalidParameterTypeException
from rclpy.parameter import Parameter

from .node_main import StartupError

_TYPES = {
    float: (ParameterType.PARAMETER_DOUBLE, Parameter.Type.DOUBLE),
    int: (ParameterType.PARAMETER_INTEGER, Parameter.Type.INTEGER),
    str: (ParameterType.PARAMETER_STRING, Parameter.Type.STRING),
    bool: (ParameterType.PARAMETER_BOOL, Parameter.Type.BOOL),
    'double_array': (ParameterType.PARAMETER_DOUBLE_ARRAY, Parameter.Type.DOUBLE_ARRAY),
    'string_array': (ParameterType.PARAMETER_STRING_ARRAY, Parameter.Type.STRING_ARRAY),
}

# How a person would name each type, and how to write it in a params file.
_TYPE_WORDS = {
    Parameter.Type.NOT_SET: 'nothing',
    Parameter.Type.BOOL: 'a bool (true or false)',
    Parameter.Type.INTEGER: 'an integer',
    Parameter.Type.DOUBLE: 'a double (a number: 1.0, or 1)',
    Parameter.Type.STRING: 'a string',
    Parameter.Type.BYTE_ARRAY: 'a list of bytes',
    Parameter.Type.BOOL_ARRAY: 'a list of bools',
    Parameter.Type.INTEGER_ARRAY: 'a list of integers',
    Parameter.Type.DOUBLE_ARRAY: 'a list of doubles (numbers: [0.0, 1.5])',
    Parameter.Type.STRING_ARRAY: 'a list of strings',
}


def type_words(parameter_type):
    """Return how a person names ``parameter_type`` (an ``rclpy.Parameter.Type``)."""
    return _TYPE_WORDS.get(parameter_type, str(parameter_type))


def descriptor(kind, description, read_only=False, constraints=''):
    """Return a ParameterDescriptor of ``kind`` (float, str, bool, 'double_array', ...)."""
    return ParameterDescriptor(type=_TYPES[kind][0], description=description,
                               read_only=read_only, additional_constraints=constraints)


# An integer given where a double is declared: taken as that double (a params file's
# ``offset: 0``, ``ros2 param set ... 1``), with a warning. The one widening ROS refuses that
# loses nothing: every integer a person writes is a double exactly.
_WIDER = {(Parameter.Type.INTEGER, Parameter.Type.DOUBLE): float,
          (Parameter.Type.INTEGER_ARRAY, Parameter.Type.DOUBLE_ARRAY):
              lambda values: [float(v) for v in values]}


def widened(param, expected):
    """
    Return ``(param, warning)``: ``param`` as a double (list) where ``expected`` is one.

    ``param`` unchanged and no warning for any other pair of types (refused as before).

    >>> p, why = widened(Parameter('stale_timeout', value=1), Parameter.Type.DOUBLE)
    >>> p.value, why
    (1.0, "parameter 'stale_timeout': 1 is an integer; taken as the double 1.0")
    """
    widen = _WIDER.get((param.type_, expected))
    if widen is None:
        return param, None
    value = widen(param.value)
    words = 'an integer' if expected == Parameter.Type.DOUBLE else 'a list of integers'
    return (Parameter(param.name, expected, value),
            f'parameter {param.name!r}: {_plain(param.value)} is {words}; taken as the '
            f'double{"" if expected == Parameter.Type.DOUBLE else "s"} {_plain(value)}')


def _plain(value):
    """Return ``value`` as a person writes it (a list of numbers without ``array(...)``)."""
    return f'[{", ".join(repr(v) for v in value)}]' if not isinstance(value, (int, float)) \
        else repr(value)


def accept_integers_as_doubles(node):
    """
    Make ``node`` take an integer set at run time for a double parameter, with a warning.

    ``ros2 param set /node stale_timeout 1`` sets 1.0 instead of rclpy's refusal "Wrong
    parameter type"; other mismatches are refused as before.
    """
    def widen(params):
        out = []
        for param in params:
            if node.has_parameter(param.name):
                declared = Parameter.Type(node.describe_parameter(param.name).type)
                param, warning = widened(param, declared)
                if warning:
                    node.get_logger().warning(warning)
            out.append(param)
        return out
    node.add_pre_set_parameters_callback(widen)


def declare_described(node, name, value, desc):
    """
    Declare ``name`` with ``value`` (or its type) and ``desc``; return the Parameter.

    An integer override of a double (``offset: 0`` in a params file, ``-p x:=1``) is taken
    as that double with a warning (:func:`widened`). An override of another wrong type
    raises :class:`StartupError` with one line naming the key, the value given and the
    type expected, instead of rclpy's traceback.
    """
    expected = Parameter.Type(desc.type)
    overrides = getattr(node, '_parameter_overrides', {})
    given = overrides.get(name)
    if given is not None:
        param, warning = widened(given, expected)
        if warning:
            overrides[name] = param
            node.get_logger().warning(warning)
    try:
        return node.declare_parameter(name, value, desc)
    except InvalidParameterTypeException:
        given = overrides.get(name)
        got = (f'{given.value!r} ({type_words(given.type_)})' if given is not None
               else 'a value of another type')
        raise StartupError(f'parameter {name!r} must be {type_words(expected)}, '
                           f'got {got}') from None


def declare(node, name, default, kind, description, read_only=False, constraints=''):
    """
    Declare one parameter and return its value (the override if one was given).

    An empty list default declares a statically typed parameter (rclpy cannot infer a type
    from ``[]``) and gives it the empty list of that type: a parameter left without a value
    would make ``ros2 param dump`` write no parameter of the node at all.
    """
    desc = descriptor(kind, description, read_only, constraints)
    if isinstance(default, list) and not default:
        param = declare_described(node, name, _TYPES[kind][1], desc)
        if param.value is None:     # no override: the empty list, typed (not "not set")
            node._parameters[name] = Parameter(name, _TYPES[kind][1], [])
            return []
        return list(param.value)
    return declare_described(node, name, default, desc).value


def unknown_parameter(name, declared):
    """
    Return why ``name`` is not a parameter of a node whose parameters are ``declared``.

    Per-robot names (``group.owner.field``) say which part is wrong and list what exists:

    >>> declared = ['joints.elbow.offset', 'joints.elbow.damping', 'joints.wrist.offset']
    >>> unknown_parameter('joints.elbw.offset', declared)
    "no parameter 'joints.elbw.offset': no joint 'elbw' (joints: elbow, wrist)"
    >>> unknown_parameter('joints.elbow.ofset', declared)
    "no parameter 'joints.elbow.ofset': joint 'elbow' has damping, offset"
    >>> unknown_parameter('stale_timout', declared)
    "no parameter 'stale_timout' on this node ('ros2 param list' shows them)"
    """
    parts = name.split('.')
    head = f'no parameter {name!r}'
    if len(parts) == 3:
        group, owner, field = parts
        fields = {}
        for other in declared:
            o = other.split('.')
            if len(o) == 3 and o[0] == group:
                fields.setdefault(o[1], set()).add(o[2])
        kind = group[:-1] if group.endswith('s') else group
        if owner in fields:
            return f'{head}: {kind} {owner!r} has {", ".join(sorted(fields[owner]))}'
        if fields:
            return f'{head}: no {kind} {owner!r} ({group}: {", ".join(sorted(fields))})'
    return f"{head} on this node ('ros2 param list' shows them)"
