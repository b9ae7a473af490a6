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
        executable = call['executable']
        names = ([ast.literal_eval(executable)] if isinstance(executable, ast.Constant)
                 else ['transmission_bridge', 'kinematics'])
        for name in names:
            assert f"'{name} = " in setup
    for name in re.findall(r"'([\w.]+\.(?:yaml|urdf))'", source):
        assert (CONFIG / name).is_file(), name


@pytest.mark.parametrize('module,node,params_file,extra', [
    ('transmission_bridge.bridge_node', 'transmission_bridge', 'bridge.yaml',
     f'transmissions_file:={CONFIG / "example_robot_transmissions.yaml"}'),
    ('transmission_bridge.kinematics_node', 'kinematics', 'kinematics.yaml',
     f'model_file:={CONFIG / "example_arm_model.yaml"}'),
])
def test_shipped_params_are_accepted(tmp_path, module, node, params_file, extra):
    data = yaml.safe_load((CONFIG / params_file).read_text())
    (key, body), = data.items()
    params = body['ros__parameters']
    ns = unique_namespace('cfg')
    proc = NodeProcess(module, ['--params-file', str(CONFIG / params_file), '-p', extra,
                                '-r', f'__ns:={ns}'], tmp_path / 'node.log')
    g = Graph(ns)
    try:
        assert g.get_parameters(node, list(params)) == params
    finally:
        g.close()
        assert proc.stop() == 0, proc.output()
