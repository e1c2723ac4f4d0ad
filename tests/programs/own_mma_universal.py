# Written for cutelab's trial of CuTe DSL programs (issue 8): the kind of program people write while
# learning CuTe DSL. Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import cutlass
import cutlass.cute as cute


@cute.jit
def universal_fma():
    # the SIMT "one thread, one FMA" atom, tiled 16x16 threads, each doing 2x2 values
    op = cute.nvgpu.MmaUniversalOp(cutlass.Float32)
    atom = cute.make_mma_atom(op)
    print(atom)
    tiled = cute.make_tiled_mma(atom, (16, 16, 1), permutation_mnk=(32, 32, 1))
    print(tiled)
    print("size:", cute.size(tiled))
    print("C tiled TV:", tiled.tv_layout_C_tiled)
    print("A tiled TV:", tiled.tv_layout_A_tiled)


universal_fma()
