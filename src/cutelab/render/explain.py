"""Pictures that explain one step of the algebra: composition, complement, divides, products.

Each ``explain_*`` returns a Figure of several panels whose colours follow one idea through
the step (a row of the domain through a composition, a copy of the layout through its
complement, a tile through a divide, a repeat through a product), plus notes that state the
step in CuTe notation and check it by evaluation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import algebra as alg
from .. import int_tuple as it
from ..errors import LayoutError
from ..layout import Layout, cosize, make_layout, size
from . import palette
from .figure import Figure, Grid, _headers, as_layout, grid_dims

__all__ = ["explain", "explain_composition", "explain_complement", "explain_divide", "explain_product", "OPS"]


def _grid_of(L: Layout, title: str, keys_flat: np.ndarray, colors: list[str], legend=None,
             labels_flat: np.ndarray | None = None, groups_flat: np.ndarray | None = None) -> Grid:
    """A layout's grid (as in layout_figure) with the given per-index keys (colex order)."""
    rows, cols, rshape, cshape = grid_dims(L)
    offs = L.offsets()
    lab = (labels_flat if labels_flat is not None else offs.astype(str)).reshape(cols, rows).T
    keys = keys_flat.reshape(cols, rows).T
    groups = None if groups_flat is None else groups_flat.reshape(cols, rows).T
    return Grid(title, keys, lab, colors, _headers(rows), _headers(cols), groups=groups, legend=legend or [],
                row_shape=rshape, col_shape=cshape)  # nested headers where the modes are hierarchical


def _check(name: str, got: np.ndarray, want: np.ndarray) -> str:
    if np.array_equal(got, want):
        return f"check: {name} holds for all {got.size} indices"
    bad = int(np.flatnonzero(got != want)[0])
    return f"CHECK FAILED: {name} at index {bad}: {int(got[bad])} != {int(want[bad])}"


def explain_composition(A: Any, B: Any) -> Figure:
    """composition(A, B) as the chain  domain -> B -> A -> offsets.

    Panel 1 is B (colours: the row of B's grid, i.e. mode 0 of the domain, a thread for a TV
    layout); panel 2 is A with each cell coloured by the row of B that reaches it; panel 3 is
    R = A o B in B's shape, same colours as B. Notes follow each row through the chain.
    Seed (layout-algebra-zh): A = MN2Memory (4,4):(4,1), B = TV2MN (4,2,2):(2,1,8).
    """
    A, B = as_layout(A), as_layout(B)
    R = alg.composition(A, B)
    rows_b, cols_b, _, _ = grid_dims(B)
    nb = size(B)
    bi = np.arange(nb, dtype=np.int64)
    key_b = bi % rows_b  # row of B's grid = mode-0 coordinate of the domain
    colors = palette.categorical(rows_b)
    legend = [(k, f"row {k}") for k in range(rows_b)]
    b_offs = B.offsets()
    na = size(A)
    if b_offs.size and (b_offs.min() < 0 or b_offs.max() >= na):
        raise LayoutError(f"explain composition: B = {B} reaches {int(b_offs.max())}, outside A's domain of size {na}")
    key_a = np.full(na, -1, dtype=np.int64)
    key_a[b_offs] = key_b
    a_offs = A.offsets()
    r_offs = R.offsets()
    g1 = _grid_of(B, f"B = {B}   (domain -> B's codomain = A's domain)", key_b, colors, legend)
    nat = make_layout(A.shape)
    g_nat = _grid_of(nat, f"A's domain: index -> coordinate (natural layout {nat})", key_a, colors, legend)
    g2 = _grid_of(A, f"A = {A}   (coloured by the row of B that reaches each cell)", key_a, colors, legend)
    g3 = _grid_of(R, f"R = composition(A, B) = {R}   (same domain as B)", key_b, colors, legend)
    notes = [f"composition({A}, {B}) = {R}"]
    for r in range(min(rows_b, 16)):
        idx = bi[key_b == r]
        mid = b_offs[idx]
        crds = [it.tuple_str(it.idx2crd(int(x), A.shape)) for x in mid]
        notes.append(f"row {r}: B -> {tuple(int(x) for x in mid)} = coords {', '.join(crds)} of A "
                     f"-> A -> {tuple(int(x) for x in a_offs[mid])}")
    if rows_b > 16:
        notes.append(f"... ({rows_b - 16} more rows)")
    notes.append(_check("R(i) == A(B(i))", r_offs, a_offs[b_offs]))
    return Figure(f"composition: {A} o {B}", [g1, g_nat, g2, g3], notes, kind="explain")


def _strip(n: int, keys: np.ndarray, colors: list[str], title: str, legend, width: int = 32) -> Grid:
    """The codomain [0, n) as rows of ``width`` cells labelled by offset."""
    w = min(width, n)
    rows = -(-n // w)
    k = np.full(rows * w, -1, dtype=np.int64)
    k[:n] = keys
    lab = np.array([str(i) for i in range(n)] + [""] * (rows * w - n), dtype=str)
    return Grid(title, k.reshape(rows, w), lab.reshape(rows, w), colors,
                [str(r * w) for r in range(rows)], _headers(w), legend=legend)


def explain_complement(A: Any, cotarget: int | None = None) -> Figure:
    """complement(A, M) filling the holes of A in [0, M).

    Every offset x in [0, M) is A(i) + C(k) for exactly one i and one k (when A and its
    complement C are admissible): the strip colours x by k, so copy k = 0 is A itself (A's own
    offsets) and each other colour is A shifted by C(k). Then A, C, and (A, C) as a grid.
    Seed (layout-algebra-zh): complement((2,3):(2,4), 24) = (2,2):(1,12).
    """
    A = as_layout(A)
    M = cotarget if cotarget is not None else cosize(A)
    C = alg.complement(A, M)
    AC = make_layout(A, C)
    nc = size(C)
    colors = palette.categorical(nc)
    legend = [(0, "k=0: A itself")] + [(k, f"k={k}: A + C({k}) = A + {int(c)}") for k, c in enumerate(C.offsets()) if k]
    ac = AC.offsets()
    span = max(M, int(ac.max()) + 1 if ac.size else 0)
    keys = np.full(span, -1, dtype=np.int64)
    i = np.arange(ac.size, dtype=np.int64)
    keys[ac] = i // size(A)
    strip = _strip(span, keys, colors, f"[0, {span}): offset x = A(i) + C(k), coloured by k", legend)
    ga = _grid_of(A, f"A = {A}", np.zeros(size(A), dtype=np.int64), colors, legend[:1])
    kc = np.arange(nc, dtype=np.int64)
    gc = _grid_of(C, f"C = complement(A, {M}) = {C}", kc, colors, legend)
    gac = Grid(f"(A, C) = {AC}: rows i of A, columns k of C", (i // size(A)).reshape(nc, size(A)).T,
               ac.astype(str).reshape(nc, size(A)).T, colors, _headers(size(A)), _headers(nc), legend=legend)
    notes = [f"complement({A}, {M}) = {C}", f"(A, C) = {AC}, coalesced {alg.coalesce(AC)}"]
    bij = ac.size == np.unique(ac).size and ac.size == M and ac.max() == M - 1
    notes.append("check: (A, C) is a bijection onto [0, %d)" % M if bij else
                 f"note: (A, C) covers {np.unique(ac).size} of the {M} offsets (A and M not admissible for a full cover)")
    return Figure(f"complement: {A} in {M}", [strip, ga, gc, gac], notes, kind="explain")


def _tiler_text(tiler: Any) -> str:
    if isinstance(tiler, tuple):
        return "<" + ", ".join(_tiler_text(t) for t in tiler) + ">"
    return str(tiler)


def _parse_tiler(x: Any) -> Any:
    """A tiler from text: a layout "2:1", a shape "(2,4)" or a tuple of layouts "<2:1,4:1>"."""
    if not isinstance(x, str):
        return x
    s = x.strip()
    if s.startswith("<") and s.endswith(">"):
        parts, depth, cur = [], 0, ""
        for ch in s[1:-1]:
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
                continue
            depth += ch in "(<"
            depth -= ch in ")>"
            cur += ch
        parts.append(cur)
        return tuple(_parse_tiler(p) for p in parts)
    if ":" in s:
        return Layout.parse(s)
    from ..layout import parse_tuple

    return parse_tuple(s)


def _tile_ids(shape: Any, tiler: Any, op: str) -> tuple[np.ndarray, np.ndarray, Layout]:
    """For each index (colex) of ``shape``: (tile id, index within its tile), from the divide itself.

    The divide is applied to the identity-like index layout make_layout(shape): its offsets
    are the colex indices of the elements, and its zipped form ((tile), (rest)) says which tile
    (rest index) and which position in it (tile index) each element has.
    """
    ident = make_layout(shape)
    Z = alg.zipped_divide(ident, tiler)
    T = size(Z.shape[0])
    z = Z.offsets()
    if z.size and (z.min() < 0 or z.max() >= size(ident)):
        raise LayoutError(
            f"explain {op}: the tiler {_tiler_text(tiler)} does not divide the shape {it.tuple_str(shape)}: its tiles "
            f"reach index {int(z.max())}, past the {size(ident)} elements of the layout; a picture needs a tiler "
            f"whose tiles fit the layout exactly"
        )
    j = np.arange(z.size, dtype=np.int64)
    tile_id = np.full(size(ident), -1, dtype=np.int64)
    pos = np.full(size(ident), -1, dtype=np.int64)
    tile_id[z] = j // T
    pos[z] = j % T
    return tile_id, pos, Z


def explain_divide(op: str, A: Any, tiler: Any) -> Figure:
    """logical_divide / zipped_divide / tiled_divide / flat_divide: A's cells coloured by tile.

    Panel 1: A, each cell coloured by the tile it falls in (thick borders between tiles).
    Panel 2: the result of the divide, same colours: for zipped_divide each column is a tile.
    """
    A = as_layout(A)
    tiler = _parse_tiler(tiler)
    fn = getattr(alg, op)
    R = fn(A, tiler)
    tile_id, pos, Z = _tile_ids(A.shape, tiler, op)
    ntiles = size(Z.shape[1])
    colors = palette.categorical(ntiles)
    legend = [(k, f"tile {k}") for k in range(ntiles)]
    g1 = _grid_of(A, f"A = {A}, coloured by tile of {_tiler_text(tiler)}", tile_id, colors, legend,
                  groups_flat=tile_id)
    # the result: element j of R is element idx(j) of A, where idx comes from the same divide of the index layout
    ridx = fn(make_layout(A.shape), tiler).offsets()
    rk = tile_id[ridx]
    g2 = _grid_of(R, f"{op}(A, {_tiler_text(tiler)}) = {R}", rk, colors, legend, groups_flat=rk)
    notes = [f"{op}({A}, {_tiler_text(tiler)}) = {R}",
             f"zipped form ((tile),(rest)) = {alg.zipped_divide(A, tiler)}: {ntiles} tiles of {size(Z.shape[0])}",
             _check("R(j) == A(index of j)", R.offsets(), A.offsets()[ridx])]
    return Figure(f"{op}: {A} by {_tiler_text(tiler)}", [g1, g2], notes, kind="explain")


def explain_product(op: str, A: Any, B: Any) -> Figure:
    """logical_product / blocked_product / raked_product / zipped/tiled: the repeats of A coloured.

    The product R = op(A, B) holds size(B) copies of A. Which copy a cell is comes from the
    same product of A's index layout make_layout(A.shape): its offset is a + size(A) * B(b), so
    offset // size(A) is B's offset of the repeat. Panel 1: A; panel 2: B; panel 3: R with
    cells coloured by repeat (thick borders between repeats).
    Seed (layout-algebra-zh): blocked/raked_product((2,5):(5,1), (3,4)).
    """
    A, B = as_layout(A), as_layout(B)
    fn = getattr(alg, op)
    R = fn(A, B)
    na = size(A)
    tag = fn(make_layout(A.shape), B).offsets()
    rep, within = tag // na, tag % na
    nrep = int(cosize(B))
    colors = palette.categorical(max(nrep, 1))
    legend = [(k, f"repeat B={k}") for k in range(nrep)]
    ga = _grid_of(A, f"A = {A}", np.zeros(na, dtype=np.int64), colors, legend[:1])
    gb = _grid_of(B, f"B = {B}   (one colour per repeat)", B.offsets(), colors, legend)
    gr = _grid_of(R, f"{op}(A, B) = {R}", rep, colors, legend, groups_flat=rep)
    notes = [f"{op}({A}, {B}) = {R}", f"{size(B)} copies of A, arranged by B",
             _check("R(j) == A(a) + C(B(b))", R.offsets(),
                    A.offsets()[within] + alg.complement(A, size(A) * cosize(B)).offsets()[rep])]
    return Figure(f"{op}: {A} x {B}", [ga, gb, gr], notes, kind="explain")


OPS = ["composition", "complement", "logical_divide", "zipped_divide", "tiled_divide", "flat_divide",
       "logical_product", "zipped_product", "tiled_product", "blocked_product", "raked_product"]


def explain(op: str, *args: Any) -> Figure:
    """Dispatch: explain("composition", A, B), explain("complement", A[, M]), explain("<divide>", A, tiler), ..."""
    if op == "composition":
        return explain_composition(*args)
    if op == "complement":
        a = list(args)
        if len(a) > 1 and isinstance(a[1], str):
            a[1] = int(a[1])
        return explain_complement(*a)
    if op.endswith("_divide"):
        return explain_divide(op, *args)
    if op.endswith("_product"):
        return explain_product(op, *args)
    raise LayoutError(f"explain: unknown operation {op!r}; one of {', '.join(OPS)}")
