"""TensorSSA: a tensor's values, loaded (CuTe DSL's ``TensorSSA``), and the conversions between the
values users see and the bits a tensor stores.

A TensorSSA holds ``values`` of shape batch + (size,) in a tensor's index order, its ``shape`` and
element type; arithmetic, comparisons, slicing and reductions give new TensorSSA values. Inside a
kernel the tracer's values stand for it (``isinstance(v, TensorSSA)`` holds for them). Engines
(cutelab.tensor_engines) load into and store from it; cutelab.tensor re-exports every name here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import int_tuple as it
from .tracing import TracedValue
from .tracing import hooks as _hooks
from .dtypes import to_compute, to_storage, to_values
from .errors import LayoutError, TensorError
from .layout import _normalize, evaluate_all, make_layout, slice_and_offset
from .numeric import BFloat16, Numeric, float_promotion, python_operand_type


# --------------------------------------------------------------------------- conversions

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
