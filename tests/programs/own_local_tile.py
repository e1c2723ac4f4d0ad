# Written for cutelab's trial of CuTe DSL programs (issue 8): the kind of program people write while
# learning CuTe DSL. Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import numpy as np

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack


@cute.jit
def tiles(g: cute.Tensor):
    print(g)
    blk = cute.local_tile(g, (4, 8), (1, 2))
    print("tile (1,2):", blk)
    cute.print_tensor(blk)
    rows = cute.zipped_divide(blk, (2, 4))
    print("2x4 pieces:", rows)
    cute.print_tensor(rows[(None, 1)])
    z = cute.zipped_divide(g.layout, (4, 8))
    print("zipped:", z)


data = np.arange(8 * 32, dtype=np.float32).reshape(8, 32)
tiles(from_dlpack(data))
