"""Suggest a swizzle: the ``Swizzle<B,M,S>`` that remove the bank conflicts of a shared-memory access.

Given a shared tile's layout (element index -> offset) and how a warp reads or writes it (a TV
layout, ldmatrix, or a TiledCopy), ``suggest_swizzle`` tries every swizzle ``S<B,M,S>`` (element
units: the ComposedLayout ``S<B,M,S> o 0 o layout``, as CuTe's ``composition(Swizzle<B,M,S>{},
layout)``) whose bits lie inside the tile's footprint, replays the same access through each one
with the analysis of this package (``analyze``: wavefronts and bank conflicts as Nsight Compute
counts them), and keeps those that need fewer wavefronts than the layout without a swizzle.

A candidate is refused, with the reason kept in ``rejected``, when

- it moves an offset outside ``[0, cosize(layout))`` (the swizzled tile would need more memory);
- the access cannot be made through it (ldmatrix needs 8 contiguous elements per row);
- the TV access can no longer be vectorised as widely (more instructions: it is counted, and
  ranked by its total wavefronts, so a narrower copy never wins by having smaller instructions).

Candidates are ranked by total wavefronts, then conflicts, then the fewest swizzle bits (B),
the smallest shift (S) and base (M). When the access has no conflict the answer says so; when
no candidate lowers the wavefronts, ``found`` is False and the summary says "none found".

>>> s = suggest_swizzle("(64,64):(64,1)", "f16", ldmatrix=4)  # fp16, 128-byte rows, K-major
>>> print(s.best.swizzle, s.before_totals["conflicts"], s.best.totals["conflicts"])
S<3,3,3> 448 0
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..errors import LayoutError
from ..layout import Layout
from ..swizzle import ComposedLayout, Swizzle, make_composed_layout, make_swizzle
from .access import AccessReport, AccessTrace, analyze
from .tv import copy_trace, element_bits, ldmatrix_trace, parse_tensor_layout, tv_trace

__all__ = ["suggest_swizzle", "SwizzleSuggestion", "SwizzleCandidate", "swizzle_candidates", "MAX_SWIZZLE_BITS"]

#: the most YYY/ZZZ bits (B) a candidate has: 5 spans the 32 banks (CuTe's smem atoms use up to 3)
MAX_SWIZZLE_BITS = 5


@dataclass
class SwizzleCandidate:
    """One swizzle tried: the swizzled layout, its access report and totals."""

    swizzle: Swizzle
    layout: ComposedLayout
    report: AccessReport
    totals: dict

    def byte_swizzle(self, elem_bits: int) -> str:
        """The same swizzle on byte addresses (CuTe's smem atoms, a swizzled smem pointer): M + log2(bytes)."""
        k = (elem_bits // 8).bit_length() - 1
        sw = self.swizzle
        return f"S<{sw.num_bits},{sw.num_base + k},{sw.num_shift}>"


@dataclass
class SwizzleSuggestion:
    """What ``suggest_swizzle`` found: the access without a swizzle, and the candidates that help."""

    access: str
    layout: Layout
    elem_bits: int
    before: AccessReport
    candidates: list[SwizzleCandidate]
    tried: int
    rejected: list[tuple[str, str]] = field(default_factory=list)

    @property
    def before_totals(self) -> dict:
        return self.before.totals()

    @property
    def found(self) -> bool:
        """Whether some swizzle needs fewer wavefronts than the layout as it is."""
        return bool(self.candidates)

    @property
    def best(self) -> SwizzleCandidate | None:
        return self.candidates[0] if self.candidates else None

    def summary(self, top: int = 5) -> list[str]:
        """Lines of text: the access, the counts before, the best swizzles (or none found) and why."""
        b = self.before_totals
        out = [f"access: {self.access}",
               f"without a swizzle: {b['wavefronts']} wavefronts (ideal {b['ideal_wavefronts']}), "
               f"{b['conflicts']} bank conflicts in {b['instructions']} instruction(s)"]
        if b["conflicts"] == 0:
            out.append("no bank conflicts: no swizzle is needed")
        if not self.candidates:
            if b["conflicts"]:
                out.append(f"none found: none of the {self.tried} swizzles S<B,M,S> tried (B <= {MAX_SWIZZLE_BITS}, "
                           f"within the tile's {self.layout.cosize()} elements) needs fewer wavefronts")
        else:
            out.append(f"{len(self.candidates)} of {self.tried} swizzles tried need fewer wavefronts; the best "
                       f"{min(top, len(self.candidates))}:")
            for c in self.candidates[:top]:
                t = c.totals
                out.append(f"  {c.swizzle} (on byte addresses {c.byte_swizzle(self.elem_bits)}): "
                           f"{t['wavefronts']} wavefronts, {t['conflicts']} conflicts, {t['instructions']} instruction(s)"
                           f" -> layout {c.layout}")
        if self.rejected:
            reasons: dict[str, int] = {}
            for _, why in self.rejected:
                reasons[why] = reasons.get(why, 0) + 1
            out.append("refused: " + "; ".join(f"{n} {why}" for why, n in sorted(reasons.items())))
        return out

    def figure(self, instruction: int | None = None):
        """Before and after: the bank map of the worst instruction without a swizzle and with the best one."""
        from ..render.figure import Figure
        from .draw import access_figure

        before = self.before
        i = int(before.conflicts.argmax()) if instruction is None else int(instruction)
        if not 0 <= i < before.trace.num_instructions:
            raise LayoutError(f"suggest_swizzle figure: instruction {i} out of range [0, {before.trace.num_instructions})")
        fb = access_figure(before, i)
        grids = []
        for g in fb.grids:
            g.title = f"before: {g.title}"
            grids.append(g)
        best = self.best
        if best is not None and i < best.report.trace.num_instructions:
            fa = access_figure(best.report, i)
            for g in fa.grids:
                g.title = f"after {best.swizzle}: {g.title}"
                grids.append(g)
        b = self.before_totals
        if best is not None:
            title = (f"suggest a swizzle: {best.swizzle} takes {b['conflicts']} bank conflicts to "
                     f"{best.totals['conflicts']} (wavefronts {b['wavefronts']} -> {best.totals['wavefronts']})")
        elif b["conflicts"]:
            title = f"suggest a swizzle: none found ({b['conflicts']} bank conflicts stay)"
        else:
            title = "suggest a swizzle: no bank conflicts, no swizzle needed"
        notes = self.summary() + [f"drawn: {before.trace.describe(i)} (the worst without a swizzle), "
                                  "columns are banks, rows wavefronts; red cells are conflicts"]
        return Figure(title, grids, notes, kind="layout")


def _plain(layout: Any) -> tuple[Layout, str | None]:
    """The plain tile layout (a ComposedLayout's outer layout, its swizzle named) from a Layout or text."""
    if isinstance(layout, str):
        layout = parse_tensor_layout(layout)
    if isinstance(layout, ComposedLayout):
        if not isinstance(layout.outer, Layout) or not isinstance(layout.inner, Swizzle) or layout.offset != 0:
            raise LayoutError(f"suggest_swizzle: {layout} is not S<B,M,S> o 0 o layout; give the plain tile layout")
        return layout.outer, str(layout.inner)
    if not isinstance(layout, Layout):
        raise LayoutError(f"suggest_swizzle: the tile layout must be a Layout or CuTe notation, got {type(layout).__name__}")
    return layout, None


def swizzle_candidates(cosize: int, max_bits: int = MAX_SWIZZLE_BITS) -> list[Swizzle]:
    """Every S<B,M,S> (B >= 1, S >= B) whose YYY bits lie below the tile's footprint of ``cosize`` elements.

    >>> [str(s) for s in swizzle_candidates(16)]
    ['S<1,0,1>', 'S<1,0,2>', 'S<1,0,3>', 'S<1,1,1>', 'S<1,1,2>', 'S<1,2,1>', 'S<2,0,2>']
    """
    top = max(int(cosize) - 1, 0).bit_length()  # offsets use bits [0, top)
    out = []
    for b in range(1, max_bits + 1):
        for m in range(0, top):
            for s in range(b, top):
                if m + s + b <= top:
                    out.append(make_swizzle(b, m, s))
    return out


def suggest_swizzle(layout: Any, dtype: Any = "f16", *, tv: Any = None, ldmatrix: int | None = None,
                    trans: bool = False, tiled_copy: Any = None, side: str = "src", op: str = "ld",
                    align: int = 16, max_bits: int = MAX_SWIZZLE_BITS) -> SwizzleSuggestion:
    """The swizzles of a shared tile that lower the bank conflicts of one access pattern.

    layout:     the tile in shared memory (element index -> offset): a Layout, CuTe notation, or a
                swizzled layout (its swizzle is dropped: the search starts from the plain layout).
    dtype:      element type ('f16', Float16, 16); a TiledCopy's own value type wins.
    tv:         a TV layout (thread, value) -> element index, copied auto-vectorised (``tv_trace``);
    ldmatrix:   or 1, 2, 4: ldmatrix.x1/x2/x4 over the (M, K) tile (``ldmatrix_trace``), ``trans``;
    tiled_copy: or a TiledCopy whose ``side`` ('src'/'dst') touches the tile (``copy_trace``).
    op:         'ld' or 'st' for a TV access.

    >>> s = suggest_swizzle("(32,32):(32,1)", "f32", tv="(32,1):(1,1)")  # a column of f32: 32-way
    >>> s.before_totals["conflicts"], s.best.totals["conflicts"], str(s.best.swizzle)
    (31, 0, 'S<5,0,5>')
    """
    L, had = _plain(layout)
    bits = element_bits(dtype)
    given = sum(x is not None for x in (tv, ldmatrix, tiled_copy))
    if given != 1:
        raise LayoutError("suggest_swizzle: give exactly one access: tv=..., ldmatrix=1|2|4 or tiled_copy=...")
    if L.cosize() > (1 << 24):
        raise LayoutError(f"suggest_swizzle: the tile {L} spans {L.cosize()} elements; shared memory holds far fewer "
                          "(the search takes tiles up to 2^24 elements)")
    if tv is not None:
        def trace(lay: Any) -> AccessTrace:
            return tv_trace(tv, lay, bits, "shared", align=align, op=op)
        access = f"TV layout {tv} ({op}) over the tile, {bits}-bit elements"
    elif ldmatrix is not None:
        if ldmatrix not in (1, 2, 4):
            raise LayoutError(f"suggest_swizzle: ldmatrix must be 1, 2 or 4 (x1, x2, x4), got {ldmatrix!r}")

        def trace(lay: Any) -> AccessTrace:
            return ldmatrix_trace(lay, bits, ldmatrix, trans)
        access = f"ldmatrix.x{ldmatrix}{'.trans' if trans else ''} over the tile, {bits}-bit elements"
    else:
        vt = getattr(tiled_copy, "value_type", None)
        if vt is not None:
            bits = element_bits(vt)  # the copy's own element type

        def trace(lay: Any) -> AccessTrace:
            return copy_trace(tiled_copy, lay, "shared", side=side, align=align)
        access = f"the {side} side of {getattr(tiled_copy, 'op', type(tiled_copy).__name__)!r} over the tile"
    access += f"; tile {L}" + (f" (its swizzle {had} left out)" if had else "")
    before = analyze(trace(L))
    return _search(L, bits, trace, before, access, max_bits)


def _search(L: Layout, bits: int, trace: Callable[[Any], AccessTrace], before: AccessReport, access: str,
            max_bits: int) -> SwizzleSuggestion:
    cos = L.cosize()
    offs = L.offsets()
    cands = swizzle_candidates(cos, max_bits)
    b0 = before.totals()
    good, rejected = [], []
    if b0["conflicts"] > 0:
        for sw in cands:
            if offs.size and int(np.max(sw(offs))) >= cos:
                rejected.append((str(sw), "move an offset outside the tile's footprint"))
                continue
            lay = make_composed_layout(sw, 0, L)
            try:
                rep = analyze(trace(lay))
            except LayoutError as e:
                rejected.append((str(sw), "break the access (" + _reason(e) + ")"))
                continue
            t = rep.totals()
            if t["wavefronts"] < b0["wavefronts"]:
                good.append(SwizzleCandidate(sw, lay, rep, t))
    good.sort(key=lambda c: (c.totals["wavefronts"], c.totals["conflicts"], c.totals["instructions"],
                             c.swizzle.num_bits, c.swizzle.num_shift, c.swizzle.num_base))
    return SwizzleSuggestion(access, L, bits, before, good, len(cands) if b0["conflicts"] else 0, rejected)


def _reason(e: Exception) -> str:
    msg = str(e)
    if "contiguous" in msg:
        return "ldmatrix rows are no longer 16 contiguous bytes"
    if "vectors are not possible" in msg:
        return "the copy's vectors are no longer contiguous and aligned"
    return msg.split(":")[0]
