"""Pictures of Blackwell's tcgen05: a UMMA's operands and its accumulator in tensor memory, and
which warp a tensor-memory copy (``tcgen05.ld`` / ``tcgen05.st``) lets touch which lanes and columns.

A UMMA is issued by one thread for its CTA (or for the two CTAs of a pair), so the T#V# of a
warp MMA say little: the atom's "threads" are CTAs (``ThrID`` 1:0 or 2:1). What is drawn instead:

- :func:`umma_figure`: the MMA's tile, C (M,N) in the middle, A (M,K) on its left, B (K,N) on top,
  as the TiledMMA picture places them. A and B cells say where the operand is read from: shared
  memory (through a descriptor), or tensor memory for an A with ``OperandSource.TMEM``, labelled
  with its lane and column. C cells are labelled with the tensor-memory lane and 32-bit column
  that hold them (``L#`` / ``c#``) and coloured by CTA and lane quarter: the epilogue warp ``w`` with
  ``w % 4 == q`` is the one that may read quarter ``q`` (lanes 32q..32q+31).
- :func:`tmem_figure`: a CTA's tensor memory, 128 lanes x 512 columns of 32 bits, with the cells of
  a TMEM tensor (an accumulator) coloured by the warp that the tiled TMEM copy (``make_tmem_copy``)
  gives them to, and beside it one warp's copy instruction up close: each cell's thread and value.

Every cell comes from the layouts: the CTA of an operand element from the atom's TV layouts
(``tv_layout_C_tiled`` ...), its TMEM address from ``make_fragment_C`` / ``make_fragment_A`` at the
same coordinate of ``partition_C`` / ``partition_A``, the warps' cells from ``partition_S`` (or
``partition_D`` for stores) of each thread of the tiled copy, and a thread's values from the atom's
register-side TV layout composed with its TMEM addresses (``ValID``).

>>> import cutelab as cute
>>> from cutelab.nvgpu import tcgen05, OperandMajorMode
>>> op = tcgen05.MmaF16BF16Op(cute.Float16, cute.Float32, (64, 8), tcgen05.CtaGroup.ONE,
...                           tcgen05.OperandSource.SMEM, OperandMajorMode.K, OperandMajorMode.K)
>>> f = umma_figure(cute.make_tiled_mma(op))
>>> [g.shape for g in f.grids], str(f.grids[0].labels[16, 0])   # row 16 of a 64-row UMMA: lane 32
([(64, 8), (64, 16), (16, 8)], 'L32\\nc0')
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import int_tuple as it
from ..errors import LayoutError
from ..layout import Layout, size
from . import palette
from .figure import Figure, Grid, _headers
from .mma import _unlabel_if_big, tv_owners

__all__ = ["umma_figure", "umma_cells", "tmem_figure", "tmem_cells", "TMEM_LANES", "TMEM_COLUMNS", "LANES_PER_WARP"]

TMEM_LANES, TMEM_COLUMNS = 128, 512
#: a warp may touch only its lane quarter: warp w reads and writes lanes 32*(w%4) .. 32*(w%4)+31
LANES_PER_WARP = 32


# --------------------------------------------------------------------------- helpers

def _is_umma(tiled_mma: Any) -> bool:
    from ..nvgpu.tcgen05.mma import Tcgen05MmaOp

    return isinstance(getattr(tiled_mma, "op", None), Tcgen05MmaOp)


def _tmem_lane_col(addr: np.ndarray, dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """(lane, 32-bit column) of TMEM addresses in units of dtype (CuTe's TMEM::DP<T> addressing)."""
    from ..nvgpu.tcgen05.tmem import _elems_per_column, tmem_dp_stride

    dp = tmem_dp_stride(dtype)
    return addr // dp, (addr % dp) // _elems_per_column(dtype)


def _addresses(tensor: Any) -> np.ndarray:
    """The addresses of a (TMEM) tensor's elements, in its layout's colexicographic order."""
    lay = tensor.layout
    if not isinstance(lay, Layout):
        raise LayoutError(f"tmem picture: expected a tensor over a plain layout, got {tensor}")
    return np.asarray(lay.offsets(), dtype=np.int64) + int(tensor.offset)


def _coords(partition: Any, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """(m, n) of each element of a partition of a column-major (rows, cols) tile (its offsets)."""
    flat = np.asarray(partition.layout.offsets(), dtype=np.int64) + int(partition.offset)
    return flat % rows, flat // rows


def _tile_tensor(rows: int, cols: int) -> Any:
    """A column-major (rows, cols) tensor of its own flat indices: partitions of it say which elements they hold."""
    from ..layout import make_layout
    from ..tensor import make_tensor

    return make_tensor(np.arange(rows * cols, dtype=np.int64), make_layout((rows, cols)))


def umma_cells(tiled_mma: Any, operand: str) -> dict:
    """Who holds each element of a tiled UMMA's operand tile, and where it lives.

    operand "C" (M,N), "A" (M,K) or "B" (N,K), the tile of ``get_tile_size``. Returns ``cta``
    ((rows, cols): the CTA of the pair, from the TV layout, -1 for none), and for operands in
    tensor memory ``lane`` and ``col`` ((rows, cols) ints: the lane and 32-bit column of
    ``make_fragment_X`` at the element's coordinate in that CTA's ``partition_X``; -1 elsewhere).
    """
    M, N, K = (int(tiled_mma.get_tile_size(i)) for i in range(3))
    rows, cols = {"C": (M, N), "A": (M, K), "B": (N, K)}[operand]
    tv = getattr(tiled_mma, f"tv_layout_{operand}_tiled")
    own = tv_owners(tv, rows, cols, f"umma picture: {operand} layout over ({rows},{cols})", with_tips=False)
    out = {"cta": own.thr, "count": own.count, "rows": rows, "cols": cols, "tmem": False}
    op = tiled_mma.op
    in_smem = op._operand_in_smem(operand) if operand != "C" else False
    if in_smem:
        return out
    lane = np.full((rows, cols), -1, dtype=np.int64)
    col = np.full((rows, cols), -1, dtype=np.int64)
    tile = _tile_tensor(rows, cols)
    shape_fn = getattr(tiled_mma, f"partition_shape_{operand}")
    frag = getattr(tiled_mma, f"make_fragment_{operand}")(shape_fn((rows, cols)))
    dtype = frag.element_type
    addr = _addresses(frag)
    ctas = sorted(set(own.thr[own.thr >= 0].tolist()))
    for c in ctas:
        part = getattr(tiled_mma.get_slice(c), f"partition_{operand}")(tile)
        m, n = _coords(part, rows)
        if m.size != addr.size:
            raise LayoutError(f"umma picture: CTA {c}'s partition_{operand} has {m.size} elements, its TMEM fragment "
                              f"{frag} has {addr.size}")
        ln, cl = _tmem_lane_col(addr, dtype)
        lane[m, n], col[m, n] = ln, cl
    out.update(lane=lane, col=col, tmem=True, fragment=str(frag))
    return out


# --------------------------------------------------------------------------- the UMMA

def umma_figure(tiled_mma: Any, title: str | None = None) -> Figure:
    """A tiled tcgen05 MMA: C with its tensor-memory lanes and columns, A and B with where they are read from.

    Raises LayoutError for anything but a TiledMma (or MMA atom) of a ``cute.nvgpu.tcgen05`` op.
    """
    if not hasattr(tiled_mma, "tv_layout_C_tiled") and hasattr(tiled_mma, "tv_layout_C"):
        from ..nvgpu.mma_atom import make_tiled_mma

        tiled_mma = make_tiled_mma(tiled_mma)
    if not _is_umma(tiled_mma):
        raise LayoutError(f"umma_figure: expected a TiledMma of a cute.nvgpu.tcgen05 MMA op, got "
                          f"{type(getattr(tiled_mma, 'op', tiled_mma)).__name__}")
    op = tiled_mma.op
    M, N, K = (int(tiled_mma.get_tile_size(i)) for i in range(3))
    n_cta = op.cta_group.value
    c, a, b = umma_cells(tiled_mma, "C"), umma_cells(tiled_mma, "A"), umma_cells(tiled_mma, "B")
    # C: keyed by CTA and lane quarter; colours: one per (CTA, quarter)
    nq = TMEM_LANES // LANES_PER_WARP
    ckeys = np.where(c["cta"] < 0, -1, c["cta"] * nq + c["lane"] // LANES_PER_WARP)
    ccolors = palette.categorical(n_cta * nq + n_cta)
    cleg = [(k * nq + q, (f"CTA {k}: " if n_cta > 1 else "") + f"lanes {32 * q}-{32 * q + 31} (warp w, w % 4 == {q})")
            for k in range(n_cta) for q in range(nq) if (ckeys == k * nq + q).any()]
    clab = np.where(ckeys < 0, "", np.char.add(np.char.add(np.char.add("L", c["lane"].astype(str)), "\nc"),
                                                  c["col"].astype(str)))
    gc = Grid(f"C (M,N) = ({M},{N}): tensor memory, lane L and 32-bit column c", ckeys, clab, ccolors,
              _headers(M), _headers(N), legend=cleg)
    gc.groups = c["cta"] if n_cta > 1 else None
    gc.subgroups = np.where(ckeys < 0, -1, ckeys)

    smem_base = n_cta * nq  # the operand colours follow C's (one per CTA)

    def operand(name: str, cells: dict, transpose: bool, rows_name: str, cols_name: str) -> Grid:
        cta = cells["cta"].T if transpose else cells["cta"]
        r, cc = cta.shape
        if cells["tmem"]:
            lane = cells["lane"].T if transpose else cells["lane"]
            col = cells["col"].T if transpose else cells["col"]
            keys = np.where(cta < 0, -1, cta * nq + lane // LANES_PER_WARP)
            lab = np.where(keys < 0, "", np.char.add(np.char.add(np.char.add("L", lane.astype(str)), "\nc"),
                                                      col.astype(str)))
            where, leg = "tensor memory, lane L and 32-bit column c", []
        else:
            keys = np.where(cta < 0, -1, smem_base + cta)
            lab = np.where(keys < 0, "", "smem" if n_cta == 1 else np.char.add("smem\nCTA", cta.astype(str)))
            where = "shared memory, read through a UMMA descriptor"
            leg = [(smem_base + k, f"{name}: CTA {k}'s shared memory" if n_cta > 1 else f"{name}: shared memory")
                   for k in range(n_cta)]
        g = Grid(f"{name} ({rows_name},{cols_name}) = ({r},{cc})" + (", transposed" if transpose else "") + f": {where}",
                 keys, lab.astype(str), ccolors, _headers(r), _headers(cc), legend=leg)
        g.groups = cta if n_cta > 1 else None
        return g

    ga = operand("A", a, False, "M", "K")
    gb = operand("B", b, True, "K", "N")
    grids = [gc, ga, gb]
    meta: dict = {}
    notes = [f"one thread issues the UMMA for {'its CTA' if n_cta == 1 else 'both CTAs of the pair (the even CTA)'}: "
             f"tcgen05.mma.cta_group::{n_cta}, instruction (M,N,K) = {tuple(op.shape_mnk)}"]
    notes += _unlabel_if_big(grids, meta)
    notes.append(f"C: the accumulator ({op.acc_dtype}) in tensor memory, make_fragment_C = {c['fragment']}; "
                 f"it spans {int(c['col'].max()) + 1} of the {TMEM_COLUMNS} 32-bit columns"
                 + (" of each CTA" if n_cta > 1 else ""))
    notes.append("A: " + (f"tensor memory, make_fragment_A = {a['fragment']}" if a["tmem"] else
                          "shared memory, through a descriptor (make_fragment_A of the smem partition)"))
    notes.append("B: shared memory, through a descriptor")
    if n_cta > 1:
        notes.append(f"2-CTA: CTA k holds rows {M // 2}k..{M // 2}k+{M // 2 - 1} of A and C and columns "
                     f"{N // 2}k..{N // 2}k+{N // 2 - 1} of B (thick lines); each CTA's C sits in its own tensor memory")
    notes += [f"layout_C_tv = {tiled_mma.tv_layout_C_tiled}", f"layout_A_tv = {tiled_mma.tv_layout_A_tiled}",
              f"layout_B_tv = {tiled_mma.tv_layout_B_tiled}"]
    meta.update({"roles": ["C", "A", "B"], "tile": (M, N, K)})
    return Figure(title if title is not None else f"UMMA {op!r}", grids, notes, kind="umma",
                  placement=[(1, 1), (1, 0), (0, 1)], meta=meta)


# --------------------------------------------------------------------------- tensor memory and its copies

def _copy_side(tiled_copy: Any) -> str:
    from ..nvgpu.tcgen05.copy import _LdBase

    return "S" if isinstance(tiled_copy.op if hasattr(tiled_copy, "op") else None, _LdBase) else "D"


def tmem_cells(tiled_copy: Any, tmem_tensor: Any, threads: int = 128) -> dict:
    """Which warp of a tiled TMEM copy touches each cell of tensor memory, from its partitions.

    For each thread t of the copy: ``partition_S`` (a load; ``partition_D`` for a store) of the
    TMEM tensor, at its offset, gives the addresses the thread's warp accesses (a TMEM copy is
    warp-collective: every thread of a warp sees its whole block). Returns ``warp`` ((128, 512):
    the warp, -1 for none; LayoutError where two warps touch one cell), ``tensor`` ((128, 512)
    bool: the tensor's own cells), ``block`` ((128, 512): which tile of the tensor's mode 0 a cell
    belongs to, -1 outside) and ``lanes`` ({warp: sorted lanes}).
    """
    dtype = tmem_tensor.element_type
    side = _copy_side(tiled_copy)
    warp = np.full((TMEM_LANES, TMEM_COLUMNS), -1, dtype=np.int64)
    mine = np.zeros((TMEM_LANES, TMEM_COLUMNS), dtype=bool)
    block = np.full((TMEM_LANES, TMEM_COLUMNS), -1, dtype=np.int64)
    ln, cl = _tmem_lane_col(_addresses(tmem_tensor), dtype)
    _in_tmem(ln, cl, f"the TMEM tensor {tmem_tensor}")
    mine[ln, cl] = True
    shp = tmem_tensor.layout.shape
    per = size(shp[0]) if isinstance(shp, tuple) and len(shp) > 1 else ln.size
    block[ln, cl] = np.arange(ln.size) // per  # which tile of mode 0 (one MMA's accumulator) the cell belongs to
    lanes: dict[int, set] = {}
    for t in range(threads):
        thr = tiled_copy.get_slice(t)
        part = thr.partition_S(tmem_tensor) if side == "S" else thr.partition_D(tmem_tensor)
        ln, cl = _tmem_lane_col(_addresses(part), dtype)
        _in_tmem(ln, cl, f"thread {t}'s partition")
        w = t // 32
        other = warp[ln, cl]
        clash = (other >= 0) & (other != w)
        if clash.any():
            i = int(np.flatnonzero(clash)[0])
            raise LayoutError(f"tmem picture: warps {int(other[i])} and {w} both access lane {int(ln[i])}, column "
                              f"{int(cl[i])}")
        warp[ln, cl] = w
        lanes.setdefault(w, set()).update(ln.tolist())
    return {"warp": warp, "tensor": mine, "block": block, "lanes": {w: sorted(s) for w, s in lanes.items()}}


def _in_tmem(ln: np.ndarray, cl: np.ndarray, what: str) -> None:
    if ln.size and (ln.min() < 0 or ln.max() >= TMEM_LANES or cl.min() < 0 or cl.max() >= TMEM_COLUMNS):
        raise LayoutError(f"tmem picture: {what} reaches lane {int(ln.max())}, column {int(cl.max())}, outside the "
                          f"{TMEM_LANES} lanes x {TMEM_COLUMNS} columns of a CTA's tensor memory")


def _atom_cells(atom: Any) -> dict:
    """One warp's copy instruction up close: (lane, 32-bit column) -> (thread, value), from the atom's
    register-side TV layout composed with its TMEM addresses (the op's ValID)."""
    op, dtype = atom.op, atom.value_type
    reg = atom.layout_dst_tv if _copy_side(atom) == "S" else atom.layout_src_tv
    val = op._val_id(dtype)
    T = size(reg.shape[0])
    idx = np.asarray(reg.offsets(), dtype=np.int64)  # (t, v) colex -> index of the atom's block
    addr = np.asarray(val.offsets(), dtype=np.int64)[idx]
    ln, cl = _tmem_lane_col(addr, dtype)
    i = np.arange(idx.size)
    t, v = i % T, i // T
    rows, cols = int(ln.max()) + 1, int(cl.max()) + 1
    thr = np.full((rows, cols), -1, dtype=np.int64)
    vv = np.full((rows, cols), -1, dtype=np.int64)
    count = np.zeros((rows, cols), dtype=np.int64)
    np.add.at(count, (ln, cl), 1)
    order = np.lexsort((v, t))[::-1]  # the first (lowest thread, then value) written last: it wins
    thr[ln[order], cl[order]] = t[order]
    vv[ln[order], cl[order]] = v[order]
    return {"thr": thr, "val": vv, "count": count, "threads": T}


def tmem_figure(tiled_copy: Any, tmem_tensor: Any, title: str | None = None, tiled_mma: Any = None,
                threads: int = 128, columns: str = "all") -> Figure:
    """Tensor memory (128 lanes x 512 columns) with a tiled TMEM copy's warps on a TMEM tensor, and its atom.

    Panel 1: the whole tensor memory of a CTA; the tensor's cells coloured by the warp that the
    copy gives them to (white: not in the tensor), thick lines at the lane quarters. Panel 2: one
    warp's instruction (the copy atom): lanes x 32-bit columns, each labelled with the thread and
    value (register) that receive (load) or send (store) it.

    columns="used" draws only the columns up to the last the tensor spans (rounded up to 32), as
    the terminal's text picture does; "all" (the default) draws all 512.
    """
    from ..nvgpu.tcgen05.copy import _TmemCopyOp

    if not isinstance(getattr(tiled_copy, "op", None), _TmemCopyOp):
        raise LayoutError(f"tmem_figure: expected a tiled copy of a tcgen05 TMEM load or store "
                          f"(tcgen05.make_tmem_copy), got {type(getattr(tiled_copy, 'op', tiled_copy)).__name__}")
    cells = tmem_cells(tiled_copy, tmem_tensor, threads)
    w = cells["warp"]
    nw = max(cells["lanes"]) + 1 if cells["lanes"] else 1
    keys = np.where(w >= 0, w, np.where(cells["tensor"], nw, -1))
    colors = palette.categorical(nw + 1)
    legend = [(k, f"warp {k}: lanes {min(cells['lanes'][k])}-{max(cells['lanes'][k])}") for k in sorted(cells["lanes"])]
    if (keys == nw).any():
        legend.append((nw, "in the tensor, touched by no warp"))
    if columns not in ("all", "used"):
        raise LayoutError(f"tmem_figure: columns must be 'all' or 'used', got {columns!r}")
    ncol = TMEM_COLUMNS
    if columns == "used" and cells["tensor"].any():
        ncol = min(TMEM_COLUMNS, -(-(int(np.flatnonzero(cells["tensor"].any(0)).max()) + 1) // 32) * 32)
    quarters = np.repeat(np.arange(TMEM_LANES) // LANES_PER_WARP, ncol).reshape(TMEM_LANES, ncol)
    labels = np.where(w >= 0, np.char.add("w", w.astype(str)), "")[:, :ncol]
    shown = "" if ncol == TMEM_COLUMNS else f" (columns 0-{ncol - 1} shown)"
    g1 = Grid(f"tensor memory: {TMEM_LANES} lanes x {TMEM_COLUMNS} columns of 32 bits{shown}", keys[:, :ncol], labels,
              colors, _headers(TMEM_LANES), _headers(ncol), legend=legend)
    g1.groups = quarters
    nb = int(cells["block"].max()) + 1
    if nb > 1:  # thin lines around each tile of the tensor's mode 0 (one MMA's accumulator)
        g1.subgroups = cells["block"][:, :ncol]
    ac = _atom_cells(tiled_copy)  # a TiledCopy is its atom too (layout_src_tv / layout_dst_tv are the atom's)
    T = ac["threads"]
    from .figure import tv_labels

    lab = tv_labels(ac["thr"], ac["val"])
    r, c = ac["thr"].shape
    kind = "load" if _copy_side(tiled_copy) == "S" else "store"
    tips = np.where(ac["count"] > 1, np.char.add(ac["count"].astype(str), " values share this 32-bit cell; the first is shown"), "")
    g2 = Grid(f"one warp's {type(tiled_copy.op).__name__[:-2]} ({kind}): lanes x 32-bit columns, T#V#", ac["thr"],
              lab, palette.categorical(T), _headers(r), _headers(c), legend=[], tips=tips.astype(str))
    lanes = cells["lanes"]
    ln = tmem_tensor.element_type
    notes = [f"make_tmem_copy({tiled_copy.op!r} of {tiled_copy.value_type}, {tmem_tensor})",
             "warp w may access only its lane quarter, lanes 32*(w%4)..32*(w%4)+31: "
             + "; ".join(f"warp {k} lanes {min(v)}-{max(v)}" for k, v in sorted(lanes.items())),
             f"the tensor ({ln}) spans columns {int(np.flatnonzero(cells['tensor'].any(0)).min())}-"
             f"{int(np.flatnonzero(cells['tensor'].any(0)).max())}",
             f"the instruction (second panel): {r} lanes x {c} columns of warp 0's quarter; the warp at quarter q "
             f"accesses lanes 32q + the same offsets"]
    if nb > 1:
        notes.append(f"thin lines: the {nb} tiles of the tensor's mode 0 {it.tuple_str(tmem_tensor.layout.shape[0])} "
                     f"(one MMA's accumulator each)")
    if tiled_mma is not None:
        notes.insert(1, f"the accumulator of {tiled_mma.op!r}")
    return Figure(title if title is not None else f"tensor memory: {tiled_copy.op!r}", [g1, g2], notes, kind="tmem")


def tmem_copy_for(tiled_mma: Any, tile_mn: Sequence[int], copy_op: Any, dtype: Any = None) -> tuple[Any, Any]:
    """(tiled TMEM copy, accumulator) : make_tmem_copy(copy_op, make_fragment_C of the tiled MMA's (M, N) tile).

    The copy atom's value type is the accumulator's (``dtype`` overrides it, e.g. with a pack op).
    """
    from ..nvgpu.copy_atom import make_copy_atom
    from ..nvgpu.tcgen05.copy import make_tmem_copy

    M, N = (int(x) for x in tile_mn)
    acc = tiled_mma.make_fragment_C(tiled_mma.partition_shape_C((M, N)))
    atom = make_copy_atom(copy_op, dtype or acc.element_type)
    return make_tmem_copy(atom, acc), acc
