"""A launch's arguments: tensors become storages (one kernel parameter per distinct engine),
scalars runtime values, everything else a trace-time constant; grid and block shapes checked.
"""

from __future__ import annotations

import inspect
import os
import re
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from ...errors import LaunchError
from ...layout import Layout
from ..frontend.host import Constexpr  # noqa: F401  (cute.Constexpr: the jit functions' marker)
from ..frontend.engines import GmemEngine
from ..frontend.records import is_dataclass_value as _is_dataclass_value, parts, rebuilt

_MAX_BLOCK = (1024, 1024, 64)


_MAX_GRID = ((1 << 31) - 1, 65535, 65535)


def _dims(x: Any, what: str, kernel: str, stand_ins: bool = False) -> Tuple[int, int, int]:
    """stand_ins: the launch is traced with stand-in values and never run (launch/fakes.py): a dynamic
    entry below 1 there is taken as 1 (the real call's trace checks its own value)."""
    from ...dynamic import DynInt

    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        x = (x,)
    if not isinstance(x, (tuple, list)) or not 1 <= len(x) <= 3:
        raise LaunchError(f"{kernel}.launch: {what} must be 1 to 3 ints (x, y, z), got {x!r}")
    out = []
    for v in x:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise LaunchError(
                f"{kernel}.launch: {what} entries must be static ints, got {v!r} ({type(v).__name__}) in {x!r}"
            )
        out.append(max(1, int(v)) if stand_ins and isinstance(v, DynInt) else int(v))
    while len(out) < 3:
        out.append(1)
    limits = _MAX_BLOCK if what == "block" else _MAX_GRID
    for axis, v, lim in zip("xyz", out, limits):
        if v < 1:
            raise LaunchError(f"{kernel}.launch: {what}.{axis} = {v}; every {what} dimension must be at least 1")
        if v > lim:
            raise LaunchError(f"{kernel}.launch: {what}.{axis} = {v} exceeds CUDA's limit of {lim}")
    if what == "block" and out[0] * out[1] * out[2] > 1024:
        raise LaunchError(
            f"{kernel}.launch: block {tuple(out)} has {out[0] * out[1] * out[2]} threads; CUDA allows at most 1024"
        )
    return tuple(out)  # type: ignore[return-value]


class _Storage:
    """What a launch needs to know of one tensor storage (an engine of cutelab.tensor)."""

    def __init__(self, engine: Any, name: str):
        self.engine = engine
        self.name = name
        self.dtype = engine.dtype
        self.address = int(getattr(engine, "address", 0) or 0)
        self.align = int(getattr(engine, "align", None) or self.dtype.bytes)
        self.length = len(engine)
        data = getattr(engine, "data", None)
        self.data = data if isinstance(data, np.ndarray) else None
        owner = getattr(engine, "obj", None)
        self.owner = owner if owner is not None else getattr(engine, "owner", None)
        self.device = _device_of(engine, self.data)

    @property
    def on_gpu(self) -> bool:
        return self.device[0] == "cuda"

    def description(self) -> "_Storage":
        """The same facts without the storage itself (no engine, array or owner kept alive)."""
        d = _Storage.__new__(_Storage)
        d.__dict__.update(self.__dict__)
        d.engine = d.data = d.owner = None
        return d


def _device_of(engine: Any, data: Any) -> Tuple[str, int]:
    if isinstance(data, np.ndarray):
        return ("cpu", 0)
    dev = getattr(engine, "device", None)
    if dev is not None:
        t = getattr(dev, "type", None)
        if t is not None:  # torch.device
            return ("cuda" if t == "cuda" else t, int(getattr(dev, "index", 0) or 0))
        if isinstance(dev, tuple) and len(dev) == 2:  # DLPack (device_type, id)
            return ("cuda" if int(dev[0]) in (2, 13) else "cpu", int(dev[1]))
        if isinstance(dev, str):
            return (dev.split(":")[0], int(dev.split(":")[1]) if ":" in dev else 0)
    raise LaunchError(f"cannot tell where the storage {type(engine).__name__} lives (CPU or GPU)")


def _is_storage_tensor(x: Any) -> bool:
    eng = getattr(x, "engine", None)
    return (eng is not None and isinstance(getattr(x, "layout", None), Layout)
            and hasattr(eng, "dtype") and getattr(eng, "dtype", None) is not None
            and hasattr(eng, "address") and not isinstance(eng, GmemEngine))


def _is_storage_pointer(x: Any) -> bool:
    """A pointer into memory a kernel can take (make_ptr of an array's or cudaMalloc's memory, global or
    generic), passed to a kernel as an argument of its own; also the stand-in memory of a placeholder pointer in
    cute.compile's trace (launch/pointers.py), whose launches are traced, never run."""
    from ...tensor import Pointer

    eng = getattr(x, "engine", None)
    return (type(x) is Pointer and eng is not None and not isinstance(eng, GmemEngine)
            and (isinstance(getattr(eng, "data", None), np.ndarray) or getattr(eng, "stand_in", False))
            and isinstance(x.offset, (int, np.integer))
            and str(getattr(eng, "memspace", "")) in ("gmem", "generic"))


def _want_interpret(flag: Optional[bool]) -> Optional[bool]:
    if flag is not None:
        return bool(flag)
    env = os.environ.get("CUTELAB_INTERPRET", "")
    if env not in ("", "0"):
        return True
    return None


def _c_name(name: str) -> str:
    n = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return n if n and not n[0].isdigit() else "k_" + n


def _scalar_type(k: Any, name: str, val: Any) -> Any:
    """The element type of a runtime scalar argument (annotated cutlass.Int32 etc., or a value made
    by one, e.g. cutlass.Float32(2.0)); None for compile-time arguments."""
    from ...numeric import FloatValue, IntValue, is_numeric_type

    ann = k.signature.parameters[name].annotation if name in k.signature.parameters else None
    if isinstance(ann, str):  # from __future__ import annotations
        try:
            ann = eval(ann, k.fn.__globals__)  # noqa: S307 - the user's own annotation, in its module
        except Exception:  # noqa: BLE001 - an annotation we cannot read is not a scalar type
            ann = None
    if isinstance(val, (IntValue, FloatValue)):
        return val.dtype
    if is_numeric_type(ann) and isinstance(val, (int, float, bool, np.integer, np.floating)):
        return ann
    return None


def _scalar_value(k: Any, name: str, dt: Any, v: Any) -> Any:
    if dt.width > 64 or dt.width < 8:
        raise LaunchError(f"{k.name}: scalar argument {name} of type {dt} cannot be passed to a kernel "
                          f"(kernel scalars are 8 to 64 bits wide)")
    if dt.is_integer and isinstance(v, float) and not float(v).is_integer():
        raise LaunchError(f"{k.name}: argument {name} is declared {dt} but got the float {v!r}")
    return dt(v).value


def _scalar_in_kernel(sp: Any) -> Any:
    """What the kernel function sees for a scalar argument: a symbolic integer (usable in index
    math and layouts) or a one-element tensor value for floats."""
    from ..ir.nodes import ArgVar, ParamRef
    from ..frontend.trace import TraceValue

    if sp.dtype.is_float:
        return TraceValue([ParamRef(sp)], (), sp.dtype)
    return ArgVar(sp)


def _static_key(v: Any) -> Any:
    from ...numeric import NumericMeta

    if isinstance(v, (int, float, str, bool, type(None), Layout, NumericMeta)):
        return (type(v).__name__, v)
    if isinstance(v, (tuple, list)):
        return (type(v).__name__,) + tuple(_static_key(x) for x in v)
    if callable(v):
        return ("fn", id(v))
    hash(v)  # raises TypeError for unhashable values: no caching then
    return (type(v).__name__, v)


def _has_tensors(v: Any) -> bool:
    if _is_dataclass_value(v):  # e.g. a frozen dataclass of tensors passed to a kernel (CuTe DSL's dataclass_immutable)
        import dataclasses

        return any(_is_storage_tensor(getattr(v, f.name)) or _is_storage_pointer(getattr(v, f.name))
                   or _has_tensors(getattr(v, f.name)) for f in dataclasses.fields(v))
    return isinstance(v, (list, tuple)) and any(_is_storage_tensor(x) or _is_storage_pointer(x) or _has_tensors(x)
                                                for x in v)


def _tensor_leaves(v: Any, path: str) -> List[Tuple[str, Any]]:
    """(path, tensor) for the tensors in v (a tensor, or lists/tuples/dataclasses of them): "inputs_1",
    "params_src" etc.; a pointer to memory among them is a leaf too (quack's tile scheduler parameters hold
    the semaphore's pointer)."""
    if _is_storage_tensor(v) or _is_storage_pointer(v):
        return [(path, v)]
    out: List[Tuple[str, Any]] = []
    if isinstance(v, (list, tuple)):
        for i, x in enumerate(v):
            out += _tensor_leaves(x, f"{path}_{i}")
    elif _is_dataclass_value(v):
        import dataclasses

        for f in dataclasses.fields(v):
            out += _tensor_leaves(getattr(v, f.name), f"{path}_{f.name}")
    return out


def _replace_tensors(v: Any, path: str, new: Dict[str, Any]) -> Any:
    if path in new:
        return new[path]
    ps = parts(v)
    if ps is None or (_is_dataclass_value(v) and not _has_tensors(v)):
        return v
    return rebuilt(v, [_replace_tensors(x, f"{path}_{k}", new) for k, x in ps])


def _as_tensor_arg(x: Any) -> Any:
    """Arrays passed to a jit function (torch tensors, numpy arrays) become Tensors, as CuTe DSL
    converts them; their alignment is what their address shows (at most 16 bytes)."""
    if _is_storage_tensor(x):
        return x
    if (isinstance(x, np.ndarray) or (type(x).__module__.startswith("torch") and hasattr(x, "data_ptr"))
            or hasattr(x, "__cuda_array_interface__")):
        from ...runtime import from_dlpack

        t = from_dlpack(x)
        addr = int(getattr(t.engine, "address", 0) or 0)
        b = t.element_type.bytes
        align = 16
        while align > b and addr % align:
            align //= 2
        return from_dlpack(x, assumed_align=max(align, b)) if align > b else t
    return x


def _as_tensor_args(x: Any) -> Any:
    if isinstance(x, list):
        return [_as_tensor_args(v) for v in x]
    return _as_tensor_arg(x)


def _at_path(args: Any, pos: Any, name: str) -> Any:
    """The argument at pos: an int, or a path of indices into nested lists and tuples and of field names
    (str) into dataclasses."""
    path = pos if isinstance(pos, tuple) else (pos,)
    v = args
    for i in path:
        if type(i) is str:
            if not _is_dataclass_value(v) or not hasattr(v, i):
                raise LaunchError(f"{name}: expected a tensor at argument {pos}, the compiled function's signature")
            v = getattr(v, i)
            continue
        if not isinstance(v, (list, tuple)) or i >= len(v):
            raise LaunchError(f"{name}: expected a tensor at argument {pos}, the compiled function's signature")
        v = v[i]
    return v


def _leaves_by_index(args: Any, prefix: tuple = ()) -> Dict[Any, Any]:
    """The tensors of a call's arguments by position: an int for an argument that is one, else its path (a
    tuple: the argument's index, then an index into a list or tuple (a NamedTuple too) or a dataclass's field
    name at each level). Every tensor a compiled function launches with is found again at its path in each
    call (quack's epilogue arguments, a dataclass of tensors: a call's PostAct, not the compile's)."""
    import dataclasses

    out: Dict[Any, Any] = {}
    items = ([(f.name, getattr(args, f.name)) for f in dataclasses.fields(args) if f.init]
             if _is_dataclass_value(args) else list(enumerate(args)))
    for i, a in items:
        p = prefix + (i,)
        if _is_storage_tensor(a):
            out[p if prefix else i] = a
        elif (isinstance(a, (list, tuple)) and not hasattr(a, "shape") or _is_dataclass_value(a)) and _has_tensors(a):
            out.update(_leaves_by_index(a, p))
    return out


def _constexpr_positions(fn: Any, n: int) -> set:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return set()
    out = set()
    for i, p in enumerate(params[:n]):
        ann = p.annotation
        if ann is Constexpr or (isinstance(ann, str) and "Constexpr" in ann):
            out.add(i)
    return out


def _is_stream(a: Any) -> bool:
    # a CUstream or a subclass of it (the TVM-FFI style's env stream, compat.tvm_ffi.EnvStream), or torch's stream
    return (any(c.__name__ == "CUstream" for c in type(a).__mro__)
            or (type(a).__module__.startswith("torch") and hasattr(a, "cuda_stream")))


def _skeleton_key(v: Any, runtime: bool = False) -> Any:
    """The key of what an argument holding tensors or pointers (a dataclass, tuple or list of them) carries
    besides them: their places, and every other leaf's value (``_static_key``, and ``dynamic_key`` for
    the runtime values a trace is specialised on). runtime: a leaf that CuTe DSL's default dataclass
    adapter makes a runtime scalar is keyed by its place only (a compiled function traces again for its
    value: ``protocol_values``). TypeError for a leaf that cannot be a key."""
    from ...dynamic import dynamic_key

    if (_is_storage_tensor(v) or _is_storage_pointer(v) or isinstance(v, np.ndarray)
            or hasattr(v, "__dlpack__") or hasattr(v, "__cuda_array_interface__")):
        return ("storage",)  # (a call may give a torch tensor or an array where the compile had a Tensor)
    if runtime:
        from ..frontend.host import _adapted_dataclass, _dataclass_fields, _scalar_leaf

        if _adapted_dataclass(v):  # (a dataclass or a NamedTuple)
            import dataclasses

            from ..frontend.host import constexpr_names

            scal = {f.name for f, ann, x in _dataclass_fields(v) if _scalar_leaf(ann, x) is not None}
            const = constexpr_names(v)
            names = type(v)._fields if isinstance(v, tuple) else [f.name for f in dataclasses.fields(v)]
            return (type(v),) + tuple((n, ("runtime scalar",) if n in scal else
                                       ("constexpr", _skeleton_key(getattr(v, n), runtime)) if n in const else
                                       _skeleton_key(getattr(v, n), runtime)) for n in names)
    if _is_dataclass_value(v):
        import dataclasses

        return (type(v),) + tuple((f.name, _skeleton_key(getattr(v, f.name), runtime)) for f in dataclasses.fields(v))
    if isinstance(v, (list, tuple)) and not hasattr(v, "shape"):
        return (type(v),) + tuple(_skeleton_key(x, runtime) for x in v)
    return (_static_key(v), dynamic_key(v))


_NONE_KEY = (("NoneType", None), None)


def _keys_match(call: Any, compiled: Any) -> bool:
    """A call's skeleton key against the compiled one: equal, but that a Constexpr field of a dataclass or
    NamedTuple that the call leaves None matches any compiled value (it keeps the compile's value, as
    CuTe DSL pins a Constexpr field)."""
    if call == compiled:
        return True
    if (type(call) is tuple and type(compiled) is tuple and len(call) == len(compiled) and call
            and isinstance(call[0], type) and call[0] is compiled[0] and _is_dataclass_type(call[0])
            and all(type(x) is tuple and len(x) == 2 and type(x[0]) is str for x in call[1:])):
        return all(a[0] == b[0] and ((a[1] == ("constexpr", _NONE_KEY) and b[1][0] == "constexpr")
                                     or _keys_match(a[1], b[1]))
                   for a, b in zip(call[1:], compiled[1:]))
    if (type(call) is tuple and type(compiled) is tuple and len(call) == len(compiled) and call
            and call[0] is compiled[0] and call[0] in (list, tuple)):
        return all(_keys_match(a, b) for a, b in zip(call[1:], compiled[1:]))
    return False


def _is_dataclass_type(t: Any) -> bool:
    """A dataclass or NamedTuple type (their skeleton keys name each field)."""
    import dataclasses

    return dataclasses.is_dataclass(t) or (isinstance(t, type) and issubclass(t, tuple) and hasattr(t, "_fields"))


class Skeleton:
    """A compiled function's record of an argument holding tensors (a dataclass, tuple or list): every
    value in it but the tensors and pointers (which are checked by their own paths) and the runtime
    scalars (traced again for each value); ``_same_static`` compares a call's argument with it."""

    __slots__ = ("key", "text")

    def __init__(self, v: Any):
        self.key = _skeleton_key(v, runtime=True)
        hash(self.key)
        self.text = repr(v)

    def matches(self, v: Any) -> bool:
        try:
            return _keys_match(_skeleton_key(v, runtime=True), self.key)
        except TypeError:
            return False

    def __repr__(self) -> str:
        return self.text


def _same_static(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if type(b) is Skeleton:
        return b.matches(a)
    if _is_storage_pointer(a) and _is_storage_pointer(b):
        # a pointer into an array given to cute.compile (CUTLASS's mixed-input FMHA passes q.iterator, a new
        # Pointer object at each call): the compiled launches read the memory it pointed to then, so a call
        # matches when it points to the same element of the same memory, with the same type
        ea, eb = a.engine, b.engine
        return bool(type(a.engine) is type(b.engine) and int(a.offset) == int(b.offset)
                    and ea.dtype.name == eb.dtype.name and a.memspace == b.memspace
                    and (ea is eb or getattr(ea, "address", None) == getattr(eb, "address", 0)))
    try:
        return bool(type(a) is type(b) and a == b)
    except Exception:  # noqa: BLE001 - values without a plain ==
        return False
