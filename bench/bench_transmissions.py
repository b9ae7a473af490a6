"""Cost of the bridge's per-message work and of whole-bag mapping, against numpy floors.

Per message: ActuatorStates.ingest (validate, cache, map, damp) against the floor of
turning the message's three arrays into numpy arrays. Batch: TransmissionSet
actuator_to_joint over N samples against a plain copy of the same array.
Compiled maps: one (3, n) actuator state mapped by the set's gather maps (what the
bridge uses) against dense per-interface matrices (three matrix-vector products, which
would also spread an unknown value to every joint), for 24 and 200 actuators.
Ratios are measured side by side in one run.
"""

import argparse
import array

from common import once, per_call, report
import numpy as np
from robots import transmissions_24, transmissions_n

from transmission_bridge.mapping.state import ActuatorStates


def main(argv=None):
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--batch', type=int, default=1_000_000, help='samples in the batch test')
    args = parser.parse_args(argv)
    ts = transmissions_24()
    rng = np.random.default_rng(1)
    names = list(ts.actuator_names)
    pos, vel, eff = (array.array('d', rng.normal(size=ts.num_actuators)) for _ in range(3))
    core = ActuatorStates(ts)
    core.ingest('bench', names, pos, vel, eff, 0)
    stamp = [0]

    def ingest():
        stamp[0] += 1
        core.ingest('bench', names, pos, vel, eff, stamp[0])

    def floor():
        tuple(names)
        for values in (pos, vel, eff):
            np.asarray(values, dtype=float)

    rows = []
    t_core = per_call(ingest, 2000)
    t_floor = per_call(floor, 2000)
    rows.append({'what': 'ingest one 24-actuator message', 'time_us': t_core * 1e6,
                 'floor': 'np.asarray of its 3 arrays', 'floor_us': t_floor * 1e6,
                 'ratio': t_core / t_floor})
    batch = rng.normal(size=(args.batch, ts.num_actuators))
    t_map = once(lambda: ts.actuator_to_joint('position', batch))
    t_copy = once(lambda: batch.copy())
    rows.append({'what': f'map {args.batch:,} samples (position)', 'time_us': t_map * 1e6,
                 'floor': 'batch.copy()', 'floor_us': t_copy * 1e6, 'ratio': t_map / t_copy})
    for count, robot in ((24, ts), (200, transmissions_n(200))):
        state = rng.normal(size=(3, robot.num_actuators))
        eye = np.eye(robot.num_actuators)
        dense = np.stack([robot.actuator_to_joint(kind, eye).T
                          for kind in ('velocity', 'velocity', 'effort')])
        flat = np.append(state.reshape(-1), 1.0)   # how the bridge keeps its values
        stream = robot.state_map()
        t_gather = per_call(lambda: stream(flat), 2000)
        t_dense = per_call(lambda: np.matmul(dense, state[:, :, None]), 2000)
        rows.append({'what': f'map one {count}-actuator state (gather map, offsets and '
                     'damping included)',
                     'time_us': t_gather * 1e6, 'floor': 'dense matrices (matmul)',
                     'floor_us': t_dense * 1e6, 'ratio': t_gather / t_dense})
    report('transmissions', rows, ['what', 'time_us', 'floor', 'floor_us', 'ratio'])


if __name__ == '__main__':
    main()
