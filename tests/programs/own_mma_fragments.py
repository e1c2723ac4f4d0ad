# Written for cutelab's trial of CuTe DSL programs (issue 8): the kind of program people write while
# learning CuTe DSL. Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.
import numpy as np

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack


@cute.jit
def register_fragments(A: cute.Tensor, C: cute.Tensor):
    mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16)), (2, 2, 1))
    thr = mma.get_slice(3)
    tCgA = thr.partition_A(A)
    tCgC = thr.partition_C(C)
    print("A partition:", tCgA.layout)
    print("C partition:", tCgC.layout)
    # fragments made by the MMA (from a partitioned tensor, from a shape) and by make_fragment_like
    print("A fragment:", mma.make_fragment_A(tCgA))
    print("C fragment:", mma.make_fragment_C(tCgC))
    print("A fragment of a shape:", mma.make_fragment_A(((2, 2), 1, 4)))
    print("B fragment of a shape:", mma.make_fragment_B((2, 2, 4)))
    print("C fragment of a shape:", mma.make_fragment_C((1, 1, 1)))
    print("A fragment_like:", cute.make_fragment_like(tCgA))
    print("C fragment_like:", cute.make_fragment_like(tCgC))
    print("rmem tensor:", cute.make_rmem_tensor((4, 8), cutlass.Float32))


register_fragments(from_dlpack(np.zeros((64, 32), np.float16)), from_dlpack(np.zeros((64, 32), np.float32)))
