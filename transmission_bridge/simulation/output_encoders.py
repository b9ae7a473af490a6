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

    def __init__(self, tset, slip=0.0, simulated=None):
        found = [(i, tset.actuator(n)) for i, n in enumerate(tset.actuator_names)
                 if tset.actuator(n).output_encoder is not None]
        #: Their names on actuator_states, in actuator order.
        self.names = tuple(a.output_encoder.name for _, a in found)
        self._cols = np.array([i for i, _ in found], dtype=np.intp)
        self._reduction = np.array([a.mechanical_reduction for _, a in found], dtype=float)
        self._offset = np.array([a.output_encoder.offset for _, a in found], dtype=float)
        simulated = simulated or {}         # actuator index -> its row of A (sea.py)
        self._springs = [(k, a.spring) for k, (i, a) in enumerate(found)
                         if a.spring and i not in simulated]
        self._rows = [(k, simulated[i]) for k, (i, _) in enumerate(found) if i in simulated]
        self._tset = tset
        self.slip = float(slip)

    def __bool__(self):
        return bool(len(self.names))

    def rows(self, motors, time, joint_state=None):
        """
        Return the (3, n) readings at ``time`` (s) of the motors' SI state (3, nA).

        ``joint_state()``: the engine's ``(names, q, q̇, ...)``, read where a spring is
        simulated (its output is the joints' side, ``A (q - offsets) / n_a``).
        """
        out, motors = np.zeros((3, len(self.names))), np.asarray(motors)
        out[0] = motors[0, self._cols] / self._reduction - self._offset + self.slip * time
        out[1] = motors[1, self._cols] / self._reduction + self.slip
        for k, spring in self._springs:
            out[0, k] += spring.deflection(-self._reduction[k] * motors[2, self._cols[k]])
        if self._rows and joint_state is not None:
            tset = self._tset
            names, q, qd = joint_state()[:3]
            at = dict(zip(names, zip(q, qd)))
            pos = np.array([at.get(j, (d, 0.0))[0] for j, d in
                            zip(tset.joint_names, tset.default_positions)]) - tset.joint_offsets
            vel = np.array([at.get(j, (0.0, 0.0))[1] for j in tset.joint_names])
            for k, row in self._rows:
                n = self._reduction[k]
                out[0, k] = row @ pos / n - self._offset[k] + self.slip * time
                out[1, k] = row @ vel / n + self.slip
        return out
