"""
``make demo``'s MuJoCo parts: the robots behind their motors, the bridge in between.

* :func:`stand_crouch_stand`: the legged robot of ``config/legged_robot.xml`` (its knees and
  ankles closed chains that MuJoCo solves) stands on MuJoCo's ground with a floating base,
  crouches and stands again, held by joint impedance through the bridge's linkage maps to
  MIT-mode drives; prints the base height of each phase and how far the bridge's
  ``joint_states`` were from MuJoCo's own joint state over every state.
* :func:`hold_arm`: the example arm (``config/example_robot.urdf``, compiled by MuJoCo) held
  still by the kinematics node's holding torques, mapped by the bridge through its lossy
  motors to torque-controlled drives; prints the drift.

Every node runs on the simulator's ``/clock``.
"""

import signal
import subprocess
import sys
import time

import numpy as np

STAND = {'hip_pitch': -0.3, 'knee': 0.6, 'ankle_pitch': -0.3}
CROUCH = {'hip_pitch': -0.5, 'knee': 1.0, 'ankle_pitch': -0.5}
STIFFNESS, DAMPING = 400.0, 4.0         # N*m/rad and N*m*s/rad at every joint
# (name, from, to, seconds of sim time): a cosine ramp from one pose to the next, then held.
PHASES = [('stand', STAND, STAND, 1.5), ('crouch', STAND, CROUCH, 3.0),
          ('stand again', CROUCH, STAND, 3.0)]
RAMP = 1.5                              # s of each phase's ramp
TARGET_PERIOD = 0.02                    # s of sim time between two joint targets


def _start(modules):
    return [subprocess.Popen([sys.executable, '-m', m, '--ros-args', *extra])
            for m, extra in modules]


def _stop(procs):
    for p in procs:
        p.send_signal(signal.SIGINT)
    for p in procs:
        try:
            p.wait(15)
        except subprocess.TimeoutExpired:
            p.kill()


def _stamp(msg):
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


def _pose(tset, pose):
    return np.array([next((v for k, v in pose.items() if j.endswith(k)), 0.0)
                     for j in tset.joint_names])


def agreement(bridge, truth, joints):
    """Return (states compared, max |Δq|, max |Δv|) of the bridge against MuJoCo, by stamp."""
    by_stamp = {_stamp(m): m for m in truth}
    dq = dv = 0.0
    count = 0
    for msg in bridge:
        other = by_stamp.get(_stamp(msg))
        if other is None:
            continue
        count += 1
        mine = dict(zip(msg.name, zip(msg.position, msg.velocity)))
        theirs = dict(zip(other.name, zip(other.position, other.velocity)))
        for j in joints:
            dq = max(dq, abs(mine[j][0] - theirs[j][0]))
            dv = max(dv, abs(mine[j][1] - theirs[j][1]))
    return count, dq, dv


def stand_crouch_stand(urdf, mjcf):
    """Run the legged robot's demo on MuJoCo's ground; return whether it stood."""
    import rclpy
    from geometry_msgs.msg import PoseStamped
    from sensor_msgs.msg import JointState
    from ..transmissions import load_transmissions
    tset = load_transmissions(urdf)
    gains = [x for j in tset.joint_names for x in (
        '-p', f'gains.{j}.p:={STIFFNESS}', '-p', f'gains.{j}.d:={DAMPING}')]
    procs = _start([
        ('transmission_bridge.bridge.node', ['-p', f'transmissions_file:={urdf}',
                                             '-p', 'impedance_output:=motor_gains',
                                             '-p', 'command_timeout:=0.0',
                                             '-p', 'use_sim_time:=true', *gains]),
        ('transmission_bridge.tools.actuator_simulator', [
            '-p', 'engine:=mujoco', '-p', f'transmissions_file:={urdf}',
            '-p', f'model_file:={mjcf}', '-p', 'floating_base:=true',
            '-p', 'dynamics:=motor_gains'])])
    rclpy.init(args=[])
    node = rclpy.create_node('demo_ground')
    bridge, truth, base = [], [], []
    node.create_subscription(JointState, 'joint_states', bridge.append, 1000)
    node.create_subscription(JointState, 'actuator_simulator/joint_states', truth.append, 1000)
    node.create_subscription(PoseStamped, 'actuator_simulator/base_pose', base.append, 1000)
    pub = node.create_publisher(JointState, 'joint_commands', 10)
    names = list(tset.joint_names)
    heights, wall = [], time.monotonic()
    try:
        deadline = time.monotonic() + 60.0
        while not (bridge and truth and base) and time.monotonic() < deadline:
            pub.publish(JointState(name=names, position=list(_pose(tset, STAND))))
            rclpy.spin_once(node, timeout_sec=0.05)
        t0 = _stamp(bridge[-1]) if bridge else 0.0
        for _, a, b, seconds in PHASES:
            qa, qb = _pose(tset, a), _pose(tset, b)
            start = _stamp(truth[-1]) if truth else t0
            sent = -1.0
            while truth and _stamp(truth[-1]) - start < seconds and \
                    time.monotonic() < deadline + 120.0:
                t = _stamp(truth[-1]) - start
                if t - sent >= TARGET_PERIOD:
                    s = 0.5 - 0.5 * np.cos(np.pi * min(1.0, t / RAMP))
                    pub.publish(JointState(name=names, position=list(qa + s * (qb - qa))))
                    sent = t
                rclpy.spin_once(node, timeout_sec=0.01)
            heights.append(base[-1].pose.position.z if base else float('nan'))
        elapsed, simulated = time.monotonic() - wall, (_stamp(truth[-1]) - t0 if truth else 0)
    finally:
        node.destroy_node()
        rclpy.shutdown()
        _stop(procs)
    if not truth or not bridge or len(heights) < len(PHASES):
        print('\nMuJoCo: no joint_states from the bridge or no state from the simulator')
        return False
    lowest = min(m.pose.position.z for m in base)
    linkage = [j for j in names if j.endswith(('knee', 'ankle_pitch', 'ankle_roll'))]
    count, dq, dv = agreement(bridge, truth, linkage)
    print("\nOn MuJoCo's ground (floating base, contacts), held by joint impedance through the "
          f'bridge (Kp {STIFFNESS:g} N*m/rad, Kd {DAMPING:g} N*m*s/rad per joint) to MIT-mode '
          'drives:')
    for (label, *_), z in zip(PHASES, heights):
        print(f'    {label:<12} base height {z:.3f} m')
    print(f'    lowest base height {lowest:.3f} m; {simulated:.1f} s simulated in {elapsed:.1f} s')
    print(f"bridge joint_states vs MuJoCo's joint state, knees and ankles (closed chains), "
          f'{count} states: max |dq| = {dq:.2e} rad, max |dv| = {dv:.2e} rad/s')
    stood = heights[0] > 0.9 and heights[2] > 0.9 and heights[1] < heights[0] - 0.03
    return bool(stood and lowest > 0.8 and count)


def hold_arm(tfile, urdf, model):
    """Hold the example arm still on MuJoCo by gravity compensation; return whether it held."""
    import rclpy
    from sensor_msgs.msg import JointState
    procs = _start([
        ('transmission_bridge.bridge.node', ['-p', f'transmissions_file:={tfile}',
                                             '-p', 'use_sim_time:=true', '-r',
                                             'joint_commands:=kinematics/gravity_torques']),
        ('transmission_bridge.kinematics_node.node', ['-p', f'model_file:={model}',
                                                      '-p', 'use_sim_time:=true']),
        ('transmission_bridge.tools.actuator_simulator', [
            '-p', 'engine:=mujoco', '-p', f'transmissions_file:={tfile}',
            '-p', f'model_file:={urdf}', '-p', 'dynamics:=effort'])])
    rclpy.init(args=[])
    node = rclpy.create_node('demo_arm')
    truth = []
    node.create_subscription(JointState, 'actuator_simulator/joint_states', truth.append, 1000)
    commands = []
    node.create_subscription(JointState, 'actuator_commands', commands.append, 1000)
    try:
        deadline = time.monotonic() + 60.0
        while not (commands and truth) and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.05)
        start = len(truth)
        while truth and _stamp(truth[-1]) - _stamp(truth[start - 1]) < 2.0 and \
                time.monotonic() < deadline + 60.0:
            rclpy.spin_once(node, timeout_sec=0.05)
    finally:
        node.destroy_node()
        rclpy.shutdown()
        _stop(procs)
    if not commands or not truth:
        print('\nMuJoCo arm: no actuator_commands or no state came')
        return False
    q = np.array([m.position for m in truth[start - 1:]])
    drift = float(np.abs(q - q[0]).max())
    held = _stamp(truth[-1]) - _stamp(truth[start - 1])
    print(f'\nOn MuJoCo, the example arm held by its holding torques through the bridge '
          f'(torque-controlled drives, lossy motors): drift over {held:.1f} s '
          f'= {drift * 1e3:.3f} mrad')
    return drift < 1e-3
