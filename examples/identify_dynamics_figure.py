"""
Draw doc/figures/identify_dynamics.svg: a MuJoCo arm's motor torques, predicted before and after.

The six-joint arm of test/mujoco_arm.py (MuJoCo integrates it; its motors sit behind a
simple ideal, a simple, a differential and a coupling lossy gear) tracks the excitation
``transmission_bridge_identify excite`` writes for its CAD model (links off by up to 25 %);
``identify --dynamic`` fits the recording. Shown: four seconds of an independent motion
(a multi-sine the fit never saw), each motor's measured torque and what the CAD model and the
identified model (the URDF and transmissions YAML the tool wrote, loaded as a user loads
them) predict. Needs MuJoCo (pip install mujoco).
``python3 examples/identify_dynamics_figure.py [OUT.svg]``.
"""

import pathlib
import subprocess
import sys
import tempfile

import matplotlib
import numpy as np
import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIGURE = ROOT / 'doc' / 'figures' / 'identify_dynamics.svg'
sys.path.insert(0, str(ROOT / 'test'))

START = np.array([0.0, 0.3, 0.4, 0.0, 0.0, 0.0])
SHOWN = (4.0, 8.0)              # s of the independent motion


def main():
    """Simulate, identify, draw."""
    import mujoco_arm as arm
    import test_identify_dynamic as rig
    from transmission_bridge.kinematics import load_model
    from transmission_bridge.transmissions import load_transmissions
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else FIGURE
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        cad = root / 'cad.urdf'
        cad.write_text(arm.urdf(rig.cad_links(), name='mj_arm'))
        trans = root / 'transmissions.yaml'
        trans.write_text(yaml.safe_dump(arm.transmissions(), sort_keys=False))
        tset = load_transmissions(trans)
        tool = [sys.executable, '-m', 'transmission_bridge.tools.identify']
        subprocess.run(tool + ['excite', '--model', str(cad), '--transmissions', str(trans),
                               '--duration', '60', '--start', ','.join(map(str, START)),
                               '--output', str(root / 'goal.yaml'), '--seed', '3'],
                       check=True, capture_output=True)
        trajectory, end = rig.goal_trajectory(root / 'goal.yaml')
        rig.write_bag(root / 'bag', tset, *arm.simulate(trajectory, end), seed=rig.SEED)
        subprocess.run(tool + [str(root / 'bag'), '--dynamic', '--model', str(cad),
                               '--transmissions', str(trans), '--output',
                               str(root / 'id.urdf'), '--output-transmissions',
                               str(root / 'id.yaml')], check=True, capture_output=True)
        t, q, qd, qdd, tau = arm.simulate(arm.multisine(START, rig.SEED + 1), SHOWN[1])
        _, _, measured = arm.motors(tset, q, qd, qdd, tau)
        before = rig._predicted(load_model(cad), tset, q, qd, qdd)
        after = rig._predicted(load_model(root / 'id.urdf'), load_transmissions(
            root / 'id.yaml'), q, qd, qdd)
    shown = (t >= SHOWN[0]) & (t <= SHOWN[1])
    names = list(tset.actuator_names)
    fig, axes = plt.subplots(3, 2, figsize=(9.0, 6.4), sharex=True)
    for k, ax in enumerate(axes.T.ravel()):
        ax.plot(t[shown], measured[shown, k], color='0.75', lw=3.5, label='measured (MuJoCo)')
        ax.plot(t[shown], before[shown, k], color='tab:red', lw=1.0, ls='--',
                label='CAD model')
        ax.plot(t[shown], after[shown, k], color='tab:blue', lw=1.0, label='identified')
        ax.set_title(names[k], fontsize=9)
        ax.set_ylabel('N·m', fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in axes[-1]:
        ax.set_xlabel('time, s (a motion the fit never saw)', fontsize=8)
    axes[0, 0].legend(fontsize=7, loc='best')
    fig.suptitle('Motor torques of a MuJoCo arm behind lossy gears: predicted before and after '
                 'identify --dynamic', fontsize=10)
    fig.tight_layout()
    fig.savefig(out, format=out.suffix.lstrip('.') or 'svg',
                metadata={'Date': None} if out.suffix == '.svg' else None)
    print(f'wrote {out}')


if __name__ == '__main__':
    main()
