"""
The loss, linkage and goal loops compiled ahead of time: the reference's bits, no numba loaded.

Built into a folder of this test's own (``TRANSMISSION_BRIDGE_AOT_DIR``), in a subprocess as a
bridge would build them. Each exported loss loop against :mod:`loss_loops` run as plain Python
(the reference the just-in-time loops are also pinned to, test_losses.py) on random stages and
states, moving both ways and at rest; the legged robot's linkages mapped both ways, at random
states, by the compiled module and by numba's just-in-time loops (the same LLVM code: the same
bits); then processes that map the example arm's lossy states and commands, and the legged
robot's linkages and springs, through the routes, and follow a goal's state must not have
imported numba or llvmlite (the goal's step against the reference: test_goal_loops.py).
"""

import os
import subprocess
import sys

import numpy as np
import pytest

from transmission_bridge.transmissions import load_transmissions, loss_loops

pytest.importorskip('numba', reason='numba is not installed: nothing is compiled ahead of time')

CONFIG = 'config/example_robot_transmissions.yaml'
# The kinematics' exported loops against numba's own: the same formulas, fused multiply-adds
# where either compiler chose them (rounding only), relative to each output's scale.
KERNELS_RTOL = 1e-12
LEGGED = 'config/legged_robot.urdf'


@pytest.fixture(scope='module')
def built(tmp_path_factory):
    where = tmp_path_factory.mktemp('aot')
    env = dict(os.environ, TRANSMISSION_BRIDGE_AOT_DIR=str(where))
    done = subprocess.run([sys.executable, '-m', 'transmission_bridge._shared.ahead'],
                          env=env, capture_output=True, text=True, timeout=600)
    if done.returncode:
        pytest.skip(f'no ahead-of-time build here: {done.stderr.strip()}')
    old = os.environ.get('TRANSMISSION_BRIDGE_AOT_DIR')
    os.environ['TRANSMISSION_BRIDGE_AOT_DIR'] = str(where)
    from transmission_bridge._shared import ahead
    module = ahead.LOSS.load()
    assert module is not None and ahead.LINKAGE.load() is not None, 'built, but not found'
    yield module, env
    if old is None:
        del os.environ['TRANSMISSION_BRIDGE_AOT_DIR']
    else:
        os.environ['TRANSMISSION_BRIDGE_AOT_DIR'] = old


def _loads_no_numba(script, env, compiled):
    """Run ``script`` (it prints its loops' module name, then whether numba, llvmlite loaded)."""
    out = subprocess.run([sys.executable, '-c', script], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    name, numba_loaded, llvm_loaded = out.stdout.split()
    assert name.startswith(compiled), out.stdout            # the compiled module
    assert (numba_loaded, llvm_loaded) == ('False', 'False'), out.stdout


def _stages(rng, n):
    losses = load_transmissions({'transmissions': [
        {'name': f't{i}', 'type': 'simple',
         'actuators': [{'name': f'm{i}', 'mechanical_reduction': float(rng.uniform(5, 100)),
                        'efficiency': {'driving': float(rng.uniform(0.5, 1.0)),
                                       'driven': float(rng.uniform(0.3, 1.0))},
                        'friction': {'viscous': float(rng.uniform(0, 1e-3)),
                                     'coulomb': float(rng.uniform(0, 0.05))}}],
         'joints': [{'name': f'j{i}'}]} for i in range(n)]}).losses
    return loss_loops.stage_table(losses, True), loss_loops.stage_table(losses, False)


def test_every_exported_loop_gives_the_reference_bits(built):
    module, _ = built
    rng = np.random.default_rng(64)
    n = 6
    measured, commanded = _stages(rng, n)
    for _ in range(40):
        flat = np.r_[rng.normal(size=n), rng.choice([-3.0, -0.01, 0.0, 0.02, 4.0], n),
                     rng.normal(size=n), 1.0]
        want, got = np.empty(3 * n + 1), np.empty(3 * n + 1)
        loss_loops.measured_state(flat, n, measured, want)
        module.measured_state(flat, n, measured, got)
        assert want.tobytes() == got.tobytes()
        motors = rng.permutation(n)[:4].astype(np.intp)
        values = rng.normal(size=4)
        inverse = rng.uniform(0, 1, 4)
        a, b = values.copy(), values.copy()
        worst = (loss_loops.commanded_in_place(a, flat, n, motors, commanded, inverse),
                 module.commanded_in_place(b, flat, n, motors, commanded, inverse))
        assert a.tobytes() == b.tobytes() and worst[0] == worst[1]
        want, got = np.empty(4), np.empty(4)
        loss_loops.commanded(values, flat[n:2 * n], motors, commanded, want)
        module.commanded(values, flat[n:2 * n], motors, commanded, got)
        assert want.tobytes() == got.tobytes()
        mit = rng.normal(size=(4, 7))[:, :5]            # strided rows, as the wire's view
        a, b = mit.copy(), mit.copy()
        loss_loops.mit_feed_forward(a, flat, n, motors, commanded)
        module.mit_feed_forward(b, flat, n, motors, commanded)
        assert a.tobytes() == b.tobytes()


def test_a_lossy_bridge_without_linkages_loads_no_numba(built):
    _, env = built
    script = (
        'import sys\n'
        'import numpy as np\n'
        'from transmission_bridge.mapping.warm_up import warm_up\n'
        'from transmission_bridge.mapping.commands import CommandMapper\n'
        'from transmission_bridge.transmissions import load_transmissions, loss_loops\n'
        f'ts = load_transmissions({CONFIG!r})\n'
        'assert not ts.losses.lossless\n'
        'warm_up(ts)\n'
        'flat = np.r_[np.zeros(ts.num_actuators), np.ones(2 * ts.num_actuators), 1.0]\n'
        'ts.state_map()(flat)\n'
        'CommandMapper(ts).map_command(list(ts.joint_names), [], [], [0.1] * ts.num_joints)\n'
        'print(loss_loops.kernels().__name__,\n'
        "      'numba' in sys.modules, 'llvmlite' in sys.modules)\n")
    _loads_no_numba(script, env, '_loss_loops_')


def test_a_bridge_following_a_goal_loads_no_numba(built):
    _, env = built
    script = (
        'import sys\n'
        'import numpy as np\n'
        'from transmission_bridge.control.following import Execution\n'
        'from transmission_bridge.control.goal import plan_goal, warm_check\n'
        'from transmission_bridge.control.tolerances import tolerances\n'
        'from transmission_bridge.control import goal_loops\n'
        'from transmission_bridge.mapping.commands import CommandMapper\n'
        'from transmission_bridge.mapping.prepared import PreparedCommand\n'
        'from transmission_bridge.transmissions import load_transmissions\n'
        f'ts = load_transmissions({CONFIG!r})\n'
        'warm_check(ts)\n'
        "names = ['wrist_pitch', 'wrist_roll']\n"
        'idx = np.array([ts.joint_index[j] for j in names])\n'
        'q = ts.default_positions\n'
        'plan = plan_goal(ts, names, names, [(1.0, list(q[idx] + 0.1), [0.0, 0.0], [], [])],\n'
        '                 (q[idx], np.zeros(2)), 0, 0, tolerances(names, [0.0] * 2, [0.0] * 2,'
        ' 0.01, 0.0))\n'
        'mapped = PreparedCommand(CommandMapper(ts), names, False)\n'
        'loops = goal_loops.kernels()\n'
        'assert Execution(plan).follow(loops, 500_000_000, q, 0 * q, idx, mapped.affine())'
        ' is not None\n'
        'print(loops.__name__,\n'
        "      'numba' in sys.modules, 'llvmlite' in sys.modules)\n")
    _loads_no_numba(script, env, '_goal_loops_')


def _legged_maps(loops, rng_seed):
    """Map the legged robot's random states and commands with ``loops``; return the bytes."""
    from transmission_bridge.messages.wire import JointStateLayout
    from transmission_bridge.transmissions import linkage_loops
    saved = linkage_loops._compiled
    linkage_loops._compiled = loops
    try:
        tset = load_transmissions(LEGGED)       # a new set: it takes the loops now given
        rng = np.random.default_rng(rng_seed)
        n_act, n = tset.num_actuators, tset.num_joints
        theta0 = tset.joint_to_actuator('position', tset.default_positions)
        out = []
        joint_map = tset.state_map()
        # The fast route's way: straight into a message's bytes (a strided view).
        message = JointStateLayout(tset.joint_names, '', (n, n, n)).encoder()
        into_message = joint_map.writer(message.state)
        for _ in range(20):
            flat = np.r_[theta0 + rng.normal(0, 0.01, n_act), rng.normal(size=2 * n_act), 1.0]
            out.append(joint_map(flat).tobytes())
            into_message(flat)
            out.append(message.to_bytes())
            q = tset.default_positions + rng.normal(0, 0.02, n)
            out.append(tset.joint_to_actuator('position', q).tobytes())
            out.append(tset.joint_to_actuator('velocity', rng.normal(size=n), positions=q)
                       .tobytes())
            out.append(tset.joint_to_actuator('effort', rng.normal(size=n), positions=q)
                       .tobytes())
        return out
    finally:
        linkage_loops._compiled = saved


def test_the_linkage_loops_give_the_just_in_time_bits(built):
    from transmission_bridge._shared import ahead, loops as _loops
    from transmission_bridge.transmissions import linkage_loops
    compiled = ahead.LINKAGE.load()
    jit = _loops.compiled_copy(linkage_loops.__name__, linkage_loops._NOT_COMPILED)
    assert _legged_maps(compiled, 62) == _legged_maps(jit, 62)


def test_a_legged_bridge_with_springs_loads_no_numba(built):
    _, env = built
    script = (
        'import sys\n'
        'import numpy as np\n'
        'from transmission_bridge.control.impedance import ImpedanceCore\n'
        'from transmission_bridge.mapping.warm_up import warm_up\n'
        'from transmission_bridge.transmissions import linkage_loops, load_transmissions\n'
        f'ts = load_transmissions({LEGGED!r})\n'
        'assert len(ts.linkage_joints)\n'
        'warm_up(ts)\n'
        'state_map = ts.state_map()\n'
        'write = state_map.writer(np.empty((3, ts.num_joints)))\n'
        'theta = ts.joint_to_actuator("position", ts.default_positions)\n'
        'flat = np.r_[theta, np.zeros(2 * ts.num_actuators), 1.0]\n'
        'assert write(flat)\n'
        'q = ts.default_positions\n'
        'for output, width in (("motor_gains", (ts.num_actuators, 5)),\n'
        '                      ("effort", (ts.num_actuators,))):\n'
        '    core = ImpedanceCore(ts, output)\n'
        '    for j in ts.joint_names:\n'
        '        core.set_gain(j, "p", 30.0)\n'
        '    joints = core.joints\n'
        '    assert core.take(joints, q[joints] + 0.01, q[joints] * 0, q[joints] * 0, 0) == ""\n'
        '    block = core.block_at(None, 0, state_map.latest)\n'
        '    core.fill(block, flat, state_map.latest, state_map.jacobian, np.empty(width))\n'
        'print(linkage_loops.kernels().__name__,\n'
        "      'numba' in sys.modules, 'llvmlite' in sys.modules)\n")
    _loads_no_numba(script, env, '_linkage_loops_')


def test_a_kinematics_node_loads_no_numba(built):
    """The node's per-state work and its dynamics, as the node warms and runs them."""
    _, env = built
    script = (
        'import sys\n'
        'import numpy as np\n'
        'from transmission_bridge.kinematics import load_model\n'
        'from transmission_bridge.kinematics_node.core import KinematicsCore\n'
        'from transmission_bridge.kinematics_node.dynamics import warm_up_dynamics\n'
        f'model = load_model({LEGGED!r})\n'
        'model.warm_up()\n'
        'warm_up_dynamics(model)\n'
        'core = KinematicsCore(model)\n'
        'q = model.default_positions + 0.1\n'
        'ws = model.one_configuration()\n'
        'ws.frames_gravity_energy(q)\n'
        'model.jacobian(q, model.body_names[-1])\n'
        'model.forward_dynamics(q, 0 * q, 0 * q)\n'
        'model.poses_and_gravity(np.tile(q, (3, 1)))\n'
        'print(model._backend._dyn.__name__,\n'
        "      'numba' in sys.modules, 'llvmlite' in sys.modules)\n")
    _loads_no_numba(script, env, '_dynamics_')


@pytest.mark.parametrize('seed', range(4))
def test_the_kinematics_loops_give_the_just_in_time_values(built, seed):
    """Every exported chain algorithm against numba's own, on random trees (views included)."""
    from kinematics_models import random_model
    from transmission_bridge._shared import ahead, loops as _loops
    from transmission_bridge.kinematics.kernels import dynamics, loops
    model = random_model(seed, num_bodies=9)
    compiled = (ahead.KINEMATICS.load(), ahead.DYNAMICS.load())
    assert all(compiled), 'built, but not found'
    jit = (_loops.jitted(loops.__name__), _loops.jitted(dynamics.__name__))
    rng = np.random.default_rng(seed)
    n = model.num_positions
    Q, V, A = (rng.normal(size=(5, 2 * n))[:, ::2] for _ in range(3))     # strided rows
    outputs = []
    for kernels in (compiled, jit):
        backend = model._backend
        backend._loops, backend._dyn = kernels
        got = [model.inverse_dynamics(Q, V, A), model.mass_matrix(Q),
               model.poses_and_gravity(Q)[0], model.poses_and_gravity(Q)[1],
               model.forward_dynamics(Q, V, A), model.jacobian(Q[0], model.body_names[-1])]
        got += [model.inverse_dynamics(Q[i], V[i], A[i]) for i in range(5)]
        got += [model.mass_matrix(Q[i]) for i in range(5)]
        got += [model.gravity_generalized_forces(Q[i]) for i in range(5)]
        outputs.append(got)
    for ours, theirs in zip(*outputs):
        scale = max(1.0, float(np.abs(theirs).max()))
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=KERNELS_RTOL * scale)


def test_a_build_on_first_use_says_so_and_a_failed_one_says_why(tmp_path):
    # A library user who skipped the warm-up waits for the build: the log says what is being
    # compiled, where, and how to do it beforehand; a folder that cannot be made is named,
    # and the loops fall back (no traceback, the caller goes on).
    blocked = tmp_path / 'aot'
    blocked.write_text('a file where the folder would be')
    env = dict(os.environ, TRANSMISSION_BRIDGE_AOT_DIR=str(blocked))
    out = subprocess.run([sys.executable, '-c', 'from transmission_bridge._shared import ahead; '
                          'print(ahead.GOAL.ensure())'], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.split() == ['None'], out
    assert 'Traceback' not in out.stderr, out.stderr
    said = out.stderr.splitlines()
    assert said[0].startswith('compiling transmission_bridge.control.goal_loops ahead of time '
                              f'into {blocked}, once'), said
    assert 'python -m transmission_bridge._shared.ahead' in said[0], said
    assert said[1].startswith('transmission_bridge.control.goal_loops not compiled ahead of '
                              'time (') and 'FileExistsError' in said[1], said
