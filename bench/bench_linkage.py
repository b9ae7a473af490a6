"""
Linkages (issue 44): one ankle's solve, and a bag of a legged robot, against linear floors.

* **One ankle, warm**: the actuator -> joint map of one state of the parallel ankle of
  config/closed_loop_ankle_transmissions.yaml (Newton from the previous state's solution, the
  states 1 ms apart on a 0.3 rad, 0.25 Hz motion), as the bridge runs it per message: with
  the numba-compiled loops, and with the same loops as Python (TRANSMISSION_BRIDGE_KERNELS=
  numpy, the reference, in a child process); the floor is a differential's state map (two
  actuators, two joints, linear), in the same run. Both through ``JointStateMap.writer``, the
  bridge's per-message call. Goal: <= 5 us compiled.
* **A bag**: N actuator states (1 kHz, position/velocity/effort) of config/legged_robot.urdf
  (12 motors: 6 simple, 2 knee linkages, 2 parallel ankles) converted with ``convert_bag``,
  against the same bag converted by 12 simple transmissions of the same names. Goal: <= 3x.
"""

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

from common import per_call, report
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
ANKLE = ROOT / 'config' / 'closed_loop_ankle_transmissions.yaml'
LEGGED = ROOT / 'config' / 'legged_robot.urdf'


def _stream_states(ts, count=1000):
    """Return ``count`` flat actuator states (what the bridge keeps) 1 ms apart on a motion."""
    t = np.arange(count) * 1e-3
    phase = 0.7 * np.arange(ts.num_joints)
    q = ts.default_positions + 0.3 * np.sin(2 * np.pi * 0.25 * t[:, None] + phase)
    v = 0.3 * 2 * np.pi * 0.25 * np.cos(2 * np.pi * 0.25 * t[:, None] + phase)
    x = ts.joint_to_actuator('position', q)
    v_a = ts.joint_to_actuator('velocity', v, positions=q)
    flat = np.ones((count, 3 * ts.num_actuators + 1))
    flat[:, :ts.num_actuators] = x
    flat[:, ts.num_actuators:2 * ts.num_actuators] = v_a
    flat[:, 2 * ts.num_actuators:-1] = 0.1
    return flat


def solve_time():
    """Return the per-state time (s) of the ankle's stream map, states in motion order."""
    from transmission_bridge.transmissions import load_transmissions
    ts = load_transmissions(ANKLE)
    flats = _stream_states(ts)
    write = ts.state_map().writer(np.empty((3, ts.num_joints)))
    k = [0]

    def step():
        assert write(flats[k[0] % len(flats)])      # solved, not refused
        k[0] += 1
    for _ in range(len(flats)):
        step()           # compiled, warm
    return per_call(step, 5000)


def _floor_time():
    from transmission_bridge.transmissions import load_transmissions
    ts = load_transmissions({'transmissions': [{
        'name': 'wrist', 'type': 'differential',
        'actuators': [{'name': 'a', 'mechanical_reduction': 50.0},
                      {'name': 'b', 'mechanical_reduction': -50.0}],
        'joints': [{'name': 'p'}, {'name': 'r'}]}]})
    flats = _stream_states(ts)
    write = ts.state_map().writer(np.empty((3, ts.num_joints)))
    k = [0]

    def step():
        assert write(flats[k[0] % len(flats)]) is not False
        k[0] += 1
    return per_call(step, 5000)


def _reference_time():
    """Return the Python loops' per-state time, from a child process that runs them."""
    env = dict(os.environ, TRANSMISSION_BRIDGE_KERNELS='numpy')
    code = ('import json, sys; sys.path.insert(0, %r); import bench_linkage; '
            'print(json.dumps(bench_linkage.solve_time()))' % str(ROOT / 'bench'))
    run = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(run.stdout.strip().splitlines()[-1])


def _simple_twin(ts):
    """Return 12 simple transmissions with the legged robot's joint and actuator names."""
    from transmission_bridge.transmissions import parse_transmissions
    items = []
    for spec in ts.specs:
        for joint, actuator in zip(spec.joints, spec.actuators):
            items.append({'name': f'{joint.name}_simple', 'type': 'simple',
                          'actuators': [{'name': actuator.name, 'mechanical_reduction': 9.0}],
                          'joints': [{'name': joint.name}]})
    return parse_transmissions({'transmissions': items})


def bag_rows(messages):
    """Convert one legged-robot bag with the linkages and with simple twins; return rows."""
    from transmission_bridge.bag.convert import convert_bag
    from transmission_bridge.bag.example import write_actuator_bag
    from transmission_bridge.transmissions import load_transmissions
    legged = load_transmissions(LEGGED)
    simple = _simple_twin(legged)
    work = pathlib.Path(tempfile.mkdtemp(prefix='bench_linkage_'))
    rows = []
    try:
        src = work / 'in'
        write_actuator_bag(src, legged, seconds=messages / 1000.0, rate=1000.0)
        for trial in range(2):
            times = {}
            for label, tset in (('simple', simple), ('legged', legged)):
                start = time.perf_counter()
                result = convert_bag(src, work / f'{label}{trial}', tset)
                times[label] = time.perf_counter() - start
                assert result.joint_states == messages and result.refused_linkage == 0
            rows.append({'what': f'convert {messages:,} states, 12 actuators',
                         'time_s': times['legged'], 'floor': '12 simple transmissions',
                         'floor_s': times['simple'], 'ratio': times['legged'] / times['simple']})
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return rows


def main(argv=None):
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--messages', type=int, default=100_000,
                        help='actuator states in the bag (default 100000)')
    args = parser.parse_args(argv)
    from transmission_bridge.transmissions import linkage_loops
    compiled, floor = solve_time(), _floor_time()
    rows = [{'what': 'one ankle state, warm (numba loops)' if linkage_loops.COMPILED
             else 'one ankle state, warm (Python loops: numba not installed)',
             'time_s': compiled, 'floor': "a differential's state map", 'floor_s': floor,
             'ratio': compiled / floor}]
    if linkage_loops.COMPILED:
        reference = _reference_time()
        rows.append({'what': 'one ankle state, warm (the Python reference loops)',
                     'time_s': reference, 'floor': "a differential's state map",
                     'floor_s': floor, 'ratio': reference / floor})
    for row in rows:
        row['time_us'], row['floor_us'] = row.pop('time_s') * 1e6, row.pop('floor_s') * 1e6
    report('linkage', rows, ['what', 'time_us', 'floor', 'floor_us', 'ratio'])
    report('linkage_bag', bag_rows(args.messages),
           ['what', 'time_s', 'floor', 'floor_s', 'ratio'])


if __name__ == '__main__':
    main()
