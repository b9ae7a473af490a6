"""
A payload on a :class:`~.model.Model`: a point mass joined to a body's mass properties.

A mixin of :class:`~.model.Model`. The payload changes no name, pose or TF frame; gravity,
energy and everything derived from them see it. The model remembers the body's inertial
without it, so a payload can be replaced or removed exactly.
"""

from .body import Body


class PayloadMixin:
    """The payload of :class:`~.model.Model` (see the module docstring)."""

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
        return self._rebuilt(bodies, payload=False)
