# Written for cutelab's trial of CuTe DSL programs (issue 8): the kind of program people write while
# learning CuTe DSL. Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import cpasync


@cute.jit
def cp_async_tiles():
    # 16-byte cp.async copies, 128 threads as 16x8, 8 halves each along the contiguous mode
    atom = cute.make_copy_atom(
        cpasync.CopyG2SOp(cache_mode=cpasync.LoadCacheMode.GLOBAL), cutlass.Float16, num_bits_per_copy=128
    )
    print(atom)
    tiled = cute.make_tiled_copy_tv(
        atom, cute.make_layout((16, 8), stride=(8, 1)), cute.make_layout((1, 8))
    )
    print(tiled)
    coords = cute.make_identity_tensor((64, 64))
    thr = tiled.get_slice(17)
    print("thread 17 sources:", thr.partition_S(coords))


cp_async_tiles()
