"""
The numba backend: the chain algorithms compiled (:mod:`.loops`), behind :class:`NumbaBackend`.

Used where numba imports (``pip install transmission_bridge[fast]``, or ``python3-numba``
from rosdep); :data:`AVAILABLE` says whether it does and :data:`REASON` why not. Nothing here
is imported until a model is built.
"""

try:
    import numba
except ImportError as exc:          # the numpy backend runs, with the same results
    AVAILABLE = False
    REASON = str(exc)
else:
    AVAILABLE = True
    REASON = f'numba {numba.__version__}'
    from .backend import NumbaBackend

__all__ = ['AVAILABLE', 'REASON', 'NumbaBackend']
