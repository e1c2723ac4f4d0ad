"""SM90 TMA: bulk tensor copies global -> shared memory, as ``cutlass.cute.nvgpu.cpasync`` names them.

``make_tiled_tma_atom(CopyBulkTensorTileG2SOp(), gmem, smem_layout, cta_tiler)`` describes the
copy of one ``cta_tiler`` tile of ``gmem`` into shared memory laid out by ``smem_layout``: the
parameters of ``cuTensorMapEncodeTiled`` (dimensions and byte strides of the global tensor,
innermost first; the box; the swizzle mode read off the smem layout's swizzle), and it checks
that the hardware's placement of the box in shared memory is exactly ``smem_layout`` (so any
thread reading the tile through that layout sees what TMA wrote). What TMA cannot do is refused.

``CopyBulkTensorTileS2GOp`` atoms describe TMA stores the same way (shared -> global). With
``CopyBulkTensorTileG2SMulticastOp`` and ``num_multicast=n``, the box is one of n equal slices of
the tile (consecutive ranges of its shared-memory offsets, as CuTe cuts it): ``tma_partition`` with
a ``cta_layout`` of n CTAs gives CTA ``cta_layout(cta_coord)`` its slice of both tensors, and its
multicast copy lands that slice in every CTA of the mask, so each receives the whole tile.

Elements of 4 bits (Float4E2M1FN and Int4, two to a byte, as CUTLASS's float_e2m1_t and int4b_t) are copied as the tensor map
type CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B: dimensions and the box in elements, strides in bytes; the byte
swizzles act on their shared memory as Swizzle<B,5,3> on element offsets (``swizzle_base_elems``). A tile
whose tiled modes are hierarchical or broadcast (stride 0: the block-scaled GEMMs' scale factors,
``blockscaled_utils.tile_atom_to_shape_SF``) is copied by a ``TmaRunsAtom``: its distinct elements, runs of
whole 256-element rows of the tensor's memory, one box each; multicast (``num_multicast`` n), the tile's
shared memory is cut into n equal consecutive slices, each one pattern of evenly spaced runs (CUTLASS's 2-CTA
block-scaled GEMMs multicast B's scale factors to both CTAs of a pair this way).

Deviation from CuTe DSL: the second result (the "TMA tensor") is the global tensor itself, not a
tensor of coordinates; a kernel tiles and slices it as usual (``local_tile``, ``group_modes``,
``t[(None, k)]``), and the copy recovers the tile's coordinates from its offset. An offset keeps no
coordinate past the tensor's extent: a tile wholly outside the tensor (CuTe DSL's coordinate
tensor would skip it) aliases onto another tile's coordinates. The CPU interpreter refuses TMA
stores of two CTAs to one element (kernel/instr/tma.py); launch grids of tiles inside the tensor.

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

import math

import numpy as np

from ... import int_tuple as it
from ...errors import LayoutError
from ...layout import Layout
from ...tensor import Tensor

__all__ = ["CopyBulkTensorTileG2SOp", "CopyBulkTensorTileG2SNonExecTrait", "CopyBulkTensorTileG2SMulticastOp", "TmaDescriptor", "TmaCopyAtom", "TmaInfo",
           "make_tiled_tma_atom", "tma_partition", "prefetch_descriptor", "TMA_SWIZZLE_BYTES", "copy_tensormap",
           "update_tma_descriptor", "fence_tma_desc_acquire", "fence_tma_desc_release", "cp_fence_tma_desc_release"]

# CUtensorMapSwizzle: NONE, 32B, 64B, 128B (the value is the enum of cuda.h)
TMA_SWIZZLE_BYTES = {0: 0, 1: 32, 2: 64, 3: 128}
# CUtensorMapDataType by cutelab element type name
_TMA_DTYPE = {"u8": 0, "i8": 0, "f8E4M3FN": 0, "f8E5M2": 0, "f8E8M0FNU": 0, "u16": 1, "i16": 1, "u32": 2, "i32": 3,
              "u64": 4, "i64": 5, "f16": 6, "f32": 7, "f64": 8, "bf16": 9, "tf32": 11,
              # 4-bit elements packed two to a byte in global and shared memory (CUTLASS's float_e2m1_t, int4b_t):
              # CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B, the box and dimensions counted in elements
              "f4E2M1FN": 13, "i4": 13}


@dataclass(frozen=True)
class CopyBulkTensorTileG2SOp:
    """TMA load: a bulk tensor tile copy global -> shared memory (``cp.async.bulk.tensor``), completing
    on an mbarrier. ``cta_group`` is accepted for CuTe DSL compatibility (1 only)."""

    cta_group: Any = None

    def __str__(self) -> str:
        return "cp.async GMEM -> SMEM bulk tensor copy Operation"

    def _to_ir(self) -> Any:
        """CuTe DSL's MLIR attribute of the op: the op itself (what the cutlass._mlir stand-ins take)."""
        return self


class CopyBulkTensorTileG2SMulticastOp(CopyBulkTensorTileG2SOp):
    """TMA multicast load (``.multicast::cluster``): the box lands in the shared memory of every CTA
    of the copy's ``mcast_mask`` (ranks in the cluster), at the same offset, and completes its bytes
    on each of their mbarriers at the barrier's offset (kernel/instr/cluster.py). With
    ``make_tiled_tma_atom(..., num_multicast=n)`` the box is 1/n of the tile and each of the n CTAs
    of the multicast issues its own slice (``tma_partition`` with a ``cta_layout`` of n CTAs), so
    that every CTA of the mask receives the whole tile."""

    def __str__(self) -> str:
        return "cp.async GMEM -> SMEM bulk tensor multicast copy Operation"


@dataclass(frozen=True)
class TmaDescriptor:
    """What cuTensorMapEncodeTiled needs, innermost dimension first.

    ``dims``: extents of the global tensor; ``strides``: byte strides of each dimension (the
    first is the element size, 1 for 4-bit elements, which go two to a byte: TMA needs a contiguous
    innermost dimension); ``box``: the box extents; ``swizzle``: the CUtensorMapSwizzle value (0
    none, 1 32B, 2 64B, 3 128B); ``modes``: which mode of the cutelab tensor each dimension is;
    ``dtype``: the element type. Dimensions and the box count elements, also for 4-bit ones.
    ``unpacked_from``: for a TMA that unpacks 4-bit integers (packed two a byte in global memory, ``strides`` in
    its bytes) into one byte each in shared memory (``dtype``, Int8 or Uint8; CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B,
    what make_tiled_tma_atom's ``internal_type=Int8`` over an Int4 tensor asks for), the global element type;
    the value lands in the low 4 bits of its byte, the high ones zero (``cute.arch.sext_unpacked_i4_i8_intrinsic``
    sign-extends them); None otherwise.
    """

    dtype: Any
    dims: Tuple[int, ...]
    strides: Tuple[int, ...]
    box: Tuple[int, ...]
    swizzle: int
    modes: Tuple[int, ...]
    unpacked_from: Any = None

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def box_bytes(self) -> int:
        # the transaction bytes: global memory's (an unpacking TMA's packed bytes, half what shared memory takes)
        return int(np.prod(self.box)) * (self.unpacked_from or self.dtype).width // 8

    @property
    def elem_strides(self) -> Tuple[int, ...]:
        """The strides of the dimensions in elements (the byte strides times 8 / the element's bits;
        the first is 1)."""
        w = (self.unpacked_from or self.dtype).width
        return (1,) + tuple(s * 8 // w for s in self.strides[1:])

    @property
    def data_type(self) -> int:
        return 14 if self.unpacked_from is not None else _TMA_DTYPE[self.dtype.name]  # 14: 16U4_ALIGN16B

    def placement(self, phase: int = 0) -> np.ndarray:
        """Element offset in shared memory of each box element (box index, innermost fastest), as TMA
        writes it: row-major box order, then the swizzle on bytes (16-byte units; 4-bit elements go
        two to a byte, so a 16-byte unit is 32 of them). The swizzle is on the address: ``phase`` is
        the box start's byte offset in its swizzle pattern (a multiple of 128; 0 for a box at a
        pattern boundary).

        >>> from cutelab.numeric import Float4E2M1FN, Float16
        >>> TmaDescriptor(Float16, (64, 8), (2, 128), (64, 8), 3, (1, 0)).placement()[[0, 8, 64, 72]].tolist()
        [0, 8, 72, 64]
        >>> TmaDescriptor(Float4E2M1FN, (256, 8), (1, 128), (256, 8), 3, (1, 0)).placement()[[0, 32, 256, 288]].tolist()
        [0, 32, 288, 256]
        """
        lin = np.arange(int(np.prod(self.box)), dtype=np.int64)
        b = self.swizzle
        if b == 0:
            return lin
        base = swizzle_base_elems(self.dtype)  # Swizzle<b,4,3> on byte addresses, in element units
        lin = lin + phase * 8 // self.dtype.width
        y = (lin >> (base + 3)) & ((1 << b) - 1)
        return (lin ^ (y << base)) - phase * 8 // self.dtype.width

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
    """A TMA copy atom: the op, the descriptor, the tile (``cta_tiler``) and its smem layout.

    ``boxes``: the boxes one tile takes, (origin in the tile per tensor mode, start in shared memory
    in elements); several when the tile's innermost extent is wider than the swizzle span.
    With ``num_multicast`` n > 1 the descriptor's box is one of n equal slices of the tile (a
    contiguous range of the tile's shared-memory offsets); ``box_tile`` is that slice's extent
    per tile mode and ``box_smem_layout`` its smem layout (for n = 1: the tile and smem_layout)."""

    def __init__(self, op: Any, desc: TmaDescriptor, gmem_layout: Layout, smem_layout: Any, tile: tuple,
                 boxes: Any = None, num_multicast: int = 1, box_tile: Any = None, box_smem_layout: Any = None):
        self.op, self.desc, self.gmem_layout, self.smem_layout, self.tile = op, desc, gmem_layout, smem_layout, tile
        self.boxes = boxes if boxes is not None else [((0,) * len(desc.dims), 0)]
        self.num_multicast = num_multicast
        self.box_tile = tile if box_tile is None else box_tile
        self.box_smem_layout = box_smem_layout
        self.full_box = desc.box  # a multicast atom's box before its cut into num_multicast slices
        self.host_engine: Any = None  # the engine of the tensor the atom was made for (make_tiled_tma_atom)
        # an atom made in a kernel for a tensor over a layout with runtime extents: that tensor, and its mode of
        # each TMA dimension (copy_tensormap writes its descriptor when the kernel runs)
        self.runtime_src: Any = None
        self.runtime_modes: Any = None
        self.tensor_layout: Any = gmem_layout  # that tensor's own layout (gmem_layout decodes a coordinate view's offsets)

    @property
    def size_in_bytes(self) -> int:
        return self.desc.box_bytes

    def __str__(self) -> str:
        return f"Copy Atom\n  {self.op}\n  {self.desc}\n  smem layout: {self.smem_layout}"

    __repr__ = __str__


class CopyBulkTensorTileG2SNonExecTrait:
    """CuTe DSL's trait around a TMA load atom made by ``cutlass._mlir.dialects.cute_nvgpu.
    atom_make_non_exec_tiled_tma_load`` (compat/mlir: ``make_tiled_tma_atom``); ``cute.CopyAtom(op, trait)`` is
    that atom (CUTLASS's MLA decode makes its paged K/V atoms so)."""

    def __init__(self, atom: Any):
        if not isinstance(atom, TmaCopyAtom):
            raise TypeError(f"CopyBulkTensorTileG2SNonExecTrait: expected the atom of atom_make_non_exec_tiled_tma_load, "
                            f"got {type(atom).__name__}")
        self.prebuilt_atom = atom


@dataclass(frozen=True, eq=False)
class TmaInfo:
    """What ``make_tiled_tma_atom`` (and ``make_tiled_tma_atom_A``/``_B``) return, as CuTe DSL 4.8.1's
    ``cpasync.TmaInfo``: the atom, the tensor to tile in the kernel and the smem layout the atom was
    made for; it unpacks as ``atom, tensor``. A dataclass, so that a kernel argument of this type
    passes its tensor as the launch's storage (kernel/launch/args.py walks dataclass fields)."""

    _atom: Any
    _tma_tensor: Any
    _smem_layout: Any = None

    @property
    def atom(self) -> Any:
        return self._atom

    @property
    def tma_tensor(self) -> Any:
        return self._tma_tensor

    @property
    def smem_layout(self) -> Any:
        return self._smem_layout

    def __iter__(self) -> Any:
        return iter((self._atom, self._tma_tensor))

    def __len__(self) -> int:
        return 2

    def __getitem__(self, i: int) -> Any:
        return (self._atom, self._tma_tensor)[i]


def swizzle_base_elems(dtype: Any) -> int:
    """M of the TMA/GMMA swizzles Swizzle<B,4,3> on byte addresses written on element offsets of
    dtype: Swizzle<B,M,3> with M = 4 - log2(bytes per element) (5 for 4-bit elements, two to a byte).

    >>> from cutelab.numeric import Float4E2M1FN, Float16, Uint8
    >>> [swizzle_base_elems(t) for t in (Float4E2M1FN, Uint8, Float16)]
    [5, 4, 3]
    """
    m = {4: 5, 8: 4, 16: 3, 32: 2, 64: 1}.get(dtype.width)
    if m is None:
        raise LayoutError(f"TMA swizzle: {dtype} elements ({dtype.width} bits) have no element form of a byte swizzle")
    return m


def _rank(x: Any) -> int:
    shp = getattr(x, "shape", x)
    return len(shp) if isinstance(shp, tuple) else 1


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
                        internal_type: Any = None, loc: Any = None, ip: Any = None,
                        _one_stage: bool = False) -> TmaInfo:
    """A TMA atom copying one ``cta_tiler`` tile of gmem_tensor into smem laid out by smem_layout,
    and the tensor to tile in the kernel (here: gmem_tensor itself), as a TmaInfo (which unpacks as
    the pair). A staged smem layout (one mode more than cta_tiler, the stage last) is taken as its
    first stage, as CuTe DSL does; ``_one_stage`` (for make_tiled_tma_atom_A/_B, whose MMA-partitioned
    layouts have more modes than their tile) says smem_layout is one stage already.

    Postconditions: the box is the tile (cta_tiler padded with 1s to the tensor's rank); every
    element (i, j, ...) of the tile lands at smem_layout(i, j, ...) (after its swizzle, on bytes).
    """
    where = f"make_tiled_tma_atom({op}, {getattr(gmem_tensor, 'layout', gmem_tensor)}, {smem_layout}, {cta_tiler})"
    from .tma_store import CopyBulkTensorTileS2GOp

    stand_in = getattr(gmem_tensor, "tma_stand_in", None)
    if stand_in is not None:  # a tensor over a layout with runtime extents, in a kernel (kernel/instr/runtime_layout.py)
        t = stand_in()
        info = make_tiled_tma_atom(op, t, smem_layout, cta_tiler, num_multicast, internal_type=internal_type,
                                   _one_stage=_one_stage)
        atom = info.atom
        atom.host_engine = None  # no kernel argument's descriptor: copy_tensormap builds this one in the kernel
        atom.runtime_src = gmem_tensor
        atom.runtime_modes = gmem_tensor.tma_modes(atom.desc, t)
        return TmaInfo(atom, gmem_tensor, info.smem_layout)
    if not isinstance(op, (CopyBulkTensorTileG2SOp, CopyBulkTensorTileS2GOp)):
        raise LayoutError(f"{where}: only CopyBulkTensorTileG2SOp (TMA loads) and CopyBulkTensorTileS2GOp (TMA "
                          f"stores) are supported, got {type(op).__name__}")
    cta_group = getattr(op, "cta_group", None)
    if getattr(cta_group, "value", cta_group) == 2 and isinstance(op, CopyBulkTensorTileG2SOp):
        # a load for a 2-CTA MMA (CUTLASS's MLA decode, its tile a CTA's half): one CTA's box, its bytes counted by
        # the pair's leader (the copy reads the cta_group from atom.op: kernel/instr/tcgen05_2cta.py), as
        # make_tiled_tma_atom_A/B make them
        info = make_tiled_tma_atom(type(op)(), gmem_tensor, smem_layout, cta_tiler, num_multicast,
                                   internal_type=internal_type, _one_stage=_one_stage)
        info.atom.op = op
        return info
    if getattr(cta_group, "value", cta_group) not in (None, 1):  # None, 1 or tcgen05.CtaGroup.ONE
        raise LayoutError(f"{where}: cta_group={op.cta_group} (TMA for 2-CTA operations) is not supported by cutelab")
    if isinstance(num_multicast, bool) or not isinstance(num_multicast, int) or num_multicast < 1:
        raise LayoutError(f"{where}: num_multicast must be a positive int, got {num_multicast!r}")
    if num_multicast > 1 and not isinstance(op, CopyBulkTensorTileG2SMulticastOp):
        raise LayoutError(f"{where}: num_multicast={num_multicast} needs a CopyBulkTensorTileG2SMulticastOp, got "
                          f"{type(op).__name__}")
    if num_multicast > 16:
        raise LayoutError(f"{where}: num_multicast={num_multicast}: a cluster has at most 16 CTAs")
    layout = getattr(gmem_tensor, "layout", None)
    dtype = internal_type or getattr(gmem_tensor, "element_type", None)
    own = getattr(gmem_tensor, "element_type", None)
    unpack = (internal_type is not None and own is not None and own.width == 4 and own.is_integer
              and internal_type.width == 8 and internal_type.is_integer)  # Int4 -> a byte each in shared memory
    if internal_type is not None and own is not None and internal_type.width != own.width and not unpack:
        from ...errors import user_location

        at = user_location()
        raise LayoutError(f"{where}{f' at {at}' if at else ''}: internal_type={internal_type} over {own} elements "
                          f"(a TMA that widens elements as it copies; of those cutelab has the one that unpacks "
                          f"4-bit integers to bytes, internal_type=Int8 over Int4) is not supported by cutelab")
    if not isinstance(layout, Layout) or dtype is None:
        raise LayoutError(f"{where}: gmem_tensor must be a tensor over a Layout")
    if dtype.name not in _TMA_DTYPE:
        from ...errors import user_location

        at = user_location()
        sub = ("; of the sub-byte types cutelab's TMA copies Float4E2M1FN and Int4 (packed two to a byte)"
               if dtype.width < 8 else "")
        raise LayoutError(f"{where}{f' at {at}' if at else ''}: TMA cannot copy {dtype} elements{sub}")
    from ...dynamic import value_of

    shape, stride = value_of(layout.shape), value_of(layout.stride)  # dynamic extents: cutelab knows their values
    shape = shape if isinstance(shape, tuple) else (shape,)
    stride = stride if isinstance(stride, tuple) else (stride,)
    tiler = tuple(cta_tiler) if isinstance(cta_tiler, (tuple, list)) else (cta_tiler,)
    if len(tiler) == 1:
        tiler = _coordinate_tile(tiler[0], shape) or tiler
    tiler = _hierarchical_tiles(tiler, shape, stride)
    ntiled = None  # of a hierarchical tile, its modes before they are flattened (a staged smem layout has one more)
    if any(isinstance(x, tuple) for x in tiler) and len(shape) >= len(tiler):
        ntiled = len(tiler)
        # a hierarchical tile of hierarchical modes (flash_attn.cute's packed GQA: ((qhead_per_kvhead, m / qhead),
        # d) over ((heads, seqlen), d, batch)): each sub-mode is a TMA dimension, as CuTe flattens them
        fs: list = []
        fd: list = []
        ft: list = []
        for i, t in enumerate(tiler):
            if isinstance(t, tuple) != isinstance(shape[i], tuple) or (
                    isinstance(t, tuple) and len(it.flatten_to_tuple(t)) != len(it.flatten_to_tuple(shape[i]))):
                raise LayoutError(f"{where}: cta_tiler {it.tuple_str(tiler)} is not congruent to the tiled modes of "
                                  f"the global tensor {layout} (mode {i})")
            fs += list(it.flatten_to_tuple(shape[i]))
            fd += list(it.flatten_to_tuple(stride[i]))
            ft += list(it.flatten_to_tuple(t))
        shape = tuple(fs) + shape[len(tiler):]
        stride = tuple(fd) + stride[len(tiler):]
        tiler = tuple(ft)
        layout = Layout._raw(shape, stride)
    if (len(shape) >= len(tiler) and all(type(x) is int for x in tiler)
            and any(isinstance(x, tuple) or (isinstance(d, int) and d == 0)
                    for x, d in zip(shape[:len(tiler)], stride[:len(tiler)]))):
        # hierarchical or broadcast tiled modes (the block-scaled scale-factor tensors of
        # blockscaled_utils.tile_atom_to_shape_SF): the tile's distinct elements as runs of memory
        if unpack:
            raise LayoutError(f"{where}: an unpacking TMA (internal_type={internal_type} over {own}) of a tile with "
                              f"hierarchical or broadcast modes is not supported by cutelab")
        return _runs_atom(op, gmem_tensor, layout, gmem_tensor.element_type, smem_layout, tiler, shape, stride, num_multicast, _one_stage, where)
    if it.depth(shape) > 1 or any(d == 0 for d in stride[len(tiler):]):
        # modes past the tiled ones may be nested (FMHA's ((heads per group, groups), batch)): each of their
        # sub-modes is a TMA dimension of box 1, as CuTe flattens them; sub-modes of one element are dropped,
        # and so are broadcast ones (stride 0: the FMHA's query heads sharing a K/V head, or its batch of a
        # variable-length problem), which move no address: the tensor map has no dimension for them, as CuTe
        # collapses them
        if any(isinstance(x, tuple) for x in shape[:len(tiler)]):
            raise LayoutError(f"{where}: the tiled modes of the global tensor must be flat, got {layout}")
        fs, fd = it.flatten_to_tuple(shape), it.flatten_to_tuple(stride)
        keep = [i for i in range(len(fs)) if i < len(tiler) or (fs[i] != 1 and not (isinstance(fd[i], int)
                                                                                  and fd[i] == 0))]
        shape, stride = tuple(fs[i] for i in keep), tuple(fd[i] for i in keep)
        layout = Layout._raw(shape, stride)
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in shape + stride):
        raise LayoutError(f"{where}: the global tensor must have a layout of integers, got {layout}")
    # dynamic extents and strides (mark_layout_dynamic) are DynInts: the descriptor takes their values
    shape, stride = tuple(int(x) for x in shape), tuple(int(x) for x in stride)
    n = len(shape)
    if not 1 <= n <= 5:
        raise LayoutError(f"{where}: TMA handles tensors of rank 1 to 5, got rank {n}")
    # a Tile of stride-1 layouts (the epilogue tiles of the SM100 helpers, (128:1, 32:1)) is its extents
    tiler = tuple(it.product(x.shape) if isinstance(x, Layout) and x == Layout._raw(x.shape, 1)
                  and type(x.shape) is int else x for x in tiler)
    if len(tiler) > n or not all(type(x) is int and x > 0 for x in tiler):
        raise LayoutError(f"{where}: cta_tiler must be positive ints, at most one per mode of the tensor")
    box_t = tiler + (1,) * (n - len(tiler))  # box per tensor mode
    # a mode of extent 1 has no stride that matters (its coordinate is 0): as CuTe DSL 4.8.1 makes it, its stride is
    # 0 and it comes last (make_tiled_tma_atom of (128,1,1):(64,1,1) gives (128,1,1):(64@0,0,0); mamba2_ssd's
    # tensors of one batch, head or chunk have such modes with a torch stride of one element)
    if any(shape[i] == 1 and stride[i] != 0 for i in range(n)) and any(shape[i] > 1 for i in range(n)):
        stride = tuple(0 if shape[i] == 1 else stride[i] for i in range(n))
    order = sorted(range(n), key=lambda i: (shape[i] == 1 and n > 1, stride[i], i))
    if stride[order[0]] != 1:
        raise LayoutError(f"{where}: TMA needs a mode of stride 1 (a contiguous innermost dimension); strides are "
                          f"{it.tuple_str(stride)}")
    bits = dtype.width  # 4-bit elements go two to a byte: byte counts are elements * bits / 8
    gbits = own.width if unpack else bits  # global memory's (an unpacking TMA's shared memory has bytes)
    for a, b in zip(order, order[1:]):
        if stride[b] < stride[a] * shape[a] and shape[b] > 1:
            raise LayoutError(f"{where}: modes {a} and {b} overlap (stride {stride[b]} < {stride[a]} * {shape[a]}); "
                              f"TMA needs nested strides")
        if (stride[b] * gbits) % 128:
            raise LayoutError(f"{where}: mode {b} has a byte stride of {stride[b] * gbits / 8:g}, not a multiple of 16 "
                              f"as TMA requires")
        if stride[b] * gbits // 8 >= 1 << 40:
            raise LayoutError(f"{where}: mode {b}'s byte stride {stride[b] * gbits // 8} is 2^40 or more")
    for i in range(n):
        if box_t[i] > 256:
            raise LayoutError(f"{where}: the tile is {box_t[i]} along mode {i}; a TMA box is at most 256 per mode")
        # a box larger than the tensor is allowed (cuTensorMapEncodeTiled bounds boxDim by 256 only): its
        # elements past the tensor's end are out of bounds, zero-filled by loads and dropped by stores
    stored = smem_layout
    hierarchical = ntiled is not None  # tiled modes of the tensor are nested: its sub-modes are the TMA dimensions
    ntiled = ntiled or len(tiler)
    if not _one_stage and _rank(smem_layout) == ntiled + 1:  # staged (the stage last): one stage's layout
        from ...swizzle import select

        smem_layout = select(smem_layout, mode=list(range(ntiled)))
    sw, outer = _swizzle_of(smem_layout, dtype, where)
    order = _smem_order(order, outer, box_t, len(tiler))
    if (box_t[order[0]] * bits) % 128:
        raise LayoutError(f"{where}: the tile's innermost extent is {box_t[order[0]] * bits / 8:g} bytes; TMA boxes "
                          f"need a multiple of 16")
    inner_bytes = box_t[order[0]] * bits // 8
    tile_t = box_t  # the tile per tensor mode; a box is narrower along the innermost mode when the tile is
    # wider than the swizzle span: the tile is then several boxes side by side (as CuTe issues them)
    if sw and inner_bytes > TMA_SWIZZLE_BYTES[sw]:
        chunk = TMA_SWIZZLE_BYTES[sw] * 8 // bits
        if box_t[order[0]] % chunk:
            raise LayoutError(f"{where}: the tile's innermost extent ({box_t[order[0]]} elements) is not a multiple "
                              f"of the {TMA_SWIZZLE_BYTES[sw]}-byte swizzle span ({chunk} elements)")
        box_t = tuple(chunk if i == order[0] else e for i, e in enumerate(box_t))
    elif not sw and order[0] < len(tiler):
        # unswizzled shared memory whose rows are narrower than the tile's innermost extent (a K-major operand in
        # 64-byte rows): boxes as wide as the rows, side by side, as CuTe cuts the tile
        chunk = _unswizzled_row(outer, tuple(box_t[: len(tiler)]), order[0], bits)
        if chunk < box_t[order[0]]:
            box_t = tuple(chunk if i == order[0] else e for i, e in enumerate(box_t))
    desc = TmaDescriptor(dtype, tuple(shape[i] for i in order), tuple(max(1, stride[i] * gbits // 8) for i in order),
                         tuple(box_t[i] for i in order), sw, tuple(order), own if unpack else None)
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
    # compared in elements (the swizzle on bytes written on element offsets: swizzle_base_elems)
    lay = _offsets(outer, col)
    # each box lands at the smem start of its first element, which must be a whole swizzle pattern (or 16 bytes)
    period = ((1 << (7 + sw)) if sw else 16) * 8 // bits
    starts = np.zeros(nbox, dtype=np.int64)
    for j in range(nbox):
        first = np.nonzero((box_of == j) & (lin == 0))[0]
        starts[j] = int(lay[first[0]]) if first.size else 0
        if starts[j] % period:
            raise LayoutError(f"{where}: box {j} of the tile starts at smem byte {int(starts[j]) * bits / 8:g}, not at "
                              f"a multiple of {period * bits // 8} bytes (the swizzle pattern) as a TMA box must")
    tma_at = starts[box_of] + want[lin]
    if sw:
        m = swizzle_base_elems(dtype)
        lay = lay ^ (((lay >> (m + 3)) & ((1 << sw) - 1)) << m)
    bad = np.nonzero(lay != tma_at)[0]
    if bad.size:
        k = int(bad[0])
        c = tuple(int(x) for x in grid[:, k])
        raise LayoutError(
            f"{where}: TMA writes tile element {it.tuple_str(c)} to smem byte {int(tma_at[k]) * bits / 8:g} (the box "
            f"in row-major order, innermost mode {order[0]} fastest, then the {TMA_SWIZZLE_BYTES[sw] or 'no'}"
            f"{'B' if sw else ''} swizzle) but smem_layout puts it at byte {int(lay[k]) * bits / 8:g}; use an SM90 "
            f"smem layout atom whose major mode is the tensor's contiguous mode")
    boxes = [(tuple(j * box_t[inner] if i == inner else 0 for i in range(n)), int(starts[j]))
             for j in range(nbox)]
    tma_tensor, coord_layout = _coordinate_view(gmem_tensor, shape, order, tiler, hierarchical)
    if coord_layout is not None and not hierarchical:  # (a nested view keeps its own coordinates' iterator)
        tma_tensor = _tma_view(tma_tensor, tuple(desc.modes), gmem_tensor.layout.shape)
    if num_multicast == 1:
        atom = TmaCopyAtom(op, desc, coord_layout or layout, smem_layout, tile_shape, boxes)
        atom.host_engine = getattr(gmem_tensor, "engine", None)  # copy_tensormap finds its kernel parameter by it
        atom.tensor_layout = layout  # the global tensor's own layout (gmem_layout may be a coordinate view's)
        return TmaInfo(atom, tma_tensor, stored)
    atom = _multicast_atom(op, desc, coord_layout or layout, smem_layout, outer, tile_shape, order, num_multicast,
                           boxes, where)
    atom.host_engine = getattr(gmem_tensor, "engine", None)
    atom.tensor_layout = layout
    return TmaInfo(atom, tma_tensor, stored)


def _smem_order(order: list, outer: Layout, box_t: tuple, ntile: int) -> list:
    """The descriptor's dimension order: the contiguous mode first, then the tile's other modes (of more than one
    element) in the order of their steps in shared memory, then the modes of one box element in the order of
    their global strides (``order``). CuTe builds the TMA dimensions from the smem layout's inverse, so the box
    lands in shared memory in the smem layout's order, whatever the global strides' order is (a hierarchical
    mode ((2, M / 2)):((M / 2 * K, K)) of a K-major tile: TMA dimensions K, then the 2, then M / 2; the tensor map
    takes them in any order).

    >>> _smem_order([2, 1, 0], Layout._raw((2, 96, 64), (64, 128, 1)), (2, 96, 64), 3)
    [2, 0, 1]
    >>> _smem_order([0, 1, 2, 3], Layout._raw((64, 1, 64, 1), (1, 0, 64, 0)), (64, 1, 64, 1), 4)  # heads: one element
    [0, 1, 2, 3]
    """
    tile = box_t[:ntile]
    if it.product(outer.shape) != it.product(tile):
        return order  # make_tiled_tma_atom reports it
    step, mul = {}, 1
    for i, e in enumerate(tile):
        if e > 1:
            step[i] = int(_offsets(outer, np.array([mul]))[0])
        mul *= e
    inner = order[0]
    tiled = sorted((i for i in step if i != inner), key=lambda i: (step[i], i))
    if [i for i in order[1:] if i in step] == tiled:
        return order  # the tiled modes already come in shared memory's order: the global strides' order stands
    # the tiled modes take, in shared memory's order, the places they hold in the global strides' order; a mode of
    # one box element stays where its stride puts it (moving it changes the copies' coordinate order, which the
    # kernels' TMA coordinates follow: CUTLASS's Hopper FMHA's (d, heads, seqlen, batch) read the wrong boxes)
    moved = iter(tiled)
    return [inner] + [next(moved) if i in step else i for i in order[1:]]


def _coordinate_tile(cv: Any, shape: tuple) -> Any:
    """A CTA-value layout over coordinates (composition(make_identity_layout(shape), tile), quack's epilogue) whose
    mode k steps coordinate k by 1, as the tile of its extents: flat, (64,32):(1@0,1@1) is (64, 32); over a
    hierarchical mode of the tensor (quack's concatenated output, ((2, m / 2), n)), its sub-modes step the
    sub-coordinates in order, ((2,32),32):((1@0@0,1@1@0),1@1) is ((2, 32), 32) (a sub-mode it does not step is 1);
    nested over flat coordinates (CUTLASS's MLA decode gives the zipped_divide's tile mode, ((64,64)):((1@0,1@1))),
    flattened mode i stepping coordinate i, the flat tile (64, 64). None for any other tiler.

    >>> from cutelab.layout import ScaledBasis as E
    >>> _coordinate_tile(Layout._raw(((2, 32), 32), ((E(1, (0, 0)), E(1, (0, 1))), E(1, (1,)))), ((2, 96), 64, 3))
    ((2, 32), 32)
    >>> _coordinate_tile(Layout._raw((64, 32), (E(1, (0,)), E(1, (1,)))), (128, 64))
    (64, 32)
    >>> _coordinate_tile(Layout._raw(((64, 64),), ((E(1, (0,)), E(1, (1,))),)), (512, 576))
    (64, 64)
    >>> _coordinate_tile(Layout._raw(((32, 2), 32), ((E(1, (0, 1)), E(1, (0, 0))), E(1, (1,)))), ((2, 96), 64)) is None
    True
    """
    from ...layout import ScaledBasis

    if not isinstance(cv, Layout) or not isinstance(cv.shape, tuple) or not isinstance(cv.stride, tuple):
        return None
    fshape, fstride = it.flatten_to_tuple(cv.shape), it.flatten_to_tuple(cv.stride)
    if all(type(x) is int for x in fshape) and all(
            isinstance(d, ScaledBasis) and d.value == 1 and d.path == (i,) for i, d in enumerate(fstride)):
        return tuple(fshape)  # flat coordinates (the flat tile, and a nested tile mode over them)
    out: list = []
    for k, (s, d) in enumerate(zip(cv.shape, cv.stride)):
        fs, fd = it.flatten_to_tuple(s), it.flatten_to_tuple(d)
        if not all(type(x) is int for x in fs) or not all(
                isinstance(b, ScaledBasis) and b.value == 1 and b.path[:1] == (k,) for b in fd):
            return None
        if not isinstance(s, tuple):
            if fd[0].path != (k,):
                return None
            out.append(s)
            continue
        sub = shape[k] if k < len(shape) else None
        paths = [b.path[1:] for b in fd]
        if not isinstance(sub, tuple) or any(len(p) != 1 for p in paths):
            return None
        js = [p[0] for p in paths]
        if js != sorted(set(js)) or js[-1] >= len(sub):  # the tile's sub-modes in the tensor's order
            return None
        ext = dict(zip(js, fs))
        out.append(tuple(ext.get(j, 1) for j in range(len(sub))))
    return tuple(out)


def _hierarchical_tiles(tiler: tuple, shape: tuple, stride: tuple) -> tuple:
    """An int tile of a hierarchical tiled mode as a tile of its sub-modes, as CuTe flattens it into TMA
    dimensions (quack's concatenated operands: a mode ((2, M / 2)):((ld, 2 ld)) under a tile of 192 is (2, 96)):
    the tile's coordinate m is the sub-modes' colexicographic coordinate, so the tile takes whole sub-modes
    while its extent is a multiple of them, then what is left of it from the next (the last takes the rest,
    past its extent too: a partial tile; a sub-mode before the last takes part of itself only if the part
    divides it, so that no tile straddles two of its steps). The tiler is returned unchanged when a tiled mode has a broadcast
    (stride-0) sub-mode (the block-scaled scale factors: TmaRunsAtom) or the tile does not split this way.

    >>> _hierarchical_tiles((192, 64), ((2, 500), 64), ((64, 128), 1))
    ((2, 96), 64)
    >>> _hierarchical_tiles((192, 64), ((5, 500), 64), ((64, 320), 1))
    (192, 64)
    """
    if len(shape) < len(tiler) or not any(isinstance(shape[i], tuple) and type(t) is int for i, t in enumerate(tiler)):
        return tiler
    if any(isinstance(d, int) and d == 0 for i in range(len(tiler)) for d in it.flatten_to_tuple(stride[i])):
        return tiler
    out = []
    for i, t in enumerate(tiler):
        if not (isinstance(shape[i], tuple) and type(t) is int):
            out.append(t)
            continue
        subs = it.flatten_to_tuple(shape[i])
        if not all(isinstance(e, int) for e in subs):
            return tiler
        parts, rem = [], t
        for k, e in enumerate(subs):
            e = int(e)
            if k == len(subs) - 1 or (rem < e and e % rem == 0):  # the rest (no tile straddles two of e)
                parts.append(rem)
                rem = 1
            elif rem % e == 0:
                parts.append(e)
                rem //= e
            else:
                return tiler
        out.append(tuple(parts))
    return tuple(out)


#: the extent each tiled mode of a coordinate view (``_coordinate_view``) stands for: 2^20 elements
COORD_EXTENT = 1 << 20


def _coordinate_view(gmem_tensor: Any, shape: Tuple[int, ...], order: Any, tiler: Tuple[int, ...],
                     hierarchical: bool = False) -> Tuple[Any, Any]:
    """(TMA tensor, its decoding layout or None) for make_tiled_tma_atom. The TMA tensor of a flat tensor
    narrower than its tile in every tiled mode (flash_attn.cute's Q of 128 rows and head dim 8 under a 192 x 16
    tile; a grouped GEMM's template, whose descriptor the kernel rewrites: kernel/instr/tensormap.py), or of a
    flat, static, non-broadcast tensor, is a coordinate view of the same memory, CuTe DSL's coordinate tensor
    in cutelab's form: the tensor's own shape (its dynamic extents stay dynamic, as CuTe DSL's: a k-tile count
    read off it bounds a runtime loop, and a dynamic template's tiles keep their coordinates through
    local_tile), each tiled mode
    COORD_EXTENT apart in the descriptor's dimension order. Reading it as memory is out of bounds (refused);
    TMA copies decode the coordinates from its offsets with each tiled mode COORD_EXTENT long. A nested
    tensor narrower than its tile in every mode gets COORD_EXTENT-long modes. A tensor whose tiled modes are
    hierarchical (quack's concatenated operands and outputs, ((2, m / 2), n, l), ``hierarchical``: each sub-mode a
    TMA dimension) gets the coordinate view of its own nested shape, each tiled sub-mode COORD_EXTENT apart: a tile
    past the end of a sub-mode (a grid rounded up to whole clusters) keeps its coordinates instead of aliasing
    onto the next sub-mode's rows. Other tensors are their own TMA tensor (a mode narrower than its tile is a
    partial tile, as a K of 32 under a K tile of 64)."""
    from ...tensor import Tensor

    n = len(shape)
    if not isinstance(gmem_tensor, Tensor):
        return gmem_tensor, None
    lshape = gmem_tensor.layout.shape
    flat = isinstance(lshape, tuple) and len(lshape) == n and not any(isinstance(e, tuple) for e in lshape)
    narrower = all(shape[i] < tiler[i] for i in range(len(tiler)))
    fshape = it.flatten_to_tuple(lshape)
    if hierarchical and isinstance(lshape, tuple) and _flat_strided(Layout._raw(fshape, it.flatten_to_tuple(
            gmem_tensor.layout.stride)), n) and all(shape[i] + 1024 <= COORD_EXTENT for i in range(len(tiler))):
        # each tiled sub-mode COORD_EXTENT long, but one that a single tile covers whole (a static extent no
        # larger than its tile: quack's 2 halves, flash_attn.cute's query heads per KV head) only its tile long:
        # its coordinate is always 0; untiled modes their own extent. When those spans do not fit in 63 bits,
        # the tensor is its own TMA tensor
        span = [int(tiler[i]) if i < len(tiler) and type(fshape[i]) is int and shape[i] <= tiler[i] else
                COORD_EXTENT if i < len(tiler) else max(1, int(shape[i])) for i in range(n)]
        if math.prod(span) < 1 << 62:
            vstride = [0] * n
            mul = 1
            for i in order:
                vstride[i] = mul
                mul *= span[i]
            decode = Layout._raw(tuple(span), tuple(vstride))
            nested = Layout._raw(lshape, it.unflatten(tuple(vstride), lshape))
            return Tensor(gmem_tensor.engine, nested, gmem_tensor.offset, _checked=True), decode
    if narrower and not flat:
        vshape = tuple(COORD_EXTENT if i < len(tiler) else shape[i] for i in range(n))
    elif (narrower and flat) or (
            all(isinstance(shape[i], int) for i in range(n)) and _flat_strided(gmem_tensor.layout, n) and
            all(shape[i] + 1024 <= COORD_EXTENT for i in range(len(tiler)))):
        # the TMA tensor is the coordinate view with the tensor's own shape (a dynamic extent stays dynamic),
        # as CuTe DSL's coordinate tensor: a kernel reads its extents off it (flash_attn.cute's SM90 forward
        # takes seqlen_q from the TMA tensor of Q, 128 rows under a 192-row tile). Each tiled mode is
        # COORD_EXTENT apart, so an offset keeps its coordinates: a tile can lie wholly past the end of a mode
        # (an epilogue's subtile past N when the CTA tile does not divide N), where the tensor's own offsets
        # would alias it onto the next row's elements, and TMA drops the box's elements past the extent.
        # A template narrower than its tile in every mode (a grouped GEMM's, dynamic as CUTLASS makes it)
        # keeps its tiles' coordinates through local_tile since its rest modes are dynamic. (Until
        # 2026-11-28 such a tensor's view had COORD_EXTENT-long modes: flash_attn.cute read 2^20 rows.)
        # (the atom decodes an offset into coordinates with each tiled mode COORD_EXTENT long: past the
        # tensor's extent too)
        # the tensor's own extents, DynInts where they are dynamic (shape holds their values): CuTe DSL's TMA tensor
        # of a tensor marked dynamic has dynamic extents, so a k-tile count read off it (cute.size(gA_mkl, mode=[3]))
        # bounds a runtime loop; with the values, every GEMM's mainloop was unrolled once per k-tile (CUTLASS's
        # dense_gemm_fp8_2xacc.py: 9,844 CUDA lines at K = 1024, 34,012 at 4096)
        keep = tuple(lshape)
        real = _compact_coords(keep, order, len(tiler))
        decode = Layout._raw(tuple(COORD_EXTENT if i < len(tiler) else shape[i] for i in range(n)), real.stride)
        return Tensor(gmem_tensor.engine, real, gmem_tensor.offset, _checked=True), decode
    else:
        return gmem_tensor, None
    vstride = [0] * n
    mul = 1
    for i in order:
        vstride[i] = mul
        mul *= vshape[i]
    lay = Layout._raw(vshape, tuple(vstride))
    return Tensor(gmem_tensor.engine, lay, gmem_tensor.offset, _checked=True), lay


class TmaTensor(Tensor):
    """The tensor make_tiled_tma_atom returns where it is a coordinate view (``_coordinate_view``):
    ``tma_dims`` is (its origin offset, the stride of each TMA dimension), which the launch gives the kernel's
    memory of it (kernel/frontend/tma_coords.py: its iterator there is its coordinates)."""

    __slots__ = ("tma_dims",)


def _tma_view(view: Any, modes: Tuple[int, ...], lshape: Any) -> Any:
    """The coordinate view as a kernel argument whose iterator in the kernel is its coordinates, one per TMA
    dimension (the descriptor's modes, innermost first, less static modes of extent 1, as CuTe DSL's)."""
    flat = it.flatten_to_tuple(view.layout.stride)
    dims = [m for m in modes if not (type(lshape[m]) is int and lshape[m] == 1)]
    if not all(type(flat[m]) is int for m in dims):
        return view
    out = TmaTensor(view.engine, view.layout, view.offset, _checked=True)
    out.tma_dims = (view.offset, tuple(int(flat[m]) for m in dims))
    return out


def _flat_strided(layout: Any, n: int) -> bool:
    """Whether layout has n flat modes, none of them a broadcast (stride 0): a coordinate view keeps its
    shape (nested or broadcast modes keep the tensor's own offsets)."""
    shp, st = layout.shape, layout.stride
    if not isinstance(shp, tuple) or len(shp) != n:
        return False
    return all(isinstance(e, int) for e in shp) and all(isinstance(x, int) and x != 0 for x in st)


def _compact_coords(vshape: Tuple[int, ...], order: Any, ntiled: int) -> Layout:
    """A coordinate view's layout of shape vshape: strides compact in the descriptor's dimension order
    (``order``), each of the first ``ntiled`` (tiled) modes taking COORD_EXTENT."""
    vstride = [0] * len(vshape)
    mul = 1
    for i in order:
        vstride[i] = mul
        mul *= COORD_EXTENT if i < ntiled else int(vshape[i])
    return Layout._raw(vshape, tuple(vstride))


def _unswizzled_row(outer: Layout, tile: tuple, inner: int, bits: int) -> int:
    """The elements of the tile's innermost mode that an unswizzled smem layout keeps contiguous from the tile's
    origin, as a power of two dividing that mode's extent and of at least 16 bytes (the extent itself when
    all of it is contiguous, or no narrower box would do)."""
    e = tile[inner]
    step = 1
    for x in tile[:inner]:
        step *= x
    offs = _offsets(outer, np.arange(e, dtype=np.int64) * step)
    run = e
    bad = np.nonzero(offs - offs[0] != np.arange(e))[0]
    if bad.size:
        run = int(bad[0])
    w = e
    while w > run and w % 2 == 0 and (w // 2) * bits >= 128:
        w //= 2
    return w if w <= run and not e % w else e


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


def prefetch_descriptor(atom: Any, *, loc: Any = None, ip: Any = None) -> None:
    """``prefetch.tensormap`` of the atom's descriptor in a kernel (kernel/instr/tensormap.py): a cache hint,
    with no effect on results."""
    if not isinstance(atom, TmaCopyAtom):
        raise LayoutError(f"prefetch_descriptor: expected a TMA atom, got {type(atom).__name__}")
    from ...tracing import instruction

    instruction("tensormap.prefetch", "cpasync.prefetch_descriptor")(atom)


# --------------------------------------------------------------------------- descriptors in memory
# A kernel may keep an atom's descriptor in memory and rewrite it (grouped GEMMs): kernel/instr/tensormap.py


def copy_tensormap(tma_atom: Any, tensormap_ptr: Any, *, loc: Any = None, ip: Any = None) -> None:
    """Copy the atom's descriptor into the 128 bytes at tensormap_ptr (global or shared memory)."""
    from ...tracing import instruction

    instruction("tensormap.copy", "cpasync.copy_tensormap")(tma_atom, tensormap_ptr)


def update_tma_descriptor(tma_atom: Any, gmem_tensor: Any, tma_desc_ptr: Any, *, loc: Any = None, ip: Any = None) -> None:
    """Give the descriptor at tma_desc_ptr gmem_tensor's address, extents and strides (the other
    fields, the atom's box and swizzle, stay)."""
    from ...tracing import instruction

    instruction("tensormap.update", "cpasync.update_tma_descriptor")(tma_atom, gmem_tensor, tma_desc_ptr)


def fence_tma_desc_acquire(tma_desc_ptr: Any, *, loc: Any = None, ip: Any = None) -> None:
    """``fence.proxy.tensormap::generic.acquire.gpu [p], 128``: later TMAs through p see its updates."""
    from ...tracing import instruction

    instruction("tensormap.acquire", "cpasync.fence_tma_desc_acquire")(tma_desc_ptr)


def fence_tma_desc_release(*, loc: Any = None, ip: Any = None) -> None:
    """``fence.proxy.tensormap::generic.release.gpu``: release the descriptor updates made so far."""
    from ...tracing import instruction

    instruction("tensormap.release", "cpasync.fence_tma_desc_release")()


def cp_fence_tma_desc_release(tma_desc_global_ptr: Any, tma_desc_shared_ptr: Any, *, loc: Any = None,
                              ip: Any = None) -> None:
    """Copy a descriptor from shared to global memory and release it (``tensormap.cp_fenceproxy``)."""
    from ...tracing import instruction

    instruction("tensormap.cp_release", "cpasync.cp_fence_tma_desc_release")(tma_desc_global_ptr, tma_desc_shared_ptr)
