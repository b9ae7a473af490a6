"""
The motors seen from the joints: reflected rotor inertia and friction through transmissions.

* Drake (``JointActuator`` rotor inertia and gear ratio) on simple transmissions: the same
  mass matrix and inverse dynamics as ours with the same reduction.
* No oracle knows a differential, a coupling or a linkage: energy does. Along a trajectory
  integrated from our forward dynamics, the motors' work minus the friction's losses equals
  the change of the links' and rotors' kinetic plus potential energy.
* Friction by hand, and the keys of the YAML, the URDF and the parameters.
"""

import pathlib

import numpy as np
import pytest
from transmission_bridge.kinematics import load_model, ModelError
from transmission_bridge.transmissions import ConfigError, load_transmissions
from transmission_bridge.transmissions.parameters import apply_parameters, parameter_values
from transmission_bridge.transmissions.urdf import transmissions_from_urdf

CONFIG = pathlib.Path(__file__).resolve().parent.parent / 'config'
ROBOT = CONFIG / 'example_robot.urdf'
# Energy balance along an RK4 trajectory (step 1e-3 s, 0.3 s): the integrator's error.
INTEGRATOR_RTOL = 1e-8


def _simple_set(reductions, inertias, viscous=None, coulomb=None):
    items = []
    for k, (joint, reduction) in enumerate(reductions.items()):
        actuator = {'name': f'{joint}_motor', 'mechanical_reduction': reduction,
                    'rotor_inertia': inertias[k]}
        if viscous is not None:
            actuator['friction'] = {'viscous': viscous[k], 'coulomb': coulomb[k]}
        items.append({'name': f'{joint}_trans', 'type': 'simple', 'actuators': [actuator],
                      'joints': [{'name': joint}]})
    return load_transmissions({'transmissions': items})


def test_simple_transmissions_match_drakes_reflected_inertia():
    drake = pytest.importorskip('pydrake', reason='Drake is not installed (pip install drake)')
    del drake
    from pydrake.multibody.parsing import Parser
    from pydrake.multibody.plant import MultibodyPlant
    from pydrake.multibody.tree import MultibodyForces
    gears = {'shoulder_pan': 100.0, 'shoulder_lift': -120.0, 'elbow': 80.0}
    rotors = [2e-4, 1.5e-4, 5e-5]
    plant = MultibodyPlant(0.0)
    Parser(plant).AddModelsFromString(ROBOT.read_text(), 'urdf')
    for (joint, gear), rotor in zip(gears.items(), rotors):
        actuator = plant.AddJointActuator(f'{joint}_motor', plant.GetJointByName(joint))
        actuator.set_default_rotor_inertia(rotor)
        actuator.set_default_gear_ratio(gear)
    plant.Finalize()
    context = plant.CreateDefaultContext()
    model = load_model(ROBOT)
    tset = _simple_set(gears, rotors)
    columns = [plant.GetJointByName(n).velocity_start() for n in model.joint_names]
    rng = np.random.default_rng(46)
    for q, v, a in rng.uniform(-1.0, 1.0, (4, 3, model.num_positions)):
        qd, vd, ad = (np.zeros(plant.num_velocities()) for _ in range(3))
        qd[columns], vd[columns], ad[columns] = q, v, a
        plant.SetPositions(context, qd)
        plant.SetVelocities(context, vd)
        M = plant.CalcMassMatrix(context)[np.ix_(columns, columns)]
        # Drake's inverse dynamics without forces, minus its gravity generalized force.
        tau = (plant.CalcInverseDynamics(context, ad, MultibodyForces(plant))
               - plant.CalcGravityGeneralizedForces(context))[columns]
        np.testing.assert_allclose(model.mass_matrix(q, tset), M, rtol=0, atol=1e-12)
        np.testing.assert_allclose(model.inverse_dynamics(q, v, a, tset), tau, rtol=0,
                                   atol=1e-11)
        # And the rotors matter: 100² x 2e-4 = 2 kg·m² on the pan joint's diagonal.
        assert M[0, 0] - model.mass_matrix(q)[0, 0] == pytest.approx(2.0, rel=1e-12)


def _wrist_model():
    """Three revolute stages (roll, pitch, yaw) for the three-motor wrist's coupling."""
    def body(name, parent, axis, z):
        return {'name': f'{name}_link', 'parent': parent,
                'joint': {'name': name, 'type': 'revolute', 'axis': axis,
                          'origin': {'xyz': [0.0, 0.0, z]}},
                'inertial': {'mass': 1.2, 'com': [0.03, 0.01, 0.05],
                             'inertia': {'ixx': 0.004, 'iyy': 0.005, 'izz': 0.003}}}
    return load_model({'bodies': [body('wrist_roll', 'world', [0, 0, 1], 0.0),
                                  body('wrist_pitch', 'wrist_roll_link', [0, 1, 0], 0.1),
                                  body('wrist_yaw', 'wrist_pitch_link', [1, 0, 0], 0.1)]})


def _with_motors(tset, rng):
    """
    Return ``tset`` with a rotor inertia and viscous friction on every actuator.

    No Coulomb friction: its switch of sign at zero speed is not smooth, which an RK4 step
    does not integrate to the balance's accuracy (test_friction_and_rotor... checks it).
    """
    changes = {}
    for name in tset.actuator_names:
        changes[f'actuators.{name}.rotor_inertia'] = rng.uniform(1e-5, 1e-3)
        changes[f'actuators.{name}.friction.viscous'] = rng.uniform(1e-4, 1e-2)
        changes[f'actuators.{name}.friction.coulomb'] = 0.0
    return apply_parameters(tset, changes)


def _energy_balance(model, tset, q, v, motor_torques, dt=1e-3, steps=300):
    """
    Integrate the forward dynamics under ``motor_torques(t)`` with RK4; return the balance.

    The state carries the motors' work ``int tau_a . x-dot_a dt`` and the friction's losses
    ``int b x-dot_a² dt`` next to q and v. Returns ``(work - losses, change of kinetic +
    potential energy, the largest energy along the way)``.
    """
    index = {n: k for k, n in enumerate(model.joint_names)}
    cols = np.array([index[n] for n in tset.joint_names])
    rotors = tset.rotors

    def derivative(t, state):
        q, v = state[:model.num_positions], state[model.num_positions:2 * model.num_positions]
        T = rotors.motor_jacobian(q[cols])
        tau_a = motor_torques(t)
        tau = np.zeros(model.num_positions)
        tau[cols] = T.T @ tau_a                  # the motors' torques at the joints
        xdot = T @ v[cols]
        power = tau_a @ xdot
        loss = tset.losses.viscous @ (xdot * xdot)
        return np.concatenate([v, model.forward_dynamics(q, v, tau, tset), [power, loss]])

    def energy(state):
        q, v = state[:model.num_positions], state[model.num_positions:2 * model.num_positions]
        return model.kinetic_energy(q, v, tset) + model.potential_energy(q)

    state = np.concatenate([q, v, [0.0, 0.0]])
    start, largest = energy(state), abs(energy(state))
    for k in range(steps):
        t = k * dt
        k1 = derivative(t, state)
        k2 = derivative(t + dt / 2, state + dt / 2 * k1)
        k3 = derivative(t + dt / 2, state + dt / 2 * k2)
        k4 = derivative(t + dt, state + dt * k3)
        state = state + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        largest = max(largest, abs(energy(state)))
    return state[-2] - state[-1], energy(state) - start, largest


def _check_balance(model, tset, q, seed):
    rng = np.random.default_rng(seed)
    tset = _with_motors(tset, rng)
    v = rng.uniform(-0.5, 0.5, model.num_positions)
    amplitude = rng.uniform(-0.05, 0.05, tset.num_actuators)
    omega = rng.uniform(5.0, 15.0, tset.num_actuators)
    supplied, change, scale = _energy_balance(
        model, tset, q, v, lambda t: amplitude * np.sin(omega * t))
    assert abs(supplied) > 1e-4 and abs(change) > 1e-4      # something happened
    assert supplied == pytest.approx(change, rel=0, abs=INTEGRATOR_RTOL * scale)


def test_energy_balance_through_simple_differential_and_four_bar_transmissions():
    model = load_model(ROBOT)
    _check_balance(model, load_transmissions(ROBOT), model.default_positions + 0.2, 1)


def test_energy_balance_through_a_three_motor_coupling():
    model = _wrist_model()
    tset = load_transmissions(CONFIG / 'three_motor_wrist_transmissions.yaml')
    _check_balance(model, tset, np.array([0.1, 0.3, -0.2]), 2)


def test_energy_balance_through_knee_four_bars_and_parallel_ankles():
    # The linkages' T changes with the configuration: its rate (T-dot v) must be in the
    # rotors' forces, or the balance misses by their kinetic energy's change.
    model = load_model(CONFIG / 'legged_robot.urdf')
    tset = load_transmissions(CONFIG / 'legged_robot.urdf')
    q = np.array([0.0, 0.05, -0.3, 0.6, 0.1, -0.05] * 2)
    _check_balance(model, tset, q, 3)


def test_friction_and_rotor_of_one_geared_joint_by_hand():
    # A 100:1 joint: the rotor's 1e-4 kg·m² is 1 kg·m² at the joint; at 2 rad/s the motor
    # turns 200 rad/s, so viscous 0.01 N·m·s/rad costs 2 N·m at the motor, 200 N·m at the
    # joint, and Coulomb 0.05 N·m costs 5 N·m at the joint; a = 3 rad/s² takes 3 N·m.
    model = load_model(ROBOT)
    tset = _simple_set({'shoulder_pan': 100.0}, [1e-4], viscous=[0.01], coulomb=[0.05])
    q = model.default_positions
    v, a = np.zeros(model.num_positions), np.zeros(model.num_positions)
    v[0], a[0] = 2.0, 3.0
    added = model.inverse_dynamics(q, v, a, tset) - model.inverse_dynamics(q, v, a)
    assert added[0] == pytest.approx(3.0 + 200.0 + 5.0, rel=1e-13)
    assert not added[1:].any()
    v[0] = -2.0
    added = model.inverse_dynamics(q, v, a, tset) - model.inverse_dynamics(q, v, a)
    assert added[0] == pytest.approx(3.0 - 200.0 - 5.0, rel=1e-13)
    friction = tset.rotors.friction_forces(q[:1], v[:1])
    assert friction[0] == pytest.approx(205.0, rel=1e-13)       # it opposes the motion
    # The motors' torque: the joint's total mapped back, the rotor's own share included.
    tau = model.inverse_dynamics(q, v, a, tset)
    motor = tset.joint_to_actuator('effort', tau[:1], q[:1])
    links = model.inverse_dynamics(q, v, a)[0]
    assert motor[0] == pytest.approx(links / 100.0 + 1e-4 * 300.0 - 2.0 - 0.05, rel=1e-12)


def test_rotor_inertia_and_friction_from_yaml_urdf_and_parameters():
    tset = _simple_set({'elbow': 80.0}, [3e-5], viscous=[0.002], coulomb=[0.01])
    spec = tset.actuator('elbow_motor')
    assert (spec.rotor_inertia, spec.viscous_friction, spec.coulomb_friction) == \
        (3e-5, 0.002, 0.01)
    # The example URDF's motors, written by examples/make_example_urdf.py from the YAML.
    yaml_motors = load_transmissions(CONFIG / 'example_robot_transmissions.yaml')
    urdf_motors = transmissions_from_urdf(ROBOT.read_text())
    for name in yaml_motors.actuator_names:
        a, b = yaml_motors.actuator(name), urdf_motors.actuator(name)
        assert (a.rotor_inertia, a.viscous_friction, a.coulomb_friction) == \
            (b.rotor_inertia, b.viscous_friction, b.coulomb_friction)
    assert urdf_motors.actuator('shoulder_pan_motor').coulomb_friction == 0.005
    values = parameter_values(tset)
    assert values['actuators.elbow_motor.rotor_inertia'] == 3e-5
    assert values['actuators.elbow_motor.friction.coulomb'] == 0.01
    changed = apply_parameters(tset, {'actuators.elbow_motor.friction.viscous': 0.5})
    assert changed.actuator('elbow_motor').viscous_friction == 0.5
    with pytest.raises(ConfigError, match='rotor_inertia must be >= 0, got -1.0'):
        apply_parameters(tset, {'actuators.elbow_motor.rotor_inertia': -1.0})


@pytest.mark.parametrize('actuator, message', [
    ({'rotor_inertia': -1e-4}, r"actuators\[0\]\.rotor_inertia \(actuator 'm'\) must be >= 0"),
    ({'rotor_inertia': float('nan')}, r"rotor_inertia \(actuator 'm'\) must be finite"),
    ({'friction': {'viscous': -0.1}}, r"friction\.viscous \(actuator 'm'\) must be >= 0"),
    ({'friction': {'dry': 0.1}}, r"actuators\[0\]\.friction: unknown key 'dry'"),
    ({'friction': 0.1}, r'actuators\[0\]\.friction must be a mapping'),
])
def test_bad_motor_dynamics_are_refused_naming_the_key(actuator, message):
    item = {'name': 't', 'type': 'simple', 'actuators': [{'name': 'm', **actuator}],
            'joints': [{'name': 'q'}]}
    with pytest.raises(ConfigError, match=message):
        load_transmissions({'transmissions': [item]})


def test_a_transmission_joint_missing_from_the_model_is_named():
    model = _wrist_model()
    tset = load_transmissions(CONFIG / 'three_motor_wrist_transmissions.yaml')
    model.mass_matrix(np.zeros(3), tset)
    other = _simple_set({'elbow': 80.0}, [1e-5])
    with pytest.raises(ModelError, match="transmission joint 'elbow' is not an independent "
                                         'joint of model'):
        model.inverse_dynamics(np.zeros(3), np.zeros(3), np.zeros(3), other)


def test_the_dynamics_page_figure_is_what_its_script_draws(tmp_path):
    # doc/dynamics.md shows it: the same bytes from the committed script and configs.
    import subprocess
    import sys
    root = CONFIG.parent
    out = tmp_path / 'rotor_torque.svg'
    proc = subprocess.run([sys.executable, str(root / 'examples' / 'rotor_torque_figure.py'),
                           str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == (root / 'doc' / 'figures' / 'rotor_torque.svg').read_bytes()


def test_the_impedance_page_figure_is_what_its_script_draws(tmp_path):
    # doc/impedance.md shows it: the same bytes from the committed script and config.
    import subprocess
    import sys
    root = CONFIG.parent
    out = tmp_path / 'ankle_stiffness.svg'
    proc = subprocess.run([sys.executable, str(root / 'examples' / 'ankle_stiffness_figure.py'),
                           str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == (root / 'doc' / 'figures' / 'ankle_stiffness.svg').read_bytes()


@pytest.mark.parametrize('robot', ['example_robot.urdf', 'legged_robot.urdf'])
def test_with_the_motors_the_mass_matrix_stays_spd_and_the_dynamics_invert(robot):
    model = load_model(CONFIG / robot)
    rng = np.random.default_rng(7)
    tset = _with_motors(load_transmissions(CONFIG / robot), rng)
    q = model.default_positions + rng.uniform(-0.1, 0.1, model.num_positions)
    v, tau = rng.normal(size=(2, model.num_positions))
    M = model.mass_matrix(q, tset)
    np.testing.assert_allclose(M, M.T, rtol=0, atol=1e-15 * np.abs(M).max())
    assert np.linalg.eigvalsh(M).min() > 0
    assert (np.diagonal(M) > np.diagonal(model.mass_matrix(q))).any()
    a = model.forward_dynamics(q, v, tau, tset)
    np.testing.assert_allclose(model.inverse_dynamics(q, v, a, tset), tau, rtol=0,
                               atol=1e-10 * max(1.0, np.abs(tau).max()))


def test_the_kinematics_node_takes_the_motors_a_urdf_gives_and_only_those():
    import re
    from transmission_bridge.kinematics_node.dynamics import motor_transmissions
    with_rotor = ROBOT.read_text()
    model = load_model(with_rotor)
    warnings = []
    found = motor_transmissions(model, with_rotor, '', warnings.append)
    assert found.actuator('shoulder_pan_motor').rotor_inertia == 5e-5 and not warnings
    # A URDF that says nothing of its motors' rotors and friction: nothing to add.
    text = re.sub(r'\s*<(rotor_inertia|viscous_friction|coulomb_friction)>[^<]*</\1>', '',
                  with_rotor)
    assert 'rotor_inertia' not in text
    assert motor_transmissions(model, text, '', warnings.append) is False
    # A model without those joints keeps going without them, and says why.
    other = _wrist_model()
    assert motor_transmissions(other, with_rotor, '', warnings.append) is False
    assert "transmission joint 'shoulder_pan' is not an independent joint" in warnings[0]
    # A transmissions_file that does not fit is a start-up error naming the parameter.
    with pytest.raises(ModelError, match=r"transmissions_file '.*example_robot_transmissions"
                                         r".yaml': transmission joint 'shoulder_pan'"):
        motor_transmissions(other, with_rotor, str(CONFIG / 'example_robot_transmissions.yaml'),
                            warnings.append)


def test_the_example_urdf_is_what_its_script_writes(tmp_path):
    # config/example_robot.urdf and the two YAML examples describe one robot.
    import subprocess
    import sys
    out = tmp_path / 'example_robot.urdf'
    script = CONFIG.parent / 'examples' / 'make_example_urdf.py'
    proc = subprocess.run([sys.executable, str(script), str(out)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert out.read_text() == ROBOT.read_text()
