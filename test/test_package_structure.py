"""
The package's shape: no import circles (every import, deferred ones included), small files.

The import graph is read from the sources (``ast``), so a circle that a deferred import
inside a function hides from ``import`` still counts: two modules that need each other are
one room in two files.
"""

import ast
import pathlib

PKG = pathlib.Path(__file__).resolve().parent.parent / 'transmission_bridge'
MAX_LINES = 450
# Compiled kernels (numba loops written out flat for speed) may be longer.
KERNELS = ('kinematics/kernels/', 'transmissions/linkage_loops.py')


def _modules(root):
    """Return {dotted module name: path} of the package at ``root``."""
    out = {}
    for path in root.rglob('*.py'):
        parts = list(path.relative_to(root.parent).with_suffix('').parts)
        if parts[-1] == '__init__':
            parts = parts[:-1]
        out['.'.join(parts)] = path
    return out


def _targets(module, node, is_package, modules):
    """Yield the package modules one import statement of ``module`` loads."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        if node.level:
            base = module.split('.') if is_package else module.split('.')[:-1]
            base = base[:len(base) - node.level + 1]
            prefix = '.'.join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ''
        names = [f'{prefix}.{alias.name}' if f'{prefix}.{alias.name}' in modules else prefix
                 for alias in node.names]
    for name in names:
        while name not in modules and '.' in name:
            name = name.rsplit('.', 1)[0]
        if name in modules and name != module:
            yield name


def import_graph(root):
    """Return {module: set of package modules it imports}, every import statement counted."""
    modules = _modules(root)
    graph = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        graph[module] = {target for node in ast.walk(tree)
                         if isinstance(node, (ast.Import, ast.ImportFrom))
                         for target in _targets(module, node, path.name == '__init__.py',
                                                modules)}
    return graph


def circles(graph):
    """Return the strongly connected groups of more than one module (Tarjan), sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_the_walker_finds_a_circle_a_deferred_import_hides(tmp_path):
    pkg = tmp_path / 'pkg'
    (pkg / 'sub').mkdir(parents=True)
    (pkg / '__init__.py').write_text('')
    (pkg / 'sub' / '__init__.py').write_text('from .b import g\n')
    (pkg / 'a.py').write_text('from .sub import g\n')
    (pkg / 'sub' / 'b.py').write_text('def g():\n    from ..a import f\n')
    (pkg / 'c.py').write_text('import pkg.a\n')
    assert circles(import_graph(pkg)) == [['pkg.a', 'pkg.sub', 'pkg.sub.b']]


def test_the_package_has_no_import_circles():
    graph = import_graph(PKG)
    assert len(graph) > 100 and graph['transmission_bridge.bridge.node']   # it read them
    assert circles(graph) == []


def test_no_file_is_longer_than_450_lines_but_compiled_kernels():
    sizes = {p.relative_to(PKG).as_posix(): p.read_text().count('\n') for p in PKG.rglob('*.py')}
    assert len(sizes) > 100                     # it read them
    long = {path: n for path, n in sizes.items()
            if n > MAX_LINES and not path.startswith(KERNELS)}
    assert long == {}


def packages(graph):
    """Return which subpackage (``transmission_bridge.X``) needs which, from a module graph."""
    def room(module):
        return '.'.join(module.split('.')[:2])
    out = {}
    for module, targets in graph.items():
        out.setdefault(room(module), set()).update(
            room(t) for t in targets if room(t) != room(module))
    return out


def test_the_walker_finds_a_circle_between_packages(tmp_path):
    pkg = tmp_path / 'pkg'
    for sub in ('a', 'b'):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / '__init__.py').write_text('')
    (pkg / '__init__.py').write_text('')
    (pkg / 'a' / 'x.py').write_text('from ..b import y\n')
    (pkg / 'b' / 'y.py').write_text('def f():\n    from ..a import z\n')
    (pkg / 'a' / 'z.py').write_text('')
    assert circles(packages(import_graph(pkg))) == [['pkg.a', 'pkg.b']]


def test_no_two_packages_need_each_other():
    """Between any two packages, one direction at most (deferred imports counted)."""
    assert circles(packages(import_graph(PKG))) == []
