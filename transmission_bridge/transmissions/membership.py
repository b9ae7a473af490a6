"""
Which joints and motors each transmission holds: the one membership table of a set.

A motor serves every joint of its transmission, and a joint needs every motor of it: a
command reaches the whole transmission, a stale motor withholds every joint of its
transmission and only those. Everything that asks "which joints and motors go together"
(commands, owners, springs, the stale test, the status) reads :class:`Membership`, built
once per :class:`~.transmission_set.TransmissionSet` (``tset.membership``). Indices are set
indices (:attr:`~.transmission_set.TransmissionSet.joint_names` and ``actuator_names``
order).

>>> from transmission_bridge.transmissions import load_transmissions
>>> ts = load_transmissions('config/example_robot_transmissions.yaml')
>>> m = ts.membership
>>> m.reach([ts.joint_index['wrist_roll']]).tolist()           # the differential's joints
[3, 4]
>>> [ts.actuator_names[a] for a in m.motors_of([3])]
['wrist_left_motor', 'wrist_right_motor']
>>> stale = np.zeros(ts.num_actuators, dtype=bool)
>>> stale[ts.actuator_index['wrist_left_motor']] = True
>>> [ts.joint_names[j] for j in np.flatnonzero(m.joints_of_motors(stale))]
['wrist_pitch', 'wrist_roll']
"""

import numpy as np

from .errors import ConfigError


class Membership:
    """The transmissions' joints and motors (module docstring); read-only arrays."""

    def __init__(self, specs, joint_index, actuator_index):
        #: Per transmission (file order): its name, joints and motors (set indices).
        self.names = tuple(s.name for s in specs)
        self.joints = tuple(_indices([joint_index[j.name] for j in s.joints]) for s in specs)
        self.actuators = tuple(_indices([actuator_index[a.name] for a in s.actuators])
                               for s in specs)
        n_joints, n_motors = len(joint_index), len(actuator_index)
        #: The transmission of each joint and of each motor (its position in :attr:`names`).
        self.of_joint = np.zeros(n_joints, dtype=np.intp)
        self.of_actuator = np.zeros(n_motors, dtype=np.intp)
        for t, (joints, motors) in enumerate(zip(self.joints, self.actuators)):
            self.of_joint[joints] = t
            self.of_actuator[motors] = t
        for array in (self.of_joint, self.of_actuator):
            array.flags.writeable = False
        #: Per joint: the joints and the motors of its transmission.
        self.joint_siblings = tuple(self.joints[t] for t in self.of_joint)
        self.joint_actuators = tuple(self.actuators[t] for t in self.of_joint)
        self._joint_names = tuple(sorted(joint_index, key=joint_index.get))

    def transmissions_of(self, joints):
        """Return the transmissions (positions in :attr:`names`) ``joints`` touch, sorted."""
        return np.unique(self.of_joint[np.asarray(joints, dtype=np.intp)])

    def reach(self, joints):
        """Return every joint of the transmissions ``joints`` touch (sorted set indices)."""
        touched = self.transmissions_of(joints)
        return np.sort(np.concatenate([self.joints[t] for t in touched])) if len(touched) \
            else _indices([])

    def motors_of(self, joints):
        """Return the motors of the transmissions ``joints`` touch (set order)."""
        touched = self.transmissions_of(joints)
        return np.concatenate([self.actuators[t] for t in touched]) if len(touched) \
            else _indices([])

    def joints_of_motors(self, motors):
        """Return a joint mask: the joints whose transmission has a motor in mask ``motors``."""
        hit = np.zeros(len(self.names), dtype=bool)
        hit[self.of_actuator[np.asarray(motors, dtype=bool)]] = True
        return hit[self.of_joint]

    def coverage(self, joint_names, joint_index):
        """
        Return (joint indices, actuator indices) of the transmissions ``joint_names`` cover.

        Every name must be a known joint, given once, and every transmission touched must be
        covered whole; otherwise ConfigError names the unknown joints or the transmission and
        the joints missing from it. Joint indices in the order given, actuators in set order.
        """
        names = list(joint_names)
        unknown = [n for n in names if n not in joint_index]
        if unknown:
            raise ConfigError(f'unknown joints {unknown}')
        seen = set()
        for n in names:
            if n in seen:
                raise ConfigError(f'duplicate joint name {n!r}')
            seen.add(n)
        joints = _indices([joint_index[n] for n in names])
        given = set(joints.tolist())
        for t in self.transmissions_of(joints):
            missing = [self._joint_names[j] for j in self.joints[t] if j not in given]
            if missing:
                raise ConfigError(f'transmission {self.names[t]!r} is only partly covered: '
                                  f'missing joints {missing}')
        return joints, self.motors_of(joints)


def _indices(values):
    out = np.array(values, dtype=np.intp)
    out.flags.writeable = False
    return out
