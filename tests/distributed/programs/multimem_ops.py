"""NVLink multicast in CuTe DSL, as N ranks: each rank's kernel sums its share of 16-byte chunks over every
rank with ``multimem.ld_reduce`` (f32, f16 and bf16 added in f32, e4m3 added in f16) and broadcasts the sums
with ``multimem.st``; the CTAs of all ranks then meet at a barrier of multicast flags (``multimem.red.release``
adds 1 to every rank's flag, each rank spins on its own), so that every rank ends with every sum. The
results are checked against dist.all_reduce. A plain store to a multicast tensor is refused.

Run with N ranks: torchrun --nproc-per-node N --no-python cutelab run multimem_ops.py [--chunks 64]
"""

import argparse

import numpy as np
import torch
import torch.distributed as dist

import nvshmem.core

import cutlass
import cutlass.cute as cute
import cutlass.utils as utils
from cutlass.cute.runtime import from_dlpack

DTYPES = [(cutlass.Float32, torch.float32, 4), (cutlass.Float16, torch.float16, 8),
          (cutlass.BFloat16, torch.bfloat16, 4), (cutlass.Float8E4M3FN, torch.float8_e4m3fn, 16)]


@cute.kernel
def reduce_kernel(x_mc: cute.Tensor, y_mc: cute.Tensor, flag: cute.Tensor, flag_mc: cute.Tensor,
                  dtype: cutlass.Constexpr, vec: cutlass.Constexpr, rank: cutlass.Constexpr,
                  world: cutlass.Constexpr, threads: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    chunk = bidx * threads + tidx
    if chunk % world == rank:  # this rank's share of the chunks
        regs = utils.distributed.multimem_ld_reduce(x_mc.iterator + chunk * vec, dtype=dtype, num_elements=vec)
        utils.distributed.multimem_st(y_mc.iterator + chunk * vec, *regs)
    cute.arch.sync_threads()
    if tidx == 0:  # every rank's CTA bidx has broadcast its sums
        utils.distributed.multimem_red_add1(flag_mc.iterator + bidx, scope="sys", order="release")
        utils.distributed.spin_lock_atom_cas_relaxed_wait(flag.iterator + bidx, expected_val=world, reset_val=0,
                                                          scope="sys")


@cute.jit
def all_reduce(x_mc: cute.Tensor, y_mc: cute.Tensor, flag: cute.Tensor, flag_mc: cute.Tensor,
               dtype: cutlass.Constexpr, vec: cutlass.Constexpr, rank: cutlass.Constexpr, world: cutlass.Constexpr,
               blocks: cutlass.Constexpr, threads: cutlass.Constexpr):
    reduce_kernel(x_mc, y_mc, flag, flag_mc, dtype, vec, rank, world, threads).launch(grid=[blocks, 1, 1],
                                                                                     block=[threads, 1, 1])


@cute.kernel
def plain_store_kernel(flag_mc: cute.Tensor):
    flag_mc[0] = cutlass.Int32(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=64)
    args = parser.parse_args()
    dist.init_process_group(backend="nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(rank)
    uid = nvshmem.core.get_unique_id(empty=(rank != 0))
    ub = torch.from_numpy(uid._data.view(np.uint8).copy()).cuda()
    dist.broadcast(ub, src=0)
    uid._data[:] = ub.cpu().numpy().view(uid._data.dtype)
    nvshmem.core.init(device=None, uid=uid, rank=rank, nranks=world, initializer_method="uid")

    threads = 32
    blocks = args.chunks // threads
    flag = nvshmem.core.tensor((blocks,), dtype=torch.int32)
    flag.zero_()
    flag_mc = nvshmem.core.get_multicast_tensor(nvshmem.core.Teams.TEAM_NODE, flag)
    torch.manual_seed(rank)
    for dtype, tdt, vec in DTYPES:
        n = args.chunks * vec
        x = nvshmem.core.tensor((n,), dtype=tdt)
        y = nvshmem.core.tensor((n,), dtype=tdt)
        lo, hi = (-4, 5) if tdt == torch.float8_e4m3fn else (-100, 100)
        x.copy_((torch.randint(lo, hi, (n,)).float() / 2).to(tdt))
        y.copy_(torch.full((n,), -1.0).to(tdt))
        dist.barrier()
        x_mc = nvshmem.core.get_multicast_tensor(nvshmem.core.Teams.TEAM_NODE, x)
        y_mc = nvshmem.core.get_multicast_tensor(nvshmem.core.Teams.TEAM_NODE, y)
        all_reduce(from_dlpack(x_mc, assumed_align=16), from_dlpack(y_mc, assumed_align=16), from_dlpack(flag),
                   from_dlpack(flag_mc), dtype, vec, rank, world, blocks, threads)
        torch.cuda.synchronize()
        want = x.cpu().float()
        dist.all_reduce(want)
        got = y.cpu().float()
        assert torch.equal(got, want.to(tdt).float()), f"{dtype}: {(got != want).sum().item()} of {n} elements wrong"
        assert int(flag.sum()) == 0, "the flags are reset for the next launch"
        dist.barrier()
        if rank == 0:
            print(f"{dtype.__name__} x{vec}: sums verified")
        nvshmem.core.free_tensor(x_mc)
        nvshmem.core.free_tensor(y_mc)
    try:
        plain_store_kernel(from_dlpack(flag_mc)).launch(grid=[1, 1, 1], block=[1, 1, 1])
    except Exception as e:  # noqa: BLE001 - the refusal is printed
        if rank == 0:
            print("plain store:", str(e).splitlines()[0][:300])
    dist.barrier()
    if rank == 0:
        print(f"multimem_ops: {world} ranks, {args.chunks} chunks of 16 bytes per type: results verified")
    nvshmem.core.free_tensor(flag_mc)
    nvshmem.core.finalize()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
