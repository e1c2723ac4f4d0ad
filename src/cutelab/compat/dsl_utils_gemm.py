"""``cutlass.utils.gemm`` and ``cutlass.utils.gemm.sm100``: CuTe DSL's Blackwell GEMM epilogue helpers.

cutelab does not carry them yet; they import (flash_attn.cute's SM100 kernels import them at module
level) and calling one raises NotEmulatedError naming it and the caller's line.

>>> callable(transform_partitioned_tensor_layout)
True
"""

from __future__ import annotations

import sys

from .where import refuse

__path__: list = []
sm100 = sys.modules[__name__]

for _n in ("transform_partitioned_tensor_layout", "epilogue_tmem_copy_and_partition", "epilogue_smem_copy_and_partition",
           "epilogue_tma_store", "epilogue"):
    globals()[_n] = refuse(f"cutlass.utils.gemm.sm100.{_n}", "CuTe DSL's SM100 GEMM epilogue helpers are not in cutelab yet")
del _n
