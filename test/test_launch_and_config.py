"""The shipped params YAML is accepted by the nodes (the launch files: test_cli.py)."""

from conftest import CONFIG
import pytest
from ros_harness import Graph, NodeProcess, unique_namespace
import yaml


@pytest.mark.parametrize('module,node,params_file,extra', [
    ('transmission_bridge.bridge.node', 'transmission_bridge', 'bridge.yaml',
     f'transmissions_file:={CONFIG / "example_robot_transmissions.yaml"}'),
    ('transmission_bridge.kinematics_node.node', 'kinematics', 'kinematics.yaml',
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
