"""
One commanded-effort law: every path to the motors gives the oracle's torques (NOTATION.md).

The robot: an ideal pan with a rotor and friction, a lossy simple elbow with a rotor,
friction and damping, a lossy differential wrist with rotors and damping, a lossy 2 x 2
coupling with rotors, and a lossy rod-driven ankle (a linkage, friction, no rotor). At random
states where every motor moves faster than the
stage's rest band, the oracle is written from NOTATION.md alone: ``J`` by central differences
of the position map, ``τ_o = Jᵀ (τ + b q̇)``, each motor's branch (``τ_o / η_f`` driving,
``η_b τ_o`` driven) plus its friction, plus ``I θ̈`` for a stage below efficiency 1. The paths:
the law itself, a streamed command or a goal's sample with velocities (the command's own
motion), a trajectory point, and an effort alone (the measured motion, damping included).
Then the feed-forward paths, for a random 8-link chain of these joints: ``excite``'s goal
(its YAML, as the bridge would receive it) mapped by the bridge's commands, and
``Model.motor_torques``, against the same oracle with the links' torques from Pinocchio's
``rnea`` (its own URDF parser) and the ideal pan's rotor ``J⁻ᵀ I θ̈`` added on the joint side.
(The springs' two outputs are held to the same oracle in test_impedance.py.)
"""

import numpy as np
import pytest
from transmission_bridge.mapping.commands import CommandMapper
from transmission_bridge.mapping.measurement import Measured
from transmission_bridge.transmissions import effort_law, load_transmissions
from transmission_oracles import fd_jacobian, oracle_commanded

RNG_SEED = 6201
FD_TOL = 1e-6               # relative and absolute: central differences of the position map
STATES = 12

ROBOT = {'transmissions': [
    {'name': 'pan', 'type': 'simple',       # ideal: its rotor is the joint side's, not the law's
     'actuators': [{'name': 'pan_motor', 'mechanical_reduction': 100.0,
                    'rotor_inertia': 3.0e-5, 'friction': {'viscous': 2e-4, 'coulomb': 0.01}}],
     'joints': [{'name': 'pan', 'damping': 0.1}]},
    {'name': 'elbow', 'type': 'simple',
     'actuators': [{'name': 'elbow_motor', 'mechanical_reduction': 50.0,
                    'rotor_inertia': 2.0e-5, 'efficiency': {'driving': 0.8, 'driven': 0.7},
                    'friction': {'viscous': 1.0e-3, 'coulomb': 0.02}}],
     'joints': [{'name': 'elbow', 'damping': 0.3}]},
    {'name': 'wrist', 'type': 'differential',
     'actuators': [{'name': 'wrist_l', 'mechanical_reduction': 30.0, 'rotor_inertia': 1e-5,
                    'efficiency': {'driving': 0.9, 'driven': 0.85}},
                   {'name': 'wrist_r', 'mechanical_reduction': -30.0, 'rotor_inertia': 1e-5,
                    'efficiency': {'driving': 0.92, 'driven': 0.8},
                    'friction': {'viscous': 5e-4, 'coulomb': 0.01}}],
     'joints': [{'name': 'wrist_pitch', 'damping': 0.05}, {'name': 'wrist_roll'}]},
    {'name': 'hand', 'type': 'coupling', 'matrix': [[0.02, 0.0], [0.01, 0.025]],
     'actuators': [{'name': 'hand_a', 'rotor_inertia': 3e-6,
                    'efficiency': {'driving': 0.7, 'driven': 0.6}},
                   {'name': 'hand_b', 'rotor_inertia': 4e-6,
                    'efficiency': {'driving': 0.75, 'driven': 0.65}}],
     'joints': [{'name': 'finger', 'damping': 0.01}, {'name': 'thumb'}]},
    {'name': 'ankle', 'type': 'linkage',
     'joints': [{'name': 'ankle_pitch', 'axis': [0, 1, 0], 'origin': [0, 0, 0],
                 'damping': 0.2, 'limits': {'lower': -0.6, 'upper': 0.6}},
                {'name': 'ankle_roll', 'axis': [1, 0, 0], 'origin': [0, 0, 0],
                 'limits': {'lower': -0.5, 'upper': 0.5}}],
     'actuators': [
         {'name': 'ankle_l', 'kind': 'rotary', 'axis': [0, 1, 0],
          'origin': [0.0, 0.06, 0.49], 'crank': [-0.12, 0.06, 0.49],
          'attachment': [-0.12, 0.06, 0.0], 'rod_length': 0.49,
          'efficiency': {'driving': 0.9, 'driven': 0.8},
          'friction': {'viscous': 1e-3, 'coulomb': 0.05}},
         {'name': 'ankle_r', 'kind': 'rotary', 'axis': [0, 1, 0],
          'origin': [0.0, -0.06, 0.37], 'crank': [-0.12, -0.06, 0.37],
          'attachment': [-0.12, -0.06, 0.0], 'rod_length': 0.37,
          'efficiency': {'driving': 0.85, 'driven': 0.75}}]},
]}


def _oracle(tset, J, tau, qd, thetad, theta_dd=None):
    """NOTATION.md's commanded law, motor by motor, from J = ∂q/∂θ."""
    tau_o = J.T @ (tau + tset.damping * qd)
    out = []
    for i, name in enumerate(tset.actuator_names):
        a = tset.actuator(name)
        value = oracle_commanded(tau_o[i], thetad[i], a.efficiency_driving,
                                 a.efficiency_driven, a.viscous_friction, a.coulomb_friction)
        below = a.efficiency_driving < 1.0 or a.efficiency_driven < 1.0
        if theta_dd is not None and below:
            value += a.rotor_inertia * theta_dd[i]
        out.append(value)
    return np.array(out)


def _states(tset, rng):
    """Yield (q, q̇, q̈, τ, θ̇, J, θ̈): every motor faster than 0.2 rad/s, in both directions."""
    linkage = [tset.joint_index[n] for n in ('ankle_pitch', 'ankle_roll')]
    for _ in range(STATES):
        q = rng.uniform(-0.4, 0.4, tset.num_joints)
        q[linkage] = rng.uniform(-0.25, 0.25, 2)
        J = fd_jacobian(tset, tset.joint_to_actuator('position', q))
        n = tset.num_actuators
        thetad = rng.uniform(0.2, 3.0, n) * rng.choice([-1, 1], n)
        qdd = rng.normal(size=tset.num_joints)
        qdd[linkage] = 0.0          # its motors have no rotor; J̇ left out of the oracle
        tau = rng.normal(scale=3.0, size=tset.num_joints)
        yield q, J @ thetad, qdd, tau, thetad, J, np.linalg.solve(J, qdd)


@pytest.fixture(scope='module')
def tset():
    return load_transmissions(ROBOT)


def test_the_rotors_the_law_adds_are_the_stages_below_efficiency_one(tset):
    inertia = effort_law.motor_side_inertia(tset)
    assert inertia.tolist() == [0.0, 2e-5, 1e-5, 1e-5, 3e-6, 4e-6, 0.0, 0.0]
    side = effort_law.joint_side(tset)          # what a joint-space feed-forward carries:
    assert side.rotors.inertia.tolist() == [3e-5] + [0.0] * 7     # the ideal pan's rotor,
    assert not side.losses.viscous.any() and not side.losses.coulomb.any()  # no friction
    assert effort_law.joint_side(tset) is side  # made once per set


def test_every_path_gives_the_oracle_s_motor_torques(tset):
    rng = np.random.default_rng(RNG_SEED)
    names = list(tset.joint_names)
    checked = 0
    for q, qd, qdd, tau, thetad, J, theta_dd in _states(tset, rng):
        want = _oracle(tset, J, tau, qd, thetad, theta_dd)
        scale = np.abs(want).max()
        law = effort_law.commanded_efforts(tset, tau, qd, thetad, q, qdd)
        np.testing.assert_allclose(law, want, rtol=FD_TOL, atol=FD_TOL * scale)
        # a streamed command or a goal's sample: its own motion, whatever was measured
        elsewhere = Measured(q, -qd, tset.joint_to_actuator('position', q), -thetad)
        mapper = CommandMapper(tset, limit_commands=False,
                               measured=lambda stamp_ns=None: elsewhere)
        stream = mapper.map_command(names, q, qd, tau, accelerations=qdd)
        np.testing.assert_allclose(stream.effort, want, rtol=FD_TOL, atol=FD_TOL * scale)
        _, (_, _, _, point) = mapper.map_trajectory(names, [q], [qd], [qdd], [tau])
        np.testing.assert_allclose(point[0], want, rtol=FD_TOL, atol=FD_TOL * scale)
        # an effort alone: the measured motion for every term (its damping too), no rotor
        measured = Measured(q, qd, tset.joint_to_actuator('position', q), thetad)
        mapper.measured = lambda stamp_ns=None: measured
        alone = mapper.map_command(names, [], [], tau)
        np.testing.assert_allclose(alone.effort, _oracle(tset, J, tau, qd, thetad),
                                   rtol=FD_TOL, atol=FD_TOL * scale)
        checked += 1
    assert checked == STATES


def test_the_damping_and_the_friction_move_with_the_motion(tset):
    """The oracle can tell the motions apart: the measured one is not the command's."""
    rng = np.random.default_rng(RNG_SEED + 1)
    q, qd, qdd, tau, thetad, J, theta_dd = next(_states(tset, rng))
    own = effort_law.commanded_efforts(tset, tau, qd, thetad, q, qdd)
    other = effort_law.commanded_efforts(tset, tau, -qd, -thetad, q, qdd)
    assert np.abs(own - other).min() > 1e-4


CHAIN = [('pan', 'z'), ('elbow', 'y'), ('wrist_pitch', 'y'), ('wrist_roll', 'x'),
         ('finger', 'y'), ('thumb', 'z'), ('ankle_pitch', 'y'), ('ankle_roll', 'x')]
MOVING = 0.2                # rad/s: every motor this fast at a compared point (no rest band)


def _chain_urdf(rng):
    """Return the URDF text of a serial chain of CHAIN's joints with random inertials."""
    axes = {'x': '1 0 0', 'y': '0 1 0', 'z': '0 0 1'}
    links, joints = ['<link name="base"/>'], []
    parent = 'base'
    for name, axis in CHAIN:
        rotation = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        inertia = rotation @ np.diag(rng.uniform(0.01, 0.05, 3)) @ rotation.T
        com = ' '.join(repr(float(x)) for x in rng.uniform(-0.1, 0.1, 3))
        (ixx, ixy, ixz), (_, iyy, iyz), (_, _, izz) = inertia.tolist()
        links.append(
            f'<link name="{name}_link"><inertial><origin xyz="{com}"/>'
            f'<mass value="{float(rng.uniform(0.5, 3.0))!r}"/>'
            f'<inertia ixx="{ixx!r}" ixy="{ixy!r}" '
            f'ixz="{ixz!r}" iyy="{iyy!r}" iyz="{iyz!r}" izz="{izz!r}"/></inertial></link>')
        offset = ' '.join(repr(float(x)) for x in rng.uniform(-0.2, 0.2, 3))
        joints.append(
            f'<joint name="{name}" type="revolute"><parent link="{parent}"/>'
            f'<child link="{name}_link"/><origin xyz="{offset}"/><axis xyz="{axes[axis]}"/>'
            '<limit lower="-3" upper="3" effort="1000" velocity="100"/></joint>')
        parent = f'{name}_link'
    return '<robot name="chain">' + ''.join(links + joints) + '</robot>'


def test_excite_s_goal_and_the_model_s_motor_torques_give_the_oracle_s(tset):
    pin = pytest.importorskip('pinocchio', reason="Pinocchio is the links' oracle")
    import yaml
    from transmission_bridge.identification.excitation import Excitation, Limits
    from transmission_bridge.kinematics import load_model
    from transmission_bridge.tools.excite import goal_yaml
    rng = np.random.default_rng(RNG_SEED + 2)
    text = _chain_urdf(rng)
    model = load_model(text)
    names = [name for name, _ in CHAIN]
    excitation = Excitation(names, np.zeros(len(names)), 2.0,
                            rng.normal(scale=0.3, size=(len(names), 3)),
                            rng.normal(scale=0.3, size=(len(names), 3)))
    goal = yaml.safe_load(goal_yaml(excitation, Limits(model, tset, names), names, 1, 0.5,
                                    0.1))['trajectory']
    pm = pin.buildModelFromXML(text)
    data = pm.createData()
    to_pin = [names.index(pm.names[i]) for i in range(1, pm.njoints)]
    to_set = [names.index(j) for j in tset.joint_names]
    ideal = effort_law.joint_side(tset).rotors.inertia
    mapper = CommandMapper(tset, limit_commands=False)
    compared = 0
    for point in goal['points']:
        q, qd, qdd, effort = (np.array(point[k])[to_set] for k in (
            'positions', 'velocities', 'accelerations', 'effort'))
        J = fd_jacobian(tset, tset.joint_to_actuator('position', q))
        thetad = np.linalg.solve(J, qd)
        if np.abs(thetad).min() < MOVING:
            continue
        theta_dd = np.linalg.solve(J, qdd)      # no J̇ θ̇: the linkage's motors have no rotor
        links = pin.rnea(pm, data, *(np.array(point[k])[to_pin] for k in (
            'positions', 'velocities', 'accelerations')))
        joint_side = np.empty(len(names))
        joint_side[to_pin] = links
        tau = joint_side[to_set] + np.linalg.solve(J.T, ideal * theta_dd)
        want = _oracle(tset, J, tau, qd, thetad, theta_dd)
        scale = np.abs(want).max()
        np.testing.assert_allclose(effort, tau, rtol=FD_TOL, atol=FD_TOL * np.abs(tau).max())
        _, (_, _, _, mapped) = mapper.map_trajectory(list(tset.joint_names), [q], [qd], [qdd],
                                                     [effort])
        np.testing.assert_allclose(mapped[0], want, rtol=FD_TOL, atol=FD_TOL * scale)
        model_q = np.array(point['positions'])[[names.index(j) for j in model.joint_names]]
        model_v = np.array(point['velocities'])[[names.index(j) for j in model.joint_names]]
        model_a = np.array(point['accelerations'])[[names.index(j) for j in model.joint_names]]
        np.testing.assert_allclose(model.motor_torques(model_q, model_v, model_a, tset), want,
                                   rtol=FD_TOL, atol=FD_TOL * scale)
        compared += 1
    assert compared >= len(goal['points']) // 2, (compared, len(goal['points']))
