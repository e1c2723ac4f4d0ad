"""Warp-level atoms: SM80/SM89 ``mma.sync`` ops and ``ldmatrix``/``stmatrix`` copies.

May import: what ``cutelab.nvgpu`` may (the core and its protocols) and ``nvgpu``'s atom modules (``universal_copy``, ``universal_mma``, ``copy_atom``, ``mma_atom``).
Never ``cutelab.kernel`` or ``cutelab.render``.
"""

from .mma import *  # noqa: F401,F403
from .copy import *  # noqa: F401,F403
