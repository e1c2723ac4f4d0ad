# Written for cutelab's trial of CuTe DSL programs (issue 9): building thread-value layouts the way the
# elementwise examples do (make_ordered_layout, recast_layout, make_layout_tv) and reading them back:
# which element does thread t hold as value v.
# Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.
import cutlass
import cutlass.cute as cute


@cute.jit
def tv():
    for dtype in (cutlass.Float32, cutlass.Float16, cutlass.Int8):
        thr = cute.make_ordered_layout((4, 32), order=(1, 0))
        val = cute.make_ordered_layout((4, 16), order=(1, 0))
        val = cute.recast_layout(dtype.width, 8, val)
        tiler, tv_layout = cute.make_layout_tv(thr, val)
        print(dtype, "val", val, "tiler", tiler, "tv", tv_layout)
        for t in (0, 1, 31, 32, 127):
            print("  thread", t, "values", [cute.idx2crd(tv_layout((t, v)), tiler) for v in range(2)])
    print(cute.make_layout_tv(cute.make_layout((2, 2)), cute.make_layout((1, 2))))


tv()
