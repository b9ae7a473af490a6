"""Declaring typed, described parameters from one table."""

from rcl_interfaces.msg import ParameterDescriptor, ParameterType
from rclpy.parameter import Parameter

_TYPES = {
    float: (ParameterType.PARAMETER_DOUBLE, Parameter.Type.DOUBLE),
    str: (ParameterType.PARAMETER_STRING, Parameter.Type.STRING),
    bool: (ParameterType.PARAMETER_BOOL, Parameter.Type.BOOL),
    'double_array': (ParameterType.PARAMETER_DOUBLE_ARRAY, Parameter.Type.DOUBLE_ARRAY),
    'string_array': (ParameterType.PARAMETER_STRING_ARRAY, Parameter.Type.STRING_ARRAY),
}


def descriptor(kind, description, read_only=False, constraints=''):
    """Return a ParameterDescriptor of ``kind`` (float, str, bool, 'double_array', ...)."""
    return ParameterDescriptor(type=_TYPES[kind][0], description=description,
                               read_only=read_only, additional_constraints=constraints)


def declare(node, name, default, kind, description, read_only=False, constraints=''):
    """
    Declare one parameter and return its value (the override if one was given).

    An empty list default declares a statically typed parameter with no value (rclpy
    cannot infer a type from ``[]``); it reads back as ``[]`` until set.
    """
    desc = descriptor(kind, description, read_only, constraints)
    if isinstance(default, list) and not default:
        param = node.declare_parameter(name, _TYPES[kind][1], desc)
        return [] if param.value is None else list(param.value)
    return node.declare_parameter(name, default, desc).value


def reason_list(reasons):
    """Join refusal reasons into one line."""
    return '; '.join(reasons)
