"""A one-shot all-reduce over PyTorch symmetric memory, written with cutelab: 16-byte pushes to every
rank, one release flag per CTA, safe back to back.

Each of ``ctas`` persistent CTAs (the same grid on every rank) walks its tiles of the input (128
threads x 16 bytes) and stores each into slot ``rank`` of every rank's receive buffer (a symmetric
``(world, n)`` tensor), the next rank first. Then one thread signals every rank
(``fence.acq_rel.sys``, ``st.release.sys`` of the call's epoch into flag ``(rank, cta)``) and waits
(``ld.acquire.sys``) until every rank's flag for this CTA holds the epoch or a later one; the CTA
then sums the ``world`` slots of its tiles in rank order (every rank gets the same bits).

Back to back: as in ``gemm_allreduce.py``, the receive buffer is doubled (call ``epoch`` uses
half ``epoch % 2``) and flags only grow, so no call waits for a later one or overwrites a slot a
peer has yet to read. The epoch is counted on the device (``finish_call``): every call gets the same
arguments, so the compiled call (``cute.compile``) only launches. Every CTA waits only for the same CTA of the other ranks, which has pushed
everything before it waits: every CTA must be resident (``ctas`` at most what the GPU holds at once:
the default is two per SM).

Run::

    NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 \\
        torchrun --nproc-per-node 2 -m cutelab run examples/distributed/allreduce_push.py --elems 65536

Each call is checked against ``dist.all_reduce`` (integers in f32: every order of summation is exact).
``--plant no-fence``: the signal is a relaxed store with no fence (a race on the GPU; reported on
the CPU by ``CUTELAB_RACECHECK=1``). No multicast is used.
"""

from __future__ import annotations

import argparse
import os
import sys

import cutelab as cute
import cutelab as cutlass
from cutelab.compat import emulating
from cutelab.runtime import from_dlpack

THREADS = 128
PLANTS = ("none", "no-fence")
NO_MULTICAST = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}


def no_multicast(what: str) -> None:
    """Set the variables that keep NCCL, torch symmetric memory and NVSHMEM off NVLink multicast; refuse
    a run where one is set otherwise."""
    for k, v in NO_MULTICAST.items():
        if os.environ.get(k, v) != v:
            raise SystemExit(f"{what}: {k}={os.environ[k]}: this program runs with {k}={v} (no NVLink multicast)")
        os.environ[k] = v


@cute.jit
def wait_flag(flag: cute.Pointer, epoch: cutlass.Int32):
    """Spin until *flag >= epoch, with ld.acquire.sys: what the flag's rank wrote before its release
    store is visible to this thread (and, after a barrier, to the block) when it returns."""
    seen = cute.arch.load(flag, cutlass.Int32, sem="acquire", scope="sys")
    while seen < epoch:
        seen = cute.arch.load(flag, cutlass.Int32, sem="acquire", scope="sys")


@cute.jit
def finish_call(state: cute.Tensor, epoch: cutlass.Int32, leader: cutlass.Boolean, ctas: cutlass.Int32):
    """The end of a call, by one thread (leader) of every CTA once the CTA is done (after a barrier of
    the threads that read state[0]): count the CTA in state[1]; the last one stores the call's epoch in
    state[0] (for the next call, which reads it at its start: stream order) and resets the count. Every
    CTA read state[0] before it counted itself, so no CTA of this call sees the new value. The epoch
    lives on the device so that a call's arguments are the same every time (a compiled call then only
    launches)."""
    if leader:
        done = cute.arch.atomic_add(state.iterator + 1, cutlass.Int32(1), sem="acq_rel", scope="gpu")
        if done == ctas - 1:
            cute.arch.store(state.iterator, epoch)
            cute.arch.store(state.iterator + 1, cutlass.Int32(0))


def check_buffers(what: str, recvs: list, shape: tuple, dtype, flags: list, nflags: int, state, world: int) -> None:
    """The host-side checks of a call's symmetric buffers, flags and counter (ValueError naming the operand)."""
    if len(recvs) != world or len(flags) != world:
        raise ValueError(f"{what}: {len(recvs)} receive buffers and {len(flags)} flag tensors for {world} ranks")
    for p in range(world):
        if tuple(recvs[p].shape) != tuple(shape) or recvs[p].element_type != dtype:
            raise ValueError(f"{what}: rank {p}'s receive buffer is {tuple(recvs[p].shape)} {recvs[p].element_type}, "
                             f"not {tuple(shape)} {dtype}")
        if cute.size(flags[p]) < nflags or flags[p].element_type != cutlass.Int32:
            raise ValueError(f"{what}: rank {p}'s flags hold {cute.size(flags[p])} {flags[p].element_type}, not "
                             f"{nflags} Int32")
    if cute.size(state) != 2 or state.element_type != cutlass.Int32:
        raise ValueError(f"{what}: the call counter is {cute.size(state)} {state.element_type}, not 2 Int32")


class AllReducePush:
    """out = the sum over ranks of inp (see the module docstring)."""

    def __init__(self, rank: int, world: int, ctas: int, plant: str = "none"):
        if plant not in PLANTS:
            raise ValueError(f"AllReducePush: plant={plant!r}: one of {PLANTS}")
        self.rank, self.world, self.ctas, self.plant = rank, world, ctas, plant

    @cute.kernel
    def kernel(self, gI: cute.Tensor, recvs: list, flags: list, gO: cute.Tensor, state: cute.Tensor,
               tiled: cutlass.Constexpr, tile: cutlass.Constexpr, per_cta: cutlass.Constexpr):
        rank, world = self.rank, self.world
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        gdim, _, _ = cute.arch.grid_dim()
        epoch = state[0] + 1  # this call's number: the last CTA to finish stores it (see the end)
        half = epoch % 2  # the half of the receive buffers this call uses
        div = lambda x: cute.zipped_divide(x, (tile,))  # noqa: E731  ((tile), (ntiles))
        to_peer = [div(recvs[d][(half, rank, None)]) for d in range(world)]  # slot `rank` of every rank
        slots = [div(recvs[rank][(half, s, None)]) for s in range(world)]  # every rank's slot here
        ntiles = cute.size(gI, mode=[1])
        thr = tiled.get_slice(tidx)
        for i in cutlass.range(per_cta, unroll=1):  # push: this CTA's tiles into slot `rank` of every rank
            t = bidx + i * gdim
            if t < ntiles:
                src = thr.partition_S(gI[(None, t)])
                frag = cute.make_fragment_like(src)
                cute.copy(tiled, src, frag)
                for j in cutlass.range_constexpr(world):
                    cute.copy(tiled, frag, thr.partition_D(to_peer[(rank + 1 + j) % world][(None, t)]))
        cute.arch.sync_threads()  # every thread's stores are made before the signal
        if tidx == 0:
            for j in cutlass.range_constexpr(world):
                dst = (rank + 1 + j) % world
                if cutlass.const_expr(self.plant == "no-fence"):
                    cute.arch.store(flags[dst].iterator + rank * gdim + bidx, epoch, sem="relaxed", scope="sys")
                else:
                    cute.arch.fence_acq_rel_sys()
                    cute.arch.store(flags[dst].iterator + rank * gdim + bidx, epoch, sem="release", scope="sys")
            for q in cutlass.range_constexpr(world):
                wait_flag(flags[rank].iterator + q * gdim + bidx, epoch)
        cute.arch.sync_threads()
        for r in cutlass.range(per_cta, unroll=1):  # reduce: the slots of this CTA's tiles, in rank order
            rt = bidx + r * gdim
            if rt < ntiles:
                part = cute.make_fragment_like(thr.partition_S(slots[0][(None, rt)]))
                total = cute.make_fragment_like(part, cutlass.Float32)
                cute.copy(tiled, thr.partition_S(slots[0][(None, rt)]), part)
                total.store(part.load().to(cutlass.Float32))
                for q in cutlass.range_constexpr(1, world):
                    cute.copy(tiled, thr.partition_S(slots[q][(None, rt)]), part)
                    total.store(total.load() + part.load().to(cutlass.Float32))
                part.store(total.load().to(gO.element_type))
                cute.copy(tiled, part, thr.partition_D(gO[(None, rt)]))
        cute.arch.sync_threads()
        finish_call(state, epoch, tidx == 0, gdim)

    @cute.jit
    def __call__(self, inp: cute.Tensor, recvs: list, flags: list, out: cute.Tensor, state: cute.Tensor):
        """out = sum over ranks of inp (1-D, n a multiple of 128 x 16 bytes). recvs: every rank's (2, world, n)
        receive buffer (two halves); flags: every rank's (world * ctas,) Int32 flags; state: this rank's (2,)
        Int32 call counter (zeros at first; see finish_call)."""
        what = "allreduce_push"
        n = cute.size(inp)
        dt = inp.element_type
        vec = 128 // dt.width
        tile = THREADS * vec
        if out.element_type != dt or cute.size(out) != n:
            raise ValueError(f"{what}: out is {cute.size(out)} {out.element_type}, inp {n} {dt}")
        if n % tile:
            raise ValueError(f"{what}: {n} elements of {dt}: must be a multiple of {tile} (128 threads x 16 bytes)")
        check_buffers(what, recvs, (2, self.world, n), dt, flags, self.world * self.ctas, state, self.world)
        tiled = cute.make_tiled_copy_tv(cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), dt, num_bits_per_copy=128),
                                        cute.make_layout(THREADS), cute.make_layout(vec))
        ntiles = n // tile
        ctas = min(self.ctas, ntiles)
        div = lambda x: cute.zipped_divide(x, (tile,))  # noqa: E731
        self.kernel(div(inp), recvs, flags, div(out), state, tiled, tile, -(-ntiles // ctas)).launch(
            grid=(ctas, 1, 1), block=(THREADS, 1, 1))


class Buffers:
    """One rank's symmetric receive buffer (two halves), flags and call counter for all-reduces of n elements
    of dtype. Collective: every rank makes it with the same arguments."""

    def __init__(self, n: int, dtype, ctas: int = 0, plant: str = "none"):
        import torch
        import torch.distributed as dist
        import torch.distributed._symmetric_memory as symm_mem

        self.rank, self.world, self.n = dist.get_rank(), dist.get_world_size(), n
        if ctas <= 0:  # two resident CTAs per SM on a GPU; a few on the CPU
            ctas = 4 if emulating() else \
                2 * torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
        every = [None] * self.world
        dist.all_gather_object(every, ctas)
        if len(set(every)) != 1:  # a CTA waits for the same CTA of every rank: the grids must match
            raise ValueError(f"allreduce_push: the ranks would launch {every} CTAs; every rank needs the same grid")
        self.op = AllReducePush(self.rank, self.world, ctas, plant)
        recv = symm_mem.empty((2, self.world, n), dtype=dtype, device="cuda")
        self._recv_h = symm_mem.rendezvous(recv, dist.group.WORLD)
        flag = symm_mem.empty((self.world * ctas,), dtype=torch.int32, device="cuda")
        flag.zero_()
        self._flag_h = symm_mem.rendezvous(flag, dist.group.WORLD)
        self._keep = (recv, flag)
        self.recvs = [from_dlpack(self._recv_h.get_buffer(r, (2, self.world, n), dtype), assumed_align=16)
                      for r in range(self.world)]
        self.flags = [from_dlpack(self._flag_h.get_buffer(r, (self.world * ctas,), torch.int32))
                      for r in range(self.world)]
        self.state = torch.zeros(2, dtype=torch.int32, device="cuda")  # the last call's epoch, CTAs done
        self.mstate = from_dlpack(self.state)
        self._compiled = None
        dist.barrier()  # every rank's flags are zero before any kernel signals

    def __call__(self, mI, mO) -> None:
        """mO = all-reduce of mI (cute tensors from from_dlpack(..., assumed_align=16)). Compiled at the
        first call (cute.compile); every call passes the same buffers, the epoch is on the device."""
        if self._compiled is None:
            self._compiled = cute.compile(self.op, mI, self.recvs, self.flags, mO, self.mstate)
        self._compiled(mI, self.recvs, self.flags, mO, self.mstate)


def main(argv=None) -> int:
    import torch
    import torch.distributed as dist

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--elems", type=int, default=4096)
    p.add_argument("--dtype", default="f32", choices=["f32", "bf16"])
    p.add_argument("--ctas", type=int, default=0, help="persistent CTAs (0: 2 per SM on a GPU, 4 on the CPU)")
    p.add_argument("--calls", type=int, default=3, help="calls, each on new inputs and checked")
    p.add_argument("--plant", default="none", choices=PLANTS)
    p.add_argument("--cuda", default=None, help="rank 0 writes the kernel's generated CUDA here")
    a = p.parse_args(argv)
    no_multicast("allreduce_push")
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))  # before NCCL picks a device
    dist.init_process_group(backend="nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    dtype = {"f32": torch.float32, "bf16": torch.bfloat16}[a.dtype]
    bufs = Buffers(a.elems, dtype, a.ctas, a.plant)
    out = torch.zeros(a.elems, dtype=dtype, device="cuda")
    for c in range(a.calls):
        g = torch.Generator().manual_seed(100 * c + rank)
        inp = torch.randint(-100, 100, (a.elems,), generator=g).to(dtype).cuda()
        bufs(from_dlpack(inp, assumed_align=16), from_dlpack(out, assumed_align=16))
        expected = inp.float()
        dist.all_reduce(expected)  # exact (integers), then rounded once to dtype, as the kernel's f32 sum is
        expected = expected.to(dtype).float()
        torch.testing.assert_close(out.float().cpu(), expected.cpu(), rtol=0, atol=0,
                                   msg=lambda m: f"allreduce_push, rank {rank}, call {c + 1}: {m}")
    if a.cuda and rank == 0:
        from cutelab.kernel.cuda import printer
        from cutelab.kernel.launch.plan import last_launch

        with open(a.cuda, "w") as f:
            f.write(printer.render(last_launch().ir))
    dist.barrier()
    if rank == 0:
        print(f"allreduce_push: {world} ranks, {a.elems} {a.dtype} elements, {a.calls} calls: results verified")
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
