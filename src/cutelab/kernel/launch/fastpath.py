"""The generated fast path of a compiled call: per-argument checks prepared for the compiled
signature, and one Python function written out per compiled function that either launches or
returns having done nothing (``_direct_call``; ``CUTELAB_DIRECT_CALL=0`` turns it off).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, List, Optional, Tuple

from ...errors import LaunchError
from . import plan as _plan
from .args import _device_of, _is_storage_tensor, _same_static
from ...runtime import EnvStream
from .plan import _stream_handle


def _torch_check(env: Dict[str, Any], name: str, spec: Any) -> Tuple[str, int]:
    """(the condition that a torch tensor x is one the compiled call was made for, its address alignment):
    its type, element type, shape, strides (or contiguity) and device against the values ``spec`` holds,
    bound in ``env`` under names ending in ``name``."""
    ttype, tdt, shape, strides, dev, align = spec
    env.update({f"T{name}": ttype, f"D{name}": tdt, f"S{name}": shape, f"ST{name}": strides, f"V{name}": dev})
    lay = "x.is_contiguous()" if strides is None else f"x.stride() == ST{name}"
    return (f"type(x) is T{name} and x.dtype is D{name} and x.shape == S{name} and {lay} "
            f"and x.device == V{name}"), align


def _direct_call(cf: Any, fast: Any) -> Optional[Callable[[Any, Any], bool]]:
    """The compiled call as one generated function of (args, stream): the checks of each tensor
    argument written out (a torch tensor's type, element type, shape, strides or contiguity,
    device, address alignment; other objects through their getter), the static arguments, the
    address checks, then each launch's parameter writes and driver call. It returns False, having
    done nothing, when any check fails: CompiledFunction.__call__ then takes the general path,
    which names what differs (or finds another kind of object fine, and remembers it). With
    ``replay`` (a remembered @cute.jit call, CompiledFunction._replay) addresses that fail their
    checks give False as well: the jit function traces again. None when
    the call has something the generated code does not cover (tensors inside lists, host-side
    prints): the general path serves every call then. TMA descriptors are encoded again, as the
    general path does, only for an address their slot does not hold (instr.tma.TensorMapArgs.fill)."""
    if any(lau is None for _, lau, *_ in fast.launches):
        return None
    env: Dict[str, Any] = {"_same_static": _same_static, "_handle": _stream_handle, "_mod": _plan,
                           "LaunchError": LaunchError, "_ENV": EnvStream,
                           "_fast": fast, "_new_addresses": cf._new_addresses, "_NOFIELD": object()}
    need = 1 + max([pos if type(pos) is int else pos[0] for pos, _ in fast.getters] + [-1])

    def fetch(pos: Any) -> List[str]:  # x = the argument at pos: an int, or a path into nested lists/dataclasses
        if type(pos) is int:
            return [f"    x = args[{pos}]"]
        out = ["    x = args"]
        for i in pos:  # as args._at_path: a list or tuple at each step, long enough, or a dataclass's field
            if type(i) is str:  # (else the general path)
                out += [f"    x = getattr(x, {i!r}, _NOFIELD) if hasattr(x, '__dataclass_fields__') else _NOFIELD",
                        "    if x is _NOFIELD:", "        return False"]
                continue
            out += ["    if not isinstance(x, (list, tuple)) or len(x) <= %d:" % i,
                    "        return False", f"    x = x[{i}]"]
        return out

    lines = ["def direct(args, stream, replay=False):", "    n = len(args)"]
    if fast.nargs >= 0:
        lines.append(f"    if n != {fast.nargs}:")
        lines.append("        return False")
    elif need:
        lines.append(f"    if n < {need}:")
        lines.append("        return False")
    for k, (pos, get) in enumerate(fast.getters):
        spec = getattr(get, "torch", None)
        tspec = getattr(get, "tensor", None)
        if tspec is not None and not hasattr(get, "alternatives"):
            # a cutelab Tensor: its engine passed before and its layout (an object seen equal) and
            # offset are the compiled ones; else the getter's full check (which remembers the engine)
            tcls, engines, lay, seen, off = tspec
            env.update({f"T{k}": tcls, f"E{k}": engines, f"LY{k}": lay, f"SN{k}": seen, f"O{k}": off, f"G{k}": get})
            lines += fetch(pos)
            lines += [f"    m = E{k}.get(id(x.engine)) if type(x) is T{k} else None",
                      f"    if m is not None and m[0] is x.engine and x.offset == O{k} and "
                      f"(x.layout is LY{k} or SN{k}.get(id(x.layout)) is x.layout):",
                      f"        a{k} = m[1]",
                      "    else:",
                      f"        a{k} = G{k}(x)",
                      f"        if a{k} is None:",
                      "            return False"]
        elif spec is not None and not hasattr(get, "alternatives"):
            cond, align = _torch_check(env, str(k), spec)
            lines += fetch(pos)
            lines += [f"    if not ({cond}):",
                      "        return False",
                      f"    a{k} = x.data_ptr()",
                      f"    if a{k} % {align}:",
                      "        return False"]
        else:
            env[f"G{k}"] = get
            lines += fetch(pos)
            # torch tensors seen at this argument (the getter's alternatives made by the general
            # path, e.g. after a compile with fake tensors): their checks written out, tried first
            tspecs = [g.torch for g in getattr(get, "alternatives", ()) if getattr(g, "torch", None) is not None]
            for i, tspec_i in enumerate(tspecs):
                cond, align = _torch_check(env, f"{k}_{i}", tspec_i)
                lines += [f"    {'if' if i == 0 else 'elif'} ({cond}):",
                          f"        a{k} = x.data_ptr()",
                          f"        if a{k} % {align}:",  # the same alignment for every kind at this argument
                          "            return False"]
            ind = "    " if tspecs else ""
            if tspecs:
                lines.append("    else:")
            lines += [f"{ind}    a{k} = G{k}(x)", f"{ind}    if a{k} is None:", f"{ind}        return False"]
    for j, (pos, v0) in enumerate(fast.static):
        env[f"C{j}"] = v0
        lines += [f"    if n > {pos}:", f"        v = args[{pos}]",
                  f"        if v is not C{j} and not _same_static(v, C{j}):", "            return False"]
    for j, (pos, ty, v0) in enumerate(getattr(fast, "dyn", ())):
        # a runtime scalar (CuTe DSL's dynamic argument): this trace is for its value. The values a
        # call may give for it, by class (fast.dyn_ok: the traced value, and each value the general
        # path found to convert to it, e.g. quack's eps=1e-6 for the f32 1e-6, or Int32(-100));
        # another value takes CompiledFunction's general path, which finds (or makes) its trace
        env[f"RA{j}"] = fast.dyn_ok[j]  # (names of their own: T, V, ... name the tensors' checks)
        lines += [f"    if n <= {pos}:", "        return False", f"    v = args[{pos}]",
                  f"    s = RA{j}.get(v.__class__)", "    if s is None or v not in s:", "        return False"]
        if ty is float and v0 == 0.0:  # -0.0 and 0.0 are equal, but not the same argument bits
            env["_copysign"] = math.copysign
            lines += [f"    if not v and _copysign(1.0, v) != {math.copysign(1.0, v0)!r}:", "        return False"]
    addrs = "".join(f"a{k}, " for k in range(len(fast.getters)))
    env["PASSED"] = fast.passed
    lines += [f"    addrs = ({addrs})", "    if addrs != _fast.last:",
              "        if addrs in PASSED:",  # a workspace seen before: as _new_addresses would
              "            _fast.last = addrs",
              "        elif not replay:",
              "            _new_addresses(addrs)",  # raises the LaunchError that names the problem
              "        else:",  # a remembered @cute.jit call: storages now overlapping, or no longer shared
              "            try:", "                _new_addresses(addrs)", "            except LaunchError:",
              "                return False"]
    for j, (plan, launcher, slots, tm, spos, tdev, fixed) in enumerate(fast.launches):
        dev = fast.devices[j]
        env.update({f"P{j}": plan, f"L{j}": launcher, f"W{j}": launcher.params.values,
                    f"M{j}": f"at the next launch of {plan.ir.name}", f"DV{j}": dev})
        lines += [f"    ew = P{j}.error_word", "    if ew is not None and ew.word[0]:", f"        ew.check(M{j})"]
        lines += [f"    W{j}[{i}] = a{k}" for i, k in slots]
        if tm:  # TMA descriptors hold the tensors' addresses (they follow the kernel's own parameters)
            env[f"TM{j}"] = tm
            lines.append(f"    TM{j}.fill(L{j}.params, W{j}, {len(plan.ir.params)})")
        lines += ["    if stream is not None:", f"        h = _handle(stream, DV{j})"]
        if spos is not None:
            # a TVM-FFI call's env stream (runtime.EnvStream): torch's current stream on the launch's
            # device, looked up at each call (fakegpu replaces _torch_stream)
            lines += [f"    elif {spos} < n:", f"        s = args[{spos}]",
                      f"        h = _mod._env_stream(DV{j}) if s.__class__ is _ENV else _handle(s)",
                      "    else:", "        h = 0"]
        elif tdev is not None:
            lines += ["    else:", f"        h = _mod._torch_stream({int(tdev)})"]  # looked up at each call: fakegpu replaces it
        else:
            lines += ["    else:", f"        h = {int(fixed)}"]
        if getattr(launcher, "via", None) == "cuda-python":  # the driver call written out (Launcher.__call__)
            from ..cuda.driver import _ok as _driver_ok

            env.update({f"DC{j}": launcher._call, f"OK{j}": launcher._ok0, "_driver_ok": _driver_ok})
            lines += [f"    if h != L{j}._h:", f"        L{j}.bind(h)", f"    r = DC{j}(*L{j}._args)[0]",
                      f"    if r is not OK{j} and int(r) != 0:", "        _driver_ok((r,), 'cuLaunchKernel')"]
        else:
            lines.append(f"    L{j}(h)")
    lines.append("    return True")
    import builtins  # this module's `compile` is cute.compile

    exec(builtins.compile("\n".join(lines), f"<cutelab compiled call {cf.name}>", "exec"), env)  # noqa: S102
    fn = env["direct"]
    fn.source = "\n".join(lines)  # type: ignore[attr-defined]
    return fn


def _never(x: Any) -> None:
    return None


def _either(*gets: Callable[[Any], Optional[int]]) -> Callable[[Any], Optional[int]]:
    """A getter trying several (one per kind of object seen at this argument)."""
    flat: List[Any] = []
    for g in gets:
        flat += list(getattr(g, "alternatives", (g,)))

    def get(x: Any) -> Optional[int]:
        for g in flat:
            a = g(x)
            if a is not None:
                return a
        return None

    get.alternatives = tuple(flat)  # type: ignore[attr-defined]
    return get


def _cai_strides(cai: Dict[str, Any]) -> Any:
    st = cai.get("strides")
    return tuple(st) if st is not None else None


def _getter(t0: Any, obj: Any, align: int, exact_strides: bool = False) -> Callable[[Any], Optional[int]]:
    """A function of an argument: its storage address when it matches t0 (a Tensor that passed
    the full check; obj: what the caller gave for it) exactly: same kind of object, element
    type, layout, offset, storage size (at least), device, and an address aligned to align
    bytes; else None (the caller then runs the full check, which names what differs).
    exact_strides: a torch tensor's strides must be the same, where by default a contiguous tensor
    of the same shape passes whatever the strides of its extent-1 modes."""
    e0 = t0.engine
    if obj is not None and type(obj).__module__.startswith("torch") and hasattr(obj, "data_ptr"):
        ttype, tdt, shape, strides, dev = type(obj), obj.dtype, tuple(obj.shape), tuple(obj.stride()), obj.device
        if obj.is_contiguous() and not exact_strides:
            # same shape and contiguous: the same strides, but for extent-1 modes, whose stride
            # moves no coordinate (an offset of 0 either way); is_contiguous() is the cheaper call
            def get_torch(x: Any) -> Optional[int]:
                if (type(x) is ttype and x.dtype is tdt and x.shape == shape and x.is_contiguous()
                        and x.device == dev):
                    a = x.data_ptr()
                    if not a % align:
                        return a
                return None
        else:
            def get_torch(x: Any) -> Optional[int]:
                if (type(x) is ttype and x.dtype is tdt and x.shape == shape and x.stride() == strides
                        and x.device == dev):
                    a = x.data_ptr()
                    if not a % align:
                        return a
                return None

        # what it compares, for CompiledFunction's generated call (strides None: is_contiguous())
        get_torch.torch = (ttype, tdt, shape, None if obj.is_contiguous() and not exact_strides else strides,  # type: ignore
                           dev, align)
        return get_torch
    if obj is not None and hasattr(obj, "__cuda_array_interface__") and not _is_storage_tensor(obj):
        cai = obj.__cuda_array_interface__
        has_dev = hasattr(obj, "__dlpack_device__")
        otype = type(obj)
        desc = (cai["typestr"], tuple(cai["shape"]), _cai_strides(cai), tuple(obj.__dlpack_device__()) if has_dev else None)

        def get_cai(x: Any) -> Optional[int]:
            if type(x) is otype:
                c = x.__cuda_array_interface__
                if (c["typestr"], tuple(c["shape"]), _cai_strides(c),
                        tuple(x.__dlpack_device__()) if has_dev else None) == desc:
                    a = int(c["data"][0])
                    if not a % align:
                        return a
            return None

        return get_cai
    etype, dt, lay, off, n, dev0 = type(e0), e0.dtype, t0.layout, t0.offset, len(e0), getattr(e0, "device", None)
    if type(off) is not int:
        return _never

    tcls = type(t0)
    same = _SameLayout(lay)
    # engines that passed (id -> (engine, address)): a device engine's storage, type and address
    # are fixed when it is made (retyping a tensor gives it a new engine), so a workspace's
    # tensors pay the engine checks once
    from ...runtime import DeviceEngine

    engines: Dict[int, Tuple[Any, int]] = {}
    memo = etype is DeviceEngine

    def get_tensor(x: Any) -> Optional[int]:
        if type(x) is tcls:
            e = x.engine
            L = x.layout
            if (type(e) is etype and e.dtype is dt and (L is lay or same(L)) and x.offset == off
                    and len(e) >= n and getattr(e, "device", None) == dev0):
                a = e.address
                if not a % align:
                    if memo:
                        if len(engines) >= 64:
                            engines.clear()
                        engines[id(e)] = (e, a)
                    return a
        return None

    if memo:  # what CompiledFunction's generated call checks itself before calling get_tensor
        get_tensor.tensor = (tcls, engines, lay, same.seen, off)  # type: ignore[attr-defined]
    return get_tensor


class _SameLayout:
    """``layout == ref``, remembered for the layout objects that were equal (layouts are
    immutable): a tensor whose layout holds dynamic values (DynInt, compared one by one)
    pays the comparison once per layout object, then an identity test."""

    __slots__ = ("ref", "seen")

    def __init__(self, ref: Any):
        self.ref = ref
        self.seen: Dict[int, Any] = {}  # id -> the layout itself (kept, so that the id is not reused)

    def __call__(self, layout: Any) -> bool:
        if layout is self.ref or self.seen.get(id(layout)) is layout:
            return True
        if not (layout == self.ref):
            return False
        if len(self.seen) >= 64:
            self.seen.clear()
        self.seen[id(layout)] = layout
        return True


def _compact_size(layout: Any) -> Optional[int]:
    """The size of a static layout that maps its coordinates one to one onto [0, size) (its
    modes, sorted by stride, each start where the previous ends: a reordering of a contiguous
    array), else None."""
    from ...int_tuple import flatten_to_tuple

    try:
        modes = sorted((int(d), int(sh)) for sh, d in zip(flatten_to_tuple(layout.shape),
                                                         flatten_to_tuple(layout.stride)) if int(sh) != 1)
    except (TypeError, ValueError):  # dynamic values
        return None
    step = 1
    for d, sh in modes:
        if d != step:
            return None
        step *= sh
    return step


_REINTERPRETED: set = set()  # (compiled function, position, given layout) already warned about


def _reinterpretable(name: str, pos: Any, t0: Any, t: Any) -> bool:
    """A tensor whose static layout differs from the compiled one but covers the same contiguous
    storage (both one-to-one onto [0, n), the same n, offset 0) and has another shape: CuTe DSL's compiled functions
    read only its address and run with the compiled layout (CUTLASS's one-shot Lamport all-reduce
    benchmarks its 2-D compiled function on 1-D workspaces). cutelab does the same, with a warning
    naming both layouts, once per compiled function, argument and layout."""
    if t.offset != 0 or t0.offset != 0 or t.layout.shape == t0.layout.shape:
        return False  # the same shape with other strides (a transposed tensor) is a mistake to report
    n0, n = _compact_size(t0.layout), _compact_size(t.layout)
    if n0 is None or n != n0:
        return False
    key = (name, pos, str(t.layout), str(t0.layout))
    if key not in _REINTERPRETED:
        _REINTERPRETED.add(key)
        import warnings

        warnings.warn(f"{name}: argument {pos} has the layout {t.layout}, but the function was compiled with "
                      f"{t0.layout}; both cover the same {n} contiguous elements, so it runs with the compiled "
                      f"layout, as CuTe DSL's compiled functions do", stacklevel=4)
    return True


def _same(name: str, pos: Any, t0: Any, t: Any) -> None:
    e0, e = t0.engine, t.engine
    problems = []
    if e.dtype.name != e0.dtype.name:
        problems.append(f"element type {e.dtype} instead of {e0.dtype}")
    if t.layout != t0.layout and not _reinterpretable(name, pos, t0, t):
        from ...dynamic import value_of

        problems.append(f"layout {value_of(t.layout)} instead of {value_of(t0.layout)}")
    if t.offset != t0.offset:
        problems.append(f"offset {t.offset} instead of {t0.offset}")
    if len(e) < len(e0):
        problems.append(f"{len(e)} elements of storage instead of {len(e0)}")
    align = int(getattr(e0, "align", 1) or 1)
    if int(e.address) % align:
        problems.append(f"address 0x{int(e.address):x} not aligned to {align} bytes")
    d, d0 = _device_of(e, getattr(e, "data", None)), _device_of(e0, getattr(e0, "data", None))
    if d != d0:
        problems.append(f"device {d[0]}:{d[1]} instead of {d0[0]}:{d0[1]}")
    if problems:
        raise LaunchError(f"{name}: argument {pos} does not match the compiled kernel: " + "; ".join(problems))
