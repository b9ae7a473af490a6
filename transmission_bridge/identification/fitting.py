"""
The dynamic identification's two convex steps and their joint step, to a fixed point.

The residual and its Jacobian over the square-root normal equations (:func:`linearised`),
the unknowns packed in one vector (:func:`pack`), and :class:`Alternation`: at fixed gains
the links and motor losses (the bodies' LMIs), at fixed links each motor's losses and gains
(bounds), then steps of all together linearised, each kept only where it lowers the
objective. :mod:`.dynamic` has the model and the method.
"""

import numpy as np

from . import convex
from .problem import Parameters
from ..kinematics import regressor as reg

RIDGE = 1e-6                # the first fit's prior, of the data's largest singular value
MAX_ITERATIONS = 300        # alternations of the two convex steps
TOLERANCE = 1e-10           # the fit stops when a step lowers the objective less (relative)
ROUGH = 1e-6                # the same, for the first fit (it only estimates the noise)
SLOW = 1e-3                 # alternation that lowers it less than this a round: joint steps
ETA_MIN = 0.01              # the lowest efficiency the fit may give
BODY_MARGIN = 1e-8          # a link's pseudo-inertia >= this times its model body's trace


class Alternation:
    """The two convex steps (module docstring) over one data set, to their fixed point."""

    def __init__(self, problem, normal, model, free, scale_free):
        self.problem, self.normal, self.model, self.free = problem, normal, model, free
        P = problem.num_link
        F = np.array([reg.pseudo_inertia(np.eye(reg.PER_BODY)[i])
                      for i in range(reg.PER_BODY)])
        # Each link's own share physical (with a margin): its merged body less the links
        # fixed to it, which keep the model's values in the URDF written.
        fixed = reg.fixed_shares(problem.model, problem.groups)
        self.psd = []
        for b in range(len(problem.bodies)):
            cols = np.arange(reg.PER_BODY * b, reg.PER_BODY * (b + 1))
            size = max(float(np.trace(reg.pseudo_inertia(model.pi[cols]))), 1e-6)
            floor = reg.pseudo_inertia(fixed[b]) + BODY_MARGIN * size * np.eye(4)
            self.psd.append((cols, F, floor))
        self.scale = None
        if scale_free:          # weighed by the data's columns at gains 1: not the model's
            ideal = model.copy()
            ideal.alpha, ideal.beta = np.ones(problem.num_motors), np.ones(problem.num_motors)
            A = linearised(problem, normal, ideal)[0]
            self.scale = scale_row(A, model.pi, P)
        # The first fit's pull to the model's scale: a thousandth of the torques' norm.
        self.loose = 1e-3 * float(np.linalg.norm(normal.R[:, :, -1, -1]))
        self.pull = 0.0
        self.stalled = []       # the rounds whose convex step the solver did not answer
        self.moved = False      # whether the last run took a step

    def ridge(self, spread):
        """Return the first fit's prior weights: RIDGE of the data's largest singular value."""
        A, _ = self._links_rows(self.model)
        P = self.problem.num_link
        finite = np.where(np.isfinite(spread[:P]), spread[:P], 0.0)
        top = np.linalg.norm(A[:, :P] * finite) if len(A) else 1.0
        return np.concatenate([RIDGE * top / spread[:P], np.zeros(len(spread) - P)])

    def run(self, p, weights, pull, tolerance=TOLERANCE):
        """
        Return ``(parameters, rounds)``: the fixed point from ``p``'s gains.

        ``weights``: the links' prior (per unknown); ``pull``: the scale's, a residual
        ``pull (c π - 1)`` (``c π = 1`` the model's scale, :func:`_scale_row`). The data
        are the same all along the scale (module docstring), so this picks the model's
        unless the bounds on the efficiencies forbid it: then the nearest allowed.

        Rounds of the two convex steps while they lower the objective by more than
        :data:`SLOW` each; then joint steps (the residual linearised in every unknown, the
        same constraints; :meth:`_joint`), each taken only as far as it lowers the objective,
        until one lowers it by less than ``tolerance`` (relative).
        """
        p, best, rounds = p.copy(), np.inf, 0
        self.pull = pull if self.scale is not None else 0.0
        efficiency = self.problem.efficiency and self.free[self.problem.num_link
                                                           + 3 * self.problem.num_motors:].any()
        joint = not efficiency
        for rounds in range(1, MAX_ITERATIONS + 1):
            try:
                if joint:
                    trial = self._joint(p, weights, best)
                else:
                    trial = self._links(p, weights)
                    if efficiency:
                        trial = self._motors(trial, weights)
                value = self.objective(trial, weights)
            except convex.Stalled as stalled:    # a step not found is a step not taken
                self.stalled.append(f'round {rounds}: {stalled}')
                value = np.inf
            if not value < best:                # a step that does not lower it: not taken
                if joint or not np.isfinite(best):
                    break
                joint = True
                continue
            previous, p, best = best, trial, value
            if previous - value <= tolerance * value:
                if joint:
                    break
                joint = True
            elif not joint and previous - value <= SLOW * value:
                joint = True
        self.moved = bool(np.isfinite(best))
        return p, rounds

    def _joint(self, p, weights, best):
        """Return the step of every unknown together (linearised), shortened until it lowers."""
        nA, P = self.problem.num_motors, self.problem.num_link
        J, r = linearised(self.problem, self.normal, p)
        z = pack(p)
        free = self.free
        y = J @ z - r
        y = y - J[:, ~free] @ z[~free]
        lower, upper = bounds(nA, P)
        A, y = self._pulled(J[:, free], y, z, free)
        index = np.cumsum(free) - 1
        psd = [(index[cols], F, floor) for cols, F, floor in self.psd if free[cols].all()]
        w = np.nan_to_num(weights, posinf=0.0)
        target = z.copy()
        target[free] = convex.least_squares(A, y, x0=pack(self.model)[free],
                                            weights=w[free], lower=lower[free],
                                            upper=upper[free], psd=psd)
        for _ in range(30):             # the constraints are convex: every point between holds
            trial = unpack(target, nA, P)
            if self.objective(trial, weights) < best:
                return trial
            target = 0.5 * (z + target)
        return p

    def objective(self, p, weights):
        """Return the residual's square plus the prior's."""
        r = linearised(self.problem, self.normal, p)[1]
        prior = weights * (pack(p) - pack(self.model))
        value = float(r @ r + np.sum(np.square(prior[np.isfinite(prior)])))
        if self.pull:
            row, offset = self.scale
            value += (self.pull * (row @ pack(p) / offset - 1.0)) ** 2
        return value

    def _pulled(self, A, y, z, free):
        """Return ``(A, y)`` with the scale's pull as one more row (over ``free`` of ``z``)."""
        if not self.pull:
            return A, y
        row, offset = self.scale
        c = row[:len(z)] / offset * self.pull
        return np.vstack([A, c[free]]), np.concatenate([y, [self.pull - c[~free] @ z[~free]]])

    def _links_rows(self, p):
        """Return ``(A, y)``: the rows in (π, I_r, b, c) at ``p``'s gains."""
        problem, normal = self.problem, self.normal
        nA, P = problem.num_motors, problem.num_link
        blocks, targets = [], []
        for k, _, gain, R in motor_blocks(normal, p):
            B = np.zeros((R.shape[0], P + 3 * nA))
            B[:, :P] = gain * R[:, :P]
            for j in range(3):
                B[:, P + j * nA + k] = R[:, P + j]
            blocks.append(B)
            targets.append(R[:, P + 4] - gain * R[:, P + 3])
        return np.vstack(blocks), np.concatenate(targets)

    def _links(self, p, weights):
        """Return ``p`` with (π, I_r, b, c) the best at its gains (the links' LMIs)."""
        nA, P = self.problem.num_motors, self.problem.num_link
        A, y = self._links_rows(p)
        x = np.concatenate([p.pi, p.rotor, p.viscous, p.coulomb])
        free = self.free[:P + 3 * nA]
        y = y - A[:, ~free] @ x[~free]
        lower = np.full(P + 3 * nA, -np.inf)
        lower[P:] = 0.0
        A, y = self._pulled(A[:, free], y, x, free)
        index = np.cumsum(free) - 1
        psd = [(index[cols], F, floor) for cols, F, floor in self.psd if free[cols].all()]
        w = np.nan_to_num(weights[:P + 3 * nA], posinf=0.0)
        x[free] = convex.least_squares(A, y, x0=pack(self.model)[:P + 3 * nA][free],
                                       weights=w[free], lower=lower[free],
                                       psd=psd)
        out = p.copy()
        out.pi, out.rotor, out.viscous, out.coulomb = (
            x[:P], x[P:P + nA], x[P + nA:P + 2 * nA], x[P + 2 * nA:])
        return out

    def _motors(self, p, weights):
        """Return ``p`` with each motor's (I_r, b, c, 1/η_f, η_b) the best at its π."""
        problem, normal = self.problem, self.normal
        nA, P = problem.num_motors, problem.num_link
        blocks, targets = [], []
        for k, c, _, R in motor_blocks(normal, p):
            B = np.zeros((R.shape[0], 5 * nA))
            for j in range(3):
                B[:, j * nA + k] = R[:, P + j]
            B[:, (3 + c) * nA + k] = R[:, :P] @ p.pi + R[:, P + 3]
            blocks.append(B)
            targets.append(R[:, P + 4])
        A, y = np.vstack(blocks), np.concatenate(targets)
        x = pack(p)[P:]
        free = self.free[P:]
        y = y - A[:, ~free] @ x[~free]
        lower, upper = (b[P:] for b in bounds(nA, P))
        w = np.nan_to_num(weights[P:], posinf=0.0)
        x[free] = convex.least_squares(A[:, free], y, x0=pack(self.model)[P:][free],
                                       weights=w[free], lower=lower[free], upper=upper[free])
        return unpack(np.concatenate([p.pi, x]), nA, P)


def bounds(nA, P):
    """Return ``(lower, upper)`` of every unknown: links free, I_r, b, c >= 0, 0 < η <= 1."""
    lower = np.concatenate([np.full(P, -np.inf), np.zeros(3 * nA), np.ones(nA),
                            np.full(nA, ETA_MIN)])
    upper = np.concatenate([np.full(P + 3 * nA, np.inf), np.full(nA, 1.0 / ETA_MIN),
                            np.ones(nA)])
    return lower, upper


def pack(p):
    """Return the unknowns in one vector: π, I_r, b, c, 1/η_f, η_b."""
    return np.concatenate([p.pi, p.rotor, p.viscous, p.coulomb, p.alpha, p.beta])


def unpack(z, nA, P):
    """Return the :class:`Parameters` of one vector (:func:`pack`)."""
    rest = z[P:].reshape(5, nA)
    return Parameters(z[:P].copy(), *(x.copy() for x in rest))


def scale_row(J, pi_model, P):
    """
    Return ``(row, offset)``, the residual ``row . z - offset`` that holds ``c . pi = 1``.

    The links' common scale, held at the model's: ``c`` weighs each link parameter by its
    column's norm squared in the data (the parameters the data see most set the scale),
    normalised so the model's ``pi`` has 1; the row is heavy (1000 times the largest
    column), so the fit keeps it to rounding.
    """
    norms = np.linalg.norm(J, axis=0)
    c = np.zeros(J.shape[1])
    c[:P] = np.square(norms[:P]) * pi_model
    at_model = float(c[:P] @ pi_model)
    if not at_model > 0:
        return None
    c /= at_model
    weight = 1e3 * norms.max() / np.linalg.norm(c)
    return c * weight, weight


def linearised(problem, normal, p):
    """
    Return ``(J, r)``: the residual over every block and its Jacobian in all the unknowns.

    Unknowns: π (P), I_r, b, c, 1/η_f, η_b (nA each). Block (k, direction): residual
    ``R w``, ``w = [γ π; I_r; b; c; γ; -1]``.
    """
    nA, P = problem.num_motors, problem.num_link
    width = P + 5 * nA
    blocks, residuals = [], []
    for k, c, gain, R in motor_blocks(normal, p):
        residuals.append(R @ block_weights(p, k, gain))
        J = np.zeros((P + 5, width))
        J[:, :P] = gain * R[:, :P]
        for j in range(3):
            J[:, P + j * nA + k] = R[:, P + j]
        J[:, P + (3 + c) * nA + k] = R[:, :P] @ p.pi + R[:, P + 3]
        blocks.append(J)
    return np.vstack(blocks), np.concatenate(residuals)


def motor_blocks(normal, p):
    """Yield ``(motor, direction, its gain, R)`` of every motor and direction with rows."""
    for k in range(normal.R.shape[0]):
        for c, gain in ((0, p.alpha[k]), (1, p.beta[k])):
            if normal.count[k, c]:
                yield k, c, gain, normal.R[k, c]


def block_weights(p, k, gain):
    """Return ``w`` with ``R w`` a block's residual: ``[γ π; I_r; b; c; γ; -1]``."""
    return np.concatenate([gain * p.pi, [p.rotor[k], p.viscous[k], p.coulomb[k], gain, -1.0]])
