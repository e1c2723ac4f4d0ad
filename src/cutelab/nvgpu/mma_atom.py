"""MMA atoms, tiled MMAs and thread slices of them: CuTe's MMA_Atom / TiledMMA / ThrMMA.

An MMA atom is one matrix-multiply instruction as a value: the threads that issue it
(``thr_id``), its extent ``shape_mnk`` and three thread-value layouts that say which thread
holds which element of A (M x K), B (N x K) and C (M x N). A tiled MMA repeats the atom over
more threads (``atom_layout_mnk``) and, optionally, permutes the M/N/K modes
(``permutation_mnk``); ``get_slice(thr_idx)`` gives one thread's view, whose ``partition_A/B/C``
cut a tensor into that thread's fragments. The layout math follows CuTe C++'s TiledMMA
(include/cute/atom/mma_atom.hpp: thrfrg_A/B/C, get_layoutA_TV, tile_size_mnk) and the names and
printing follow CuTe DSL 4.8.1 (cutlass.cute.atom).

>>> import cutelab as cute
>>> from cutelab.nvgpu import warp
>>> op = warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16))
>>> mma = cute.make_tiled_mma(op, (2, 2, 1))
>>> print(mma.thr_layout_vmnk, mma.size, [mma.get_tile_size(i) for i in range(3)])
(32,2,2,1):(1,32,64,0) 128 [32, 16, 16]
>>> mma.partition_shape_C((64, 64))
((2, 2), 2, 4)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import display as _display
from .. import int_tuple as it
from .. import numeric as _numeric
from ..algebra import (
    _raw, complement, composition, logical_divide, right_inverse, tiled_product, zipped_divide,
)
from ..errors import LayoutError, TensorError
from ..layout import Layout, _normalize, make_layout, parse_layout, slice_
from ..numeric import Numeric, NumericMeta
from ..dtypes import to_compute
from ..tensor import NumpyEngine, Tensor, make_fragment_like_mma, make_rmem_tensor

__all__ = [
    "MmaOp", "MmaAtom", "TiledMma", "ThrMma", "make_mma_atom", "make_tiled_mma", "gemm",
]


# --------------------------------------------------------------------------- helpers

_DSL_NAMES = {id(v): k for k, v in vars(_numeric).items() if isinstance(v, NumericMeta)}


def dtype_name(t: Any) -> str:
    """The class name CuTe DSL prints for an element type (``Float16``, not ``f16``)."""
    return _DSL_NAMES.get(id(t), str(t))


_pretty = it.tuple_str  # CuTe DSL's pretty_str: layouts as S:D, tuples without spaces, None as ``_``


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


# --------------------------------------------------------------------------- ops

class MmaOp:
    """Base class of the MMA operations (``cute.atom.MmaOp``): an op knows its atom's layouts.

    Subclasses implement ``_atom_layouts()`` -> (shape_mnk, thr_id, tv_A, tv_B, tv_C).
    """

    def _atom_layouts(self) -> tuple:  # pragma: no cover - abstract
        raise NotImplementedError

    def _fragment_dtypes(self) -> tuple:
        """(A element type, B element type, accumulator type) of the register fragments."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _operand_in_smem(self, operand: str) -> bool:
        """True when the operand is read from shared memory through a descriptor (SM90)."""
        return False

    def _runtime_fields(self) -> dict:
        """The atom's runtime fields and their initial values (CuTe DSL's Field enums)."""
        return {}

    #: (what, input, atom) -> Tensor: the op makes its own fragments (tcgen05: tensor memory and
    #: shared-memory descriptors); None: register fragments, as below
    _make_fragment = None


# --------------------------------------------------------------------------- atom

class MmaAtom:
    """One MMA instruction as a value: its op, thread ids, MNK shape and TV layouts.

    ``tv_layout_A`` maps (thread, value) to the column-major index of an element in the
    M x K tile of A (B: N x K, C: M x N); ``thr_id`` maps the atom's threads to thread ids.
    """

    __slots__ = ("_op", "_shape_mnk", "_thr_id", "_tv_a", "_tv_b", "_tv_c", "_state")

    def __init__(self, op: MmaOp, shape_mnk: tuple, thr_id: Layout, tv_a: Layout, tv_b: Layout, tv_c: Layout):
        self._op = op
        self._shape_mnk = shape_mnk
        self._thr_id = thr_id
        self._tv_a, self._tv_b, self._tv_c = tv_a, tv_b, tv_c
        self._state = dict(op._runtime_fields())  # runtime fields, e.g. {"accum_c": False} for wgmma

    @property
    def op(self) -> MmaOp:
        return self._op

    @property
    def thr_id(self) -> Layout:
        return self._thr_id

    @property
    def shape_mnk(self) -> tuple:
        return self._shape_mnk

    @property
    def tv_layout_A(self) -> Layout:
        return self._tv_a

    @property
    def tv_layout_B(self) -> Layout:
        return self._tv_b

    @property
    def tv_layout_C(self) -> Layout:
        return self._tv_c

    def __str__(self) -> str:
        return (
            "MMA Atom\n"
            f"  ThrID:       {_pretty(self.thr_id)}\n"
            f"  Shape MNK:   {_pretty(self.shape_mnk)}\n"
            f"  TV Layout A: {_pretty(self.tv_layout_A)}\n"
            f"  TV Layout B: {_pretty(self.tv_layout_B)}\n"
            f"  TV Layout C: {_pretty(self.tv_layout_C)}"
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {type(self._op).__name__}>"

    def _repr_html_(self) -> str | None:  # Jupyter: C, A and B with their T#V#, interactive
        return _display.html(self)

    def _repr_svg_(self) -> str | None:
        return _display.svg(self)

    # ---- fragments (CuTe's make_fragment_A/B/C: they expect an already partitioned tensor)
    def _check_partitioned(self, what: str, t: Any, tv: Layout) -> None:
        if t.memspace == "coord":  # as CuTe DSL: a coordinate tensor holds no data to make a fragment like
            raise TensorError(
                f"make_fragment_{what}({t}): expected a tensor with data (memory or registers), got a coordinate "
                f"tensor; pass a partitioned data tensor, or its shape for a compact fragment"
            )
        shp = t.shape
        r = len(shp) if isinstance(shp, tuple) else 1
        if r < 3:
            raise TensorError(
                f"make_fragment_{what}({t}): expected a partitioned tensor of rank >= 3 (V,{'M' if what != 'B' else 'N'},"
                f"{'K' if what != 'C' else 'N'}), got rank {r}; partition it with thr_mma.partition_{what} first"
            )
        v = it.product(shp[0])
        nv = it.product(tv.shape[1]) if isinstance(tv.shape, tuple) else 1
        if v != nv:
            raise TensorError(
                f"make_fragment_{what}({t}): mode 0 has {v} values but the atom's TV layout {tv} gives each "
                f"thread {nv}; partition it with this MMA's partition_{what}"
            )

    # ---- runtime fields (CuTe DSL's Atom.set / Atom.get)
    def _field_name(self, field: Any, what: str) -> str:
        if not self._state:
            raise LayoutError(
                f"{what}({field}) on an atom of {type(self._op).__name__}: set not implemented, the requesting "
                f"Atom has likely no runtime state"
            )
        name = getattr(field, "value", field)
        if not isinstance(name, str) or name not in self._state:
            raise LayoutError(
                f"{what}: invalid field, must be one of {sorted(self._state)} or their enum counterparts, but got {field}"
            )
        return name

    def set(self, field: Any, value: Any) -> None:
        """Set a runtime field of the atom, e.g. ``tiled_mma.set(warpgroup.Field.ACCUMULATE, True)``."""
        name = self._field_name(field, "set")
        hook = _tracing_hooks().mma_field
        if hook is not None and hook(self, name, value, False) is not NotImplemented:
            return  # a runtime field of a kernel (tcgen05 atoms: kernel/instr/tcgen05_mma.py)
        self._state[name] = bool(value)

    def get(self, field: Any) -> Any:
        """The value of a runtime field of the atom (warpgroup MMAs: ACCUMULATE, False when made)."""
        name = self._field_name(field, "get")
        hook = _tracing_hooks().mma_field
        if hook is not None:
            got = hook(self, name, None, True)
            if got is not NotImplemented:
                return got
        return self._state[name]

    def make_fragment_A(self, input: Any) -> Tensor:
        """A register fragment for this thread's partition of A (a shape gives a compact one).

        For SM90 ops that read A from shared memory the partitioned tensor itself is returned:
        the instruction reads it through a descriptor, there is no register copy.
        """
        return self._make_fragment("A", input, self._tv_a, 0)

    def make_fragment_B(self, input: Any) -> Tensor:
        """A register fragment for this thread's partition of B (see make_fragment_A)."""
        return self._make_fragment("B", input, self._tv_b, 1)

    def make_fragment_C(self, input: Any) -> Tensor:
        """A compact register accumulator of the accumulator type, shaped like the partition."""
        if self._op._make_fragment is not None:
            return self._op._make_fragment("C", input, self)
        acc = self._op._fragment_dtypes()[2]
        if isinstance(input, (tuple, int)):
            return _shape_fragment(_normalize(input), acc)
        if isinstance(input, Layout):
            return _shape_fragment(input.shape, acc)
        if not isinstance(input, Tensor):
            raise TensorError(f"make_fragment_C: expected a Tensor, a Layout or a shape, got {type(input).__name__}")
        self._check_partitioned("C", input, self._tv_c)
        layout = make_layout(input.shape)
        maker = getattr(type(input.engine), "make_fragment", None) or NumpyEngine.make_fragment  # registers in a kernel
        eng, off = maker(input, layout, acc)  # one fragment per thread of a batch
        if isinstance(eng, NumpyEngine) or eng.memspace == "rmem":  # on the host and in a kernel
            eng.align = 16  # CuTe DSL prints the MMA's fragments align<16> (make_rmem_tensor: align<32>)
        return Tensor(eng, layout, off, _checked=True)

    def _make_fragment(self, what: str, input: Any, tv: Layout, k: int) -> Tensor:
        if self._op._make_fragment is not None:
            return self._op._make_fragment(what, input, self)
        dt = self._op._fragment_dtypes()[k]
        if isinstance(input, (tuple, int)):
            return _shape_fragment(_normalize(input), dt)
        if isinstance(input, Layout):
            return _shape_fragment(input.shape, dt)
        if not isinstance(input, Tensor):
            raise TensorError(f"make_fragment_{what}: expected a Tensor, a Layout or a shape, got {type(input).__name__}")
        self._check_partitioned(what, input, tv)
        if self._op._operand_in_smem(what):
            if input.memspace != "smem":
                raise TensorError(
                    f"make_fragment_{what}({input}): {type(self._op).__name__} reads {what} from shared memory, "
                    f"but the tensor is in {input.memspace}"
                )
            return input
        return make_fragment_like_mma(input, dt)


def _shape_fragment(shape: Any, dt: Numeric) -> Tensor:
    """A compact register fragment of `shape`, aligned as CuTe DSL aligns make_fragment_A/B/C of a shape.

    CuTe DSL 4.8.1 gives such a fragment the alignment of its mode 0 in bytes (the values one
    instruction uses), not a fixed 16: ((2,2),1,4) of bf16 prints align<8>, (3,1,1) of f16 align<6>,
    and a one-element mode 0 prints no alignment at all.

    >>> import cutelab as cute
    >>> print(_shape_fragment(((2, 2), 1, 4), cute.BFloat16), _shape_fragment((1, 1, 1), cute.Float32))
    tensor<ptr<bf16, rmem, align<8>> o ((2,2),1,4):((1,2),0,4)> tensor<ptr<f32, rmem> o (1,1,1):(0,0,0)>
    """
    t = make_rmem_tensor(shape, dt)
    bits = it.product(shape[0] if isinstance(shape, tuple) else shape) * dt.width
    if bits % 8 == 0 and bits >= 8:  # sub-byte types keep the default
        t.engine.align = bits // 8
    return t


# --------------------------------------------------------------------------- tiled MMA

def _thr_flat_coord(layout: Layout, idx: Any) -> tuple:
    """(v, m, n, k): the flat coordinate of thread idx in thr_layout_vmnk (ints or arrays)."""
    out = []
    for s, d in zip(layout.shape, layout.stride):
        c = it.idx2crd(idx, s, d)
        out.append(it.crd2idx(c, s) if isinstance(s, tuple) else c)
    return tuple(out)


class TiledMma(MmaAtom):
    """An MMA atom tiled over threads (atom_layout_mnk) and values (permutation_mnk)."""

    __slots__ = ("_atom", "_vmnk", "_perm", "_cache")

    def __init__(self, atom: MmaAtom, atom_layout_mnk: Layout, permutation_mnk: tuple):
        super().__init__(atom.op, atom.shape_mnk, atom.thr_id, atom.tv_layout_A, atom.tv_layout_B, atom.tv_layout_C)
        self._atom = atom
        self._vmnk = tiled_product(atom.thr_id, atom_layout_mnk)
        self._perm = permutation_mnk
        self._cache: dict = {}
        self._state = dict(atom._state)

    # ---- properties, as in CuTe DSL
    @property
    def thr_layout_vmnk(self) -> Layout:
        return self._vmnk

    @property
    def permutation_mnk(self) -> tuple:
        return self._perm

    @property
    def size(self) -> int:
        return self._vmnk.size()

    def get_tile_size(self, mode_idx: int) -> int:
        """The extent of the tiled MMA in mode mode_idx (0: M, 1: N, 2: K)."""
        if not _is_int(mode_idx) or not 0 <= mode_idx < 3:
            raise LayoutError(f"get_tile_size({mode_idx!r}): the mode index must be 0 (M), 1 (N) or 2 (K)")
        p = self._perm[mode_idx]
        if p is None:
            return self._shape_mnk[mode_idx] * it.product(self._vmnk.shape[mode_idx + 1])
        return p.size()

    def _perm_tile(self, i: int) -> Any:
        """CuTe's permutation_mnk<I>(): the permutation, or the tile size when there is none."""
        p = self._perm[i]
        return self.get_tile_size(i) if p is None else p

    def __str__(self) -> str:
        return (
            "Tiled MMA\n"
            f"  Thr Layout VMNK: {_pretty(self.thr_layout_vmnk)}\n"
            f"  Permutation MNK: {_pretty(self.permutation_mnk)}\n"
            "MMA Atom\n"
            f"  ThrID:           {_pretty(self.thr_id)}\n"
            f"  Shape MNK:       {_pretty(self.shape_mnk)}\n"
            f"  TV Layout A:     {_pretty(self.tv_layout_A)}\n"
            f"  TV Layout B:     {_pretty(self.tv_layout_B)}\n"
            f"  TV Layout C:     {_pretty(self.tv_layout_C)}"
        )

    # ---- thrfrg: (M,N,...) -> ((ThrV,(ThrM,ThrN)),(FrgV,(RestM,RestN,...)))
    _OPERANDS = {"A": (0, 2, 1, 3), "B": (1, 2, 2, 3), "C": (0, 1, 1, 2)}

    def _thrfrg(self, what: str, layout: Layout) -> Layout:
        i, j, ti, tj = self._OPERANDS[what]
        tv = {"A": self._tv_a, "B": self._tv_b, "C": self._tv_c}[what]
        shp = layout.shape
        if not isinstance(shp, tuple) or len(shp) < 2:
            raise TensorError(
                f"partition_{what}: the tensor must have rank >= 2 ({'MK' if what == 'A' else 'NK' if what == 'B' else 'MN'}"
                f"[,...]), got the layout {layout}"
            )
        tile = (self.get_tile_size(i), self.get_tile_size(j))
        try:
            t = logical_divide(layout, (self._perm_tile(i), self._perm_tile(j)))            # (PermM,PermN)
            c = zipped_divide(t, (make_layout(self._shape_mnk[i]), make_layout(self._shape_mnk[j])))
            tvl = composition(c, (tv, None))                                                # ((ThrV,FrgV),(RestM,RestN))
            vm = self._vmnk.shape
            thr_tile = (None, (make_layout(it.product(vm[ti])), make_layout(it.product(vm[tj]))))
            return zipped_divide(tvl, thr_tile)                                             # ((ThrV,(ThrM,ThrN)),(FrgV,(RestM,RestN)))
        except LayoutError as e:
            raise TensorError(
                f"partition_{what}: the layout {layout} does not tile by this MMA's {tile[0]}x{tile[1]} "
                f"{'MK' if what == 'A' else 'NK' if what == 'B' else 'MN'} tile ({e})"
            ) from None

    def _thrfrg_operand(self, what: str, x: Any) -> Any:
        """CuTe DSL's TiledMma._thrfrg_A/_B/_C: a layout (or a tensor's layout) of an operand's (MN, K[, ...])
        tile as ((ThrV, (ThrM, ThrN)), (FrgV, (RestM, RestN))) (a tensor keeps its memory)."""
        from ..tensor import Tensor

        if isinstance(x, Tensor):
            return x._map(lambda lay: self._thrfrg(what, lay))
        return self._thrfrg(what, x)

    def _thrfrg_A(self, input: Any, *, loc: Any = None, ip: Any = None) -> Any:
        return self._thrfrg_operand("A", input)

    def _thrfrg_B(self, input: Any, *, loc: Any = None, ip: Any = None) -> Any:
        return self._thrfrg_operand("B", input)

    def _thrfrg_C(self, input: Any, *, loc: Any = None, ip: Any = None) -> Any:
        return self._thrfrg_operand("C", input)

    def _thridx_2_thrid(self) -> Layout:
        key = "thridx"
        if key not in self._cache:
            v = self._vmnk
            full = Layout._raw((v.shape, complement(v).shape), (v.stride, complement(v).stride))
            self._cache[key] = composition(_raw((v.size(), 1), (1, 0)), right_inverse(full))
        return self._cache[key]

    def _tv_tiled(self, what: str) -> Layout:
        key = "tv" + what
        if key in self._cache:
            return self._cache[key]
        i, j = self._OPERANDS[what][:2]
        ref = make_layout((self.get_tile_size(i), self.get_tile_size(j)))
        frg = self._thrfrg(what, ref)
        vm = self._vmnk.shape
        sm, sn = it.product(vm[1]), it.product(vm[2])
        if what == "A":   # (ThrV,(ThrM,ThrK)) -> (ThrV,((ThrM,ThrN),ThrK)): ThrN does not move A
            frg = composition(frg, ((None, (_raw((sm, sn), (1, 0)), None)), None))
        elif what == "B":  # (ThrV,(ThrN,ThrK)) -> (ThrV,((ThrM,ThrN),ThrK)): ThrM does not move B
            frg = composition(frg, ((None, (_raw((sm, sn), (0, 1)), None)), None))
        out = composition(frg, (self._thridx_2_thrid(), None))
        self._cache[key] = out
        return out

    @property
    def tv_layout_A_tiled(self) -> Layout:
        """(thread index, value) -> column-major index in the tile_size(M) x tile_size(K) tile of A."""
        return self._tv_tiled("A")

    @property
    def tv_layout_B_tiled(self) -> Layout:
        """(thread index, value) -> column-major index in the tile_size(N) x tile_size(K) tile of B."""
        return self._tv_tiled("B")

    @property
    def tv_layout_C_tiled(self) -> Layout:
        """(thread index, value) -> column-major index in the tile_size(M) x tile_size(N) tile of C."""
        return self._tv_tiled("C")

    # ---- partition shapes
    def _partition_shape(self, what: str, shape: Any) -> Any:
        shape = _normalize(shape)
        if not isinstance(shape, tuple) or len(shape) < 2 or any(
            not _is_int(s) or s < 1 for s in it.flatten_to_tuple(shape)
        ):
            raise TensorError(f"partition_shape_{what}({_pretty(shape)}): expected a shape of rank >= 2 with positive extents")
        i, j = self._OPERANDS[what][:2]
        for mode, (n, name) in enumerate(zip(shape[:2], ("MK" if what == "A" else "NK" if what == "B" else "MN"))):
            tile = self.get_tile_size((i, j)[mode])
            if n % tile and tile % n:  # CuTe's static shape_div condition, which the DSL checks here
                raise TensorError(
                    f"partition_shape_{what}({_pretty(shape)}): the {name} extent {n} and the tile size {tile} do not "
                    f"divide one another"
                )
        frg = self._thrfrg(what, make_layout(shape))
        shp = _slice_thr(frg, 0).shape
        # as the DSL answers: the value mode in the profile of the atom's value mode, each rest mode one extent
        tv = {"A": self._tv_a, "B": self._tv_b, "C": self._tv_c}[what]
        vprof = tv.shape[1] if isinstance(tv.shape, tuple) else 1
        return (it.product_like(shp[0], vprof),) + tuple(it.product(x) for x in shp[1:])

    def partition_shape_A(self, shape_mk: Any) -> Any:
        """The shape of one thread's partition of an M x K (x ...) tensor: (FrgV, RestM, RestK, ...)."""
        return self._partition_shape("A", shape_mk)

    def partition_shape_B(self, shape_nk: Any) -> Any:
        """The shape of one thread's partition of an N x K (x ...) tensor: (FrgV, RestN, RestK, ...)."""
        return self._partition_shape("B", shape_nk)

    def partition_shape_C(self, shape_mn: Any) -> Any:
        """The shape of one thread's partition of an M x N (x ...) tensor: (FrgV, RestM, RestN, ...)."""
        return self._partition_shape("C", shape_mn)

    # ---- thread slices
    def get_slice(self, thr_idx: Any) -> "ThrMma":
        """Thread thr_idx's view (an int, or a numpy array of thread ids for a batch of views)."""
        return ThrMma(self, thr_idx)

    thr_slice = get_slice
    get_thread_slice = get_slice


def _slice_thr(frg: Layout, thr: Any) -> Layout:
    """frg[(thr, (_, (_,...)))] as a layout: keep (FrgV, Rest...) flattened one level."""
    rest = frg.shape[1][1]
    coord = (thr, (None, tuple(None for _ in rest) if isinstance(rest, tuple) else None))
    return slice_(frg, coord)


class ThrMma(TiledMma):
    """One thread's slice of a TiledMma: partition_A/B/C cut tensors into its fragments."""

    __slots__ = ("_tiled", "_thr_idx", "_vmnk_crd")

    def __init__(self, tiled: TiledMma, thr_idx: Any):
        self._tiled = tiled
        self._op, self._shape_mnk, self._thr_id = tiled._op, tiled._shape_mnk, tiled._thr_id
        self._tv_a, self._tv_b, self._tv_c = tiled._tv_a, tiled._tv_b, tiled._tv_c
        self._atom, self._vmnk, self._perm, self._cache = tiled._atom, tiled._vmnk, tiled._perm, tiled._cache
        self._state = tiled._state  # one runtime state, as the DSL's ThrMma shares its TiledMma's trait
        n = tiled.size
        if hasattr(thr_idx, "as_index") and hasattr(thr_idx, "refs"):
            # a kernel's runtime Int32 (CUTLASS's MLA decode slices by the CTA's coordinate in its pair, carried by
            # its tile scheduler through a runtime loop): the register it is in, as an index
            thr_idx = thr_idx.as_index()
        if isinstance(thr_idx, np.ndarray):
            if thr_idx.dtype.kind not in "iu":
                raise TensorError(f"get_slice: thread indices must be integers, got dtype {thr_idx.dtype}")
            if thr_idx.size and int(thr_idx.min()) < 0:
                raise TensorError(f"get_slice: negative thread indices for this tiled MMA of {n} threads")
        elif _is_int(thr_idx):
            thr_idx = int(thr_idx)
            if thr_idx < 0:
                raise TensorError(f"get_slice({thr_idx}): the thread index must be >= 0 (this tiled MMA has {n} threads)")
        elif hasattr(thr_idx, "expr_str") and hasattr(thr_idx, "lo"):  # a kernel's symbolic thread index
            # a range reaching below 0 is a warp-specialised kernel's slice, taken by every warp and used by the
            # MMA warps only (CUTLASS's Hopper GEMMs: warp_group_idx - num_dma_warp_groups gives the producer warps
            # negative indices)
            if thr_idx.hi < 0:
                raise TensorError(f"get_slice: the thread index ranges over [{thr_idx.lo}, {thr_idx.hi}], below 0")
        # an index at or past the MMA's threads (a block of several warp groups slicing one warp group's MMA with
        # its thread_idx) takes thread idx % n's slice, as CuTe DSL's: each mode's coordinate is (idx // d) % s
        else:
            raise TensorError(f"get_slice: expected an int thread index (or a numpy array of them), got {thr_idx!r}")
        self._thr_idx = thr_idx
        crd = _thr_flat_coord(tiled._vmnk, thr_idx)
        if isinstance(thr_idx, np.ndarray):  # keep the batch even where a mode has one thread
            crd = tuple(np.broadcast_to(np.asarray(c, dtype=np.int64), thr_idx.shape) for c in crd)
        self._vmnk_crd = crd

    @property
    def thr_idx(self) -> Any:
        return self._thr_idx

    @property
    def thr_vmnk(self) -> tuple:
        """The thread's (v, m, n, k) coordinate in thr_layout_vmnk."""
        return self._vmnk_crd

    def _partition(self, what: str, tensor: Any) -> Tensor:
        if not isinstance(tensor, Tensor):
            raise TensorError(f"partition_{what}: expected a Tensor, got {type(tensor).__name__}")
        v, m, n, k = self._vmnk_crd
        thr = {"A": (v, (m, k)), "B": (v, (n, k)), "C": (v, (m, n))}[what]
        t = tensor._map(lambda lay: self._thrfrg(what, lay))
        rest = t.layout.shape[1][1]
        return t[(thr, (None, tuple(None for _ in rest) if isinstance(rest, tuple) else None))]

    def partition_A(self, input_mk: Tensor, *, loc: Any = None, ip: Any = None) -> Tensor:
        """This thread's values of an M x K (x ...) tensor: (FrgV, RestM, RestK, ...)."""
        return self._partition("A", input_mk)

    def partition_B(self, input_nk: Tensor, *, loc: Any = None, ip: Any = None) -> Tensor:
        """This thread's values of an N x K (x ...) tensor: (FrgV, RestN, RestK, ...)."""
        return self._partition("B", input_nk)

    def partition_C(self, input_mn: Tensor, *, loc: Any = None, ip: Any = None) -> Tensor:
        """This thread's values of an M x N (x ...) tensor: (FrgV, RestM, RestN, ...)."""
        return self._partition("C", input_mn)

    def partition_fragment_A(self, input_mk: Tensor) -> Tensor:
        return self.make_fragment_A(self.partition_A(input_mk))

    def partition_fragment_B(self, input_nk: Tensor) -> Tensor:
        return self.make_fragment_B(self.partition_B(input_nk))

    def partition_fragment_C(self, input_mn: Tensor) -> Tensor:
        return self.make_fragment_C(self.partition_C(input_mn))


# --------------------------------------------------------------------------- constructors

def make_mma_atom(op: MmaOp, **kwargs: Any) -> MmaAtom:
    """The MMA atom of an MMA operation.

    >>> import cutelab as cute
    >>> print(cute.make_mma_atom(cute.nvgpu.MmaUniversalOp(cute.Float32)))
    MMA Atom
      ThrID:       1:0
      Shape MNK:   (1,1,1)
      TV Layout A: (1,1):(0,0)
      TV Layout B: (1,1):(0,0)
      TV Layout C: (1,1):(0,0)
    """
    if not isinstance(op, MmaOp):
        raise TypeError(f"make_mma_atom: expected an MMA Op, but got an instance of {type(op).__name__}")
    shape_mnk, thr_id, a, b, c = op._atom_layouts()
    return MmaAtom(op, shape_mnk, thr_id, a, b, c)


def _norm_perm(p: Any, mode: str) -> Any:
    """One mode of permutation_mnk: None, or a Layout (an int n is the identity n:1, as in the DSL)."""
    if p is None or isinstance(p, Layout):
        return p
    if isinstance(p, str):
        return parse_layout(p)
    if _is_int(p):
        if p < 1:
            raise LayoutError(f"make_tiled_mma: permutation_mnk mode {mode} must be a positive size, got {p}")
        return make_layout(int(p))
    raise LayoutError(
        f"make_tiled_mma: permutation_mnk mode {mode} must be None, an int or a Layout, got {_pretty(p)} "
        f"(a tuple of tilers for one mode is not accepted by CuTe DSL 4.8.1: use one Layout)"
    )


#: the most threads a tiled MMA may have (CUDA allows 1024 per block; this leaves room for pictures)
MAX_THREADS = 1 << 20


def _numbers_one_to_one(L: Layout) -> bool:
    """L maps its domain one-to-one onto [0, size(L)), decided from its modes (nothing allocated):
    sorted by stride, each non-trivial mode's stride is the product of the sizes before it."""
    modes = [(d, s) for s, d in zip(it.flatten_to_tuple(L.shape), it.flatten_to_tuple(L.stride)) if s != 1]
    if not all(isinstance(d, int) and isinstance(s, int) for d, s in modes):
        return False
    want = 1
    for d, s in sorted(modes):
        if d != want:
            return False
        want *= s
    return True


def make_tiled_mma(op_or_atom: Any, atom_layout_mnk: Any = (1, 1, 1), permutation_mnk: Any = None, **kwargs: Any) -> TiledMma:
    """Tile an MMA op or atom over threads (atom_layout_mnk) and values (permutation_mnk).

    atom_layout_mnk is a rank-3 Layout (or a shape, made column-major) of atoms over (M,N,K).
    permutation_mnk is None or a rank-3 tuple whose modes are None (no permutation), an int n
    (the tile size, kept as the layout n:1) or a Layout that reorders that mode before the
    atoms tile it.

    >>> import cutelab as cute
    >>> mma = cute.make_tiled_mma(cute.nvgpu.MmaUniversalOp(cute.Float32), (16, 8, 1))
    >>> print(mma.thr_layout_vmnk, mma.tv_layout_C_tiled)
    (1,16,8,1):(0,1,16,0) (128,(1,(1,1))):(1,(0,(0,0)))
    """
    if isinstance(op_or_atom, MmaAtom) and not isinstance(op_or_atom, TiledMma):
        atom = op_or_atom
    elif isinstance(op_or_atom, MmaOp):
        atom = make_mma_atom(op_or_atom)
    else:
        raise TypeError(f"make_tiled_mma: expected an MMA Op or Atom, but got an instance of {type(op_or_atom).__name__}")
    if isinstance(atom_layout_mnk, str):
        atom_layout_mnk = parse_layout(atom_layout_mnk)
    if not isinstance(atom_layout_mnk, Layout):
        try:
            atom_layout_mnk = make_layout(_normalize(atom_layout_mnk))
        except (LayoutError, TypeError) as e:
            raise LayoutError(f"make_tiled_mma: atom_layout_mnk {atom_layout_mnk!r} is not a layout or a shape ({e})") from None
    shp = atom_layout_mnk.shape
    if not isinstance(shp, tuple) or len(shp) != 3:
        raise LayoutError(f"make_tiled_mma: expects rank-3 MNK atom layout, but got {atom_layout_mnk}")
    n = atom_layout_mnk.size()
    if not _numbers_one_to_one(atom_layout_mnk):
        # CuTe DSL 4.8.1 accepts these and answers with meaningless layouts; refuse them instead
        seen = f"{sorted(set(atom_layout_mnk.offsets().tolist()))[:8]}{'...' if n > 8 else ''}" if n <= 1 << 16 \
            else "other offsets"
        raise LayoutError(
            f"make_tiled_mma: atom_layout_mnk {atom_layout_mnk} must number its {n} atoms one-to-one with "
            f"[0, {n}) (a compact layout), but it maps them to {seen}"
        )
    athr = atom.thr_id.size()
    if n * athr > MAX_THREADS:
        raise LayoutError(f"make_tiled_mma: atom_layout_mnk {atom_layout_mnk} tiles {n} atoms of {athr} threads: "
                          f"{n * athr} threads is past the {MAX_THREADS} a tiled MMA may have")
    if permutation_mnk is None:
        perm = (None, None, None)
    else:
        if isinstance(permutation_mnk, list):
            permutation_mnk = tuple(permutation_mnk)
        if not isinstance(permutation_mnk, tuple) or len(permutation_mnk) != 3:
            raise LayoutError(
                f"make_tiled_mma: TiledMMA requires rank-3 permutation_mnk (M, N, K tilers, None for none), "
                f"got {_pretty(permutation_mnk)}"
            )
        perm = tuple(_norm_perm(p, m) for p, m in zip(permutation_mnk, "MNK"))
    return TiledMma(atom, atom_layout_mnk, perm)


# --------------------------------------------------------------------------- host GEMM


def _as_numbers(raw: np.ndarray, dtype: Numeric) -> np.ndarray:
    """Stored values (batch + (size,)) as float64 or int64 numbers (cutelab.dtypes.to_compute, exact)."""
    if dtype.kind in ("int", "uint", "bool"):
        return raw.astype(np.int64)
    return to_compute(raw, dtype).astype(np.float64)


def _load_modes(t: Any, what: str) -> tuple:
    """The values of a (batched) tensor of rank <= 3 as an array (B, m0, m1, m2), and its batch shape."""
    if not isinstance(t, Tensor):
        raise TensorError(f"gemm: operand {what} must be a Tensor, got {type(t).__name__}")
    if not hasattr(t.engine, "data"):
        raise TensorError(f"gemm: operand {what} ({t}) is not host (numpy) data")
    ssa = t.load()
    vals = _as_numbers(ssa.values, t.element_type)
    batch = vals.shape[:-1]
    nb = int(np.prod(batch)) if batch else 1
    shp = it.product_each(t.shape)
    shp = shp if isinstance(shp, tuple) else (shp,)
    full = tuple(shp) + (1,) * (3 - len(shp))
    return vals.reshape((nb,) + tuple(reversed(full))).transpose(0, 3, 2, 1), batch


def gemm(atom: Any, d: Tensor, a: Tensor, b: Tensor, c: Tensor) -> None:
    """d = a * b + c on the host, over an MMA atom's (or tiled MMA's) thread-value layouts.

    a, b, c, d are the per-thread fragments of every thread of the MMA, batched: batch entry t is
    thread t (as from ``tiled_mma.get_slice(np.arange(tiled_mma.size))``); an MMA of one thread
    also takes plain (unbatched) tensors. Shapes as cute.gemm dispatches them: (V) x (V) => (V),
    (M) x (N) => (M,N), (M,K) x (N,K) => (M,N), (V,M) x (V,N) => (V,M,N), (V,M,K) x (V,N,K) => (V,M,N).
    Each atom instance gathers its A (M x K), B (N x K) and C (M x N) tiles from its threads'
    fragments through tv_layout_A/B/C, computes C + A B^T with the sum over all K, and scatters
    the result into d. The sum is exact (float64 for floats, int64 for integers) and rounded once
    to d's type; the hardware rounds the partial sums its own way. d may be c. Warpgroup MMAs
    add c only when their ACCUMULATE field is set (``tiled_mma.set(warpgroup.Field.ACCUMULATE,
    True)``); it is False when the atom is made, as in CuTe DSL.

    >>> import numpy as np, cutelab as cute
    >>> mma = cute.make_tiled_mma(cute.nvgpu.MmaUniversalOp(cute.Float32), (2, 2, 1))
    >>> thr = mma.get_slice(np.arange(4))
    >>> A = cute.make_tensor(np.arange(4, dtype=np.float32), cute.make_layout((2, 2)))
    >>> B = cute.make_tensor(np.ones(4, dtype=np.float32), cute.make_layout((2, 2)))
    >>> C = cute.make_tensor(np.zeros(4, dtype=np.float32), cute.make_layout((2, 2)))
    >>> cute.gemm(mma, thr.partition_C(C), thr.partition_A(A), thr.partition_B(B), thr.partition_C(C))
    >>> C.numpy().tolist()
    [[2.0, 2.0], [4.0, 4.0]]
    """
    tiled = atom if isinstance(atom, TiledMma) else make_tiled_mma(atom) if isinstance(atom, (MmaAtom, MmaOp)) else None
    if tiled is None:
        raise TypeError(f"gemm: expected an MMA atom, op or tiled MMA, got {type(atom).__name__}")
    ra, rb, rc, rd = (len(x.shape) if isinstance(x.shape, tuple) else 1 for x in (a, b, c, d))
    if ra != rb:
        raise TensorError(f"gemm: `a` and `b` must have the same rank, got {ra} and {rb}")
    if rc != rd:
        raise TensorError(f"gemm: `c` and `d` must have the same rank, got {rc} and {rd}")
    # the dispatch rules, as positions of (V, M|N, K) in each operand's modes (None: an implicit 1)
    if ra == 1 and rc == 1:
        ab, cd = (0, None, None), (0, None, None)
    elif ra == 1 and rc == 2:
        ab, cd = (None, 0, None), (None, 0, 1)
    elif ra == 2 and rc == 2:
        ab, cd = (None, 0, 1), (None, 0, 1)
    elif ra == 2 and rc == 3:
        ab, cd = (0, 1, None), (0, 1, 2)
    elif ra == 3 and rc == 3:
        ab, cd = (0, 1, 2), (0, 1, 2)
    else:
        raise TensorError(f"gemm: no dispatch for `a` of rank {ra} and `c` of rank {rc} (rank 1: c rank <= 2, "
                          f"rank 2: c rank 2 or 3, rank 3: c rank 3)")

    def load(t: Tensor, what: str, pos: tuple) -> tuple:
        v, batch = _load_modes(t, what)  # (B, m0, m1, m2): place the modes at pos (V, M|N, K|N)
        dims = tuple(1 if p is None else v.shape[1 + p] for p in pos)
        return v.reshape((v.shape[0],) + dims), batch

    A, bA = load(a, "a", ab)
    Bv, bB = load(b, "b", ab)
    C, bC = load(c, "c", cd)
    _, bD = load(d, "d", cd)
    nthr = tiled.size
    for what, bt in (("a", bA), ("b", bB), ("c", bC), ("d", bD)):
        if bt != ((nthr,) if bt or nthr != 1 else ()):
            raise TensorError(
                f"gemm: operand {what} must hold the fragments of all {nthr} threads of the MMA as a batch "
                f"(batch entry t = thread t, e.g. partitions by get_slice(np.arange({nthr}))), got batch shape {bt}"
            )
    va, vb, vc = (it.product(tv.shape[1]) if isinstance(tv.shape, tuple) else 1
                  for tv in (tiled.tv_layout_A, tiled.tv_layout_B, tiled.tv_layout_C))
    if (A.shape[1], Bv.shape[1], C.shape[1]) != (va, vb, vc):
        raise TensorError(
            f"gemm: the value modes hold ({A.shape[1]}, {Bv.shape[1]}, {C.shape[1]}) values but the atom's A, B, C "
            f"fragments have ({va}, {vb}, {vc}); partition the operands with this MMA"
        )
    if A.shape[2] != C.shape[2] or Bv.shape[2] != C.shape[3] or A.shape[3] != Bv.shape[3]:
        raise TensorError(
            f"gemm: fragment rest modes do not agree: a (M={A.shape[2]}, K={A.shape[3]}), b (N={Bv.shape[2]}, "
            f"K={Bv.shape[3]}), c (M={C.shape[2]}, N={C.shape[3]})"
        )
    vmnk = tiled.thr_layout_vmnk
    if it.product(vmnk.shape[3]) != 1:
        raise TensorError(f"gemm: tiled MMAs with threads along K ({vmnk}) are not supported on the host: "
                          f"those threads would each write the same C values")
    T = it.product(vmnk.shape[0])
    crd = _thr_flat_coord(vmnk, np.arange(nthr))
    grp = crd[1] + crd[2] * it.product(vmnk.shape[1])
    G = nthr // T
    thr_of = np.full((G, T), -1, dtype=np.int64)
    thr_of[grp, crd[0]] = np.arange(nthr)
    if (thr_of < 0).any():
        raise TensorError(f"gemm: the thread layout {vmnk} is not a bijection onto [0, {nthr})")
    Ma, Na, Ka = tiled.shape_mnk

    def tv_pq(tv: Layout, P: int) -> tuple:
        n = it.product(tv.shape[1]) if isinstance(tv.shape, tuple) else 1
        offs = tv.offsets().reshape(n, T).T  # (thread, value) -> index in the P x Q tile
        return offs % P, offs // P

    pa, qa = tv_pq(tiled.tv_layout_A, Ma)
    pb, qb = tv_pq(tiled.tv_layout_B, Na)
    pc, qc = tv_pq(tiled.tv_layout_C, Ma)

    def gather(vals: np.ndarray, p: np.ndarray, q: np.ndarray, P: int, Q: int) -> np.ndarray:
        out = np.zeros((G, P, Q) + vals.shape[2:], dtype=vals.dtype)
        out[:, p, q] = vals[thr_of]
        return out

    At = gather(A, pa, qa, Ma, Ka)
    Bt = gather(Bv, pb, qb, Na, Ka)
    Ct = gather(C, pc, qc, Ma, Na)
    Dt = np.einsum("gmkxz,gnkyz->gmnxy", At, Bt)
    if tiled._state.get("accum_c", True):  # a warpgroup MMA with ACCUMULATE False computes d = a * b
        Dt = Dt + Ct
    out = np.zeros_like(C)
    out[thr_of] = Dt[:, pc, qc]
    # back to d's own modes, column-major, one row per thread
    nb = out.shape[0]
    flat = out.transpose(0, 3, 2, 1).reshape(nb, -1)
    if not bD:
        flat = flat[0]
    d.store(flat.astype(np.float64) if d.element_type.is_float else flat)


def _tracing_hooks() -> Any:
    from ..tracing import hooks

    return hooks
