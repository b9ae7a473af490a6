"""
Three robots of different structure simulated by MuJoCo, for identification from any start.

Test data no one here computed: MuJoCo integrates each robot's rigid-body dynamics (its URDF
importer, its RK4) under a joint-space computed-torque law tracking a multi-sine. The
motors behind the joints are mujoco_arm.motors (the Modelica LossyGear written there from
its definition, rotor and friction on the motor side). A driver's measurements: encoders of
ENCODER_COUNTS per motor turn, velocity noise, the torque from a current sensor with noise
and a resolution.

- ``arm5``: a vertical yaw first (its link's inertia about the axis and its rotor seen only
  together), shoulder and elbow (gears 50, -80, 30), a pitch/roll bevel differential (±20).
- ``lift``: a ball-screw lift (prismatic, 5 mm lead), a shoulder and an elbow driven by a
  coupling (the elbow's motor turns the forearm against the base, as a parallelogram does).
- ``arm6``: test/mujoco_arm.py's arm (simple, differential and coupling gears), its links
  drawn afresh.

Every link: 0.5-4 kg, a full inertia tensor (principal moments in a random frame).
"""

import mujoco_arm
import numpy as np

ENCODER_COUNTS = 2 ** 16        # per motor turn
VELOCITY_NOISE = 2e-3           # rad/s at the motor (m/s for none: every motor is rotary)
TORQUE_NOISE = 0.005            # of each motor's RMS torque
TORQUE_STEP = 1e-5              # N m: the current sensor's resolution, as torque
LEAD = 0.005                    # m per turn of the lift's screw

ROBOTS = {
    'arm5': {
        'joints': [('yaw', 'revolute', '0 0 1', '0 0 0.15', 0.15),
                   ('shoulder', 'revolute', '0 1 0', '0 0 0.1', 0.35),
                   ('elbow', 'revolute', '0 1 0', '0.35 0 0', 0.3),
                   ('wrist_pitch', 'revolute', '0 1 0', '0.3 0 0', 0.05),
                   ('wrist_roll', 'revolute', '1 0 0', '0.04 0 0', 0.06)],
        'transmissions': [
            ('yaw', 'simple', [('yaw_motor', 50.0)], ['yaw'], None),
            ('shoulder', 'simple', [('shoulder_motor', -80.0)], ['shoulder'], None),
            ('elbow', 'simple', [('elbow_motor', 30.0)], ['elbow'], None),
            ('wrist', 'differential', [('wrist_left_motor', 20.0), ('wrist_right_motor', -20.0)],
             ['wrist_pitch', 'wrist_roll'], None)],
        'lossy': {'yaw_motor': (0.88, 0.80, 6e-5, 3e-4, 0.006),
                  'shoulder_motor': (0.85, 0.78, 8e-5, 4e-4, 0.008),
                  'elbow_motor': (0.92, 0.86, 3e-5, 2e-4, 0.004),
                  'wrist_left_motor': (0.90, 0.82, 1e-5, 1e-4, 0.002),
                  'wrist_right_motor': (0.89, 0.84, 1e-5, 1e-4, 0.002)},
        'start': [0.0, 0.4, 0.6, 0.0, 0.0],
        'amplitude': [0.8, 0.8, 0.8, 0.8, 0.8],
    },
    'lift': {
        'joints': [('lift', 'prismatic', '0 0 1', '0 0 0.3', 0.1),
                   ('shoulder', 'revolute', '0 1 0', '0 0 0.1', 0.4),
                   ('elbow', 'revolute', '0 1 0', '0.4 0 0', 0.3)],
        'transmissions': [
            ('lift', 'simple', [('lift_motor', 2 * np.pi / LEAD)], ['lift'], None),
            ('arm', 'coupling', [('shoulder_motor', None), ('elbow_motor', None)],
             ['shoulder', 'elbow'], [[1 / 60, 0.0], [-1 / 60, 1 / 40]])],
        'lossy': {'lift_motor': (0.90, 0.75, 2e-5, 1e-4, 0.01),
                  'shoulder_motor': (0.86, 0.80, 5e-5, 3e-4, 0.006),
                  'elbow_motor': (0.91, 0.83, 3e-5, 2e-4, 0.004)},
        'start': [0.0, 0.3, 0.8],
        'amplitude': [0.06, 0.8, 0.8],
    },
    'arm6': {
        'joints': [(j, 'revolute', a, o, length) for j, a, o, length in zip(
            mujoco_arm.JOINTS, mujoco_arm.AXES, mujoco_arm.ORIGINS,
            (0.12, 0.3, 0.05, 0.25, 0.06, 0.08))],
        'transmissions': [
            ('yaw', 'simple', [('shoulder_yaw_motor', 40.0)], ['shoulder_yaw'], None),
            ('pitch', 'simple', [('shoulder_pitch_motor', -60.0)], ['shoulder_pitch'], None),
            ('elbow', 'differential', [('elbow_left_motor', 25.0), ('elbow_right_motor', 25.0)],
             ['elbow_pitch', 'elbow_roll'], None),
            ('wrist', 'coupling', [('wrist_motor_1', None), ('wrist_motor_2', None)],
             ['wrist_a', 'wrist_b'], mujoco_arm.COUPLING)],
        'lossy': {'shoulder_yaw_motor': (0.87, 0.79, 5e-5, 2e-4, 0.005),
                  **mujoco_arm.LOSSY},
        'start': [0.0, 0.3, 0.4, 0.0, 0.0, 0.0],
        'amplitude': [0.8, 0.8, 0.8, 0.8, 0.8, 0.8],
    },
}


def true_links(robot, rng):
    """Return ``(mass, com, 3x3 inertia at the com)`` per link: 0.5-4 kg, rotated tensors."""
    out = []
    for k, (_, _, axis, _, length) in enumerate(ROBOTS[robot]['joints']):
        m = rng.uniform(1.0, 4.0) if length >= 0.1 else rng.uniform(0.5, 1.5)
        c = np.array([length / 2 if k else 0.0, 0.0, 0.0]) + rng.uniform(-0.02, 0.02, 3)
        principal = m * (0.01 + np.array([0.0, 1.0, 1.0]) * length ** 2 / 12
                         + rng.uniform(0.0, 0.005, 3))
        q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        out.append((m, c, q @ np.diag(principal) @ q.T))
    return out


def cad(links, rng, low=0.2, high=0.3):
    """Return a CAD of ``links``: mass, centre of mass and principal moments each 20-30 % off."""
    def off():
        return rng.choice([-1.0, 1.0]) * rng.uniform(low, high)
    out = []
    for m, c, inertia in links:
        principal, axes = np.linalg.eigh(inertia)
        principal = principal * (1.0 + np.array([off(), off(), off()]))
        out.append((m * (1.0 + off()), c * (1.0 + off()) + rng.uniform(-0.01, 0.01, 3),
                    axes @ np.diag(principal) @ axes.T))
    return out


def urdf(robot, links):
    """Return the robot's URDF with ``links``' inertial values."""
    parts = [f'<robot name="{robot}">', '<link name="base"/>']
    parent = 'base'
    for k, ((joint, kind, axis, origin, _), (m, c, i)) in enumerate(
            zip(ROBOTS[robot]['joints'], links)):
        link = f'link{k + 1}'
        c, i, m = [repr(float(x)) for x in c], np.vectorize(lambda x: repr(float(x)))(i), \
            repr(float(m))
        parts.append(
            f'<link name="{link}"><inertial><origin xyz="{c[0]} {c[1]} {c[2]}"/>'
            f'<mass value="{m}"/><inertia ixx="{i[0, 0]}" iyy="{i[1, 1]}" '
            f'izz="{i[2, 2]}" ixy="{i[0, 1]}" ixz="{i[0, 2]}" iyz="{i[1, 2]}"/>'
            '</inertial></link>')
        limit = ('-0.5 0.5' if kind == 'prismatic' else '-3 3').split()
        parts.append(
            f'<joint name="{joint}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{link}"/><origin xyz="{origin}"/><axis xyz="{axis}"/>'
            f'<limit lower="{limit[0]}" upper="{limit[1]}" velocity="4" effort="500"/>'
            '</joint>')
        parent = link
    parts.append('</robot>')
    return '\n'.join(parts)


def transmissions(robot, lossy=None):
    """Return the transmissions YAML's mapping; with ``lossy`` its motors' values filled."""
    out = []
    for name, kind, motors, joints, matrix in ROBOTS[robot]['transmissions']:
        actuators = []
        for motor, reduction in motors:
            entry = {'name': motor}
            if reduction is not None:
                entry['mechanical_reduction'] = float(reduction)
            if lossy:
                eta_f, eta_b, rotor, viscous, coulomb = lossy[motor]
                entry.update({'rotor_inertia': rotor,
                              'friction': {'viscous': viscous, 'coulomb': coulomb},
                              'efficiency': {'driving': eta_f, 'driven': eta_b}})
            actuators.append(entry)
        item = {'name': name, 'type': kind, 'actuators': actuators,
                'joints': [{'name': j} for j in joints]}
        if matrix is not None:
            item['matrix'] = [list(map(float, row)) for row in matrix]
        out.append(item)
    return {'transmissions': out}


def simulate(robot, links, seed, duration, dt=0.001, kp=900.0, kd=60.0):
    """Return ``(t, q, qd, qdd, tau)``: MuJoCo tracking a multi-sine of ``seed``."""
    import mujoco
    spec = ROBOTS[robot]
    text = urdf(robot, links).replace(
        f'<robot name="{robot}">', f'<robot name="{robot}"><mujoco><compiler '
        'discardvisual="true" balanceinertia="false" fusestatic="false"/></mujoco>')
    model = mujoco.MjModel.from_xml_string(text)
    model.opt.timestep = dt
    model.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    data = mujoco.MjData(model)
    trajectory = mujoco_arm.multisine(np.array(spec['start']), seed,
                                      amplitude=np.array(spec['amplitude'])[:, None])
    n = int(round(duration / dt))
    data.qpos[:] = trajectory(np.zeros(1))[0][0]
    mujoco.mj_forward(model, data)
    out = np.zeros((5, n, model.nv))
    M = np.zeros((model.nv, model.nv))
    for k in range(n):
        want_q, want_v, want_a = (x[0] for x in trajectory(np.array([k * dt])))
        mujoco.mj_fullM(model, data, M)
        tau = M @ (want_a + kp * (want_q - data.qpos) + kd * (want_v - data.qvel)) \
            + data.qfrc_bias
        data.qfrc_applied[:] = tau
        out[0, k], out[1, k], out[2, k], out[4, k] = k * dt, data.qpos, data.qvel, tau
        mujoco.mj_step(model, data)
        out[3, k] = data.qacc
    return out[0, :, 0], out[1], out[2], out[3], out[4]


def driver(tset, run, lossy, seed, every=2):
    """
    Return ``(t, theta, thetadot, tau_a)`` as a driver reports them, and the true torques.

    At ``1 / (every dt)`` Hz: encoder counts, noisy velocities, noisy quantised torques.
    """
    t, q, qd, qdd, tau = run
    theta, thetad, tau_a = mujoco_arm.motors(tset, q, qd, qdd, tau, lossy=lossy)
    rng = np.random.default_rng(seed)
    pick = slice(None, None, every)
    count = 2 * np.pi / ENCODER_COUNTS
    rms = np.sqrt(np.mean(tau_a ** 2, axis=0))
    measured = tau_a[pick] + rng.normal(size=tau_a[pick].shape) * TORQUE_NOISE * rms
    return (t[pick], np.round(theta[pick] / count) * count,
            thetad[pick] + rng.normal(0.0, VELOCITY_NOISE, thetad[pick].shape),
            np.round(measured / TORQUE_STEP) * TORQUE_STEP), tau_a
