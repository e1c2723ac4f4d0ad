"""``cutlass.experimental.cuda``'s tensor maps (CuTe DSL 4.8.1): TMA descriptors a ``@cute.jit``
function builds from a tensor's address, dimensions and 16-byte-unit strides, passes to a kernel as
``cutlass.GridConstant[cuda.TensorMap]``, and the kernel hands to the TMA primitives
(``prims.cp_async_bulk_tensor_shared_cta_global`` and ``..._global_shared_cta``) through
``desc.get_ptr()``.

- ``create_tensor_map_tiled(global_address=t.iterator.toint(), dtype, global_dims, global_strides,
  box_dims, swizzle=...)``: innermost dimension first; the address must be the start of a tensor
  argument of the jit function (``t.iterator.toint()``): cutelab encodes the map at launch from that
  tensor's address, as for ``make_tiled_tma_atom``. ``create_tensor_map_tiled_from_view(t, box_dims)``
  reads them off a tensor with a flat layout.
- A ``TensorMap`` is a dataclass holding that tensor, so a launch passes the tensor as the kernel's
  storage (kernel/launch/args.py walks dataclass fields); in the kernel its ``get_ptr()`` is a
  ``TensorMapPointer`` that the primitives take (kernel/instr/tma_map.py has the ops).
- Formats: the byte-addressed ones (``DEFAULT`` of 8/16/32/64-bit types, ``BYTE``, ``F32_FTZ``,
  ``TF32_FTZ``). The packed sub-byte formats (``B4X16``, ``B4X16_P64``, ``B6X16_P32``: SM100) and
  interleaved, strided-traversal or NaN-filling maps are refused by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, IntEnum, auto
from typing import Any, Sequence, Tuple

from ...errors import TraceError
from ..where import NotEmulatedError, user_line

__all__ = ["TensorMap", "TensorMapPointer", "TensorMapWords", "TensorMapDataFormat", "TensorMapDataType",
           "TensorMapSwizzle",
           "TensorMapInterleave", "TensorMapL2Promotion", "TensorMapFloatOOBFill", "create_tensor_map_tiled",
           "create_tensor_map_tiled_from_view", "namespace"]


class TensorMapDataType(IntEnum):
    """CUtensorMapDataType."""

    uint8 = 0
    uint16 = 1
    uint32 = 2
    int32 = 3
    uint64 = 4
    int64 = 5
    float16 = 6
    float32 = 7
    float64 = 8
    bfloat16 = 9
    float32_ftz = 10
    tfloat32 = 11
    tfloat32_ftz = 12
    f416u4_align8b = 13
    f416u4_align16b = 14
    f416u6_align16b = 15

    def __str__(self) -> str:
        return self.name


class TensorMapDataFormat(Enum):
    """The transfer format a consumer sees (CuTe DSL's TensorMapDataFormat)."""

    DEFAULT = auto()
    BYTE = auto()
    F32_FTZ = auto()
    TF32_FTZ = auto()
    B4X16 = auto()
    B4X16_P64 = auto()
    B6X16_P32 = auto()

    def __str__(self) -> str:
        return self.name.lower()


class TensorMapSwizzle(IntEnum):
    none = 0
    s32b = 1
    s64b = 2
    s128b = 3
    s128b_atom_32b = 4
    s128b_atom_32b_flip_8b = 5
    s128b_atom_64b = 6

    def __str__(self) -> str:
        return self.name


class TensorMapInterleave(IntEnum):
    none = 0
    i16b = 1
    i32b = 2

    def __str__(self) -> str:
        return self.name


class TensorMapL2Promotion(IntEnum):
    none = 0
    l2_64b = 1
    l2_128b = 2
    l2_256b = 3

    def __str__(self) -> str:
        return self.name


class TensorMapFloatOOBFill(IntEnum):
    none = 0
    nan_request_zero_fma = 1

    def __str__(self) -> str:
        return self.name


_SUBBYTE = (TensorMapDataFormat.B4X16, TensorMapDataFormat.B4X16_P64, TensorMapDataFormat.B6X16_P32)


def _encoding_dtype(dtype: Any, fmt: TensorMapDataFormat, what: str) -> Any:
    """The cutelab element type TMA moves for (dtype, format): what the descriptor is encoded with
    (8-bit types are bytes to TMA)."""
    from ... import numeric as n

    if fmt in _SUBBYTE:
        raise NotEmulatedError(f"{what}(tma_format={fmt})", "the packed sub-byte TMA formats (SM100) are not in "
                               "cutelab", where=user_line(3))
    w = getattr(dtype, "width", None)
    name = getattr(dtype, "name", None)
    if fmt is TensorMapDataFormat.BYTE or w == 8:
        if w is None or w % 8:
            raise TraceError(f"{what}: {dtype} is not a whole number of bytes")
        return n.Uint8
    if fmt is TensorMapDataFormat.F32_FTZ:
        return n.Float32
    if fmt is TensorMapDataFormat.TF32_FTZ:
        return n.TFloat32
    table = {"f16": n.Float16, "bf16": n.BFloat16, "f32": n.Float32, "f64": n.Float64, "tf32": n.TFloat32,
             "i16": n.Uint16, "u16": n.Uint16, "i32": n.Int32, "u32": n.Uint32, "i64": n.Int64, "u64": n.Uint64}
    if name not in table:
        raise TraceError(f"{what}: TMA has no format for {dtype}")
    return table[name]


def _static(x: Any, what: str, arg: str) -> int:
    v = getattr(x, "value", x)
    try:
        return int(v)
    except (TypeError, ValueError):
        raise TraceError(f"{what}: {arg} must be a number known when the jit function runs, got {x!r}") from None


@dataclass(frozen=True, eq=False)
class TensorMap:
    """A tiled TMA descriptor (CuTe DSL's ``cutlass.experimental.cuda.TensorMap``): ``tensor`` is the
    memory it describes (the jit function's tensor argument; in a kernel, that kernel argument), ``desc``
    cutelab's TmaDescriptor of it (innermost dimension first, byte strides), the rest CuTe DSL's
    metadata."""

    tensor: Any
    desc: Any
    swizzle: Any = TensorMapSwizzle.none
    dtype: Any = None
    tma_format: Any = TensorMapDataFormat.DEFAULT
    box_dims: Tuple[int, ...] = ()

    @property
    def element_type(self) -> Any:
        return self.dtype

    @property
    def box_volume(self) -> int:
        out = 1
        for b in self.box_dims:
            out *= int(b)
        return out

    @property
    def shared_storage_dtype(self) -> Any:
        from ...numeric import Uint8

        return Uint8 if self.tma_format is TensorMapDataFormat.BYTE else self.dtype

    @property
    def shared_storage_bytes(self) -> int:
        return self.box_volume * self.shared_storage_dtype.width // 8

    def global_tx_bytes(self) -> int:
        """Bytes one copy of the box moves (what ``mbarrier_arrive_expect_tx`` expects)."""
        return self.box_volume * self.dtype.width // 8

    def get_ptr(self, *, loc: Any = None, ip: Any = None) -> "TensorMapPointer":
        return TensorMapPointer(self)

    def __repr__(self) -> str:
        return f"TensorMap({self.desc})"


class TensorMapPointer:
    """``TensorMap.get_ptr()``: what the TMA primitives take as their descriptor."""

    def __init__(self, tmap: TensorMap):
        self.tmap = tmap

    def __repr__(self) -> str:
        return f"<pointer to {self.tmap!r}>"

    def cutlass_pointer(self, dtype: Any) -> "TensorMapWords":
        """``cutlass.Pointer(self, dtype=...)`` (memory.Pointer asks it, so that memory.py need not import this
        module, which imports memory's Array)."""
        return tensor_map_words(self, dtype)


class TensorMapWords:
    """``cutlass.Pointer(tmap.get_ptr(), dtype=cutlass.Int64)``: the tensor map kernel parameter's 16
    64-bit words, read one at a time (``(p + i).load()``, ``p[i]``) to copy the descriptor into memory
    (kernel/instr/tensormap_fields.py). The parameter is read-only (``__grid_constant__``)."""

    def __init__(self, tmap: TensorMap, word: int = 0):
        self.tmap, self.word = tmap, word

    @property
    def dtype(self) -> Any:
        from ...numeric import Int64

        return Int64

    def __add__(self, k: Any) -> "TensorMapWords":
        v = getattr(k, "value", k)
        if isinstance(v, bool) or not isinstance(v, int):
            raise TraceError(f"cutlass.Pointer of a tensor map + {k!r}: the word index must be a compile-time int")
        return TensorMapWords(self.tmap, self.word + v)

    __radd__ = __add__

    def load(self, *, count: Any = None, alignment: Any = None, loc: Any = None, ip: Any = None, **kw: Any) -> Any:
        from ...kernel.instr.tensormap_fields import tensormap_word

        if count is not None:
            raise NotEmulatedError("cutlass.Pointer(<tensor map>).load(count=...)", "cutelab reads a tensor map's "
                                   "words one at a time", where=user_line(2))
        return tensormap_word(self.tmap, self.word, "cutlass.Pointer(<tensor map>).load")

    def __getitem__(self, i: Any) -> Any:
        return (self + i).load()

    def store(self, *a: Any, **k: Any) -> None:
        raise TraceError("cutlass.Pointer(<tensor map>).store: the tensor map is a __grid_constant__ kernel "
                         "parameter, which a kernel cannot write; copy it into memory and patch the copy")

    __setitem__ = store

    def __repr__(self) -> str:
        return f"cutlass.Pointer(<words of {self.tmap!r}> + {self.word})"


def tensor_map_words(ptr: Any, dtype: Any) -> TensorMapWords:
    """cutlass.Pointer of a TensorMapPointer: its words, of a 64-bit integer type."""
    if dtype is not None and (getattr(dtype, "width", None) != 64 or not getattr(dtype, "is_integer", False)):
        raise NotEmulatedError(f"cutlass.Pointer(<tensor map>, dtype={dtype})", "cutelab reads a tensor map as "
                               "64-bit words (dtype=cutlass.Int64 or Uint64)", where=user_line(3))
    return TensorMapWords(ptr.tmap)


def _tensor_of_address(address: Any, what: str) -> Any:
    """The tensor argument whose start ``address`` (``t.iterator.toint()``) is, as a 1-D tensor over
    its whole storage."""
    from ...address import PointerInt
    from ...layout import make_layout
    from ...tensor import Tensor

    if not isinstance(address, PointerInt):
        raise NotEmulatedError(f"{what}(global_address={address!r})", "cutelab builds a tensor map over a tensor "
                               "argument of the jit function: pass tensor.iterator.toint()", where=user_line(3))
    ptr = address.ptr
    eng = ptr.engine
    off = getattr(ptr.offset, "value", ptr.offset)
    delta = getattr(address.delta, "value", address.delta)
    if not isinstance(off, int) or not isinstance(delta, int) or off * eng.dtype.bytes + delta != 0:
        raise NotEmulatedError(f"{what}(global_address=<tensor address + offset>)", "cutelab's tensor maps start at "
                               "the start of the tensor's memory", where=user_line(3))
    if str(getattr(eng, "memspace", "gmem")) not in ("gmem", "generic"):
        raise TraceError(f"{what}: the address is in {eng.memspace} memory; a tensor map describes global memory")
    return Tensor(eng, make_layout(len(eng)), 0)


def create_tensor_map_tiled(global_address: Any, dtype: Any, global_dims: Sequence[Any],
                            global_strides: Sequence[Any], box_dims: Sequence[Any], *,
                            traversal_strides: Any = None, interleave: Any = None, swizzle: Any = None,
                            l2_promotion: Any = None, oob_fill: Any = None, tma_format: Any = None,
                            loc: Any = None, ip: Any = None) -> TensorMap:
    """A tiled tensor map: ``global_dims`` innermost first, ``global_strides`` (rank - 1 of them) in
    16-byte units, ``box_dims`` in the same order."""
    from ...nvgpu.cpasync.tma import TmaDescriptor

    what = "cutlass.experimental.cuda.create_tensor_map_tiled"
    rank = len(global_dims)
    if not 1 <= rank <= 5:
        raise ValueError(f"{what}: expected tensor rank to be between 1 and 5, got {rank}")
    if len(box_dims) != rank:
        raise ValueError(f"{what}: expected box_dims rank to match rank(global_dims) (={rank}), got {len(box_dims)}")
    if len(global_strides) != rank - 1:
        raise ValueError(f"{what}: expected rank(global_strides) to match rank(global_dims) - 1 (={rank - 1}), got "
                         f"{len(global_strides)}")
    if isinstance(tma_format, TensorMapDataType):
        raise NotEmulatedError(f"{what}(tma_format=TensorMapDataType.{tma_format.name})", "pass a "
                               "TensorMapDataFormat (the DSL's legacy data-type form is not in cutelab)",
                               where=user_line(2))
    fmt = TensorMapDataFormat(tma_format) if tma_format is not None else (
        TensorMapDataFormat.BYTE if getattr(dtype, "width", 0) == 8 else TensorMapDataFormat.DEFAULT)
    if swizzle is not None and not isinstance(swizzle, TensorMapSwizzle) and hasattr(swizzle, "bbits"):
        swizzle = TensorMapSwizzle(swizzle.bbits)  # a cutlass.Swizzle preset (s32b/s64b/s128b)
    sw = TensorMapSwizzle(swizzle if swizzle is not None else 0)
    for arg, v, ok in (("interleave", interleave, (None, TensorMapInterleave.none)),
                       ("oob_fill", oob_fill, (None, TensorMapFloatOOBFill.none))):
        if v not in ok:
            raise NotEmulatedError(f"{what}({arg}={v})", "cutelab's tensor maps are not interleaved and fill zeros",
                                   where=user_line(2))
    if sw > TensorMapSwizzle.s128b:
        raise NotEmulatedError(f"{what}(swizzle={sw})", "cutelab's TMA has the 32-, 64- and 128-byte swizzles",
                               where=user_line(2))
    if traversal_strides is not None and any(_static(s, what, "traversal_strides") != 1 for s in traversal_strides):
        raise NotEmulatedError(f"{what}(traversal_strides={tuple(traversal_strides)})", "cutelab's TMA boxes "
                               "are dense (traversal strides of 1)", where=user_line(2))
    enc = _encoding_dtype(dtype, fmt, what)
    eb = enc.width // 8
    dims = tuple(_static(d, what, "global_dims") for d in global_dims)
    box = tuple(_static(b, what, "box_dims") for b in box_dims)
    strides = (eb,) + tuple(16 * _static(s, what, "global_strides") for s in global_strides)
    for k in range(rank):
        if not 1 <= box[k] <= 256:
            raise ValueError(f"{what}: box_dims[{k}] = {box[k]}; TMA boxes are 1 to 256 elements per dimension")
        if dims[k] < 1:
            raise ValueError(f"{what}: global_dims[{k}] = {dims[k]} must be positive")
    if (box[0] * eb) % 16:
        raise ValueError(f"{what}: the box's inner dimension is {box[0] * eb} bytes; TMA needs a multiple of 16")
    span = {1: 32, 2: 64, 3: 128}.get(int(sw))
    if span and box[0] * eb > span:
        raise ValueError(f"{what}: TensorMap swizzle {sw} requires the bounding-box inner dimension to be at most "
                         f"{span}B, got {box[0] * eb}B")
    tensor = _tensor_of_address(global_address, what)
    from ...kernel.launch.fakes import tracing_stand_ins

    need = sum((dims[k] - 1) * strides[k] for k in range(rank)) + eb
    have = len(tensor.engine) * tensor.engine.dtype.bytes
    if need > have and not tracing_stand_ins():  # (cute.compile's stand-ins for fake tensors are small)
        raise TraceError(f"{what}: a tensor of dims {dims} with byte strides {strides} spans {need} bytes, but the "
                         f"tensor at global_address has {have}")
    desc = TmaDescriptor(enc, dims, strides, box, int(sw), tuple(range(rank)))
    return TensorMap(tensor, desc, sw, dtype, fmt, box)


def create_tensor_map_tiled_from_view(tensor: Any, box_dims: Sequence[Any], *, stride_order: Any = None,
                                      interleave: Any = None, swizzle: Any = None, l2_promotion: Any = None,
                                      oob_fill: Any = None, dtype: Any = None, tma_format: Any = None,
                                      loc: Any = None, ip: Any = None) -> TensorMap:
    """create_tensor_map_tiled with the dimensions, strides and address of ``tensor`` (a flat layout;
    ``box_dims`` in the tensor's mode order); the map's dimensions go innermost (smallest stride) first,
    or in ``stride_order``."""
    from ... import int_tuple as it
    from .memory import Array

    what = "cutlass.experimental.cuda.create_tensor_map_tiled_from_view"
    if isinstance(tensor, Array):
        shape, stride, et, addr = tuple(tensor.shape), tuple(tensor.strides), tensor.dtype, tensor.iterator.toint()
    elif hasattr(tensor, "layout") and hasattr(tensor, "iterator"):
        shape, stride = tensor.shape, tensor.stride
        if not isinstance(shape, tuple) or it.depth(shape) > 1 or it.depth(stride) > 1:
            raise ValueError(f"{what}: expected tensor to have flattened layout, got {tensor.layout}")
        et, addr = tensor.element_type, tensor.iterator.toint()
    else:
        raise TypeError(f"{what} needs a cute.Tensor or a cutlass.Array, got {type(tensor).__qualname__}")
    shape = tuple(_static(s, what, "the tensor's shape") for s in shape)
    stride = tuple(_static(s, what, "the tensor's stride") for s in stride)
    rank = len(shape)
    if len(box_dims) != rank:
        raise ValueError(f"{what}: box_dims has {len(box_dims)} entries for a tensor of rank {rank}")
    if stride_order is not None:
        order = list(stride_order)
    else:
        if len(set(stride)) < rank:
            raise ValueError(f"{what}: cannot infer a unique stride order from tensor strides {list(stride)} due to "
                             f"duplicate strides. Please provide `stride_order` explicitly.")
        order = sorted(range(rank), key=lambda i: stride[i])
    if stride[order[0]] != 1:
        raise ValueError(f"{what}: expected tensor to have a leading (stride-1) dimension, got strides {stride}")
    dt = dtype if dtype is not None else et
    bits = [stride[order[j]] * dt.width for j in range(1, rank)]
    if any(b % 128 for b in bits):
        raise ValueError(f"{what}: the tensor's strides {stride} are not multiples of 16 bytes, as TMA needs")
    return create_tensor_map_tiled(
        addr, dt, [shape[order[j]] for j in range(rank)], [b // 128 for b in bits],
        [box_dims[order[j]] for j in range(rank)],
        interleave=interleave, swizzle=swizzle, l2_promotion=l2_promotion, oob_fill=oob_fill, tma_format=tma_format)


def namespace() -> dict:
    """The names of ``cutlass.experimental.cuda``."""
    from ..where import refuse

    out = {n: globals()[n] for n in __all__ if n != "namespace"}
    out["initialize_cuda_context"] = refuse("cutlass.experimental.cuda.initialize_cuda_context",
                                            "not in cutelab's tensor-map module")
    return out
