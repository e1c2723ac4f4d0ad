"""Tracing: run a kernel function once with symbolic indices, recording the kernel IR
(``kernel.ir.nodes``).

The tracer (``Tracer``) owns the IR being built; ``current()`` is the one in progress
(``active()``: it or None). Values computed inside a kernel are ``TraceValue``s (element-wise
arithmetic on register elements). The memories that traced tensors read and write are
``engines``' (``GmemEngine``, ``RmemEngine``, ``SmemEngine``); ``cute.printf`` is ``printing``'s.
"""

from __future__ import annotations

import threading
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ... import int_tuple as it
from ... import tracing as _tracing_protocol
from ...errors import TraceError, _internal, user_location  # noqa: F401  (the user's line: errors.py walks the stack)
from ...numeric import float_promotion, python_operand_type, runtime_class
from ...layout import Layout, ScaledBasis, evaluate_all
from ..ir.nodes import (Barrier, Block, Compute, DimVar, dim_values, For, If, KernelIR, Load, LoopVar, Op, Param, Ref, Reg, RegVar, ScalarParam,
                        Shared, Store, While, walk)
from ..ir.symbolic import Var, atoms, is_sym, sym_div, sym_range

__all__ = [
    "Tracer", "current", "active", "TraceValue", "thread_idx", "block_idx", "block_dim", "grid_dim", "where", "tracing",
]


# --------------------------------------------------------------------------- the tracer

_state = threading.local()


class Tracer:
    """Collects the IR of one kernel while its Python function runs.

    ``cur`` is the block ops are appended to; ``region``-making methods (``for_``, ``if_``,
    ``while_``) push and pop blocks. ``where`` (the user's file and line, set by the rewritten
    kernel) goes into error messages."""

    def __init__(self, name: str, grid: Tuple[int, int, int], block: Tuple[int, int, int]):
        self.name = name
        self.grid = grid
        self.block = block
        self.params: List[Any] = []
        self.body = Block()
        self.cur = self.body
        self.regs: List[Reg] = []
        self.shared: List[Shared] = []
        self.dynamic_smem = 0
        self.fragments: List[Any] = []  # RmemEngines, to make mutable on entering a region
        self.loops: List[LoopVar] = []  # the loop variables of the enclosing For ops
        self.whiles: List[Any] = []  # the enclosing While ops (runtime while loops)
        self.tid = tuple(Var(f"tid.{a}", n) for a, n in zip("xyz", block))
        self.bid = tuple(Var(f"bid.{a}", n) for a, n in zip("xyz", grid))
        self.cluster: Tuple[int, int, int] = (1, 1, 1)  # the launch's cluster shape (launch(cluster=...))

    @property
    def stmts(self) -> List[Any]:
        return self.body.ops

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

    def _unique(self, name: str) -> str:
        names = {p.name for p in self.params} | {s.name for s in self.shared}
        base, k = name, 1
        while name in names:
            name = f"{base}_{k}"
            k += 1
        return name

    def add_param(self, name: str, dtype: Any, align: int, length: int) -> Param:
        p = Param(len(self.params), self._unique(name), dtype, align, length)
        self.params.append(p)
        return p

    def add_scalar(self, name: str, dtype: Any) -> ScalarParam:
        p = ScalarParam(len(self.params), self._unique(name), dtype)
        self.params.append(p)
        return p

    def add_shared(self, dtype: Any, length: int, align: int) -> Shared:
        sh = Shared(len(self.shared), self._unique(f"smem{len(self.shared)}"), dtype, align, length)
        self.shared.append(sh)
        return sh

    def new_reg(self, dtype: Any, n: int, mutable: bool = False) -> Reg:
        r = Reg(len(self.regs), dtype, n, self.body if mutable else self.cur, mutable)
        self.regs.append(r)
        return r

    def emit(self, stmt: Any) -> None:
        if isinstance(stmt, (Load, Store, Op, Barrier)):
            stmt.loc = user_location() or getattr(self, "location", None)
        self.cur.ops.append(stmt)

    def check_refs(self, refs: Sequence[Ref], what: str) -> None:
        """Refuse values defined in a loop or branch that has ended (their registers are gone)."""
        for r in refs:
            if isinstance(r, tuple):
                reg = r[0]
                if reg.block is not None and not reg.block.encloses(self.cur):
                    raise TraceError(
                        f"kernel {self.name}: {what} uses a value computed inside a loop or branch that has "
                        f"ended{self.where()}; a value that must outlive a runtime loop or branch has to be "
                        f"assigned to a variable before it (the rewritten kernel carries such variables) or "
                        f"kept in a register fragment (cute.make_fragment)"
                    )
            elif is_sym(r):
                self.check_index(r, what)

    def check_index(self, e: Any, what: str) -> None:
        for v in atoms(e):
            if isinstance(v, RegVar):
                self.check_refs([v.ref], what)
            elif isinstance(v, LoopVar) and not any(v is w for w in self.loops):
                raise TraceError(
                    f"kernel {self.name}: {what} uses the index of a loop that has ended "
                    f"({v.c_name}){self.where()}"
                )

    def where(self) -> str:
        w = getattr(self, "location", None)
        return f" (at {w})" if w else ""

    # ---- regions
    def _enter_region(self) -> None:
        """Before a loop: every live fragment becomes mutable (values assigned where it lives)."""
        for f in self.fragments:
            f.make_mutable(self, before_region=f.block is not self.cur)

    def begin_for(self, lo: Any, hi: Any, step: int, unroll: Optional[int]) -> Tuple[For, LoopVar]:
        self._enter_region()
        if not isinstance(step, int) or step == 0:
            raise TraceError(f"kernel {self.name}: a runtime loop needs a nonzero static int step, got {step!r}"
                             f"{self.where()}")
        llo, lhi = sym_range(lo)
        hlo, hhi = sym_range(hi)
        if step > 0:
            vlo, vhi = llo, hhi - 1
        else:
            vlo, vhi = hlo + 1, lhi
        from math import gcd

        div = gcd(sym_div(lo), abs(step))
        var = LoopVar(f"i{sum(1 for op in walk(self.body) if isinstance(op, For))}", vlo, vhi, div, user_location())
        op = For(var, lo, hi, step, Block(self.cur), unroll)
        self.check_refs([x for x in (lo, hi) if is_sym(x)], "a loop bound")
        self.emit(op)
        self.cur = op.body
        self.loops.append(var)
        return op, var

    def end_for(self, op: For) -> None:
        assert self.cur is op.body
        self.cur = op.body.parent
        self.loops.pop()

    def begin_if(self, cond: Any) -> If:
        # fragments stay as they are: reads inside a branch see the values from before it, and a
        # write inside it makes the fragment mutable then (RmemEngine._put)
        self.check_refs([cond], "a branch condition")
        op = If(cond, Block(self.cur), Block(self.cur))
        self.emit(op)
        return op

    def begin_while(self) -> While:
        self._enter_region()
        before = Block(self.cur)
        op = While(before, Block(before))  # the body sees the values the condition block computed
        self.emit(op)
        self.cur = op.before
        self.whiles.append(op)
        return op

    def end_while(self, op: While) -> None:
        assert self.whiles and self.whiles[-1] is op
        self.cur = op.before.parent
        self.whiles.pop()

    def insert_before(self, op: Any, new_ops: List[Any]) -> None:
        """Put new_ops just before the region op `op` in its block (an enclosing block of cur)."""
        b = self.cur
        while b is not None:
            for i, x in enumerate(b.ops):
                if x is op:
                    b.ops[i:i] = new_ops
                    return
            b = b.parent
        raise AssertionError("region op not found in the enclosing blocks")

    def finish(self) -> KernelIR:
        if self.cur is not self.body:
            raise TraceError(f"kernel {self.name}: a loop or branch was left open at the end of the kernel")
        ir = KernelIR(self.name, self.params, self.body, self.regs, self.grid, self.block, self.shared,
                      self.dynamic_smem)
        ir.cluster = self.cluster
        # the launch dimensions the kernel reads (gridDim: the block schedule must keep the grid it was launched with)
        ir.dims_read = frozenset(getattr(self, "dims_read", ()))
        return ir


def user_line() -> str:
    """file:line of the user's kernel code being traced (user_location), or ''."""
    return user_location() or ""


def current(what: str = "this") -> Tracer:
    t = getattr(_state, "tracer", None)
    if t is None:
        raise TraceError(f"{what} is only available inside a @cute.kernel function while it is launched")
    return t


def tracing() -> bool:
    return getattr(_state, "tracer", None) is not None


def in_runtime_branch() -> bool:
    """Whether the kernel being traced is inside the body of a runtime ``if`` (code that may not run)."""
    t = getattr(_state, "tracer", None)
    if t is None:
        return False
    b = t.cur
    while b.parent is not None:
        if any(isinstance(op, If) and (op.then is b or op.orelse is b) for op in b.parent.ops):
            return True
        b = b.parent
    return False


def active() -> Optional[Tracer]:
    """The tracer in progress, or None outside a trace."""
    return getattr(_state, "tracer", None)


def thread_idx() -> tuple:
    """(x, y, z) thread index inside the block: symbolic integers."""
    return current("cute.arch.thread_idx()").tid


def block_idx() -> tuple:
    """(x, y, z) block index inside the grid: symbolic integers."""
    return current("cute.arch.block_idx()").bid


def block_dim() -> tuple:
    """(x, y, z) threads per block (``%ntid``): runtime integers, as in CuTe DSL (``ir.nodes.DimVar``);
    arithmetic on them stays symbolic, and a static use (a shape, a Python ``range``) is an error."""
    return dims("ntid", "cute.arch.block_dim()")


def grid_dim() -> tuple:
    """(x, y, z) blocks in the grid (``%nctaid``): runtime integers, as ``block_dim``."""
    return dims("nctaid", "cute.arch.grid_dim()")


def dims(sreg: str, what: str) -> tuple:
    """The (x, y, z) ``DimVar``s of special register ``sreg`` (a launch dimension) in the kernel being traced."""
    t = current(what)
    vals = dim_values(t.grid, t.block, t.cluster)
    if not hasattr(t, "dims_read"):
        t.dims_read = set()
    t.dims_read.add(sreg)
    return tuple(DimVar(sreg, a, vals[f"arg.%{sreg}.{a}"]) for a in "xyz")


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
    if a.kind in ("int", "uint") and b.kind in ("int", "uint"):
        # CuTe DSL's integer promotion (base_dsl.typing._promote_integer): the wider type; between signed and
        # unsigned, the unsigned one when it is at least as wide, else the signed one
        if a.kind == b.kind:
            return a if a.width >= b.width else b
        u, i = (a, b) if a.kind == "uint" else (b, a)
        return u if u.width >= i.width else i
    raise TraceError(
        f"{op} of values of element types {a} and {b}: convert one with .to(...) first"
    )


class TraceValue:
    """The values of a tensor inside a traced kernel (CuTe DSL's TensorSSA): a shape, an element
    type and one register reference per element, in index order."""

    __slots__ = ("refs", "shape", "dtype")

    def __init__(self, refs: Sequence[Ref], shape: Any, dtype: Any):
        if isinstance(refs, TraceValue):  # type(value)(value, shape, dtype): CuTe DSL's TensorSSA(ir value, ...)
            refs = _value_as(refs, shape, dtype).refs
        self.refs = tuple(refs)
        self.shape = shape
        self.dtype = dtype
        if shape == () and type(self) is TraceValue:  # a scalar: type(v) stands for its DSL class (numeric.py)
            self.__class__ = runtime_class(TraceValue, dtype) or TraceValue

    @property
    def element_type(self) -> Any:
        return self.dtype

    def ir_value(self, *, loc: Any = None, ip: Any = None) -> "TraceValue":
        """CuTe DSL's MLIR value (``Float32(x).ir_value()``, an operand of ``llvm.inline_asm``):
        the traced value itself."""
        return self

    def maybe_downcast(self, *, loc: Any = None, ip: Any = None) -> "TraceValue":
        """CuTe DSL's vector of a TensorSSA (narrow types as their MLIR vector): the traced value itself."""
        return self

    def as_index(self) -> Any:
        """This one-element integer value as an index (a coordinate of a tensor): an int, a
        symbolic index, or a RegVar reading its register at run time."""
        if len(self.refs) != 1 or self.dtype.kind not in ("int", "uint", "bool"):
            raise TraceError(f"a tensor value {self} of {self.dtype} cannot index a tensor; an index is one integer")
        r = self.refs[0]
        if isinstance(r, tuple):
            current("a runtime index").check_refs([r], "an index")
            return RegVar(r)
        return r if is_sym(r) else int(r)

    def __len__(self) -> int:
        return len(self.refs)

    def __getitem__(self, coord: Any) -> "TraceValue":
        """The value at a static coordinate (or a linear index in column-major order), or with None
        in it the sliced values, as CuTe DSL indexes a TensorSSA (and as cutelab's host TensorSSA)."""
        from ...layout import _normalize, make_layout, slice_and_offset

        if self.shape == ():
            raise TraceError(f"a runtime scalar {self} cannot be indexed")
        full = make_layout(self.shape)
        c = _normalize(coord)
        if any(is_sym(x) or isinstance(x, TraceValue) for x in it.flatten_to_tuple(c) if x is not None):
            raise TraceError(f"a tensor value's [{coord!r}]: the coordinate must be static (registers have no "
                             f"addresses); copy the values to a fragment and index that")
        if it.has_none(c):
            sub, off = slice_and_offset(c, full)
            shape = sub.shape if isinstance(sub.shape, tuple) else (sub.shape,)
            idx = evaluate_all(sub) + int(off)
            return TraceValue([self.refs[int(i)] for i in np.asarray(idx).reshape(-1)], shape, self.dtype)
        try:
            i = int(full(c))
        except Exception as e:  # noqa: BLE001 - a coordinate that does not fit the shape
            raise TraceError(f"a tensor value {self}[{coord!r}]: {e}") from None
        if not 0 <= i < len(self.refs):
            raise TraceError(f"a tensor value {self}[{coord!r}]: index {i} is out of range for {len(self.refs)} values")
        return TraceValue([self.refs[i]], (), self.dtype)

    def __str__(self) -> str:
        if self.shape == ():  # a runtime scalar: CuTe DSL prints dynamic values as '?'
            return "?"
        return f"tensor_value<{self.dtype} o {it.tuple_str(self.shape)}>"

    __repr__ = __str__

    def _emit(self, op: str, args: Tuple[Any, ...], dtype: Any, src_dtype: Any = None) -> "TraceValue":
        t = current("arithmetic on tensor values")
        # a value computed at trace time (cute.full_like of a fragment) takes part as constants
        args = tuple(_constants(a) if type(a).__name__ == "TensorSSA" else a for a in args)
        # a scalar value (shape ()) combines with every element of a larger one, as CuTe DSL broadcasts it
        big = max((a for a in args if isinstance(a, TraceValue)), key=lambda a: len(a.refs), default=self)
        n = len(big.refs)
        shape = big.shape if n != len(self.refs) else self.shape
        cols = []
        for a in args:
            if isinstance(a, TraceValue):
                if len(a.refs) == 1 and a.shape == () and n > 1:
                    cols.append(a.refs * n)
                    continue
                if len(a.refs) != n:
                    raise TraceError(
                        f"{op}: values of shapes {it.tuple_str(self.shape)} and {it.tuple_str(a.shape)} differ in size"
                    )
                cols.append(a.refs)
            elif _is_number(a) or is_sym(a):
                cols.append((a,) * n)
            else:
                raise TraceError(f"{op}: cannot combine a tensor value with {type(a).__name__} {a!r}")
        for c in cols:
            t.check_refs(c, f"'{op}'")
        dst = t.new_reg(dtype, n)
        t.emit(Compute(dst, op, tuple(cols), src_dtype))
        return TraceValue([(dst, i) for i in range(n)], shape, dtype)

    def _promoted(self, o: Any, op: str) -> Any:
        """The element type of self op o: CuTe DSL's promotion where a float is involved (a Float16
        value times 2.5 or times a Float32 value is Float32: numeric.float_promotion); between integer
        values the types must match, and a Python int keeps self's integer type."""
        b = o.dtype if isinstance(o, TraceValue) else python_operand_type(o)
        if b is None and is_sym(o):
            b = self.dtype if not self.dtype.is_float else python_operand_type(0)
        if b is None or b is self.dtype or b.name == self.dtype.name:
            return self.dtype
        if self.dtype.is_float or b.is_float:
            try:
                return float_promotion(self.dtype, b)
            except TypeError as e:
                raise TraceError(f"{op} of values of element types {self.dtype} and {b}: {e}") from None
        if isinstance(o, TraceValue):
            return _result_dtype(self.dtype, o.dtype, op)
        return self.dtype

    def _binary(self, o: Any, op: str, rev: bool = False) -> "TraceValue":
        if getattr(o, "defers_arith", False):  # a TMA coordinate (tma_coords.py): n + coord is a coordinate
            return NotImplemented
        dt = self._promoted(o, op)
        a = self.to(dt)
        if isinstance(o, TraceValue):
            o = o.to(dt)
        elif isinstance(o, (int, np.integer)) and not isinstance(o, bool) and dt.kind in ("int", "uint"):
            w = dt.width  # a Python int operand becomes a constant of dt, as CuTe DSL's: its low bits (x & ~(1 << 31))
            o = int(o) & ((1 << w) - 1)
            if dt.kind == "int" and o >> (w - 1):
                o -= 1 << w
        return a._emit(op, (o, a) if rev else (a, o), dt)

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

    def reshape(self, shape: Any, *, loc: Any = None, ip: Any = None) -> "TraceValue":
        """The same values in index order with another shape of as many elements (CuTe DSL's
        ``TensorSSA.reshape``)."""
        from ... import int_tuple as _it

        n = _it.product(shape)
        if not isinstance(n, int) or n != len(self.refs):
            raise TraceError(f"reshape: a value of shape {_it.tuple_str(self.shape) if self.shape != () else '()'} "
                             f"has {len(self.refs)} elements, shape {shape} has {n}")
        return TraceValue(self.refs, shape, self.dtype)

    def broadcast_to(self, target_shape: Any, *, loc: Any = None, ip: Any = None) -> "TraceValue":
        """The values repeated along the modes of extent 1 to target_shape (CuTe DSL's
        ``TensorSSA.broadcast_to``): the shape is first padded with 1s to the target's rank, must then
        have the target's profile, and each of its leaves must be 1 or the target's leaf. No code:
        the result names the same registers (flash_attn.cute: a (1,) value of a scalar to (vec_size,))."""
        from ...layout import _normalize

        shape = (self.shape,) if isinstance(self.shape, int) else tuple(self.shape)
        target = _normalize(target_shape)
        target = target if isinstance(target, tuple) else (target,)
        shape = shape + (1,) * (len(target) - len(shape))
        if shape == target:
            return self if self.shape == target else TraceValue(self.refs, target, self.dtype)
        what = f"broadcast_to: a value of shape {it.tuple_str(self.shape) if self.shape != () else '()'} to " \
               f"{it.tuple_str(target)}"
        src, dst = it.flatten_to_tuple(shape), it.flatten_to_tuple(target)
        if not all(isinstance(t, (int, np.integer)) and not isinstance(t, bool) for t in dst):
            raise TraceError(f"{what}: the target shape must be static integers")
        if not it.congruent(shape, target):
            raise TraceError(f"{what}: the shapes' profiles differ (after padding to the target's rank)")
        bad = [(s, t) for s, t in zip(src, dst) if s not in (1, t)]
        if bad:
            raise TraceError(f"{what}: a mode of extent {bad[0][0]} cannot become {bad[0][1]} (only extents of 1 "
                             f"broadcast)")
        # column-major: the target's element at flat coordinate c is the source's at c with broadcast modes at 0
        coords = np.indices([int(t) for t in dst]).reshape(len(dst), -1, order="F")
        idx = np.zeros(coords.shape[1], np.int64)
        for k in reversed(range(len(src))):
            idx = idx * int(src[k]) + (coords[k] if src[k] != 1 else 0)
        return TraceValue([self.refs[int(i)] for i in idx], target, self.dtype)

    def to(self, dtype: Any) -> "TraceValue":
        """Convert every element to dtype (floats round to nearest even)."""
        if dtype is self.dtype or getattr(dtype, "name", None) == self.dtype.name:
            return self
        return self._emit("cvt", (self,), dtype, self.dtype)

    # ---- comparisons make Boolean values (i1)
    def _cmp(self, o: Any, op: str) -> "TraceValue":
        from ...numeric import Boolean

        dt = self._promoted(o, op)
        a = self.to(dt)
        if isinstance(o, TraceValue):
            o = o.to(dt)
        elif isinstance(o, (int, np.integer)) and not isinstance(o, bool) and dt.kind in ("int", "uint"):
            w = dt.width  # a constant of dt, as in _binary: its low bits (Int32 == 0x80008000 tests the bit pattern)
            o = int(o) & ((1 << w) - 1)
            if dt.kind == "int" and o >> (w - 1):
                o -= 1 << w
        return a._emit(op, (a, o), Boolean, dt)

    def __lt__(self, o: Any) -> "TraceValue":
        return self._cmp(o, "lt")

    def __le__(self, o: Any) -> "TraceValue":
        return self._cmp(o, "le")

    def __gt__(self, o: Any) -> "TraceValue":
        return self._cmp(o, "gt")

    def __ge__(self, o: Any) -> "TraceValue":
        return self._cmp(o, "ge")

    def __eq__(self, o: Any) -> "TraceValue":  # type: ignore[override]
        return self._cmp(o, "eq")

    def __ne__(self, o: Any) -> "TraceValue":  # type: ignore[override]
        return self._cmp(o, "ne")

    __hash__ = None  # type: ignore[assignment]

    def _logic(self, o: Any, op: str) -> "TraceValue":
        if self.dtype.kind != "bool" or (isinstance(o, TraceValue) and o.dtype.kind != "bool"):
            raise TraceError(f"'{op}' of tensor values needs Boolean operands, got {self.dtype}"
                             + (f" and {o.dtype}" if isinstance(o, TraceValue) else ""))
        return self._emit(op, (self, o), self.dtype)

    def _bits(self, o: Any, op: str, sym: str, rev: bool = False) -> "TraceValue":
        """An integer bitwise op (&, |, ^, <<, >>) of integer values, as CuTe DSL's arith ops on
        Int32/Uint32/...: >> is arithmetic for signed types and logical for unsigned ones."""
        self._need_int(sym)
        if isinstance(o, TraceValue) and o.dtype.kind not in ("int", "uint"):
            raise TraceError(f"'{sym}' of tensor values needs integer operands, got {self.dtype} and {o.dtype}")
        is_int = isinstance(o, (int, np.integer)) and not isinstance(o, bool)
        if not (isinstance(o, TraceValue) or is_sym(o) or is_int):
            raise TraceError(f"'{sym}' of an integer tensor value with {type(o).__name__} {o!r}: needs an integer")
        return self._binary(o, op, rev)

    def __and__(self, o: Any) -> "TraceValue":
        if self.dtype.kind in ("int", "uint"):
            return self._bits(o, "band", "&")
        return self._logic(o, "and")

    __rand__ = __and__

    def __or__(self, o: Any) -> "TraceValue":
        if self.dtype.kind in ("int", "uint"):
            return self._bits(o, "bor", "|")
        return self._logic(o, "or")

    __ror__ = __or__

    def __xor__(self, o: Any) -> "TraceValue":
        if self.dtype.kind == "bool" and (not isinstance(o, TraceValue) or o.dtype.kind == "bool"):
            return self._emit("ne", (self, o), self.dtype, self.dtype)  # a Boolean xor: the flags differ
        return self._bits(o, "bxor", "^")

    __rxor__ = __xor__

    def __lshift__(self, o: Any) -> "TraceValue":
        return self._bits(o, "shl", "<<")

    def __rlshift__(self, o: Any) -> "TraceValue":
        return self._bits(o, "shl", "<<", True)

    def __rshift__(self, o: Any) -> "TraceValue":
        return self._bits(o, "shr", ">>")

    def __rrshift__(self, o: Any) -> "TraceValue":
        return self._bits(o, "shr", ">>", True)

    def __invert__(self) -> "TraceValue":
        if self.dtype.kind in ("int", "uint"):
            return self._emit("bnot", (self,), self.dtype)
        if self.dtype.kind != "bool":
            raise TraceError(f"'~' of a tensor value needs Boolean or integer elements, got {self.dtype}")
        return self._emit("not", (self,), self.dtype)

    def __floordiv__(self, o: Any) -> "TraceValue":
        self._need_int("//")
        return self._binary(o, "floordiv")

    def __mod__(self, o: Any) -> "TraceValue":
        self._need_int("%")
        return self._binary(o, "mod")

    def __rfloordiv__(self, o: Any) -> "TraceValue":  # n // value (flash_attn.cute: divmod(n, FastDivmodDivisor))
        self._need_int("//")
        return self._binary(o, "floordiv", True)

    def __rmod__(self, o: Any) -> "TraceValue":
        self._need_int("%")
        return self._binary(o, "mod", True)

    def _need_int(self, op: str) -> None:
        if self.dtype.kind not in ("int", "uint"):
            raise TraceError(f"'{op}' of tensor values needs integer elements, got {self.dtype}")

    def __abs__(self) -> "TraceValue":
        return self._emit("abs", (self,), self.dtype)

    def math(self, fn: str) -> "TraceValue":
        """exp, exp2, log, log2, sqrt, rsqrt, sin, cos, tanh of every (float) element (``fn + "_fast"``:
        the approximate form, ir.nodes.FAST_MATH)."""
        if not self.dtype.is_float:
            raise TraceError(f"cute.math.{fn.removesuffix('_fast')} needs floating-point elements, got {self.dtype}")
        return self._emit(fn, (self,), self.dtype)

    def reduce(self, op: Any, init_val: Any = None, reduction_profile: Any = 0) -> "TraceValue":
        """Reduce all elements with op ("add", "mul", "max", "min", or cute.ReductionOp) to one value."""
        name = str(getattr(op, "value", op)).lower()
        name = {"add": "add", "mul": "mul", "max": "max", "min": "min"}.get(name)
        if name is None:
            raise TraceError(f"TensorSSA.reduce: unknown reduction {op!r} (add, mul, max or min)")
        if reduction_profile is None:  # CuTe DSL: nothing is reduced
            return self
        if isinstance(reduction_profile, tuple):
            return self._reduce_modes(name, init_val, reduction_profile)
        return self._reduce_all(name, list(self.refs), init_val)

    def _reduce_modes(self, name: str, init_val: Any, profile: tuple) -> "TraceValue":
        """reduce over the modes of profile that are not None, keeping the None ones (CuTe DSL's
        reduction_profile, weakly congruent to the shape): one reduction per kept coordinate, the
        result shaped as slice_(shape, profile)."""
        keep: List[bool] = []  # per leaf of the flattened shape: kept (True) or reduced

        def leaves(p: Any, s: Any) -> None:
            if isinstance(p, tuple):
                if not isinstance(s, tuple) or len(p) != len(s):
                    raise TraceError(f"TensorSSA.reduce: reduction_profile {p!r} is not weakly congruent to the "
                                     f"shape {it.tuple_str(self.shape)}")
                for q, t in zip(p, s):
                    leaves(q, t)
            else:
                keep.extend([p is None] * len(it.flatten_to_tuple(s)))

        shape = self.shape if isinstance(self.shape, tuple) else (self.shape,)
        leaves(profile, shape)
        extents = [int(e) for e in it.flatten_to_tuple(shape)]
        groups: Dict[int, List[Ref]] = {}
        for i, r in enumerate(self.refs):  # element i at the colexicographic coordinate of the flat shape
            key, mul, rest = 0, 1, i
            for e, k in zip(extents, keep):
                c, rest = rest % e, rest // e
                if k:
                    key, mul = key + c * mul, mul * e
            groups.setdefault(key, []).append(r)
        out = [self._reduce_all(name, groups[k], init_val).refs[0] for k in sorted(groups)]
        return TraceValue(out, it.slice_tuple(profile, shape), self.dtype)

    def _reduce_all(self, name: str, refs: List[Ref], init_val: Any) -> "TraceValue":
        parts: List[Any] = [TraceValue([r], (), self.dtype) for r in refs]
        if name in ("add", "mul") and self.dtype.is_float:
            # CuTe DSL's vector.reduction with its accumulator: ((init op x0) op x1) op ... in element order,
            # the rounding of floating-point add and mul being order-dependent (x op init == init op x)
            out = parts[0] if init_val is None else parts[0]._binary(init_val, name)
            for x in parts[1:]:
                out = out._binary(x, name)
            return out
        if init_val is not None and not _identity_of(name, init_val):
            parts.append(init_val)  # (max with -inf, min with +inf: x itself, as numpy's maximum, NaN included)
        # A balanced tree: level by level, neighbours paired, an odd one out passed up. It is emitted
        # depth first (each subtree finished before the next begins), as CuTe DSL's reduction reaches
        # ptxas: at most one partial result per level is live, where emitting level by level keeps
        # n/2 of them live next to the n elements (quack's row max of 64 values: 88 registers, not 80).
        tree: List[Any] = list(range(len(parts)))
        while len(tree) > 1:
            tree = [(tree[i], tree[i + 1]) for i in range(0, len(tree) - 1, 2)] + tree[len(tree) - len(tree) % 2:]

        def emit(node: Any) -> Any:
            if not isinstance(node, tuple):
                return parts[node]
            a, b = emit(node[0]), emit(node[1])
            if not isinstance(a, TraceValue):
                a, b = b, a
            return a._binary(b, name)

        out = emit(tree[0])
        if not isinstance(out, TraceValue):
            return TraceValue([out], (), self.dtype)
        return out

    def __bool__(self) -> bool:
        raise TraceError(
            "a tensor value has no truth value at trace time: use it as the condition of an 'if' inside "
            "a @cute.kernel (which becomes a runtime branch) or select with cute.where"
        )


def _identity_of(op: str, init: Any) -> bool:
    """init is op's identity on floats, so that combining with it changes nothing: -inf for max, +inf
    for min (CuTe DSL's maximumf/minimumf fold it away; the reduction's row max starts from -inf)."""
    if isinstance(init, TraceValue) or op not in ("max", "min"):
        return False
    try:
        v = float(init)
    except (TypeError, ValueError):
        return False
    return v == (float("-inf") if op == "max" else float("inf"))


def _constants(v: Any) -> TraceValue:
    """A TensorSSA known at trace time as a TraceValue of constant elements (in index order)."""
    flat = np.asarray(v.numpy()).reshape(-1, order="F")
    return TraceValue([x.item() for x in flat], v.shape, v.dtype)


def where(cond: Any, a: Any, b: Any, *, loc: Any = None, ip: Any = None) -> TraceValue:
    """Element-wise cond ? a : b (cute.where) inside a kernel."""
    ref = next((x for x in (a, b, cond) if isinstance(x, TraceValue)), None)
    if ref is None:
        from ...tensor import TensorSSA, ssa_where

        if any(isinstance(x, TensorSSA) for x in (a, b, cond)):
            return ssa_where(cond, a, b)
        raise TraceError("cute.where: at least one operand must be a tensor value (TensorSSA)")
    dtype = a.dtype if isinstance(a, TraceValue) else b.dtype if isinstance(b, TraceValue) else None
    if dtype is None:
        from ...numeric import Float32, Int32

        dtype = Float32 if isinstance(a, float) or isinstance(b, float) else Int32
    if isinstance(a, TraceValue) and isinstance(b, TraceValue):
        _result_dtype(a.dtype, b.dtype, "where")
    c = cond
    if is_sym(c):
        c = TraceValue([c] * len(ref.refs), ref.shape, _bool_type())
    return ref._emit("select", (c, a, b), dtype, dtype) if c is ref else c._emit("select", (c, a, b), dtype, dtype)


def full_like_value(a: "TraceValue", fill_value: Any, dtype: Any = None) -> "TraceValue":
    """cute.full_like(a, fill_value[, dtype]) inside a kernel: a value shaped like a, every element the
    constant fill_value converted to the element type (no instruction: the constant is used where needed)."""
    dt = dtype or a.dtype
    if not _is_number(fill_value):
        raise TraceError(f"cute.full_like({a}, {fill_value!r}): inside a kernel the fill value must be a Python "
                         f"number, got {type(fill_value).__name__}")
    v = dt(fill_value)
    c = int(v) if dt.is_integer else float(v)
    return TraceValue([c] * len(a.refs), a.shape, dt)


def _bool_type() -> Any:
    from ...numeric import Boolean

    return Boolean


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
        current(op).check_refs(value.refs, op)
        return value.refs
    if _is_number(value):
        return (value,) * n
    if is_sym(value):
        current(op).check_index(value, op)
        return (value,) * n
    if isinstance(value, (list, tuple)) and len(value) == n and all(_is_number(v) for v in value):
        return tuple(value)
    if type(value).__name__ == "Unusable":  # carry.Unusable: say which variable and why
        value._fail()
    if type(value).__name__ == "PointerInt":  # address.PointerInt: ptr.toint() inside a kernel, now in a register
        from ... import tracing as _tp

        return _refs_of(_tp.hooks.address_register(value), n, dtype, op, where)
    raise TraceError(f"{op} into {where}: cannot store a {type(value).__name__} in a traced kernel")




def _fold_bool_in_trace(x: "TraceValue", op: str) -> "TraceValue":
    """cute.all_ / cute.any_ of a traced value: its elements combined by op ("and"/"or"), a traced Boolean."""
    from ...numeric import Boolean

    parts = [TraceValue([r], (), x.dtype) for r in x.refs]
    if x.dtype.name != Boolean.name:
        parts = [p != 0 for p in parts]
    while len(parts) > 1:
        nxt = [parts[i]._binary(parts[i + 1], op) for i in range(0, len(parts) - 1, 2)]
        if len(parts) % 2:
            nxt.append(parts[-1])
        parts = nxt
    return parts[0]


def _index_value(e: Any, dtype: Any) -> "TraceValue":
    """A symbolic index as a traced scalar value of dtype (``Int32(i).to(Float32)`` and the like)."""
    return TraceValue([e], (), dtype)


def _value_as(v: "TraceValue", shape: Any, dtype: Any) -> "TraceValue":
    """``cute.TensorSSA(v, shape, dtype)`` of a traced kernel value v: v with that shape."""
    from ...errors import TensorError

    n = 1
    for s in it.flatten_to_tuple(shape) if isinstance(shape, tuple) else (shape,):
        n *= int(s)
    if n != len(v.refs) or dtype.name != v.dtype.name:
        raise TensorError(f"TensorSSA(value, {shape}, {dtype}): the value has {len(v.refs)} elements of {v.dtype}")
    return TraceValue(v.refs, shape, dtype)


_tracing_protocol.TracedValue.register(TraceValue)
_tracing_protocol.install(kernel_tracing=tracing, in_runtime_branch=in_runtime_branch, full_like=full_like_value,
                          fold_bool=_fold_bool_in_trace, value_as=_value_as, index_value=_index_value)
