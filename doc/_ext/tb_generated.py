"""
Sphinx directives whose tables come from the code and the benchmark results, never pasted.

``ros-parameters NODE``   every parameter the node declares, read from the node itself
                          (created in-process on the example robots), with its descriptor
``ros-interfaces NODE``   the node's topics and services, read from the node's own
                          publishers, subscriptions and services
``launch-arguments``      every argument of every launch file, read from the launch files
``bench-table NAME``      ``bench/results/NAME.json`` as written by the benchmark scripts

A node, launch file or result that cannot be read is a build error (``make docs`` runs
with warnings as errors), so the pages cannot silently drift from the code.
"""

import importlib.util
import json
import os
import pathlib
import re

from docutils import nodes
from docutils.parsers.rst import Directive

# The checkout: conf.py names it (rosdoc2 builds from a copy of doc/ elsewhere).
ROOT = pathlib.Path(os.environ.get('TRANSMISSION_BRIDGE_ROOT',
                                   pathlib.Path(__file__).resolve().parents[2]))
CONFIG = ROOT / 'config'
RESULTS = ROOT / 'bench' / 'results'

# A robot's key naming when its parameters, defaults and interfaces apply ("with an engine"):
# those the first robot lacks or sets otherwise are shown with it.
WHEN = '_when'
# node -> (module, class, the robots it is created on: parameter overrides each)
NODES = {
    'transmission_bridge': ('transmission_bridge.bridge.node', 'TransmissionBridge', [
        {'transmissions_file': 'example_robot_transmissions.yaml'},
        {'transmissions_file': 'three_motor_wrist_transmissions.yaml'}]),
    'kinematics': ('transmission_bridge.kinematics_node.node', 'KinematicsNode', [
        {'model_file': 'example_arm_model.yaml'}, {'model_file': 'scara_model.yaml'}]),
    'actuator_simulator': ('transmission_bridge.tools.actuator_simulator', 'ActuatorSimulator',
                           [{'transmissions_file': 'example_robot_transmissions.yaml'},
                            {'transmissions_file': 'example_robot.urdf', 'engine': 'builtin',
                             WHEN: 'with an engine'}]),
}
# Parameters the interface tables create a node with, besides its first robot: the bridge
# makes actuator_impedance_commands only once motor_gains is chosen (control_msgs loads then).
INTERFACE_PARAMS = {'transmission_bridge': {'impedance_output': 'motor_gains'}}
# rclpy's own parameters, the same on every node.
RCLPY_PARAMETERS = {'use_sim_time', 'start_type_description_service'}
_PER_ROBOT = re.compile(r'^(joints|actuators|transmissions|constraints)\.([^.]+)\.(.+)$')
# constraints.<joint>.trajectory and .goal: per joint, 0.0 unless given.
_OWNER = {'joints': 'joint', 'actuators': 'actuator', 'transmissions': 'transmission',
          'constraints': 'joint'}
_TYPE_NAMES = {1: 'bool', 2: 'integer', 3: 'double', 4: 'string', 5: 'byte[]', 6: 'bool[]',
               7: 'integer[]', 8: 'double[]', 9: 'string[]'}


def declared_parameters(node_name):
    """
    Return ``[{name, type, default, read_only, description, constraints}]`` of a node.

    Per-robot names (``joints.elbow.offset``, ``joints.elbow.limits.effort``,
    ``transmissions.wrist.matrix``) are folded into one row (``joints.<joint>.offset``)
    whose default reads "from the robot file".
    """
    import rclpy
    module_name, class_name, robots = NODES[node_name]
    node_class = getattr(importlib.import_module(module_name), class_name)
    rows = {}
    for overrides in robots:
        context = rclpy.Context()
        rclpy.init(context=context, args=['--ros-args', '--disable-rosout-logs',
                                          '--log-level', 'fatal'])
        try:
            node = _create(node_class, context, _overrides(overrides))
            try:
                for name in sorted(node._parameters):
                    if name in RCLPY_PARAMETERS:
                        continue
                    desc = node.describe_parameter(name)
                    default = _show(_value(node, name))
                    folded = _PER_ROBOT.match(name)
                    description = desc.description
                    if folded:
                        group, _, field = folded.groups()
                        name = f'{group}.<{_OWNER[group]}>.{field}'
                        if group != 'constraints':
                            default = 'from the robot file'
                            description = description.split(': ', 1)[-1]
                    elif name in overrides:       # given here to create the node
                        default = 'none'
                    when = overrides.get(WHEN)
                    if when and name in rows and rows[name]['default'] != default \
                            and name not in overrides:
                        rows[name]['default'] += f' ({default} {when})'
                    rows.setdefault(name, {
                        'name': name, 'type': _TYPE_NAMES.get(desc.type, '?'),
                        'default': default, 'read_only': desc.read_only,
                        'description': description + (f' ({when})' if when else ''),
                        'constraints': desc.additional_constraints})
            finally:
                node.destroy_node()
        finally:
            rclpy.shutdown(context=context)
    return [rows[name] for name in sorted(rows)]


def _overrides(robot):
    """Return a robot's parameter overrides: files of config/ by name, other values as given."""
    from rclpy.parameter import Parameter
    return [Parameter(k, value=str(CONFIG / v) if v.endswith(('.yaml', '.urdf', '.xml'))
                      else v) for k, v in robot.items() if k != WHEN]


def _value(node, name):
    """Return the parameter's value; a typed parameter without a value (an empty list) is []."""
    from rclpy.exceptions import ParameterUninitializedException
    try:
        return node.get_parameter(name).value
    except ParameterUninitializedException:
        return []


def _create(node_class, context, params):
    """Create ``node_class`` in ``context`` with parameter overrides ``params``."""
    return node_class(context=context, parameter_overrides=params)


def _show(value):
    if isinstance(value, str):
        return repr(value) if value else "''"
    if hasattr(value, 'tolist'):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return '[' + ', '.join(_show(v) for v in value) + ']'
    return repr(value)


def interfaces(node_name):
    """Return ``[(kind, name, type, qos)]``: the node's topics and services."""
    from rclpy.parameter import Parameter
    _, _, robots = NODES[node_name]
    extra = [Parameter(k, value=v) for k, v in INTERFACE_PARAMS.get(node_name, {}).items()]
    rows = _interfaces(node_name, _overrides(robots[0]) + extra)
    for robot in robots[1:]:
        if robot.get(WHEN):
            rows += [(f'{kind} ({robot[WHEN]})', *rest) for kind, *rest in
                     _interfaces(node_name, _overrides(robot))
                     if (kind, *rest) not in rows]
    return rows


def _interfaces(node_name, params):
    """Return ``[(kind, name, type, qos)]`` of the node created with ``params``."""
    import rclpy
    module_name, class_name, _ = NODES[node_name]
    node_class = getattr(importlib.import_module(module_name), class_name)
    context = rclpy.Context()
    rclpy.init(context=context, args=['--ros-args', '--disable-rosout-logs',
                                      '--log-level', 'fatal'])
    try:
        node = _create(node_class, context, params)
        try:
            rows = []
            for kind, items in (('publishes', node.publishers),
                                ('subscribes', node.subscriptions)):
                for item in items:
                    if item.topic_name.endswith(('/rosout', '/parameter_events')):
                        continue
                    rows.append((kind, _relative(node, item.topic_name),
                                 _type_name(item.msg_type), _qos(item.qos_profile)))
            for srv in node.services:
                if '/describe_parameters' in srv.srv_name or 'parameter' in srv.srv_name \
                        or srv.srv_name.endswith('get_type_description'):
                    continue
                rows.append(('service', _relative(node, srv.srv_name), _type_name(srv.srv_type),
                             ''))
            return rows
        finally:
            node.destroy_node()
    finally:
        rclpy.shutdown(context=context)


def _relative(node, name):
    private = f'/{node.get_name()}/'
    if name.startswith('~/'):
        return name
    if name.startswith(private):
        return '~/' + name[len(private):]
    return name[1:] if name.count('/') == 1 and name not in ('/diagnostics',) else name


def _type_name(cls):
    module = cls.__module__.split('.')
    return f'{module[0]}/{module[1]}/{cls.__name__}'


def _qos(profile):
    from rclpy.qos import ReliabilityPolicy
    reliability = ('reliable' if profile.reliability == ReliabilityPolicy.RELIABLE
                   else 'best effort')
    return f'{reliability}, depth {profile.depth}'


def launch_arguments():
    """Return ``{argument: (default, description, [launch files])}`` from the launch files."""
    from launch.actions import DeclareLaunchArgument
    found = {}
    for path in sorted((ROOT / 'launch').glob('*.launch.py')):
        spec = importlib.util.spec_from_file_location(path.stem.replace('.', '_'), path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for entity in module.generate_launch_description().entities:
            if isinstance(entity, DeclareLaunchArgument):
                default = ''.join(getattr(s, 'text', '?') for s in entity.default_value or [])
                entry = found.setdefault(entity.name, (default, entity.description, []))
                entry[2].append(path.name)
    return found


def bench_result(name):
    """Return the result file of benchmark ``name`` (columns, rows, machine, command, date)."""
    path = RESULTS / f'{name}.json'
    if not path.is_file():
        raise FileNotFoundError(f'{path} is missing: run the benchmark (make bench) and '
                                'commit its result')
    data = json.loads(path.read_text())
    if 'columns' not in data:
        data['columns'] = list(data['rows'][0]) if data['rows'] else []
    return data


def _table(header, rows, widths=None):
    table = nodes.table()
    group = nodes.tgroup(cols=len(header))
    table += group
    for w in widths or [1] * len(header):
        group += nodes.colspec(colwidth=w)
    head = nodes.thead()
    group += head
    head += _row(header)
    body = nodes.tbody()
    group += body
    for r in rows:
        body += _row(r)
    return table


def _row(cells):
    row = nodes.row()
    for cell in cells:
        entry = nodes.entry()
        entry += nodes.paragraph(text=str(cell))
        row += entry
    return row


def _format(value):
    if isinstance(value, float) and value != value:      # NaN: not measured
        return '—'
    if isinstance(value, float):
        return f'{value:,.3g}' if abs(value) < 1e4 else f'{value:,.0f}'
    if isinstance(value, int) and not isinstance(value, bool):
        return f'{value:,}'
    return str(value)


class _Generated(Directive):
    required_arguments = 0
    optional_arguments = 1

    def run(self):
        try:
            return self.generate()
        except Exception as exc:      # noqa: B902  (any failure to read the code is an error)
            raise self.error(f'{self.name}: {type(exc).__name__}: {exc}')


class RosParameters(_Generated):
    """``ros-parameters NODE``: the node's declared parameters as a table."""

    required_arguments = 1

    def generate(self):
        rows = [(f'{p["name"]}', p['type'], p['default'],
                 'start-up only' if p['read_only'] else 'yes (ros2 param set)',
                 p['description'] + (f' ({p["constraints"]})' if p['constraints'] else ''))
                for p in declared_parameters(self.arguments[0])]
        table = _table(['parameter', 'type', 'default', 'changeable at runtime', 'meaning'],
                       rows, [18, 6, 10, 10, 40])
        table['classes'] += ['ros-parameters']
        table['ids'] += [f'parameters-{self.arguments[0]}']
        return [table]


class RosInterfaces(_Generated):
    """``ros-interfaces NODE``: the node's topics and services as a table."""

    required_arguments = 1

    def generate(self):
        return [_table(['', 'name', 'type', 'QoS'], interfaces(self.arguments[0]),
                       [8, 20, 25, 12])]


class LaunchArguments(_Generated):
    """``launch-arguments``: every launch argument, its default and description."""

    def generate(self):
        rows = [(name, repr(default) if default else "''", description, ', '.join(files))
                for name, (default, description, files) in launch_arguments().items()]
        return [_table(['argument', 'default', 'meaning', 'launch files'], rows,
                       [12, 6, 40, 20])]


class BenchTable(_Generated):
    """``bench-table NAME``: a benchmark's result file as a table, with how it was made."""

    required_arguments = 1

    def generate(self):
        data = bench_result(self.arguments[0])
        columns = data['columns']
        rows = [[_format(r.get(c, '')) for c in columns] for r in data['rows']]
        note = nodes.paragraph(text=f'{data.get("command", "")} — {data["machine"]}'
                                    + (f', {data["date"]}' if data.get('date') else ''))
        return [_table([c.replace('_', ' ') for c in columns], rows), note]


def setup(app):
    """Register the directives."""
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    app.add_directive('ros-parameters', RosParameters)
    app.add_directive('ros-interfaces', RosInterfaces)
    app.add_directive('launch-arguments', LaunchArguments)
    app.add_directive('bench-table', BenchTable)
    return {'version': '1', 'parallel_read_safe': True}
