"""An all-reduce over PyTorch symmetric memory, written in CuTe DSL, with release/acquire flags.

Run with N ranks: torchrun --nproc-per-node N --no-python cutelab run allreduce_flags.py [--plant KIND]

Each block of each rank pushes its tile of the input into slot `rank` of every rank's receive
buffer, then signals every rank: a system-scope fence, then st.release.sys of the epoch into
that rank's flag (rank, block). It then waits (ld.acquire.sys in a loop) until every rank's flag
for this block holds the epoch, and sums the received slots. The result is checked against
dist.all_reduce.

--plant never-set: the wait expects epoch + 1, which no rank writes: the CPU emulation must report
a deadlock naming the rank, the kernel line and the flag, and the program must not hang.
--plant no-fence: the signal is a relaxed store with no fence before it (a race on the GPU);
with CUTELAB_RACECHECK=1 the CPU emulation reports it.
--plant rank1-skips: rank 1 never launches the kernel and waits in dist.barrier, which rank 0 (in
the kernel, waiting for rank 1's flags) never reaches: a deadlock, reported.
--plant rank1-sleeps: rank 1 sleeps in host code (8 s) instead: rank 0 cannot tell it from a slow
rank, and stops after CUTELAB_WAIT_TIMEOUT_S with a report.
"""

import argparse
import time

import torch
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack

THREADS = 64


@cute.kernel
def allreduce_kernel(inp: cute.Tensor, recvs: list, flags: list, out: cute.Tensor, rank: cutlass.Constexpr,
                     world: cutlass.Constexpr, nblk: cutlass.Constexpr, epoch: cutlass.Int32,
                     plant: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * THREADS + tidx
    # 1. push this rank's element into slot `rank` of every rank's receive buffer
    v = inp[i]
    for p in cutlass.range_constexpr(world):
        recvs[p][rank, i] = v
    cute.arch.sync_threads()
    if tidx == 0:
        # 2. signal every rank: my data for this block is there
        for p in cutlass.range_constexpr(world):
            if cutlass.const_expr(plant == "no-fence"):
                cute.arch.store(flags[p].iterator + rank * nblk + bidx, epoch, sem="relaxed", scope="sys")
            else:
                cute.arch.fence_acq_rel_sys()
                cute.arch.store(flags[p].iterator + rank * nblk + bidx, epoch, sem="release", scope="sys")
        # 3. wait for every rank's signal for this block
        want = epoch + 1 if cutlass.const_expr(plant == "never-set") else epoch
        for q in cutlass.range_constexpr(world):
            seen = cute.arch.load(flags[rank].iterator + q * nblk + bidx, cutlass.Int32, sem="acquire", scope="sys")
            while seen != want:
                seen = cute.arch.load(flags[rank].iterator + q * nblk + bidx, cutlass.Int32, sem="acquire", scope="sys")
    cute.arch.sync_threads()
    # 4. sum what every rank sent
    acc = recvs[rank][0, i]
    for q in cutlass.range_constexpr(1, world):
        acc = acc + recvs[rank][q, i]
    out[i] = acc


@cute.jit
def allreduce(inp: cute.Tensor, recvs: list, flags: list, out: cute.Tensor, rank: cutlass.Constexpr,
              world: cutlass.Constexpr, epoch: cutlass.Int32, plant: cutlass.Constexpr):
    nblk = cute.size(inp) // THREADS
    allreduce_kernel(inp, recvs, flags, out, rank, world, nblk, epoch, plant).launch(
        grid=[nblk, 1, 1], block=[THREADS, 1, 1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--elems", type=int, default=256)
    parser.add_argument("--plant", default="none", choices=["none", "never-set", "no-fence", "rank1-skips", "rank1-sleeps"])
    args = parser.parse_args()
    dist.init_process_group(backend="nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(rank)
    n, nblk = args.elems, args.elems // THREADS

    recv = symm_mem.empty((world, n), dtype=torch.float32, device="cuda")
    recv_h = symm_mem.rendezvous(recv, dist.group.WORLD)
    flag = symm_mem.empty((world * nblk,), dtype=torch.int32, device="cuda")
    flag.zero_()
    flag_h = symm_mem.rendezvous(flag, dist.group.WORLD)
    recvs = [recv_h.get_buffer(r, (world, n), torch.float32) for r in range(world)]
    flags = [flag_h.get_buffer(r, (world * nblk,), torch.int32) for r in range(world)]

    torch.manual_seed(rank)
    inp = torch.randint(-50, 50, (n,), device="cuda").float()
    out = torch.zeros(n, device="cuda")
    dist.barrier()
    if args.plant in ("rank1-skips", "rank1-sleeps") and rank == 1:
        if args.plant == "rank1-sleeps":
            time.sleep(8)
        dist.barrier()  # never met: rank 0 is in the kernel, waiting for rank 1's flags
    allreduce(from_dlpack(inp), [from_dlpack(t) for t in recvs], [from_dlpack(t) for t in flags], from_dlpack(out),
              rank, world, cutlass.Int32(1), "none" if args.plant.startswith("rank1") else args.plant)
    expected = inp.clone()
    dist.all_reduce(expected)
    torch.testing.assert_close(out.cpu(), expected.cpu())
    dist.barrier()
    if rank == 0:
        print(f"allreduce_flags: {world} ranks, {n} elements: results verified")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
