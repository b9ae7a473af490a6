"""
The dynamic identification's problem and data: what :mod:`.dynamic` fits, and from what.

:class:`Problem` (the model, the set, the motors and joints, their rest widths),
:class:`Parameters` (links π and per motor I_r, b, c, 1/η_f, η_b), :class:`Rows` (one bag's
samples as regressor rows) and :class:`Normal` (their square-root normal equations, per
motor and power-flow direction; many bags' stack exactly). The model of the torques is in
:mod:`.dynamic`'s docstring.
"""

import dataclasses

import numpy as np

from ..kinematics import regressor as reg
from ..kinematics.errors import ModelError
# No loss model (joint_states): the stages' rest widths all the same.
from ..transmissions.losses import REST_LINEAR, REST_ROTARY
DEFAULT_MIN_SPEED = 1.0     # rad/s of a rotary motor: the slowest row fitted


class Problem:
    """
    What one fit identifies: the columns of the rows, their names and the model's values.

    ``tset`` None: the data are joint torques (``joint_states``): each joint is its own ideal
    "motor", with a rotor (an armature), viscous and Coulomb friction, efficiency 1.
    """

    def __init__(self, model, tset=None, min_speed=DEFAULT_MIN_SPEED):
        self.model, self.tset = model, tset
        self.groups = reg.moving_bodies(model)
        self.bodies = list(self.groups)
        self.num_link = reg.PER_BODY * len(self.bodies)
        if not self.bodies:
            raise ModelError(f'model {model.name!r} has no body a joint moves')
        if tset is not None:
            self.columns = model.set_columns(tset)
            self.names = list(tset.actuator_names)
            losses = tset.losses
            self.rest = 1.0 / losses.inverse_rest
            start = (tset.rotors.inertia, losses.viscous, losses.coulomb, 1.0 / losses.eta_f,
                     losses.eta_b)
            self.damping = np.asarray(tset.damping, dtype=float)
            self.effort_map = (tset.joint_to_actuator('effort', np.eye(tset.num_joints))
                               if tset.constant_map else None)
        else:
            self.columns = np.arange(model.num_positions)
            self.names = list(model.joint_names)
            self.rest = np.array([REST_LINEAR if model.joint(j).type_name == 'prismatic'
                                  else REST_ROTARY for j in self.names])
            n = len(self.names)
            start = (np.zeros(n), np.zeros(n), np.zeros(n), np.ones(n), np.ones(n))
            self.damping = None
            self.effort_map = None
        # Rows slower than min_speed (rad/s; linear motors the same fraction of their rest
        # width) are left out: near rest, friction is not c sign(θ̇) (Stribeck, stiction).
        self.rest = self.rest * max(1.0, min_speed / REST_ROTARY)
        self.start = Parameters(reg.merged_parameters(model, self.groups),
                                *(np.array(x, dtype=float) for x in start))
        self.efficiency = tset is not None      # efficiencies are unknowns

    @property
    def num_motors(self):
        """Return how many motors (or joints, without transmissions) have rows."""
        return len(self.names)

    def payload(self, link, mass, com):
        """
        Return the merged parameters a point ``mass`` at ``com`` on ``link`` adds.

        Raises ModelError naming the link when the model has no such body.
        """
        model = self.model.without_payload()
        if link not in model.body_names:
            raise ModelError(f'the model has no link {link!r} to carry the payload')
        heavier = model.with_payload(link, mass, com)
        return (reg.merged_parameters(heavier, self.groups)
                - reg.merged_parameters(model, self.groups))

    def labels(self):
        """Return each unknown's name: link parameters, then per motor I_r, b, c, 1/η_f, η_b."""
        out = reg.labels(self.bodies)
        for kind in ('rotor_inertia', 'friction.viscous', 'friction.coulomb',
                     '1/efficiency.driving', 'efficiency.driven'):
            out += [f'{kind}({m})' for m in self.names]
        return out

    def rows(self, q, v, a, motor_v, motor_a, tau, known=None):
        """
        Return the :class:`Rows` of samples.

        Joint (q, q̇, q̈) (N, nq, model order), the motors' θ̇, θ̈ and measured torques (N, nA).
        ``known``: link parameters carried besides the unknown ones (a payload, in the
        merged bodies' parameters): their torques join the damping's, known.
        """
        Y = reg.regressor(self.model, q, v, a, self.bodies)[:, self.columns, :]
        cols = self.columns
        if self.tset is None:
            U, d = Y, np.zeros((len(q), self.num_motors))
        elif self.effort_map is not None:
            U = np.einsum('njp,ja->nap', Y, self.effort_map)
            d = (self.damping * v[:, cols]) @ self.effort_map
        else:
            n, nj, p = Y.shape
            at = np.broadcast_to(q[:, None, cols], (n, p, nj))
            U = self.tset.joint_to_actuator('effort', Y.transpose(0, 2, 1), at)
            U = U.transpose(0, 2, 1)
            d = self.tset.joint_to_actuator('effort', self.damping * v[:, cols], q[:, cols])
        if known is not None:
            d = d + U @ known
        return Rows(U, d, np.asarray(motor_v, float), np.asarray(motor_a, float),
                    np.asarray(tau, float))


@dataclasses.dataclass
class Parameters:
    """The unknowns: merged link parameters, and per motor I_r, b, c, 1/η_f, η_b."""

    pi: np.ndarray
    rotor: np.ndarray
    viscous: np.ndarray
    coulomb: np.ndarray
    alpha: np.ndarray           # 1 / η_f
    beta: np.ndarray            # η_b

    def copy(self):
        """Return a deep copy."""
        return Parameters(*(np.array(x, dtype=float) for x in dataclasses.astuple(self)))

    @property
    def eta_driving(self):
        """Return η_f per motor."""
        return 1.0 / self.alpha


@dataclasses.dataclass
class Rows:
    """Samples seen from the motors (see the module docstring): arrays over N samples."""

    U: np.ndarray               # (N, nA, P)
    d: np.ndarray               # (N, nA)
    motor_v: np.ndarray
    motor_a: np.ndarray
    tau: np.ndarray

    def outputs(self, pi):
        """Return the stage outputs τ_o = U π + d (N, nA)."""
        return self.U @ pi + self.d

    def predict(self, p):
        """Return the motor torques that the parameters ``p`` give: (N, nA)."""
        out = self.outputs(p.pi)
        gain = np.where(out * self.motor_v > 0, p.alpha, p.beta)
        return (gain * out + p.rotor * self.motor_a + p.viscous * self.motor_v
                + p.coulomb * np.sign(self.motor_v))


class Normal:
    """The square-root normal equations: per motor and direction, ``R`` and a row count."""

    def __init__(self, num_motors, num_link):
        width = num_link + 5
        self.R = np.zeros((num_motors, 2, width, width))
        self.count = np.zeros((num_motors, 2), dtype=np.int64)
        self.num_link = num_link

    def add(self, rows, pi, rest):
        """
        Add the moving rows of ``rows``, each in its power-flow direction at ``pi``.

        ``pi`` None: the direction from the data alone, the measured torque's power
        (``τ_a θ̇ > 0``: the motor drives); a later pass classifies at the fitted π.
        """
        moving = np.abs(rows.motor_v) >= rest
        power = rows.tau if pi is None else rows.outputs(pi)
        driving = power * rows.motor_v > 0
        for k in range(self.R.shape[0]):
            block = np.column_stack([rows.U[:, k], rows.motor_a[:, k], rows.motor_v[:, k],
                                     np.sign(rows.motor_v[:, k]), rows.d[:, k], rows.tau[:, k]])
            for c, mask in enumerate((driving[:, k], ~driving[:, k])):
                mask = mask & moving[:, k] & np.isfinite(block).all(axis=1)
                if mask.any():
                    self.R[k, c] = _stacked_factor(self.R[k, c], block[mask])
                    self.count[k, c] += int(mask.sum())
        return self

    def weighed(self, weights):
        """Return these factors with each motor's rows times its weight (the same fit's)."""
        out = Normal(self.R.shape[0], self.num_link)
        out.R = self.R * np.asarray(weights, dtype=float)[:, None, None, None]
        out.count = self.count.copy()
        return out

    def merge(self, other):
        """Return the factors of both data sets together (their rows stacked)."""
        out = Normal(self.R.shape[0], self.num_link)
        for k in range(self.R.shape[0]):
            for c in range(2):
                out.R[k, c] = _stacked_factor(self.R[k, c], other.R[k, c])
        out.count = self.count + other.count
        return out


def _stacked_factor(R, rows):
    """Return the upper-triangular factor of ``[R; rows]`` (as wide as R, zero-padded)."""
    width = R.shape[1]
    r = np.linalg.qr(np.vstack([R, rows]), mode='r')
    out = np.zeros((width, width))
    out[:r.shape[0]] = r[:width]
    return out
