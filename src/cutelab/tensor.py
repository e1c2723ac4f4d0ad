"""Tensor: an engine (numpy array, torch tensor, any DLPack array) + an offset + a layout.

Views never copy: slicing, composition, divides and partitions build a new (engine, offset,
layout) over the same storage, so writing through a partition writes the original array.

The offset may be an int, a numpy integer array (a *batch* of tensors that share a layout,
e.g. one per thread: partition with ``thread_idx = np.arange(256)`` and every thread's view is
computed at once), or a symbolic integer from the kernel tracer. The engine does the reads and
writes: ``engine.load(offset, layout)``, ``engine.store(offset, layout, values)``,
``engine.read_one(off)``, ``engine.write_one(off, v)``.

>>> import numpy as np, cutelab as cute
>>> a = np.arange(24, dtype=np.int32)
>>> t = cute.make_tensor(a, cute.make_layout(((2, 2), (2, 3)), stride=((2, 12), (1, 4))))
>>> t[(1, None)].load().numpy().tolist()
[2, 3, 6, 7, 10, 11]
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from . import display as _display
from . import int_tuple as it
from .tracing import SymbolicIndex, TracedValue
from .tracing import hooks as _hooks
from .algebra import (
    _raw, composition, flat_divide, logical_divide, make_ordered_layout, tiled_divide,
    tiled_product, zipped_divide,
)
from .dynamic_layout import mark_compact_shape_dynamic, mark_layout_dynamic
from .errors import LayoutError, TensorError
from .swizzle import ComposedLayout
from .layout import (
    Layout, _normalize, dice, make_identity_layout, make_layout, make_layout_like, slice_, slice_and_offset,
)
from .numeric import Numeric, is_numeric_type
# the values, the engines and the printed text live in their own modules; every name they define is
# also a name of this module, as it was before they moved
from .tensor_ssa import (  # noqa: F401
    TensorSSA, _TensorSSAMeta, _checked_values, _fold_bool, _from_real, _is_ssa, _sample_text, _to_real,
    _type_name, all_, any_, bf16_to_f32, f32_to_bf16, ssa_where,
)
from .tensor_engines import (  # noqa: F401
    _RMEM_ALIGN, IdentityEngine, NumpyEngine, Packed4Engine, Pointer, PointerInfo, PointerType, _SwizzleType, _add,
    _is_batch, _layout_extent, _pad_coord, _pow2_divisor, _typed_scalar, mem_type_name,
)
from .tensor_print import (  # noqa: F401
    _INDENT, _dsl_value, _elide, _row_text, _rows_text, _tensor_values, format_tensor, tensor_text,
)

__all__ = [
    "Tensor", "TensorSSA", "PointerInfo", "NumpyEngine", "IdentityEngine", "Pointer", "make_tensor",
    "make_identity_tensor", "make_fragment_like", "make_layout_fragment_like", "make_rmem_tensor",
    "make_fragment", "local_tile", "local_partition", "inner_partition", "outer_partition",
    "print_tensor", "bf16_to_f32", "f32_to_bf16",
]


# --------------------------------------------------------------------------- values of a tensor's shape

def _like_of(a: Any, dtype: Any, what: str) -> tuple:
    if _is_ssa(a):
        return a.shape, dtype or a.dtype, a.values.shape[:-1]
    if isinstance(a, Tensor) and not isinstance(a.engine, IdentityEngine):
        return a.layout.shape, dtype or a.element_type, a.batch
    if isinstance(a, (TracedValue, SymbolicIndex)):
        raise TensorError(f"cute.{what} inside a kernel is not supported yet; use cute.where(cond, x, value) "
                          f"or a register tensor's fill(value)")
    raise TensorError(f"cute.{what}: expected a TensorSSA or a Tensor, got {type(a).__name__} {a!r}")


def full(shape: Any, fill_value: Any, dtype: Numeric) -> TensorSSA:
    """A TensorSSA of the given shape and element type, every value fill_value (CuTe DSL's cute.full).

    >>> from cutelab.numeric import Float32
    >>> full((2, 2), 1.5, Float32).numpy().tolist()
    [[1.5, 1.5], [1.5, 1.5]]
    """
    shape = _normalize(shape)
    n = it.product(shape)
    return TensorSSA(np.broadcast_to(_checked_values(fill_value, dtype, "cute.full"), (n,)).copy(), shape, dtype)


def _kernel_value(a: Any) -> bool:
    """a is a value inside a traced kernel."""
    return isinstance(a, TracedValue)


def full_like(a: Any, fill_value: Any, dtype: Numeric | None = None) -> TensorSSA:
    """A TensorSSA shaped like a (a TensorSSA or a Tensor), of a's element type or dtype, all fill_value."""
    if _kernel_value(a):  # in a kernel: a value of constants (elementwise_add.ipynb's mul_relu)
        return _hooks.full_like(a, fill_value, dtype)
    shape, dt, batch = _like_of(a, dtype, "full_like")
    vals = _checked_values(fill_value, dt, "cute.full_like")
    return TensorSSA(np.broadcast_to(vals, tuple(batch) + (it.product(shape),)).copy(), shape, dt)


def zeros_like(a: Any, dtype: Numeric | None = None) -> TensorSSA:
    """full_like(a, 0)."""
    if _kernel_value(a):
        return full_like(a, 0, dtype)
    shape, dt, _ = _like_of(a, dtype, "zeros_like")
    return full_like(a, False if dt.kind == "bool" else 0, dt)


def ones_like(a: Any, dtype: Numeric | None = None) -> TensorSSA:
    """full_like(a, 1)."""
    if _kernel_value(a):
        return full_like(a, 1, dtype)
    shape, dt, _ = _like_of(a, dtype, "ones_like")
    return full_like(a, True if dt.kind == "bool" else 1, dt)


def empty_like(a: Any, dtype: Numeric | None = None) -> TensorSSA:
    """A TensorSSA shaped like a; its values are unspecified (zeros here)."""
    return zeros_like(a, dtype)


# --------------------------------------------------------------------------- Tensor

class TensorType:
    """What ``Tensor.type`` prints: element type, memory space, alignment and layout (or, for a
    coordinate tensor, its origin and layout)."""

    def __init__(self, t: "Tensor"):
        self.element_type = t.element_type
        self.layout = t.layout
        eng = t.engine
        if isinstance(eng, IdentityEngine):
            self.text = f'!cute.coord_tensor<"{eng.ptr_str(t.offset)}", "{t.layout}">'
        else:
            al = eng.alignment(t.offset) if hasattr(eng, "alignment") else t.element_type.bytes
            text = t.layout
            view = getattr(eng, "dsl_parts", None)  # a swizzled shared-memory view: as CuTe DSL holds it
            parts = view(t.offset, t.layout) if view is not None else None
            if parts is not None:
                text, al = parts
            psw = getattr(eng, "ptr_swizzle", None)  # a swizzled pointer (CuTe DSL: its type names the swizzle)
            if psw is not None:
                al = eng.ptr_align(t.offset)
            al_s = f"align<{al}>, " if al > t.element_type.bytes else ""  # as ptr<...>: only above the element's
            if psw is not None:
                al_s += f"{psw}, "
            self.text = f'!cute.memref<{mem_type_name(t.element_type)}, {eng.memspace}, {al_s}"{text}">'

    def __str__(self) -> str:
        return self.text

    __repr__ = __str__


class Tensor:
    """engine + offset + layout. ``T[coord]`` reads an element or, with None in coord, slices."""

    # coord: None, or the coordinates each element has in an origin tensor whose bounds predicate
    # accesses automatically (cute.experimental's kernels: compat/experimental/auto_bounds.py): an
    # identity-engine Tensor of this tensor's shape, which the views below derive as they derive this one
    # (slices, divides, compositions, mode regroupings, atom partitions); a view derived another way
    # holds a LostCoords saying which, and an automatic bound on it is refused
    __slots__ = ("engine", "offset", "layout", "coord")

    def __init__(self, engine: Any, layout: Layout, offset: Any = 0, _checked: bool = False):
        self.coord: Any = None
        if not isinstance(layout, (Layout, ComposedLayout)):
            raise TensorError(f"make_tensor: expected a Layout, got {type(layout).__name__}")
        self.engine = engine
        view = getattr(engine, "view_layout", None)  # a swizzled shared-memory view: its layout as CuTe DSL's
        self.layout = view(layout, offset) if view is not None and type(layout) is Layout else layout
        self.offset = offset
        # a traced kernel's tensors may overhang their storage (partial tiles, predicated): its
        # accesses are checked at launch instead
        if (not _checked and hasattr(engine, "__len__") and not isinstance(engine, IdentityEngine)
                and not hasattr(engine, "param")):
            self._check_bounds()

    def _check_bounds(self) -> None:
        if not isinstance(self.offset, (int, np.integer, np.ndarray)):
            return  # symbolic: the kernel checks at launch
        lo, hi = _layout_extent(self.layout)
        off_lo = int(np.min(self.offset)) if _is_batch(self.offset) else int(self.offset)
        off_hi = int(np.max(self.offset)) if _is_batch(self.offset) else int(self.offset)
        n = len(self.engine)
        if it.product(self.layout.shape) and (off_lo + lo < 0 or off_hi + hi >= n):
            raise TensorError(
                f"make_tensor: layout {self.layout} at offset {off_lo if off_lo == off_hi else (off_lo, off_hi)} "
                f"reaches offsets [{off_lo + lo}, {off_hi + hi}], outside the storage of {n} elements"
            )

    def _new(self, layout: Layout, offset: Any = None) -> "Tensor":
        t = Tensor(self.engine, layout, self.offset if offset is None else offset, _checked=True)
        if self.coord is not None:
            t.coord = self.coord if isinstance(self.coord, LostCoords) else LostCoords(_caller_name())
        return t

    def _map(self, fn: Any, offset: Any = None) -> "Tensor":
        """The view of this tensor over layout fn(self.layout) (at offset, default this one's), with its
        coordinates (``coord``) mapped by the same fn."""
        t = Tensor(self.engine, fn(self.layout), self.offset if offset is None else offset, _checked=True)
        if self.coord is not None:
            t.coord = _derived_coords(self.coord, lambda c: c._map(fn), _caller_name())
        return t

    # ---- attributes, as in CuTe DSL
    @property
    def shape(self) -> Any:
        return self.layout.shape

    @property
    def stride(self) -> Any:
        return self.layout.stride

    @property
    def value(self) -> "Tensor":
        """CuTe DSL's MLIR value of the tensor: the tensor itself (what the cutlass._mlir stand-ins take)."""
        return self

    @property
    def iterator(self) -> Any:
        at = getattr(self.engine, "iterator_at", None)  # a kernel's TMA tensor: its coordinates (frontend/tma_coords.py)
        return at(self.offset) if at is not None else Pointer(self.engine, self.offset)

    @property
    def element_type(self) -> Any:
        return self.engine.dtype

    @element_type.setter
    def element_type(self, dtype: Any) -> None:
        """CuTe DSL's ``t.element_type = dtype``: the storage read as another type of the same width
        (cutlass.utils.create_cute_tensor_for_fp8 makes fp8 tensors over the bytes of a uint8 tensor)."""
        import copy

        old = self.engine.dtype if hasattr(self.engine, "dtype") else None
        if is_numeric_type(dtype) and old is not None and dtype.width == 4 and old.width >= 8 and \
                dtype.kind != "bool":  # 4-bit elements packed into the bytes
            t = retype_to_4bit(self, dtype)
            self.engine, self.offset = t.engine, t.offset
            return
        if not is_numeric_type(dtype) or old is None or dtype.width != old.width or dtype.kind == "bool":
            raise TensorError(f"{self}.element_type = {dtype}: the storage holds {old}; only a type of the same "
                              f"width ({getattr(old, 'width', '?')} bits) can be put over it")
        eng = copy.copy(self.engine)  # other tensors over the same storage keep their type
        eng.dtype = dtype
        self.engine = eng

    @property
    def _dtype(self) -> Any:
        """CuTe DSL's private name of the element type, which published kernels read (CUTLASS's Hopper FMHA)."""
        return self.engine.dtype

    @property
    def dtype(self) -> Any:
        """The element type (CuTe DSL's Tensor.dtype, the same as element_type)."""
        return self.engine.dtype

    @property
    def memspace(self) -> str:
        return self.engine.memspace

    def mark_layout_dynamic(self, leading_dim: Any = None) -> "Tensor":
        """CuTe DSL's: every extent and stride dynamic but the leading dimension's stride (see
        cutelab.dynamic_layout.mark_layout_dynamic). Changes this tensor and returns it."""
        return mark_layout_dynamic(self, leading_dim)

    def mark_compact_shape_dynamic(self, mode: Any = 0, stride_order: Any = None,
                                   divisibility: int = 1) -> "Tensor":
        """CuTe DSL's: one mode's extent dynamic, with the strides that count in units of it (see
        cutelab.dynamic_layout.mark_compact_shape_dynamic). Changes this tensor and returns it."""
        return mark_compact_shape_dynamic(self, mode, stride_order, divisibility)

    @property
    def leading_dim(self) -> Any:
        """The mode whose stride is 1 (and extent not 1), as CuTe DSL finds it: an int, a tuple for
        a nested mode, or None."""
        def find(stride: Any, shape: Any, pos: tuple) -> Any:
            if isinstance(stride, tuple):
                for i, (d, n) in enumerate(zip(stride, shape)):
                    r = find(d, n, pos + (i,))
                    if r is not None:
                        return r
                return None
            if isinstance(stride, int) and not isinstance(stride, bool) and stride == 1 and shape != 1:
                return (pos[0] if len(pos) == 1 else pos) if pos else 0
            return None

        return find(self.layout.stride, self.layout.shape, ())

    @property
    def type(self) -> "TensorType":
        """The tensor's type as CuTe DSL prints it (``!cute.memref<f32, gmem, align<16>, "(4,8):(8,1)">``)."""
        return TensorType(self)

    @property
    def batch(self) -> tuple:
        """The batch shape when the offset is an array of offsets (one view per entry), else ()."""
        return self.offset.shape if _is_batch(self.offset) else ()

    def __len__(self) -> int:
        return it.rank(self.layout.shape)

    def __str__(self) -> str:
        b = f" x {self.batch}" if self.batch else ""
        view = getattr(self.engine, "tensor_str", None)  # a swizzled shared-memory view prints as CuTe DSL holds it
        if view is not None and not b:
            return f"tensor<{view(self.offset, self.layout)}>"
        return f"tensor<{self.engine.ptr_str(self.offset)}{b} o {self.layout}>"

    __repr__ = __str__

    def _repr_svg_(self) -> str | None:  # Jupyter: the values on the layout's grid (None: the text)
        return _display.svg(self)

    # ---- indexing
    def _check_coord(self, coord: Any) -> None:
        # inside a traced kernel a coordinate past a flat mode is only an offset, as in CuTe (a pipeline
        # prologue slices k-tiles it then predicates off), and so is a coordinate past a hierarchical mode,
        # by CuTe's crd2idx (the last sub-mode not reduced: flash_attn.cute's SM90 epilogue indexes the
        # LSE rows by the column count and predicates the extra rows off); the launch checks the accesses
        traced = hasattr(self.engine, "param")
        # a register fragment's engine checks its own offsets (one past its end faults when a thread runs it,
        # kernel.frontend.engines.RmemEngine)
        rmem = type(self.engine).__name__ == "RmemEngine"
        # an identity tensor's value is arithmetic (no memory): a coordinate past a mode gives what CuTe's
        # crd2idx gives (CuTe DSL 4.8.1: t[4, 0] of ((2,2),(2,8)):((8,64),(1,8)) is row 128, the last
        # sub-mode not reduced), so kernels that predicate such coordinates off run as they do there
        counting = isinstance(self.engine, IdentityEngine)

        def go(c: Any, s: Any) -> bool:
            if isinstance(c, tuple):
                return isinstance(s, tuple) and len(c) == len(s) and all(go(x, y) for x, y in zip(c, s))
            if c is None:
                return True
            n = it.product(s)
            if isinstance(c, (int, np.integer)):
                return 0 <= c < n or (traced and not isinstance(s, tuple)) or ((counting or traced) and c >= 0) or rmem
            if isinstance(c, np.ndarray):
                return c.size == 0 or (int(c.min()) >= 0 and int(c.max()) < n)
            return True  # symbolic

        shp = self.layout.shape
        c = coord
        if isinstance(c, tuple) and not isinstance(shp, tuple) and len(c) == 1:
            c = c[0]
        if not go(c, shp):
            raise TensorError(
                f"{self}: coordinate {it.tuple_str(coord)} is out of range or does not match the shape {it.tuple_str(shp)}"
            )

    def _split(self, coord: Any) -> tuple:
        coord = _tensor_coord(self, coord)
        self._check_coord(coord)
        shp = self.layout.shape
        fixed = it.transform_leaf(coord, lambda c: 0 if c is None else c)
        if isinstance(fixed, tuple) and not isinstance(shp, tuple) and len(fixed) == 1:
            fixed = fixed[0]
        if isinstance(self.layout, ComposedLayout):
            return coord, self.layout(fixed)
        return coord, it.crd2idx(fixed, shp, self.layout.stride)

    def __getitem__(self, coord: Any, *, loc: Any = None, ip: Any = None) -> Any:  # loc/ip: as CuTe DSL's
        given = coord
        coord, delta = self._split(coord)
        if not it.has_none(coord):
            return self.engine.read_one(_add(self.offset, delta))
        if isinstance(self.layout, ComposedLayout):
            out = _dsl_slice(self, coord)
            if out is None:
                # keep the swizzle exact: the fixed part of coord moves into the composed offset
                lay = self.layout
                sub, fixed = slice_and_offset(coord, lay.outer)
                out = self._new(ComposedLayout(lay.inner, _add(lay.offset, fixed), sub))
        else:
            # the kept modes depend only on where coord has None (its ints are in delta already)
            # (an identity tensor's coordinate past a mode was accepted by _check_coord, as CuTe DSL accepts it:
            # the FMHA prefill sizes a fragment by tTMEM_LOADcO[None, 0, i].shape with i past an extent-1 mode)
            keep = it.transform_leaf(coord, lambda c: None if c is None else 0) \
                if hasattr(self.engine, "param") or isinstance(self.engine, IdentityEngine) else coord
            new_offset = _add(self.offset, delta)
            note = getattr(self.engine, "note_slice", None)  # a swizzled shared view remembers how it was sliced
            if note is not None:
                note(self.offset, new_offset, coord, self.layout)
            out = self._new(slice_(self.layout, keep), new_offset)
        if self.coord is not None:  # the slice's coordinates: the same slice of this tensor's
            out.coord = _derived_coords(self.coord, lambda c: c[given], "a slice")
        return out

    def __setitem__(self, coord: Any, value: Any, *, loc: Any = None, ip: Any = None) -> None:
        coord, delta = self._split(coord)
        if it.has_none(coord):
            self[coord].store(value)
            return
        self.engine.write_one(_add(self.offset, delta), value)

    def __call__(self, *coord: Any) -> Any:
        return self[coord[0] if len(coord) == 1 else coord]

    # ---- values
    def load(self) -> TensorSSA:
        """All values of the tensor (per batch entry), in index order."""
        return self.engine.load(self.offset, self.layout)

    def store(self, value: Any) -> None:
        """Write value (a TensorSSA of the same shape, an array of size(self), or a scalar).

        Numbers are rounded to the element type as numpy casts them; a finite value the type cannot
        hold (1e6 into Float16, 2**40 into Int32) is refused with a TensorError and nothing is written.
        """
        if _is_ssa(value):
            n, m = it.product(value.shape), it.product(self.layout.shape)
            if n != m or it.product_each(value.shape) != it.product_each(self.layout.shape):
                raise TensorError(
                    f"store into {self}: the value has shape {it.tuple_str(value.shape)} but the tensor has "
                    f"shape {it.tuple_str(self.layout.shape)}; nothing was written"
                )
        self.engine.store(self.offset, self.layout, value)

    def fill(self, value: Any) -> None:
        self.engine.store(self.offset, self.layout, value)

    def numpy(self) -> np.ndarray:
        """A copy of the values as a numpy array of shape product_each(shape) (column-major)."""
        return self.load().numpy()

    # ---- algebra hooks (used by cutelab.algebra)
    def __cute_composition__(self, rhs: Any) -> "Tensor":
        return self._map(lambda lay: composition(lay, rhs))

    def __cute_apply__(self, op: str, tiler: Any) -> "Tensor":
        f = {"logical_divide": logical_divide, "zipped_divide": zipped_divide,
             "tiled_divide": tiled_divide, "flat_divide": flat_divide}[op]
        return self._map(lambda lay: f(lay, tiler))


class LostCoords:
    """The ``coord`` of a view derived from an automatically bounded tensor by an operation that does not
    carry coordinates (``why`` names it)."""

    __slots__ = ("why",)

    def __init__(self, why: str):
        self.why = why

    def __repr__(self) -> str:
        return f"LostCoords({self.why})"


def _caller_name() -> str:
    """The function that derived a view (two frames up), for LostCoords' message."""
    import sys

    f = sys._getframe(2)
    return f"{f.f_code.co_name} ({f.f_code.co_filename.rsplit('/', 1)[-1]}:{f.f_lineno})"


def _derived_coords(coord: Any, derive: Any, what: str) -> Any:
    """derive(coord) for a coordinate tensor; a LostCoords stays lost, and a derivation that the
    coordinates do not follow (an exception) loses them."""
    if isinstance(coord, LostCoords):
        return coord
    try:
        return derive(coord)
    except Exception as e:  # noqa: BLE001 - the data's view stands; only the automatic bound is lost
        return LostCoords(f"{what}: {type(e).__name__}: {e}")


def _dsl_slice(t: "Tensor", coord: Any) -> "Tensor | None":
    """A slice of a swizzled tensor as CuTe DSL holds it (CuTe's slice_and_offset): where the rest of the
    layout reaches a Y bit and its Z bit, S o zy o sub at the pointer moved by the other bits; otherwise
    the swizzle decays to strides (a plain layout) at the pointer of the slice's origin. None (the caller
    keeps the swizzle exact in the composed offset) for a batch of coordinates or offsets, a layout as the
    inner function, or a slice the split does not represent exactly (swizzle.slice_and_offset refuses)."""
    from .swizzle import Swizzle
    from .swizzle import slice_and_offset as composed_slice

    lay = t.layout
    if not isinstance(lay.inner, Swizzle) or _is_batch(t.offset) or not isinstance(lay.offset, int):
        return None
    if any(not (c is None or type(c) is int) for c in it.flatten_to_tuple(coord)):
        return None
    try:
        res, origin = composed_slice(coord, lay)
    except LayoutError:
        return None
    if not isinstance(res, ComposedLayout):
        return None
    if isinstance(res.inner, Swizzle) and res.inner.is_identity:
        return Tensor(t.engine, res.outer, _add(t.offset, origin), _checked=True)
    return Tensor(t.engine, res, _add(t.offset, origin - res.inner(res.offset)), _checked=True)


def _tensor_coord(t: "Tensor", coord: Any) -> Any:
    """coord with integers of any kind as ints (arrays of integers kept: a batch), or a TensorError
    naming the operand when an entry is not an integer (a float, inf, a string)."""

    def go(c: Any) -> Any:
        if type(c) is int or c is None:
            return c
        if isinstance(c, (tuple, list)):
            return tuple(go(x) for x in c)
        if isinstance(c, (int, np.integer)) and not isinstance(c, (bool, np.bool_)):
            return int(c)
        if isinstance(c, np.ndarray) and c.dtype.kind in "iu":
            return c.astype(np.int64, copy=False)
        if isinstance(c, TracedValue):
            return c.as_index()  # a runtime integer of a kernel (e.g. a pipeline stage in a register)
        if isinstance(c, SymbolicIndex):
            return c  # a symbolic index of the kernel tracer
        raise TensorError(
            f"{t}: index {coord!r} is not a coordinate: entries must be integers (or None to slice), "
            f"got {type(c).__name__} {c!r}"
        )

    return go(coord)


# --------------------------------------------------------------------------- construction

def _engine_of(obj: Any) -> tuple:
    """(engine, offset) for a numpy array, a Pointer, a Tensor or an engine (a torch tensor or another
    DLPack array: cutelab.runtime.make_tensor views it with from_dlpack first)."""
    if isinstance(obj, Pointer):
        return obj.engine, obj.offset
    if isinstance(obj, Tensor):
        return obj.engine, obj.offset
    if isinstance(obj, np.ndarray):
        if not (obj.flags.c_contiguous or obj.flags.f_contiguous):
            raise TensorError("make_tensor: the numpy array must be contiguous (or use from_dlpack, which reads its strides)")
        return NumpyEngine(obj.reshape(-1, order="A"), owner=obj), 0
    if hasattr(obj, "read_one") and hasattr(obj, "load"):
        return obj, 0
    if hasattr(obj, "__dlpack__") or type(obj).__module__.startswith("torch"):  # cute.make_tensor views these
        raise TensorError(f"make_tensor: a {type(obj).__name__} is viewed through cutelab.runtime.from_dlpack "
                          f"(cute.make_tensor, which is cutelab.runtime.make_tensor, does so)")
    raise TensorError(f"make_tensor: cannot use {type(obj).__name__} as storage")


def make_tensor(engine: Any, layout: Any) -> Tensor:
    """A tensor over engine (numpy array, torch tensor, pointer) with the given layout or shape.

    The layout indexes the storage as a flat array; every offset it reaches must be in range.
    """
    if _hooks.runtime_tensor is not None and not isinstance(layout, (Layout, ComposedLayout)):
        made = _hooks.runtime_tensor(engine, layout)  # a layout with runtime extents (kernel/instr/runtime_layout.py)
        if made is not None:
            return made
    if isinstance(engine, tuple):  # a TMA tensor's coordinates in a kernel (kernel/frontend/tma_coords.py)
        made = next((c for c in engine if hasattr(c, "coord_tensor")), None)
        if made is not None:
            return made.coord_tensor(engine, layout if isinstance(layout, (Layout, ComposedLayout)) else make_layout(layout))
    if not isinstance(layout, (Layout, ComposedLayout)):
        layout = make_layout(layout)
    if getattr(engine, "_smem_ptr", False):  # a pointer from SmemAllocator.allocate (cutelab.kernel.frontend.smem)
        return engine.tensor(layout, engine.dtype)
    if (isinstance(layout, ComposedLayout) or hasattr(layout, "view_engine")) and isinstance(engine, Pointer):
        view = _swizzled_smem_view(engine, layout)
        if view is not None:
            return view
    eng, off = _engine_of(engine)
    return Tensor(eng, layout, off)


def _swizzled_smem_view(ptr: Pointer, layout: ComposedLayout) -> Optional["Tensor"]:
    """make_tensor(smem pointer, S o k o L) in a kernel: the shared array read through the swizzle S
    (element units, as CuTe DSL evaluates a composed layout) at offsets k + L(i) from the pointer.
    The pointer of a tensor whose swizzle came from its layout is a plain pointer, as in CuTe DSL;
    None where this is not a kernel's shared memory."""
    if _hooks.smem_view is None:  # no kernel: no kernel's shared memory
        return None
    return _hooks.smem_view(ptr, layout)


def make_identity_tensor(shape: Any) -> Tensor:
    """A tensor whose value at each coordinate is that coordinate (for predicates and pictures).

    >>> t = make_identity_tensor((4, 8))
    >>> print(t), t[(1, 2)], t[9], t[2]
    tensor<(0,0) o (4,8):(1@0,1@1)>
    (None, (1, 2), (1, 2), (2, 0))
    >>> t = make_identity_tensor((4, (2, 3)))
    >>> print(t), t[9]
    tensor<(0,(0,0)) o (4,(2,3)):(1@0,(1@0@1,1@1@1))>
    (None, (1, (0, 1)))
    """
    layout = make_identity_layout(shape)
    return Tensor(IdentityEngine(it.repeat_like(layout.shape, 0)), layout, 0, _checked=True)


def make_layout_fragment_like(layout: Layout) -> Layout:
    """CuTe's make_fragment_like(layout): a compact layout of the same shape, mode 0 column-major
    (stride-0 modes kept), the other modes ordered like the source's strides. Basis strides (a
    coordinate layout) have no order to follow: the fragment is then compact column-major."""
    shp, std = layout.shape, layout.stride
    if not all(type(d) is int for d in it.flatten_to_tuple(std)):
        return make_layout(shp)
    if isinstance(shp, tuple) and len(shp) > 1:
        s0, d0 = shp[0], std[0]
        first = _raw(s0, it.compact_col_major(it.filter_zeros_tuple(d0, s0)))
        rest = make_ordered_layout(shp[1:], std[1:])
        return tiled_product(first, rest)
    return make_layout(shp)




def make_rmem_tensor(layout: Any, dtype: Numeric) -> Tensor:
    """A fresh register-memory tensor with the given layout (or shape) and element type."""
    if not isinstance(layout, Layout):
        layout = make_layout(layout)
    if isinstance(dtype, type) and issubclass(dtype, SymbolicIndex):  # type(i) of a kernel index: it is an Int32
        from .numeric import Int32  # (flash_attn.cute's shuffle_sync makes a fragment of type(value))

        dtype = Int32
    if _hooks.rmem_tensor is not None:
        made = _hooks.rmem_tensor(layout, dtype)
        if made is not None:
            return made
    n = max(_layout_extent(layout)[1] + 1, 1)
    return Tensor(NumpyEngine(np.zeros(n, dtype=dtype.storage), dtype, "rmem", align=_RMEM_ALIGN), layout, 0)


make_fragment = make_rmem_tensor


def make_fragment_like(src: Any, dtype: Numeric | None = None) -> Any:
    """A register tensor shaped like the tensor src, its strides compact in the order of src's strides
    (CuTe DSL 4.8.1's make_rmem_tensor_like: make_layout_like); for a Layout, CuTe's fragment layout
    of it (mode 0 compact first: make_layout_fragment_like), as CuTe DSL does for layouts.

    >>> import numpy as np
    >>> t = make_tensor(np.zeros(64, np.float32), make_layout((4, 8), stride=(16, 1)))
    >>> print(make_fragment_like(t), make_fragment_like(t.layout))
    tensor<ptr<f32, rmem, align<32>> o (4,8):(8,1)> (4,8):(1,4)
    """
    if isinstance(src, Layout):
        return make_layout_fragment_like(src)
    return _fragment_like(src, dtype, _layout_like, "make_fragment_like")


def _layout_like(layout: Layout) -> Layout:
    if not all(type(d) is int for d in it.flatten_to_tuple(layout.stride)):
        return make_layout(layout.shape)  # basis strides (a coordinate tensor) have no order to follow
    return make_layout_like(layout)


def _fragment_like(src: Any, dtype: Numeric | None, layout_of: Any, what: str) -> Tensor:
    """A fresh register tensor (one per batch entry) with layout_of(src.layout), of dtype or src's type."""
    if not isinstance(src, Tensor):
        raise TensorError(f"{what}: expected a Tensor or Layout, got {type(src).__name__}")
    if dtype is None and getattr(src, "element_type", None) is None:
        raise TensorError(f"{what}({src}): a coordinate tensor has no element type; "
                          f"give one ({what}(t, cutlass.Int32))")
    layout = layout_of(src.layout)
    maker = getattr(type(src.engine), "make_fragment", None)
    if maker is None and _hooks.rmem_tensor is not None:  # (a coordinate tensor's) fragment in a kernel: registers
        made = _hooks.rmem_tensor(layout, dtype or src.element_type)
        if made is not None:
            return made
    maker = maker or NumpyEngine.make_fragment
    eng, off = maker(src, layout, dtype) if dtype is not None else maker(src, layout)
    return Tensor(eng, layout, off, _checked=True)


def make_fragment_like_mma(src: Tensor, dtype: Numeric | None = None) -> Tensor:
    """The MMA's fragment of a partitioned tensor (TiledMma.make_fragment_A/B/C): CuTe's fragment layout,
    mode 0 compact first, as CuTe DSL keeps it there (and aligned to 16 bytes, as it prints them)."""
    t = _fragment_like(src, dtype, make_layout_fragment_like, "make_fragment")
    if isinstance(t.engine, NumpyEngine) or getattr(t.engine, "memspace", None) == "rmem":
        t.engine.align = 16
    return t


# --------------------------------------------------------------------------- partitioning

def _slice_both(tiled: Tensor, first: Any, second: Any) -> Tensor:
    return tiled[(first, second)]


def _all_modes(mode_shape: Any) -> Any:
    return tuple(None for _ in mode_shape) if isinstance(mode_shape, tuple) else None


def inner_partition(tensor: Tensor, tiler: Any, coord: Any) -> Tensor:
    """Tile by tiler and keep the tile at coord of the rest mode (a block's tile)."""
    tiled = zipped_divide(tensor, tiler)
    s0, s1 = tiled.shape[0], tiled.shape[1]
    coord = _normalize(coord)
    if isinstance(coord, tuple):
        r1 = len(s1) if isinstance(s1, tuple) else 1
        if len(coord) > r1:
            raise TensorError(f"local_tile: coordinate {it.tuple_str(coord)} has more modes than the {r1} tiles modes")
        second = coord + (None,) * (r1 - len(coord)) if isinstance(s1, tuple) else coord[0] if len(coord) == 1 else coord
    else:
        second = coord
    return _slice_both(tiled, _all_modes(s0), second)


def outer_partition(tensor: Tensor, tiler: Any, coord: Any) -> Tensor:
    """Tile by tiler and keep element coord of every tile (a thread's share)."""
    tiled = zipped_divide(tensor, tiler)
    s0, s1 = tiled.shape[0], tiled.shape[1]
    coord = _normalize(coord)
    if isinstance(coord, tuple) and isinstance(s0, tuple):
        first = coord + (None,) * (len(s0) - len(coord))
    else:
        first = coord
    return _slice_both(tiled, first, _all_modes(s1))


def local_tile(tensor: Tensor, tiler: Any, coord: Any, proj: Any = None) -> Tensor:
    """The tile of tensor at coord, tiles of shape tiler (CuTe's local_tile / inner partition).

    With proj (e.g. (1, None, 1)), only the tiler and coord modes where proj is not None are used;
    coord entries past proj's length are kept (they index the tensor's modes past the tiler's, as
    in CuTe DSL: coord (m, n, None, l) with proj (1, None, 1) tiles M and K and takes batch l).

    >>> print(local_tile(make_identity_tensor((256, 128, 2)), (64, 32, 64), (1, 0, None, 1), proj=(1, None, 1)))
    tensor<(64,0,1) o (64,64,2):(1@0,1@1,64@1)>
    """
    tiler, coord = _normalize(tiler), _normalize(coord)
    if proj is not None:
        proj = _normalize(proj)
        tiler = dice(tiler, proj) if isinstance(tiler, Layout) else it.dice_tuple(proj, tiler)
        extra = ()
        if isinstance(coord, tuple) and isinstance(proj, tuple) and len(coord) > len(proj):
            coord, extra = coord[:len(proj)], coord[len(proj):]
        coord = it.dice_tuple(proj, coord) + extra
    return inner_partition(tensor, tiler, coord)


def domain_offset(coord: Any, tensor: Tensor) -> Tensor:
    """The tensor with its domain shifted by coord (CuTe's domain_offset): element c of the result
    is element c + coord of tensor. coord may be negative (the shifted-out part must then not be
    accessed: predicate it).

    >>> t = make_identity_tensor((4, 8))
    >>> domain_offset((1, -2), t)[(0, 0)]
    (1, -2)
    """
    if not isinstance(tensor, Tensor):
        raise TensorError(f"domain_offset: expected a Tensor, got {type(tensor).__name__}")
    lay = tensor.layout
    if isinstance(lay, ComposedLayout):
        raise TensorError(f"domain_offset: the tensor {tensor} has a composed layout; not supported")
    shp, std = lay.shape, lay.stride
    flat_c = coord if isinstance(coord, tuple) else (coord,)
    flat_s = shp if isinstance(shp, tuple) else (shp,)
    flat_d = std if isinstance(std, tuple) else (std,)
    if len(flat_c) != len(flat_s):
        raise TensorError(f"domain_offset({it.tuple_str(coord)}, {tensor}): the coordinate has {len(flat_c)} modes, "
                          f"the tensor {len(flat_s)}")
    full = []
    for c, s in zip(flat_c, flat_s):
        if isinstance(c, TracedValue):  # an Int32 computed in a kernel (a persistent scheduler's tile): its index
            c = c.as_index()
        # an integer for a hierarchical mode is its colexicographic index there, as CuTe reads it (CUTLASS's MoE
        # kernels move an expert's scale factors, ((32,4),rest), by its first padded row)
        full.append(c)
    delta = it.crd2idx(tuple(full), tuple(flat_s), tuple(flat_d))  # linear: negative coordinates are fine
    out = Tensor(tensor.engine, lay, _add(tensor.offset, delta), _checked=True)
    if tensor.coord is not None:
        out.coord = _derived_coords(tensor.coord, lambda c: domain_offset(coord, c), "domain_offset")
    return out


def local_partition(tensor: Tensor, tiler: Layout, index: Any, proj: Any = 1) -> Tensor:
    """Thread index's share of tensor when the threads are laid out by tiler (outer partition).

    The coordinate of index in tiler picks one element of every tiler-shaped tile.
    """
    if not isinstance(tiler, Layout):
        raise TensorError(f"local_partition: the thread layout must be a Layout, got {tiler!r}")
    if proj != 1 and proj is not None:
        tiler = dice(tiler, _normalize(proj))
    if index is None or isinstance(index, (bool, float, str, np.floating)) or not (
            isinstance(index, (int, np.integer, np.ndarray, SymbolicIndex, TracedValue))):
        raise TensorError(
            f"local_partition: the thread index must be an int (or an array of ints, or a kernel's thread index), "
            f"got {type(index).__name__} {index!r}"
        )
    if isinstance(index, np.ndarray) and index.dtype.kind not in "iu":
        raise TensorError(f"local_partition: thread indices must be integers, got an array of {index.dtype}")
    if isinstance(index, np.integer):
        index = int(index)
    if isinstance(index, (int, np.integer)) and not 0 <= index < tiler.size():
        raise TensorError(f"local_partition: thread index {index} is out of range for {tiler} of {tiler.size()} threads")
    if isinstance(index, np.ndarray) and index.size and (index.min() < 0 or index.max() >= tiler.size()):
        raise TensorError(f"local_partition: thread indices outside [0, {tiler.size()}) for {tiler}")
    hier = it.idx2crd(index, tiler.shape, tiler.stride)
    shp = tiler.shape
    if isinstance(shp, tuple):
        coord = tuple(it.crd2idx(c, s) if isinstance(s, tuple) else c for c, s in zip(hier, shp))
    else:
        coord = hier
    return outer_partition(tensor, it.product_each(shp), coord)


# --------------------------------------------------------------------------- printing
# (the text: cutelab.tensor_print)

def print_tensor(t: Any, *, verbose: bool = False) -> None:
    """Print a tensor's pointer, layout and values as CuTe DSL does (verbose: one '(coord)= value'
    line per element). A TensorSSA is first stored into a fresh register tensor of its shape, as
    CuTe DSL does. Inside a kernel, every thread prints at run time.

    >>> import numpy as np, cutelab as cute
    >>> print_tensor(cute.make_tensor(np.array([-1.5, 2.0], np.float32), cute.make_layout(2)), verbose=True)  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
    tensor(raw_ptr(0x...: f32, generic, align<4>) o 2:1, data= (
    	0=-1.500000
    	1= 2.000000
    )
    """
    pk = _hooks.print_tensor
    if pk is not None and (pk(t, verbose=True) if verbose else pk(t)):
        return
    if _is_ssa(t):
        if t.values.ndim > 1:
            raise TensorError(f"print_tensor: {t} is a batch of {t.values.shape[:-1]} values (one per thread); "
                              f"index one first")
        tmp = make_rmem_tensor(make_layout(t.shape), t.dtype)
        tmp.store(t)
        t = tmp
    elif not isinstance(t, Tensor):
        raise TensorError(f"print_tensor: expected a Tensor or a TensorSSA, got {type(t).__name__} {t!r}")
    print(format_tensor(t, verbose=verbose))


def retype_to_4bit(tensor: Tensor, dtype: Numeric) -> Tensor:
    """CuTe DSL's ``t.element_type = Int4`` (or Float4E2M1FN) over a tensor of wider elements: the iterator keeps
    its address and the layout its strides, now counted in 4-bit elements packed two to a byte (the even one in
    the low nibble), so the tensor covers the first bytes of the storage. On the CPU only (Packed4Engine,
    read-only); a GPU tensor is refused by name."""
    import copy

    eng = tensor.engine
    old = eng.dtype
    where = f"{tensor}.element_type = {dtype}"
    if isinstance(eng, Packed4Engine):
        eng = copy.copy(eng)
        eng.dtype = dtype
        return Tensor(eng, tensor.layout, tensor.offset)
    if type(eng) is not NumpyEngine:
        raise TensorError(f"{where}: putting 4-bit elements over a {old} tensor is supported by cutelab for CPU "
                          f"tensors only (this one's storage is {type(eng).__name__})")
    off = tensor.offset
    if not isinstance(off, (int, np.integer)):
        raise TensorError(f"{where}: the tensor's offset {off} is not a number")
    raw = eng.data.view(np.uint8)
    return Tensor(Packed4Engine(raw, dtype, eng.memspace, eng.align, eng.owner, eng.address), tensor.layout,
                  int(off) * (old.width // 4))
