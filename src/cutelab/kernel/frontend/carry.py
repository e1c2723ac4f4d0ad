"""What a runtime loop or branch carries: the Python variables that a region of a rewritten kernel
reassigns (``control``'s ``Loop``, ``Branch`` and ``WhileLoop`` hand them to ``Carry``).

``Carry.declare`` gives each carried variable a mutable register before the region: tensor values
(TensorSSA), typed scalars and runtime integers by their values, a view of global or shared memory
by its offset (its layout must stay), objects of CuTe DSL's value protocol, dataclasses of
tensor values and cutelab's trace-time pipeline states by their values (``carry_obj``); a static Python number that the region may change
is promoted to a runtime value, as CuTe DSL does. ``Carry.leave`` assigns the registers what the
region left in the variables, and ``Carry.values`` reads them back. A static value that the region
changes has no single value after it: the variable becomes ``Unusable`` (every use raises).
``UNDEF`` is the value of a variable not bound before a region.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np

from ...dynamic import DynInt
from ...errors import TraceError
from ..ir.symbolic import Expr, add, is_sym, mul
from ..ir.nodes import Assign, Compute
from . import carry_obj
from .trace import TraceValue

__all__ = ["UNDEF", "Unusable", "Carry", "carryable", "describe", "in_scope", "is_view", "promotable", "promoted"]


class _Undef:
    """The value of a variable that was not bound before a region."""

    def __repr__(self) -> str:
        return "<unbound>"


UNDEF = _Undef()


def describe(x: Any) -> str:
    """x as error messages name it: a tensor value, an index expression or a Python value."""
    if isinstance(x, TraceValue):
        return str(x)
    if is_sym(x):
        return x.expr_str()
    return repr(x)


def _invariant_part(off: Any) -> Any:
    """The part of a moving view's offset that no region changes: its terms over the thread and
    block indices and kernel arguments, and its constant. The view's register holds the rest (a
    pipeline stage's offset), so a swizzle of the offset splits it off (cuda.swz_split)."""
    from ..ir.symbolic import Lin, atoms

    if not is_sym(off):
        return int(off)

    def fixed(e: Any) -> bool:
        from ..ir.nodes import RegVar

        return all(a.name.startswith(("tid.", "bid.", "arg.")) and not isinstance(a, RegVar) for a in atoms(e))

    if isinstance(off, Lin):
        out: Any = off.const
        for a, c in off.terms:
            if fixed(a):
                out = add(out, mul(a, c))
        return out
    return off if fixed(off) else 0


def _offset_div(off: Any) -> int:
    """A power of two dividing off for every thread (1 << 30 for 0)."""
    from ..ir.symbolic import sym_div
    from ..ir.nodes import pow2_divisor

    if is_sym(off):
        d = sym_div(off)
        return pow2_divisor(d) if d else 1 << 30
    off = int(off)
    return pow2_divisor(off) if off else 1 << 30


_same = carry_obj.same  # a static value that must not change in a runtime region


class Unusable:
    """The value after a runtime branch of a variable that held a static Python value before it and
    another one inside it: it has no single value there, so every use raises."""

    def __init__(self, name: str, before: Any, what: str, where: str, kernel: str, msg: Any = None):
        # the message is made when a use fails: describing the value (a pipeline state's repr reads its
        # registers) must not add to the kernel when nothing uses the variable
        object.__setattr__(self, "_msg", msg or (lambda: (
            f"kernel {kernel}: variable '{name}' is {describe(before)} before the {what} at {where} and another "
            f"static value inside it, so it has no single value after it; keep it in a register fragment, or use "
            f"cutlass.const_expr to make the {what} static")))

    def _fail(self, *a: Any, **k: Any) -> Any:
        m = object.__getattribute__(self, "_msg")
        raise TraceError(m() if callable(m) else m)

    def __getattr__(self, name: str) -> Any:
        self._fail()

    __setattr__ = __call__ = __getitem__ = __setitem__ = __iter__ = __len__ = __bool__ = __index__ = _fail
    __int__ = __float__ = __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _fail
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __truediv__ = __rtruediv__ = __neg__ = _fail
    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = _fail
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "<no single value after a runtime branch>"

    __str__ = __format__ = lambda self, *a: self._fail()  # type: ignore[assignment]


def promotable(v: Any) -> bool:
    """A static Python number that a runtime region may change: CuTe DSL makes it a runtime value."""
    return type(v) in (int, float, bool) or (isinstance(v, (int, float)) and type(v).__module__ == "numpy")


def promoted(v: Any) -> Any:
    """v as the runtime value CuTe DSL promotes it to: Boolean, Int32 (Int64 past its range), Float32."""
    from ...numeric import Boolean, Float32, FloatValue, Int32, Int64, IntValue

    if isinstance(v, bool) or type(v).__name__ == "bool_":
        return IntValue(Boolean, bool(v))
    if isinstance(v, float) or type(v).__name__.startswith("float"):
        return FloatValue(Float32, float(v))
    return IntValue(Int32 if -(1 << 31) <= int(v) < (1 << 31) else Int64, int(v))


def _uniform_ssa(v: Any) -> Any:
    """The one number every element of a static tensor value (cutelab's TensorSSA) holds, as an int or float;
    None for anything else."""
    from ...tensor import TensorSSA

    if type(v) is not TensorSSA or not getattr(v.dtype, "width", 0) or v.dtype.width > 64:
        return None
    vals = np.asarray(v.numpy()).ravel()
    if vals.size == 0 or not (vals == vals[0]).all():
        return None
    return int(vals[0]) if v.dtype.is_integer else float(vals[0])


def in_scope(t: Any, v: TraceValue) -> bool:
    """Whether every register v reads is visible where the trace is now (not made inside a loop or
    branch that has ended)."""
    try:
        t.check_refs(v.refs, "a value")
    except TraceError:
        return False
    return True


_OBJ = object()  # Carry.regs' marker of an object carried by its values (carry_obj.Carried)


class Carry:
    """Carries variables through a runtime region: tensor values live in mutable registers (objects
    of CuTe DSL's value protocol and dataclasses of tensor values by their values: carry_obj)."""

    def __init__(self, t: Any, names: Sequence[str], values: Dict[str, Any], where: str, what: str,
                 loop_targets: Sequence[str] = (), local: Sequence[str] = (), invoked: Sequence[str] = ()):
        self.t = t
        # names the region only calls methods of (rewrite._invoked): carried when they hold an object of CuTe
        # DSL's value protocol (carry_obj), passed through untouched otherwise
        self.invoked = frozenset(invoked)
        self.loop_targets = frozenset(loop_targets)  # indices of loops inside: never promoted to registers
        # names each iteration sets before reading them (rewrite._set_before_read): a static value of
        # theirs (e.g. a pipeline handle) is the iteration's own; after the loop they are unusable
        self.local = frozenset(local)
        self.names = tuple(names)
        self.pre = {n: values.get(n, UNDEF) for n in self.names}
        self.where = where
        self.what = what
        self.regs: Dict[str, Any] = {}
        self.last: Dict[str, Any] = dict(self.pre)
        self.poisoned: set = set()
        self.dead: set = set()  # views bound before the region to offsets out of scope there (declare)
        self.view_div: Dict[str, int] = {}
        self.view_base: Dict[str, Any] = {}  # a moving view's offset is view_base + its register's value
        # a moving view's offsets (what its register is assigned, in order: the first one before the
        # region), the RegVars that read it, and the possible-bits mask proved for it (_prove_bits)
        self.view_vals: Dict[str, list] = {}
        self.view_snaps: Dict[str, list] = {}
        self.view_bits: Dict[str, Optional[int]] = {}
        self.int_carried: set = set()  # runtime integers (DynInt, index expressions) given a register by declare

    def declare(self) -> None:
        """Mutable registers for the tensor values bound before the region, assigned there. A
        typed scalar (``cutlass.Int32(0)``, a runtime value in CuTe DSL) becomes one too, so the
        region may change it (a pipeline stage counter)."""
        from ...numeric import FloatValue, IntValue

        from ...numeric import Int32, Int64

        for n, v in self.pre.items():
            vals = carry_obj.leaves(v, structs=n not in self.loop_targets, in_place=n in self.invoked,
                                    loop=self.what != "branch") if v is not UNDEF else None
            if vals is not None:  # a scheduler, a work tile, a dataclass of tensor values: its values in registers
                try:
                    self.regs[n] = (carry_obj.declare(self.t, n, v, vals), _OBJ)
                except TraceError as e:
                    # made inside a loop or branch that has ended (another warp's branch): no value here; the
                    # region may bind it anew, and a use of the old one raises this error
                    self.pre[n] = Unusable(n, v, self.what, self.where, self.t.name, msg=str(e))
                    self.dead.add(n)
                continue
            if n in self.invoked:
                continue
            if n not in self.loop_targets and promotable(v):
                # a Python int, float or bool the region assigns is a runtime value in CuTe DSL (an
                # Int32 that the loop carries, e.g. `smem_pipe_write = stages - 1` moved on each
                # iteration; a Float32 or Boolean one branch changes)
                v = promoted(v)
                self.pre[n] = v
            if n not in self.loop_targets and (isinstance(v, DynInt) or is_sym(v)):
                # a runtime integer (a dynamic value, an index expression over thread/block indices and
                # arguments) that the region may change: a runtime Int32 (Int64 past its range) in CuTe DSL,
                # so the region may set it to another value (`if n_block < 0: n_block = 0`). One that each
                # iteration sets before reading it (local) is the loop's result after it, as CuTe DSL's
                # loop yields it (flash_attn.cute's `n_block = n_block_max - 2 - n_tile`, read by the next
                # loop's bound); inside the loop, reads see the iteration's own value
                lo, hi = (int(v), int(v)) if isinstance(v, DynInt) else (v.lo, v.hi)
                dt = v.dtype if isinstance(v, DynInt) else (Int32 if -(1 << 31) <= lo and hi < (1 << 31) else Int64)
                if is_sym(v):
                    try:
                        self.t.check_index(v, f"variable {n}")
                    except TraceError as e:  # made in a region that has ended (see the views below)
                        self.pre[n] = Unusable(n, v, self.what, self.where, self.t.name, msg=str(e))
                        self.dead.add(n)
                        continue
                r = self.t.new_reg(dt, 1, mutable=True)
                self.t.emit(Assign(r, (0,), (int(v) if isinstance(v, DynInt) else v,)))
                self.regs[n] = (r, ())
                self.int_carried.add(n)
            elif n not in self.loop_targets and _uniform_ssa(v) is not None:
                # a static tensor value of one number (cute.zeros_like, full_like: vectors of SSA values in CuTe
                # DSL) that the region may replace by a runtime one (CUTLASS's MoE epilogue: zeros, loaded from
                # the accumulator where the expert has k-tiles): its elements in registers
                from ... import int_tuple as it

                cnt = int(it.product(v.shape)) if isinstance(v.shape, tuple) else int(v.shape)
                r = self.t.new_reg(v.dtype, cnt, mutable=True)
                self.t.emit(Assign(r, tuple(range(cnt)), (_uniform_ssa(v),) * cnt))
                self.regs[n] = (r, v.shape)
            elif isinstance(v, (IntValue, FloatValue)) and v.dtype.width <= 64:
                r = self.t.new_reg(v.dtype, 1, mutable=True)
                self.t.emit(Assign(r, (0,), (v.value if isinstance(v, IntValue) else float(v),)))
                self.regs[n] = (r, ())
            elif isinstance(v, TraceValue) and not in_scope(self.t, v):
                # made inside a loop or branch that has ended (an earlier iteration's branch of a static
                # loop): no value here; the region may bind it anew, and a read of the old value raises
                self.dead.add(n)
            elif isinstance(v, TraceValue):
                self.t.check_refs(v.refs, f"variable {n}")
                r = self.t.new_reg(v.dtype, len(v.refs), mutable=True)
                self.t.emit(Assign(r, tuple(range(len(v.refs))), v.refs))
                self.regs[n] = (r, v.shape)
            elif is_view(v):
                # a view of global or shared memory the region may move (a pipeline stage's slice):
                # its offset lives in a register; its layout must stay
                from ...numeric import Int32

                try:
                    self.t.check_index(v.offset, f"variable {n}")
                except TraceError as e:
                    # the view was made inside a loop or branch that has ended (e.g. a stage's slice in
                    # a prologue loop, made again in the mainloop): it has no value here; the region
                    # may bind it anew, and a read of the old one raises this error
                    self.pre[n] = Unusable(n, v, self.what, self.where, self.t.name, msg=str(e))
                    self.dead.add(n)
                    continue
                r = self.t.new_reg(Int32, 1, mutable=True)
                # the view is base + the register's value: base the offset's part no region changes
                # (threads', blocks', arguments' terms and the constant), so that a swizzle of the
                # offset splits the register's part off (cuda.swz_split)
                base = _invariant_part(v.offset)
                moving = add(v.offset, mul(base, -1))
                # what divides the moving part now, up to 16 bytes' worth of elements (all that vector,
                # cp.async and ldmatrix accesses need), is assumed to divide every one the region gives
                # it; checked at the end of the region
                eb = max(1, getattr(getattr(v, "element_type", None), "width", 8) // 8)
                cap = max(1, 16 // eb)
                if min(_offset_div(base), _offset_div(moving), cap) < min(_offset_div(v.offset), cap):
                    base, moving = 0, v.offset  # the split would lose alignment the whole offset has
                self.view_base[n] = base
                self.t.emit(Assign(r, (0,), (moving,)))
                self.regs[n] = (r, v)
                self.view_div[n] = min(_offset_div(moving), cap)
                self.view_vals[n] = [moving]
                self.view_snaps[n] = []
                self.view_bits[n] = None
        if carry_obj.DEBUG["enabled"]:  # cutlass.base_dsl.dsl.set_dynamic_debug: what the region carries as values
            carry_obj.debug_region(self.what, self.where,
                                   [(n, self.pre[n]) for n, (_, m) in self.regs.items() if m is _OBJ])

    def _snap(self, n: str) -> Any:
        r, shape = self.regs[n]
        if shape is _OBJ:
            return carry_obj.snap(self.t, r)
        if is_view(shape):  # a memory view: the same view at the offset the register holds
            from ..ir.nodes import RegVar

            dst = self.t.new_reg(r.dtype, 1)
            self.t.emit(Compute(dst, "mov", (((r, 0),),)))
            rv = RegVar((dst, 0), div=self.view_div.get(n, 1))
            rv.bits = self.view_bits.get(n)
            self.view_snaps.setdefault(n, []).append(rv)
            return shape._new(shape.layout, add(self.view_base.get(n, 0), rv))
        dst = self.t.new_reg(r.dtype, r.n)
        self.t.emit(Compute(dst, "mov", (tuple((r, i) for i in range(r.n)),)))
        return TraceValue([(dst, i) for i in range(r.n)], shape, r.dtype)

    def _prove_bits(self, n: str) -> None:
        """A possible-bits mask for the offsets that view n's register holds, set on every RegVar
        that reads it (trace.RegVar.bits; cuda.swz_split uses it to take constants out of
        swizzles of that offset). By induction over the run: the register first holds the offset
        before the region; each later value is an offset the region computes from the registers'
        values then. So a mask M that holds the first offset and every computed one, where the
        RegVars of this register are assumed within M (other registers' atoms have their own
        proven masks or none), holds every value. M is found by iterating from the first
        offset's mask; where it does not settle, nothing is claimed."""
        r = self.regs[n][0]
        snaps, vals = self.view_snaps[n], self.view_vals[n]
        m: Optional[int] = _value_bits(vals[0], r.dtype)
        for _ in range(8):
            for rv in snaps:
                rv.bits = m
            new = m
            for v in vals[1:]:
                new |= _value_bits(v, r.dtype)
            if new == m:
                break
            m = new
        else:
            m = None
            for rv in snaps:
                rv.bits = None
        self.view_bits[n] = m

    def values(self, fresh: bool = True) -> Tuple[Any, ...]:
        if not fresh:
            return tuple(self.after(n) if n in self.regs else self.last[n] for n in self.names)
        return tuple(self._snap(n) if n in self.regs else self.pre[n] for n in self.names)

    def after(self, n: str) -> Any:
        """The value of carried variable n after the region (its registers read). An object of the value
        protocol that the region changes in place (rewrite._invoked: a method call, an attribute set) is
        the object from before the region, given the rebuilt one's attributes: as in CuTe DSL, whose
        ``s.bump()`` (changing ``self.a`` in a runtime branch) leaves the caller's ``s``, the same object,
        holding the branch's result; so every name bound to it (a caller's tile scheduler, a method's
        ``self``) sees it."""
        v = self._snap(n)
        pre = self.pre.get(n, UNDEF)
        if n in self.invoked and carry_obj.rebuilt_in_arms(self.regs.get(n)) and type(v) is type(pre) \
                and hasattr(pre, "__dict__") and hasattr(v, "__dict__") and v is not pre:
            from .carry_escape import note

            note(self.t, pre)  # an enclosing runtime branch that does not carry pre gives it its result
            for k, x in vars(v).items():
                object.__setattr__(pre, k, x)
            return pre
        return v

    def _assignable_int(self, v: Any, n: str) -> bool:
        """Whether v can be written to the one-integer register of variable n at this point."""
        if isinstance(v, TraceValue):
            if len(v.refs) != 1 or v.dtype.kind not in ("int", "uint"):
                return False
            refs = v.refs
        elif isinstance(v, bool) or not (is_sym(v) or isinstance(v, int)):
            return False
        else:
            refs = [v] if is_sym(v) else []
        try:
            self.t.check_refs(refs, f"variable {n}")
        except TraceError:
            return False
        return True

    def leave(self, now: Dict[str, Any], both_define: bool = True) -> None:
        t = self.t
        for n in self.names:
            v = now.get(n, UNDEF)
            self.last[n] = v
            pre = self.pre[n]
            if pre is UNDEF and (v is UNDEF or (isinstance(v, TraceValue) and not in_scope(t, v))):
                # first bound in the other branch of a runtime if (Branch.exit: usable only if both bind it), or here
                # to a value of an inner region that has ended (an inner branch's result bound in one of its arms
                # only: CUTLASS's mixed-input FMHA decode binds a static loop index `dm` in some arms of an if/elif
                # chain): no value on this path
                continue
            if n in self.regs and self.regs[n][1] is _OBJ:
                c = self.regs[n][0]
                if c.own and (self.what == "branch" or n in self.local):
                    # carried by cutelab's own protocol (a trace-time pipeline state) where a static value may
                    # change (one branch, or a loop's iteration that sets it first): bound to one that the
                    # registers cannot hold (another ring of stages, a value of an ended region), it has no
                    # single value after the region, as a static value there (unusable)
                    try:
                        carry_obj.leave(t, n, c, v, self.what, self.where)
                    except TraceError:
                        del self.regs[n]
                        self.poisoned.add(n)
                    continue
                carry_obj.leave(t, n, c, v, self.what, self.where)
                continue
            if n in self.invoked and n not in self.regs:
                continue  # an object whose methods the region calls, carrying no values: passed through
            if n in self.regs and is_view(self.regs[n][1]):
                r, view = self.regs[n]
                if not (is_view(v) and v.engine is view.engine and v.layout == view.layout):
                    raise TraceError(
                        f"kernel {t.name}: variable '{n}' is the tensor {view} before the {self.what} at {self.where} "
                        f"and {describe(v) if v is not UNDEF else 'nothing'} at the end of it; a tensor variable "
                        f"that a runtime {self.what} changes must keep its memory and layout (only its offset "
                        f"may move)"
                    )
                t.check_index(v.offset, f"variable {n}")
                d = self.view_div.get(n, 1)
                moving = add(v.offset, mul(self.view_base.get(n, 0), -1))
                if _offset_div(moving) % d:
                    raise TraceError(
                        f"kernel {t.name}: variable '{n}' (a view of {view.engine.memspace} memory) enters the "
                        f"{self.what} at {self.where} at an offset divisible by {d}, and the {self.what} moves it "
                        f"to {v.offset} (divisible by {_offset_div(v.offset)} only); cutelab keeps a moving view's "
                        f"alignment from where it starts. Start it at an offset with the alignment of every offset "
                        f"it takes (e.g. the same pipeline stage layout)."
                    )
                t.emit(Assign(r, (0,), (moving,)))
                self.view_vals[n].append(moving)
                self._prove_bits(n)
                continue
            if n in self.regs and self.regs[n][1] == () and _ended_loop_index(t, v):
                # the index of an inner runtime loop that has ended: CuTe DSL keeps a runtime loop's index in the
                # loop's own scope, so the region does not carry it (mamba2_ssd reuses reg_idx as the index of
                # several loops inside one); it has no single value after the region (unusable there)
                del self.regs[n]
                self.int_carried.discard(n)
                self.poisoned.add(n)
                continue
            if n in self.int_carried and (self.what == "branch" or n in self.local) and not self._assignable_int(v, n):
                # a runtime integer that this branch (or a loop whose iterations set it first) sets to what its
                # register cannot hold (a value of an inner region that has ended, a tensor): as before
                # registers, it has no single value after the region (unusable there)
                del self.regs[n]
                self.int_carried.discard(n)
                self.poisoned.add(n)
                continue
            if n in self.regs:
                r, shape = self.regs[n]
                if r.n == 1 and shape == () and (is_sym(v) or (isinstance(v, (int, float)) and not isinstance(v, bool))
                                                  or (isinstance(v, bool) and r.dtype.kind == "bool")):
                    if isinstance(v, float) and not isinstance(v, int) and r.dtype.kind != "float":
                        raise TraceError(
                            f"kernel {t.name}: variable '{n}' is a runtime {r.dtype} in the {self.what} at "
                            f"{self.where} and is set to the float {v!r} there; a variable keeps one type through a "
                            f"runtime {self.what} (write {r.dtype.name}({v!r}) or start it as a float)")
                    t.check_refs([v] if is_sym(v) else [], f"variable {n}")
                    t.emit(Assign(r, (0,), (int(v) if isinstance(v, bool) else v,)))  # a number or an index
                    continue
                if isinstance(v, TraceValue) and len(v.refs) == r.n and v.dtype.name != r.dtype.name:
                    v = v.to(r.dtype)  # e.g. an Int32 counter set from an Int64 expression
                if not isinstance(v, TraceValue) or len(v.refs) != r.n or v.dtype.name != r.dtype.name:
                    raise TraceError(
                        f"kernel {t.name}: variable '{n}' holds a tensor value of {r.dtype} x {r.n} before the "
                        f"{self.what} at {self.where} and {describe(v) if v is not UNDEF else 'nothing'} at the "
                        f"end of it; a carried variable must keep its type and shape"
                    )
                t.check_refs(v.refs, f"variable {n}")
                t.emit(Assign(r, tuple(range(r.n)), v.refs))
            elif pre is UNDEF:
                continue  # local to the region
            elif n in self.dead:
                self.poisoned.add(n)  # unusable after the region too (its value there depends on the path)
            elif not _same(v, pre) and (self.what == "branch" or n in self.loop_targets or n in self.local):
                # (or the index of a static loop inside a runtime loop: its value after the runtime
                # loop depends on whether that ran at all)
                # a static value that one branch changes has no single value after the branch: the
                # variable is unusable there (any use raises), as a throwaway `_` usually is
                self.poisoned.add(n)
            elif not _same(v, pre):
                now_text = describe(v)
                if now_text == describe(pre):  # (two objects that print alike: say that it is another one)
                    now_text = f"another {type(v).__name__} object inside it (printed alike, but not the same object)"
                else:
                    now_text += " inside it"
                raise TraceError(
                    f"kernel {t.name}: variable '{n}' is {describe(pre)} before the {self.what} at {self.where} "
                    f"and {now_text}; only tensor values (TensorSSA) can change inside a runtime "
                    f"loop or branch (a static Python value cannot take a different value per thread or per "
                    f"iteration): keep it in a register fragment, or use cutlass.const_expr / range_constexpr "
                    f"to make the {self.what} static"
                )
        for n in [x for x in self.names if x in self.poisoned] + sorted(self.poisoned.difference(self.names)):
            # (in the names' order: a set of strings iterates in an order that changes with PYTHONHASHSEED)
            self.last[n] = self.pre[n] if n in self.dead else Unusable(n, self.pre[n], self.what, self.where, t.name)


def _ended_loop_index(t: Any, v: Any) -> bool:
    """Whether v is an index expression over the index of a loop that has ended."""
    from ..ir.nodes import LoopVar
    from ..ir.symbolic import atoms

    return is_sym(v) and any(isinstance(a, LoopVar) and not any(a is w for w in t.loops) for a in atoms(v))


def _value_bits(e: Any, dtype: Any) -> int:
    """A mask of every bit that e (an int or an index expression) can set, as a value of dtype
    (an integer type: a signed value wraps and is sign-extended, an unsigned one is reduced), in
    two's complement (negative: every high bit); see analysis.bits.possible_bits.

    >>> from cutelab.numeric import Int32
    >>> from cutelab.kernel.ir.symbolic import Var
    >>> t = Var("tid.x", 8)
    >>> bin(_value_bits(t * 64 + 1024, Int32))
    '0b10111000000'
    >>> bin(_value_bits(t * 64 + 64, Int32))  # the constant can carry: bits 6 up to 512's
    '0b1111000000'
    >>> _value_bits(t * (1 << 28) + (1 << 30), Int32) == -(1 << 28)  # may wrap past Int32's sign
    True
    """
    from ..analysis.bits import possible_bits as _possible_bits
    from ..ir.symbolic import Lin, add

    if isinstance(e, Expr):
        c = e.const if isinstance(e, Lin) else 0
        x = add(e, -c) if c else e
        m = _possible_bits(x)
        if m & c:  # adding c, a multiple of 2**p, keeps the bits below p; from p up, any bit
            p = (c & -c).bit_length() - 1
            m = (m & ((1 << p) - 1)) | -(1 << p)
            if e.lo >= 0:
                m &= (1 << int(e.hi).bit_length()) - 1
        else:
            m |= c
    else:
        m = int(e)
    w = getattr(dtype, "width", 64)
    if getattr(dtype, "kind", "int") == "uint":
        return m & ((1 << w) - 1)
    if m >> (w - 1):  # a value may reach the sign bit (or wrap): every bit from there up
        m |= -(1 << (w - 1))
    return m


def is_view(v: Any) -> bool:
    """A tensor over a traced kernel's global or shared memory with a plain layout and an int or
    symbolic offset (what a runtime loop or branch can carry by its offset)."""
    from ...layout import Layout
    from ...tensor import Tensor
    from .engines import GmemEngine

    return (isinstance(v, Tensor) and isinstance(v.engine, GmemEngine) and isinstance(v.layout, Layout)
            and (is_sym(v.offset) or (isinstance(v.offset, int) and not isinstance(v.offset, bool))))


def carryable(v: Any) -> bool:
    """A variable's value before a loop that a runtime loop can carry (see Carry.declare)."""
    from ...numeric import FloatValue, IntValue

    return v is UNDEF or isinstance(v, (TraceValue, IntValue, FloatValue)) or is_view(v)
