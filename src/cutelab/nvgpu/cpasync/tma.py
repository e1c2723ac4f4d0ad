"""SM90 TMA: bulk tensor copies global -> shared memory, as ``cutlass.cute.nvgpu.cpasync`` names them.

``make_tiled_tma_atom(CopyBulkTensorTileG2SOp(), gmem, smem_layout, cta_tiler)`` describes the
copy of one ``cta_tiler`` tile of ``gmem`` into shared memory laid out by ``smem_layout``: the
parameters of ``cuTensorMapEncodeTiled`` (dimensions and byte strides of the global tensor,
innermost first; the box; the swizzle mode read off the smem layout's swizzle), and it checks
that the hardware's placement of the box in shared memory is exactly ``smem_layout`` (so any
thread reading the tile through that layout sees what TMA wrote). What TMA cannot do is refused.

Deviation from CuTe DSL: the second result (the "TMA tensor") is the global tensor itself, not a
tensor of coordinates; a kernel tiles and slices it as usual (``local_tile``, ``group_modes``,
``t[(None, k)]``), and the copy recovers the tile's coordinates from its offset.

>>> import numpy as np, cutelab as cute
>>> from cutelab.nvgpu import cpasync, warpgroup
>>> A = cute.make_tensor(np.zeros(256 * 128, np.float16), cute.make_layout((256, 128), stride=(128, 1)))
>>> sl = cute.tile_to_shape(warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.K_SW128, cute.Float16), (64, 64), (0, 1))
>>> atom, tma_A = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), A, sl, (64, 64))
>>> print(atom.desc)
TMA box (64,64) of f16 from a tensor (128,256) with byte strides (2,256), swizzle 128B
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Tuple

import numpy as np

from ... import int_tuple as it
from ...errors import LayoutError
from ...layout import Layout

__all__ = ["CopyBulkTensorTileG2SOp", "CopyBulkTensorTileG2SMulticastOp", "TmaDescriptor", "TmaCopyAtom", "make_tiled_tma_atom", "tma_partition",
           "prefetch_descriptor", "TMA_SWIZZLE_BYTES"]

# CUtensorMapSwizzle: NONE, 32B, 64B, 128B (the value is the enum of cuda.h)
TMA_SWIZZLE_BYTES = {0: 0, 1: 32, 2: 64, 3: 128}
# CUtensorMapDataType by cutelab element type name
_TMA_DTYPE = {"u8": 0, "i8": 0, "f8E4M3FN": 0, "f8E5M2": 0, "u16": 1, "i16": 1, "u32": 2, "i32": 3, "u64": 4,
              "i64": 5, "f16": 6, "f32": 7, "f64": 8, "bf16": 9, "tf32": 11}


@dataclass(frozen=True)
class CopyBulkTensorTileG2SOp:
    """TMA load: a bulk tensor tile copy global -> shared memory (``cp.async.bulk.tensor``), completing
    on an mbarrier. ``cta_group`` is accepted for CuTe DSL compatibility (1 only)."""

    cta_group: Any = None

    def __str__(self) -> str:
        return "cp.async GMEM -> SMEM bulk tensor copy Operation"


class CopyBulkTensorTileG2SMulticastOp(CopyBulkTensorTileG2SOp):
    """TMA multicast load (``.multicast::cluster``): the box lands in the shared memory of every CTA
    of the copy's ``mcast_mask`` (ranks in the cluster), at the same offset, and completes its bytes
    on each of their mbarriers at the barrier's offset (kernel/instr/cluster.py). cutelab issues the
    whole tile to every CTA of the mask (``num_multicast=1``)."""

    def __str__(self) -> str:
        return "cp.async GMEM -> SMEM bulk tensor multicast copy Operation"


@dataclass(frozen=True)
class TmaDescriptor:
    """What cuTensorMapEncodeTiled needs, innermost dimension first.

    ``dims``: extents of the global tensor; ``strides``: byte strides of each dimension (the
    first is the element size: TMA needs a contiguous innermost dimension); ``box``: the box
    extents; ``swizzle``: the CUtensorMapSwizzle value (0 none, 1 32B, 2 64B, 3 128B);
    ``modes``: which mode of the cutelab tensor each dimension is; ``dtype``: the element type.
    """

    dtype: Any
    dims: Tuple[int, ...]
    strides: Tuple[int, ...]
    box: Tuple[int, ...]
    swizzle: int
    modes: Tuple[int, ...]

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def box_bytes(self) -> int:
        return int(np.prod(self.box)) * self.dtype.bytes

    @property
    def data_type(self) -> int:
        return _TMA_DTYPE[self.dtype.name]

    def placement(self) -> np.ndarray:
        """Byte offset in shared memory of each box element (box index, innermost fastest), as TMA
        writes it: row-major box order, then the swizzle on bytes (16-byte units)."""
        lin = np.arange(int(np.prod(self.box)), dtype=np.int64) * self.dtype.bytes
        b = self.swizzle
        if b == 0:
            return lin
        y = (lin >> 7) & ((1 << b) - 1)  # Swizzle<b,4,3> on byte addresses
        return lin ^ (y << 4)

    def cu_encode_args(self, address: int) -> dict:
        """The arguments of cuTensorMapEncodeTiled for a tensor at ``address`` (zero-filled out of
        bounds, 128-byte L2 promotion, no interleave)."""
        return {"tensorDataType": self.data_type, "tensorRank": self.rank, "globalAddress": address,
                "globalDim": list(self.dims), "globalStrides": list(self.strides[1:]),
                "boxDim": list(self.box), "elementStrides": [1] * self.rank, "interleave": 0,
                "swizzle": self.swizzle, "l2Promotion": 2, "oobFill": 0}

    def __str__(self) -> str:
        return (f"TMA box {it.tuple_str(self.box)} of {self.dtype.name} from a tensor {it.tuple_str(self.dims)} "
                f"with byte strides {it.tuple_str(self.strides)}, swizzle "
                f"{TMA_SWIZZLE_BYTES[self.swizzle] or 'none'}{'B' if self.swizzle else ''}")


class TmaCopyAtom:
    """A TMA copy atom: the op, the descriptor, the tile (``cta_tiler``) and its smem layout."""

    def __init__(self, op: Any, desc: TmaDescriptor, gmem_layout: Layout, smem_layout: Any, tile: tuple,
                 boxes: Any = None):
        self.op, self.desc, self.gmem_layout, self.smem_layout, self.tile = op, desc, gmem_layout, smem_layout, tile
        # the boxes one tile takes: (origin in the tile per tensor mode, start in shared memory in elements);
        # several when the tile's innermost extent is wider than the swizzle span
        self.boxes = boxes if boxes is not None else [((0,) * len(desc.dims), 0)]

    @property
    def size_in_bytes(self) -> int:
        return self.desc.box_bytes

    def __str__(self) -> str:
        return f"Copy Atom\n  {self.op}\n  {self.desc}\n  smem layout: {self.smem_layout}"

    __repr__ = __str__


def _swizzle_of(smem_layout: Any, dtype: Any, where: str) -> Tuple[int, Layout]:
    """(CUtensorMapSwizzle, outer layout) of an smem layout: a Layout, or Swizzle<B,4,3> o 0 o layout
    with the swizzle on byte addresses (the SM90 layout atoms)."""
    if isinstance(smem_layout, Layout):
        return 0, smem_layout
    inner = getattr(smem_layout, "inner", None)
    outer = getattr(smem_layout, "outer", None)
    if inner is None or not isinstance(outer, Layout):
        raise LayoutError(f"{where}: smem_layout must be a Layout or a swizzled ComposedLayout, got {smem_layout!r}")
    if getattr(smem_layout, "offset", 0) not in (0, None):
        raise LayoutError(f"{where}: smem_layout {smem_layout} has a nonzero offset")
    b, m, s = inner.num_bits, inner.num_base, inner.num_shift
    if b == 0:
        return 0, outer
    if (m, s) != (4, 3) or b not in (1, 2, 3):
        raise LayoutError(
            f"{where}: TMA swizzles 16-byte units within 32-, 64- or 128-byte rows (Swizzle<1|2|3,4,3> on byte "
            f"addresses, as the SM90 smem layout atoms have it); {inner} is not one of those")
    return b, outer


def make_tiled_tma_atom(op: Any, gmem_tensor: Any, smem_layout: Any, cta_tiler: Any, num_multicast: int = 1, *,
                        internal_type: Any = None, loc: Any = None, ip: Any = None) -> Tuple[TmaCopyAtom, Any]:
    """A TMA atom copying one ``cta_tiler`` tile of gmem_tensor into smem laid out by smem_layout,
    and the tensor to tile in the kernel (here: gmem_tensor itself).

    Postconditions: the box is the tile (cta_tiler padded with 1s to the tensor's rank); every
    element (i, j, ...) of the tile lands at smem_layout(i, j, ...) (after its swizzle, on bytes).
    """
    where = f"make_tiled_tma_atom({op}, {getattr(gmem_tensor, 'layout', gmem_tensor)}, {smem_layout}, {cta_tiler})"
    from .tma_store import CopyBulkTensorTileS2GOp

    if not isinstance(op, (CopyBulkTensorTileG2SOp, CopyBulkTensorTileS2GOp)):
        raise LayoutError(f"{where}: only CopyBulkTensorTileG2SOp (TMA loads) and CopyBulkTensorTileS2GOp (TMA "
                          f"stores) are supported, got {type(op).__name__}")
    cta_group = getattr(op, "cta_group", None)
    if getattr(cta_group, "value", cta_group) not in (None, 1):  # None, 1 or tcgen05.CtaGroup.ONE
        raise LayoutError(f"{where}: cta_group={op.cta_group} (TMA for 2-CTA operations) is not supported by cutelab")
    if num_multicast != 1:
        raise LayoutError(f"{where}: num_multicast={num_multicast}: splitting a tile between the CTAs of a multicast "
                          f"is not supported by cutelab; use num_multicast=1 (with CopyBulkTensorTileG2SMulticastOp "
                          f"and mcast_mask=, every CTA of the mask receives the whole tile)")
    layout = getattr(gmem_tensor, "layout", None)
    dtype = internal_type or getattr(gmem_tensor, "element_type", None)
    if not isinstance(layout, Layout) or dtype is None:
        raise LayoutError(f"{where}: gmem_tensor must be a tensor over a Layout")
    if dtype.name not in _TMA_DTYPE:
        raise LayoutError(f"{where}: TMA cannot copy {dtype} elements")
    from ...dynamic import value_of

    shape, stride = value_of(layout.shape), value_of(layout.stride)  # dynamic extents: cutelab knows their values
    shape = shape if isinstance(shape, tuple) else (shape,)
    stride = stride if isinstance(stride, tuple) else (stride,)
    if it.depth(shape) > 1 or not all(type(x) is int for x in shape + stride):
        raise LayoutError(f"{where}: the global tensor must have a flat static layout, got {layout}")
    n = len(shape)
    if not 1 <= n <= 5:
        raise LayoutError(f"{where}: TMA handles tensors of rank 1 to 5, got rank {n}")
    tiler = tuple(cta_tiler) if isinstance(cta_tiler, (tuple, list)) else (cta_tiler,)
    # a Tile of stride-1 layouts (the epilogue tiles of the SM100 helpers, (128:1, 32:1)) is its extents
    tiler = tuple(it.product(x.shape) if isinstance(x, Layout) and x == Layout._raw(x.shape, 1)
                  and type(x.shape) is int else x for x in tiler)
    if len(tiler) > n or not all(type(x) is int and x > 0 for x in tiler):
        raise LayoutError(f"{where}: cta_tiler must be positive ints, at most one per mode of the tensor")
    box_t = tiler + (1,) * (n - len(tiler))  # box per tensor mode
    order = sorted(range(n), key=lambda i: (stride[i], i))
    if stride[order[0]] != 1:
        raise LayoutError(f"{where}: TMA needs a mode of stride 1 (a contiguous innermost dimension); strides are "
                          f"{it.tuple_str(stride)}")
    eb = dtype.bytes
    for a, b in zip(order, order[1:]):
        if stride[b] < stride[a] * shape[a] and shape[b] > 1:
            raise LayoutError(f"{where}: modes {a} and {b} overlap (stride {stride[b]} < {stride[a]} * {shape[a]}); "
                              f"TMA needs nested strides")
        if (stride[b] * eb) % 16:
            raise LayoutError(f"{where}: mode {b} has a byte stride of {stride[b] * eb}, not a multiple of 16 as TMA "
                              f"requires")
        if stride[b] * eb >= 1 << 40:
            raise LayoutError(f"{where}: mode {b}'s byte stride {stride[b] * eb} is 2^40 or more")
    for i in range(n):
        if box_t[i] > 256:
            raise LayoutError(f"{where}: the tile is {box_t[i]} along mode {i}; a TMA box is at most 256 per mode")
        if box_t[i] > shape[i]:
            raise LayoutError(f"{where}: the tile ({box_t[i]}) is larger than the tensor ({shape[i]}) along mode {i}")
    sw, outer = _swizzle_of(smem_layout, dtype, where)
    inner_bytes = box_t[order[0]] * eb
    if inner_bytes % 16:
        raise LayoutError(f"{where}: the tile's innermost extent is {inner_bytes} bytes; TMA boxes need a multiple of 16")
    tile_t = box_t  # the tile per tensor mode; a box is narrower along the innermost mode when the tile is
    # wider than the swizzle span: the tile is then several boxes side by side (as CuTe issues them)
    if sw and inner_bytes > TMA_SWIZZLE_BYTES[sw]:
        chunk = TMA_SWIZZLE_BYTES[sw] // eb
        if box_t[order[0]] % chunk:
            raise LayoutError(f"{where}: the tile's innermost extent ({box_t[order[0]]} elements) is not a multiple "
                              f"of the {TMA_SWIZZLE_BYTES[sw]}-byte swizzle span ({chunk} elements)")
        box_t = tuple(chunk if i == order[0] else e for i, e in enumerate(box_t))
    desc = TmaDescriptor(dtype, tuple(shape[i] for i in order), tuple(stride[i] * eb for i in order),
                         tuple(box_t[i] for i in order), sw, tuple(order))
    # the smem layout must put each tile element where TMA puts it
    tile_shape = tuple(tile_t[: len(tiler)])
    if it.product(outer.shape) != it.product(tile_shape):
        raise LayoutError(f"{where}: smem_layout has {it.product(outer.shape)} elements, the tile "
                          f"{it.tuple_str(tile_shape)} has {it.product(tile_shape)}")
    want = desc.placement()
    # box linear index of tile element c (tensor-mode coords): sum over TMA dims, innermost fastest
    grid = np.indices(tile_shape).reshape(len(tile_shape), -1)  # tensor-mode coords, tile modes only
    full = np.zeros((n, grid.shape[1]), dtype=np.int64)
    full[: len(tile_shape)] = grid
    inner = order[0]
    nbox = tile_t[inner] // box_t[inner]
    box_of = full[inner] // box_t[inner]  # which box of the tile each element is in
    lin = np.zeros(grid.shape[1], dtype=np.int64)
    mul = 1
    for d, i in enumerate(order):
        lin += (full[i] % box_t[i] if i == inner else full[i]) * mul
        mul *= desc.box[d]
    col = np.zeros(grid.shape[1], dtype=np.int64)  # column-major index of the tile coordinate
    mul = 1
    for i, e in enumerate(tile_shape):
        col += grid[i] * mul
        mul *= e
    lay_elems = _offsets(outer, col)
    lay_bytes = lay_elems * eb
    # each box lands at the smem start of its first element, which must be a whole swizzle pattern (or 16 bytes)
    period = (1 << (7 + sw)) if sw else 16
    starts = np.zeros(nbox, dtype=np.int64)
    for j in range(nbox):
        first = np.nonzero((box_of == j) & (lin == 0))[0]
        starts[j] = int(lay_bytes[first[0]]) if first.size else 0
        if starts[j] % period:
            raise LayoutError(f"{where}: box {j} of the tile starts at smem byte {int(starts[j])}, not at a multiple of "
                              f"{period} bytes (the swizzle pattern) as a TMA box must")
    tma_bytes = starts[box_of] + want[lin]
    if sw:
        y = (lay_bytes >> 7) & ((1 << sw) - 1)
        lay_bytes = lay_bytes ^ (y << 4)
    bad = np.nonzero(lay_bytes != tma_bytes)[0]
    if bad.size:
        k = int(bad[0])
        c = tuple(int(x) for x in grid[:, k])
        raise LayoutError(
            f"{where}: TMA writes tile element {it.tuple_str(c)} to smem byte {int(tma_bytes[k])} (the box in "
            f"row-major order, innermost mode {order[0]} fastest, then the {TMA_SWIZZLE_BYTES[sw] or 'no'}"
            f"{'B' if sw else ''} swizzle) but smem_layout puts it at byte {int(lay_bytes[k])}; use an SM90 smem "
            f"layout atom whose major mode is the tensor's contiguous mode")
    boxes = [(tuple(j * box_t[inner] if i == inner else 0 for i in range(n)), int(starts[j]) // eb)
             for j in range(nbox)]
    return TmaCopyAtom(op, desc, layout, smem_layout, tile_shape, boxes), gmem_tensor


def _offsets(layout: Layout, idx: np.ndarray) -> np.ndarray:
    from ...layout import evaluate_all

    allv = np.asarray(evaluate_all(layout), dtype=np.int64).reshape(-1)
    return allv[idx]


def tma_partition(atom: Any, cta_coord: Any, cta_layout: Any, smem_tensor: Any, gmem_tensor: Any, *,
                  loc: Any = None, ip: Any = None) -> Tuple[Any, Any]:
    """(smem, gmem) views for TMA copies: mode 0 of each is one tile (grouped with cute.group_modes),
    the other modes index tiles / stages. With a cta_layout of size 1 (no tile split between the
    CTAs of a multicast) the tensors are returned as they are, after checking that mode 0 holds
    one tile."""
    where = f"tma_partition({smem_tensor}, {gmem_tensor})"
    if not isinstance(atom, TmaCopyAtom):
        raise LayoutError(f"{where}: expected a TMA atom from make_tiled_tma_atom, got {type(atom).__name__}")
    size = it.product(getattr(cta_layout, "shape", cta_layout))
    if size != 1:
        raise LayoutError(f"{where}: a cta_layout of size {size} splits each TMA tile between the CTAs of a "
                          f"multicast, which cutelab does not support (a CopyBulkTensorTileG2SMulticastOp atom with "
                          f"num_multicast=1 multicasts whole tiles: pass cute.make_layout(1) here)")
    n = it.product(atom.tile)
    for what, t in (("smem", smem_tensor), ("gmem", gmem_tensor)):
        shp = t.layout.shape
        m0 = shp[0] if isinstance(shp, tuple) else shp
        if it.product(m0) != n:
            raise LayoutError(f"{where}: mode 0 of the {what} tensor has {it.product(m0)} elements; one TMA tile has "
                              f"{n} (group the tile's modes with cute.group_modes(t, 0, {len(atom.tile)}))")
    return smem_tensor, gmem_tensor


def prefetch_descriptor(atom: Any, *, loc: Any = None, ip: Any = None) -> None:
    """``prefetch.tensormap``: a cache hint only; cutelab kernels do not issue it (no effect)."""
    if not isinstance(atom, TmaCopyAtom):
        raise LayoutError(f"prefetch_descriptor: expected a TMA atom, got {type(atom).__name__}")
