"""
A stream of actuator states through a :class:`~.transmission_set.TransmissionSet`.

A mixin of the set: :meth:`StreamsMixin.state_map` makes the map the bridge keeps for its
stream (and the converter for a bag's), :meth:`StreamsMixin.joint_state` maps a whole batch
as one stream, to the same bits.
"""

import numpy as np

from . import linkage_loops
from .compiled import JointStateMap
from .errors import ConfigError
from .units import UnitTable

_CHUNK = 4096                       # states per step of a batched joint_state


class StreamsMixin:
    """A set's stream maps (module docstring)."""

    @property
    def units(self):
        """Return the actuators' driver units as a :class:`.units.UnitTable` (made once)."""
        table = self.__dict__.get('_units')
        if table is None:
            table = self.__dict__['_units'] = UnitTable(
                [self._actuator_specs[n] for n in self.actuator_names])
        return table

    def state_map(self, damped=True):
        """
        Return a new :class:`~.compiled.JointStateMap`: a stream's actuator states to joints.

        What the bridge keeps for its stream of actuator states (and the offline converter
        for a bag's): it maps the three actuator rows flattened, then a 1.0, to joint
        positions with their offsets, velocities, and efforts after the gear stages' losses
        and the damping loss (``damped`` False: the ideal maps, before both), and keeps what
        a linkage needs from one state to the next (its last solution).
        """
        damping = self._damping if damped else np.zeros(self.num_joints)
        linkages = None
        if self._linkages is not None:
            layout, floats = self._linkages
            if not damped:
                floats = self._undamped_linkages()
            linkages = (layout, floats, self._linkage_members)
        losses = None if not damped or self.losses.lossless else self.losses
        return JointStateMap(self._linear_state, damping, linkages, losses)

    def _undamped_linkages(self):
        layout, floats = self._linkages
        floats = floats.copy()
        for m in range(layout[0]):
            h = linkage_loops.L_HEADER + linkage_loops.L_WIDTH * m
            n, g_at = layout[h], layout[h + 2]
            start = g_at + n * (linkage_loops.J_WIDTH + linkage_loops.A_WIDTH)
            floats[start:start + n] = 0.0
        return floats

    def joint_state(self, values):
        """
        Map actuator states ``(..., 3, nA)`` (position, velocity, effort) to joint states.

        Returns ``(..., 3, nJ)``: what the bridge publishes for that state, joint
        positions with their offsets, velocities, and efforts after the damping loss
        (:meth:`after_damping`). The states are taken in order, as one stream, by a
        new :meth:`state_map` (a linkage's first from the zero pose): each element has the
        bits of the separate maps, and the same bits for one state or a whole bag. The live
        bridge and the offline converter call the same map. A linkage state refused is NaN
        in its joints.
        """
        v = np.asarray(values, dtype=float)
        lead = v.shape[:-2]
        if v.shape[-2:] != (3, self.num_actuators):
            raise ConfigError(f'actuator states must have shape (..., 3, {self.num_actuators}), '
                              f'got {v.shape}')
        rows = v.reshape(-1, 3 * self.num_actuators)
        out = np.empty((len(rows), 3, self.num_joints))
        stream = self.state_map()
        for start in range(0, len(rows), _CHUNK):   # the terms take 9 doubles per joint
            chunk = rows[start:start + _CHUNK]
            flat = np.concatenate([chunk, np.ones((len(chunk), 1))], axis=1)
            stream(flat, out[start:start + _CHUNK])
        return out.reshape(lead + (3, self.num_joints))
