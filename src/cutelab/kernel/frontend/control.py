"""Control flow inside kernels: ``cutlass.range``, ``const_expr``, ``dynamic_expr`` and the
runtime half of the AST rewrite (rewrite.py).

A ``for`` over ``cutlass.range`` (or over ``range`` with a runtime bound), an ``if`` or a
``while`` on a runtime value becomes a region of the kernel IR (``For``/``If``/``While``): its
body is traced once. Everything static stays Python: ``range`` with int bounds is unrolled,
``if`` on a Python value (or ``cutlass.const_expr(...)``) picks its branch at trace time.

Dynamic values (cutelab.dynamic.DynInt: runtime values of CuTe DSL whose value cutelab knows)
count as runtime values here: ``for i in range(n)`` over a DynInt ``n`` is a runtime loop whose
bound is n's value (not unrolled), an ``if`` on a DynBool (a comparison of DynInts in a kernel) is
a runtime branch whose condition is its known value (both sides are traced, as in CuTe DSL), and a
``while`` on a DynBool is a runtime loop (its body traced once, not once per trip: CUTLASS's Hopper
FMHA's ``while k_tile_count > 0`` over a dynamic sequence length printed one copy of its body per
KV tile, 64 at 8192). Its counters are carried in registers: a DynInt or a Python int the body
changes is promoted to a runtime Int32 there (carry.py), as CuTe DSL promotes it.

Python variables that a runtime loop or branch reassigns are *carried*: the rewritten kernel
passes their values in and out of the region through the helpers here, which keep tensor values
(TensorSSA) in mutable registers (``carry.Carry``). A variable holding a static Python value (an
int, a layout) must not change inside a runtime region: that would need a runtime value, and is
refused.

>>> list(range_constexpr(3))
[0, 1, 2]
>>> const_expr(2 > 1)
True
"""

from __future__ import annotations

import builtins
from typing import Any, Dict, Optional, Sequence, Tuple

from ...dynamic import DynBool, DynInt
from ...errors import TraceError
from ...numeric import FloatValue, IntValue
from ..ir.symbolic import is_sym
from ..ir.nodes import Assign, Compute
from . import carry_obj
from .carry import UNDEF, Carry, carryable, describe, in_scope, promotable, promoted
from .ptx_regs import Regions
from .trace import TraceValue, active, current

__all__ = ["range_", "range_constexpr", "const_expr", "dynamic_expr", "DynRange", "UNDEF"]


def _tracer() -> Any:
    return active()


def _is_dynamic(x: Any) -> bool:
    if isinstance(x, TraceValue):
        return True
    if is_sym(x):
        d = getattr(x, "decided", None)
        if d is not None:
            return False
        return not (x.lo == x.hi)
    return False


class DynRange:
    """``cutlass.range(start, stop, step, unroll=N, unroll_full=False)``: a loop that stays a loop
    in the kernel (the CUDA printer asks for ``#pragma unroll N``); outside a kernel, a range."""

    def __init__(self, start: Any, stop: Any, step: Any, unroll: Optional[int] = None, unroll_full: bool = False):
        self.start, self.stop, self.step = start, stop, step
        self.unroll = 0 if unroll_full else unroll

    def __iter__(self) -> Any:
        if _tracer() is None:
            return iter(builtins.range(self.start, self.stop, self.step))
        raise TraceError(
            "cutlass.range(...) inside a kernel needs the kernel's loops rewritten: use it as the iterable "
            "of a 'for' statement written in a @cute.kernel function (whose source cutelab can read)"
        )


def predicate_flag(p: Any) -> Any:
    """A predicate element: True/False when static, else an IR condition (a symbolic condition,
    kept as such so the launch can prove accesses under it, or a register Ref)."""
    if isinstance(p, TraceValue):
        if len(p.refs) != 1:
            raise TraceError(f"cute.copy: a predicate element must be one value, got {p}")
        r = p.refs[0]
        if isinstance(r, (int, float, bool)):
            return bool(r)
        return r
    if _is_dynamic(p):
        return p
    return bool(p)


def _range_args(args: Sequence[Any], what: str) -> Tuple[Any, Any, Any]:
    if not 1 <= len(args) <= 3:
        raise TraceError(f"{what} expects 1 to 3 arguments (stop | start, stop[, step]), got {len(args)}")
    if len(args) == 1:
        return 0, args[0], 1
    if len(args) == 2:
        return args[0], args[1], 1
    return args[0], args[1], args[2]


def _as_bound(x: Any, what: str) -> Any:
    if isinstance(x, bool):
        raise TraceError(f"{what}: a loop bound must be an integer, got {x!r}")
    if isinstance(x, TraceValue):
        # a runtime integer in a register (a loop-carried Int32, a min/max the ranges do not decide):
        # the bound reads the register when the loop starts
        if len(x.refs) != 1 or x.dtype.kind not in ("int", "uint"):
            raise TraceError(f"{what}: a loop bound must be one integer, got the tensor value {x}")
        x = x.as_index()
    if is_sym(x):
        return x if not (x.lo == x.hi) else x.lo
    if isinstance(x, int):
        return int(x)
    if isinstance(x, TraceValue) and len(x.refs) == 1 and x.dtype.kind in ("int", "uint"):
        return x.as_index()  # an Int32 computed in the kernel (a trip count from runtime arguments)
    if hasattr(x, "__index__"):
        return int(x.__index__())
    raise TraceError(f"{what}: a loop bound must be an integer or a runtime integer, got {type(x).__name__} {x!r}")


def range_(*args: Any, unroll: Optional[int] = None, unroll_full: bool = False, prefetch_stages: Optional[int] = None,
           **hints: Any) -> DynRange:
    """cutlass.range: a runtime loop (``for i in cutlass.range(n)``), even when n is static.

    CuTe DSL's scheduling hints change no result and are accepted as such: ``prefetch_stages``
    (how many iterations ahead its compiler may issue the loop's TMA loads), ``pipelining``,
    ``vectorize``."""
    bad = set(hints) - {"pipelining", "vectorize"}
    if bad:
        raise TypeError(f"cutlass.range() got unexpected keyword arguments {sorted(bad)}")
    if prefetch_stages is not None and (isinstance(prefetch_stages, bool) or not isinstance(prefetch_stages, int)
                                        or prefetch_stages < 0):
        raise TraceError(f"cutlass.range(prefetch_stages={prefetch_stages!r}): expected a static int >= 0")
    a, b, c = _range_args(args, "cutlass.range")
    if unroll_full and _tracer() is not None and not any(_is_dynamic(x) for x in (a, b, c)):
        # fully unrolled with static bounds: the loop variable is a Python int, as the DSL's unrolled copies see it
        return builtins.range(_as_bound(a, "cutlass.range"), _as_bound(b, "cutlass.range"), _as_bound(c, "cutlass.range"))
    return DynRange(_as_bound(a, "cutlass.range"), _as_bound(b, "cutlass.range"), _as_bound(c, "cutlass.range"),
                    unroll, unroll_full)


def range_constexpr(*args: Any) -> builtins.range:
    """cutlass.range_constexpr: a loop unrolled at trace time (its bounds must be static ints)."""
    for a in args:
        if _is_dynamic(a):
            why = ""
            if is_sym(a):  # an index expression: its own error names what it reads (a launch dimension, ...)
                try:
                    int(a)
                except TraceError as e:
                    why = f" ({e})"
            raise TraceError(f"cutlass.range_constexpr: its bounds must be compile-time ints, got a runtime value{why}")
    return builtins.range(*[int(a) for a in args])


def const_expr(x: Any) -> Any:
    """cutlass.const_expr: x must be known at trace time; the branch or loop it controls is Python."""
    if _is_dynamic(x):
        raise TraceError(f"cutlass.const_expr: the expression is a runtime value ({describe(x)}), "
                         f"not a compile-time constant")
    if is_sym(x):
        return bool(x)
    return x


class _Dyn:
    def __init__(self, x: Any):
        self.x = x


def dynamic_expr(x: Any) -> Any:
    """cutlass.dynamic_expr: make the branch or loop a runtime one even when x is static."""
    return _Dyn(x) if _tracer() is not None else x


# --------------------------------------------------------------------------- helpers of the rewrite


def _runtime_int(x: Any) -> bool:
    """A value CuTe DSL knows only at run time: symbolic, a tensor value, or a DynInt/DynBool
    (whose value cutelab knows: the region it controls is still a runtime region)."""
    return _is_dynamic(x) or isinstance(x, (DynInt, DynBool))


def py_conv(fn: Any, x: Any, where: str) -> Any:
    """``int(x)`` / ``float(x)`` in a kernel: a runtime value (a tensor value, a thread-dependent
    index, a runtime scalar) has no Python number at trace time, and CuTe DSL refuses the
    conversion; a static value converts as in Python."""
    if fn is builtins.int or fn is builtins.float:
        t = _tracer()
        if t is not None and (_runtime_int(x) or type(x).__name__ == "DynFloat"):
            raise TraceError(
                f"kernel {t.name}: {fn.__name__}() of a runtime value ({describe(x)}) at {where}: it has no Python "
                f"value while the kernel is traced (CuTe DSL refuses it too); convert it with "
                f"cutlass.{'Int32' if fn is builtins.int else 'Float32'}(x) or x.to(...)")
    return fn(x)


def py_minmax(fn: Any, *args: Any, **kw: Any) -> Any:
    """``min(...)`` / ``max(...)`` in a kernel: with a runtime value among the arguments, cutlass.min/max
    (CuTe DSL's preprocessor redirects the builtins the same way); otherwise, or when the name is not
    the builtin (shadowed), the call as written."""
    if (fn is builtins.min or fn is builtins.max) and not kw and _tracer() is not None:
        vals = tuple(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
        if any(_is_dynamic(v) for v in vals):
            return _min_max(fn.__name__, vals)
    return fn(*args, **kw)


def py_range(fn: Any, *args: Any, **kw: Any) -> Any:
    """The iterable of ``for ... in range(...)``: builtins.range unless a bound is a runtime value
    (a DynInt bound, e.g. a dynamic shape, makes a runtime loop over its value: not unrolled).

    In a kernel, ``range`` takes CuTe DSL's ``unroll=`` / ``unroll_full=`` too: a loop with static
    bounds is unrolled at trace time anyway; one with runtime bounds passes them to the loop."""
    if fn is builtins.range and (kw or _tracer() is not None):
        bad = set(kw) - {"unroll", "unroll_full"}
        if bad:
            raise TraceError(f"range(...) in a kernel takes the keywords unroll and unroll_full, got {sorted(bad)}")
        if _tracer() is not None and any(_runtime_int(a) for a in args):
            a, b, c = _range_args(args, "range")
            return DynRange(_as_bound(a, "range"), _as_bound(b, "range"), _as_bound(c, "range"),
                            kw.get("unroll"), bool(kw.get("unroll_full", False)))
        return fn(*args)
    return fn(*args, **kw)


def _cond_ref(t: Any, c: Any, where: str) -> Any:
    """The IR condition of a runtime branch: an Expr or a register Ref."""
    if isinstance(c, _Dyn):
        c = c.x
    if isinstance(c, TraceValue):
        if len(c.refs) != 1:
            raise TraceError(f"kernel {t.name}: the condition at {where} is a tensor value of shape "
                             f"{c.shape}; a branch needs one value (reduce it, or use cute.where)")
        t.check_refs(c.refs, "a condition")
        return c.refs[0]
    if is_sym(c):
        return c
    return int(bool(c))  # a static value or a DynBool/DynInt: its known value


# a static `for _ in range(n)` with n above this and an unused index may stay a loop (CuTe DSL's range
# is always one). Unrolled, each copy is compiled again: sgemm's 8 k-tiles at its default size printed
# 8 mainloops (4950 CUDA lines, 4096 FMAs) that took nvcc 4.7 s; as a loop, 2647 lines and 1.2 s.
UNROLL_LIMIT = 4


class Loop:
    """``for target in ITER`` of a rewritten kernel (see rewrite.py)."""

    def __init__(self, it: Any, names: Sequence[str], values: Dict[str, Any], where: str, jumps: bool = False,
                 var_unused: bool = False, loop_targets: Sequence[str] = (), local: Sequence[str] = (),
                 invoked: Sequence[str] = ()):
        t = _tracer()
        self.dynamic = False
        self.where = where
        if isinstance(it, _Dyn):
            it = it.x
            if isinstance(it, builtins.range):
                it = DynRange(it.start, it.stop, it.step)
        if (t is not None and var_unused and not jumps and isinstance(it, builtins.range) and len(it) > UNROLL_LIMIT
                and all(carryable(values.get(n, UNDEF)) for n in names)):
            # a long static loop whose index the body never reads, and whose changing variables a
            # runtime loop can carry: a runtime loop (as CuTe DSL's range is), not len(it) copies
            it = DynRange(it.start, it.stop, it.step)
        if t is not None and isinstance(it, DynRange):
            if jumps:
                raise TraceError(f"kernel {t.name}: 'break', 'continue' or 'return' inside the runtime loop at "
                                 f"{where} is not supported (use a condition inside the loop instead)")
            self.dynamic = True
            self.t = t
            self.range = it
            self.carry = Carry(t, names, values, where, "loop", loop_targets, local, invoked)
            self.state = 0
            self.ptx = Regions(t, "loop", where)  # inline PTX's function-scope registers (ptx_regs)
        else:
            if isinstance(it, DynRange):
                it = builtins.range(it.start, it.stop, it.step)
            self.it = iter(it)

    def __iter__(self) -> "Loop":
        return self

    def __next__(self) -> Any:
        if not self.dynamic:
            return next(self.it)
        t = self.t
        if self.state == 0:
            self.state = 1
            t.location = self.where
            self.carry.declare()
            r = self.range
            step = r.step
            if is_sym(step) and step.launch_value() is not None:
                # a launch dimension's arithmetic (cute.arch.grid_dim(): quack's grid-stride loops): a loop's step is
                # static in cutelab's IR, so it takes the launch's value, as a layout's shape does
                step = step.launch_value()
            if not isinstance(step, int):
                raise TraceError(f"kernel {t.name}: the loop at {self.where} needs a static step, got {r.step!r}")
            self.op, var = t.begin_for(r.start, r.stop, step, r.unroll)
            return var
        t.end_for(self.op)
        raise StopIteration

    def enter(self) -> Tuple[Any, ...]:
        return self.carry.values()

    def leave(self, now: Dict[str, Any]) -> None:
        self.carry.leave(now)
        self.ptx.check()

    def exit(self) -> Tuple[Any, ...]:
        return self.carry.values(fresh=False)


class Branch:
    """``if COND: ... else: ...`` of a rewritten kernel."""

    def __init__(self, cond: Any, names: Sequence[str], values: Dict[str, Any], where: str, jumps: bool = False,
                 loop_targets: Sequence[str] = (), invoked: Sequence[str] = ()):
        t = _tracer()
        self.where = where
        forced = isinstance(cond, _Dyn)
        self.dynamic = t is not None and (forced or _runtime_int(cond))
        if not self.dynamic:
            self.value = bool(cond.x if forced else cond)
            return
        if jumps:
            raise TraceError(f"kernel {t.name}: 'break', 'continue' or 'return' inside the runtime branch at "
                             f"{where} is not supported")
        self.t = t
        t.location = where
        self.carry = Carry(t, names, values, where, "branch", loop_targets, invoked=invoked)
        self.carry.declare()
        self.op = t.begin_if(_cond_ref(t, cond, where))
        self.outer = t.cur
        self.set_in: Dict[str, int] = {}
        from .carry_escape import Escapes

        self.escapes = Escapes(t, self.op, self.outer, self.carry.pre, where)  # objects changed in place unnamed
        self.ptx = Regions(t, "branch", where)

    def then(self) -> bool:
        if not self.dynamic:
            return self.value
        self.t.cur = self.op.then
        return True

    def orelse(self) -> bool:
        if not self.dynamic:
            return not self.value
        self.t.cur = self.op.orelse
        return True

    def restore(self) -> Tuple[Any, ...]:
        """The variables as the else arm starts: their values before the branch (objects of CuTe DSL's value
        protocol rebuilt around the branch's registers, as ``enter`` gives them to the then arm)."""
        return self.enter(self.carry.pre)

    def enter(self, now: Dict[str, Any]) -> Tuple[Any, ...]:
        """The variables as an arm starts. An object that the branch carries by CuTe DSL's value protocol
        (a pipeline state, a tile scheduler: carry_obj) is rebuilt around the branch's registers, as CuTe
        DSL rebuilds it from the scf.if's operands (``__new_from_mlir_values__``), so that what an arm
        computes from it, or changes in it in place, is that arm's runtime value; the rest as they were."""
        c = self.carry
        return tuple(c._snap(n) if carry_obj.rebuilt_in_arms(c.regs.get(n)) else now.get(n, UNDEF) for n in c.names)

    def _in_scope_sym(self, e: Any) -> bool:
        try:
            self.t.check_index(e, "")
        except TraceError:
            return False
        return True

    def leave(self, now: Dict[str, Any]) -> None:
        if not self.dynamic:
            return
        from ...numeric import FloatValue, IntValue

        c = self.carry
        for n in c.names:  # tensor values first bound inside a branch get a register too
            v = now.get(n, UNDEF)
            if c.pre[n] is UNDEF and isinstance(v, TraceValue) and n not in c.regs and in_scope(self.t, v):
                # (a value of a loop inside the branch that was local to that loop has no value here)
                r = self.t.new_reg(v.dtype, len(v.refs), mutable=True)
                c.regs[n] = (r, v.shape)
            elif c.pre[n] is UNDEF and n not in c.regs and (promotable(v) or isinstance(v, (IntValue, FloatValue))):
                # a number first bound inside a runtime branch: a runtime value of its type (CuTe DSL
                # promotes `if c: y = 3 else: y = 7` to an Int32 the branch yields)
                pv = v if isinstance(v, (IntValue, FloatValue)) else promoted(v)
                c.regs[n] = (self.t.new_reg(pv.dtype, 1, mutable=True), ())
            elif c.pre[n] is UNDEF and n not in c.regs and (isinstance(v, DynInt) or (is_sym(v) and self._in_scope_sym(v))):
                # a runtime integer first bound inside a runtime branch (an index expression over the thread
                # index, a dynamic value): a runtime Int32 (Int64 past its range) the branch yields; without a
                # register the value after the branch was the last arm's, whichever arm a thread took
                from ...numeric import Int32, Int64

                lo, hi = (int(v), int(v)) if isinstance(v, DynInt) else (v.lo, v.hi)
                dt = v.dtype if isinstance(v, DynInt) else (Int32 if -(1 << 31) <= lo and hi < (1 << 31) else Int64)
                c.regs[n] = (self.t.new_reg(dt, 1, mutable=True), ())
            if c.pre[n] is UNDEF and v is not UNDEF:
                self.set_in[n] = self.set_in.get(n, 0) + 1
        c.leave(now)
        self.escapes.end_arm()
        self.ptx.check()
        self.t.cur = self.outer

    def exit(self) -> Tuple[Any, ...]:
        c = self.carry
        self.escapes.exit()
        out = []
        for n in c.names:
            if n in c.regs and (c.pre[n] is not UNDEF or self.set_in.get(n, 0) == 2):
                out.append(c.after(n))
            else:
                out.append(c.last[n])
        return tuple(out)


class WhileLoop:
    """``while COND:`` of a rewritten kernel: ``while True`` with the condition tested inside."""

    def __init__(self, names: Sequence[str], values: Dict[str, Any], where: str, jumps: bool = False,
                 invoked: Sequence[str] = (), local: Sequence[str] = (), loop_targets: Sequence[str] = ()):
        self.t = _tracer()
        self.names = names
        self.invoked = invoked
        self.local = local
        self.loop_targets = loop_targets
        self.values_ = values
        self.where = where
        self.jumps = jumps
        self.dynamic = False
        self.state = "static"
        self.iterations = 0

    @property
    def in_region(self) -> bool:
        return self.state == "cond"

    def enter(self) -> Tuple[Any, ...]:
        return self.carry.values()

    def restart(self, c: Any) -> bool:
        """True once, when the condition first turns out to be a runtime value: the loop then
        starts over inside a While region, with the carried variables read from registers."""
        if self.state != "static" or self.t is None:
            return False
        # a comparison of thread- or block-dependent values that their ranges decide on the first test (a
        # persistent scheduler's `while tile_idx < num_tiles` where no block starts past the last tile) is a
        # runtime loop, as in CuTe DSL: the values it carries change, and the next test may not be decided
        # (a loop that leaves by break or return stays static: a runtime while cannot)
        ranged = not self.iterations and not self.jumps and is_sym(c) and getattr(c, "decided", None) is not None
        # a DynBool (a comparison of dynamic values: a trip count from a dynamic shape or an Int32 argument) is a
        # runtime condition in CuTe DSL: an scf.while, whatever value cutelab knows it has (a loop that leaves
        # by break or return stays static, as the ranged one does)
        known = not self.iterations and not self.jumps and isinstance(c, DynBool)
        # a cutlass scalar (``flag = cutlass.Boolean(1); while flag:``, CUTLASS's grouped mixed-input GEMM) is a
        # value in a register in CuTe DSL, constant or not: its while is an scf.while from the start
        # (a variable of the loop's own, which its body sets: an attribute such as a static scheduler's
        # work_tile.is_valid_tile keeps the loop static, as before: CUTLASS's FMHA forward relies on it)
        scalar = not self.iterations and not self.jumps and isinstance(c, (IntValue, FloatValue)) and any(
            self.values_.get(n) is c for n in self.names)
        if not (isinstance(c, _Dyn) or _is_dynamic(c) or ranged or known or scalar):
            return False
        t = self.t
        if self.iterations:
            raise TraceError(f"kernel {t.name}: the condition of the while loop at {self.where} became a runtime "
                             f"value after {self.iterations} iterations at trace time; make it a runtime value "
                             f"from the start (cutlass.dynamic_expr) or keep it static")
        if self.jumps:
            raise TraceError(f"kernel {t.name}: 'break', 'continue' or 'return' inside the runtime while loop at "
                             f"{self.where} is not supported")
        t.location = self.where
        self.carry = Carry(t, self.names, self.values_, self.where, "while loop", self.loop_targets, self.local,
                            invoked=self.invoked)
        self.carry.declare()
        self.op = t.begin_while()
        self.ptx = Regions(t, "while loop", self.where)
        self.dynamic = True
        self.state = "cond"
        return True

    def test(self, c: Any) -> bool:
        if self.state == "static":
            if isinstance(c, _Dyn):
                c = c.x
            self.iterations += 1
            return bool(c)
        t = self.t
        if self.state == "cond":
            self.op.cond = _cond_ref(t, c, self.where)
            t.cur = self.op.body
            self.state = "body"
            return True
        # state "done": the body was traced once; close the region
        t.end_while(self.op)
        self.state = "closed"
        return False

    def leave(self, now: Dict[str, Any]) -> None:
        if self.state == "body":
            self.carry.leave(now)
            self.ptx.check()
            self.state = "done"

    def exit(self) -> Tuple[Any, ...]:
        return self.carry.values(fresh=False) if not self.carry.regs else tuple(
            self.carry.after(n) if n in self.carry.regs else self.carry.last[n] for n in self.carry.names)


def ifexp(c: Any, a: Any, b: Any) -> Any:
    """``A if C else B`` in a kernel (a and b are thunks): static C picks one. With a runtime C, CuTe
    DSL's rewrite makes then- and else-blocks under an scf.if: each thread evaluates only the side it
    takes. Here a side with a memory access (``acc[lane] if lane < n else 0``: no load for a thread
    past n) makes a runtime branch; sides that only compute are both evaluated and selected, the
    same values. Outside a kernel both sides are evaluated and selected."""
    if isinstance(c, _Dyn):
        c = c.x
    if not _is_dynamic(c):
        return a() if c else b()
    from .trace import user_location

    t = _tracer()
    if t is not None:
        # sides that only compute (no load, no other effect) are both evaluated and selected, as before: a
        # select keeps what the value ranges know (sgemm's `k + 1 if k + 1 < n else 1` stays provably in
        # bounds); a side with a memory access makes it a runtime branch (each thread runs only its side)
        cur, n0 = t.cur, len(t.cur.ops)
        va = a()
        pure = t.cur is cur and all(type(op) in (Compute, Assign) for op in cur.ops[n0:])
        if pure:
            n1 = len(cur.ops)
            vb = b()
            pure = t.cur is cur and all(type(op) in (Compute, Assign) for op in cur.ops[n1:])
            if pure:
                return _select(c, va, vb)
        del cur.ops[n0:]  # traced again inside the branch
        name = "(the value of a conditional expression)"
        br = Branch(c, (name,), {}, user_location() or "?")
        if br.dynamic:
            br.then()
            br.leave({name: a()})
            br.orelse()
            br.restore()
            br.leave({name: b()})
            (out,) = br.exit()
            return out

    return _select(c, a(), b())


def _select(c: Any, va: Any, vb: Any) -> Any:
    """va where the runtime condition c holds, else vb, per thread."""
    from ...numeric import Float32, Int32
    from .trace import where

    if isinstance(va, TraceValue) or isinstance(vb, TraceValue):
        return where(_as_bool(c), va, vb)
    dt = getattr(va, "dtype", None) or getattr(vb, "dtype", None)
    if dt is None:
        dt = Float32 if isinstance(va, float) or isinstance(vb, float) else Int32
    cond = _as_bool(c)
    return cond._emit("select", (cond, va, vb), dt, dt)


def and_(a: Any, b: Any) -> Any:
    """``a and b`` in a kernel condition: b is a thunk (short-circuit for static a)."""
    if not _is_dynamic(a):
        r = b() if a else a
        return DynBool(r) if isinstance(a, DynBool) and isinstance(r, bool) else r
    vb = b()
    if not _is_dynamic(vb):
        return _as_bool(a) if vb else vb
    return _as_bool(a) & _as_bool(vb)


def or_(a: Any, b: Any) -> Any:
    if not _is_dynamic(a):
        r = a if a else b()
        return DynBool(r) if isinstance(a, DynBool) and isinstance(r, bool) else r
    vb = b()
    if not _is_dynamic(vb):
        return True if vb else _as_bool(a)
    return _as_bool(a) | _as_bool(vb)


def _holds_runtime(x: Any) -> bool:
    if isinstance(x, TraceValue) or _is_dynamic(x):  # a register value, or an index expression of the thread/block
        return True
    return isinstance(x, (list, tuple)) and any(_holds_runtime(y) for y in x)


def seq_cmp(a: Any, b: Any, op: str) -> Any:
    """``a op b`` for op ==, !=, in, not in in a kernel (rewrite.visit_Compare). Where a list or tuple
    holds runtime values, as CuTe DSL compares them: two sequences are equal when their lengths are and
    every pair of items is (a runtime condition where some pair is one), ``x in seq`` when x equals one of
    its items; anything else compares as Python does."""
    if op in ("==", "!="):
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and (_holds_runtime(a) or _holds_runtime(b)):
            eq: Any = len(a) == len(b)
            for x, y in zip(a, b) if eq else ():
                eq = and_(eq, lambda x=x, y=y: seq_cmp(x, y, "=="))
            return eq if op == "==" else not_(eq)
        return a == b if op == "==" else a != b
    if isinstance(b, (list, tuple)) and (_holds_runtime(b) or _holds_runtime(a)):
        found: Any = False
        for y in b:
            found = or_(found, lambda y=y: seq_cmp(a, y, "=="))
        return found if op == "in" else not_(found)
    return a in b if op == "in" else a not in b


def not_(a: Any) -> Any:
    if isinstance(a, DynBool):
        return DynBool(not a)
    if not _is_dynamic(a):
        return not a
    return ~_as_bool(a)


def _as_bool(x: Any) -> TraceValue:
    """A runtime condition as a Boolean tensor value of one element."""
    from ...numeric import Boolean, Int64

    if isinstance(x, TraceValue):
        if x.dtype.kind == "bool":
            return x
        return x != 0
    t = current("a runtime condition")
    t.check_index(x, "a condition")
    dst = t.new_reg(Boolean, 1)
    t.emit(Compute(dst, "ne", ((x,), (0,)), Int64))
    return TraceValue([(dst, 0)], (), Boolean)


def grab(loc: Dict[str, Any], names: Sequence[str]) -> Dict[str, Any]:
    """The values of the names bound in loc (the caller's locals())."""
    return {n: loc[n] for n in names if n in loc}


def elem_less(a: Any, b: Any) -> Any:
    """cute.elem_less: every mode of coordinate a is less than the same mode of b (a shape).

    Static coordinates give a Python bool; in a kernel, runtime coordinates give a Boolean value
    (a predicate for ``if`` or for ``cute.copy(..., pred=)``).

    >>> elem_less((1, 2), (4, 3)), elem_less((1, 3), (4, 3))
    (True, False)
    """
    from ... import int_tuple as it

    fa = it.flatten_to_tuple(a) if isinstance(a, tuple) else (a,)
    fb = it.flatten_to_tuple(b) if isinstance(b, tuple) else (b,)
    if len(fa) != len(fb):
        raise TraceError(f"elem_less({a}, {b}): the coordinate has {len(fa)} modes and the shape {len(fb)}")
    dynamic = []
    for x, y in zip(fa, fb):
        c = x < y
        if _is_dynamic(c):
            dynamic.append(c)
        elif not c:
            return False
    if not dynamic:
        return True
    if all(is_sym(c) for c in dynamic):  # a symbolic condition: the launch can still prove accesses under it
        from ..ir.symbolic import BoolAnd

        return dynamic[0] if len(dynamic) == 1 else BoolAnd(tuple(dynamic))
    out = _as_bool(dynamic[0])
    for c in dynamic[1:]:
        out = out & _as_bool(c)
    return out


def dsl_user_op(fn: Any) -> Any:
    """cutlass.dsl_user_op: marks a helper that builds kernel values (its loc/ip keywords are
    MLIR source locations in CuTe DSL; here they are accepted and ignored)."""
    return fn


def _sym_value(t: Any, e: Any) -> TraceValue:
    """An index expression as a one-element Int32 (Int64 past its range) value of the kernel."""
    from ...numeric import Int32, Int64

    t.check_index(e, "min/max")
    dt = Int32 if -(1 << 31) <= e.lo and e.hi < (1 << 31) else Int64
    dst = t.new_reg(dt, 1)
    t.emit(Compute(dst, "mov", ((e,),)))
    return TraceValue([(dst, 0)], (), dt)


def _min_max(name: str, args: Tuple[Any, ...]) -> Any:
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    if not args:
        raise TypeError(f"cutlass.{name}() needs at least one value")
    t = _tracer()

    def bounds(v: Any) -> Optional[Tuple[int, int]]:
        if is_sym(v):
            return v.lo, v.hi
        if isinstance(v, int) and not isinstance(v, bool) and not _is_dynamic(v):
            return int(v), int(v)
        return None

    out = args[0]
    for x in args[1:]:
        bo, bx = bounds(out), bounds(x)
        if bo is not None and bx is not None and (is_sym(out) or is_sym(x)):
            # index expressions whose ranges decide it: the one chosen, still an index expression (loop
            # bounds, bounds proofs and address arithmetic keep working), as Python's min/max gave before
            if name == "min":
                pick = out if bo[1] <= bx[0] else x if bx[1] <= bo[0] else None
            else:
                pick = out if bo[0] >= bx[1] else x if bx[0] >= bo[1] else None
            if pick is not None:
                out = pick
                continue
        if t is not None and (is_sym(out) or is_sym(x)):  # undecided: the Int32 values and a runtime min/max
            out, x = (_sym_value(t, v) if is_sym(v) and _is_dynamic(v) else v for v in (out, x))
        if isinstance(out, TraceValue) or isinstance(x, TraceValue):
            a, b = (out, x) if isinstance(out, TraceValue) else (x, out)
            out = a._binary(b, name)
        else:
            out = builtins.min(out, x) if name == "min" else builtins.max(out, x)
    return out


def min_(*args: Any, loc: Any = None, ip: Any = None) -> Any:
    """cutlass.min: the smallest of the values (runtime values inside a kernel: a ``min``)."""
    return _min_max("min", args)


def max_(*args: Any, loc: Any = None, ip: Any = None) -> Any:
    """cutlass.max: the largest of the values (runtime values inside a kernel: a ``max``)."""
    return _min_max("max", args)


def if_generate(cond: Any, then_body: Any, else_body: Any = None, input_args: Any = None, return_types: Any = None,
                *, loc: Any = None, ip: Any = None) -> Any:
    """``cutlass.if_generate``: the branch ``if cond: then_body(*input_args) else: else_body(*input_args)``
    built from callables (CuTe DSL's scf.if builder, which libraries' pipelines use). A runtime cond is a
    runtime branch of the kernel (both bodies traced); a static one calls its body. With return_types the
    bodies' results, converted to those types, are the branch's results (one value, or a list); without
    an else_body the else passes input_args through, as CuTe DSL 4.8.1 does. Without return_types, [].
    """
    from ...kernel.frontend.trace import user_location

    args = list(input_args or [])
    if else_body is None and return_types is not None:
        def else_body(*a: Any) -> Any:
            return a if len(a) > 1 else a[0]
    names = tuple(f"if_generate result {i}" for i in range(len(return_types or ())))

    def results(body: Any) -> Dict[str, Any]:
        r = body(*args)
        if return_types is None:
            return {}
        r = list(r) if isinstance(r, (list, tuple)) else [r]
        if len(r) != len(return_types):
            raise TraceError(f"if_generate: a body returned {len(r)} values for {len(return_types)} return types")
        return {n: ty(v) for n, ty, v in zip(names, return_types, r)}

    where = user_location() or "if_generate"
    br = Branch(cond, names, {}, where)
    out: Dict[str, Any] = {}
    if br.then():
        out = results(then_body)
        br.leave(out)
    if else_body is not None and br.orelse():
        out = results(else_body)
        br.leave(out)
    if return_types is None:
        return []
    vals = list(br.exit()) if br.dynamic else [out[n] for n in names]
    return vals[0] if len(vals) == 1 else vals
