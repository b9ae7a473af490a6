"""
``actuator_simulator`` with ``engine:=builtin`` as a node, against ``engine:=mujoco``, over DDS.

Two simulator nodes in lockstep on the same fixed-base arm (a URDF no one here tuned for
either engine), ideal gear stages, torque-controlled motors: each is sent the same effort
commands, one per state, and every state each publishes is compared. MuJoCo integrates its
own import of the URDF; the builtin engine the package's rigid-body dynamics; both the
same drives. With ideal stages both integrate semi-implicit Euler with implicit damping:
the states agree to the arithmetic's order (the library's test, test_simulation_library.py,
shows the same in process; here the node's wiring is what is tested: commands reach the
drives, one state per command, the reports reach the topic).
"""

import math

import numpy as np
import pytest
from ros_harness import Graph, NodeProcess, unique_namespace
from sensor_msgs.msg import JointState
from test_simulation_library import ARM, transmissions
import yaml

pytest.importorskip('mujoco')

SAME = 1e-9             # rad, rad/s at the motors: the same arithmetic in another order
STATES = 300            # 0.3 s at 1 kHz
MOVED = 1e-3            # rad at a motor: the arm did move under gravity and the efforts


def _simulator(tmp_path, ns, engine, urdf, trans):
    return NodeProcess('transmission_bridge.tools.actuator_simulator', [
        '-p', f'engine:={engine}', '-p', f'transmissions_file:={trans}',
        '-p', f'model_file:={urdf}', '-p', 'dynamics:=effort', '-p', 'lockstep:=true',
        '-r', f'__ns:={ns}/{engine}', '-r', f'/clock:={ns}/{engine}/clock'],
        tmp_path / f'{engine}.log')


def test_the_builtin_engine_node_moves_the_motors_as_mujoco_does(tmp_path):
    urdf, trans = tmp_path / 'arm5.urdf', tmp_path / 'arm5.yaml'
    urdf.write_text(ARM)
    trans.write_text(yaml.safe_dump(transmissions(False)))
    ns = unique_namespace('engines')
    engines = ('mujoco', 'builtin')
    procs = [_simulator(tmp_path, ns, e, urdf, trans) for e in engines]
    graph = Graph(ns)
    got = {e: graph.collect(JointState, f'{e}/actuator_states', 1000) for e in engines}
    pubs = {e: graph.node.create_publisher(JointState, f'{e}/actuator_commands', 10)
            for e in engines}
    try:
        assert graph.spin_until(lambda: all(got.values()) and all(
            graph.node.count_subscribers(f'{e}/actuator_commands') for e in engines), 60), \
            procs[0].output() + procs[1].output()
        names = list(got['mujoco'][-1].name)
        for messages in got.values():       # from the start state on: the resends dropped
            del messages[:-1]
        for k in range(STATES):
            effort = [0.02 * math.sin(0.05 * k + i) for i in range(len(names))]
            command = JointState(name=names, effort=effort)
            for e in engines:
                pubs[e].publish(command)
            assert graph.spin_until(lambda: all(len(m) >= k + 2 for m in got.values()), 10), \
                (k, procs[0].output() + procs[1].output())
    finally:
        graph.close()
        for p in procs:
            assert p.stop() == 0, p.output()
    mujoco, builtin = (got[e] for e in engines)
    worst, moved = 0.0, 0.0
    for a, b in zip(mujoco[:STATES + 1], builtin[:STATES + 1]):    # every state
        assert list(a.name) == list(b.name) == names
        assert (a.header.stamp.sec, a.header.stamp.nanosec) == \
            (b.header.stamp.sec, b.header.stamp.nanosec)
        worst = max(worst, np.abs(np.subtract(a.position, b.position)).max(),
                    np.abs(np.subtract(a.velocity, b.velocity)).max())
        moved = max(moved, np.abs(np.subtract(a.position, mujoco[0].position)).max())
    assert len(mujoco) >= STATES + 1 and len(builtin) >= STATES + 1
    assert moved > MOVED
    assert worst < SAME, worst


# The arm's drives in their own units: (units, position factor, velocity factor, effort
# factor, position offset), the factors worked from each unit's definition here.
DRIVES = {
    'pan_motor': ({'position': 'counts', 'velocity': 'counts', 'counts_per_revolution': 131072,
                   'effort': 'per_mille', 'rated_torque': 0.5},
                  2 * math.pi / 131072, 2 * math.pi / 131072, 0.5e-3, 0.0),
    'lift_motor': ({'position': {'unit': 'deg', 'offset': 0.25}, 'velocity': 'rpm',
                    'effort': 'amps', 'torque_constant': 0.08},
                   math.pi / 180, 2 * math.pi / 60, 0.08, 0.25),
    'wrist_left': ({'position': 'turns', 'velocity': 'turns'}, 2 * math.pi, 2 * math.pi, 1.0,
                   0.0),
    'wrist_right': ({'effort': {'factor': -0.01}}, 1.0, 1.0, -0.01, 0.0),
}


@pytest.mark.parametrize('dynamics', ['effort', 'motor_gains'])
def test_a_simulator_in_driver_units_reports_and_takes_them(tmp_path, dynamics):
    # Two MuJoCo simulators of one arm in lockstep, one in SI, one whose drives speak their
    # own units (transmissions' units): the same commands (worked into the drives' units
    # here) give the same motion, every state read back through the drives' law.
    if dynamics == 'motor_gains':
        pytest.importorskip('control_msgs')
    urdf = tmp_path / 'arm5.urdf'
    urdf.write_text(ARM)
    document = transmissions(False)
    files = {'si': tmp_path / 'si.yaml', 'units': tmp_path / 'units.yaml'}
    files['si'].write_text(yaml.safe_dump(document))
    for item in document['transmissions']:
        for actuator in item['actuators']:
            actuator['units'] = DRIVES[actuator['name']][0]
    files['units'].write_text(yaml.safe_dump(document))
    ns = unique_namespace('units_sim')
    procs = [NodeProcess('transmission_bridge.tools.actuator_simulator', [
        '-p', 'engine:=mujoco', '-p', f'transmissions_file:={files[k]}',
        '-p', f'model_file:={urdf}', '-p', f'dynamics:={dynamics}', '-p', 'lockstep:=true',
        '-r', f'__ns:={ns}/{k}', '-r', f'/clock:={ns}/{k}/clock'], tmp_path / f'{k}.log')
        for k in files]
    graph = Graph(ns)
    got = {k: graph.collect(JointState, f'{k}/actuator_states', 1000) for k in files}
    if dynamics == 'effort':
        kind, topic = JointState, 'actuator_commands'
    else:
        from control_msgs.msg import DynamicJointState
        kind, topic = DynamicJointState, 'actuator_impedance_commands'
    pubs = {k: graph.node.create_publisher(kind, f'{k}/{topic}', 10) for k in files}
    try:
        assert graph.spin_until(lambda: all(got.values()) and all(
            graph.node.count_subscribers(f'{k}/{topic}') for k in files), 60), \
            procs[0].output() + procs[1].output()
        names = list(got['si'][-1].name)
        f = np.array([DRIVES[n][1:4] for n in names]).T
        offset = np.array([DRIVES[n][4] for n in names])
        for messages in got.values():
            del messages[:-1]
        for k in range(150):
            wave = np.array([0.02 * math.sin(0.05 * k + i) for i in range(len(names))])
            for key in files:
                si = key == 'si'
                if dynamics == 'effort':
                    pubs[key].publish(JointState(name=names, effort=list(
                        wave if si else wave / f[2])))
                    continue
                from control_msgs.msg import InterfaceValue
                target, kp, kd = 0.2 + 10 * wave, np.full(len(names), 0.3), 0.01
                rows = (np.stack([target, 0 * wave, wave, kp, kd + 0 * wave]) if si else
                        np.stack([(target - offset) / f[0], 0 * wave, wave / f[2],
                                  kp * f[0] / f[2], kd * f[1] / f[2]]))
                pubs[key].publish(DynamicJointState(joint_names=names, interface_values=[
                    InterfaceValue(interface_names=['position', 'velocity', 'effort',
                                                    'stiffness', 'damping'],
                                   values=list(rows[:, i])) for i in range(len(names))]))
            assert graph.spin_until(lambda: all(len(m) >= k + 2 for m in got.values()), 10), \
                (k, procs[0].output() + procs[1].output())
    finally:
        graph.close()
        for p in procs:
            assert p.stop() == 0, p.output()
    worst, moved = 0.0, 0.0
    for a, b in zip(got['si'][:151], got['units'][:151]):      # every state
        assert list(b.name) == names
        back = [f[0] * np.array(b.position) + offset, f[1] * np.array(b.velocity),
                f[2] * np.array(b.effort)]
        for mine, theirs in zip(back, (a.position, a.velocity, a.effort)):
            worst = max(worst, np.abs(mine - np.array(theirs)).max())
        moved = max(moved, np.abs(np.subtract(a.position, got['si'][0].position)).max())
    assert len(got['units']) >= 151 and moved > MOVED
    assert worst < SAME, worst
