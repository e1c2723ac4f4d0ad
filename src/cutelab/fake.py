"""Ahead-of-time compiles without memory: ``cute.sym_int`` / ``sym_int32`` / ``sym_int64`` (symbolic
extents) and ``cute.runtime.make_fake_tensor`` / ``make_fake_compact_tensor`` (tensors that are only
an element type, a shape, strides and an alignment), as CuTe DSL 4.8.1 has them.

``cute.compile(fn, fake_a, fake_b, ...)`` traces ``fn`` once with stand-ins (small tensors whose
symbolic extents are marked dynamic, so the trace prints ``?`` where CuTe DSL does) and returns a
function that takes real tensors: each call checks them against the fakes (element type, rank, the
static extents and strides, the divisibility of the symbolic ones, alignment) and runs the program
compiled for them. cutelab compiles a kernel for the shapes it runs on, so a new shape compiles once
more (kept per shape), where CuTe DSL's one binary takes every shape.

>>> n = sym_int64()
>>> print(n, sym_int(divisibility=16), sym_int32())
?{i64 div=1} ?{div=16} ?
>>> from cutelab import Float32
>>> make_fake_compact_tensor(Float32, (n, 8), stride_order=(1, 0))
FakeTensor<Float32, (?{i64 div=1}, 8), (8, 1)>
>>> make_fake_compact_tensor(Float32, (n, 8), stride_order=(0, 1))
FakeTensor<Float32, (?{i64 div=1}, 8), (1, ?{i64 div=1})>
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .errors import LaunchError, TensorError

__all__ = ["SymInt", "sym_int", "sym_int32", "sym_int64", "FakeTensor", "make_fake_tensor",
           "make_fake_compact_tensor"]


class SymInt:
    """A symbolic integer: a runtime extent or stride of a fake tensor (``width`` 32 or 64 bits), whose
    value is a multiple of ``divisibility``. The same object at two places is the same value."""

    def __init__(self, width: int = 32, *, divisibility: int = 1, symbol: Optional[str] = None):
        if width not in (32, 64):
            raise ValueError(f"sym_int(width={width!r}): width must be 32 or 64")
        if isinstance(divisibility, bool) or not isinstance(divisibility, int) or divisibility < 1:
            raise ValueError(f"sym_int(divisibility={divisibility!r}): divisibility must be a positive int")
        self.width, self.divisibility, self.symbol = width, divisibility, symbol

    def __str__(self) -> str:
        if self.width == 64:
            return f"?{{i64 div={self.divisibility}}}"
        return f"?{{div={self.divisibility}}}" if self.divisibility > 1 else "?"

    __repr__ = __str__

    def stand_in(self) -> int:
        """The value the compile-time trace uses: a multiple of the divisibility, at least 8."""
        d = self.divisibility
        return d * max(1, -(-8 // d))


def sym_int(width: int = 32, *, divisibility: int = 1, symbol: Optional[str] = None) -> SymInt:
    """A symbolic integer of the given width (``cute.sym_int``)."""
    return SymInt(width, divisibility=divisibility, symbol=symbol)


def sym_int32(divisibility: int = 1, symbol: Optional[str] = None) -> SymInt:
    """A 32-bit symbolic integer (``cute.sym_int32``)."""
    return SymInt(32, divisibility=divisibility, symbol=symbol)


def sym_int64(divisibility: int = 1, symbol: Optional[str] = None) -> SymInt:
    """A 64-bit symbolic integer (``cute.sym_int64``)."""
    return SymInt(64, divisibility=divisibility, symbol=symbol)


def _check_entry(x: Any, what: str, op: str) -> Any:
    if isinstance(x, SymInt):
        return x
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 0:
        raise TensorError(f"{op}: {what} entries must be non-negative ints or cute.sym_int values, got {x!r}")
    return int(x)


class FakeTensor:
    """A tensor for ``cute.compile`` that has no memory: element type, shape, strides (ints or SymInts),
    memory space and assumed alignment. Reading or launching on it is an error."""

    def __init__(self, dtype: Any, shape: Tuple[Any, ...], stride: Tuple[Any, ...], memspace: Any = "gmem",
                 assumed_align: Optional[int] = None, op: str = "make_fake_tensor"):
        from .numeric import is_numeric_type

        if not is_numeric_type(dtype):
            raise TensorError(f"{op}: dtype must be a cutlass numeric type, got {dtype!r}")
        shape, stride = tuple(shape), tuple(stride)
        if len(shape) != len(stride) or not shape:
            raise TensorError(f"{op}: shape {shape} and stride {stride} must be non-empty and of one rank")
        self.element_type = dtype
        self.shape = tuple(_check_entry(s, "shape", op) for s in shape)
        self.stride = tuple(_check_entry(s, "stride", op) for s in stride)
        self.memspace = memspace
        esize = max(1, dtype.bytes)
        if assumed_align is not None and (isinstance(assumed_align, bool) or not isinstance(assumed_align, int)
                                          or assumed_align < 1 or assumed_align & (assumed_align - 1)):
            raise TensorError(f"{op}: assumed_align must be a power of two number of bytes, got {assumed_align!r}")
        self.assumed_align = assumed_align or esize

    def __repr__(self) -> str:
        sh = ", ".join(str(s) for s in self.shape)
        st = ", ".join(str(s) for s in self.stride)
        return f"FakeTensor<{self.element_type}, ({sh}), ({st})>"

    def _no_data(self, *a: Any, **k: Any) -> Any:
        raise TensorError(f"{self!r} has no memory: it only describes a tensor for cute.compile; call the "
                          f"compiled function with real tensors")

    __getitem__ = __setitem__ = load = store = _no_data

    def stand_in_values(self, env: Dict[int, int]) -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
        """Stand-in values (env: one value per SymInt): symbolic extents at SymInt.stand_in(); symbolic
        strides laid out after the static ones, in mode order, each past the modes before it (rounded up
        to its divisibility), so that the stand-in layout does not overlap itself ((?,1,?) over (8,64,8)
        is (64,1,512))."""
        shape = tuple(env.setdefault(id(s), s.stand_in()) if isinstance(s, SymInt) else s for s in self.shape)
        span = max([1] + [d * n for d, n in zip(self.stride, shape) if not isinstance(d, SymInt)])
        stride = []
        for d, n in zip(self.stride, shape):
            if isinstance(d, SymInt):
                if id(d) not in env:
                    k = d.divisibility
                    env[id(d)] = -(-span // k) * k
                d = env[id(d)]
                span = max(span, d * max(n, 1))
            stride.append(d)
        return shape, tuple(stride)

    def check(self, real: Any, pos: int, fn: str, seen: Optional[Dict[int, Tuple[int, str]]] = None,
              name: str = "") -> None:
        """Refuse a real tensor that is not one this fake describes (a clear error naming the argument).
        seen: the values the call's earlier arguments gave each sym_int (shared across the call's
        arguments, so that a sym_int two fakes share takes one value). name: the parameter's name; an
        extent or stride that differs also says, in CuTe DSL's words for its TVM-FFI calls,
        ``Mismatched NAME.shape[i] on argument #POS``."""
        from .dynamic import value_of

        where = f"{fn}: argument {pos} (compiled for {self!r})"

        def mismatch(what: str, i: int) -> str:
            return f"Mismatched {name or 'tensor'}.{what}[{i}] on argument #{pos} when calling `{fn}`"

        et = getattr(real, "element_type", None)
        if et is None:
            raise LaunchError(f"{where}: expected a tensor, got {type(real).__name__}")
        if et is not self.element_type:
            raise LaunchError(f"{where}: the tensor holds {et}")
        shape, stride = value_of(real.shape), value_of(getattr(real, "stride", None) or real.layout.stride)
        shape = shape if isinstance(shape, tuple) else (shape,)
        stride = stride if isinstance(stride, tuple) else (stride,)
        if len(shape) != len(self.shape):
            raise LaunchError(f"{where}: the tensor has rank {len(shape)}, the fake {len(self.shape)}")
        seen = {} if seen is None else seen
        for what, got, want in (("shape", shape, self.shape), ("stride", stride, self.stride)):
            for i, (g, w) in enumerate(zip(got, want)):
                if isinstance(w, SymInt):
                    if g % w.divisibility:
                        raise LaunchError(f"{where}: {what}[{i}] = {g} is not a multiple of {w.divisibility}")
                    v, at = seen.setdefault(id(w), (g, f"argument {pos}'s {what}[{i}]"))
                    if v != g:
                        raise LaunchError(f"{where}: {what}[{i}] = {g}, but the same sym_int is {v} in {at} "
                                          f"({mismatch(what, i)})")
                elif g != w and not (what == "stride" and shape[i] == 1):
                    raise LaunchError(f"{where}: {what}[{i}] is {g}, the fake's is {w} ({mismatch(what, i)})")
        addr = getattr(getattr(real, "iterator", None), "address", None)
        if addr is None:
            addr = getattr(getattr(real, "engine", None), "address", None)
        if addr is not None and int(addr) % self.assumed_align:
            raise LaunchError(f"{where}: the tensor's address 0x{int(addr):x} is not {self.assumed_align}-byte aligned")


def make_fake_tensor(dtype: Any, shape: Tuple[Any, ...], stride: Tuple[Any, ...], *, memspace: Any = "gmem",
                     assumed_align: Optional[int] = None) -> FakeTensor:
    """A fake tensor with explicit strides (``cute.runtime.make_fake_tensor``).

    >>> from cutelab import Float16
    >>> make_fake_tensor(Float16, (sym_int(divisibility=16), 4), stride=(4, 1), assumed_align=16)
    FakeTensor<Float16, (?{div=16}, 4), (4, 1)>
    """
    return FakeTensor(dtype, shape, stride, memspace, assumed_align, "make_fake_tensor")


def make_fake_compact_tensor(dtype: Any, shape: Tuple[Any, ...], *, stride_order: Optional[Tuple[int, ...]] = None,
                             memspace: Any = "gmem", assumed_align: Optional[int] = None,
                             use_32bit_stride: bool = False) -> FakeTensor:
    """A fake tensor with compact strides (``cute.runtime.make_fake_compact_tensor``): ``stride_order[i]``
    is mode i's rank from the innermost (0: stride 1); by default (0, 1, ..., n-1). A stride that is a
    product of symbolic extents is a new symbolic stride (64-bit unless use_32bit_stride)."""
    op = "make_fake_compact_tensor"
    shape = tuple(_check_entry(s, "shape", op) for s in shape)
    r = len(shape)
    order = tuple(range(r)) if stride_order is None else tuple(stride_order)
    if sorted(order) != list(range(r)):
        raise TensorError(f"{op}: stride_order {order} must be a permutation of 0..{r - 1}")
    stride: List[Any] = [None] * r
    acc: Any = 1
    for rank in range(r):
        i = order.index(rank)
        stride[i] = acc
        s = shape[i]
        if isinstance(acc, SymInt) or isinstance(s, SymInt):
            div = (acc.divisibility if isinstance(acc, SymInt) else acc) * (
                s.divisibility if isinstance(s, SymInt) else s)
            acc = SymInt(32 if use_32bit_stride else 64, divisibility=max(1, div))
        else:
            acc = acc * s
    return FakeTensor(dtype, shape, tuple(stride), memspace, assumed_align, op)


def has_fakes(args: Tuple[Any, ...]) -> bool:
    return any(isinstance(a, FakeTensor) for a in args)
