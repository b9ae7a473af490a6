"""Security hygiene: no eval/exec, nothing listening but DDS (UDP), safe parsers (see loaders)."""

import ast
import pathlib
import subprocess
import sys

from conftest import CONFIG
import pytest
from ros_harness import Graph, NodeProcess, unique_namespace

PKG = pathlib.Path(__file__).resolve().parent.parent / 'transmission_bridge'


def test_no_eval_or_exec_in_the_package():
    found = []
    for path in PKG.rglob('*.py'):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, 'id', '') in (
                    'eval', 'exec', '__import__'):
                found.append(f'{path.name}:{node.lineno}')
    assert not found


def _listening_tcp_inodes():
    inodes = set()
    for table in ('/proc/net/tcp', '/proc/net/tcp6'):
        try:
            lines = pathlib.Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == '0A':                  # TCP_LISTEN
                inodes.add(fields[9])
    return inodes


def _socket_inodes(pid):
    out = set()
    for fd in pathlib.Path(f'/proc/{pid}/fd').iterdir():
        try:
            target = fd.readlink().as_posix()
        except OSError:
            continue
        if target.startswith('socket:['):
            out.add(target[8:-1])
    return out


# Another ROS node in the same domain (as a ros2 daemon on the developer's machine is): the
# check must wait for the node under test itself, not for "more than one node".
_FOREIGN = """
import rclpy, time
rclpy.init()
node = rclpy.create_node('foreign_node')
while rclpy.ok():
    rclpy.spin_once(node, timeout_sec=0.1)
"""


@pytest.mark.ros
@pytest.mark.parametrize('module,param,name', [
    ('transmission_bridge.bridge.node',
     f'transmissions_file:={CONFIG / "example_robot_transmissions.yaml"}', 'transmission_bridge'),
    ('transmission_bridge.kinematics_node.node',
     f'model_file:={CONFIG / "example_arm_model.yaml"}', 'kinematics'),
])
def test_nodes_listen_on_no_tcp_port(tmp_path, module, param, name):
    ns = unique_namespace('sec')
    foreign = subprocess.Popen([sys.executable, '-c', _FOREIGN])
    g = Graph(ns)
    proc = None
    try:
        assert g.spin_until(lambda: 'foreign_node' in g.node.get_node_names(), 15)
        proc = NodeProcess(module, ['-p', param, '-r', f'__ns:={ns}'], tmp_path / 'node.log')
        assert g.spin_until(lambda: (name, ns) in g.node.get_node_names_and_namespaces(), 15)
        assert g.spin_until(lambda: g.node.count_publishers(f'{ns}/joint_states')
                            + g.node.count_publishers(f'{ns}/{name}/gravity_torques') > 0, 15)
        sockets = _socket_inodes(proc.proc.pid)
        assert sockets, 'the node has no sockets at all: the check would pass vacuously'
        assert not sockets & _listening_tcp_inodes()
    finally:
        g.close()
        foreign.terminate()
        foreign.wait(10)
        assert proc is None or proc.stop() == 0


def test_tests_never_join_the_callers_domain():
    """Defect 12: tests took the caller's ROS_DOMAIN_ID, on a robot the robot's own."""
    from conftest import choose_test_domain, TEST_DOMAIN_ENV
    for pid in range(0, 400, 7):
        own = pid % 100 + 1
        assert choose_test_domain({'ROS_DOMAIN_ID': str(own)}, pid) != own
        assert 1 <= choose_test_domain({'ROS_DOMAIN_ID': str(own)}, pid) <= 100
        assert choose_test_domain({}, pid) == own
    assert choose_test_domain({TEST_DOMAIN_ENV: '55', 'ROS_DOMAIN_ID': '7'}, 3) == 55
