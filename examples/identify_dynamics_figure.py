"""
Draw doc/figures/identify_dynamics.svg: a MuJoCo arm's motor torques, predicted before and after.

The five-joint arm of test/mujoco_robots.py (MuJoCo integrates it: a vertical yaw, shoulder
and elbow behind gears 50, -80, 30, a pitch/roll differential wrist ±20, every motor's gear
lossy) tracks a multi-sine for 40 s; its motors are measured as a driver measures them. The
user's CAD is 20-30 % off in every mass, centre of mass and principal moment (seed 4), the
transmissions file has no motor numbers. ``identify --dynamic`` fits the recording from
that start. Shown: four seconds of another multi-sine (never fitted), each motor's torque
and what the CAD and the identified files (loaded as a user loads them) predict, with each
motor's RMS error over the whole check motion. Needs MuJoCo (pip install mujoco).
``python3 examples/identify_dynamics_figure.py [OUT.svg]``.
"""

import pathlib
import sys
import tempfile

import matplotlib
import numpy as np
import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIGURE = ROOT / 'doc' / 'figures' / 'identify_dynamics.svg'
sys.path.insert(0, str(ROOT / 'test'))

ROBOT, SEED = 'arm5', 4
SHOWN = (6.0, 10.0)             # s of the independent motion
START_NS = 1_750_000_000 * 10**9


def main():
    """Simulate, identify, draw."""
    import mujoco_robots as robots
    from test_identify_any_start import _predicted
    from transmission_bridge.bag.example import write_states_bag
    from transmission_bridge.kinematics import load_model
    from transmission_bridge.tools.identify import main as identify
    from transmission_bridge.transmissions import load_transmissions
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else FIGURE
    spec = robots.ROBOTS[ROBOT]
    rng = np.random.default_rng(SEED)
    links = robots.true_links(ROBOT, rng)
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        (root / 'cad.urdf').write_text(robots.urdf(ROBOT, robots.cad(links, rng)))
        (root / 'blank.yaml').write_text(yaml.safe_dump(robots.transmissions(ROBOT),
                                                        sort_keys=False))
        tset = load_transmissions(root / 'blank.yaml')
        run = robots.simulate(ROBOT, links, SEED + 10, 40.0)
        (t, theta, thetad, tau), _ = robots.driver(tset, run, spec['lossy'], SEED + 110)
        write_states_bag(root / 'train', tset.actuator_names,
                         START_NS + np.round(t * 1e9).astype(np.int64), theta, thetad, tau)
        assert identify([str(root / 'train'), '--dynamic', '--model', str(root / 'cad.urdf'),
                         '--transmissions', str(root / 'blank.yaml'), '--output',
                         str(root / 'id.urdf'), '--output-transmissions',
                         str(root / 'id.yaml')]) == 0
        run = robots.simulate(ROBOT, links, SEED + 20, 16.0)
        (t, q, qd, qdd, _), measured = run, robots.driver(tset, run, spec['lossy'], 0)[1]
        before = _predicted(load_model(str(root / 'cad.urdf')), tset, q, qd, qdd)
        after = _predicted(load_model(str(root / 'id.urdf')),
                           load_transmissions(root / 'id.yaml'), q, qd, qdd)
    shown = (t >= SHOWN[0]) & (t <= SHOWN[1])
    names = list(tset.actuator_names)
    fig, axes = plt.subplots(3, 2, figsize=(9.0, 6.4), sharex=True)
    lines = []
    for k, ax in enumerate(axes.T.ravel()[:len(names)]):
        ax.plot(t[shown], measured[shown, k], color='0.75', lw=3.5, label='measured (MuJoCo)')
        ax.plot(t[shown], before[shown, k], color='tab:red', lw=1.0, ls='--',
                label='CAD model')
        ax.plot(t[shown], after[shown, k], color='tab:blue', lw=1.0, label='identified')
        ax.set_title(names[k], fontsize=9)
        ax.set_ylabel('N·m', fontsize=8)
        ax.tick_params(labelsize=7)
        rms = np.sqrt(np.mean(measured[:, k] ** 2))
        cad, fit = (np.sqrt(np.mean((x[:, k] - measured[:, k]) ** 2)) / rms
                    for x in (before, after))
        lines.append(f'{names[k]:18s} CAD {cad:6.1%}   identified {fit:5.1%}')
    text = axes.T.ravel()[-1]
    text.axis('off')
    for ax in axes[-1]:
        ax.set_xlabel('time, s (a motion the fit never saw)', fontsize=8)
    axes[0, 0].legend(fontsize=7, loc='best')
    fig.suptitle('A MuJoCo arm behind lossy gears, identified from a CAD 20-30 % off with no '
                 'motor numbers', fontsize=10)
    fig.tight_layout()
    box = text.get_position()
    heading = "RMS error over the 16 s check motion,\nof each motor's RMS torque:\n\n"
    fig.text(box.x0, box.y1, heading + '\n'.join(lines), va='top', family='monospace',
             fontsize=7)
    fig.savefig(out, format=out.suffix.lstrip('.') or 'svg',
                metadata={'Date': None} if out.suffix == '.svg' else None)
    print(f'wrote {out}')


if __name__ == '__main__':
    main()
