"""Pictures of a TiledMMA, as CuTe's ``print_latex(TiledMMA)`` draws them.

C (M x N) sits in the middle, A (M x K) on its left and B on top of it, drawn transposed
(K rows, N columns) so that A's rows line up with C's rows and B's columns with C's columns.
Every cell is labelled ``T#V#`` (the thread and value that hold it) and coloured by thread,
one colour per thread across the three operands.

Where several (t,v) hold one element (A is shared by the atoms along N, B by those along M,
an SM90 wgmma reads A and B from shared memory with every thread "holding" all of it), the
label is the first holder in CuTe's order (lowest thread, then lowest value), exactly like
CuTe; the full set is in the cell's tooltip (SVG ``<title>``: ``V0: T0,T64``) and counted in
the notes.

The core, :func:`mma_tv_figure`, takes plain values (the tile (M,N,K) and the three
``(thr,val) -> index`` layouts over the column-major tiles), so it draws anything shaped like
a TiledMMA; :func:`mma_figure` reads them off a ``TiledMma``.

>>> f = mma_tv_figure((16, 8, 8), "((4,8),(2,2)):((32,1),(16,8))",
...                   "((4,8),(2,2)):((32,1),(16,8))", "((4,8),2):((16,1),8)")
>>> [g.shape for g in f.grids]  # C, A, B (B drawn K x N)
[(16, 8), (16, 8), (8, 8)]
>>> f.grids[0].labels[0, :2].tolist()
['T0\\nV0', 'T0\\nV1']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..errors import LayoutError
from ..layout import size
from . import palette
from .figure import CELL_LIMIT, LABEL_LIMIT, Figure, Grid, _headers, _thread_legend, as_layout, tv_labels

__all__ = ["TvOwners", "tv_owners", "mma_tv_figure", "mma_figure"]


@dataclass
class TvOwners:
    """Who holds each cell of an (R, C) tile under a TV layout.

    thr, val: (R, C) first holder in CuTe's order (thread, then value), -1 where nobody holds it.
    count:    (R, C) number of (t,v) that map to the cell.
    tips:     (R, C) every holder, ``"V0: T0,T64; V1: T2"`` (values ascending, threads as
              ranges ``T0-T127``), "" where the cell has at most one holder.
    order:    (n, 2) the cells (r, c) in the order CuTe's print_latex first fills them.
    threads, values: the sizes of the thread and value modes.
    """

    thr: np.ndarray
    val: np.ndarray
    count: np.ndarray
    tips: np.ndarray
    order: np.ndarray
    threads: int
    values: int


def tv_owners(tv: Any, rows: int, cols: int, what: str = "tv layout", with_tips: bool = True) -> TvOwners:
    """Holders of each cell of a (rows, cols) tile under ``tv``: (thr, val) -> m + rows * n.

    with_tips=False leaves ``tips`` empty (for pictures too big to label).

    Raises LayoutError (naming ``what``) when tv is not rank 2 or maps outside the tile.

    >>> o = tv_owners("(2,(2,2)):(0,(1,2))", 2, 2)   # two threads share every element
    >>> o.thr.tolist(), o.count.tolist(), str(o.tips[0, 0])
    ([[0, 0], [0, 0]], [[2, 2], [2, 2]], 'V0: T0-T1')
    """
    L = as_layout(tv)
    if not (isinstance(L.shape, tuple) and len(L.shape) == 2):
        raise LayoutError(f"{what}: a TV layout must have rank 2 (thread, value), got {L}")
    T, V = size(L.shape[0]), size(L.shape[1])
    offs = L.offsets()
    cells = rows * cols
    if offs.size and (offs.min() < 0 or offs.max() >= cells):
        bad = int(offs.max()) if offs.max() >= cells else int(offs.min())
        raise LayoutError(f"{what}: {L} maps to index {bad}, outside the ({rows},{cols}) tile of {cells} elements")
    i = np.arange(offs.size, dtype=np.int64)
    t, v = i % T, i // T  # colexicographic: index = t + T * v
    key = t * V + v       # CuTe's loops: for tid, for vid
    order = np.argsort(key, kind="stable")
    so = offs[order]
    uniq, first = np.unique(so, return_index=True)
    count = np.bincount(offs.astype(np.intp, copy=False), minlength=cells)  # bincount wants intp (int32 on wasm32)
    thr = np.full(cells, -1, dtype=np.int64)
    val = np.full(cells, -1, dtype=np.int64)
    thr[uniq] = t[order][first]
    val[uniq] = v[order][first]
    emit = so[np.sort(first)]  # cells in the order CuTe draws them
    tips = np.full(cells, "", dtype=object)
    mask = count[offs] > 1  # the (t, v) of shared cells
    if with_tips and mask.any():
        o2, v2, t2 = offs[mask], v[mask], t[mask]
        srt = np.lexsort((t2, v2, o2))  # by cell, then value, then thread
        o2, v2, t2 = o2[srt], v2[srt], t2[srt]
        # runs of consecutive threads holding one value of one cell: T3-T9
        new = np.ones(o2.size, dtype=bool)
        new[1:] = (o2[1:] != o2[:-1]) | (v2[1:] != v2[:-1]) | (t2[1:] != t2[:-1] + 1)
        starts = np.flatnonzero(new)
        ends = np.append(starts[1:], o2.size) - 1
        cur, parts, last_v = -1, [], -1
        for c, vv, a, b in zip(o2[starts].tolist(), v2[starts].tolist(), t2[starts].tolist(), t2[ends].tolist()):
            if c != cur:
                if cur >= 0:
                    tips[cur] = "".join(parts)
                cur, parts, last_v = c, [], -1
            r = f"T{a}" if a == b else f"T{a}-T{b}"
            if vv == last_v:
                parts.append("," + r)
            else:
                parts.append(("; " if parts else "") + f"V{vv}: {r}")
                last_v = vv
        tips[cur] = "".join(parts)
    shape2 = (cols, rows)  # flat index m + rows * n -> (m, n)
    return TvOwners(thr.reshape(shape2).T, val.reshape(shape2).T, count.reshape(shape2).T,
                    tips.reshape(shape2).T.astype(str), np.stack([emit % rows, emit // rows], axis=1),
                    T, V)


def _tile3(tile_mnk: Any) -> tuple[int, int, int]:
    try:
        t = tuple(int(x) for x in tile_mnk)
    except (TypeError, ValueError):
        t = ()
    if len(t) != 3 or min(t) <= 0:
        raise LayoutError(f"mma picture: tile_mnk must be three positive ints (M,N,K), got {tile_mnk!r}")
    return t  # type: ignore[return-value]


#: CuTe's print_latex thread colours (TikzColor_TV): eight pastels, by thread index mod 8
CUTE_TV_COLORS = ["#AFAFFF", "#AFFFAF", "#FFFFAF", "#FFAFAF", "#D2D2FF", "#D2FFD2", "#FFFFD2", "#FFD2D2"]


def thread_colors(threads: int, cute_colors: bool = False) -> list[str]:
    """One distinct colour per thread (our palette), or CuTe's eight pastels repeating (cute_colors=True).

    >>> thread_colors(10, cute_colors=True)[8] == thread_colors(10, cute_colors=True)[0]
    True
    """
    if cute_colors:
        return [CUTE_TV_COLORS[t % 8] for t in range(threads)]
    return palette.categorical(threads)


def _unlabel_if_big(grids: list[Grid], meta: dict) -> list[str]:
    """Placed grids share one cell size: if one is too big to label, none is labelled (cells stay coloured).

    The labels move to ``meta["labels"]`` for the LaTeX back end, which writes every T#V# as CuTe does.
    """
    big = max(g.keys.size for g in grids)
    if big <= LABEL_LIMIT:
        return []
    meta["labels"] = [g.labels for g in grids]
    for g in grids:
        g.labels, g.tips = None, None
    return [f"{big} cells in the largest operand (> {LABEL_LIMIT}): cells are coloured by thread, not labelled"]


def _sharing_note(name: str, o: TvOwners) -> str | None:
    held = o.count[o.count > 0]
    if held.size == 0 or held.max() <= 1:
        return None
    lo, hi = int(held.min()), int(held.max())
    n = f"{lo}" if lo == hi else f"{lo} to {hi}"
    return (f"{name}: each element is held by {n} (t,v); the label shows the first (lowest thread), as CuTe does; "
            f"the SVG tooltip lists all")


#: how a TiledMMA picture may colour its cells (``color=``)
COLOR_BY = ("thread", "warp", "atom", "mod8")
WARP = 32


def _color_keys(thr: np.ndarray, color: str, atom_threads: int) -> np.ndarray:
    """The colour key of each cell from its (first) thread: the thread, its warp, its atom, or thread mod 8."""
    if color == "thread":
        return thr.copy()
    per = {"warp": WARP, "atom": atom_threads, "mod8": None}[color]
    k = thr % 8 if per is None else thr // per
    return np.where(thr < 0, -1, k)


def _group_legend(color: str, T: int, atom_threads: int) -> tuple[list[str], list[tuple[int, str]]]:
    """Colours and legend of a picture coloured by warp, atom or thread mod 8."""
    if color == "mod8":
        return list(CUTE_TV_COLORS), [(k, f"thread % 8 == {k}") for k in range(8)]
    per = WARP if color == "warp" else atom_threads
    n = -(-T // per)
    return palette.categorical(n), [(k, f"{color} {k}: T{k * per}-T{min(T, (k + 1) * per) - 1}") for k in range(n)]


def _smem_grid(g: Grid, o: TvOwners, transpose: bool, atom_threads: int) -> None:
    """An operand read from shared memory (wgmma's A with a_src SMEM, and its B): no T#V# per cell.

    Every thread of the warpgroup "holds" every element of the atom's tile in the TV layout,
    but the hardware reads it through a matrix descriptor, once per warpgroup. The cells are
    coloured by the warpgroup (the atom) that reads them, and say so.
    """
    thr = o.thr.T if transpose else o.thr
    wg = np.where(thr < 0, -1, thr // atom_threads)
    n = int(wg.max()) + 1 if wg.size else 1
    g.keys = wg
    g.labels = np.where(wg < 0, "", "smem").astype(str)
    cnt = (o.count.T if transpose else o.count) // atom_threads  # how many warpgroups read the cell
    g.tips = np.where(wg < 0, "", np.where(cnt > 1, np.char.add(cnt.astype(str), " warpgroups (the first: "),
                                           "warpgroup ")).astype(str)
    g.tips = np.char.add(np.char.add(g.tips, wg.astype(str)), np.where(cnt > 1, "), each through its descriptor",
                                                                          " through its shared-memory descriptor"))
    g.tips = np.where(wg < 0, "", g.tips).astype(str)
    g.colors = palette.categorical(n)
    g.legend = [(k, f"warpgroup {k} (T{k * atom_threads}-T{(k + 1) * atom_threads - 1})") for k in range(n)]
    g.title += ": shared memory, read through a descriptor by the whole warpgroup"
    g.groups = wg if n > 1 else None
    g.subgroups = None


def mma_tv_figure(tile_mnk: Sequence[int], layout_c_tv: Any, layout_a_tv: Any, layout_b_tv: Any,
                  title: str | None = None, notes: Sequence[str] = (), cute_colors: bool = False,
                  color: str = "thread", atom_threads: int | None = None, smem: Sequence[str] = ()) -> Figure:
    """A TiledMMA's picture from plain values: the (M,N,K) tile and its C, A, B TV layouts.

    ``layout_c_tv`` maps (thr, val) to m + M*n in C, ``layout_a_tv`` to m + M*k in A,
    ``layout_b_tv`` to n + N*k in B (TiledMMA's ``get_layoutC_TV`` etc.). The three layouts
    must have the same number of threads. Grids: C (M,N), A (M,K), B (K,N) (transposed);
    colours: one per thread, shared by the three (``cute_colors=True``: CuTe's eight pastels by
    thread mod 8, so that the LaTeX is CuTe's print_latex output byte for byte, comments aside).
    ``color="warp"``, ``"atom"`` or ``"mod8"`` colours by warp (32 threads), by atom
    (``atom_threads`` threads) or by thread mod 8, and draws the atoms' boundaries as thick
    lines and the warps' inside an atom as thinner ones. ``smem``: the operands ("A", "B") a
    whole warpgroup reads from shared memory through a descriptor (wgmma), drawn as such
    instead of as T#V# cells.

    >>> f = mma_tv_figure((1, 2, 1), "(2,1):(1,0)", "(2,1):(0,0)", "(2,1):(1,0)")
    >>> str(f.grids[1].tips[0, 0])   # both threads read the single A element
    'V0: T0-T1'
    """
    M, N, K = _tile3(tile_mnk)
    if color not in COLOR_BY:
        raise LayoutError(f"mma picture: color must be one of {', '.join(COLOR_BY)}, got {color!r}")
    cells = M * N + M * K + N * K
    if cells > CELL_LIMIT:  # before anything of that size is allocated
        raise LayoutError(f"mma picture: the tile (M,N,K)=({M},{N},{K}) has {cells} cells in C, A and B; the limit "
                          f"is {CELL_LIMIT}: draw fewer atoms or a smaller permutation")
    C, A, B = as_layout(layout_c_tv), as_layout(layout_a_tv), as_layout(layout_b_tv)
    tips = max(M * N, M * K, N * K) <= LABEL_LIMIT  # else no labels (see _unlabel_if_big), so no tooltips
    oc = tv_owners(C, M, N, f"mma picture: C layout over (M,N)=({M},{N})", tips)
    oa = tv_owners(A, M, K, f"mma picture: A layout over (M,K)=({M},{K})", tips)
    ob = tv_owners(B, N, K, f"mma picture: B layout over (N,K)=({N},{K})", tips)
    if not (oc.threads == oa.threads == ob.threads):
        raise LayoutError(f"mma picture: C, A, B layouts must have the same number of threads, got "
                          f"{oc.threads}, {oa.threads}, {ob.threads} ({C}, {A}, {B})")
    T = oc.threads
    per_atom = int(atom_threads) if atom_threads else T
    by_thread = color == "thread" or cute_colors  # cute_colors: CuTe's print_latex, exactly
    if by_thread:
        colors, legend = thread_colors(T, cute_colors), _thread_legend(T)
    else:
        colors, legend = _group_legend(color, T, per_atom)

    def grid(name: str, o: TvOwners, transpose: bool, rows_name: str, cols_name: str, leg) -> Grid:
        thr, val, tips = (o.thr.T, o.val.T, o.tips.T) if transpose else (o.thr, o.val, o.tips)
        r, c = thr.shape
        g = Grid(f"{name} ({rows_name},{cols_name}) = ({r},{c})" + (", transposed" if transpose else ""),
                 thr.copy() if by_thread else _color_keys(thr, color, per_atom),
                 tv_labels(thr, val), colors, _headers(r), _headers(c), legend=leg, tips=tips.copy())
        if not by_thread:  # atom boundaries, and warp boundaries inside an atom
            atom = np.where(thr < 0, -1, thr // per_atom)
            g.groups = atom if np.unique(atom).size > 1 else None
            if per_atom > WARP:
                g.subgroups = np.where(thr < 0, -1, thr // WARP)
        return g

    gc = grid("C", oc, False, "M", "N", legend)
    ga = grid("A", oa, False, "M", "K", [])
    gb = grid("B", ob, True, "K", "N", [])
    meta: dict = {}
    if smem:
        meta["labels"] = [g.labels for g in (gc, ga, gb)]  # the LaTeX writes CuTe's T#V# in every cell
        for name, g, o, tr in (("A", ga, oa, False), ("B", gb, ob, True)):
            if name in smem:
                _smem_grid(g, o, tr, per_atom)
    out_notes = list(notes) + _unlabel_if_big([gc, ga, gb], meta)
    if smem:
        out_notes.append(" and ".join(x for x in "AB" if x in smem) + " are read from shared memory through a matrix "
                         "descriptor by the whole warpgroup (its TV layout gives every thread every element)")
    if not by_thread:
        out_notes.append(f"coloured by {'thread mod 8, as print_latex' if color == 'mod8' else color}; thick lines: "
                         f"atom boundaries" + ("; thin lines: warp boundaries" if per_atom > WARP else ""))
    out_notes += [f"layout_C_tv = {C}", f"layout_A_tv = {A}", f"layout_B_tv = {B}",
                  f"tile (M,N,K) = ({M},{N},{K}); C: (t,v) -> m + M*n, A: m + M*k, B: n + N*k"]
    for name, o in (("C", oc), ("A", oa), ("B", ob)):
        holes = int((o.count == 0).sum())
        if holes:
            out_notes.append(f"{name}: {holes} element(s) are held by no (t,v) (white)")
    for name, o in (("C", oc), ("A", oa), ("B", ob)):
        s = _sharing_note(name, o) if name not in smem else None
        if s:
            out_notes.append(s)
    meta.update({
        "roles": ["C", "A", "B"], "tile": (M, N, K),
        "comments": [f"LayoutC: {C}", f"LayoutA: {A}", f"LayoutB: {B}"],
        # cells (row, col) of each drawn grid in the order CuTe's print_latex_mma emits them
        "order": [oc.order, oa.order, ob.order[:, ::-1]],
    })
    return Figure(title if title is not None else f"TiledMMA tile (M,N,K) = ({M},{N},{K}), {T} threads",
                  [gc, ga, gb], out_notes, kind="mma", placement=[(1, 1), (1, 0), (0, 1)], meta=meta)


def mma_figure(tiled_mma: Any, title: str | None = None, cute_colors: bool = False, color: str = "thread") -> Figure:
    """The picture of a TiledMma (``cutelab.make_tiled_mma``) or an MMA atom: C, A and B with their T#V# owners.

    Reads ``get_tile_size(0..2)`` and ``tv_layout_C_tiled`` / ``tv_layout_A_tiled`` /
    ``tv_layout_B_tiled``, as CuTe DSL's TiledMma names them; an atom is drawn as the TiledMma
    of one atom (as CuTe's print_latex(MMA_Atom) does). ``color``: "thread" (one colour each),
    "warp", "atom" or "mod8" (see mma_tv_figure). A wgmma's operands in shared memory are drawn
    as read through a descriptor by the whole warpgroup.

    >>> import cutelab as cute
    >>> op = cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16))
    >>> f = mma_figure(cute.make_tiled_mma(op, (2, 2, 1)))
    >>> f.title, [g.shape for g in f.grids]
    ('TiledMMA MmaF16BF16Op(ab_dtype=Float16, acc_dtype=Float32, shape_mnk=(16, 8, 16)), atoms (2,2,1)', [(32, 16), (32, 16), (16, 16)])
    """
    if not hasattr(tiled_mma, "tv_layout_C_tiled") and hasattr(tiled_mma, "tv_layout_C"):
        from ..nvgpu.mma_atom import make_tiled_mma

        tiled_mma = make_tiled_mma(tiled_mma)
    try:
        lc, la, lb = (getattr(tiled_mma, f"tv_layout_{x}_tiled") for x in "CAB")
        M, N, K = (int(tiled_mma.get_tile_size(i)) for i in range(3))
    except AttributeError:
        raise LayoutError(f"mma_figure: expected a TiledMma or an MMA atom (with tv_layout_C_tiled, get_tile_size, "
                          f"...), got {type(tiled_mma).__name__}") from None
    notes, atoms = [], ""
    vmnk = getattr(tiled_mma, "thr_layout_vmnk", None)
    if vmnk is not None:
        notes.append(f"thr_layout_vmnk = {vmnk}")
        shp = vmnk.shape
        if isinstance(shp, tuple) and len(shp) == 4:
            atoms = ", atoms (" + ",".join(str(size(x)) for x in shp[1:]) + ")"
    perm = getattr(tiled_mma, "permutation_mnk", None)
    if perm is not None and any(p is not None for p in perm):
        notes.append("permutation_mnk = (" + ",".join("_" if p is None else str(p) for p in perm) + ")")
    op = getattr(tiled_mma, "op", None)
    name = repr(op) if op is not None else type(tiled_mma).__name__
    atom_threads = size(vmnk.shape[0]) if vmnk is not None and isinstance(vmnk.shape, tuple) else None
    in_smem = getattr(op, "_operand_in_smem", None)
    smem = tuple(x for x in "AB" if in_smem is not None and in_smem(x))
    return mma_tv_figure((M, N, K), lc, la, lb, title=title if title is not None else f"TiledMMA {name}{atoms}",
                         notes=notes, cute_colors=cute_colors, color=color, atom_threads=atom_threads, smem=smem)
