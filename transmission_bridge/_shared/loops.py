"""
Compiling a module of loops with numba on demand: what every module of loops shares.

A loop module is plain Python on numpy arrays and floats (the reference). Its ``kernels()``
returns either a copy of it whose every function is ``numba.njit`` (compiled on its first
call, cached on disk beside the source) or the module itself, where numba does not import or
``TRANSMISSION_BRIDGE_KERNELS=numpy`` asks for the reference. Importing a loop module loads no
numba: only a set that needs its loops does, on their first use. A loop module may give the
compiler options (``JIT_OPTIONS``) and call another loop module's functions (imported by
name: the copy calls that module's compiled copy).
"""

import importlib
import importlib.util
import os
import sys
import types

KERNELS_ENV = 'TRANSMISSION_BRIDGE_KERNELS'


def installed():
    """Say whether numba is installed (without importing it)."""
    return importlib.util.find_spec('numba') is not None


def wanted():
    """Say whether compiled loops are wanted and possible (numba installed, not refused)."""
    return os.environ.get(KERNELS_ENV, '').strip().lower() != 'numpy' and installed()


def compiled_copy(name, skip):
    """Return a copy of module ``name`` with its functions compiled (or the module itself)."""
    module = sys.modules[name]
    try:
        import numba
    except ImportError:
        return module
    spec = importlib.util.spec_from_file_location(name, module.__file__)
    copy = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(copy)
    jit = numba.njit(cache=True, nogil=True, **getattr(module, 'JIT_OPTIONS', {}))
    for key, value in list(vars(copy).items()):
        if not isinstance(value, types.FunctionType) or key in skip:
            continue
        if value.__module__ == name:
            setattr(copy, key, jit(value))
        elif hasattr(sys.modules.get(value.__module__), 'COMPILED'):   # another loop module
            setattr(copy, key, getattr(jitted(value.__module__), value.__name__))
    return copy


def jitted(name, skip=None):
    """
    Return loop module ``name``'s copy compiled by numba, made once (kept as ``_jitted``).

    ``skip``: as :func:`compiled_copy`; default the module's ``_NOT_COMPILED``.
    """
    module = sys.modules[name]
    if getattr(module, '_jitted', None) is None:
        module._jitted = compiled_copy(
            name, getattr(module, '_NOT_COMPILED', ()) if skip is None else skip)
    return module._jitted


def kernels_of(name, skip):
    """
    Return loop module ``name``'s loops to call, made on the first call and kept.

    The module holds ``COMPILED`` (compiled loops wanted: :func:`wanted`; after the first
    call, whether they are) and ``_compiled`` (the loops, None before); ``skip`` names the
    functions left as they are (:func:`compiled_copy`).
    """
    module = sys.modules[name]
    if module._compiled is None:
        module._compiled = jitted(name, skip) if module.COMPILED else module
        module.COMPILED = module._compiled is not module
    return module._compiled


def compile_ahead(name, exports, module_name, where, cpu=''):
    """
    Compile loop module ``name``'s ``exports`` ({function: signature}) ahead of time.

    numba's ``pycc`` writes extension module ``module_name`` into folder ``where``: the
    exported loops, and the loops they call compiled in, importing no numba when loaded.
    """
    import warnings

    import numba
    from numba.pycc import CC
    jitted = compiled_copy(importlib.import_module(name).__name__, ())
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', numba.NumbaPendingDeprecationWarning)
        cc = CC(module_name)
        cc.output_dir = str(where)
        cc.verbose = False
        cc.target_cpu = cpu
        for function, signature in exports.items():
            cc.export(function, signature)(getattr(jitted, function).py_func)
        cc.compile()
