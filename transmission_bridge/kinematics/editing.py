"""
Editing a :class:`~.model.Model`, MATLAB's rigidBodyTree style, and showing its tree.

A mixin of :class:`~.model.Model`. Models are immutable, like pinocchio's ``Model``: every
edit returns a new model, validated on construction, that keeps the evaluation backend and
the payload of the one it was made from.
"""

from .body import Body, WORLD
from .errors import ModelError


class EditingMixin:
    """The edits of :class:`~.model.Model` (see the module docstring)."""

    def with_gravity(self, gravity):
        """Return a copy with another gravity vector (Drake's ``set_gravity_vector``)."""
        return self._rebuilt(self._bodies, gravity)

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
        return self.with_joints({joint.name: {'default_position': float(value)}
                                 for joint, value in zip(self.joints, self._q(q))})

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
        return self._rebuilt(rest), self._rebuilt(sub)

    def add_subtree(self, parent, subtree):
        """Return a copy with ``subtree``'s 'world' children attached under ``parent``."""
        if parent != WORLD:
            self._index_of(parent)
        moved = [Body(b.name, b.joint, b.inertial, parent if b.parent == WORLD else b.parent)
                 for b in subtree.bodies]
        return self._rebuilt(self._bodies + tuple(moved))

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
