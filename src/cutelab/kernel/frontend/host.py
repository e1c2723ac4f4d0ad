"""The host side of a ``@cute.jit`` function, ordered as CuTe DSL orders it.

CuTe DSL traces a jit function first (its Python ``print`` calls run then, and show ``?`` for
dynamic values), compiles it, and only then runs it: kernel launches and host-side
``cute.printf`` / ``cute.print_tensor`` happen at run time, in program order, after every
trace-time print. A compiled function (``cute.compile``) runs them again at every call, without
tracing (so without the Python prints).

cutelab does the same: while a jit function's body runs, kernel launches and host-side prints
are recorded (``HostAction``; launches as launch/ records them for cute.compile, in this thread's
``_local.recorder``) and run, in order, when the body has returned (``launch.api.run_jit``).

The arguments a jit function sees (CuTe DSL's "JIT Function Argument Generation"): every
``bool``, ``int`` and ``float`` argument, and every ``cutlass.Int32(...)`` etc., is a runtime
value unless its parameter is annotated ``cutlass.Constexpr``: here a
:class:`~cutelab.dynamic.DynInt` / ``DynBool`` / ``DynFloat`` (its value known, printed ``?``).
A compiled function is traced per value of its runtime arguments (``launch/compiled.py``), so a
call with another value runs. User types of the DSL's JitArgument / DynamicExpression
protocols carry runtime values the same way. Tuples, layouts and other objects stay static.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from ...dynamic import DynBool, DynInt
from ...errors import LaunchError
from .records import is_namedtuple as _is_namedtuple, with_fields as _with_fields

__all__ = ["HostAction", "host_print", "dynamic_args", "replaying"]

_tls = threading.local()
#: the launch record of this thread: ``recorder`` (what a jit function's body launched and printed,
#: while it runs), ``streams``, ``last`` (the last launch's LaunchInfo); launch/ reads and writes it
_local = threading.local()


def _recorder() -> Optional[List[Any]]:
    return getattr(_local, "recorder", None)


def replaying() -> bool:
    """True while a recorded host action runs (print_tensor then prints instead of recording)."""
    return bool(getattr(_tls, "replaying", False))


class HostAction:
    """A host-side print of a jit function, recorded at trace time, run at run time (at every
    call of a compiled function). It sits in the launch record like a traced launch."""

    ir = None  # not a kernel: capture() skips it
    storages: List[Any] = []

    def __init__(self, action: Callable[[], None], what: str = "cute.printf"):
        self.action = action
        self.what = what

    def run(self, storages: Any = (), stream: Any = None, scalars: Any = ()) -> None:
        _tls.replaying = True
        try:
            self.action()
        finally:
            _tls.replaying = False

    def __repr__(self) -> str:
        return f"<host {self.what}>"


class JitRecord(list):
    """What a jit function's trace launched and printed, in order (launches keep their stream)."""

    keeps_streams = True


class StreamedPlan:
    """A launch recorded in a jit function with an explicit stream: runs on that stream."""

    def __init__(self, plan: Any, stream: Any):
        self.plan, self.stream = plan, stream
        self.ir = plan.ir

    def run(self, storages: Any, stream: Any = None, scalars: Any = ()) -> None:
        self.plan.run(storages, self.stream if stream is None else stream, scalars)


def host_print(text: Callable[[], str]) -> None:
    """Print text() (which carries its own line end) now, or, inside a jit function's trace,
    when the recorded launches run."""
    rec = _recorder()

    def act() -> None:
        print(text(), end="", flush=True)

    if rec is None or replaying():
        act()
    else:
        rec.append((HostAction(act), [], []))


def defer_print_tensor(fn: Callable[..., None], args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> bool:
    """print_tensor on the host inside a jit function's trace: recorded (True), else False."""
    rec = _recorder()
    if rec is None or replaying():
        return False
    rec.append((HostAction(lambda: fn(*args, **kwargs), "cute.print_tensor"), [], []))
    return True


class Constexpr:
    """Marks a jit argument as a compile-time constant: ``n: cutlass.Constexpr[cutlass.Int32]``.

    A @cute.jit argument so annotated stays a Python value, specialised on (a compiled function's
    callers leave it out); every other bool, int or float argument is a runtime value
    (kernel/frontend/host.py dynamic_args), as in CuTe DSL.
    """

    def __class_getitem__(cls, item: Any) -> Any:
        return cls


def _annotation(fn: Any, p: Any) -> Any:
    ann = p.annotation
    if isinstance(ann, str):
        try:
            ann = eval(ann, getattr(fn, "__globals__", {}))  # noqa: S307 - the user's own annotation
        except Exception:  # noqa: BLE001 - an annotation we cannot read is not a scalar type
            return None
    return ann


def _is_constexpr(ann: Any) -> bool:
    return ann is Constexpr or (isinstance(ann, str) and "Constexpr" in ann) or "Constexpr" in repr(ann)


def _mismatch(fn: Any, name: str, want: str, v: Any) -> LaunchError:
    return LaunchError(f"{getattr(fn, '__name__', 'jit function')}: argument {name} is annotated {want}, "
                       f"but the call gives {v!r} ({type(v).__name__})")


def protocol_values(obj: Any) -> Optional[List[Any]]:
    """The runtime values a user type carries by CuTe DSL's protocols, as (type, value) pairs:
    ``DynamicExpression`` (``__extract_mlir_values__`` / ``__new_from_mlir_values__``) gives them
    itself; ``JitArgument`` (``__c_pointers__`` / ``__get_mlir_types__`` /
    ``__new_from_mlir_values__``) as C pointers to values of the types it names; a dataclass of
    neither kind by CuTe DSL's default dataclass adapter (its numeric fields not annotated Constexpr,
    ``_dataclass_scalars``). None for an object of no such kind, or one of the protocols carrying
    something other than scalars (tensors, ...)."""
    import ctypes

    from ...numeric import Boolean, Float32, FloatValue, Int32, Int64, IntValue, is_numeric_type

    if isinstance(obj, type):
        return None
    if not hasattr(obj, "__new_from_mlir_values__") or _adapted_dataclass(obj):
        return _dataclass_scalars(obj)
    out: List[Any] = []
    if hasattr(obj, "__extract_mlir_values__"):
        for v in obj.__extract_mlir_values__():
            if isinstance(v, DynBool) or type(v) is bool:
                out.append((Boolean, bool(v)))
            elif isinstance(v, (IntValue, DynInt)) or type(v).__name__ == "DynScalar":
                out.append((v.dtype, int(v)))
            elif isinstance(v, FloatValue):
                out.append((v.dtype, float(v)))
            elif type(v) is int:
                out.append((Int32 if -(1 << 31) <= v < (1 << 31) else Int64, v))
            elif type(v) is float:
                out.append((Float32, v))
            else:
                return None
        return out
    if hasattr(obj, "__c_pointers__") and hasattr(obj, "__get_mlir_types__"):
        from . import c_abi

        types, ptrs = list(obj.__get_mlir_types__()), list(obj.__c_pointers__())
        if len(types) != len(ptrs) or not all(c_abi.is_c_type(t) for t in types):
            return None
        for t, p in zip(types, ptrs):  # numbers, pointers (ints) and structs (c_abi.CAggregate) read from C memory
            addr = p if isinstance(p, int) else p.value if isinstance(p, ctypes.c_void_p) else \
                ctypes.cast(p, ctypes.c_void_p).value
            if not addr:
                raise LaunchError(f"{type(obj).__name__}.__c_pointers__() gave a null pointer for a value of type {t}")
            out.append((t, c_abi.read(t, addr)))
        return out
    return None


def _adapted_dataclass(obj: Any) -> bool:
    """A dataclass instance that CuTe DSL's default dataclass adapter takes (none of the protocols
    that give their own values, no instance attributes besides its fields), or a NamedTuple, whose
    fields CuTe DSL's tuple adapter takes one by one (quack's ``mlir_namedtuple`` epilogue arguments
    rebuild themselves from those values but give none of their own)."""
    import dataclasses

    if isinstance(obj, type) or hasattr(obj, "__extract_mlir_values__") or hasattr(obj, "__c_pointers__"):
        return False
    if _is_namedtuple(obj):
        return True
    if not dataclasses.is_dataclass(obj) or hasattr(obj, "__new_from_mlir_values__"):
        return False
    attrs = getattr(obj, "__dict__", None)
    return attrs is None or len(attrs) == len(dataclasses.fields(obj))


def _field_types(obj: Any) -> Dict[str, Any]:
    import typing

    try:
        return typing.get_type_hints(type(obj))
    except Exception:  # noqa: BLE001 - an annotation we cannot resolve: the field's raw type
        return {}


def _scalar_leaf(ann: Any, v: Any) -> Any:
    """(type, value) of a dataclass field that is a runtime scalar by CuTe DSL's default dataclass
    adapter (a numeric-annotated field, cast to its type; a cutlass numeric value; a Python bool, int or
    float as Boolean, Int32 or Float32), else None."""
    from ...numeric import Boolean, Float32, FloatValue, Int32, IntValue, is_numeric_type

    if isinstance(v, np.generic) and isinstance(v, (np.integer, np.floating, np.bool_)):
        v = v.item()
    def cast(t: Any, x: Any) -> Any:  # x as a value of the field's numeric annotation t
        return bool(x) if t.kind == "bool" else float(x) if t.kind == "float" else int(t(int(x)))

    if isinstance(v, DynBool) or type(v) is bool:
        return (ann, cast(ann, v)) if is_numeric_type(ann) else (Boolean, bool(v))
    if isinstance(v, (IntValue, DynInt)) or type(v).__name__ == "DynScalar":
        return (ann, cast(ann, v)) if is_numeric_type(ann) else (v.dtype, int(v))
    if isinstance(v, FloatValue) or type(v).__name__ == "DynFloat":
        return (ann, cast(ann, v)) if is_numeric_type(ann) else (v.dtype, float(v))
    if type(v) in (int, float):
        return (ann, cast(ann, v)) if is_numeric_type(ann) else ({int: Int32, float: Float32}[type(v)], v)
    return None


class _Field:
    """A NamedTuple's field, as dataclasses.fields names one."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name


def _dataclass_fields(obj: Any) -> List[Tuple[Any, Any, Any]]:
    """(field, its resolved annotation, its value) for the fields of an adapted dataclass (or NamedTuple)
    that are not Constexpr and that its __init__ takes."""
    import dataclasses

    hints = _field_types(obj)
    out = []
    if _is_namedtuple(obj):
        for name in type(obj)._fields:
            ann = hints.get(name)
            if not _is_constexpr(ann):
                out.append((_Field(name), ann, getattr(obj, name)))
        return out
    for f in dataclasses.fields(obj):
        ann = hints.get(f.name, f.type)
        if not f.init or _is_constexpr(ann):
            continue
        out.append((f, ann, getattr(obj, f.name)))
    return out


def constexpr_names(obj: Any) -> set:
    """The fields of an adapted dataclass or NamedTuple annotated Constexpr."""
    import dataclasses

    hints = _field_types(obj)
    if _is_namedtuple(obj):
        return {n for n in type(obj)._fields if _is_constexpr(hints.get(n))}
    return {f.name for f in dataclasses.fields(obj) if _is_constexpr(hints.get(f.name, f.type))}


def fill_constexpr(compiled: Any, call: Any) -> Any:
    """call (a dataclass or NamedTuple argument) with each Constexpr field it leaves None at compiled's
    value: the compiled function keeps its Constexpr fields, as CuTe DSL pins them (quack passes None)."""
    if not _adapted_dataclass(call) or type(call) is not type(compiled):
        return call
    changes = {}
    for name in constexpr_names(call):
        if getattr(call, name) is None and getattr(compiled, name) is not None:
            changes[name] = getattr(compiled, name)
    for f, _, v in _dataclass_fields(call):
        if _adapted_dataclass(v):
            w = fill_constexpr(getattr(compiled, f.name), v)
            if w is not v:
                changes[f.name] = w
    return _with_fields(call, changes)


def _dataclass_scalars(obj: Any) -> Optional[List[Any]]:
    """The runtime scalars of a dataclass argument, as CuTe DSL's default dataclass adapter makes
    them (every field not annotated Constexpr is a runtime value: numbers here, tensors and pointers
    by their own path), in field order, nested dataclasses depth first; None for any other object."""
    if not _adapted_dataclass(obj):
        return None
    out: List[Any] = []
    for _, ann, v in _dataclass_fields(obj):
        leaf = _scalar_leaf(ann, v)
        if leaf is not None:
            out.append(leaf)
        elif _adapted_dataclass(v):
            out += _dataclass_scalars(v) or []
    return out


def _dataclass_rebuild(obj: Any, values: List[Any]) -> Any:
    """obj with its runtime scalars (``_dataclass_scalars``' order) replaced by values, consumed from
    the front of the list."""
    changes = {}
    for f, ann, v in _dataclass_fields(obj):
        if _scalar_leaf(ann, v) is not None:
            changes[f.name] = values.pop(0)
        elif _adapted_dataclass(v):
            changes[f.name] = _dataclass_rebuild(v, values)
    return _with_fields(obj, changes)


def protocol_rebuild(obj: Any, values: List[Any]) -> Any:
    """The user object obj carrying values in place of its runtime scalars (``protocol_values``)."""
    if _adapted_dataclass(obj):
        return _dataclass_rebuild(obj, list(values))
    return obj.__new_from_mlir_values__(values)


def _dynamic_value(dt: Any, v: Any) -> Any:
    from .c_abi import runtime_value

    return runtime_value(dt, v)


def dynamic_args(fn: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
    """The arguments as a jit function's body sees them, by CuTe DSL's rule ("JIT Function
    Argument Generation"): an argument is a runtime value unless it is annotated
    ``cutlass.Constexpr``. A Python ``bool``, ``int`` or ``float`` (and a ``cutlass.Int32(...)``
    etc.) becomes a DynBool / DynInt (Int32; a value past its range wraps, with a warning, as CuTe
    DSL converts it) / DynFloat (Float32): its
    value known, printed ``?``. Its type is inferred from the call, or taken from the
    annotation (``bool``, ``int``, ``float``, ``cutlass.Int32``, ...), which the value must
    match. Tuples, layouts, types, callables and other objects stay trace-time values."""
    import inspect

    import numpy as np

    from ...dynamic import DynInt, dyn_scalar
    from ...numeric import Boolean, Float32, FloatValue, Int32, Int64, IntValue, is_numeric_type

    try:
        sig = inspect.signature(fn)
        bound = sig.bind_partial(*args, **kwargs)
    except (TypeError, ValueError):
        return args, kwargs
    changed = False
    for name, v in list(bound.arguments.items()):
        p = sig.parameters[name]
        if (p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or isinstance(v, (DynInt, DynBool))
                or type(v).__name__ == "DynFloat"):
            continue
        ann = _annotation(fn, p)
        if ann is None and isinstance(p.annotation, str):
            ann = p.annotation  # unreadable (e.g. a name only a type checker sees): Constexpr is still told
        if _is_constexpr(ann):
            continue
        if isinstance(v, np.generic) and isinstance(v, (np.integer, np.floating, np.bool_)):
            v = v.item()
        plain = ann is inspect.Parameter.empty or ann is None
        dt = None
        if isinstance(v, IntValue):
            dt = v.dtype
        elif isinstance(v, FloatValue):
            dt = v.dtype
        elif is_numeric_type(ann):
            if ann.kind == "bool" and isinstance(v, (bool, int)):
                dt = ann
            elif ann.kind in ("int", "uint") and isinstance(v, int):
                dt = ann
            elif ann.kind == "float" and isinstance(v, (int, float)) and not isinstance(v, bool):
                dt = ann
            elif isinstance(v, (bool, int, float)):
                raise _mismatch(fn, name, str(ann), v)
        elif ann is bool or (plain and type(v) is bool):
            if type(v) is not bool:
                raise _mismatch(fn, name, "bool", v)
            dt = Boolean
        elif ann is int or (plain and type(v) is int):
            if not isinstance(v, int):  # (a bool is an int, as isinstance tells CuTe DSL)
                raise _mismatch(fn, name, "int", v)
            dt = Int32
            if not -(1 << 31) <= v < (1 << 31):  # CuTe DSL converts a Python int to Int32 too, and warns
                import warnings

                warnings.warn(f"{getattr(fn, '__name__', 'jit function')}: argument {name} = {v} does not fit in Int32 "
                              f"(a Python int argument is a runtime Int32, as in CuTe DSL); it wraps to "
                              f"{int(Int32(v))}. Pass cutlass.Int64({v}) for a 64-bit value.", stacklevel=4)
        elif ann is float or (plain and type(v) is float):
            if type(v) is not float:  # CuTe DSL refuses an int for a float parameter too
                raise _mismatch(fn, name, "float", v)
            dt = Float32
        if dt is None and type(v) is tuple:
            tup = _int_tuple(fn, name, ann, v)
            if tup is not None:
                bound.arguments[name] = tup
                changed = True
                continue
        if dt is None:
            vals = protocol_values(v)
            if vals:  # a user type of CuTe DSL's JitArgument / DynamicExpression protocols: its values are runtime
                bound.arguments[name] = protocol_rebuild(v, [_dynamic_value(t, x) for t, x in vals])
                changed = True
            continue
        if dt.kind == "bool":  # a runtime Boolean: prints '?', its value known
            bound.arguments[name] = DynBool(bool(v))
            changed = True
        elif dt.kind in ("int", "uint") and 8 <= dt.width <= 64:
            bound.arguments[name] = DynInt(int(dt(int(v))), dt, track=False)  # a scalar: its arithmetic prints '?'
            changed = True
        elif dt.kind == "float":
            d = dyn_scalar(dt, float(v))
            if d is not None:  # a runtime float: prints '?', computes in its type
                bound.arguments[name] = d
                changed = True
    if not changed:
        return args, kwargs
    return tuple(bound.args), dict(bound.kwargs)


def _int_tuple(fn: Any, name: str, ann: Any, v: tuple) -> Any:
    """A tuple argument annotated ``Tuple[Int32, ...]`` (CUTLASS's FMHA problem shapes): its Python ints as
    runtime Int32 values, as CuTe DSL passes them (a layout made from them has dynamic extents: a mode of extent
    1 keeps its stride, where a static one gets stride 0); None for any other tuple or annotation."""
    import typing

    from ...dynamic import DynInt

    if typing.get_origin(ann) is not tuple:
        return None
    targs = typing.get_args(ann)
    if len(targs) == 2 and targs[1] is Ellipsis:
        targs = (targs[0],) * len(v)
    from ...numeric import is_numeric_type

    if not targs or not all(is_numeric_type(t) and t.kind in ("int", "uint") and 8 <= t.width <= 64 for t in targs):
        return None
    if len(targs) != len(v):
        raise _mismatch(fn, name, f"a tuple of {len(targs)} integers", v)
    out = []
    for t, x in zip(targs, v):
        if isinstance(x, (DynInt, bool)) or not isinstance(x, int):
            if isinstance(x, DynInt):
                out.append(x)
                continue
            raise _mismatch(fn, name, f"Tuple[{', '.join(str(a) for a in targs)}]", v)
        out.append(DynInt(int(t(int(x))), t, track=False))
    return tuple(out)


def dynamic_note(fn: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> str:
    """The values behind the '?'s of a failed call: error messages print layouts as the trace
    saw them, so this note gives the values (empty when no argument is dynamic)."""
    import inspect

    from ...dynamic import is_dynamic, value_of

    try:
        bound = inspect.signature(fn).bind_partial(*args, **kwargs).arguments
    except (TypeError, ValueError):
        bound = {f"argument {i}": a for i, a in enumerate(args)}
    items = []
    for name, v in bound.items():
        lay = getattr(v, "layout", None)
        if is_dynamic(v):
            items.append(f"{name} = {value_of(v)}")
        elif lay is not None and is_dynamic(lay):
            items.append(f"{name} has the layout {value_of(lay)}")
    if not items:
        return ""
    return "the dynamic values (printed '?') of this call: " + "; ".join(items)


class _Quiet(threading.local):
    depth = 0  # > 0: inside a trip after the first of a host runtime loop (its prints were shown)


_QUIET = _Quiet()


def host_range(*args: Any, **kwargs: Any) -> Any:
    """``for i in range(...)`` in a @cute.jit function (rewrite.rewrite_host_function): a runtime
    loop, as CuTe DSL makes it. The loop variable is a runtime Int32 (prints '?'); what the body
    launches and printf's happens on every trip, in order, while its trace-time prints show once,
    as CuTe DSL traces the body once. (``unroll=`` and the like only shape generated code: taken
    and ignored here.) ``cutlass.range_constexpr`` keeps a Python loop."""
    from ...numeric import Int32

    vals = []
    for a in args:
        if isinstance(a, bool) or not isinstance(a, int) and not hasattr(a, "__index__"):
            raise TypeError(f"range() in a @cute.jit function: the bounds must be integers, got {a!r}")
        vals.append(int(a))
    r = range(*vals)
    quiet = False
    try:
        for k, i in enumerate(r):
            if k == 1:
                _QUIET.depth += 1
                quiet = True
            yield DynInt(i, Int32)
    finally:
        if quiet:
            _QUIET.depth -= 1


def py_conv(fn: Any, x: Any, where: str) -> Any:
    """``int(x)`` / ``float(x)`` in a @cute.jit function's body: a runtime value (a dynamic
    argument, a dynamic extent) has no Python number when CuTe DSL traces the function, and CuTe
    DSL refuses the conversion; so does cutelab. A static value converts as in Python."""
    import builtins

    from ...dynamic import DynFloat

    if (fn is builtins.int or fn is builtins.float) and isinstance(x, (DynInt, DynBool, DynFloat)):
        raise TypeError(
            f"{fn.__name__}() of a runtime value ({x!r}) at {where}: a @cute.jit function's dynamic values have no "
            f"Python value while it is traced (CuTe DSL refuses the conversion too); annotate the argument "
            f"cutlass.Constexpr for a compile-time value, or convert with "
            f"cutlass.{'Int32' if fn is builtins.int else 'Float32'}(x)")
    return fn(x)


def trace_print(*args: Any, **kwargs: Any) -> None:
    """``print`` in a @cute.jit function's body: a trace-time print, shown once per trace (not on
    the later trips of a host runtime loop, see host_range)."""
    if not _QUIET.depth:
        print(*args, **kwargs)
