"""
Draw doc/figures/rotor_torque.svg: joint torques along a move, with and without the motors.

The example arm (config/example_robot.urdf) moves shoulder_lift and elbow along a
minimum-jerk path in 0.8 s; its inverse dynamics is computed from the links alone and
with the motors of config/example_robot_transmissions.yaml (rotor inertia and friction seen
through the reductions). ``python3 examples/rotor_torque_figure.py [OUT.svg]``.
"""

import pathlib
import sys

import matplotlib
import numpy as np

from transmission_bridge.kinematics import load_model
from transmission_bridge.transmissions import load_transmissions

CONFIG = pathlib.Path(__file__).resolve().parent.parent / 'config'
FIGURE = pathlib.Path(__file__).resolve().parent.parent / 'doc' / 'figures' / 'rotor_torque.svg'
DURATION = 0.8                                          # s
MOVES = {'shoulder_lift': (-1.2, 0.3), 'elbow': (1.5, 0.2)}      # rad, from -> to


def minimum_jerk(t, start, end):
    """Return position, velocity and acceleration of the minimum-jerk move at times ``t``."""
    s = t / DURATION
    d = end - start
    return (start + d * (10 * s**3 - 15 * s**4 + 6 * s**5),
            d * (30 * s**2 - 60 * s**3 + 30 * s**4) / DURATION,
            d * (60 * s - 180 * s**2 + 120 * s**3) / DURATION**2)


def torques():
    """Return ``(t, {joint: (links only, with the motors)})`` along the move."""
    model = load_model(CONFIG / 'example_robot.urdf')
    motors = load_transmissions(CONFIG / 'example_robot_transmissions.yaml')
    t = np.linspace(0.0, DURATION, 401)
    q = np.tile(model.default_positions, (len(t), 1))
    v, a = np.zeros_like(q), np.zeros_like(q)
    for name, (start, end) in MOVES.items():
        k = model.joint_names.index(name)
        q[:, k], v[:, k], a[:, k] = minimum_jerk(t, start, end)
    links = model.inverse_dynamics(q, v, a)
    total = model.inverse_dynamics(q, v, a, motors)
    return t, {n: (links[:, model.joint_names.index(n)], total[:, model.joint_names.index(n)])
               for n in MOVES}


def main(argv=None):
    """Write the figure to the path given, or doc/figures/rotor_torque.svg."""
    argv = sys.argv[1:] if argv is None else argv
    out = pathlib.Path(argv[0]) if argv else FIGURE
    matplotlib.use('Agg')
    matplotlib.rcParams['svg.hashsalt'] = 'rotor_torque'       # the same bytes every run
    from matplotlib import pyplot
    t, curves = torques()
    fig, axes = pyplot.subplots(1, len(curves), figsize=(9, 3.2), sharex=True)
    for ax, (name, (links, total)) in zip(axes, curves.items()):
        ax.plot(t, links, color='#888', label='links only')
        ax.plot(t, total, color='#a33', label='with the motors')
        ax.set_title(name)
        ax.set_xlabel('time (s)')
        ax.grid(alpha=0.3)
    axes[0].set_ylabel('joint torque (N·m)')
    axes[0].legend(loc='best', frameon=False)
    fig.tight_layout()
    fig.savefig(out, format='svg', metadata={'Date': None})
    print(f'wrote {out}')


if __name__ == '__main__':
    main()
