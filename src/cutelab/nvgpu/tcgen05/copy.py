"""Tensor-memory copies: ``tcgen05.ld`` (TMEM -> registers) and ``tcgen05.st`` (registers -> TMEM),
as ``cute.nvgpu.tcgen05`` names them (Ld16x64bOp ... St32x32bOp), and ``make_tmem_copy``.

A warp moves a block of lanes x bits per repetition: 32 lanes x 32 bits (32x32b), or 16 lanes x
64, 128, 256 bits, or 16 lanes x 32 bits twice (16x32bx2). The TV layouts are CuTe's
(include/cute/atom/copy_traits_sm100.hpp), in bits, recast to the element type: the TMEM side
is the whole block for every thread (stride 0), the register side says which bits each thread
receives. ``Pack.PACK_16b_IN_32b`` (``Unpack.UNPACK_32b_IN_16b`` for stores) packs two 16-bit
TMEM values into one 32-bit register: the same TV layouts, a different TMEM footprint.

>>> import cutelab as cute
>>> print(cute.make_copy_atom(Ld32x32bOp(Repetition.x4), cute.Float32))
Copy Atom
  ThrID:         32:1
  TV Layout Src: (32,128):(0,1)
  TV Layout Dst: (32,4):(4,1)
  Value type:    f32
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...algebra import coalesce
from ...errors import LayoutError, TensorError
from ...layout import Layout
from ...numeric import Numeric, is_numeric_type
from ..universal_copy import CopyOp, _recast_bits, _reject
from .tmem import TmemEngine, tmem_dp_stride

__all__ = [
    "Repetition", "Pack", "Unpack", "TmemLoadRedOp", "Ld16x64bOp", "Ld16x128bOp", "Ld16x256bOp", "Ld16x32bx2Op",
    "Ld32x32bOp", "St16x64bOp", "St16x128bOp", "St16x256bOp", "St16x32bx2Op", "St32x32bOp", "make_tmem_copy",
    "is_tmem_load", "is_tmem_store", "get_tmem_copy_properties",
]


class _Enum(enum.Enum):
    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __repr__(self) -> str:
        return f"<{type(self).__name__}.{self.name}>"


class Repetition(_Enum):
    """How many times one instruction repeats its lanes x bits block along the columns."""

    x1 = 1
    x2 = 2
    x4 = 4
    x8 = 8
    x16 = 16
    x32 = 32
    x64 = 64
    x128 = 128


class Pack(_Enum):
    """Packing of TMEM -> register loads: none, or two 16-bit values into one 32-bit register."""

    NONE = enum.auto()
    PACK_16b_IN_32b = enum.auto()


class Unpack(_Enum):
    """Unpacking of register -> TMEM stores: none, or one 32-bit register into two 16-bit values."""

    NONE = enum.auto()
    UNPACK_32b_IN_16b = enum.auto()


class TmemLoadRedOp(_Enum):
    """The reductions a TMEM load may apply along its values."""

    MAX = "max"
    MAXABS = "maxabs"
    MIN = "min"
    MINABS = "minabs"


DP_B = 1 << 21  # one TMEM lane in bit addressing (65536 columns of 32 bits)


def _bits(shape: str, r: int, packed: bool) -> tuple:
    """(ValID, TMEM-side TV, register-side TV) of one op, in bits (CuTe's Copy_Traits)."""
    P = Layout._raw
    if shape == "32x32b":
        val = P(((16, 2 * r), 32), ((1, 32), DP_B)) if packed else P((32 * r, 32), (1, DP_B))
        return val, P((32, 1024 * r), (0, 1)), P((32, 32 * r), (32 * r, 1))
    lanes, b = 16, {"16x32bx2": 64, "16x64b": 64, "16x128b": 128, "16x256b": 256}[shape]
    val = P(((16, b * r // 16), lanes), ((1, 32), DP_B)) if packed else P((b * r, lanes), (1, DP_B))
    tm = P((32, 16 * b * r), (0, 1))
    if shape == "16x32bx2":
        reg = P(((16, 2), 32 * r), ((64 * r, 32 * r), 1))
    elif shape == "16x64b":
        reg = P(((2, 2, 8), 32), ((512, 32, 64), 1)) if r == 1 else \
            P(((2, 2, 8), (32, r)), ((512 * r, 32, 64 * r), (1, 64)))
    else:
        h = b // 4  # 32 (128b) or 64 (256b) bits per thread per half
        reg = P(((4, 8), (h, 2)), ((h, b), (1, 8 * b))) if r == 1 else \
            P(((4, 8), (h, 2, r)), ((h, b * r), (1, 8 * b * r, b)))
    return val, tm, reg


@dataclass(frozen=True)
class _TmemCopyOp(CopyOp):
    """Fields, checks and layouts shared by the TMEM loads and stores."""

    repeat: Repetition = Repetition.x1
    _SHAPE = ""  # "16x64b", ...
    _MAX_REP = 128
    _LOAD = True

    def __post_init__(self) -> None:
        if not isinstance(self.repeat, Repetition):
            raise ValueError(f"{type(self).__name__}: expects the 'repeat' Op parameter to be a tcgen05.Repetition instance")
        if self.repeat.value > self._MAX_REP:
            bad = [f"x{v}" for v in (64, 128) if v > self._MAX_REP]
            raise ValueError(f"{type(self).__name__}({self.repeat}): {' and '.join(bad)} repetition is not supported")

    @property
    def _packed(self) -> bool:  # pragma: no cover - overridden
        return False

    def _atom_layouts(self, value_type: Numeric, **kwargs: Any) -> dict:
        _reject(self, kwargs, ())
        if not is_numeric_type(value_type):
            raise TypeError(f"make_copy_atom({self!r}, {value_type!r}): the value type must be a cutelab element type")
        _, tm, reg = _bits(self._SHAPE, self.repeat.value, self._packed)
        tm, reg = _recast_bits(value_type, tm), _recast_bits(value_type, reg)
        src, dst = (tm, reg) if self._LOAD else (reg, tm)
        return {"thr_id": Layout._raw(32, 1), "src": src, "dst": dst, "ref": tm, "num_bits_per_copy": None}

    def _val_id(self, value_type: Numeric) -> Layout:
        """The atom's values -> TMEM addresses of value_type (CuTe: coalesce(upcast<bits>(ValID)))."""
        val, _, _ = _bits(self._SHAPE, self.repeat.value, self._packed)
        return coalesce(_upcast(val, value_type.width))


def _upcast(layout: Layout, n: int) -> Layout:
    """CuTe's upcast<N>: each mode of stride d keeps ceil(shape / ceil(N/|d|)) elements, stride ceil(|d|/N)."""
    def leaf(s: Any, d: Any) -> tuple:
        if isinstance(s, tuple):
            out = [leaf(a, b) for a, b in zip(s, d)]
            return tuple(x[0] for x in out), tuple(x[1] for x in out)
        if d == 0:
            return s, 0
        a = abs(d)
        return -(-s // -(-n // a)), (1 if d > 0 else -1) * -(-a // n)

    sh, st = leaf(layout.shape, layout.stride)
    return Layout._raw(sh, st)


def _ld_str(self: Any) -> str:
    s = f"tcgen05 {type(self).__name__[:-2]} Copy Operation\n  number of repetitions = {self.repeat.value}"
    if self.pack is Pack.PACK_16b_IN_32b:
        s += "\n  with 2x 16-bit to 32b packing"
    return s


def _st_str(self: Any) -> str:
    s = f"tcgen05 {type(self).__name__[:-2]} Copy Operation\n  number of repetitions = {self.repeat.value}"
    if self.unpack is Unpack.UNPACK_32b_IN_16b:
        s += "\n  with 32-bit to 2x 16b unpacking"
    return s


@dataclass(frozen=True)
class _LdBase(_TmemCopyOp):
    pack: Pack = Pack.NONE

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.pack, Pack):
            raise ValueError(f"{type(self).__name__}: expects the 'pack' Op parameter to be a tcgen05.Pack instance")

    @property
    def _packed(self) -> bool:
        return self.pack is Pack.PACK_16b_IN_32b

    __str__ = _ld_str


@dataclass(frozen=True)
class _StBase(_TmemCopyOp):
    unpack: Unpack = Unpack.NONE
    _LOAD = False

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.unpack, Unpack):
            raise ValueError(f"{type(self).__name__}: expects the 'unpack' Op parameter to be a tcgen05.Unpack instance")

    @property
    def _packed(self) -> bool:
        return self.unpack is Unpack.UNPACK_32b_IN_16b

    __str__ = _st_str


def _op(base: type, name: str, shape: str, max_rep: int, doc: str) -> type:
    cls = dataclass(frozen=True)(type(name, (base,), {"_SHAPE": shape, "_MAX_REP": max_rep, "__doc__": doc,
                                                      "__module__": __name__, "__str__": base.__str__}))
    return cls


Ld16x64bOp = _op(_LdBase, "Ld16x64bOp", "16x64b", 128, "``tcgen05.ld.16x64b``: 16 lanes x 64 bits per repetition.")
Ld16x128bOp = _op(_LdBase, "Ld16x128bOp", "16x128b", 64, "``tcgen05.ld.16x128b``: 16 lanes x 128 bits (up to x64).")
Ld16x256bOp = _op(_LdBase, "Ld16x256bOp", "16x256b", 32, "``tcgen05.ld.16x256b``: 16 lanes x 256 bits (up to x32).")
Ld16x32bx2Op = _op(_LdBase, "Ld16x32bx2Op", "16x32bx2", 128, "``tcgen05.ld.16x32bx2``: 16 lanes x 32 bits, twice.")
Ld32x32bOp = _op(_LdBase, "Ld32x32bOp", "32x32b", 128, "``tcgen05.ld.32x32b``: 32 lanes x 32 bits per repetition.")
St16x64bOp = _op(_StBase, "St16x64bOp", "16x64b", 128, "``tcgen05.st.16x64b``: 16 lanes x 64 bits per repetition.")
St16x128bOp = _op(_StBase, "St16x128bOp", "16x128b", 64, "``tcgen05.st.16x128b``: 16 lanes x 128 bits (up to x64).")
St16x256bOp = _op(_StBase, "St16x256bOp", "16x256b", 32, "``tcgen05.st.16x256b``: 16 lanes x 256 bits (up to x32).")
St16x32bx2Op = _op(_StBase, "St16x32bx2Op", "16x32bx2", 128, "``tcgen05.st.16x32bx2``: 16 lanes x 32 bits, twice.")
St32x32bOp = _op(_StBase, "St32x32bOp", "32x32b", 128, "``tcgen05.st.32x32b``: 32 lanes x 32 bits per repetition.")

_PROPS = {"16x64b": (16, 64), "16x128b": (16, 128), "16x256b": (16, 256), "16x32bx2": (16, 32), "32x32b": (32, 32)}


def is_tmem_load(atom: Any) -> bool:
    """Whether a copy atom is a TMEM load (tcgen05.ld)."""
    return isinstance(getattr(atom, "op", None), _LdBase)


def is_tmem_store(atom: Any) -> bool:
    """Whether a copy atom is a TMEM store (tcgen05.st)."""
    return isinstance(getattr(atom, "op", None), _StBase)


def get_tmem_copy_properties(atom: Any) -> tuple:
    """(lanes, bits, repetitions, pack or unpack) of a TMEM copy atom."""
    op = getattr(atom, "op", None)
    if not isinstance(op, _TmemCopyOp):
        raise ValueError(f"expects 'atom' to be a TMEM copy, but got {atom}")
    dp, bits = _PROPS[op._SHAPE]
    return dp, bits, op.repeat.value, op.pack if isinstance(op, _LdBase) else op.unpack


def make_tmem_copy(atom: Any, tmem_tensor: Any) -> Any:
    """A tiled copy of a TMEM copy atom over a TMEM tensor: the four warps of a warpgroup, each in
    its own lane quarter (sub-partition) of TMEM, as CuTe's make_tmem_copy (a co-tiled copy of
    (32,4):(0,32 lanes) threads x the atom's TMEM addresses over the tensor's layout).

    >>> import cutelab as cute
    >>> from cutelab.nvgpu import tcgen05
    >>> t = cute.make_tensor(tcgen05.TmemEngine(cute.Float32), cute.make_layout((128, 128), stride=(65536, 1)))
    >>> tc = make_tmem_copy(cute.make_copy_atom(Ld32x32bOp(Repetition.x4), cute.Float32), t)
    >>> print(tc.tiler_mn, tc.layout_tv_tiled)
    ((4,32):(32,1), 4:1) ((32,4),(4,32)):((0,1),(128,4))
    """
    from ..copy_atom import CopyAtom, make_cotiled_copy
    from ...tensor import Tensor

    if not isinstance(atom, CopyAtom) or not isinstance(atom.op, _TmemCopyOp):
        raise TensorError(f"tcgen05.make_tmem_copy: expected a copy atom of a TMEM load or store op, got {atom!r}")
    if not isinstance(tmem_tensor, Tensor) or not isinstance(tmem_tensor.engine, TmemEngine):
        raise TensorError(f"tcgen05.make_tmem_copy({type(atom.op).__name__}): expected a tensor-memory tensor "
                          f"(a tiled UMMA's make_fragment_C), got {tmem_tensor}")
    t = tmem_tensor.element_type
    if t.width != atom.value_type.width:
        raise TensorError(f"tcgen05.make_tmem_copy: the atom moves {atom.value_type.width}-bit values but the TMEM "
                          f"tensor holds {t} ({t.width} bits); expected a copy atom with the same type width")
    thr = Layout._raw((32, 4), (0, 32 * tmem_dp_stride(t)))
    val = atom.op._val_id(t)
    tv = Layout._raw((thr.shape, val.shape), (thr.stride, val.stride))
    # every TMEM address one warp's atom touches must be an element of the tensor (CuTe DSL checks this in
    # coordinates; co-tiling alone would extrapolate past the tensor's last column). Warps whose lane
    # quarter the tensor does not reach repeat the others (stride 0), as in CuTe.
    have = np.unique(tmem_tensor.layout.offsets())
    want = np.unique(val.offsets())
    missing = np.setdiff1d(want, have)
    if missing.size:
        a = int(missing[0])
        dp = tmem_dp_stride(t)
        raise TensorError(
            f"tcgen05.make_tmem_copy({type(atom.op).__name__}({atom.op.repeat}), {tmem_tensor}): expects the memory "
            f"pointed to by atom tv layout exists in the data layout; the atom reaches lane {a // dp}, column "
            f"{a % dp} (in {t} units), which the tensor does not hold ({missing.size} addresses outside it): use a "
            f"smaller repetition or a wider TMEM tile"
        )
    try:
        return make_cotiled_copy(atom, tv, tmem_tensor.layout)
    except LayoutError as e:
        raise TensorError(f"tcgen05.make_tmem_copy({type(atom.op).__name__}, {tmem_tensor}): the warps' TMEM "
                          f"accesses do not fit the tensor's layout ({e})") from None
