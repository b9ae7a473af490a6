"""
Linkage transmissions against what no one here wrote: a solver, calculus, a published ankle.

The oracle writes the geometry from the definitions (doc/formats.md, "Linkage") with its own
tools: the output body's pose as a product of 4x4 exponentials built by scipy's rotations,
each rod's equation as a distance, and scipy.optimize's solvers for both directions. Our
loops never run there. Then the laws: round trips, power, Jacobians against central
differences, accelerations against differences of velocities, the linearised coupling at
small motions; and the published closed-form inverse kinematics of a humanoid ankle.
"""

import math
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
from tolerances import POWER_RTOL, ROUND_TRIP_ATOL
from transmission_bridge.transmissions import ConfigError, load_transmissions
from transmission_bridge.transmissions.linkage import (
    LinkageActuator, LinkageGeometry, LinkageJoint, LinkageTransmission)

optimize = pytest.importorskip('scipy.optimize', reason='scipy is not installed')
Rotation = pytest.importorskip('scipy.spatial.transform').Rotation

CONFIG = pathlib.Path(__file__).resolve().parent.parent / 'config'
ORACLE_ATOL = 1e-10         # positions against the independent solver (rad, m)
JACOBIAN_ATOL = 1e-7        # J against central differences of the oracle's positions
ACCEL_RTOL = 1e-6           # accelerations against central differences of velocities


def _ankle(h1=0.49, h2=0.37, d=0.06, crank=0.12):
    """Return the closed_loop_ankle geometry (config/closed_loop_ankle_transmissions.yaml)."""
    return LinkageGeometry(
        joints=[LinkageJoint('revolute', (0, 1, 0), (0, 0, 0)),
                LinkageJoint('revolute', (1, 0, 0), (0, 0, 0))],
        actuators=[LinkageActuator('rotary', origin=(0, d, h1), axis=(0, 1, 0),
                                   crank=(-crank, d, h1), attachment=(-crank, d, 0)),
                   LinkageActuator('rotary', origin=(0, -d, h2), axis=(0, 1, 0),
                                   crank=(-crank, -d, h2), attachment=(-crank, -d, 0))])


GEOMETRIES = {
    'ankle, two cranks': _ankle(),
    'ankle, two sliders': LinkageGeometry(
        joints=[LinkageJoint('revolute', (0, 1, 0), (0, 0, 0.01)),
                LinkageJoint('revolute', (1, 0, 0), (0, 0, 0))],
        actuators=[LinkageActuator('slider', origin=(-0.04, 0.03, 0.25), axis=(0, 0.1, 1),
                                   attachment=(-0.05, 0.035, -0.01)),
                   LinkageActuator('slider', origin=(-0.04, -0.03, 0.3), axis=(0, 0, 1),
                                   attachment=(-0.05, -0.035, -0.01))]),
    'knee, crank and rod': LinkageGeometry(
        joints=[LinkageJoint('revolute', (0, 1, 0), (0, 0, -0.3))],
        actuators=[LinkageActuator('rotary', origin=(0.0, 0.0, -0.05), axis=(0, 1, 0),
                                   crank=(0.04, 0.0, -0.05), attachment=(0.03, 0.0, -0.34))]),
    'elbow, cylinder': LinkageGeometry(
        joints=[LinkageJoint('revolute', (0, 0, 1), (0.3, 0, 0))],
        actuators=[LinkageActuator('cylinder', origin=(0.0, 0.05, 0.0),
                                   attachment=(0.35, 0.04, 0.0))]),
    'prismatic and two revolute': LinkageGeometry(
        joints=[LinkageJoint('prismatic', (0, 0, 1), (0, 0, 0)),
                LinkageJoint('revolute', (1, 0, 0), (0, 0, 0)),
                LinkageJoint('revolute', (0, 1, 0), (0, 0, 0))],
        actuators=[LinkageActuator('cylinder', origin=(0.05, 0.05, 0.4),
                                   attachment=(0.06, 0.07, 0.0)),
                   LinkageActuator('slider', origin=(-0.07, 0.04, 0.3), axis=(0, 0, 1),
                                   attachment=(-0.06, 0.05, 0.02)),
                   LinkageActuator('rotary', origin=(0.0, -0.13, 0.35), axis=(1, 0, 0),
                                   crank=(0.0, -0.03, 0.35), attachment=(0.02, -0.03, 0.0))]),
}
REDUCTIONS = {'ankle, two cranks': (1.0, -1.0), 'ankle, two sliders': (1000.0, 1000.0),
              'knee, crank and rod': (25.0,), 'elbow, cylinder': (-2.0,),
              'prismatic and two revolute': (1.0, 1.0, 9.0)}


# --- the oracle: the geometry from its definitions, scipy's tools ---------------------------
def _pose(geometry, q):
    """Return T(q) = exp(xi_1 q_1) ... exp(xi_N q_N) as a 4x4 (scipy's rotations)."""
    T = np.eye(4)
    for joint, value in zip(geometry.joints, q):
        E = np.eye(4)
        axis, point = np.asarray(joint.axis), np.asarray(joint.origin)
        if joint.type == 'revolute':
            R = Rotation.from_rotvec(axis * value).as_matrix()
            E[:3, :3], E[:3, 3] = R, point - R @ point
        else:
            E[:3, 3] = axis * value
        T = T @ E
    return T


def _driven(actuator, u):
    """Return the rod's driven end for actuator coordinate ``u``."""
    origin = np.asarray(actuator.origin)
    if actuator.kind == 'rotary':
        turn = Rotation.from_rotvec(np.asarray(actuator.axis) * u).as_matrix()
        return origin + turn @ (np.asarray(actuator.crank) - origin)
    if actuator.kind == 'slider':
        return origin + u * np.asarray(actuator.axis)
    return origin


def _residuals(geometry, q, u):
    """Return each rod's equation in metres at joints ``q`` and actuators ``u``."""
    T = _pose(geometry, q)
    out = []
    for a, uk in zip(geometry.actuators, u):
        p = T[:3, :3] @ np.asarray(a.attachment) + T[:3, 3]
        driven = _driven(a, uk)
        zero = np.linalg.norm(np.subtract(a.attachment, a.driven_point))
        length = np.linalg.norm(p - driven)
        out.append(length - zero - (uk if a.kind == 'cylinder' else 0.0))
    return np.array(out)


def _oracle_actuators(geometry, q):
    """Solve each rod for its actuator coordinate, from 0 (the zero pose's branch)."""
    return np.array([optimize.fsolve(lambda u, k=k: _one(geometry, q, k, u[0]), [0.0],
                                     xtol=1e-15)[0] for k in range(len(q))])


def _one(geometry, q, k, u):
    """Rod k's equation alone (the others' actuators play no part in it)."""
    us = np.zeros(len(q))
    us[k] = u
    return _residuals(geometry, q, us)[k]


def _oracle_joints(geometry, u, start):
    """Solve the rods for the joints given the actuators, from ``start``."""
    solution = optimize.least_squares(lambda q: _residuals(geometry, q, u), start,
                                      xtol=1e-15, ftol=1e-15, gtol=1e-15, method='lm')
    return solution.x


def _poses(rng, geometry, count, spread=0.25):
    """Return random joint poses within ``spread`` (rad, or m / 10 for prismatic) of zero."""
    scale = np.array([spread if j.type == 'revolute' else spread / 10 for j in geometry.joints])
    return rng.uniform(-1.0, 1.0, (count, len(geometry.joints))) * scale


@pytest.mark.filterwarnings('ignore:.*(progress|too small).*:RuntimeWarning')
@pytest.mark.parametrize('name', list(GEOMETRIES))
def test_positions_agree_with_an_independent_solver_both_ways(name):
    geometry = GEOMETRIES[name]
    t = LinkageTransmission(geometry, REDUCTIONS[name])
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    for q in _poses(rng, geometry, 12):
        u = _oracle_actuators(geometry, q)
        assert np.abs(_residuals(geometry, q, u)).max() < 1e-13
        np.testing.assert_allclose(t.joint_to_actuator('position', q),
                                   u * t.reductions, rtol=0, atol=ORACLE_ATOL * 1000)
        np.testing.assert_allclose(t.joint_to_actuator('position', q) / t.reductions, u,
                                   rtol=0, atol=ORACLE_ATOL)
        ours = t.actuator_to_joint('position', u * t.reductions)
        np.testing.assert_allclose(ours, q, rtol=0, atol=ORACLE_ATOL)
        theirs = _oracle_joints(geometry, u, q + 0.01)
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=ORACLE_ATOL)


@pytest.mark.parametrize('name', list(GEOMETRIES))
def test_the_jacobian_is_the_central_difference_of_the_oracles_positions(name):
    geometry = GEOMETRIES[name]
    t = LinkageTransmission(geometry, REDUCTIONS[name])
    rng = np.random.default_rng(7 + len(name))
    h = 1e-6
    for q in _poses(rng, geometry, 4):
        x_a = t.joint_to_actuator('position', q)
        n = len(q)
        J = np.empty((n, n))        # dq/dx_a, column k from a unit actuator velocity
        for k in range(n):
            unit = np.zeros(n)
            unit[k] = 1.0
            J[:, k] = t.actuator_to_joint('velocity', unit, positions=x_a)
        for k in range(n):
            step = np.zeros(n)
            step[k] = h
            plus = _oracle_joints(geometry, (x_a + step) / t.reductions, q)
            minus = _oracle_joints(geometry, (x_a - step) / t.reductions, q)
            np.testing.assert_allclose(J[:, k], (plus - minus) / (2 * h), rtol=0,
                                       atol=JACOBIAN_ATOL * max(1.0, np.abs(J).max()))


@pytest.mark.parametrize('name', list(GEOMETRIES))
def test_round_trips_and_power_over_the_workspace(name):
    geometry = GEOMETRIES[name]
    t = LinkageTransmission(geometry, REDUCTIONS[name], joint_offsets=np.linspace(
        -0.1, 0.2, len(geometry.joints)))
    rng = np.random.default_rng(11)
    q = _poses(rng, geometry, 400, spread=0.4) + t.offsets
    x_a = t.joint_to_actuator('position', q)
    assert np.isfinite(x_a).all()
    # A batch is one stream: each row solved from the previous one's solution.
    np.testing.assert_allclose(t.actuator_to_joint('position', x_a), q, rtol=0,
                               atol=ROUND_TRIP_ATOL)
    sentinel = np.full_like(q, 1e9)       # an inverse that did nothing would show
    v = rng.normal(size=q.shape)
    v_a = t.joint_to_actuator('velocity', v, positions=q)
    back = sentinel.copy()
    back[:] = t.actuator_to_joint('velocity', v_a, positions=x_a)
    np.testing.assert_allclose(back, v, rtol=0, atol=ROUND_TRIP_ATOL * 100)
    tau = rng.normal(size=q.shape)
    tau_a = t.joint_to_actuator('effort', tau, positions=q)
    np.testing.assert_allclose(t.actuator_to_joint('effort', tau_a, positions=x_a), tau,
                               rtol=0, atol=ROUND_TRIP_ATOL * 100)
    power_j, power_a = (tau * v).sum(-1), (tau_a * v_a).sum(-1)
    np.testing.assert_allclose(power_a, power_j, rtol=POWER_RTOL,
                               atol=POWER_RTOL * np.abs(tau * v).sum(-1).max())


@pytest.mark.parametrize('name', list(GEOMETRIES))
def test_accelerations_are_the_rate_of_the_actuator_velocities(name):
    # Along q(t) = q0 + v t + a t²/2 the actuator velocity is J_x(q(t)) q'(t); its rate at
    # t = 0, by central differences, is J_x a + J_x-dot v.
    geometry = GEOMETRIES[name]
    t = LinkageTransmission(geometry, REDUCTIONS[name])
    rng = np.random.default_rng(13)
    h = 1e-5
    for q0 in _poses(rng, geometry, 4):
        v, a = rng.normal(size=len(q0)), rng.normal(size=len(q0))
        _, _, a_a, _, status = t.commands(q0, v_j=v, a_j=a)
        assert status.tolist() == [0]

        def actuator_velocity(s):
            return t.commands(q0 + v * s + 0.5 * a * s * s, v_j=v + a * s)[1][0]
        rate = (actuator_velocity(h) - actuator_velocity(-h)) / (2 * h)
        np.testing.assert_allclose(a_a[0], rate, rtol=ACCEL_RTOL,
                                   atol=ACCEL_RTOL * np.abs(rate).max())
        # The J-dot term is really there: without it the velocity map of a is off.
        plain = t.joint_to_actuator('velocity', a, positions=q0)
        assert np.abs(plain - a_a[0]).max() > 1e3 * ACCEL_RTOL * np.abs(rate).max()


def test_small_motions_follow_the_linearised_coupling():
    # Near the zero pose x_a = J_x(0) q + O(|q|²): the error over |q|² stays bounded (does not
    # grow like 1/|q|) while q shrinks a hundredfold, so J_x(0) is the linearised coupling.
    geometry = GEOMETRIES['ankle, two cranks']
    t = LinkageTransmission(geometry, REDUCTIONS['ankle, two cranks'])
    n = len(geometry.joints)
    J_x = np.column_stack([t.joint_to_actuator('velocity', np.eye(n)[k], positions=np.zeros(n))
                           for k in range(n)])
    direction = np.array([0.6, -0.8])
    ratios = []
    for size in (1e-2, 1e-3, 1e-4):
        q = size * direction
        error = np.abs(t.joint_to_actuator('position', q) - J_x @ q).max()
        ratios.append(error / size ** 2)
    assert max(ratios) < 10.0 and ratios[-1] <= 2 * ratios[0]


def _closed_loop_ankle_ik(d, L1, h1, h2, roll, pitch):
    """
    Return the motor angles of HuNingHe/closed_loop_ankle's ankle, its published closed form.

    (github.com/HuNingHe/closed_loop_ankle, controllers/test_pos/test_pos.py, ``ankle_ik``:
    for each side ``A cos t + B sin t = C`` solved as ``asin(C/|AB|) - asin(A/|AB|)``.)
    """
    cx, sx, cy, sy = math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch)
    out = []
    for side, h in ((1.0, h1), (-1.0, h2)):
        A = -L1 * L1 * cy + side * L1 * d * sx * sy
        B = -L1 * L1 * sy + L1 * h - side * L1 * d * sx * cy
        C = -(L1 * L1 + d * d - d * d * cx - L1 * h * sy - side * d * h * sx * cy)
        norm = math.hypot(A, B)
        out.append(math.asin(C / norm) - math.asin(A / norm))
    return out


def test_the_published_ankle_gives_its_published_motor_angles():
    ts = load_transmissions(CONFIG / 'closed_loop_ankle_transmissions.yaml')
    rng = np.random.default_rng(2018)
    for pitch, roll in rng.uniform(-0.32, 0.32, (50, 2)):    # the demo's range
        motors = ts.joint_to_actuator('position', [pitch, roll])
        expected = _closed_loop_ankle_ik(0.06, 0.12, 0.49, 0.37, roll, pitch)
        np.testing.assert_allclose(motors, expected, rtol=0, atol=1e-12)
        np.testing.assert_allclose(ts.actuator_to_joint('position', motors), [pitch, roll],
                                   rtol=0, atol=1e-12)


def test_states_it_cannot_solve_are_refused_and_leave_the_stream_as_it_was():
    geometry = GEOMETRIES['knee, crank and rod']
    t = LinkageTransmission(geometry, (1.0,), lower=[-0.5], upper=[0.5])
    warm = np.zeros(1)
    reachable = t.joint_to_actuator('position', [[0.2], [0.45]])
    q, _, _, status = t.joint_states(reachable, warm=warm)
    assert status.tolist() == [0, 0] and warm[0] == pytest.approx(0.45, abs=1e-12)
    beyond = t.commands([[0.7]])[0]         # reachable, but past the joint's upper limit
    q, _, _, status = t.joint_states(beyond, warm=warm)
    assert status.tolist() == [3] and np.isnan(q).all()
    assert warm[0] == pytest.approx(0.45, abs=1e-12)        # unchanged by the refusal
    q, _, _, status = t.joint_states([[np.nan]], warm=warm)
    assert status.tolist() == [-1] and np.isnan(q).all()
    # A crank of 4 cm cannot pull the rod's end 30 cm away: unreachable, as a command.
    x_a, _, _, _, status = t.commands([[math.pi / 2 + 1.0]])
    assert status.tolist() == [4] and np.isnan(x_a).all()


@pytest.mark.parametrize('change, words', [
    (lambda a: a.update(rod_length=0.5), 'rod_length 0.5 m disagrees with the zero-pose'),
    (lambda a: a.update(kind='spring'), 'kind must be one of rotary, slider, cylinder'),
    (lambda a: a.pop('crank'), 'a rotary actuator needs crank'),
    (lambda a: a.update(attachment=[-0.045, 0.04, 0.25]), 'its rod has no length'),
    (lambda a: a.update(axis=[0, 0, 0]), 'axis must not be zero'),
    (lambda a: a.update(crank=[0.0, 0.1, 0.25]), 'the crank point is on the axis'),
])
def test_bad_geometry_is_refused_naming_the_actuator(change, words):
    doc = _ankle_doc()
    change(doc['transmissions'][0]['actuators'][0])
    with pytest.raises(ConfigError, match=words) as info:
        load_transmissions(doc)
    assert 'left_motor' in str(info.value) or 'actuators[0]' in str(info.value)


def test_a_dead_point_at_the_zero_pose_is_refused():
    doc = _ankle_doc()
    # The crank perpendicular to its rod: the two roots of its equation meet at zero.
    doc['transmissions'][0]['actuators'][0]['crank'] = [0.0, 0.04, 0.3]
    doc['transmissions'][0]['actuators'][0]['origin'] = [0.0, 0.04, 0.25]
    doc['transmissions'][0]['actuators'][0]['attachment'] = [0.0, 0.04, 0.0]
    name = doc['transmissions'][0]['name']
    actuator = doc['transmissions'][0]['actuators'][0]['name']
    # Named as the user wrote it, transmission and actuator; the index only locates it.
    with pytest.raises(ConfigError, match=rf"^transmission '{name}': transmissions\[0\]: "
                                          rf"actuator '{actuator}': .*dead point"):
        load_transmissions(doc)


def test_joint_reductions_and_unknown_keys_are_refused():
    doc = _ankle_doc()
    doc['transmissions'][0]['joints'][0]['mechanical_reduction'] = 2.0
    with pytest.raises(ConfigError, match="a linkage's joints take none"):
        load_transmissions(doc)
    doc = _ankle_doc()
    doc['transmissions'][0]['actuators'][1]['crank_length'] = 0.04
    with pytest.raises(ConfigError, match="unknown key 'crank_length'"):
        load_transmissions(doc)
    doc = _ankle_doc()
    doc['transmissions'][0]['actuators'].pop()
    with pytest.raises(ConfigError, match='one actuator .rod. per joint'):
        load_transmissions(doc)


def _ankle_doc():
    return {'transmissions': [{
        'name': 'ankle', 'type': 'linkage',
        'joints': [{'name': 'pitch', 'axis': [0, 1, 0], 'origin': [0, 0, 0]},
                   {'name': 'roll', 'axis': [1, 0, 0], 'origin': [0, 0, 0]}],
        'actuators': [
            {'name': 'left_motor', 'kind': 'rotary', 'axis': [0, 1, 0],
             'origin': [0.0, 0.04, 0.25], 'crank': [-0.045, 0.04, 0.25],
             'attachment': [-0.045, 0.04, 0.0]},
            {'name': 'right_motor', 'kind': 'slider', 'origin': [-0.04, -0.04, 0.2],
             'direction': [0, 0, 1], 'attachment': [-0.04, -0.04, 0.0]}]}]}


def test_the_issues_example_loads_and_maps():
    ts = load_transmissions(_ankle_doc())
    q = np.array([0.2, -0.1])
    x_a = ts.joint_to_actuator('position', q)
    np.testing.assert_allclose(ts.actuator_to_joint('position', x_a), q, atol=1e-12)


def test_the_compiled_loops_equal_the_python_reference():
    # The same source, run as Python (TRANSMISSION_BRIDGE_KERNELS=numpy) in a child process
    # and compiled here: states and commands of every geometry to 1e-12.
    pytest.importorskip('numba', reason='numba is not installed: the Python loops run')
    from transmission_bridge.transmissions import linkage_loops
    assert linkage_loops.COMPILED
    code = ('import json, numpy as np, test_transmissions_linkage as t\n'
            'from transmission_bridge.transmissions import linkage_loops\n'
            'assert not linkage_loops.COMPILED\n'
            'print(json.dumps({k: v.tolist() for k, v in t._outputs().items()}))\n')
    env = dict(os.environ, TRANSMISSION_BRIDGE_KERNELS='numpy', PYTHONPATH=os.pathsep.join(
        [str(pathlib.Path(__file__).parent), os.environ.get('PYTHONPATH', '')]))
    run = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         env=env, timeout=600)
    assert run.returncode == 0, run.stderr
    import json
    reference = json.loads(run.stdout.splitlines()[-1])
    ours = _outputs()
    assert linkage_loops.kernels() is not linkage_loops      # compiled here, not the reference
    assert sorted(reference) == sorted(ours)
    for key, value in ours.items():
        np.testing.assert_allclose(value, reference[key], rtol=0, atol=1e-12, err_msg=key)


def _outputs():
    """Every map of every geometry at seeded poses: {name: array}."""
    out = {}
    rng = np.random.default_rng(99)
    for name, geometry in GEOMETRIES.items():
        t = LinkageTransmission(geometry, REDUCTIONS[name])
        q = _poses(rng, geometry, 5)
        v, a, tau = (rng.normal(size=q.shape) for _ in range(3))
        x_a, v_a, a_a, tau_a, _ = t.commands(q, v, a, tau)
        q_back, v_back, tau_back, _ = t.joint_states(x_a, v_a, tau_a)
        for label, value in (('x_a', x_a), ('v_a', v_a), ('a_a', a_a), ('tau_a', tau_a),
                             ('q', q_back), ('v', v_back), ('tau', tau_back)):
            out[f'{name}|{label}'] = value
    # The legged robot's state map (J as its solves leave it) and impedance kernel.
    from transmission_bridge.transmissions import linkage_loops
    tset = load_transmissions(pathlib.Path(__file__).resolve().parent.parent / 'config'
                              / 'legged_robot.urdf')
    n_j, n_a = tset.num_joints, tset.num_actuators
    state_map = tset.state_map()
    state = np.empty((3, n_j))
    write = state_map.writer(state)
    commands = np.empty((n_a, 5))
    for k in range(3):
        q = tset.default_positions + rng.uniform(-0.05, 0.05, n_j)
        theta = tset.joint_to_actuator('position', q)
        flat = np.concatenate([theta, rng.normal(size=n_a), np.zeros(n_a), [1.0]])
        assert write(flat)
        out[f'legged{k}|J'] = state_map.jacobian.copy()
        goal = np.stack([theta + rng.normal(scale=0.01, size=n_a), rng.normal(size=n_a)])
        assert linkage_loops.kernels().mit_state(
            state_map.jacobian, np.arange(n_j), np.arange(n_a), rng.uniform(5, 50, n_j),
            rng.uniform(0.1, 2, n_j), goal, rng.normal(size=n_j), flat, n_a, commands)
        out[f'legged{k}|mit'] = commands.copy()
        tau, efforts = np.empty(n_j), np.empty(n_a)
        worst = linkage_loops.kernels().effort_state(
            state_map.jacobian, np.arange(n_j), np.arange(n_a), rng.uniform(5, 50, n_j),
            rng.uniform(0.1, 2, n_j), rng.normal(size=(3, n_j)), rng.uniform(0, 1, n_j),
            state_map.latest, np.full(n_j, 0.01), np.zeros(n_a), tau, efforts)
        out[f'legged{k}|effort'] = np.concatenate([[worst], tau, efforts])
    return out


# --- the URDF form ---------------------------------------------------------------------------
def _ankle_urdf(pitch_extra='', roll_joint_parent='spacer', transmission_joints=None):
    """
    Return the closed_loop_ankle as a URDF with turned (rpy) and split joint frames.

    A fixed joint sits between the two, so the axes in the linkage frame must be composed:
    pitch about the shank's y, roll about x, as in the YAML file.
    """
    joints = transmission_joints or ('<joint name="ankle_pitch" role="joint1"/>'
                                     '<joint name="ankle_roll" role="joint2"/>')
    motors = ''.join(
        f"""<actuator name="{name}" role="actuator{k + 1}"><kind>rotary</kind>
              <axis xyz="0 1 0"/><origin xyz="0 {d} {h}"/><crank xyz="-0.12 {d} {h}"/>
              <attachment xyz="-0.12 {d} 0"/></actuator>"""
        for k, (name, d, h) in enumerate((('ankle_l_motor', 0.06, 0.49),
                                          ('ankle_r_motor', -0.06, 0.37))))
    return f"""<robot name="ankle">
      <link name="shank"/><link name="pitch_link"/><link name="spacer"/><link name="foot"/>
      <joint name="ankle_pitch" type="revolute"><parent link="shank"/>
        <child link="pitch_link"/><origin xyz="0 0 0" rpy="0 0 1.5707963267948966"/>
        <axis xyz="1 0 0"/><limit lower="-0.6" upper="0.6" effort="50" velocity="5"/>
        {pitch_extra}</joint>
      <joint name="spacer_joint" type="fixed"><parent link="pitch_link"/>
        <child link="spacer"/><origin xyz="0 0 0" rpy="0 0 -1.5707963267948966"/></joint>
      <joint name="ankle_roll" type="revolute"><parent link="{roll_joint_parent}"/>
        <child link="foot"/><origin xyz="0 0 0" rpy="0 0 0"/><axis xyz="1 0 0"/>
        <limit lower="-0.5" upper="0.5" effort="50" velocity="5"/></joint>
      <transmission name="ankle">
        <plugin>transmission_bridge/LinkageTransmission</plugin>{motors}{joints}
      </transmission></robot>"""


def test_a_urdf_linkage_takes_its_joints_from_the_robot_and_maps_as_the_yaml():
    from_urdf = load_transmissions(_ankle_urdf())
    from_yaml = load_transmissions(CONFIG / 'closed_loop_ankle_transmissions.yaml')
    geometry = from_urdf.specs[0].geometry
    np.testing.assert_allclose([j.axis for j in geometry.joints], [[0, 1, 0], [1, 0, 0]],
                               atol=1e-15)
    rng = np.random.default_rng(5)
    q = rng.uniform(-0.3, 0.3, (50, 2))
    np.testing.assert_allclose(from_urdf.joint_to_actuator('position', q),
                               from_yaml.joint_to_actuator('position', q), rtol=0, atol=1e-14)
    # And the URDF's joint limits hold: past 0.6 rad of pitch the state is refused.
    x = from_yaml.joint_to_actuator('position', [0.65, 0.0])
    assert np.isnan(from_urdf.actuator_to_joint('position', x)).all()


@pytest.mark.parametrize('joints, words', [
    ('<joint name="ankle_pitch" role="joint1"><axis xyz="1 0 0"/></joint>'
     '<joint name="ankle_roll" role="joint2"/>',
     r"joint 'ankle_pitch': <axis> \[1.0, 0.0, 0.0\] but the robot's axis, in the linkage "
     r'frame, is \[0.0, 1.0, 0.0\]'),
    ('<joint name="ankle_pitch" role="joint1"><origin xyz="0 0 0.1"/></joint>'
     '<joint name="ankle_roll" role="joint2"/>',
     r"<origin> \[0.0, 0.0, 0.1\] is not on the robot's axis"),
    ('<joint name="ankle_pitch" role="joint1"><type>prismatic</type></joint>'
     '<joint name="ankle_roll" role="joint2"/>',
     r"<type> 'prismatic' but the robot's joint is 'revolute'"),
    ('<joint name="ankle_roll" role="joint1"/><joint name="ankle_pitch" role="joint2"/>',
     r"joint 'ankle_pitch' does not follow 'ankle_roll'"),
    ('<joint name="ankle_pitch" role="joint1"><mechanical_reduction>2</mechanical_reduction>'
     '</joint><joint name="ankle_roll" role="joint2"/>', "a linkage's joints take none"),
])
def test_a_urdf_linkage_that_disagrees_with_the_robot_is_refused_with_both(joints, words):
    with pytest.raises(ConfigError, match=words) as info:
        load_transmissions(_ankle_urdf(transmission_joints=joints))
    assert "transmission 'ankle'" in str(info.value)


def test_given_joint_geometry_that_agrees_is_taken_and_any_point_on_the_axis_will_do():
    joints = ('<joint name="ankle_pitch" role="joint1"><axis xyz="0 2 0"/>'
              '<origin xyz="0 0.3 0"/></joint><joint name="ankle_roll" role="joint2"/>')
    ts = load_transmissions(_ankle_urdf(transmission_joints=joints))
    assert ts.specs[0].geometry.joints[0].axis == pytest.approx((0.0, 1.0, 0.0), abs=1e-15)


def test_joints_that_are_not_one_chain_are_refused():
    with pytest.raises(ConfigError, match="does not follow 'ankle_pitch'"):
        load_transmissions(_ankle_urdf(roll_joint_parent='shank'))


def test_any_batch_shape_maps_as_its_rows_one_by_one():
    # A (2, 3, nJ) batch: every element as if mapped alone (the stream's rows in order).
    ts = load_transmissions(CONFIG / 'legged_robot.urdf')
    rng = np.random.default_rng(8)
    q = np.tile(ts.default_positions, (2, 3, 1)) + rng.uniform(-0.2, 0.2, (2, 3, ts.num_joints))
    v = rng.normal(size=q.shape)
    for kind, values in (('position', q), ('velocity', v), ('effort', v)):
        batch = ts.joint_to_actuator(kind, values, positions=q)
        for i, j in np.ndindex(2, 3):
            one = ts.joint_to_actuator(kind, values[i, j], positions=q[i, j])
            np.testing.assert_allclose(batch[i, j], one, rtol=0, atol=1e-15, err_msg=kind)
    a = ts.joint_accelerations_to_actuator(v, q, v)
    np.testing.assert_allclose(a[1, 2], ts.joint_accelerations_to_actuator(v[1, 2], q[1, 2],
                                                                           v[1, 2]), atol=1e-15)
