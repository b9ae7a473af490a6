"""
The kinematics node's inverse-dynamics feed-forward over real DDS, and the bridge after it.

The node's efforts are checked against Pinocchio's ``rnea`` on the same URDF plus the
rotors by hand (a simple transmission of reduction r adds ``I r² a``), and the damping read
from the URDF's ``<dynamics>`` here; then the bridge maps them to motor torques, each
motor's own rotor share included.
"""

import xml.etree.ElementTree as ET

from conftest import CONFIG
import numpy as np
import pytest
from ros_harness import Graph, NodeProcess, started_node, unique_namespace
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
import yaml

pin = pytest.importorskip('pinocchio', reason='Pinocchio is not installed (pip install pin)')
pytestmark = pytest.mark.ros

ROBOT = CONFIG / 'example_robot.urdf'
NODE = 'kinematics'
NAMES = ['shoulder_pan', 'shoulder_lift', 'elbow']
MOTORS = {'shoulder_pan': (100.0, 2e-4), 'elbow': (80.0, 5e-5)}    # reduction, rotor kg·m²
POINTS = [([0.2, -1.0, 1.2], [0.3, -0.1, 0.5], [1.0, -2.0, 3.0]),
          ([0.3, -0.8, 1.0], [0.2, 0.0, -0.4], [-0.5, 0.7, 0.1])]
# Efforts copied through float64 messages, computed by two implementations.
EFFORT_ATOL = 1e-9


def _motors_yaml(tmp_path):
    items = [{'name': f'{j}_trans', 'type': 'simple',
              'actuators': [{'name': f'{j}_motor', 'mechanical_reduction': r,
                             'rotor_inertia': inertia}],
              'joints': [{'name': j}]} for j, (r, inertia) in MOTORS.items()]
    path = tmp_path / 'motors.yaml'
    path.write_text(yaml.safe_dump({'transmissions': items}))
    return path


def _expected(points, with_rotors=True, gravity_only=False):
    """Pinocchio's rnea (or holding torque) + damping from the URDF (+ the rotors)."""
    text = ROBOT.read_text()
    pm = pin.buildModelFromXML(text)
    data = pm.createData()
    damping = {j.get('name'): float(j.find('dynamics').get('damping'))
               for j in ET.fromstring(text).iter('joint') if j.find('dynamics') is not None}
    cols = [pm.idx_vs[pm.getJointId(n)] for n in NAMES]
    out = []
    for q, v, a in points:
        qp, vp, ap = pin.neutral(pm), np.zeros(pm.nv), np.zeros(pm.nv)
        qp[cols], vp[cols] = q, v
        if not gravity_only:
            ap[cols] = a
        tau = (pin.computeGeneralizedGravity(pm, data, qp) if gravity_only
               else pin.rnea(pm, data, qp, vp, ap))[cols]
        tau = tau + np.array([damping.get(n, 0.0) for n in NAMES]) * v
        if with_rotors and not gravity_only:
            for k, name in enumerate(NAMES):
                if name in MOTORS:
                    r, inertia = MOTORS[name]
                    tau[k] += inertia * r * r * a[k]
        out.append(tau)
    return np.array(out)


def _trajectory(points, accelerations=True):
    traj = JointTrajectory(joint_names=NAMES)
    for k, (q, v, a) in enumerate(points):
        traj.points.append(JointTrajectoryPoint(positions=q, velocities=v,
                                                accelerations=a if accelerations else []))
        traj.points[-1].time_from_start.sec = k + 1
    return traj


def _send(g, traj, box):
    """
    Publish ``traj`` until its answer comes; return that answer's efforts.

    Each request carries a stamp of its own, which the output copies: an answer to an earlier
    request's repeats (still in flight) is not taken for this one's.
    """
    g.sent = getattr(g, 'sent', 0) + 1
    traj.header.stamp.sec = g.sent
    answers = []

    def answered():
        answers.extend(m for m in box if m.header.stamp.sec == g.sent and m not in answers)
        return bool(answers)
    assert g.spin_until(answered, timeout=10, action=lambda: g.pub.publish(traj)), \
        g.proc.output()
    return np.array([p.effort for p in answers[0].points])


def test_inverse_dynamics_feed_forward_with_the_motors_and_at_runtime(tmp_path):
    params = {'model_file': str(ROBOT), 'feed_forward': 'inverse_dynamics',
              'transmissions_file': str(_motors_yaml(tmp_path))}
    with started_node(tmp_path, 'transmission_bridge.kinematics_node.node', NODE, params, 'id',
                      'joint_states') as g:
        box = g.collect(JointTrajectory, f'{NODE}/trajectory_out')
        g.pub = g.node.create_publisher(JointTrajectory, f'{NODE}/trajectory_in', 10)
        np.testing.assert_allclose(_send(g, _trajectory(POINTS), box), _expected(POINTS),
                                   rtol=0, atol=EFFORT_ATOL)
        # Without accelerations: gravity and the velocity terms (a = 0).
        still = [(q, v, [0.0] * 3) for q, v, _ in POINTS]
        np.testing.assert_allclose(_send(g, _trajectory(POINTS, accelerations=False), box),
                                   _expected(still), rtol=0, atol=EFFORT_ATOL)
        # Refused at runtime with the reason; nothing changes.
        result = g.set_parameters(NODE, {'feed_forward': 'rnea'})[0]
        assert not result.successful
        assert "feed_forward must be one of gravity, inverse_dynamics, got 'rnea'" in \
            result.reason
        assert g.get_parameters(NODE, ['feed_forward']) == {'feed_forward': 'inverse_dynamics'}
        assert g.set_parameters(NODE, {'feed_forward': 'gravity'})[0].successful
        np.testing.assert_allclose(_send(g, _trajectory(POINTS), box),
                                   _expected(POINTS, gravity_only=True), rtol=0,
                                   atol=EFFORT_ATOL)


def _pair(tmp_path, ns, kinematics_file, bridge_file):
    """Start the kinematics node (inverse_dynamics) and the bridge in ``ns``; their processes."""
    procs = []
    for module, node, params in (
            ('transmission_bridge.kinematics_node.node', NODE,
             {'model_file': str(ROBOT), 'feed_forward': 'inverse_dynamics',
              'transmissions_file': str(kinematics_file)}),
            ('transmission_bridge.bridge.node', 'transmission_bridge',
             {'transmissions_file': str(bridge_file)})):
        pfile = tmp_path / f'{node}.yaml'
        pfile.write_text(yaml.safe_dump({f'/**/{node}': {'ros__parameters': params}}))
        remaps = ['-r', f'joint_trajectory:={ns}/{NODE}/trajectory_out']
        procs.append(NodeProcess(module, ['--params-file', str(pfile), '-r', f'__ns:={ns}',
                                          '-r', f'/diagnostics:={ns}/diagnostics'] + remaps,
                                 tmp_path / f'{node}.log'))
    return procs


MISMATCH = 'assumes the transmissions of'


def test_the_bridge_gives_each_motor_its_share_with_its_rotor(tmp_path):
    motors = _motors_yaml(tmp_path)
    ns = unique_namespace('idchain')
    procs = _pair(tmp_path, ns, motors, motors)
    g = Graph(ns)
    try:
        out = g.collect(JointTrajectory, 'actuator_trajectory')
        g.pub = g.node.create_publisher(JointTrajectory, f'{NODE}/trajectory_in', 10)
        names = [n for n in NAMES if n in MOTORS]
        points = [([q[0], q[2]], [v[0], v[2]], [a[0], a[2]]) for q, v, a in POINTS]
        traj = JointTrajectory(joint_names=names)
        for k, (q, v, a) in enumerate(points):
            traj.points.append(JointTrajectoryPoint(positions=q, velocities=v, accelerations=a))
            traj.points[-1].time_from_start.sec = k + 1
        assert g.spin_until(lambda: out, timeout=20, action=lambda: g.pub.publish(traj)), \
            ''.join(p.output() for p in procs)
        sent = out[-1]
        # The links' torque at the joints; shoulder_lift at its default (0), at rest.
        full = [([q[0], 0.0, q[1]], [v[0], 0.0, v[1]], [a[0], 0.0, a[1]])
                for q, v, a in points]
        joint = _expected(full, with_rotors=False)
        for k, point in enumerate(sent.points):
            effort = dict(zip(sent.joint_names, point.effort))
            for j, name in ((0, 'shoulder_pan'), (2, 'elbow')):
                r, inertia = MOTORS[name]
                acceleration = POINTS[k][2][j]
                assert effort[f'{name}_motor'] == pytest.approx(
                    joint[k][j] / r + inertia * r * acceleration, rel=1e-9, abs=1e-12)
        g.spin_for(0.5)
        assert not any(MISMATCH in p.output() for p in procs)   # one file: nothing said
    finally:
        g.close()
        for p in procs:
            assert p.stop() == 0, p.output()


def test_two_nodes_on_different_transmissions_are_told_naming_both_files(tmp_path):
    motors = _motors_yaml(tmp_path)
    other = tmp_path / 'other_motors.yaml'
    edited = yaml.safe_load(motors.read_text())
    edited['transmissions'][0]['actuators'][0]['rotor_inertia'] *= 2    # a hand edit
    other.write_text(yaml.safe_dump(edited))
    ns = unique_namespace('idmismatch')
    procs = _pair(tmp_path, ns, other, motors)
    g = Graph(ns)
    try:
        assert g.spin_until(lambda: all(MISMATCH in p.output() for p in procs), timeout=20), \
            ''.join(p.output() for p in procs)
        for p in procs:
            said = next(line for line in p.output().splitlines() if MISMATCH in line)
            assert str(other) in said and str(motors) in said, said
            assert p.output().count(MISMATCH) == 1      # once, not per message
    finally:
        g.close()
        for p in procs:
            assert p.stop() == 0, p.output()
