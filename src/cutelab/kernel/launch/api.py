"""@cute.kernel, @cute.jit, ``kernel(...).launch(grid=..., block=...)`` and cute.compile.

A launch

1. checks the grid and block shapes;
2. turns each Tensor argument into a kernel parameter (one per distinct storage) and every
   other argument (layouts, shapes, ints) into a trace-time constant;
3. traces the kernel function once with symbolic thread and block indices (``trace.Tracer``);
4. proves every load and store in bounds for every thread of this grid (interval arithmetic
   on the index expressions, or exact evaluation over all threads when that is not enough): a
   launch that would touch memory outside a tensor is refused with a LaunchError, before
   anything runs;
5. on a GPU: prints CUDA C++ (``cuda.render``), compiles it with NVRTC through the disk cache
   (``compile.compile_cuda``) and launches it on the tensors' stream; on the CPU: runs the IR
   with numpy (``interpret.interpret``).

A compiled call (``f = cute.compile(fn, ...)``; ``f(...)``) and a remembered @cute.jit call
(JitFunction.__call__) skip all of that: each tensor argument passes a check prepared for its
compiled signature (kind of object, element type, layout, offset, storage size, device) and only
its address is read; an address must still be aligned as compiled, and when addresses change,
storages that were one must still be one and no written storage may overlap another under
__restrict__. The addresses go into a parameter buffer prepared once (driver.Launcher); scalar
arguments and deferred bounds checks are settled when the call is prepared. Anything else takes
the full check, whose error names what differs. A compiled call's checks and launches are
written out once as one generated Python function (``_direct_call``; CUTELAB_DIRECT_CALL=0
turns it off): it either launches or returns having done nothing, and the general path then
runs the same checks one by one.

Where a kernel runs: on the GPU when its tensors live on a GPU, in the CPU interpreter when
they live in host memory (numpy arrays, CPU torch tensors), or when ``interpret=True`` is
given to ``launch`` or ``@cute.kernel``, or ``CUTELAB_INTERPRET=1`` is set.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import types
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from ...errors import LaunchError, TraceError
from ..frontend.trace import tracing
from .args import (
    Constexpr,
    _as_tensor_args,
    _at_path,
    _c_name,
    _constexpr_positions,
    _dims,
    _has_tensors,
    _is_stream,
    _leaves_by_index,
)
from .compiled import CompiledFunction
from .plan import LaunchInfo, _local, _Plan, _prepare, capture, last_launch  # noqa: F401 (capture: re-exported)

__all__ = ["kernel", "jit", "compile", "Kernel", "JitFunction", "CompiledFunction", "Constexpr",
           "last_launch", "LaunchInfo"]





# --------------------------------------------------------------------------- kernels


class Kernel:
    """A @cute.kernel function. Calling it binds arguments; ``.launch(grid=, block=)`` runs it."""

    def __init__(self, fn: Callable, interpret: Optional[bool] = None):
        self.fn = fn
        self.interpret = interpret
        self.name = _c_name(fn.__name__)
        # the function's own names, as CuTe DSL's kernel objects keep them (kernel.__name__ in programs' prints)
        self.__name__, self.__qualname__, self.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
        self.__module__ = getattr(fn, "__module__", None)
        self.signature = inspect.signature(fn)
        self.plans: Dict[Any, Any] = {}  # traced (and compiled) launches, by what the trace depends on
        self._rewritten: Optional[Callable] = None

    def traced_fn(self) -> Callable:
        """The function traced: fn with its for/if/while rewritten into runtime regions where needed."""
        if self._rewritten is None:
            from ..frontend.rewrite import rewrite_function

            self._rewritten = rewrite_function(self.fn) or self.fn
        return self._rewritten

    def set_name_prefix(self, prefix: str) -> None:
        """Name the generated CUDA function after prefix (CuTe DSL's set_name_prefix)."""
        name = _c_name(str(prefix))
        if name != self.name:  # programs call this on every run of their jit function: keep the plans then
            self.name = name
            self.plans.clear()

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """@cute.kernel on a method: binds self (a compile-time argument)."""
        if obj is None:
            return self
        bound = _BoundKernel(self, obj)
        return bound

    def __call__(self, *args: Any, **kwargs: Any) -> "KernelCall":
        if tracing():
            raise TraceError(f"kernel {self.name} was called inside a kernel; kernels cannot launch kernels")
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise LaunchError(f"{self.name}{self.signature}: {e}") from None
        return KernelCall(self, bound)

    def __repr__(self) -> str:
        return f"<cute.kernel {self.name}>"


class _BoundKernel:
    """A @cute.kernel method bound to its object."""

    def __init__(self, k: "Kernel", obj: Any):
        self.k, self.obj = k, obj

    def __call__(self, *args: Any, **kwargs: Any) -> "KernelCall":
        return self.k(self.obj, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.k, name)


class KernelCall:
    """A kernel with its arguments, ready to launch."""

    def __init__(self, kernel: Kernel, bound: inspect.BoundArguments):
        self.kernel = kernel
        self.bound = bound

    def launch(self, grid: Any = (1, 1, 1), block: Any = (1, 1, 1), smem: int = 0, stream: Any = None,
               interpret: Optional[bool] = None, cluster: Any = None, **kw: Any) -> None:
        k = self.kernel
        # programmatic dependent launch changes no result here (kernels still run in stream order, so
        # griddepcontrol waits are met); a cooperative launch has every CTA resident at once (launch/cooperative.py)
        kw.pop("use_pdl", None)
        cooperative = kw.pop("cooperative", False)
        if not isinstance(cooperative, (bool, np.bool_, int)):
            raise LaunchError(f"{k.name}.launch: cooperative must be a bool, got {cooperative!r}")
        # SM100's preferred clusters: every cluster runs with the preferred shape (``cluster``), as the
        # GPU may run them all; the fallback shape is checked (launch/cluster.py). Merging the shared
        # memory of a kernel's branches changes no result (cutelab's allocations add up)
        fallback = kw.pop("fallback_cluster", None)
        kw.pop("smem_merge_branch_allocs", None)
        # CUDA events a launch attribute records (launch completion, programmatic dependent launch's event):
        # on the CPU a launch has finished every block before the host goes on, so they have fired
        events = {n: kw.pop(n) for n in ("launch_completion_event", "programmatic_event") if n in kw}
        for n in ("launch_completion_event_flags", "programmatic_event_flags",
                  "programmatic_event_trigger_at_block_start"):
            kw.pop(n, None)
        # min_blocks_per_mp: an occupancy hint (the second number of __launch_bounds__); no result depends on it
        min_blocks = kw.pop("min_blocks_per_mp", 0) or 0
        if isinstance(min_blocks, bool) or not isinstance(min_blocks, (int, np.integer)) or min_blocks < 0:
            raise LaunchError(f"{k.name}.launch: min_blocks_per_mp must be a non-negative int, got {min_blocks!r}")
        if kw:
            raise LaunchError(f"{k.name}.launch: unknown options {sorted(kw)}")
        if smem is None:
            smem = 0
        if isinstance(smem, bool) or not isinstance(smem, (int, np.integer)) or smem < 0:
            raise LaunchError(f"{k.name}.launch: smem must be a number of bytes, got {smem!r}")
        from .fakes import tracing_stand_ins

        grid3 = _dims(grid, "grid", k.name, tracing_stand_ins())
        block3 = _dims(block, "block", k.name)
        from ..frontend.trace import user_location
        from .cluster import cluster_shape

        cluster3 = cluster_shape(k.name, cluster, grid3, user_location())  # launch/cluster.py
        if fallback is not None:
            from .cluster import fallback_cluster_shape

            fallback_cluster_shape(k.name, fallback, cluster3, grid3, user_location())
        plan, storages, scalars = _prepare(k, self.bound, grid3, block3, interpret, cluster=cluster3,
                                           min_blocks=int(min_blocks), cooperative=bool(cooperative))
        if cooperative and plan.mode == "cpu":  # on the GPU the driver refuses a grid too large (cuda/driver.py)
            from .cooperative import check_cooperative

            check_cooperative(k.name, grid3, block3, max(int(smem or 0), sum(sh.bytes for sh in plan.ir.shared)),
                              user_location())
        given = [n for n, e in events.items() if e is not None]
        if given and plan.mode == "gpu":
            raise LaunchError(f"{k.name}.launch({given[0]}=...) at {user_location()}: cutelab does not set the "
                              f"launch's event attributes on the GPU yet (without a GPU the launch has completed "
                              f"when it returns, so the event has fired)")
        used = sum(sh.bytes for sh in plan.ir.shared)
        rec = getattr(_local, "recorder", None)
        if smem and used > smem:
            msg = f"{k.name}.launch: the kernel allocates {used} bytes of shared memory but the launch gives it smem={smem}"
            if rec is None:
                raise LaunchError(msg)
            # compiling (cute.compile / a @cute.jit function): CuTe DSL compiles this and reports it when the
            # kernel runs; cutelab warns now and launches the kernel with the shared memory it allocates
            import warnings

            warnings.warn(msg + f"; cutelab gives it the {used} bytes it allocates", stacklevel=3)
        if rec is not None:
            if stream is not None and getattr(rec, "keeps_streams", False):  # a jit function's launch: its stream
                from ..frontend.host import StreamedPlan

                plan = StreamedPlan(plan, stream)
            rec.append((plan, storages, scalars))
            streams = getattr(_local, "streams", None)
            if streams is not None:  # the stream of record entry i (others record other things too)
                streams[len(rec) - 1] = stream
            return None
        plan.run(storages, stream, scalars)
        return None


# --------------------------------------------------------------------------- scalar arguments


def kernel(fn: Optional[Callable] = None, *, interpret: Optional[bool] = None) -> Any:
    """Decorate a kernel function (``@cute.kernel``); ``interpret=True`` always runs it on the CPU."""
    if fn is None:
        return lambda f: Kernel(f, interpret)
    return Kernel(fn, interpret)


# --------------------------------------------------------------------------- jit and compile


class JitFunction:
    """A @cute.jit function: host code that runs in Python (layout algebra, launches). Arrays
    among its arguments become Tensors (from_dlpack)."""

    def __init__(self, fn: Callable):
        self.fn = fn
        self.name_prefix: Optional[str] = None
        self.calls: List[CompiledFunction] = []  # remembered calls, the latest first (see __call__)
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the function. A call that launched only GPU kernels on its arguments' storages,
        printed nothing and returned None is remembered (up to 8 per function): a later call
        with arguments of the same signature (tensors: kind, element type, layout, storage size,
        device, alignment; other arguments: equal values) launches the same kernels again
        without running the Python body. CUTELAB_JIT_CACHE=0 runs the body at every call (as
        CuTe DSL 4.8.1 does; the difference shows only in side effects of the body other than
        printing; the variable is read when a call would be remembered).

        CuTe DSL's call options are taken out of the keywords before the body runs, as its jit
        call does: ``no_cache=True`` runs the body (the call is neither replayed nor remembered);
        ``pipeline``, ``gpu_module_attrs``, ``no_jit_engine`` and ``export_name`` configure its
        MLIR compilation and change nothing here; ``compile_only`` and
        ``compile_to_precompiled_mlir`` are errors (use ``cute.compile``)."""
        kwargs, no_cache = _call_options(self.fn, kwargs)
        cache = not no_cache and not kwargs and getattr(_local, "recorder", None) is None
        if cache:
            for i, cf in enumerate(self.calls):
                if cf._replay(args):
                    if i:
                        self.calls.insert(0, self.calls.pop(i))
                    return None
            cache = os.environ.get("CUTELAB_JIT_CACHE", "1") != "0"
        raw = args
        args = tuple(_as_tensor_args(a) for a in args)
        kwargs = {k: _as_tensor_args(v) for k, v in kwargs.items()}
        if not cache:
            return run_jit(self.fn, args, kwargs)  # trace, then run the launches and host prints in order
        record: Dict[str, Any] = {}
        out, err = _CountingStream(sys.stdout), _CountingStream(sys.stderr)
        sys.stdout, sys.stderr = out, err
        try:
            ret = run_jit(self.fn, args, {}, record)
        finally:
            if sys.stdout is out:
                sys.stdout = out.inner
            if sys.stderr is err:
                sys.stderr = err.inner
        seen = record.get("recorded")
        if ret is None and not out.writes and not err.writes and seen:
            cf = _compiled_from(self.fn, raw, args, seen, {}, set(), remember=True)
            if cf is not None:
                cf.nargs = len(args)
                cf._build()
                cf.forget_tensors()
                self.calls.insert(0, cf)
                del self.calls[8:]
        return ret

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """@cute.jit on a method: a bound method (whose signature, as inspect reads it, is the
        user's without self; a functools.partial of __call__ would read as (*args, **kwargs))."""
        if obj is None:
            return self
        return types.MethodType(self, obj)

    def set_name_prefix(self, prefix: str) -> None:
        """CuTe DSL's name prefix of the generated function (kept for reference)."""
        self.name_prefix = str(prefix)

    def __repr__(self) -> str:
        return f"<cute.jit {self.fn.__name__}>"


def jit_target(fn: Any) -> Any:
    """The user's Python function behind what cute.compile was given, bound as the call binds it:
    a @cute.jit function (its function); a @cute.jit method taken from an object (the function
    bound to the object); an object whose class's __call__ is @cute.jit (a kernel class instance,
    as CUTLASS's examples pass them: its __call__'s function bound to it); anything else as given.
    Its signature is the one callers see (bound methods drop self), its __globals__ resolve string
    annotations: both decide which arguments are Constexpr and which are runtime values."""
    if isinstance(fn, JitFunction):
        return fn.fn
    if isinstance(fn, types.MethodType) and isinstance(fn.__func__, JitFunction):
        return types.MethodType(fn.__func__.fn, fn.__self__)
    if not isinstance(fn, (types.FunctionType, types.MethodType, type)):
        call = inspect.getattr_static(type(fn), "__call__", None)
        if isinstance(call, JitFunction):
            return types.MethodType(call.fn, fn)
    return fn


_MLIR_CALL_OPTIONS = ("pipeline", "gpu_module_attrs", "no_jit_engine", "export_name")


def _call_options(fn: Callable, kwargs: Dict[str, Any]) -> Tuple[Dict[str, Any], bool]:
    """The keywords of a @cute.jit call without CuTe DSL's call options (its ``_prepare_compilation``
    pops them whatever the function's parameters are), and whether ``no_cache`` was set."""
    if not kwargs:
        return kwargs, False
    kwargs = dict(kwargs)
    no_cache = bool(kwargs.pop("no_cache", False))
    for name in _MLIR_CALL_OPTIONS:
        kwargs.pop(name, None)
    for name in ("compile_only", "compile_to_precompiled_mlir"):
        if kwargs.pop(name, False):
            raise TypeError(f"{fn.__name__}(..., {name}=True): cutelab does not support this CuTe DSL call "
                            f"option; use cute.compile({fn.__name__}, ...) to compile without running")
    return kwargs, no_cache


def jit(fn: Optional[Callable] = None, **options: Any) -> Any:
    """Decorate a host function (``@cute.jit``). Its body runs in Python at each call, as CuTe
    DSL traces it: print() shows static values (``?`` for dynamic ones), kernel launches trace and
    compile (cached); the launches and host-side cute.printf/print_tensor then run, in order,
    after the body has returned (kernel/frontend/host.py)."""
    if fn is None:
        return lambda f: JitFunction(f)
    return JitFunction(fn)


class _CountingStream:
    """sys.stdout (or stderr) as it was, counting writes: did a @cute.jit call print?"""

    def __init__(self, inner: Any):
        self.inner = inner
        self.writes = 0

    def write(self, s: str) -> int:
        self.writes += 1
        return self.inner.write(s)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _compile(fn: Any, *args: Any, **kwargs: Any) -> CompiledFunction:
    """Trace and compile the kernel launches of a @cute.jit function once (cute.compile).

    The returned function takes the same tensor arguments (same element types, layouts and
    alignment; other data) and launches the compiled kernels without tracing again.
    """
    target = jit_target(fn)
    options = kwargs.pop("options", None)  # CuTe DSL's compiler options: kept only for export_to_c (TVM-FFI's form)
    args, kwargs, names = _keywords_as_positions(target, args, kwargs)
    cf = _compile_positional(target, args, kwargs)
    if isinstance(cf, CompiledFunction):
        const = _constexpr_positions(target, len(args))
        cf.arg_names = [names[i] for i in range(len(args)) if i not in const]
    from .aot import remember

    remember(cf, fn, args, kwargs, options, target=jit_target(fn))
    return cf


def _keywords_as_positions(target: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Tuple[Any, ...]:
    """(args, kwargs, parameter names of args): the keyword arguments that name parameters of target
    taken by position (a parameter left out before one given takes its default), as CuTe DSL binds
    them, so that the compiled function's callers may pass them by name too."""
    try:
        params = [p for p in inspect.signature(target).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params]
    args, kwargs = tuple(args), dict(kwargs)
    last = max((names.index(k) for k in kwargs if k in names[len(args):]), default=-1)
    if last >= len(args):
        filled = list(args)
        for p in params[len(args): last + 1]:
            if p.name in kwargs:
                filled.append(kwargs.pop(p.name))
            elif p.default is not p.empty:
                filled.append(p.default)
            else:
                raise TypeError(f"cute.compile({getattr(target, '__name__', target)}): the argument {p.name!r} is "
                                f"missing")
        args = tuple(filled)
    return args, kwargs, names[: len(args)] + [None] * (len(args) - len(names))


def _compile_positional(target: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
    from ...fake import has_fakes
    from .fakes import _fake_leaves, compile_fakes

    # ahead of time, for tensors described only (cutelab.fake), also inside a dataclass or tuple argument
    if has_fakes(args) or any(_fake_leaves(a) for a in args):
        return compile_fakes(target, args, kwargs, _compile)
    from .pointers import compile_pointers, has_placeholder_pointers

    if has_placeholder_pointers(args):  # make_ptr of a placeholder address: the real pointers come at each call
        return compile_pointers(target, args, kwargs, _compile)
    raw_args = args
    args = tuple(_as_tensor_args(a) for a in args)
    from ..frontend.host import dynamic_args

    args, kwargs = dynamic_args(target, args, kwargs)  # Int32 arguments are runtime values (DynInt)
    if getattr(_local, "recorder", None) is not None:
        raise LaunchError("cute.compile cannot be nested")
    _local.recorder = []
    _local.streams = {}
    from ..frontend.rewrite import rewrite_host_function

    try:
        rewrite_host_function(target)(*args, **kwargs)
        recorded = _local.recorder
        streams = _local.streams
    finally:
        _local.recorder = None
        _local.streams = None
    # Constexpr parameters are part of the compiled function: its callers leave them out
    const = _constexpr_positions(target, len(args))
    cf = _compiled_from(target, raw_args, args, recorded, streams, const, remember=False)
    assert cf is not None
    from ...dynamic import is_dynamic

    if cf.dyn_args or cf.proto_args or any(isinstance(p, int) and is_dynamic(t.layout)
                                           for p, t in cf.arg_tensors.items()):
        kept = [i for i in range(len(args)) if i not in const]  # the compiled function's positions
        cf.variants = (target, args, kwargs, {j: i for j, i in enumerate(kept)}, _compile)
    return cf


def _compiled_from(target: Any, raw_args: Tuple[Any, ...], args: Tuple[Any, ...], recorded: List[Any],
                   streams: Dict[int, Any], const: set, remember: bool) -> Optional[CompiledFunction]:
    """The CompiledFunction replaying the recorded launches of target(*args); for a @cute.jit call
    being remembered, None unless every launch is on the GPU and every storage it uses comes
    from the arguments."""
    arg_tensors = _leaves_by_index(args)
    engine_pos: Dict[int, Any] = {}
    for i, a in arg_tensors.items():
        engine_pos.setdefault(id(a.engine), i)
    plans = []
    streams = dict(streams)
    for n, (plan, storages, scalars) in enumerate(recorded):
        if isinstance(getattr(plan, "plan", None), _Plan):  # host.StreamedPlan: a launch and its stream=
            plan, streams[n] = plan.plan, plan.stream
        sources = [(engine_pos.get(id(st.engine)), st) for st in storages]
        if remember and (not isinstance(plan, _Plan) or plan.mode != "gpu" or any(p is None for p, _ in sources)):
            return None
        plans.append((plan, sources, scalars))

    def shift(pos: Any) -> Any:
        i = pos[0] if isinstance(pos, tuple) else pos
        j = i - sum(1 for c in const if c < i)
        return (j,) + pos[1:] if isinstance(pos, tuple) else j

    new_plans = [(plan, [(shift(p) if p is not None else None, st) for p, st in sources], scalars)
                 for plan, sources, scalars in plans]
    # a launch's stream: the argument it came from (by identity), else the stream object itself
    stream_src: List[Any] = []
    for n in range(len(recorded)):
        s = streams.get(n)
        i = next((i for i, a in enumerate(args) if s is not None and a is s), None)
        stream_src.append(("arg", shift(i)) if i is not None and i not in const else s)
    objects = {}
    for p in arg_tensors:
        try:
            objects[shift(p)] = _at_path(raw_args, p, "cute.compile")
        except LaunchError:
            pass
    cf = CompiledFunction(getattr(target, "__name__", "compiled"), new_plans,
                          {shift(p): t for p, t in arg_tensors.items()}, objects, stream_src)
    from ...dynamic import DynBool, DynFloat, DynInt

    from ..frontend.host import protocol_values

    if remember and (any(isinstance(a, (DynInt, DynFloat, DynBool)) for a in args)
                     or any(protocol_values(a) for a in raw_args)):
        return None  # a runtime value: compared by value it would be a constant; retrace instead

    proto = {} if remember else {i: protocol_values(raw_args[i]) for i in range(min(len(args), len(raw_args)))
                                 if i not in const and i not in arg_tensors}
    proto = {i: v for i, v in proto.items() if v}
    cf.proto_args = {shift(i): v for i, v in proto.items()}  # user types (JitArgument, DynamicExpression)
    cf.proto_objs = {shift(i): raw_args[i] for i in proto}
    cf.arg_static = {shift(i): a for i, a in enumerate(args)
                     if i not in arg_tensors and i not in const and not _has_tensors(a) and not _is_stream(a)
                     and not isinstance(a, (DynInt, DynFloat, DynBool)) and i not in proto}
    cf.dyn_args = {shift(i): a for i, a in enumerate(args)
                   if i not in const and isinstance(a, (DynInt, DynFloat, DynBool))}
    from .args import Skeleton

    for i, a in enumerate(args):  # what an argument holding tensors carries besides them: checked at each call
        if i not in const and _has_tensors(a) and not _is_stream(a):
            try:
                cf.arg_static[shift(i)] = Skeleton(a)
            except TypeError:  # a value with no key (no ==): it stays what the compile saw, as before
                pass
    return cf


class GenerateLineInfo:
    """A compile option of CuTe DSL (``cute.compile[cute.GenerateLineInfo(True)](...)``): accepted."""

    def __init__(self, enable: bool = True):
        self.enable = bool(enable)


class _CompileEntry:
    """``cute.compile``: call it, or give it options first (``cute.compile[options](fn, ...)``)."""

    __doc__ = _compile.__doc__

    def __call__(self, fn: Any, *args: Any, **kwargs: Any) -> CompiledFunction:
        return _compile(fn, *args, **kwargs)

    def __getitem__(self, options: Any) -> "_CompileEntry":
        return self

    def __repr__(self) -> str:
        return "<cute.compile>"


compile = _CompileEntry()  # noqa: A001 - CuTe DSL's name


def run_jit(fn: Callable[..., Any], args: Tuple[Any, ...], kwargs: Dict[str, Any],
            record: Optional[Dict[str, Any]] = None) -> Any:
    """Call a jit function's body: trace (Python prints now), then run what it launched and
    printed on the host, in order. Inside cute.compile or capture() (or a jit function calling
    another) the body only records: the outer one runs it. ``record`` (a dict) receives what ran
    as "recorded", from which JitFunction may remember the call."""
    from ..frontend.host import JitRecord, dynamic_args, dynamic_note
    from ..frontend.rewrite import rewrite_host_function, rewrite_traced_function

    if tracing():  # a @cute.jit helper called by a kernel: part of the kernel's trace, rewritten as kernels are
        return rewrite_traced_function(fn)(*args, **kwargs)
    fn_raw = fn
    fn = rewrite_host_function(fn)  # runtime loops as CuTe DSL has them
    if getattr(_local, "recorder", None) is not None:
        # a jit function called by another: inlined, its Python values stay static (as in CuTe DSL, where only the
        # outermost call's annotated int arguments become runtime values)
        return fn(*args, **kwargs)
    args, kwargs = dynamic_args(fn_raw, args, kwargs)
    _local.recorder = JitRecord()
    try:
        ret = fn(*args, **kwargs)
        recorded = _local.recorder
    except (ValueError, RuntimeError, TypeError) as e:
        note = dynamic_note(fn, args, kwargs)
        if note and hasattr(e, "add_note"):
            e.add_note(note)
        raise
    finally:
        _local.recorder = None
    for plan, storages, scalars in recorded:
        plan.run(storages, None, scalars)
    if record is not None:  # JitFunction remembers the call from what ran (_compiled_from)
        record["recorded"] = recorded
    return ret
