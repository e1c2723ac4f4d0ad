# Written for cutelab's trial of CuTe DSL programs (issue 8): the kind of program people write while
# learning CuTe DSL. Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import cutlass
import cutlass.cute as cute


@cute.jit
def tf32_fragments():
    op = cute.nvgpu.warp.MmaTF32Op((16, 8, 8))
    mma = cute.make_tiled_mma(op, (2, 2, 1))
    print(mma)
    thr = mma.get_slice(0)
    sA = cute.make_layout((64, 32), stride=(32, 1))
    sB = cute.make_layout((32, 32), stride=(32, 1))
    print("A shape per thread:", mma.partition_shape_A((64, 32)))
    print("B shape per thread:", mma.partition_shape_B((32, 32)))
    print("C shape per thread:", mma.partition_shape_C((64, 32)))
    print("A coords:", thr.partition_A(cute.make_identity_tensor((64, 32))))
    print(sA, sB)


tf32_fragments()
