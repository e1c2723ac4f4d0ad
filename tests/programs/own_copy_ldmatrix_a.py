# Written for cutelab's trial of CuTe DSL programs (issue 8): the kind of program people write while
# learning CuTe DSL. Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import warp


@cute.jit
def ldmatrix_for_a():
    # shared -> register copies of the A operand with ldmatrix.x4, matched to a 2x2-warp TiledMMA
    mma = cute.make_tiled_mma(warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16)), (2, 2, 1))
    ldsm = cute.make_copy_atom(warp.LdMatrix8x8x16bOp(False, 4), cutlass.Float16)
    print(ldsm)
    s2r_a = cute.make_tiled_copy_A(ldsm, mma)
    print(s2r_a)
    s2r_b = cute.make_tiled_copy_B(cute.make_copy_atom(warp.LdMatrix8x8x16bOp(False, 2), cutlass.Float16), mma)
    print(s2r_b)


ldmatrix_for_a()
