"""Pass ``coherent``: a read-only load that a block barrier follows takes the coherent path.

A load that the ``cache`` pass gave the read-only (non-coherent) path (``ldg``, ``nc128``,
``nc256``) and that a block barrier (``__syncthreads``) follows in program order takes ``ldca``
(``ld.global.ca``) instead. ptxas may move a non-coherent load past ``bar.sync`` to the load's
first use, and does when registers are short: quack's RMSNorm reads its weights before its row
reduction, and under ``__ldg`` they were read after the reduction's barrier, their latency
exposed at the end of every CTA (96 registers, 5 CTAs an SM). A coherent load stays before the
barrier, as CuTe DSL's ``ld.global`` does (168 registers, 3 CTAs an SM; CuTe DSL's kernel: 159 and
3). A ``plain`` load of a ``const __restrict__`` pointer would not do: NVVM makes it non-coherent.
Off (``CUTELAB_PASSES_OFF=coherent``): the cache pass's choice stands.
"""

from __future__ import annotations

from typing import Any

from ..ir.nodes import Barrier, KernelIR, Load, walk

NON_COHERENT = ("ldg", "nc128", "nc256")


def run(ir: KernelIR, plan: Any, options: Any) -> None:
    ops = list(walk(ir.body))
    last = max((i for i, op in enumerate(ops) if isinstance(op, Barrier)), default=-1)
    for op in ops[:max(last, 0)]:
        if isinstance(op, Load) and plan.cache.get(id(op)) in NON_COHERENT:
            plan.cache[id(op)] = "ldca"
