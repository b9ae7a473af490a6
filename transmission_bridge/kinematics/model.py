"""
A robot model: a tree of bodies rooted at 'world', and what can be computed from it.

This module is the description: bodies, joints, names, limits, mimic rules, the checks
that make a tree valid. What the model computes is :mod:`.evaluation`'s (kinematics,
gravity) and :mod:`.dynamics`' (inverse and forward dynamics, mass matrix), its edits are
:mod:`.editing`'s, its payload :mod:`.payload`'s; :class:`Model` is made of the five.

Mimic joints (``joint.mimic``) are no coordinates of their own: ``joint_names`` lists the
independent joints, ``movable_joint_names`` all of them, and gravity, damping and
Jacobians fold each mimic joint's share onto its driver (as Pinocchio's ``mimic=True``).

Immutable like pinocchio's ``Model``: edits (``add_body``, ``replace_joint``,
``remove_body``, ``add_subtree``, ``with_gravity``, ``with_joint``) return new
models, validated on construction. Bodies are kept in model order (parents
before children); movable joints give ``q`` in that order.

>>> from transmission_bridge.kinematics import Body, Inertial, Model, RevoluteJoint
>>> m = Model([Body('arm', RevoluteJoint('shoulder', axis=(0, 1, 0)),
...                 Inertial(2.0, (0.5, 0.0, 0.0)))])
>>> m.joint_names, m.num_positions
(('shoulder',), 1)
>>> # +q about +y lowers a link lying along +x, so gravity pushes toward +q: tau_g = m g x
>>> float(m.gravity_generalized_forces([0.0])[0])
9.81
"""

import numpy as np

from . import _checks
from .backend_choice import make_backend
from .body import Body, WORLD
from .dynamics import DynamicsMixin
from .editing import EditingMixin
from .errors import ModelError
from .evaluation import EvaluationMixin
from .payload import PayloadMixin
from .tree import TreeArrays

DEFAULT_GRAVITY = (0.0, 0.0, -9.81)


class Model(EvaluationMixin, DynamicsMixin, EditingMixin, PayloadMixin):
    """A validated tree of :class:`Body`; see the module docstring."""

    def __init__(self, bodies=(), name='robot', gravity=DEFAULT_GRAVITY, root_frame=WORLD,
                 warnings=(), kernels=None):
        self._name = _checks.name(name, 'model name')
        self._gravity = _checks.vector(gravity, 3, 'gravity')
        self._root_frame = _checks.name(root_frame, 'root_frame')
        self._warnings = tuple(str(w) for w in warnings)
        bodies = tuple(bodies)
        for b in bodies:
            if not isinstance(b, Body):
                raise ModelError(f'bodies must be Body objects, got {b!r}')
        _check_tree(bodies)
        self._bodies = bodies
        self._index = {b.name: i for i, b in enumerate(bodies)}
        self._coordinates = tuple(b for b in bodies if b.joint.num_positions)
        self._movable = tuple(b for b in self._coordinates if b.joint.mimic is None)
        self._rules = _mimic_rules(self._coordinates, self._movable, bodies)
        self._tree = TreeArrays(bodies, self._gravity, self._rules)
        self._backend = make_backend(self._tree, kernels)
        self._payload = None        # (body, mass, com, the body's inertial without it)

    # --- description -------------------------------------------------------------
    @property
    def name(self):
        """Return the model name."""
        return self._name

    @property
    def bodies(self):
        """Return the bodies in model order."""
        return self._bodies

    @property
    def body_names(self):
        """Return every body name except 'world', model order."""
        return tuple(b.name for b in self._bodies)

    @property
    def root_frame(self):
        """
        Return the frame the model calls 'world', as a TF frame id.

        'world' for a model YAML; a URDF's root link (``base_link``, ``panda_link0``...),
        which the model treats as the world frame.
        """
        return self._root_frame

    @property
    def warnings(self):
        """Return what the loader accepted but had to assume, one sentence each."""
        return self._warnings

    @property
    def joint_names(self):
        """Return the independent movable joints' names, in q order (no mimic joints)."""
        return tuple(b.joint.name for b in self._movable)

    @property
    def movable_joint_names(self):
        """Return every movable joint's name, mimic joints included, in model order."""
        return tuple(b.joint.name for b in self._coordinates)

    @property
    def mimic_joints(self):
        """
        Return ``{mimic joint: (independent joint, multiplier, offset)}``, chains resolved.

        Each mimic joint's position is ``multiplier * q[independent joint] + offset``.
        """
        names = self.joint_names
        return {b.joint.name: (names[k], m, o) for b, (k, m, o)
                in zip(self._coordinates, self._rules) if b.joint.mimic is not None}

    def movable_joint_positions(self, q):
        """Return the positions of :attr:`movable_joint_names` for q: (..., n_movable)."""
        k, m, o = np.array(self._rules, dtype=float).reshape(-1, 3).T
        return self._q(q)[..., k.astype(np.intp)] * m + o

    @property
    def joints(self):
        """Return the movable joints, in q order."""
        return tuple(b.joint for b in self._movable)

    @property
    def num_positions(self):
        """Return nq, the number of generalized coordinates."""
        return len(self._movable)

    @property
    def gravity(self):
        """Return the gravity vector in the world frame, m/s² (read-only)."""
        return self._gravity

    @property
    def default_positions(self):
        """Return the default (home) configuration, (nq,)."""
        return np.array([j.default_position for j in self.joints])

    @property
    def damping(self):
        """Return the viscous damping of each independent movable joint, (nq,)."""
        return self._tree.damping.copy()

    @property
    def effective_damping(self):
        """
        Return the damping each independent joint feels, (nq,): its own plus its mimics'.

        A mimic joint ``q_m = m q + o`` with damping ``b_m`` adds ``m² b_m`` to its
        driver's (its force ``-b_m m v`` folded by ``m``). Equal to :attr:`damping` without
        mimic joints.
        """
        return self._tree.effective_damping.copy()

    @property
    def position_lower_limits(self):
        """Return the lower position limits, (nq,)."""
        return np.array([j.position_limits[0] for j in self.joints])

    @property
    def position_upper_limits(self):
        """Return the upper position limits, (nq,)."""
        return np.array([j.position_limits[1] for j in self.joints])

    def body(self, name):
        """Return the :class:`Body` called ``name``."""
        try:
            return self._bodies[self._index[name]]
        except KeyError:
            raise ModelError(f'unknown body {name!r}') from None

    def joint(self, name):
        """Return the joint called ``name`` (movable or fixed)."""
        for b in self._bodies:
            if b.joint.name == name:
                return b.joint
        raise ModelError(f'unknown joint {name!r}')

    def children(self, name):
        """Return the names of the bodies whose parent is ``name``."""
        return tuple(b.name for b in self._bodies if b.parent == name)

    def frame_index(self, frame):
        """
        Return the body index of ``frame``, or None for the world frame.

        The world frame answers to 'world' and to :attr:`root_frame` (a URDF's root link, the
        name TF gives it). Raise :class:`ModelError` for any other name that is not a body.
        """
        if frame in (WORLD, self._root_frame):
            return None
        if frame not in self._index:
            raise ModelError(f'unknown frame {frame!r}: neither {WORLD!r}, the root link '
                             f'{self._root_frame!r}, nor a body of the model')
        return self._index[frame]

    def _index_of(self, name):
        if name not in self._index:
            raise ModelError(f'unknown body {name!r}')
        return self._index[name]

    def _rebuilt(self, bodies, gravity=None, payload=True):
        """
        Return a model of ``bodies`` with this one's name, gravity, backend and payload.

        Every model derived from this one is made here, so that none loses a choice of
        :meth:`with_kernels`. ``payload`` False: without this one's payload record.
        """
        model = Model(bodies, self._name, self._gravity if gravity is None else gravity,
                      self._root_frame, self._warnings)
        if model.kernels != self.kernels:   # a choice of with_kernels carries over
            model._backend = make_backend(model._tree, self.kernels)
        if payload and self._payload is not None and self._payload[0] in model._index:
            model._payload = self._payload      # its body keeps the merged inertial
        return model

    def __getstate__(self):
        state = dict(self.__dict__)
        # The receiver may or may not have numba: it gets the choice, and makes the backend.
        state['_backend'] = self._backend.name
        state.pop('_dynamics_columns', None)        # a cache holding a transmission set
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._backend = make_backend(self._tree, state['_backend'], fallback=True)

    def __eq__(self, other):
        return (isinstance(other, Model) and self._name == other._name
                and np.array_equal(self._gravity, other._gravity)
                and self._bodies == other._bodies)

    def __hash__(self):
        return hash((self._name, self.body_names))

    def __repr__(self):
        return f'Model({self._name!r}, bodies={list(self.body_names)})'


def _check_tree(bodies):
    seen = set()
    joints = set()
    names = {b.name for b in bodies}
    for b in bodies:
        if b.name in seen:
            raise ModelError(f'duplicate body name {b.name!r}')
        if b.joint.name in joints:
            raise ModelError(f'duplicate joint name {b.joint.name!r}')
        if b.parent != WORLD and b.parent not in names:
            raise ModelError(f'body {b.name!r}: unknown parent {b.parent!r}')
        if b.parent != WORLD and b.parent not in seen:
            parents = {x.name: x.parent for x in bodies}
            chain, cur = [b.name], b.parent
            while cur != WORLD and cur not in chain:
                chain.append(cur)
                cur = parents.get(cur, WORLD)
            if cur != WORLD:
                raise ModelError('cycle in the body tree: ' + ' -> '.join(chain + [cur]))
            raise ModelError(f'body {b.name!r} is listed before its parent {b.parent!r}; '
                             'list parents first')
        seen.add(b.name)
        joints.add(b.joint.name)


def _mimic_rules(coordinates, independent, bodies):
    """
    Return, per movable joint (model order), ``(k, multiplier, offset)``: q_c = m q[k] + o.

    Chains of mimic joints are resolved to the independent joint at their end; a mimic of
    an unknown or fixed joint, or a cycle of mimics, is a ModelError naming the joints.
    """
    index = {b.joint.name: k for k, b in enumerate(independent)}
    rules = {b.joint.name: b.joint.mimic for b in coordinates}
    fixed = {b.joint.name for b in bodies if not b.joint.num_positions}
    out = []
    for b in coordinates:
        name, m, o, chain = b.joint.name, 1.0, 0.0, [b.joint.name]
        while rules[name] is not None:
            rule = rules[name]
            if rule.joint in fixed:
                raise ModelError(f'joint {name!r}: mimics {rule.joint!r}, a fixed joint')
            if rule.joint not in rules:
                raise ModelError(f'joint {name!r}: mimics unknown joint {rule.joint!r}')
            if rule.joint in chain:
                raise ModelError('mimic joints form a cycle: '
                                 + ' -> '.join(chain + [rule.joint]))
            # q_name = mult q_joint + off, so q_c = m (mult q_joint + off) + o.
            m, o = m * rule.multiplier, m * rule.offset + o
            name = rule.joint
            chain.append(name)
        out.append((index[name], m, o))
    return out
