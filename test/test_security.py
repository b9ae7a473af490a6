"""Security hygiene: no eval/exec, nothing listening but DDS (UDP), safe parsers (see loaders)."""

import ast
import pathlib

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


@pytest.mark.ros
@pytest.mark.parametrize('module,param', [
    ('transmission_bridge.bridge_node',
     f'transmissions_file:={CONFIG / "example_robot_transmissions.yaml"}'),
    ('transmission_bridge.kinematics_node', f'model_file:={CONFIG / "example_arm_model.yaml"}'),
])
def test_nodes_listen_on_no_tcp_port(tmp_path, module, param):
    ns = unique_namespace('sec')
    proc = NodeProcess(module, ['-p', param, '-r', f'__ns:={ns}'], tmp_path / 'node.log')
    g = Graph(ns)
    try:
        assert g.spin_until(lambda: g.node.count_publishers('/diagnostics') > 0
                            or len(g.node.get_node_names()) > 1, 15)
        sockets = _socket_inodes(proc.proc.pid)
        assert sockets, 'the node has no sockets at all: the check would pass vacuously'
        assert not sockets & _listening_tcp_inodes()
    finally:
        g.close()
        assert proc.stop() == 0
