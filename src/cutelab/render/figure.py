"""What a picture holds, independent of its format: panels of coloured, labelled cells.

Every picture cutelab draws is a ``Figure``: a title, one or more ``Grid`` panels, and lines
of notes. A ``Grid`` is a rectangle of cells, each with a colour key (an int; -1 for a hole),
a label (a string, ``"\\n"`` separating two lines), and optionally a group id whose changes are
drawn as thick borders (tiles of a divide, blocks of a partition). The back ends (text, svg,
latex, html, png) only know how to draw a Figure; the builders in this module know the
algebra. All builders are pure and vectorized with numpy, so a 256x256 layout is cheap.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .. import int_tuple as it
from ..errors import LayoutError
from ..layout import Layout, cosize, make_layout, size
from . import palette

__all__ = [
    "Grid", "Figure", "as_layout", "grid_dims", "layout_figure", "coords_figure", "tv_figure",
    "tv_arrays", "make_tv_figure",
]


@dataclass
class Grid:
    """A panel of cells.

    keys:   (rows, cols) int array: colour key of each cell, -1 for a hole (drawn white).
    labels: (rows, cols) str array or None: the text of each cell ("\\n" splits two lines).
    colors: colors[k] is the fill (hex) of key k.
    groups: (rows, cols) int array or None: thick borders are drawn where it changes.
    legend: (key, text) pairs explaining the colours.
    style:  "grid" (cells with row/column indices) or "table" (index -> label rows).
    """

    title: str
    keys: np.ndarray
    labels: np.ndarray | None
    colors: list[str]
    row_headers: list[str] | None = None
    col_headers: list[str] | None = None
    groups: np.ndarray | None = None
    legend: list[tuple[int, str]] = field(default_factory=list)
    style: str = "grid"
    min_width: int = 1  # text back end: narrowest cell (CuTe pads offsets to the digits of cosize)

    @property
    def shape(self) -> tuple[int, int]:
        return int(self.keys.shape[0]), int(self.keys.shape[1])

    def fill(self, key: int) -> str:
        return palette.HOLE if key < 0 else self.colors[key]


@dataclass
class Figure:
    """A titled picture: grids drawn one after another, then lines of notes."""

    title: str
    grids: list[Grid]
    notes: list[str] = field(default_factory=list)
    kind: str = "layout"  # layout | tv | coords | partition | explain (used by the text/latex back ends)

    def _repr_html_(self) -> str:  # Jupyter: interactive (render/html.py)
        from . import html

        return html.fragment(self)


# --------------------------------------------------------------------------- helpers

#: above this many cells, pictures drop per-cell labels (SVG/PNG) and layouts become heat maps
LABEL_LIMIT = 8192
#: colour steps of a layout heat map
HEAT_LEVELS = 16

def as_layout(x: Any) -> Layout:
    """A Layout from a Layout or CuTe notation text (``"(4,2):(2,1)"``); a bare shape is col-major."""
    if isinstance(x, Layout):
        return x
    if isinstance(x, str):
        if ":" in x:
            return Layout.parse(x)
        from ..layout import parse_tuple

        return make_layout(parse_tuple(x))
    return make_layout(x)


def grid_dims(layout: Layout) -> tuple[int, int, Any, Any]:
    """(rows, cols, row_shape, col_shape) of the grid a layout is drawn on.

    Rank 1: a column (like CuTe's print_layout, which appends a 1:0 mode). Rank 2: rows are
    mode 0 and columns mode 1. Rank > 2: rows are mode 0, columns all the other modes
    together (their hierarchical coordinate enumerated colexicographically).
    """
    shp = layout.shape
    if not isinstance(shp, tuple):
        return shp, 1, shp, 1
    if len(shp) == 1:
        return it.product(shp[0]), 1, shp[0], 1
    if len(shp) == 2:
        return it.product(shp[0]), it.product(shp[1]), shp[0], shp[1]
    return it.product(shp[0]), it.product(shp[1:]), shp[0], tuple(shp[1:])


def _int_labels(values: np.ndarray) -> np.ndarray:
    return values.astype(str)


def _prefixed(prefix: str, values: np.ndarray) -> np.ndarray:
    return np.char.add(prefix, values.astype(str))


def tv_labels(thr: np.ndarray, val: np.ndarray) -> np.ndarray:
    """'T#\\nV#' for each cell, '' where thr < 0."""
    lab = np.char.add(np.char.add(_prefixed("T", thr), "\n"), _prefixed("V", val))
    return np.where(thr < 0, "", lab)


def _headers(n: int) -> list[str]:
    return [str(i) for i in range(n)]


def _thread_legend(n: int, prefix: str = "T") -> list[tuple[int, str]]:
    return [(t, f"{prefix}{t}") for t in range(n)]


# --------------------------------------------------------------------------- layouts

def layout_figure(layout: Any, label: str = "offset", title: str | None = None) -> Figure:
    """A layout as a grid of its offsets (CuTe's print_layout / print_latex).

    label="offset" labels each cell with layout(m, n); label="coord" with the cell's
    hierarchical coordinate (offsets then appear in the notes). Cells are shaded by offset
    mod 8 like CuTe's print_latex.

    >>> f = layout_figure("(2,3):(3,1)")
    >>> f.grids[0].labels.tolist()
    [['0', '1', '2'], ['3', '4', '5']]
    """
    L = as_layout(layout)
    rows, cols, rshape, cshape = grid_dims(L)
    offs = L.offsets().reshape(cols, rows).T  # colex: index = m + rows * n
    if label == "offset":
        labels = _int_labels(offs)
    elif label == "coord":
        rc = np.array([it.tuple_str(it.idx2crd(m, rshape)) for m in range(rows)], dtype=str)
        cc = [it.tuple_str(it.idx2crd(n, cshape)) for n in range(cols)]
        if cols == 1 and not (isinstance(L.shape, tuple) and len(L.shape) >= 2):
            labels = np.repeat(rc[:, None], 1, axis=1)
        else:
            if isinstance(L.shape, tuple) and len(L.shape) > 2:
                cc = [c[1:-1] for c in cc]  # (m, (n1, n2)) is shown flat: (m, n1, n2)
            labels = np.char.add(np.char.add(np.char.add("(", rc[:, None]), ","), np.array(cc, dtype=str)[None, :])
            labels = np.char.add(labels, ")")
    else:
        raise LayoutError(f"layout_figure: label must be 'offset' or 'coord', got {label!r}")
    if offs.size <= LABEL_LIMIT:
        keys = (offs % 8).astype(np.int64)
        colors = [palette.shade(k) for k in range(8)]
        legend = [(k, f"offset % 8 == {k}") for k in range(8)]
    else:  # too big to label: a heat map of the offset in HEAT_LEVELS steps
        top = max(int(offs.max()) + 1, 1) if offs.size else 1
        keys = (offs * HEAT_LEVELS // top).astype(np.int64)
        colors = palette.heat(HEAT_LEVELS)
        legend = [(k, f"offset {k * top // HEAT_LEVELS}..{(k + 1) * top // HEAT_LEVELS - 1}") for k in range(HEAT_LEVELS)]
    g = Grid(str(L), keys, labels, colors, _headers(rows), _headers(cols),
             legend=legend, min_width=len(str(cosize(L))))
    return Figure(title if title is not None else str(L), [g], kind="layout")


def coords_figure(layout: Any) -> Figure:
    """The index -> hierarchical coordinate table of a layout (seed: hierarchical layouts).

    For each i in [0, size), the coordinate c with layout(c) == i (get_hier_coord);
    "-" where no coordinate maps to i.

    >>> coords_figure("(2,2,2):(2,1,4)").notes[1]
    '1 -> (0,1,0)'
    """
    L = as_layout(layout)
    n = size(L)
    rows = []
    for i in range(n):
        try:
            rows.append(it.tuple_str(L.get_hier_coord(i)))
        except LayoutError:
            rows.append("-")
    labels = np.array(rows, dtype=str).reshape(n, 1)
    keys = np.where(labels == "-", -1, 0).astype(np.int64)
    g = Grid(str(L), keys, labels, ["#DDEEFF"], _headers(n), ["coordinate"], style="table")
    return Figure(str(L), [g], notes=[f"{i} -> {c}" for i, c in enumerate(rows)], kind="coords")


# --------------------------------------------------------------------------- thread-value layouts

def tv_arrays(tv: Layout, tile: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, int]:
    """(thr, val, clashes): for each cell (m, n) of the tile, the thread and value that map there.

    For each t, v: idx = tv((t, v)); (m, n) = idx2crd(idx, (M, N)) (col-major). Cells no
    (t, v) maps to hold -1; ``clashes`` counts cells that several (t, v) map to (the last wins,
    as in CuTe's print_latex_tv).
    """
    M, N = tile
    T = size(tv.shape[0]) if isinstance(tv.shape, tuple) else size(tv.shape)
    V = size(tv) // T
    offs = tv.offsets()
    if offs.size and (offs.min() < 0 or offs.max() >= M * N):
        raise LayoutError(
            f"tv picture: layout {tv} maps to offset {int(offs.max())}, outside the tile ({M},{N}) of {M * N} elements"
        )
    i = np.arange(offs.size, dtype=np.int64)
    t, v = i % T, i // T
    thr = np.full(M * N, -1, dtype=np.int64)
    val = np.full(M * N, -1, dtype=np.int64)
    thr[offs] = t
    val[offs] = v
    clashes = int(offs.size - np.unique(offs).size)
    # flat index m + M * n -> (m, n)
    return thr.reshape(N, M).T, val.reshape(N, M).T, clashes


def tv_figure(tv: Any, tile: Sequence[int] | None = None, title: str | None = None) -> Figure:
    """A thread-value layout over its (M, N) tile: cells coloured by thread, labelled T#V#.

    Like CuTe's print_latex_tv. ``tile`` defaults to a single row of cosize(tv) elements.

    >>> f = tv_figure("((2,2),(2,3)):((2,12),(1,4))", (1, 24))
    >>> f.grids[0].labels[0, :3].tolist()
    ['T0\\nV0', 'T0\\nV1', 'T1\\nV0']
    """
    L = as_layout(tv)
    if tile is None:
        tile = (1, cosize(L))
    if isinstance(tile, int):
        tile = (1, tile)
    M, N = (int(x) for x in tile)
    thr, val, clashes = tv_arrays(L, (M, N))
    T = size(L.shape[0]) if isinstance(L.shape, tuple) else size(L.shape)
    g = Grid(f"{L} over ({M},{N})", thr, tv_labels(thr, val), palette.categorical(T), _headers(M), _headers(N),
             legend=_thread_legend(T))
    notes = [f"layout_tv = {L}", f"tile (M,N) = ({M},{N}); (t,v) -> m + M*n"]
    if clashes:
        notes.append(f"{clashes} cell(s) are mapped to by several (t,v); the last one is shown")
    holes = int((thr < 0).sum())
    if holes:
        notes.append(f"{holes} cell(s) of the tile are owned by no (t,v) (white)")
    return Figure(title if title is not None else f"TV layout {L}", [g], notes, kind="tv")


def make_tv_figure(thr_layout: Any, val_layout: Any) -> Figure:
    """make_layout_tv(thr, val), drawn over the tiler it returns (the seeds' copy kernel tile)."""
    from ..algebra import make_layout_tv

    thr, val = as_layout(thr_layout), as_layout(val_layout)
    tiler, tv = make_layout_tv(thr, val)
    f = tv_figure(tv, tuple(tiler), title=f"make_layout_tv({thr}, {val})")
    f.notes.insert(0, f"tiler_mn = {it.tuple_str(tiler)}")
    return f
