"""
Draw doc/figures/loss_torque.svg: the motor torque a lossy gear needs, through zero velocity.

Two joints each hold a constant load while moving at a range of speeds, both directions: a
1:50 planetary elbow (efficiency 0.9 driving, 0.8 driven, viscous 1e-4 N·m·s/rad and Coulomb
0.02 N·m motor friction) holding 20 N·m, and a lift on a 13 x 4 mm ACME lead screw (its
efficiencies from the thread: self-locking) holding 100 N. Top: the motor torque the bridge
commands against the joint's velocity, beside the ideal gear's; bottom: the same across the
rest band (the motor within ±0.15 rad/s), where the at-rest rule blends the two directions.
``python3 examples/loss_torque_figure.py [OUT.svg]``.
"""

import math
import pathlib
import sys

import matplotlib
import numpy as np

from transmission_bridge.transmissions import load_transmissions

FIGURE = pathlib.Path(__file__).resolve().parent.parent / 'doc' / 'figures' / 'loss_torque.svg'
LEAD = 0.004                    # m per turn
SCREW = {'lead': LEAD, 'mean_diameter': 0.011, 'friction_coefficient': 0.15,
         'flank_angle': math.radians(14.5)}
JOINTS = {   # name: (actuator, reduction, load, joint speed range, unit)
    'elbow': ({'name': 'elbow_motor', 'mechanical_reduction': 50.0,
               'efficiency': {'driving': 0.9, 'driven': 0.8},
               'friction': {'viscous': 1e-4, 'coulomb': 0.02}}, 20.0, 0.5, 'rad/s', 'N·m'),
    'lift': ({'name': 'lift_motor', 'mechanical_reduction': 2 * math.pi / LEAD,
              'efficiency': SCREW}, 100.0, 0.01, 'm/s', 'N'),
}


def robot():
    """Return the two joints' transmission set (each a simple transmission, lossy)."""
    return load_transmissions({'transmissions': [
        {'name': name, 'type': 'simple', 'actuators': [actuator], 'joints': [{'name': name}]}
        for name, (actuator, *_) in JOINTS.items()]})


def curves(zoom=False):
    """Return ``{joint: (joint velocities, motor torque, ideal motor torque)}``."""
    tset = robot()
    out = {}
    for k, (name, (actuator, load, span, _, _)) in enumerate(JOINTS.items()):
        reduction = actuator['mechanical_reduction']
        if zoom:
            span = 0.15 / reduction             # the motor within ±0.15 rad/s
        qd = np.linspace(-span, span, 1201)
        efforts = np.zeros((len(qd), tset.num_joints))
        efforts[:, k] = load
        speeds = np.zeros_like(efforts)
        speeds[:, k] = qd * reduction
        motor = tset.commanded_motor_efforts(efforts, speeds)[:, k]
        out[name] = (qd, motor, np.full_like(qd, load / reduction))
    return out


def main(argv=None):
    """Write the figure to the path given, or doc/figures/loss_torque.svg."""
    argv = sys.argv[1:] if argv is None else argv
    out = pathlib.Path(argv[0]) if argv else FIGURE
    matplotlib.use('Agg')
    matplotlib.rcParams['svg.hashsalt'] = 'loss_torque'         # the same bytes every run
    from matplotlib import pyplot
    fig, axes = pyplot.subplots(2, 2, figsize=(9, 5.6))
    for row, zoom in enumerate((False, True)):
        for ax, (name, (qd, motor, ideal)) in zip(axes[row], curves(zoom).items()):
            unit = JOINTS[name][3]
            ax.plot(qd, ideal, color='#888', linestyle='--', label='ideal gear')
            ax.plot(qd, motor, color='#a33', label='with the losses')
            ax.axhline(0.0, color='#ccc', linewidth=0.8)
            ax.axvline(0.0, color='#ccc', linewidth=0.8)
            ax.set_title(f'{name}, holding {JOINTS[name][1]:g} {JOINTS[name][4]}'
                         + (': the rest band' if zoom else ''))
            ax.set_xlabel(f'joint velocity ({unit})')
            ax.grid(alpha=0.3)
        axes[row][0].set_ylabel('motor torque (N·m)')
    axes[0][0].legend(loc='best', frameon=False)
    fig.tight_layout()
    fig.savefig(out, format='svg', metadata={'Date': None})
    print(f'wrote {out}')


if __name__ == '__main__':
    main()
