"""
The simulated drives: what each motor applies, and what its driver reports.

No ROS, no MuJoCo here. Per motor, from the transmissions file's actuator keys:
``limits.effort`` (the torque saturates there), ``rotor_inertia``, ``friction`` and
``efficiency`` (NOTATION's gear stage, :class:`~transmission_bridge.transmissions.losses.Losses`:
the measured direction, the physics the bridge's commanded law inverts). Three modes:

* ``effort``: the torque last commanded (``actuator_commands`` efforts), held;
* ``position``: the drive's own PD about the commanded position and velocity, plus the
  command's effort as feed-forward, ``k (θ* − θ) + d (θ̇* − θ̇) + τ_ff``;
* ``motor_gains``: MIT mode, the same law with the stiffness and damping each command
  carries (``actuator_impedance_commands``).

Each law is evaluated at every physics step (the drive's own fast loop) and saturated. What
the driver reports: position, velocity and the mean torque applied over the state period, then
optionally quantised (``encoder_counts`` per turn of a rotary motor), with seeded Gaussian
noise, and delayed by ``delay`` states. Off by default: exact states.
"""

import collections
from dataclasses import dataclass
import math

import numpy as np

MODES = ('effort', 'position', 'motor_gains')


@dataclass
class DriveOptions:
    """The drives' settings (module docstring); the defaults report exact states."""

    dynamics: str = 'effort'
    position_stiffness: float = 5.0     # N m/rad at the motor (N/m linear)
    position_damping: float = 0.05      # N m s/rad
    encoder_counts: int = 0             # per turn; 0: no quantisation
    position_noise: float = 0.0         # standard deviations, motor units
    velocity_noise: float = 0.0
    effort_noise: float = 0.0
    delay: int = 0                      # states
    seed: int = 0


class Drives:
    """The motors of a transmission set (set order) as drives (module docstring)."""

    def __init__(self, tset, options):
        self.options = options
        n = tset.num_actuators
        actuators = [tset.actuator(a) for a in tset.actuator_names]
        self.limit = np.array([a.effort_limit for a in actuators])
        self.rotor = np.array([a.rotor_inertia for a in actuators])
        self.linear_motor = np.array([a.linear for a in actuators])
        self.losses = tset.losses
        self.lossless = self.losses.lossless
        # θ*, θ̇*, τ_ff, k, d per motor; the position mode's gains fixed.
        self.command = np.zeros((5, n))
        if options.dynamics == 'position':
            self.command[3], self.command[4] = options.position_stiffness, \
                options.position_damping
        self.commanded = False
        self._hold = 0              # states still held whatever is commanded (after a reset)
        self._rng = np.random.default_rng(options.seed)
        self._queue = collections.deque(maxlen=options.delay + 1)

    def reset(self, hold_states=0):
        """
        Forget every command: held again until the next one, and at least ``hold_states``.

        During those states the robot is held whatever is commanded (a running bridge
        commands its own hold at every state, which would end a plain "until the next
        command" at once); commands taken meanwhile are kept and move it afterwards.
        """
        self.command[:3] = 0.0
        if self.options.dynamics == 'motor_gains':
            self.command[3:] = 0.0
        self.commanded = False
        self._hold = int(hold_states)
        self._queue.clear()

    def holding(self):
        """Return True if the robot is held for this state (the engines ask once a state)."""
        if self._hold > 0:
            self._hold -= 1
            return True
        return not self.commanded

    def set_efforts(self, index, efforts):
        """Command torques (``effort`` mode; elsewhere the feed-forward)."""
        self.command[2, index] = efforts
        self.commanded = True

    def set_positions(self, index, positions, velocities, efforts):
        """Command positions, velocities and feed-forward efforts (``position`` mode)."""
        self.command[0, index], self.command[1, index] = positions, velocities
        self.command[2, index] = efforts
        self.commanded = True

    def set_gains(self, index, target, target_velocity, feed_forward, stiffness, damping):
        """Command the MIT law's five numbers (``motor_gains`` mode)."""
        self.command[:, index] = (target, target_velocity, feed_forward, stiffness, damping)
        self.commanded = True

    def torques(self, theta, thetad):
        """Return the saturated motor torques of the mode's law at ``(θ, θ̇)``."""
        target, target_d, feed, k, d = self.command
        if self.options.dynamics == 'effort':
            tau = feed.copy()
        else:
            tau = k * (target - theta) + d * (target_d - thetad) + feed
        return np.clip(tau, -self.limit, self.limit)

    def dry_stage(self, tau, thetad, rotor_acceleration, load):
        """
        Return ``(out, gain, band)``: each gear stage as a mean gain and a dry friction.

        NOTATION's stage written on its load: the motor's input ``τ_in`` and the torque ``s``
        the stage passes on satisfy ``τ_in = c s + δ`` with ``c = (1/η_f + η_b) / 2`` (the
        commanded law's mean gain) and a dry friction ``|δ| ≤ h |s|``, ``h = (1/η_f − η_b) / 2``.
        Sliding, ``δ = h |s| sign θ̇`` gives ``s = η_f τ_in`` where the motor drives and
        ``τ_in = η_b s`` where the load drives, every quadrant, self-locking stages included;
        stuck, any ``τ_in`` in ``[η_b s, s / η_f]`` holds the load ``s`` — with ``η_b ≤ 0`` that
        includes no torque at all: an unpowered self-locking stage holds any load.

        On the mechanism's side of the motor's coordinate: ``out = (τ − f) / c`` applied,
        the rotor as inertia ``I / c`` (the caller's), and a dry friction (MuJoCo's
        ``frictionloss``) of ``band = h / c · max(|s|, η_f |τ_in|)``: ``load`` is ``s`` of the
        last step (the stage's load lags one physics step), ``η_f |τ_in|`` what the stage passes
        when its motor drives, so a motor starting a free load slides at once. ``τ_in`` uses the
        last step's ``θ̈``. ``gain`` is ``1 / c``.
        """
        losses = self.losses
        up, back = losses.commanded_gains
        gain = 2.0 / (up + back)
        tau_f = tau - losses.friction(thetad)
        tau_in = tau_f - self.rotor * rotor_acceleration
        band = (up - back) * 0.5 * gain * np.maximum(np.abs(load),
                                                     losses.eta_f * np.abs(tau_in))
        return gain * tau_f, gain, band

    def stage(self, tau, thetad, rotor_acceleration):
        """
        Return ``(out, gain)``: what each gear stage passes on, and its gain d out / d τ.

        The stage's input is the motor torque less friction and the rotor's ``I θ̈`` (before
        the loss); ``θ̈`` is the last step's, and the caller puts ``gain I`` on the
        mechanism's side as inertia, so ``out + gain I θ̈_prev − gain I θ̈`` is the stage's
        output at the new acceleration (exact within a direction of power flow).
        """
        losses = self.losses
        tau_in = tau - self.rotor * rotor_acceleration
        out = losses.measured(tau_in, thetad)
        step = 1e-6 * np.maximum(1.0, np.abs(tau_in))
        gain = (losses.measured(tau_in + step, thetad) - out) / step
        return out + gain * self.rotor * rotor_acceleration, gain

    def report(self, theta, thetad, tau):
        """Return what the drivers publish now: quantised, noisy, delayed ``(θ, θ̇, τ)``."""
        o = self.options
        theta, thetad, tau = (np.array(x, dtype=float) for x in (theta, thetad, tau))
        if o.encoder_counts:
            step = 2 * math.pi / o.encoder_counts
            rotary = ~self.linear_motor
            theta[rotary] = np.round(theta[rotary] / step) * step
        for values, sigma in ((theta, o.position_noise), (thetad, o.velocity_noise),
                              (tau, o.effort_noise)):
            if sigma:
                values += self._rng.normal(0.0, sigma, values.shape)
        self._queue.append((theta, thetad, tau))
        return self._queue[0]
