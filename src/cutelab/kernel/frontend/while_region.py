"""``cutlass.while_generate`` / ``yield_out``: a runtime while loop built by hand, as CuTe DSL's scf.while
builder makes one (CUTLASS's Lamport all-reduce GEMM polls a peer's data so)::

    spin = while_generate([a, b], lambda a, b: b == SENTINEL)   # the loop's values and its condition
    with spin:                                                  # the body, traced once
        yield_out(list(load()))                                 # the values of the next test
    a, b = spin.results                                         # the values when the condition failed

The values are scalars (Int32, Float32, ...) inside a kernel. They live in registers carried by a While
region of the kernel IR: the condition is traced in its condition block, the body in its body; each of
the condition's and the body's arguments is a copy of the values as the iteration found them, so the
body may read them after its yield_out. Outside a kernel it is a TraceError.

May import: ``kernel.frontend`` (the tracer, control's condition), ``kernel.ir``, ``kernel.instr.bitcast``.
"""

from __future__ import annotations

from typing import Any, List, Sequence

from ...errors import TraceError
from ..ir.nodes import Assign
from .trace import TraceValue, current, tracing

__all__ = ["while_generate", "yield_out", "WhileRegion"]

_OPEN: List["WhileRegion"] = []  # the regions whose body is being traced, innermost last


class WhileRegion:
    """What ``while_generate`` returns: a context manager for the body; ``results`` after it."""

    def __init__(self, inputs: Sequence[Any], condition: Any):
        if not tracing():
            raise TraceError("cutlass.while_generate builds a runtime loop inside a @cute.kernel function")
        t = current("cutlass.while_generate")
        self.t, self.condition = t, condition
        vals = [v if isinstance(v, TraceValue) else _value(v) for v in inputs]
        for v in vals:
            if not isinstance(v, TraceValue) or len(v.refs) != 1:
                raise TraceError(f"kernel {t.name}: cutlass.while_generate takes scalar values (Int32, Float32, "
                                 f"...), got {v!r}{t.where()}")
        t.check_refs([v.refs[0] for v in vals], "cutlass.while_generate")
        self.regs = []
        for v in vals:
            r = t.new_reg(v.dtype, 1, mutable=True)
            t.emit(Assign(r, (0,), (v.refs[0],)))
            self.regs.append(r)
        self.op = None
        self.yielded = False

    def _copies(self) -> List[TraceValue]:
        from ..instr.bitcast import bitcast

        return [bitcast(TraceValue([(r, 0)], (), r.dtype), r.dtype, "cutlass.while_generate") for r in self.regs]

    def __enter__(self) -> List[TraceValue]:
        from .control import _cond_ref

        t = self.t
        self.op = t.begin_while()
        cond = self.condition(*self._copies())
        self.op.cond = _cond_ref(t, cond, t.where().strip(" ()") or "?")
        t.cur = self.op.body
        _OPEN.append(self)
        return self._copies()

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        _OPEN.pop()
        if exc_type is not None:
            return
        if not self.yielded:
            raise TraceError(f"kernel {self.t.name}: the body of cutlass.while_generate must end with yield_out(...) "
                             f"of the loop's {len(self.regs)} values{self.t.where()}")
        self.t.end_while(self.op)

    def yield_values(self, values: Sequence[Any]) -> None:
        t = self.t
        vals = [v if isinstance(v, TraceValue) else _value(v) for v in values]
        if len(vals) != len(self.regs):
            raise TraceError(f"kernel {t.name}: yield_out of {len(vals)} values in a while_generate loop of "
                             f"{len(self.regs)}{t.where()}")
        for r, v in zip(self.regs, vals):
            if not isinstance(v, TraceValue) or len(v.refs) != 1:
                raise TraceError(f"kernel {t.name}: yield_out takes scalar values, got {v!r}{t.where()}")
            if v.dtype.name != r.dtype.name:
                v = v.to(r.dtype)
            t.check_refs(v.refs, "cutlass.yield_out")
            t.emit(Assign(r, (0,), (v.refs[0],)))
        self.yielded = True

    @property
    def results(self) -> List[TraceValue]:
        return self._copies()


def _value(v: Any) -> Any:
    from ...numeric import Float32, Int32

    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return TraceValue([v], (), Int32)
    if isinstance(v, float):
        return TraceValue([v], (), Float32)
    value = getattr(v, "value", None)  # a cutlass scalar of a known value (Int32(0))
    if value is not None and hasattr(type(v), "width"):
        return TraceValue([value], (), type(v))
    return v


def while_generate(inputs: Sequence[Any], condition: Any, *, loc: Any = None, ip: Any = None) -> WhileRegion:
    """``cutlass.while_generate(inputs, condition)``: see the module docstring."""
    return WhileRegion(list(inputs), condition)


def yield_out(args: Sequence[Any] = (), *, loc: Any = None, ip: Any = None) -> None:
    """``cutlass.yield_out(values)`` inside a ``while_generate`` body: the values of the loop's next test."""
    if not _OPEN:
        raise TraceError("cutlass.yield_out gives the next values of a while_generate loop, inside its `with` body; "
                         "cutelab builds other regions from Python control flow (assign the variables instead)")
    _OPEN[-1].yield_values(list(args))
