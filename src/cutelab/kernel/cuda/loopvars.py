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
from typing import Any, Dict

__all__ = ["LoopVars"]

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
