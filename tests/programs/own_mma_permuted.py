# Written for cutelab's trial of CuTe DSL programs (issue 8): the kind of program people write while
# learning CuTe DSL. Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import cutlass
import cutlass.cute as cute


@cute.jit
def permuted_tiled_mma():
    # permute N so that each thread's C values are contiguous in pairs of 4 (a common epilogue trick)
    op = cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float16, (16, 8, 8))
    perm_n = cute.make_layout((8, 2, 2), stride=(1, 16, 8))
    mma = cute.make_tiled_mma(op, (1, 2, 1), permutation_mnk=(None, perm_n, None))
    print(mma)
    print("C tiled:", mma.tv_layout_C_tiled)
    print("B tiled:", mma.tv_layout_B_tiled)
    print("tile sizes:", mma.get_tile_size(0), mma.get_tile_size(1), mma.get_tile_size(2))


permuted_tiled_mma()
