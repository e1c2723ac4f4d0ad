# Written for cutelab's trial of CuTe DSL programs (issue 9): dividing a tensor over numpy memory the ways
# the tutorials do (zipped, tiled, flat, logical divide; local_tile), slicing the tiles and printing them.
# Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.
import numpy as np

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack


@cute.jit
def divides(t: cute.Tensor):
    tiler = (2, 4)
    z = cute.zipped_divide(t, tiler)
    print("zipped", z)
    print("tiled", cute.tiled_divide(t, tiler))
    print("flat", cute.flat_divide(t, tiler))
    print("logical", cute.logical_divide(t, tiler))
    tile = z[(None, (1, 1))]
    print("tile (1,1)", tile)
    cute.print_tensor(tile)
    lt = cute.local_tile(t, tiler, (2, 0))
    print("local_tile (2,0)", lt)
    cute.print_tensor(lt)
    col = t[None, 3]
    print("column 3", col)
    cute.print_tensor(col)
    cute.printf("t[5,6] = {}, size {}, shape {}", t[5, 6], cute.size(t), t.shape)


a = np.arange(8 * 8, dtype=np.float32).reshape(8, 8)
divides(from_dlpack(a))
divides(from_dlpack(np.asfortranarray(a)))
