"""
A node's per-robot parameters: declared from the library's table, validated as one change.

Both nodes keep their robot's tunable numbers as ROS parameters named and described by a
library table (:mod:`transmission_bridge.transmissions.parameters`,
:mod:`transmission_bridge.kinematics.parameters`): ``parameter_values(config)``,
``parameter_descriptions(config)``, ``split_parameter(name)`` and
``apply_parameters(config, changes)``, which builds the new configuration or raises the
table's error with the reason. This class does the rest, the same for both: declare them
(overrides from a params file or ``-p`` applied on top of the file), turn a
``SetParameters`` call into the would-be configuration in the on-set callback (refused whole
with the reason), hand it over in the post-set callback, and make every declared parameter
show the configuration in force.
"""

from rclpy.parameter import Parameter

from .parameters import declare_described, descriptor


class RobotParameters:
    """The per-robot parameters of ``node`` from ``table`` (see the module docstring)."""

    def __init__(self, node, table, error):
        self._node = node
        self._table = table
        self._error = error
        self._pending = None

    def declare(self, config):
        """Declare every parameter of ``config``; return it with the overrides given applied."""
        table, node = self._table, self._node
        descriptions = table.parameter_descriptions(config)
        given = {}
        for name, value in table.parameter_values(config).items():
            declared = declare_described(node, name, value,
                                         descriptor(_kind(value), descriptions[name])).value
            if isinstance(value, list):
                declared = list(declared)      # rclpy returns double arrays as array('d')
            if declared != value:              # an override from the params file or -p
                given[name] = declared
        if not given:
            return config
        new = table.apply_parameters(config, table.preferred_overrides(given))
        self.show(new)
        return new

    def validate(self, params, config):
        """
        Build the configuration ``params`` would make of ``config``; return why not, or ''.

        ``config`` None: the node has none yet, and a per-robot parameter is refused.
        """
        changes = {}
        for p in params:
            if self._table.split_parameter(p.name):
                if config is None:
                    return 'no configuration yet'
                value = p.value
                if p.type_ == Parameter.Type.DOUBLE_ARRAY:
                    value = list(value)
                changes[p.name] = value
        try:
            self._pending = self._table.apply_parameters(config, changes) if changes else None
        except self._error as exc:
            self._pending = None
            return str(exc)
        return ''

    def take(self):
        """Return the configuration the last :meth:`validate` built (None: none), once."""
        pending, self._pending = self._pending, None
        return pending

    def replace(self, old, new):
        """Make the declared parameters exactly ``new``'s (``old``: the one they showed)."""
        table = self._table
        old_names = set(table.parameter_values(old)) if old is not None else set()
        self._node._replace_parameters(old_names, table.parameter_values(new),
                                       table.parameter_descriptions(new))

    def undeclare(self, config):
        """Undeclare every parameter of ``config`` (the node forgets its robot)."""
        node = self._node
        node._syncing = True
        try:
            for name in self._table.parameter_values(config):
                if node.has_parameter(name):
                    node.undeclare_parameter(name)
        finally:
            node._syncing = False

    def show(self, config):
        """Make every declared parameter show ``config``'s value (coupled values follow)."""
        node = self._node
        stale = []
        for name, value in self._table.parameter_values(config).items():
            if node.has_parameter(name):
                current = node.get_parameter(name).value
                if (list(current) if isinstance(value, list) else current) != value:
                    stale.append(Parameter(name, value=value))
        if stale:
            node._syncing = True
            try:
                node.set_parameters(stale)
            finally:
                node._syncing = False


def _kind(value):
    """Return the parameter type of a table value: a list of doubles, a string or a double."""
    return 'double_array' if isinstance(value, list) else str if isinstance(value, str) else float
