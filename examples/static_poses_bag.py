"""
Write a bag of joint_states holding random poses: what recording a robot held still looks like.

    python examples/static_poses_bag.py OUT_BAG --urdf ROBOT.urdf [--payload BODY KG]
        [--poses 40] [--noise 0.05] [--seed 1]

Each pose is held 0.5 s at 100 Hz, with 0.3 s of motion between poses; efforts are the
holding torques of the URDF's model (with a point payload 5 cm out along BODY's z axis, if
given) plus Gaussian noise (N*m). It stands in for ``ros2 bag record /joint_states`` on a
robot moved through poses by hand or by a trajectory (doc/calibrate.md).
"""

import argparse
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from transmission_bridge.bag import io  # noqa: E402
from transmission_bridge.bag.joint_state_cdr import JointStateBatchCodec, MSGTYPE  # noqa: E402
from transmission_bridge.kinematics import load_model  # noqa: E402

RATE, HOLD, MOVE = 100.0, 0.5, 0.3


def main():
    """Write the bag."""
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('out')
    p.add_argument('--urdf', required=True)
    p.add_argument('--payload', nargs=2, metavar=('BODY', 'KG'))
    p.add_argument('--poses', type=int, default=40)
    p.add_argument('--noise', type=float, default=0.05)
    p.add_argument('--seed', type=int, default=1)
    args = p.parse_args()
    model = load_model(args.urdf)
    if args.payload:
        model = model.with_payload(args.payload[0], float(args.payload[1]), (0.0, 0.0, 0.05))
    rng = np.random.default_rng(args.seed)
    lo = np.maximum(model.position_lower_limits, -np.pi)
    hi = np.minimum(model.position_upper_limits, np.pi)
    poses = rng.uniform(lo, hi, (args.poses, model.num_positions))
    q, v, previous = [], [], poses[0]
    for pose in poses:
        steps = int(MOVE * RATE)
        q += [previous + (k + 1) / steps * (pose - previous) for k in range(steps)]
        v += [(pose - previous) / MOVE] * steps
        q += [pose] * int(HOLD * RATE)
        v += [np.zeros_like(pose)] * int(HOLD * RATE)
        previous = pose
    q, v = np.array(q), np.array(v)
    effort = -model.gravity_generalized_forces(q) + rng.normal(0.0, args.noise, q.shape)
    store = io.typestore()
    stamps = 1_700_000_000_000_000_000 + np.round(np.arange(len(q)) / RATE * 1e9).astype(
        np.int64)
    names = list(model.joint_names)
    codec = JointStateBatchCodec(store, names, '', [len(names)] * 3)
    with io.atomic_writer(args.out) as writer:
        connection = writer.add_connection('/joint_states', MSGTYPE, typestore=store)
        for stamp, row in zip(stamps.tolist(), codec.encode(stamps, [q, v, effort])):
            writer.write(connection, stamp, row.tobytes())
    print(f'wrote {args.out}: {args.poses} poses, {len(q)} joint_states')


if __name__ == '__main__':
    main()
