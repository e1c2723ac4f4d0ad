"""An SM90 (Hopper) GEMM written with cutelab in CuTe DSL style: TMA loads into 128-byte-swizzled
shared memory, an mbarrier pipeline (``PipelineTmaAsync``), ``wgmma`` through a warpgroup
TiledMMA, and a persistent tile schedule (each CTA walks tiles ``bid, bid + grid, ...``).

    C[m, n] = sum_k A[m, k] * B[n, k]        A: M x K, B: N x K (both K-major), C: M x N

A and B f16 or bf16 (``--dtype``), accumulated in f32; C f32, f16 or bf16 (``--c-dtype``: the f32
accumulators rounded once, in the epilogue). With fp8 A and B (``--dtype e4m3`` or ``e5m2``: wgmma
m64nNk32, K-major operands as wgmma requires for 8-bit types, bK 128 for 128-byte k-tile rows) the
kernel also takes two per-tensor scales (1-element f32 tensors, read by the kernel) and writes
``C = (A B^T) * scale_a * scale_b`` rounded once to C's type, as ``torch._scaled_mm(a, b.t(), scale_a,
scale_b, out_dtype=...)`` does. The tensor cores' fp8 accumulation keeps about 14 bits (torch's
``use_fast_accum=True``); ``--promote N`` (kernel_ws) adds the wgmma accumulators into f32 registers
every N k-tiles and restarts them, as cuBLAS does for ``use_fast_accum=False`` (twice the accumulator
registers: at most 64 x 128 per consumer warpgroup, e.g. 128x128x128 tiles on two).

``--pingpong`` (with ``--ws --mma-wgs 2``): each consumer warpgroup takes whole tiles of its own (64x256 or
128x128), the CTA's even and odd ones; their mainloops go in turn (named barriers 3 and 4: a warpgroup
waits on the shared ring at most a lap ahead), so that one's epilogue (its own C buffer and barrier) runs
while the other multiplies, as CUTLASS's ping-pong kernels do. With a 16-bit C, ``kernel_ws`` by default
(``--epilogue tma``) keeps a finished tile's rounded C in registers, and while the next tile's first wgmmas run
writes it into 128-byte-swizzled column blocks of shared memory (no bank conflicts) that one warp stores with TMA,
asynchronously (``--no-defer``: at the tile's end); the consumers do not wait for C's bytes to leave. With
``--epilogue smem`` the consumer threads copy the buffer out themselves with 16-byte stores of whole rows, at the
tile's end (from registers, each thread's column pairs were 4-byte stores spread over 8 rows, and the tensor cores
waited for them). With ``--epilogue regs`` it keeps the rounded tile in registers and stores it while the next
tile's first wgmmas run (``--no-defer``: at the tile's end).

``--cluster-m 2`` (kernel_ws): clusters of two CTAs along M that take tiles (2m, n) and (2m + 1, n) of the
persistent schedule together; each loads its own A tile and half of their common B tile, which TMA multicasts into
both CTAs' shared memory (a third less L2 -> SM traffic per CTA at 128x256), and a stage is freed for both producers
once both CTAs' consumers release it, as cuBLAS's and CUTLASS's 2x1 clusters do.

``--cluster-n 2`` (kernel_ws): clusters of two CTAs along N instead, tiles (m, 2n) and (m, 2n + 1), each loading half
of their common A tile and multicasting it (cuBLAS's nvjet 1x2 kernels). ``--raster-m``: the tiles go in groups of
``--raster`` along M, column after column, instead of along N.

``--epi-cols C`` (the TMA epilogue): a C buffer of C of the tile's bN columns; a tile's C goes out in bN / C passes
through it, each pass waiting for the previous one's TMA stores to have read the buffer (deferred: pass q after the next
tile's k-tile q). It leaves room for a 4th stage: cuBLAS's 256x128x64 tile with 4 stages (192 KiB) and a 256x64 buffer
(32 KiB), ``--tile 256,128,64 --stages 4 --epi-cols 64 --cluster-n 2``; the two consumer warpgroups then take 128 rows
each (two m64n128 wgmmas per k16 step).

``--stream-k`` (kernel_ws, deferred TMA epilogue): the whole waves of tiles go as before, and the tiles of the last,
partial wave are cut along K and shared out evenly over all clusters (examples/gemm/sm90_streamk.py: partial sums
through a workspace in global memory and a flag per tile; the call takes ``mWork`` and ``mFlags``, sized by
``workspace_shape``). At 4096^3 in 128x256 tiles the busiest SM then multiplies 192 + 57 k-tiles instead of 256.

Two kernels: ``kernel`` follows CuTe DSL's Hopper ``dense_gemm.py`` (one warpgroup; its warp 0
issues the TMA loads of the next stages while the warpgroup multiplies the current one), and
``kernel_ws`` (``--ws``) is warp specialised: a producer warpgroup (``setmaxregister_decrease``,
its warp 0 loads) and a consumer warpgroup (``setmaxregister_increase``, wgmma, epilogue) in
the two branches of one if/else, which the CPU interpreter runs as coroutines that meet at the
mbarriers.

Run on the CPU (the interpreter; exact products, f32 accumulation per k16 step)::

    PYTHONPATH=src python examples/gemm/sm90_gemm.py --mnk 256,256,128

and on an H100 (torch CUDA tensors; compiles once with ``cute.compile``, checks against torch and
times the compiled call: back to back, one at a time, and the remembered ``@cute.jit`` call)::

    PYTHONPATH=src python examples/gemm/sm90_gemm.py --gpu --ws --mma-wgs 2 --mnk 4096,4096,4096 --ctas 0 \
        --tile 128,256,64 --stages 3 --dtype bf16 --c-dtype bf16

and fp8 (e4m3 in, bf16 out, checked against torch._scaled_mm; a stage of 128x256x128 is 48 KiB, as
128x256x64 is for 16-bit types)::

    PYTHONPATH=src python examples/gemm/sm90_gemm.py --gpu --ws --mma-wgs 2 --mnk 8192,8192,8192 --ctas 0 \
        --tile 128,256,128 --stages 3 --dtype e4m3 --c-dtype bf16

(CuTe DSL's configuration: a 128x256x64 tile, two consumer warpgroups of 64 rows each, 4 stages of
48 KiB, 197 KiB of shared memory. Here 3 stages and the 64 KiB C buffer make 208 KiB; tiles go in
groups of 4 along N, ``--raster`` (4 and 8 tie at 4096^3; 4 is better at 8192^3). At 4096^3 a tile's
mainloop is half as long as at 8192^3, so whatever the consumers spend on a tile's C weighs twice as much:
the reason for the TMA epilogue.)

``HopperGemm.__call__`` is a ``@cute.jit`` function (as in CuTe DSL's example): the atoms and tensor
maps are made when it is traced, and a compiled call only writes the tensors' addresses into the
prepared parameter buffer (re-encoding a TMA tensor map only for an address it has not seen).

``--cuda FILE`` writes the generated CUDA (inline PTX: cp.async.bulk.tensor, mbarrier, wgmma)
for ``nvcc -arch=sm_90a``. On a GPU the launch encodes the TMA tensor maps
(``const __grid_constant__`` parameters ``tmap_<tensor>`` after the others; cutelab.kernel.instr.tma).
The tile and k loops are unrolled at trace time by default; ``--dynamic`` (always on with
``--gpu``) makes them runtime loops, the pipeline states then derived from the loop indices.
As in CuTe DSL's example, the wgmmas of one k-tile run while the next k-tile's data is awaited
(``wait_group(1)``, then the previous stage is released and refilled).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import cutelab as cute
import cutelab as cutlass
from cutelab import pipeline
from cutelab.nvgpu import OperandMajorMode, cpasync, warpgroup
from cutelab.runtime import from_dlpack
from cutelab.utils import sm90 as sm90_utils

sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from sm90_streamk import StreamKTail, add_slot, in_range, store_slot, wait_count, workspace_shape  # noqa: E402


def _state_at(base, n):
    """The pipeline state n stages after base (n an int or an index expression of the kernel)."""
    s = base.clone()
    if not (isinstance(n, int) and n == 0):
        s.advance(n)
    return s


class _WarpgroupBarrier:
    """A named barrier of one warpgroup (128 threads) whose id is a value of the kernel (``cute.arch.barrier``)."""

    def __init__(self, barrier_id):
        self.barrier_id = barrier_id

    def arrive_and_wait(self):
        cute.arch.barrier(barrier_id=self.barrier_id, number_of_threads=128)


class HopperGemm:
    """C = A B^T with tiles (bM, bN, bK) through ``stages`` smem stages, on ``num_ctas`` persistent CTAs:
    one warpgroup per CTA (``kernel``), or a producer warpgroup and ``mma_warpgroups`` consumer
    warpgroups (``warp_specialized``: ``kernel_ws``)."""

    def __init__(self, ab_dtype=cutlass.Float16, tile_mnk=(64, 64, 64), stages=2, num_ctas=None, dynamic=False,
                 warp_specialized=False, mma_warpgroups=1, raster=4, defer_epilogue=True, epilogue="auto", promote=0,
                 pingpong=False, cluster_m=1, cluster_n=1, raster_m=False, epi_cols=None, k_unroll=0,
                 stream_k=False):
        if ab_dtype not in (cutlass.Float16, cutlass.BFloat16, cutlass.Float8E4M3FN, cutlass.Float8E5M2):
            raise ValueError(f"HopperGemm: ab_dtype {ab_dtype}: Float16, BFloat16, Float8E4M3FN or Float8E5M2")
        # wgmma's k per instruction (16 for 16-bit types, 32 for fp8); a k-tile row of at most 128 bytes (the swizzle)
        k_inst = 256 // ab_dtype.width
        if tile_mnk[2] % k_inst or tile_mnk[2] * ab_dtype.width > 1024:
            raise ValueError(f"HopperGemm: bK = {tile_mnk[2]} must be a multiple of {k_inst} (wgmma's k for {ab_dtype}) "
                             f"and at most {1024 // ab_dtype.width} (128 bytes)")
        self.ab_dtype = ab_dtype
        self.acc_dtype = cutlass.Float32
        self.tile_mnk = tile_mnk
        self.stages = stages
        self.num_ctas = num_ctas
        self.dynamic = dynamic  # runtime tile and k loops (compact code for large problems) or unrolled ones
        self.warp_specialized = warp_specialized
        # one warpgroup (MMA, its warp 0 also issues the TMA loads), or a producer and a consumer warpgroup
        self.mma_warpgroups = mma_warpgroups  # warp specialised: consumer warpgroups, tiled along M
        if mma_warpgroups != 1 and not warp_specialized:
            raise ValueError("HopperGemm: more than one MMA warpgroup needs warp_specialized=True")
        # ping-pong (kernel_ws, two consumer warpgroups): each consumer warpgroup takes whole tiles, the CTA's even
        # and odd ones in turn; the producer fills the ring tile after tile, so one warpgroup's mainloop runs while
        # the other one's epilogue does (CUTLASS's KernelTmaWarpSpecializedPingpong). The tile is one warpgroup's
        if pingpong and not (warp_specialized and mma_warpgroups == 2):
            raise ValueError("HopperGemm: pingpong needs warp_specialized=True and mma_warpgroups=2")
        self.pingpong = pingpong
        # kernel_ws: clusters of cluster_m CTAs along M (1 or 2); the two CTAs of a cluster take tiles (2 m, n) and
        # (2 m + 1, n), which read the same B tile: each loads half of it and TMA multicasts it into both CTAs'
        # shared memory (a third less L2 -> SM traffic per CTA at 128x256), as cuBLAS's 2x1 clusters do
        if cluster_m not in (1, 2):
            raise ValueError(f"HopperGemm: cluster_m={cluster_m!r}: 1 or 2 CTAs per cluster along M")
        if cluster_m > 1 and not warp_specialized:
            raise ValueError("HopperGemm: cluster_m=2 is kernel_ws's (warp_specialized=True)")
        # or clusters of cluster_n CTAs along N (1x2, as cuBLAS's nvjet 1x2 kernels): tiles (m, 2 n) and (m, 2 n + 1)
        # read the same A tile, each CTA loads half of it and TMA multicasts it into both
        if cluster_n not in (1, 2):
            raise ValueError(f"HopperGemm: cluster_n={cluster_n!r}: 1 or 2 CTAs per cluster along N")
        if cluster_n > 1 and not warp_specialized:
            raise ValueError("HopperGemm: cluster_n=2 is kernel_ws's (warp_specialized=True)")
        if cluster_m > 1 and cluster_n > 1:
            raise ValueError("HopperGemm: cluster_m=2 and cluster_n=2: a cluster of two CTAs along M or along N, "
                             "not both")
        self.cluster_m, self.cluster_n = cluster_m, cluster_n
        self.cluster_size = cluster_m * cluster_n
        tile_wgs = 1 if pingpong else mma_warpgroups  # consumer warpgroups sharing one tile
        if tile_mnk[0] % (64 * tile_wgs):
            raise ValueError(f"HopperGemm: bM = {tile_mnk[0]} must be a multiple of 64 * {tile_wgs} warpgroups")
        self.threads = 128 * (1 + mma_warpgroups) if warp_specialized else 128
        self.raster = raster  # tiles along N walked before the next row of tiles (L2 reuse; 1: M-fastest)
        self.raster_m = raster_m  # or: groups of `raster` tiles along M, walked before the next column of tiles
        self.defer_epilogue = defer_epilogue  # kernel_ws, 16-bit C: store a tile's C during the next tile
        if epilogue not in ("auto", "regs", "smem", "tma"):
            raise ValueError(f"HopperGemm: epilogue={epilogue!r}: 'auto', 'regs', 'smem' or 'tma'")
        if epilogue in ("smem", "tma") and not warp_specialized:
            raise ValueError(f"HopperGemm: epilogue={epilogue!r} is kernel_ws's (warp_specialized=True)")
        # kernel_ws: 'regs' stores C from the accumulators' registers (4-byte stores of each thread's
        # column pairs); 'smem' writes the rounded tile into a swizzled shared buffer and copies it out
        # with 16-byte stores of whole rows (8x fewer L1 store wavefronts: 659 -> 737 TFLOP/s at 4096^3
        # bf16 on an H100); 'tma' writes it into 128-byte-swizzled column blocks (bM x 64 for a 16-bit C) that one
        # thread stores with TMA (cp.async.bulk.tensor), asynchronously: the consumers go on to the next tile at
        # once instead of copying 64 KiB out through their own loads and stores, and with defer_epilogue the
        # rounded tile waits in registers and goes to shared memory while the next tile's first wgmmas run;
        # 'auto': 'tma' for a 16-bit C where the buffer fits beside the stages
        self.epilogue = epilogue
        # the TMA epilogue's C buffer: epi_cols of the tile's bN columns (None: all). A tile's C then goes out in
        # bN / epi_cols passes through the one buffer, each waiting for the previous pass's TMA stores to have read
        # it; deferred, pass p runs after the next tile's k-tile p is issued. A smaller buffer leaves room for a
        # 4th stage (256x128x64: 4 stages of 48 KiB and a 256x64 buffer of 32 KiB fit in 227 KiB)
        if epi_cols is not None and epi_cols != tile_mnk[1]:
            if epi_cols <= 0 or tile_mnk[1] % epi_cols:
                raise ValueError(f"HopperGemm: epi_cols={epi_cols} must divide bN = {tile_mnk[1]}")
            if not warp_specialized or pingpong or epilogue not in ("auto", "tma"):
                raise ValueError(f"HopperGemm: epi_cols={epi_cols} is the TMA epilogue's of kernel_ws without "
                                 f"ping-pong (warp_specialized=True, epilogue 'auto' or 'tma')")
        self.epi_cols = tile_mnk[1] if epi_cols is None else epi_cols
        # kernel_ws's consumer k-loop: copies of its body per trip (#pragma unroll k_unroll; 0: the compiler's choice).
        # With k_unroll = stages and a k-tile count per tile that is a multiple of it, each copy's stage is a constant:
        # its wgmma descriptors and barrier addresses are computed once, outside the loop
        if k_unroll < 0:
            raise ValueError(f"HopperGemm: k_unroll={k_unroll}: 0 (the compiler's choice) or copies per trip")
        self.k_unroll = k_unroll
        self.epi_passes = tile_mnk[1] // self.epi_cols
        # kernel_ws: 0, or add the wgmmas' accumulators into f32 registers every `promote` k-tiles and restart them
        # (fp8: the tensor cores' fp8 accumulation keeps about 14 bits; torch._scaled_mm's default,
        # use_fast_accum=False, promotes likewise). Twice the accumulator registers: 64 x bN per warpgroup twice
        if promote and not warp_specialized:
            raise ValueError("HopperGemm: promote is kernel_ws's (warp_specialized=True)")
        if promote and tile_mnk[0] // tile_wgs * tile_mnk[1] * 2 > 128 * 128:
            raise ValueError(f"HopperGemm: promote={promote} keeps two f32 accumulators of {tile_mnk[0] // tile_wgs}"
                             f"x{tile_mnk[1]} per consumer warpgroup: {tile_mnk[0] // tile_wgs * tile_mnk[1] * 2 // 128}"
                             f" registers a thread, more than 128 (a 64x128 share, e.g. 128x128 tiles on 2 warpgroups)")
        self.promote = promote
        # the last partial wave cut along K and shared out evenly (sm90_streamk.py); kernel_ws with the deferred TMA
        # epilogue (check_epilogue), a workspace of partial sums and flags passed to the call
        if stream_k and (not warp_specialized or pingpong or promote):
            raise ValueError("HopperGemm: stream_k is kernel_ws's without ping-pong or promote (warp_specialized=True, "
                             "pingpong=False, promote=0)")
        self.stream_k = stream_k

    def loop(self, *args, unroll=None):
        """The kernels' tile and k loops: ``cutlass.range`` (a loop in the CUDA; ``unroll``: copies of
        its body per trip, 1 for none) when dynamic, else ``range`` (unrolled at trace time)."""
        return cutlass.range(*args, unroll=unroll) if self.dynamic else range(*args)

    @staticmethod
    def scaled(acc, scale):
        """The accumulators' values times the per-tensor scale (an f32 of the kernel, or None: unscaled)."""
        v = acc.load()
        return v if scale is None else v * scale

    @staticmethod
    def load_scale(mSA, mSB):
        """scale_a * scale_b, read from the two 1-element f32 tensors (None without them), as
        torch._scaled_mm applies its per-tensor scales: to the f32 accumulators, before C's rounding."""
        if mSA is None:
            return None
        return mSA[0] * mSB[0]

    def store_c(self, acc, tCgC, scale=None):
        """The epilogue: the accumulators (f32, times scale when given) to C's tile in global memory
        through the accumulator's TV layout, converted to C's element type first (f16/bf16 halve the
        bytes stored)."""
        out = acc
        if tCgC.element_type != self.acc_dtype or scale is not None:
            out = cute.make_fragment_like(acc, tCgC.element_type)
            out.store(self.scaled(acc, scale).to(tCgC.element_type))
        cute.copy(cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), tCgC.element_type), out, tCgC)

    def tile_mn(self, tile, tiles_m, tiles_n):
        """(m, n) of tile number ``tile`` (an index expression): the tiles go in groups of ``G`` columns
        (G the largest of raster, raster/2, ... dividing tiles_n), row after row within a group, so
        that the CTAs running at once share fewer, and more reused, A and B panels in L2. With raster_m the roles of
        M and N are swapped: groups of G rows, column after column within a group."""
        if self.raster_m:
            n, m = self._raster(tile, tiles_n, tiles_m)
            return m, n
        return self._raster(tile, tiles_m, tiles_n)

    def _raster(self, tile, tiles_m, tiles_n):
        """tile_mn's walk along N: groups of G columns, row after row within a group."""
        G = max(g for g in range(1, max(1, self.raster) + 1) if tiles_n % g == 0 and self.raster % g == 0)
        if G == 1:
            return tile % tiles_m, tile // tiles_m
        local = tile % (G * tiles_m)
        return local // G, (tile // (G * tiles_m)) * G + local % G

    def cta_tile_mn(self, tile, rank, tiles_m, tiles_n):
        """(m, n) of the CTA of rank ``rank`` in its cluster for schedule tile ``tile``: the cluster tile (m', n') of
        tile_mn over tiles_m / cluster_m rows and tiles_n / cluster_n columns, and this CTA's tile of it
        (m' cluster_m + rank, n') or (m', n' cluster_n + rank)."""
        cm, cn = self.cluster_m, self.cluster_n
        if cm * cn == 1:
            return self.tile_mn(tile, tiles_m, tiles_n)
        m, n = self.tile_mn(tile, tiles_m // cm, tiles_n // cn)
        return (m * cm + rank, n) if cm > 1 else (m, n * cn + rank)

    def make_atoms(self, mA, mB):
        bM, bN, bK = self.tile_mnk
        if self.ab_dtype.width == 8:  # e4m3 / e5m2: k32 instructions, K-major operands only (wgmma's rule)
            op = warpgroup.MmaF8Op(self.ab_dtype, self.ab_dtype, self.acc_dtype, (64, bN, 32),
                                   warpgroup.OperandSource.SMEM, OperandMajorMode.K, OperandMajorMode.K)
        else:
            op = warpgroup.MmaF16BF16Op(self.ab_dtype, self.acc_dtype, (64, bN, 16), warpgroup.OperandSource.SMEM,
                                        OperandMajorMode.K, OperandMajorMode.K)
        tiled_mma = cute.make_tiled_mma(op, (1 if self.pingpong else self.mma_warpgroups, 1, 1))
        row = sm90_utils.LayoutEnum.ROW_MAJOR
        a_smem = sm90_utils.make_smem_layout_a(row, self.tile_mnk, self.ab_dtype, self.stages)
        b_smem = sm90_utils.make_smem_layout_b(row, self.tile_mnk, self.ab_dtype, self.stages)
        if self.cluster_n > 1:  # A's tile loaded in halves, each multicast to both CTAs of the cluster
            tma_a, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SMulticastOp(), mA,
                                                    cute.slice_(a_smem, (None, None, 0)), (bM, bK),
                                                    num_multicast=self.cluster_n)
        else:
            tma_a, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), mA,
                                                    cute.slice_(a_smem, (None, None, 0)), (bM, bK))
        if self.cluster_m > 1:  # B's tile loaded in halves, each multicast to both CTAs of the cluster
            tma_b, tB = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SMulticastOp(), mB,
                                                    cute.slice_(b_smem, (None, None, 0)), (bN, bK),
                                                    num_multicast=self.cluster_m)
        else:
            tma_b, tB = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), mB,
                                                    cute.slice_(b_smem, (None, None, 0)), (bN, bK))
        return tiled_mma, a_smem, b_smem, tma_a, tA, tma_b, tB

    def shared_storage(self, a_smem, b_smem, consumer_warps, c_dtype=None, c_buffers=1, c_layout=None, **create):
        """The pipeline's barriers and the A/B stages in shared memory (128B-swizzled, as TMA writes
        them), and the TMA pipeline over them (its consumers: consumer_warps warps); with c_dtype also
        a (bM, bN) C buffer for the 'smem' epilogue (returned last; c_buffers=2: (bM, bN, 2), one per
        ping-pong warpgroup; c_layout: the TMA store's swizzled layout of it, ``c_smem_layout``'s)."""
        bM, bN, bK = self.tile_mnk
        smem = cutlass.utils.SmemAllocator()
        bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(2 * self.stages), 8)
        sA = smem.allocate_tensor(self.ab_dtype, a_smem.outer, 1024, swizzle=a_smem.inner)
        sB = smem.allocate_tensor(self.ab_dtype, b_smem.outer, 1024, swizzle=b_smem.inner)
        if c_layout is not None:
            sC = smem.allocate_tensor(c_dtype, c_layout.outer, 1024, swizzle=c_layout.inner)
        elif c_dtype is not None:
            # row-major; a swizzle of the byte address (as allocate_tensor applies it) that XORs the 16-byte
            # chunk index with the row's low 3 bits: the accumulators' column pairs of 8 rows land in 8
            # different chunks (no bank conflicts), and 16-byte chunks stay whole for the copy-out
            shift = (bN * c_dtype.width // 8).bit_length() - 1 - 4  # log2(row bytes) - log2(16)
            c_layout = cute.make_layout((bM, bN), stride=(bN, 1)) if c_buffers == 1 else \
                cute.make_layout((bM, bN, c_buffers), stride=(bN, 1, bM * bN))
            sC = smem.allocate_tensor(c_dtype, c_layout, 1024, swizzle=cute.make_swizzle(min(3, shift), 4, shift))
        mainloop = pipeline.PipelineTmaAsync.create(
            barrier_storage=bars.iterator, num_stages=self.stages,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            # in a cluster a stage's consumers are both CTAs' (the partner's B half lands in it too), and its
            # barrier awaits the whole stage's bytes, whichever CTA loaded them
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, consumer_warps * self.cluster_size),
            tx_count=(bM + bN) * bK * self.ab_dtype.width // 8, **create)
        if c_dtype is not None:
            return sA, sB, mainloop, sC
        return sA, sB, mainloop

    def tma_loads(self, tma_a, mA, sA, tma_b, mB, sB, tm, tn, rank=0):
        """Tile (tm, tn)'s TMA loads: (atom, k-tiles of global memory, stages of shared memory, multicast mask or
        None) for A and B; in a cluster of 2 (rank: the CTA's in it) B's slice ``rank`` of 2 (clusters along M) or
        A's (along N), multicast to both."""
        bM, bN, bK = self.tile_mnk
        loads = []
        for atom, m, s, rows, t, mc in ((tma_a, mA, sA, bM, tm, self.cluster_n),
                                        (tma_b, mB, sB, bN, tn, self.cluster_m)):
            g = cute.local_tile(m, (rows, bK), (t, None))  # (rows, bK, k_tiles)
            ts, tg = cpasync.tma_partition(atom, rank if mc > 1 else 0, cute.make_layout(mc),
                                           cute.group_modes(s, 0, 2), cute.group_modes(g, 0, 2))
            loads.append((atom, tg, ts, (1 << mc) - 1 if mc > 1 else None))
        return loads

    @staticmethod
    def c_block(c_dtype):
        """Columns of C in one 128-byte row: the TMA store's box width (its 128-byte swizzle's span)."""
        return 1024 // c_dtype.width

    def c_smem_layout(self, c_dtype, c_buffers=1):
        """The TMA epilogue's C buffer(s) in shared memory: (bM, bN, c_buffers), row-major column blocks of
        c_block(c_dtype) columns (bM rows of 128 bytes each), 128-byte swizzled as TMA reads them (the
        accumulators' column pairs of 8 rows land in 8 different 16-byte chunks: no bank conflicts). With
        epi_cols < bN the buffer holds epi_cols columns, and the (bM, bN) view maps pass p's columns
        p epi_cols .. (p + 1) epi_cols - 1 onto it (the passes' mode has stride 0)."""
        bM, bN = self.tile_mnk[:2]
        full = sm90_utils.make_smem_layout_epi(c_dtype, sm90_utils.LayoutEnum.ROW_MAJOR, (bM, bN), c_buffers)
        if self.epi_passes == 1:
            return full
        cw = self.c_block(c_dtype)
        (m_shape, (cw_, blocks), mode2), (m_stride, (one, block), stride2) = full.outer.shape, full.outer.stride
        assert cw_ == cw and one == 1 and blocks == bN // cw and c_buffers == 1, full
        outer = cute.make_layout((m_shape, (cw, (self.epi_cols // cw, self.epi_passes)), mode2),
                                 stride=(m_stride, (1, (block, 0)), stride2))
        return cute.make_composed_layout(full.inner, 0, outer)

    def make_tma_c(self, mC):
        """The TMA store atom of one (bM, c_block) box of C, and C's TMA tensor (host side, as A's and B's)."""
        cw = self.c_block(mC.element_type)
        box = sm90_utils.make_smem_layout_epi(mC.element_type, sm90_utils.LayoutEnum.ROW_MAJOR,
                                              (self.tile_mnk[0], cw), 1)
        return cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileS2GOp(), mC, cute.slice_(box, (None, None, 0)),
                                           (self.tile_mnk[0], cw))

    def tma_store_tile(self, tma_c, sC, mCt, tm, tn, epi_pass=0):
        """The issuing warp's part of the TMA epilogue: pass epi_pass of tile (tm, tn) of C from the buffer sC, one
        TMA box per column block, committed as one bulk group (it runs on while the consumers go on)."""
        bM, bN, _ = self.tile_mnk
        cw = self.c_block(mCt.element_type)
        gC = cute.local_tile(mCt, (bM, bN), (tm, tn))
        per_pass = self.epi_cols // cw
        for j in range(epi_pass * per_pass, (epi_pass + 1) * per_pass):
            ts, tg = cpasync.tma_partition(tma_c, 0, cute.make_layout(1),
                                           cute.group_modes(cute.local_tile(sC, (bM, cw), (0, j)), 0, 2),
                                           cute.group_modes(cute.local_tile(gC, (bM, cw), (0, j)), 0, 2))
            cute.copy(tma_c, ts, tg)
        cute.arch.cp_async_bulk_commit_group()

    @staticmethod
    def load_k_tile(mainloop, state, loads, k_tile):
        """The producer's part of one k-tile: wait for the stage to be free, load A's and B's k-tile
        into it, arm its barrier (one thread)."""
        mainloop.producer_acquire(state)
        for atom, tg, ts, mask in loads:
            if mask is None:
                cute.copy(atom, tg[(None, k_tile)], ts[(None, state.index)],
                          tma_bar_ptr=mainloop.producer_get_barrier(state))
            else:
                cute.copy(atom, tg[(None, k_tile)], ts[(None, state.index)],
                          tma_bar_ptr=mainloop.producer_get_barrier(state), mcast_mask=mask)
        mainloop.producer_commit(state)

    @staticmethod
    def mma_k_tile(tiled_mma, acc, tCsA, tCsB, stage, first=False):
        """The wgmmas of one k-tile on the stage `stage`, committed as one group (the first k-tile of a
        tile starts the accumulators)."""
        if first:
            tiled_mma.set(warpgroup.Field.ACCUMULATE, False)
        warpgroup.fence()
        for kb in range(cute.size(tCsA, mode=[2])):
            cute.gemm(tiled_mma, acc, tCsA[(None, None, kb, stage)], tCsB[(None, None, kb, stage)], acc)
            if first:
                tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
        warpgroup.commit_group()

    @staticmethod
    def mma_k_tiles(mainloop, consumer, tiled_mma, acc, tCsA, tCsB, first, start, count):
        """The consumers' k-tiles start .. start + count - 1 (unrolled; start may be an index expression) of
        the tile whose first k-tile is at ring position first: each awaited, multiplied, and the previous
        one's stage released once its wgmmas are done (the wgmmas of k-tile k run while k + 1 is awaited)."""
        for k_tile in (start + j for j in range(count)):
            rs = _state_at(consumer, first + k_tile)
            mainloop.consumer_wait(rs)
            HopperGemm.mma_k_tile(tiled_mma, acc, tCsA, tCsB, rs.index)
            warpgroup.wait_group(1)
            mainloop.consumer_release(_state_at(consumer, first + k_tile - 1))

    @cute.kernel
    def kernel(self, tma_a: cutlass.Constexpr, mA: cute.Tensor, tma_b: cutlass.Constexpr, mB: cute.Tensor,
               mC: cute.Tensor, tiled_mma: cutlass.Constexpr, a_smem: cutlass.Constexpr, b_smem: cutlass.Constexpr,
               tiles_per_cta: cutlass.Constexpr, mSA: cute.Tensor, mSB: cute.Tensor, tma_c: cutlass.Constexpr = None,
               mCt: cute.Tensor = None):
        bM, bN, bK = self.tile_mnk
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        gdim, _, _ = cute.arch.grid_dim()
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())

        sA, sB, mainloop = self.shared_storage(a_smem, b_smem, self.threads // 32, defer_sync=True)
        pipeline.pipeline_init_arrive()
        pipeline.pipeline_init_wait()

        thr_mma = tiled_mma.get_slice(tidx)
        tCsA = thr_mma.partition_A(sA)  # ((64,16), RestM, RestK, stages)
        tCsB = thr_mma.partition_B(sB)

        M, N = mC.shape
        K = mA.shape[1]
        tiles_m, tiles_n, k_tiles = M // bM, N // bN, K // bK
        num_tiles = tiles_m * tiles_n

        producer = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, self.stages)
        consumer = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.stages)
        prefetch = min(self.stages, k_tiles)
        scale = self.load_scale(mSA, mSB)  # fp8's per-tensor scales (None without them)

        loop = self.loop  # runtime loops, or unrolled at trace time
        for i in loop(tiles_per_cta):  # persistent schedule: tile bidx + i * grid
            tile = bidx + i * gdim
            if tile < num_tiles:
                tm, tn = self.tile_mn(tile, tiles_m, tiles_n)
                loads = self.tma_loads(tma_a, mA, sA, tma_b, mB, sB, tm, tn)
                tCgC = thr_mma.partition_C(cute.local_tile(mC, (bM, bN), (tm, tn)))
                acc = cute.make_rmem_tensor(tCgC.shape, self.acc_dtype)
                first = i * k_tiles  # ring position of this tile's first k-tile

                for p in range(prefetch):  # prefetch the first stages
                    ps = _state_at(producer, first + p)
                    if warp_idx == 0:
                        self.load_k_tile(mainloop, ps, loads, p)

                # k-tile 0, peeled: its first wgmma starts the accumulators
                cs = _state_at(consumer, first)
                mainloop.consumer_wait(cs)
                self.mma_k_tile(tiled_mma, acc, tCsA, tCsB, cs.index, first=True)

                for k_tile in loop(1, k_tiles):  # mainloop: the wgmmas of k-tile k overlap the wait for k + 1
                    rs = _state_at(consumer, first + k_tile)
                    mainloop.consumer_wait(rs)
                    self.mma_k_tile(tiled_mma, acc, tCsA, tCsB, rs.index)
                    warpgroup.wait_group(1)  # the wgmmas of k-tile k - 1 are done: release its stage
                    mainloop.consumer_release(_state_at(consumer, first + k_tile - 1))
                    nk = k_tile - 1 + self.stages
                    if nk < k_tiles:
                        ws = _state_at(producer, first + nk)
                        if warp_idx == 0:  # load k-tile nk into the stage just released
                            self.load_k_tile(mainloop, ws, loads, nk)
                warpgroup.wait_group(0)
                mainloop.consumer_release(_state_at(consumer, first + k_tiles - 1))
                self.store_c(acc, tCgC, scale)

    @cute.kernel
    def kernel_ws(self, tma_a: cutlass.Constexpr, mA: cute.Tensor, tma_b: cutlass.Constexpr, mB: cute.Tensor,
                  mC: cute.Tensor, tiled_mma: cutlass.Constexpr, a_smem: cutlass.Constexpr,
                  b_smem: cutlass.Constexpr, tiles_per_cta: cutlass.Constexpr, mSA: cute.Tensor, mSB: cute.Tensor,
                  tma_c: cutlass.Constexpr = None, mCt: cute.Tensor = None, mWork: cute.Tensor = None,
                  mFlags: cute.Tensor = None):
        """Warp specialised: warpgroup 0 produces (its warp 0 issues the TMA loads), warpgroup 1
        consumes (wgmma and the epilogue); they meet only at the pipeline's mbarriers."""
        bM, bN, bK = self.tile_mnk
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        gdim, _, _ = cute.arch.grid_dim()
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        warp_group = cute.arch.make_warp_uniform(tidx // 128)

        kind = self.epilogue_kind(mC.element_type.width)
        tma_epi = kind.startswith("tma")
        smem_epi = kind == "smem" or tma_epi  # through a C buffer in shared memory
        pingpong = self.pingpong
        stage_warps = 4 if pingpong else 4 * self.mma_warpgroups  # the warps that consume each stage
        c = self.cluster_size
        # a cluster's pipeline: barriers signalled from both CTAs, initialised before either CTA uses them
        cl = dict(cta_layout_vmnk=cute.make_layout((1, c, 1, 1)), defer_sync=True) if c > 1 else {}
        if smem_epi:
            c_buffers = 2 if pingpong else 1
            sA, sB, mainloop, sC_all = self.shared_storage(
                a_smem, b_smem, stage_warps, mC.element_type, c_buffers=c_buffers,
                c_layout=self.c_smem_layout(mC.element_type, c_buffers) if tma_epi else None, **cl)
        else:
            sA, sB, mainloop = self.shared_storage(a_smem, b_smem, stage_warps, **cl)
        if c > 1:
            pipeline.pipeline_init_arrive(cluster_shape_mn=(self.cluster_m, self.cluster_n), is_relaxed=True)
            pipeline.pipeline_init_wait(cluster_shape_mn=(self.cluster_m, self.cluster_n))
            # the schedule walks cluster tiles (c tiles along M or N): cluster bidx // c of gdim // c, CTA rank bidx % c
            rank = bidx % c
            bidx = bidx // c
            gdim = gdim // c
        else:
            rank = 0

        M, N = mC.shape
        K = mA.shape[1]
        tiles_m, tiles_n, k_tiles = M // bM, N // bN, K // bK
        num_tiles = tiles_m * tiles_n // c  # (cluster) tiles of the schedule
        producer = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, self.stages)
        consumer = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.stages)
        loop = self.loop
        tile_mn = lambda t: self.cta_tile_mn(t, rank, tiles_m, tiles_n)  # noqa: E731  (this CTA's tile of t)

        if warp_group == 0:  # producer
            cute.arch.setmaxregister_decrease(40)
            if warp_idx == 0:
                for i in loop(tiles_per_cta):
                    tile = bidx + i * gdim
                    if tile < num_tiles:
                        tm, tn = tile_mn(tile)
                        loads = self.tma_loads(tma_a, mA, sA, tma_b, mB, sB, tm, tn, rank)
                        for k_tile in loop(k_tiles, unroll=1):  # one warp's loop: kept small (i-cache)
                            self.load_k_tile(mainloop, _state_at(producer, i * k_tiles + k_tile), loads, k_tile)
                if self.stream_k:  # then this cluster's stream-K segments of the tail: the partial one, the final one
                    sk = StreamKTail(num_tiles, gdim, k_tiles)
                    pos = sk.D * k_tiles  # ring position of the segment's first k-tile
                    for u, kb, ke in sk.segments(bidx):
                        loads = self.tma_loads(tma_a, mA, sA, tma_b, mB, sB, *tile_mn(sk.D * gdim + u), rank)
                        for k_tile in cutlass.range(k_tiles, unroll=1):  # (bounds the printer can follow)
                            if k_tile >= kb and k_tile < ke:
                                self.load_k_tile(mainloop, _state_at(producer, pos + k_tile - kb), loads, k_tile)
                        pos = pos + (ke - kb)
        else:  # consumer
            cute.arch.setmaxregister_increase(232)
            scale = self.load_scale(mSA, mSB)  # fp8's per-tensor scales (None without them)
            # consumers: threads 128 and up; ping-pong: each warpgroup a tiled MMA of its own
            thr_mma = tiled_mma.get_slice(tidx % (128 if pingpong else 128 * self.mma_warpgroups))
            if pingpong:
                wg = warp_group - 1  # this warpgroup takes the CTA's tiles i = wg, wg + 2, ...
            tCsA = thr_mma.partition_A(sA)
            tCsB = thr_mma.partition_B(sB)
            # 16-bit C: a tile's results are rounded at its end and stored while the next tile's first
            # wgmmas run (they are asynchronous: the warps are free to issue the stores)
            defer = kind in ("deferred", "tma, deferred")
            c_tile = lambda t: thr_mma.partition_C(cute.local_tile(mC, (bM, bN), tile_mn(t)))  # noqa: E731
            if smem_epi:
                ctid = tidx % 128 if pingpong else tidx - 128  # the consumers' own thread index
                n_cons = 128 if pingpong else 128 * self.mma_warpgroups
                # ping-pong: each warpgroup its own barrier (1 and 2: an id in a register) over its own C buffer
                epi_bar = _WarpgroupBarrier(1 + wg) if pingpong else pipeline.NamedBarrier(barrier_id=1, num_threads=n_cons)
                if tma_epi:
                    sC = sC_all[(None, None, wg if pingpong else 0)]
                    # the TMA stores' warp: the consumers' first (each ping-pong warpgroup's own)
                    issuer = warp_idx == (4 * warp_group if pingpong else 4)
                else:
                    sC = sC_all[(None, None, wg)] if pingpong else sC_all
                tCsC = thr_mma.partition_C(sC)
                if tma_epi and self.epi_passes > 1:
                    epi_groups = self.epi_column_groups(tCsC)
            if smem_epi and not tma_epi:
                vec = 128 // mC.element_type.width
                tpr = bN // vec  # threads per row of the copy-out: each moves 16 bytes
                out_copy = cute.make_tiled_copy_tv(
                    cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), mC.element_type, num_bits_per_copy=128),
                    cute.make_ordered_layout((n_cons // tpr, tpr), order=(1, 0)), cute.make_layout((1, vec)))
                thr_out = out_copy.get_slice(ctid)
                tOsC = thr_out.partition_S(sC)
            if defer:
                pending = cute.make_rmem_tensor(c_tile(0).shape, mC.element_type)
                store = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), mC.element_type)

            def store_tma(out, t, passes=None):
                # the TMA epilogue of tile t from `out` (the rounded accumulators), its passes `passes` (all by
                # default): once the last TMA stores have read the buffer (the issuing warp waits, then every
                # consumer at epi_bar), the consumers write the pass's columns, make them visible to the TMA unit
                # (fence.proxy.async) and meet again; the issuing warp stores them
                for q in (range(self.epi_passes) if passes is None else passes):
                    if issuer:
                        cute.arch.cp_async_bulk_wait_group(0, read=True)
                    epi_bar.arrive_and_wait()
                    if self.epi_passes == 1:
                        cute.autovec_copy(out, tCsC)
                    else:
                        for g in epi_groups[q]:
                            cute.autovec_copy(out[((None, None, g), None, None)], tCsC[((None, None, g), None, None)])
                    cute.arch.fence_proxy("async.shared", space="cta")
                    epi_bar.arrive_and_wait()
                    if issuer:
                        self.tma_store_tile(tma_c, sC, mCt, *tile_mn(t), epi_pass=q)

            def store_pending(t, passes=None):  # the deferred epilogue of tile t (the rounded C waiting in `pending`)
                if tma_epi:
                    store_tma(pending, t, passes)
                else:
                    cute.copy(store, pending, c_tile(t))
            # the CTA's i-th tiles (ring positions from i * k_tiles): all, or ping-pong every other one from wg
            for j in loop((tiles_per_cta + 1) // 2 if pingpong else tiles_per_cta):
                i = 2 * j + wg if pingpong else j
                tile = bidx + i * gdim
                if tile < num_tiles:  # (i >= tiles_per_cta gives tile >= num_tiles)
                    tCgC = c_tile(tile)
                    acc = cute.make_rmem_tensor(tCgC.shape, self.acc_dtype)
                    first = i * k_tiles
                    if pingpong:
                        # the mainloops go in turn (named barriers 3 and 4): this one starts once the other
                        # warpgroup has issued tile i - 1's, so that its waits on the ring are at most a lap ahead
                        # (a wait two laps ahead would see an old phase of the same parity)
                        if i > 0:
                            cute.arch.barrier(barrier_id=3 + wg, number_of_threads=256)
                    cs = _state_at(consumer, first)
                    mainloop.consumer_wait(cs)
                    self.mma_k_tile(tiled_mma, acc, tCsA, tCsB, cs.index, first=True)
                    peeled = 1  # k-tiles issued before the loop
                    if defer:
                        if i > 0:  # the previous tile's C, while this tile's first k-tile multiplies
                            store_pending(tile - gdim, None if self.promote else (0,))
                        if tma_epi and not self.promote:
                            # with a C buffer of epi_cols columns: pass q after k-tile q (peeled from the loop)
                            for q in range(1, self.epi_passes):
                                rs = _state_at(consumer, first + q)
                                mainloop.consumer_wait(rs)
                                self.mma_k_tile(tiled_mma, acc, tCsA, tCsB, rs.index)
                                warpgroup.wait_group(1)
                                mainloop.consumer_release(_state_at(consumer, first + q - 1))
                                if i > 0:
                                    store_pending(tile - gdim, (q,))
                            peeled = self.epi_passes
                    if self.promote:
                        # two-level accumulation: the wgmmas restart their accumulators every `promote` k-tiles,
                        # whose sums are first added into `total` (f32 adds of the CUDA cores)
                        total = cute.make_rmem_tensor(tCgC.shape, self.acc_dtype)
                        total.fill(0.0)
                        self.mma_k_tiles(mainloop, consumer, tiled_mma, acc, tCsA, tCsB, first, 1, self.promote - 1)
                        for g in loop(1, k_tiles // self.promote):
                            k0 = g * self.promote
                            mainloop.consumer_wait(_state_at(consumer, first + k0))
                            warpgroup.wait_group(0)  # the group's last wgmmas are done: acc holds its sum
                            mainloop.consumer_release(_state_at(consumer, first + k0 - 1))
                            total.store(total.load() + acc.load())
                            self.mma_k_tile(tiled_mma, acc, tCsA, tCsB, _state_at(consumer, first + k0).index, first=True)
                            self.mma_k_tiles(mainloop, consumer, tiled_mma, acc, tCsA, tCsB, first, k0 + 1,
                                             self.promote - 1)
                    else:
                        for k_tile in loop(peeled, k_tiles, unroll=self.k_unroll or None):
                            rs = _state_at(consumer, first + k_tile)
                            mainloop.consumer_wait(rs)
                            self.mma_k_tile(tiled_mma, acc, tCsA, tCsB, rs.index)
                            warpgroup.wait_group(1)
                            mainloop.consumer_release(_state_at(consumer, first + k_tile - 1))
                    if pingpong:
                        if tile + gdim < num_tiles:  # the other warpgroup's next mainloop may start
                            cute.arch.barrier_arrive(barrier_id=4 - wg, number_of_threads=256)
                    warpgroup.wait_group(0)
                    mainloop.consumer_release(_state_at(consumer, first + k_tiles - 1))
                    if self.promote:
                        total.store(total.load() + acc.load())
                        acc = total
                    if defer:
                        pending.store(self.scaled(acc, scale).to(mC.element_type))
                    elif tma_epi:
                        out = cute.make_fragment_like(acc, mC.element_type)
                        out.store(self.scaled(acc, scale).to(mC.element_type))
                        store_tma(out, tile)
                    elif smem_epi:
                        # the rounded tile into shared memory (once every consumer has copied the previous
                        # tile out of it), then out to C with 16-byte stores of whole rows
                        out = cute.make_fragment_like(acc, mC.element_type)
                        out.store(self.scaled(acc, scale).to(mC.element_type))
                        epi_bar.arrive_and_wait()
                        cute.autovec_copy(out, tCsC)
                        epi_bar.arrive_and_wait()
                        gC = cute.local_tile(mC, (bM, bN), tile_mn(tile))
                        cute.copy(out_copy, tOsC, thr_out.partition_D(gC))
                    else:
                        self.store_c(acc, tCgC, scale)
            if self.stream_k:  # the tail's segments (sm90_streamk.py), the last whole tile's C during the first
                sk = StreamKTail(num_tiles, gdim, k_tiles)
                (up, kb_p, ke_p), (uf, kb_f, ke_f) = sk.segments(bidx)
                base, n_p = sk.D * k_tiles, ke_p - kb_p
                last_whole = bidx + (sk.D - 1) * gdim
                n_cons = 128 * self.mma_warpgroups

                def mma_k(acc, first, k_tile, count):  # k-tile k_tile (> 0) of a segment of count, if it has one
                    if k_tile < count:
                        rs = _state_at(consumer, first + k_tile)
                        mainloop.consumer_wait(rs)
                        self.mma_k_tile(tiled_mma, acc, tCsA, tCsB, rs.index)
                        warpgroup.wait_group(1)
                        mainloop.consumer_release(_state_at(consumer, first + k_tile - 1))

                def mma_segment(acc, first, count, pass_q):
                    # count (> 0) k-tiles from ring position first into acc (the first starts it), every stage
                    # released once its wgmmas are done; pass_q(q), the previous C's epilogue pass q, after k-tile q
                    # (as the whole tiles' loop does) or at once where the segment is shorter
                    cs = _state_at(consumer, first)
                    mainloop.consumer_wait(cs)
                    self.mma_k_tile(tiled_mma, acc, tCsA, tCsB, cs.index, first=True)
                    pass_q(0)
                    for q in range(1, self.epi_passes):
                        mma_k(acc, first, q, count)
                        pass_q(q)
                    for k_tile in cutlass.range(self.epi_passes, k_tiles, unroll=self.k_unroll or None):
                        mma_k(acc, first, k_tile, count)  # (over range(k_tiles): bounds the printer can follow)
                    warpgroup.wait_group(0)
                    mainloop.consumer_release(_state_at(consumer, first + count - 1))

                def pending_if_first(q):  # the final segment is the first one when there is no partial one
                    if n_p == 0:
                        store_pending(last_whole, (q,))

                if n_p > 0:  # partial sums into this CTA's slot, then one more on the tile's flag
                    acc = cute.make_rmem_tensor(c_tile(0).shape, self.acc_dtype)
                    mma_segment(acc, base, n_p, lambda q: store_pending(last_whole, (q,)))
                    store_slot(acc, mWork, bidx * c + rank, ctid, n_cons)
                    epi_bar.arrive_and_wait()  # every consumer's partial sums are stored before the release
                    if ctid == 0:
                        cute.arch.fence_acq_rel_gpu()
                        cute.arch.atomic_add(mFlags.iterator + in_range(up * c + rank, cute.size(mFlags)),
                                             cutlass.Int32(1), sem="release", scope="gpu")
                if ke_f > kb_f:  # the final segment: its sums and the other clusters' (lower ranks, in order)
                    acc = cute.make_rmem_tensor(c_tile(0).shape, self.acc_dtype)
                    mma_segment(acc, base + n_p, ke_f - kb_f, pending_if_first)
                    c0 = sk.owner(uf * k_tiles)
                    flag = mFlags.iterator + in_range(uf * c + rank, cute.size(mFlags))
                    if ctid == 0:
                        wait_count(flag, bidx - c0)
                    epi_bar.arrive_and_wait()
                    for w in cutlass.range(in_range(c0, gdim), bidx):
                        add_slot(acc, mWork, w * c + rank, ctid, n_cons)
                    if ctid == 0:  # (every partial of the tile is in: zero for the next launch)
                        cute.arch.store(flag, cutlass.Int32(0))
                    pending.store(self.scaled(acc, scale).to(mC.element_type))
                    store_pending(sk.D * gdim + uf)
                else:  # (no segment at all: the tail is empty)
                    if n_p == 0:
                        store_pending(last_whole)
            elif defer:  # the CTA's last tile (every CTA has at least one: grid() launches at most one per tile)
                store_pending(bidx + ((num_tiles - 1 - bidx) // gdim) * gdim)
            if tma_epi:
                if issuer:  # the last TMA stores have read the buffer before the CTA (and its shared memory) ends
                    cute.arch.cp_async_bulk_wait_group(0, read=True)
        if c > 1:  # neither CTA leaves while its partner may still multicast into it or signal its barriers
            cute.arch.cluster_arrive()
            cute.arch.cluster_wait()

    def _fits_c_buffer(self, c_width: int) -> bool:
        """Whether a (bM, bN) C buffer of c_width-bit elements (one per ping-pong warpgroup; bM x epi_cols for the
        TMA epilogue) fits beside the stages in 227 KiB (3 stages of 128x256x64 and a 16-bit buffer do, 4 stages
        do not; 4 stages of 256x128x64 and a 256x64 buffer do)."""
        bM, bN, bK = self.tile_mnk
        stages = self.stages * (bM + bN) * bK * self.ab_dtype.width // 8
        return 1024 + stages + bM * self.epi_cols * c_width // 8 * (2 if self.pingpong else 1) + 2048 <= 227 * 1024

    def epi_column_groups(self, tCsC):
        """For each pass of the TMA epilogue (epi_cols < bN), the indices g of the accumulator fragment's column
        groups ((2, 2, bN / 8) per wgmma m64nN atom: group g holds columns 8 g .. 8 g + 7) that the pass writes."""
        bN = self.tile_mnk[1]
        v = tCsC.shape[0]
        if not (isinstance(v, tuple) and len(v) == 3 and cute.size(v[2]) == bN // 8 and cute.size(tCsC, mode=[2]) == 1):
            raise ValueError(f"sm90_gemm: epi_cols={self.epi_cols}: the accumulators' partition {tCsC.shape} is not "
                             f"wgmma's ((2, 2, {bN // 8}), RestM, 1)")
        per = self.epi_cols // 8
        return [range(q * per, (q + 1) * per) for q in range(self.epi_passes)]

    def epilogue_kind(self, c_dtype) -> str:
        """How kernel_ws stores C: 'tma' (a swizzled shared buffer stored by TMA; 'tma, deferred': the
        rounded tile waits in registers and is written to the buffer during the next tile's first wgmmas),
        'smem' (the buffer copied out by the consumers), 'deferred' (registers, during the next tile) or
        'in-place' (registers, at the tile's end); c_dtype 'f32', 'f16', 'bf16' or the element width in bits.
        'auto' picks 'tma' for a 16-bit C whose buffer fits beside the stages ('smem' where bN is not a multiple of
        64), registers otherwise (an f32 C)."""
        width = c_dtype if isinstance(c_dtype, int) else (32 if c_dtype == "f32" else 16)
        if not self.warp_specialized:
            return "in-place"
        kind = self.epilogue
        if kind == "auto":
            kind = ("tma" if self.tile_mnk[1] % 64 == 0 else "smem") if width == 16 and self._fits_c_buffer(16) else "regs"
        if kind == "tma":
            # a deferred tile waits in registers as its 16-bit values (half the accumulators'); the ping-pong
            # warpgroups' epilogues overlap the other one's mainloop already
            return "tma, deferred" if self.defer_epilogue and width == 16 and not self.pingpong else "tma"
        if kind == "smem":
            return "smem"
        return "deferred" if self.defer_epilogue and width == 16 and not self.pingpong else "in-place"

    def check_epilogue(self, c_dtype):
        """Refuse an epilogue that cannot store this C: the TMA store's box is a 128-byte column block, so bN
        must be a multiple of c_block(c_dtype); the C buffers must fit beside the stages."""
        kind = self.epilogue_kind(c_dtype.width)
        bM, bN, _ = self.tile_mnk
        if kind.startswith("tma") and (bN % self.c_block(c_dtype) or self.epi_cols % self.c_block(c_dtype)):
            cols = f"bN = {bN}" + (f" (or epi_cols = {self.epi_cols})" if self.epi_passes > 1 else "")
            raise ValueError(f"sm90_gemm: epilogue='tma' stores C in boxes of {self.c_block(c_dtype)} columns (128 "
                             f"bytes of {c_dtype}); {cols} is not a multiple")
        if self.epi_passes > 1 and not kind.startswith("tma"):
            raise ValueError(f"sm90_gemm: epi_cols={self.epi_cols} is the TMA epilogue's; this C ({c_dtype}) is "
                             f"stored by the {kind!r} one")
        if self.stream_k and kind != "tma, deferred":
            raise ValueError(f"sm90_gemm: stream_k is written for the deferred TMA epilogue ('tma, deferred'); this C "
                             f"({c_dtype}) has the {kind!r} one")
        if kind in ("tma", "tma, deferred", "smem") and not self._fits_c_buffer(c_dtype.width):
            raise ValueError(f"sm90_gemm: epilogue={self.epilogue!r}: {'two ' if self.pingpong else 'a '}"
                             f"{bM}x{self.epi_cols} "
                             f"{c_dtype} C buffer(s) and {self.stages} stages of {self.tile_mnk} do not fit in 227 KiB")

    def grid(self, M, N):
        """(CTAs launched, schedule tiles per CTA): at most one CTA per tile, whole clusters (of cluster_m x cluster_n
        CTAs that walk cluster tiles of that many tiles)."""
        bM, bN, _ = self.tile_mnk
        c = self.cluster_size
        units = (M // bM) * (N // bN) // c
        clusters = max(1, min(units, (self.num_ctas or units * c) // c))
        if self.stream_k:  # whole waves of tiles, then the tail's stream-K segments
            return clusters * c, units // clusters
        return clusters * c, -(-units // clusters)

    @cute.jit
    def __call__(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, mScaleA: cute.Tensor = None,
                 mScaleB: cute.Tensor = None, mWork: cute.Tensor = None, mFlags: cute.Tensor = None):
        """C = A B^T: mA (M, K), mB (N, K) K-major tensors of ab_dtype, mC (M, N) f32/f16/bf16 (numpy arrays run
        on the CPU, GPU tensors on their device). A jit function: ``cute.compile(gemm, mA, mB, mC)``
        traces it once; the compiled call then only writes the tensors' addresses (and encodes their
        TMA tensor maps when an address is new) and launches.

        mScaleA, mScaleB (both or neither): 1-element f32 tensors, per-tensor scales as
        ``torch._scaled_mm(a, b.t(), scale_a, scale_b, out_dtype=C's type)`` takes them: C = (A B^T) *
        scale_a * scale_b, the product of the f32 accumulators and the scales rounded once to C's type.
        The kernel reads them (no host synchronisation), so they may change between calls.

        mWork, mFlags (stream_k=True): the stream-K workspace, ``workspace_shape(gemm, M, N)``: f32 (slots, floats
        per slot) for partial sums, and Int32 flags that must be zero at the first call (each call leaves them so)."""
        M, K = mA.shape
        N = mB.shape[0]
        bM, bN, bK = self.tile_mnk
        if mA.element_type != self.ab_dtype or mB.element_type != self.ab_dtype:
            raise ValueError(f"sm90_gemm: A and B hold {mA.element_type} and {mB.element_type}, the GEMM was made "
                             f"for {self.ab_dtype}")
        if mC.element_type.name not in ("f32", "f16", "bf16"):
            raise ValueError(f"sm90_gemm: C holds {mC.element_type}; it must be Float32, Float16 or BFloat16")
        if M % bM or N % bN or K % bK:
            raise ValueError(f"sm90_gemm: M, N, K ({M}, {N}, {K}) must be multiples of the tile {self.tile_mnk}")
        if M % (bM * self.cluster_m):
            raise ValueError(f"sm90_gemm: cluster_m={self.cluster_m}: M = {M} must be a multiple of {self.cluster_m} "
                             f"tiles of {bM} rows (a cluster's CTAs take adjacent tiles along M)")
        if N % (bN * self.cluster_n):
            raise ValueError(f"sm90_gemm: cluster_n={self.cluster_n}: N = {N} must be a multiple of {self.cluster_n} "
                             f"tiles of {bN} columns (a cluster's CTAs take adjacent tiles along N)")
        if self.epi_passes > 1 and K // bK < self.epi_passes:
            raise ValueError(f"sm90_gemm: epi_cols={self.epi_cols}: K / bK = {K // bK} k-tiles, fewer than the "
                             f"epilogue's {self.epi_passes} passes (one after each of a tile's first k-tiles)")
        if self.promote and (K // bK) % self.promote:
            raise ValueError(f"sm90_gemm: K / bK = {K // bK} k-tiles must be a multiple of promote={self.promote}")
        if (mScaleA is None) != (mScaleB is None):
            raise ValueError("sm90_gemm: give both scales (scale_a and scale_b) or neither")
        for what, t in (("scale_a", mScaleA), ("scale_b", mScaleB)):
            if t is not None and (t.element_type != cutlass.Float32 or cute.size(t) != 1):
                raise ValueError(f"sm90_gemm: {what} must be a tensor of one Float32 (as torch._scaled_mm's per-tensor "
                                 f"scale), got {t.element_type} of shape {t.shape}")
        if self.stream_k:
            (slots, floats), flags = workspace_shape(self, M, N)
            if mWork is None or mFlags is None:
                raise ValueError(f"sm90_gemm: stream_k=True needs mWork (Float32, ({slots}, {floats})) and mFlags "
                                 f"(Int32, ({flags},), zeros) for {M}x{N}")
            if mWork.element_type != cutlass.Float32 or cute.size(mWork) < slots * floats:
                raise ValueError(f"sm90_gemm: stream_k: mWork holds {cute.size(mWork)} {mWork.element_type}, needs "
                                 f"{slots * floats} Float32 ({slots} slots of {floats})")
            if mFlags.element_type != cutlass.Int32 or cute.size(mFlags) < flags:
                raise ValueError(f"sm90_gemm: stream_k: mFlags holds {cute.size(mFlags)} {mFlags.element_type}, "
                                 f"needs {flags} Int32")
        elif mWork is not None or mFlags is not None:
            raise ValueError("sm90_gemm: mWork and mFlags are stream_k's workspace; this GEMM has stream_k=False")
        tiled_mma, a_smem, b_smem, tma_a, tA, tma_b, tB = self.make_atoms(mA, mB)
        ctas, per_cta = self.grid(M, N)
        kernel = self.kernel_ws if self.warp_specialized else self.kernel
        self.check_epilogue(mC.element_type)
        tma_c, tC = self.make_tma_c(mC) if self.epilogue_kind(mC.element_type.width).startswith("tma") else (None, None)
        launch = dict(cluster=(self.cluster_size, 1, 1)) if self.cluster_size > 1 else {}
        sk = (mWork, mFlags) if self.stream_k else ()
        kernel(tma_a, tA, tma_b, tB, mC, tiled_mma, a_smem, b_smem, per_cta, mScaleA, mScaleB, tma_c, tC, *sk).launch(
            grid=(ctas, 1, 1), block=(self.threads, 1, 1), **launch)


_DTYPES = {"f16": cutlass.Float16, "bf16": cutlass.BFloat16, "e4m3": cutlass.Float8E4M3FN, "e5m2": cutlass.Float8E5M2}
_FP8 = ("e4m3", "e5m2")


def fp8_tolerance(c_dtype: str, ref_max: float) -> float:
    """Largest max |C - ref| accepted on the GPU for fp8 inputs (ref: the exact products of the fp8 values, summed
    in f32, times the scales): two roundings of C's type at the largest |ref|, and 2**-5 of it for the tensor cores'
    fp8 accumulation, which keeps fewer bits than f32 (about 14: the reason for CUTLASS's dense_gemm_fp8_2xacc.py).
    A k-tile of 128 left out of K = 8192 errs by about 1/8 of the largest |ref|, a transposed C by O(1).

    >>> fp8_tolerance("f32", 4.0) == 4.0 * (2 * 2.0 ** -24 + 2.0 ** -5)
    True
    """
    return ref_max * (2 * {"f32": 2.0 ** -24, "f16": 2.0 ** -11, "bf16": 2.0 ** -8}[c_dtype] + 2.0 ** -5)


def run_gpu(M: int, N: int, K: int, ctas: int, iters: int = 20, dynamic: bool = True, tile=(64, 64, 64),
            stages: int = 2, ws: bool = False, mma_wgs: int = 1, dtype: str = "f16", raster: int = 4,
            c_dtype: str = "f32", defer: bool = True, epilogue: str = "auto", scaled_mm: bool = True,
            promote: int = 0, pingpong: bool = False, cluster_m: int = 1, cluster_n: int = 1,
            raster_m: bool = False, epi_cols: int = 0, k_unroll: int = 0, stream_k: bool = False) -> int:
    """On a GPU (torch CUDA tensors): compile once (cute.compile), check against torch.matmul, then
    time the compiled call: back to back (CUDA events around ``iters`` calls, and the host time per
    call), one at a time (synchronize, events around one call, synchronize: the kernel alone, and
    the wall time of synchronize-call-synchronize), and the remembered @cute.jit call gemm(...)."""
    import time

    import torch

    if ctas <= 0:  # one persistent CTA per SM
        ctas = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    tdt = {"f16": torch.float16, "bf16": torch.bfloat16, "e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}[dtype]
    cdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[c_dtype]
    torch.manual_seed(0)
    A = torch.randn(M, K, device="cuda").to(tdt)
    B = torch.randn(N, K, device="cuda").to(tdt)
    C = torch.zeros(M, N, device="cuda", dtype=cdt)
    mA, mB, mC = (from_dlpack(x, assumed_align=16) for x in (A, B, C))
    scales = ()
    if dtype in _FP8:  # per-tensor scales, as torch._scaled_mm takes them (they make C about N(0, 1))
        sa = torch.full((1,), K ** -0.25, device="cuda")
        sb = torch.full((1,), K ** -0.25, device="cuda")
        scales = tuple(from_dlpack(x) for x in (sa, sb))
    gemm = HopperGemm(ab_dtype=_DTYPES[dtype], tile_mnk=tile, stages=stages, num_ctas=ctas, dynamic=dynamic,
                      warp_specialized=ws, mma_warpgroups=mma_wgs, raster=raster, defer_epilogue=defer,
                      epilogue=epilogue, promote=promote, pingpong=pingpong, cluster_m=cluster_m, cluster_n=cluster_n,
                      raster_m=raster_m, epi_cols=epi_cols or None, k_unroll=k_unroll, stream_k=stream_k)
    if stream_k:  # the workspace: partial sums, and flags that start at zero (every call leaves them so)
        (slots, floats), nflags = workspace_shape(gemm, M, N)
        work = (torch.empty(slots, floats, device="cuda"), torch.zeros(nflags, device="cuda", dtype=torch.int32))
        scales = (scales or (None, None)) + tuple(from_dlpack(x, assumed_align=16) for x in work)
    t0 = time.perf_counter()
    compiled = cute.compile(gemm, mA, mB, mC, *scales)
    compile_s = time.perf_counter() - t0
    compiled(mA, mB, mC, *scales)
    torch.cuda.synchronize()
    ref = A.float() @ B.float().T
    note = ""
    if dtype in _FP8:
        ref *= sa * sb
        err = (C.float() - ref).abs().max().item()
        ok = err <= fp8_tolerance(c_dtype, ref.abs().max().item())
        if dtype == "e4m3" and scaled_mm:  # cuBLAS's fp8 GEMM: (e5m2, e5m2) it does not take
            for fast in (False, True):
                t = torch._scaled_mm(A, B.t(), scale_a=sa, scale_b=sb, out_dtype=cdt, use_fast_accum=fast)
                note += (f"; max |C - torch._scaled_mm(use_fast_accum={fast})| = {(C.float() - t.float()).abs().max().item():.3g}"
                         f" (its own |. - ref| {(t.float() - ref).abs().max().item():.3g})")
    else:
        err = (C.float() - ref).abs().max().item()
        # f32 accumulation in another order; a 16-bit C is rounded once more (half an ulp of |C|)
        ulp = {"f32": 0.0, "f16": 2.0 ** -11, "bf16": 2.0 ** -8}[c_dtype]
        ok = bool(((C.float() - ref).abs() <= 1e-3 * K ** 0.5 + ulp * ref.abs()).all().item())
    flops = 2 * M * N * K
    tf = lambda ms: flops / ms / 1e9  # noqa: E731
    for _ in range(3):
        compiled(mA, mB, mC, *scales)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    t0 = time.perf_counter()
    for _ in range(iters):
        compiled(mA, mB, mC, *scales)
    host_us = (time.perf_counter() - t0) / iters * 1e6
    end.record()
    torch.cuda.synchronize()
    b2b = start.elapsed_time(end) / iters
    one, wall = [], []
    for _ in range(iters):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        start.record()
        compiled(mA, mB, mC, *scales)
        end.record()
        torch.cuda.synchronize()
        wall.append((time.perf_counter() - t0) * 1e3)
        one.append(start.elapsed_time(end))
    one_ms, wall_ms = sorted(one)[len(one) // 2], sorted(wall)[len(wall) // 2]
    gemm(mA, mB, mC, *scales)  # the @cute.jit call: traced once more and remembered, then replayed
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(iters):
        gemm(mA, mB, mC, *scales)
    jit_us = (time.perf_counter() - t0) / iters * 1e6
    torch.cuda.synchronize()
    name = torch.cuda.get_device_name()
    print(f"sm90_gemm {M}x{N}x{K} {dtype} -> {c_dtype} (f32 accumulation) on {name}: max |C - torch| = {err:.3g} "
          f"({'within' if ok else 'OUTSIDE'} tolerance){note}; cute.compile {compile_s:.2f} s")
    print(f"  {'kernel_ws' if ws else 'kernel'}: tile {tile}, {stages} stages, {gemm.grid(M, N)[0]} CTAs x {gemm.threads} threads, "
          f"{mma_wgs} MMA warpgroup(s), raster {raster}, "
          f"{gemm.epilogue_kind(c_dtype)} epilogue" + (f", accumulators promoted every {promote} k-tiles" if promote else "")
          + (", ping-pong" if pingpong else "")
          + (f", clusters of {cluster_m} along M (B multicast)" if cluster_m > 1 else "")
          + (f", clusters of {cluster_n} along N (A multicast)" if cluster_n > 1 else "")
          + (", raster along M" if raster_m else "") + (f", C buffer of {epi_cols} columns" if epi_cols else "")
          + (f", k-loop unrolled {k_unroll}x" if k_unroll else "") + (", stream-K tail" if stream_k else ""))
    print(f"  back to back ({iters} calls): {b2b:.4f} ms per call, {tf(b2b):.1f} TFLOP/s; host {host_us:.1f} us per call")
    print(f"  one call (median of {iters}): kernel {one_ms:.4f} ms, {tf(one_ms):.1f} TFLOP/s; "
          f"synchronize-call-synchronize {wall_ms:.4f} ms")
    print(f"  remembered @cute.jit call gemm(mA, mB, mC): host {jit_us:.1f} us per call")
    return 0 if ok else 1


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mnk", default="256,256,128")
    p.add_argument("--ctas", type=int, default=8, help="persistent CTAs (tiles are shared out among them); "
                   "0: one per SM (--gpu), one per tile (CPU)")
    p.add_argument("--cuda", default=None, help="write the generated CUDA source here")
    p.add_argument("--gpu", action="store_true", help="run on the GPU with torch tensors (needs an H100)")
    p.add_argument("--dynamic", action="store_true", help="runtime tile and k loops instead of unrolled ones")
    p.add_argument("--tile", default=None, help="bM,bN,bK (bM a multiple of 64, bN of 8 up to 256, a k-tile row of at "
                   "most 128 bytes: bK <= 64 for 16-bit A/B, <= 128 for fp8); default 64,64,64, or 64,64,128 for fp8")
    p.add_argument("--stages", type=int, default=2, help="shared-memory stages of the TMA pipeline")
    p.add_argument("--ws", action="store_true", help="warp specialised: a producer and a consumer warpgroup")
    p.add_argument("--mma-wgs", type=int, default=1, help="with --ws: consumer warpgroups, tiled along M")
    p.add_argument("--dtype", default="f16", choices=sorted(_DTYPES), help="A and B element type (e4m3, e5m2: fp8, "
                   "with per-tensor scales as torch._scaled_mm applies them)")
    p.add_argument("--scale-a", type=float, default=None, help="fp8 on the CPU: scale_a (default K**-0.25; with --gpu "
                   "K**-0.25 always)")
    p.add_argument("--scale-b", type=float, default=None, help="fp8 on the CPU: scale_b (default K**-0.25)")
    p.add_argument("--promote", type=int, default=0, help="--ws: add the wgmma accumulators into f32 registers every "
                   "this many k-tiles (two-level accumulation, as torch._scaled_mm's use_fast_accum=False; 64 x bN "
                   "per consumer warpgroup at most 64 x 128)")
    p.add_argument("--pingpong", action="store_true", help="--ws --mma-wgs 2: each consumer warpgroup takes whole "
                   "tiles (bM x bN: 64x256 or 128x128), in turn, so one's epilogue runs during the other's mainloop")
    p.add_argument("--cluster-m", type=int, default=1, choices=[1, 2], help="--ws: clusters of this many CTAs along "
                   "M, B's tile loaded in halves and multicast to both")
    p.add_argument("--cluster-n", type=int, default=1, choices=[1, 2], help="--ws: clusters of this many CTAs along "
                   "N, A's tile loaded in halves and multicast to both")
    p.add_argument("--raster-m", action="store_true", help="persistent tiles go in groups of --raster along M, "
                   "column after column (default: along N, row after row)")
    p.add_argument("--epi-cols", type=int, default=0, help="--ws, TMA epilogue: a C buffer of this many of the tile's "
                   "columns (0: all), the tile's C stored in bN / epi-cols passes (room for another stage)")
    p.add_argument("--k-unroll", type=int, default=0, help="--ws --dynamic: copies of the consumers' k-loop body per "
                   "trip (0: the compiler's choice; the stage count makes each copy's stage a constant)")
    p.add_argument("--stream-k", action="store_true", help="--ws, deferred TMA epilogue: the last partial wave's "
                   "tiles cut along K and shared out evenly (sm90_streamk.py; a workspace of partial sums and flags)")
    p.add_argument("--no-scaled-mm", action="store_true", help="--gpu, e4m3: do not compare with torch._scaled_mm "
                   "(under compute-sanitizer, where cuBLAS's kernels would be checked too)")
    p.add_argument("--c-dtype", default="f32", choices=["f32", "f16", "bf16"], help="C's element type")
    p.add_argument("--iters", type=int, default=20, help="with --gpu: calls timed")
    p.add_argument("--raster", type=int, default=4, help="persistent tiles go in groups of this many along N (1: M first)")
    p.add_argument("--no-defer", action="store_true", help="--ws with a 16-bit C: store each tile's C at its end")
    p.add_argument("--epilogue", default="auto", choices=["auto", "regs", "smem", "tma"],
                   help="--ws: store C from registers, through a swizzled shared buffer with 16-byte stores (smem), or "
                        "through 128-byte-swizzled column blocks stored by TMA (tma; auto: tma for a 16-bit C)")
    a = p.parse_args(argv)
    M, N, K = (int(x) for x in a.mnk.split(","))
    tile = tuple(int(x) for x in (a.tile or ("64,64,128" if a.dtype in _FP8 else "64,64,64")).split(","))
    if a.gpu:
        return run_gpu(M, N, K, a.ctas, iters=a.iters, dynamic=True, tile=tile, stages=a.stages, ws=a.ws,
                       mma_wgs=a.mma_wgs, dtype=a.dtype, raster=a.raster, c_dtype=a.c_dtype, defer=not a.no_defer,
                       epilogue=a.epilogue, scaled_mm=not a.no_scaled_mm, promote=a.promote, pingpong=a.pingpong,
                       cluster_m=a.cluster_m, cluster_n=a.cluster_n, raster_m=a.raster_m, epi_cols=a.epi_cols,
                       k_unroll=a.k_unroll, stream_k=a.stream_k)
    rng = np.random.default_rng(0)
    A = rng.standard_normal((M, K)).astype(np.float16)
    B = rng.standard_normal((N, K)).astype(np.float16)
    gemm = HopperGemm(ab_dtype=_DTYPES[a.dtype], tile_mnk=tile, stages=a.stages, num_ctas=a.ctas or None,
                      dynamic=a.dynamic, warp_specialized=a.ws, mma_warpgroups=a.mma_wgs, raster=a.raster,
                      defer_epilogue=not a.no_defer, epilogue=a.epilogue, promote=a.promote, pingpong=a.pingpong,
                      cluster_m=a.cluster_m, cluster_n=a.cluster_n, raster_m=a.raster_m, epi_cols=a.epi_cols or None,
                      k_unroll=a.k_unroll, stream_k=a.stream_k)
    work = {}
    if a.stream_k:  # partial sums (NaN: a slot read before it is written shows) and flags at zero
        (slots, floats), nflags = workspace_shape(gemm, M, N)
        work = dict(mWork=np.full((slots, floats), np.nan, np.float32), mFlags=np.zeros(nflags, np.int32))
    C = np.zeros((M, N), {"f32": np.float32, "f16": np.float16, "bf16": np.float32}[a.c_dtype])
    scale = 1.0
    if a.dtype in _FP8:  # torch's float8 CPU tensors (values rounded to fp8), two 1-element f32 scales
        import torch

        fdt = torch.float8_e4m3fn if a.dtype == "e4m3" else torch.float8_e5m2
        A, B = (torch.from_numpy(x.astype(np.float32)).to(fdt) for x in (A, B))
        sab = [np.array([K ** -0.25 if v is None else v], np.float32) for v in (a.scale_a, a.scale_b)]
        scale = float(sab[0][0]) * float(sab[1][0])
        Cd = torch.zeros(M, N, dtype=torch.bfloat16) if a.c_dtype == "bf16" else C
        gemm(A, B, Cd, *sab, **work)
        A, B = (x.float().numpy() for x in (A, B))
        C = Cd.float().numpy() if a.c_dtype == "bf16" else C
    elif "bf16" in (a.dtype, a.c_dtype):  # numpy has no bfloat16: CPU torch tensors (values rounded to bf16)
        import torch

        if a.dtype == "bf16":
            A, B = (torch.from_numpy(x.astype(np.float32)).bfloat16() for x in (A, B))
        Cd = torch.zeros(M, N, dtype=torch.bfloat16) if a.c_dtype == "bf16" else C
        gemm(A, B, Cd, **work)
        A, B = (x.float().numpy() if isinstance(x, torch.Tensor) else x for x in (A, B))
        C = Cd.float().numpy() if a.c_dtype == "bf16" else C
    else:
        gemm(A, B, C, **work)
    ref = A.astype(np.float64) @ B.astype(np.float64).T * scale
    err = np.abs(C.astype(np.float64) - ref).max()
    # f32 accumulation: one rounding per k step (16, or 32 for fp8), each at most half an ulp of the partial
    # sums; the scaling rounds once more; a 16-bit C is rounded once more, by at most half its ulp
    k_step = 32 if a.dtype in _FP8 else 16
    tol = (K // k_step + 2) * 2.0 ** -24 * scale * (np.abs(A.astype(np.float64)) @ np.abs(B.astype(np.float64)).T).max()
    tol += {"f32": 0.0, "f16": 2.0 ** -11, "bf16": 2.0 ** -8}[a.c_dtype] * np.abs(ref).max()
    print(f"sm90_gemm {M}x{N}x{K} {a.dtype} -> {a.c_dtype} on the CPU: max |C - numpy| = {err:.3g} (tolerance {tol:.3g})")
    if a.cuda:
        from cutelab.kernel.cuda import printer as cuda
        from cutelab.kernel.launch.plan import last_launch

        with open(a.cuda, "w") as f:
            f.write(cuda.render(last_launch().ir))
        print(f"CUDA source written to {a.cuda}")
    return 0 if err <= tol else 1


if __name__ == "__main__":
    sys.exit(main())
