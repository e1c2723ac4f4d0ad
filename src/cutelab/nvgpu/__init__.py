"""Atoms: the MMA and copy instructions of NVIDIA GPUs as values (their thread-value layouts).

Names follow ``cutlass.cute.nvgpu``: ``warp`` (SM80/SM89 mma.sync, ldmatrix/stmatrix),
``warpgroup`` (SM90 wgmma and its shared-memory layout atoms), ``cpasync`` (SM80 cp.async), ``tcgen05`` (SM100 UMMA, tensor memory).
Pure data: no kernel machinery is imported here. The kernel instructions CuTe DSL names in these
namespaces (``warpgroup.fence``, ``tcgen05.commit``, ...) are reached through
``cutelab.tracing.instruction``, the atoms' pictures through ``cutelab.display``.

May import: ``cutelab``'s core and its protocols (``tracing``, ``display``). Never ``cutelab.kernel``
or ``cutelab.render``: they import this package.
"""

from .universal_mma import *  # noqa: F401,F403  (MmaUniversalOp, OperandMajorMode, ...)
from .universal_copy import *  # noqa: F401,F403  (CopyUniversalOp, ...)
from . import common, cpasync, tcgen05, warp, warpgroup  # noqa: F401,E402
from .helpers import TmaInfo, make_tiled_tma_atom_A, make_tiled_tma_atom_B  # noqa: F401,E402  (TMA atoms of MMA operands)
