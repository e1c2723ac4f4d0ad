"""TMA copies of tiles with hierarchical or broadcast (stride-0) tiled modes, the block-scaled GEMMs' scale
factors: ``TmaRunsAtom`` copies the tile's distinct elements as runs of whole rows of the tensor's memory, one
box each; a multicast one cuts them into equal slices (``_runs_slices``, ``_runs_slice``).
cutelab.nvgpu.cpasync.tma re-exports every name here.
"""

from __future__ import annotations

from typing import Any, Tuple

import numpy as np

from ... import int_tuple as it
from ...errors import LayoutError
from ...layout import Layout
from .tma_desc import CopyBulkTensorTileG2SOp, TmaCopyAtom, TmaDescriptor, TmaInfo, _offsets, _rank


# the widest rows (in elements) of the 2-D view a runs atom copies in (the TMA box's inner extent): the
# atom takes the widest power of two up to this that cuts its runs and the tensor into whole rows
_RUN_ROW = 256


def _run_row(runs: list, total: int, bits: int) -> int:
    """The row width of a runs atom: the largest power of two W <= _RUN_ROW with every run's global and
    shared start and length, and the tensor's memory, whole rows of W (a run at most 256 rows, a TMA box's
    outer limit) and a row of at least 16 bytes (TMA's inner box); 0 when there is none."""
    W = _RUN_ROW
    while W * bits >= 128:
        if not (W * bits) % 128 and not total % W and all(not (g % W or s % W or m % W) and m // W <= 256 for g, s, m in runs):
            return W
        W //= 2
    return 0


class TmaRunsAtom(TmaCopyAtom):
    """A TMA atom for a tile whose distinct elements lie in runs of contiguous global memory that land
    in contiguous shared memory (the scale-factor tiles of block-scaled GEMMs: hierarchical modes with
    broadcast, stride-0, sub-modes, ``blockscaled_utils.tile_atom_to_shape_SF``). The tensor map views
    the global tensor's memory as rows of W elements (dims (W, rows), no swizzle; W = 256, or the widest
    power of two below it that cuts the runs into whole rows: ``_run_row``) and each run is one box
    (W, run / W) of it. ``g_of_s``: the global offset (from the tile's origin) of each
    shared-memory element of the tile; ``runs``: (global start, shared start, elements) of each run.
    A copy takes the tile with its broadcast modes filtered out (``cute.filter_zeros``) or not: the
    distinct elements are what moves. CuTe DSL's tensor map for these tiles is built from the same
    bytes in other units (``internal_type``); the bytes each box moves are the same."""

    def __init__(self, op: Any, desc: TmaDescriptor, gmem_layout: Layout, smem_layout: Any, tile: tuple,
                 g_of_s: np.ndarray, runs: list, row: int = _RUN_ROW):
        super().__init__(op, desc, gmem_layout, smem_layout, tile,
                         [((0, g // row), s) for g, s, _ in runs])
        self.row = row
        self.g_of_s, self.runs = g_of_s, runs
        self.tile_g_of_s, self.slices = g_of_s, None  # a multicast one (_runs_slices): g_of_s and runs are a slice's

    @property
    def size_in_bytes(self) -> int:
        return int(self.g_of_s.size) * self.desc.dtype.width // 8


def _runs_atom(op: Any, gmem_tensor: Any, layout: Layout, dtype: Any, smem_layout: Any, tiler: tuple,
               shape: tuple, stride: tuple, num_multicast: int, one_stage: bool, where: str) -> TmaInfo:
    """make_tiled_tma_atom for hierarchical / broadcast tiled modes (see TmaRunsAtom)."""
    from ...layout import cosize

    stored = smem_layout
    if not isinstance(op, CopyBulkTensorTileG2SOp):
        raise LayoutError(f"{where}: TMA stores of a tile with hierarchical or broadcast (stride-0) modes are not "
                          f"supported by cutelab (loads are)")
    if not one_stage and _rank(smem_layout) == len(tiler) + 1:
        from ...swizzle import select

        smem_layout = select(smem_layout, mode=list(range(len(tiler))))
    if not isinstance(smem_layout, Layout):
        raise LayoutError(f"{where}: a tile with hierarchical or broadcast modes is copied into an unswizzled smem "
                          f"layout only, got {smem_layout}")
    n = it.product(tiler)
    if it.product(smem_layout.shape) != n:
        raise LayoutError(f"{where}: smem_layout has {it.product(smem_layout.shape)} elements, the tile "
                          f"{it.tuple_str(tiler)} has {n}")
    # tile coordinate (column-major index col) -> global offset (each tiled mode's own layout) and smem offset
    col = np.arange(n, dtype=np.int64)
    g = np.zeros(n, dtype=np.int64)
    rest = col
    for i, e in enumerate(tiler):
        if it.product(shape[i]) < e:
            raise LayoutError(f"{where}: the tile is {e} along mode {i}, the tensor {it.product(shape[i])}")
        g += _offsets(Layout._raw(shape[i], stride[i]), rest % e)
        rest = rest // e
    sm = _offsets(smem_layout, col)
    ns = int(sm.max()) + 1
    g_of_s = np.full(ns, -1, dtype=np.int64)
    g_of_s[sm] = g
    if (g_of_s < 0).any():
        raise LayoutError(f"{where}: smem_layout {smem_layout} leaves smem elements {int(np.argmax(g_of_s < 0))}.. of "
                          f"the tile unwritten; TMA fills a contiguous range")
    clash = g_of_s[sm] != g
    if clash.any():
        k = int(np.argmax(clash))
        raise LayoutError(f"{where}: smem element {int(sm[k])} holds two different global elements of the tile "
                          f"({int(g_of_s[sm[k]])} and {int(g[k])})")
    if len(np.unique(g_of_s)) != ns:
        raise LayoutError(f"{where}: smem_layout {smem_layout} puts one global element of the tile in several smem "
                          f"elements; TMA writes each once")
    # runs: consecutive smem elements holding consecutive global elements
    cut = np.nonzero(np.diff(g_of_s) != 1)[0] + 1
    bounds = [0] + cut.tolist() + [ns]
    runs = [(int(g_of_s[a]), a, b - a) for a, b in zip(bounds, bounds[1:])]
    total = cosize(layout)
    bits = dtype.width
    W = _run_row(runs, total, bits)
    if not W:
        raise LayoutError(f"{where}: cutelab copies a tile with hierarchical or broadcast modes as runs of whole rows "
                          f"of W elements of the tensor's memory ({total} elements), W a power of two from "
                          f"{max(1, 128 // bits)} (16 bytes) to {_RUN_ROW}; no such W cuts the tile's runs (global "
                          f"start, smem start, length) {runs[:4]}{' ...' if len(runs) > 4 else ''}")
    if len({r[2] for r in runs}) != 1:
        raise LayoutError(f"{where}: the tile's runs of memory have different lengths {sorted({r[2] for r in runs})}; "
                          f"one TMA box copies them all")
    tile_g_of_s = g_of_s
    slices = None
    if num_multicast > 1:
        runs, g_of_s, slices = _runs_slices(runs, g_of_s, num_multicast, where, W)
    desc = TmaDescriptor(dtype, (W, total // W), (max(1, bits // 8), W * bits // 8), (W, runs[0][2] // W), 0, (0, 1))
    atom = TmaRunsAtom(op, desc, Layout._raw((W, total // W), (1, W)), smem_layout, tuple(tiler), g_of_s, runs, W)
    atom.num_multicast, atom.tile_g_of_s, atom.slices = num_multicast, tile_g_of_s, slices
    atom.host_engine = getattr(gmem_tensor, "engine", None)  # the memory its loads read (kernel/instr/tma.py: atom_param)
    return TmaInfo(atom, gmem_tensor, stored)


def _runs_slices(runs: list, g_of_s: np.ndarray, n: int, where: str,
                 W: int = _RUN_ROW) -> Tuple[list, np.ndarray, tuple]:
    """A multicast runs atom (num_multicast n): the tile's shared memory cut into n equal consecutive
    ranges, slice c issued by CTA c of the multicast (each range lands in every CTA of the mask, so each
    receives the whole tile). Returns slice 0's runs (global start from the slice's first element, smem
    start from the slice's start, length), the global offsets of the slice's smem elements (from its
    first), and (smem elements per slice, the global step from slice to slice, the global offset of
    slice 0's first element, the slice's layout in global memory). cutelab needs the slices to be one
    pattern moved by a constant global step: equal pieces of whole rows (of the atom's W), evenly spaced."""
    ns = g_of_s.size
    if ns % n or (ns // n) % W:
        raise LayoutError(f"{where}: num_multicast={n} cuts the tile's {ns} distinct elements into slices of "
                          f"{ns / n:g}; cutelab's multicast of a tile with hierarchical or broadcast modes needs "
                          f"slices of whole rows of {W} elements")
    q = ns // n
    pieces = []
    for c in range(n):
        lo, hi = c * q, (c + 1) * q
        pc = [(g + max(lo, s0) - s0, max(lo, s0) - lo, min(hi, s0 + m) - max(lo, s0)) for g, s0, m in runs
              if s0 < hi and lo < s0 + m]
        pieces.append(pc)
    p0 = pieces[0]
    g0 = p0[0][0]
    rel = [(g - g0, s0, m) for g, s0, m in p0]
    step = pieces[1][0][0] - g0
    lens = {m for pc in pieces for _, _, m in pc}
    spacing = {b[0] - a[0] for a, b in zip(rel, rel[1:])}
    same = all([(g - pc[0][0], s0, m) for g, s0, m in pc] == rel and pc[0][0] - g0 == c * step
               for c, pc in enumerate(pieces))
    if len(lens) != 1 or len(spacing) > 1 or not same:
        raise LayoutError(f"{where}: num_multicast={n}: the {n} slices of the tile's shared memory are not one pattern "
                          f"of equal, evenly spaced runs of global memory moved by a constant step (slice 0: "
                          f"{p0[:4]}{' ...' if len(p0) > 4 else ''}); cutelab does not multicast such a tile")
    m = lens.pop()
    if len(rel) > 1 and rel[1][0] < m:
        raise LayoutError(f"{where}: num_multicast={n}: the runs of a slice overlap in global memory")
    gl = Layout._raw(m, 1) if len(rel) == 1 else Layout._raw((m, len(rel)), (1, rel[1][0]))
    return rel, g_of_s[:q] - g0, (q, step, g0, gl)


def _runs_slice(smem_tensor: Any, gmem_tensor: Any, atom: TmaRunsAtom, c: Any, where: str) -> Tuple[Any, Any]:
    """tma_partition of a multicast runs atom: slice c of the tile (_runs_slices) of both tensors, mode 0
    of each replaced by the slice's elements (consecutive in shared memory; the atom's evenly spaced runs
    in global memory), after checking that mode 0 of the two pairs each smem element of the tile with
    the global element the atom puts there."""
    from ...layout import make_layout

    q, step, g0, gl = atom.slices
    tile = atom.tile_g_of_s
    mode0 = []
    for t in (smem_tensor, gmem_tensor):
        lay = t.layout
        shp, std = (lay.shape, lay.stride) if isinstance(lay.shape, tuple) else ((lay.shape,), (lay.stride,))
        m0 = make_layout(shp[0], stride=std[0])
        if not all(isinstance(x, int) for x in it.flatten_to_tuple(m0.stride)):  # ints, DynInts (known values)
            raise LayoutError(f"{where}: mode 0 of {lay} must have strides of known values")
        mode0.append((shp, std, np.asarray(_offsets(m0, np.arange(it.product(m0.shape))), dtype=np.int64)))
    so, go = mode0[0][2], mode0[1][2]
    if so.min() < 0 or so.max() >= tile.size or not np.array_equal(tile[so], go) or len(np.unique(so)) != tile.size:
        raise LayoutError(f"{where}: the smem tensor {smem_tensor.layout} and global tensor {gmem_tensor.layout} are "
                          f"not, in mode 0, one tile of the atom's tensor and its smem layout {atom.smem_layout}")
    out = []
    for (shp, std, _), t, sub, off in ((mode0[0], smem_tensor, Layout._raw(q, 1), c * q),
                                       (mode0[1], gmem_tensor, gl, g0 + c * step)):
        new = make_layout((sub.shape,) + tuple(shp[1:]), stride=(sub.stride,) + tuple(std[1:]))
        out.append(t._new(new, t.offset + off))
    return out[0], out[1]
