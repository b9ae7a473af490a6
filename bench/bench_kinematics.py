"""
Kinematics library: forward kinematics of all bodies plus gravity, one call and in batch.

Against Pinocchio (C++, via its Python bindings) in the same process on the same
robots. Pinocchio is timed twice: computing only, and with every body's 4x4 pose
copied out to numpy (what our API returns), since materialising poses changes its
figure several-fold. Batch: N configurations in one call against Pinocchio's
per-configuration time in a Python loop. Each batch is run once untimed first: the
result of FK of all bodies for a million configurations is about 1 GB, and on this
project's VM the first use of that much fresh memory in a process costs about 3 µs per
configuration (the hypervisor faulting pages in; measured as np.empty + fill: 3.1 µs
the first time, 0.15 µs after), more than the kinematics itself. A third row writes
the batch into buffers the caller keeps (``out=``), as a loop over batches would.
"""

import argparse
import resource
import sys

from common import once, per_call, report
import numpy as np
from robots import arm7_with_screws, puma560

NAN = float('nan')


def _pinocchio(model):
    sys.path.insert(0, str(__import__('pathlib').Path(__file__).resolve().parent.parent
                           / 'test'))
    from pinocchio_bridge import to_pinocchio
    return to_pinocchio(model)


def main(argv=None):
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--batch', type=int, default=1_000_000, help='configurations in batch')
    args = parser.parse_args(argv)
    import pinocchio as pin
    rows = []
    robots = (('7-DOF arm, 2 screws', arm7_with_screws()), ('Puma 560 (DH)', puma560()))
    for label, model in robots:
        rng = np.random.default_rng(0)
        q = rng.uniform(-1, 1, model.num_positions)
        pm, frames = _pinocchio(model)
        data = pm.createData()
        jids = [frames[n][0] for n in model.body_names]

        def ours():
            model.poses_and_gravity(q)

        def pin_compute():
            pin.forwardKinematics(pm, data, q)
            pin.computeGeneralizedGravity(pm, data, q)

        def pin_with_poses():
            pin.forwardKinematics(pm, data, q)
            pin.computeGeneralizedGravity(pm, data, q)
            [data.oMi[j].homogeneous for j in jids]

        t_ours = per_call(ours, 2000)
        t_pin = per_call(pin_compute, 2000)
        t_pin_poses = per_call(pin_with_poses, 2000)
        rows.append({'robot': label, 'what': 'one call: FK all bodies + gravity',
                     'ours_us': t_ours * 1e6, 'pinocchio_us': t_pin_poses * 1e6,
                     'ratio': t_ours / t_pin_poses, 'pinocchio_no_poses_us': t_pin * 1e6,
                     'user_us': NAN, 'sys_us': NAN})
        qs = rng.uniform(-1, 1, (args.batch, model.num_positions))
        for warm_up in (True, False):       # see the module docstring
            t_batch = once(lambda: model.gravity_generalized_forces(qs),
                           repeat=1 if warm_up else 3)
            before = resource.getrusage(resource.RUSAGE_SELF)
            t_batch_fk = once(lambda: model.poses_and_gravity(qs), repeat=1 if warm_up else 3)
            after = resource.getrusage(resource.RUSAGE_SELF)
        # CPU time of those three runs: in the process (user) and in the kernel (sys:
        # mostly zeroing the fresh pages of the 1 GB result).
        user_fk, sys_fk = ((getattr(after, f) - getattr(before, f)) / 3 / args.batch * 1e6
                           for f in ('ru_utime', 'ru_stime'))
        # The same call writing into buffers the caller keeps (out=), as a loop over
        # batches does: filled once untimed, then timed as above.
        buffers = model.poses_and_gravity(qs)
        before = resource.getrusage(resource.RUSAGE_SELF)
        t_reused = once(lambda: model.poses_and_gravity(qs, out=buffers))
        after = resource.getrusage(resource.RUSAGE_SELF)
        user_re, sys_re = ((getattr(after, f) - getattr(before, f)) / 3 / args.batch * 1e6
                           for f in ('ru_utime', 'ru_stime'))
        buffers = None                      # 1 GB: freed before the next robot
        n_loop = 20000

        def pin_loop():
            for qi in qs[:n_loop]:
                pin.computeGeneralizedGravity(pm, data, qi)

        t_pin_loop = once(pin_loop) / n_loop
        rows.append({'robot': label, 'what': f'batch gravity, N={args.batch:,}',
                     'ours_us': t_batch / args.batch * 1e6,
                     'pinocchio_us': t_pin_loop * 1e6,
                     'ratio': t_batch / args.batch / t_pin_loop,
                     'pinocchio_no_poses_us': t_pin_loop * 1e6, 'user_us': NAN, 'sys_us': NAN})
        rows.append({'robot': label, 'what': f'batch FK all bodies (4x4) + gravity, '
                     f'N={args.batch:,}',
                     'ours_us': t_batch_fk / args.batch * 1e6, 'pinocchio_us': NAN,
                     'ratio': NAN, 'pinocchio_no_poses_us': NAN, 'user_us': user_fk,
                     'sys_us': sys_fk})
        rows.append({'robot': label, 'what': f'batch FK all bodies (4x4) + gravity, '
                     f'N={args.batch:,}, into reused out= buffers',
                     'ours_us': t_reused / args.batch * 1e6, 'pinocchio_us': NAN,
                     'ratio': NAN, 'pinocchio_no_poses_us': NAN, 'user_us': user_re,
                     'sys_us': sys_re})
        print(f'{label}: batch gravity of {args.batch:,} configurations in {t_batch:.2f} s; '
              f'FK of all bodies (4x4 each) and gravity in {t_batch_fk:.2f} s')
    report('kinematics', rows, ['robot', 'what', 'ours_us', 'pinocchio_us', 'ratio',
                                'pinocchio_no_poses_us', 'user_us', 'sys_us'])


if __name__ == '__main__':
    main()
