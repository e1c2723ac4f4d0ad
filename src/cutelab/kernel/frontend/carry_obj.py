"""Objects that a runtime region carries by their values, as CuTe DSL yields them from its
``scf.while`` / ``scf.if``.

- A user type that implements ``__extract_mlir_values__`` and ``__new_from_mlir_values__`` (CuTe
  DSL's ``DynamicExpression``: a tile scheduler, its work-tile info) is carried by the values it
  gives (an index expression, a typed scalar, a tensor value, a Python number), each in a mutable
  register; inside and after the region the variable is the object rebuilt
  (``__new_from_mlir_values__``) around those registers' values. Its other values (a Python
  number of a static field, an enum, a shared-memory tensor, a pipeline: what CuTe DSL's
  ``extract_mlir_values`` gives no MLIR value for, or one that stays) are static: they go back
  to ``__new_from_mlir_values__`` as they were, and must stay the same through the region. An
  object none of whose values a register can hold is not carried this way. A runtime branch
  gives each arm the object rebuilt around its registers (``rebuilt_in_arms``), as CuTe DSL
  rebuilds it from the ``scf.if``'s operands.
- A dataclass value that holds tensor values (CuTe DSL's ``WorkTileInfo``, whose tile coordinates
  and validity a scheduler replaces in a loop) is carried by its leaves (its fields in order,
  nested dataclasses and tuples flattened, as CuTe DSL's extract_mlir_values walks them): those
  that a register holds are carried so; the others are static and must stay the same; it is
  rebuilt with ``dataclasses.replace``.

- An object of cutelab's own carrying protocol: ``__carried_by_values__(in_place, loop)`` says whether a
  region carries it by values (``in_place``: the region only calls its methods, never rebinds its
  variable; ``loop``: the region is a loop, not a branch), ``__carry_values__()`` gives them (numbers,
  index expressions, typed scalars; a string is a static leaf that must stay the same) and
  ``__new_from_carry_values__(values)`` rebuilds it. cutelab's trace-time ``PipelineState`` is one: a
  loop that rebinds it (``s0, s = s.clone(), s`` advanced) or a branch that rebinds it or moves it
  carries its count and position, as CuTe DSL's loop carries a PipelineState's Int32 fields; a loop
  that only moves it leaves it to keep its own registers.

Anything else (``leaves`` answers None) keeps carry.Carry's rules.

``__extract_mlir_values__`` may give a flat list or a tree: dicts (in their order) and lists of values,
``None`` for a static member (CuTe DSL's ``extract_mlir_values(x, structured=True)``); the values are
its leaves (``flatten_tree``), and ``__new_from_mlir_values__`` gets the same tree back with each leaf
replaced (``unflatten_tree``). At the end of a region the tree must have the same shape (keys, lengths)
and each leaf the same kind of number: a change is a TraceError naming the leaf's path.

``DEBUG`` (``cutlass.base_dsl.dsl.set_dynamic_debug``): when on, each runtime region prints the objects
it carries by their values, each as its value tree with its leaves' types, and how many values that
makes (CuTe DSL prints the same before it flattens a loop's or branch's values). cutelab does not track
how deep a region is nested: every region prints as level 0, and ``max_depth`` only turns it off
below 0.

>>> class P:
...     def __init__(self, i): self.i = i
...     def __extract_mlir_values__(self): return [self.i]
...     def __new_from_mlir_values__(self, v): return P(v[0])
>>> leaves(P(3)), leaves(P("x")), leaves(3)
([3], None, None)
>>> class Q(P):
...     def __extract_mlir_values__(self): return [self.i, "static"]
>>> leaves(Q(3))
[3, 'static']
"""

from __future__ import annotations

import dataclasses
from typing import Any, List, Optional, Tuple

from ...errors import TraceError
from ..ir.nodes import Assign, Compute
from ..ir.symbolic import BoolAnd, Cmp, Expr, is_sym
from .trace import TraceValue


DEBUG: dict = {"enabled": False, "max_depth": None}


def flatten_tree(tree: Any) -> List[Any]:
    """The leaves of a value tree: dict values in order, list and tuple items, nothing for None."""
    if tree is None:
        return []
    if isinstance(tree, dict):
        return [x for v in tree.values() for x in flatten_tree(v)]
    if isinstance(tree, (list, tuple)):
        return [x for v in tree for x in flatten_tree(v)]
    return [tree]


def unflatten_tree(vals: Any, tree: Any) -> Any:
    """tree with its leaves replaced by vals (an iterator or a list), in flatten_tree's order."""
    it_ = iter(vals)

    def go(x: Any) -> Any:
        if x is None:
            return None
        if isinstance(x, dict):
            return {k: go(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return type(x)(go(v) for v in x) if type(x) in (list, tuple) else [go(v) for v in x]
        return next(it_)

    return go(tree)


def tree_shape(tree: Any, path: str = "") -> List[Tuple[str, str]]:
    """(path, what) of each node of a value tree: its keys, its lengths, its leaves' kinds of number."""
    if tree is None:
        return [(path or "value", "none")]
    if isinstance(tree, dict):
        return [(path or "value", "dict " + ",".join(map(str, tree)))] + \
            [y for k, v in tree.items() for y in tree_shape(v, f"{path}.{k}" if path else str(k))]
    if isinstance(tree, (list, tuple)):
        return [(path or "value", f"{len(tree)} items")] + \
            [y for i, v in enumerate(tree) for y in tree_shape(v, f"{path}[{i}]")]
    from ...numeric import FloatValue, IntValue

    if not isinstance(tree, (TraceValue, IntValue, FloatValue)):  # a Python number or an index: either kind
        return [(path or "value", "")]
    return [(path or "value", "float" if tree.dtype.kind == "float" else "integer")]


def tree_changes(before: Any, after: Any) -> List[str]:
    """How the value tree after differs from before: its keys, lengths, and (where both leaves are typed
    values) its leaves' kinds of number."""
    a, b = tree_shape(before), tree_shape(after)
    out = [f"{p}: {x or 'a value'} before, {y or 'a value'} at the end" for (p, x), (q, y) in zip(a, b)
           if p != q or (x != y and x and y)]
    if not out and len(a) != len(b):
        out = [f"{len(a)} parts before, {len(b)} at the end"]
    return out


def _tree_text(tree: Any, indent: str) -> List[str]:
    """The lines debug output shows for a value tree (leaves by their types)."""
    out = []
    items = tree.items() if isinstance(tree, dict) else enumerate(tree) if isinstance(tree, (list, tuple)) else None
    for k, v in items:
        name = k if isinstance(tree, dict) else f"[{k}]"
        if isinstance(v, (dict, list, tuple)):
            out.append(f"{indent}{name}:")
            out += _tree_text(v, indent + "  ")
        else:
            dt = _dtype(v) if v is not None else None
            out.append(f"{indent}{name}: {'(static/none)' if v is None else dt if dt is not None else type(v).__name__}")
    return out


def debug_region(what: str, where: str, carried: List[Tuple[str, Any]]) -> None:
    """Print the objects a runtime region carries by their values (when DEBUG is on)."""
    if not DEBUG["enabled"] or (DEBUG["max_depth"] is not None and DEBUG["max_depth"] < 0) or not carried:
        return
    print("=" * 80)
    print(f"[Level 0] DEBUG '{what}'")
    print(f"  source: {where}")
    n = 0
    for i, (name, v) in enumerate(carried):
        print(f"  [{i}] {name}: type: {type(v).__name__}")
        tree = v.__extract_mlir_values__() if _protocol(v) else None
        if tree is not None:
            print(f"      {type(v).__name__}:")
            print("\n".join(_tree_text(tree, "        ")) if isinstance(tree, (dict, list, tuple))
                  else f"        value: {_dtype(tree)}")
        n += len(flatten_tree(tree)) if tree is not None else len(leaves(v) or ())
    print(f"  => flattened to {n} values")
    print("=" * 80)


def _own(v: Any) -> bool:
    """v's class has cutelab's own carrying protocol (``__carry_values__``, see the module's docstring)."""
    cls = type(v)
    return not isinstance(v, type) and hasattr(cls, "__carry_values__") and hasattr(cls, "__new_from_carry_values__")


def leaves(v: Any, structs: bool = True, in_place: bool = False, loop: bool = True) -> Optional[List[Any]]:
    """The values v carries: by the protocol (None when one of them is a value no register can
    hold), by cutelab's own (when ``__carried_by_values__(in_place, loop)`` says so), or with
    ``structs``, a dataclass value's leaves when one of them is a tensor value, or a tuple's when
    one of them is a tensor value or a Python float; None for anything else."""
    cls = type(v)  # the protocol's methods are the class's (an object answering any attribute is no carrier)
    if isinstance(v, type):
        return None
    if hasattr(cls, "__extract_mlir_values__") and hasattr(cls, "__new_from_mlir_values__"):
        out = flatten_tree(v.__extract_mlir_values__())
        if any(_dtype(x) is not None for x in out):  # (the others are static: declare)
            return out
    if _own(v) and v.__carried_by_values__(in_place, loop):
        return list(v.__carry_values__())
    if not structs:
        return None
    out = _dc_leaves(v)
    if out is None:
        return None
    if type(v) is tuple:  # CUTLASS's FMHA carries its softmax statistics (row_sum, row_max), 0.0 and -inf
        # before its loop, as a tuple: CuTe DSL makes those floats Float32 values
        return out if any(isinstance(x, TraceValue) or type(x) is float for x in out) else None
    return out if any(isinstance(x, TraceValue) for x in out) else None


def _is_struct(v: Any) -> bool:
    return dataclasses.is_dataclass(v) and not isinstance(v, type)


def _dc_leaves(v: Any) -> Optional[list]:
    """The leaves of a dataclass value (in field order) or of a tuple, tuples and nested dataclasses
    flattened; None for any other value."""

    def go(x: Any) -> list:
        if _is_struct(x):
            return [y for f in dataclasses.fields(x) for y in go(getattr(x, f.name))]
        if type(x) is tuple:
            return [y for e in x for y in go(e)]
        return [x]

    return go(v) if _is_struct(v) or type(v) is tuple else None


def _constexpr_field(f: Any) -> bool:
    """Whether a dataclass field is annotated ``cutlass.Constexpr`` (or ``Constexpr[T]``; a string
    annotation naming it): a compile-time value, which CuTe DSL never makes an MLIR value (quack's
    ParamsBase leaves such fields out of its values; flash_attn.cute's Softmax has ``arch``)."""
    from .host import Constexpr

    tp = f.type
    if isinstance(tp, str):
        return tp.split("[")[0].split(".")[-1].strip() == "Constexpr"
    return tp is Constexpr or getattr(tp, "__origin__", None) is Constexpr


def _dc_static(v: Any) -> list:
    """Per leaf of _dc_leaves(v), in its order: whether it comes from a Constexpr field (kept static)."""

    def go(x: Any, fixed: bool) -> list:
        if _is_struct(x):
            return [y for f in dataclasses.fields(x) for y in go(getattr(x, f.name), fixed or _constexpr_field(f))]
        if type(x) is tuple:
            return [y for e in x for y in go(e, fixed)]
        return [fixed]

    return go(v, False)


def _rebuild(template: Any, vals: list) -> Any:
    """template (a dataclass value or a tuple) with its leaves replaced by vals, in _dc_leaves' order."""
    it_ = iter(vals)

    def build(x: Any) -> Any:
        if _is_struct(x):
            return dataclasses.replace(x, **{f.name: build(getattr(x, f.name)) for f in dataclasses.fields(x)
                                             if f.init})
        if type(x) is tuple:
            return tuple(build(e) for e in x)
        return next(it_)

    return build(template)


def same(a: Any, b: Any) -> bool:
    """Whether two static values are the same (a static leaf must not change in a runtime region)."""
    if a is b:
        return True
    if isinstance(a, Expr) or isinstance(b, Expr):
        return isinstance(a, Expr) and isinstance(b, Expr) and a.key == b.key
    if type(a) is not type(b):
        return False
    if isinstance(a, (int, float, str, tuple, type(None))):
        try:
            return bool(a == b)
        except Exception:  # noqa: BLE001
            return False
    from ...layout import Layout

    if isinstance(a, Layout):
        return a == b
    return False


def _dtype(x: Any) -> Any:
    """The register type of one carried value (None: not a value a register holds; an enum member is a
    compile-time constant, as a scheduler's persistence mode: static)."""
    import enum

    from ...numeric import Boolean, Float32, FloatValue, Int32, Int64, IntValue

    if isinstance(x, enum.Enum):
        return None
    if isinstance(x, TraceValue):
        return x.dtype
    if isinstance(x, (IntValue, FloatValue)):
        return x.dtype if x.dtype.width <= 64 else None
    if isinstance(x, (Cmp, BoolAnd)):
        return Boolean
    if is_sym(x):
        return Int32 if -(1 << 31) <= x.lo and x.hi < (1 << 31) else Int64
    if isinstance(x, bool):
        return Boolean
    if isinstance(x, int):
        return Int32 if -(1 << 31) <= x < (1 << 31) else Int64
    if isinstance(x, float):
        return Float32
    return None


class Carried:
    """The registers of one carried object: ``template`` rebuilds it, ``regs`` hold its values (None
    for a static leaf, which ``statics`` holds); ``struct``: a dataclass or tuple (rebuilt with
    ``dataclasses.replace``), else an object of the value protocol."""

    def __init__(self, template: Any, regs: List[Optional[Tuple[Any, tuple]]], statics: list, struct: bool,
                 tree: Any = None, own: bool = False):
        self.template, self.regs, self.statics, self.struct = template, regs, statics, struct
        self.tree = tree  # the protocol's value tree before the region (None for a dataclass carried by its leaves)
        self.own = own  # carried by cutelab's own protocol (__carry_values__)


def rebuilt_in_arms(entry: Any) -> bool:
    """Whether a runtime branch gives its arms the variable rebuilt around its registers: one that
    carry.Carry carries (``entry``: its Carry.regs entry) as an object of the value protocol."""
    return entry is not None and isinstance(entry[0], Carried) and not entry[0].struct


def declare(t: Any, name: str, v: Any, vals: List[Any]) -> Carried:
    """Registers for v's values, set to them before the region. A TraceError (nothing emitted) when a
    value was computed inside a loop or branch that has ended."""
    for x in vals:
        if isinstance(x, TraceValue):
            t.check_refs(x.refs, f"variable {name}")
        elif is_sym(x):
            t.check_refs([x], f"variable {name}")
    struct = (_is_struct(v) or type(v) is tuple) and not _protocol(v)
    fixed = _dc_static(v) if struct else [False] * len(vals)
    regs: List[Optional[Tuple[Any, tuple]]] = []
    for x, stays in zip(vals, fixed):
        dt = _dtype(x)
        if dt is None or stays:  # a static leaf of a dataclass (leaves gave it; the protocol's values all have types)
            regs.append(None)
            continue
        shape = x.shape if isinstance(x, TraceValue) else ()
        n = len(x.refs) if isinstance(x, TraceValue) else 1
        r = t.new_reg(dt, n, mutable=True)
        regs.append((r, shape))
        _assign(t, r, x, name)
    own = not struct and not _protocol(v) and _own(v)
    return Carried(v, regs, list(vals), struct, None if struct or own else v.__extract_mlir_values__(), own)


def _protocol(v: Any) -> bool:
    cls = type(v)
    return hasattr(cls, "__extract_mlir_values__") and hasattr(cls, "__new_from_mlir_values__") and \
        any(_dtype(x) is not None for x in flatten_tree(v.__extract_mlir_values__()))



def _assign(t: Any, r: Any, x: Any, name: str) -> None:
    from ...numeric import FloatValue, IntValue

    if isinstance(x, TraceValue):
        if len(x.refs) != r.n:
            raise TraceError(f"kernel {t.name}: variable '{name}' carries a tensor value of {r.n} elements into a "
                             f"runtime while loop and one of {len(x.refs)} out of an iteration")
        if x.dtype.name != r.dtype.name:
            x = x.to(r.dtype)
        t.check_refs(x.refs, f"variable {name}")
        t.emit(Assign(r, tuple(range(r.n)), x.refs))
        return
    if r.n != 1:
        raise TraceError(f"kernel {t.name}: variable '{name}' carries a tensor value of {r.n} elements into a "
                         f"runtime while loop and the scalar {x!r} out of an iteration")
    if isinstance(x, FloatValue):
        val: Any = float(x)
    elif isinstance(x, IntValue):
        val = int(x)
    elif is_sym(x):
        t.check_refs([x], f"variable {name}")
        val = x
    elif isinstance(x, (bool, int, float)):
        val = int(x) if isinstance(x, bool) else x
    else:
        raise TraceError(f"kernel {t.name}: variable '{name}' carries {x!r} ({type(x).__name__}) out of an "
                         f"iteration of a runtime while loop; its __extract_mlir_values__ must give numbers, "
                         f"index values or tensor values")
    if isinstance(val, float) and r.dtype.kind != "float":
        raise TraceError(f"kernel {t.name}: variable '{name}' carries a {r.dtype} into a runtime while loop and "
                         f"the float {val!r} out of an iteration; a carried value keeps its type")
    t.emit(Assign(r, (0,), (val,)))


def snap(t: Any, c: Carried) -> Any:
    """The object rebuilt around its registers' values now."""
    vals = []
    for k, rs in enumerate(c.regs):
        if rs is None:
            vals.append(c.statics[k])
            continue
        r, shape = rs
        dst = t.new_reg(r.dtype, r.n)
        t.emit(Compute(dst, "mov", (tuple((r, i) for i in range(r.n)),)))
        vals.append(TraceValue([(dst, i) for i in range(r.n)], shape, r.dtype))
    if c.struct:
        return _rebuild(c.template, vals)
    if c.own:
        return c.template.__new_from_carry_values__(vals)
    return c.template.__new_from_mlir_values__(unflatten_tree(vals, c.tree))


def leave(t: Any, name: str, c: Carried, v: Any, what: str, where: str) -> None:
    """The registers set to v's values at the end of the region."""
    if c.struct:
        _leave_struct(t, name, c, v, what, where)
        return
    if c.own:  # every value of it, however the region found it (a state moved into registers there: read)
        vals = list(v.__carry_values__()) if type(v) is type(c.template) and _own(v) else None
        diff: List[str] = []
    else:
        vals = leaves(v)
        diff = tree_changes(c.tree, v.__extract_mlir_values__()) \
            if vals is not None and type(v) is type(c.template) and c.tree is not None else []
    if vals is None or len(vals) != len(c.regs):
        got = "nothing" if vals is None else f"{len(vals)} values"
        raise TraceError(
            f"kernel {t.name}: variable '{name}' is a {type(c.template).__name__} carried by its "
            f"{len(c.regs)} values through the {what} at {where}, and at the end of it {v!r} ({got}); a carried "
            f"object must keep its type and its number of values" + (f" ({'; '.join(diff[:4])})" if diff else ""))
    if diff:  # as many values, but a member renamed or moved, or a float become an integer
        raise TraceError(
            f"kernel {t.name}: variable '{name}' ({type(c.template).__name__}) changes the structure of its "
            f"values in the {what} at {where}: {'; '.join(diff[:4])}; a carried object keeps its value tree")
    for k, (rs, x) in enumerate(zip(c.regs, vals)):
        if rs is None:
            if not same(x, c.statics[k]):
                raise TraceError(
                    f"kernel {t.name}: variable '{name}': value {k} of its {type(c.template).__name__} "
                    f"(__extract_mlir_values__) is {c.statics[k]!r} before the {what} at {where} and {x!r} at the end "
                    f"of it; only its numbers, indices and tensor values can change in a runtime {what}")
            continue
        _assign(t, rs[0], x, name)


def _leave_struct(t: Any, name: str, c: Carried, v: Any, what: str, where: str) -> None:
    pre = c.template
    new = _dc_leaves(v)
    if new is None or type(v) is not type(pre) or len(new) != len(c.regs):
        raise TraceError(
            f"kernel {t.name}: variable '{name}' is {pre!r} before the {what} at {where} and {v!r} at the end of "
            f"it; a carried dataclass keeps its type and fields")
    for k, (x, rs) in enumerate(zip(new, c.regs)):
        if rs is None:
            if not same(x, c.statics[k]):
                raise TraceError(
                    f"kernel {t.name}: variable '{name}': leaf {k} of {type(pre).__name__} is {c.statics[k]!r} "
                    f"before the {what} at {where} and {x!r} inside it; only its tensor values, numbers and indices "
                    f"can change in a runtime {what}")
            continue
        _assign(t, rs[0], x, name)
