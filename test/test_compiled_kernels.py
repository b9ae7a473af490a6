"""
The compiled kernels (numba) against the numpy code they replace, and the numpy fallback.

The numpy code is the reference (every law and peer test ran on it before the kernels
existed): a child process with ``TRANSMISSION_BRIDGE_KERNELS=numpy`` evaluates every
public robot of example-robot-data and the seeded random and mimic models, and this process,
on the kernels, must give the same poses, parent poses (what TF sends), gravity, energy,
batches and Jacobians to 1e-12 of each robot's scale. A second child without numba at all
must run on the numpy code and say so.
"""

import json
import os
import pathlib
import subprocess
import sys

from kinematics_models import random_model
import numpy as np
import pytest
from robot_corpus import random_q, robots_dir, urdf_files
from transmission_bridge.kinematics import load_model, ModelError
from transmission_bridge.kinematics import Model

HERE = pathlib.Path(__file__).resolve().parent
# Equal to today's numpy code to this, relative to the largest value of each output.
KERNELS_RTOL = 1e-12


def _models():
    """Return ``{label: model}``: the corpus robots this package loads, random and mimic ones."""
    sys.path.insert(0, str(HERE))
    from test_kinematics_mimic import _models as mimic_models
    models = {f'random{seed}': random_model(seed, num_bodies=9) for seed in range(4)}
    models['mimic'] = mimic_models()[0]
    root = robots_dir()
    for path in urdf_files():
        try:
            models[str(path.relative_to(root))] = load_model(path)
        except ModelError:              # refused with a reason: test_real_robots covers it
            continue
    return models


def _outputs(model):
    """Every output the kernels produce, for seeded configurations: ``{name: array}``."""
    rng = np.random.default_rng(len(model.body_names))
    qs = random_q(model, rng, 6)
    q = qs[0]
    ws = model.one_configuration()
    tau, energy = ws.frames_gravity_energy(q)
    out = {'gravity': tau.copy(), 'energy': np.array(energy)}
    writer = ws.parent_pose_writer(np.arange(len(model.body_names)))
    out['parent_poses'] = writer(np.empty((len(model.body_names), 7)))
    out['pose_rows'] = ws.pose_rows(np.empty((len(model.body_names), 7)))
    ws.frames(qs[1])                    # frames alone, then gravity from them
    out['gravity_after_frames'] = ws.gravity().copy()
    out['poses'] = model.body_poses(q)
    out['one_all'] = np.concatenate([a.ravel() for a in model.poses_gravity_and_energy(q)[:2]]
                                    + [[model.poses_gravity_and_energy(q)[2]]])
    out['energy_alone'] = np.array(model.potential_energy(q))
    batch = qs.reshape(2, 3, -1)
    for name, value in zip(('poses', 'gravity', 'energy'), model.poses_gravity_and_energy(batch)):
        out[f'batch_{name}'] = value
    out['batch_gravity_alone'] = model.gravity_generalized_forces(qs)
    out['batch_poses_alone'] = model.body_poses(qs[::2])      # a strided batch
    out['batch_energy_alone'] = model.potential_energy(qs)
    points = rng.uniform(-0.2, 0.2, (len(model.body_names), 3))
    out['jacobians'] = model._backend.jacobians(q, np.arange(len(model.body_names)), points)
    if model.body_names:                # a lone root link (a quadrotor's base) has none
        out['jacobian_batch'] = model.jacobian(qs[:2], model.body_names[-1], points[-1])
    v, acc = rng.standard_normal((2, model.num_positions))      # one configuration's call
    out['inverse_dynamics'] = model.inverse_dynamics(q, v, acc)
    out['mass_matrix'] = model.mass_matrix(q)
    out['gravity_one'] = model.gravity_generalized_forces(qs[2])
    return out


def _child(env, code):
    full = dict(os.environ, **env, PYTHONPATH=os.pathsep.join(
        [str(HERE), os.environ.get('PYTHONPATH', '')]))
    return subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          env=full, cwd=HERE)


def test_kernels_equal_the_numpy_code_on_every_robot(tmp_path):
    pytest.importorskip('numba', reason='numba is not installed: the numpy code runs')
    if robots_dir() is None:
        pytest.skip('example-robot-data is not installed (pip install example-robot-data)')
    saved = tmp_path / 'numpy.npz'
    code = ('import json, numpy as np, test_compiled_kernels as t\n'
            'models = t._models()\n'
            'assert {m.kernels for m in models.values()} == {"numpy"}\n'
            'np.savez(%r, **{f"{label}|{k}": v for label, m in models.items()\n'
            '                for k, v in t._outputs(m).items()})\n'
            'print(json.dumps(sorted(models)))\n' % str(saved))
    result = _child({'TRANSMISSION_BRIDGE_KERNELS': 'numpy'}, code)
    assert result.returncode == 0, result.stderr
    reference = np.load(saved)
    models = _models()
    assert sorted(models) == json.loads(result.stdout.splitlines()[-1])
    assert len(models) >= 60, 'the corpus is missing: the comparison would be thin'
    for label, model in models.items():
        assert model.kernels == 'numba', label
        for name, value in _outputs(model).items():
            expected = reference[f'{label}|{name}']
            assert value.shape == expected.shape, (label, name)
            scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
            np.testing.assert_allclose(value, expected, rtol=0, atol=KERNELS_RTOL * scale,
                                       err_msg=f'{label}: {name}')


def test_kernels_take_any_float_layout_and_the_out_arrays():
    pytest.importorskip('numba', reason='numba is not installed: the numpy code runs')
    model = random_model(3, num_bodies=8).warm_up()
    qs = random_q(model, np.random.default_rng(8), 5)
    expected = model.gravity_generalized_forces(qs)
    wide = np.zeros((5, 2 * model.num_positions))
    wide[:, ::2] = qs
    np.testing.assert_array_equal(model.gravity_generalized_forces(wide[:, ::2]), expected)
    np.testing.assert_array_equal(model.gravity_generalized_forces(wide[1, ::2]), expected[1])
    frozen = qs.copy()
    frozen.flags.writeable = False      # a bag's arrays are read-only views of its bytes
    np.testing.assert_array_equal(model.gravity_generalized_forces(frozen), expected)
    np.testing.assert_array_equal(model.gravity_generalized_forces(frozen[3]), expected[3])
    single = qs.astype(np.float32)
    np.testing.assert_array_equal(model.gravity_generalized_forces(single[2]),
                                  model.gravity_generalized_forces(single[2].astype(float)))
    poses, tau, energy = (np.empty((5, len(model.body_names), 4, 4)),
                          np.empty((5, model.num_positions)), np.empty(5))
    model.poses_gravity_and_energy(qs, out=(poses, tau, energy))
    np.testing.assert_array_equal(tau, expected)
    np.testing.assert_array_equal(energy, model.potential_energy(qs))
    np.testing.assert_array_equal(poses, model.body_poses(qs))
    vs = np.random.default_rng(9).standard_normal((2, 5, model.num_positions))
    batch = model.inverse_dynamics(qs, *vs)     # a batch: the checked path
    M = model.mass_matrix(qs)
    for i, (q, v, a) in enumerate([(wide[0, ::2], vs[0, 0], vs[1, 0]),
                                   (frozen[1], vs[0, 1], vs[1, 1]),
                                   (list(qs[2]), list(vs[0, 2]), vs[1, 2]),
                                   (single[3], vs[0, 3], vs[1, 3])]):
        tau_i = model.inverse_dynamics(q, v, a)
        ref = model.inverse_dynamics(np.asarray(q, dtype=float), vs[0, i], vs[1, i])
        np.testing.assert_allclose(tau_i, ref, rtol=0, atol=KERNELS_RTOL * np.abs(ref).max())
        np.testing.assert_allclose(model.mass_matrix(q), model.mass_matrix(
            np.asarray(q, dtype=float)), rtol=0, atol=KERNELS_RTOL * np.abs(M).max())
        if i < 3:
            np.testing.assert_allclose(tau_i, batch[i], rtol=0,
                                       atol=KERNELS_RTOL * np.abs(batch).max())
            np.testing.assert_allclose(model.mass_matrix(q), M[i], rtol=0,
                                       atol=KERNELS_RTOL * np.abs(M).max())
    for short in ((qs[0][:-1], vs[0, 0], vs[1, 0]), (qs[0], vs[0, 0][:-1], vs[1, 0])):
        with pytest.raises(ModelError):         # the one-call path writes nothing, then refuses
            model.inverse_dynamics(*short)
    with pytest.raises(ModelError):
        model.mass_matrix(qs[0][:-1])
    with pytest.raises(ModelError):
        model.gravity_generalized_forces(qs[0][:-1])
    one = np.empty(())
    model.poses_gravity_and_energy(qs[4], out=(poses[0], tau[0], one))
    assert float(one) == model.potential_energy(qs[4])
    np.testing.assert_array_equal(tau[0], expected[4])


def test_without_numba_the_numpy_code_runs_and_says_so():
    code = ('import sys\n'
            'sys.modules["numba"] = None          # import numba now raises ImportError\n'
            'import numpy as np\n'
            'from transmission_bridge.kinematics import kernels\n'
            'from kinematics_models import random_model\n'
            'm = random_model(2)\n'
            'try:\n'
            '    m.with_kernels("numba")\n'
            'except ValueError as exc:\n'
            '    print(exc)\n'
            'print(kernels.AVAILABLE, m.kernels, m.gravity_generalized_forces('
            'np.full(m.num_positions, 0.3)).tolist())\n')
    result = _child({}, code)
    assert result.returncode == 0, result.stderr
    refusal, last = result.stdout.splitlines()
    assert refusal.startswith("kernels 'numba': not available (") and 'numba' in refusal[30:]
    available, compiled, tau = last.split(' ', 2)
    assert (available, compiled) == ('False', 'numpy')
    model = random_model(2)
    np.testing.assert_allclose(json.loads(tau),
                               model.gravity_generalized_forces(
                                   np.full(model.num_positions, 0.3)),
                               rtol=0, atol=KERNELS_RTOL * 100)


def test_a_model_sent_to_another_process_rebuilds_its_kernels():
    """Dask pickles models to its workers: the kernels are not sent but made again there."""
    import pickle
    model = random_model(1)
    clone = pickle.loads(pickle.dumps(model))
    assert isinstance(clone, Model) and clone.kernels == model.kernels
    q = np.full(model.num_positions, -0.4)
    np.testing.assert_array_equal(clone.gravity_generalized_forces(q),
                                  model.gravity_generalized_forces(q))


def test_with_kernels_chooses_the_code_and_derived_models_keep_it():
    pytest.importorskip('numba', reason='numba is not installed: the numpy code runs')
    import pickle
    model = random_model(6)
    slow = model.with_kernels('numpy')
    assert (model.kernels, slow.kernels) == ('numba', 'numpy')
    assert slow.with_gravity((0, 0, -1.62)).kernels == 'numpy'
    assert pickle.loads(pickle.dumps(slow)).kernels == 'numpy'
    assert slow.with_kernels('numba').kernels == 'numba'
    # Every derived model keeps it: the payload's removal and replacement, both halves of
    # a removed subtree.
    body = model.body_names[-1]
    loaded = slow.with_payload(body, 1.5, (0.1, 0.0, 0.0))
    assert loaded.without_payload().kernels == 'numpy'
    assert loaded.with_payload(body, 2.0, (0.0, 0.1, 0.0)).kernels == 'numpy'
    rest, subtree = slow.remove_body(body)
    assert (rest.kernels, subtree.kernels) == ('numpy', 'numpy')
    q = random_q(model, np.random.default_rng(6), 4)
    for a, b in zip(model.poses_gravity_and_energy(q), slow.poses_gravity_and_energy(q)):
        np.testing.assert_allclose(a, b, rtol=0, atol=KERNELS_RTOL * 100)
    with pytest.raises(ModelError, match="kernels must be 'numpy' or 'numba', got 'gpu'"):
        model.with_kernels('gpu')
