"""A Hopper GEMM fused with an all-reduce over PyTorch symmetric memory, written with cutelab.

Every rank r holds A_r (M x K) and B_r (N x K) and wants C = sum_r A_r B_r^T on every rank (a
row-parallel linear layer: K split over the ranks). The unfused way is a GEMM, then
``dist.all_reduce(C_r)``: the network idles while the tensor cores work, and the other way round.

Here the GEMM is ``examples/gemm/sm90_gemm.py``'s warp-specialised kernel (TMA loads into swizzled
shared memory, an mbarrier pipeline, wgmma, persistent CTAs) with its epilogue replaced:

1. **push** (overlapped with the mainloops): when a CTA's consumer warpgroups have a tile of C_r,
   they round it to C's type in shared memory and copy it, with 16-byte stores of whole rows, into
   slot ``r`` of that tile in *every* rank's receive buffer (a symmetric tensor
   ``(world, M, N)``, its own included), starting with the next rank. Then one thread signals each
   rank: ``fence.acq_rel.sys``, then ``st.release.sys`` of the call's epoch into that rank's flag
   ``(r, tile)``. The CTA goes on to its next tile at once: the stores to the peers drain over
   NVLink while this CTA and the others run their mainloops.
2. **reduce** (after the CTA's last tile): for each of its tiles, one thread waits
   (``ld.acquire.sys`` in a loop) until every rank's flag for the tile holds this epoch or a later
   one, then the consumers sum the ``world`` slots in rank order (f32, so every rank gets the same
   bits) and store the tile of C with 16-byte stores.

A CTA waits only for its own tiles (the flags are per tile), and on every peer the CTA that has
those tiles pushes all of its tiles before it waits for anything: no cycle, as long as every CTA of
each grid is resident at once (the grid is at most one CTA per SM: ``--ctas 0``, the default on a GPU).

Back-to-back calls: the receive buffer is doubled and call ``epoch`` uses half ``epoch % 2``. A
rank can start call e + 2 (and write that half again) only after finishing call e + 1, which needs
every peer's pushes of e + 1, which the peers make only after finishing call e, reads included.
Flags only grow (epochs 1, 2, ...), and a wait is for ``flag >= epoch``: a peer already at e + 1
does not stall a rank still in e. The epoch is counted on the device (``allreduce_push.finish_call``:
the last CTA of a call stores it), so every call gets the same arguments and the compiled call
(``cute.compile``) only launches: no trace per epoch value.

Run (2 ranks; on GPUs symm_mem peer tensors, on a machine without one N processes on gloo with
host shared memory, each rank's kernels on the CPU interpreter)::

    NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 \\
        torchrun --nproc-per-node 2 -m cutelab run examples/distributed/gemm_allreduce.py --mnk 128,256,128

(on H100s: ``--mnk 8192,8192,4096 --tile 128,256,64 --mma-wgs 2 --stages 3 --ctas 0``). The result
of every call is checked against ``torch.matmul`` followed by ``dist.all_reduce`` (f32, with a
bound on the error of rounding the partial sums and the sum to C's type).

``--plant no-fence``: the signal is a relaxed store with no fence after the pushes, a race on the
GPU (a peer that sees the flag may read the old tile). ``CUTELAB_RACECHECK=1`` reports it on the CPU.

Multicast (multimem, cuMulticastCreate) is not used.
"""

from __future__ import annotations

import argparse
import os
import sys

import cutelab as cute
import cutelab as cutlass
from cutelab import pipeline
from cutelab.nvgpu import warpgroup
from cutelab.compat import emulating
from cutelab.runtime import from_dlpack

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.join(_HERE, os.pardir, "gemm")]
from sm90_gemm import HopperGemm, _state_at  # noqa: E402
from allreduce_push import check_buffers, finish_call, no_multicast, wait_flag  # noqa: E402

PLANTS = ("none", "no-fence")


class GemmAllReduce(HopperGemm):
    """C = sum over ranks of A_r B_r^T, on every rank (see the module docstring): the warp-specialised
    HopperGemm with a push-to-peers epilogue and a reduce phase. C f16 or bf16."""

    def __init__(self, rank: int, world: int, plant: str = "none", **kw):
        if plant not in PLANTS:
            raise ValueError(f"GemmAllReduce: plant={plant!r}: one of {PLANTS}")
        super().__init__(warp_specialized=True, epilogue="smem", **kw)
        self.rank, self.world, self.plant = rank, world, plant

    @cute.kernel
    def kernel_ar(self, tma_a: cutlass.Constexpr, mA: cute.Tensor, tma_b: cutlass.Constexpr, mB: cute.Tensor,
                  mC: cute.Tensor, recvs: list, flags: list, state: cute.Tensor, tiled_mma: cutlass.Constexpr,
                  a_smem: cutlass.Constexpr, b_smem: cutlass.Constexpr, tiles_per_cta: cutlass.Constexpr):
        bM, bN, bK = self.tile_mnk
        rank, world = self.rank, self.world
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        gdim, _, _ = cute.arch.grid_dim()
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        warp_group = cute.arch.make_warp_uniform(tidx // 128)
        cdt = mC.element_type

        sA, sB, mainloop, sC = self.shared_storage(a_smem, b_smem, 4 * self.mma_warpgroups, cdt)
        M, N = mC.shape
        K = mA.shape[1]
        tiles_m, tiles_n, k_tiles = M // bM, N // bN, K // bK
        num_tiles = tiles_m * tiles_n
        producer = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, self.stages)
        consumer = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.stages)
        loop = self.loop

        if warp_group == 0:  # producer: as HopperGemm.kernel_ws
            cute.arch.setmaxregister_decrease(40)
            if warp_idx == 0:
                for i in loop(tiles_per_cta):
                    tile = bidx + i * gdim
                    if tile < num_tiles:
                        tm, tn = self.tile_mn(tile, tiles_m, tiles_n)
                        loads = self.tma_loads(tma_a, mA, sA, tma_b, mB, sB, tm, tn)
                        for k_tile in loop(k_tiles, unroll=1):
                            self.load_k_tile(mainloop, _state_at(producer, i * k_tiles + k_tile), loads, k_tile)
        else:  # consumers: wgmma, then push the tile to every rank; at the end reduce the CTA's tiles
            cute.arch.setmaxregister_increase(232)
            n_cons = 128 * self.mma_warpgroups
            ctid = tidx % n_cons  # the consumers' own thread index (they are threads 128 and up)
            thr_mma = tiled_mma.get_slice(ctid)
            tCsA = thr_mma.partition_A(sA)
            tCsB = thr_mma.partition_B(sB)
            tCsC = thr_mma.partition_C(sC)
            epi_bar = pipeline.NamedBarrier(barrier_id=1, num_threads=n_cons)
            vec = 128 // cdt.width
            tpr = bN // vec  # threads per row: each moves 16 bytes
            rows = cute.make_tiled_copy_tv(
                cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cdt, num_bits_per_copy=128),
                cute.make_ordered_layout((n_cons // tpr, tpr), order=(1, 0)), cute.make_layout((1, vec)))
            thr_rows = rows.get_slice(ctid)
            tOsC = thr_rows.partition_S(sC)
            epoch = state[0] + 1  # this call's number: the last CTA to finish stores it (finish_call)
            half = epoch % 2  # the half of the receive buffers this call uses
            to_peer = [recvs[d][(half, rank, None, None)] for d in range(world)]  # slot `rank` of every rank
            for i in loop(tiles_per_cta):
                tile = bidx + i * gdim
                if tile < num_tiles:
                    tm, tn = self.tile_mn(tile, tiles_m, tiles_n)
                    acc = cute.make_rmem_tensor(thr_mma.partition_C(cute.local_tile(mC, (bM, bN), (tm, tn))).shape,
                                                self.acc_dtype)
                    first = i * k_tiles
                    cs = _state_at(consumer, first)
                    mainloop.consumer_wait(cs)
                    self.mma_k_tile(tiled_mma, acc, tCsA, tCsB, cs.index, first=True)
                    for k_tile in loop(1, k_tiles):
                        rs = _state_at(consumer, first + k_tile)
                        mainloop.consumer_wait(rs)
                        self.mma_k_tile(tiled_mma, acc, tCsA, tCsB, rs.index)
                        warpgroup.wait_group(1)
                        mainloop.consumer_release(_state_at(consumer, first + k_tile - 1))
                    warpgroup.wait_group(0)
                    mainloop.consumer_release(_state_at(consumer, first + k_tiles - 1))
                    # the rounded tile into shared memory (once the previous tile's pushes have read it) ...
                    out = cute.make_fragment_like(acc, cdt)
                    out.store(acc.load().to(cdt))
                    epi_bar.arrive_and_wait()
                    cute.autovec_copy(out, tCsC)
                    epi_bar.arrive_and_wait()
                    # ... then into slot `rank` of every rank's buffer, the next rank first
                    for j in cutlass.range_constexpr(world):
                        peer = to_peer[(rank + 1 + j) % world]
                        cute.copy(rows, tOsC, thr_rows.partition_D(cute.local_tile(peer, (bM, bN), (tm, tn))))
                    epi_bar.arrive_and_wait()  # every consumer's stores are made before the signal
                    if tidx == 128:
                        for j in cutlass.range_constexpr(world):
                            dst = (rank + 1 + j) % world
                            if cutlass.const_expr(self.plant == "no-fence"):
                                cute.arch.store(flags[dst].iterator + rank * num_tiles + tile, epoch, sem="relaxed",
                                                scope="sys")
                            else:
                                cute.arch.fence_acq_rel_sys()
                                cute.arch.store(flags[dst].iterator + rank * num_tiles + tile, epoch, sem="release",
                                                scope="sys")
            # reduce: every rank's slot of each of this CTA's tiles, summed in rank order
            slots = [recvs[rank][(half, s, None, None)] for s in range(world)]
            for r in loop(tiles_per_cta):  # (names not shared with the loop above: runtime loops keep theirs)
                rtile = bidx + r * gdim
                if rtile < num_tiles:
                    rm, rn = self.tile_mn(rtile, tiles_m, tiles_n)
                    if tidx == 128:
                        for q in cutlass.range_constexpr(world):
                            wait_flag(flags[rank].iterator + q * num_tiles + rtile, epoch)
                    epi_bar.arrive_and_wait()
                    tSg = thr_rows.partition_S(cute.local_tile(slots[0], (bM, bN), (rm, rn)))
                    part = cute.make_fragment_like(tSg)
                    cute.copy(rows, tSg, part)
                    total = cute.make_fragment_like(part, cutlass.Float32)  # (a fragment: runtime loops carry it)
                    total.store(part.load().to(cutlass.Float32))
                    for q in cutlass.range_constexpr(1, world):
                        cute.copy(rows, thr_rows.partition_S(cute.local_tile(slots[q], (bM, bN), (rm, rn))), part)
                        total.store(total.load() + part.load().to(cutlass.Float32))
                    part.store(total.load().to(cdt))
                    cute.copy(rows, part, thr_rows.partition_D(cute.local_tile(mC, (bM, bN), (rm, rn))))
            epi_bar.arrive_and_wait()
            finish_call(state, epoch, tidx == 128, gdim)

    @cute.jit
    def fused(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, recvs: list, flags: list, state: cute.Tensor):
        """mC = sum over ranks of A_r B_r^T. recvs: every rank's (2, world, M, N) receive buffer (two halves),
        flags: every rank's (world * tiles,) Int32 flags; state: this rank's (2,) Int32 call counter (zeros
        at first; allreduce_push.finish_call)."""
        M, K = mA.shape
        N = mB.shape[0]
        bM, bN, bK = self.tile_mnk
        what = "gemm_allreduce"
        if mA.element_type != self.ab_dtype or mB.element_type != self.ab_dtype:
            raise ValueError(f"{what}: A and B hold {mA.element_type} and {mB.element_type}, the GEMM was made "
                             f"for {self.ab_dtype}")
        if mC.element_type.width != 16:
            raise ValueError(f"{what}: C holds {mC.element_type}; it must be Float16 or BFloat16 (16-byte row stores)")
        if M % bM or N % bN or K % bK:
            raise ValueError(f"{what}: M, N, K ({M}, {N}, {K}) must be multiples of the tile {self.tile_mnk}")
        check_buffers(what, recvs, (2, self.world, M, N), mC.element_type, flags, self.world * (M // bM) * (N // bN),
                      state, self.world)
        tiled_mma, a_smem, b_smem, tma_a, tA, tma_b, tB = self.make_atoms(mA, mB)
        ctas, per_cta = self.grid(M, N)
        self.kernel_ar(tma_a, tA, tma_b, tB, mC, recvs, flags, state, tiled_mma, a_smem, b_smem, per_cta).launch(
            grid=(ctas, 1, 1), block=(self.threads, 1, 1))


class Problem:
    """One rank's operands, symmetric buffers and the two ways of computing C (for this program's check
    and for benchmarks/distributed.py). Collective: every rank makes it with the same arguments."""

    def __init__(self, M: int, N: int, K: int, tile=(64, 64, 64), stages: int = 2, mma_wgs: int = 1, ctas: int = 0,
                 dtype: str = "bf16", plant: str = "none", dynamic: bool = False, seed: int = 0):
        import torch
        import torch.distributed as dist
        import torch.distributed._symmetric_memory as symm_mem

        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.M, self.N, self.K = M, N, K
        tdt = {"f16": torch.float16, "bf16": torch.bfloat16}[dtype]
        cdt = {"f16": cutlass.Float16, "bf16": cutlass.BFloat16}[dtype]
        self.unit = {"f16": 2.0 ** -11, "bf16": 2.0 ** -8}[dtype]  # unit roundoff of C's type
        on_gpu = not emulating()
        if ctas <= 0:  # one CTA per SM on a GPU (every CTA resident: the waits need it), per tile on the CPU
            ctas = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count if on_gpu else 0
        g = torch.Generator().manual_seed(seed * 1000 + self.rank)
        self.A = torch.randn(M, K, generator=g).to(tdt).cuda()
        self.B = torch.randn(N, K, generator=g).to(tdt).cuda()
        self.C = torch.zeros(M, N, dtype=tdt, device="cuda")
        kw = dict(ab_dtype=cdt, tile_mnk=tuple(tile), stages=stages, num_ctas=ctas or None, dynamic=dynamic,
                  mma_warpgroups=mma_wgs)
        self.gemm = GemmAllReduce(self.rank, self.world, plant=plant, **kw)
        self.plain = HopperGemm(warp_specialized=True, epilogue="smem", **kw)  # the unfused GEMM
        tiles = (M // tile[0]) * (N // tile[1])
        recv = symm_mem.empty((2, self.world, M, N), dtype=tdt, device="cuda")
        self._recv_h = symm_mem.rendezvous(recv, dist.group.WORLD)
        flag = symm_mem.empty((self.world * tiles,), dtype=torch.int32, device="cuda")
        flag.zero_()
        self._flag_h = symm_mem.rendezvous(flag, dist.group.WORLD)
        self._keep = (recv, flag)
        self.recvs = [from_dlpack(self._recv_h.get_buffer(r, (2, self.world, M, N), tdt), assumed_align=16)
                      for r in range(self.world)]
        self.flags = [from_dlpack(self._flag_h.get_buffer(r, (self.world * tiles,), torch.int32))
                      for r in range(self.world)]
        self.state = torch.zeros(2, dtype=torch.int32, device="cuda")  # the last call's epoch, CTAs done
        self.mstate = from_dlpack(self.state)
        self.mA, self.mB, self.mC = (from_dlpack(x, assumed_align=16) for x in (self.A, self.B, self.C))
        self._fused = self._plain = None  # compiled at the first call (cute.compile)
        dist.barrier()  # every rank's flags are zero before any kernel signals

    def fused(self) -> None:
        """C = the all-reduced GEMM, one fused kernel. Every call passes the same arguments (the epoch is
        counted on the device), so the compiled call only launches."""
        args = (self.mA, self.mB, self.mC, self.recvs, self.flags, self.mstate)
        if self._fused is None:
            self._fused = cute.compile(self.gemm.fused, *args)
        self._fused(*args)

    def unfused(self) -> None:
        """The same with HopperGemm (compiled), then dist.all_reduce (NCCL on GPUs)."""
        import torch.distributed as dist

        if self._plain is None:
            self._plain = cute.compile(self.plain, self.mA, self.mB, self.mC)
        self._plain(self.mA, self.mB, self.mC)
        dist.all_reduce(self.C)

    def check(self, what: str, roundings: int = 2) -> float:
        """Compare C with torch.matmul then dist.all_reduce (in f32); raise AssertionError outside the bound.
        roundings: how many times C's type rounds on the way (the fused kernel: each rank's tile, then the
        sum; a GEMM then an all-reduce in C's type: the GEMM, then each step of the reduction)."""
        import torch
        import torch.distributed as dist

        ref = torch.matmul(self.A.float(), self.B.float().t())
        mag = torch.matmul(self.A.float().abs(), self.B.float().abs().t())
        dist.all_reduce(ref)
        dist.all_reduce(mag)
        # C_r rounded once to C's type, the f32 sum of the slots rounded once more; f32 accumulation
        # (one rounding per k16 step) on the GPU and in torch
        tol = (roundings * self.unit + (self.K // 16 + 2 * self.world + 2) * 2.0 ** -24) * mag + 1e-6
        err = (self.C.float() - ref).abs()
        bad = int((err > tol).sum().item())
        worst = float(err.max().item())
        if bad:
            i = int((err - tol).argmax().item())
            raise AssertionError(f"gemm_allreduce ({what}), rank {self.rank}: {bad} of {err.numel()} elements outside "
                                 f"the bound; C[{i // self.N}, {i % self.N}] = {self.C.view(-1)[i].item()}, "
                                 f"expected {ref.view(-1)[i].item()} (bound {tol.view(-1)[i].item():.3g})")
        return worst


def main(argv=None) -> int:
    import torch
    import torch.distributed as dist

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mnk", default="128,256,128", help="M,N,K of each rank's GEMM (K is each rank's share)")
    p.add_argument("--tile", default="64,64,64")
    p.add_argument("--stages", type=int, default=2)
    p.add_argument("--mma-wgs", type=int, default=1)
    p.add_argument("--ctas", type=int, default=0, help="persistent CTAs (0: one per SM on a GPU, per tile on the CPU)")
    p.add_argument("--dtype", default="bf16", choices=["f16", "bf16"], help="A, B and C")
    p.add_argument("--calls", type=int, default=3, help="fused calls, each on new inputs and checked")
    p.add_argument("--dynamic", action="store_true", help="runtime tile and k loops (always on a GPU)")
    p.add_argument("--unfused", action="store_true", help="also check HopperGemm + dist.all_reduce")
    p.add_argument("--plant", default="none", choices=PLANTS)
    p.add_argument("--cuda", default=None, help="rank 0 writes the fused kernel's generated CUDA here")
    a = p.parse_args(argv)
    no_multicast("gemm_allreduce")
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))  # before NCCL picks a device
    dist.init_process_group(backend="nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    M, N, K = (int(x) for x in a.mnk.split(","))
    gpu = not emulating()
    pr = Problem(M, N, K, tile=[int(x) for x in a.tile.split(",")], stages=a.stages, mma_wgs=a.mma_wgs, ctas=a.ctas,
                 dtype=a.dtype, plant=a.plant, dynamic=a.dynamic or gpu)
    worst = 0.0
    for c in range(a.calls):
        if c:  # new inputs: a call that read a stale slot would not pass
            pr.A.neg_() if c % 2 else pr.A.mul_(2)
        pr.fused()
        torch.cuda.synchronize()
        worst = max(worst, pr.check(f"fused call {c + 1}"))
    if a.cuda and rank == 0:
        from cutelab.kernel.cuda import printer
        from cutelab.kernel.launch.plan import last_launch

        with open(a.cuda, "w") as f:
            f.write(printer.render(last_launch().ir))
    if a.unfused:
        pr.unfused()
        torch.cuda.synchronize()
        pr.check("HopperGemm + dist.all_reduce", roundings=world + 1)
    dist.barrier()
    if rank == 0:
        print(f"gemm_allreduce: {world} ranks, {M}x{N}x{K} {a.dtype} per rank, {a.calls} fused calls: results verified "
              f"(max |C - torch.matmul + dist.all_reduce| = {worst:.3g})")
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
