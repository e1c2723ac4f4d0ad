"""TMA's descriptor and atoms (cutelab.nvgpu.cpasync.tma makes them): the copy operations, what
cuTensorMapEncodeTiled needs (``TmaDescriptor``: dimensions, byte strides, box, swizzle, and where TMA places
the box in shared memory), the copy atom and ``TmaInfo``, and the smem layout's swizzle as TMA reads it.
cutelab.nvgpu.cpasync.tma re-exports every name here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Tuple

import numpy as np

from ... import int_tuple as it
from ...errors import LayoutError
from ...layout import Layout

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


def _offsets(layout: Layout, idx: np.ndarray) -> np.ndarray:
    from ...layout import evaluate_all

    allv = np.asarray(evaluate_all(layout), dtype=np.int64).reshape(-1)
    return allv[idx]
