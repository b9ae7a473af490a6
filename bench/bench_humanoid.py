"""
The kinematics library on public arms and humanoids against Pinocchio, same run.

Robots of example-robot-data (PyPI): UR5 (6 joints), Unitree G1 (29), G1 with hands (43),
Centauro (39). For each, per call, ours against Pinocchio's Python bindings called in a
Python loop, one configuration per call:

* gravity of one configuration (``gravity_generalized_forces(q)`` against
  ``computeGeneralizedGravity``);
* FK of every body plus gravity (``poses_and_gravity(q)``, every body's 4x4 pose as a numpy
  array, against ``framesForwardKinematics`` + ``computeGeneralizedGravity`` with each
  body frame's pose copied out to numpy);
* batch gravity per configuration (1,000 configurations in one call of ours against a
  Python loop over Pinocchio).

Each robot's gravity is checked against Pinocchio's first (1e-9), so the models are the
same. ``ours`` is the default evaluation (numba's compiled kernels where numba is installed),
``numpy`` the same model on the numpy code (``Model.with_kernels('numpy')``), timed in the
same rounds. ``ours/pinocchio`` is the median over rounds of the ratio, ours and Pinocchio
timed back to back in each (which goes first alternates; the numpy code after both), so a
shared machine's slow spells fall on both sides of a ratio.
"""

import argparse
import pathlib
import statistics
import sys

from common import per_call, report
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / 'test'))      # robot_corpus: Pinocchio's view of the robots

ROBOTS = [('UR5', 'ur_description/urdf/ur5_robot.urdf'),
          ('G1', 'g1_description/urdf/g1_29dof_rev_1_0.urdf'),
          ('G1 with hands', 'g1_description/urdf/g1_29dof_with_hand_rev_1_0.urdf'),
          ('Centauro', 'centauro_description/urdf/centauro.urdf')]
ROUNDS = 9
BATCH = 1000


def main(argv=None):
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--number', type=int, default=2000, help='calls per round')
    args = parser.parse_args(argv)
    import pinocchio as pin
    from robot_corpus import pinocchio_model, pinocchio_q, random_q, robot, velocity_columns
    from transmission_bridge.kinematics import load_model
    rows = []
    for label, relative in ROBOTS:
        path = robot(relative)
        model, pm = load_model(path), pinocchio_model(pin, path)
        slow = model.with_kernels('numpy')
        data = pm.createData()
        names = model.joint_names
        order = velocity_columns(pm, names)
        frames = [pm.getFrameId(b, pin.BODY) for b in model.body_names]
        qs = random_q(model, np.random.default_rng(36), BATCH)
        qps = [pinocchio_q(pin, pm, names, q) for q in qs]
        q, qp = qs[0], qps[0]
        holding = pin.computeGeneralizedGravity(pm, data, qp)[order]
        error = np.abs(model.gravity_generalized_forces(q) + holding).max()
        if error > 1e-9 * max(1.0, np.abs(holding).max()):
            sys.exit(f'{label}: gravity differs from Pinocchio by {error:.3g}')

        def pin_poses():
            pin.framesForwardKinematics(pm, data, qp)
            pin.computeGeneralizedGravity(pm, data, qp)
            return [data.oMf[f].homogeneous for f in frames]

        def pin_batch():
            for x in qps:
                pin.computeGeneralizedGravity(pm, data, x)
        cases = [
            ('gravity, one configuration', lambda m: m.gravity_generalized_forces(q),
             lambda: pin.computeGeneralizedGravity(pm, data, qp), 1),
            ('FK of every body + gravity', lambda m: m.poses_and_gravity(q), pin_poses, 1),
            ('batch gravity, per configuration', lambda m: m.gravity_generalized_forces(qs),
             pin_batch, BATCH),
        ]
        for what, ours, peer, per in cases:
            number = max(1, args.number // per)
            times = {'ours': [], 'numpy': [], 'pin': []}
            pair = (('ours', lambda: ours(model)), ('pin', peer))
            for r in range(ROUNDS):     # ours and Pinocchio back to back, the numpy code after
                for name, fn in pair[::1 if r % 2 else -1] + (('numpy', lambda: ours(slow)),):
                    times[name].append(per_call(fn, number, repeat=1) / per)
            rows.append({
                'robot': f'{label} ({model.num_positions})', 'what': what,
                'bodies': len(model.body_names), 'kernels': model.kernels,
                'ours_us': min(times['ours']) * 1e6, 'numpy_us': min(times['numpy']) * 1e6,
                'pinocchio_us': min(times['pin']) * 1e6,
                'ours/pinocchio': statistics.median(
                    o / p for o, p in zip(times['ours'], times['pin']))})
    report('humanoid', rows, ['robot', 'what', 'bodies', 'kernels', 'ours_us', 'numpy_us',
                              'pinocchio_us', 'ours/pinocchio'])


if __name__ == '__main__':
    main()
