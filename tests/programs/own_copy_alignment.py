# Written for cutelab's trial of CuTe DSL programs (issue 9): a 64-bit copy atom over tensors whose
# alignment is known only to be 4 bytes: CuTe DSL refuses it (the vector access could be misaligned).
# Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import numpy as np

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack


@cute.jit
def copy_two(src: cute.Tensor, dst: cute.Tensor):
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float32, num_bits_per_copy=64)
    s = cute.make_tensor(src.iterator + 1, cute.make_layout(2))
    d = cute.make_tensor(dst.iterator, cute.make_layout(2))
    print(s, d)
    cute.copy(atom, s, d)


src = np.arange(8, dtype=np.float32)
dst = np.zeros(8, dtype=np.float32)
copy_two(from_dlpack(src, assumed_align=16), from_dlpack(dst, assumed_align=16))
print(dst[:2])
