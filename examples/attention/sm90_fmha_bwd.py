"""A Hopper (SM90) attention backward written with cutelab in CuTe DSL style, organised as
FlashAttention-3's backward is: the gradients of

    O = softmax(scale * Q K^T) V        (the forward: examples/attention/sm90_fmha_fwd.py)

    P  = exp(scale * Q K^T - LSE)       dV = P^T dO        dP = dO V^T
    D  = rowsum(dO * O)                 dS = P * (dP - D)
    dQ = scale * dS K                   dK = scale * dS^T Q

Q, K, V, O, dO, dQ, dK, dV: (batch, heads, seqlen, head_dim) f16 or bf16, f32 accumulation; LSE
(batch, heads, seqlen) f32, natural log, as the forward writes it. Head dim 64 or 128, causal or not.

Three kernels, launched by one ``@cute.jit`` call:

1. ``preprocess``: D = rowsum(dO * O) in f32, LSE * log2(e) (so that the main kernel takes
   P = exp2(S * scale * log2(e) - LSE2)), and the f32 dQ accumulator zeroed; head_dim / 8 threads per
   row, 16-byte loads, the partial sums added by shuffles.
2. ``kernel`` (the main one): one CTA per (KV block of 128 rows, batch x head), 384 threads in three
   warpgroups, ``__launch_bounds__(384, 1)``. Query blocks of bM rows: 128 at head dim 64, 64 at head
   dim 128 (``tile_m``; FlashAttention-3's tile sizes):

   - warpgroup 0 is the producer (``setmaxregister_decrease`` to 24): its warp 0 loads the CTA's K
     and V tiles once by TMA (one barrier for both), then, per query block, Q, dO (128-byte
     swizzled) and the block's bM values of LSE2 and D by TMA into a ``stages``-deep ring
     (``PipelineTmaAsync``, the four loads on one barrier); its warp 1 is the dQ writer (below).
   - warpgroups 1 and 2 are the consumers (``setmaxregister_increase`` to 240), 64 key rows each;
     dV and dK (64 x head_dim each, f32) stay in their registers over the whole query loop. Per query
     block, in FlashAttention-3's "swapAB" order, so that P^T and dS^T come out of the accumulators
     in the register layout that the next wgmma takes as its A operand:

     - S^T = K Q^T and dP^T = V dO^T: two ``wgmma`` groups (A and B from shared memory), issued
       back to back;
     - when S^T is in (``wait_group(1)``: dP^T still running), P^T = exp2(S^T scale log2(e) - LSE2)
       in f32 (LSE2 read from shared memory; causal: keys after the query masked, only on the 128 / bM
       blocks that straddle the diagonal), rounded to the input type in registers; dV += P^T dO
       issued (A = P^T from registers, B = dO seen N-major: the same shared memory as dO's K-major
       tile, transposed);
     - when dP^T is in (dV may still run), dS^T = P^T (dP^T - D), rounded; dS^T stored to shared
       memory (M-major, 32-bit stores or ``stmatrix``) and made visible to the tensor cores (``fence.proxy.async``,
       a named barrier);
     - dQ = dS K by ``wgmma`` (A = dS from shared memory, B = K seen N-major), each warpgroup a 64-row
       tile of it: head dim 128, half of head_dim each over all 128 keys; head dim 64 with bM 128,
       64 query rows each over all 128 keys (both: both warpgroups' dS in one buffer, double-buffered
       by query-block parity, behind a 256-thread barrier); head dim 64 with bM 64 (``tile_m=64``),
       each its own 64 keys over all of head_dim (its own dS tile, a 128-thread barrier; two partials
       of the same rows);
     - then dK += dS^T Q (A from registers, B = Q seen N-major) is issued, and the dQ tile (its
       wgmma waited for, dK still running) goes to shared memory (128-byte swizzled f32 boxes of
       64 x 32): FlashAttention-3's order, in which dQ's write-out overlaps the dK GEMM
       (``order="dq_last"``: dK before dQ, the write-out after both, the tensor cores idle). Once dK
       is done the Q / dO stage goes back to the producer;
     - the dQ writer warp waits for each warpgroup's boxes (a named barrier), adds them to the f32
       dQ accumulator in global memory by TMA reduce-adds (``cp.reduce.async.bulk.tensor ... .add``,
       one lane), and once TMA has read them (``cp.async.bulk.wait_group.read``) hands them back
       (another named barrier), while the consumers go on. ``dq_writer=False``: one thread of each
       consumer warpgroup issues them and waits before the next rewrite; ``dq_reduce="red"``
       (``--dq-reduce red``): ``red.global.add.f32`` per element instead.

   dK (times scale) and dV are rounded and stored at the end. Causal: KV block n takes the query
   blocks from n 128 / bM (the first that sees any of its keys) to the last; the longest (n = 0) are
   launched first.
3. ``postprocess``: dQ = dQ_accum * scale, rounded to the input type (8 elements per thread).

What it does not do (yet): no ping-pong between the consumer warpgroups and no overlap across query
blocks (each block's five GEMMs overlap only as the waits above allow); no persistent grid; seqlen
a multiple of 128.

Run on the CPU (the interpreter runs the warpgroups as coroutines that meet at the barriers)::

    PYTHONPATH=src python examples/attention/sm90_fmha_bwd.py --shape 1,2,256,64 --causal

and on an H100 / H200 (compiles once with ``cute.compile``, checks dQ, dK, dV of the last batch
entry against torch's float64 autograd of attention, times the three kernels together)::

    PYTHONPATH=src python examples/attention/sm90_fmha_bwd.py --gpu --shape 4,16,8192,128 --dtype bf16

``--cuda FILE`` writes the main kernel's generated CUDA (``nvcc -arch=sm_90a -cubin -Xptxas -v FILE``);
``--tile-m``, ``--order``, ``--dq-writer`` select the options above (HopperAttentionBackward's).
"""

from __future__ import annotations

import argparse
import math
import sys

import cutelab as cute
import cutelab as cutlass
from cutelab import pipeline
from cutelab.nvgpu import OperandMajorMode, cpasync, warpgroup
from cutelab.runtime import from_dlpack
from cutelab.utils import sm90 as sm90_utils

LOG2E = math.log2(math.e)


def _state_at(base, n):
    """The pipeline state n stages after base (n an int or an index expression of the kernel)."""
    s = base.clone()
    if not (isinstance(n, int) and n == 0):
        s.advance(n)
    return s


def mn_view(t):
    """A wgmma accumulator fragment ((2, 2, N/8), MMA_M, MMA_N) seen as (rows, columns)."""
    (v0, v1, vn), mm, nn = t.shape[0], t.shape[1], t.shape[2]
    s_v1, s_vn, s_m = v0, v0 * v1, v0 * v1 * vn
    s_n = s_m * mm
    return cute.composition(t, cute.make_layout(((v1, mm), (v0, vn, nn)), stride=((s_v1, s_m), (1, s_vn, s_n))))


def transposed(t):
    """The same memory (and swizzle) with the first two modes swapped: a K-major (MN, K) operand tile
    seen as an MN-major (K, MN) one."""
    shape, stride = t.layout.shape, t.layout.stride
    return cute.make_tensor(t.iterator, cute.make_layout((shape[1], shape[0]) + tuple(shape[2:]),
                                                         stride=(stride[1], stride[0]) + tuple(stride[2:])))


class HopperAttentionBackward:
    """dQ, dK, dV of softmax attention (see the module docstring). ``dynamic``: the query-block loop
    is a runtime loop (always on the GPU, and always when causal); otherwise unrolled at trace time.
    The trade-offs, each selectable (the first value the default):

    - ``tile_m``: query rows per block, 128 at head dim 64 (the warpgroups split dQ by query rows) or
      64 (each warpgroup a dQ partial over its own 64 keys); 64 at head dim 128 (dQ split by columns);
    - ``order``: ``"dq_first"`` (dV, dQ, dK: dQ goes out while dK runs) or ``"dq_last"`` (dV, dK, dQ:
      dQ goes out after all five, the tensor cores idle meanwhile);
    - ``dq_writer``: with ``dq_reduce="tma"``, a producer warp issues the reduce-adds and waits for TMA's
      reads (True) or one thread of each consumer warpgroup does (False);
    - ``p_split``: 1, or 2 (the default): P^T computed in two halves of the query columns, the first
      half's dV wgmmas issued before the second half's exp2 (the tensor cores get dV work while the MUFU
      runs; on an H200 it was faster than 1 at 11 of 12 shapes, RESULTS.md 2026-11-28 15:2x UTC);
    - ``ds_store``: dS^T to shared memory by 32-bit stores (``"st32"``) or by ``"stmatrix"`` (an
      eighth of the instructions; at head dim 64 with bM 128 ptxas then spills 4 to 16 bytes a thread,
      at b1 h2 s1024 one value stored before the query loop and loaded after it; none at head dim 128)."""

    def __init__(self, dtype=cutlass.BFloat16, head_dim=128, causal=False, stages=2, softmax_scale=None,
                 dynamic=True, dq_reduce="tma", tile_m=None, order="dq_first", dq_writer=None, p_split=2,
                 ds_store="st32"):
        if head_dim not in (64, 128):
            raise ValueError(f"sm90_fmha_bwd: head_dim = {head_dim}; this kernel supports 64 and 128")
        if dtype not in (cutlass.Float16, cutlass.BFloat16):
            raise ValueError(f"sm90_fmha_bwd: dtype {dtype}; Float16 or BFloat16")
        if stages < 1:
            raise ValueError(f"sm90_fmha_bwd: stages = {stages}; at least 1")
        if dq_reduce not in ("tma", "red"):
            raise ValueError(f"sm90_fmha_bwd: dq_reduce = {dq_reduce!r}; 'tma' (TMA reduce-add from shared memory) "
                             f"or 'red' (red.global.add.f32 per element)")
        if tile_m is None:
            tile_m = 128 if head_dim == 64 else 64
        if tile_m not in (64, 128) or (tile_m == 128 and head_dim != 64):
            raise ValueError(f"sm90_fmha_bwd: tile_m = {tile_m}; 64 query rows per block, or 128 at head_dim 64 "
                             f"(head_dim {head_dim})")
        if order not in ("dq_first", "dq_last"):
            raise ValueError(f"sm90_fmha_bwd: order = {order!r}; 'dq_first' (dV, dQ, dK: dQ written out while dK "
                             f"runs) or 'dq_last' (dV, dK, dQ: dQ written out after all five)")
        if dq_writer is None:
            dq_writer = dq_reduce == "tma"
        if dq_writer and dq_reduce != "tma":
            raise ValueError("sm90_fmha_bwd: dq_writer (a producer warp issues the dQ reduce-adds) needs "
                             "dq_reduce='tma'")
        if p_split not in (1, 2):
            raise ValueError(f"sm90_fmha_bwd: p_split = {p_split}; 1 or 2 parts of P^T (and of dV's wgmmas)")
        self.p_split = p_split
        if ds_store not in ("st32", "stmatrix"):
            raise ValueError(f"sm90_fmha_bwd: ds_store = {ds_store!r}; 'st32' (32-bit stores) or 'stmatrix'")
        self.ds_store = ds_store
        self.dq_reduce = dq_reduce
        self.order = order
        self.dq_writer = bool(dq_writer)
        self.dtype = dtype
        self.head_dim = head_dim
        self.causal = causal
        self.stages = stages
        self.scale = softmax_scale if softmax_scale is not None else 1.0 / math.sqrt(head_dim)
        self.dynamic = dynamic
        self.tile_m, self.tile_n = tile_m, 128  # query rows per block, key rows per CTA (64 per consumer warpgroup)
        self.threads = 384
        self.producer_regs, self.consumer_regs = 24, 240
        self.row_threads = 128  # threads per CTA of the pre- and postprocess kernels
        # how the two warpgroups share dQ = dS K (bM x d) of a query block: "n" (head dim 128) half of head_dim
        # each over all 128 keys; "m" (bM 128) 64 query rows each over all keys; "keys" (d 64, bM 64) each its
        # own 64 keys over the whole tile (two partials of the same rows)
        self.dq_split = "n" if head_dim == 128 else ("m" if tile_m == 128 else "keys")
        self.split_dq = self.dq_split == "n"

    def loop(self, *args):
        return cutlass.range(*args, unroll=1) if self.dynamic or self.causal else range(*args)

    # ------------------------------------------------------------------ pre / postprocess

    @cute.kernel
    def preprocess(self, mO: cute.Tensor, mdO: cute.Tensor, mLSE: cute.Tensor, mLSE2: cute.Tensor, mD: cute.Tensor,
                   mdQacc: cute.Tensor):
        """Row r: D = sum(dO * O) (f32), LSE2 = LSE log2(e), dQ_accum[r, :] = 0. Each row is read by
        head_dim / 8 consecutive threads, 8 elements (16 bytes) each, their sums added by shuffles."""
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        seqlen = mLSE.shape[1]
        per_row = self.head_dim // 8
        row = bidx * (self.row_threads // per_row) + tidx // per_row
        j = tidx % per_row
        bh, i = row // seqlen, row % seqlen
        o = cute.local_tile(mO, (1, 8), (row, j)).load().to(cutlass.Float32)
        do = cute.local_tile(mdO, (1, 8), (row, j)).load().to(cutlass.Float32)
        dsum = cute.arch.warp_reduction_sum((o * do).reduce(cute.ReductionOp.ADD, cutlass.Float32.zero, 0),
                                            threads_in_group=per_row)
        if j == 0:
            mD[bh, i] = dsum
            mLSE2[bh, i] = mLSE[bh, i] * LOG2E
        zero = cute.make_rmem_tensor((1, 8), cutlass.Float32)
        zero.fill(0.0)
        cute.local_tile(mdQacc, (1, 8), (row, j)).store(zero.load())

    @cute.kernel
    def postprocess(self, mdQacc: cute.Tensor, mdQ: cute.Tensor):
        """Row r: dQ = dQ_accum scale, rounded to the input type; 8 elements per thread, as preprocess."""
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        per_row = self.head_dim // 8
        row = bidx * (self.row_threads // per_row) + tidx // per_row
        j = tidx % per_row
        acc = cute.local_tile(mdQacc, (1, 8), (row, j)).load()
        cute.local_tile(mdQ, (1, 8), (row, j)).store((acc * self.scale).to(mdQ.element_type))

    # ------------------------------------------------------------------ main kernel

    def make_atoms(self, mQ, mK, mV, mdO, mdQacc, mLSE2, mD):
        bM, bN, d, dt = self.tile_m, self.tile_n, self.head_dim, self.dtype
        f32 = cutlass.Float32
        K, MN = OperandMajorMode.K, OperandMajorMode.MN
        # S^T = K Q^T and dP^T = V dO^T: (key rows, query rows), the two warpgroups 64 key rows each
        sdp_op = warpgroup.MmaF16BF16Op(dt, f32, (64, bM, 16), warpgroup.OperandSource.SMEM, K, K)
        # dV += P^T dO and dK += dS^T Q: A (P^T, dS^T) from registers, B (dO, Q) N-major
        dkv_op = warpgroup.MmaF16BF16Op(dt, f32, (64, d, 16), warpgroup.OperandSource.RMEM, K, MN)
        # dQ = dS K: A (dS) M-major from shared memory, B (K) N-major; each warpgroup a 64-row tile of it
        # (dq_split: "n", half of head_dim each over all 128 keys; "m", 64 of the 128 query rows each; "keys",
        # its own 64 keys over all of head_dim: an N-major B of 32 columns is not a canonical GMMA layout)
        dq_n = d // 2 if self.split_dq else d
        dq_op = warpgroup.MmaF16BF16Op(dt, f32, (64, dq_n, 16), warpgroup.OperandSource.SMEM, MN, MN)
        tiled_sdp = cute.make_tiled_mma(sdp_op, (2, 1, 1))
        tiled_dkv = cute.make_tiled_mma(dkv_op, (2, 1, 1))
        tiled_sdp_wg = cute.make_tiled_mma(sdp_op, (1, 1, 1))  # one warpgroup's S^T tile (the dS store)
        tiled_dq = cute.make_tiled_mma(dq_op, (1, 1, 1))
        row, col = sm90_utils.LayoutEnum.ROW_MAJOR, sm90_utils.LayoutEnum.COL_MAJOR
        kv_smem = sm90_utils.make_smem_layout_a(row, (bN, bM, d), dt, 1)               # (bN, d, 1)
        q_smem = sm90_utils.make_smem_layout_b(row, (bN, bM, d), dt, self.stages)      # (bM, d, stages)
        # "n", "m": (bM, bN keys, 2 buffers: one per query-block parity); "keys": (bM, 64 keys, 2 warpgroups)
        ds_smem = sm90_utils.make_smem_layout_a(col, (bM, d, 64 if self.dq_split == "keys" else bN), dt, 2)
        g2s = cpasync.CopyBulkTensorTileG2SOp()
        kv1 = cute.slice_(kv_smem, (None, None, 0))
        q1 = cute.slice_(q_smem, (None, None, 0))
        tma_k, tK = cpasync.make_tiled_tma_atom(g2s, mK, kv1, (bN, d))
        tma_v, tV = cpasync.make_tiled_tma_atom(g2s, mV, kv1, (bN, d))
        tma_q, tQ = cpasync.make_tiled_tma_atom(g2s, mQ, q1, (bM, d))
        tma_do, tdO = cpasync.make_tiled_tma_atom(g2s, mdO, q1, (bM, d))
        # the dQ partials (f32) for the TMA reduce-add: 128-byte swizzled boxes of 64 x 32, dq_n / 32 per
        # warpgroup, 2 warpgroups
        dq_smem = sm90_utils.make_smem_layout_epi(f32, row, (64, 32), 2 * dq_n // 32)
        tma_dq, tdQ = cpasync.make_tiled_tma_atom(cpasync.CopyReduceBulkTensorTileS2GOp(), mdQacc,
                                                  cute.slice_(dq_smem, (None, None, 0)), (64, 32))
        # LSE2 and D of a query block: one row of bM f32 per stage, loaded with Q and dO
        row1 = cute.make_layout((1, bM), stride=(bM, 1))
        tma_lse, tLSE = cpasync.make_tiled_tma_atom(g2s, mLSE2, row1, (1, bM))
        tma_d, tD = cpasync.make_tiled_tma_atom(g2s, mD, row1, (1, bM))
        return (tiled_sdp, tiled_dkv, tiled_sdp_wg, tiled_dq, kv_smem, q_smem, ds_smem, dq_smem,
                tma_k, tK, tma_v, tV, tma_q, tQ, tma_do, tdO, tma_dq, tdQ, tma_lse, tLSE, tma_d, tD)

    @staticmethod
    def gemm(tiled_mma, acc, tA, tB, a_idx, b_idx, zero_init, kblocks=None):
        """The wgmmas of one block (k-blocks of 16; ``kblocks``: a (first, end) range of them),
        committed as one group. a_idx / b_idx: the index of the operand's trailing mode (a stage, a
        warpgroup) or None (no such mode)."""
        if zero_init:
            tiled_mma.set(warpgroup.Field.ACCUMULATE, False)
        warpgroup.fence()
        for kb in range(*(kblocks or (cute.size(tA, mode=[2]),))):
            a = tA[(None, None, kb)] if a_idx is None else tA[(None, None, kb, a_idx)]
            b = tB[(None, None, kb)] if b_idx is None else tB[(None, None, kb, b_idx)]
            cute.gemm(tiled_mma, acc, a, b, acc)
            if zero_init:
                tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
        warpgroup.commit_group()

    @cute.kernel
    def kernel(self, tma_k: cutlass.Constexpr, tK: cute.Tensor, tma_v: cutlass.Constexpr, tV: cute.Tensor,
               tma_q: cutlass.Constexpr, tQ: cute.Tensor, tma_do: cutlass.Constexpr, tdO: cute.Tensor,
               tma_dq: cutlass.Constexpr, tdQ: cute.Tensor, tma_lse: cutlass.Constexpr, tLSE: cute.Tensor,
               tma_d: cutlass.Constexpr, tD: cute.Tensor, mdQacc: cute.Tensor, mdK: cute.Tensor, mdV: cute.Tensor,
               tiled_sdp: cutlass.Constexpr, tiled_dkv: cutlass.Constexpr, tiled_sdp_wg: cutlass.Constexpr,
               tiled_dq: cutlass.Constexpr, kv_smem: cutlass.Constexpr, q_smem: cutlass.Constexpr,
               ds_smem: cutlass.Constexpr, dq_smem: cutlass.Constexpr):
        bM, bN, d, dt = self.tile_m, self.tile_n, self.head_dim, self.dtype
        tidx, _, _ = cute.arch.thread_idx()
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        warp_group = cute.arch.make_warp_uniform(tidx // 128)
        n_block, bh, _ = cute.arch.block_idx()
        seqlen = tLSE.shape[1]
        m_blocks = seqlen // bM
        m_first = n_block * (bN // bM) if cutlass.const_expr(self.causal) else 0  # causal: the first block that sees a key

        smem = cutlass.utils.SmemAllocator()
        bars_kv = smem.allocate_tensor(cutlass.Int64, cute.make_layout(2), 8)
        bars_q = smem.allocate_tensor(cutlass.Int64, cute.make_layout(2 * self.stages), 8)
        sK = smem.allocate_tensor(dt, kv_smem.outer, 1024, swizzle=kv_smem.inner)
        sV = smem.allocate_tensor(dt, kv_smem.outer, 1024, swizzle=kv_smem.inner)
        sQ = smem.allocate_tensor(dt, q_smem.outer, 1024, swizzle=q_smem.inner)
        sdO = smem.allocate_tensor(dt, q_smem.outer, 1024, swizzle=q_smem.inner)
        sdS = smem.allocate_tensor(dt, ds_smem.outer, 1024, swizzle=ds_smem.inner)
        if cutlass.const_expr(self.dq_reduce == "tma"):
            sdQ = smem.allocate_tensor(cutlass.Float32, dq_smem.outer, 1024, swizzle=dq_smem.inner)
        row_smem = cute.make_layout((1, bM, self.stages), stride=(bM, 1, bM))
        sLSE = smem.allocate_tensor(cutlass.Float32, row_smem, 128)
        sD = smem.allocate_tensor(cutlass.Float32, row_smem, 128)
        producer_group = pipeline.CooperativeGroup(pipeline.Agent.Thread)
        consumer_group = pipeline.CooperativeGroup(pipeline.Agent.Thread, 8)  # the consumers' 8 warps
        tile_bytes = bM * d * dt.width // 8
        pipe_kv = pipeline.PipelineTmaAsync.create(barrier_storage=bars_kv.iterator, num_stages=1,
                                                   producer_group=producer_group, consumer_group=consumer_group,
                                                   tx_count=2 * bN * d * dt.width // 8, defer_sync=True)
        pipe_q = pipeline.PipelineTmaAsync.create(barrier_storage=bars_q.iterator, num_stages=self.stages,
                                                  producer_group=producer_group, consumer_group=consumer_group,
                                                  tx_count=2 * tile_bytes + 2 * bM * 4, defer_sync=True)
        pipeline.pipeline_init_arrive()
        pipeline.pipeline_init_wait()
        kv_producer = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, 1)
        kv_consumer = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, 1)
        producer = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, self.stages)
        consumer = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.stages)
        kv_tile = bh * (seqlen // bN) + n_block
        q_tile0 = bh * m_blocks

        if warp_group == 0:  # producer
            cute.arch.setmaxregister_decrease(self.producer_regs)
            if warp_idx == 0:
                lay1 = cute.make_layout(1)
                gK = cute.local_tile(tK, (bN, d), (None, 0))
                gV = cute.local_tile(tV, (bN, d), (None, 0))
                gQ = cute.local_tile(tQ, (bM, d), (None, 0))
                gdO = cute.local_tile(tdO, (bM, d), (None, 0))
                tKs, tKg = cpasync.tma_partition(tma_k, 0, lay1, cute.group_modes(sK, 0, 2), cute.group_modes(gK, 0, 2))
                tVs, tVg = cpasync.tma_partition(tma_v, 0, lay1, cute.group_modes(sV, 0, 2), cute.group_modes(gV, 0, 2))
                tQs, tQg = cpasync.tma_partition(tma_q, 0, lay1, cute.group_modes(sQ, 0, 2), cute.group_modes(gQ, 0, 2))
                tdOs, tdOg = cpasync.tma_partition(tma_do, 0, lay1, cute.group_modes(sdO, 0, 2),
                                                   cute.group_modes(gdO, 0, 2))
                gL = cute.local_tile(tLSE, (1, bM), (bh, None))  # (1, bM, query blocks) of this head
                gD = cute.local_tile(tD, (1, bM), (bh, None))
                tLs, tLg = cpasync.tma_partition(tma_lse, 0, lay1, cute.group_modes(sLSE, 0, 2), cute.group_modes(gL, 0, 2))
                tDs, tDg = cpasync.tma_partition(tma_d, 0, lay1, cute.group_modes(sD, 0, 2), cute.group_modes(gD, 0, 2))
                pipe_kv.producer_acquire(kv_producer)
                bar = pipe_kv.producer_get_barrier(kv_producer)
                cute.copy(tma_k, tKg[(None, kv_tile)], tKs[(None, 0)], tma_bar_ptr=bar)
                cute.copy(tma_v, tVg[(None, kv_tile)], tVs[(None, 0)], tma_bar_ptr=bar)
                pipe_kv.producer_commit(kv_producer)
                for m in self.loop(m_first, m_blocks):
                    st = _state_at(producer, m - m_first)
                    pipe_q.producer_acquire(st)
                    bar = pipe_q.producer_get_barrier(st)
                    cute.copy(tma_q, tQg[(None, q_tile0 + m)], tQs[(None, st.index)], tma_bar_ptr=bar)
                    cute.copy(tma_do, tdOg[(None, q_tile0 + m)], tdOs[(None, st.index)], tma_bar_ptr=bar)
                    cute.copy(tma_lse, tLg[(None, m)], tLs[(None, st.index)], tma_bar_ptr=bar)
                    cute.copy(tma_d, tDg[(None, m)], tDs[(None, st.index)], tma_bar_ptr=bar)
                    pipe_q.producer_commit(st)
            if cutlass.const_expr(self.dq_writer):
                if warp_idx == 1:  # the dQ writer
                    self.write_dq(sdQ, tdQ, tma_dq, q_tile0, m_first, m_blocks)
        else:  # consumers: warpgroup wg = 0, 1 takes key rows 64 wg .. 64 wg + 63 of the block
            cute.arch.setmaxregister_increase(self.consumer_regs)
            wg = warp_group - 1
            ctid = tidx - 128
            thr_sdp = tiled_sdp.get_slice(ctid)
            thr_dkv = tiled_dkv.get_slice(ctid)
            thr_dq = tiled_dq.get_slice(ctid % 128)
            tSsK = thr_sdp.partition_A(sK)                  # ((64, 16), 1, d / 16, 1)
            tSsV = thr_sdp.partition_A(sV)
            tSsQ = thr_sdp.partition_B(sQ)                  # ((bM, 16), 1, d / 16, stages)
            tSsdO = thr_sdp.partition_B(sdO)
            tdVsdOt = thr_dkv.partition_B(transposed(sdO))  # ((d, 16), 1, bM / 16, stages): dO N-major
            tdKsQt = thr_dkv.partition_B(transposed(sQ))
            tdQsdS = thr_dq.partition_A(sdS)                # ((64, 16), 1, keys / 16, 2): dS M-major
            sKt = transposed(cute.slice_(sK, (None, None, 0)))  # (d, bN): K N-major
            if cutlass.const_expr(self.dq_split == "n"):
                sKt = cute.local_tile(sKt, (d // 2, bN), (None, 0))  # (d / 2, bN, 2): each warpgroup half of d
            elif cutlass.const_expr(self.dq_split == "keys"):
                sKt = cute.local_tile(sKt, (d, 64), (0, None))  # (d, 64, 2): each warpgroup its 64 keys
            if cutlass.const_expr(self.dq_split == "m"):  # this warpgroup's 64 query rows of dS, all of K
                MN = OperandMajorMode.MN
                dq_op = warpgroup.MmaF16BF16Op(dt, cutlass.Float32, (64, d, 16), warpgroup.OperandSource.SMEM, MN, MN)
                tdQsdS = cute.make_tiled_mma(dq_op, (2, 1, 1)).get_slice(ctid).partition_A(sdS)
            tdQsKt = thr_dq.partition_B(sKt)                # ((dq_n, 16), 1, keys / 16[, 2 warpgroups])
            kt_idx = None if cutlass.const_expr(self.dq_split == "m") else wg
            tScS = thr_sdp.partition_C(cute.make_identity_tensor((bN, bM)))  # (key, query) coordinates
            tdKcdK = thr_dkv.partition_C(cute.make_identity_tensor((bN, d)))
            tdQcdQ = thr_dq.partition_C(cute.make_identity_tensor((64, d // 2 if self.split_dq else d)))
            acc_S = cute.make_rmem_tensor(tScS.shape, cutlass.Float32)
            acc_dP = cute.make_rmem_tensor(tScS.shape, cutlass.Float32)
            acc_dV = cute.make_rmem_tensor(tdKcdK.shape, cutlass.Float32)
            acc_dK = cute.make_rmem_tensor(tdKcdK.shape, cutlass.Float32)
            acc_dQ = cute.make_rmem_tensor(tdQcdQ.shape, cutlass.Float32)
            # P^T and dS^T as wgmma A fragments ((2, 2, 2), 1, bM / 16): the registers order of the accumulators
            a_shape = thr_dkv.partition_A(cute.make_identity_tensor((bN, bM))).shape
            rP = cute.make_rmem_tensor(a_shape, dt)
            rdS = cute.make_rmem_tensor(a_shape, dt)
            S_as_A = cute.make_tensor(acc_S.iterator, cute.make_layout(a_shape))
            dP_as_A = cute.make_tensor(acc_dP.iterator, cute.make_layout(a_shape))
            rdS_as_C = cute.make_tensor(rdS.iterator, cute.make_layout(tScS.shape))
            if cutlass.const_expr(self.dq_split == "keys"):  # this warpgroup's dS^T (64 keys, bM)
                tSsdS = transposed(cute.slice_(sdS, (None, None, wg)))
            tiled_dkv.set(warpgroup.Field.ACCUMULATE, True)
            acc_dV.fill(0.0)
            acc_dK.fill(0.0)
            ds_bar_all = pipeline.NamedBarrier(barrier_id=2, num_threads=256)
            chunks = (d // 2 if self.split_dq else d) // 32  # dQ boxes (64 x 32) per warpgroup
            if cutlass.const_expr(self.dq_reduce == "tma"):
                # this warpgroup's boxes seen as one (64, dq_n) tile, and the global boxes of a query block
                sdQ_wg = cute.local_tile(sdQ, (64, 32, chunks), (0, 0, wg))
                tdQsdQ = thr_dq.partition_C(cute.group_modes(sdQ_wg, 1, 3))
                gdQ_all = cute.local_tile(tdQ, (64, 32), (None, None))  # (64, 32, row tiles, column boxes)
            else:
                sdQ = tdQsdQ = gdQ_all = None
            if cutlass.const_expr(self.dq_writer):
                if warp_idx % 4 == 0:  # the first dQ of this warpgroup finds its boxes free
                    cute.arch.barrier_arrive(barrier_id=self.DQ_EMPTY + wg, number_of_threads=self.DQ_THREADS)

            pipe_kv.consumer_wait(kv_consumer)
            for m in self.loop(m_first, m_blocks):
                st = _state_at(consumer, m - m_first)
                pipe_q.consumer_wait(st)
                self.gemm(tiled_sdp, acc_S, tSsK, tSsQ, 0, st.index, True)    # S^T = K Q^T
                self.gemm(tiled_sdp, acc_dP, tSsV, tSsdO, 0, st.index, True)  # dP^T = V dO^T
                C = mn_view(tScS)
                warpgroup.wait_group(1)  # S^T is in; dP^T may still run
                ps, nk = self.p_split, cute.size(rP, mode=[2])  # dV's k-blocks: 16 query columns each
                ncol = cute.size(mn_view(acc_S), mode=[1])  # this thread's query columns
                for h in cutlass.range_constexpr(ps):  # P^T in ps parts, each part's dV issued once it is in
                    self.softmax_grad_p(acc_S, sLSE, st.index, tScS, m, n_block, m_first,
                                        (h * ncol // ps, (h + 1) * ncol // ps))
                    for kb in cutlass.range_constexpr(h * nk // ps, (h + 1) * nk // ps):
                        rP[None, None, kb].store(S_as_A[None, None, kb].load().to(dt))
                    self.gemm(tiled_dkv, acc_dV, rP, tdVsdOt, None, st.index, False,
                              (h * nk // ps, (h + 1) * nk // ps))  # dV += P^T dO
                warpgroup.wait_group(ps)  # dP^T is in; dV may still run
                S, dP = mn_view(acc_S), mn_view(acc_dP)
                for c in cutlass.range_constexpr(cute.size(dP, mode=[1])):  # D of the column's query row
                    dP[None, c] = S[None, c].load() * (dP[None, c].load() - sD[0, C[0, c][1], st.index])
                rdS.store(dP_as_A.load().to(dt))
                if cutlass.const_expr(self.order == "dq_last"):
                    self.gemm(tiled_dkv, acc_dK, rdS, tdKsQt, None, st.index, False)  # dK += dS^T Q
                if cutlass.const_expr(self.dq_split == "keys"):
                    self.store_ds(rdS_as_C, tSsdS, tiled_sdp_wg, ctid % 128)
                    cute.arch.fence_view_async_shared()
                    cute.arch.barrier(barrier_id=3 + wg, number_of_threads=128)
                    self.gemm(tiled_dq, acc_dQ, tdQsdS, tdQsKt, wg, wg, True)  # dQ_wg = dS K_wg
                else:
                    # both warpgroups' dS^T into the buffer of this block's parity (the other one may still
                    # be read by the other warpgroup's dQ of the previous block), then this warpgroup's half
                    # of dQ = dS K (its columns, "n", or its rows, "m")
                    buf = (m - m_first) % 2
                    self.store_ds(rdS_as_C, transposed(cute.slice_(sdS, (None, None, buf))), tiled_sdp, ctid)
                    cute.arch.fence_view_async_shared()  # dS's generic stores, then the wgmma's async reads
                    ds_bar_all.arrive_and_wait()
                    self.gemm(tiled_dq, acc_dQ, tdQsdS, tdQsKt, buf, kt_idx, True)
                if cutlass.const_expr(self.order == "dq_last"):
                    warpgroup.wait_group(1)  # dV, dK done: Q and dO are no longer read
                    pipe_q.consumer_release(st)
                    warpgroup.wait_group(0)
                    self.dq_out(acc_dQ, tdQsdQ, sdQ, gdQ_all, tma_dq, thr_dq, mdQacc, wg, ctid, q_tile0 + m, chunks)
                else:
                    self.gemm(tiled_dkv, acc_dK, rdS, tdKsQt, None, st.index, False)  # dK += dS^T Q
                    warpgroup.wait_group(1)  # dV, dQ done; dK runs on while dQ goes out
                    self.dq_out(acc_dQ, tdQsdQ, sdQ, gdQ_all, tma_dq, thr_dq, mdQacc, wg, ctid, q_tile0 + m, chunks)
                    warpgroup.wait_group(0)  # dK done: Q and dO are no longer read
                    pipe_q.consumer_release(st)
            pipe_kv.consumer_release(kv_consumer)
            if cutlass.const_expr(self.dq_reduce == "tma" and not self.dq_writer):
                if ctid % 128 == 0:
                    cute.arch.cp_async_bulk_wait_group(0, read=False)  # the last reduce-adds done

            # dK scale and dV, rounded, out
            rdK = cute.make_fragment_like(acc_dK, dt)
            rdK.store((acc_dK.load() * self.scale).to(dt))
            rdV = cute.make_fragment_like(acc_dV, dt)
            rdV.store(acc_dV.load().to(dt))
            store = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), dt)
            cute.copy(store, rdK, thr_dkv.partition_C(cute.local_tile(mdK, (bN, d), (kv_tile, 0))))
            cute.copy(store, rdV, thr_dkv.partition_C(cute.local_tile(mdV, (bN, d), (kv_tile, 0))))

    # two named barriers per consumer warpgroup wg between it (128 threads) and the dQ writer warp (32):
    # DQ_FULL + wg, its dQ boxes are written (it arrives, the writer waits); DQ_EMPTY + wg, TMA has read
    # them (the writer arrives, it waits; its first warp arrives once at the start, for the first block)
    DQ_FULL, DQ_EMPTY, DQ_THREADS = 5, 7, 128 + 32

    def dq_rows(self, q_tile, wg):
        """The 64-row tile of dQ_accum that warpgroup wg's dQ of query block q_tile covers."""
        return q_tile * (self.tile_m // 64) + wg if self.dq_split == "m" else q_tile

    def dq_col0(self, wg, chunks):
        """The first 32-column box of dQ_accum that warpgroup wg's dQ covers."""
        return wg * chunks if self.split_dq else 0

    @cute.jit
    def dq_out(self, acc_dQ, tdQsdQ, sdQ, gdQ_all, tma_dq, thr_dq, mdQacc, wg, ctid, q_tile, chunks):
        """A warpgroup's dQ partial of query tile q_tile (its wgmma waited for) added to dQ_accum."""
        col0 = self.dq_col0(wg, chunks)
        rows = self.dq_rows(q_tile, wg)
        if cutlass.const_expr(self.dq_writer):
            cute.arch.barrier(barrier_id=self.DQ_EMPTY + wg, number_of_threads=self.DQ_THREADS)
            cute.copy(cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float32), acc_dQ, tdQsdQ)
            cute.arch.fence_view_async_shared()  # the generic stores, then TMA's reads
            cute.arch.barrier_arrive(barrier_id=self.DQ_FULL + wg, number_of_threads=self.DQ_THREADS)
        elif cutlass.const_expr(self.dq_reduce == "tma"):
            self.reduce_dq(acc_dQ, tdQsdQ, sdQ, gdQ_all, tma_dq, wg, ctid, rows, col0, chunks)
        else:
            gdQ = thr_dq.partition_C(cute.local_tile(mdQacc, (64, 32 * chunks), (rows, col0 // chunks)))
            for i in cutlass.range_constexpr(cute.size(acc_dQ)):
                cute.arch.red(gdQ.iterator + cute.crd2idx(i, gdQ.layout), acc_dQ[i], op="add", dtype="f32")

    @cute.jit
    def issue_dq(self, sdQ, gdQ_all, tma_dq, wg, rows, col0, chunks):
        """The TMA reduce-adds of warpgroup wg's dQ boxes into rows x [col0, col0 + chunks) of dQ_accum,
        committed as one bulk group (the calling thread alone)."""
        for j in cutlass.range_constexpr(chunks):
            ts, tg = cpasync.tma_partition(tma_dq, 0, cute.make_layout(1),
                                           cute.group_modes(cute.slice_(sdQ, (None, None, wg * chunks + j)), 0, 2),
                                           cute.group_modes(cute.slice_(gdQ_all, (None, None, rows, col0 + j)), 0, 2))
            cute.copy(tma_dq, ts, tg)
        cute.arch.cp_async_bulk_commit_group()

    @cute.jit
    def reduce_dq(self, acc_dQ, tdQsdQ, sdQ, gdQ_all, tma_dq, wg, ctid, rows, col0, chunks):
        """A warpgroup's dQ partial into its f32 boxes in shared memory, then added to dQ_accum by TMA
        reduce-adds that one thread issues. The boxes are rewritten only after that thread saw the
        previous block's reduce-adds read them (``cp.async.bulk.wait_group.read 0``) and the warpgroup
        met at its named barrier."""
        if ctid % 128 == 0:
            cute.arch.cp_async_bulk_wait_group(0, read=True)
        cute.arch.barrier(barrier_id=3 + wg, number_of_threads=128)
        cute.copy(cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float32), acc_dQ, tdQsdQ)
        cute.arch.fence_view_async_shared()  # the generic stores, then TMA's reads
        cute.arch.barrier(barrier_id=3 + wg, number_of_threads=128)
        if ctid % 128 == 0:
            self.issue_dq(sdQ, gdQ_all, tma_dq, wg, rows, col0, chunks)

    @cute.jit
    def write_dq(self, sdQ, tdQ, tma_dq, q_tile0, m_first, m_blocks):
        """The dQ writer (one producer warp): per query block and warpgroup, waits for the warpgroup's dQ
        boxes, issues their TMA reduce-adds (lane 0), and once TMA has read them (``wait_group.read``)
        gives them back; the consumers go on with their GEMMs meanwhile."""
        lane = cute.arch.lane_idx()
        chunks = (self.head_dim // 2 if self.split_dq else self.head_dim) // 32
        gdQ_all = cute.local_tile(tdQ, (64, 32), (None, None))
        for m in self.loop(m_first, m_blocks):
            for wg in cutlass.range_constexpr(2):
                cute.arch.barrier(barrier_id=self.DQ_FULL + wg, number_of_threads=self.DQ_THREADS)
                if lane == 0:
                    self.issue_dq(sdQ, gdQ_all, tma_dq, wg, self.dq_rows(q_tile0 + m, wg), self.dq_col0(wg, chunks),
                                  chunks)
            for wg in cutlass.range_constexpr(2):
                if lane == 0:
                    cute.arch.cp_async_bulk_wait_group(1 - wg, read=True)
                cute.arch.sync_warp()
                if m + 1 < m_blocks:  # the last boxes are not written again
                    cute.arch.barrier_arrive(barrier_id=self.DQ_EMPTY + wg, number_of_threads=self.DQ_THREADS)
        if lane == 0:
            cute.arch.cp_async_bulk_wait_group(0, read=False)  # the last reduce-adds done

    @cute.jit
    def store_ds(self, rdS, sdSt, tiled_mma, tid):
        """This thread's dS^T (rounded, in S^T's accumulator layout of tiled_mma) into sdSt, the
        (keys, queries) view of dS's M-major tile: 32-bit stores, or ``stmatrix`` (four 8 x 8
        matrices a warp instruction)."""
        if cutlass.const_expr(self.ds_store == "stmatrix"):
            atom = cute.make_copy_atom(cute.nvgpu.warp.StMatrix8x8x16bOp(transpose=False, num_matrices=4), self.dtype)
            thr = cute.make_tiled_copy_C(atom, tiled_mma).get_slice(tid)
            cute.copy(atom, thr.retile(rdS), thr.partition_D(sdSt))
        else:
            cute.copy(cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), self.dtype), rdS,
                      tiled_mma.get_slice(tid).partition_C(sdSt))

    @cute.jit
    def softmax_grad_p(self, acc_S, sLSE, stage, tScS, m, n_block, m_first, cols):
        """S^T becomes P^T = exp2(S^T scale log2(e) - LSE2[query]) in place, in this thread's query
        columns cols = (first, end); causal: keys after the query get P = 0, on the query blocks that
        straddle the diagonal."""
        S, C = mn_view(acc_S), mn_view(tScS)
        sl2 = self.scale * LOG2E
        for c in cutlass.range_constexpr(*cols):
            S[None, c] = cute.math.exp2(S[None, c].load() * sl2 - sLSE[0, C[0, c][1], stage], fastmath=True)
        if cutlass.const_expr(self.causal):
            if m < m_first + self.tile_n // self.tile_m:
                for r in cutlass.range_constexpr(cute.size(S, mode=[0])):
                    for c in cutlass.range_constexpr(*cols):
                        if m * self.tile_m + C[0, c][1] < n_block * self.tile_n + C[r, 0][0]:
                            S[r, c] = 0.0

    @cute.jit
    def __call__(self, mQ: cute.Tensor, mK: cute.Tensor, mV: cute.Tensor, mO: cute.Tensor, mdO: cute.Tensor,
                 mLSE: cute.Tensor, mdQ: cute.Tensor, mdK: cute.Tensor, mdV: cute.Tensor, mdQacc: cute.Tensor,
                 mLSE2: cute.Tensor, mD: cute.Tensor):
        """mQ, mK, mV, mO, mdO, mdQ, mdK, mdV: (batch * heads * seqlen, head_dim) row-major; mLSE (the
        forward's), mLSE2, mD: (batch * heads, seqlen) f32; mdQacc: (batch * heads * seqlen, head_dim)
        f32 (workspace, zeroed here)."""
        rows, d = mQ.shape
        bh, seqlen = mLSE.shape
        where = "sm90_fmha_bwd"
        for name, t in (("Q", mQ), ("K", mK), ("V", mV), ("O", mO), ("dO", mdO), ("dQ", mdQ), ("dK", mdK),
                        ("dV", mdV)):
            if t.element_type != self.dtype:
                raise ValueError(f"{where}: {name} holds {t.element_type}; the kernel was made for {self.dtype}")
            if d != self.head_dim or tuple(t.shape) != (rows, d):
                raise ValueError(f"{where}: {name} is {t.shape}; expected ({rows}, {self.head_dim}) like Q")
        for name, t in (("LSE", mLSE), ("LSE2", mLSE2), ("D", mD)):
            if t.element_type != cutlass.Float32 or tuple(t.shape) != (bh, seqlen):
                raise ValueError(f"{where}: {name} {t.shape} of {t.element_type}: expected Float32 ({bh}, {seqlen})")
        if mdQacc.element_type != cutlass.Float32 or tuple(mdQacc.shape) != (rows, d):
            raise ValueError(f"{where}: dQ_accum {mdQacc.shape} of {mdQacc.element_type}: expected Float32 ({rows}, {d})")
        if bh * seqlen != rows:
            raise ValueError(f"{where}: LSE {mLSE.shape}: batch * heads * seqlen must be Q's {rows} rows")
        if seqlen % self.tile_n:
            raise ValueError(f"{where}: seqlen {seqlen} must be a multiple of {self.tile_n} (no partial tiles)")
        atoms = self.make_atoms(mQ, mK, mV, mdO, mdQacc, mLSE2, mD)
        (tiled_sdp, tiled_dkv, tiled_sdp_wg, tiled_dq, kv_smem, q_smem, ds_smem, dq_smem,
         tma_k, tK, tma_v, tV, tma_q, tQ, tma_do, tdO, tma_dq, tdQ, tma_lse, tLSE, tma_d, tD) = atoms
        row_grid = (rows // (self.row_threads * 8 // d), 1, 1)  # rows per CTA: 128 threads, d / 8 threads a row
        self.preprocess(mO, mdO, mLSE, mLSE2, mD, mdQacc).launch(grid=row_grid, block=(self.row_threads, 1, 1))
        # min_blocks_per_mp=1 (__launch_bounds__(384, 1)): without it ptxas may leave the register count at
        # entry open, ignore setmaxnreg (C7508) and serialize the wgmmas (C7512)
        self.kernel(tma_k, tK, tma_v, tV, tma_q, tQ, tma_do, tdO, tma_dq, tdQ, tma_lse, tLSE, tma_d, tD, mdQacc, mdK,
                    mdV, tiled_sdp,
                    tiled_dkv, tiled_sdp_wg, tiled_dq, kv_smem, q_smem, ds_smem, dq_smem).launch(grid=(seqlen // self.tile_n, bh, 1),
                                                                             block=(self.threads, 1, 1),
                                                                             min_blocks_per_mp=1)
        self.postprocess(mdQacc, mdQ).launch(grid=row_grid, block=(self.row_threads, 1, 1))


_DTYPES = {"f16": cutlass.Float16, "bf16": cutlass.BFloat16}


def views(q, k, v, o, do, lse, dq, dk, dv, dq_accum, lse2, dsum, wrap=lambda t: t):
    """The kernel's arguments: q, k, v, o, do, dq, dk, dv (batch, heads, seqlen, head_dim) and
    dq_accum (the same shape, f32) as (batch * heads * seqlen, head_dim) views; lse, lse2, dsum
    (batch, heads, seqlen) f32 as (batch * heads, seqlen). Torch tensors (CPU or CUDA), contiguous;
    ``wrap`` is applied to each view before from_dlpack."""
    b, h, s, d = q.shape
    flat = lambda x: x.reshape(b * h * s, d)  # noqa: E731
    rows = lambda x: x.reshape(b * h, s)  # noqa: E731
    return tuple(from_dlpack(wrap(t), assumed_align=16)
                 for t in (flat(q), flat(k), flat(v), flat(o), flat(do), rows(lse), flat(dq), flat(dk), flat(dv),
                           flat(dq_accum), rows(lse2), rows(dsum)))


def reference(q, k, v, do, causal, scale):
    """(O, LSE, dQ, dK, dV) by torch's autograd of attention in float64 (the tensors' device), one
    (batch, head) at a time (at seqlen 16k one score matrix is 2 GiB)."""
    import torch

    outs = [[] for _ in range(5)]
    b, h, n, _ = q.shape
    mask = torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1) if causal else None
    for i in range(b):
        for j in range(h):
            qd, kd, vd = (x[i, j].detach().double().requires_grad_() for x in (q, k, v))
            s = (qd @ kd.T) * scale
            if causal:
                s = s.masked_fill(mask, float("-inf"))
            lse = torch.logsumexp(s, -1)
            o = torch.softmax(s, -1) @ vd
            grads = torch.autograd.grad(o, (qd, kd, vd), do[i, j].double())
            for acc, t in zip(outs, (o.detach(), lse.detach()) + grads):
                acc.append(t)
    return tuple(torch.stack(t).reshape(b, h, *t[0].shape) for t in outs)


def make_inputs(b, h, s, d, dtype, causal, scale, device="cpu", seed=0):
    """Random Q, K, V, dO of the 16-bit type, and the forward's O (rounded) and LSE (f32) from the
    float64 reference, as a forward kernel would have written them."""
    import torch

    tdt = {"f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    g = torch.Generator(device="cpu").manual_seed(seed)
    q, k, v, do = (torch.randn(b, h, s, d, generator=g).to(device=device, dtype=tdt) for _ in range(4))
    o, lse, dq, dk, dv = reference(q, k, v, do, causal, scale)
    return q, k, v, do, o.to(tdt), lse.float(), (dq, dk, dv)


def errors(got, want):
    """Per gradient: max |got - want| / max |want| (f64)."""
    return tuple(float((g.double() - w).abs().max() / w.abs().max()) for g, w in zip(got, want))


# dS and P are rounded to the 16-bit type before their GEMMs (as FlashAttention does), and O (whose
# rounding enters D) and the gradients once more: a few ulps of the type, relative to the largest gradient
TOLERANCE = {"f16": 3e-3, "bf16": 2e-2}


def run_cpu(b, h, s, d, causal, dtype="bf16", dynamic=False, cuda_file=None, seed=0, stages=2, dq_reduce="tma",
            **options):
    """Runs the three kernels on the CPU interpreter; returns the relative errors of (dQ, dK, dV)
    against torch's float64 autograd. ``options``: HopperAttentionBackward's (tile_m, order, dq_writer)."""
    import torch

    bwd = HopperAttentionBackward(_DTYPES[dtype], d, causal, stages=stages, dynamic=dynamic, dq_reduce=dq_reduce,
                                  **options)
    q, k, v, do, o, lse, want = make_inputs(b, h, s, d, dtype, causal, bwd.scale, seed=seed)
    dq, dk, dv = (torch.zeros_like(q) for _ in range(3))
    dq_accum = torch.full((b, h, s, d), float("nan"))  # the preprocess kernel zeroes it
    lse2, dsum = torch.zeros(b, h, s), torch.zeros(b, h, s)
    bwd(*views(q, k, v, o, do, lse, dq, dk, dv, dq_accum, lse2, dsum))
    if cuda_file:
        from cutelab.kernel.cuda import printer as cuda

        with open(cuda_file, "w") as f:
            f.write(cuda.render(traced_kernels(bwd, q, k, v, o, do, lse)[1]))
    return errors((dq, dk, dv), want)


def traced_kernels(bwd, q, k, v, o, do, lse):
    """The IRs of the three kernels (preprocess, main, postprocess) of one call, traced and not run
    (``cutelab.kernel.launch.plan.capture``)."""
    import torch

    from cutelab.kernel.launch.plan import capture

    dq, dk, dv = (torch.zeros_like(q) for _ in range(3))
    f32 = lambda *shape: torch.zeros(*shape, dtype=torch.float32)  # noqa: E731
    with capture() as irs:
        bwd(*views(q, k, v, o, do, lse, dq, dk, dv, f32(q.shape), f32(lse.shape), f32(lse.shape)))
    return irs


def run_gpu(b, h, s, d, causal, dtype="bf16", iters=20, dq_reduce="tma", **options) -> int:
    """On a GPU: compile once, check dQ, dK, dV against torch's f64 autograd (the batch entries are
    copies of one: checked on the last), time the compiled call (the three kernels) back to back."""
    import torch

    bwd = HopperAttentionBackward(_DTYPES[dtype], d, causal, dq_reduce=dq_reduce, **options)
    q, k, v, do, o, lse, want = make_inputs(1, h, s, d, dtype, causal, bwd.scale, device="cuda")
    big = lambda x: x.expand(b, *x.shape[1:]).contiguous()  # noqa: E731 - batch entries all alike
    q, k, v, do, o, lse = (big(x) for x in (q, k, v, do, o, lse))
    dq, dk, dv = (torch.empty_like(q) for _ in range(3))
    dq_accum = torch.empty(b, h, s, d, device="cuda", dtype=torch.float32)
    lse2, dsum = (torch.empty(b, h, s, device="cuda", dtype=torch.float32) for _ in range(2))
    args = views(q, k, v, o, do, lse, dq, dk, dv, dq_accum, lse2, dsum)
    compiled = cute.compile(bwd, *args)
    compiled(*args)
    torch.cuda.synchronize()
    err = errors((dq[-1:], dk[-1:], dv[-1:]), want)
    ok = max(err) <= TOLERANCE[dtype]
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        compiled(*args)
    start.record()
    for _ in range(iters):
        compiled(*args)
    end.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end) / iters
    flops = 10 * b * h * s * s * d / (2 if causal else 1)  # five GEMMs
    print(f"sm90_fmha_bwd b{b} h{h} s{s} d{d} {dtype}{' causal' if causal else ''} on {torch.cuda.get_device_name()}: "
          f"relative error dQ {err[0]:.3g}, dK {err[1]:.3g}, dV {err[2]:.3g} "
          f"({'within' if ok else 'OUTSIDE'} tolerance {TOLERANCE[dtype]:g}); "
          f"{ms:.4f} ms, {flops / ms / 1e9:.1f} TFLOP/s back to back")
    return 0 if ok else 1


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--shape", default="1,2,256,64", help="batch,heads,seqlen,head_dim")
    p.add_argument("--causal", action="store_true")
    p.add_argument("--dtype", default="bf16", choices=sorted(_DTYPES))
    p.add_argument("--gpu", action="store_true", help="run on the GPU with torch tensors (needs an H100)")
    p.add_argument("--dynamic", action="store_true", help="CPU: a runtime query-block loop (always on with --gpu)")
    p.add_argument("--cuda", default=None, help="write the main kernel's generated CUDA source here")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--dq-reduce", default="tma", choices=["tma", "red"],
                   help="how the dQ partials reach the f32 accumulator: TMA reduce-add (default) or red.global.add.f32")
    p.add_argument("--tile-m", type=int, default=None, choices=[64, 128],
                   help="query rows per block (default: 128 at head dim 64, else 64)")
    p.add_argument("--order", default="dq_first", choices=["dq_first", "dq_last"],
                   help="dq_first: dV, dQ, dK (dQ written out while dK runs); dq_last: dV, dK, dQ")
    p.add_argument("--p-split", type=int, default=2, choices=[1, 2],
                   help="2: P^T in two halves, the first half's dV wgmmas issued before the second's exp2")
    p.add_argument("--ds-store", default="st32", choices=["st32", "stmatrix"],
                   help="dS^T to shared memory by 32-bit stores or by stmatrix")
    p.add_argument("--dq-writer", type=int, default=None, choices=[0, 1],
                   help="1: a producer warp issues the dQ reduce-adds (default with --dq-reduce tma)")
    a = p.parse_args(argv)
    b, h, s, d = (int(x) for x in a.shape.split(","))
    options = dict(tile_m=a.tile_m, order=a.order, dq_writer=None if a.dq_writer is None else bool(a.dq_writer),
                   p_split=a.p_split, ds_store=a.ds_store)
    if a.gpu:
        return run_gpu(b, h, s, d, a.causal, a.dtype, a.iters, a.dq_reduce, **options)
    err = run_cpu(b, h, s, d, a.causal, a.dtype, a.dynamic, a.cuda, dq_reduce=a.dq_reduce, **options)
    ok = max(err) <= TOLERANCE[a.dtype]
    print(f"sm90_fmha_bwd b{b} h{h} s{s} d{d} {a.dtype}{' causal' if a.causal else ''} on the CPU: relative error "
          f"dQ {err[0]:.3g}, dK {err[1]:.3g}, dV {err[2]:.3g} ({'within' if ok else 'OUTSIDE'} tolerance "
          f"{TOLERANCE[a.dtype]:g})")
    if a.cuda:
        print(f"CUDA source written to {a.cuda}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
