"""
Draw doc/figures/ankle_stiffness.svg: a parallel ankle's joint spring seen by its two motors.

The closed-loop ankle of config/closed_loop_ankle_transmissions.yaml with joint stiffness
30 N·m/rad (pitch) and 20 N·m/rad (roll): the motor-space stiffness Jᵀ Kp J across the roll
range (pitch 0) and the pitch range (roll 0.3 rad), J = ∂q/∂θ at each pose. Each motor's own
stiffness (the diagonal) and the coupling between them (off the diagonal, which per-motor
gains cannot represent: the bridge sends it as feed-forward). ``python3
examples/ankle_stiffness_figure.py [OUT.svg]``.
"""

import pathlib
import sys

import matplotlib
import numpy as np

from transmission_bridge.transmissions import impedance, load_transmissions

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIGURE = ROOT / 'doc' / 'figures' / 'ankle_stiffness.svg'
KP = np.array([30.0, 20.0])        # N·m/rad: pitch, roll


def stiffness(tset, poses):
    """Return K_a (len(poses), 2, 2) at joint poses ``poses`` (pitch, roll)."""
    out = []
    for q in poses:
        theta = tset.joint_to_actuator('position', np.asarray(q, dtype=float))
        K, _ = impedance.motor_gains(impedance.jacobian(tset, theta), KP, np.zeros(2))
        out.append(K)
    return np.array(out)


def main(argv=None):
    """Write the figure to the path given, or doc/figures/ankle_stiffness.svg."""
    argv = sys.argv[1:] if argv is None else argv
    out = pathlib.Path(argv[0]) if argv else FIGURE
    matplotlib.use('Agg')
    matplotlib.rcParams['svg.hashsalt'] = 'ankle_stiffness'    # the same bytes every run
    from matplotlib import pyplot
    tset = load_transmissions(ROOT / 'config' / 'closed_loop_ankle_transmissions.yaml')
    roll = np.linspace(-0.45, 0.45, 91)
    pitch = np.linspace(-0.55, 0.55, 111)
    sweeps = [('roll (rad), pitch 0', roll, stiffness(tset, [(0.0, r) for r in roll])),
              ('pitch (rad), roll 0.3 rad', pitch, stiffness(tset, [(p, 0.3) for p in pitch]))]
    fig, axes = pyplot.subplots(1, 2, figsize=(9, 3.2), sharey=True)
    for ax, (label, x, K) in zip(axes, sweeps):
        ax.plot(x, K[:, 0, 0], color='#a33', label='left motor k')
        ax.plot(x, K[:, 1, 1], color='#36a', label='right motor k')
        ax.plot(x, K[:, 0, 1], color='#888', label='coupling (off-diagonal)')
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel('motor stiffness (N·m/rad)')
    axes[0].legend(loc='best', frameon=False)
    fig.tight_layout()
    fig.savefig(out, format='svg', metadata={'Date': None})
    print(f'wrote {out}')


if __name__ == '__main__':
    main()
