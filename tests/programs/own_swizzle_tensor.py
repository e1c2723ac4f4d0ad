# Written for cutelab's trial of CuTe DSL programs (issue 9): a swizzled layout as learners first meet it:
# composing a Swizzle with a layout, where each coordinate lands, and a tensor over numpy memory read
# through it. Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.
import numpy as np

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack


@cute.jit
def swz(t: cute.Tensor):
    sw = cute.make_swizzle(2, 0, 3)
    base = cute.make_layout((8, 4), stride=(4, 1))
    composed = cute.make_composed_layout(sw, 0, base)
    print("swizzle", sw, "composed", composed)
    for r in cutlass.range_constexpr(4):
        print("row", r, [composed((r, c)) for c in range(4)])
    st = cute.make_tensor(t.iterator, composed)
    print("swizzled tensor", st)
    cute.print_tensor(st)
    print("size", cute.size(composed), "cosize", cute.cosize(composed))


swz(from_dlpack(np.arange(32, dtype=np.int32)))
