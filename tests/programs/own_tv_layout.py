# Written for cutelab's trial of CuTe DSL programs (issue 8): the kind of program people write while
# learning CuTe DSL. Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import cutlass
import cutlass.cute as cute


@cute.jit
def tv_layouts():
    thr = cute.make_layout((4, 8), stride=(8, 1))
    val = cute.make_layout((2, 4), stride=(4, 1))
    tiler, tv = cute.make_layout_tv(thr, val)
    print("tiler:", tiler)
    print("tv:", tv)
    inv = cute.right_inverse(tv)
    print("right inverse:", inv)
    for t in cutlass.range_constexpr(3):
        print("thread", t, "values at", [tv((t, v)) for v in range(8)])


tv_layouts()
