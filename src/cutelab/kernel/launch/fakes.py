"""cute.compile on fake tensors (``cutelab.fake``): one trace with stand-ins, then a function that
checks real tensors against the fakes and runs the program compiled for their shapes."""

from __future__ import annotations

import contextlib
import io
import threading
from typing import Any, Callable, Dict, List, Tuple

import numpy as np

from ...dynamic import DynInt, value_of
from ...dynamic_layout import flat_modes, set_layout, mark_compact_shape_dynamic, mark_layout_dynamic
from ...errors import LaunchError, TensorError
from ..frontend.records import parts, rebuilt, same_kind
from ...fake import FakeTensor, SymInt
from ...runtime import _from_numpy
from .args import _as_tensor_args, _constexpr_positions, _is_dataclass_value
from .pointers import _nested_placeholder, bind_pointers, stand_in_pointers

__all__ = ["FakeCompiled", "compile_fakes", "stand_in", "tracing_stand_ins"]

_local = threading.local()


def tracing_stand_ins() -> bool:
    """True during compile_fakes' trace with stand-ins, whose launches are never run: a real call
    compiles again with its own values. A dynamic value there (an ``Int32`` argument compiled as
    0, as quack passes ``sm_count``) is a stand-in, not the value a launch will use."""
    return getattr(_local, "depth", 0) > 0


class FakeCompiled:
    """What ``cute.compile`` returns for fake tensors: called with real tensors, it checks them
    against the fakes and runs the program compiled for them (compiled on first use per shape and
    kept; the compile-time prints happened once, at cute.compile)."""

    def __init__(self, target: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any], const: set,
                 compile_: Callable[..., Any]):
        self.target, self.args, self.kwargs, self.const = target, args, kwargs, const
        self.compile = compile_  # cute.compile's trace (launch/api.py _compile)
        self.name = getattr(target, "__name__", "compiled function")
        self.cache: Dict[Any, Any] = {}
        self.quick: Dict[Any, Any] = {}  # _quick_key(args) -> the program its checks chose
        # the generated call that ran the last call (the chosen program's _hot): its checks are at least
        # the fakes' (strides compared exactly, addresses aligned to the fakes' assumed_align, the
        # number of arguments), so passing them, a call runs what the checks below would choose; and
        # those of up to 3 calls before it of other programs (a function called with shapes in turn)
        self._hot: Any = None
        self._hots: Tuple[Any, ...] = ()
        # placeholder pointers among the arguments (inside dataclasses: quack's tile scheduler options): each
        # call binds its own pointers (or addresses) and runs with them, so it takes the full path
        self._pointers = any(_nested_placeholder(a) for a in args)
        # a structure argument whose calls leave a field None that the compile gave (a Constexpr field): each call
        # runs with the compile's value there (_merge), so it takes the full path too
        self._bind = False

    def __repr__(self) -> str:
        fakes = ", ".join(repr(a) for a in self.args if isinstance(a, FakeTensor))
        return f"<cute.compile({self.name}) for {fakes}>"

    def _param_name(self, i: int) -> str:
        """The name of the compiled function's parameter i ("" when it has none)."""
        import inspect

        try:
            names = list(inspect.signature(self.target).parameters)
        except (TypeError, ValueError):
            return ""
        return names[i] if i < len(names) else ""

    def export_to_c(self, *args: Any, **kwargs: Any) -> None:
        """CuTe DSL's ahead-of-time export (kernel/launch/aot.py)."""
        from .aot import export_to_c

        export_to_c(self, args, kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._pointers or self._bind:
            cf = self._checked(args, kwargs)
            return cf(*self._bound_args)
        if not kwargs:
            hot = self._hot
            if hot is not None:
                if hot(args, None):
                    return None
                for h in self._hots:
                    if h(args, None):  # an earlier program's: it comes first from now on
                        self._hots = (hot,) + tuple(x for x in self._hots if x is not h)
                        self._hot = h
                        return None
        qk = None if kwargs else _quick_key(args)
        if qk is not None:
            cf = self.quick.get(qk)
            if cf is not None:  # the same tensor shapes, strides, types, devices and alignment as a call
                return self._run(cf, args)  # that passed the checks below: they pass again, for the same program
        cf = self._checked(args, kwargs)
        if self._bind:
            return cf(*self._bound_args)
        if qk is not None:
            if len(self.quick) >= 256:
                self.quick.pop(next(iter(self.quick)))
            self.quick[qk] = cf
        return self._run(cf, args)

    def _run(self, cf: Any, args: Tuple[Any, ...]) -> Any:
        out = cf(*args)
        hot = getattr(cf, "_hot", None)
        if hot is not None and hot is not self._hot and getattr(cf, "exact_strides", False):
            if self._hot is not None:
                self._hots = ((self._hot,) + tuple(h for h in self._hots if h is not hot))[:3]
            self._hot = hot
        return out

    def _checked(self, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
        """The compiled program for args, after checking each real tensor against its fake."""
        kept = [i for i in range(len(self.args)) if i not in self.const]
        if len(args) != len(kept):
            raise LaunchError(f"{self.name}: expected {len(kept)} arguments (as compiled), got {len(args)}")
        full = list(self.args)
        key: List[Any] = []
        seen: Dict[int, Any] = {}  # sym_int -> its value in this call (one value across the arguments)
        for j, i in enumerate(kept):
            a = args[j]
            if isinstance(self.args[i], FakeTensor):
                if isinstance(a, FakeTensor):
                    raise LaunchError(f"{self.name}: argument {j} is a fake tensor; call the compiled function "
                                      f"with real tensors")
                t = _as_tensor_args(a)
                self.args[i].check(t, j, self.name, seen, self._param_name(i))
                # the alignment a program's code may assume (from its first call's address, up to 16 bytes)
                # is part of what it was compiled for: a call aligned less (as the fake allows) gets its own
                key.append((i, type(a).__name__, str(getattr(a, "device", "")), value_of(t.layout),
                            int(getattr(t.engine, "align", 0) or 0)))
                a = symbolic_like(self.args[i], t)
            else:
                fakes = _fake_leaves(self.args[i])
                if fakes:  # fake tensors inside the argument (a dataclass of them): each real one checked
                    reals = _real_leaves(a, len(fakes))
                    if len(reals) != len(fakes):
                        raise LaunchError(f"{self.name}: argument {j} holds {len(reals)} tensors where it was "
                                          f"compiled with {len(fakes)} fake tensors")
                    lays = []
                    for f, r in zip(fakes, reals):
                        rt = _as_tensor_args(r)
                        f.check(rt, j, self.name, seen, self._param_name(i))
                        lays.append((type(r).__name__, str(getattr(r, "device", "")), value_of(rt.layout)))
                    key.append((i, type(a).__name__, tuple(lays)))
                    a = _merge(self.args[i], a)
                else:
                    key.append((i, type(a).__name__))
                    if isinstance(a, (list, tuple)) or _is_dataclass_value(a):
                        # a field the call leaves None (a Constexpr field: quack's add_to_output, passed None at each
                        # call) keeps the compile's value, as with fakes inside (its TMA reduce-add was traced as a
                        # store: gemm_add_inplace overwrote its output)
                        merged = _merge(self.args[i], a)
                        if merged is not a and not _same_structure(merged, a):
                            self._bind = True  # calls run with the merged values (CompiledFunction compares them)
                        a = merged
                if _nested_placeholder(self.args[i]):  # placeholder pointers (make_ptr(dtype, 0, ...)) in it:
                    a, pk = bind_pointers(self.name, j, self.args[i], a)  # the call's pointers (or addresses)
                    key.append((i, "pointers", pk))
            full[i] = a
        self._bound_args = [full[i] for i in kept]  # the call's arguments with its pointers bound
        cf = self.cache.get(tuple(key))
        if cf is None:
            with contextlib.redirect_stdout(io.StringIO()):  # a compiled CuTe DSL function prints nothing
                cf = self.compile(self.target, *full, **dict(self.kwargs, **kwargs))
            if hasattr(cf, "min_align") and cf._fast is None:  # its generated checks: at least the fakes'
                cf.exact_strides = True
                cf.min_align = {j: self.args[i].assumed_align for j, i in enumerate(kept)
                                if isinstance(self.args[i], FakeTensor)}
                cf.nargs = len(kept)
            if len(self.cache) >= 64:
                self.cache.pop(next(iter(self.cache)))
            self.cache[tuple(key)] = cf
        return cf


def symbolic_like(fake: FakeTensor, t: Any) -> Any:
    """t (a call's tensor that passed fake's check) with the extents and strides that are symbolic in the fake
    marked dynamic at t's values, as the stand-ins of compile_fakes are: the program traced for the call has
    what CuTe DSL's compiled one has, a dynamic extent where the fake's is symbolic. (Traced static, a tile of a
    grid rounded up to whole clusters past such an extent, quack's symmetric GEMM at M = 128 under 2 x 128-row
    clusters, divides to a rest mode of extent 1, stride 0, and aliases onto the first tile.) t itself when
    nothing is symbolic or its modes cannot be marked."""
    sym_shape = [k for k, e in enumerate(fake.shape) if isinstance(e, SymInt)]
    sym_stride = [k for k, d in enumerate(fake.stride) if isinstance(d, SymInt)]
    if not sym_shape and not sym_stride:
        return t
    try:
        sh, st = flat_modes(t, "cute.compile")
    except (TensorError, LaunchError):
        return t
    if len(sh) != len(fake.shape):
        return t
    sh = tuple(DynInt(int(x), "i64" if fake.shape[k].width == 64 else "i32", fake.shape[k].divisibility)
               if k in sym_shape else x for k, x in enumerate(sh))
    st = tuple(DynInt(int(x), "i64", fake.stride[k].divisibility) if k in sym_stride else x for k, x in enumerate(st))
    from ...layout import Layout
    from ...tensor import Tensor

    was_tuple = isinstance(t.layout.shape, tuple)  # a new tensor over t's memory: a caller's tensor stays as it is
    return Tensor(t.engine, Layout(sh if was_tuple else sh[0], st if was_tuple else st[0]), t.offset, _checked=True)


def _same_structure(a: Any, b: Any) -> bool:
    """Whether a and b hold the same values (identical objects) at every field and element."""
    import dataclasses

    if a is b:
        return True
    if _is_dataclass_value(a) and type(a) is type(b):
        return all(_same_structure(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and type(a) is type(b) and len(a) == len(b):
        return all(_same_structure(x, y) for x, y in zip(a, b))
    return False


def _merge(fake: Any, real: Any) -> Any:
    """The argument a call passes (real) in the compiled structure (fake): its tensors as cute tensors in the
    fakes' places (a TVM-FFI call passes torch tensors), and a field the call leaves None where the compile
    had a value (a Constexpr field, which the compiled function keeps, as CuTe DSL's does) at that value."""
    if isinstance(fake, FakeTensor):
        return None if real is None else symbolic_like(fake, _as_tensor_args(real))
    if real is None:
        return fake
    fs = parts(fake)
    if fs is None or not same_kind(fake, real):
        return real
    return rebuilt(real, [_merge(f, r) for (_, f), (_, r) in zip(fs, parts(real))])


def _real_leaves(x: Any, n: int) -> List[Any]:
    """The tensors (anything with a shape, or None where a fake was optional) x holds where its fakes were:
    walked as _nested walks, a leaf with ``shape`` or ``__dlpack__`` counting as one."""
    import dataclasses

    out: List[Any] = []

    def go(y: Any) -> None:
        if hasattr(y, "shape") or hasattr(y, "__dlpack__"):
            out.append(y)
        elif isinstance(y, (list, tuple)):
            for e in y:
                go(e)
        elif isinstance(y, dict):
            for e in y.values():
                go(e)
        elif dataclasses.is_dataclass(y) and not isinstance(y, type):
            for f in dataclasses.fields(y):
                if f.init:
                    go(getattr(y, f.name))

    go(x)
    return out


def _quick_key(args: Tuple[Any, ...]) -> Any:
    """What decides FakeCompiled's checks and program for a call whose tensors are all torch-style
    tensors (data_ptr, shape, stride, dtype, device), read without making cute tensors of them: per
    argument, its type and, for a tensor, its dtype, shape, strides, device and the alignment of its
    address (up to 256 bytes). None where an argument is another kind of tensor (the full path)."""
    key = []
    for a in args:
        ptr = getattr(a, "data_ptr", None)
        if ptr is None:
            if hasattr(a, "shape") or hasattr(a, "__dlpack__") or _real_leaves(a, 0):
                return None  # a cute tensor or an array, or an argument holding tensors: the full path
            key.append(type(a))
            continue
        try:
            p = ptr()
            align = min(p & -p, 256) if p else 0
            key.append((type(a), a.dtype, tuple(a.shape), a.stride(), a.device, align))
        except (TypeError, AttributeError, RuntimeError):
            return None
    return tuple(key)


def compile_fakes(target: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any],
                  _compile: Callable[..., Any]) -> FakeCompiled:
    """cute.compile on fake tensors: one trace with stand-ins (its prints and errors now), then a
    FakeCompiled. ``_compile`` is cute.compile's trace (launch/api.py, which calls this)."""
    env: Dict[int, int] = {}
    stand = tuple(_nested(a, lambda f: stand_in(f, env)) for a in args)
    # a cute.sym_int passed as a value (alone or in a tuple, as CUTLASS's tcgen05 primitives pass (M, N, K)):
    # a dynamic integer at the stand-in value of that sym_int (the one its fake tensors' extents take: after them)
    stand = tuple(_nested(a, lambda x: _sym_stand_in(x, env), SymInt) for a in stand)
    stand = tuple(stand_in_pointers(a) for a in stand)  # placeholder pointers: over stand-in memory
    _local.depth = getattr(_local, "depth", 0) + 1
    try:
        _compile(target, *stand, **kwargs)
    finally:
        _local.depth -= 1
    return FakeCompiled(target, args, dict(kwargs), _constexpr_positions(target, len(args)), _compile)


def _sym_stand_in(a: Any, env: Dict[int, int]) -> Any:
    """The SymInt a as a DynInt of its stand-in value."""
    v = env.setdefault(id(a), a.stand_in())
    return DynInt(v, "i64" if a.width == 64 else "i32", a.divisibility)


def _nested(x: Any, fn: Callable[[Any], Any], leaf: Any = None) -> Any:
    """x with fn applied to the fake tensors (or the instances of ``leaf``) it holds in tuples, lists, dicts
    and dataclass fields (quack's epilogue arguments: a dataclass of fake tensors); x itself when it holds none."""
    if isinstance(x, leaf or FakeTensor):
        return fn(x)
    if isinstance(x, dict):
        new_d = {k: _nested(v, fn, leaf) for k, v in x.items()}
        return x if all(new_d[k] is x[k] for k in x) else new_d
    ps = parts(x)
    return x if ps is None else rebuilt(x, [_nested(v, fn, leaf) for _, v in ps])


def _fake_leaves(x: Any) -> List[Any]:
    """The fake tensors x holds (see _nested), in order."""
    out: List[Any] = []
    _nested(x, lambda f: out.append(f) or f)
    return out


def stand_in(fake: FakeTensor, env: Dict[int, int]) -> Any:
    """A small real tensor for the compile-time trace in place of a fake one: the symbolic extents at stand-in values
    (the same SymInt, the same value), marked dynamic where they are symbolic."""
    shape, stride = fake.stand_in_values(env)
    span = 1 + sum((s - 1) * d for s, d in zip(shape, stride)) if all(shape) else 1
    item = np.dtype(fake.element_type.storage).itemsize
    align = max(fake.assumed_align, item)
    raw = np.zeros(span * item + align, np.uint8)
    off = (-raw.__array_interface__["data"][0]) % align
    flat = raw[off:off + span * item].view(fake.element_type.storage)
    arr = np.lib.stride_tricks.as_strided(flat, shape=shape, strides=tuple(d * item for d in stride))
    # the fake's element type (a BFloat16 fake's storage is uint16); arr keeps raw alive: its engine's owner
    t = _from_numpy(arr, fake.assumed_align, fake.element_type)
    t.engine.memspace = str(getattr(fake.memspace, "value", fake.memspace))  # what it prints: gmem by default
    sym_shape = [i for i, s in enumerate(fake.shape) if isinstance(s, SymInt)]
    if any(isinstance(d, SymInt) for d in fake.stride):
        # dynamic exactly where the fake is symbolic, as CuTe DSL's fake tensor: (?, 192):(?{i64}, 1)
        sh = tuple(DynInt(v, "i64" if s.width == 64 else "i32", s.divisibility) if isinstance(s, SymInt) else v
                   for s, v in zip(fake.shape, shape))
        st = tuple(DynInt(v, "i64", d.divisibility) if isinstance(d, SymInt) else v
                   for d, v in zip(fake.stride, stride))
        set_layout(t, sh, st)
        return t
    order = tuple(sorted(range(len(shape)), key=lambda i: (stride[i], shape[i]), reverse=True))
    for i in sym_shape:
        try:
            t = mark_compact_shape_dynamic(t, mode=i, stride_order=order, divisibility=fake.shape[i].divisibility)
        except TensorError:  # not compact: every mode dynamic
            return mark_layout_dynamic(t)
    wide = [i for i in sym_shape if fake.shape[i].width == 64]
    if wide:  # 64-bit symbolic extents print as ?{i64}, as CuTe DSL's do
        sh, st = flat_modes(t, "make_fake_tensor")
        sh = tuple(DynInt(shape[i], "i64", fake.shape[i].divisibility) if i in wide else x for i, x in enumerate(sh))
        set_layout(t, sh, st)
    return t
