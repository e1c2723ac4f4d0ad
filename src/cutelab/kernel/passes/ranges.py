"""Pass ``ranges``: an op's index expressions that read registers (``Op.index_exprs()``: the box
coordinates of a TMA copy) are simplified with the value ranges those registers are proven to hold
where the op runs (analysis/ranges.py). A TMA tensor that is a coordinate view (nvgpu/cpasync/tma.py)
packs a tile's coordinates into one offset, each tiled mode 2^20 apart, and the copy decodes them
with floor divisions and remainders: with a k-tile index ``k`` read from a register (a pipeline
state's count) they print as ``cl_mod(2097152ll * blockIdx.x + k, 17179869184) / 16384ll`` in 64
bits, about 45 SASS instructions per copy, because ``k`` may be any Int32. Where the analysis proves
``0 <= k < 128`` (the loop bounds it), the remainder and division fold away (``128 * blockIdx.x``)
and the coordinates are plain sums, as CuTe DSL's coordinate tuples are.

A register keeps its name and only gets a narrower range, which the simplifying constructors
(``ir.symbolic``) use; every value the register may hold at the op lies in it (the analysis
over-approximates), so each simplified expression equals the original at every run of the op. The
plan's ``ranged`` maps id(op) to the simplified expressions (``LoweringContext.index_exprs``).
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

from ...errors import LaunchError, TraceError
from ..ir.nodes import KernelIR, Op, RegVar, walk
from ..ir.symbolic import Expr, atoms, sym_range


def _narrowed(v: RegVar, val: Any) -> Any:
    """v with the range of Val val (sym + [lo, hi]) where that is narrower, else None."""
    slo, shi = sym_range(val.sym)
    lo, hi = max(v.lo, slo + val.lo), min(v.hi, shi + val.hi)
    if (lo, hi) == (v.lo, v.hi) or lo > hi:
        return None
    n = RegVar(v.ref, v.div)
    n.lo, n.hi, n.bits = lo, hi, v.bits
    return n


def simplify(exprs: Tuple[Any, ...], env: Dict[str, Any]) -> Tuple[Any, ...]:
    """exprs with each register whose Val env gives narrowed to that Val's range."""
    from ..analysis.values import substitute

    m: Dict[Any, Any] = {}
    for e in exprs:
        for v in atoms(e) if isinstance(e, Expr) else ():
            if isinstance(v, RegVar) and v.key not in m and v.name in env:
                n = _narrowed(v, env[v.name])
                if n is not None:
                    m[v.key] = n
    if not m:
        return tuple(exprs)
    return tuple(substitute(e, m) for e in exprs)


def run(ir: KernelIR, plan: Any, options: Any) -> None:
    ops = [op for op in walk(ir.body) if isinstance(op, Op) and hasattr(op, "index_exprs")
           and any(isinstance(e, Expr) and any(isinstance(v, RegVar) for v in atoms(e)) for e in op.index_exprs())]
    if not ops:
        return
    from ..analysis.ranges import analyze

    try:
        a = analyze(ir)
    except (TypeError, ValueError, KeyError, AttributeError, TraceError):  # an IR it does not know: as traced
        return
    for op in ops:
        env = a.values.get(id(op))
        if env:
            try:
                plan.ranged[id(op)] = simplify(tuple(op.index_exprs()), env)
            except (TypeError, ValueError, KeyError, AttributeError, TraceError, LaunchError):
                pass  # an expression the constructors refuse with these ranges: printed as traced
