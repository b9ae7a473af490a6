"""
The package's loops compiled ahead of time: nodes that load no numba.

numba compiles a module of loops (the gear stages' losses, the linkages, the kinematics'
chain algorithms) on its first call, or loads it from its disk cache: either way the process
then holds numba, LLVM and what numba imports (scipy, coverage), some 120 MB resident. Here
the same loops are compiled once, by numba's ahead-of-time compiler (``numba.pycc``) in a
separate process, into ordinary extension modules that import no numba: :meth:`Ahead.load`
finds one, and the loop module's ``kernels()`` returns it where it is there (:func:`kernels`).
A running goal's step (:mod:`..control.goal_loops`) is this module or the reference, never
numba's just-in-time form (numba would cost a bridge more than the step saves). The modules
live in a cache folder (:func:`folder`, ``TRANSMISSION_BRIDGE_AOT_DIR`` to choose it) under
names that hold a digest of the loops' source (and of the loop modules it calls), numba's
version and Python's (:meth:`Ahead.module_name`): a changed loop is never loaded stale.

Built by :func:`build_all` (``python -m transmission_bridge._shared.ahead``), which the
warm-up runs (``make test``, an install: :mod:`transmission_bridge.tools.warm_up`), and by the
first ``kernels()`` call that finds none (:meth:`Ahead.ensure`: a subprocess, once, said on
the ``logging`` log; the node itself never imports numba for it). Where they cannot be built (no numba, no C linker) the
loops are numba's just-in-time ones, as before, or the numpy reference.

The bridge's loops are exported for arrays of any layout (it writes into message views; a
C-contiguous signature would read such a view as if it were contiguous, without a word), but
for the scratch buffer the linkage loops reshape; the kinematics' for the model's own
contiguous tables (:data:`KINEMATICS`). The same LLVM code as the just-in-time
loops (the kinematics' dynamics less the multiply-adds fused in the exported function itself:
rounding only), the same bits (test_ahead.py).
"""

import hashlib
import importlib.machinery
import importlib.metadata
import importlib.util
import logging
import os
import pathlib
import platform
import subprocess
import sys
import tempfile

from . import loops as _loops

FOLDER_ENV = 'TRANSMISSION_BRIDGE_AOT_DIR'
_LOG = logging.getLogger(__name__)
_HERE = pathlib.Path(__file__).resolve().parent


def folder():
    """Return the folder the compiled modules are kept in."""
    given = os.environ.get(FOLDER_ENV)
    if given:
        return pathlib.Path(given)
    base = os.environ.get('XDG_CACHE_HOME') or pathlib.Path.home() / '.cache'
    return pathlib.Path(base) / 'transmission_bridge' / 'aot'


def _host():
    """
    Return what names this machine's CPU for a module built for it: its model and features.

    A cache folder shared by machines (a home on NFS) then holds one module per CPU, and
    none runs where its instructions are missing.
    """
    try:
        with open('/proc/cpuinfo', encoding='utf-8', errors='replace') as f:
            first = f.read().split('\n\n')[0]
    except OSError:
        return platform.platform()
    return ' '.join(line for line in first.splitlines()
                    if line.startswith(('vendor_id', 'model name', 'flags')))


class Ahead:
    """One loop module's ahead-of-time build: ``loops`` (its name here) and its exports."""

    def __init__(self, loops, exports, package='transmissions', calls=(), cpu=''):
        self.loops, self.exports, self.package = loops, exports, package
        self.calls = calls          # the package's other loop modules it calls
        self.cpu = cpu              # '' any x86-64 (numba's generic), 'host' this machine's
        self._tried = False
        self._name = None

    @property
    def dotted(self):
        """Return the loop module's import name."""
        return f'{__package__.rpartition(".")[0]}.{self.package}.{self.loops}'

    def module_name(self):
        """
        Return the module's name: a digest of the loops' source, numba's, Python's version.

        Computed once: the sources and the machine do not change under a running process.
        """
        if self._name is not None:
            return self._name
        try:
            numba = importlib.metadata.version('numba')
        except importlib.metadata.PackageNotFoundError:
            numba = 'none'
        where = _HERE.parent.joinpath(*self.package.split('.'))
        text = b''.join((where / f'{name}.py').read_bytes()
                        for name in (self.loops, *self.calls)) + repr(
            (numba, sys.version_info[:2], self.exports, self.cpu and _host())).encode()
        self._name = f'_{self.loops}_' + hashlib.sha256(text).hexdigest()[:16]
        return self._name

    def _path(self, where):
        suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
        return pathlib.Path(where) / (self.module_name() + suffix)

    def load(self):
        """Return the compiled module, or None where it has not been built."""
        path = self._path(folder())
        if not path.exists():
            return None
        name = self.module_name()
        found = sys.modules.get(name)
        if found is not None:
            return found
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except ImportError:
            return None
        sys.modules[name] = module
        return module

    def ensure(self):
        """
        Return the compiled module, building it first (a subprocess, once) where it is not.

        A build says so on the log (a first model or set waits for it, some 10-30 s), and a
        build that fails says why (numba's just-in-time loops or the reference then serve).
        """
        found = self.load()
        if found is not None or self._tried:
            return found
        self._tried = True
        _LOG.warning('compiling %s ahead of time into %s, once (10-30 s; `python -m '
                     '%s` builds every module beforehand, as the warm-up does)',
                     self.dotted, folder(), __name__)
        try:
            subprocess.run([sys.executable, '-m', __name__, self.loops], check=True,
                           timeout=600, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        except (OSError, subprocess.SubprocessError) as exc:
            why = (getattr(exc, 'stderr', None) or b'').decode(errors='replace').strip()
            _LOG.warning('%s not compiled ahead of time (%s): numba\'s just-in-time loops or '
                         'the numpy reference instead', self.dotted,
                         why.splitlines()[-1] if why else exc)
            return None
        return self.load()

    def build(self, where=None):
        """Compile the loops into ``where`` (default :func:`folder`); return the module's path."""
        where = pathlib.Path(where or folder())
        where.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=where) as tmp:
            _loops.compile_ahead(self.dotted, self.exports,
                                 self.module_name(), tmp, self.cpu)
            final = self._path(where)
            os.replace(self._path(tmp), final)  # whole, or not at all: a reader never sees half
        return final


#: The loops a bridge calls, and their signatures (``A`` layout arrays: views welcome).
LOSS = Ahead('loss_loops', {
    'measured_state': 'void(f8[:], i8, f8[:, :], f8[:])',
    'measured_linear': 'void(f8[:], i8, f8[:, :], i8[:, :, :], f8[:, :, :], f8[:], f8[:], '
                       'f8[:, :])',
    'commanded_in_place': 'f8(f8[:], f8[:], i8, i8[:], f8[:, :], f8[:])',
    'commanded': 'void(f8[:], f8[:], i8[:], f8[:, :], f8[:])',
    'mit_feed_forward': 'void(f8[:, :], f8[:], i8, i8[:], f8[:, :])',
})
#: The linkage loops the transmissions and the springs call (``A`` layout arrays: the fast
#: route writes into a message's view; ``solve``'s scratch, which the loops reshape, C).
LINKAGE = Ahead('linkage_loops', {
    'scratch_size': 'i8(i8)',
    'actuator_coordinate': 'f8(i8, i8, i8[:], f8[:], f8, f8, f8)',
    'solve': 'i8(i8, i8[:], f8[:], f8[:], f8[:], f8[::1])',
    'set_state': 'i8(f8[:], i8, f8[:, :], i8[:], f8[:], f8[:], i8[:], f8[:, :])',
    'set_state_rows': 'i8(f8[:, :], i8, f8[:, :, :], i8[:], f8[:], f8[:], i8[:, :])',
    'set_command_rows': 'void(f8[:, :], f8[:, :], f8[:, :], f8[:, :], b1[:], i8[:], f8[:], '
                        'f8[:, :], f8[:, :], f8[:, :], f8[:, :], i8[:, :])',
    'mit_state': 'b1(f8[:, :], i8[:], i8[:], f8[:], f8[:], f8[:, :], f8[:], f8[:], i8, '
                 'f8[:, :])',
    'effort_state': 'f8(f8[:, :], i8[:], i8[:], f8[:], f8[:], f8[:, :], f8[:], f8[:, :], '
                    'f8[:], f8[:], f8[:], f8[:])',
})
#: A running goal's step per state (:mod:`..control.goal_loops`: sample, judge, map).
GOAL = Ahead('goal_loops', {
    'follow': 'i8(f8, f8[:], f8[:, :, :], f8[:], f8[:], i8[:], f8[:, :], f8[:, :], f8[:], '
              'f8[:], f8[:], f8[:], f8[:], f8[:], i8, i8, f8[:, :])',
}, package='control')
#: The kinematics' chain algorithms a model calls (:mod:`..kinematics.kernels.backend`):
#: frames, gravity and energy, Jacobians, inverse dynamics, the mass matrix and forward
#: dynamics, of one configuration and of batches. The model's tables and work buffers are
#: its own, C-contiguous (``[::1]``: a third faster), and so are the one-configuration
#: calls' arrays (the model sends others the checked way); what a batch passes or receives
#: may be a view (``A``). Built for this machine's CPU (its fused multiply-adds: the
#: just-in-time kernels' speed; for any x86-64, 1.0-1.07x their time).
_KIN = 'kinematics.kernels'
_C = 'i8[::1], f8[::1], f8[::1]'                        # ints, floats, work
KINEMATICS = Ahead('loops', {
    'one': f'f8(f8[::1], {_C}, f8[:, :, :], f8[:], b1, b1)',
    'gravity': f'f8({_C}, f8[::1])',
    'gravity_one': 'b1(f8[::1], i8[::1], f8[::1], f8[::1], f8[::1])',
    'batch': f'void(f8[:, ::1], {_C}, f8[:, :, :, :], f8[:, :], f8[:], b1, b1)',
    'jacobians': f'void({_C}, b1[:, ::1], i8[:], f8[:, ::1], f8[:, :, ::1])',
}, package=_KIN, cpu='host')
_D = f'{_C}, i8[::1], f8[::1], f8[::1]'                  # ints .. work, dints .. scratch
DYNAMICS = Ahead('dynamics', {
    'rnea': f'void(f8[::1], f8[::1], f8[::1], b1, {_D}, f8[::1])',
    'rnea_one': 'b1(f8[::1], f8[::1], f8[::1], i8[::1], f8[::1], f8[::1], f8[::1])',
    'crba_one': 'b1(f8[::1], i8[::1], f8[::1], f8[::1], f8[:, ::1])',
    'rnea_batch': f'void(f8[:, :], f8[:, :], f8[:, :], b1, {_D}, f8[:, ::1])',
    'crba_batch': f'void(f8[:, :], {_D}, f8[:, :, :])',
    'forward_dynamics': f'b1(f8[::1], f8[::1], f8[::1], {_D}, f8[:, ::1], f8[::1])',
    'forward_dynamics_batch': f'b1(f8[:, ::1], f8[:, ::1], f8[:, ::1], {_D}, f8[:, ::1], '
                              'f8[:, ::1])',
}, package=_KIN, calls=('loops',), cpu='host')
SETS = {ahead.loops: ahead for ahead in (LOSS, LINKAGE, GOAL, KINEMATICS, DYNAMICS)}


def kernels(name, skip):
    """
    Return loop module ``name``'s loops: compiled ahead of time where they can be, else numba's.

    Ahead of time: a module that imports no numba, built once (:meth:`Ahead.ensure`); else
    numba's just-in-time loops; else (no numba, or ``TRANSMISSION_BRIDGE_KERNELS=numpy``) the
    module itself (:func:`._loops.kernels_of`, ``skip`` as there).
    """
    module = sys.modules[name]
    if module._compiled is None and module.COMPILED:
        module._compiled = SETS[name.rpartition('.')[2]].ensure()
    return _loops.kernels_of(name, skip)


def build_all(names=None):
    """Build the named loop modules' (default: every one); return their paths."""
    return [SETS[n].build() for n in (SETS if names is None else names)]


def main(argv=None):
    """Build the modules; say where (exit 1 and why where one cannot be built)."""
    names = sys.argv[1:] if argv is None else argv
    try:
        paths = build_all(names or None)
    except Exception as exc:  # noqa: B902 (a build step: say what failed, in one line)
        print(f'the loops were not compiled ahead of time: {type(exc).__name__}: {exc}',
              file=sys.stderr)
        return 1
    for path in paths:
        print(f'loops compiled ahead of time: {path}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
