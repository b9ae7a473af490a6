"""
The dynamic fit's passes: the power-flow directions settled by fitting again.

No ROS, no bags here. Each row's power-flow direction (the motor driving, or the load
driving) decides which efficiency its torque carries; a first pass takes it from the data
(the measured torque's power), each later pass from the last fit's stage outputs. The fit
(:func:`.dynamic.solve`) is repeated over fresh factors while rows change direction, fewer
each pass, and the answer moves by more than :data:`PASS_SIGMAS` of its σ, at most
:data:`MAX_PASSES` times. Where the rows come from (one bag here, many on Dask workers) is
the caller's: it passes a function that returns the factors of every bag at a π.
"""

import numpy as np

from . import dynamic
from ..kinematics.errors import ModelError

MAX_PASSES = 8
PASS_SIGMAS = 0.1           # no further pass once a pass moves no unknown by more (its σ)


class IdleMotors(ModelError):
    """Motors whose rows are all slower than the fit reads: nothing of theirs identified."""

    def __init__(self, names):
        super().__init__(f'{", ".join(names)} never move faster than the slowest row the fit '
                         'reads')
        self.names = names


def fit_in_passes(problem, normals, keep_idle=False, scale_known=False):
    """
    Return the fit whose rows' power-flow directions no longer change (module docstring).

    ``normals(pi)``: the :class:`.problem.Normal` factors of every data set at the link
    parameters ``pi`` (None: directions from the data alone), in a fixed order; they are
    merged in that order. Raises :class:`IdleMotors` naming the motors without a row
    (unless ``keep_idle``), ModelError where the first pass finds no step.
    """
    pi, fit, previous, last_flips, last_fit = None, None, None, np.inf, None
    for _ in range(MAX_PASSES):
        parts = normals(pi)
        normal = parts[0]
        for part in parts[1:]:
            normal = normal.merge(part)
        idle = [problem.names[k] for k in np.flatnonzero(normal.count.sum(axis=1) == 0)]
        if idle and not keep_idle:
            raise IdleMotors(idle)
        fit = dynamic.solve(problem, normal, fit, scale_known=scale_known)
        # Another pass while rows change their power-flow direction, fewer each pass, and
        # the answer moves (a few flip where the stage output crosses 0 and weigh next to
        # nothing: a thousandth of the rows is none; as many as the pass before, or more,
        # flip back and forth).
        if previous is not None:
            flips = int(np.abs(previous - normal.count).sum())
            if (flips <= max(1, 1e-3 * normal.count.sum()) or flips >= last_flips
                    or fit.change_from(last_fit) <= PASS_SIGMAS):
                break
            last_flips = flips
        previous, pi, last_fit = normal.count.copy(), fit.parameters.pi, fit
    return fit
