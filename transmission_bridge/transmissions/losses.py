"""
Gear losses per motor, with Modelica's LossyGear semantics: efficiency by power flow, friction.

Each actuator drives its transmission through a gear stage of its own, between the motor and
the transmission's ideal map (the reduction stays in the map; the stage passes torque in the
motor's units, N·m or N). The stage has

* ``η_f`` (efficiency driving, 0 < η_f ≤ 1): the share of the power that reaches the load
  when the motor drives it;
* ``η_b`` (efficiency driven, η_b ≤ 1): the share that reaches the motor when the load
  drives; η_b ≤ 0 is a self-locking stage (a lead screw, a worm), which the load cannot
  back-drive: lowering a load then takes motor torque in the direction of motion;
* the motor's friction ``f(θ̇) = b θ̇ + c σ(θ̇)`` (viscous ``b``, Coulomb ``c``), on the motor
  side of the stage.

Formulas (θ̇ the motor's velocity; the stage output τ_o is what the transmission's ideal
effort map takes, so the joints get ``τ_j = effort_map(τ_o) − b_j q̇``):

=====================================  ==========================================
measured (motor torque τ_a → τ_o)      commanded (wanted τ_o → motor torque τ_a)
=====================================  ==========================================
τ_in = τ_a − f(θ̇)                      τ_in = τ_o / η_f   if τ_o θ̇ > 0 (motor drives)
τ_o = η_f τ_in   if τ_in θ̇ > 0         τ_in = η_b τ_o     if τ_o θ̇ < 0 (load drives)
τ_o = τ_in / η_b if τ_in θ̇ < 0         τ_a = τ_in + f(θ̇)
=====================================  ==========================================

**At rest** the direction of power flow is not defined (Modelica's stuck mode: any torque
between η_b τ_o and τ_o / η_f holds the load). The rule here is continuous in θ̇ and exact for
|θ̇| ≥ w: between −w and +w each direction's torque is the straight line between its exact
values at θ̇ = −w and θ̇ = +w, so it is exactly as steep as a linear blend across ±w, the
Coulomb term included (``σ(θ̇) = clip(θ̇ / w, −1, 1)`` in place of sign θ̇). For a command this
is, with ``d = σ(θ̇) sign(τ_o)``,

    τ_a = (ḡ + d Δg) τ_o + b θ̇ + c σ(θ̇),    ḡ = (1/η_f + η_b) / 2,  Δg = (1/η_f − η_b) / 2

and at rest the mean of lifting and lowering, ``τ_o (1/η_f + η_b) / 2``: inside every stage's
stuck band (η_b τ_o ≤ it ≤ τ_o / η_f), never less than holding the load needs, never more
than lifting it. A measurement interpolates the same way between its exact values at ±w.
``w`` is :data:`REST_ROTARY` (0.05 rad/s) for a rotary motor and :data:`REST_LINEAR`
(0.005 m/s) for a linear one, so every formula is exact at every motor speed above 0.1 rad/s
(0.01 m/s). A self-locking stage is never back-driven while moving: a measured state with
τ_in θ̇ < 0 there (the motor taking power) is not one the stage can be in, and is read as
lossless. An unknown velocity (NaN) is taken as rest.

The numbers (``η``, ``b``, ``c``) are per actuator (:class:`Losses`); the per-message loops
are :mod:`.loss_loops`' (numba where installed), equal to these to the last bit.

>>> import numpy as np
>>> stage = Losses(eta_driving=[0.8], eta_driven=[0.5], viscous=[0.0], coulomb=[0.0],
...                rest=[REST_ROTARY])
>>> stage.commanded(np.array([1.0]), np.array([1.0])), stage.commanded(np.array([1.0]),
...                                                                     np.array([-1.0]))
(array([1.25]), array([0.5]))
>>> stage.measured(np.array([1.25]), np.array([1.0]))      # the inverse, moving
array([1.])
>>> stage.commanded(np.array([1.0]), np.array([0.0]))     # at rest: (1/0.8 + 0.5) / 2
array([0.875])
"""

import math

import numpy as np

from .errors import ConfigError

#: Blend half-width of a rotary motor's stage at rest, rad/s (exact above it).
REST_ROTARY = 0.05
#: The same for a linear motor, m/s.
REST_LINEAR = 0.005


def screw_efficiency(lead, mean_diameter, friction_coefficient, flank_angle, who='screw'):
    """
    Return ``(η_f, η_b)`` of a power screw or worm from its geometry.

    ``lead`` (m of travel per revolution), ``mean_diameter`` (m), ``friction_coefficient``
    μ (dimensionless) of the thread, ``flank_angle`` α (rad: half the thread angle, 14.5° =
    0.2531 rad for ACME, 15° for trapezoidal, 0 for square threads). The lead angle
    λ = atan(lead / (π d)); the friction angle, the flank taken in, φ′ = atan(μ / cos α):

        η_f = tan λ / tan(λ + φ′)        η_b = tan(λ − φ′) / tan λ

    η_b ≤ 0 (λ ≤ φ′) is self-locking. Raises ConfigError naming ``who`` where the geometry is
    not a screw (non-positive lead or diameter, negative μ, α outside [0, π/2)) or cannot be
    driven at all (λ + φ′ ≥ π/2).

    >>> [round(x, 3) for x in screw_efficiency(0.004, 0.011, 0.15, 0.2531)]  # a 13 x 4 ACME
    [0.42, -0.333]
    """
    values = {'lead': lead, 'mean_diameter': mean_diameter,
              'friction_coefficient': friction_coefficient, 'flank_angle': flank_angle}
    for key, value in values.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool) \
                or not math.isfinite(value):
            raise ConfigError(f'{who}: efficiency.{key} must be a finite number, got {value!r}')
    if lead <= 0 or mean_diameter <= 0:
        raise ConfigError(f'{who}: efficiency.lead and .mean_diameter must be > 0, got '
                          f'{lead!r} and {mean_diameter!r}')
    if friction_coefficient < 0:
        raise ConfigError(f'{who}: efficiency.friction_coefficient must be >= 0, got '
                          f'{friction_coefficient!r}')
    if not 0 <= flank_angle < math.pi / 2:
        raise ConfigError(f'{who}: efficiency.flank_angle must be in [0, pi/2) rad, got '
                          f'{flank_angle!r}')
    lam = math.atan(lead / (math.pi * mean_diameter))
    phi = math.atan(friction_coefficient / math.cos(flank_angle))
    if lam + phi >= math.pi / 2:
        raise ConfigError(f'{who}: a lead angle of {math.degrees(lam):.3g} deg and a friction '
                          f'angle of {math.degrees(phi):.3g} deg: the screw cannot be driven')
    return math.tan(lam) / math.tan(lam + phi), math.tan(lam - phi) / math.tan(lam)


class Losses:
    """
    The gear stages of a set's actuators (set order): efficiencies, friction, rest widths.

    :attr:`lossless` when every stage passes torque unchanged (η 1, no friction): then the
    bridge maps efforts as an ideal gear, to the bit. :meth:`measured` and
    :meth:`commanded` take arrays of torques and velocities (..., nA), batches included.
    """

    def __init__(self, eta_driving, eta_driven, viscous, coulomb, rest):
        self.eta_f = np.asarray(eta_driving, dtype=float)
        self.eta_b = np.asarray(eta_driven, dtype=float)
        self.viscous = np.asarray(viscous, dtype=float)
        self.coulomb = np.asarray(coulomb, dtype=float)
        self.inverse_rest = 1.0 / np.asarray(rest, dtype=float)
        # Per motor, the gains of each direction: measured (driving, driven), commanded. A
        # self-locking stage is never back-driven while moving: read lossless there.
        back = np.ones_like(self.eta_b)
        back[self.eta_b > 0] = 1.0 / self.eta_b[self.eta_b > 0]
        self.measured_gains = (self.eta_f, back)
        self.commanded_gains = (1.0 / self.eta_f, self.eta_b)
        #: The stages with an efficiency below 1: their rotors' torque precedes the loss.
        self.inefficient = (self.eta_f != 1.0) | (self.eta_b != 1.0)
        #: The stages that lose something (their motors' efforts are not the ideal map's).
        self.lossy = self.inefficient | (self.viscous != 0.0) | (self.coulomb != 0.0)
        self.lossless = not self.lossy.any()

    def subset(self, motors):
        """Return the losses of ``motors`` (set indices), in that order."""
        motors = np.asarray(motors, dtype=np.intp)
        return Losses(self.eta_f[motors], self.eta_b[motors], self.viscous[motors],
                      self.coulomb[motors], 1.0 / self.inverse_rest[motors])

    @classmethod
    def of(cls, actuators):
        """Return the losses of ``actuators`` (:class:`~.spec.ActuatorSpec`, set order)."""
        return cls([a.efficiency_driving for a in actuators],
                   [a.efficiency_driven for a in actuators],
                   [a.viscous_friction for a in actuators],
                   [a.coulomb_friction for a in actuators],
                   [REST_LINEAR if a.linear else REST_ROTARY for a in actuators])

    def rest_fraction(self, velocities):
        """Return σ(θ̇) = clip(θ̇ / w, −1, 1) per motor (0 where the velocity is unknown)."""
        s = np.clip(np.asarray(velocities, dtype=float) * self.inverse_rest, -1.0, 1.0)
        return np.where(np.isnan(s), 0.0, s)

    def friction(self, velocities):
        """Return each motor's friction torque f(θ̇) = b θ̇ + c σ(θ̇) (0 where unknown)."""
        v = np.asarray(velocities, dtype=float)
        return np.where(np.isnan(v), 0.0, self.viscous * v) + self.coulomb * \
            self.rest_fraction(v)

    def measured(self, torques, velocities):
        """
        Return the stage outputs τ_o of motor torques ``torques`` at ``velocities``.

        Exact where |θ̇| ≥ w; below, the straight line between the exact values at ±w.
        """
        tau_a = np.asarray(torques, dtype=float)
        v = np.asarray(velocities, dtype=float)
        v = np.where(np.isnan(v), 0.0, v)
        s = self.rest_fraction(v)
        edge = self.viscous / self.inverse_rest + self.coulomb        # f(w)
        high = self._exact_measured(tau_a - edge, 1.0)                # at θ̇ = +w
        low = self._exact_measured(tau_a + edge, -1.0)                # at θ̇ = −w
        blend = low + (s + 1.0) * 0.5 * (high - low)
        moving = self._exact_measured(tau_a - self.viscous * v - self.coulomb * np.sign(v),
                                      np.sign(v))
        return np.where(np.abs(s) < 1.0, blend, moving)

    def _exact_measured(self, tau_in, direction):
        """Return a stage's output of ``tau_in`` moving in ``direction`` (±1): its branch."""
        driving, driven = self.measured_gains
        return np.where(tau_in * direction > 0, driving, driven) * tau_in

    def commanded(self, outputs, velocities):
        """
        Return the motor torques τ_a that give stage outputs ``outputs`` at ``velocities``.

        ``(ḡ + d Δg) τ_o + f(θ̇)`` (module docstring): exact where |θ̇| ≥ w, the straight line
        between the exact values at ±w below.
        """
        gain, friction = self.stage_parts(outputs, velocities)
        return gain * np.asarray(outputs, dtype=float) + friction

    def stage_parts(self, outputs, velocities):
        """
        Return ``(gain, friction)`` per motor: τ_a = gain τ_o + friction, for any τ_o ≥ 0 k.

        The gain depends on τ_o's sign only, so scaling a command by k ≥ 0 scales its
        loss-free part: what limiting a command as a whole needs.
        """
        tau_o = np.asarray(outputs, dtype=float)
        d = self.rest_fraction(velocities) * np.sign(tau_o)
        up, back = self.commanded_gains
        return (up + back) * 0.5 + d * ((up - back) * 0.5), self.friction(velocities)
