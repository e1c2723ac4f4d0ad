"""cute.compile on placeholder pointers: ``make_ptr(dtype, 16, gmem, assumed_align=16)``, an address
that no memory cutelab can see holds, given to ``cute.compile`` so that the real pointers come at
each call (CUTLASS's Blackwell rmsnorm.py compiles so, then calls with ``make_ptr(dtype,
x.data_ptr())``).

A pointer argument is a runtime value in CuTe DSL: the compiled code takes any address. Here a
launch is traced for its storages (their extents decide the bounds proofs and the interpreter's
checks), so cute.compile traces once with stand-in memory (the program's compile-time prints and
errors come then, as in CuTe DSL) and returns a PointerCompiled; each call checks its pointers
against the placeholders (element type, address space, the alignment compiled for) and runs the
program traced for the memory they point into (traced on first use per memory and kept, at most
``_KEEP`` of them; a kept trace keeps its memory alive).
"""

from __future__ import annotations

import contextlib
import io
import threading
from typing import Any, Callable, Dict, List, Tuple

import numpy as np

from ...errors import LaunchError
from ...runtime import DeviceEngine, RawAddressEngine
from ...tensor import NumpyEngine, Pointer, PointerInfo, Tensor
from ..frontend.records import parts, rebuilt, same_kind
from .args import _constexpr_positions

__all__ = ["PointerCompiled", "compile_pointers", "has_placeholder_pointers", "stand_in_pointers", "bind_pointers"]

_KEEP = 16
_STAND_IN_ELEMENTS = 1 << 32  # no allocation: the compile-time trace's storage is never read


def _is_placeholder(a: Any) -> bool:
    return type(a) is Pointer and type(a.engine) is RawAddressEngine and a.engine.memspace in ("gmem", "generic")


_calling = threading.local()  # set while a PointerCompiled traces for its call's memory


def has_placeholder_pointers(args: Tuple[Any, ...]) -> bool:
    """cute.compile's test: placeholder pointers among the arguments (not while a PointerCompiled traces
    for a call, whose pointers without memory are the call's own: a kernel using one is refused then)."""
    return not getattr(_calling, "on", False) and any(_nested_placeholder(a) for a in args)


class _StandInEngine(PointerInfo):
    """The memory of a placeholder pointer in the compile-time trace: its type, address and
    alignment, an extent no access leaves, and nothing to read (the trace only records)."""

    __slots__ = ("dtype", "address", "align", "memspace", "device")
    stand_in = True  # a kernel takes it as a pointer argument in the compile-time trace (args._is_storage_pointer)

    def __init__(self, eng: RawAddressEngine):
        self.dtype, self.address, self.align, self.memspace = eng.dtype, eng.address, eng.align, eng.memspace
        self.device = "cpu"

    def __len__(self) -> int:
        return _STAND_IN_ELEMENTS

    def _refuse(self, *a: Any) -> Any:
        raise LaunchError(f"{self.raw_ptr_str(0)}: a placeholder pointer of cute.compile holds no memory; "
                          f"call the compiled function with real pointers")

    load = store = read_one = write_one = _refuse


def _same_space(a: str, b: str) -> bool:
    return a == b or {a, b} == {"gmem", "generic"}  # make_ptr's default generic reaches global memory


def _bound(name: str, j: int, ph: Pointer, a: Any) -> Tuple[Pointer, Tuple[Any, ...]]:
    """The call's pointer a in place of placeholder ph: over a's memory, with ph's alignment and
    address space (what the program was compiled for), and the key of that memory. An int is an
    address (a TVM-FFI call passes a pointer argument so: quack's ``tile_count_semaphore.data_ptr()``),
    the pointer make_ptr makes of it."""
    want = ph.engine
    if isinstance(a, (int, np.integer)) and not isinstance(a, bool):
        from ...runtime import make_ptr

        a = make_ptr(want.dtype, int(a), want.memspace, assumed_align=want.dtype.bytes)
    if type(a) is Tensor:  # CuTe DSL passes a tensor's descriptor, which starts with its data pointer: the pointer
        a = a.iterator
    if type(a) is not Pointer:
        raise LaunchError(f"{name}: argument {j} was compiled as a pointer ({want.ptr_str(0)}); got "
                          f"{type(a).__name__} {a!r}")
    eng = a.engine
    if eng.dtype is not want.dtype:
        raise LaunchError(f"{name}: argument {j} is a pointer to {eng.dtype.name} elements, but the function was "
                          f"compiled for {want.ptr_str(0)}")
    if not _same_space(eng.memspace, want.memspace):
        raise LaunchError(f"{name}: argument {j} is a pointer in {eng.memspace} memory, but the function was compiled "
                          f"for {want.ptr_str(0)}")
    if not isinstance(a.offset, int):
        raise LaunchError(f"{name}: argument {j}: a pointer at a runtime offset cannot be a kernel's argument here")
    if a.offset < 0 and type(eng) is not RawAddressEngine:
        raise LaunchError(f"{name}: argument {j} points {-a.offset} elements before the start of the memory it was made "
                          f"from")
    address = eng.address + a.offset * eng.dtype.bytes
    if address % want.align:
        raise LaunchError(f"{name}: argument {j} points to 0x{address:x}, not aligned to the {want.align} bytes the "
                          f"function was compiled for ({want.ptr_str(0)}, make_ptr's assumed_align)")
    space = want.memspace
    if type(eng) is NumpyEngine:
        new = NumpyEngine(eng.data[a.offset:], eng.dtype, space, align=want.align, owner=eng.owner, address=address)
        return Pointer(new, 0), ("host", address, len(new), id(eng.data.base if eng.data.base is not None else eng.data))
    if type(eng) is DeviceEngine:
        new = DeviceEngine(eng.obj, eng.dtype, address, eng.span - a.offset, want.align, eng.device)
        return Pointer(new, 0), ("device", address, len(new), id(eng.obj))
    if type(eng) is RawAddressEngine:  # no memory here either (a null pointer for an unused operand, ...): a
        # kernel that reads or writes through it is refused at its launch (plan._prepare), naming the argument
        return Pointer(RawAddressEngine(eng.dtype, address, want.align, space), 0), ("raw", address)
    if eng.align >= want.align and a.offset == 0:  # other memory (4-bit elements, ...): as it is
        return a, ("other", address, len(eng), id(eng))
    raise LaunchError(f"{name}: argument {j}: a pointer into {type(eng).__name__} cannot stand for a placeholder "
                      f"pointer compiled with {want.align}-byte alignment")


def _walk(x: Any, fn: Callable[[Any], Any]) -> Any:
    """x with fn applied to the placeholder pointers it holds in tuples, lists and dataclass fields (quack's
    tile scheduler options hold the semaphore's); x itself when it holds none."""
    if _is_placeholder(x):
        return fn(x)
    ps = parts(x)
    return x if ps is None else rebuilt(x, [_walk(v, fn) for _, v in ps])


def stand_in_pointers(x: Any) -> Any:
    """x with each placeholder pointer it holds (nested) over stand-in memory, for cute.compile's trace."""
    return _walk(x, lambda a: Pointer(_StandInEngine(a.engine), a.offset))


def bind_pointers(name: str, j: int, compiled: Any, real: Any) -> Tuple[Any, Tuple[Any, ...]]:
    """(real with the call's pointers bound where compiled holds placeholders, the keys of their memory):
    real walked alongside compiled (the same dataclass types, tuples and lists of the same lengths)."""
    keys: List[Any] = []

    def go(c: Any, r: Any) -> Any:
        if _is_placeholder(c):
            if r is None:  # an optional pointer the call leaves out
                return r
            p, k = _bound(name, j, c, r)
            keys.append(k)
            return p
        cs = parts(c)
        if cs is None or not same_kind(c, r):
            return r
        return rebuilt(r, [go(a, b) for (_, a), (_, b) in zip(cs, parts(r))])

    return go(compiled, real), tuple(keys)


def _nested_placeholder(x: Any) -> bool:
    found: List[Any] = []
    _walk(x, lambda a: found.append(a) or a)
    return bool(found)


class PointerCompiled:
    """What ``cute.compile`` returns for placeholder pointers: called with real pointers (and the
    other arguments as for any compiled function), it checks them and runs the program traced for
    their memory."""

    def __init__(self, target: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any], const: set,
                 compile_: Callable[..., Any]):
        self.target, self.args, self.kwargs, self.const = target, args, kwargs, const
        self.compile = compile_  # cute.compile's trace (launch/api.py _compile)
        self.name = getattr(target, "__name__", "compiled function")
        self.cache: Dict[Any, Tuple[Any, List[Any]]] = {}

    def __repr__(self) -> str:
        ptrs = ", ".join(a.engine.ptr_str(0) for a in self.args if _is_placeholder(a))
        return f"<cute.compile({self.name}) for pointers {ptrs}>"

    def export_to_c(self, *args: Any, **kwargs: Any) -> None:
        """CuTe DSL's ahead-of-time export (kernel/launch/aot.py)."""
        from .aot import export_to_c

        export_to_c(self, args, kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        kept = [i for i in range(len(self.args)) if i not in self.const]
        if len(args) != len(kept):
            raise LaunchError(f"{self.name}: expected {len(kept)} arguments (as compiled), got {len(args)}")
        full = list(self.args)
        key: List[Any] = []
        for j, i in enumerate(kept):
            if _is_placeholder(self.args[i]):
                full[i], k = _bound(self.name, j, self.args[i], args[j])
                key.append((i, k))
            elif _nested_placeholder(self.args[i]):  # inside a dataclass or tuple argument
                full[i], k = bind_pointers(self.name, j, self.args[i], args[j])
                key.append((i, k))
            else:
                full[i] = args[j]
        hit = self.cache.get(tuple(key))
        if hit is None:
            _calling.on = True
            try:
                with contextlib.redirect_stdout(io.StringIO()):  # a compiled CuTe DSL function prints nothing
                    cf = self.compile(self.target, *full, **self.kwargs)
            finally:
                _calling.on = False
            if len(self.cache) >= _KEEP:
                self.cache.pop(next(iter(self.cache)))
            hit = self.cache[tuple(key)] = (cf, [full[i] for i in kept])
        cf = hit[0]
        # a dataclass or tuple holding pointers: the call's own, bound to its memory (its other fields are the
        # call's too: runtime scalars, checked or traced again by cf)
        call = [full[i] if _nested_placeholder(self.args[i]) else args[j] for j, i in enumerate(kept)]
        return cf(*call, **kwargs)


#: the stand-in of a dynamic integer placeholder of value 0 (a multiple of the divisibilities programs assume)
_ZERO_STAND_IN = 256


def _zero_stand_in(a: Any) -> Any:
    """a with each cutlass integer value of 0 in it (alone or in tuples) a dynamic integer of _ZERO_STAND_IN:
    CUTLASS's block-scaled GEMMs compile with ``(Int32(0),) * 4`` for the problem shape, values CuTe DSL
    does not know at compile time and that come at each call; a 0 extent has no layout to trace."""
    from ...dynamic import DynInt
    from ...numeric import Integer

    if isinstance(a, Integer) and not isinstance(a, bool) and getattr(a, "value", None) == 0 and a.width in (32, 64):
        return DynInt(_ZERO_STAND_IN, "i64" if a.width == 64 else "i32")
    if type(a) in (tuple, list):
        return type(a)(_zero_stand_in(x) for x in a)
    return a


def compile_pointers(target: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any],
                     _compile: Callable[..., Any]) -> PointerCompiled:
    """cute.compile with placeholder pointers: one trace over stand-in memory (its prints and errors
    now), then a PointerCompiled. ``_compile`` is cute.compile's trace (launch/api.py, which calls this)."""
    stand = tuple(stand_in_pointers(a) if _nested_placeholder(a) else _zero_stand_in(a) for a in args)
    _compile(target, *stand, **kwargs)
    return PointerCompiled(target, args, dict(kwargs), _constexpr_positions(target, len(args)), _compile)
