"""Memory-access analysis: coalescing of global accesses and bank conflicts of shared accesses.

The core is an ``AccessTrace``: for each warp instruction and lane, a byte address (what a
CPU kernel profiler records). ``analyze`` counts what Nsight Compute would (requests and 32-byte
sectors for global memory; wavefronts and bank conflicts for shared memory) and explains each
instruction in words. ``tv_trace`` and ``ldmatrix_trace`` make traces from layouts: a TV layout
over a tensor layout (plain or swizzled), auto-vectorised as CuTe's copy does, and ldmatrix over
a shared tile. ``suggest_swizzle`` (suggest.py) searches the Swizzle<B,M,S> that remove the bank
conflicts of such an access. ``draw`` turns a report into pictures (bank map, sectors).

May import: ``cutelab``'s core and ``cutelab.render`` (``draw``). Never ``cutelab.kernel``: its memory
profiler (``kernel.cpu.profiler``) imports this package.

>>> from cutelab import analysis as A
>>> r = A.analyze_tv("(32,8):(1,64)", "S<3,3,3> o 0 o (64,64):(64,1)", "f16", "shared")
>>> print(r.summary())
1 instruction(s) of 128-bit ld.shared: 4 wavefronts (ideal 4), 0 bank conflicts
"""

from .access import (
    BANK_BYTES, LINE_BYTES, NCU_METRICS, NUM_BANKS, SECTOR_BYTES, WARP_SIZE, AccessReport, AccessTrace,
    PhaseDetail, analyze, concat,
)
from .tv import (
    analyze_tv, copy_trace, element_bits, element_swizzle, ldmatrix_trace, offset_function, parse_tensor_layout, tv_offsets,
    tv_trace, vector_width,
)
from .suggest import SwizzleSuggestion, suggest_swizzle

__all__ = [
    "suggest_swizzle", "SwizzleSuggestion",
    "AccessTrace", "AccessReport", "PhaseDetail", "analyze", "concat", "tv_trace", "ldmatrix_trace", "copy_trace",
    "analyze_tv", "element_swizzle", "tv_offsets", "vector_width", "element_bits", "offset_function", "parse_tensor_layout",
    "NCU_METRICS", "WARP_SIZE", "NUM_BANKS", "BANK_BYTES", "SECTOR_BYTES", "LINE_BYTES",
]
