"""Pictures of a (swizzled) shared-memory layout, coloured by bank.

Shared memory has 32 banks of 4 bytes: the byte at address ``a`` lives in bank
``(a // 4) % 32``. A layout of ``elem_bits``-bit elements puts element (m, n) at offset
``o = layout(m, n)`` (in elements), i.e. byte ``o * elem_bits / 8``. A swizzle ``S<B,M,S>``
(CuTe's ``Swizzle<B,M,S>``) permutes offsets by XOR-ing the B bits at [M+S, M+S+B) into the
bits at [M, M+B): ``o ^ ((o & yyy_mask) >> S)``; a ComposedLayout ``S<B,M,S> o off o L``
maps c to ``swizzle(off + L(c))``. Each cell shows the final offset and its bank (``b#``),
and is coloured by bank: cells of one colour in a column read by one warp conflict.

The core, :func:`bank_figure`, takes a plain layout and a swizzle given as (B, M, S) or as
any function of an offset; :func:`swizzle_figure` also reads CuTe notation
(``"S<3,4,3> o 0 o (8,64):(64,1)"``) and ComposedLayout objects.

>>> f = swizzle_figure("S<1,0,1> o 0 o (2,2):(2,1)", elem_bits=32)
>>> f.grids[0].labels.tolist()
[['0\\nb0', '1\\nb1'], ['3\\nb3', '2\\nb2']]
"""

from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np

from ..errors import LayoutError
from ..layout import Layout, parse_layout
from . import palette
from .figure import Figure, Grid, as_layout, grid_dims

__all__ = ["BANKS", "BANK_BYTES", "swizzle_offsets", "parse_composed", "bank_figure", "swizzle_figure"]

BANKS = 32
BANK_BYTES = 4

_COMPOSED = re.compile(r"^\s*Sw?<\s*(-?\d+)\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*>\s*o\s*(?:(-?\d+)\s*o\s*)?(.+?)\s*$")


def _check_bms(bms: tuple[int, int, int], where: str) -> tuple[int, int, int]:
    try:
        b, m, s = (int(x) for x in bms)
    except (TypeError, ValueError):
        raise LayoutError(f"{where}: a swizzle is three ints (B, M, S), got {bms!r}") from None
    if b < 0 or m < 0 or abs(s) < b:
        raise LayoutError(f"{where}: Swizzle<{b},{m},{s}> needs B >= 0, M >= 0 and |S| >= B")
    return b, m, s


def swizzle_offsets(offsets: np.ndarray, bms: tuple[int, int, int]) -> np.ndarray:
    """CuTe's Swizzle<B,M,S> applied to an int array: o ^ shiftr(o & yyy_mask, S).

    >>> swizzle_offsets(np.arange(4) * 64, (3, 3, 3)).tolist()   # row r of 64: bits [6,9) into [3,6)
    [0, 72, 144, 216]
    """
    b, m, s = _check_bms(bms, "swizzle")
    o = np.asarray(offsets, dtype=np.int64)
    yyy = ((1 << b) - 1) << (m + max(0, s))
    picked = o & yyy
    return o ^ (picked >> s if s >= 0 else picked << -s)


def parse_composed(text: str) -> tuple[tuple[int, int, int] | None, int, Layout]:
    """``"S<3,4,3> o 0 o (8,64):(64,1)"`` -> ((3,4,3), 0, Layout); a plain layout -> (None, 0, Layout).

    >>> parse_composed("S<2,3,3> o (8,32):(32,1)")
    ((2, 3, 3), 0, Layout((8,32):(32,1)))
    """
    m = _COMPOSED.match(text)
    if not m:
        if text.lstrip().startswith("S"):
            raise LayoutError(f"swizzle picture: cannot read {text!r}; expected S<B,M,S> o OFFSET o LAYOUT, "
                              f"e.g. S<3,4,3> o 0 o (8,64):(64,1)")
        return None, 0, as_layout(text)
    bms = _check_bms(tuple(int(m.group(i)) for i in (1, 2, 3)), f"swizzle picture {text!r}")
    return bms, int(m.group(4) or 0), parse_layout(m.group(5))


def bank_figure(layout: Any, swizzle: tuple[int, int, int] | Callable[[int], int] | None = None, offset: int = 0,
                elem_bits: int = 16, title: str | None = None) -> Figure:
    """A layout of ``elem_bits``-bit elements in shared memory, each cell's offset and bank.

    ``swizzle`` is None, (B, M, S), or a function of one offset; the offset of cell c is
    ``swizzle(offset + layout(c))``. Cells are coloured by bank (32 banks of 4 bytes); an
    element wider than 4 bytes is coloured by its first bank.

    >>> bank_figure("(2,4):(4,1)", elem_bits=64).grids[0].labels[0].tolist()
    ['0\\nb0', '1\\nb2', '2\\nb4', '3\\nb6']
    """
    L = as_layout(layout)
    eb = int(elem_bits)
    if eb <= 0 or eb & (eb - 1):
        raise LayoutError(f"bank picture: elem_bits must be a power of two (8, 16, 32, ...), got {elem_bits!r}")
    rows, cols, _, _ = grid_dims(L)
    raw = L.offsets() + int(offset)
    if swizzle is None:
        offs, sw_text = raw, ""
    elif callable(swizzle):
        offs = np.array([int(swizzle(int(x))) for x in raw.tolist()], dtype=np.int64)
        sw_text = f"{swizzle} o "
    else:
        bms = _check_bms(swizzle, f"bank picture of {L}")
        offs = swizzle_offsets(raw, bms)
        sw_text = f"S<{bms[0]},{bms[1]},{bms[2]}> o "
    if offs.size and offs.min() < 0:
        raise LayoutError(f"bank picture: {sw_text}{offset} o {L} has a negative offset ({int(offs.min())}); "
                          f"shared-memory offsets start at 0")
    offs = offs.reshape(cols, rows).T  # colex: index = m + rows * n
    byte = offs * eb // 8
    bank = (byte // BANK_BYTES) % BANKS
    labels = np.char.add(np.char.add(offs.astype(str), "\nb"), bank.astype(str))
    name = f"{sw_text}{offset} o {L}" if sw_text else str(L)
    hdr = lambda n: [str(i) for i in range(n)]  # noqa: E731
    g = Grid(name, bank.astype(np.int64), labels, palette.categorical(BANKS), hdr(rows), hdr(cols),
             legend=[(k, f"bank {k}") for k in range(BANKS)])
    notes = [f"elements of {eb} bits; bank = (offset * {eb} / 8 bytes / {BANK_BYTES}) mod {BANKS}; "
             f"label: offset (in elements) and bank"]
    if eb > 32:
        notes.append(f"each element spans {eb // 32} banks; the first is shown")
    per_row = [len(set(bank[r].tolist())) for r in range(rows)]
    per_col = [len(set(bank[:, c].tolist())) for c in range(cols)]
    notes.append(f"distinct banks per row: min {min(per_row)}, max {max(per_row)} of {cols} cells; "
                 f"per column: min {min(per_col)}, max {max(per_col)} of {rows} cells")
    return Figure(title if title is not None else f"{name}, {eb}-bit elements, by bank", [g], notes, kind="swizzle")


def swizzle_figure(x: Any, elem_bits: int = 16, title: str | None = None) -> Figure:
    """A swizzled layout by bank, from CuTe notation, a ComposedLayout, or a plain Layout.

    A ComposedLayout is read by duck typing: ``inner`` (the swizzle: a callable, or with
    ``num_bits``/``num_base``/``num_shift``), ``offset`` and ``outer`` (the layout), as in
    CuTe DSL.

    >>> swizzle_figure("S<3,4,3> o 0 o (8,64):(64,1)").grids[0].shape
    (8, 64)
    """
    if isinstance(x, str):
        bms, off, L = parse_composed(x)
        return bank_figure(L, bms, off, elem_bits, title)
    if isinstance(x, Layout):
        return bank_figure(x, None, 0, elem_bits, title)
    inner, outer = getattr(x, "inner", None), getattr(x, "outer", None)
    if inner is None or outer is None:
        raise LayoutError(f"swizzle_figure: expected CuTe notation, a Layout or a ComposedLayout, "
                          f"got {type(x).__name__}")
    off = getattr(x, "offset", 0)
    try:
        off = int(off)
    except (TypeError, ValueError):
        raise LayoutError(f"swizzle_figure: the offset of {x} must be an int, got {off!r}") from None
    if all(hasattr(inner, a) for a in ("num_bits", "num_base", "num_shift")):
        sw: Any = (int(inner.num_bits), int(inner.num_base), int(inner.num_shift))
    elif callable(inner):
        sw = inner
    else:
        raise LayoutError(f"swizzle_figure: the inner function of {x} is not a swizzle")
    return bank_figure(as_layout(outer), sw, off, elem_bits, title)
