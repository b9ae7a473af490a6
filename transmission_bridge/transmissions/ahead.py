"""
The gear stages' loss loops compiled ahead of time: a lossy bridge that loads no numba.

numba compiles :mod:`.loss_loops` on a bridge's first lossy state (or loads it from its disk
cache): either way the process then holds numba and LLVM, some 130 MB resident, for five
loops of a few lines. Here the same loops are compiled once, by numba's ahead-of-time
compiler (``numba.pycc``) in a separate process, into an ordinary extension module that
imports no numba: :func:`load` finds it, and :func:`.loss_loops.kernels` returns it where it
is there. The module lives in a cache folder (:func:`folder`, ``TRANSMISSION_BRIDGE_AOT_DIR``
to choose it) under a name that holds a digest of :mod:`.loss_loops`' source, numba's version
and Python's (:func:`module_name`): a changed loop is never loaded stale.

Built by :func:`build` (``python -m transmission_bridge.transmissions.ahead``), which the
warm-up runs (``make test``, an install: :mod:`transmission_bridge.tools.warm_up`), and by
the first :func:`.loss_loops.kernels` call that finds none (:func:`ensure`: a subprocess,
once; the bridge itself never imports numba for it). Where it cannot be built (no numba, no
C linker) the loops are numba's just-in-time ones, as before, or the numpy reference.

Each loop is exported for arrays of any layout (the bridge passes message views): the same
LLVM code as the just-in-time loops, the same bits (test_ahead.py).
"""

import hashlib
import importlib.machinery
import importlib.metadata
import importlib.util
import os
import pathlib
import subprocess
import sys
import tempfile

FOLDER_ENV = 'TRANSMISSION_BRIDGE_AOT_DIR'
#: The loops a bridge calls, and their signatures (``A`` layout arrays: views welcome).
EXPORTS = {
    'measured_state': 'void(f8[:], i8, f8[:, :], f8[:])',
    'measured_linear': 'void(f8[:], i8, f8[:, :], i8[:, :, :], f8[:, :, :], f8[:], f8[:], '
                       'f8[:, :])',
    'commanded_in_place': 'f8(f8[:], f8[:], i8, i8[:], f8[:, :], f8[:])',
    'commanded': 'void(f8[:], f8[:], i8[:], f8[:, :], f8[:])',
    'mit_feed_forward': 'void(f8[:, :], f8[:], i8, i8[:], f8[:, :])',
}
_SOURCE = pathlib.Path(__file__).resolve().parent / 'loss_loops.py'
_tried = False


def folder():
    """Return the folder the compiled module is kept in."""
    given = os.environ.get(FOLDER_ENV)
    if given:
        return pathlib.Path(given)
    base = os.environ.get('XDG_CACHE_HOME') or pathlib.Path.home() / '.cache'
    return pathlib.Path(base) / 'transmission_bridge' / 'aot'


def module_name():
    """Return the module's name: a digest of the loops' source, numba's and Python's version."""
    try:
        numba = importlib.metadata.version('numba')
    except importlib.metadata.PackageNotFoundError:
        numba = 'none'
    text = _SOURCE.read_bytes() + repr((numba, sys.version_info[:2], EXPORTS)).encode()
    return '_loss_loops_' + hashlib.sha256(text).hexdigest()[:16]


def _path(where):
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    return pathlib.Path(where) / (module_name() + suffix)


def load():
    """Return the compiled module, or None where it has not been built."""
    path = _path(folder())
    if not path.exists():
        return None
    name = module_name()
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


def ensure():
    """Return the compiled module, building it first (a subprocess, once) where it is not."""
    global _tried
    found = load()
    if found is not None or _tried:
        return found
    _tried = True
    try:
        subprocess.run([sys.executable, '-m', __name__], check=True, timeout=600,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return load()


def build(where=None):
    """Compile the loops into ``where`` (default :func:`folder`); return the module's path."""
    from . import _loops
    where = pathlib.Path(where or folder())
    where.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=where) as tmp:
        _loops.compile_ahead(__package__ + '.loss_loops', EXPORTS, module_name(), tmp)
        final = _path(where)
        os.replace(_path(tmp), final)   # whole, or not at all: a reader never sees half
    return final


def main():
    """Build the module; say where (exit 1 and why where it cannot be built)."""
    try:
        path = build()
    except Exception as exc:  # noqa: B902 (a build step: say what failed, in one line)
        print(f'the loss loops were not compiled ahead of time: {type(exc).__name__}: {exc}',
              file=sys.stderr)
        return 1
    print(f'loss loops compiled ahead of time: {path}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
