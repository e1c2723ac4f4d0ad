# Written for cutelab's trial of CuTe DSL programs (issue 8): the kind of program people write while
# learning CuTe DSL. Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import cutlass
import cutlass.cute as cute


@cute.jit
def swizzled_smem():
    # the classic 128-byte swizzle for a 8x64 half-precision tile, K-major
    sw = cute.make_swizzle(3, 3, 3)
    print(sw)
    atom = cute.make_composed_layout(sw, 0, cute.make_layout((8, 64), stride=(64, 1)))
    print(atom)
    tile = cute.tile_to_shape(atom, (64, 128), (0, 1))
    print(tile)
    print("row 1:", [atom((1, j)) for j in range(0, 64, 8)])
    print("row 7:", [atom((7, j)) for j in range(0, 64, 8)])
    print("size, cosize:", cute.size(atom), cute.cosize(atom))


swizzled_smem()
