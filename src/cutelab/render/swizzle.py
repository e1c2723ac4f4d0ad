"""Pictures of a (swizzled) shared-memory layout, coloured by bank.

Shared memory has 32 banks of 4 bytes: the byte at address ``a`` lives in bank
``(a // 4) % 32``. A layout of ``elem_bits``-bit elements puts element (m, n) at offset
``o = layout(m, n)`` (in elements), i.e. byte ``o * elem_bits / 8``. A swizzle ``S<B,M,S>``
(CuTe's ``Swizzle<B,M,S>``) permutes offsets by XOR-ing the B bits at [M+S, M+S+B) into the
bits at [M, M+B): ``o ^ ((o & yyy_mask) >> S)``; a ComposedLayout ``S<B,M,S> o off o L``
maps c to ``swizzle(off + L(c))``. Each cell shows the final offset and its bank (``b#``),
and is coloured by bank: cells of one colour in a column read by one warp conflict.

The core, :func:`bank_figure`, takes a plain layout and a swizzle given as (B, M, S), a
``Swizzle`` or any function of an offset; :func:`swizzle_figure` takes a ``ComposedLayout``
(``make_smem_layout_atom``, ...) or its CuTe notation (``"S<3,4,3> o 0 o (8,64):(64,1)"``).

>>> f = swizzle_figure("S<1,0,1> o 0 o (2,2):(2,1)", elem_bits=32)
>>> f.grids[0].labels.tolist()
[['0\\nb0', '1\\nb1'], ['3\\nb3', '2\\nb2']]
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..errors import LayoutError
from ..layout import Layout, size
from ..swizzle import ComposedLayout, Swizzle, make_swizzle, parse_composed
from . import palette
from .figure import CELL_LIMIT, Figure, Grid, as_layout, grid_dims

__all__ = ["BANKS", "BANK_BYTES", "bank_figure", "swizzle_figure"]

BANKS = 32
BANK_BYTES = 4


def bank_figure(layout: Any, swizzle: tuple[int, int, int] | Callable[[int], int] | None = None, offset: int = 0,
                elem_bits: int = 16, title: str | None = None, ptr_swizzle: bool = False) -> Figure:
    """A layout of ``elem_bits``-bit elements in shared memory, each cell's offset and bank.

    ``swizzle`` is None, (B, M, S), a Swizzle, or a function of one offset; the offset of cell
    c is ``swizzle(offset + layout(c))``. With ``ptr_swizzle=True`` the swizzle acts on the
    *byte* address instead, as the swizzle of a shared-memory pointer does (CuTe C++'s
    ``smem_ptr_flag`` layouts, CuTe DSL's ``make_smem_layout_atom`` whose swizzle goes to
    ``get_tensor(..., swizzle=...)``): element offset ``swizzle(o * bytes) / bytes``. Cells
    are coloured by bank (32 banks of 4 bytes); a wider element by its first bank.

    >>> bank_figure("(2,4):(4,1)", elem_bits=64).grids[0].labels[0].tolist()
    ['0\\nb0', '1\\nb2', '2\\nb4', '3\\nb6']
    >>> a = bank_figure("(8,64):(64,1)", (3, 4, 3), ptr_swizzle=True)   # 16-bit: S<3,3,3> on elements
    >>> bool((a.grids[0].labels == bank_figure("(8,64):(64,1)", (3, 3, 3)).grids[0].labels).all())
    True
    """
    L = as_layout(layout)
    _elem_bits(elem_bits)  # the options first, before anything is allocated
    _cell_limit(L)
    raw = L.offsets() + int(offset)
    if swizzle is None:
        if ptr_swizzle:
            raise LayoutError(f"bank picture of {L}: ptr_swizzle needs a swizzle")
        return _figure(str(L) if not offset else f"{offset} o {L}", L, raw, elem_bits, title)
    if isinstance(swizzle, tuple):
        try:
            swizzle = make_swizzle(*swizzle)
        except (LayoutError, TypeError) as e:
            raise LayoutError(f"bank picture of {L}: bad swizzle {swizzle!r} ({e})") from None
    name = f"{swizzle} o {offset} o {L}"
    scale = 1
    if ptr_swizzle:
        eb = _elem_bits(elem_bits)
        if eb < 8:
            raise LayoutError(f"bank picture of {name}: a pointer swizzle needs elements of 8 bits or more, got {eb}")
        scale = eb // 8
        name += " (swizzle on byte addresses)"
    if isinstance(swizzle, Swizzle):
        offs = swizzle(raw * scale)
    elif callable(swizzle):
        offs = np.array([int(swizzle(int(x))) for x in (raw * scale).tolist()], dtype=np.int64)
    else:
        raise LayoutError(f"bank picture of {L}: the swizzle must be (B, M, S), a Swizzle or a function, got {swizzle!r}")
    if scale > 1:
        if (offs % scale).any():
            raise LayoutError(f"bank picture of {name}: the swizzle moves bytes inside a {elem_bits}-bit element "
                              f"(its base M is below log2 of the element's bytes)")
        offs = offs // scale
    return _figure(name, L, offs, elem_bits, title)


def _cell_limit(L: Layout) -> None:
    n = size(L)
    if n > CELL_LIMIT:
        raise LayoutError(f"bank picture of {L}: {n} cells is past the limit of {CELL_LIMIT} for a bank picture; "
                          f"draw one tile of the shared-memory layout")


def _elem_bits(elem_bits: Any) -> int:
    try:
        eb = int(elem_bits)
    except (TypeError, ValueError):
        eb = 0
    if eb <= 0 or eb & (eb - 1):
        raise LayoutError(f"bank picture: elem_bits must be a power of two (8, 16, 32, ...), got {elem_bits!r}")
    return eb


def _figure(name: str, L: Layout, offs: np.ndarray, elem_bits: int, title: str | None) -> Figure:
    """The bank picture of the offsets ``offs`` (flat, colexicographic over L's shape)."""
    eb = _elem_bits(elem_bits)
    if offs.size and offs.min() < 0:
        raise LayoutError(f"bank picture: {name} has a negative offset ({int(offs.min())}); "
                          f"shared-memory offsets start at 0")
    rows, cols, _, _ = grid_dims(L)
    offs = offs.reshape(cols, rows).T  # colex: index = m + rows * n
    byte = offs * eb // 8
    bank = (byte // BANK_BYTES) % BANKS
    labels = np.char.add(np.char.add(offs.astype(str), "\nb"), bank.astype(str))
    hdr = lambda n: [str(i) for i in range(n)]  # noqa: E731
    g = Grid(name, bank.astype(np.int64), labels, palette.categorical(BANKS), hdr(rows), hdr(cols),
             legend=[(k, f"bank {k}") for k in range(BANKS)], text_sep=" ")
    notes = [f"elements of {eb} bits; bank = (offset * {eb} / 8 bytes / {BANK_BYTES}) mod {BANKS}; "
             f"label: offset (in elements) and bank"]
    if eb > 32:
        notes.append(f"each element spans {eb // 32} banks; the first is shown")
    per_row = [len(set(bank[r].tolist())) for r in range(rows)]
    per_col = [len(set(bank[:, c].tolist())) for c in range(cols)]
    notes.append(f"distinct banks per row: min {min(per_row)}, max {max(per_row)} of {cols} cells; "
                 f"per column: min {min(per_col)}, max {max(per_col)} of {rows} cells")
    return Figure(title if title is not None else f"{name}, {eb}-bit elements, by bank", [g], notes, kind="swizzle")


def swizzle_figure(x: Any, elem_bits: int = 16, title: str | None = None, ptr_swizzle: bool = False,
                   before: bool = False) -> Figure:
    """A swizzled layout by bank, from CuTe notation, a ComposedLayout, or a plain Layout.

    A ComposedLayout ``inner o offset o outer`` is drawn over ``outer``'s shape. Its swizzle
    acts on element offsets, as the value itself computes them, unless ``ptr_swizzle`` says it
    is a pointer swizzle acting on byte addresses (see :func:`bank_figure`): that is how
    ``make_smem_layout_atom``'s ``S<3,4,3>`` is meant (for 16-bit elements it is CuTe C++'s
    position-independent ``Sw<3,3,3>``).

    ``before=True`` draws the layout without its swizzle on the left, the same colours for the
    same banks, so that what the swizzle changes is seen side by side.

    >>> swizzle_figure("S<3,4,3> o 0 o (8,64):(64,1)").grids[0].shape
    (8, 64)
    >>> [g.title for g in swizzle_figure("S<1,0,1> o 0 o (2,2):(2,1)", 32, before=True).grids]
    ['before: (2,2):(2,1)', 'after: S<1,0,1> o 0 o (2,2):(2,1)']
    """
    _elem_bits(elem_bits)
    if isinstance(x, str):
        x = parse_composed(x) if " o " in x else as_layout(x)
    if isinstance(x, Layout):
        if ptr_swizzle:
            raise LayoutError(f"swizzle_figure: {x} has no swizzle for ptr_swizzle to apply")
        return bank_figure(x, None, 0, elem_bits, title)
    if isinstance(x, ComposedLayout):
        if not isinstance(x.outer, Layout) or not isinstance(x.offset, int):
            raise LayoutError(f"swizzle_figure: {x} is not a shared-memory layout (an int offset and a Layout)")
        if isinstance(x.inner, Swizzle):
            after = bank_figure(x.outer, x.inner, x.offset, elem_bits, title, ptr_swizzle)
            return _before_and_after(bank_figure(x.outer, None, x.offset, elem_bits), after) if before else after
        if ptr_swizzle:
            raise LayoutError(f"swizzle_figure: the inner function of {x} is not a Swizzle")
        _cell_limit(x.outer)
        return _figure(str(x), x.outer, np.asarray(x.offsets(), dtype=np.int64), elem_bits, title)
    raise LayoutError(f"swizzle_figure: expected CuTe notation, a Layout or a ComposedLayout, got {type(x).__name__}")


def _before_and_after(b: Figure, a: Figure) -> Figure:
    """The unswizzled picture ``b`` on the left of the swizzled ``a``: two panels, one legend."""
    gb, ga = b.grids[0], a.grids[0]
    gb.title, ga.title = f"before: {gb.title}", f"after: {ga.title}"
    notes = [a.notes[0]] + [f"before: {n}" for n in b.notes[1:]] + [f"after: {n}" for n in a.notes[1:]]
    return Figure(a.title.replace(", by bank", ", by bank, before and after the swizzle"), [gb, ga], notes,
                  kind="swizzle")
