# Written for cutelab's trial of CuTe DSL programs (issue 9): the first things a newcomer tries: partitioning
# a tensor among threads and blocks (local_tile with proj, local_partition, slicing with None).
# Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import numpy as np

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack


@cute.jit
def partitions(A: cute.Tensor, B: cute.Tensor):
    tiler = (8, 4, 2)
    gA = cute.local_tile(A, tiler, (1, 0, None), proj=(1, None, 1))
    gB = cute.local_tile(B, tiler, (0, 1, None), proj=(None, 1, 1))
    print("gA:", gA)
    print("gB:", gB)
    thr = cute.make_layout((4, 2))
    tA = cute.local_partition(gA, thr, cutlass.Int32(5))
    print("tA:", tA)
    print("tA[None, None, 1]:", tA[(None, None, 1)])
    tB = cute.local_partition(gB, cute.make_layout((2, 4), stride=(4, 1)), cutlass.Int32(3), proj=1)
    print("tB:", tB)
    cute.print_tensor(tA[(None, None, 0)])


A = np.arange(16 * 4, dtype=np.float32).reshape(16, 4)
B = np.arange(8 * 4, dtype=np.float32).reshape(4, 8).T.copy()
partitions(from_dlpack(A), from_dlpack(B))
