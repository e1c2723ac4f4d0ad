# Written for cutelab's trial of CuTe DSL programs (issue 9): the first things a newcomer tries: a tiled copy,
# its printout, and the partitions one thread gets.
# Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import numpy as np

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack


@cute.jit
def tiled_copy(src: cute.Tensor, dst: cute.Tensor):
    thr = cute.make_layout((4, 8), stride=(8, 1))
    val = cute.make_layout((1, 2))
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float32, num_bits_per_copy=64)
    tc = cute.make_tiled_copy_tv(atom, thr, val)
    print(atom)
    print(tc)
    print("threads:", cute.size(tc))
    t5 = tc.get_slice(5)
    s = t5.partition_S(src)
    d = t5.partition_D(dst)
    print(s)
    print(d)
    frag = cute.make_fragment_like(s)
    print(frag)
    cute.copy(atom, s, frag)
    cute.copy(atom, frag, d)
    cute.print_tensor(frag)


src = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
dst = np.zeros_like(src)
tiled_copy(from_dlpack(src, assumed_align=16), from_dlpack(dst, assumed_align=16))
print(dst[:2, :4])
