"""Asynchronous copies: SM80 ``cp.async`` ops and SM90 TMA (bulk tensor copies).

May import: what ``cutelab.nvgpu`` may (the core and its protocols) and ``nvgpu``'s atom modules (``universal_copy``, ``universal_mma``, ``copy_atom``, ``mma_atom``).
Never ``cutelab.kernel`` or ``cutelab.render``.
"""

from .copy import *  # noqa: F401,F403
from .tma import *  # noqa: F401,F403
from .mcast_mask import create_tma_multicast_mask  # noqa: F401,E402  (the CTAs a multicast reaches)
from .tma_store import (CopyBulkTensorTileS2GOp, CopyReduceBulkTensorTileS2GOp, ReductionKind,  # noqa: F401,E402
                        ReductionOp)  # (TMA stores; the reduce-store is named, not yet supported)
