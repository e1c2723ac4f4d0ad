"""Tracing: run a kernel function once with symbolic indices, recording a small kernel IR.

The IR is straight-line code over

- ``Param``: a global-memory pointer argument (a tensor's storage), with its element type, the
  alignment of its base pointer and the number of elements it may touch;
- ``Reg``: a register array of ``n`` elements, written once (SSA): every load and every
  arithmetic op makes a new one; a fragment (``make_fragment_like``) is just a Python list of
  references to register elements, so copies through it cost nothing;
- statements ``Load`` (``dst[i] = param[base + offsets[i]]``), ``Store``
  (``param[base + offsets[i]] = src[i]``), ``Compute`` (element-wise arithmetic) and
  ``Printf``. ``base`` is a symbolic integer of the thread and block indices; ``offsets`` are
  static ints read off the (static) layout. That split is what lets the CUDA printer prove
  16-byte alignment and emit vector loads, and the interpreter gather for all threads at once.

Engines plug traced tensors into ``cutelab.tensor.Tensor``: ``GmemEngine`` (a kernel
argument's global memory) records loads and stores; ``RmemEngine`` (a register fragment) keeps
references at static offsets.
"""

from __future__ import annotations

import threading
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import int_tuple as it
from ..errors import TraceError
from ..layout import Layout, ScaledBasis, evaluate_all
from ..tensor import PointerInfo
from .symbolic import Expr, Var, is_sym, sym_div, sym_range

__all__ = [
    "Param", "Reg", "Load", "Store", "Compute", "Printf", "KernelIR", "Tracer", "current",
    "GmemEngine", "RmemEngine", "TraceValue", "thread_idx", "block_idx", "block_dim", "grid_dim",
    "printf", "pow2_divisor",
]


def pow2_divisor(n: int) -> int:
    """The largest power of two dividing n (0 stands for 'divisible by anything': returns 0)."""
    n = abs(int(n))
    return n & -n if n else 0


def _align_of(base_align: int, elem_bytes: int, offset: Any) -> int:
    """Bytes of alignment known for the element at ``offset`` of a pointer aligned to base_align."""
    d = sym_div(offset)
    if d == 0:
        return base_align
    return max(min(base_align, pow2_divisor(d * elem_bytes)), elem_bytes)


# --------------------------------------------------------------------------- IR

class Param:
    """A global-memory pointer argument of the kernel."""

    def __init__(self, index: int, name: str, dtype: Any, align: int, length: int):
        self.index = index
        self.name = name
        self.dtype = dtype
        self.align = align  # bytes, of the pointer passed
        self.length = length  # elements addressable from the pointer
        self.read = False
        self.written = False

    def __repr__(self) -> str:
        return f"Param({self.name}: {self.dtype}*, align {self.align}, {self.length} elements)"


class Reg:
    """A register array written once."""

    __slots__ = ("id", "dtype", "n")

    def __init__(self, id: int, dtype: Any, n: int):
        self.id, self.dtype, self.n = id, dtype, n

    @property
    def name(self) -> str:
        return f"r{self.id}"

    def __repr__(self) -> str:
        return f"{self.name}[{self.n}]:{self.dtype}"


# A Ref is (Reg, index) or a Python number (a constant).
Ref = Any


class Load:
    __slots__ = ("dst", "param", "base", "offsets")

    def __init__(self, dst: Reg, param: Param, base: Any, offsets: Tuple[int, ...]):
        self.dst, self.param, self.base, self.offsets = dst, param, base, offsets

    def __repr__(self) -> str:
        return f"{self.dst!r} = load {self.param.name}[{_s(self.base)} + {list(self.offsets)}]"


class Store:
    __slots__ = ("param", "base", "offsets", "src")

    def __init__(self, param: Param, base: Any, offsets: Tuple[int, ...], src: Tuple[Ref, ...]):
        self.param, self.base, self.offsets, self.src = param, base, offsets, src

    def __repr__(self) -> str:
        return f"store {self.param.name}[{_s(self.base)} + {list(self.offsets)}] = {_refs_str(self.src)}"


class Compute:
    """dst[i] = op(args[0][i], args[1][i], ...); each arg is a tuple of Refs (one per element)."""

    __slots__ = ("dst", "op", "args")

    OPS = ("add", "sub", "mul", "div", "neg", "cvt", "max", "min")

    def __init__(self, dst: Reg, op: str, args: Tuple[Tuple[Ref, ...], ...]):
        self.dst, self.op, self.args = dst, op, args

    def __repr__(self) -> str:
        return f"{self.dst!r} = {self.op}({', '.join(_refs_str(a) for a in self.args)})"


class Printf:
    """One line of output per thread. ``parts`` holds strings and ('int', Expr) / ('val', Ref,
    dtype) / ('addr', Param, Expr) items."""

    __slots__ = ("parts",)

    def __init__(self, parts: List[Any]):
        self.parts = parts

    def __repr__(self) -> str:
        return f"printf{self.parts!r}"


def _s(x: Any) -> str:
    return x.expr_str() if is_sym(x) else str(x)


def _refs_str(refs: Sequence[Ref]) -> str:
    out = []
    for r in refs[:4]:
        out.append(f"{r[0].name}[{r[1]}]" if isinstance(r, tuple) else repr(r))
    return "(" + ", ".join(out) + (", ..." if len(refs) > 4 else "") + ")"


class KernelIR:
    """A traced kernel: its name, parameters (in call order), statements and launch shape."""

    def __init__(self, name: str, params: List[Param], stmts: List[Any], regs: List[Reg],
                 grid: Tuple[int, int, int], block: Tuple[int, int, int]):
        self.name = name
        self.params = params
        self.stmts = stmts
        self.regs = regs
        self.grid = grid
        self.block = block

    @property
    def num_threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    def __repr__(self) -> str:
        lines = [f"kernel {self.name}({', '.join(map(repr, self.params))}) grid={self.grid} block={self.block}"]
        lines += [f"  {s!r}" for s in self.stmts]
        return "\n".join(lines)


# --------------------------------------------------------------------------- the tracer

_state = threading.local()


class Tracer:
    """Collects the IR of one kernel while its Python function runs."""

    def __init__(self, name: str, grid: Tuple[int, int, int], block: Tuple[int, int, int]):
        self.name = name
        self.grid = grid
        self.block = block
        self.params: List[Param] = []
        self.stmts: List[Any] = []
        self.regs: List[Reg] = []
        self.tid = tuple(Var(f"tid.{a}", n) for a, n in zip("xyz", block))
        self.bid = tuple(Var(f"bid.{a}", n) for a, n in zip("xyz", grid))

    def __enter__(self) -> "Tracer":
        if getattr(_state, "tracer", None) is not None:
            raise TraceError(
                f"kernel {self.name} was launched while kernel {_state.tracer.name} is being traced; "
                f"kernels cannot launch kernels"
            )
        _state.tracer = self
        return self

    def __exit__(self, *exc: Any) -> None:
        _state.tracer = None

    def add_param(self, name: str, dtype: Any, align: int, length: int) -> Param:
        names = {p.name for p in self.params}
        base, k = name, 1
        while name in names:
            name = f"{base}_{k}"
            k += 1
        p = Param(len(self.params), name, dtype, align, length)
        self.params.append(p)
        return p

    def new_reg(self, dtype: Any, n: int) -> Reg:
        r = Reg(len(self.regs), dtype, n)
        self.regs.append(r)
        return r

    def emit(self, stmt: Any) -> None:
        self.stmts.append(stmt)

    def finish(self) -> KernelIR:
        return KernelIR(self.name, self.params, self.stmts, self.regs, self.grid, self.block)


def current(what: str = "this") -> Tracer:
    t = getattr(_state, "tracer", None)
    if t is None:
        raise TraceError(f"{what} is only available inside a @cute.kernel function while it is launched")
    return t


def tracing() -> bool:
    return getattr(_state, "tracer", None) is not None


def thread_idx() -> tuple:
    """(x, y, z) thread index inside the block: symbolic integers."""
    return current("cute.arch.thread_idx()").tid


def block_idx() -> tuple:
    """(x, y, z) block index inside the grid: symbolic integers."""
    return current("cute.arch.block_idx()").bid


def block_dim() -> tuple:
    """(x, y, z) threads per block: static ints (the kernel is specialised to its launch shape)."""
    return current("cute.arch.block_dim()").block


def grid_dim() -> tuple:
    """(x, y, z) blocks in the grid: static ints."""
    return current("cute.arch.grid_dim()").grid


# --------------------------------------------------------------------------- values

def _static_offsets(layout: Layout, op: str) -> np.ndarray:
    if any(isinstance(d, ScaledBasis) for d in it.flatten_to_tuple(layout.stride)):
        raise TraceError(f"{op}: layout {layout} has basis strides; it addresses coordinates, not memory")
    for x in it.flatten_to_tuple(layout.shape) + it.flatten_to_tuple(layout.stride):
        if is_sym(x):
            raise TraceError(f"{op}: layout {layout} must be static (shapes and strides known at trace time)")
    return evaluate_all(layout)


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool) or isinstance(x, bool)


def _kind(dtype: Any) -> str:
    return getattr(dtype, "kind", "float")


def _result_dtype(a: Any, b: Any, op: str) -> Any:
    if a is b:
        return a
    if a.name == b.name:
        return a
    raise TraceError(
        f"{op} of values of element types {a} and {b}: convert one with .to(...) first"
    )


class TraceValue:
    """The values of a tensor inside a traced kernel (CuTe DSL's TensorSSA): a shape, an element
    type and one register reference per element, in index order."""

    __slots__ = ("refs", "shape", "dtype")

    def __init__(self, refs: Sequence[Ref], shape: Any, dtype: Any):
        self.refs = tuple(refs)
        self.shape = shape
        self.dtype = dtype

    @property
    def element_type(self) -> Any:
        return self.dtype

    def __len__(self) -> int:
        return len(self.refs)

    def __str__(self) -> str:
        return f"tensor_value<{self.dtype} o {it.tuple_str(self.shape)}>"

    __repr__ = __str__

    def _emit(self, op: str, args: Tuple[Any, ...], dtype: Any) -> "TraceValue":
        t = current("arithmetic on tensor values")
        n = len(self.refs)
        cols = []
        for a in args:
            if isinstance(a, TraceValue):
                if len(a.refs) != n:
                    raise TraceError(
                        f"{op}: values of shapes {it.tuple_str(self.shape)} and {it.tuple_str(a.shape)} differ in size"
                    )
                cols.append(a.refs)
            elif _is_number(a) or is_sym(a):
                cols.append((a,) * n)
            else:
                raise TraceError(f"{op}: cannot combine a tensor value with {type(a).__name__} {a!r}")
        dst = t.new_reg(dtype, n)
        t.emit(Compute(dst, op, tuple(cols)))
        return TraceValue([(dst, i) for i in range(n)], self.shape, dtype)

    def _binary(self, o: Any, op: str, rev: bool = False) -> "TraceValue":
        dt = _result_dtype(self.dtype, o.dtype, op) if isinstance(o, TraceValue) else self.dtype
        return self._emit(op, (o, self) if rev else (self, o), dt)

    def __add__(self, o: Any) -> "TraceValue":
        return self._binary(o, "add")

    def __radd__(self, o: Any) -> "TraceValue":
        return self._binary(o, "add", True)

    def __sub__(self, o: Any) -> "TraceValue":
        return self._binary(o, "sub")

    def __rsub__(self, o: Any) -> "TraceValue":
        return self._binary(o, "sub", True)

    def __mul__(self, o: Any) -> "TraceValue":
        return self._binary(o, "mul")

    def __rmul__(self, o: Any) -> "TraceValue":
        return self._binary(o, "mul", True)

    def __truediv__(self, o: Any) -> "TraceValue":
        return self._binary(o, "div")

    def __rtruediv__(self, o: Any) -> "TraceValue":
        return self._binary(o, "div", True)

    def __neg__(self) -> "TraceValue":
        return self._emit("neg", (self,), self.dtype)

    def to(self, dtype: Any) -> "TraceValue":
        """Convert every element to dtype (floats round to nearest even)."""
        if dtype is self.dtype or getattr(dtype, "name", None) == self.dtype.name:
            return self
        return self._emit("cvt", (self,), dtype)

    def __bool__(self) -> bool:
        raise TraceError("a tensor value has no truth value at trace time")


def _refs_of(value: Any, n: int, dtype: Any, op: str, where: str) -> Tuple[Ref, ...]:
    """The n element references of value (a TraceValue, a scalar or a sequence), converted to dtype."""
    if isinstance(value, TraceValue):
        if len(value.refs) != n:
            raise TraceError(
                f"{op} into {where}: the value has {len(value.refs)} elements "
                f"(shape {it.tuple_str(value.shape)}) but the tensor has {n}; nothing was written"
            )
        if value.dtype.name != dtype.name:
            value = value.to(dtype)
        return value.refs
    if _is_number(value):
        return (value,) * n
    if isinstance(value, (list, tuple)) and len(value) == n and all(_is_number(v) for v in value):
        return tuple(value)
    raise TraceError(f"{op} into {where}: cannot store a {type(value).__name__} in a traced kernel")


# --------------------------------------------------------------------------- engines

class GmemEngine(PointerInfo):
    """A kernel argument's global memory, inside a trace: loads and stores become IR."""

    memspace = "gmem"

    def __init__(self, param: Param, address: int = 0):
        self.param = param
        self.address = address  # the real address, for printing only

    @property
    def dtype(self) -> Any:
        return self.param.dtype

    @property
    def align(self) -> int:
        return self.param.align

    def __len__(self) -> int:
        return self.param.length

    def alignment(self, offset: Any) -> int:
        return _align_of(self.param.align, self.dtype.bytes, offset)

    def raw_ptr_str(self, offset: Any) -> str:
        return f"raw_ptr(?: {self.dtype.name}, gmem, align<{self.alignment(offset)}>)"

    def load(self, offset: Any, layout: Layout) -> TraceValue:
        t = current("loading from a tensor")
        offs = _static_offsets(layout, "load")
        dst = t.new_reg(self.dtype, len(offs))
        self.param.read = True
        t.emit(Load(dst, self.param, offset, tuple(int(o) for o in offs)))
        return TraceValue([(dst, i) for i in range(len(offs))], layout.shape, self.dtype)

    def store(self, offset: Any, layout: Layout, value: Any) -> None:
        t = current("storing to a tensor")
        offs = _static_offsets(layout, "store")
        refs = _refs_of(value, len(offs), self.dtype, "store", f"a {self.param.name} tensor of layout {layout}")
        self.param.written = True
        t.emit(Store(self.param, offset, tuple(int(o) for o in offs), refs))

    def read_one(self, off: Any) -> TraceValue:
        t = current("reading a tensor element")
        dst = t.new_reg(self.dtype, 1)
        self.param.read = True
        t.emit(Load(dst, self.param, off, (0,)))
        return TraceValue([(dst, 0)], (), self.dtype)

    def write_one(self, off: Any, v: Any) -> None:
        t = current("writing a tensor element")
        refs = _refs_of(v, 1, self.dtype, "store", f"an element of {self.param.name}")
        self.param.written = True
        t.emit(Store(self.param, off, (0,), refs))

    @classmethod
    def make_fragment(cls, tensor: Any, layout: Layout, dtype: Any = None) -> tuple:
        return RmemEngine.make_fragment(tensor, layout, dtype)


_UNSET = 0  # registers that were never written read as 0


class RmemEngine(PointerInfo):
    """A register fragment inside a trace: element references at static offsets."""

    memspace = "rmem"
    align = 16

    def __init__(self, dtype: Any, n: int):
        self.dtype = dtype
        self.slots: List[Ref] = [_UNSET] * n

    def __len__(self) -> int:
        return len(self.slots)

    def alignment(self, offset: Any) -> int:
        return _align_of(16, self.dtype.bytes, offset)

    def raw_ptr_str(self, offset: Any) -> str:
        return f"raw_ptr(0x{0:016x}: {self.dtype.name}, rmem, align<{self.alignment(offset)}>)"

    def _static(self, offset: Any, op: str) -> int:
        if is_sym(offset):
            lo, hi = sym_range(offset)
            if lo != hi:
                raise TraceError(
                    f"{op}: a register fragment can only be indexed with static coordinates "
                    f"(registers have no addresses); got an offset that depends on the thread index"
                )
            offset = lo
        return int(offset)

    def _offsets(self, offset: Any, layout: Layout, op: str) -> np.ndarray:
        base = self._static(offset, op)
        offs = _static_offsets(layout, op) + base
        if len(offs) and (offs.min() < 0 or offs.max() >= len(self.slots)):
            raise TraceError(
                f"{op}: layout {layout} at offset {base} reaches [{int(offs.min())}, {int(offs.max())}], "
                f"outside the fragment of {len(self.slots)} registers"
            )
        return offs

    def load(self, offset: Any, layout: Layout) -> TraceValue:
        offs = self._offsets(offset, layout, "load")
        return TraceValue([self.slots[int(o)] for o in offs], layout.shape, self.dtype)

    def store(self, offset: Any, layout: Layout, value: Any) -> None:
        offs = self._offsets(offset, layout, "store")
        refs = _refs_of(value, len(offs), self.dtype, "store", f"a register fragment of layout {layout}")
        for o, r in zip(offs, refs):
            self.slots[int(o)] = r

    def read_one(self, off: Any) -> TraceValue:
        o = self._static(off, "read")
        if not 0 <= o < len(self.slots):
            raise TraceError(f"read: offset {o} is outside the fragment of {len(self.slots)} registers")
        return TraceValue([self.slots[o]], (), self.dtype)

    def write_one(self, off: Any, v: Any) -> None:
        o = self._static(off, "write")
        if not 0 <= o < len(self.slots):
            raise TraceError(f"write: offset {o} is outside the fragment of {len(self.slots)} registers")
        self.slots[o] = _refs_of(v, 1, self.dtype, "store", "a register")[0]

    @classmethod
    def make_fragment(cls, tensor: Any, layout: Layout, dtype: Any = None) -> tuple:
        dtype = dtype or tensor.element_type
        offs = _static_offsets(layout, "make_fragment_like")
        n = int(offs.max()) + 1 if len(offs) else 1
        return cls(dtype, n), 0


# --------------------------------------------------------------------------- printf

def _fmt_static(x: Any) -> str:
    return str(x)


def _value_parts(tensor: Any) -> List[Any]:
    """Parts that print a tensor like CuTe DSL's printf: raw pointer, layout, values."""
    eng = tensor.engine
    layout = tensor.layout
    if isinstance(eng, GmemEngine):
        vals = eng.load(tensor.offset, layout)
        head: List[Any] = ["raw_ptr(0x", ("addr", eng.param, tensor.offset),
                           f": {eng.dtype.name}, gmem, align<{eng.alignment(tensor.offset)}>) o {layout} = \n  ( "]
    elif isinstance(eng, RmemEngine):
        vals = eng.load(tensor.offset, layout)
        head = [f"{eng.raw_ptr_str(tensor.offset)} o {layout} = \n  ( "]
    else:
        raise TraceError(f"printf: cannot print a tensor over {type(eng).__name__} inside a kernel")
    parts = head
    for i, r in enumerate(vals.refs):
        if i:
            parts.append(", ")
        parts.append(("val", r, vals.dtype))
    parts.append(" )")
    return parts


def _arg_parts(a: Any) -> List[Any]:
    if is_sym(a):
        return [("int", a)]
    if isinstance(a, TraceValue):
        if len(a.refs) == 1 and a.shape == ():
            return [("val", a.refs[0], a.dtype)]
        parts: List[Any] = ["( "]
        for i, r in enumerate(a.refs):
            if i:
                parts.append(", ")
            parts.append(("val", r, a.dtype))
        parts.append(" )")
        return parts
    if hasattr(a, "engine") and hasattr(a, "layout"):
        return _value_parts(a)
    if isinstance(a, tuple) and any(is_sym(x) for x in it.flatten_to_tuple(a) if not isinstance(x, tuple)):
        parts = ["("]
        for i, x in enumerate(a):
            if i:
                parts.append(",")
            parts.extend(_arg_parts(x))
        parts.append(")")
        return parts
    return [_fmt_static(a)]


def printf(fmt: str, *args: Any) -> None:
    """Print from every thread at run time (CuTe DSL's cute.printf): ``{}`` takes the next argument.

    Symbolic integers print their value per thread, tensors print their pointer, layout and
    values. A newline is appended. Outside a kernel it prints once, like print().
    """
    if not isinstance(fmt, str):
        args = (fmt,) + args
        fmt = " ".join("{}" for _ in args)
    pieces = fmt.split("{}")
    if len(pieces) - 1 != len(args):
        raise TraceError(
            f"cute.printf({fmt!r}, ...): the format has {len(pieces) - 1} '{{}}' placeholders but "
            f"{len(args)} arguments were given"
        )
    if not tracing():
        out = pieces[0]
        for a, p in zip(args, pieces[1:]):
            out += str(a) + p
        print(out)
        return
    t = current("cute.printf")
    parts: List[Any] = [pieces[0]]
    for a, p in zip(args, pieces[1:]):
        parts.extend(_arg_parts(a))
        parts.append(p)
    parts.append("\n")
    merged: List[Any] = []
    for x in parts:
        if isinstance(x, str) and merged and isinstance(merged[-1], str):
            merged[-1] += x
        elif x != "":
            merged.append(x)
    t.emit(Printf(merged))
