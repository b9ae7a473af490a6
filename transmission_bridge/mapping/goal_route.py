"""
A running goal's commands through the bridge, without ROS: a spring's targets, or the motors.

A goal's desired state reaches its joints one of three ways (:class:`GoalRoute`): the joints a
joint spring drives take it as their impedance targets (:func:`to_springs`); the others are
mapped, by the layout's prepared map (:mod:`.prepared`: one affine map into serialized
bytes) where it applies, else by the reference mapping (a message). A common state is
followed, judged and mapped in one compiled call (:meth:`GoalRoute.step`). A goal's commands
are not a stream: they never feed the command deadline.
"""

import numpy as np

from .prepared import PreparedCommands


def to_springs(springs, driven, names, position, velocity, effort, now_ns):
    """
    Give the columns ``driven`` of a goal's command to ``springs`` as targets.

    ``springs``: the :class:`~transmission_bridge.control.impedance.ImpedanceCore`;
    ``effort`` None: none (zero feed-forward). Returns the columns left for the motors.
    """
    joints = np.array([springs.transmissions.joint_index[names[k]] for k in driven],
                      dtype=np.intp)
    springs.take(joints, np.asarray(position)[driven], np.asarray(velocity)[driven],
                 np.zeros(len(driven)) if effort is None else np.asarray(effort)[driven],
                 now_ns)
    return np.setdiff1d(np.arange(len(names)), driven)


class GoalRoute:
    """How the goals of one :class:`.routes.Routes` command their joints (module docstring)."""

    def __init__(self, routes):
        self._routes = routes
        self._prepared = PreparedCommands()

    def _driven(self, names):
        """Return the columns of ``names`` a spring drives (empty without springs)."""
        routes = self._routes
        springs = routes.springs
        if springs is None or not springs.owned:
            return ()
        return routes.owners.spring_columns(names)

    def command(self, names, position, velocity, effort, header_at, now_ns,
                accelerations=None):
        """
        Command a goal's joints ``names`` (its desired state); return the message to publish.

        Springs' joints take their targets; the rest go to the motors, as bytes through the
        layout's prepared map or as a message (its header ``header_at(now_ns)``) through the
        reference. ``effort`` None: none; ``accelerations``: the sample's (the rotors).
        """
        routes = self._routes
        driven = self._driven(names)
        if not len(driven):
            prepared = self._prepared.get(routes.commands, names, effort is not None)
            if prepared.usable:
                data = prepared.command(position, velocity, effort, now_ns)
                if data is not None:
                    return data
        else:
            rest = to_springs(routes.springs, driven, names, position, velocity, effort,
                              now_ns)
            if not len(rest):
                return None
            names = [names[k] for k in rest]
            position, velocity = np.asarray(position)[rest], np.asarray(velocity)[rest]
            effort = None if effort is None else np.asarray(effort)[rest]
            accelerations = (None if accelerations is None
                             else np.asarray(accelerations)[rest])
        return routes.command(list(names), position, velocity,
                              () if effort is None else effort, header_at(now_ns),
                              stream=False, accelerations=accelerations)

    def step(self, execution, loops, names, idx, now_ns):
        """
        Follow a goal's state by one compiled call; return its command's bytes, or None.

        ``execution``, ``loops``: the goal's and the compiled step (``control.goal_loops``);
        ``idx`` the indices of its joints ``names``. None (then the reference step and
        :meth:`command`): a spring drives one, the layout has no prepared map, the last
        state left joints out, or the state is not the common case.
        """
        if len(self._driven(names)):
            return None
        routes = self._routes
        prepared = self._prepared.get(routes.commands, names, False)
        measured = routes.states.joints_now() if prepared.usable else None
        state = measured and execution.follow(loops, now_ns, *measured, idx, prepared.affine())
        return None if state is None else prepared.followed(state[0], state[1], now_ns)
