"""TMA over a peer's memory, written in CuTe DSL: each rank's kernel loads tiles of the next rank's
symmetric buffer into shared memory with TMA (a tensor map over the peer's address) and writes them to
its own output, which is then compared with the peer's data, gathered by dist.all_gather.

Run with N ranks: torchrun --nproc-per-node N --no-python cutelab run tma_peer_read.py [--M 128 --K 128]

On the GPU the tensor map is encoded over the peer's buffer as mapped into this rank (PyTorch symmetric
memory); on the CPU the ranks' buffers are host shared memory, mapped into every rank.
"""

import argparse

import torch
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem

import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import cpasync, warpgroup
from cutlass.cute.runtime import from_dlpack

TILE = (64, 64)


@cute.kernel
def peer_tile_kernel(tma_atom: cute.CopyAtom, tA: cute.Tensor, out: cute.Tensor, sl: cute.ComposedLayout):
    tidx, _, _ = cute.arch.thread_idx()
    bx, by, _ = cute.arch.block_idx()
    smem = cutlass.utils.SmemAllocator()
    bar = smem.allocate_array(cutlass.Int64, 1)
    sA = smem.allocate_tensor(cutlass.Float16, sl.outer, 1024, swizzle=sl.inner)
    if tidx == 0:
        cute.arch.mbarrier_init(bar, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    gA = cute.local_tile(tA, TILE, (bx, by))
    tAsA, tAgA = cpasync.tma_partition(tma_atom, 0, cute.make_layout(1), cute.group_modes(sA, 0, 2),
                                       cute.group_modes(gA, 0, 2))
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(bar, TILE[0] * TILE[1] * 2)
        cute.copy(tma_atom, tAgA, tAsA, tma_bar_ptr=bar)
    cute.arch.mbarrier_wait(bar, 0)
    for i in cutlass.range_constexpr(TILE[0]):  # thread t writes column t of the tile's row i
        out[bx * TILE[0] + i, by * TILE[1] + tidx] = sA[i, tidx]


@cute.jit
def peer_tile_copy(peer: cute.Tensor, out: cute.Tensor):
    sl = cute.tile_to_shape(warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.K_SW128, cutlass.Float16),
                            TILE, (0, 1))
    tma_atom, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), peer, sl, TILE)
    grid = [cute.size(peer, mode=[0]) // TILE[0], cute.size(peer, mode=[1]) // TILE[1], 1]
    peer_tile_kernel(tma_atom, tA, out, sl).launch(grid=grid, block=[TILE[1], 1, 1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--M", type=int, default=128)
    parser.add_argument("--K", type=int, default=128)
    args = parser.parse_args()
    dist.init_process_group(backend="nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(rank)
    M, K = args.M, args.K

    buf = symm_mem.empty((M, K), dtype=torch.float16, device="cuda")
    handle = symm_mem.rendezvous(buf, dist.group.WORLD)
    torch.manual_seed(rank)
    buf.copy_(torch.randint(-100, 100, (M, K), device="cuda").half())
    dist.barrier()  # every rank's buffer is written before any rank reads its peer's
    peer_rank = (rank + 1) % world
    peer = handle.get_buffer(peer_rank, (M, K), torch.float16)
    out = torch.zeros((M, K), dtype=torch.float16, device="cuda")
    peer_tile_copy(from_dlpack(peer, assumed_align=16), from_dlpack(out, assumed_align=16))
    torch.cuda.synchronize()

    gathered = [torch.empty_like(buf) for _ in range(world)]
    dist.all_gather(gathered, buf)
    torch.testing.assert_close(out.cpu(), gathered[peer_rank].cpu(), rtol=0, atol=0)
    dist.barrier()
    if rank == 0:
        print(f"tma_peer_read: {world} ranks, {M}x{K} f16, each read its next rank's buffer with TMA: results verified")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
