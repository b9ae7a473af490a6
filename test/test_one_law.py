"""
One commanded law, one table: every path to the motors against the pair, on random sets.

The pair is :func:`effort_law.commanded_efforts` (joint torques and motion → motor torques)
and its measured inverse; test_effort_law.py pins the pair to NOTATION's oracle, written
out. Here every other path that turns joint torques into motor torques must give the pair's
numbers to :data:`AGREE`, on seeded random variants of one robot (a simple joint, a
differential, a coupling and a rod-driven linkage): stages lossless, lossy or self-locking;
joint damping on or off; rotors on or off. A path that wrote a term its own way (a damping
left out, a rotor on the wrong side of a loss, a hard friction sign) fails here.

The paths, the rows of :data:`PATHS`: a streamed command with velocities and accelerations,
a trajectory point, an effort alone at the measured motion, ``commanded_motor_efforts``,
``Model.motor_torques``, ``Model.inverse_dynamics`` with the set (ideal stages: the joint
side holds every term), identification's regression rows at the set's true values, the
joint spring's ``effort`` output and its ``motor_gains`` output run as the motors run it,
the excitation's motor efforts, and a goal's prepared map (the constant-map transmissions: a
goal's compiled step sends that map's positions and velocities, test_goal_loops.py). Every
row runs twice: on the reference loops (the loop modules as Python) and on the loops
compiled ahead of time, the kernels the bridge loads (skipped, saying so, where not built).
"""

import numpy as np
import pytest
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from test_effort_law import _chain_urdf, CHAIN, ROBOT

from transmission_bridge._shared import ahead
from transmission_bridge.control.impedance import ImpedanceCore
from transmission_bridge.identification import excitation
from transmission_bridge.identification.problem import Problem
from transmission_bridge.kinematics import load_model
from transmission_bridge.mapping.commands import CommandMapper
from transmission_bridge.mapping.measurement import Measured
from transmission_bridge.mapping.prepared import PreparedCommand
from transmission_bridge.transmissions import effort_law, linkage_loops, \
    load_transmissions, loss_loops
from transmission_bridge.transmissions.parameters import apply_parameters

AGREE = 1e-9            # relative to the largest motor torque: the same law in another order
RNG_SEED = 7070
STATES = 6
MOVING = 0.3            # rad/s: every motor faster than its stage's rest band (exact there)
STAGES = ('lossless', 'lossy', 'self-locking')
LINKAGE = ('ankle_pitch', 'ankle_roll')        # ROBOT's linkage: not a constant map


def variant(stage, damping, rotors, rng):
    """Return ROBOT's set with the variant's stages, damping and rotors, and the changes."""
    tset = load_transmissions(ROBOT)
    changes = {}
    for m in tset.actuator_names:
        p = f'actuators.{m}.'
        lossless = stage == 'lossless'
        changes[p + 'efficiency.driving'] = 1.0 if lossless else float(rng.uniform(0.5, 0.95))
        changes[p + 'efficiency.driven'] = (1.0 if lossless else float(
            rng.uniform(-0.5, -0.05) if stage == 'self-locking' else rng.uniform(0.3, 0.9)))
        changes[p + 'friction.viscous'] = 0.0 if lossless else float(rng.uniform(0, 2e-3))
        changes[p + 'friction.coulomb'] = 0.0 if lossless else float(rng.uniform(0, 0.05))
        changes[p + 'rotor_inertia'] = float(rng.uniform(1e-6, 5e-5)) if rotors else 0.0
    for j in tset.joint_names:
        changes[f'joints.{j}.damping'] = float(rng.uniform(0.05, 0.5)) if damping else 0.0
    for kind, names in (('joints', tset.joint_names), ('actuators', tset.actuator_names)):
        changes.update({f'{kind}.{n}.limits.effort': float('inf') for n in names})
    return apply_parameters(tset, changes), changes


VARIANTS = [(s, d, r) for s in STAGES for d in (False, True) for r in (False, True)]


def states(tset, rng):
    """Yield (q, q̇, q̈, τ, θ̇): every motor moving faster than MOVING."""
    linkage = [tset.joint_index[n] for n in LINKAGE]
    done = 0
    while done < STATES:
        q = rng.uniform(-0.4, 0.4, tset.num_joints)
        q[linkage] = rng.uniform(-0.25, 0.25, 2)
        qd = rng.normal(scale=2.0, size=tset.num_joints)
        thetad = tset.joint_to_actuator('velocity', qd, None if tset.constant_map else q)
        if np.abs(thetad).min() < MOVING:
            continue
        done += 1
        yield q, qd, rng.normal(size=tset.num_joints), \
            rng.normal(scale=3.0, size=tset.num_joints), thetad


# --- the paths: each returns the motors' torques, and the law's at what it was given ------

def stream(tset, ctx, q, qd, qdd, tau, thetad):
    mapper = CommandMapper(tset, limit_commands=False,
                           measured=lambda stamp_ns=None: ctx['elsewhere'])
    got = mapper.map_command(list(tset.joint_names), q, qd, tau, accelerations=qdd).effort
    return got, effort_law.commanded_efforts(tset, tau, qd, thetad, q, qdd)


def trajectory_point(tset, ctx, q, qd, qdd, tau, thetad):
    mapper = CommandMapper(tset, limit_commands=False)
    _, (_, _, _, point) = mapper.map_trajectory(list(tset.joint_names), [q], [qd], [qdd],
                                                [tau])
    return point[0], effort_law.commanded_efforts(tset, tau, qd, thetad, q, qdd)


def effort_alone(tset, ctx, q, qd, qdd, tau, thetad):
    measured = Measured(q, qd, tset.joint_to_actuator('position', q), thetad)
    mapper = CommandMapper(tset, limit_commands=False,
                           measured=lambda stamp_ns=None: measured)
    got = mapper.map_command(list(tset.joint_names), [], [], tau).effort
    return got, effort_law.commanded_efforts(tset, tau, qd, thetad, q)


def commanded_motor_efforts(tset, ctx, q, qd, qdd, tau, thetad):
    got = tset.commanded_motor_efforts(tau, thetad, q)
    return got, effort_law.commanded_efforts(tset, tau, qd, thetad, q)


def _model_motion(ctx, tset, q, qd, qdd):
    """Return the model's (q, q̇, q̈) in its own order from the set's."""
    order = [tset.joint_index[j] for j in ctx['model'].joint_names]
    return q[order], qd[order], qdd[order]


def _links(ctx, tset, q, qd, qdd, side):
    """Return the links' inverse dynamics with ``side``'s rotors, in the set's joint order."""
    model = ctx['model']
    mq, mv, ma = _model_motion(ctx, tset, q, qd, qdd)
    joint = model.inverse_dynamics(mq, mv, ma, side)
    return joint[[model.joint_names.index(j) for j in tset.joint_names]]


def motor_torques(tset, ctx, q, qd, qdd, tau, thetad):
    got = ctx['model'].motor_torques(*_model_motion(ctx, tset, q, qd, qdd), tset)
    links = _links(ctx, tset, q, qd, qdd, effort_law.joint_side(tset))
    return got, effort_law.commanded_efforts(tset, links, qd, thetad, q, qdd)


def inverse_dynamics_with_the_set(tset, ctx, q, qd, qdd, tau, thetad):
    """Ideal stages: every rotor and friction term is the joints', ``Jᵀ (ID + b q̇)``."""
    if not tset.losses.lossless and tset.losses.inefficient.any():
        return None
    joint = _links(ctx, tset, q, qd, qdd, tset) + tset.damping * qd
    got = tset.joint_to_actuator('effort', joint, q)
    links = _links(ctx, tset, q, qd, qdd, effort_law.joint_side(tset))
    return got, effort_law.commanded_efforts(tset, links, qd, thetad, q, qdd)


def identification_rows(tset, ctx, q, qd, qdd, tau, thetad):
    model = ctx['model']
    problem = Problem(model, tset, min_speed=0.0)
    mq, mv, ma = _model_motion(ctx, tset, q, qd, qdd)
    theta_dd = tset.joint_accelerations_to_actuator(qdd, q, qd)
    rows = problem.rows(mq[None], mv[None], ma[None], thetad[None], theta_dd[None],
                        np.zeros((1, tset.num_actuators)))
    got = rows.predict(problem.start)[0]
    links = _links(ctx, tset, q, qd, qdd, None)
    # Rows put every rotor on the motors' side: the pair with the rotors all there.
    side = tset.replace_fields(actuators={m: {'rotor_inertia': 0.0}
                                          for m in tset.actuator_names})
    want = effort_law.commanded_efforts(side, links, qd, thetad, q) + \
        tset.rotors.inertia * theta_dd
    return got, want


def excite(tset, ctx, q, qd, qdd, tau, thetad):
    model = ctx['model']
    Q, V, A = (x[None] for x in _model_motion(ctx, tset, q, qd, qdd))
    got, _, theta_d = excitation.motor_efforts(model, tset, Q, V, A, model.set_columns(tset))
    np.testing.assert_allclose(theta_d[0], thetad, rtol=AGREE, atol=AGREE)
    links = _links(ctx, tset, q, qd, qdd, effort_law.joint_side(tset))
    return got[0], effort_law.commanded_efforts(tset, links, qd, thetad, q, qdd)


def prepared_map(tset, ctx, q, qd, qdd, tau, thetad):
    """Map a goal's layout on ROBOT's constant-map transmissions (the variant's values)."""
    spec = {'transmissions': [t for t in ROBOT['transmissions'] if t['type'] != 'linkage']}
    part = load_transmissions(spec)
    part = apply_parameters(part, {k: v for k, v in ctx['changes'].items()
                                   if k.split('.')[1] in (*part.joint_names,
                                                          *part.actuator_names)})
    names = list(part.joint_names)
    prepared = PreparedCommand(CommandMapper(part, limit_commands=False), names, True)
    if not prepared.usable:        # lossy stages: a goal's command takes the stream's path
        return None
    cols = [tset.joint_index[n] for n in names]
    sent = deserialize_message(prepared.command(q[cols], qd[cols], tau[cols], 0), JointState)
    want = effort_law.commanded_efforts(tset, tau, qd, thetad, q)
    assert len(sent.name) == part.num_actuators
    return np.array(sent.effort), want[[tset.actuator_index[m] for m in sent.name]]


def _spring(tset, ctx, output, q, qd, tau, thetad):
    core = ImpedanceCore(tset, output)
    rng = ctx['rng']
    kp, kd = rng.uniform(5, 50, tset.num_joints), rng.uniform(0.1, 2, tset.num_joints)
    for j, p, d in zip(tset.joint_names, kp, kd):
        core.set_gain(j, 'p', float(p))
        core.set_gain(j, 'd', float(d))
    q_t = q if not tset.constant_map else q + rng.normal(scale=0.05, size=len(q))
    qd_t = rng.normal(size=len(q))
    names = list(tset.joint_names)
    assert core.take(np.arange(len(names)), q_t, qd_t, tau, 0) == ''
    theta = tset.joint_to_actuator('position', q)
    command = core.step(q, qd, theta, thetad, 0)
    motors = [tset.actuator_index[m] for m in command.names]
    spring = kp * (q_t - q) + kd * (qd_t - qd) + tau
    want = effort_law.commanded_efforts(tset, spring, qd, thetad, q)[motors]
    if output == 'effort':
        return command.effort, want
    run = command.stiffness * (command.position - theta[motors]) + command.damping * (
        command.velocity - thetad[motors]) + command.effort
    return run, want


def spring_effort(tset, ctx, q, qd, qdd, tau, thetad):
    return _spring(tset, ctx, 'effort', q, qd, tau, thetad)


def spring_motor_gains(tset, ctx, q, qd, qdd, tau, thetad):
    return _spring(tset, ctx, 'motor_gains', q, qd, tau, thetad)


PATHS = [stream, trajectory_point, effort_alone, commanded_motor_efforts, motor_torques,
         inverse_dynamics_with_the_set, identification_rows, spring_effort,
         spring_motor_gains, excite, prepared_map]


@pytest.fixture(params=['reference', 'ahead'])
def loops(request, monkeypatch):
    """Choose the loss and linkage loops every path calls: the modules as Python, or compiled."""
    for module, built in ((loss_loops, ahead.LOSS), (linkage_loops, ahead.LINKAGE)):
        chosen = module if request.param == 'reference' else built.load()
        if chosen is None:
            pytest.skip(f'{module.__name__} is not compiled ahead of time here (no numba or '
                        'no build: the warm-up builds it)')
        monkeypatch.setattr(module, '_compiled', chosen)
    return request.param


@pytest.fixture(scope='module')
def model():
    return load_model(_chain_urdf(np.random.default_rng(RNG_SEED)))


@pytest.mark.parametrize('stage, damping, rotors', VARIANTS)
@pytest.mark.parametrize('path', PATHS, ids=lambda p: p.__name__)
def test_every_path_gives_the_pair_s_motor_torques(path, stage, damping, rotors, model, loops):
    rng = np.random.default_rng(RNG_SEED + 1)
    tset, changes = variant(stage, damping, rotors, rng)
    assert {name for name, _ in CHAIN} == set(tset.joint_names)
    compared = 0
    for q, qd, qdd, tau, thetad in states(tset, rng):
        ctx = {'model': model, 'rng': rng, 'changes': changes,
               'elsewhere': Measured(q, -qd, tset.joint_to_actuator('position', q), -thetad)}
        result = path(tset, ctx, q, qd, qdd, tau, thetad)
        if result is None:
            pytest.skip(f'{path.__name__}: not a form of the law for {stage} stages')
        got, want = result
        scale = max(1.0, np.abs(want).max())
        np.testing.assert_allclose(got, want, rtol=AGREE, atol=AGREE * scale,
                                   err_msg=f'{path.__name__}, {stage}')
        compared += 1
    assert compared == STATES
