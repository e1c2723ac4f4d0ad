"""``cute.print_tensor`` inside a traced kernel: every thread prints the tensor as CuTe DSL's print_tensor
does, the same text as on the host (``tensor(raw_ptr(0x...: f32, gmem, align<4>) o (4,3):(3,1), data=``
then the values in nested rows, or one ``(coord)= value`` line each with verbose=True; see
cutelab.tensor.tensor_text).

It is one ``Printf`` op, so both back ends print it: the CPU interpreter formats each value with the
C conversion CuTe DSL uses (``% f`` for floats, ``% d`` for signed integers and Booleans, `` %u`` for
unsigned ones) and the CUDA printer passes the same conversions to ``printf``. A Boolean tensor prints
its element type as i8, as CuTe DSL does, and its values as 1 and 0 (the host's print_tensor writes a
true held in registers as -1, CuTe DSL's sign-extended i1; inside kernels cutelab does not). A swizzled shared-memory tensor prints its layout as CuTe DSL
holds it (kernel/frontend/smem.py dsl_view), one over a swizzled pointer (get_tensor(..., swizzle=S)) names the
swizzle in its pointer (``raw_ptr(0x...: f16, smem, align<1024>, S<3,4,3>)``, CuTe DSL's pointer type; this
text is not checked against CuTe DSL on a GPU); the pointer's address is the view's first element's.
"""

from __future__ import annotations

from typing import Any, List

from ...errors import TraceError
from ..frontend.cformat import parse
from ..frontend.engines import GmemEngine, RmemEngine
from ..frontend.trace import TraceValue, current, tracing
from ..ir.nodes import Printf

__all__ = ["print_tensor_in_kernel", "print_in_trace"]

_SPEC = {"float": parse("% f")[0], "int": parse("% d")[0], "bool": parse("% d")[0], "uint": parse("%u")[0]}


def _value(ref: Any, dt: Any) -> List[Any]:
    kind = "float" if dt.kind == "float" else dt.kind
    if kind not in _SPEC:
        raise TraceError(f"cute.print_tensor: cannot print values of type {dt} inside a kernel")
    item = ("val", ref, dt, _SPEC[kind])
    return [" ", item] if kind == "uint" else [item]  # C ignores the space flag of %u


def print_tensor_in_kernel(t: Any, verbose: bool = False) -> None:
    """Emit the Printf of cute.print_tensor(t) for every thread (t a tensor, or a value of the trace,
    which is first stored into a fresh register tensor of its shape, as CuTe DSL does)."""
    from ...dynamic import value_of
    from ...layout import make_layout
    from ...tensor import Tensor, make_rmem_tensor, tensor_text

    tr = current("cute.print_tensor")
    if isinstance(t, TraceValue):
        tmp = make_rmem_tensor(make_layout(t.shape), t.dtype)
        tmp.store(t)
        t = tmp
    if not isinstance(t, Tensor):
        raise TraceError(f"kernel {tr.name}: cute.print_tensor: expected a tensor or a tensor value, got "
                         f"{type(t).__name__}{tr.where()}")
    eng = t.engine
    layout = value_of(t.layout)
    if isinstance(eng, GmemEngine):  # global and shared memory
        dtname = eng.dtype.name if eng.dtype.kind != "bool" else "i8"
        text, align = f"{layout}", eng.alignment(t.offset)
        view = getattr(eng, "dsl_parts", None)
        parts = view(t.offset, layout) if view is not None else None
        sw = ""
        if getattr(eng, "ptr_swizzle", None) is not None:  # a swizzled pointer: its type names the swizzle
            align, sw = eng.ptr_align(t.offset), f", {eng.ptr_swizzle}"
        elif parts is not None:
            text, align = parts
        elif view is not None:  # a swizzled view CuTe's split does not cover: cutelab's own form
            text = f"{eng.swizzle} o ptr o {layout}"
        head: List[Any] = ["tensor(raw_ptr(0x", ("addr", eng.param, t.offset),
                           f": {dtname}, {eng.memspace}, align<{align}>{sw}) o {text}, data="]
    elif isinstance(eng, RmemEngine):
        raw = eng.raw_ptr_str(t.offset)
        if eng.dtype.kind == "bool":
            raw = raw.replace(f": {eng.dtype.name},", ": i8,", 1)
        head = [f"tensor({raw} o {layout}, data="]
    else:
        raise TraceError(f"kernel {tr.name}: cute.print_tensor of a tensor over {type(eng).__name__} is not "
                         f"supported inside a kernel{tr.where()}")
    vals = eng.load(t.offset, t.layout)
    tr.check_refs(vals.refs, "cute.print_tensor")
    flat = [_value(r, vals.dtype) for r in vals.refs]
    parts: List[Any] = list(head)
    for piece in tensor_text("", flat, layout.shape, verbose) + ["\n"]:
        parts.extend(piece if isinstance(piece, list) else [piece])
    tr.emit(Printf(parts))


def print_in_trace(t: Any, *a: Any, **kw: Any) -> bool:
    """print_tensor inside a traced kernel: a printf of the tensor (or value) by every thread;
    on the host inside a jit function's trace: recorded, to print when the launches run
    (``cutelab.tracing.hooks.print_tensor``)."""
    if not tracing():
        from ... import tensor as _tensor
        from ..frontend.host import defer_print_tensor

        return defer_print_tensor(_tensor.print_tensor, (t,) + a, kw)
    print_tensor_in_kernel(t, verbose=bool(kw.get("verbose", False)))  # CuTe DSL's print_tensor text, on both back ends
    return True
