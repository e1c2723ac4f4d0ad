"""The interpreter drops the registers no later op of the body reads (kernel/cpu/liveness.py): an
unrolled accumulation over a Python float (CUTLASS's experimental tutorials 02/03) holds a few
registers at a time instead of all of them, so its batches are sized by what is live, and the results
are the same bits as with every register kept (``warps.DROP_DEAD`` off)."""

from __future__ import annotations

import numpy as np

import cutelab as cute
from cutelab.kernel.cpu import liveness, warps
from cutelab.kernel.ir.nodes import Compute, Load, walk
from cutelab.kernel.launch.plan import last_launch
from cutelab.runtime import from_dlpack

K = 64


@cute.kernel
def dot_kernel(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, limit: cute.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * 32 + tidx
    acc = 0.0
    for k in range(K):  # unrolled: K loads of each operand, K products, K sums
        acc += mA[i, k] * mB[k, i]
    if tidx < limit:  # a region after the loop reads the accumulator
        mC[i] = acc * 2.0
    else:
        mC[i] = acc


def _run(drop, monkeypatch):
    monkeypatch.setattr(warps, "DROP_DEAD", drop)
    rng = np.random.default_rng(3)
    A = rng.standard_normal((64, K)).astype(np.float32)
    B = rng.standard_normal((K, 64)).astype(np.float32)
    C = np.zeros(64, np.float32)
    dot_kernel(from_dlpack(A), from_dlpack(B), from_dlpack(C), 20).launch(grid=2, block=32, interpret=True)
    return A, B, C


def test_dropping_dead_registers_gives_the_same_bits(monkeypatch):
    A, B, kept = _run(False, monkeypatch)
    _, _, dropped = _run(True, monkeypatch)
    assert kept.tobytes() == dropped.tobytes()
    ref = np.einsum("ik,ki->i", A.astype(np.float64), B.astype(np.float64))
    ref[np.arange(64) % 32 < 20] *= 2
    np.testing.assert_allclose(dropped, ref, rtol=1e-4)


def test_the_peak_counts_only_live_registers(monkeypatch):
    _run(True, monkeypatch)
    ir = last_launch().ir
    drop, peak = liveness.plan(ir)
    total = sum(r.n for r in ir.regs)
    assert sum(1 for op in walk(ir.body) if isinstance(op, Load)) >= 2 * K  # the loop was unrolled
    assert total > 3 * K and peak <= 8  # the accumulator, the two loads and the product at a time
    dropped = {r for rs in drop.values() for r in rs}
    # every register a Load or Compute writes is dropped after the body's last op that reads it
    assert {op.dst.id for op in walk(ir.body) if isinstance(op, (Load, Compute)) and not op.dst.mutable} == dropped


def test_registers_are_gone_after_their_last_use(monkeypatch):
    monkeypatch.setattr(warps, "DROP_DEAD", True)
    held = []
    real = warps._Run.run

    def run(self):
        real(self)
        held.append(len(self.groups[0].ctx.regs))

    monkeypatch.setattr(warps._Run, "run", run)
    _run(True, monkeypatch)
    ir = last_launch().ir
    assert held and max(held) <= 8 < len(ir.regs)
