"""
The dynamics of the kinematics library against Pinocchio, same run, and the node's feed-forward.

Robots of example-robot-data (PyPI): UR5 (6 joints), Unitree G1 with hands (43), Centauro
(39). Per call, ours against Pinocchio's Python bindings called from Python, one
configuration per call:

* inverse dynamics (``Model.inverse_dynamics(q, v, a)`` against ``rnea``);
* mass matrix (``Model.mass_matrix(q)`` against ``crba``);
* forward dynamics (``Model.forward_dynamics(q, v, tau)`` against ``aba``);
* batches per configuration (1,000 configurations in one call of ours against a Python loop
  over ``rnea`` / ``crba``; our mass matrices written into one ``out`` array reused from call to
  call, as Pinocchio reuses its ``data.M``).

Each robot's inverse dynamics and mass matrix are checked against Pinocchio's first (1e-9),
so the models are the same. ``ours`` is the default evaluation (numba's kernels where numba is
installed), ``numpy`` the reference code on the same model. ``ours/pinocchio`` is the median
over rounds of the ratio, ours and Pinocchio timed back to back in each (which goes first
alternates; the numpy reference after both), so a shared machine's slow spells, which last
seconds, fall on both sides of a ratio. Then the kinematics node's feed-forward of a 100-point
trajectory of the G1 with hands (``KinematicsCore.feed_forward``, the call the node makes for
``~/trajectory_in``), gravity against inverse dynamics.
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
          ('G1 with hands', 'g1_description/urdf/g1_29dof_with_hand_rev_1_0.urdf'),
          ('Centauro', 'centauro_description/urdf/centauro.urdf')]
ROUNDS = 9
NUMPY_SHARE = 20     # the numpy reference is timed on 1/20 of the calls (it is slower)
BATCH = 1000
POINTS = 100


def _check(label, ours, theirs):
    error = np.abs(ours - theirs).max()
    if error > 1e-9 * max(1.0, np.abs(theirs).max()):
        sys.exit(f'{label}: differs from Pinocchio by {error:.3g}')


def _robot_rows(pin, label, relative, number):
    from robot_corpus import pinocchio_model, pinocchio_q, random_q, robot, velocity_columns
    from transmission_bridge.kinematics import load_model
    path = robot(relative)
    model, pm = load_model(path), pinocchio_model(pin, path)
    slow = model.with_kernels('numpy')
    data = pm.createData()
    names = model.joint_names
    order = velocity_columns(pm, names)
    rng = np.random.default_rng(46)
    qs = random_q(model, rng, BATCH)
    vs, accs = rng.normal(size=qs.shape), rng.normal(size=qs.shape)
    qps = [pinocchio_q(pin, pm, names, q) for q in qs]
    q, v, a, qp = qs[0], vs[0], accs[0], qps[0]
    vp, ap = np.zeros(pm.nv), np.zeros(pm.nv)
    vp[order], ap[order] = v, a
    vps, aps = np.zeros((BATCH, pm.nv)), np.zeros((BATCH, pm.nv))
    vps[:, order], aps[:, order] = vs, accs
    tau = pin.rnea(pm, data, qp, vp, ap)[order]
    _check(label, model.inverse_dynamics(q, v, a), tau)
    M = pin.crba(pm, data, qp)
    _check(label, model.mass_matrix(q), (np.triu(M) + np.triu(M, 1).T)[np.ix_(order, order)])
    taup = np.zeros(pm.nv)
    taup[order] = tau
    M_out = np.empty((BATCH, len(names), len(names)))      # reused, as data.M is

    def pin_batch_rnea():
        for x, y, z in zip(qps, vps, aps):
            pin.rnea(pm, data, x, y, z)

    def pin_batch_crba():
        for x in qps:
            pin.crba(pm, data, x)
    cases = [
        ('inverse dynamics', lambda m: m.inverse_dynamics(q, v, a),
         lambda: pin.rnea(pm, data, qp, vp, ap), 1),
        ('mass matrix', lambda m: m.mass_matrix(q), lambda: pin.crba(pm, data, qp), 1),
        ('forward dynamics', lambda m: m.forward_dynamics(q, v, tau),
         lambda: pin.aba(pm, data, qp, vp, taup), 1),
        ('batch inverse dynamics, per configuration',
         lambda m: m.inverse_dynamics(qs, vs, accs), pin_batch_rnea, BATCH),
        ('batch mass matrix, per configuration', lambda m: m.mass_matrix(qs, out=M_out),
         pin_batch_crba, BATCH),
    ]
    rows = []
    for what, ours, peer, per in cases:
        n = max(1, number // per)
        times = {'ours': [], 'numpy': [], 'pin': []}
        pair = (('ours', lambda: ours(model), n), ('pin', peer, n))
        reference = ('numpy', lambda: ours(slow), max(1, n // NUMPY_SHARE))
        for r in range(ROUNDS):         # ours and Pinocchio back to back, which first alternates
            for name, fn, calls in pair[::1 if r % 2 else -1] + (reference,):
                times[name].append(per_call(fn, calls, repeat=1) / per)
        rows.append({
            'robot': f'{label} ({model.num_positions})', 'what': what,
            'kernels': model.kernels, 'ours_us': min(times['ours']) * 1e6,
            'numpy_us': min(times['numpy']) * 1e6, 'pinocchio_us': min(times['pin']) * 1e6,
            'ours/pinocchio': statistics.median(
                o / p for o, p in zip(times['ours'], times['pin']))})
    return rows


def _feed_forward_rows(number):
    from robot_corpus import random_q, robot
    from transmission_bridge.kinematics import load_model
    from transmission_bridge.kinematics_node.core import KinematicsCore
    model = load_model(robot(ROBOTS[1][1]))
    cores = {'ours': KinematicsCore(model), 'numpy': KinematicsCore(model.with_kernels('numpy'))}
    rng = np.random.default_rng(100)
    names = list(model.joint_names)
    q = random_q(model, rng, POINTS).tolist()
    v, a = rng.normal(size=(2, POINTS, len(names))).tolist()
    rows = []
    for mode in ('gravity', 'inverse_dynamics'):
        best = {}
        for kind, core in cores.items():
            core.feed_forward_mode = mode
            core.feed_forward(names, q, v, a)
            best[kind] = min(per_call(lambda: core.feed_forward(names, q, v, a),
                                      max(1, number // 200), repeat=1) for _ in range(ROUNDS))
        rows.append({'robot': f'G1 with hands ({len(names)})',
                     'what': f'node feed-forward, {POINTS}-point trajectory: {mode}',
                     'kernels': model.kernels, 'ours_us': best['ours'] * 1e6,
                     'numpy_us': best['numpy'] * 1e6, 'pinocchio_us': float('nan'),
                     'ours/pinocchio': float('nan')})
    return rows


def main(argv=None):
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--number', type=int, default=2000, help='calls per round')
    args = parser.parse_args(argv)
    import pinocchio as pin
    rows = []
    for label, relative in ROBOTS:
        rows += _robot_rows(pin, label, relative, args.number)
    rows += _feed_forward_rows(args.number)
    report('dynamics', rows, ['robot', 'what', 'kernels', 'ours_us', 'numpy_us', 'pinocchio_us',
                              'ours/pinocchio'])


if __name__ == '__main__':
    main()
