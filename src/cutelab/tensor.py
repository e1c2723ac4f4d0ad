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
from .dtypes import to_compute, to_storage, to_values
from .dynamic_layout import mark_compact_shape_dynamic, mark_layout_dynamic
from .errors import LayoutError, TensorError
from .swizzle import ComposedLayout, Swizzle
from .layout import (
    Layout, ScaledBasis, _ArithTuple, _normalize, dice, evaluate_all, make_identity_layout,
    make_layout, make_layout_like, slice_, slice_and_offset,
)
from .numeric import BFloat16, Numeric, float_promotion, is_numeric_type, numeric_from_numpy, python_operand_type

__all__ = [
    "Tensor", "TensorSSA", "PointerInfo", "NumpyEngine", "IdentityEngine", "Pointer", "make_tensor",
    "make_identity_tensor", "make_fragment_like", "make_layout_fragment_like", "make_rmem_tensor",
    "make_fragment", "local_tile", "local_partition", "inner_partition", "outer_partition",
    "print_tensor", "bf16_to_f32", "f32_to_bf16",
]


# --------------------------------------------------------------------------- helpers

def _is_batch(x: Any) -> bool:
    return isinstance(x, np.ndarray)


def _layout_extent(layout: Layout) -> tuple[int, int]:
    """(lowest offset, highest offset) the layout reaches, without enumerating it."""
    if isinstance(layout, ComposedLayout):  # a swizzled layout: enumerate (vectorized)
        offs = layout.offsets()
        return (int(offs.min()), int(offs.max())) if offs.size else (0, 0)
    lo = hi = 0
    for s, d in zip(it.flatten_to_tuple(layout.shape), it.flatten_to_tuple(layout.stride)):
        if isinstance(d, ScaledBasis):
            raise LayoutError("layout with basis strides has no integer extent")
        if d > 0:
            hi += (s - 1) * d
        else:
            lo += (s - 1) * d
    return lo, hi


def _pow2_divisor(n: int) -> int:
    n = abs(int(n))
    return n & -n if n else 0


def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    """bfloat16 bit patterns (uint16) to float32 values, exactly (cutelab.dtypes.to_compute)."""
    return to_compute(bits, BFloat16)


def f32_to_bf16(x: np.ndarray) -> np.ndarray:
    """float32 values to bfloat16 bit patterns, rounding to nearest even (NaN stays NaN; cutelab.dtypes.to_storage)."""
    return to_storage(x, BFloat16)


def _type_name(dtype: Numeric) -> str:
    for name in ("Float64", "Float32", "Float16", "BFloat16", "Int8", "Int16", "Int32", "Int64", "Uint8",
                 "Uint16", "Uint32", "Uint64", "Boolean"):
        from . import numeric

        if getattr(numeric, name, None) is dtype:
            return f"cute.{name}"
    return dtype.name


def _checked_values(value: Any, dtype: Numeric, what: str) -> np.ndarray:
    """value in dtype's storage, or a TensorError where converting would change or misread it.

    CuTe DSL requires the element types of a store to match. Plain Python and numpy values are
    accepted where the conversion is the one a user means: numbers into a float tensor, integers
    (and bools) that fit into an integer tensor, bools into a bool tensor. A float into an integer
    tensor, an integer out of range, or anything that is not a number is refused.

    The rule for range: a store never loses a value without a word. Rounding to the nearest
    representable value is allowed (numpy's casting: 0.1 into Float16 stores 0.0999755859375);
    a finite value that the element type cannot hold is refused and nothing is written: an
    integer outside the type's range, or a finite number whose conversion overflows to inf (or,
    for fp8, which saturates, past the largest finite value), e.g. 1e6 or 2**40 into Float16. inf and NaN themselves are stored as
    they are. An explicit conversion (``TensorSSA.to``) follows numpy's casting rules, as CuTe DSL's
    conversions do.
    """
    if _is_ssa(value):
        raise TensorError(f"{what}: a loaded tensor (TensorSSA) is stored with Tensor.store, not into one element")
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as e:
        raise TensorError(f"{what}: cannot read {value!r} as numbers ({e}); nothing was written") from None
    kind = arr.dtype.kind
    if kind == "O" and arr.size and all(type(x) is int for x in arr.reshape(-1).tolist()):
        big = max(arr.reshape(-1).tolist(), key=abs)  # Python ints past 64 bits
        raise TensorError(f"{what}: the value {big} does not fit {dtype.name} (nor any 64-bit type); nothing was written")
    if kind not in "biuf":
        raise TensorError(
            f"{what}: the value {value!r} is not a number (numpy reads it as {arr.dtype}); the tensor holds "
            f"{dtype.name}; nothing was written"
        )
    if dtype is BFloat16 and arr.dtype == np.uint16:
        return arr  # raw bf16 words
    if dtype.kind in ("int", "uint"):
        if kind == "f":
            raise TensorError(
                f"{what}: the tensor holds {dtype.name} but the value is floating point ({_sample_text(arr)}); CuTe DSL "
                f"requires matching element types: round and convert explicitly; nothing was written"
            )
        if arr.size and kind in "iu":
            info = np.iinfo(dtype.storage)
            lo, hi = int(arr.min()), int(arr.max())
            if lo < info.min or hi > info.max:
                raise TensorError(
                    f"{what}: the value {lo if lo < info.min else hi} does not fit {dtype.name} "
                    f"[{info.min}, {info.max}]; nothing was written"
                )
    elif dtype.kind == "bool" and kind != "b":
        raise TensorError(f"{what}: the tensor holds booleans but the value is {arr.dtype}; nothing was written")
    if dtype.kind == "float" and kind in "iuf":
        with np.errstate(over="ignore", invalid="ignore"):
            out = _from_real(arr, dtype)
            back = np.asarray(_to_real(out, dtype), dtype=np.float64)
            src = arr.astype(np.float64)
        lost = np.isfinite(src) & ~np.isfinite(back)
        if dtype.is_fp8:  # fp8 conversion saturates: past the top value's rounding range is lost
            from .fp8 import _positive

            vals = _positive(dtype.name)[0]
            lost |= np.isfinite(src) & (np.abs(src) >= vals[-1] + (vals[-1] - vals[-2]) / 2)
        if lost.any():
            bad = src[lost].reshape(-1)[0]
            raise TensorError(
                f"{what}: the value {bad:g} is out of the range of {dtype.name} (it would become "
                f"{back[lost].reshape(-1)[0]:g}); nothing was written"
            )
        return out
    return _from_real(arr, dtype)


def _sample_text(arr: np.ndarray) -> str:
    flat = arr.reshape(-1)
    return str(flat[0]) if flat.size == 1 else f"{flat.size} values of {arr.dtype}"


def _to_real(values: np.ndarray, dtype: Numeric) -> np.ndarray:
    """Stored bits as the values users see (cutelab.dtypes.to_values: bf16 and fp8 widen to float32)."""
    return to_values(values, dtype)


def _from_real(values: Any, dtype: Numeric) -> np.ndarray:
    """Values as stored bits (cutelab.dtypes.to_storage: round to nearest even, ...)."""
    return to_storage(values, dtype)


# --------------------------------------------------------------------------- values

def _fold_bool(x: Any, op: str, what: str) -> Any:
    """Every element of x combined by op ("and"/"or"): a Boolean (a traced Boolean inside a kernel)."""
    if isinstance(x, TracedValue):  # a kernel's value: combined in the kernel
        return _hooks.fold_bool(x, op)
    if _is_ssa(x):
        v = _to_real(x.values, x.dtype) != 0
        return bool(v.all() if op == "and" else v.any())
    raise TensorError(f"cute.{what}: expected a tensor value (TensorSSA), got {type(x).__name__}")


def all_(x: Any) -> Any:
    """True when every element of the tensor value x is true (non-zero)."""
    return _fold_bool(x, "and", "all_")


def any_(x: Any) -> Any:
    """True when some element of the tensor value x is true (non-zero)."""
    return _fold_bool(x, "or", "any_")


class _TensorSSAMeta(type):
    def __instancecheck__(cls, inst: Any) -> bool:
        """Inside a kernel a tensor's loaded values are the tracer's value (TraceValue) of the
        tensor's shape: an instance of TensorSSA, as CuTe DSL's are (a value of shape (), a scalar,
        is an instance of its numeric type instead)."""
        if type.__instancecheck__(cls, inst):
            return True
        return cls is TensorSSA and isinstance(inst, TracedValue) and getattr(inst, "shape", ()) != ()


def _is_ssa(x: Any) -> bool:
    """x is a host TensorSSA (values in numpy), not a kernel's traced value, which
    ``isinstance(x, TensorSSA)`` also accepts for the user's code."""
    return type.__instancecheck__(TensorSSA, x)


class TensorSSA(metaclass=_TensorSSAMeta):
    """The values of a tensor, loaded: ``values`` has shape batch + (size,), in index order."""

    __slots__ = ("values", "shape", "dtype")

    def __new__(cls, values: Any = None, shape: Any = None, dtype: Any = None):
        if isinstance(values, TracedValue):  # cute.TensorSSA(value, shape, dtype) inside a kernel: the value
            return _hooks.value_as(values, shape, dtype)
        return super().__new__(cls)

    def __init__(self, values: np.ndarray, shape: Any, dtype: Numeric):
        self.values = values
        self.shape = shape
        self.dtype = dtype

    @property
    def element_type(self) -> Numeric:
        return self.dtype

    def numpy(self) -> np.ndarray:
        """The values as numbers (bf16 widened to float32), shaped batch + product_each(shape),
        column-major within the tile."""
        v = _to_real(self.values, self.dtype)
        dims = it.product_each(self.shape)
        dims = dims if isinstance(dims, tuple) else (dims,)
        batch = v.shape[:-1]
        out = v.reshape(batch + tuple(reversed(dims)))
        return np.moveaxis(out, range(len(batch), out.ndim), range(out.ndim - 1, len(batch) - 1, -1)) if dims else out

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """np.asarray(ssa): the values as numpy() gives them (bf16 widened to float32)."""
        out = self.numpy()
        return out if dtype is None else out.astype(dtype, copy=False)

    def to(self, dtype: Numeric) -> "TensorSSA":
        if dtype is self.dtype:
            return self
        return TensorSSA(_from_real(_to_real(self.values, self.dtype), dtype), self.shape, dtype)

    # ---- shapes: the values as a grid (batch + product_each(shape), column-major) and back
    def _dims(self) -> tuple:
        d = it.product_each(self.shape)
        return d if isinstance(d, tuple) else (d,)

    def _grid(self, values: Any = None) -> np.ndarray:
        v = self.values if values is None else values
        dims, batch = self._dims(), v.shape[:-1]
        out = v.reshape(batch + tuple(reversed(dims)))
        return np.moveaxis(out, range(len(batch), out.ndim), range(out.ndim - 1, len(batch) - 1, -1))

    @staticmethod
    def _flat(grid: np.ndarray, nbatch: int) -> np.ndarray:
        """grid (batch + dims) back to batch + (size,), column-major over dims."""
        b = grid.shape[:nbatch]
        k = grid.ndim - nbatch
        out = np.moveaxis(grid, range(nbatch, grid.ndim), range(grid.ndim - 1, nbatch - 1, -1))
        return np.ascontiguousarray(out).reshape(b + (int(np.prod(grid.shape[nbatch:], dtype=np.int64)) if k else 1,))

    def broadcast_to(self, target_shape: Any) -> "TensorSSA":
        """The values repeated along the modes of size 1 to target_shape (CuTe DSL's broadcast_to).

        >>> from cutelab.numeric import Float32
        >>> row = TensorSSA(np.array([0., 1., 2.], np.float32), (1, 3), Float32)
        >>> row.broadcast_to((2, 3)).numpy().tolist()
        [[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]
        """
        target_shape = _normalize(target_shape)
        tdims = it.product_each(target_shape)
        tdims = tdims if isinstance(tdims, tuple) else (tdims,)
        dims = self._dims()
        nb = self.values.ndim - 1
        if len(dims) != len(tdims) or any(d not in (1, t) for d, t in zip(dims, tdims)):
            raise TensorError(f"broadcast_to: cannot broadcast {self} to the shape {it.tuple_str(target_shape)}: "
                              f"each mode must be 1 or already the target's extent")
        g = np.broadcast_to(self._grid(), self.values.shape[:-1] + tdims)
        return TensorSSA(self._flat(g, nb), target_shape, self.dtype)

    def _aligned(self, other: "TensorSSA", what: str) -> tuple:
        """(my values, other's values, shape), broadcast to one shape where they differ (modes of size 1)."""
        if it.product_each(other.shape) == it.product_each(self.shape):
            return self.values, other.values, self.shape
        da, db = self._dims(), other._dims()
        if len(da) != len(db) or any(x != y and 1 not in (x, y) for x, y in zip(da, db)):
            raise TensorError(f"{what}: the shapes {it.tuple_str(self.shape)} and {it.tuple_str(other.shape)} "
                              f"do not broadcast (each mode must match or be 1)")
        shape = tuple(x if y == 1 else y for x, y in zip(da, db))
        a, b = self.broadcast_to(shape), other.broadcast_to(shape)
        return a.values, b.values, shape

    def _result_type(self, other: Any) -> Any:
        """CuTe DSL's element type of self op other where a float is involved (numeric.float_promotion:
        Float16 values times 2.5 are Float32 values); otherwise self's."""
        b = other.dtype if _is_ssa(other) else python_operand_type(other)
        if b is None or b.name == self.dtype.name or not (self.dtype.is_float or b.is_float):
            return self.dtype
        try:
            return float_promotion(self.dtype, b)
        except TypeError as e:
            raise TensorError(f"TensorSSA arithmetic of {self.dtype.name} and {b.name} values: {e}") from None

    def _binary(self, other: Any, op: Any) -> "TensorSSA":
        dt = self._result_type(other)
        if _is_ssa(other):
            av, bv, shape = self._aligned(other, "TensorSSA arithmetic")
            a, b = _to_real(av, self.dtype), _to_real(bv, other.dtype)
        else:
            a, b, shape = _to_real(self.values, self.dtype), other, self.shape
        if dt is not self.dtype:  # each operand as a value of the result's type, as the DSL converts them
            a = _to_real(_from_real(a, dt), dt)
            if _is_ssa(other):
                b = _to_real(_from_real(b, dt), dt)
        return TensorSSA(_from_real(op(a, b), dt), shape, dt)

    def _bitwise(self, other: Any, op: Any, name: str) -> "TensorSSA":
        """Bitwise ops on integer values; on Booleans, the logical ones."""
        from .numeric import Boolean

        if self.dtype is Boolean:
            return self._compare(other, {"&": np.logical_and, "|": np.logical_or, "^": np.logical_xor}[name])
        if self.dtype.kind not in ("int", "uint"):
            raise TensorError(f"TensorSSA {name}: bitwise operators need integer or Boolean values, got {self.dtype.name}")
        return self._binary(other, op)

    def __xor__(self, o: Any) -> "TensorSSA":
        return self._bitwise(o, np.bitwise_xor, "^")

    def __lshift__(self, o: Any) -> "TensorSSA":
        return self._bitwise(o, np.left_shift, "<<")

    def __rshift__(self, o: Any) -> "TensorSSA":
        return self._bitwise(o, np.right_shift, ">>")

    def __getitem__(self, coord: Any, *, loc: Any = None, ip: Any = None) -> Any:
        """Values at a coordinate (with None: a TensorSSA of the sliced shape), or at a linear index
        in column-major order, as CuTe DSL slices a loaded value.

        >>> from cutelab.numeric import Float32
        >>> v = TensorSSA(np.arange(6, dtype=np.float32), (2, 3), Float32)
        >>> print(v[(None, 1)]), v[(1, 2)], v[3]
        tensor_value<vector<2xf32> o (2,)>
        (None, 5.0, 3.0)
        """
        if self.values.ndim > 1:
            raise TensorError(f"{self}[{coord!r}]: a batch of values (one per thread) cannot be indexed; index one first")
        full = make_layout(self.shape)
        coord = _normalize(coord)
        if it.has_none(coord):
            sub, off = slice_and_offset(coord, full)
            shape = sub.shape if isinstance(sub.shape, tuple) else (sub.shape,)
            idx = evaluate_all(sub) + int(off)
            return TensorSSA(self.values[idx], shape, self.dtype)
        try:
            i = int(full(coord))
        except (LayoutError, TypeError) as e:
            raise TensorError(f"{self}[{coord!r}]: {e}") from None
        if not 0 <= i < self.values.shape[-1]:
            raise TensorError(f"{self}[{coord!r}]: index {i} is out of range for {self.values.shape[-1]} values")
        return self.dtype(_to_real(self.values[i], self.dtype).item())

    def __add__(self, o: Any) -> "TensorSSA":
        return self._binary(o, np.add)

    def __sub__(self, o: Any) -> "TensorSSA":
        return self._binary(o, np.subtract)

    def __mul__(self, o: Any) -> "TensorSSA":
        return self._binary(o, np.multiply)

    def __truediv__(self, o: Any) -> "TensorSSA":
        return self._binary(o, np.divide)

    __radd__ = __add__
    __rmul__ = __mul__

    def __rsub__(self, o: Any) -> "TensorSSA":
        return self._binary(o, lambda a, b: b - a)

    def __rtruediv__(self, o: Any) -> "TensorSSA":
        return self._binary(o, lambda a, b: b / a)

    def __neg__(self) -> "TensorSSA":
        return self._binary(0, lambda a, b: -a)

    def __abs__(self) -> "TensorSSA":
        return self._binary(0, lambda a, b: np.abs(a))

    def __floordiv__(self, o: Any) -> "TensorSSA":
        return self._binary(o, np.floor_divide)

    def __mod__(self, o: Any) -> "TensorSSA":
        return self._binary(o, np.mod)

    def _compare(self, o: Any, op: Any) -> "TensorSSA":
        from .numeric import Boolean

        if _is_ssa(o):
            av, bv, shape = self._aligned(o, "TensorSSA comparison")
            a, b = _to_real(av, self.dtype), _to_real(bv, o.dtype)
        else:
            a, b, shape = _to_real(self.values, self.dtype), o, self.shape
        return TensorSSA(np.asarray(op(a, b), dtype=np.bool_), shape, Boolean)

    def __lt__(self, o: Any) -> "TensorSSA":
        return self._compare(o, np.less)

    def __le__(self, o: Any) -> "TensorSSA":
        return self._compare(o, np.less_equal)

    def __gt__(self, o: Any) -> "TensorSSA":
        return self._compare(o, np.greater)

    def __ge__(self, o: Any) -> "TensorSSA":
        return self._compare(o, np.greater_equal)

    def __eq__(self, o: Any) -> "TensorSSA":  # type: ignore[override]
        return self._compare(o, np.equal)

    def __ne__(self, o: Any) -> "TensorSSA":  # type: ignore[override]
        return self._compare(o, np.not_equal)

    __hash__ = None  # type: ignore[assignment]

    def __and__(self, o: Any) -> "TensorSSA":
        return self._bitwise(o, np.bitwise_and, "&")

    def __or__(self, o: Any) -> "TensorSSA":
        return self._bitwise(o, np.bitwise_or, "|")

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    def __invert__(self) -> "TensorSSA":
        from .numeric import Boolean

        if self.dtype is Boolean:
            return self._compare(0, lambda a, b: np.logical_not(a))
        if self.dtype.kind not in ("int", "uint"):
            raise TensorError(f"TensorSSA ~: bitwise operators need integer or Boolean values, got {self.dtype.name}")
        return TensorSSA(np.invert(self.values), self.shape, self.dtype)

    def reduce(self, op: Any, init_val: Any = None, reduction_profile: Any = 0) -> Any:
        """Reduce with op (add, mul, max, min or cute.ReductionOp), then combine once with init_val.

        reduction_profile 0 reduces everything to one scalar (of the element type); a profile like the
        shape, 1 on the modes to reduce and None on those to keep, gives a TensorSSA of the kept modes.

        >>> from cutelab.numeric import Float32
        >>> v = TensorSSA(np.array([1., 4., 2., 5., 3., 6.], np.float32), (2, 3), Float32)
        >>> v.reduce("add", 0.0), v.reduce("add", 0.0, (None, 1)).numpy().tolist()
        (21.0, [6.0, 15.0])
        """
        name = str(getattr(op, "value", op)).lower().split(".")[-1]
        f = {"add": np.sum, "mul": np.prod, "max": np.max, "min": np.min}.get(name)
        if f is None:
            raise TensorError(f"TensorSSA.reduce: unknown reduction {op!r} (add, mul, max or min)")
        combine = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}[name]
        v = _to_real(self.values, self.dtype)
        if reduction_profile in (0, None):
            r = f(v, axis=-1)
            if init_val is not None:
                r = combine(r, init_val)
            return self.dtype(r.item()) if np.ndim(r) == 0 else r
        keep, shape = self._profile(reduction_profile, self.shape)
        if not isinstance(shape, tuple):
            shape = (shape,)
        flat_keep = it.flatten_to_tuple(keep)
        nb = v.ndim - 1
        grid = self._leaf_grid(v)
        axes = tuple(nb + k for k, kept in enumerate(flat_keep) if not kept)
        r = f(grid, axis=axes) if axes else grid
        if init_val is not None:
            r = combine(r, init_val)
        if not any(flat_keep):
            return self.dtype(np.asarray(r).item()) if nb == 0 else np.asarray(r)
        return TensorSSA(_from_real(self._flat(np.asarray(r), nb), self.dtype), shape, self.dtype)

    def _leaf_grid(self, v: np.ndarray) -> np.ndarray:
        """v as batch + every leaf of the shape (column-major)."""
        leaves = it.flatten_to_tuple(self.shape)
        batch = v.shape[:-1]
        out = v.reshape(batch + tuple(reversed(leaves)))
        return np.moveaxis(out, range(len(batch), out.ndim), range(out.ndim - 1, len(batch) - 1, -1))

    def _profile(self, profile: Any, shape: Any) -> tuple:
        """(which leaves are kept, congruent to shape; the shape of the kept modes) for a reduction profile."""
        if profile is None:
            return it.repeat_like(shape, True), shape
        if profile == 1:
            return it.repeat_like(shape, False), None
        if not isinstance(profile, tuple) or not isinstance(shape, tuple) or len(profile) != len(shape):
            raise TensorError(f"TensorSSA.reduce: the reduction profile {profile!r} does not match the shape "
                              f"{it.tuple_str(self.shape)} (use 1 for modes to reduce, None for modes to keep)")
        parts = [self._profile(p, s) for p, s in zip(profile, shape)]
        kept = tuple(s for _, s in parts if s is not None)
        return tuple(k for k, _ in parts), (kept[0] if len(kept) == 1 else kept) if kept else None

    def __repr__(self) -> str:
        return f"TensorSSA({self.dtype}, shape={it.tuple_str(self.shape)}, values={self.numpy()!r})"

    def __str__(self) -> str:
        """As CuTe DSL prints a loaded value: ``tensor_value<vector<12xf32> o (3, 4)>`` (the shape as a
        Python tuple)."""
        return f"tensor_value<vector<{it.product(self.shape)}x{self.dtype.name}> o {self.shape}>"


def ssa_where(cond: Any, a: Any, b: Any) -> TensorSSA:
    """Element-wise cond ? a : b of host TensorSSA values.

    >>> from cutelab.numeric import Float32
    >>> x = TensorSSA(np.array([1., -2., 3.], np.float32), (3,), Float32)
    >>> ssa_where(x > 0, x, 0.0).numpy().tolist()
    [1.0, 0.0, 3.0]
    """
    ref = next(x for x in (a, b, cond) if _is_ssa(x))
    dtype = a.dtype if _is_ssa(a) else b.dtype if _is_ssa(b) else ref.dtype
    val = lambda x: _to_real(x.values, x.dtype) if _is_ssa(x) else x  # noqa: E731
    return TensorSSA(_from_real(np.where(np.asarray(val(cond)) != 0, val(a), val(b)), dtype), ref.shape, dtype)


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


# --------------------------------------------------------------------------- engines

class PointerInfo:
    """How an engine with ``dtype``, ``align`` (bytes), ``address`` and ``memspace`` describes a
    pointer into itself: alignment at an offset, and the DSL's ptr<...> / raw_ptr(...) text."""

    __slots__ = ()

    def alignment(self, offset: Any) -> int:
        """Bytes of alignment known for the element at offset (for printing)."""
        b = self.dtype.bytes
        if _is_batch(offset):
            g = int(np.gcd.reduce(offset.astype(np.int64).ravel())) if offset.size else 0
        elif isinstance(offset, (int, np.integer)):
            g = int(offset)
        else:
            return b
        return self.align if g == 0 else max(min(self.align, _pow2_divisor(g * b)), b)

    def ptr_str(self, offset: Any) -> str:
        a = self.alignment(offset)
        al = f", align<{a}>" if a > self.dtype.bytes else ""
        return f"ptr<{mem_type_name(self.dtype)}, {self.memspace}{al}>"

    def raw_ptr_str(self, offset: Any) -> str:
        addr = self.address + int(offset) * self.dtype.bytes if not _is_batch(offset) else self.address
        return f"raw_ptr(0x{addr:016x}: {self.dtype.name}, {self.memspace}, align<{self.alignment(offset)}>)"


_RMEM_ALIGN = 32  # CuTe DSL 4.8.1 allocates register tensors 32-byte aligned (prints align<32>)


def mem_type_name(dtype: Any) -> str:
    """The element type a tensor's pointer or type prints: CuTe DSL keeps Booleans in memory (and
    registers) as bytes, so a Boolean tensor is ``ptr<i8, ...>`` / ``memref<i8, ...>``; and its MLIR
    integer types are signless, so a Uint16 tensor is ``ptr<i16, ...>``."""
    kind = getattr(dtype, "kind", None)
    if kind == "bool":
        return "i8"
    return f"i{dtype.width}" if kind == "uint" else dtype.name


def _typed_scalar(v: Any, dtype: Numeric) -> Any:
    """One element as CuTe DSL reads it: a scalar of the tensor's cutlass type (Float32: prints
    with cute.printf as 10.000000), a Python bool for Booleans."""
    from .numeric import FloatValue, IntValue

    if dtype.kind == "bool":
        return bool(v)
    if dtype.kind == "float":
        return FloatValue(dtype, float(v))
    return IntValue(dtype, int(v))


class NumpyEngine(PointerInfo):
    """Storage in a flat numpy array (a view of the user's array: writes go through)."""

    __slots__ = ("data", "dtype", "memspace", "align", "owner", "address", "declared")

    def __init__(self, data: np.ndarray, dtype: Numeric | None = None, memspace: str = "generic",
                 align: int | None = None, owner: Any = None, address: int | None = None):
        if data.ndim != 1:
            raise TensorError(f"engine storage must be a flat array, got shape {data.shape}")
        self.data = data
        self.dtype = dtype or numeric_from_numpy(data.dtype)
        self.memspace = memspace
        self.align = align if align is not None else max(self.dtype.bytes, 1)
        self.declared = align is not None  # an alignment given (from_dlpack, fragments), not the element's by default
        self.owner = owner
        self.address = address if address is not None else data.__array_interface__["data"][0]

    def __len__(self) -> int:
        return self.data.shape[0]

    def _check(self, lo: Any, hi: Any, what: str) -> None:
        n = self.data.shape[0]
        if lo < 0 or hi >= n:
            raise TensorError(
                f"{what}: offsets [{int(lo)}, {int(hi)}] fall outside the storage of {n} elements; nothing was {what[:4]}d"
            )

    def _offsets(self, offset: Any, layout: Layout, what: str) -> Any:
        offs = layout.offsets() if isinstance(layout, ComposedLayout) else evaluate_all(layout)
        if _is_batch(offset):
            lo, hi = _layout_extent(layout)
            self._check(int(offset.min()) + lo, int(offset.max()) + hi, what)
            return offset.astype(np.int64)[..., None] + offs
        if not isinstance(offset, (int, np.integer)):
            raise TensorError(f"{what}: a numpy engine needs a concrete offset, got {offset!r}")
        if offs.size:
            self._check(offset + int(offs.min()), offset + int(offs.max()), what)
        return offs + int(offset)

    def load(self, offset: Any, layout: Layout) -> TensorSSA:
        idx = self._offsets(offset, layout, "load")
        return TensorSSA(self.data[idx], layout.shape, self.dtype)

    def store(self, offset: Any, layout: Layout, value: Any) -> None:
        idx = self._offsets(offset, layout, "store")
        if _is_ssa(value):
            if value.dtype is not self.dtype:
                raise TensorError(
                    f"store: the values are {value.dtype.name} but the tensor holds {self.dtype.name}; CuTe DSL "
                    f"requires matching element types: convert first with .to({_type_name(self.dtype)}); nothing was written"
                )
            vals = value.values
        else:
            vals = _checked_values(value, self.dtype, "store")
        try:
            vals = np.broadcast_to(vals, idx.shape)
        except ValueError:
            raise TensorError(
                f"store: {np.shape(vals)} values do not fit a tensor of {idx.shape[-1]} elements"
                + (f" in a batch of {idx.shape[:-1]}" if idx.ndim > 1 else "")
            ) from None
        self.data[idx] = vals

    def read_one(self, off: Any) -> Any:
        if _is_batch(off):
            self._check(int(off.min()), int(off.max()), "load")
            return _to_real(self.data[off], self.dtype)
        self._check(off, off, "load")
        return _typed_scalar(_to_real(self.data[off], self.dtype)[()], self.dtype)

    def write_one(self, off: Any, v: Any) -> None:
        if _is_batch(off):
            self._check(int(off.min()), int(off.max()), "store")
        else:
            self._check(off, off, "store")
        vals = _checked_values(v, self.dtype, "store")
        if not _is_batch(off) and np.ndim(vals) != 0:
            raise TensorError(
                f"store: one element takes one value, got an array of shape {np.shape(vals)}; "
                f"slice with None (T[i, None]) to store several; nothing was written"
            )
        try:
            self.data[off] = vals
        except ValueError:
            raise TensorError(
                f"store: values of shape {np.shape(vals)} do not fit {np.shape(off)} elements; nothing was written"
            ) from None

    @classmethod
    def make_fragment(cls, tensor: "Tensor", layout: Layout, dtype: Numeric | None = None,
                      align: int = _RMEM_ALIGN) -> tuple:
        """Fresh register storage for one fragment per batch element: (engine, offset)."""
        dtype = dtype or tensor.element_type
        n = max(_layout_extent(layout)[1] + 1, 1)
        if _is_batch(tensor.offset):
            b = int(np.prod(tensor.offset.shape))
            data = np.zeros(b * n, dtype=dtype.storage)
            off = (np.arange(b, dtype=np.int64) * n).reshape(tensor.offset.shape)
            return cls(data, dtype, "rmem", align=align), off
        return cls(np.zeros(n, dtype=dtype.storage), dtype, "rmem", align=align), 0


class IdentityEngine:
    """The engine of an identity tensor: the value at an offset is the offset (a coordinate).

    ``profile`` is the identity's shape with every leaf 0: coordinates are padded to it, so that
    they print as CuTe DSL prints them ((2,0), not (2,), for rank 2; (0,(1,0)) for (4,(2,3))).
    """

    dtype = None
    memspace = "coord"

    def __init__(self, profile: Any = 0):
        if isinstance(profile, int):  # a rank
            profile = (0,) * profile if profile else 0
        self.profile = profile
        self.rank = len(profile) if isinstance(profile, tuple) else 0

    def pad(self, off: Any) -> Any:
        """off with the trailing zero modes that the sum of basis strides leaves out put back."""
        return _pad_coord(off, self.profile)

    def read_one(self, off: Any) -> Any:
        return self.pad(off)

    def write_one(self, off: Any, v: Any) -> None:
        raise TensorError("an identity tensor is read-only")

    def store(self, offset: Any, layout: Layout, value: Any) -> None:
        raise TensorError("an identity tensor is read-only")

    def load(self, offset: Any, layout: Layout) -> list:
        n = it.product(layout.shape)
        return [self.read_one(_add(offset, layout(i))) for i in range(n)]

    def ptr_str(self, offset: Any) -> str:
        off = self.pad(offset)
        return it.tuple_str(off) if isinstance(off, tuple) else str(off)

    raw_ptr_str = ptr_str


def _pad_coord(x: Any, profile: Any) -> Any:
    if not isinstance(profile, tuple):
        return tuple(x) if isinstance(x, tuple) else x
    if isinstance(x, tuple):
        xs = tuple(x)
    elif isinstance(x, (int, np.integer)) and x == 0:
        xs = ()
    else:
        xs = (x,)
    xs = xs + (0,) * (len(profile) - len(xs))
    return tuple(_pad_coord(a, p) for a, p in zip(xs, profile)) + xs[len(profile):]


def _add(a: Any, b: Any) -> Any:
    if isinstance(a, tuple) or isinstance(b, tuple):
        r = _ArithTuple.of(0) + _ArithTuple(a if isinstance(a, tuple) else ()) + _ArithTuple(b if isinstance(b, tuple) else ())
        return tuple(r)
    return a + b


class Pointer:
    """A tensor's iterator: an engine and an offset into it. Adding an int moves it."""

    __slots__ = ("engine", "offset")

    def __init__(self, engine: Any, offset: Any = 0):
        self.engine = engine
        self.offset = offset

    def __add__(self, k: Any) -> "Pointer":
        v = getattr(k, "value", None) if isinstance(k, Numeric) else None
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool):  # a static Int32(5): the offset stays an int
            k = int(v)
        elif hasattr(k, "as_index") and hasattr(k, "refs"):  # a runtime Int32 in a kernel: a register index
            k = k.as_index()
        return Pointer(self.engine, self.offset + k)

    @property
    def element_type(self) -> Any:
        return self.engine.dtype

    dtype = element_type  # CuTe DSL's Pointer.dtype
    value_type = element_type  # and its Pointer.value_type

    # CuTe DSL's JitArgument / DynamicExpression protocols, as a user type that wraps a pointer
    # forwards them (``self.ptr.__extract_mlir_values__()``): the pointer is its own one value.
    def __extract_mlir_values__(self) -> list:
        return [self]

    def __new_from_mlir_values__(self, values: Any) -> "Pointer":
        (v,) = values
        return v

    def __get_mlir_types__(self) -> list:
        return [type(self)]

    @property
    def type(self) -> "PointerType":
        """The pointer's type as CuTe DSL has it (``!cute.ptr<bf16, smem, align<16>, S<3,4,3>>``): its
        ``swizzle_type`` is the swizzle of a swizzled shared-memory pointer (byte units), else the
        identity ``S<0,4,3>``."""
        return PointerType(self)

    def raw_ptr(self, *, loc: Any = None, ip: Any = None) -> Any:
        """CuTe DSL's Pointer.raw_ptr(): this pointer as a ``cutlass.Pointer`` (``p + k``, ``p.load()``,
        ``p.store(v)``, ... inside a kernel), which the compatibility layer provides
        (compat/experimental/memory.py, through ``tracing.hooks.raw_pointer``)."""
        from .tracing import hooks

        if hooks.raw_pointer is None:
            raise TensorError(f"Pointer.raw_ptr() of {self}: CuTe DSL's cutlass.Pointer comes with cutelab's "
                              f"compatibility layer; run the program with `cutelab run` or call "
                              f"cutelab.compat.install() first")
        return hooks.raw_pointer(self)

    @property
    def _pointer(self) -> int:
        """CuTe DSL's runtime pointer's address (``ptr._pointer``, which programs pass to cudaFree): the
        address of a host-side pointer at a known offset."""
        addr = getattr(self.engine, "address", None)
        if not isinstance(addr, (int, np.integer)) or not isinstance(self.offset, (int, np.integer)) \
                or hasattr(self.engine, "param"):
            raise TensorError(f"{self}._pointer: the address of a pointer inside a kernel, or at a runtime offset, "
                              f"is not a number cutelab knows")
        return int(addr) + int(self.offset) * self.engine.dtype.bytes

    @property
    def llvm_ptr(self) -> "Pointer":
        """CuTe DSL's raw LLVM pointer of this pointer; cutelab's instructions (cute.arch.load,
        atomic_add, ...) take the pointer itself, so it is the same pointer."""
        return self

    def to_llvm_ptr(self, *, loc: Any = None, ip: Any = None) -> "Pointer":
        """CuTe DSL's Pointer.to_llvm_ptr(): ``llvm_ptr``, the same pointer."""
        return self

    @property
    def value(self) -> "Pointer":
        """CuTe DSL's Pointer.value (its MLIR value, which dialect operations take): the same pointer."""
        return self

    @property
    def memspace(self) -> str:
        return self.engine.memspace

    @property
    def alignment(self) -> int:
        """Bytes of alignment known for the address (CuTe DSL's Pointer.alignment)."""
        eng = self.engine
        return eng.alignment(self.offset) if hasattr(eng, "alignment") else 1

    @property
    def max_alignment(self) -> int:
        """CuTe DSL's Pointer.max_alignment: the alignment before any swizzle; cutelab's pointers
        carry no swizzle, so it is ``alignment``."""
        return self.alignment

    def toint(self, *, loc: Any = None, ip: Any = None) -> Any:
        """CuTe DSL's Pointer.toint(): the address as an Int64 (Int32 for shared memory). Inside a
        kernel it is a ``cutelab.address.PointerInt``, which ``make_ptr`` turns back into a pointer."""
        from .address import pointer_toint

        return pointer_toint(self)

    def align(self, min_align: int) -> "Pointer":
        """The pointer, asserted to be min_align-byte aligned (CuTe DSL's Pointer.align). cutelab
        derives alignment itself, so the pointer is unchanged; an assertion that a static offset
        contradicts is refused."""
        if not isinstance(min_align, int) or min_align < 1 or min_align & (min_align - 1):
            raise TensorError(f"Pointer.align({min_align!r}): the alignment must be a power of two")
        off = self.offset
        if isinstance(off, (int, np.integer)) and hasattr(self.engine, "align"):
            b = self.engine.dtype.bytes
            if self.engine.align >= min_align and (int(off) * b) % min_align:  # the base is aligned, the offset is not
                raise TensorError(f"Pointer.align({min_align}): the pointer {self} at element offset {int(off)} "
                                  f"is not {min_align}-byte aligned")
        return Pointer(self.engine, off)

    def __str__(self) -> str:
        return self.engine.ptr_str(self.offset)

    __repr__ = __str__


class _SwizzleType(Swizzle):
    """A pointer type's swizzle (CuTe DSL's ``!cute.swizzle<"S<3,4,3>">``): a Swizzle that prints as its type."""

    __slots__ = ()

    def __str__(self) -> str:
        return f'!cute.swizzle<"{Swizzle.__str__(self)}">'

    __repr__ = __str__


class PointerType:
    """What ``Pointer.type`` gives (CuTe DSL's ``!cute.ptr`` type): the element type (``value_type``), the
    memory space, the alignment and ``swizzle_type``: a swizzled shared-memory pointer's swizzle (byte units,
    as CuTe DSL keeps it in the type), else the identity swizzle S<0,4,3>, as CuTe DSL answers for a plain
    pointer. quack's ``swizzle_ptr`` reads its num_bits, num_base and num_shift."""

    def __init__(self, ptr: "Pointer"):
        self.value_type = ptr.engine.dtype
        self.memspace = ptr.memspace
        self.alignment = ptr.alignment
        sw = getattr(ptr.engine, "ptr_swizzle", None)
        sw = Swizzle(0, 4, 3) if sw is None else sw
        self.swizzle_type = _SwizzleType(sw.num_bits, sw.num_base, sw.num_shift)
        self.text = f"!cute.{ptr}"

    def __str__(self) -> str:
        return self.text

    __repr__ = __str__


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
# CuTe DSL's print_tensor: 'tensor(<pointer> o <layout>, data=' then the values as nested rows
# (mode 0 down, mode 1 across, the other modes as blocks in column-major order); every value is
# C's '% f' or '% d' (a space where the sign would be) followed by ', '; more than 6 rows or
# columns show the first 3, '...' and the last 3. verbose=True lists '(coord)= value' per element.

_INDENT = " " * len("tensor(")


def _dsl_value(v: Any) -> str:
    """One value as CuTe DSL's print_tensor writes it: ' 1.500000', '-2', ' (0,1)'."""
    if isinstance(v, tuple):
        return " " + it.tuple_str(v)
    if isinstance(v, (bool, np.bool_, int, np.integer)):
        return f"{int(v): d}"
    return "nan" if v != v else f"{float(v): f}"  # CuTe DSL writes NaN with no sign space ('inf' has one)


def _elide(items: list) -> list:
    return items[:3] + [None] + items[-3:] if len(items) > 6 else items


def _row_text(values: list) -> list:
    out: list = ["["]
    for v in _elide(values):
        out += ["..., "] if v is None else [v, ", "]
    return out + ["]"]


def _rows_text(rows: list, indent: str) -> list:
    out: list = []
    shown = _elide(rows)
    for k, r in enumerate(shown):
        out += ["..."] if r is None else r
        if k + 1 < len(shown):
            out.append(("\n" if r is None else ",\n") + indent)
    return out


def _tensor_values(t: Tensor) -> list:
    """The tensor's values in index order (column-major over its shape), as Python scalars or coordinates."""
    vals = t.load()
    if _is_ssa(vals):
        return _to_real(vals.values, vals.dtype).reshape(-1).tolist()
    return list(vals)


def tensor_text(head: str, flat: list, shape: Any, verbose: bool = False) -> list:
    """CuTe DSL's print_tensor text as pieces: head ('tensor(<pointer> o <layout>, data='), then the
    values as nested rows (see the comment above); flat holds the values, each already formatted
    (a str) or an item the caller formats (a kernel's printf part). Strings and items, in order."""
    if verbose:
        out: list = [head + " (\n"]
        for i, v in enumerate(flat):
            out += [f"\t{it.tuple_str(it.idx2crd(i, shape))}=", v, "\n"]
        return out + [")"]
    dims = it.product_each(shape)
    dims = dims if isinstance(dims, tuple) else (dims,)
    if len(dims) == 1:
        body = _rows_text([["[", v, ", ]"] for v in flat], _INDENT)
    else:
        m, n = dims[0], dims[1]
        blocks = [[_row_text([flat[r + m * c + m * n * b] for c in range(n)]) for r in range(m)]
                  for b in range(it.product(dims[2:]) if len(dims) > 2 else 1)]
        if len(dims) == 2:
            body = ["["] + _rows_text(blocks[0], _INDENT + " ") + ["]"]
        else:
            body = ["["]
            for k, rows in enumerate(blocks):
                if k:
                    body.append(",\n\n" + _INDENT + " ")
                body += ["["] + _rows_text(rows, _INDENT + "  ") + ["]"]
            body.append("]")
    return [head + "\n" + _INDENT] + body + [")"]


def format_tensor(t: Tensor, verbose: bool = False) -> str:
    """What CuTe DSL's print_tensor prints for t (see the comment above).

    >>> import numpy as np, cutelab as cute
    >>> t = cute.make_tensor(np.arange(6, dtype=np.float32), cute.make_layout((2, 3), stride=(3, 1)))
    >>> print(format_tensor(t).split("data=")[1])
    <BLANKLINE>
           [[ 0.000000,  1.000000,  2.000000, ],
            [ 3.000000,  4.000000,  5.000000, ]])
    """
    if t.batch:
        raise TensorError(f"print_tensor: {t} is a batch of {t.batch} tensors (one per thread); index one first")
    head = f"tensor({t.engine.raw_ptr_str(t.offset)} o {t.layout}, data="
    values = _tensor_values(t)
    if getattr(t.engine, "dtype", None) is not None and t.engine.dtype.kind == "bool":
        # CuTe DSL prints Booleans as the bytes holding them: i8, and a true in registers (an i1
        # sign-extended) as -1, one in memory (a byte 1, as numpy and torch store it) as 1
        head = head.replace(f": {t.engine.dtype.name},", ": i8,", 1)
        true = -1 if t.engine.memspace == "rmem" else 1
        values = [true if v else 0 for v in values]
    return "".join(tensor_text(head, [_dsl_value(v) for v in values], t.layout.shape, verbose))




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
