# Written for cutelab's trial of CuTe DSL programs (issue 8): the kind of program people write while
# learning CuTe DSL. Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.
import cutlass
import cutlass.cute as cute


@cute.jit
def swizzle_algebra():
    sw = cute.make_swizzle(2, 3, 3)
    L = cute.make_composed_layout(sw, 0, cute.make_layout((16, 32), stride=(32, 1)))
    print(L)
    print("inner, offset, outer:", L.inner, L.offset, L.outer)
    print("shape:", L.shape, "size:", cute.size(L), "cosize:", cute.cosize(L))
    print("tile 8x8:", cute.composition(L, (8, 8)))
    print("zipped 8x8:", cute.zipped_divide(L, (8, 8)))
    print("logical divide by 4:2:", cute.logical_divide(L, cute.make_layout(4, stride=2)))
    print("column 3:", [L((i, 3)) for i in range(16)])
    print("recast to 32-bit:", cute.recast_layout(32, 16, cute.make_layout((16, 32), stride=(32, 1))))


swizzle_algebra()
