"""
The simulated robot's output encoders: the second encoder some actuators carry at their gear.

An actuator with an ``output_encoder`` in the transmissions file reports, beside its motor, the
position its gear's output reads (:mod:`transmission_bridge.transmissions.output_encoder`):
``x_a / n_a`` of the simulated motor (an ideal, stiff gear), minus the encoder's ``offset`` (the
bridge adds it back), plus ``slip`` times the time since the start (a belt slipping at that
rate, rad/s or m/s at the output); velocity ``v_a / n_a + slip``; effort 0. A series-elastic
actuator's spring is quasi-static here: its output encoder also reads the deflection that
carries the drive's torque, ``δ = k⁻¹(-n_a τ_a)``, so the bridge reads that torque from it
(the simulated mechanism stays stiff).
"""

import numpy as np


class SimulatedOutputEncoders:
    """The output encoders of a transmission set, as a simulator reports them."""

    def __init__(self, tset, slip=0.0):
        found = [(i, tset.actuator(n)) for i, n in enumerate(tset.actuator_names)
                 if tset.actuator(n).output_encoder is not None]
        #: Their names on actuator_states, in actuator order.
        self.names = tuple(a.output_encoder.name for _, a in found)
        self._cols = np.array([i for i, _ in found], dtype=np.intp)
        self._reduction = np.array([a.mechanical_reduction for _, a in found], dtype=float)
        self._offset = np.array([a.output_encoder.offset for _, a in found], dtype=float)
        self._springs = [(k, a.spring) for k, (_, a) in enumerate(found) if a.spring]
        self.slip = float(slip)

    def __bool__(self):
        return bool(len(self.names))

    def rows(self, motors, time):
        """Return the (3, n) readings at ``time`` (s) of the motors' SI state (3, nA)."""
        out, motors = np.zeros((3, len(self.names))), np.asarray(motors)
        out[0] = motors[0, self._cols] / self._reduction - self._offset + self.slip * time
        out[1] = motors[1, self._cols] / self._reduction + self.slip
        for k, spring in self._springs:
            out[0, k] += spring.deflection(-self._reduction[k] * motors[2, self._cols[k]])
        return out
