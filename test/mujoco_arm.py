"""
A six-joint arm simulated by MuJoCo, seen through simple, differential and coupled gears.

Test data no one here computed: MuJoCo integrates the arm's rigid-body dynamics with its
own joint armature, damping and (constraint-solved) friction loss, under a joint-space PD
controller that tracks a given trajectory. The test's motors then supply those joint
torques through the arm's transmissions with a lossy gear each (Modelica LossyGear, written
here from its definition), their rotors and friction on the motor side:

    tau_o = W tau_j            (the transmissions' ideal effort map)
    tau_in = tau_o / eta_f if tau_o * thetadot > 0 else eta_b * tau_o
    tau_a = tau_in + I_r thetaddot + b thetadot + c sign(thetadot)

Joints: shoulder_yaw (simple 1:40, ideal, MuJoCo armature/damping/friction loss on the joint:
its motor's rotor and friction seen at the joint), shoulder_pitch (simple 1:-60, lossy),
elbow_pitch / elbow_roll (differential 1:25, lossy), wrist_a / wrist_b (coupling, lossy).
"""

import numpy as np

JOINTS = ['shoulder_yaw', 'shoulder_pitch', 'elbow_pitch', 'elbow_roll', 'wrist_a', 'wrist_b']
AXES = ['0 0 1', '0 1 0', '0 1 0', '1 0 0', '0 1 0', '0 0 1']
ORIGINS = ['0 0 0.1', '0 0 0.12', '0.3 0 0', '0.05 0 0', '0.25 0 0', '0.06 0 0']
# Per link: mass kg, com m, principal inertia kg m^2 (diagonal, link axes)
TRUE_LINKS = [
    (2.0, (0.0, 0.01, 0.05), (0.012, 0.011, 0.006)),
    (3.0, (0.15, 0.0, 0.01), (0.004, 0.030, 0.031)),
    (0.6, (0.02, 0.0, 0.0), (0.0008, 0.0009, 0.0007)),
    (1.5, (0.12, 0.01, 0.0), (0.002, 0.012, 0.012)),
    (0.5, (0.03, 0.0, 0.01), (0.0006, 0.0008, 0.0007)),
    (0.4, (0.05, 0.0, 0.0), (0.0004, 0.0009, 0.0008)),
]
# The simple ideal joint's losses, joint side in MuJoCo (its motor's, seen through 1:40)
REDUCTION_YAW = 40.0
ARMATURE, DAMPING, FRICTIONLOSS = 0.05, 0.4, 0.3          # kg m^2, N m s/rad, N m
COUPLING = [[1 / 30, 0.0], [1 / 60, 1 / 30]]             # wrist joints from wrist motors
# The lossy motors (set order after the yaw motor): eta_f, eta_b, rotor, viscous, coulomb
LOSSY = {'shoulder_pitch_motor': (0.85, 0.70, 4e-5, 2e-4, 0.004),
         'elbow_left_motor': (0.90, 0.80, 1.5e-5, 1e-4, 0.002),
         'elbow_right_motor': (0.88, 0.78, 1.5e-5, 1e-4, 0.002),
         'wrist_motor_1': (0.80, 0.65, 8e-6, 5e-5, 0.001),
         'wrist_motor_2': (0.82, 0.60, 8e-6, 5e-5, 0.001)}


def urdf(links=TRUE_LINKS, name='mj_arm'):
    """Return the arm's URDF with the given link parameters."""
    parts = [f'<robot name="{name}">', '<link name="base"/>']
    parent = 'base'
    rows = zip(JOINTS, AXES, ORIGINS, links)
    for k, (joint, axis, origin, (m, c, inertia)) in enumerate(rows):
        link = f'link{k + 1}'
        parts.append(
            f'<link name="{link}"><inertial><origin xyz="{c[0]} {c[1]} {c[2]}" rpy="0 0 0"/>'
            f'<mass value="{m}"/><inertia ixx="{inertia[0]}" iyy="{inertia[1]}" '
            f'izz="{inertia[2]}" ixy="0" ixz="0" iyz="0"/></inertial></link>')
        parts.append(
            f'<joint name="{joint}" type="revolute"><parent link="{parent}"/>'
            f'<child link="{link}"/><origin xyz="{origin}" rpy="0 0 0"/><axis xyz="{axis}"/>'
            '<limit lower="-3" upper="3" velocity="4" effort="200"/></joint>')
        parent = link
    parts.append('</robot>')
    return '\n'.join(parts)


def transmissions():
    """Return the arm's transmissions as the YAML's mapping, with the model's ideal values."""
    return {'transmissions': [
        {'name': 'yaw', 'type': 'simple',
         'actuators': [{'name': 'shoulder_yaw_motor', 'mechanical_reduction': REDUCTION_YAW}],
         'joints': [{'name': 'shoulder_yaw'}]},
        {'name': 'pitch', 'type': 'simple',
         'actuators': [{'name': 'shoulder_pitch_motor', 'mechanical_reduction': -60.0}],
         'joints': [{'name': 'shoulder_pitch'}]},
        {'name': 'elbow', 'type': 'differential',
         'actuators': [{'name': 'elbow_left_motor', 'mechanical_reduction': 25.0},
                       {'name': 'elbow_right_motor', 'mechanical_reduction': 25.0}],
         'joints': [{'name': 'elbow_pitch'}, {'name': 'elbow_roll'}]},
        {'name': 'wrist', 'type': 'coupling', 'matrix': COUPLING,
         'actuators': [{'name': 'wrist_motor_1'}, {'name': 'wrist_motor_2'}],
         'joints': [{'name': 'wrist_a'}, {'name': 'wrist_b'}]},
    ]}


def simulate(trajectory, duration, dt=0.001, links=TRUE_LINKS, kp=900.0, kd=60.0):
    """
    Return ``(t, q, qd, qdd, tau)`` (N, 6): MuJoCo tracking ``trajectory``.

    ``trajectory(t)`` returns the wanted ``(q, qd, qdd)`` at times ``t``.

    A PD law on the tracking error plus MuJoCo's own bias forces (gravity, Coriolis) and
    ``M qdd*`` (its mass matrix, armature included); ``tau`` is the joint torque applied at
    each step, ``qdd`` the acceleration it gave.
    """
    import mujoco
    text = urdf(links).replace('<robot name="mj_arm">', '<robot name="mj_arm"><mujoco>'
                               '<compiler discardvisual="true" balanceinertia="false" '
                               'fusestatic="false"/></mujoco>')
    model = mujoco.MjModel.from_xml_string(text)
    model.opt.timestep = dt
    model.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    model.dof_armature[0] = ARMATURE
    model.dof_damping[0] = DAMPING
    model.dof_frictionloss[0] = FRICTIONLOSS
    data = mujoco.MjData(model)
    n = int(round(duration / dt))
    q0, _, _ = trajectory(np.zeros(1))
    data.qpos[:] = q0[0]
    mujoco.mj_forward(model, data)
    out = np.zeros((5, n, model.nv))
    M = np.zeros((model.nv, model.nv))
    for k in range(n):
        t = k * dt
        qd_, vd_, ad_ = (x[0] for x in trajectory(np.array([t])))
        mujoco.mj_fullM(model, data, M)
        tau = (M @ (ad_ + kp * (qd_ - data.qpos) + kd * (vd_ - data.qvel)) + data.qfrc_bias)
        data.qfrc_applied[:] = tau
        out[0, k], out[1, k], out[2, k] = t, data.qpos, data.qvel
        out[4, k] = tau
        mujoco.mj_step(model, data)
        out[3, k] = data.qacc
    return out[0, :, 0], out[1], out[2], out[3], out[4]


def motors(tset, q, qd, qdd, tau, lossy=LOSSY):
    """Return ``(theta, thetadot, tau_a)``: the motors behind the joint torques (module doc)."""
    theta = tset.joint_to_actuator('position', q)
    thetad = tset.joint_to_actuator('velocity', qd)
    thetadd = tset.joint_to_actuator('velocity', qdd)
    tau_o = tset.joint_to_actuator('effort', tau)
    tau_a = tau_o.copy()
    for k, name in enumerate(tset.actuator_names):
        if name not in lossy:
            continue
        eta_f, eta_b, rotor, viscous, coulomb = lossy[name]
        driving = tau_o[:, k] * thetad[:, k] > 0
        tau_in = np.where(driving, tau_o[:, k] / eta_f, eta_b * tau_o[:, k])
        tau_a[:, k] = (tau_in + rotor * thetadd[:, k] + viscous * thetad[:, k]
                       + coulomb * np.sign(thetad[:, k]))
    return theta, thetad, tau_a


def multisine(start, seed, period=8.0, harmonics=4, amplitude=0.5):
    """Return an independent trajectory: random sines about ``start``, smooth from rest."""
    rng = np.random.default_rng(seed)
    nj = len(start)
    w = 2 * np.pi / period * np.arange(1, harmonics + 1)
    amp = rng.uniform(-1, 1, (nj, harmonics)) * amplitude / np.arange(1, harmonics + 1)
    phase = rng.uniform(0, 2 * np.pi, (nj, harmonics))

    def trajectory(t):
        t = np.asarray(t, float)[:, None, None]
        ramp = np.clip(t[..., 0] / 2.0, 0, 1)                # 2 s fade-in from rest
        s = ramp ** 3 * (10 - 15 * ramp + 6 * ramp ** 2)
        ds = np.where(ramp < 1, 30 * ramp ** 2 * (1 - ramp) ** 2 / 2.0, 0.0)
        dds = np.where(ramp < 1, 60 * ramp * (1 - ramp) * (1 - 2 * ramp) / 4.0, 0.0)
        f = np.sum(amp * (np.sin(w * t + phase) - np.sin(phase)), axis=2)
        df = np.sum(amp * w * np.cos(w * t + phase), axis=2)
        ddf = np.sum(-amp * w ** 2 * np.sin(w * t + phase), axis=2)
        q = start + s * f
        qd = ds * f + s * df
        qdd = dds * f + 2 * ds * df + s * ddf
        return q, qd, qdd
    return trajectory
