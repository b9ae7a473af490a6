"""The launch files and shipped YAML are real: names resolve and the node accepts the YAML."""

import ast
import re

from conftest import CONFIG, REPO
import pytest
from ros_harness import Graph, NodeProcess, unique_namespace
import yaml

LAUNCH = REPO / 'launch'


def _node_calls(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, 'id', '') == 'Node':
            yield {kw.arg: kw.value for kw in node.keywords}


@pytest.mark.parametrize('path', sorted(LAUNCH.glob('*.launch.py')), ids=lambda p: p.name)
def test_launch_file_names_resolve(path):
    source = path.read_text()
    assert 'def generate_launch_description' in source
    compile(source, str(path), 'exec')
    setup = (REPO / 'setup.py').read_text()
    calls = list(_node_calls(path))
    assert calls
    for call in calls:
        assert ast.literal_eval(call['package']) == 'transmission_bridge'
        assert f"'{ast.literal_eval(call['executable'])} = " in setup
    for name in re.findall(r"'([\w.]+\.yaml)'", source):
        assert (CONFIG / name).is_file(), name


def test_shipped_bridge_params_are_accepted(tmp_path):
    data = yaml.safe_load((CONFIG / 'bridge.yaml').read_text())
    (key, body), = data.items()
    params = body['ros__parameters']
    ns = unique_namespace('cfg')
    proc = NodeProcess('transmission_bridge.bridge_node',
                       ['--params-file', str(CONFIG / 'bridge.yaml'),
                        '-p', f'transmissions_file:={CONFIG / "example_robot_transmissions.yaml"}',
                        '-r', f'__ns:={ns}'], tmp_path / 'node.log')
    g = Graph(ns)
    try:
        values = g.get_parameters('transmission_bridge', list(params))
        assert values == params
    finally:
        g.close()
        assert proc.stop() == 0, proc.output()


def test_shipped_kinematics_params_are_accepted(tmp_path):
    data = yaml.safe_load((CONFIG / 'kinematics.yaml').read_text())
    (key, body), = data.items()
    params = body['ros__parameters']
    ns = unique_namespace('cfg')
    proc = NodeProcess('transmission_bridge.kinematics_node',
                       ['--params-file', str(CONFIG / 'kinematics.yaml'),
                        '-p', f'model_file:={CONFIG / "example_arm_model.yaml"}',
                        '-r', f'__ns:={ns}'], tmp_path / 'node.log')
    g = Graph(ns)
    try:
        values = g.get_parameters('kinematics', list(params))
        assert values == params
    finally:
        g.close()
        assert proc.stop() == 0, proc.output()
