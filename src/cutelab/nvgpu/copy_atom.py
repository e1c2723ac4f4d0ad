"""Copy atoms, tiled copies and copying, as ``cutlass.cute`` names them.

A ``CopyAtom`` is one copy instruction as a value: ``thr_id`` (atom thread -> thread index) and
the source, destination and reference thread-value layouts ((thread, value) -> offset within the
atom's data, in elements of ``value_type``). A ``TiledCopy`` repeats an atom over a tile of shape
``tiler_mn`` by a thread-value layout ``layout_tv_tiled`` ((thread, value) -> index in the tile);
``get_slice(t).partition_S(tensor)`` is thread t's share of a tensor, shaped
``(CPY, CPY_M, CPY_N, ...)``. The partitioning follows CuTe C++ (copy_atom.hpp: tidfrg_S/D,
tile2thrfrg, retile), built from cutelab's layout algebra.

``copy(atom, src, dst, pred=...)`` runs the copy on host tensors (numpy/torch data), so the CPU
kernel interpreter and the tests can execute what a kernel would do.

>>> import numpy as np, cutelab as cute
>>> atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cute.Float32, num_bits_per_copy=64)
>>> tc = cute.make_tiled_copy_tv(atom, cute.make_layout((4, 8), stride=(8, 1)), cute.make_layout((1, 2)))
>>> print(tc.tiler_mn, tc.layout_tv_tiled, tc.size)
(4:1, 16:1) ((8,4),2):((8,1),4) 32
>>> g = cute.make_tensor(np.arange(16 * 32, dtype=np.float32), cute.make_layout((16, 32), stride=(32, 1)))
>>> print(tc.get_slice(3).partition_S(g).layout)
((2,1),4,2):((1,0),128,16)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import display as _display
from .. import int_tuple as it
from ..algebra import (
    _zip, coalesce, composition, filter as _filter, left_inverse, logical_product, make_layout_tv,
    right_inverse, upcast, zipped_divide,
)
from ..errors import LayoutError, TensorError
from ..layout import Layout, make_layout, slice_
from ..numeric import Boolean, Int8, Numeric, is_numeric_type
from ..swizzle import ComposedLayout
from ..tensor import Tensor
from .universal_copy import CopyOp

__all__ = [
    "CopyAtom", "TiledCopy", "ThrCopy", "make_copy_atom", "make_tiled_copy", "make_tiled_copy_tv",
    "make_tiled_copy_S", "make_tiled_copy_D", "make_tiled_copy_A", "make_tiled_copy_B",
    "make_tiled_copy_C", "make_tiled_copy_C_atom", "make_cotiled_copy", "copy", "copy_atom_call", "basic_copy", "basic_copy_if",
    "autovec_copy",
]


def _mlir_name(t: Numeric) -> str:
    """The element type as the DSL prints an atom's value type (MLIR integers are signless)."""
    if t is Boolean:
        return "i1"
    if t.kind == "uint":
        return f"i{t.width}"
    return t.name


def _mode(L: Layout, i: int) -> Layout:
    return Layout._raw(L.shape[i], L.stride[i])


def _msize(L: Layout, i: int) -> int:
    return it.product(L.shape[i])


def _tuple_str(x: Any) -> str:
    if isinstance(x, tuple):
        return "(" + ",".join(_tuple_str(e) for e in x) + ")"
    return str(x)


# --------------------------------------------------------------------------- CopyAtom

class CopyAtom:
    """One copy instruction: its op, element type and thread-value layouts.

    Attributes (as in CuTe DSL): ``op``, ``value_type``, ``thr_id``, ``layout_src_tv``,
    ``layout_dst_tv``; cutelab adds ``layout_ref_tv`` (the layout that TiledCopy's
    layout_tv_tiled is read in: destination for ldmatrix, source for stmatrix and SIMT copies)
    and ``num_bits_per_copy`` (None for the warp-collective ops).
    """

    __slots__ = ("_op", "_value_type", "_thr_id", "_src", "_dst", "_ref", "_num_bits", "_kwargs")

    def __new__(cls, op: Any = None, value_type: Any = None, layouts: Any = None, kwargs: Any = None) -> Any:
        # CuTe DSL's cute.CopyAtom(op, trait) around a trait made from an MLIR atom (CUTLASS's MLA decode wraps
        # cute_nvgpu.atom_make_non_exec_tiled_tma_load's atom in CopyBulkTensorTileG2SNonExecTrait): that atom
        made = getattr(value_type, "prebuilt_atom", None) if layouts is None else None
        if made is not None:
            return made
        return super().__new__(cls)

    def __init__(self, op: CopyOp, value_type: Numeric, layouts: dict, kwargs: dict | None = None):
        self._op = op
        self._value_type = value_type
        self._thr_id = layouts["thr_id"]
        self._src = layouts["src"]
        self._dst = layouts["dst"]
        self._ref = layouts["ref"]
        self._num_bits = layouts.get("num_bits_per_copy")
        self._kwargs = dict(kwargs or {})

    @property
    def op(self) -> CopyOp:
        return self._op

    @property
    def value_type(self) -> Numeric:
        return self._value_type

    @property
    def thr_id(self) -> Layout:
        return self._thr_id

    @property
    def layout_src_tv(self) -> Layout:
        return self._src

    @property
    def layout_dst_tv(self) -> Layout:
        return self._dst

    @property
    def layout_ref_tv(self) -> Layout:
        return self._ref

    @property
    def num_bits_per_copy(self) -> int | None:
        return self._num_bits

    @property
    def num_val_src(self) -> int:
        """Values per thread on the source side (CuTe's NumValSrc)."""
        return _msize(self._src, 1)

    @property
    def num_val_dst(self) -> int:
        return _msize(self._dst, 1)

    def _atom(self) -> "CopyAtom":
        return CopyAtom(self._op, self._value_type,
                        {"thr_id": self._thr_id, "src": self._src, "dst": self._dst, "ref": self._ref,
                         "num_bits_per_copy": self._num_bits}, self._kwargs)

    def _atom_lines(self, w: int) -> list:
        return [
            "  ThrID:".ljust(w) + str(self._thr_id),
            "  TV Layout Src:".ljust(w) + str(self._src),
            "  TV Layout Dst:".ljust(w) + str(self._dst),
            "  Value type:".ljust(w) + _mlir_name(self._value_type),
        ]

    def __str__(self) -> str:
        return "\n".join(["Copy Atom"] + self._atom_lines(17))

    def __repr__(self) -> str:
        return f"CopyAtom({self._op!r}, {self._value_type})"


def make_copy_atom(op: CopyOp, copy_internal_type: Numeric, **kwargs: Any) -> CopyAtom:
    """The copy atom of op for elements of copy_internal_type (op-specific keyword arguments:
    ``num_bits_per_copy`` for the SIMT copies and cp.async, memory attributes for CopyG2ROp, ...).

    >>> import cutelab as cute
    >>> print(make_copy_atom(cute.nvgpu.warp.StMatrix8x8x16bOp(num_matrices=2), cute.BFloat16))
    Copy Atom
      ThrID:         32:1
      TV Layout Src: (32,(2,2)):(2,(1,64))
      TV Layout Dst: ((16,2),8):((8,0),1)
      Value type:    bf16
    """
    if not isinstance(op, CopyOp):
        raise TypeError(f"make_copy_atom: expected a copy operation (CopyUniversalOp, LdMatrix8x8x16bOp, ...), got {op!r}")
    if not is_numeric_type(copy_internal_type):
        raise TypeError(f"make_copy_atom({op!r}, ...): the element type must be a cutelab Numeric (Float16, ...), got {copy_internal_type!r}")
    kwargs.pop("loc", None), kwargs.pop("ip", None)  # the DSL's source location / insertion point
    return CopyAtom(op, copy_internal_type, op._atom_layouts(copy_internal_type, **kwargs), kwargs)


# --------------------------------------------------------------------------- TiledCopy

def _as_tiler(tiler_mn: Any, where: str) -> tuple:
    """A tiler as the DSL stores it: a tuple of Layouts (an int n is n:1)."""
    if isinstance(tiler_mn, Layout):
        tiler_mn = (tiler_mn,)
    if not isinstance(tiler_mn, (tuple, list)) or not tiler_mn:
        raise LayoutError(f"{where}: tiler_mn must be a tuple of ints or Layouts, got {tiler_mn!r}")
    out = []
    for t in tiler_mn:
        if isinstance(t, Layout):
            out.append(t)
        elif isinstance(t, (int, np.integer)) and not isinstance(t, bool) and t >= 1:
            out.append(Layout(int(t), 1 if t > 1 else 0))  # the DSL packs 1 as 1:0
        else:
            raise LayoutError(f"{where}: every mode of tiler_mn must be a positive int or a Layout, got {t!r}")
    return _Tile(out)


class _Tile(tuple):
    """tiler_mn: a tuple of Layouts that prints as the DSL's, ``(16:1, 64:1)``."""

    def __repr__(self) -> str:
        return "(" + ", ".join(str(t) for t in self) + ("," if len(self) == 1 else "") + ")"

    __str__ = __repr__


class TiledCopy(CopyAtom):
    """A copy atom tiled over a ``tiler_mn`` tile by ``layout_tv_tiled`` ((thread, value) -> tile index)."""

    __slots__ = ("_layout_tv", "_tiler", "_r2s", "_r2d", "_thrval_s", "_thrval_d")

    def __init__(self, atom: CopyAtom, layout_tv: Layout, tiler_mn: tuple):
        super().__init__(atom._op, atom._value_type,
                         {"thr_id": atom._thr_id, "src": atom._src, "dst": atom._dst, "ref": atom._ref,
                          "num_bits_per_copy": atom._num_bits}, atom._kwargs)
        where = f"TiledCopy(layout_tv={layout_tv}, tiler_mn={_tuple_str(tiler_mn)})"
        if not isinstance(layout_tv, Layout):
            raise LayoutError(f"{where}: layout_tv must be a Layout")
        if it.rank(layout_tv.shape) != 2:
            raise LayoutError(f"{where}: layout_tv must have two modes, (thread, value)")
        self._layout_tv = layout_tv
        self._tiler = _Tile(tiler_mn)
        n_thr, n_val = _msize(layout_tv, 0), _msize(layout_tv, 1)
        a_thr, a_val = _msize(self._ref, 0), _msize(self._ref, 1)
        if n_thr % a_thr:
            raise LayoutError(f"{where}: the TiledCopy uses too few threads for the copy atom "
                              f"({n_thr} threads is not a multiple of the atom's {a_thr})")
        if n_val % a_val:
            raise LayoutError(f"{where}: the TiledCopy uses too few values for the copy atom "
                              f"({n_val} values per thread is not a multiple of the atom's {a_val})")
        tile = it.product(tuple(t.size() for t in tiler_mn))
        offs = layout_tv.offsets() if hasattr(layout_tv, "offsets") else None
        if offs is not None and offs.size and (offs.min() < 0 or offs.max() >= tile):
            raise LayoutError(f"{where}: layout_tv reaches index {int(offs.max())}, outside the tile of "
                              f"{tile} elements")
        self._r2s = composition(right_inverse(self._ref), self._src)
        self._r2d = composition(right_inverse(self._ref), self._dst)
        self._thrval_s = self._thrval2mn(self._r2s)
        self._thrval_d = self._thrval2mn(self._r2d)

    # ---- properties, as in CuTe DSL
    @property
    def layout_tv_tiled(self) -> Layout:
        return self._layout_tv

    @property
    def tiler_mn(self) -> tuple:
        return self._tiler

    @property
    def size(self) -> int:
        """Number of threads of the tiled copy."""
        return _msize(self._layout_tv, 0)

    @property
    def layout_src_tv_tiled(self) -> Layout:
        """(thread, value) -> tile index, for the source side (CuTe's get_layoutS_TV)."""
        return self._tiled_tv(self._thrval_s)

    @property
    def layout_dst_tv_tiled(self) -> Layout:
        return self._tiled_tv(self._thrval_d)

    def _tile_shape(self) -> tuple:
        return tuple(t.shape for t in self._tiler)

    def _tiled_tv(self, thrval: Layout) -> Layout:
        ref = make_layout((self._tile_shape(), 1))
        tv = composition(ref, (thrval, None))
        return slice_(tv, ((None, None), 0))

    # ---- partitioning (CuTe's tile2thrfrg, tidfrg_S, tidfrg_D)
    def _thrval2mn(self, ref2trg: Layout) -> Layout:
        """((trg_thr, rest_thr), (trg_val, rest_val)) -> tile index."""
        a_thr, a_val = _msize(self._ref, 0), _msize(self._ref, 1)
        atom_tv = zipped_divide(self._layout_tv, (a_thr, a_val))  # ((atom_tid,atom_val),(rest_tid,rest_val))
        trg_tv = composition(atom_tv, (ref2trg, None))
        return coalesce(_zip(_mode(trg_tv, 0), _mode(trg_tv, 1)), (1, (1, 1)))

    def _tidfrg(self, layout: Layout, thrval: Layout, what: str) -> Layout:
        r, rt = it.rank(layout.shape), len(self._tiler)
        if r < rt:
            raise TensorError(f"{what}: the tensor of layout {layout} has rank {r}, less than the rank {rt} "
                              f"of the tiler {_tuple_str(self._tiler)}")
        tiled = zipped_divide(layout, self._tiler)  # ((TileM,TileN),(RestM,RestN,...))
        tv = composition(tiled, (thrval, None))  # ((thr,val),(RestM,RestN,...))
        return slice_(tv, ((None, None), None))  # (thr, val, (RestM,RestN,...))

    def tidfrg_S(self, layout: Layout) -> Layout:
        """(thread, value, (RestM, RestN, ...)) -> offset, for a source layout (M, N, ...)."""
        return self._tidfrg(layout, self._thrval_s, "tidfrg_S")

    def tidfrg_D(self, layout: Layout) -> Layout:
        return self._tidfrg(layout, self._thrval_d, "tidfrg_D")

    def get_slice(self, thr_idx: Any) -> "ThrCopy":
        """Thread thr_idx's view (an int, or a numpy array of thread indices for a batch)."""
        n = self.size
        if isinstance(thr_idx, (int, np.integer)) and not isinstance(thr_idx, bool):
            if not 0 <= thr_idx < n:
                raise TensorError(f"get_slice({thr_idx}): thread index out of range for a TiledCopy of {n} threads")
        elif isinstance(thr_idx, np.ndarray):
            if thr_idx.size and (thr_idx.min() < 0 or thr_idx.max() >= n):
                raise TensorError(f"get_slice: thread indices outside [0, {n}) for a TiledCopy of {n} threads")
        return ThrCopy(self, thr_idx)

    get_thread_slice = get_slice

    def retile(self, src: Any, *, loc: Any = None, ip: Any = None) -> Any:
        """A register fragment (V, M, N, ...) of this copy's values re-tiled to ((atom vals, rest vals), M, N, ...),
        the partition shape that ``copy`` with this atom consumes (CuTe's retile_S/retile_D)."""
        layout = src.layout if isinstance(src, Tensor) else src
        if not isinstance(layout, Layout):
            raise TensorError(f"retile: expected a Tensor or a Layout, got {type(src).__name__}")
        return src._map(self._retile_layout) if isinstance(src, Tensor) else self._retile_layout(layout)

    def _retile_layout(self, layout: Layout) -> Layout:
        shp = layout.shape
        R = len(shp) if isinstance(shp, tuple) else 1
        V = _msize(layout, 0) if isinstance(shp, tuple) else layout.size()
        n_thr = _msize(self._layout_tv, 0)
        a_val = _msize(self._ref, 1)
        tile_shape = self._tile_shape()
        frg_mn = upcast(composition(right_inverse(self._layout_tv), make_layout(tile_shape)), n_thr * V)
        frg_v = zipped_divide(logical_product(make_layout(V), right_inverse(frg_mn)), make_layout(a_val))
        tiler = (V,) + tuple(it.product_each(frg_mn.shape))
        if R < len(tiler):
            raise TensorError(f"retile({layout}): the fragment has rank {R}; it needs a value mode and one mode per "
                              f"tiler mode ({len(tiler)} in all)")
        t = zipped_divide(layout, tiler)
        v = composition(t, (frg_v, None))
        return slice_(v, (None, (0,) + (None,) * (R - 1)))

    def __str__(self) -> str:
        head = ["Tiled Copy", "  Tiler MN:".ljust(19) + "(" + ",".join(str(t) for t in self._tiler) + ")",
                "  TV Layout tiled:".ljust(19) + str(self._layout_tv), "Copy Atom"]
        return "\n".join(head + self._atom_lines(19))

    def __repr__(self) -> str:
        return f"TiledCopy({self._op!r}, {self._value_type}, {self._layout_tv}, tiler_mn={_tuple_str(self._tiler)})"

    def _repr_html_(self) -> str | None:  # Jupyter: who reads and who writes each element, interactive
        return _display.html(self)

    def _repr_svg_(self) -> str | None:
        return _display.svg(self)


class ThrCopy(TiledCopy):
    """One thread's (or a batch of threads') slice of a TiledCopy."""

    __slots__ = ("_thr_idx",)

    def __init__(self, tiled: TiledCopy, thr_idx: Any):  # noqa: D107 - shares the tiled copy's layouts
        CopyAtom.__init__(self, tiled._op, tiled._value_type,
                          {"thr_id": tiled._thr_id, "src": tiled._src, "dst": tiled._dst, "ref": tiled._ref,
                           "num_bits_per_copy": tiled._num_bits}, tiled._kwargs)
        for k in ("_layout_tv", "_tiler", "_r2s", "_r2d", "_thrval_s", "_thrval_d"):
            object.__setattr__(self, k, getattr(tiled, k))
        self._thr_idx = thr_idx

    @property
    def thr_idx(self) -> Any:
        return self._thr_idx

    def _partition(self, tensor: Any, thrval: Layout, what: str) -> Tensor:
        if not isinstance(tensor, Tensor):
            raise TensorError(f"{what}: expected a Tensor, got {type(tensor).__name__}")
        lay = tensor.layout
        composed = isinstance(lay, ComposedLayout)
        def frg(lay: Any) -> Any:
            if isinstance(lay, ComposedLayout):  # a swizzled tensor: partition its outer layout, keep the swizzle outside
                return ComposedLayout(lay.inner, lay.offset, self._tidfrg(lay.outer, thrval, what))
            return self._tidfrg(lay, thrval, what)

        r = it.rank(lay.shape)
        t = tensor._map(frg)
        try:
            return t[(self._thr_idx, None, (None,) * r if r > 1 else None)]
        except LayoutError as e:
            if not composed or isinstance(self._thr_idx, (int, np.integer)):
                raise
            # a thread's start goes inside the swizzle, and composed layouts take int offsets only
            raise TensorError(f"{what}: a tensor with a composed (swizzled) layout {lay} is partitioned one "
                              f"thread at a time (an int thread index), not for a batch or a symbolic "
                              f"index ({e})") from None

    def partition_S(self, src: Tensor, *, loc: Any = None, ip: Any = None) -> Tensor:
        """This thread's source values: (CPY, CPY_M, CPY_N, ...), CPY = (atom values, atom repeats)."""
        return self._partition(src, self._thrval_s, "partition_S")

    def partition_D(self, dst: Tensor, *, loc: Any = None, ip: Any = None) -> Tensor:
        """This thread's destination values: (CPY, CPY_M, CPY_N, ...)."""
        return self._partition(dst, self._thrval_d, "partition_D")

    def __repr__(self) -> str:
        return f"ThrCopy(thr_idx={self._thr_idx!r}, {TiledCopy.__repr__(self)})"


def _check_atom(atom: Any, where: str) -> CopyAtom:
    if not isinstance(atom, CopyAtom):
        raise TypeError(f"{where}: expected a CopyAtom (from make_copy_atom), got {type(atom).__name__}")
    return atom._atom() if isinstance(atom, TiledCopy) else atom


def make_tiled_copy(atom: CopyAtom, layout_tv: Layout, tiler_mn: Any) -> TiledCopy:
    """A TiledCopy from a (thread, value) -> tile index layout and the tile (a tuple of ints or Layouts).

    >>> import cutelab as cute
    >>> a = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cute.Float32, num_bits_per_copy=64)
    >>> print(make_tiled_copy(a, cute.make_layout((32, 2), stride=(2, 1)), (8, 16)).layout_src_tv_tiled)
    (32,(2,1)):(2,(1,0))
    """
    atom = _check_atom(atom, "make_tiled_copy")
    return TiledCopy(atom, layout_tv, _as_tiler(tiler_mn, "make_tiled_copy"))


def make_tiled_copy_tv(atom: CopyAtom, thr_layout: Layout, val_layout: Layout) -> TiledCopy:
    """A TiledCopy from a thread layout ((m,n) -> thread) and a value layout ((m,n) -> value),
    both compact: the tile is their raked product.

    >>> import cutelab as cute
    >>> a = cute.make_copy_atom(cute.nvgpu.cpasync.CopyG2SOp(), cute.Float16, num_bits_per_copy=128)
    >>> tc = make_tiled_copy_tv(a, cute.make_layout((16, 8), stride=(8, 1)), cute.make_layout((1, 8)))
    >>> print(tc.tiler_mn, tc.layout_tv_tiled, tc.size)
    (16:1, 64:1) ((8,16),8):((128,1),16) 128
    """
    atom = _check_atom(atom, "make_tiled_copy_tv")
    tiler, tv = make_layout_tv(thr_layout, val_layout)
    tiler = tiler if isinstance(tiler, tuple) else (tiler,)
    return TiledCopy(atom, tv, _as_tiler(tiler, "make_tiled_copy_tv"))


def make_tiled_copy_S(atom: CopyAtom, tiled_copy: TiledCopy) -> TiledCopy:
    """A TiledCopy of atom whose layout is tiled_copy's source layout (layout_src_tv_tiled)."""
    atom = _check_atom(atom, "make_tiled_copy_S")
    if not isinstance(tiled_copy, TiledCopy):
        raise TypeError(f"make_tiled_copy_S: expected a TiledCopy, got {type(tiled_copy).__name__}")
    return TiledCopy(atom, tiled_copy.layout_src_tv_tiled, tiled_copy.tiler_mn)


def make_tiled_copy_D(atom: CopyAtom, tiled_copy: TiledCopy) -> TiledCopy:
    """A TiledCopy of atom whose layout is tiled_copy's destination layout (layout_dst_tv_tiled)."""
    atom = _check_atom(atom, "make_tiled_copy_D")
    if not isinstance(tiled_copy, TiledCopy):
        raise TypeError(f"make_tiled_copy_D: expected a TiledCopy, got {type(tiled_copy).__name__}")
    return TiledCopy(atom, tiled_copy.layout_dst_tv_tiled, tiled_copy.tiler_mn)


def _mma_parts(tiled_mma: Any, where: str, which: str) -> tuple:
    try:
        tv = getattr(tiled_mma, f"tv_layout_{which}_tiled")
        sizes = tuple(tiled_mma.get_tile_size(i) for i in range(3))
    except AttributeError:
        raise TypeError(f"{where}: expected a TiledMma (with tv_layout_{which}_tiled and get_tile_size), "
                        f"got {type(tiled_mma).__name__}") from None
    return tv, sizes


def make_tiled_copy_A(atom: CopyAtom, tiled_mma: Any) -> TiledCopy:
    """A TiledCopy of atom that matches the A operand of tiled_mma: tile (M, K), tiled_mma's A TV layout.

    >>> import cutelab as cute
    >>> tm = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16)), (2, 2, 1))
    >>> ldsm = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(num_matrices=4), cute.Float16)
    >>> tc = make_tiled_copy_A(ldsm, tm)
    >>> print(tc.tiler_mn, tc.size, tc.layout_src_tv_tiled)
    (32:1, 16:1) 128 ((16,2,2,2),(8,1)):((1,256,16,0),(32,0))
    """
    atom = _check_atom(atom, "make_tiled_copy_A")
    tv, (m, n, k) = _mma_parts(tiled_mma, "make_tiled_copy_A", "A")
    return TiledCopy(atom, tv, _as_tiler((m, k), "make_tiled_copy_A"))


def make_tiled_copy_B(atom: CopyAtom, tiled_mma: Any) -> TiledCopy:
    """A TiledCopy of atom that matches the B operand of tiled_mma: tile (N, K)."""
    atom = _check_atom(atom, "make_tiled_copy_B")
    tv, (m, n, k) = _mma_parts(tiled_mma, "make_tiled_copy_B", "B")
    return TiledCopy(atom, tv, _as_tiler((n, k), "make_tiled_copy_B"))


def make_tiled_copy_C(atom: CopyAtom, tiled_mma: Any) -> TiledCopy:
    """A TiledCopy of atom that matches the C operand of tiled_mma: tile (M, N)."""
    atom = _check_atom(atom, "make_tiled_copy_C")
    tv, (m, n, k) = _mma_parts(tiled_mma, "make_tiled_copy_C", "C")
    return TiledCopy(atom, tv, _as_tiler((m, n), "make_tiled_copy_C"))


def make_tiled_copy_C_atom(atom: CopyAtom, mma: Any) -> TiledCopy:
    """The smallest TiledCopy of atom that retiles mma's C layout: each thread's first
    ``num_val_src`` C values (for epilogues that store sub-tiles).

    >>> import cutelab as cute
    >>> tm = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16)), (2, 2, 1))
    >>> a = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cute.Float32, num_bits_per_copy=64)
    >>> tc = make_tiled_copy_C_atom(a, tm)
    >>> print(tc.tiler_mn, tc.layout_tv_tiled)
    ((8,2):(1,16), (8,2):(2,1)) ((4,8,2,2),2):((16,1,8,64),128)
    """
    atom = _check_atom(atom, "make_tiled_copy_C_atom")
    layout_c, (m, n, k) = _mma_parts(mma, "make_tiled_copy_C_atom", "C")
    nv = atom.num_val_src
    if nv > _msize(layout_c, 1):
        raise ValueError(f"make_tiled_copy_C_atom: the copy atom's source has {nv} values per thread, more than the "
                         f"{_msize(layout_c, 1)} C values per thread of the TiledMma ({layout_c})")
    layout_tv = composition(layout_c, make_layout((_msize(layout_c, 0), nv)))
    mma_tiler = (m, n)
    tiler = (_filter(composition(make_layout(mma_tiler, stride=(1, 0)), layout_tv)),
             _filter(composition(make_layout(mma_tiler, stride=(0, 1)), layout_tv)))
    tile2mma = composition(make_layout(mma_tiler), tiler)
    tv = composition(left_inverse(tile2mma), layout_tv)
    return TiledCopy(atom, tv, tiler)


def make_cotiled_copy(atom: CopyAtom, atom_layout_tv: Layout, data_layout: Layout) -> TiledCopy:
    """A TiledCopy from (thread, value) -> data address and coordinate -> data address: for
    copies that care about vector widths and address offsets rather than which coordinates a
    thread owns. Every address atom_layout_tv names must exist in data_layout.

    >>> import cutelab as cute
    >>> a = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cute.Float32, num_bits_per_copy=128)
    >>> tc = make_cotiled_copy(a, cute.make_layout((32, 4), stride=(4, 1)), cute.make_layout((16, 8), stride=(8, 1)))
    >>> print(tc.tiler_mn, tc.layout_tv_tiled)
    (16:1, (2,4):(4,1)) ((2,16),4):((16,1),32)
    """
    atom = _check_atom(atom, "make_cotiled_copy")
    for name, x in (("atom_layout_tv", atom_layout_tv), ("data_layout", data_layout)):
        if not isinstance(x, Layout):
            raise LayoutError(f"make_cotiled_copy: {name} must be a Layout, got {x!r}")
    if it.rank(atom_layout_tv.shape) != 2:
        raise LayoutError(f"make_cotiled_copy: atom_layout_tv {atom_layout_tv} must have two modes, (thread, value)")
    inv = left_inverse(data_layout)  # data address -> data coordinate
    inv_data = Layout._raw((inv.shape, 1), (inv.stride, 0))  # addresses past the end: stride 0
    tv_data = composition(inv_data, atom_layout_tv)  # (thr, val) -> data coordinate (as an index)
    v_atom = coalesce(_mode(atom_layout_tv, 1))
    v_data = coalesce(composition(data_layout, _mode(tv_data, 1)))
    if v_atom != v_data:
        raise LayoutError(f"make_cotiled_copy({atom_layout_tv}, {data_layout}): the memory that atom_layout_tv "
                          f"points to does not exist in data_layout ({v_atom} != {v_data})")
    flat = it.product_each(data_layout.shape)
    flat = flat if isinstance(flat, tuple) else (flat,)
    r = len(flat)
    tiler = tuple(_filter(composition(make_layout(flat, stride=tuple(1 if j == i else 0 for j in range(r))), tv_data))
                  for i in range(r))
    tile2data = composition(make_layout(flat), tiler)
    layout_tv = composition(left_inverse(tile2data), tv_data)
    return TiledCopy(atom, layout_tv, tiler)


# --------------------------------------------------------------------------- copying on the host

def _canonical(t: Tensor) -> tuple:
    """(V, Rest) shapes: rank-1 tensors get a Rest mode of 1, ranks above 2 have modes 1.. grouped."""
    shp = t.layout.shape
    if not isinstance(shp, tuple):
        return shp, 1
    if len(shp) == 1:
        return shp[0], 1
    if len(shp) == 2:
        return shp
    return shp[0], shp[1:]


def _unit_indices(shape: Any, n: int, what: str) -> np.ndarray:
    """Index (colexicographic, within the value mode) of the elements of each atom call: (calls, n).

    CuTe's Copy_Atom::call peels a value mode (ATOM_V, ATOM_REST...) into calls of ATOM_V; its
    calls are consecutive runs of n indices, so any value mode of a multiple of n values splits
    into runs of n (a plain mode of k*n values included, as the DSL accepts)."""
    size = it.product(shape)
    if size % n:
        raise TensorError(
            f"copy: the {what} partitioning does not match the copy atom: its value mode {_tuple_str(shape)} "
            f"has {size} values, not a multiple of the {n} values one atom call moves"
        )
    return np.arange(size).reshape(-1, n)


def _check_contiguous(t: Tensor, units: np.ndarray, what: str, atom: CopyAtom) -> None:
    """A vector copy of n elements reads/writes n consecutive elements."""
    offs = t.layout.offsets()[units]
    bad = np.nonzero((np.diff(offs, axis=-1) != 1).any(axis=-1))[0]
    if bad.size:
        k = int(bad[0])
        raise TensorError(
            f"copy: a {atom.num_bits_per_copy}-bit copy of {atom.value_type} moves {units.shape[1]} consecutive elements "
            f"per call, but call {k} of the {what} {t} reaches offsets {offs[k].tolist()}"
        )


def _check_aligned(t: Tensor, units: np.ndarray, what: str, atom: CopyAtom) -> None:
    """A vector copy of n bits needs each call's address aligned to n bits, as far as the tensor's
    type knows it (its pointer's alignment, from_dlpack's assumed_align, and the call's offset)."""
    eng = t.engine
    bits = atom.num_bits_per_copy or 0
    if not hasattr(eng, "alignment") or bits <= t.element_type.width:
        return
    if not getattr(eng, "declared", True):
        return  # cutelab's make_tensor over a numpy array (no CuTe DSL counterpart): host memory, no alignment claimed
    need = bits // 8
    offs = t.layout.offsets()[units[:, 0]]
    for k in np.unique(offs, return_index=True)[1]:
        al = eng.alignment(t.offset + int(offs[k]))
        if al < need:
            side = "S" if what == "source" else "D"
            raise TensorError(
                f"copy: a {bits}-bit copy of {atom.value_type} needs {need}-byte aligned addresses, but call {int(k)} "
                f"of the {what} {t} starts at element offset {int(offs[k])} of a pointer known to be {al}-byte aligned "
                f"({side} ptr alignment ({al * 8} bits) does not meet requirement ({bits} bits) of atom); give "
                f"from_dlpack a larger assumed_align, or use a narrower copy atom"
            )


def _raw_values(t: Tensor, what: str) -> np.ndarray:
    if getattr(t.engine, "dtype", None) is None:
        raise TensorError(f"copy: the {what} {t} has no element type (an identity tensor cannot be copied)")
    return np.asarray(t.load().values)


def _reinterpret(vals: np.ndarray, src_t: Numeric, dst_t: Numeric) -> np.ndarray:
    if src_t is dst_t or vals.dtype == dst_t.storage:
        return vals
    return vals.view(dst_t.storage)  # same width: move the bits, as the hardware does


def _pred_mask(pred: Any, calls: int, batch: tuple) -> np.ndarray:
    if pred is None:
        return np.ones(batch + (calls,), dtype=bool)
    if not isinstance(pred, Tensor):
        raise TensorError(f"copy: pred must be a Tensor of booleans, got {type(pred).__name__}")
    n = it.product(pred.layout.shape)
    if n != calls:
        raise TensorError(
            f"copy: the predicate {pred} has {n} elements but the copy makes {calls} atom calls; "
            f"pred must have the profile (ATOM_REST, REST...) of the partitioned tensors, one flag per call"
        )
    v = np.asarray(pred.load().values).astype(bool)
    if v.shape[:-1] not in ((), batch):
        raise TensorError(f"copy: the predicate's batch {v.shape[:-1]} does not match the tensors' batch {batch}")
    return np.broadcast_to(v, batch + (calls,))


def copy(atom: Any, src: Tensor, dst: Tensor, *, pred: Tensor | None = None, unroll_factor: int | None = None,
         **kwargs: Any) -> None:
    """Copy src into dst with a copy atom (or TiledCopy), on host tensors.

    src and dst are partitions of profile (V, Rest...) (from partition_S/D, retile, or any tensor
    whose first mode is the atom's values): the atom copies V at each Rest coordinate. With pred
    (profile (ATOM_REST, REST...): one flag per atom call), calls whose flag is False write nothing.
    Single-thread atoms copy element by element (per thread of a batch); warp-collective atoms
    (ldmatrix/stmatrix) need the fragments of whole warps: a batch of 32*k threads (get_slice with a
    numpy array of thread ids) and exchange values between the threads as the instruction does.

    >>> import numpy as np, cutelab as cute
    >>> atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cute.Float32)
    >>> s = cute.make_tensor(np.arange(4, dtype=np.float32), cute.make_layout(4))
    >>> d = cute.make_rmem_tensor((4,), cute.Float32)
    >>> copy(atom, s, d, pred=cute.make_tensor(np.array([1, 0, 1, 1], bool), cute.make_layout(4)))
    >>> d.load().numpy().tolist()
    [0.0, 0.0, 2.0, 3.0]
    """
    if not isinstance(atom, CopyAtom):
        raise TypeError(f"copy: expected a CopyAtom or TiledCopy, got {type(atom).__name__}")
    if isinstance(src, (list, tuple)) or isinstance(dst, (list, tuple)):
        raise TensorError("copy: lists of tensors (copies with auxiliary operands, TMA) are not supported on the host")
    for name, t in (("source", src), ("destination", dst)):
        if not isinstance(t, Tensor):
            raise TensorError(f"copy: the {name} must be a Tensor, got {type(t).__name__}")
    if unroll_factor is not None and (not isinstance(unroll_factor, int) or unroll_factor < 1):
        raise ValueError(f"copy: unroll_factor must be a positive integer, but got {unroll_factor}")
    st, dt = src.element_type, dst.element_type
    if st is None or dt is None:
        raise TensorError("copy: an identity (coordinate) tensor cannot be copied")
    if st.width != dt.width:
        raise TypeError(f"copy: the source ({st}) and destination ({dt}) element types differ in width "
                        f"({st.width} != {dt.width} bits); copy moves bits, it does not convert")
    rs, rd = it.rank(src.layout.shape), it.rank(dst.layout.shape)
    if rs != rd:
        raise TensorError(f"copy: the source {src} and destination {dst} have different ranks ({rs} != {rd})")
    cs, cd = _canonical(src), _canonical(dst)
    if it.product(cs[1]) != it.product(cd[1]):
        raise TensorError(f"copy: source {src} and destination {dst} differ in the size of their rest modes "
                          f"({it.product(cs[1])} != {it.product(cd[1])})")
    collective = atom.thr_id.size() > 1
    ns, nd = atom.num_val_src, atom.num_val_dst
    if collective and st.width != atom.value_type.width:
        raise TypeError(f"copy: the warp-collective atom moves {atom.value_type} elements but the tensors hold {st}")
    # element indices of each call: (calls, n), over the canonical (V, Rest) index space
    vs, vd = cs[0], cd[0]
    us, ud = _unit_indices(vs, ns, "source"), _unit_indices(vd, nd, "destination")
    if us.shape[0] != ud.shape[0]:
        raise TensorError(f"copy: the source makes {us.shape[0]} atom calls per rest coordinate and the destination "
                          f"{ud.shape[0]}: their value modes {_tuple_str(vs)} and {_tuple_str(vd)} do not match")
    vsz, dsz = it.product(vs), it.product(vd)
    rest = it.product(cs[1])
    us_all = (np.arange(rest)[:, None, None] * vsz + us[None]).reshape(-1, ns)
    ud_all = (np.arange(rest)[:, None, None] * dsz + ud[None]).reshape(-1, nd)
    calls = us_all.shape[0]
    if not collective and ns > 1:
        _check_contiguous(src, us_all, "source", atom)
        _check_contiguous(dst, ud_all, "destination", atom)
        _check_aligned(src, us_all, "source", atom)
        _check_aligned(dst, ud_all, "destination", atom)
    sv = _reinterpret(_raw_values(src, "source"), st, dt)
    dv = np.array(_raw_values(dst, "destination"), copy=True)
    bs, bd = sv.shape[:-1], dv.shape[:-1]
    if bs != bd:
        raise TensorError(f"copy: the source is a batch of {bs} tensors and the destination of {bd}")
    mask = _pred_mask(pred, calls, bs)
    if not collective:
        moved = sv[..., us_all]  # batch + (calls, ns)
        if ns != nd:
            raise TensorError(f"copy: the atom's source and destination hold {ns} and {nd} values per thread")
        cur = dv[..., ud_all]
        dv[..., ud_all] = np.where(mask[..., None], moved, cur)
    else:
        dv = _collective(atom, sv, dv, us_all, ud_all, mask, bs)
    dst.engine.store(dst.offset, dst.layout, dv)


def copy_atom_call(atom: Any, src: Tensor, dst: Tensor, *, pred: Tensor | None = None, **kwargs: Any) -> None:
    """One execution of a copy atom on tensors of profile (V): the whole tensor is the value mode
    (a V of several atom calls, (ATOM_V, REST...), takes pred of profile (REST...)).

    >>> import numpy as np, cutelab as cute
    >>> atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cute.Float32, num_bits_per_copy=64)
    >>> s = cute.make_tensor(np.arange(4, dtype=np.float32), cute.make_layout((2, 2)))
    >>> d = cute.make_rmem_tensor((2, 2), cute.Float32)
    >>> copy_atom_call(atom, s, d, pred=cute.make_tensor(np.array([False, True]), cute.make_layout(2)))
    >>> d.load().numpy().tolist()
    [[0.0, 2.0], [0.0, 3.0]]
    """
    views = []
    for name, t in (("source", src), ("destination", dst)):
        if not isinstance(t, Tensor):
            raise TensorError(f"copy_atom_call: the {name} must be a Tensor, got {type(t).__name__}")
        views.append(t._map(lambda lay: Layout._raw((lay.shape, 1), (lay.stride, 0))))
    copy(atom, views[0], views[1], pred=pred, **kwargs)


def _collective(atom: CopyAtom, sv: np.ndarray, dv: np.ndarray, us: np.ndarray, ud: np.ndarray,
                mask: np.ndarray, batch: tuple) -> np.ndarray:
    """A warp-collective copy over a batch of threads: value (t, v) of the source lands at atom
    offset Src(t, v); destination value (t, v) is the one at atom offset Dst(t, v)."""
    nthr = atom.thr_id.size()
    nb = int(np.prod(batch)) if batch else 1
    if not batch or nb % nthr:
        raise TensorError(
            f"copy: a {atom.op.__class__.__name__} copy is warp-collective: pass the fragments of whole warps "
            f"(a batch of {nthr}*k threads, from get_slice(np.arange(...))), got a batch of {batch or 'one thread'}"
        )
    src_off = atom.layout_src_tv.offsets().reshape(_msize(atom.layout_src_tv, 1), -1).T  # (thr, val)
    dst_off = atom.layout_dst_tv.offsets().reshape(_msize(atom.layout_dst_tv, 1), -1).T
    span = int(max(src_off.max(), dst_off.max())) + 1
    sv2 = sv.reshape(nb // nthr, nthr, sv.shape[-1])
    dv2 = dv.reshape(nb // nthr, nthr, dv.shape[-1])
    m2 = mask.reshape(nb // nthr, nthr, mask.shape[-1])
    for c in range(us.shape[0]):
        buf = np.zeros((nb // nthr, span), dtype=dv.dtype)
        buf[:, src_off.ravel()] = sv2[:, :, us[c]].reshape(nb // nthr, -1)
        got = buf[:, dst_off]  # (warps, thr, nd)
        cur = dv2[:, :, ud[c]]
        dv2[:, :, ud[c]] = np.where(m2[:, :, c][..., None], got, cur)
    return dv2.reshape(dv.shape)


def basic_copy(src: Tensor, dst: Tensor) -> None:
    """Element-wise copy in index order: dst[i] = src[i] (sizes must match; values convert to dst's type).

    >>> import numpy as np, cutelab as cute
    >>> d = cute.make_rmem_tensor((2, 2), cute.Int32)
    >>> basic_copy(cute.make_tensor(np.arange(4, dtype=np.int32), cute.make_layout((2, 2), stride=(2, 1))), d)
    >>> d.load().numpy().tolist()
    [[0, 1], [2, 3]]
    """
    basic_copy_if(None, src, dst, _name="basic_copy")


def basic_copy_if(pred: Tensor | None, src: Tensor, dst: Tensor, *, _name: str = "basic_copy_if") -> None:
    """Element-wise copy where pred[i] is true (pred, src and dst of equal size)."""
    for name, t in (("source", src), ("destination", dst)):
        if not isinstance(t, Tensor):
            raise TensorError(f"{_name}: the {name} must be a Tensor, got {type(t).__name__}")
    n, m = it.product(src.layout.shape), it.product(dst.layout.shape)
    if n != m:
        raise TensorError(f"{_name}: the source {src} has {n} elements and the destination {dst} has {m}")
    from ..tracing import hooks

    if pred is not None and hooks.kernel_tracing():  # in a kernel: a branch per element, as cute.copy with pred
        if not isinstance(pred, Tensor) or it.product(pred.layout.shape) != n:
            raise TensorError(f"{_name}: the predicate must be a Tensor of {n} booleans, got {pred}")
        st, dt = src.element_type, dst.element_type
        if st is None or dt is None or st.width != dt.width:
            raise TensorError(f"{_name}: inside a kernel a predicated copy moves elements of one width; the source "
                              f"holds {st} and the destination {dt} (convert the values first)")
        from .universal_copy import CopyUniversalOp

        hooks.copy(make_copy_atom(CopyUniversalOp(), dt), src, dst, pred=pred)
        return
    sv = src.load()
    if not hasattr(sv, "values"):  # inside a traced kernel: the values are IR registers
        dst.store(sv)
        return
    vals = sv.to(dst.element_type).values if sv.dtype is not dst.element_type else sv.values
    vals = np.asarray(vals)
    dv = np.array(_raw_values(dst, "destination"), copy=True)
    if vals.shape[:-1] != dv.shape[:-1] and vals.shape[:-1]:
        raise TensorError(f"{_name}: the source batch {vals.shape[:-1]} does not match the destination's {dv.shape[:-1]}")
    vals = np.broadcast_to(vals, dv.shape)
    if pred is not None:
        if not isinstance(pred, Tensor) or it.product(pred.layout.shape) != n:
            raise TensorError(f"{_name}: the predicate must be a Tensor of {n} booleans, got {pred}")
        mask = np.broadcast_to(np.asarray(pred.load().values).astype(bool), dv.shape)
        vals = np.where(mask, vals, dv)
    dst.engine.store(dst.offset, dst.layout, vals)


def autovec_copy(src: Tensor, dst: Tensor, *, l1c_evict_priority: Any = None) -> None:
    """Copy with the widest vectors the layouts allow (on the host: an element-wise copy of
    equal-width element types)."""
    for name, t in (("source", src), ("destination", dst)):
        if not isinstance(t, Tensor):
            raise TensorError(f"autovec_copy: the {name} must be a Tensor, got {type(t).__name__}")
    st, dt = src.element_type, dst.element_type
    sw = Int8.width if st is Boolean else getattr(st, "width", None)
    dw = Int8.width if dt is Boolean else getattr(dt, "width", None)
    if sw != dw:
        raise TypeError(f"autovec_copy only supports equal source and destination element type bit widths, "
                        f"got {st} and {dt}")
    basic_copy_if(None, src, dst, _name="autovec_copy")
