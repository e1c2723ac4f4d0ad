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

from .. import display as _display
from .. import int_tuple as it
from ..errors import LayoutError
from ..layout import Layout, cosize, make_layout, size
from . import palette

__all__ = [
    "Grid", "Figure", "as_layout", "grid_dims", "layout_figure", "coords_figure", "tv_figure",
    "tv_arrays", "make_tv_figure", "default_tile", "tensor_figure", "slice_cells", "header_levels", "mode_boundaries", "OVERVIEW_SIDE", "COORDS_LIMIT", "CELL_LIMIT",
]


@dataclass
class Grid:
    """A panel of cells.

    keys:   (rows, cols) int array: colour key of each cell, -1 for a hole (drawn white).
    labels: (rows, cols) str array or None: the text of each cell ("\\n" splits two lines).
    colors: colors[k] is the fill (hex) of key k.
    groups: (rows, cols) int array or None: thick borders are drawn where it changes.
    subgroups: the same for thinner borders inside groups (warps inside a warpgroup's atom).
    legend: (key, text) pairs explaining the colours.
    style:  "grid" (cells with row/column indices) or "table" (index -> label rows).
    tips:   (rows, cols) str array or None: a longer text per cell ("" for none), shown on hover
            in SVG/HTML (an SVG ``<title>``), e.g. every (t,v) that holds a shared element.
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
    tips: np.ndarray | None = None
    text_sep: str = ""  # text back end: what joins a label's two lines ("T0" + "V1" -> "T0V1"; " " keeps "17 b8" apart)
    subgroups: np.ndarray | None = None  # thinner borders where it changes (warps inside an atom); SVG only
    #: the hierarchical shape of the rows / columns (a layout's mode 0 / the other modes), where it is
    #: nested: SVG and PNG draw one header line per leaf and lines at the mode boundaries (header_levels)
    row_shape: Any = None
    col_shape: Any = None

    @property
    def shape(self) -> tuple[int, int]:
        return int(self.keys.shape[0]), int(self.keys.shape[1])

    def __repr__(self) -> str:  # short: the arrays are the picture, not something to read in a repr
        r, c = self.shape
        return f"Grid({self.title!r}, {r}x{c}, {len(self.colors)} colours)"

    def fill(self, key: int) -> str:
        return palette.HOLE if key < 0 else self.colors[key]

    def ink(self, key: int) -> str:
        """The label colour on key's fill: black or white, whichever contrasts more (>= 4.5:1)."""
        return palette.ink(self.fill(key))


@dataclass
class Figure:
    """A titled picture: grids drawn one after another, then lines of notes.

    placement: None (grids flow left to right) or one (row, col) per grid: the grids are set
    in a table, all with the same cell size, so that rows and columns of neighbours line up
    (a TiledMMA: B above C, A left of C). meta: what a back end may need beyond the cells
    (the LaTeX back end draws kind "mma"/"copy" exactly as CuTe's print_latex, see latex.py).
    """

    title: str
    grids: list[Grid]
    notes: list[str] = field(default_factory=list)
    kind: str = "layout"  # layout | tv | coords | partition | explain | mma | copy | swizzle
    placement: list[tuple[int, int]] | None = None
    meta: dict = field(default_factory=dict)

    def __repr__(self) -> str:  # short: one line naming the panels (print(render(fig)) shows the cells)
        grids = ", ".join(f"{g.title!r} {g.shape[0]}x{g.shape[1]}" for g in self.grids)
        notes = f", {len(self.notes)} note{'s' if len(self.notes) != 1 else ''}" if self.notes else ""
        return f"<Figure {self.kind} {self.title!r}: {len(self.grids)} panel{'s' if len(self.grids) != 1 else ''} ({grids}){notes}>"

    def _repr_svg_(self) -> str:  # Jupyter (svg.render, through cutelab.display: svg.py imports this module)
        return _display.svg(self)

    def _repr_html_(self) -> str:  # Jupyter: interactive (html.fragment, through cutelab.display)
        return _display.html(self)


# --------------------------------------------------------------------------- helpers

#: above this many cells, pictures drop per-cell labels (SVG/PNG) and layouts become heat maps
LABEL_LIMIT = 8192
#: colour steps of a layout heat map
HEAT_LEVELS = 16
#: a layout grid with more rows or columns than this is drawn as an overview: every k-th row and
#: column, at most OVERVIEW_SIDE of each (so a (65536,65536) layout costs what a 256x256 one does)
OVERVIEW_SIDE = 256
#: a layout printed to a terminal (`cutelab show` without -o) with more cells than TEXT_CELLS is
#: an overview of at most TEXT_SIDE rows and columns
TEXT_CELLS = 4096
TEXT_SIDE = 32
#: the most rows a coordinate table lists (then: the first COORDS_LIMIT, and a note)
COORDS_LIMIT = 4096
#: the most cells a TV picture or a partition picture builds (beyond: a LayoutError saying so)
CELL_LIMIT = 1 << 22


def _eval_indices(layout: Layout, idx: np.ndarray) -> np.ndarray:
    """layout(i) for an int64 array of indices i (vectorized; offsets fit in int64 by validation)."""
    out = np.zeros(idx.shape, dtype=np.int64)
    rest = idx.astype(np.int64, copy=True)
    for s, d in zip(it.flatten_to_tuple(layout.shape), it.flatten_to_tuple(layout.stride)):
        out += (rest % s) * d
        rest //= s
    return out


def _sample(n: int, side: int = OVERVIEW_SIDE) -> np.ndarray:
    """Every k-th index of range(n), k the smallest step giving at most `side` of them."""
    step = -(-n // side)
    return np.arange(0, n, step, dtype=np.int64)

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
    if len(shp) == 0:  # the empty layout ():(): one element, offset 0
        return 1, 1, 1, 1
    if len(shp) == 1:
        return it.product(shp[0]), 1, shp[0], 1
    if len(shp) == 2:
        return it.product(shp[0]), it.product(shp[1]), shp[0], shp[1]
    return it.product(shp[0]), it.product(shp[1:]), shp[0], tuple(shp[1:])


def header_levels(shape: Any, n: int) -> list[list[tuple[int, int, str]]] | None:
    """The header lines of ``n`` rows (columns) of a hierarchical ``shape``; None where it is flat.

    Line j (0: next to the grid) gives the coordinate of leaf j of the shape, as runs
    ``(start, span, text)``: for (2,3), line 0 is 0 1 0 1 0 1 and line 1 is 0, 1, 2 over two
    cells each (colexicographic, as CuTe counts).

    >>> header_levels((2, 3), 6)[1]
    [(0, 2, '0'), (2, 2, '1'), (4, 2, '2')]
    >>> header_levels(6, 6) is None
    True
    """
    if shape is None:
        return None
    leaves = [int(x) for x in it.flatten_to_tuple(shape)] if isinstance(shape, tuple) else [int(shape)]
    leaves = [x for x in leaves if x != 1]  # a mode of size 1 has one coordinate: no line of its own
    if len(leaves) < 2 or it.product(tuple(leaves)) != n:
        return None
    out, step = [], 1
    for s in leaves:
        out.append([(start, step, str((start // step) % s)) for start in range(0, n, step)])
        step *= s
    return out


def mode_boundaries(shape: Any, n: int) -> list[int]:
    """Where a hierarchical shape's outer leaves change: multiples of its first leaf (none when flat).

    >>> mode_boundaries((2, 3), 6), mode_boundaries(((2, 2), 3), 12), mode_boundaries(6, 6)
    ([2, 4], [2, 4, 6, 8, 10], [])
    """
    lv = header_levels(shape, n)
    if lv is None:
        return []
    first = lv[1][0][1]  # the span of line 1: the size of the first leaf
    return list(range(first, n, first))


def _int_labels(values: np.ndarray) -> np.ndarray:
    return values.astype(str)


def _prefixed(prefix: str, values: np.ndarray) -> np.ndarray:
    return np.char.add(prefix, values.astype(str))


def tv_labels(thr: np.ndarray, val: np.ndarray) -> np.ndarray:
    """'T#\\nV#' for each cell, '' where thr < 0."""
    thr, val = np.asarray(thr), np.asarray(val)
    if thr.size == 0:
        return np.full(thr.shape, "", dtype="<U1")
    # one string per distinct thread and value, gathered: 0.5 ms for 128x128 where np.char on every cell takes 20-30
    t = np.array([f"T{i}\n" for i in range(max(int(thr.max()), 0) + 1)])
    v = np.array([f"V{i}" for i in range(max(int(val.max()), 0) + 1)])
    lab = np.char.add(t[np.maximum(thr, 0)], v[np.maximum(val, 0)])
    return np.where(thr < 0, "", lab)


def _headers(n: int) -> list[str]:
    return [str(i) for i in range(n)]


def _thread_legend(n: int, prefix: str = "T") -> list[tuple[int, str]]:
    return [(t, f"{prefix}{t}") for t in range(n)]


# --------------------------------------------------------------------------- layouts

def layout_figure(layout: Any, label: str = "offset", title: str | None = None, side: int = OVERVIEW_SIDE) -> Figure:
    """A layout as a grid of its offsets (CuTe's print_layout / print_latex).

    A grid with more than ``side`` rows or columns is an overview: every k-th row and column.
    label="offset" labels each cell with layout(m, n); label="coord" with the cell's
    hierarchical coordinate (offsets then appear in the notes). Cells are shaded by offset
    mod 8 like CuTe's print_latex.

    >>> f = layout_figure("(2,3):(3,1)")
    >>> f.grids[0].labels.tolist()
    [['0', '1', '2'], ['3', '4', '5']]
    """
    from ..swizzle import ComposedLayout

    composed = isinstance(layout, ComposedLayout)  # S<B,M,S> o offset o L: its offsets() are the swizzled ones
    L = layout if composed else as_layout(layout)
    if label not in ("offset", "coord"):
        raise LayoutError(f"layout_figure: label must be 'offset' or 'coord', got {label!r}")
    if composed:
        if L.size() > CELL_LIMIT:
            raise LayoutError(f"layout_figure({L}): {L.size()} elements; a composed layout is drawn up to {CELL_LIMIT}")
    else:
        _no_basis(L, "layout_figure")
    rows, cols, rshape, cshape = grid_dims(L)
    side = max(1, int(side))
    big = rows > side or cols > side
    ri = _sample(rows, side) if big else np.arange(rows, dtype=np.int64)
    ci = _sample(cols, side) if big else np.arange(cols, dtype=np.int64)
    if big:  # colex: index = m + rows * n, evaluated only where shown
        idx = ri[:, None] + rows * ci[None, :]
        offs = L.offsets()[idx] if composed else _eval_indices(L, idx)
    else:
        offs = L.offsets().reshape(cols, rows).T
    if label == "offset":
        labels = _int_labels(offs)
    else:
        rc = np.array([it.tuple_str(it.idx2crd(int(m), rshape)) for m in ri], dtype=str)
        cc = [it.tuple_str(it.idx2crd(int(n), cshape)) for n in ci]
        if cols == 1 and not (isinstance(L.shape, tuple) and len(L.shape) >= 2):
            labels = np.repeat(rc[:, None], 1, axis=1)
        else:
            if isinstance(L.shape, tuple) and len(L.shape) > 2:
                cc = [c[1:-1] for c in cc]  # (m, (n1, n2)) is shown flat: (m, n1, n2)
            labels = np.char.add(np.char.add(np.char.add("(", rc[:, None]), ","), np.array(cc, dtype=str)[None, :])
            labels = np.char.add(labels, ")")
    if offs.size <= LABEL_LIMIT:
        keys = (offs % 8).astype(np.int64)
        colors = [palette.shade(k) for k in range(8)]
        legend = [(k, f"offset % 8 == {k}") for k in range(8)]
    else:  # too big to label: a heat map of the offset in HEAT_LEVELS steps
        lo = int(offs.min()) if offs.size else 0
        top = max(int(offs.max()) - lo + 1, 1) if offs.size else 1
        # exact integer binning (no float rounding, no int64 overflow for offsets near 2^63)
        keys = np.array([(int(o) - lo) * HEAT_LEVELS // top for o in offs.ravel()], dtype=np.int64).reshape(offs.shape) \
            if top >= (1 << 58) else ((offs - lo) * HEAT_LEVELS // top).astype(np.int64)
        colors = palette.heat(HEAT_LEVELS)
        legend = [(k, f"offset {lo + k * top // HEAT_LEVELS}..{lo + (k + 1) * top // HEAT_LEVELS - 1}")
                  for k in range(HEAT_LEVELS)]
    g = Grid(str(L), keys, labels, colors, [str(int(m)) for m in ri], [str(int(n)) for n in ci],
             legend=legend, min_width=len(str(L.cosize())))
    if not big:  # an overview's rows are a sample: its headers stay the plain indices
        g.row_shape, g.col_shape = rshape, cshape
    notes = []
    if big:
        notes.append(f"overview: the layout's grid is {rows} x {cols} cells; shown are {_every(ri, 'row')} and "
                     f"{_every(ci, 'column')} ({len(ri)} x {len(ci)}), each with its own offset; "
                     f"the row and column headers are the real indices")
    return Figure(title if title is not None else str(L), [g], notes, kind="layout")


def _crd_matches(pattern: Any, crd: Any, shape: Any) -> bool:
    """Whether coordinate ``crd`` of a mode of ``shape`` lies in the slice ``pattern`` (None: any)."""
    if pattern is None:
        return True
    if isinstance(pattern, tuple):
        if not isinstance(crd, tuple) or len(pattern) != len(crd):
            raise LayoutError(f"slice {it.tuple_str(pattern)} does not match the mode's shape {it.tuple_str(shape)}")
        return all(_crd_matches(p, c, s) for p, c, s in zip(pattern, crd, shape))
    return (it.crd2idx(crd, shape) if isinstance(crd, tuple) else crd) == pattern


def slice_cells(layout: Any, crd: Any, rows: Sequence[int] | None = None,
                cols: Sequence[int] | None = None) -> np.ndarray:
    """Which cells of a layout's grid ``layout[crd]`` keeps (``crd`` with None for "all of this mode").

    ``rows``/``cols``: the grid rows and columns drawn (an overview's sample); default all.
    Returns a (rows, cols) bool array.

    >>> slice_cells("(2,3):(3,1)", (1, None)).astype(int).tolist()
    [[0, 0, 0], [1, 1, 1]]
    """
    L = as_layout(layout)
    nr, nc, rshape, cshape = grid_dims(L)
    shp = L.shape
    ri = np.arange(nr) if rows is None else np.asarray(rows)
    ci = np.arange(nc) if cols is None else np.asarray(cols)
    if not isinstance(shp, tuple) or len(shp) <= 1:
        pr, pc = (crd[0] if isinstance(crd, tuple) and len(crd) == 1 and isinstance(shp, tuple) else crd), None
    elif not isinstance(crd, tuple) or len(crd) != len(shp):
        raise LayoutError(f"slice {crd if not isinstance(crd, tuple) else it.tuple_str(crd)} of {L}: "
                          f"give a coordinate of {len(shp)} modes, None for a whole mode")
    else:
        pr, pc = crd[0], (crd[1] if len(shp) == 2 else tuple(crd[1:]))
    rm = np.array([_crd_matches(pr, it.idx2crd(int(m), rshape), rshape) for m in ri], dtype=bool)
    cm = np.array([_crd_matches(pc, it.idx2crd(int(n), cshape), cshape) for n in ci], dtype=bool)
    return rm[:, None] & cm[None, :]


def _hier_coord(L: Layout, off: int, first: int) -> Any:
    """get_hier_coord(L, off): CuTe's formula where it inverts L, else the first index reaching off."""
    crd = it.idx2crd(off, L.shape, L.stride)
    if it.crd2idx(crd, L.shape, L.stride) == off:
        return crd
    return it.idx2crd(first, L.shape)


def _every(idx: np.ndarray, what: str) -> str:
    """'all rows', 'every 2nd row', 'every 32nd column', ..."""
    k = _step(idx)
    if k == 1:
        return f"all {what}s"
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"every {k}{suffix} {what}"


def _step(idx: np.ndarray) -> int:
    return int(idx[1] - idx[0]) if idx.size > 1 else 1


def _no_basis(L: Layout, op: str) -> None:
    from ..layout import ScaledBasis

    if any(isinstance(d, ScaledBasis) for d in it.flatten_to_tuple(L.stride)):
        raise LayoutError(
            f"{op}({L}): this layout has basis strides (an identity layout): its values are coordinates, "
            f"not offsets, so it has no grid of offsets to draw; print it, or draw make_layout({it.tuple_str(L.shape)})"
        )


def tensor_figure(tensor: Any, title: str | None = None) -> Figure:
    """A tensor's values on the grid of its layout (like layout_figure, labels are the values).

    Cells are coloured by value (a heat map; bool and non-numeric values: one colour). Past
    OVERVIEW_SIDE rows or columns, an overview reads only the cells it shows.

    >>> import numpy as np, cutelab as cute
    >>> t = cute.make_tensor(np.arange(6, dtype=np.int32) * 10, cute.make_layout((2, 3), stride=(3, 1)))
    >>> tensor_figure(t).grids[0].labels.tolist()
    [['0', '10', '20'], ['30', '40', '50']]
    """
    L = tensor.layout
    if getattr(tensor, "batch", ()):
        raise LayoutError(f"tensor_figure: {tensor} is a batch of {tensor.batch} tensors; index one first")
    rows, cols, _, _ = grid_dims(L)
    big = rows > OVERVIEW_SIDE or cols > OVERVIEW_SIDE
    ri = _sample(rows) if big else np.arange(rows, dtype=np.int64)
    ci = _sample(cols) if big else np.arange(cols, dtype=np.int64)
    idx = ri[:, None] + rows * ci[None, :]
    from ..layout import ScaledBasis

    if any(isinstance(d, ScaledBasis) for d in it.flatten_to_tuple(L.stride)):  # identity tensor: coordinates
        labels = np.array([[it.tuple_str(tensor[int(i)]) for i in row] for row in idx], dtype=str)
        keys = np.zeros(idx.shape, dtype=np.int64)
        colors = ["#DDEEFF"]
    else:
        data = getattr(tensor.engine, "data", None)
        if isinstance(data, np.ndarray) and not isinstance(tensor.offset, np.ndarray):
            vals = tensor.engine.read_one(_eval_indices(L, idx) + int(tensor.offset))
        else:
            flat = np.asarray(tensor.load().values).reshape(-1)
            vals = flat[idx]
        vals = np.asarray(vals)
        if vals.dtype.kind in "fc":
            labels = np.vectorize(lambda v: f"{v:.4g}", otypes=[str])(vals) if vals.size else vals.astype(str)
        else:
            labels = vals.astype(str)
        if vals.dtype.kind in "iuf" and vals.size:
            fin = np.isfinite(vals) if vals.dtype.kind == "f" else np.ones(vals.shape, bool)
            lo, hi = (float(vals[fin].min()), float(vals[fin].max())) if fin.any() else (0.0, 0.0)
            span = hi - lo if hi > lo else 1.0
            keys = np.where(fin, np.clip(((vals.astype(np.float64) - lo) / span * HEAT_LEVELS).astype(np.int64),
                                         0, HEAT_LEVELS - 1), -1)
            colors = palette.heat(HEAT_LEVELS)
        else:
            keys = np.zeros(idx.shape, dtype=np.int64)
            colors = ["#DDEEFF"]
    g = Grid(str(tensor), keys.astype(np.int64), labels, colors, [str(int(m)) for m in ri], [str(int(n)) for n in ci])
    notes = []
    if big:
        notes.append(f"overview: the tensor's grid is {rows} x {cols}; shown are {_every(ri, 'row')} and "
                     f"{_every(ci, 'column')}, with the real indices as headers")
    return Figure(title if title is not None else str(tensor), [g], notes, kind="layout")


def coords_figure(layout: Any) -> Figure:
    """The index -> hierarchical coordinate table of a layout (seed: hierarchical layouts).

    For each i in [0, size), the coordinate c with layout(c) == i (get_hier_coord);
    "-" where no coordinate maps to i.

    >>> coords_figure("(2,2,2):(2,1,4)").notes[1]
    '1 -> (0,1,0)'
    """
    L = as_layout(layout)
    _no_basis(L, "coords_figure")
    n = min(size(L), COORDS_LIMIT)
    # the coordinate of each offset i < n: scatter the index of every coordinate reaching i (the
    # first one wins, as get_hier_coord's search does), touching only indices whose offset is < n
    first = np.full(n, -1, dtype=np.int64)
    total = size(L)
    for start in range(0, total, 1 << 20):
        idx = np.arange(start, min(total, start + (1 << 20)), dtype=np.int64)
        offs = _eval_indices(L, idx)
        hit = (offs >= 0) & (offs < n)
        o, j = offs[hit], idx[hit]
        free = first[o] < 0
        o, j = o[free], j[free]
        o, pos = np.unique(o, return_index=True)  # first index per offset within the chunk
        first[o] = j[pos]
        if (first >= 0).all():
            break
    rows = ["-" if j < 0 else it.tuple_str(_hier_coord(L, i, int(j))) for i, j in enumerate(first)]
    labels = np.array(rows, dtype=str).reshape(n, 1)
    keys = np.where(labels == "-", -1, 0).astype(np.int64)
    g = Grid(str(L), keys, labels, ["#DDEEFF"], _headers(n), ["coordinate"], style="table")
    notes = [f"{i} -> {c}" for i, c in enumerate(rows)]
    if size(L) > n:
        more = f"... the first {n} of {size(L)} offsets are listed"
        notes.append(more)
        g.row_headers = g.row_headers + ["..."]
        g.keys = np.concatenate([g.keys, [[-1]]])
        g.labels = np.concatenate([g.labels, np.array([[more[4:]]])])
    return Figure(str(L), [g], notes=notes, kind="coords")


# --------------------------------------------------------------------------- thread-value layouts

def _has_thread_mode(tv: Layout, what: str) -> None:
    if isinstance(tv.shape, tuple) and len(tv.shape) == 0:
        raise LayoutError(f"{what}: the TV layout {tv} has no modes; it needs a thread mode (and a value mode)")


def tv_arrays(tv: Layout, tile: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, int]:
    """(thr, val, clashes): for each cell (m, n) of the tile, the thread and value that map there.

    For each t, v: idx = tv((t, v)); (m, n) = idx2crd(idx, (M, N)) (col-major). Cells no
    (t, v) maps to hold -1; ``clashes`` counts cells that several (t, v) map to (the last wins,
    as in CuTe's print_latex_tv).
    """
    M, N = tile
    if M < 1 or N < 1:
        raise LayoutError(f"tv picture: the tile ({M},{N}) must have positive sides")
    if M * N > CELL_LIMIT or size(tv) > CELL_LIMIT:
        raise LayoutError(
            f"tv picture: the tile ({M},{N}) of {M * N} cells with {size(tv)} (t,v) pairs is too big to draw "
            f"(the limit is {CELL_LIMIT} cells); draw a smaller thread or value layout"
        )
    _no_basis(tv, "tv picture")
    _has_thread_mode(tv, "tv picture")
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

    Like CuTe's print_latex_tv. ``tile`` defaults to the tile the layout covers (``default_tile``).

    >>> f = tv_figure("((2,2),(2,3)):((2,12),(1,4))", (1, 24))
    >>> f.grids[0].labels[0, :3].tolist()
    ['T0\\nV0', 'T0\\nV1', 'T1\\nV0']
    """
    L = as_layout(tv)
    _no_basis(L, "tv_figure")
    _has_thread_mode(L, "tv_figure")
    chosen = tile is None
    if tile is None:
        tile = default_tile(L)
    if isinstance(tile, int):
        tile = (1, tile)
    M, N = (int(x) for x in tile)
    thr, val, clashes = tv_arrays(L, (M, N))
    T = size(L.shape[0]) if isinstance(L.shape, tuple) else size(L.shape)
    g = Grid(f"{L} over ({M},{N})", thr, tv_labels(thr, val), palette.categorical(T), _headers(M), _headers(N),
             legend=_thread_legend(T))
    notes = [f"layout_tv = {L}", f"tile (M,N) = ({M},{N}); (t,v) -> m + M*n"]
    if chosen:
        notes.append("tile chosen as the most square split of cosize(layout_tv) at a boundary of its modes; "
                     "give the tile (--tile M,N) to choose another")
    if clashes:
        notes.append(f"{clashes} cell(s) are mapped to by several (t,v); the last one is shown")
    holes = int((thr < 0).sum())
    if holes:
        notes.append(f"{holes} cell(s) of the tile are owned by no (t,v) (white)")
    return Figure(title if title is not None else f"TV layout {L}", [g], notes, kind="tv")


def default_tile(tv: Layout) -> tuple[int, int]:
    """The (M, N) tile a TV layout covers: M*N = cosize(tv), M at a boundary of its modes.

    A TV layout maps (t, v) to m + M*n, but M is not written in it. Sorting its modes by stride,
    each prefix of them spans a block of the codomain (1, s0, s0*s1, ...); a column of the tile
    is one of these blocks. Of the spans that divide cosize, the one giving the most square tile
    is chosen (make_layout_tv's (32,8):(8,1) x (4,8):(8,1) gives its tiler (128,64)).

    >>> default_tile(Layout.parse("((8,32),(8,4)):((1024,4),(128,1))"))
    (128, 64)
    """
    n = cosize(tv)
    modes = sorted((d, s) for s, d in zip(it.flatten_to_tuple(tv.shape), it.flatten_to_tuple(tv.stride))
                   if s != 1 and type(d) is int and d > 0)
    spans = {1, n}
    for d, s in modes:
        spans.add(d)
        spans.add(d * s)
    cands = [m for m in spans if 0 < m <= n and n % m == 0]
    best = min(cands, key=lambda m: (abs(np.log(m) - np.log(n // m)) if n > 1 else 0, -m))
    return best, n // best


def make_tv_figure(thr_layout: Any, val_layout: Any) -> Figure:
    """make_layout_tv(thr, val), drawn over the tiler it returns (the seeds' copy kernel tile)."""
    from ..algebra import make_layout_tv

    thr, val = as_layout(thr_layout), as_layout(val_layout)
    tiler, tv = make_layout_tv(thr, val)
    f = tv_figure(tv, tuple(tiler), title=f"make_layout_tv({thr}, {val})")
    f.notes.insert(0, f"tiler_mn = {it.tuple_str(tiler)}")
    return f
