"""
The one measured state of the bridge, without ROS: what goals, springs and commands read.

:class:`Measured`: the joint state last published (either route) and the motors' positions
and velocities, NaN where not measured; :func:`measure` makes it from the state side
(:class:`.state.ActuatorStates`), once per message, with the stale values unknown at a given
time and, for a command of a given stamp, the motors' velocities of that state
(:class:`VelocityHistory`: a lossy gear stage's torque depends on them).
"""

import typing

import numpy as np


class Measured(typing.NamedTuple):
    """The measured state: joints (set order) and motors, NaN where not measured."""

    position: np.ndarray            # joint positions (nJ,)
    velocity: np.ndarray            # joint velocities (nJ,)
    motor_position: np.ndarray      # motor positions (nA,)
    motor_velocity: np.ndarray      # motor velocities (nA,): what a stage's loss depends on


class VelocityHistory:
    """
    The motors' velocities of the last few states, by stamp: what a command's losses use.

    A command computed from a state carries that state's stamp (the kinematics node copies
    it); its gear stages' losses are taken at that state's motor velocities while the bridge
    still holds them (:data:`SIZE` states), so the live bridge, a replay and the offline
    converter give a command the same torque whichever state arrived first.
    """

    SIZE = 16

    def __init__(self, n_act):
        self.stamps = [-1] * self.SIZE         # a list: ``in`` and ``index`` scan it in C
        self.velocities = np.full((self.SIZE, n_act), np.nan)
        self._next = 0

    def record(self, stamp_ns, velocities):
        """Keep ``velocities`` (the motors') of the state stamped ``stamp_ns``."""
        k = self._next
        self.stamps[k] = stamp_ns
        self.velocities[k] = velocities
        self._next = (k + 1) % self.SIZE

    def at(self, stamp_ns):
        """Return the motors' velocities of a state stamped ``stamp_ns``, or None (0: none)."""
        stamps = self.stamps
        if not stamp_ns or stamp_ns not in stamps:
            return None
        return self.velocities[stamps.index(stamp_ns)]


def measure(states, now_ns=None, stamp_ns=None):
    """
    Return the :class:`Measured` state of ``states`` (:class:`.state.ActuatorStates`).

    Joints: the joint state last published (both routes), NaN where it did not publish a
    joint; motors: their latest positions and velocities, NaN where never reported. With
    ``now_ns`` (and ``states.stale_ns``), NaN too where stale at ``now_ns``: the joints of
    a transmission with a stale motor, and that motor. With ``stamp_ns`` (a command's), the
    motors' velocities of the state of that stamp where still held. Arrays shared until
    the next message: copy to keep.
    """
    key = (states.counters.published, states.counters.received, states.generation)
    cached = states.measured_cache
    if cached is None or cached[0] != key:
        n = states.transmissions.num_joints
        if states.joint_state is None or states.joint_kept is False:
            q, qd = np.full(n, np.nan), np.full(n, np.nan)
        else:
            q, qd = states.joint_state[0].copy(), states.joint_state[1].copy()
            if states.joint_kept is not None:
                gone = np.ones(n, dtype=bool)
                gone[states.joint_kept] = False
                q[gone] = qd[gone] = np.nan
        motors = Measured(q, qd, states.values[0].copy(), states.values[1].copy())
        cached = states.measured_cache = (key, motors)
    out = cached[1]
    if stamp_ns is not None and states.velocity_history is not None:
        then = states.velocity_history.at(stamp_ns)
        if then is not None:
            out = out._replace(motor_velocity=then)
    if now_ns is None or states.stale_ns is None:
        return out
    stale = states.stale_mask(now_ns)
    if not stale.any():
        return out
    q, qd = out.position.copy(), out.velocity.copy()
    theta, thetad = out.motor_position.copy(), out.motor_velocity.copy()
    theta[stale] = thetad[stale] = np.nan
    withheld = states.transmissions.membership.joints_of_motors(stale)
    q[withheld] = qd[withheld] = np.nan
    return Measured(q, qd, theta, thetad)


def motor_velocities(states, now_ns, stamp_ns=None):
    """
    Return every motor's velocity a command stamped ``stamp_ns`` takes its losses at.

    Those of the state of that stamp while ``states`` holds them (the state the command was
    computed from, stale or not since); else the latest, NaN where stale at ``now_ns`` or
    never reported (:func:`measure`). Shared until the next message: copy to keep.
    """
    history = states.velocity_history
    if stamp_ns and history is not None:
        then = history.at(stamp_ns)
        if then is not None:
            return then
    return measure(states, now_ns).motor_velocity
