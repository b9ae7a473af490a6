"""
Which backend runs a model's algorithms: the factory of :mod:`.backend`'s interface.

:func:`make_backend` picks the numba kernels (:mod:`.kernels`, loaded here on first use,
never at import of the library) or the numpy reference (:mod:`.numpy_backend`).
"""

import os

from .backend import KERNELS_ENV
from .errors import ModelError
from .numpy_backend import NumpyBackend


def make_backend(tree, kind=None, fallback=False):
    """
    Return the backend ``kind`` ('numpy' or 'numba') for ``tree``.

    ``kind`` None: 'numba' where it imports and :data:`KERNELS_ENV` does not say 'numpy',
    else 'numpy'. 'numba' where numba does not import raises :class:`ModelError` saying why,
    unless ``fallback`` (a model unpickled where numba is missing): then 'numpy'.
    """
    if kind == 'numpy':         # numba not imported for it
        return NumpyBackend(tree)
    from . import kernels
    if kind is None:
        wanted = os.environ.get(KERNELS_ENV, '').strip().lower()
        kind = 'numba' if kernels.AVAILABLE and wanted != 'numpy' else 'numpy'
    if kind == 'numba':
        if kernels.AVAILABLE:
            return kernels.NumbaBackend(tree)
        if not fallback:
            raise ModelError(f"kernels 'numba': not available ({kernels.REASON})")
        kind = 'numpy'
    if kind == 'numpy':
        return NumpyBackend(tree)
    raise ModelError(f"kernels must be 'numpy' or 'numba', got {kind!r}")
