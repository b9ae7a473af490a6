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
