"""
A robot model: a tree of bodies rooted at 'world', and what can be computed from it.

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
from .algorithms import ChainKinematics, OneConfiguration
from .body import Body, WORLD
from .errors import ModelError
from .spatial import invert

DEFAULT_GRAVITY = (0.0, 0.0, -9.81)


class Model:
    """A validated tree of :class:`Body`; see the module docstring."""

    def __init__(self, bodies=(), name='robot', gravity=DEFAULT_GRAVITY, root_frame=WORLD,
                 warnings=()):
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
        self._kin = ChainKinematics(bodies, self._gravity, self._rules)
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
    def kernels(self):
        """Return ``'numba'`` when the compiled kernels evaluate this model, else ``'numpy'``."""
        return 'numba' if self._kin.compiled else 'numpy'

    def warm_up(self):
        """
        Compile the kernels now rather than on the first call, and return the model.

        numba compiles on a machine's first use (about 1.5 s) and loads from its disk cache
        afterwards (about 0.1 s); a node calls this at start-up so that its first message
        does not wait. Nothing to do on the numpy code.
        """
        self._kin.warm_up()
        return self

    def with_kernels(self, kind):
        """
        Return a copy evaluated by ``kind``: ``'numpy'`` or ``'numba'`` (see :attr:`kernels`).

        Models derived from the copy (``with_gravity``, ``with_payload``...) keep the choice.
        ``'numba'`` where numba does not import raises :class:`ModelError` saying why.
        """
        model = self._rebuilt(self._bodies)
        model._kin.use_kernels(kind)
        return model

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
        return self._kin.damping.copy()

    @property
    def effective_damping(self):
        """
        Return the damping each independent joint feels, (nq,): its own plus its mimics'.

        A mimic joint ``q_m = m q + o`` with damping ``b_m`` adds ``m² b_m`` to its
        driver's (its force ``-b_m m v`` folded by ``m``). Equal to :attr:`damping` without
        mimic joints.
        """
        return self._kin.effective_damping.copy()

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

    # --- algorithms --------------------------------------------------------------
    def _q(self, q):
        arr = np.asarray(q, dtype=float)
        if arr.ndim == 0 or arr.shape[-1] != self.num_positions:
            raise ModelError(f'expected q with last dimension {self.num_positions}, '
                             f'got shape {arr.shape}')
        return arr

    def body_poses(self, q, out=None):
        """
        Return ``X_WB`` of every body as one array, (..., nb, 4, 4), model order.

        ``out``: an array of that shape to write into and return instead of a new one
        (float64, C-contiguous): see :meth:`poses_and_gravity`.
        """
        return self._kin.evaluate(self._q(q), ('poses',), _single_out(out))[0]

    def forward_kinematics(self, q):
        """Return a dict body name -> ``X_WB`` (4x4; (N, 4, 4) for a batch q)."""
        poses = self.body_poses(q)
        return {name: poses[..., i, :, :] for i, name in enumerate(self.body_names)}

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

    def _pose_of(self, poses, frame):
        index = self.frame_index(frame)
        if index is None:
            return np.broadcast_to(np.eye(4), poses.shape[:-3] + (4, 4))
        return poses[..., index, :, :]

    def _index_of(self, name):
        if name not in self._index:
            raise ModelError(f'unknown body {name!r}')
        return self._index[name]

    def relative_transform(self, q, frame_A, frame_B):
        """Return ``X_AB``: the pose of body B in body A's frame (the world frame allowed)."""
        poses = self.body_poses(q)
        return invert(self._pose_of(poses, frame_A)) @ self._pose_of(poses, frame_B)

    def jacobian(self, q, body, point=(0.0, 0.0, 0.0)):
        """
        Return the geometric Jacobian of a point fixed on ``body``, world frame.

        ``point`` is ``p_BoBp_B`` (m, body frame). Rows are [angular; linear], so
        ``J @ v`` gives ``(w_WB, v_WBp)``; shape (..., 6, nq).
        """
        p = _checks.vector(point, 3, 'point')
        return self._kin.jacobian(self._q(q), self._index_of(body), p)

    def body_jacobians(self, q, bodies):
        """
        Return the Jacobians of the origins of ``bodies`` (names) at one q, (n, 6, nq).

        As :meth:`jacobian` of each, rows [angular; linear], from one kinematics pass.
        """
        q = self._q(q)
        if q.ndim != 1:
            raise ModelError('body_jacobians takes one configuration')
        index = [self._index_of(b) for b in bodies]
        return self._kin.jacobians_one(q, index, np.zeros((len(index), 3)))

    def poses_and_gravity(self, q, out=None):
        """
        Return ``(X_WB of every body, tau_g)`` from one kinematics pass.

        Shapes (..., nb, 4, 4) and (..., nq): what :meth:`body_poses` and
        :meth:`gravity_generalized_forces` return, for the price of one of them.

        ``out=(poses, tau_g)``: arrays of those shapes (float64, C-contiguous, not
        overlapping ``q``) to write into and return instead of new ones. A loop over
        batches that reuses them skips the kernel's zeroing of fresh pages, which is
        most of the system time of a large batch (doc/performance.md).
        """
        return self._kin.evaluate(self._q(q), ('poses', 'gravity'), out)

    def one_configuration(self):
        """
        Return new buffers that evaluate one configuration at a time with few numpy calls.

        A :class:`~transmission_bridge.kinematics.algorithms.OneConfiguration`: its
        results stay in its buffers until its next call, so keep one per thread (the
        kinematics node's core keeps one). The other methods of this class use one
        per thread themselves and return copies.
        """
        return OneConfiguration(self._kin)

    def poses_gravity_and_energy(self, q, out=None):
        """
        Return ``(X_WB of every body, tau_g, V)`` from one kinematics pass.

        What :meth:`poses_and_gravity` returns, plus :meth:`potential_energy` (a float for
        one configuration, (...) for a batch) at almost no extra cost. ``out=(poses,
        tau_g, V)`` as in :meth:`poses_and_gravity` (``V`` then an array, 0-d for one
        configuration).
        """
        poses, tau_g, energy = self._kin.evaluate(self._q(q), ('poses', 'gravity', 'energy'),
                                                  out)
        if out is None and np.ndim(energy) == 0:
            energy = float(energy)
        return poses, tau_g, energy

    def gravity_generalized_forces(self, q, out=None):
        """
        Return ``tau_g = -dV/dq`` (Drake's sign): (..., nq). Hold with ``-tau_g``.

        ``out``: an array of that shape to write into and return instead of a new one
        (float64, C-contiguous): see :meth:`poses_and_gravity`.
        """
        return self._kin.evaluate(self._q(q), ('gravity',), _single_out(out))[0]

    def potential_energy(self, q):
        """Return the gravitational potential energy (J), zero at the world origin's height."""
        out = self._kin.evaluate(self._q(q), ('energy',))[0]
        return float(out) if np.ndim(out) == 0 else out

    def potential_energy_from_poses(self, poses):
        """Return the potential energy (J) from body poses (..., nb, 4, 4) computed already."""
        poses = np.asarray(poses, dtype=float)
        kin = self._kin
        p_cm = (poses[..., :3, :] @ kin.com_h[..., None])[..., 0]
        return -np.einsum('...bj,b,j->...', p_cm, kin.mass, kin.gravity)

    def conservative_power(self, q, v):
        """Return the power of gravity, ``v . tau_g`` (W); equals ``-dV/dt``."""
        v = self._q(v)
        return np.einsum('...k,...k->...', v, self.gravity_generalized_forces(q))

    def damping_forces(self, v):
        """Return the viscous damping generalized forces ``-b v`` (N·m or N), mimics folded."""
        return -self._kin.effective_damping * self._q(v)

    # --- edits -------------------------------------------------------------------
    def _rebuilt(self, bodies, gravity=None):
        model = Model(bodies, self._name, self._gravity if gravity is None else gravity,
                      self._root_frame, self._warnings)
        if model.kernels != self.kernels:   # a choice of with_kernels carries over
            model._kin.use_kernels(self.kernels)
        if self._payload is not None and self._payload[0] in model._index:
            model._payload = self._payload      # its body keeps the merged inertial
        return model

    def with_gravity(self, gravity):
        """Return a copy with another gravity vector (Drake's ``set_gravity_vector``)."""
        return self._rebuilt(self._bodies, gravity)

    @property
    def payload(self):
        """Return ``(body, mass, com)`` of the payload :meth:`with_payload` added, or None."""
        return None if self._payload is None else self._payload[:3]

    def with_payload(self, body, mass, com):
        """
        Return the model with a point payload fixed to ``body`` (replacing any earlier one).

        ``mass`` in kg (>= 0), ``com`` its centre of mass in ``body``'s frame (m). The
        payload joins the body's mass properties (:meth:`Inertial.with_point_mass`), so
        body and joint names, poses and TF are unchanged; gravity, energy and everything
        derived from them see it. ``mass`` 0 gives back the model without payload, its
        bodies those of :meth:`without_payload`, still naming ``body`` and ``com`` in
        :attr:`payload` (so a payload can be set one value at a time). Raises ModelError for
        an unknown body or an invalid mass or centre of mass.
        """
        base = self.without_payload()
        i = base._index_of(body)
        b = base._bodies[i]
        inertial = b.inertial.with_point_mass(mass, com, owner=f'body {body!r}')
        bodies = list(base._bodies)
        bodies[i] = Body(b.name, b.joint, inertial, b.parent)
        model = base._rebuilt(bodies)
        model._payload = (body, float(mass), tuple(float(x) for x in com), b.inertial)
        return model

    def with_mass_properties(self, body, mass, com):
        """Return a copy where ``body`` has ``mass`` (kg) and ``com`` (m, body frame)."""
        i = self._index_of(body)
        b = self._bodies[i]
        inertial = b.inertial.with_mass_and_com(mass, com, owner=f'body {body!r}')
        bodies = list(self._bodies)
        bodies[i] = Body(b.name, b.joint, inertial, b.parent)
        return self._rebuilt(bodies)

    def without_payload(self):
        """Return the model without the payload of :meth:`with_payload` (itself if none)."""
        if self._payload is None:
            return self
        body, _, _, inertial = self._payload
        i = self._index[body]
        b = self._bodies[i]
        bodies = list(self._bodies)
        bodies[i] = Body(b.name, b.joint, inertial, b.parent)
        model = Model(bodies, self._name, self._gravity, self._root_frame, self._warnings)
        return model

    def add_body(self, body):
        """Return a copy with ``body`` added under ``body.parent``."""
        return self._rebuilt(self._bodies + (body,))

    def replace_joint(self, body_name, joint):
        """Return a copy where ``body_name`` hangs from its parent through ``joint``."""
        i = self._index_of(body_name)
        b = self._bodies[i]
        bodies = list(self._bodies)
        bodies[i] = Body(b.name, joint, b.inertial, b.parent)
        return self._rebuilt(bodies)

    def with_joint(self, joint_name, **changes):
        """Return a copy with fields of joint ``joint_name`` changed (e.g. damping)."""
        return self.with_joints({joint_name: changes})

    def with_joints(self, changes):
        """Return a copy with fields of several joints changed, ``{joint: {field: value}}``."""
        bodies = list(self._bodies)
        index = {b.joint.name: i for i, b in enumerate(bodies)}
        for joint_name, fields in changes.items():
            if joint_name not in index:
                raise ModelError(f'unknown joint {joint_name!r}')
            b = bodies[index[joint_name]]
            bodies[index[joint_name]] = Body(b.name, b.joint.replace(**fields), b.inertial,
                                             b.parent)
        return self._rebuilt(bodies)

    def with_default_positions(self, q):
        """Return a copy whose default configuration is ``q`` (each within its limits)."""
        return self._with_joint_values('default_position', q)

    def with_damping(self, damping):
        """Return a copy with the damping of every movable joint set from ``damping``."""
        return self._with_joint_values('damping', damping)

    def _with_joint_values(self, field, values):
        model = self
        for joint, value in zip(self.joints, self._q(values)):
            model = model.with_joint(joint.name, **{field: float(value)})
        return model

    def subtree_names(self, name):
        """Return ``name`` and every body below it, model order."""
        self._index_of(name)
        inside = {name}
        for b in self._bodies:
            if b.parent in inside:
                inside.add(b.name)
        return tuple(b.name for b in self._bodies if b.name in inside)

    def remove_body(self, name):
        """
        Return ``(model, subtree)``: this model without ``name`` and its descendants.

        The subtree is a model of its own whose root body hangs from 'world'
        through its original joint, like MATLAB's ``removeBody``.
        """
        inside = set(self.subtree_names(name))
        rest = [b for b in self._bodies if b.name not in inside]
        sub = [Body(b.name, b.joint, b.inertial, WORLD if b.name == name else b.parent)
               for b in self._bodies if b.name in inside]
        return self._rebuilt(rest), Model(sub, self._name, self._gravity, self._root_frame)

    def add_subtree(self, parent, subtree):
        """Return a copy with ``subtree``'s 'world' children attached under ``parent``."""
        if parent != WORLD:
            self._index_of(parent)
        moved = [Body(b.name, b.joint, b.inertial, parent if b.parent == WORLD else b.parent)
                 for b in subtree.bodies]
        return self._rebuilt(self._bodies + tuple(moved))

    # --- display -----------------------------------------------------------------
    def show_details(self):
        """Return a table of the tree, like MATLAB's ``showdetails``."""
        head = ('Idx', 'Body Name', 'Joint Name', 'Joint Type', 'Parent Name(Idx)',
                'Children Name(s)')
        rows = []
        for i, b in enumerate(self._bodies, start=1):
            parent = (f'{WORLD}(0)' if b.parent == WORLD
                      else f'{b.parent}({self._index[b.parent] + 1})')
            kids = ' '.join(f'{c}({self._index[c] + 1})' for c in self.children(b.name))
            rows.append((str(i), b.name, b.joint.name, b.joint.type_name, parent, kids))
        widths = [max(len(h), *(len(r[k]) for r in rows)) if rows else len(h)
                  for k, h in enumerate(head)]
        line = '-' * (sum(widths) + 3 * (len(widths) - 1))
        out = [f'Robot: ({len(rows)} bodies)', line,
               '   '.join(h.ljust(w) for h, w in zip(head, widths)), line]
        out += ['   '.join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        out.append(line)
        return '\n'.join(out)

    def __eq__(self, other):
        return (isinstance(other, Model) and self._name == other._name
                and np.array_equal(self._gravity, other._gravity)
                and self._bodies == other._bodies)

    def __hash__(self):
        return hash((self._name, self.body_names))

    def __repr__(self):
        return f'Model({self._name!r}, bodies={list(self.body_names)})'


def holding_torques(tau_g, out=None):
    """
    Return the torques that hold a pose against gravity: ``-tau_g``, with no ``-0.0``.

    ``tau_g`` is :meth:`Model.gravity_generalized_forces` (Drake's sign). A joint that
    gravity does not load gets ``0.0``, not the ``-0.0`` a plain negation gives (which
    ``ros2 topic echo`` would print); every other value is exactly ``-tau_g``. Written
    into ``out`` if given.

    >>> holding_torques(np.array([0.0, 2.5, -1.0])).tolist()
    [0.0, -2.5, 1.0]
    """
    return np.subtract(0.0, np.asarray(tau_g, dtype=float), out=out)


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


def _single_out(out):
    """Return ``out`` of a one-output method as the tuple the kinematics takes."""
    return None if out is None else (out,)
