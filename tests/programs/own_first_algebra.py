# Written for cutelab's trial of CuTe DSL programs (issue 9): the first things a newcomer tries: the layout algebra.
# Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import cutlass
import cutlass.cute as cute


@cute.jit
def first_algebra():
    a = cute.make_layout((6, 2), stride=(8, 2))
    b = cute.make_layout((4, 3), stride=(3, 1))
    print(cute.composition(a, b))
    print(cute.coalesce(cute.make_layout((2, (1, 6)), stride=(1, (6, 2)))))
    print(cute.complement(cute.make_layout(4, stride=2), 24))
    print(cute.complement(cute.make_layout((2, 2), stride=(1, 6)), 24))
    print(cute.right_inverse(cute.make_layout((4, 8), stride=(8, 1))))
    print(cute.left_inverse(cute.make_layout((4, 2), stride=(1, 8))))
    t = cute.make_layout((8, 16), stride=(16, 1))
    print(cute.logical_divide(t, (4, 8)))
    print(cute.zipped_divide(t, (4, 8)))
    print(cute.tiled_divide(t, (4, 8)))
    print(cute.flat_divide(t, (4, 8)))
    print(cute.logical_product(cute.make_layout((2, 2)), cute.make_layout(3)))
    print(cute.blocked_product(cute.make_layout((2, 2)), cute.make_layout((2, 3))))
    print(cute.raked_product(cute.make_layout((2, 2)), cute.make_layout((2, 3))))
    print(cute.ceil_div(10, 4), cute.ceil_div((10, 7), (4, 2)))
    tiler, tv = cute.make_layout_tv(cute.make_layout((4, 8), stride=(8, 1)), cute.make_layout((2, 1)))
    print(tiler, tv)
    sw = cute.make_swizzle(3, 4, 3)
    print(sw)
    s = cute.make_composed_layout(sw, 0, cute.make_layout((8, 64), stride=(64, 1)))
    print(s)
    print(s(0), s(1), s((1, 0)), s((7, 63)))


first_algebra()
