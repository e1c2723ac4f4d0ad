# Written for cutelab's trial of CuTe DSL programs (issue 8): the kind of program people write while
# learning CuTe DSL. Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import cutlass
import cutlass.cute as cute


@cute.jit
def epilogue_copy():
    # the register -> global copy of an accumulator, following the TiledMMA's C layout
    mma = cute.make_tiled_mma(
        cute.nvgpu.warp.MmaF16BF16Op(cutlass.BFloat16, cutlass.Float32, (16, 8, 16)), (2, 1, 1)
    )
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float32)
    r2g = cute.make_tiled_copy_C(atom, mma)
    print(r2g)
    thr = r2g.get_slice(5)
    cC = cute.make_identity_tensor((32, 8))
    print("D partition of thread 5:", thr.partition_D(cC))
    print("S partition of thread 5:", thr.partition_S(cC).layout)


epilogue_copy()
