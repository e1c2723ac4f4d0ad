# Written for cutelab's trial of CuTe DSL programs (issue 8): the kind of program people write while
# learning CuTe DSL. Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import cutlass
import cutlass.cute as cute


@cute.jit
def partition_with_tiled_mma():
    op = cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16))
    tiled = cute.make_tiled_mma(op, (2, 2, 1), permutation_mnk=(32, 32, 16))
    print(tiled)
    # coordinates of a 64x32 C tile and a 64x32 A tile, seen by thread 37
    cC = cute.make_identity_tensor((64, 32))
    cA = cute.make_identity_tensor((64, 32))
    thr = tiled.get_slice(37)
    tCcC = thr.partition_C(cC)
    tCcA = thr.partition_A(cA)
    print("C partition:", tCcC.layout)
    print("A partition:", tCcA.layout)
    for i in cutlass.range_constexpr(4):
        print(i, tCcC[i], tCcA[i])
    print("C shape:", tiled.partition_shape_C((64, 32)))


partition_with_tiled_mma()
