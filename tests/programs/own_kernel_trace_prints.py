# Written for cutelab's trial of CuTe DSL programs (issue 9): a kernel that prints its tiles while it is
# traced: local_tile by block, local_partition by thread, a register fragment, a predicate from an
# identity tensor. Compiled with cute.compile (not launched: that needs a GPU under CuTe DSL).
# Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.
import numpy as np

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack


@cute.kernel
def scale_kernel(gA: cute.Tensor, gC: cute.Tensor, tiler: cutlass.Constexpr, thr: cute.Layout):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, bidy, _ = cute.arch.block_idx()
    tA = cute.local_tile(gA, tiler, (bidx, bidy))
    tC = cute.local_tile(gC, tiler, (bidx, bidy))
    print("block tile", tA, tC)
    pA = cute.local_partition(tA, thr, tidx)
    pC = cute.local_partition(tC, thr, tidx)
    print("thread part", pA)
    frag = cute.make_fragment_like(pA)
    print("fragment", frag)
    ident = cute.make_identity_tensor(gA.shape)
    pI = cute.local_partition(cute.local_tile(ident, tiler, (bidx, bidy)), thr, tidx)
    print("coords", pI)
    frag.store(pA.load() * 2.0)
    pC.store(frag.load())


@cute.jit
def scale(mA: cute.Tensor, mC: cute.Tensor):
    tiler = (8, 16)
    thr = cute.make_layout((4, 8), stride=(8, 1))
    grid = cute.ceil_div(mA.shape, tiler)
    print("grid", grid, "threads", cute.size(thr))
    scale_kernel(mA, mC, tiler, thr).launch(grid=[grid[0], grid[1], 1], block=[cute.size(thr), 1, 1])


a = np.arange(32 * 64, dtype=np.float32).reshape(32, 64)
c = np.zeros_like(a)
compiled = cute.compile(scale, from_dlpack(a, assumed_align=16), from_dlpack(c, assumed_align=16))
print("compiled")
