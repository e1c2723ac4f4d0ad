"""A compiled function (``cute.compile``, a remembered ``@cute.jit`` call): its plans, the check of
each call's arguments against the compiled signature, and its launches.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
from typing import Any, Dict, List, Optional, Tuple

from ...dynamic import DynBool, DynInt, dyn_scalar, is_dynamic, value_of
from ...errors import LaunchError
from ..frontend.host import fill_constexpr, protocol_values
from . import plan as _plan
from .args import _at_path, _is_storage_tensor, _same_static, _Storage
from .fastpath import _direct_call, _either, _getter, _never, _same
from ...runtime import EnvStream
from .plan import _check_no_alias, _launch_device, _Plan, _stream_handle, _torch_device, env_stream_now


_MAX_VARIANTS = 64
_MISSING = object()  # an argument a call by name left out


def _remark(name: str, pos: int, t0: Any, t: Any) -> Any:
    """t (a tensor or an array of this call) with the dynamic leaves of t0's layout (the tensor the
    function was compiled with): same dynamic modes, types and divisibilities; static modes must
    not change."""
    from ...dynamic import DynInt, value_of
    from ...errors import LaunchError
    from ...int_tuple import flatten_to_tuple
    from ...layout import Layout
    from ...tensor import Tensor

    if not _is_storage_tensor(t):
        from ...runtime import from_dlpack

        t = from_dlpack(t, assumed_align=t0.engine.align)
    L0, L = t0.layout, t.layout
    f0s, f0d = flatten_to_tuple(L0.shape), flatten_to_tuple(L0.stride)
    fs, fd = flatten_to_tuple(L.shape), flatten_to_tuple(L.stride)
    if not isinstance(L, Layout) or len(fs) != len(f0s):
        raise LaunchError(f"{name}: argument {pos} has the layout {value_of(L)}, but the function was compiled for "
                          f"a tensor of {len(f0s)} modes ({L0})")

    def leaf(old: Any, new: Any, what: str, i: int) -> Any:
        if isinstance(old, DynInt):
            if old.div and int(new) % old.div:
                raise LaunchError(f"{name}: argument {pos}: the {what} {int(new)} of mode {i} is not divisible by "
                                  f"{old.div}, the divisibility the function was compiled with ({L0})")
            return DynInt(int(new), old.dtype, old.div)
        if int(new) != int(old):
            raise LaunchError(f"{name}: argument {pos}: the {what} of mode {i} is {int(new)}, but the function was "
                              f"compiled with the static {what} {int(old)} ({L0}); mark it dynamic, or compile again")
        return int(old)

    shape = tuple(leaf(a, b, "extent", i) for i, (a, b) in enumerate(zip(f0s, fs)))
    stride = tuple(leaf(a, b, "stride", i) for i, (a, b) in enumerate(zip(f0d, fd)))
    if not isinstance(L0.shape, tuple):
        shape, stride = shape[0], stride[0]
    from ...int_tuple import unflatten

    new = Layout(unflatten(shape, L0.shape), unflatten(stride, L0.stride))
    return Tensor(t.engine, new, t.offset, _checked=True)


def _scalar_of(d: Any, v: Any) -> Any:
    """v as a value of d's type (wrapped or rounded as the type does): int or float."""
    from ...numeric import FloatValue, IntValue

    if d.dtype.kind == "bool":
        return bool(v)
    x = IntValue(d.dtype, int(v)) if d.dtype.is_integer else FloatValue(d.dtype, float(v))
    return int(x) if d.dtype.is_integer else float(x)


_NAN_KEY = ("nan",)  # every NaN, as one key (NaN != NaN would miss its variant at every call)
_NEG_ZERO_KEY = ("-0.0",)  # -0.0 == 0.0, but their argument bits differ


def _scalar_key(d: Any, v: Any) -> Any:
    """v as a value of d's type (``_scalar_of``), as a key: a float's NaN and -0.0 made distinct."""
    x = _scalar_of(d, v)
    if type(x) is float:
        if x != x:
            return _NAN_KEY
        if x == 0.0 and math.copysign(1.0, x) < 0:
            return _NEG_ZERO_KEY
    return x


def _traced_key(cf: Any, pos: int, d: Any) -> Any:
    """``_scalar_key`` of the value cf traced its runtime scalar at pos with, made once per function."""
    keys = cf.__dict__.get("_traced_keys")
    if keys is None:
        keys = cf._traced_keys = {}
    k = keys.get(pos, keys)
    if k is keys:
        k = keys[pos] = _scalar_key(d, d.value)
    return k


def _accept_scalars(cf: Any, args: Tuple[Any, ...]) -> None:
    """Remember, for cf's generated check (fastpath ``RA``), the values this call gave cf's runtime
    scalars that convert to the values cf was traced with (quack passes eps=1e-6, a Python float, to
    a function traced for the f32 nearest it; cross-entropy passes Int32(-100)): the next call with
    them passes the generated check. At most 8 classes and 64 values per argument."""
    fast = cf._fast or cf._build()
    for j, (pos, d) in enumerate(cf.dyn_args.items()):
        if pos >= len(args) or j >= len(fast.dyn_ok):
            continue
        v = args[pos]
        by_class = fast.dyn_ok[j]
        seen = by_class.get(v.__class__)
        try:
            if seen is not None and v in seen:  # accepted before (the common case: no conversion)
                continue
            if _scalar_key(d, v) != _traced_key(cf, pos, d):
                continue
            if seen is None:
                if len(by_class) >= 8:
                    continue
                seen = by_class[v.__class__] = set()
            if len(seen) < 64:
                seen.add(v)
        except (TypeError, ValueError, OverflowError):  # a value the generated check cannot hold: the general path
            continue


def _respecialize(cf: Any, args: Tuple[Any, ...]) -> Any:
    """The compiled function to run for these arguments: cf itself when its dynamic values (Int32
    arguments, the extents and strides of tensors with dynamic layouts) are the ones it was traced
    with, else a trace for the new values, made once (without its trace-time prints: a compiled
    CuTe DSL function prints none) and kept (at most 64 per compiled function).

    The cache key of a compiled function: the values of its dynamic arguments and of its tensors'
    dynamic extents and strides. Everything else is fixed at compile time and checked at each call
    (element types, static layout modes, alignment, device, the other arguments' values).
    """
    key: List[Any] = []
    mine: List[Any] = []
    for pos in sorted(cf.dyn_args):
        if pos >= len(args):
            raise LaunchError(f"{cf.name}: expected an argument at position {pos} (compiled with "
                              f"{int(cf.dyn_args[pos])}), got {len(args)} arguments")
        v, d = args[pos], cf.dyn_args[pos]
        ok = (isinstance(v, int) if isinstance(d, DynInt) else isinstance(v, (int, float)))
        if (isinstance(v, bool) and d.dtype.kind != "bool") or not ok:
            raise LaunchError(f"{cf.name}: argument {pos} was compiled as a runtime {d.dtype} "
                              f"(given {d.value}); got {v!r} ({type(v).__name__})")
        key.append(_scalar_key(d, v))
        mine.append(_traced_key(cf, pos, d))
    proto = getattr(cf, "proto_args", None) or {}
    for pos in sorted(proto):
        vals = protocol_values(args[pos]) if pos < len(args) else None
        if vals is None or [t for t, _ in vals] != [t for t, _ in proto[pos]]:
            raise LaunchError(f"{cf.name}: argument {pos} was compiled as a {type(cf.proto_objs[pos]).__name__} "
                              f"carrying runtime values {[str(t) for t, _ in proto[pos]]}; got {args[pos] if pos < len(args) else 'nothing'!r}")
        key.append(tuple(x for _, x in vals))
        mine.append(tuple(x for _, x in proto[pos]))
    tensors = {}
    dyn_pos = getattr(cf, "_dyn_tensor_pos", None)
    if dyn_pos is None:  # the tensors with dynamic layouts, found once (with their layout's memo)
        from .fastpath import _SameLayout

        dyn_pos = cf._dyn_tensor_pos = [(p, t0, _SameLayout(t0.layout)) for p, t0 in cf.arg_tensors.items()
                                        if isinstance(p, int) and is_dynamic(t0.layout)]
    for pos, t0, same in dyn_pos:
        if pos < len(args):
            t = args[pos]
            lay = getattr(t, "layout", None)
            if lay is t0.layout or (getattr(t, "engine", None) is not None and same(lay)):
                continue  # the compiled values (the common case: no work per call)
            t = _remark(cf.name, pos, t0, t)
            tensors[pos] = t
            key.append(value_of(t.layout))
            mine.append(value_of(t0.layout))
    key_t = tuple(key)
    if key_t == tuple(mine):
        return cf
    target, cargs, kwargs, orig, compile_ = cf.variants
    cache = getattr(cf, "_variant_cache", None)
    if cache is None:
        cache = {}
        cf._variant_cache = cache
    other = cache.get(key_t)
    if other is None:
        new_args = list(cargs)
        for pos, i in orig.items():  # this call's arguments, at the compiled function's positions
            if pos < len(args):
                new_args[i] = args[pos]
        for pos, d in cf.dyn_args.items():
            v = _scalar_of(d, args[pos])
            new_args[orig[pos]] = (DynInt(v, d.dtype, track=False) if isinstance(d, DynInt) else
                                   DynBool(v) if isinstance(d, DynBool) else dyn_scalar(d.dtype, v))
        for pos, t in tensors.items():
            new_args[orig[pos]] = t
        for pos in proto:  # a user type: dynamic_args makes its values runtime values again (its Constexpr
            new_args[orig[pos]] = fill_constexpr(cargs[orig[pos]], args[pos])  # fields left None: the compile's)
        with contextlib.redirect_stdout(io.StringIO()):
            other = compile_(target, *new_args, **kwargs)
        # as strict as cf (FakeCompiled's): its generated call may be a wrapper's _hot
        other.exact_strides, other.min_align, other.nargs = cf.exact_strides, cf.min_align, cf.nargs
        if len(cache) >= _MAX_VARIANTS:
            cache.pop(next(iter(cache)))
        cache[key_t] = other
    return other


def _plain(d: Any) -> Tuple[type, Any]:
    """A dynamic argument's Python type and value, as a call passes it (int, bool, float)."""
    from ...dynamic import DynBool, DynInt

    if isinstance(d, DynBool):
        return bool, bool(d.value)
    if isinstance(d, DynInt):
        return int, int(d)
    return float, float(d)


class CompiledFunction:
    """The launches of a jit function, traced and compiled once (``cute.compile``): call it
    with tensors of the same element types, layouts and alignment to run them again without
    tracing."""

    def __init__(self, name: str, plans: List[Tuple[_Plan, List[Tuple[Optional[int], _Storage]]]],
                 arg_tensors: Dict[int, Any], arg_objects: Optional[Dict[Any, Any]] = None,
                 streams: Optional[List[Any]] = None):
        self.name = name
        self.plans = plans
        self.arg_tensors = arg_tensors  # position -> the Tensor given at compile time
        self.arg_static: Dict[int, Any] = {}  # position -> other arguments given at compile time
        self.arg_objects = arg_objects or {}  # position -> what the caller gave (a Tensor, torch tensor, array)
        self.streams = streams or [None] * len(plans)  # per launch: an argument position ("arg", i), a stream or None
        self.nargs = -1  # the number of arguments a @cute.jit call replaying this must give
        self._forgotten = False
        self._fast: Any = None
        self.dyn_args: Dict[int, Any] = {}  # position -> dynamic values (DynInt) given at compile time
        self.variants: Any = None  # (target, args, kwargs, positions, api._compile): _respecialize's traces for other dynamic values
        self._last_variant: Any = None  # the variant the last call ran: its generated check is tried first
        self._by_value: Dict[Any, Any] = {}  # the scalar arguments' values -> the trace a call with them ran
        # the generated call (fast.direct) of this function or of one of its variants that ran a call last:
        # passing its checks, a call does what this function's call would (see __call__); wrappers
        # (FakeCompiled, compat.tvm_ffi.TvmFfiFunction) try it before anything else
        self._hot: Any = None
        # set by FakeCompiled before the first call: the generated checks compare strides exactly (not
        # "contiguous") and addresses to at least these alignments (position -> the fake's assumed_align),
        # so that passing them means passing the fakes' checks too
        self.exact_strides = False
        self.min_align: Dict[Any, int] = {}

    def _by_position(self, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Tuple[Any, ...]:
        """The call's arguments by position: those passed by name go to their parameter's place (the
        jit function's parameters without its Constexpr ones, as cute.compile bound them)."""
        names = list(getattr(self, "arg_names", None) or ())
        out = list(args) + [_MISSING] * max(0, len(names) - len(args))
        for k, v in kwargs.items():
            if k not in names:
                raise TypeError(f"{self.name}: the compiled function has no argument named {k!r} (its arguments: "
                                f"{', '.join(n for n in names if n) or 'none by name'})")
            i = names.index(k)
            if i < len(args):
                raise TypeError(f"{self.name}: the argument {k!r} is given by position and by name")
            out[i] = v
        while out and out[-1] is _MISSING:
            out.pop()
        if _MISSING in out:
            missing = [names[i] for i, v in enumerate(out) if v is _MISSING]
            raise TypeError(f"{self.name}: the arguments {missing} are missing")
        return tuple(out)

    def export_to_c(self, *args: Any, **kwargs: Any) -> None:
        """CuTe DSL's ahead-of-time export (kernel/launch/aot.py)."""
        from .aot import export_to_c

        export_to_c(self, args, kwargs)

    def __call__(self, *args: Any, stream: Any = None, **kwargs: Any) -> None:
        if kwargs:
            args = self._by_position(args, kwargs)
        fast = self._fast or self._build()
        direct = fast.direct
        if self.variants is not None:  # dynamic values (Int32 arguments, dynamic layouts): a trace per value
            # the trace an earlier call with these scalar values ran, tried first (a signal cycling 0, 1, 2, as
            # the Lamport all-reduce's does); only a hint: its generated check decides, as for any trace
            vk = hit = None
            if fast.dyn_pos:  # (dynamic layouts alone: their trace is found by _last_variant or _respecialize)
                try:
                    vk = tuple([args[p] for p in fast.dyn_pos])
                    hit = self._by_value.get(vk)
                except (IndexError, TypeError):  # too few arguments, or one that is no scalar: the full path
                    vk = None
            if hit is not None:
                hdirect = (hit._fast or hit._build()).direct
                if hdirect is not None and hdirect(args, stream):
                    self._hot = hdirect
                    return None
            # every tensor passing the generated checks has its compiled layout: this trace's values
            # (it checks the dynamic arguments' values too: fast.dyn). Each trace's generated call
            # accepts only its own values, so at most one of them passes: the order tried is free
            if hit is not self and direct is not None and direct(args, stream):
                self._hot = direct
                return None
            last = self._last_variant  # the trace the previous call ran (quack passes one eps every step)
            if last is not None and last is not hit:  # (hit's check has just failed)
                ldirect = (last._fast or last._build()).direct
                if ldirect is not None and ldirect(args, stream):
                    self._hot = ldirect
                    return None
            other = _respecialize(self, args)
            if vk is not None:
                if len(self._by_value) >= _MAX_VARIANTS:
                    self._by_value.pop(next(iter(self._by_value)))
                self._by_value[vk] = other
            if self.dyn_args:  # this call's scalar values, for the generated check of the trace they convert to
                _accept_scalars(other, args)
            if other is not self:
                self._last_variant = other
                other(*args, stream=stream)
                if other._hot is not None:
                    self._hot = other._hot
                return None
            direct = fast.direct  # (it may have been written again for another kind of tensor)
            if direct is not None and direct(args, stream):
                self._hot = direct
                return None
        elif direct is not None and direct(args, stream):
            self._hot = direct
            return None
        if self._forgotten:
            if not self._replay(args, stream):
                raise LaunchError(f"{self.name}: the arguments do not match this remembered call")
            return None
        if fast.cpu:
            return self._run_general(args, stream)
        # the tensors: a signature check per argument, then only the address is read
        addrs = None
        if fast.flat:  # every tensor is an argument itself (not in a list): one pass
            try:
                addrs = [get(args[pos]) for pos, get in fast.getters]
            except IndexError:
                addrs = None
            if addrs is not None and None in addrs:
                addrs = None
        if addrs is None:
            addrs = []
            for pos, get in fast.getters:
                try:
                    x = args[pos] if type(pos) is int else _at_path(args, pos, self.name)
                except IndexError:
                    x = None
                a = get(x)
                if a is None:  # another kind of object or signature: the full check (and its error)
                    a = self._check(args, pos, x)
                addrs.append(a)
        for pos, v0 in fast.static:
            if pos < len(args):
                v = args[pos]
                if v is not v0 and not _same_static(v, v0):
                    self._static_error(pos, v, v0)
        if tuple(addrs) != fast.last:
            self._new_addresses(addrs)
        self._launch(fast, args, addrs, stream)
        if fast.direct is not None and self._hot is None:
            # the generated call, rewritten by _check for a new kind of object (a FakeCompiled program traced with
            # symbolic Tensors, called with torch tensors), is tried first from the next call: its checks decide
            self._hot = fast.direct

    def _launch(self, fast: Any, args: Any, addrs: List[int], stream: Any) -> None:
        for (plan, launcher, slots, tm, spos, tdev, fixed), dev in zip(fast.launches, fast.devices):
            if launcher is None:  # a recorded host action (not a kernel): it runs itself, in order
                plan.run((), stream, ())
                continue
            ew = plan.error_word
            if ew is not None and ew.word[0]:  # a guarded access of an earlier launch left its tensor
                ew.check(f"at the next launch of {plan.ir.name}")
            vals = launcher.params.values
            for i, k in slots:
                vals[i] = addrs[k]
            if tm:  # TMA descriptors hold the tensors' addresses: encode them again
                tm.fill(launcher.params, [int(vals[j]) for j in range(len(plan.ir.params))], len(plan.ir.params))
            if stream is not None:
                h = _stream_handle(stream, dev)
            elif spos is not None:
                h = _stream_handle(args[spos], dev) if spos < len(args) else 0
            elif tdev is not None:
                h = _plan._torch_stream(tdev)  # looked up at each call: fakegpu replaces it
            else:
                h = fixed
            launcher(h)

    def _replay(self, args: Tuple[Any, ...], stream: Any = None) -> bool:
        """For a @cute.jit call: launch again if args match this compiled signature exactly (same
        number of arguments, every tensor passing its fast check, every other argument equal);
        False, launching nothing, otherwise."""
        fast = self._fast or self._build()
        if fast.cpu or len(args) != fast.nargs:
            return False
        if fast.direct is not None:
            return fast.direct(args, stream, True)
        try:
            if fast.flat:  # every tensor is an argument itself: one pass
                addrs = [get(args[pos]) for pos, get in fast.getters]
                if None in addrs:
                    return False
            else:
                addrs = []
                for pos, get in fast.getters:
                    a = get(args[pos] if type(pos) is int else _at_path(args, pos, self.name))
                    if a is None:
                        return False
                    addrs.append(a)
            for pos, v0 in fast.static:
                v = args[pos]
                if v is not v0 and not _same_static(v, v0):
                    return False
            if tuple(addrs) != fast.last:
                self._new_addresses(addrs)  # storages now overlapping, or no longer shared: trace again
        except LaunchError:
            return False
        self._launch(fast, args, addrs, stream)
        return True

    def _build(self) -> Any:
        """What each call needs, prepared once: per tensor argument a getter that checks its
        signature and returns its address; per launch its prepared parameter buffer."""
        class Fast:
            pass

        fast = Fast()
        fast.getters = [(pos, _getter(t0, self.arg_objects.get(pos), self._align(pos, t0), self.exact_strides))
                        for pos, t0 in self.arg_tensors.items()]
        index = {pos: k for k, (pos, _) in enumerate(fast.getters)}
        fast.flat = all(type(pos) is int for pos, _ in fast.getters)
        fast.static = list(self.arg_static.items())
        fast.dyn = [(pos, *_plain(d)) for pos, d in self.dyn_args.items()]
        fast.dyn_ok = [{ty: {v0}} for _, ty, v0 in fast.dyn]  # class -> values the generated check accepts
        fast.dyn_pos = tuple(pos for pos, _, _ in fast.dyn)  # their positions: the by-value lookup's key
        fast.nargs = self.nargs
        fast.launches = []
        fast.devices = []  # per launch: the device index of its GPU storages (a TVM-FFI env stream's device)
        fast.cpu = []
        groups: Dict[int, List[int]] = {}  # storages shared by several arguments at compile time
        for pos, t0 in self.arg_tensors.items():
            groups.setdefault(id(t0.engine), []).append(index[pos])
        fast.groups = [g for g in groups.values() if len(g) > 1]
        for (plan, sources, scalars), strm in zip(self.plans, self.streams):
            if not isinstance(plan, _Plan):  # something else recorded in order (e.g. a host-side print)
                fast.launches.append((plan, None, [], None, None, None, 0))
                fast.devices.append(None)
                continue
            plan.check_scalars(scalars)
            if plan.mode != "gpu":
                fast.cpu.append(plan)
                continue
            from ..cuda.driver import Launcher

            # its own parameter buffer: the plan is shared with other compiled functions and with
            # KernelCall launches, which may hold other scalar values and fixed storages
            launcher = Launcher(plan.fn, plan.grid, plan.ir.block, plan.smem,
                                len(plan.ir.params) + len(plan.tensor_maps or ()),  # TMA maps follow
                                cluster=plan.ir.cluster)
            slots = []
            for i, (pos, st) in enumerate(sources):
                if pos is None:
                    launcher.params.values[i] = st.address
                else:
                    slots.append((i, index[pos]))
            for i, bits in plan.scalar_slots(scalars):
                launcher.params.values[i] = bits
            spos = strm[1] if isinstance(strm, tuple) and strm[0] == "arg" else None
            if type(strm) is EnvStream:  # an env stream made in the jit function: the current stream at each call
                fixed, tdev = 0, _launch_device([st for _, st in sources])
            else:
                fixed = _stream_handle(strm) if strm is not None and spos is None else 0
                tdev = _torch_device([st for _, st in sources]) if strm is None else None
            tm = plan.tensor_maps if plan.tensor_maps is not None and len(plan.tensor_maps) else None
            fast.launches.append((plan, launcher, slots, tm, spos, tdev, fixed))
            fast.devices.append(_launch_device([st for _, st in sources]))
        fast.last = None  # the tuple of addresses that last passed _new_addresses
        fast.passed = {}  # address tuples that passed _new_addresses
        fast.direct = None
        self._fast = fast
        if not fast.cpu and not getattr(self, "proto_args", None) and os.environ.get("CUTELAB_DIRECT_CALL", "1") != "0":
            # (a user type's runtime values are read through its protocol: the general path)
            fast.direct = _direct_call(self, fast)
        return fast

    def forget_tensors(self) -> None:
        """Drop the tensors seen at compile time (a remembered @cute.jit call must not keep its
        first arguments' memory alive); only the prepared fast checks remain, so a call that
        fails them is not launched here (_replay answers False)."""
        self.arg_tensors = {pos: None for pos in self.arg_tensors}
        self.arg_objects = {}
        self.plans = [(plan, [(pos, st.description()) for pos, st in sources], scalars)
                      for plan, sources, scalars in self.plans]
        self._forgotten = True

    def _align(self, pos: Any, t0: Any) -> int:
        """The alignment a call's address at pos must have: the compiled tensor's (what its code may
        assume), and at least min_align's."""
        return max(int(getattr(t0.engine, "align", 1) or 1), self.min_align.get(pos, 1))

    def _check(self, args: Any, pos: Any, x: Any) -> int:
        """The full check of argument pos against the compiled signature (LaunchError if it does
        not match); its address when it does."""
        t0 = self.arg_tensors[pos]
        t = _at_path(args, pos, self.name)
        if not _is_storage_tensor(t):
            t = self._as_tensor(pos, t0, t)
        _same(self.name, pos, t0, t)
        # it matches: from now on objects like this one take a fast check too
        fast = self._fast
        k = next(k for k, (p, _) in enumerate(fast.getters) if p == pos)
        p, get = fast.getters[k]
        if len(getattr(get, "alternatives", ())) < 4:
            new = _getter(t, x, self._align(pos, t0), self.exact_strides)  # x's description, t0's alignment
            if new is not _never:
                fast.getters[k] = (p, _either(get, new))
                if fast.direct is not None:  # the generated call checks the new kind of object too
                    fast.direct = _direct_call(self, fast)
        return int(t.engine.address)

    def _as_tensor(self, pos: Any, t0: Any, x: Any) -> Any:
        """x (an array or torch tensor given where the compiled function has a tensor) as a
        Tensor (from_dlpack, whose errors name a misaligned or unsupported array); a LaunchError
        naming the position when x is no array at all (a list, a number, None)."""
        from ...runtime import from_dlpack

        if not any(hasattr(x, a) for a in ("__dlpack__", "__cuda_array_interface__", "__array_interface__",
                                           "__array__")):
            raise LaunchError(
                f"{self.name}: argument {pos} (counting the arguments a call gives, Constexpr ones left out) is "
                f"a {type(x).__name__}, but the function was compiled with a tensor there ({t0.element_type}, layout "
                f"{t0.layout}); give the arguments in the compiled order"
            )
        return from_dlpack(x, assumed_align=t0.engine.align)

    def _run_general(self, args: Any, stream: Any) -> None:
        """Launches with interpreted kernels: storages with their host memory, as KernelCall does."""
        new: Dict[Any, _Storage] = {}
        for pos, t0 in self.arg_tensors.items():
            t = _at_path(args, pos, self.name)
            if not _is_storage_tensor(t):
                t = self._as_tensor(pos, t0, t)
            _same(self.name, pos, t0, t)
            new[pos] = _Storage(t.engine, f"argument {pos}")
        for pos, v0 in self.arg_static.items():
            if pos < len(args) and not _same_static(args[pos], v0):
                self._static_error(pos, args[pos], v0)
        for (plan, sources, scalars), strm in zip(self.plans, self.streams):
            sts = [new[pos] if pos is not None else st for pos, st in sources]
            if stream is None and isinstance(strm, tuple) and strm[0] == "arg":  # the stream argument of this call
                strm = args[strm[1]] if strm[1] < len(args) else None
            s = stream if stream is not None else strm
            if type(s) is EnvStream:  # a TVM-FFI call's: torch's current stream (a CUDA graph captures by it)
                s = env_stream_now()
            plan.run(sts, s, scalars)

    def _new_addresses(self, addrs: List[int]) -> None:
        """Checks that depend on where the storages are, not on their description: arguments that
        were one storage at compile time still are, and no written storage overlaps another in a
        kernel compiled with __restrict__ pointers. They depend on the addresses alone: the last
        addresses that passed are remembered (calls cycling through a few workspaces pay a
        dictionary lookup)."""
        fast = self._fast
        key = tuple(addrs)
        if key in fast.passed:
            fast.last = key
            return
        for g in fast.groups:
            if any(addrs[k] != addrs[g[0]] for k in g):
                names = [str(fast.getters[k][0]) for k in g]
                raise LaunchError(
                    f"{self.name}: arguments {', '.join(names)} were one storage when the function was compiled "
                    f"(one kernel parameter), but now differ; call cute.compile again with these tensors"
                )
        for plan, launcher, slots, _, _, _, _ in fast.launches:
            if launcher is not None and plan.restrict and len(plan.storages) > 1:
                vals = [launcher.params.values[i] for i in range(len(plan.storages))]
                for i, k in slots:
                    vals[i] = addrs[k]
                _check_no_alias(plan, vals)
        if len(fast.passed) >= 256:
            fast.passed.clear()
        fast.passed[key] = True
        fast.last = key

    def _static_error(self, pos: int, v: Any, v0: Any) -> None:
        from .args import _is_storage_pointer

        if _is_storage_pointer(v) and _is_storage_pointer(v0):
            raise LaunchError(
                f"{self.name}: argument {pos} is {v!r}, a pointer to other memory (or another element or type) than "
                f"the function was compiled with ({v0!r}): a pointer given to cute.compile is bound to the memory it "
                f"pointed to; call cute.compile again for another one (or pass a tensor)"
            )
        raise LaunchError(
            f"{self.name}: argument {pos} is {v!r}, but the function was compiled with {v0!r}; "
            f"an argument that is not a number, a tensor or a runtime value of a user type (a tuple, a layout, an "
            f"object) is a compile-time value: call cute.compile again for another one"
        )
