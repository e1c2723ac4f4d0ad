# Written for cutelab's trial of CuTe DSL programs (issue 8): the kind of program people write while
# learning CuTe DSL. Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import warpgroup


@cute.jit
def hopper_wgmma():
    op = warpgroup.MmaF16BF16Op(
        cutlass.Float16, cutlass.Float32, (64, 128, 16),
        warpgroup.OperandSource.SMEM, warpgroup.OperandMajorMode.K, warpgroup.OperandMajorMode.K,
    )
    tiled = cute.make_tiled_mma(op, (2, 1, 1))
    print(tiled)
    print("size:", cute.size(tiled))
    print("C TV:", tiled.tv_layout_C)
    print("A TV:", tiled.tv_layout_A)
    print("C tiled TV:", tiled.tv_layout_C_tiled)


hopper_wgmma()
