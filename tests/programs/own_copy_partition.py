# Written for cutelab's trial of CuTe DSL programs (issue 8): the kind of program people write while
# learning CuTe DSL. Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import numpy as np

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack


@cute.jit
def copy_partition(g: cute.Tensor):
    # 32x8 threads, each moving 4 consecutive float32 along the contiguous (column) mode
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float32, num_bits_per_copy=128)
    thr_layout = cute.make_layout((32, 8), stride=(8, 1))
    val_layout = cute.make_layout((1, 4), stride=(0, 1))
    tiled = cute.make_tiled_copy_tv(atom, thr_layout, val_layout)
    print(tiled)
    thr = tiled.get_slice(9)
    src = thr.partition_S(g)
    print("S partition of thread 9:", src.layout)
    cute.print_tensor(src)


data = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
copy_partition(from_dlpack(data))
