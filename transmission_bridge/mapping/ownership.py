"""
Who takes each joint's streamed commands, without ROS: one split, each owner its part.

Every joint is commanded by exactly one mechanism at a time: the plain mapping
(:class:`.commands.CommandMapper`: its command goes to the motors as it is), a joint spring
(its commands are impedance targets), or a running goal (a streamed effort is its
feed-forward; positions and velocities are ignored). A spring and a goal own whole
transmissions (a motor serves every joint of its transmission), and a goal outranks a
spring: a spring's joints follow a goal by their targets. :class:`Ownership` holds the
owner of each joint and splits a command's columns among them once per name list (cached
until an owner changes): :meth:`Ownership.split`.

An owner is any object with ``take(joints, position, velocity, effort, now_ns) -> str``
(its joints' set indices and their values, each array empty where the command had none;
it returns why it refused them, '' if it took them) and ``stream``: whether what it takes
is a streamed command that feeds the deadline (:mod:`.deadline`; a spring's targets do, a
goal's feed-forward does not).

>>> import numpy as np
>>> from transmission_bridge.transmissions import load_transmissions
>>> ts = load_transmissions('config/example_robot_transmissions.yaml')
>>> owners = Ownership()
>>> owners.configure(ts)
>>> class Spring:
...     stream = True
...     def take(self, joints, position, velocity, effort, now_ns):
...         return ''
>>> owners.set_springs([ts.joint_index['wrist_pitch'], ts.joint_index['wrist_roll']], Spring())
>>> split = owners.split(('elbow', 'wrist_pitch', 'wrist_roll'))
>>> split.plain.tolist(), [(cols.tolist(), joints.tolist()) for _, cols, joints, _ in split.owned]
([0], [([1, 2], [3, 4])])
>>> [cols for _, cols, _, _ in owners.split(('wrist_pitch', 'wrist_roll')).owned]   # all: None
[None]
"""

import typing

import numpy as np

_NONE = np.zeros(0, dtype=np.intp)


class Split(typing.NamedTuple):
    """
    One name list's columns: the plain mapping's, and per owner (owner, cols, joints, reach).

    ``cols`` None: the owner takes every column, in order (nothing to gather).
    """

    plain: np.ndarray       # message columns for the plain mapping (known joints only)
    owned: tuple            # (owner, message columns, their joints, every joint they reach)


class Ownership:
    """The owner of every joint's streamed commands (module docstring)."""

    def __init__(self):
        self._goal, self._spring = [], []
        self._index = {}
        self._siblings = []
        self._cache = {}
        #: True while any joint has an owner other than the plain mapping.
        self.any = False

    def configure(self, tset):
        """Start over for ``tset``: every joint plain."""
        self._index = tset.joint_index
        self._goal = [None] * tset.num_joints
        self._spring = [None] * tset.num_joints
        self._siblings = tset.membership.joint_siblings
        self._changed()

    def set_springs(self, joints, owner):
        """Make ``owner`` the spring of exactly ``joints`` (set indices; none: no springs)."""
        self._spring = [None] * len(self._spring)
        for i in joints:
            self._spring[int(i)] = owner
        self._changed()

    def set_goal(self, joints, owner):
        """Give ``joints`` to a goal ``owner`` (it outranks a spring)."""
        for i in joints:
            self._goal[int(i)] = owner
        self._changed()

    def clear_goal(self, owner):
        """Take back every joint goal ``owner`` holds."""
        self._goal = [None if o is owner else o for o in self._goal]
        self._changed()

    def _changed(self):
        self._cache = {}
        self.any = any(o is not None for o in self._goal + self._spring)

    def owner(self, joint):
        """Return the owner of ``joint`` (set index): None for the plain mapping."""
        goal = self._goal[joint]
        return goal if goal is not None else self._spring[joint]

    def spring_columns(self, names):
        """Return the columns of ``names`` whose joint a spring drives (a goal above or not)."""
        index, spring = self._index, self._spring
        return np.array([k for k, n in enumerate(names)
                         if index.get(n) is not None and spring[index[n]] is not None],
                        dtype=np.intp)

    def split(self, names):
        """Return the :class:`Split` of a command naming ``names`` (cached per name list)."""
        key = names if isinstance(names, tuple) else tuple(names)
        found = self._cache.get(key)
        if found is not None:
            return found
        plain, by_owner = [], {}
        for col, name in enumerate(key):
            j = self._index.get(name)
            if j is None:
                plain.append(col)       # unknown: the plain mapping counts and reports it
                continue
            owner = self.owner(j)
            if owner is None:
                plain.append(col)
            else:
                by_owner.setdefault(id(owner), (owner, []))[1].append((col, j))
        owned = []
        for owner, pairs in by_owner.values():
            cols = np.array([c for c, _ in pairs], dtype=np.intp)
            joints = np.array([j for _, j in pairs], dtype=np.intp)
            reach = np.unique(np.concatenate([self._siblings[j] for j in joints]))
            whole = len(cols) == len(key) and (cols == np.arange(len(key))).all()
            owned.append((owner, None if whole else cols, joints, reach))
        if len(self._cache) > 64:
            self._cache.clear()
        found = self._cache[key] = Split(np.array(plain, dtype=np.intp), tuple(owned))
        return found

    def dispatch(self, split, count, arrays, now_ns, deadline, warn):
        """
        Give each owner of ``split`` its columns of one command received at ``now_ns``.

        ``arrays``: the command's (position, velocity, effort), each of ``count`` values or
        none. What a streaming owner takes feeds ``deadline``
        (:class:`.deadline.CommandDeadline`); an owner's refusal is passed to ``warn``.
        Returns the joints whose timeout this command ends.
        """
        resumed = _NONE
        for owner, cols, joints, reach in split.owned:
            part = arrays if cols is None else [a[cols] if len(a) == count else a[:0]
                                                for a in arrays]
            why = owner.take(joints, *part, now_ns)
            if why:
                warn(f'joint_commands refused: {why}')
            elif owner.stream:
                back = deadline.commanded(reach, now_ns)
                if len(back):
                    resumed = np.concatenate([resumed, back])
        return resumed
