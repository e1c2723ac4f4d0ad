"""A kernel's CUDA printed and compiled as a launch builds it: once as the passes plan it, and where
ptxas then spills a kernel the ``loopidx`` pass marked (``passes/loopidx.py``, on where
``CUTELAB_PASSES_ON`` names it), once more with the loops' per-trip index copies (``loopvars.py``),
keeping the build that spills fewer bytes. The one place a decision is finished after ptxas has seen
the kernel."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Tuple

from .printer import CudaRenderer

__all__ = ["build"]


def _spilled(res: Any) -> int:
    """Bytes of spill stores and loads per thread in a compile's ptxas report (0 without one)."""
    from .nvrtc import spill_report

    rep = spill_report(res.log)
    return rep[0] + rep[1] if rep else 0


def build(ir: Any, compile_fn: Callable[[str], Any], restrict: bool = True) -> Tuple[Any, str, Any]:
    """(renderer, CUDA source, compile result) of ir: printed as the passes plan it and compiled by
    ``compile_fn(source)``; where ptxas then spills and the ``loopidx`` pass marked the kernel
    (a runtime loop), printed again with the loops' per-trip index copies and compiled, and the
    build with fewer spilled bytes kept (the first on a tie)."""
    r = CudaRenderer(ir, restrict=restrict)
    src = r.render()
    res = compile_fn(src)
    spilled = _spilled(res)
    if not spilled or not r.plan.loopidx_ok or r.plan.loopidx:
        return r, src, res
    from ...errors import CompileError

    r2 = CudaRenderer(ir, restrict=restrict, plan=replace(r.plan, loopidx=True))
    src2 = r2.render()
    try:
        res2 = compile_fn(src2)
    except CompileError:  # pragma: no cover - the copies are plain C; the first build stands regardless
        return r, src, res
    if _spilled(res2) < spilled:
        return r2, src2, res2
    return r, src, res
