"""Multicast TMA: an atom whose box is one of n slices of the tile (``_multicast_atom``), and
``tma_partition``, which gives each CTA of the multicast its slice of the shared and global tensors.
cutelab.nvgpu.cpasync.tma re-exports every name here.
"""

from __future__ import annotations

from typing import Any, Tuple

import numpy as np

from ... import int_tuple as it
from ...errors import LayoutError
from ...layout import Layout
from .tma_desc import TmaCopyAtom, TmaDescriptor
from .tma_runs import TmaRunsAtom, _runs_slice


def _split_box(box: Tuple[int, ...], n: int, where: str) -> Tuple[int, Tuple[int, ...]]:
    """(dimension k, sub-box): the box (innermost first) cut into n slices of consecutive
    row-major box elements, each a box: full in dimensions below k, box[k] // m in k, 1 above.

    >>> _split_box((64, 128), 2, "x")
    (1, (64, 64))
    >>> _split_box((64, 128, 2), 4, "x")
    (1, (64, 64, 1))
    """
    total = int(np.prod(box))
    if total % n:
        raise LayoutError(f"{where}: the tile's {total} elements do not split into num_multicast={n} equal slices")
    chunk = total // n
    below = 1
    for k, e in enumerate(box):
        if chunk % below == 0 and (below * e) % chunk == 0:
            sub = chunk // below
            if e % sub == 0:
                return k, tuple(box[:k]) + (sub,) + (1,) * (len(box) - k - 1)
        below *= e
    raise LayoutError(f"{where}: the TMA box {it.tuple_str(box)} (innermost first) does not split into "
                      f"num_multicast={n} slices that are boxes (consecutive rows of the box)")


def _multicast_atom(op: Any, desc: TmaDescriptor, layout: Layout, smem_layout: Any, outer: Layout,
                    tile_shape: tuple, order: Any, n: int, boxes: list, where: str) -> TmaCopyAtom:
    """The atom of a multicast load whose box is one of n slices of each TMA box of the tile (CuTe's
    num_multicast): within a box, the slices are consecutive ranges of its smem offsets, as CuTe's
    tma_partition hands them to the CTAs of the multicast (multicast_offset = cta * box elements / n, in
    the (TMA, TMA_Iter) view of the tile). A tile wider than the swizzle span is several boxes side by
    side along the innermost mode (CuTe's TMA_Iter): CTA c issues slice c of every box, so its slice of the
    tile is the union of those, a rectangle when the box is cut in a mode above the innermost one."""
    from ...algebra import composition
    from ...layout import make_layout

    k, sub = _split_box(desc.box, n, where)
    chunk_bytes = int(np.prod(sub)) * desc.dtype.width // 8
    align = 1024 if desc.swizzle else 128
    if chunk_bytes % align:
        raise LayoutError(f"{where}: num_multicast={n} cuts the tile into slices of {chunk_bytes} bytes; each slice "
                          f"starts a TMA box in shared memory, which must be a multiple of {align} bytes "
                          f"({'the swizzle pattern repeats every 1024 bytes' if desc.swizzle else 'TMA alignment'})")
    if len(boxes) > 1 and k == 0:
        raise LayoutError(f"{where}: num_multicast={n} cuts each of the tile's {len(boxes)} TMA boxes "
                          f"{it.tuple_str(desc.box)} (innermost first) along its innermost mode; the CTAs' slices of "
                          f"the tile are then not rectangles, which cutelab does not partition")
    box_tile = list(tile_shape)
    for d, i in enumerate(order):
        if i < len(box_tile) and not (d == 0 and len(boxes) > 1):  # several boxes: the innermost mode stays whole
            box_tile[i] = sub[d]
    box_tile = tuple(box_tile)
    # each box's slice starts at the box's start plus the slice's offset in the box: relative to the slice of
    # box 0, where tma_partition puts the CTA's smem tensor, box j's slice is box j's start minus box 0's
    s0 = boxes[0][1]
    rel = [(origin, start - s0) for origin, start in boxes]
    # the slice's smem layout: the tile's, restricted to the slice's coordinates (column-major in the tile)
    strides, mul = [], 1
    for e in tile_shape:
        strides.append(mul)
        mul *= e
    sub_coords = make_layout(box_tile, stride=tuple(strides))
    box_outer = composition(outer, sub_coords)
    new_desc = TmaDescriptor(desc.dtype, desc.dims, desc.strides, sub, desc.swizzle, desc.modes, desc.unpacked_from)
    atom = TmaCopyAtom(op, new_desc, layout, smem_layout, tile_shape, rel, num_multicast=n, box_tile=box_tile,
                       box_smem_layout=box_outer)
    atom.full_box = desc.box  # the box before the cut (_slice_origin)
    return atom


def _slice_origin(atom: TmaCopyAtom, c: Any) -> list:
    """Per tile mode, the coordinate where slice c (an int or an index expression) of a multicast
    atom's tile starts: slice c covers the box elements c * chunk .. (c + 1) * chunk - 1 of the
    whole box (row-major, innermost dimension first; of the first box, for a tile of several boxes
    side by side, whose slice is cut above the innermost mode)."""
    chunk = int(np.prod(atom.desc.box))
    origin: list = [0] * len(atom.tile)
    below = 1
    for d, i in enumerate(atom.desc.modes):
        e = int(atom.full_box[d])
        if e > 1 and i < len(atom.tile):
            origin[i] = ((c * chunk) // below) % e
        below *= e
    return origin


def tma_partition(atom: Any, cta_coord: Any, cta_layout: Any, smem_tensor: Any, gmem_tensor: Any, *,
                  loc: Any = None, ip: Any = None) -> Tuple[Any, Any]:
    """(smem, gmem) views for TMA copies: mode 0 of each is one tile (grouped with cute.group_modes),
    the other modes index tiles / stages. With a cta_layout of size 1 (no tile split between the
    CTAs of a multicast) the tensors are returned as they are, after checking that mode 0 holds
    one tile."""
    where = f"tma_partition({smem_tensor}, {gmem_tensor})"
    if not isinstance(atom, TmaCopyAtom):
        raise LayoutError(f"{where}: expected a TMA atom from make_tiled_tma_atom, got {type(atom).__name__}")
    cl = cta_layout if isinstance(cta_layout, Layout) else None
    size = it.product(getattr(cta_layout, "shape", cta_layout))
    if size != atom.num_multicast:
        raise LayoutError(f"{where}: the cta_layout {cta_layout} has {size} CTA(s) but the atom was made with "
                          f"num_multicast={atom.num_multicast}: each of the num_multicast CTAs of a multicast "
                          f"issues one slice of the tile, so the two must agree")
    n = it.product(atom.tile)
    for what, t in (("smem", smem_tensor), ("gmem", gmem_tensor)):
        shp = t.layout.shape
        m0 = shp[0] if isinstance(shp, tuple) else shp
        if it.product(m0) != n:
            raise LayoutError(f"{where}: mode 0 of the {what} tensor has {it.product(m0)} elements; one TMA tile has "
                              f"{n} (group the tile's modes with cute.group_modes(t, 0, {len(atom.tile)}))")
    if atom.num_multicast == 1:
        return smem_tensor, gmem_tensor
    # the slice this CTA issues: cta_layout(cta_coord), as CuTe's multicast offset
    if cl is None or it.product(cl.shape) != it.product(_cosize(cl)):
        raise LayoutError(f"{where}: the cta_layout of a multicast must be a Layout from CTA coordinates onto ranks "
                          f"0..{size - 1}, got {cta_layout}")
    c = cl(cta_coord)
    if isinstance(c, int) and not 0 <= c < size:
        raise LayoutError(f"{where}: cta_coord {cta_coord} is slice {c}, outside the {size} slices of the tile")
    if isinstance(atom, TmaRunsAtom):
        return _runs_slice(smem_tensor, gmem_tensor, atom, c, where)
    origin = _slice_origin(atom, c)
    return _slice_tensor(smem_tensor, atom, origin, where), _slice_tensor(gmem_tensor, atom, origin, where)


def _cosize(layout: Layout) -> int:
    from ...layout import cosize

    return cosize(layout)


def _slice_tensor(t: Any, atom: TmaCopyAtom, origin: list, where: str) -> Any:
    """t with mode 0 (one tile) cut to the slice of the tile at ``origin`` (atom.box_tile elements)."""
    from ...algebra import composition
    from ...layout import make_layout

    lay = t.layout
    shp, std = (lay.shape, lay.stride) if isinstance(lay.shape, tuple) else ((lay.shape,), (lay.stride,))
    m0 = make_layout(shp[0], stride=std[0])
    strides, mul = [], 1
    for e in atom.tile:
        strides.append(mul)
        mul *= e
    sub = composition(m0, make_layout(atom.box_tile, stride=tuple(strides)))
    ms, md = (shp[0], std[0]) if isinstance(shp[0], tuple) and len(shp[0]) == len(atom.tile) else ((shp[0],), (std[0],))
    off: Any = 0
    if len(ms) == len(atom.tile):
        for o, s, d in zip(origin, ms, md):
            off = off + it.crd2idx(o, s, d)
    elif it.product(shp[0]) == it.product(atom.tile):
        # mode 0 in other modes than the tile's (an MMA partition, ((128,16),1,4) of a (128,64) tile, which
        # make_tiled_tma_atom_A/B checked lists the tile column-major): the origin's column-major index
        lin: Any = 0
        for o, st in zip(origin, strides):
            lin = lin + o * st
        off = it.crd2idx(lin, shp[0], std[0])
    else:
        raise LayoutError(f"{where}: mode 0 of {lay} has {it.product(shp[0])} elements, not the tile's "
                          f"{it.product(atom.tile)}")
    new = make_layout((sub.shape,) + tuple(shp[1:]), stride=(sub.stride,) + tuple(std[1:]))
    return t._new(new, t.offset + off)
