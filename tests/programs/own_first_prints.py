# Written for cutelab's trial of CuTe DSL programs (issue 9): the first things a newcomer tries: printing
# the objects of CuTe DSL (ops, atoms, slices of tiled atoms, pointers, swizzles, tuples of layouts).
# Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import numpy as np

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack


@cute.jit
def prints(t: cute.Tensor):
    op = cute.nvgpu.CopyUniversalOp()
    print(op)
    atom = cute.make_copy_atom(op, cutlass.Float32)
    print(atom.value_type, atom.op)
    mma_op = cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16))
    print(mma_op)
    mma = cute.make_tiled_mma(mma_op)
    print(mma.size, mma.shape_mnk if hasattr(mma, "shape_mnk") else "-")
    print(t.iterator + 3)
    print((cute.make_layout(2), cute.make_layout((2, 2))))
    print([cute.make_layout(3)])
    print(cute.make_swizzle(2, 3, 3))
    print(cute.make_composed_layout(cute.make_swizzle(2, 3, 3), 8, cute.make_layout((8, 8), stride=(8, 1))))
    print(cute.make_layout((2, 3)).shape, cute.make_layout((2, 3)).stride)
    print(cute.size(t), cute.size(t, mode=[1]), cute.cosize(t.layout))
    print(cute.E(1), cute.E((0, 1)) if hasattr(cute, "E") else "-")


prints(from_dlpack(np.zeros((4, 6), dtype=np.float32)))
