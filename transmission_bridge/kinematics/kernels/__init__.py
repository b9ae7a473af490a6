"""
The numba backend: the chain algorithms compiled (:mod:`.loops`), behind :class:`NumbaBackend`.

Used where numba is installed (``pip install transmission_bridge[fast]``, or ``python3-numba``
from rosdep); :data:`AVAILABLE` says whether it is and :data:`REASON` why not. The loops are
compiled ahead of time into modules that import no numba where that can be done
(:mod:`..._shared.ahead`), else by numba on their first call: importing this package loads no
numba.
"""

import importlib.metadata

from .backend import NumbaBackend
from ..._shared.loops import installed

AVAILABLE = installed()
REASON = (f"numba {importlib.metadata.version('numba')}" if AVAILABLE
          else 'numba is not installed (No module named numba)')

__all__ = ['AVAILABLE', 'REASON', 'NumbaBackend']
