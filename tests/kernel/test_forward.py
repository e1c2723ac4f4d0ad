"""The interpreter's copy forwarding (kernel/cpu/forward.py): cute.gemm's FMAs read the fragments
without their ``mov`` copies and write the accumulator without the ``Assign`` after them, with the
same bits as when every op runs as traced (``warps.BATCH_RUNS`` off: no batching, no forwarding)."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.kernel.cpu import forward, warps
from cutelab.kernel.instr.gemm import Fma
from cutelab.kernel.ir.nodes import Assign, Compute, walk
from cutelab.kernel.launch.plan import last_launch
from cutelab.runtime import from_dlpack


@cute.kernel
def fma_kernel(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, tiled_mma: cutlass.Constexpr,
               limit: cutlass.Int32, reps: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    thr = tiled_mma.get_slice(tidx)
    tA = thr.partition_A(mA)
    tB = thr.partition_B(mB)
    tC = thr.partition_C(mC)
    rA = tiled_mma.make_fragment_A(tA)
    rB = tiled_mma.make_fragment_B(tB)
    rC = tiled_mma.make_fragment_C(tC)
    cute.autovec_copy(tA, rA)
    cute.autovec_copy(tB, rB)
    cute.autovec_copy(tC, rC)
    if tidx < limit:  # threads >= limit keep C: the FMAs run under a mask
        for _ in cutlass.range(reps):  # a runtime loop: the accumulator is a mutable register
            for k in cutlass.range_constexpr(cute.size(rA, mode=[2])):
                cute.gemm(tiled_mma, rC, rA[None, None, k], rB[None, None, k], rC)
    cute.autovec_copy(rC, tC)


def _run(limit, forwarding, monkeypatch):
    monkeypatch.setattr(warps, "BATCH_RUNS", forwarding)
    mma = cute.make_tiled_mma(cute.make_mma_atom(cute.nvgpu.MmaUniversalOp(cutlass.Float32)), (8, 8, 1),
                              permutation_mnk=(32, 32, 1))
    rng = np.random.default_rng(5)
    M, N, K = 32, 32, 8
    # values over many binades: the float64 sums round, so a change of order would show
    A = (rng.standard_normal((M, K)) * 2.0 ** rng.integers(-8, 8, (M, K))).astype(np.float32)
    B = (rng.standard_normal((N, K)) * 2.0 ** rng.integers(-8, 8, (N, K))).astype(np.float32)
    C = rng.standard_normal((M, N)).astype(np.float32)
    C0 = C.copy()
    fma_kernel(from_dlpack(A), from_dlpack(B), from_dlpack(C), mma, limit, 2).launch(grid=1, block=64)
    return A, B, C0, C


@pytest.mark.parametrize("limit", [64, 40])
def test_forwarded_fmas_give_the_same_bits(limit, monkeypatch):
    wrote = []
    real = Fma.interpret
    monkeypatch.setattr(Fma, "interpret", lambda self, b, mask, buf: (wrote.append((self.dst.mutable, mask is None)),
                                                                       real(self, b, mask, buf)))
    A, B, C0, plain = _run(limit, False, monkeypatch)
    assert wrote and not any(m for m, _ in wrote)  # as traced: each FMA makes a fresh register
    wrote.clear()
    _, _, _, fwd = _run(limit, True, monkeypatch)
    assert wrote and all(m for m, _ in wrote)  # each FMA wrote the accumulator itself
    assert all(unmasked == (limit == 64) for _, unmasked in wrote)
    assert np.array_equal(plain.view(np.int32), fwd.view(np.int32))
    want = C0 + 2 * (A.astype(np.float64) @ B.astype(np.float64).T)  # reps = 2
    done = np.isclose(fwd, want, rtol=1e-4, atol=1e-4)
    kept = fwd == C0
    assert (done | kept).all()
    assert int((kept & ~done).sum()) == (64 - limit) * 16  # threads >= limit keep their 16 values of C


def test_the_plan_leaves_out_the_copies_and_the_assigns(monkeypatch):
    _run(64, True, monkeypatch)
    ir = last_launch().ir
    skipped = fused = 0
    for block in [ir.body] + [getattr(s, f) for s in walk(ir.body) for f in ("body", "then", "orelse")
                              if hasattr(s, f)]:
        plan = forward.plan(ir, block, warps._runs(block))
        for pc, (end, singles, batch) in plan.items():
            if not singles and not batch:
                assert isinstance(block.ops[pc], Compute) and block.ops[pc].op == "mov"
                skipped += 1
            elif singles and isinstance(singles[0], Fma) and singles[0].dst.mutable:
                assert end == pc + 2 and isinstance(block.ops[pc + 1], Assign)
                fused += 1
    n_fma = sum(isinstance(s, Fma) for s in walk(ir.body))
    assert fused == n_fma and skipped >= 3 * n_fma  # the A, B and C copies of every FMA
