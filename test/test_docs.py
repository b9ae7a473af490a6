"""
The documentation builds, and what it says is checked against the code.

Its links resolve, its generated tables are complete, its troubleshooting messages are the
real ones, and rosdoc2 (docs.ros.org's builder) accepts it.
"""

import html.parser
import re
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

from cli_harness import base_env, needs_ros2, REPO, Shell, VENV_BIN
import pytest
from ros_harness import Graph, NodeProcess, unique_namespace
import yaml

pytestmark = pytest.mark.docs

DOC = REPO / 'doc'
CONFIG = REPO / 'config'
NEEDS_SPHINX = pytest.mark.skipif(shutil.which('sphinx-build', path=str(VENV_BIN)) is None,
                                  reason='Sphinx is not installed (requirements/docs.txt)')


@pytest.fixture(scope='module')
def html_dir(tmp_path_factory):
    """Build the HTML as `make docs` does (warnings are errors); return the output folder."""
    if shutil.which('sphinx-build', path=str(VENV_BIN)) is None:
        pytest.skip('Sphinx is not installed (requirements/docs.txt)')
    out = tmp_path_factory.mktemp('html')
    proc = subprocess.run([sys.executable, '-m', 'sphinx', '-W', '--keep-going', '-q', '-b',
                           'html', str(DOC), str(out)], env=base_env(), text=True,
                          capture_output=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def test_make_docs_is_what_the_test_builds():
    makefile = (REPO / 'Makefile').read_text()
    assert re.search(r'^docs: ', makefile, re.M)
    assert '-m sphinx -W --keep-going -q -b html' in makefile


class _Links(html.parser.HTMLParser):

    def __init__(self):
        super().__init__()
        self.links, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if 'id' in attrs:
            self.ids.add(attrs['id'])
        if tag == 'a' and attrs.get('href'):
            self.links.append(attrs['href'])
        if tag == 'img' and attrs.get('src'):
            self.links.append(attrs['src'])


def test_every_internal_link_resolves(html_dir):
    pages = {p: _parse(p) for p in html_dir.rglob('*.html')}
    assert len(pages) >= 12
    broken = []
    for page, parsed in pages.items():
        for link in parsed.links:
            if re.match(r'^[a-z]+:', link) or link.startswith('//'):
                continue
            target, _, anchor = link.partition('#')
            path = (page.parent / target).resolve() if target else page
            if not path.exists():
                broken.append(f'{page.name}: {link}')
            elif anchor and path.suffix == '.html' and anchor not in pages[path].ids:
                broken.append(f'{page.name}: {link} (no anchor)')
    assert not broken, broken


def _parse(path):
    parser = _Links()
    parser.feed(path.read_text())
    return parser


def test_readme_and_pages_link_only_to_existing_files():
    for page in [REPO / 'README.md', *DOC.glob('*.md')]:
        for target in re.findall(r'\]\(([^)#:]+)(?:#[^)]*)?\)', page.read_text()):
            assert (page.parent / target).exists(), f'{page.name}: {target}'


def _table_row(html_text, table_id, name):
    """Return the cells of the row of ``table_id`` whose first cell is ``name``."""
    table = re.search('<table[^>]*id="' + table_id + '".*?</table>', html_text, re.S)
    for row in re.findall(r'<tr[^>]*>(.*?)</tr>', table.group(0), re.S):
        cells = [html.unescape(c) for c in re.findall(r'<p>(.*?)</p>', row, re.S)]
        if cells and cells[0] == name:
            return cells
    raise AssertionError(f'no row {name!r} in {table_id}')


def _table_names(html_text, table_id):
    pattern = '<table[^>]*id="' + table_id + '".*?</table>'
    table = re.search(pattern, html_text, re.S)
    assert table, f'no table {table_id}'
    cells = re.findall(r'<tr[^>]*>\s*<td[^>]*>\s*<p>(.*?)</p>', table.group(0), re.S)
    return {html.unescape(c) for c in cells}


@pytest.mark.ros
@pytest.mark.parametrize('node,module,robots', [
    ('transmission_bridge', 'transmission_bridge.bridge.node',
     ['transmissions_file:=' + str(CONFIG / 'example_robot_transmissions.yaml'),
      'transmissions_file:=' + str(CONFIG / 'three_motor_wrist_transmissions.yaml')]),
    ('kinematics', 'transmission_bridge.kinematics_node.node',
     ['model_file:=' + str(CONFIG / 'scara_model.yaml')]),
    ('actuator_simulator', 'transmission_bridge.tools.actuator_simulator',
     ['transmissions_file:=' + str(CONFIG / 'example_robot_transmissions.yaml'),
      ('transmissions_file:=' + str(CONFIG / 'example_robot.urdf'), 'engine:=builtin')]),
])
def test_generated_parameter_tables_list_every_declared_parameter(html_dir, tmp_path, node,
                                                                  module, robots):
    """The table in nodes.html against what running nodes answer to ListParameters."""
    from rcl_interfaces.srv import GetParameters, ListParameters
    listed = _table_names((html_dir / 'nodes.html').read_text(), f'parameters-{node}')
    names, defaults = set(), []
    for k, robot in enumerate(robots):
        ns = unique_namespace('doc')
        given = [a for p in ((robot,) if isinstance(robot, str) else robot) for a in ('-p', p)]
        proc = NodeProcess(module, [*given, '-r', f'__ns:={ns}'], tmp_path / f'{k}.log')
        g = Graph(ns)
        try:
            names.update(g.call(ListParameters, f'{node}/list_parameters').result.names)
            if node == 'actuator_simulator':
                defaults.append(g.call(GetParameters, f'{node}/get_parameters',
                                       GetParameters.Request(names=['rate'])
                                       ).values[0].double_value)
        finally:
            g.close()
            assert proc.stop() == 0, proc.output()
    declared = {re.sub(r'^(joints|actuators|transmissions)\.[^.]+\.', lambda m: f'{m.group(1)}.<'
                       f'{m.group(1)[:-1]}>.', n) for n in names}
    declared = {re.sub(r'^constraints\.[^.]+\.(trajectory|goal)$', r'constraints.<joint>.\1', n)
                for n in declared}
    declared -= {'use_sim_time', 'start_type_description_service'}
    assert declared and declared == listed, (declared ^ listed)
    if defaults:        # a default that depends on another parameter: both, and when
        row = _table_row((html_dir / 'nodes.html').read_text(),
                         f'parameters-{node}', 'rate')
        assert row[2] == f'{defaults[0]!r} ({defaults[1]!r} with an engine)', row


def test_launch_arguments_table_lists_every_argument(html_dir):
    text = (html_dir / 'launch.html').read_text()
    for path in (REPO / 'launch').glob('*.launch.py'):
        for name in re.findall(r'declare_arguments\(([^)]*)\)', path.read_text(), re.S):
            for arg in re.findall(r"'(\w+)'", name):
                assert f'<p>{arg}</p>' in text, (path.name, arg)


def test_api_pages_show_the_docstrings(html_dir):
    text = html.unescape(re.sub(r'<[^>]+>', '', (html_dir / 'api.html').read_text()))
    for name in ('DifferentialTransmission', 'load_transmissions', 'ScrewJoint', 'load_model',
                 'holding_torques', 'x_j1   = (x_a1 / n_a1 + x_a2 / n_a2) / (2 n_j1) + off1'):
        assert name in text, name


def test_figures_are_in_the_build(html_dir):
    for name in ('differential.svg', 'four_bar.svg', 'gravity_sign.svg'):
        assert (html_dir / '_images' / name).is_file()


def test_rosdoc2_builds_the_package(tmp_path):
    rosdoc2 = shutil.which('rosdoc2', path=str(VENV_BIN))
    if rosdoc2 is None:
        pytest.skip('rosdoc2 is not installed (requirements/docs.txt)')
    src = tmp_path / 'transmission_bridge'
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(
        '.venv', '.git', 'build', 'install', 'log', '__pycache__', '*.egg-info', '_build'))
    env = dict(base_env(), PATH=f'{VENV_BIN}:{base_env()["PATH"]}')
    proc = subprocess.run([rosdoc2, 'build', '--package-path', str(src)], cwd=tmp_path,
                          env=env, text=True, capture_output=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-5000:]
    index = next((tmp_path / 'docs_output').rglob('index.html'))
    site = index.parent
    for page in ('nodes.html', 'concepts.html', 'troubleshooting.html'):
        assert (site / page).is_file(), sorted(p.name for p in site.iterdir())
    assert 'joints.&lt;joint&gt;.offset' in (site / 'nodes.html').read_text()


# --- troubleshooting: every message on the page, provoked word for word ---------------------

def _bad_transmissions(tmp_path):
    bad = tmp_path / 'bad.yaml'
    bad.write_text((CONFIG / 'scara_transmissions.yaml').read_text().replace(
        'mechanical_reduction: 80.0', 'mechanical_reduction: 0.0'))
    return bad


def _params(tmp_path, params):
    path = tmp_path / 'params.yaml'
    path.write_text(yaml.safe_dump({'/**/transmission_bridge': {'ros__parameters': params}}))
    return path


def _without_matplotlib(tmp_path):
    """Return a shell command: convert --plot in a Python where matplotlib is not importable."""
    args = [str(REPO / 'examples' / 'example_robot_bag'), str(tmp_path / 'out'),
            '--transmissions', str(CONFIG / 'example_robot_transmissions.yaml'),
            '--plot', str(tmp_path / 'z.png')]
    code = ("import sys; sys.modules['matplotlib'] = None; "
            'from transmission_bridge.tools import convert; '
            f'sys.exit(convert.main({args!r}))')
    return f'python -c {shlex.quote(code)}'


PROVOKE = {
    "must be a double (a number: 1.0, or 1), got 'abc'": lambda t: (
        f'ros2 launch transmission_bridge bridge.launch.py params_file:='
        f'{_params(t, {"joints": {"elbow": {"offset": "abc"}}})}'),
    "no parameter 'joints.elbw.offset'": lambda t: (
        f'ros2 launch transmission_bridge bridge.launch.py params_file:='
        f'{_params(t, {"joints": {"elbw": {"offset": 0.1}}})}'),
    'params_file: no such file': lambda t: (
        'ros2 launch transmission_bridge bridge.launch.py params_file:=nothere.yaml'),
    "tip_links: unknown bodies ['tool']": lambda t: (
        f'ros2 launch transmission_bridge kinematics.launch.py '
        f'model_file:={CONFIG / "scara_model.yaml"} tip_links:=[tool]'),
    "parameter 'transmissions_file' or 'robot_description' is required": lambda t: (
        'ros2 run transmission_bridge transmission_bridge'),
    'must be finite and non-zero, got 0.0': lambda t: (
        f'ros2 run transmission_bridge transmission_bridge --ros-args '
        f'-p transmissions_file:={_bad_transmissions(t)}'),
    'Could not determine the type for the passed topic': lambda t: (
        'ros2 topic echo --no-daemon /kinematics/gravity_torques'),
    "this needs the Python package 'matplotlib'": lambda t: _without_matplotlib(t),
    "cannot reach the Dask scheduler at 'tcp://127.0.0.1:9'": lambda t: (
        f'transmission_bridge_convert {REPO / "examples" / "example_robot_bag"} --output-dir '
        f'{t / "out"} --transmissions {CONFIG / "example_robot_transmissions.yaml"} '
        '--scheduler tcp://127.0.0.1:9'),
}


def _messages():
    text = (DOC / 'troubleshooting.md').read_text()
    return re.findall(r'^## `(.+)`$', text, re.M)


def test_every_troubleshooting_message_has_a_command():
    messages = _messages()
    assert len(messages) == len(PROVOKE)
    for message in messages:
        assert sum(key in message for key in PROVOKE) == 1, message


@needs_ros2
@pytest.mark.parametrize('message', _messages())
def test_troubleshooting_message_is_what_the_command_prints(tmp_path, message):
    (key,) = [k for k in PROVOKE if k in message]
    shell = Shell(tmp_path)
    try:
        proc = shell.run(PROVOKE[key](tmp_path), timeout=60, check=False)
    finally:
        shell.close()
    assert proc.returncode != 0, proc.stdout
    assert message in proc.stdout, proc.stdout
    assert 'Traceback' not in proc.stdout, proc.stdout


def test_package_xml_names_the_docs_builder():
    root = ET.parse(REPO / 'package.xml').getroot()
    assert root.find('export/build_type').text == 'ament_python'
    assert (DOC / 'conf.py').is_file() and (DOC / 'index.rst').is_file()


def test_one_version_in_package_xml_setup_py_the_package_and_the_changelog():
    """ROS keeps the version in package.xml and setup.py alike, each release in CHANGELOG.rst."""
    import transmission_bridge
    version = ET.parse(REPO / 'package.xml').getroot().findtext('version')
    assert re.search(rf"version='{re.escape(version)}'", (REPO / 'setup.py').read_text())
    assert transmission_bridge.__version__ == version
    log = (REPO / 'CHANGELOG.rst').read_text()
    # catkin_generate_changelog's format: a title, then one section per version, newest first.
    assert log.startswith('^' * 41 + '\nChangelog for package transmission_bridge\n')
    releases = re.findall(r'^(\d+\.\d+\.\d+) \((\d{4}-\d\d-\d\d)\)\n-+$', log, re.M)
    assert releases and releases[0][0] == version, releases
    versions = [tuple(map(int, v.split('.'))) for v, _ in releases]
    assert versions == sorted(versions, reverse=True) and len(set(versions)) == len(versions)


def test_every_yaml_example_in_the_docs_loads():
    """The YAML a reader copies from the pages is valid for the libraries."""
    from transmission_bridge.kinematics import load_model
    from transmission_bridge.transmissions import load_transmissions
    loaded = 0
    for page in [REPO / 'README.md', *DOC.glob('*.md')]:
        for block in re.findall(r'```yaml\n(.*?)```', page.read_text(), re.S):
            data = yaml.safe_load(block)
            if 'moveit_simple_controller_manager' in data:      # doc/moveit.md
                arm = set(load_transmissions(CONFIG / 'example_robot_transmissions.yaml')
                          .joint_names)
                manager = data['moveit_simple_controller_manager']
                for name in manager['controller_names']:
                    assert manager[name]['action_ns'] == 'follow_joint_trajectory'
                    assert set(manager[name]['joints']) <= arm, (page.name, name)
            elif any(isinstance(v, dict) and 'ros__parameters' in v for v in data.values()):
                for section in data.values():               # a params file's groups
                    params = section['ros__parameters']
                    for group in params.get('trajectory_controllers', []):
                        assert params[group]['joints'], (page.name, group)
            elif 'transmissions' in data:
                load_transmissions(data)
            else:
                assert 'bodies' in data or 'dh' in data, (page.name, list(data))
                load_model(data)
            loaded += 1
    assert loaded >= 3


def test_the_readme_is_a_front_door():
    """At most 150 lines, opening short, and linking the pages a newcomer looks for next."""
    text = (REPO / 'README.md').read_text()
    assert text.count('\n') <= 150, text.count('\n')
    opening = text.split('\n## ')[0].split('\n\n', 1)[1]
    assert all(len(s) < 300 for s in re.split(r'(?<=[.:;])\s', opening)), opening
    for page in ('moveit.md', 'impedance.md', 'dynamics.md', 'bags.md', 'hardware.md',
                 'calibrate.md', 'performance.md'):
        assert f'(doc/{page}' in text, page


def test_the_simulation_page_gives_a_urdf_s_step_as_the_engine_takes_it():
    from transmission_bridge.simulation.model import URDF_STEP
    text = (DOC / 'simulation.md').read_text()
    said = re.search(r'a URDF, which names none,\s+gets the longest step of at most ([\d.]+) ms',
                     text)
    assert said and float(said.group(1)) * 1e-3 == pytest.approx(URDF_STEP, rel=1e-12)
