"""Pass ``loopidx``: inside a runtime loop, index expressions of the thread index are computed in
the loop from a copy of ``threadIdx`` (and of the warp index of the ``uniform`` pass) that the
compiler cannot see through, not hoisted out of it.

NVVM moves every loop-invariant expression of ``threadIdx`` out of a loop: each shared-memory
address of an ldmatrix or cp.async (a swizzle of the thread index XOR a constant per k-block) then
lives in its own register across the whole loop. In a kernel at the register limit ptxas spills
those and reloads them from local memory at every trip (FlashAttention-2's causal kernel: 5 loads
at the top of its loop, 144 bytes of stack). CuTe DSL's PTX reads ``%tid.x`` inside the loop and
computes the addresses there; ptxas keeps such cheap integer work in the loop instead of holding
its results. The printer does the same: at the top of each loop body, ``unsigned int t =
threadIdx.x; asm volatile("" : "+r"(t));`` (an empty statement that NVVM must assume changes t),
and the body's index expressions read t. Only integer index arithmetic moves; no value changes.

The copies cost integer instructions at every trip: a kernel with registers to spare is faster
with its addresses held (CUTLASS's tensorop_gemm.py: 581 SASS instructions in its mainloop with the
copies, 493 without). So the choice is made after ptxas has seen the kernel: this pass marks a kernel
with a runtime loop as a candidate (``Plan.loopidx_ok``); the launch prints it without the copies
first, and only where ptxas then spills registers prints it again with them (``Plan.loopidx``) and
keeps the build that spills fewer bytes (``cuda/build.py``).
It is off unless ``CUTELAB_PASSES_ON=loopidx`` asks for it (``passes.OFF_BY_DEFAULT``): on the H200 it made
FlashAttention-2's non-causal kernel 2% slower (5813 against 5684 us) and its causal one 0.5% faster (benchmarks/
RESULTS.md, 2026-11-28 18:32 UTC); fewer spills did not mean a faster loop there.
"""

from __future__ import annotations

from typing import Any

from ..ir.nodes import For, KernelIR, While, walk


def has_loop(ir: KernelIR) -> bool:
    """Whether ir has a runtime loop (a For or While left in the IR)."""
    return any(isinstance(s, (For, While)) for s in walk(ir.body))


def run(ir: KernelIR, plan: Any, options: Any) -> None:
    plan.loopidx_ok = has_loop(ir)
