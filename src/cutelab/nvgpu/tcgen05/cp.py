"""Shared memory -> tensor memory copies (``tcgen05.cp``), as ``cute.nvgpu.tcgen05`` names them:
``Cp128x256bOp``, ``Cp128x128bOp``, ``Cp4x256bOp``, ``Cp4x32x128bOp`` (32 lanes x 128 bits
broadcast to the four lane quarters, ``.warpx4``), ``Cp2x64x128b0213Op`` and
``Cp2x64x128b0123Op`` (64 lanes x 128 bits, ``.warpx2::02_13`` / ``::01_23``); ``make_s2t_copy``
and ``get_s2t_smem_desc_tensor``. Block-scaled UMMAs read their scale factors from tensor memory;
kernels put them there with these copies.

One thread issues a ``tcgen05.cp`` for its CTA (or for the CTA pair): the atom's one "thread" is
the CTA, as for UMMA. Its values are CuTe's ValID (include/cute/atom/copy_traits_sm100.hpp): bit
index -> TMEM bit address, in the order (core-matrix rows, core-matrix bits, broadcast[, repeat]),
recast to the element type. The shared-memory side reads one core matrix per broadcast, so its
broadcast mode has stride 0.

>>> import cutelab as cute
>>> print(cute.make_copy_atom(Cp4x32x128bOp(CtaGroup.ONE), cute.Float8E4M3FN))
Copy Atom
  ThrID:         1:0
  TV Layout Src: (1,(4,128,4)):(0,(1,4,0))
  TV Layout Dst: (1,2048):(0,1)
  Value type:    f8E4M3FN
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import int_tuple as it
from ...algebra import coalesce, filter_zeros, recast_layout
from ...errors import LayoutError, TensorError
from ...layout import Layout
from ...numeric import Numeric, is_numeric_type
from ...tensor import Tensor
from ..universal_copy import CopyOp, _recast_bits, _reject
from .copy import DP_B, _upcast
from .mma import CtaGroup
from .tmem import TmemEngine

__all__ = ["Cp128x256bOp", "Cp128x128bOp", "Cp4x256bOp", "Cp4x32x128bOp", "Cp2x64x128b0213Op", "Cp2x64x128b0123Op",
           "make_s2t_copy", "get_s2t_smem_desc_tensor", "append_s2t_broadcast_mode", "S2TDescEngine"]


def _val_id(name: str) -> Layout:
    """CuTe's ValID of a tcgen05.cp: logical bit -> TMEM bit address (a lane is DP_B bits)."""
    P = Layout._raw
    return {
        "128x256b": P((128, 256), (DP_B, 1)),
        "128x128b": P((128, 128), (DP_B, 1)),
        "4x256b": P((128, 256), (DP_B, 1)),
        "4x32x128b": P((32, 128, 4), (DP_B, 1, 32 * DP_B)),
        "2x64x128b0213": P((64, 128, 2), (DP_B, 1, 64 * DP_B)),
        "2x64x128b0123": P((32, 128, 2, 2), (DP_B, 1, 64 * DP_B, 32 * DP_B)),
    }[name]


def _src_bits(name: str) -> Layout:
    """CuTe's SrcLayout (value part) of a tcgen05.cp, in bits: where the shared-memory bits go."""
    P = Layout._raw
    return {
        "128x256b": P(32768, 1),
        "128x128b": P(16384, 1),
        "4x256b": P((4, 256), (32, 128)),
        "4x32x128b": P((32, 128, 4), (1, 32, 0)),
        "2x64x128b0213": P((64, 128, 2), (1, 64, 0)),
        "2x64x128b0123": P((32, 128, 2, 2), (1, 32, 4096, 0)),
    }[name]


def _dst_bits(name: str) -> Layout:
    P = Layout._raw
    return P((4, 256), (32, 128)) if name == "4x256b" else P(16384 if "128b" in name and name != "128x256b" else 32768, 1)


@dataclass(frozen=True)
class _S2TCopyBase(CopyOp):
    """Fields and layouts shared by the tcgen05.cp ops."""

    cta_group: CtaGroup = CtaGroup.ONE
    _SHAPE = ""
    _BROADCAST = 1

    def __post_init__(self) -> None:
        if not isinstance(self.cta_group, CtaGroup):
            raise ValueError(f"tcgen05.{type(self).__name__}: expects the 'cta_group' Op parameter to be a "
                             f"tcgen05.CtaGroup instance, got {self.cta_group!r}")

    @property
    def broadcast_factor(self) -> int:
        """TMEM core matrices written per core matrix read from shared memory (4 for .warpx4, 2 for .warpx2)."""
        return self._BROADCAST

    def __str__(self) -> str:
        return f"tcgen05 {type(self).__name__[:-2]} Copy Operation\n  CTA group = {self.cta_group}"

    def _thr(self) -> Layout:
        return Layout._raw(1, 0) if self.cta_group is CtaGroup.ONE else Layout._raw(2, 1)

    def _atom_layouts(self, value_type: Numeric, **kwargs: Any) -> dict:
        _reject(self, kwargs, ())
        if not is_numeric_type(value_type):
            raise TypeError(f"make_copy_atom({self!r}, {value_type!r}): the value type must be a cutelab element type")
        n = self.cta_group.value
        src = _recast_bits(value_type, _src_bits(self._SHAPE))
        dst = _recast_bits(value_type, _dst_bits(self._SHAPE))

        def tv(v: Layout) -> Layout:
            return Layout._raw((n, v.shape), (0, v.stride))

        return {"thr_id": self._thr(), "src": tv(src), "dst": tv(dst), "ref": tv(dst), "num_bits_per_copy": None}

    def _val_id(self, value_type: Numeric) -> Layout:
        """The atom's values -> TMEM addresses in units of value_type (coalesce(upcast<bits>(ValID)))."""
        return coalesce(_upcast(_val_id(self._SHAPE), value_type.width))

    def _core_shape(self, value_type: Numeric) -> tuple:
        """(rows, elements) of one core matrix read from shared memory (the first two ValID modes)."""
        v = _upcast(_val_id(self._SHAPE), value_type.width)
        return tuple(v.shape[:2])


def _op(name: str, shape: str, bcast: int, doc: str) -> type:
    return dataclass(frozen=True)(type(name, (_S2TCopyBase,), {"_SHAPE": shape, "_BROADCAST": bcast, "__doc__": doc,
                                                               "__module__": __name__}))


Cp128x256bOp = _op("Cp128x256bOp", "128x256b", 1, "``tcgen05.cp.128x256b``: 128 lanes x 256 bits.")
Cp128x128bOp = _op("Cp128x128bOp", "128x128b", 1, "``tcgen05.cp.128x128b``: 128 lanes x 128 bits.")
Cp4x256bOp = _op("Cp4x256bOp", "4x256b", 1, "``tcgen05.cp.4x256b``: the last 4 lanes of each lane quarter, 256 bits.")
Cp4x32x128bOp = _op("Cp4x32x128bOp", "4x32x128b", 4,
                    "``tcgen05.cp.32x128b.warpx4``: 32 lanes x 128 bits, written to each of the four lane quarters.")
Cp2x64x128b0213Op = _op("Cp2x64x128b0213Op", "2x64x128b0213", 2,
                        "``tcgen05.cp.64x128b.warpx2::02_13``: 64 lanes x 128 bits, to lane quarters 0,2 and 1,3.")
Cp2x64x128b0123Op = _op("Cp2x64x128b0123Op", "2x64x128b0123", 2,
                        "``tcgen05.cp.64x128b.warpx2::01_23``: 64 lanes x 128 bits, to lane quarters 0,1 and 2,3.")


def _check_s2t_atom(atom: Any, what: str) -> None:
    from ..copy_atom import CopyAtom

    if not isinstance(atom, CopyAtom) or not isinstance(atom.op, _S2TCopyBase):
        raise TensorError(f"tcgen05.{what}: expected a copy atom of a tcgen05.cp op (Cp4x32x128bOp, ...), got {atom!r}")


def make_s2t_copy(atom: Any, tmem_tensor: Any) -> Any:
    """A tiled copy of a tcgen05.cp atom over a TMEM tensor (its zero-stride modes filtered out), as
    CuTe's make_utccp_copy: a co-tiled copy of (CTAs : 0) x the atom's TMEM addresses over the tensor.

    >>> import cutelab as cute
    >>> sf = cute.make_tensor(TmemEngine(cute.Float8E4M3FN), Layout.parse(  # nvfp4_gemm_0's tCtSFA, zeros filtered
    ...     "((((32,4),4),(1,4)),1,4):((((262144,4),8388608),(0,1)),0,16)"))
    >>> tc = make_s2t_copy(cute.make_copy_atom(Cp4x32x128bOp(CtaGroup.ONE), cute.Float8E4M3FN), sf)
    >>> print(tc.tiler_mn, tc.layout_tv_tiled)
    ((32,4,16):(1,512,32), 1:0, 1:0) (1,(32,(4,4),4)):(0,(1,(32,128),512))
    """
    from ..copy_atom import make_cotiled_copy

    _check_s2t_atom(atom, "make_s2t_copy")
    if not isinstance(tmem_tensor, Tensor) or not isinstance(tmem_tensor.engine, TmemEngine):
        raise TensorError(f"tcgen05.make_s2t_copy({type(atom.op).__name__}): expected a tensor-memory tensor, got "
                          f"{tmem_tensor}")
    t = tmem_tensor.element_type
    if t.width != atom.value_type.width:
        raise TensorError(f"tcgen05.make_s2t_copy: the atom copies {atom.value_type.width}-bit values but the TMEM "
                          f"tensor holds {t} ({t.width} bits)")
    layout = filter_zeros(tmem_tensor.layout)
    val = atom.op._val_id(t)
    n = atom.op.cta_group.value
    tv = Layout._raw((n, val.shape), (0, val.stride))
    try:
        return make_cotiled_copy(atom, tv, layout)
    except LayoutError as e:
        raise TensorError(f"tcgen05.make_s2t_copy({type(atom.op).__name__}, {tmem_tensor}): the copy's TMEM "
                          f"addresses are not all in the tensor ({e})") from None


def append_s2t_broadcast_mode(op: Any, smem_tensor: Any) -> Any:
    """The shared-memory operand of a broadcasting tcgen05.cp with the broadcast made explicit:
    mode 0's MN part ((MN, K) first mode) gains a zero-stride mode of op.broadcast_factor."""
    if not isinstance(op, _S2TCopyBase):
        raise ValueError(f"expects 'op' to be an SMEM to TMEM copy Operation, but got {type(op)}")
    if op.broadcast_factor == 1:
        return smem_tensor
    lay = smem_tensor.layout
    shp, std = lay.shape, lay.stride
    if not isinstance(shp, tuple) or len(shp) < 2 or not isinstance(shp[0], tuple) or len(shp[0]) != 2:
        raise ValueError("expects the SMEM operand of a broadcasting SMEM to TMEM copy to have a hierarchical "
                         f"(MN, K) mode 0 followed by at least one further mode, but got {lay}")

    def app(s: Any, d: Any) -> tuple:
        s = s if isinstance(s, tuple) else (s,)
        d = d if isinstance(d, tuple) else (d,)
        return s + (op.broadcast_factor,), d + (0,)

    mn_s, mn_d = app(shp[0][0], std[0][0])
    new = Layout._raw(((mn_s, shp[0][1]),) + tuple(shp[1:]), ((mn_d, std[0][1]),) + tuple(std[1:]))
    return Tensor(smem_tensor.engine, new, smem_tensor.offset, _checked=True)


class S2TDescEngine:
    """The engine of get_s2t_smem_desc_tensor: shared-memory descriptors of the core matrices a
    tcgen05.cp reads. Each element stands for one core matrix (one copy atom's shared-memory
    values); the layout steps through them in 16-byte units. ``smem`` is the partitioned
    shared-memory tensor the descriptors point into (its mode 0: one atom's values)."""

    memspace = "smem_desc"
    dtype = None

    def __init__(self, smem: Tensor, op: Any):
        self.smem, self.op = smem, op

    def ptr_str(self, offset: Any) -> str:
        return f"smem_desc({self.smem.engine.ptr_str(self.smem.offset)})"

    raw_ptr_str = ptr_str

    def _no_data(self, *a: Any) -> Any:
        raise TensorError("a tensor of tcgen05.cp shared-memory descriptors is read by cute.copy with its S2T tiled "
                          "copy, not loaded")

    load = store = read_one = write_one = _no_data


def get_s2t_smem_desc_tensor(atom: Any, smem_tensor: Any) -> Tensor:
    """The shared-memory descriptors a tcgen05.cp reads, over a partition_S of a shared-memory tensor
    (mode 0: one atom's values, ((ATOM_V, REST_V), ...)): the layout is the partition's, recast from
    the element type to 128-bit units (CuTe's get_utccp_smem_desc_tensor). Mode 0 must be static and
    hold one atom (REST_V of 1)."""
    _check_s2t_atom(atom, "get_s2t_smem_desc_tensor")
    if not isinstance(smem_tensor, Tensor) or smem_tensor.memspace != "smem":
        raise TensorError(f"tcgen05.get_s2t_smem_desc_tensor({type(atom.op).__name__}): expected a partitioned "
                          f"shared-memory tensor (thr_copy.partition_S(sSF)), got {smem_tensor}")
    lay = smem_tensor.layout
    shp = lay.shape
    if not isinstance(shp, tuple) or not isinstance(shp[0], tuple) or len(shp[0]) != 2 or it.product(shp[0][1]) != 1:
        raise TensorError(f"tcgen05.get_s2t_smem_desc_tensor({type(atom.op).__name__}, {smem_tensor}): mode 0 must "
                          f"be (ATOM_V, 1), one copy atom's values, as partition_S of make_s2t_copy gives")
    bits = smem_tensor.element_type.width
    desc = recast_layout(128, bits, lay)
    return Tensor(S2TDescEngine(smem_tensor, atom.op), desc, 0, _checked=True)
