"""
Dynamic identification's cost: the regressor per sample, a long recording, a fleet on Dask.

    python bench/bench_identify.py [--minutes 10] [--bags 8] [--bag-minutes 5]

* ``regressor``: the ten columns per body of a 7-joint arm (example-robot-data's xArm7),
  per sample: this library's batch (compiled and numpy) against Pinocchio's
  ``computeJointTorqueRegressor`` called from Python in a loop, in alternating rounds on
  the same samples (4096 a round);
* ``identify``: ``transmission_bridge_identify --dynamic`` as a user runs it, on MINUTES of
  1 kHz actuator states of that arm behind seven lossy simple gears (a multi-sine; motor
  torques from the library's model: this measures time, test_identify_dynamic.py the
  accuracy), wall time of the whole command (reading, filtering, every pass, writing);
* ``fleet``: BAGS bags of BAG_MINUTES each (the same arm, other multi-sines),
  ``--workers 1`` against ``--workers 2``, wall time of the whole command (embedded cluster
  start-up included): the scaling ratio (goal >= 1.7x on 2 cores). What does not scale:
  start-up, the fit itself between passes (about 0.1 s each) and each worker's first load
  of the compiled kernels.
"""

import argparse
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

from common import alternating, report
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / 'test'))
ROUNDS = 7
SAMPLES = 4096
START_NS = 1_750_000_000 * 10**9


def _arm():
    from robot_corpus import robot
    path = robot('xarm_description/urdf/xarm7.urdf')
    if path is None or not path.is_file():
        sys.exit('bench_identify: example-robot-data is not installed (pip install '
                 'example-robot-data)')
    return path


def _transmissions(model, folder):
    """Write seven lossy simple gears for the arm; return the path."""
    import yaml
    data = {'transmissions': [
        {'name': f'{j}_gear', 'type': 'simple',
         'actuators': [{'name': f'{j}_motor', 'mechanical_reduction': 100.0,
                        'rotor_inertia': 2e-5, 'friction': {'viscous': 1e-4, 'coulomb': 0.01},
                        'efficiency': {'driving': 0.85, 'driven': 0.7}}],
         'joints': [{'name': j}]} for j in model.joint_names]}
    path = folder / 'xarm7_transmissions.yaml'
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def regressor_row(path):
    import pinocchio as pin
    from transmission_bridge.kinematics import load_model
    from transmission_bridge.kinematics import regressor as reg
    model = load_model(path)
    bodies = list(reg.moving_bodies(model))
    pmodel = pin.buildModelFromXML(path.read_text())
    pdata = pmodel.createData()
    rng = np.random.default_rng(0)
    q = rng.uniform(-1.0, 1.0, (SAMPLES, model.num_positions))
    v, a = rng.normal(size=q.shape), rng.normal(size=q.shape)
    outs = {k: reg.regressor(model, q, v, a, bodies, kernels=k) for k in ('numba', 'numpy')}

    def run(name, r):
        if name == 'pinocchio':
            for k in range(SAMPLES):
                pin.computeJointTorqueRegressor(pmodel, pdata, q[k], v[k], a[k])
        else:
            reg.regressor(model, q, v, a, bodies, kernels=name, out=outs[name])
        return SAMPLES
    times = alternating(['numba', 'numpy', 'pinocchio'], ROUNDS, run)
    us = {k: statistics.median(t) * 1e6 for k, t in times.items()}
    ratio = statistics.median(a / b for a, b in zip(times['numba'], times['pinocchio']))
    return {'case': 'regressor per sample (xArm7, 7 bodies)', 'this (compiled) us': us['numba'],
            'this (numpy) us': us['numpy'], 'pinocchio us': us['pinocchio'],
            'this/pinocchio': ratio}


def _recording(model, tset, minutes, seed):
    """Return (stamps ns, θ, θ̇, τ_a) of ``minutes`` of a multi-sine at 1 kHz."""
    from transmission_bridge.identification.excitation import motor_efforts
    rng = np.random.default_rng(seed)
    n = int(minutes * 60_000)
    t = np.arange(n) * 1e-3
    w = 2 * np.pi * 0.1 * np.arange(1, 6)
    amp = rng.uniform(-0.3, 0.3, (model.num_positions, 5)) / np.arange(1, 6)
    phase = rng.uniform(0, 2 * np.pi, (model.num_positions, 5))
    q = np.zeros((n, model.num_positions))
    v, a = np.zeros_like(q), np.zeros_like(q)
    for j in range(model.num_positions):
        arg = w * t[:, None] + phase[j]
        q[:, j] = (amp[j] * np.sin(arg)).sum(axis=1)
        v[:, j] = (amp[j] * w * np.cos(arg)).sum(axis=1)
        a[:, j] = -(amp[j] * w ** 2 * np.sin(arg)).sum(axis=1)
    cols = [model.joint_names.index(j) for j in tset.joint_names]
    effort = np.concatenate([motor_efforts(model, tset, q[s:s + 50_000], v[s:s + 50_000],
                                           a[s:s + 50_000], cols)[0]
                             for s in range(0, n, 50_000)])
    theta = tset.joint_to_actuator('position', q[:, cols])
    thetad = tset.joint_to_actuator('velocity', v[:, cols])
    stamps = START_NS + np.arange(n, dtype=np.int64) * 1_000_000
    return stamps, theta, thetad, effort + rng.normal(0.0, 1e-3, effort.shape)


def write_bags(path, folder, minutes, bags, bag_minutes):
    """Write one bag of ``minutes`` at 1 kHz and ``bags`` bags of ``bag_minutes`` each."""
    from transmission_bridge.bag.example import write_states_bag
    from transmission_bridge.kinematics import load_model
    from transmission_bridge.transmissions import load_transmissions
    model = load_model(path)
    trans = _transmissions(model, folder)
    tset = load_transmissions(trans)
    write_states_bag(folder / 'long', tset.actuator_names, *_recording(model, tset, minutes, 1))
    fleet = folder / 'fleet'
    fleet.mkdir()
    for b in range(bags):
        write_states_bag(fleet / f'bag{b}', tset.actuator_names,
                         *_recording(model, tset, bag_minutes, 10 + b))
    return trans


def _identify(bags, path, trans, out, *extra):
    start = time.perf_counter()
    done = subprocess.run([sys.executable, '-m', 'transmission_bridge.tools.identify',
                           str(bags), '--dynamic', '--model', str(path), '--transmissions',
                           str(trans), '--output', str(out), *extra],
                          capture_output=True, text=True)
    if done.returncode:
        sys.exit(done.stderr)
    return time.perf_counter() - start


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--minutes', type=float, default=10.0)
    p.add_argument('--bags', type=int, default=8)
    p.add_argument('--bag-minutes', type=float, default=5.0)
    args = p.parse_args()
    path = _arm()
    rows = [regressor_row(path)]
    report('identify_regressor', rows, list(rows[0]))
    with tempfile.TemporaryDirectory() as tmp:
        folder = pathlib.Path(tmp)
        trans = write_bags(path, folder, args.minutes, args.bags, args.bag_minutes)
        whole = _identify(folder / 'long', path, trans, folder / 'long.urdf')
        one = _identify(folder / 'fleet', path, trans, folder / 'one.urdf', '--workers', '1')
        two = _identify(folder / 'fleet', path, trans, folder / 'two.urdf', '--workers', '2')
        same = (folder / 'one.urdf').read_text() == (folder / 'two.urdf').read_text()
    runs = [{'case': f'identify --dynamic, {args.minutes:g} min at 1 kHz (xArm7, 7 lossy gears)',
             'wall s': whole, 'goal s': 60.0},
            {'case': f'{args.bags} bags of {args.bag_minutes:g} min, --workers 1',
             'wall s': one, 'goal s': float('nan')},
            {'case': f'{args.bags} bags, --workers 2 (same URDF: {same})', 'wall s': two,
             'goal s': float('nan')},
            {'case': 'workers 2 over 1 (goal >= 1.7)', 'wall s': one / two,
             'goal s': 1.7}]
    report('identify_dynamic', runs, ['case', 'wall s', 'goal s'])


if __name__ == '__main__':
    main()
