"""
Joint impedance in motor space (transmissions/impedance.py), against independent numbers.

The motor stiffness is checked against finite differences of the motor torques of the joint
law, computed through the set's own position solver (a linkage's rods solved anew at each
displaced motor pose), never through the Jacobian under test; the motors' own law against
the joint law at random states; passivity as symmetry and non-negative eigenvalues.
"""

import numpy as np
import pytest

from transmission_bridge.transmissions import impedance, load_transmissions

RNG_SEED = 51
CONFIG = 'config/'
LINEAR_SETS = ['example_robot_transmissions.yaml', 'three_motor_wrist_transmissions.yaml',
               'scara_transmissions.yaml']
LINKAGE_SETS = ['closed_loop_ankle_transmissions.yaml', 'legged_robot.urdf']
EXACT = 1e-9            # linear maps, double precision
FD_STEP = 1e-6          # central differences: error O(h^2) ~ 1e-12 relative
FD_TOL = 1e-5


def _pose(tset, rng, spread=0.05):
    """Return (joint positions, motor positions) near the default pose (reachable)."""
    q = tset.default_positions + rng.uniform(-spread, spread, tset.num_joints)
    return q, tset.joint_to_actuator('position', q)


def _motor_torques_of_joint_law(tset, kp, q_target, theta):
    """τ_a(θ) of the joint spring at motor pose θ: q by the set's solver, Jᵀ by its map."""
    q = tset.actuator_to_joint('position', theta)
    tau_j = kp * (q_target - q)
    return tset.joint_to_actuator('effort', tau_j, positions=None if tset.constant_map else q)


@pytest.mark.parametrize('name', LINEAR_SETS + LINKAGE_SETS)
def test_motor_stiffness_is_the_finite_difference_of_the_joint_spring(name):
    tset = load_transmissions(CONFIG + name)
    rng = np.random.default_rng(RNG_SEED)
    q0, theta0 = _pose(tset, rng)
    kp = rng.uniform(5.0, 80.0, tset.num_joints)
    J = impedance.jacobian(tset, theta0)
    K, _ = impedance.motor_gains(J, kp, np.zeros(tset.num_joints))
    fd = np.empty_like(K)
    for i in range(tset.num_actuators):
        step = np.zeros(tset.num_actuators)
        step[i] = FD_STEP
        plus = _motor_torques_of_joint_law(tset, kp, q0, theta0 + step)
        minus = _motor_torques_of_joint_law(tset, kp, q0, theta0 - step)
        fd[:, i] = -(plus - minus) / (2 * FD_STEP)
    scale = np.abs(K).max()
    assert np.abs(K - fd).max() <= FD_TOL * scale, name


@pytest.mark.parametrize('name', LINEAR_SETS + LINKAGE_SETS)
def test_the_motor_spring_is_passive(name):
    tset = load_transmissions(CONFIG + name)
    rng = np.random.default_rng(RNG_SEED + 1)
    _, theta = _pose(tset, rng)
    J = impedance.jacobian(tset, theta)
    K, D = impedance.motor_gains(J, rng.uniform(0, 100, tset.num_joints),
                                 rng.uniform(0, 5, tset.num_joints))
    for M in (K, D):
        assert np.allclose(M, M.T, rtol=0, atol=EXACT * np.abs(M).max())
        assert np.linalg.eigvalsh(M).min() >= -EXACT * np.abs(M).max()


def _mit_and_joint_law(tset, rng, offset):
    q, theta = _pose(tset, rng)
    n = tset.num_joints
    kp, kd = rng.uniform(5, 80, n), rng.uniform(0.1, 3, n)
    q_target = q + rng.uniform(-offset, offset, n)
    qd, qd_target, tau_ff = rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)
    J = impedance.jacobian(tset, theta)
    thetad = np.linalg.solve(J, qd) if J.shape[0] == J.shape[1] else np.linalg.pinv(J) @ qd
    theta_target = tset.joint_to_actuator('position', q_target)
    thetad_target = (tset.joint_to_actuator('velocity', qd_target) if tset.constant_map else
                     np.linalg.solve(J, qd_target))
    target, target_d, k, d, feed = impedance.mit_commands(J, kp, kd, theta_target,
                                                          thetad_target, tau_ff, theta, thetad)
    motor_law = k * (target - theta) + d * (target_d - thetad) + feed
    tau_j = impedance.joint_torques(kp, kd, q_target, qd_target, tau_ff, q, qd)
    joint_law = impedance.motor_efforts(tset, tau_j, q)
    return motor_law, joint_law


@pytest.mark.parametrize('name', LINEAR_SETS)
def test_mit_motors_reproduce_the_joint_law_exactly_for_linear_transmissions(name):
    tset = load_transmissions(CONFIG + name)
    rng = np.random.default_rng(RNG_SEED + 2)
    for _ in range(20):
        motor_law, joint_law = _mit_and_joint_law(tset, rng, 0.3)
        assert np.allclose(motor_law, joint_law, rtol=1e-9,
                           atol=EXACT * max(1.0, np.abs(joint_law).max())), name


@pytest.mark.parametrize('name', LINKAGE_SETS)
def test_mit_motors_reproduce_the_joint_law_to_first_order_for_linkages(name):
    tset = load_transmissions(CONFIG + name)
    errors = []
    for offset in (1e-2, 1e-3):
        rng = np.random.default_rng(RNG_SEED + 3)          # the same states, smaller offsets
        motor_law, joint_law = _mit_and_joint_law(tset, rng, offset)
        errors.append(np.abs(motor_law - joint_law).max())
    # second-order remainder: ten times smaller offsets, about a hundred times smaller error
    assert errors[1] < errors[0] / 30, errors


def test_a_differential_couples_its_motors_a_gearbox_divides_by_n_squared():
    tset = load_transmissions(CONFIG + 'example_robot_transmissions.yaml')
    J = impedance.jacobian(tset, tset.joint_to_actuator('position', tset.default_positions))
    kp = np.zeros(tset.num_joints)
    pitch, roll = tset.joint_index['wrist_pitch'], tset.joint_index['wrist_roll']
    left, right = tset.actuator_index['wrist_left_motor'], tset.actuator_index['wrist_right_motor']
    elbow, elbow_motor = tset.joint_index['elbow'], tset.actuator_index['elbow_motor']
    kp[[pitch, roll, elbow]] = [40.0, 10.0, 64.0]
    K, _ = impedance.motor_gains(J, kp, np.zeros(tset.num_joints))
    # elbow: joint reduction 80, q = θ / 80: k = 64 / 80**2
    assert K[elbow_motor, elbow_motor] == pytest.approx(64.0 / 80 ** 2, rel=1e-12)
    # wrist: J from differences of the set's position map, not its velocity map
    theta = tset.joint_to_actuator('position', tset.default_positions)
    Jw = np.empty((2, 2))
    for c, motor in enumerate((left, right)):
        step = np.zeros(tset.num_actuators)
        step[motor] = FD_STEP
        dq = (tset.actuator_to_joint('position', theta + step)
              - tset.actuator_to_joint('position', theta - step)) / (2 * FD_STEP)
        Jw[:, c] = dq[[pitch, roll]]
    want = Jw.T @ np.diag([40.0, 10.0]) @ Jw
    assert np.allclose(K[np.ix_([left, right], [left, right])], want, rtol=FD_TOL)
    assert abs(K[left, right]) > 0                      # coupled: per-motor gains cannot do it


def _flat(theta, thetad):
    """Return the bridge's flat motor state: positions, velocities, efforts (0), then 1.0."""
    return np.concatenate([theta, thetad, np.zeros(len(theta)), [1.0]])


def _take_all(core, tset, q, qd, tau):
    """Give the core targets for its joints (the others' values dropped), as the routes do."""
    joints = core.joints
    assert core.take(joints, q[joints], qd[joints], tau[joints], 0) == ''


def _random_gains(core, tset, joints, rng):
    for j in joints:
        core.set_gain(j, 'p', float(rng.uniform(5, 50)))
        core.set_gain(j, 'd', float(rng.uniform(0.1, 2)))


def _ideal(tset):
    """Return ``tset`` with every motor's friction off: ideal gear stages (the plans' case)."""
    from transmission_bridge.transmissions.parameters import apply_parameters
    off = {f'actuators.{m}.friction.{k}': 0.0 for m in tset.actuator_names
           for k in ('viscous', 'coulomb')}
    ideal = apply_parameters(tset, off)
    assert ideal.losses.lossless
    return ideal


@pytest.mark.parametrize('output', ['effort', 'motor_gains'])
def test_the_linear_plan_gives_what_the_reference_step_gives(output):
    """linear_plan (affine maps of the motors' state) against step (from the joint state)."""
    from transmission_bridge.control.impedance import ImpedanceCore
    tset = _ideal(load_transmissions(CONFIG + 'example_robot_transmissions.yaml'))
    rng = np.random.default_rng(RNG_SEED + 4)
    core = ImpedanceCore(tset, output)
    _random_gains(core, tset, ('elbow', 'wrist_pitch', 'wrist_roll'), rng)
    assert core.constant_map
    within = 0
    for trial in range(20):
        q, theta = _pose(tset, rng, 0.3)
        thetad = rng.normal(size=tset.num_actuators)
        qd = tset.actuator_to_joint('velocity', thetad)
        scale = 0.1 if trial % 2 else 3.0           # half of them far: beyond effort limits
        _take_all(core, tset, q + rng.normal(scale=scale, size=len(q)),
                  rng.normal(size=len(q)), rng.normal(size=len(q)))
        flat = _flat(theta, thetad)
        block = core.block_at(None, 0, np.stack([q, qd]))
        plan = block.plan(tset, output, core.target, core.version)
        reference = core.step(q, qd, theta, thetad, 0)
        if output == 'effort':
            over = plan.W @ flat
            if over @ over <= 1.0:      # the node's test: within every limit, taken as it is
                within += 1
                assert np.allclose(plan.A @ flat, reference.effort, rtol=1e-9, atol=1e-12)
            else:                       # the node takes the reference, which scaled it
                assert not np.allclose(plan.A @ flat, reference.effort, rtol=1e-6)
            continue
        assert np.allclose(plan.A @ flat, reference.effort, rtol=1e-9, atol=1e-12)
        for mine, theirs in zip(plan.columns, (reference.position, reference.velocity,
                                               reference.stiffness, reference.damping)):
            assert np.allclose(mine, theirs, rtol=1e-12, atol=1e-15)
    if output == 'effort':
        assert 5 <= within <= 15, within


def _linkage_case(name, output, seed):
    """Return a linkage set, its rng, a core with random gains, a state map, writer, loops."""
    from transmission_bridge.control.impedance import ImpedanceCore
    from transmission_bridge.transmissions import linkage_loops
    tset = load_transmissions(CONFIG + name)
    rng = np.random.default_rng(RNG_SEED + seed)
    core = ImpedanceCore(tset, output)
    _random_gains(core, tset, tset.joint_names, rng)
    state_map = tset.state_map()
    write = state_map.writer(np.empty((3, tset.num_joints)))
    return tset, rng, core, state_map, write, linkage_loops.kernels()


@pytest.mark.parametrize('name', LINKAGE_SETS)
def test_the_compiled_mit_kernel_gives_what_the_reference_step_gives(name):
    """linkage_loops.mit_state with the state map's J, against step (J solved anew)."""
    tset, rng, core, state_map, write, loops = _linkage_case(name, 'motor_gains', 5)
    commands = np.empty((tset.num_actuators, 5))
    for _ in range(10):
        q, theta = _pose(tset, rng)
        thetad = rng.normal(size=tset.num_actuators)
        flat = _flat(theta, thetad)
        assert write(flat)
        _take_all(core, tset, q + rng.normal(scale=0.02, size=len(q)),
                  rng.normal(size=len(q)), rng.normal(size=len(q)))
        latest = state_map.latest
        reference = core.step(latest[0], latest[1], theta, thetad, 0)
        block = core.block_at(None, 0, latest)
        goal, tau_ff = core.motor_goal(block)
        assert loops.mit_state(state_map.jacobian, block.joints, block.actuators, block.kp,
                               block.kd, goal, tau_ff, flat, tset.num_actuators, commands)
        for c, theirs in enumerate((reference.position, reference.velocity, reference.effort,
                                    reference.stiffness, reference.damping)):
            assert np.allclose(commands[:, c], theirs, rtol=1e-9, atol=1e-9), (name, c)


@pytest.mark.parametrize('name', LINEAR_SETS + LINKAGE_SETS)
def test_motion_to_actuator_maps_as_the_separate_maps_do(name):
    """θ*, θ̇* of the targets in one solve: joint_to_actuator's position and velocity maps."""
    tset = load_transmissions(CONFIG + name)
    rng = np.random.default_rng(RNG_SEED + 6)
    q, _ = _pose(tset, rng)
    v = rng.normal(size=tset.num_joints)
    theta, thetad = tset.motion_to_actuator(q, v)
    at = {} if tset.constant_map else {'positions': q}
    assert np.array_equal(theta, tset.joint_to_actuator('position', q))
    assert np.array_equal(thetad, tset.joint_to_actuator('velocity', v, **at))


@pytest.mark.parametrize('name', LINKAGE_SETS)
def test_the_compiled_effort_kernel_gives_what_the_reference_step_gives(name):
    """linkage_loops.effort_state with the state map's J and joint state, against step."""
    tset, rng, core, state_map, write, loops = _linkage_case(name, 'effort', 7)
    block = core.block_at(None, 0, np.zeros((3, tset.num_joints)))
    assert block is None                    # no targets yet: nothing to send
    tau = np.empty(len(core.joints))
    efforts = np.empty(len(core.joints))
    scaled = 0
    for trial in range(10):
        q, theta = _pose(tset, rng)
        thetad = rng.normal(size=tset.num_actuators)
        flat = _flat(theta, thetad)
        assert write(flat)
        latest = state_map.latest
        push = 150.0 if trial % 2 else 1.0     # half of them beyond the legs' effort limits
        _take_all(core, tset, q + rng.normal(scale=0.02, size=len(q)),
                  rng.normal(size=len(q)), rng.normal(scale=push, size=len(q)))
        reference = core.step(latest[0], latest[1], theta, thetad, 0)
        block = core.block_at(None, 0, latest)
        worst = loops.effort_state(state_map.jacobian, block.joints, block.actuators,
                                   block.kp, block.kd, block.block_target(core.target,
                                                                          core.version),
                                   block.damping, latest, *block.inverse_effort_limits, tau,
                                   efforts)
        _, limited, _ = block.limits.scale('effort', tau, efforts)
        assert (worst > 1.0) == (not np.array_equal(limited, efforts))
        scaled += worst > 1.0
        assert np.allclose(limited, reference.effort, rtol=1e-9, atol=1e-9), name
    limited_set = np.isfinite(np.concatenate(block.limits.magnitude_limits('effort'))).any()
    assert (scaled > 0) == limited_set, (name, scaled)


# --- through lossy gear stages (issue 57) ------------------------------------------------------

STAGE_SETS = ['example_robot_transmissions.yaml', 'closed_loop_ankle_transmissions.yaml']


def _spring_case(name, output, seed, motor_limit=None):
    """Return (lossy set, its lossless twin, (lossy core, ideal core), state map, rng)."""
    from transmission_bridge.control.impedance import ImpedanceCore
    from transmission_bridge.transmissions.parameters import apply_parameters
    from transmission_oracles import lossy_set
    rng = np.random.default_rng(RNG_SEED + seed)
    tset = lossy_set(CONFIG + name, rng)
    if motor_limit is not None:
        tset = apply_parameters(tset, {f'actuators.{m}.limits.effort': motor_limit
                                       for m in tset.actuator_names})
    twin = _ideal(load_transmissions(CONFIG + name))
    cores = [ImpedanceCore(t, output) for t in (tset, twin)]
    for j in tset.joint_names:
        p, d = float(rng.uniform(5, 50)), float(rng.uniform(0.1, 2))
        for core in cores:
            core.set_gain(j, 'p', p)
            core.set_gain(j, 'd', d)
    return tset, twin, cores, tset.state_map(), rng


def _filled(core, tset, state_map, flat):
    """Return (the node's per-message command of ``core`` at ``flat``, the joint state)."""
    state = np.empty((3, tset.num_joints))
    assert state_map.writer(state)(flat)
    block = core.block_at(None, 0, state)
    shape = (len(block.names),) if core.output == 'effort' else (len(block.names), 5)
    out = np.empty(shape)
    assert core.fill(block, flat, state, state_map.jacobian, out)
    return out, state


@pytest.mark.parametrize('name', STAGE_SETS)
def test_a_spring_s_efforts_are_what_each_motor_s_stage_needs(name):
    """effort: C(Jᵀ (τ_j + b q̇)) per motor at its velocity, J by central differences."""
    from transmission_oracles import fd_jacobian, oracle_commanded
    tset, _, (core, _), state_map, rng = _spring_case(name, 'effort', 8)
    quadrants = set()
    for trial in range(24):
        q, theta = _pose(tset, rng)
        n = tset.num_actuators
        thetad = rng.uniform(0.2, 2.0, n) * rng.choice([-1, 1], n)     # moving: exact
        flat = _flat(theta, thetad)
        J = fd_jacobian(tset, theta)
        qd = J @ thetad
        targets = [q + rng.normal(scale=0.02, size=len(q)), rng.normal(size=len(q)),
                   rng.normal(size=len(q))]
        _take_all(core, tset, *targets)
        tau_j = (core.kp * (targets[0] - q) + core.kd * (targets[1] - qd) + targets[2]
                 + tset.damping * qd)
        tau_o = J.T @ tau_j
        want = [oracle_commanded(tau_o[i], thetad[i], *_stage(tset, m))
                for i, m in enumerate(tset.actuator_names)]
        got, state = _filled(core, tset, state_map, flat)
        reference = core.step(*state[:2], theta, thetad, 0).effort
        block = core.block_at(None, 0, state)
        motors = list(block.actuators)
        assert got == pytest.approx(reference, rel=1e-9, abs=1e-12)
        assert got == pytest.approx([want[i] for i in motors], rel=FD_TOL, abs=FD_TOL)
        quadrants |= {(bool(tau_o[i] > 0), bool(thetad[i] > 0)) for i in motors}
    assert len(quadrants) == 4


MOTOR_LIMIT = 1.0       # N·m: every motor's effort limit in the scaling test


@pytest.mark.parametrize('name', STAGE_SETS)
def test_a_spring_beyond_its_motors_limits_is_scaled_before_the_stages(name):
    """
    Far targets: each motor within its limit after its loss; the ideal torques scaled as one.

    Each motor's torque, taken back through its stage's branch (the oracle's, inverted: τ_o =
    (τ_a − f) / g), is the same fraction k of the unlimited Jᵀ (τ_j + b q̇) for every motor.
    """
    from transmission_oracles import fd_jacobian, oracle_commanded
    tset, _, (core, _), state_map, rng = _spring_case(name, 'effort', 9, MOTOR_LIMIT)
    limited = 0
    for trial in range(10):
        q, theta = _pose(tset, rng)
        n = tset.num_actuators
        thetad = rng.uniform(0.2, 2.0, n) * rng.choice([-1, 1], n)
        flat = _flat(theta, thetad)
        J = fd_jacobian(tset, theta)
        qd = J @ thetad
        targets = [q + rng.normal(scale=0.02, size=len(q)), rng.normal(size=len(q)),
                   rng.normal(scale=100.0, size=len(q))]
        _take_all(core, tset, *targets)
        tau_o = J.T @ (core.kp * (targets[0] - q) + core.kd * (targets[1] - qd) + targets[2]
                       + tset.damping * qd)
        got, state = _filled(core, tset, state_map, flat)
        reference = core.step(*state[:2], theta, thetad, 0).effort
        assert got == pytest.approx(reference, rel=1e-9, abs=1e-12)
        motors = core.block_at(None, 0, state).actuators
        assert np.all(np.abs(got) <= MOTOR_LIMIT * (1 + 1e-12))
        limited += bool(np.any(np.abs(got) >= MOTOR_LIMIT * (1 - 1e-9)))
        fractions = []
        for r, i in enumerate(motors):
            stage = _stage(tset, tset.actuator_names[i])
            f = oracle_commanded(0.0, thetad[i], *stage)            # the friction alone
            g = oracle_commanded(tau_o[i], thetad[i], *stage) - f   # g τ_o
            fractions.append((got[r] - f) / g)
        assert np.ptp(fractions) < FD_TOL and 0.0 < fractions[0] <= 1.0 + FD_TOL, fractions
    assert limited > 0


def _stage(tset, motor):
    a = tset.actuator(motor)
    return a.efficiency_driving, a.efficiency_driven, a.viscous_friction, a.coulomb_friction


@pytest.mark.parametrize('name', STAGE_SETS)
def test_a_spring_s_motor_gains_give_at_the_state_what_the_stage_needs(name):
    """motor_gains: the lossy law at the state is C(the lossless law there); gains unchanged."""
    from transmission_oracles import oracle_commanded
    tset, twin, (core, ideal), state_map, rng = _spring_case(name, 'motor_gains', 10)
    twin_map = twin.state_map()
    for trial in range(10):
        q, theta = _pose(tset, rng)
        n = tset.num_actuators
        thetad = rng.uniform(0.2, 2.0, n) * rng.choice([-1, 1], n)
        flat = _flat(theta, thetad)
        targets = [q + rng.normal(scale=0.02, size=len(q)), rng.normal(size=len(q)),
                   rng.normal(size=len(q))]
        _take_all(core, tset, *targets)
        _take_all(ideal, twin, *targets)
        got, state = _filled(core, tset, state_map, flat)
        plain, _ = _filled(ideal, twin, twin_map, flat)
        reference = core.step(*state[:2], theta, thetad, 0)
        names = core.block_at(None, 0, state).names
        motors = [tset.actuator_index[m] for m in names]
        assert got[:, 2] == pytest.approx(reference.effort, rel=1e-9, abs=1e-9)
        np.testing.assert_array_equal(got[:, [0, 1, 3, 4]], plain[:, [0, 1, 3, 4]])

        def at_state(c):        # the motor's own law at the measured state
            return (c[:, 3] * (c[:, 0] - theta[motors]) + c[:, 4] * (c[:, 1] - thetad[motors])
                    + c[:, 2])
        want = [oracle_commanded(t, thetad[i], *_stage(tset, m))
                for t, i, m in zip(at_state(plain), motors, names)]
        assert at_state(got) == pytest.approx(want, rel=1e-12, abs=1e-12)


def _damped(tset, rng):
    """Return ``tset`` with a random damping on every joint (``ros2 param set``'s way)."""
    from transmission_bridge.transmissions.parameters import apply_parameters
    return apply_parameters(tset, {f'joints.{j}.damping': float(rng.uniform(0.2, 2.0))
                                   for j in tset.joint_names})


@pytest.mark.parametrize('lossy', [False, True])
@pytest.mark.parametrize('name', LINEAR_SETS + LINKAGE_SETS)
def test_the_mit_output_run_by_the_motors_gives_the_effort_outputs_torques(name, lossy):
    """
    motor_gains evaluated as each motor runs it, at the state, equals the effort output.

    Joint damping b on every joint: the commanded law adds ``b q̇`` back (NOTATION), so both
    outputs must (the MIT feed-forward lacked it: 6.6 % of a 1:10 joint's torque). Targets at
    the measured pose (the spring's position term, exact for a linkage only there) with any
    q̇* and τ*, and for linear sets anywhere; per-message forms and the reference alike.
    No effort limits (the effort output scales a command past them; MIT does not).
    """
    from transmission_bridge.control.impedance import ImpedanceCore
    from transmission_bridge.transmissions.parameters import apply_parameters
    from transmission_oracles import lossy_set
    rng = np.random.default_rng(RNG_SEED + 20)
    tset = lossy_set(CONFIG + name, rng) if lossy else _ideal(load_transmissions(CONFIG + name))
    tset = _damped(apply_parameters(tset, {
        f'{kind}.{x}.limits.effort': float('inf') for kind, names in (
            ('actuators', tset.actuator_names), ('joints', tset.joint_names)) for x in names}),
        rng)
    cores = {o: ImpedanceCore(tset, o) for o in ('effort', 'motor_gains')}
    for j in tset.joint_names:
        p, d = float(rng.uniform(5, 50)), float(rng.uniform(0.1, 2))
        for core in cores.values():
            core.set_gain(j, 'p', p)
            core.set_gain(j, 'd', d)
    state_map = tset.state_map()
    for trial in range(10):
        q, theta = _pose(tset, rng)
        n = tset.num_actuators
        thetad = rng.uniform(0.2, 2.0, n) * rng.choice([-1, 1], n)
        flat = _flat(theta, thetad)
        state = np.empty((3, tset.num_joints))
        assert state_map.writer(state)(flat)
        q_t = state[0] + (rng.normal(scale=0.05, size=len(q)) if tset.constant_map else 0.0)
        targets = [q_t, rng.normal(size=len(q)), rng.normal(size=len(q))]
        for core in cores.values():
            _take_all(core, tset, *targets)
        effort, _ = _filled(cores['effort'], tset, state_map, flat)
        mit, _ = _filled(cores['motor_gains'], tset, state_map, flat)
        reference = cores['motor_gains'].step(*state[:2], theta, thetad, 0)
        motors = [tset.actuator_index[m]
                  for m in cores['motor_gains'].block_at(None, 0, state).names]
        run = mit[:, 3] * (mit[:, 0] - theta[motors]) + mit[:, 4] * (
            mit[:, 1] - thetad[motors]) + mit[:, 2]
        run_reference = reference.stiffness * (reference.position - theta[motors]) + \
            reference.damping * (reference.velocity - thetad[motors]) + reference.effort
        assert run == pytest.approx(effort, rel=EXACT, abs=EXACT), (name, trial)
        assert run_reference == pytest.approx(effort, rel=EXACT, abs=EXACT), (name, trial)
