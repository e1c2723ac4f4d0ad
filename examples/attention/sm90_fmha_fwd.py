"""A Hopper (SM90) attention forward written with cutelab in CuTe DSL style, organised as
FlashAttention-3 organises it:

    O = softmax(scale * Q K^T) V        LSE[row] = log(sum_j exp(scale * S[row, j]))

Q, K, V, O: (batch, heads, seqlen, head_dim) f16 or bf16 (O in the input's type), f32 accumulation;
LSE (batch, heads, seqlen) f32 (natural log, for a backward). Head dim 64 or 128, causal or not
(causal: key j is seen by query i when j <= i).

A CTA takes 128-row blocks of Q of one batch x head (see Grid), with 384 threads in three warpgroups
(``consumer_wgs=3``, head dim 64: 192-row blocks and 512 threads in four, see below):

- warpgroup 0 is the producer (``setmaxregister_decrease``): its warp 0 loads the Q tile once and
  the K and V tiles of each 128-key block by TMA into 128-byte-swizzled shared memory, through
  three ``PipelineTmaAsync`` rings (Q: one stage; K and V: ``stages`` each, separate so that S = Q K^T
  can start before V has arrived). K of block j + 1 is loaded before V of block j, the order in
  which the consumers need them.
- warpgroups 1 and 2 are the consumers (``setmaxregister_increase``), 64 query rows each (each its
  own 64-row wgmmas on its own 64-row TMA box of Q). Per
  key block: S = Q K^T by ``wgmma`` (A and B from shared memory), the online softmax in f32 with
  ``exp2`` (row max reduced over the four threads of a quad, row sums kept per thread until the end),
  P rounded to the input type in registers, and O += P V by ``wgmma`` with A (= P) from registers
  and B (= V, N-major) from shared memory.
- Softmax overlapped with the next GEMM (FlashAttention-3's intra-warpgroup overlap): in the
  iteration for key block j a warpgroup issues S_j = Q K_j^T and O += P_{j-1} V_{j-1} together, waits
  for S_j only (``wait_group(1)``), runs the softmax of S_j while P_{j-1} V_{j-1} is still on the tensor
  cores, then waits for it and rescales O. ptxas (12.8, 13) moves a ``wgmma.wait_group`` up to just after
  the one before it (a wait is always safe earlier): a plain wait_group(0) after the softmax runs before
  all but its first row's max, and the softmax waits for P V (so does FlashAttention-3's CuTe DSL forward
  compiled with it). The wait is therefore written in both arms of a runtime branch
  (``if j + 1 < n_blocks``): heading a basic block, it stays after the softmax (``keep_wait=True``,
  ``--keep-wait``). It is not the default: on the H200 (2026-11-28 18:28 UTC, benchmarks/RESULTS.md) the
  plain wait was as fast or faster at 6 of the 8 shapes timed, one CTA per tile (0.92x against 0.97x SDPA
  at 1024 d64, 0.89x against 0.94x at 4096 d64), and level with one CTA per SM.
- Ping-pong between the two consumer warpgroups (inter-warpgroup overlap): two named barriers make
  them issue their GEMMs in turn, so that one warpgroup's softmax runs while the other's GEMMs do.
  Warpgroup w waits on barrier 2 + w before issuing its GEMMs and arrives on the other's after
  (256 threads each: 128 waiting, 128 arriving). Once per CTA (not per tile, which with a persistent
  grid could put two arrivals of one warpgroup in one phase of a barrier and hang), warpgroup 2
  arrives at the start so that warpgroup 1 goes first, and warpgroup 1 waits at the end, so that
  every barrier completes.

- ``overlap=False`` (``--no-overlap``; FlashAttention-3's IntraWGOverlap off): in its turn a
  warpgroup issues P_{j-1} V_{j-1}, waits for it, issues S_j and passes the turn; only S and O are
  live through the softmax.
- ``consumer_wgs=3`` (``--wgs 3``, head dim 64, as FlashAttention-3's d 64 tile of 192 rows): three
  consumer warpgroups of 64 rows, 160 registers each (the producer 32), the turn passed round robin
  over barriers 2, 3, 4; always ``overlap=False`` (with the overlap S_j, P_{j-1} and O do not fit 160
  registers: ptxas spills). A last block that passes the sequence's end (192 does not divide 1024)
  loads the head's last 64 rows again for the warpgroups wholly past it, which store nothing. (At
  seqlen 256 the key loop runs once, nvcc merges it with the first and last blocks, and ptxas spills
  128 bytes; from 384 up, none.)

Causal: the key blocks of a query block are walked from the last one it sees down to block 0; a
block reaching past a warpgroup's first row is masked (128-row blocks: only the diagonal one, and
no row is ever fully masked; 192-row blocks: the top two, and a row fully masked in the top block
keeps its max -inf, P 0, and the next block's correction exp2(-inf) = 0); the query blocks are
launched from the last (longest) down.

Grid: one CTA per (query block, batch x head); or ``num_ctas`` persistent CTAs (``--ctas``; 0 with
``--gpu``: one per SM) that walk the tiles ``block + i * grid`` (non-causal: query blocks fastest;
causal: the longest first, every head's last query block, then the ones before), the pipelines'
stages and phases running on from tile to tile (causal: the key blocks of the CTA's earlier tiles
summed in a counter the tile loop carries), so that the next tile's Q and first K load while the
last P V and the epilogue of the current one run.

Run on the CPU (the interpreter runs the warpgroups as coroutines that meet at the barriers)::

    PYTHONPATH=src python examples/attention/sm90_fmha_fwd.py --shape 1,2,256,64 --causal

and on an H100 (compiles once with ``cute.compile``, checks O and LSE against torch in f32, times it)::

    PYTHONPATH=src python examples/attention/sm90_fmha_fwd.py --gpu --shape 4,16,8192,128 --dtype bf16 [--ctas 0]

``--cuda FILE`` writes the generated CUDA (``nvcc -arch=sm_90a -cubin -Xptxas -v FILE``).
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np

import cutelab as cute
import cutelab as cutlass
from cutelab import pipeline
from cutelab.nvgpu import OperandMajorMode, cpasync, warpgroup
from cutelab.runtime import from_dlpack
from cutelab.utils import sm90 as sm90_utils

LOG2E = math.log2(math.e)
LN2 = math.log(2.0)


def _state_at(base, n):
    """The pipeline state n stages after base (n an int or an index expression of the kernel)."""
    s = base.clone()
    if not (isinstance(n, int) and n == 0):
        s.advance(n)
    return s


def mn_view(t):
    """A wgmma accumulator fragment ((2, 2, N/8), MMA_M, MMA_N) seen as (rows, columns): rows
    (its second value mode, MMA_M), columns (its first value mode, N/8, MMA_N)."""
    shape = t.shape
    (v0, v1, vn), mm, nn = shape[0], shape[1], shape[2]
    # the fragment's own coordinates, column-major: v0 + 2 v1 + 4 n + 4 N/8 (m + MMA_M n)
    s_v1, s_vn, s_m = v0, v0 * v1, v0 * v1 * vn
    s_n = s_m * mm
    layout = cute.make_layout(((v1, mm), (v0, vn, nn)), stride=((s_v1, s_m), (1, s_vn, s_n)))
    return cute.composition(t, layout)


class HopperAttentionForward:
    """The forward of softmax attention for (batch, heads, seqlen, head_dim) Q, K, V (see the module
    docstring). ``dynamic``: the key-block loop is a runtime loop (always on the GPU); otherwise it
    is unrolled at trace time (the CPU interpreter is faster so)."""

    def __init__(self, dtype=cutlass.BFloat16, head_dim=128, causal=False, stages=2, softmax_scale=None,
                 dynamic=True, tile_mn=None, num_ctas=None, consumer_wgs=2, overlap=None, keep_wait=False):
        if head_dim not in (64, 128):
            raise ValueError(f"sm90_fmha_fwd: head_dim = {head_dim}; this kernel supports 64 and 128")
        if dtype not in (cutlass.Float16, cutlass.BFloat16):
            raise ValueError(f"sm90_fmha_fwd: dtype {dtype}; Float16 or BFloat16")
        if consumer_wgs not in (2, 3) or (consumer_wgs == 3 and head_dim != 64):
            raise ValueError(f"sm90_fmha_fwd: consumer_wgs = {consumer_wgs} with head_dim {head_dim}; 2, or 3 for "
                             f"head_dim 64 (three warpgroups of 64 rows hold 160 registers each: S, P and a d 64 O "
                             f"fit, a d 128 O does not)")
        self.consumer_wgs = consumer_wgs
        # the softmax of S_j overlapped with P_{j-1} V_{j-1} in the warpgroup: by default with two consumer
        # warpgroups (240 registers each); three hold 160, where S_j, P_{j-1} and O live at once spill
        if overlap is None:
            overlap = consumer_wgs == 2
        if overlap and consumer_wgs == 3:
            raise ValueError("sm90_fmha_fwd: overlap=True with consumer_wgs=3: S_j, P_{j-1} and O together do not "
                             "fit the 160 registers of three consumer warpgroups (ptxas spills); use overlap=False")
        self.overlap = overlap
        self.keep_wait = keep_wait  # the overlap's wait for P V kept after the softmax (module docstring)
        if tile_mn is not None and tuple(tile_mn) != (64 * consumer_wgs, 128):
            raise ValueError(f"sm90_fmha_fwd: tile_mn = {tile_mn}; only ({64 * consumer_wgs}, 128) with "
                             f"{consumer_wgs} consumer warpgroups of 64 rows")
        self.dtype = dtype
        self.head_dim = head_dim
        self.causal = causal
        self.stages = stages
        self.scale = softmax_scale if softmax_scale is not None else 1.0 / math.sqrt(head_dim)
        self.dynamic = dynamic
        self.num_ctas = num_ctas  # persistent: this many CTAs walk the (query block, head) tiles; None: one per tile
        self.tile_m, self.tile_n = 64 * consumer_wgs, 128
        self.threads = 128 * (1 + consumer_wgs)  # a producer warpgroup and the consumer warpgroups
        # the 64K registers of the SM: 128 x 24 + 256 x 240, or 128 x 32 + 384 x 160
        self.producer_regs, self.consumer_regs = (24, 240) if consumer_wgs == 2 else (32, 160)

    def loop(self, *args):
        """The key-block loop: a runtime loop (always for causal: its trip count depends on the block),
        or unrolled at trace time."""
        return cutlass.range(*args, unroll=1) if self.dynamic or self.causal else range(*args)

    def tile_loop(self, tiles_per_cta):
        """The CTA's tiles: a runtime loop over them (persistent), or the one tile of its block index."""
        return cutlass.range(tiles_per_cta, unroll=1) if self.num_ctas is not None and self.dynamic else range(tiles_per_cta)

    def tile(self, i, mLSE):
        """(valid, query block, batch x head, key blocks) of the CTA's tile i. Persistent: tile
        ``block + i * grid``, query blocks fastest (the CTAs running at once share a head's K and V
        in L2); else the block index (x: query block, the last first when causal; y: batch x head)."""
        bM, bN = self.tile_m, self.tile_n
        bh_all, seqlen = mLSE.shape
        m_blocks = -(-seqlen // bM)  # the last one partial when bM (192) does not divide seqlen
        bidx, bidy, _ = cute.arch.block_idx()
        valid = True
        if cutlass.const_expr(self.num_ctas is not None):
            gdim, _, _ = cute.arch.grid_dim()
            t = bidx + i * gdim
            valid = t < m_blocks * bh_all
            if cutlass.const_expr(self.causal):  # the longest first: every head's last block, then the ones before
                m_block, bh = m_blocks - 1 - t // bh_all, t % bh_all
            else:
                m_block, bh = t % m_blocks, t // m_blocks
        elif cutlass.const_expr(self.causal):
            m_block, bh = m_blocks - 1 - bidx, bidy
        else:
            m_block, bh = bidx, bidy
        if cutlass.const_expr(self.causal):  # the key blocks up to the block's last row: 0 .. m_block when square
            n_blocks = cutlass.min(((m_block + 1) * bM + bN - 1) // bN, seqlen // bN)
        else:
            n_blocks = seqlen // bN
        return valid, m_block, bh, n_blocks

    def rows(self, m_block, bh, mLSE):
        """(first 64-row Q / O tile, first K / V row tile) of a tile: Q, K, V, O are (batch * heads * seqlen,
        head_dim); consumer warpgroup w takes the 64-row tile (first + w)."""
        seqlen = mLSE.shape[1]
        return bh * (seqlen // 64) + m_block * self.consumer_wgs, bh * (seqlen // self.tile_n)

    def make_atoms(self, mQ, mK, mVt):
        bM, bN, d, dt = self.tile_m, self.tile_n, self.head_dim, self.dtype
        f32 = cutlass.Float32
        qk_op = warpgroup.MmaF16BF16Op(dt, f32, (64, bN, 16), warpgroup.OperandSource.SMEM,
                                       OperandMajorMode.K, OperandMajorMode.K)
        # P from registers (the softmax's output, never in shared memory); V N-major (head_dim contiguous)
        pv_op = warpgroup.MmaF16BF16Op(dt, f32, (64, d, 16), warpgroup.OperandSource.RMEM,
                                       OperandMajorMode.K, OperandMajorMode.MN)
        # one warpgroup's MMAs (64 rows): each consumer warpgroup runs its own on its 64 rows of Q
        tiled_qk = cute.make_tiled_mma(qk_op, (1, 1, 1))
        tiled_pv = cute.make_tiled_mma(pv_op, (1, 1, 1))
        row, col = sm90_utils.LayoutEnum.ROW_MAJOR, sm90_utils.LayoutEnum.COL_MAJOR
        # Q as consumer_wgs tiles of 64 rows (one per consumer warpgroup, each its own TMA box)
        q_smem = sm90_utils.make_smem_layout_a(row, (64, bN, d), dt, self.consumer_wgs)  # (64, d, wgs)
        k_smem = sm90_utils.make_smem_layout_b(row, (bM, bN, d), dt, self.stages)  # (bN, d, stages)
        v_smem = sm90_utils.make_smem_layout_b(col, (bM, d, bN), dt, self.stages)  # (d, bN, stages)
        g2s = cpasync.CopyBulkTensorTileG2SOp()
        tma_q, tQ = cpasync.make_tiled_tma_atom(g2s, mQ, cute.slice_(q_smem, (None, None, 0)), (64, d))
        tma_k, tK = cpasync.make_tiled_tma_atom(g2s, mK, cute.slice_(k_smem, (None, None, 0)), (bN, d))
        tma_v, tV = cpasync.make_tiled_tma_atom(g2s, mVt, cute.slice_(v_smem, (None, None, 0)), (d, bN))
        return tiled_qk, tiled_pv, q_smem, k_smem, v_smem, tma_q, tQ, tma_k, tK, tma_v, tV

    @staticmethod
    def tma_load(pipe, state, atom, tg, ts, tile, stage):
        """The producer's part of one tile: wait for the stage to be free, load, arm its barrier."""
        pipe.producer_acquire(state)
        cute.copy(atom, tg[(None, tile)], ts[(None, stage)], tma_bar_ptr=pipe.producer_get_barrier(state))
        pipe.producer_commit(state)

    @staticmethod
    def quad_reduce(val, op):
        """op over the four threads of a quad (the threads holding one accumulator row)."""
        val = op(val, cute.arch.shuffle_sync_bfly(val, offset=2, mask=-1, mask_and_clamp=31))
        return op(val, cute.arch.shuffle_sync_bfly(val, offset=1, mask=-1, mask_and_clamp=31))

    @cute.jit
    def softmax_step(self, acc_S, row_max, row_sum, row_scale, first: cutlass.Constexpr):
        """The online softmax of one block of scores, in place: S becomes P = exp2(S scale log2(e) - max
        scale log2(e)) for the running row max, the per-thread row sums are rescaled and accumulated,
        and row_scale gets the factor by which O must be multiplied (not written for the first block)."""
        S = mn_view(acc_S)
        sl2 = self.scale * LOG2E
        for r in cutlass.range_constexpr(cute.size(row_max)):
            s_row = S[r, None].load()
            m = self.quad_reduce(s_row.reduce(cute.ReductionOp.MAX, -cutlass.Float32.inf, 0), cute.arch.fmax)
            if cutlass.const_expr(not first):
                m = cute.arch.fmax(row_max[r], m)
            m_scaled = m * sl2
            if cutlass.const_expr(self.causal):  # a fully masked row (192-row blocks: above the diagonal)
                # keeps its max -inf (the next block's correction is then exp2(-inf) = 0) and P = 0
                m_scaled = 0.0 if m == -cutlass.Float32.inf else m_scaled
            p = cute.math.exp2(s_row * sl2 - m_scaled, fastmath=True)
            p_sum = p.reduce(cute.ReductionOp.ADD, cutlass.Float32.zero, 0)
            if cutlass.const_expr(first):
                row_sum[r] = p_sum
            else:
                corr = cute.math.exp2(row_max[r] * sl2 - m_scaled, fastmath=True)
                row_scale[r] = corr
                row_sum[r] = row_sum[r] * corr + p_sum
            row_max[r] = m
            S[r, None] = p

    @cute.jit
    def mask_causal(self, acc_S, tScS, row0, n_block):
        """Causal mask of key block n_block for a warpgroup's 64 rows from row0 (of the sequence):
        scores of keys after the query (column > row) to -inf, when the block reaches past row0."""
        bN = self.tile_n
        if (n_block + 1) * bN > row0 + 1:
            S, C = mn_view(acc_S), mn_view(tScS)
            for r in cutlass.range_constexpr(cute.size(S, mode=[0])):
                limit = row0 + C[r, 0][0] - n_block * bN  # the last key column the row sees
                for c in cutlass.range_constexpr(cute.size(S, mode=[1])):
                    if C[0, c][1] > limit:
                        S[r, c] = -cutlass.Float32.inf

    @staticmethod
    def rescale(acc_O, row_scale):
        O = mn_view(acc_O)
        for r in cutlass.range_constexpr(cute.size(row_scale)):
            O[r, None] = O[r, None].load() * row_scale[r]

    @staticmethod
    def gemm(tiled_mma, acc, tA, tB, stage, zero_init, a_stage=0):
        """The wgmmas of one block (k-blocks of 16), committed as one group; A of shared memory
        (its stage a_stage: the warpgroup's 64 rows of Q) or registers."""
        if zero_init:
            tiled_mma.set(warpgroup.Field.ACCUMULATE, False)
        warpgroup.fence()
        for kb in range(cute.size(tA, mode=[2])):
            a = tA[(None, None, kb, a_stage)] if cute.rank(tA) == 4 else tA[(None, None, kb)]
            cute.gemm(tiled_mma, acc, a, tB[(None, None, kb, stage)], acc)
            if zero_init:
                tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
        warpgroup.commit_group()

    @cute.jit
    def sched_wait(self, wg):
        """Ping-pong: wait for this warpgroup's turn to issue its GEMMs (barrier 2 + wg)."""
        for w in cutlass.range_constexpr(self.consumer_wgs):
            if wg == w:
                pipeline.NamedBarrier(barrier_id=2 + w, num_threads=256).arrive_and_wait()

    @cute.jit
    def sched_pass(self, wg):
        """Ping-pong: give the next consumer warpgroup (round robin) its turn."""
        for w in cutlass.range_constexpr(self.consumer_wgs):
            if wg == w:
                pipeline.NamedBarrier(barrier_id=2 + (w + 1) % self.consumer_wgs, num_threads=256).arrive()

    @cute.kernel
    def kernel(self, tma_q: cutlass.Constexpr, tQ: cute.Tensor, tma_k: cutlass.Constexpr, tK: cute.Tensor,
               tma_v: cutlass.Constexpr, tV: cute.Tensor, mO: cute.Tensor, mLSE: cute.Tensor,
               tiled_qk: cutlass.Constexpr, tiled_pv: cutlass.Constexpr, q_smem: cutlass.Constexpr,
               k_smem: cutlass.Constexpr, v_smem: cutlass.Constexpr, tiles_per_cta: cutlass.Constexpr):
        bM, bN, d, dt = self.tile_m, self.tile_n, self.head_dim, self.dtype
        tidx, _, _ = cute.arch.thread_idx()
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        warp_group = cute.arch.make_warp_uniform(tidx // 128)
        seqlen = mLSE.shape[1]
        n_blocks_all = seqlen // bN

        smem = cutlass.utils.SmemAllocator()
        bars_q = smem.allocate_tensor(cutlass.Int64, cute.make_layout(2), 8)
        bars_k = smem.allocate_tensor(cutlass.Int64, cute.make_layout(2 * self.stages), 8)
        bars_v = smem.allocate_tensor(cutlass.Int64, cute.make_layout(2 * self.stages), 8)
        sQ = smem.allocate_tensor(dt, q_smem.outer, 1024, swizzle=q_smem.inner)
        sK = smem.allocate_tensor(dt, k_smem.outer, 1024, swizzle=k_smem.inner)
        sV = smem.allocate_tensor(dt, v_smem.outer, 1024, swizzle=v_smem.inner)
        producer_group = pipeline.CooperativeGroup(pipeline.Agent.Thread)
        consumer_group = pipeline.CooperativeGroup(pipeline.Agent.Thread, 4 * self.consumer_wgs)  # consumer warps
        tile_bytes = bN * d * dt.width // 8
        pipe_q = pipeline.PipelineTmaAsync.create(barrier_storage=bars_q.iterator, num_stages=1,
                                                  producer_group=producer_group, consumer_group=consumer_group,
                                                  tx_count=bM * d * dt.width // 8, defer_sync=True)
        pipe_k = pipeline.PipelineTmaAsync.create(barrier_storage=bars_k.iterator, num_stages=self.stages,
                                                  producer_group=producer_group, consumer_group=consumer_group,
                                                  tx_count=tile_bytes, defer_sync=True)
        pipe_v = pipeline.PipelineTmaAsync.create(barrier_storage=bars_v.iterator, num_stages=self.stages,
                                                  producer_group=producer_group, consumer_group=consumer_group,
                                                  tx_count=tile_bytes, defer_sync=True)
        pipeline.pipeline_init_arrive()
        pipeline.pipeline_init_wait()

        producer = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, self.stages)
        consumer = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.stages)
        q_producer = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, 1)
        q_consumer = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, 1)

        if warp_group == 0:  # producer
            cute.arch.setmaxregister_decrease(self.producer_regs)
            if warp_idx == 0:
                gQ = cute.local_tile(tQ, (64, d), (None, 0))  # (64, d, 64-row tiles)
                gK = cute.local_tile(tK, (bN, d), (None, 0))  # (bN, d, row tiles)
                gV = cute.local_tile(tV, (d, bN), (0, None))  # (d, bN, row tiles): V seen N-major
                lay1 = cute.make_layout(1)
                tQs, tQg = cpasync.tma_partition(tma_q, 0, lay1, cute.group_modes(sQ, 0, 2), cute.group_modes(gQ, 0, 2))
                tKs, tKg = cpasync.tma_partition(tma_k, 0, lay1, cute.group_modes(sK, 0, 2), cute.group_modes(gK, 0, 2))
                tVs, tVg = cpasync.tma_partition(tma_v, 0, lay1, cute.group_modes(sV, 0, 2), cute.group_modes(gV, 0, 2))
                done = cutlass.Int32(0)  # key blocks loaded for earlier tiles (causal: their sum, carried)
                for i in self.tile_loop(tiles_per_cta):
                    valid, m_block, bh, n_blocks = self.tile(i, mLSE)
                    if cutlass.const_expr(not self.causal):
                        done = i * n_blocks_all
                    if valid:
                        q_tile, kv_first = self.rows(m_block, bh, mLSE)
                        top = kv_first + n_blocks - 1  # the key blocks go from n_blocks - 1 down to 0
                        qst = _state_at(q_producer, i)
                        pipe_q.producer_acquire(qst)
                        last_q = bh * (seqlen // 64) + seqlen // 64 - 1  # the head's last 64 rows
                        for w in cutlass.range_constexpr(self.consumer_wgs):
                            # a warpgroup wholly past the sequence (partial block) loads the head's last
                            # rows again: finite scores, never stored
                            cute.copy(tma_q, tQg[(None, cutlass.min(q_tile + w, last_q))], tQs[(None, w)],
                                      tma_bar_ptr=pipe_q.producer_get_barrier(qst))
                        pipe_q.producer_commit(qst)
                        ks = _state_at(producer, done)
                        self.tma_load(pipe_k, ks, tma_k, tKg, tKs, top, ks.index)
                        for j in self.loop(1, n_blocks):  # K of block j before V of block j - 1
                            ks = _state_at(producer, done + j)
                            self.tma_load(pipe_k, ks, tma_k, tKg, tKs, top - j, ks.index)
                            vs = _state_at(producer, done + j - 1)
                            self.tma_load(pipe_v, vs, tma_v, tVg, tVs, top - j + 1, vs.index)
                        vs = _state_at(producer, done + n_blocks - 1)
                        self.tma_load(pipe_v, vs, tma_v, tVg, tVs, kv_first, vs.index)
                    if cutlass.const_expr(self.causal):
                        done = done + n_blocks
        else:  # consumers: warpgroup wg = 0 .. consumer_wgs - 1 takes query rows 64 wg .. 64 wg + 63 of the block
            cute.arch.setmaxregister_increase(self.consumer_regs)
            wg = warp_group - 1
            ctid = tidx % 128  # each warpgroup runs its own 64-row MMAs
            thr_qk = tiled_qk.get_slice(ctid)
            thr_pv = tiled_pv.get_slice(ctid)
            tSsQ = thr_qk.partition_A(sQ)  # ((64, 16), 1, d / 16, 1)
            tSsK = thr_qk.partition_B(sK)  # ((bN, 16), 1, d / 16, stages)
            tOsV = thr_pv.partition_B(sV)  # ((d, 16), 1, bN / 16, stages)
            tScS = thr_qk.partition_C(cute.make_identity_tensor((64, bN)))  # ((2, 2, bN / 8), 1, 1)
            tOcO = thr_pv.partition_C(cute.make_identity_tensor((64, d)))
            acc_S = cute.make_rmem_tensor(tScS.shape, cutlass.Float32)
            acc_O = cute.make_rmem_tensor(tOcO.shape, cutlass.Float32)
            # P as wgmma's A fragment ((2, 2, 2), 1, bN / 16): the same registers order as S's accumulators
            tOrP = cute.make_rmem_tensor(thr_pv.partition_A(cute.make_identity_tensor((64, bN))).shape, dt)
            S_as_P = cute.make_tensor(acc_S.iterator, cute.make_layout(tOrP.shape))
            row_max = cute.make_rmem_tensor(2, cutlass.Float32)
            row_sum = cute.make_rmem_tensor(2, cutlass.Float32)
            row_scale = cute.make_rmem_tensor(2, cutlass.Float32)
            tiled_pv.set(warpgroup.Field.ACCUMULATE, True)  # O accumulates from zero (a new TiledMma's is off)
            # the ping-pong runs on across the CTA's tiles: warpgroup 0 goes first, and its last wait on
            # barrier 2 takes the last warpgroup's last arrival. (Arriving again at the start of each tile
            # could put two arrivals of that warpgroup in one phase of barrier 2, completing it without
            # warpgroup 0: a hang on the GPU with a persistent grid.)
            if wg == self.consumer_wgs - 1:
                pipeline.NamedBarrier(barrier_id=2, num_threads=256).arrive()
            done = cutlass.Int32(0)
            for i in self.tile_loop(tiles_per_cta):
                valid, m_block, bh, n_blocks = self.tile(i, mLSE)
                if cutlass.const_expr(not self.causal):
                    done = i * n_blocks_all
                if valid:
                    q_tile, _ = self.rows(m_block, bh, mLSE)
                    self.consume_tile(done, n_blocks, _state_at(q_consumer, i), wg, ctid, q_tile,
                                      m_block, bh, mO, mLSE, pipe_q, pipe_k, pipe_v, consumer, tiled_qk, tiled_pv,
                                      thr_pv, tSsQ, tSsK, tOsV, tScS, tOcO, acc_S, acc_O, tOrP, S_as_P,
                                      row_max, row_sum, row_scale)
                if cutlass.const_expr(self.causal):
                    done = done + n_blocks  # (after an invalid tile, the last trip, nothing uses it)
            if wg == 0:  # the last arrival of the last warpgroup on barrier 2
                pipeline.NamedBarrier(barrier_id=2, num_threads=256).arrive_and_wait()

    @cute.jit
    def consume_blocks_in_turn(self, done, n_blocks, wg, row0, pipe_k, pipe_v, consumer, tiled_qk, tiled_pv, tSsQ,
                               tSsK, tOsV, tScS, acc_S, acc_O, tOrP, S_as_P, row_max, row_sum, row_scale):
        """The key blocks 1 .. n_blocks - 1 without the intra-warpgroup overlap (``overlap=False``,
        FlashAttention-3's IntraWGOverlap off): in its turn a warpgroup issues P_{j-1} V_{j-1}, waits
        for it, then issues S_j = Q K_j^T and passes the turn; the softmax of S_j runs while the other
        warpgroups' GEMMs do. Only S and O are live through the softmax (no P of the block before):
        fewer registers at the cost of a wait on P V."""
        for j in self.loop(1, n_blocks):
            ks = _state_at(consumer, done + j)
            vs = _state_at(consumer, done + j - 1)
            pipe_v.consumer_wait(vs)
            pipe_k.consumer_wait(ks)  # (K_j was loaded before V_{j-1})
            self.sched_wait(wg)
            self.gemm(tiled_pv, acc_O, tOrP, tOsV, vs.index, False)  # O += P_{j-1} V_{j-1}
            warpgroup.wait_group(0)
            pipe_v.consumer_release(vs)
            self.gemm(tiled_qk, acc_S, tSsQ, tSsK, ks.index, True, wg)  # S_j = Q K_j^T
            self.sched_pass(wg)
            warpgroup.wait_group(0)
            pipe_k.consumer_release(ks)
            if cutlass.const_expr(self.causal and self.tile_m > self.tile_n):
                self.mask_causal(acc_S, tScS, row0, n_blocks - 1 - j)
            self.softmax_step(acc_S, row_max, row_sum, row_scale, False)
            self.rescale(acc_O, row_scale)
            tOrP.store(S_as_P.load().to(self.dtype))

    @cute.jit
    def consume_tile(self, done, n_blocks, q_state, wg, ctid, q_tile, m_block, bh, mO, mLSE, pipe_q, pipe_k, pipe_v,
                     consumer, tiled_qk, tiled_pv, thr_pv, tSsQ, tSsK, tOsV, tScS, tOcO, acc_S, acc_O, tOrP, S_as_P,
                     row_max, row_sum, row_scale):
        """One consumer warpgroup's part of one query block: its 64 rows of O and LSE. ``done``: the
        key blocks the pipelines passed before this tile."""
        bM, d, dt = self.tile_m, self.head_dim, self.dtype
        seqlen = mLSE.shape[1]
        row0 = m_block * bM + 64 * wg  # the warpgroup's first row in the sequence
        acc_O.fill(0.0)
        pipe_q.consumer_wait(q_state)

        # the first (the diagonal, when causal) block: S, mask, softmax; its P V is issued with the next S
        first = _state_at(consumer, done)
        pipe_k.consumer_wait(first)
        self.gemm(tiled_qk, acc_S, tSsQ, tSsK, first.index, True, wg)
        warpgroup.wait_group(0)
        pipe_k.consumer_release(first)
        if cutlass.const_expr(self.causal):
            self.mask_causal(acc_S, tScS, row0, n_blocks - 1)
        self.softmax_step(acc_S, row_max, row_sum, row_scale, True)
        tOrP.store(S_as_P.load().to(dt))

        if cutlass.const_expr(not self.overlap):
            self.consume_blocks_in_turn(done, n_blocks, wg, row0, pipe_k, pipe_v, consumer, tiled_qk, tiled_pv,
                                        tSsQ, tSsK, tOsV, tScS, acc_S, acc_O, tOrP, S_as_P, row_max, row_sum,
                                        row_scale)
        else:
            for j in self.loop(1, n_blocks):
                ks = _state_at(consumer, done + j)
                vs = _state_at(consumer, done + j - 1)
                pipe_k.consumer_wait(ks)
                self.sched_wait(wg)
                self.gemm(tiled_qk, acc_S, tSsQ, tSsK, ks.index, True, wg)  # S_j = Q K_j^T
                pipe_v.consumer_wait(vs)
                self.gemm(tiled_pv, acc_O, tOrP, tOsV, vs.index, False)  # O += P_{j-1} V_{j-1}
                self.sched_pass(wg)
                warpgroup.wait_group(1)  # S_j is ready; P V still running
                pipe_k.consumer_release(ks)
                if cutlass.const_expr(self.causal and bM > self.tile_n):  # 192 rows: two blocks reach the diagonal
                    self.mask_causal(acc_S, tScS, row0, n_blocks - 1 - j)
                self.softmax_step(acc_S, row_max, row_sum, row_scale, False)
                if cutlass.const_expr(self.keep_wait):
                    # the same wait in both arms of a runtime branch: heading a basic block, it stays after the
                    # softmax (a lone one, ptxas moves up to just after wait_group(1): the softmax then waits)
                    if j + 1 < n_blocks:
                        warpgroup.wait_group(0)
                    else:
                        warpgroup.wait_group(0)
                else:
                    warpgroup.wait_group(0)
                pipe_v.consumer_release(vs)
                tOrP.store(S_as_P.load().to(dt))
                self.rescale(acc_O, row_scale)
        pipe_q.consumer_release(q_state)  # the last S is done: the producer may load the next tile's Q

        vs = _state_at(consumer, done + n_blocks - 1)
        pipe_v.consumer_wait(vs)
        if cutlass.const_expr(not self.overlap):
            self.sched_wait(wg)
        self.gemm(tiled_pv, acc_O, tOrP, tOsV, vs.index, False)
        if cutlass.const_expr(not self.overlap):
            self.sched_pass(wg)
        warpgroup.wait_group(0)
        pipe_v.consumer_release(vs)

        # O / rowsum, LSE = (max scale log2(e) + log2(rowsum)) ln(2); then O and LSE out
        O = mn_view(acc_O)
        C = mn_view(tOcO)
        sl2 = self.scale * LOG2E
        lse = cute.make_rmem_tensor(2, cutlass.Float32)
        for r in cutlass.range_constexpr(2):
            total = self.quad_reduce(row_sum[r], lambda a, b: a + b)
            inv = 0.0 if total == 0.0 else cute.arch.rcp_approx(total)
            O[r, None] = O[r, None].load() * inv
            lse[r] = -cutlass.Float32.inf if total == 0.0 else (row_max[r] * sl2 + cute.math.log2(total)) * LN2
        if row0 < seqlen:  # (a warpgroup past the end of a partial block stores nothing)
            gO = cute.local_tile(mO, (64, d), (q_tile + wg, 0))
            rO = cute.make_fragment_like(acc_O, mO.element_type)
            rO.store(acc_O.load().to(mO.element_type))
            cute.copy(cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), mO.element_type), rO, thr_pv.partition_C(gO))
            if ctid % 4 == 0:
                for r in cutlass.range_constexpr(2):
                    mLSE[bh, row0 + C[r, 0][0]] = lse[r]

    @cute.jit
    def __call__(self, mQ: cute.Tensor, mK: cute.Tensor, mVt: cute.Tensor, mO: cute.Tensor, mLSE: cute.Tensor):
        """mQ, mK, mO: (batch * heads * seqlen, head_dim) row-major; mVt: V seen as (head_dim, batch *
        heads * seqlen) (head_dim contiguous); mLSE: (batch * heads, seqlen) f32."""
        rows, d = mQ.shape
        bh, seqlen = mLSE.shape
        where = "sm90_fmha_fwd"
        for name, t in (("Q", mQ), ("K", mK), ("V", mVt), ("O", mO)):
            if t.element_type != self.dtype:
                raise ValueError(f"{where}: {name} holds {t.element_type}; the kernel was made for {self.dtype}")
        if d != self.head_dim or tuple(mK.shape) != (rows, d) or tuple(mVt.shape) != (d, rows) or tuple(mO.shape) != (rows, d):
            raise ValueError(f"{where}: Q {mQ.shape}, K {mK.shape}, V^T {mVt.shape}, O {mO.shape}: expected "
                             f"({rows}, {self.head_dim}) for Q, K, O and ({self.head_dim}, {rows}) for V^T")
        if mLSE.element_type != cutlass.Float32 or bh * seqlen != rows:
            raise ValueError(f"{where}: LSE {mLSE.shape} of {mLSE.element_type}: expected Float32 "
                             f"(batch * heads, seqlen) with batch * heads * seqlen = {rows}")
        if seqlen % self.tile_n:
            raise ValueError(f"{where}: seqlen {seqlen} must be a multiple of {self.tile_n} (no partial key blocks)")
        tiled_qk, tiled_pv, q_smem, k_smem, v_smem, tma_q, tQ, tma_k, tK, tma_v, tV = self.make_atoms(mQ, mK, mVt)
        grid, per_cta = self.grid(bh, seqlen)
        self.kernel(tma_q, tQ, tma_k, tK, tma_v, tV, mO, mLSE, tiled_qk, tiled_pv, q_smem, k_smem, v_smem,
                    per_cta).launch(grid=grid, block=(self.threads, 1, 1))

    def grid(self, bh, seqlen):
        """(grid, tiles per CTA): one CTA per (query block, batch x head), or num_ctas persistent CTAs."""
        m_blocks = -(-seqlen // self.tile_m)
        if self.num_ctas is None:
            return (m_blocks, bh, 1), 1
        ctas = min(self.num_ctas, m_blocks * bh)
        return (ctas, 1, 1), -(-m_blocks * bh // ctas)


_DTYPES = {"f16": cutlass.Float16, "bf16": cutlass.BFloat16}


def views(q, k, v, o, lse, wrap=lambda t: t):
    """The kernel's arguments for q, k, v, o (batch, heads, seqlen, head_dim), contiguous, and lse
    (batch, heads, seqlen): 2-D views (V transposed: head_dim contiguous). numpy arrays (f16) or
    torch tensors (f16, bf16; CPU or CUDA); ``wrap`` is applied to each view before from_dlpack
    (benchmarks/attention.py --dry-run dresses them as CUDA tensors)."""
    b, h, s, d = q.shape
    flat = lambda x: x.reshape(b * h * s, d)  # noqa: E731
    return tuple(from_dlpack(wrap(t), assumed_align=16)
                 for t in (flat(q), flat(k), flat(v).T, flat(o), lse.reshape(b * h, s)))


def reference(q, k, v, causal, scale):
    """O and LSE in float64 (numpy) for numpy arrays q, k, v (batch, heads, seqlen, head_dim)."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    s = np.einsum("bhqd,bhkd->bhqk", q, k) * scale
    if causal:
        n = q.shape[2]
        s = np.where(np.triu(np.ones((n, n), bool), 1), -np.inf, s)
    m = s.max(-1, keepdims=True)
    e = np.exp(s - m)
    tot = e.sum(-1, keepdims=True)
    return (e / tot) @ v, (m + np.log(tot))[..., 0]


def run_cpu(b, h, s, d, causal, dtype="bf16", dynamic=False, cuda_file=None, seed=0, num_ctas=None, consumer_wgs=2,
            overlap=None, keep_wait=False):
    """Runs the kernel on the CPU interpreter on random inputs (f16: numpy arrays; bf16: CPU torch
    tensors); returns (max |O - ref|, max |LSE - ref|) against float64 numpy."""
    rng = np.random.default_rng(seed)
    x = [rng.standard_normal((b, h, s, d)).astype(np.float32) for _ in range(3)]
    lse = np.zeros((b, h, s), np.float32)
    fwd = HopperAttentionForward(_DTYPES[dtype], d, causal, dynamic=dynamic, num_ctas=num_ctas,
                                 consumer_wgs=consumer_wgs, overlap=overlap, keep_wait=keep_wait)
    if dtype == "f16":
        q, k, v = (t.astype(np.float16) for t in x)
        o = np.zeros((b, h, s, d), np.float16)
        fwd(*views(q, k, v, o, lse))
    else:  # numpy has no bfloat16
        import torch

        q, k, v = (torch.from_numpy(t).bfloat16() for t in x)
        o_t = torch.zeros(b, h, s, d, dtype=torch.bfloat16)
        lse_t = torch.from_numpy(lse)
        fwd(*views(q, k, v, o_t, lse_t))
        q, k, v, o = (t.float().numpy() for t in (q, k, v, o_t))
    ref_o, ref_lse = reference(q, k, v, causal, fwd.scale)
    err_o = float(np.abs(o.astype(np.float64) - ref_o).max())
    err_lse = float(np.abs(lse - ref_lse).max())
    if cuda_file:
        from cutelab.kernel.cuda import printer as cuda
        from cutelab.kernel.launch.plan import last_launch

        with open(cuda_file, "w") as f:
            f.write(cuda.render(last_launch().ir))
    return err_o, err_lse


# P is rounded to the input type before P V (as FlashAttention does) and O once more at the end:
# a few ulps of the 16-bit type on O's entries (|O| < 4 here); LSE is f32 throughout
TOLERANCE = {"f16": (4e-3, 1e-4), "bf16": (3e-2, 1e-4)}


def run_gpu(b, h, s, d, causal, dtype="bf16", iters=20, ctas=None, consumer_wgs=2, overlap=None, keep_wait=False) -> int:
    """On a GPU: compile once, check against torch (f32), time the compiled call back to back."""
    import torch

    tdt = {"f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    torch.manual_seed(0)
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=tdt) for _ in range(3))
    o = torch.empty_like(q)
    lse = torch.empty(b, h, s, device="cuda", dtype=torch.float32)
    args = views(q, k, v, o, lse)
    if ctas == 0:  # persistent, one CTA per SM
        ctas = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    fwd = HopperAttentionForward(_DTYPES[dtype], d, causal, num_ctas=ctas, consumer_wgs=consumer_wgs, overlap=overlap,
                                 keep_wait=keep_wait)
    compiled = cute.compile(fwd, *args)
    compiled(*args)
    torch.cuda.synchronize()
    # the reference on batch entry 0, in f32 on the GPU: torch SDPA's math on f32 copies, and the LSE
    sc = torch.einsum("hqd,hkd->hqk", q[0].float(), k[0].float()) * fwd.scale
    if causal:
        sc = sc.masked_fill(torch.ones(s, s, dtype=torch.bool, device="cuda").triu(1), float("-inf"))
    err_o = (o[0].float() - torch.softmax(sc, -1) @ v[0].float()).abs().max().item()
    err_lse = (lse[0] - torch.logsumexp(sc, -1)).abs().max().item()
    tol_o, tol_lse = TOLERANCE[dtype]
    ok = err_o <= tol_o and err_lse <= 1e-3  # LSE: exp2/log2 approximations of the GPU
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        compiled(*args)
    start.record()
    for _ in range(iters):
        compiled(*args)
    end.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end) / iters
    flops = 4 * b * h * s * s * d / (2 if causal else 1)
    print(f"sm90_fmha_fwd b{b} h{h} s{s} d{d} {dtype}{' causal' if causal else ''} on {torch.cuda.get_device_name()}: "
          f"max |O - ref| = {err_o:.3g}, max |LSE - ref| = {err_lse:.3g} ({'within' if ok else 'OUTSIDE'} tolerance); "
          f"{ms:.4f} ms, {flops / ms / 1e9:.1f} TFLOP/s back to back")
    return 0 if ok else 1


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--shape", default="1,2,256,64", help="batch,heads,seqlen,head_dim")
    p.add_argument("--causal", action="store_true")
    p.add_argument("--dtype", default="bf16", choices=sorted(_DTYPES))
    p.add_argument("--gpu", action="store_true", help="run on the GPU with torch tensors (needs an H100)")
    p.add_argument("--dynamic", action="store_true", help="CPU: a runtime key-block loop (always on with --gpu)")
    p.add_argument("--cuda", default=None, help="write the generated CUDA source here")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--ctas", type=int, default=None, help="a persistent grid of this many CTAs "
                   "(0 with --gpu: one per SM); default one CTA per (query block, batch x head)")
    p.add_argument("--wgs", type=int, default=2, choices=(2, 3), help="consumer warpgroups of 64 query rows "
                   "(3: 192-row blocks, head_dim 64 only)")
    p.add_argument("--no-overlap", action="store_true", help="no intra-warpgroup overlap of the softmax with P V "
                   "(always so with --wgs 3)")
    p.add_argument("--keep-wait", action="store_true", help="the overlap's wait for P V in both arms of a "
                   "runtime branch, kept after the softmax (keep_wait=True; the default is one plain wait_group(0), "
                   "which ptxas moves up to before the softmax)")
    a = p.parse_args(argv)
    b, h, s, d = (int(x) for x in a.shape.split(","))
    if a.gpu:
        return run_gpu(b, h, s, d, a.causal, a.dtype, a.iters, a.ctas, a.wgs, False if a.no_overlap else None,
                       a.keep_wait)
    err_o, err_lse = run_cpu(b, h, s, d, a.causal, a.dtype, a.dynamic, a.cuda, num_ctas=a.ctas or None,
                             consumer_wgs=a.wgs, overlap=False if a.no_overlap else None, keep_wait=a.keep_wait)
    tol_o, tol_lse = TOLERANCE[a.dtype]
    ok = err_o <= tol_o and err_lse <= tol_lse
    print(f"sm90_fmha_fwd b{b} h{h} s{s} d{d} {a.dtype}{' causal' if a.causal else ''} on the CPU: max |O - ref| = "
          f"{err_o:.3g}, max |LSE - ref| = {err_lse:.3g} ({'within' if ok else 'OUTSIDE'} tolerance {tol_o:g}, {tol_lse:g})")
    if a.cuda:
        print(f"CUDA source written to {a.cuda}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
