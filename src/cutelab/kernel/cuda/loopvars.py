"""The printer's side of the ``loopidx`` pass (``passes/loopidx.py``): a loop body reads the thread
index, and the warp indices the ``uniform`` pass broadcasts at the kernel's entry, from copies taken
at the top of each trip through an empty ``asm volatile`` that NVVM must assume rewrites them. NVVM
then computes the body's index expressions in the loop, where ptxas can recompute them cheaply,
instead of hoisting each one into a register that lives across the loop.

The copies are declared only for the names the body's printed lines use: ``LoopVars`` puts a
placeholder line at the top of the body, hands out the local names while the body prints
(``var_map`` entries for ``tid.x``/``tid.y``/``tid.z``, ``alias`` for a hoisted warp index) and
replaces the placeholder with their declarations when the body is done.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Callable, Dict, Tuple

__all__ = ["LoopVars", "build"]

_AXES = ("x", "y", "z")


class LoopVars:
    """One loop body's opaque copies of the thread and warp indices (see the module docstring).

    ``r``: the CudaRenderer printing the loop. Use as ``lv = LoopVars(r); lv.open(); <print the
    body>; lv.close()``."""

    def __init__(self, r: Any):
        self.r = r
        r.n_tmp += 1
        self.k = r.n_tmp
        self.mark = f"/*cl_loopvars{self.k}*/"
        self.saved: Dict[str, str] = {}
        self.tids: Dict[str, str] = {}  # tid.x/y/z -> this body's copy
        self.warp: Dict[str, str] = {}  # hoisted warp index local -> this body's copy

    def open(self) -> None:
        r = self.r
        self.saved = r.var_map
        self.tids = {f"tid.{a}": f"cl_tid{a}{self.k}" for a in _AXES}
        r.var_map = {**self.saved, **self.tids}
        r.loop_vars.append(self)
        r.indent += 1
        r.emit(self.mark)  # replaced by the declarations the body needs (close)
        r.indent -= 1

    def alias(self, name: str) -> str:
        """This body's copy of the hoisted warp index ``name`` (declared at close)."""
        got = self.warp.get(name)
        if got is None:
            got = self.warp[name] = f"{name}_{self.k}"
        return got

    def close(self) -> None:
        r = self.r
        assert r.loop_vars and r.loop_vars[-1] is self
        r.loop_vars.pop()
        r.var_map = self.saved
        lines = r.lines
        at = next(i for i in range(len(lines) - 1, -1, -1) if lines[i].strip() == self.mark)
        body = "\n".join(lines[at + 1:])
        pad = "  " * (r.indent + 1)
        decls = []
        for key, local in self.tids.items():
            if re.search(rf"\b{local}\b", body):
                decls.append(f'{pad}unsigned int {local} = threadIdx.{key[-1]}; asm volatile("" : "+r"({local}));')
        for name, local in self.warp.items():
            if re.search(rf"\b{local}\b", body):
                t = r.hoisted_types.get(name, "unsigned int")
                con = "r" if t in ("unsigned int", "int") else "l"
                decls.append(f'{pad}{t} {local} = {name}; asm volatile("" : "+{con}"({local}));')
        lines[at:at + 1] = decls


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
    from .printer import CudaRenderer

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
