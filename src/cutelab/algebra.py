"""The CuTe layout algebra: coalesce, composition, complement, inverses, divides, products.

Each operation follows CuTe (include/cute/layout.hpp) answer for answer. Where CuTe's C++
would fail a static_assert, a LayoutError names the operation, the operands and the
condition that failed.

>>> from cutelab import Layout
>>> print(composition(Layout.parse("(4,4):(4,1)"), Layout.parse("(4,2,2):(2,1,8)")))
((2,2),2,2):((8,1),4,2)
>>> print(complement(Layout.parse("(2,3):(2,4)"), 24))
(2,2):(1,12)
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from . import int_tuple as it
from .dynamic import INT_TYPES as _INT
from .dynamic import DynInt, is_dynamic, value_of
from .errors import LayoutError
from .layout import (
    Layout, ScaledBasis, _normalize, check_fits, cosize, make_layout, make_ordered_layout, parse_layout,
)
from .layout import _FITS, _facts_of, _leaf_facts, _raw_facts, _set_facts, register_max_alignment

__all__ = [
    "coalesce", "filter", "filter_zeros", "composition", "complement", "right_inverse",
    "left_inverse", "logical_divide", "zipped_divide", "tiled_divide", "flat_divide",
    "logical_product", "zipped_product", "tiled_product", "flat_product", "blocked_product",
    "raked_product", "make_layout_tv", "tile_to_shape", "max_common_layout",
    "max_common_vector", "nullspace", "recast_layout", "upcast", "downcast", "zip_layouts",
    "ceil_div",
]

_raw = Layout._raw


class _NoComposedLayout:
    """Stands for swizzle.ComposedLayout until swizzle.py registers it (no value is one before)."""


#: the composed layouts' class and CuTe's rules for the algebra on them (``composed_op``): swizzle.py's,
#: which registers them (``register_composed``) when it is imported; it imports this module
_ComposedLayout: type = _NoComposedLayout
_composed_op: Callable[..., Any] = None  # type: ignore[assignment]


def register_composed(cls: type, op: Callable[..., Any]) -> None:
    """Make the algebra's operations hand operands of class cls (swizzle.ComposedLayout) to
    op(name, f, args, kw) (swizzle.composed_op); swizzle.py calls this once."""
    global _ComposedLayout, _composed_op
    _ComposedLayout, _composed_op = cls, op
_INT_LIMIT = 1 << 63
_NEG_LIMIT = -_INT_LIMIT


_fmt = it.tuple_str  # operands in messages: layouts as S:D, tuples without spaces, None as _


def _op(name: str, keeps_fit: bool = False) -> Callable:
    """Name the operation and its operands in any LayoutError raised beneath it.

    Every Layout in the result is checked to fit in 64 bits (check_fits), except with keeps_fit:
    the operation's result fits whenever its layout operands do (coalesce: the same offsets on a
    domain of the same size), so a result of operands known to fit is marked so, unchecked.
    """

    def deco(f: Callable) -> Callable:
        @functools.wraps(f)
        def wrapper(*args: Any, **kw: Any) -> Any:
            try:
                for a in args:
                    if type(a) is _ComposedLayout:
                        return _composed_op(name, f, args, kw)  # swizzle.py: CuTe's rules for composed layouts
                if kw:
                    for a in kw.values():
                        if type(a) is _ComposedLayout:
                            return _composed_op(name, f, args, kw)
                    r = f(*args, **kw)
                else:
                    r = f(*args)
                if type(r) is Layout:
                    g = r._facts
                    if g is not None and g[3]:
                        return r
                    if keeps_fit and _all_fit(args):
                        if g is None:
                            _set_facts(r, _FITS)
                        else:
                            _facts_of(r, fits=True)
                        return r
                    check_fits(r, "the result")
                    return r
                return _fits(r)
            except LayoutError as e:
                err = _op_error(name, args, e)
                if err is e:
                    raise
                raise err from None

        return wrapper

    return deco


def _op_error(name: str, args: tuple, e: LayoutError) -> LayoutError:
    """The error the operation raises for e raised beneath it: its message headed by the operation
    and its operands (e itself where it says so already)."""
    head = f"{name}({', '.join(_fmt(a) for a in args)})"
    msg = str(e)
    at = _kernel_line(msg)
    if _has_dynamic(args) and "(the dynamic values, printed '?', are" not in msg:
        # messages print operands as CuTe DSL does ('?'); say what the values are
        msg += f" (the dynamic values, printed '?', are {', '.join(_fmt(value_of(a)) for a in args)})"
    elif msg.startswith(head) and not at:
        return e
    return type(e)((msg if msg.startswith(head) else f"{head}: {msg}") + at)


def _kernel_line(msg: str) -> str:
    """' (at file.py:12)', the user's line, for an error raised while a kernel is traced (where the message does
    not name it already); '' otherwise."""
    from .errors import user_location
    from .tracing import hooks

    if " (at " in msg or not hooks.kernel_tracing():
        return ""
    at = user_location()
    return f" (at {at})" if at else ""


def _fast_entry(op: Callable) -> Callable:
    """Give a fast entry (see composition's) the op's name, doc and (through __wrapped__) signature."""
    return functools.wraps(op)


def _tiler_fast_entry(op: Callable, name: str, compute: Callable, normalize: bool) -> Callable:
    """The fast entry of an op of a Layout and a tiler (a Layout or a tuple), as composition's: that
    call answered by compute(layout, tiler) (the tuple tiler normalised first where normalize), its
    result checked to fit where that is not known, errors named as the op names them; any other call
    goes to the op as called."""

    @_fast_entry(op)
    def entry(*args: Any, **kw: Any) -> Any:
        if len(args) == 2 and not kw:
            a, t = args
            if type(a) is Layout and (type(t) is Layout or type(t) is tuple):
                try:
                    r = compute(a, _normalize_tiler(t) if normalize and type(t) is tuple else t)
                    g = r._facts
                    if g is None or not g[3]:
                        check_fits(r, "the result")
                    return r
                except LayoutError as e:
                    raise _op_error(name, args, e) from None
        return op(*args, **kw)

    return entry


def _all_fit(args: tuple) -> bool:
    """Every argument that is a Layout is known to fit in 64 bits (and there is one)."""
    seen = False
    for a in args:
        if type(a) is Layout:
            f = a._facts
            if f is None or not f[3]:
                return False
            seen = True
    return seen


def _has_dynamic(args: tuple) -> bool:
    """is_dynamic(args), without walking the layouts known to hold plain ints only."""
    for a in args:
        if type(a) is Layout:
            f = a._facts
            if f is not None and f[2]:
                continue
        if is_dynamic(a):
            return True
    return False


def _plain_facts(layout: Layout) -> Any:
    """layout's facts if its shape and strides are plain ints (see layout._facts_of), else None."""
    f = layout._facts
    if f is None or f[2] is None:
        f = _facts_of(layout)
    return f if f[2] else None


def _merge_pairs(pairs: Any) -> tuple:
    """Coalesce the (shape, stride) pairs of plain-int leaves of shape > 1, in order: a mode merges into
    the one before it when that one's shape * stride is its stride. Returns (shapes, strides) lists."""
    rs: list = []
    rd: list = []
    S = D = 0
    first = True
    for s, d in pairs:
        if first:
            S, D = s, d
            first = False
        elif S * D == d:
            S *= s
        else:
            rs.append(S)
            rd.append(D)
            S, D = s, d
    if not first:
        rs.append(S)
        rd.append(D)
    return rs, rd


def _from_lists(rs: list, rd: list, facts: bool = False) -> Layout:
    """The layout (rs):(rd) of merged plain modes (shapes > 1): 1:0 for none, a scalar mode for one.
    With facts, its facts come with it, and it is marked to fit in 64 bits where it does (else
    check_fits, which the operations run on their results, raises as for any result)."""
    if not rs:
        r = _raw(1, 0)
        if facts:
            _set_facts(r, (1, (), True, True, 0, 0, False))
        return r
    r = _raw(rs[0], rd[0]) if len(rs) == 1 else _raw(tuple(rs), tuple(rd))
    if not facts:
        return r
    size, lo, hi = 1, 0, 0
    for s, d in zip(rs, rd):
        size *= s
        if d > 0:
            hi += (s - 1) * d
        else:
            lo += (s - 1) * d
        if not _NEG_LIMIT < d < _INT_LIMIT:
            return r
    if size < _INT_LIMIT and hi < _INT_LIMIT and lo >= -_INT_LIMIT:
        _set_facts(r, (size, tuple(zip(rs, rd)), True, True, lo, hi, False))
    return r


def _concat_fits(parts: Any, r: Layout, known: bool = False) -> Layout:
    """r, the concatenation of the layouts parts, with its facts made from theirs (and marked to fit
    in 64 bits where it does) when they all have them; else r as it is. With known=True, only facts
    already computed are used (none is computed here)."""
    size, lo, hi, pairs, ones = 1, 0, 0, (), False
    for p in parts:
        f = p._facts
        if f is None or f[0] is None:
            if known:
                return r
            f = _facts_of(p)
        if not f[3] or f[0] is None:
            return r
        size *= f[0]
        lo += f[4]
        hi += f[5]
        if pairs is not None:
            if f[2]:
                pairs += f[1]
                ones = ones or f[6]
            else:
                pairs = None  # only the size and the bounds are known
    if size < _INT_LIMIT and hi < _INT_LIMIT and lo >= -_INT_LIMIT:
        _set_facts(r, (size, pairs, True, True, lo, hi, ones) if pairs is not None else
                   (size, None, None, True, lo, hi, None))
    return r


def _fits(result: Any) -> Any:
    """result, once every Layout in it is checked to fit in 64 bits (as inputs are checked)."""
    if isinstance(result, Layout):
        check_fits(result, "the result")
    elif isinstance(result, tuple):
        for r in result:
            if isinstance(r, Layout):
                check_fits(r, "the result")
    return result


def _as_layout(x: Any, op: str, what: str) -> Layout:
    if isinstance(x, Layout):
        return x
    if isinstance(x, str):
        return parse_layout(x)
    raise LayoutError(f"the {what} must be a Layout, got {type(x).__name__} {x!r}")


def _modes(layout: Layout) -> list:
    if isinstance(layout._shape, tuple):
        f = layout._facts
        if f is not None and f[2] and f[3]:  # plain ints, fits: so does every mode (a part of its offsets)
            out = []
            for s, d in zip(layout._shape, layout._stride):
                m = _raw(s, d)
                if type(s) is int:  # a leaf mode: its facts at once
                    if s != 1:
                        _set_facts(m, (s, ((s, d),), True, True, (s - 1) * d if d < 0 else 0,
                                       (s - 1) * d if d > 0 else 0, False))
                    else:
                        _set_facts(m, (1, (), True, True, 0, 0, d != 0))
                else:  # a mode of leaves: its facts in one walk
                    _set_facts(m, _leaf_facts(zip(it.flatten(s), it.flatten(d))))
                out.append(m)
            return out
        return [_raw(s, d) for s, d in zip(layout._shape, layout._stride)]
    return [layout]


def _rank(layout: Layout) -> int:
    return len(layout._shape) if isinstance(layout._shape, tuple) else 1


def _concat(parts: list) -> Layout:
    """The layout whose modes are parts (with their facts, where all of them have theirs)."""
    return _concat_fits(parts, _raw(tuple(p._shape for p in parts), tuple(p._stride for p in parts)), known=True)


def _by_mode(layout: Layout, tiler: tuple, f: Callable, op: str, keep_rest: bool = True) -> Layout:
    r = _rank(layout)
    if len(tiler) > r:
        what = "target profile" if op in ("coalesce", "filter") else "tiler"
        raise LayoutError(
            f"too many {what} modes: the {what} {_fmt(tiler)} has {len(tiler)} modes but the layout {layout} has only {r}"
        )
    modes = _modes(layout)
    out = [f(modes[i], tiler[i]) for i in range(len(tiler))]
    if keep_rest:
        out.extend(modes[len(tiler):])
    return _concat(out)


def _is_zero(d: Any) -> bool:
    return type(d) in _INT and d == 0


# --------------------------------------------------------------------------- coalesce / filter

def _one(x: Any) -> bool:
    """A static 1 (a dynamic value 1 is not known to be 1: CuTe DSL keeps its mode)."""
    return x == 1 and type(x) is not DynInt


def _bw_coalesce(shp: list, std: list, new_shape: Any, new_stride: Any, keep_dynamic: bool = False) -> Layout:
    """CuTe's bw_coalesce over flat modes shp[:-?] folded onto (new_shape, new_stride), right to left.
    keep_dynamic: modes with a dynamic extent or stride are not merged (CuTe DSL's coalesce cannot
    prove them mergeable; the layout algebra inside composition etc. merges by value)."""
    ns = [new_shape]
    nd = [new_stride]
    scalar = True
    for i in range(len(shp) - 1, -1, -1):
        s, d = shp[i], std[i]
        if _one(s):
            continue
        if scalar and _one(ns[0]):
            ns[0], nd[0] = s, d
        elif s * d == nd[0] and not (keep_dynamic and (type(s) is DynInt or type(d) is DynInt
                                                       or type(ns[0]) is DynInt or type(nd[0]) is DynInt)):
            ns[0] = s * ns[0]
            nd[0] = d
        else:
            ns.insert(0, s)
            nd.insert(0, d)
            scalar = False
    if scalar:
        if _one(ns[0]):
            return _raw(1, 0)
        return _raw(ns[0], nd[0])
    return _raw(tuple(ns), tuple(nd))


def _coalesce_plain(layout: Layout, f: tuple) -> Layout:
    """coalesce of a layout of plain ints known to fit in 64 bits (facts f), with the result's facts:
    the merged leaves of shape > 1, the same size and offsets (so the same bounds)."""
    pairs = f[1]
    n = len(pairs)
    if n > 1:
        prev = None
        for s, d in pairs:
            if d == prev:
                break
            prev = s * d
        else:  # nothing merges: the leaves are the result's modes
            rs, rd = zip(*pairs)
            return _raw_facts(rs, rd, (f[0], pairs, True, True, f[4], f[5], False))
        rs: list = []  # _merge_pairs, inline
        rd: list = []
        S, D = pairs[0]
        for i in range(1, n):
            s, d = pairs[i]
            if S * D == d:
                S *= s
            else:
                rs.append(S)
                rd.append(D)
                S, D = s, d
        if rs:
            rs.append(S)
            rd.append(D)
            return _raw_facts(tuple(rs), tuple(rd), (f[0], tuple(zip(rs, rd)), True, True, f[4], f[5], False))
        pairs = ((S, D),)
    elif not n:
        return _raw_facts(1, 0, (1, (), True, True, 0, 0, False))
    if type(layout._shape) is not tuple:
        return layout
    S, D = pairs[0]
    return _raw_facts(S, D, (f[0], pairs, True, True, f[4], f[5], False))


def _coalesce(layout: Layout, keep_dynamic: bool = False) -> Layout:
    shp, std = layout._shape, layout._stride
    f = _plain_facts(layout)
    if f is not None:  # plain ints: the leaves of shape > 1 are known, merge them in one pass
        if f[3]:
            return _coalesce_plain(layout, f)
        rs, rd = _merge_pairs(f[1])
        if len(rs) == 1 and type(shp) is not tuple:
            return layout
        return _from_lists(rs, rd)
    if type(shp) is not tuple:
        return _raw(1, 0) if _one(shp) else layout
    shp, std = it.flatten(shp), it.flatten(std)
    if not shp:
        return _raw(1, 0)
    return _bw_coalesce(list(shp[:-1]), list(std[:-1]), shp[-1], std[-1], keep_dynamic)


def _coalesce_x(layout: Layout) -> Layout:
    """coalesce that also preserves the function outside the domain (CuTe's coalesce_x)."""
    f = _plain_facts(layout)
    if f is not None:
        return _raw(*_coalesce_x_plain(layout._shape, layout._stride, f[1]))
    shp, std = it.flatten_to_tuple(layout._shape), it.flatten_to_tuple(layout._stride)
    if not shp:
        return _raw(1, 0)
    last = 2 if _one(shp[-1]) else shp[-1]
    # modes with a dynamic extent or stride are not merged: CuTe DSL cannot prove them mergeable
    return _bw_coalesce(list(shp[:-1]), list(std[:-1]), last, std[-1], keep_dynamic=True)


def _coalesce_x_plain(s: Any, d: Any, pairs: Any) -> tuple:
    """(shape, stride) of _coalesce_x of the plain-int layout s:d whose leaves of shape > 1 are pairs
    (its facts' f[1])."""
    while type(s) is tuple and s:  # the last leaf
        s, d = s[-1], d[-1]
    if type(s) is tuple:
        return 1, 0  # no leaves
    if s == 1:  # a last mode of shape 1 keeps its stride (as shape 2: the function past the domain)
        pairs = tuple(pairs) + ((2, d),)
    n = len(pairs)
    if n == 1:
        return pairs[0]
    if not n:
        return 1, 0
    rs: list = []  # _merge_pairs, inline
    rd: list = []
    S, D = pairs[0]
    for i in range(1, n):
        s, d = pairs[i]
        if S * D == d:
            S *= s
        else:
            rs.append(S)
            rd.append(D)
            S, D = s, d
    if not rs:
        return S, D
    rs.append(S)
    rd.append(D)
    return tuple(rs), tuple(rd)


def _last_leaf_is_one(layout: Layout) -> bool:
    """The last leaf of layout has shape 1 (or it has no leaves): _coalesce_x_plain treats it apart."""
    s = layout._shape
    while type(s) is tuple and s:
        s = s[-1]
    return type(s) is tuple or s == 1


def _coalesce_x_profile(layout: Layout, profile: Any) -> Layout:
    if isinstance(profile, tuple):
        return _by_mode(layout, profile, _coalesce_x_profile, "coalesce")
    return _coalesce_x(layout)


@_op("coalesce", keeps_fit=True)
def coalesce(layout: Any, target_profile: Any = None) -> Layout:
    """Merge modes that can be merged; the same function on its domain, depth <= 1.

    With a target_profile, coalesce each mode of the profile's leaves separately.
    Postconditions: size(result) == size(layout); result(i) == layout(i) for all i < size.

    >>> print(coalesce(Layout.parse("(2,(1,6)):(1,(6,2))")))
    12:1
    >>> print(coalesce(Layout.parse("((2,4),(3,5)):((1,2),(8,24))"), target_profile=(1, 1)))
    (8,15):(1,8)
    """
    layout = _as_layout(layout, "coalesce", "layout")
    if target_profile is not None:
        target_profile = _normalize(target_profile)
        if isinstance(target_profile, tuple):
            return _by_mode(layout, target_profile, lambda l, t: coalesce(l, t), "coalesce")
    return _coalesce(layout, keep_dynamic=True)


_coalesce_op = coalesce  # the op: operands named in its errors, its result checked


@functools.wraps(_coalesce_op)  # its name, doc and (through __wrapped__) signature
def coalesce(*args: Any, **kw: Any) -> Layout:
    # The common case, one plain-int Layout known to fit, without the op wrapper's layer (the answer
    # and its facts as the op gives them; it cannot fail); anything else goes to the op as called.
    if len(args) == 1 and not kw:
        layout = args[0]
        if type(layout) is Layout:
            f = layout._facts
            if f is not None and f[2] and f[3]:
                return _coalesce_plain(layout, f)
    return _coalesce_op(*args, **kw)


def _filter_zeros(layout: Layout) -> Layout:
    return _raw(it.filter_zeros_tuple(layout._stride, layout._shape), layout._stride)


@_op("filter_zeros", keeps_fit=True)
def filter_zeros(layout: Any, target_profile: Any = None) -> Layout:
    """Replace the shape of each stride-0 mode by 1 (or of each mode where target_profile is 0).

    >>> print(filter_zeros(Layout.parse("(4,2,3):(1,0,4)")))
    (4,1,3):(1,0,4)

    On a tensor (as CuTe DSL's cute.filter_zeros): the same tensor over the filtered layout.
    """
    if hasattr(layout, "engine") and hasattr(layout, "_new"):  # a Tensor
        return layout._new(filter_zeros(layout.layout, target_profile))
    layout = _as_layout(layout, "filter_zeros", "layout")
    if target_profile is None:
        return _filter_zeros(layout)
    prof = _normalize(target_profile)
    if not it.congruent(prof, layout._shape):
        raise LayoutError(f"the target profile {_fmt(prof)} is not congruent with the shape {_fmt(layout._shape)}")
    return _raw(it.filter_zeros_tuple(prof, layout._shape), layout._stride)


@_op("filter", keeps_fit=True)
def filter(layout: Any, target_profile: Any = None) -> Layout:  # noqa: A001 - CuTe's name
    """Remove all stride-0 and size-1 modes, then coalesce.

    >>> print(filter(Layout.parse("(4,2,3):(1,0,4)")))
    12:1
    """
    layout = _as_layout(layout, "filter", "layout")
    if target_profile is not None:
        prof = _normalize(target_profile)
        if isinstance(prof, tuple):
            return _by_mode(layout, prof, lambda l, t: filter(l, t), "filter")
    return _coalesce(_filter_zeros(layout))


# --------------------------------------------------------------------------- composition

def _basis_get(d: ScaledBasis, t: Any) -> Any:
    """The part of t that the basis stride d selects (its mode path, outermost first)."""
    for m in d.path:
        if isinstance(t, tuple):
            if m >= len(t):
                raise LayoutError(f"basis stride {d} selects mode {m} of a rank-{len(t)} layout")
            t = t[m]
        elif m != 0:
            raise LayoutError(f"basis stride {d} selects mode {m} of a rank-1 layout")
    return t


def _compose(ls: Any, ld: Any, rs: Any, rd: Any, pieces: list | None = None) -> tuple:
    """composition_impl on a coalesced lhs (ls, ld) and a rhs (rs, rd). Returns (shape, stride).

    pieces, if given, collects (lhs mode, count, step) for every result mode placed inside a
    bounded lhs mode: the rhs mode walks count digits, step apart, of that lhs mode.
    """
    if type(rs) is tuple:
        parts = [_compose(ls, ld, s, d, pieces) for s, d in zip(rs, rd)]
        return tuple(p[0] for p in parts), tuple(p[1] for p in parts)
    if isinstance(rd, ScaledBasis):
        return _compose(_basis_get(rd, ls), _basis_get(rd, ld), rs, rd.value, None)
    if type(rd) in _INT and rd == 0:
        return rs, rd
    if type(ls) is not tuple:
        return rs, rd * ld
    if rd < 0 and rs != 1:
        # rhs reaches offsets rd, 2*rd, ... < 0: outside the domain of a left operand of several
        # modes (only a single-mode left operand extends linearly to negative offsets). CuTe's
        # algorithm does not cover this case and returns a layout that disagrees with lhs(rhs(i)).
        raise LayoutError(
            f"the right operand has the negative stride {rd} (on a mode of size {rs}), so it reaches negative "
            f"offsets, outside the domain of the (coalesced) left operand {_fmt(_raw(ls, ld))} of {len(ls)} modes"
        )
    result_shape: list = []
    result_stride: list = []
    rest_shape, rest_stride = rs, rd
    last = len(ls) - 1
    for i in range(last):
        curr_shape, curr_stride = ls[i], ld[i]
        cs, st, rsh = int(curr_shape), int(rest_stride), int(rest_shape)  # the values (checks use them)
        if not (st % cs == 0 or st < cs):
            raise LayoutError(
                f"stride divisibility fails at mode {i} of the (coalesced) left operand: "
                f"the stride {st} reaching that mode must divide by its shape {cs} "
                f"or be smaller than it ({st} % {cs} != 0)"
            )
        a = st if st >= 0 else -st
        # CuTe's fold, static where both operands are (a dynamic value, even 1, stays dynamic: CuTe DSL
        # cannot simplify it and keeps one result mode per left mode)
        next_shape = _dyn_of(-(-cs // a), curr_shape, rest_stride)
        next_stride = _dyn_of(-(-a // cs) * (1 if st > 0 else -1), curr_shape, rest_stride)
        if _one(next_shape) or _one(rest_shape):
            rest_stride = next_stride
            continue
        ns = int(next_shape)
        new_shape = _dyn_of(min(ns, rsh), next_shape, rest_shape)
        nv = int(new_shape)
        if nv != rsh and cs % a != 0:
            # CuTe's weak check (stride < shape) lets this through and returns a wrong layout:
            # the rhs steps over the end of this mode at an offset that is not a mode boundary.
            raise LayoutError(
                f"stride divisibility fails at mode {i} of the (coalesced) left operand: "
                f"the stride {st} reaching that mode does not divide its shape {cs} "
                f"({cs} % {a} != 0) and the right operand continues past the mode"
            )
        if rsh % nv != 0:
            raise LayoutError(
                f"shape divisibility fails at mode {i} of the (coalesced) left operand: "
                f"the remaining shape {rsh} is not divisible by {nv} "
                f"({rsh} % {nv} != 0)"
            )
        result_shape.append(new_shape)
        result_stride.append(rest_stride * curr_stride)
        if pieces is not None:
            pieces.append((i, nv, a))
        rest_shape = rest_shape // new_shape
        rest_stride = next_stride
    if not result_shape:
        return rest_shape, rest_stride * ld[last]
    if _one(rest_shape):
        if len(result_shape) == 1:
            return result_shape[0], result_stride[0]
        return tuple(result_shape), tuple(result_stride)
    result_shape.append(rest_shape)
    result_stride.append(rest_stride * ld[last])
    return tuple(result_shape), tuple(result_stride)


def _compose_plain(ls: Any, ld: Any, rs: Any, rd: Any, pieces: list | None, acc: list | None = None) -> tuple:
    """_compose where lhs (ls, ld) holds plain ints: the same fold without the dynamic-value cases.
    A rhs leaf that is not a plain int, and every failing check, goes to _compose (which decides,
    and raises with its message). acc, if given, collects the result's (shape, stride) leaves in order."""
    if type(rs) is tuple:
        shapes: list = []
        strides: list = []
        one = type(ls) is not tuple
        for s, d in zip(rs, rd):
            if one and type(s) is int and type(d) is int:  # a single-mode lhs scales the leaf's stride
                d *= ld
                if acc is not None:
                    acc.append((s, d))
                shapes.append(s)
                strides.append(d)
                continue
            a, b = _compose_plain(ls, ld, s, d, pieces, acc)
            shapes.append(a)
            strides.append(b)
        return tuple(shapes), tuple(strides)
    if type(rs) is not int or type(rd) is not int:
        r = _compose(ls, ld, rs, rd, pieces)
        if acc is not None:
            acc.extend(zip(it.flatten_to_tuple(r[0]), it.flatten_to_tuple(r[1])))
        return r
    if type(ls) is not tuple:  # a single-mode lhs extends linearly
        rd *= ld
        if acc is not None:
            acc.append((rs, rd))
        return rs, rd
    if rd == 0:
        if acc is not None:
            acc.append((rs, rd))
        return rs, rd
    if rd < 0 and rs != 1:
        return _compose(ls, ld, rs, rd, pieces)  # raises
    result_shape: list = []
    result_stride: list = []
    rest_shape, rest_stride = rs, rd
    last = len(ls) - 1
    for i in range(last):
        cs = ls[i]
        st = rest_stride
        if not (st % cs == 0 or st < cs):
            return _compose(ls, ld, rs, rd, pieces)  # raises
        a = st if st >= 0 else -st
        next_shape = -(-cs // a)
        next_stride = -(-a // cs) if st > 0 else (a // -cs)  # ceil(a / cs), signed as st
        if next_shape == 1 or rest_shape == 1:
            rest_stride = next_stride
            continue
        new_shape = next_shape if next_shape < rest_shape else rest_shape
        if (new_shape != rest_shape and cs % a != 0) or rest_shape % new_shape != 0:
            return _compose(ls, ld, rs, rd, pieces)  # raises
        result_shape.append(new_shape)
        result_stride.append(st * ld[i])
        if pieces is not None:
            pieces.append((i, new_shape, a))
        rest_shape //= new_shape
        rest_stride = next_stride
    if not result_shape:
        rest_stride *= ld[last]
        if acc is not None:
            acc.append((rest_shape, rest_stride))
        return rest_shape, rest_stride
    if rest_shape != 1:
        result_shape.append(rest_shape)
        result_stride.append(rest_stride * ld[last])
    if acc is not None:
        acc.extend(zip(result_shape, result_stride))
    if len(result_shape) == 1:
        return result_shape[0], result_stride[0]
    return tuple(result_shape), tuple(result_stride)


def _dyn_of(v: int, a: Any, b: Any) -> Any:
    """v, dynamic (no known divisibility, the widest integer type of a and b) when a or b is dynamic:
    CuTe DSL's ceil_div and min of a dynamic value know no divisibility."""
    if type(a) is not DynInt and type(b) is not DynInt:
        return v
    dyn = [x for x in (a, b) if type(x) is DynInt]
    if not dyn:
        return v
    return DynInt(v, max((x.dtype for x in dyn), key=lambda d: d.width))


def _coprofile(layout: Layout) -> Any:
    """The profile of the codomain that the basis strides of layout select (0 if none)."""
    f = layout._facts
    if f is not None and f[2]:
        return 0  # plain ints: no basis strides
    paths = [d.path for d in it.flatten_to_tuple(layout._stride) if isinstance(d, ScaledBasis)]
    if not paths:
        return 0

    def tree(ps: list) -> Any:
        ps = [p for p in ps if p]
        if not ps:
            return 0
        n = max(p[0] for p in ps) + 1
        return tuple(tree([p[1:] for p in ps if p[0] == k]) for k in range(n))

    return tree(paths)


def _compose_layouts(lhs: Layout, rhs: Layout) -> Layout:
    prof = _coprofile(rhs)
    pieces: list | None = [] if type(rhs._shape) is tuple else None
    fl = _plain_facts(lhs) if prof == 0 else None
    if fl is not None:  # plain ints: so is its coalesced flat
        fr = rhs._facts
        if fr is not None and fr[2] is True:  # plain ints in, plain ints out
            return _compose_plain_layouts(lhs, fl, rhs._shape, rhs._stride)
        ls, ld = _coalesce_x_plain(lhs._shape, lhs._stride, fl[1])
        s, d = _compose_plain(ls, ld, rhs._shape, rhs._stride, pieces)
        if pieces and len(pieces) > 1:
            _check_carry_free(_raw(ls, ld), pieces)
    else:
        flat = _coalesce_x_profile(lhs, prof)
        s, d = _compose(flat._shape, flat._stride, rhs._shape, rhs._stride, pieces)
        if pieces and len(pieces) > 1:
            _check_carry_free(flat, pieces)
    r = _raw(s, d)
    fl, fr = lhs._facts, rhs._facts
    if (fl is not None and fr is not None and fl[3] and fr[3] and fl[2] and fr[2] and not fr[6]
            and 0 <= fr[4] and fr[5] < fl[0]):
        # rhs (fits) maps into lhs's domain: the offsets of the result are offsets of lhs (fits), its
        # size is rhs's, and its strides are bounded by its span (rhs has no shape-1 mode of stride
        # other than 0, the one place a composed stride is not): it fits in 64 bits
        _set_facts(r, (fr[0], None, None, True, fl[4], fl[5], None))  # its size, bounds on its offsets
    return r


def _compose_plain_layouts(lhs: Layout, fl: tuple, rs: Any, rd: Any, ms: list | None = None,
                           md: list | None = None) -> Layout:
    """_compose_layouts(lhs, rs:rd) where lhs (facts fl) and rs:rd hold plain ints only; the result
    comes with its facts (_plain_result). ms, md: lhs's merged leaves (_merge_pairs(fl[1])), if known."""
    if ms is None or _last_leaf_is_one(lhs):
        ls, ld = _coalesce_x_plain(lhs._shape, lhs._stride, fl[1])
    elif len(ms) > 1:  # _coalesce_x_plain's answer from the merged leaves
        ls, ld = tuple(ms), tuple(md)
    else:
        ls, ld = (ms[0], md[0]) if ms else (1, 0)
    return _compose_flat(ls, ld, rs, rd)


def _compose_flat(ls: Any, ld: Any, rs: Any, rd: Any, facts: bool = True) -> Layout:
    """The composition of the coalesced (by _coalesce_x) lhs ls:ld with rs:rd, all plain ints, with
    its facts (_plain_result); with facts=False, without (the caller knows them)."""
    pieces: list | None = [] if type(rs) is tuple else None
    leaves: list | None = [] if facts else None
    s, d = _compose_plain(ls, ld, rs, rd, pieces, leaves)
    if pieces and len(pieces) > 1:
        _check_carry_free(_raw(ls, ld), pieces)
    return _plain_result(s, d, leaves) if facts else _raw(s, d)


def _plain_result(s: Any, d: Any, leaves: list | None = None) -> Layout:
    """The layout s:d of plain ints, with its facts and marked to fit in 64 bits where it does (as
    check_fits would mark it); where it does not, without facts (check_fits then raises as before).
    leaves: its (shape, stride) leaves in order, if known."""
    if leaves is None:
        leaves = zip(it.flatten(s), it.flatten(d)) if type(s) is tuple else ((s, d),)
    f = _leaf_facts(leaves)
    return _raw_facts(s, d, f) if f[3] else _raw(s, d)


def _check_carry_free(flat: Layout, pieces: list) -> None:
    """Composition distributes over rhs's modes: lhs(sum of B_j(c_j)) == sum of lhs(B_j(c_j)).

    That holds only if adding the modes' contributions never carries out of a bounded mode of
    the (coalesced) lhs. Each result mode walks `count` digits `step` apart inside one lhs mode;
    at every lhs mode the largest sum, sum((count - 1) * step), must stay below its size.
    CuTe does not check this and returns a wrong layout when it fails.
    """
    ls, ld = flat._shape, flat._stride
    totals: dict = {}
    for k, count, step in pieces:
        totals[k] = totals.get(k, 0) + (count - 1) * step
    for k, total in totals.items():
        if total > ls[k] - 1 and ld[k + 1] != ls[k] * ld[k]:
            raise LayoutError(
                f"the modes of the right operand overlap in mode {k} (size {ls[k]}) of the coalesced "
                f"left operand {flat}: together they reach digit {total} there, so the left operand "
                f"is not additive over them and no layout equals the composition "
                f"(CuTe would return a wrong layout)"
            )


def _compose_tiler(lhs: Layout, rhs: Any) -> Layout:
    if isinstance(rhs, Layout):
        return _compose_layouts(lhs, rhs)
    if rhs is None:
        return lhs
    if isinstance(rhs, tuple):
        return _by_mode(lhs, rhs, _compose_tiler, "composition", keep_rest=False)
    if type(rhs) in _INT:
        if rhs < 1:
            raise LayoutError(f"a tiler size must be positive, got {rhs}")
        return _compose_layouts(lhs, make_layout(rhs))
    if isinstance(rhs, str):
        return _compose_layouts(lhs, parse_layout(rhs))
    raise LayoutError(f"the right operand must be a Layout, an int, None or a tuple of those, got {rhs!r}")


@_op("composition")
def composition(lhs: Any, rhs: Any) -> Any:
    """lhs o rhs: the layout R with R(c) == lhs(rhs(c)) for every c in the domain of rhs.

    rhs may be a Layout, or a by-mode tiler: a tuple of Layouts, ints and None, applied to the
    modes of lhs (modes of lhs beyond the tiler are dropped, as in CuTe).
    Postconditions: compatible(shape(rhs), shape(R)); R(i) == lhs(rhs(i)).

    >>> print(composition(Layout.parse("(6,2):(8,2)"), Layout.parse("(4,3):(3,1)")))
    ((2,2),3):((24,2),8)
    """
    if type(lhs) is Layout and type(rhs) is Layout:
        fl, fr = lhs._facts, rhs._facts
        if fl is not None and fl[2] and fr is not None and fr[2]:  # plain ints: no conversions, no dispatch
            return _composition_plain(lhs, rhs, fl, fr)
    if not isinstance(lhs, Layout):
        comp = getattr(lhs, "__cute_composition__", None)  # tensors compose too
        if comp is not None:
            return comp(rhs)
    lhs = _as_layout(lhs, "composition", "left operand")
    return _compose_tiler(lhs, _normalize_tiler(rhs))


_composition_op = composition  # the op: operands named in its errors, its result checked


def _composition_plain(lhs: Layout, rhs: Layout, fl: tuple, fr: tuple) -> Layout:
    """composition of two Layouts of plain ints (facts fl, fr): no conversions, no dispatch."""
    if fl[3] and fr[3] and not fr[6] and 0 <= fr[4] and fr[5] < fl[0]:
        # rhs maps into lhs's domain: the result's size and offset bounds are known (see
        # _compose_layouts) without a walk over its leaves
        ls, ld = _coalesce_x_plain(lhs._shape, lhs._stride, fl[1])
        r = _compose_flat(ls, ld, rhs._shape, rhs._stride, False)
        _set_facts(r, (fr[0], None, None, True, fl[4], fl[5], None))
        return r
    return _compose_plain_layouts(lhs, fl, rhs._shape, rhs._stride)


@_fast_entry(_composition_op)
def composition(*args: Any, **kw: Any) -> Any:
    # The common case, two plain-int Layouts, without the op wrapper's layer: the same answer, checked
    # the same way (check_fits where it is not known to fit), errors named as the op names them;
    # anything else goes to the op, called as it was called.
    if len(args) == 2 and not kw:
        lhs, rhs = args
        if type(lhs) is Layout and type(rhs) is Layout:
            fl, fr = lhs._facts, rhs._facts
            if fl is not None and fl[2] and fr is not None and fr[2]:
                try:
                    r = _composition_plain(lhs, rhs, fl, fr)
                    g = r._facts
                    if g is None or not g[3]:
                        check_fits(r, "the result")
                    return r
                except LayoutError as e:
                    raise _op_error("composition", args, e) from None
    return _composition_op(*args, **kw)


def _normalize_tiler(t: Any) -> Any:
    if type(t) is Layout:
        return t
    if type(t) is tuple:
        for x in t:
            if type(x) is not Layout:
                break
        else:
            return t  # a tuple of Layouts: nothing to convert
    if isinstance(t, list):
        t = tuple(t)
    if isinstance(t, tuple):
        return tuple(_normalize_tiler(x) for x in t)
    if isinstance(t, str):
        return parse_layout(t)
    if t is not None and not isinstance(t, (Layout, int)):
        import numpy as np

        if isinstance(t, np.integer):
            return int(t)
    return t


# --------------------------------------------------------------------------- complement

def _cotarget_shape(cotarget: Any) -> Any:
    if isinstance(cotarget, Layout):
        return cotarget.shape
    if type(cotarget) in _INT and cotarget >= 1:
        return cotarget
    cotarget = _normalize(cotarget)
    for c in it.flatten_to_tuple(cotarget):
        if type(c) not in _INT or c < 1:
            raise LayoutError(f"the cotarget must be a positive int or a shape, got {_fmt(cotarget)}")
    return cotarget


def _complement_plain(pf: tuple, cotarget: Any, strict: bool, lists: bool = False) -> Any:
    """_complement of a layout of plain ints (facts pf) and an int (or a flat int shape) cotarget, in one pass over its
    leaves sorted by stride; None where _complement must decide (it raises: a negative stride, modes
    that interleave or start together, a cotarget not covered). The result comes with its facts; with
    lists=True, it is given as lists (shapes, strides) of its merged modes instead (none for 1:0), and
    the product of its size and the layout's filtered size (the size the two cover together)."""
    # filter (drop stride-0 modes; the facts hold no shape-1 leaves) and sort by stride. (The leaves are
    # not coalesced first: a merged pair (S, D), (s, S * D) gives the same pieces unmerged, the second
    # adding nothing, and a mode starting inside either start inside both; ties fail either way.)
    fsize = 1
    modes: list = []
    for s, d in pf[1]:
        if d:
            fsize *= s
            modes.append((d, s))
    if not modes:  # nothing to complement: [0, n) itself
        n = cotarget if type(cotarget) is int else it.product(cotarget)
        rs, rd = ([], []) if n == 1 else ([n], [1])
        return (rs, rd, n) if lists else _plain_layout(rs, rd)
    if len(modes) > 1:
        modes.sort()
    # the result's modes of shape > 1, merged as they come (coalesce of the result); its largest
    # offset hi as they come too (a merged mode's (s - 1) * d is the sum of its pieces')
    rs: list = []
    rd: list = []
    got = 1
    cur = 1
    hi = 0
    prev = None
    for d, s in modes:
        if d < 0 or d == prev:
            return None
        prev = d
        n = d // cur
        if n == 0:
            return None
        if n != 1:
            got *= n
            hi += (n - 1) * cur
            if rs and rs[-1] * rd[-1] == cur:
                rs[-1] *= n
            else:
                rs.append(n)
                rd.append(cur)
        cur = d * s
    if type(cotarget) is int:
        rest = -(-cotarget // cur)
        if strict and got * rest < cotarget // fsize:
            return None
    else:  # a shape: divided mode by mode (CuTe's ceil_div of a shape), inline for a flat one
        rest = 1
        b = cur
        for x in cotarget:
            if type(x) is not int:
                rest = it.product(it.ceil_div(cotarget, cur))
                break
            rest *= -(-x // b)
            b = -(-b // x)
    if rest != 1:
        got *= rest
        hi += (rest - 1) * cur
        if rs and rs[-1] * rd[-1] == cur:
            rs[-1] *= rest
        else:
            rs.append(rest)
            rd.append(cur)
    if lists:
        return rs, rd, got * fsize
    if not rs:
        return _plain_layout(rs, rd)
    if got < _INT_LIMIT and hi < _INT_LIMIT:  # strides are positive and at most hi: all fit
        f = (got, tuple(zip(rs, rd)), True, True, 0, hi, False)
        return _raw_facts(rs[0], rd[0], f) if len(rs) == 1 else _raw_facts(tuple(rs), tuple(rd), f)
    return _raw(rs[0], rd[0]) if len(rs) == 1 else _raw(tuple(rs), tuple(rd))


def _plain_layout(rs: list, rd: list) -> Layout:
    """The layout of merged modes rs:rd (positive strides; 1:0 for none), with its facts where it fits."""
    if not rs:
        r = _raw(1, 0)
        _set_facts(r, (1, (), True, True, 0, 0, False))
        return r
    if len(rs) == 1:
        s, d = rs[0], rd[0]
        r = _raw(s, d)
        size, hi = s, (s - 1) * d
    else:
        r = _raw(tuple(rs), tuple(rd))
        size, hi = 1, 0
        for s, d in zip(rs, rd):
            size *= s
            hi += (s - 1) * d
    if size < _INT_LIMIT and hi < _INT_LIMIT:  # strides are positive and at most hi: all fit
        _set_facts(r, (size, tuple(zip(rs, rd)), True, True, 0, hi, False))
    return r




def _complement(layout: Layout, cotarget: Any, strict: bool = False) -> Layout:
    # filter (drop stride-0 and size-1 modes), then coalesce, on the flat modes
    pf = _plain_facts(layout)
    if pf is not None and (type(cotarget) is int or (type(cotarget) is tuple and all(type(c) is int for c in cotarget))):
        r = _complement_plain(pf, cotarget, strict)
        if r is not None:
            return r
    if pf is not None:  # plain ints: the leaves of shape > 1 are known
        pairs = [p for p in pf[1] if p[1] != 0]
        if not pairs:
            n = cotarget if type(cotarget) in _INT else it.product(cotarget)
            return _raw(1, 0) if n == 1 else _raw(n, 1)
        filtered_size = 1
        for p in pairs:
            filtered_size *= p[0]
        shp, std = _merge_pairs(pairs)
    else:
        shp = []
        std = []
        for s, d in zip(it.flatten_to_tuple(layout._shape), it.flatten_to_tuple(layout._stride)):
            if type(d) not in _INT and isinstance(d, ScaledBasis):
                raise LayoutError("complement of a layout with basis strides is not supported")
            if not _one(s) and d != 0:
                shp.append(s)
                std.append(d)
        if not shp:
            n = cotarget if type(cotarget) in _INT else it.product(cotarget)
            return _raw(1, 0) if n == 1 else _raw(n, 1)
        filtered_size = it.product(tuple(shp))
        f = _bw_coalesce(shp[:-1], std[:-1], shp[-1], std[-1])
        shp, std = f._shape, f._stride
        if type(shp) is tuple:
            shp, std = list(shp), list(std)
        else:
            shp, std = [shp], [std]
    for d in std:
        if d < 0:
            raise LayoutError(f"complement needs non-negative strides, but the layout has stride {d}")
    r = len(shp)
    result_shape: list = []
    result_stride: list = [1]
    for i in range(r - 1):
        m = min(std)
        j = std.index(m)
        new_shape = m // result_stride[i]
        if new_shape == 0:
            raise _non_injective(layout, m, result_stride[i])
        result_shape.append(new_shape)
        result_stride.append(m * shp[j])
        del shp[j], std[j]
    new_shape = std[0] // result_stride[r - 1]
    if new_shape == 0:
        raise _non_injective(layout, std[0], result_stride[r - 1])
    result_shape.append(new_shape)
    new_stride = std[0] * shp[0]
    if type(cotarget) in _INT:
        rest_shape = -(-cotarget // new_stride)
    else:
        rest_shape = it.product(it.ceil_div(cotarget, new_stride))
    if type(rest_shape) is DynInt:  # CuTe DSL's ceil_div of a dynamic value knows no divisibility
        rest_shape = DynInt(int(rest_shape))
    rest_stride = 0 if _one(rest_shape) else new_stride
    got = it.product(tuple(result_shape)) * rest_shape
    need = (cotarget if type(cotarget) in _INT else it.product(cotarget)) // filtered_size
    if strict and type(cotarget) in _INT and got < need:
        # CuTe's @post size(result) >= cosize_hi / size(filter(layout)) fails. (A shape cotarget is
        # divided mode by mode, CuTe's ceil_div of a shape, so the check is made for int cotargets.)
        raise _short(layout, cotarget, got, need)
    if pf is not None and type(rest_shape) is int:  # plain ints: merge the modes of shape > 1, with the result's facts
        result_shape.append(rest_shape)
        result_stride.append(rest_stride)
        return _from_lists(*_merge_pairs([p for p in zip(result_shape, result_stride) if p[0] != 1]), facts=True)
    return _bw_coalesce(result_shape, result_stride, rest_shape, rest_stride)


def _short(layout: Layout, cotarget: Any, got: int, need: int) -> LayoutError:
    return LayoutError(
        f"no complement exists: CuTe's answer would have size {got}, less than its own postcondition "
        f"size(result) >= size(cotarget) / size(filter(layout)) = {need}: a mode's stride is not a multiple of "
        f"the span of the modes of smaller stride, and the offsets in between are reached by neither the "
        f"layout nor the complement, so layout and complement do not cover the cotarget {_fmt(cotarget)}"
    )


def _non_injective(layout: Layout, d: int, span: int) -> LayoutError:
    return LayoutError(
        f"no complement exists: after sorting the modes by stride, the mode of stride {d} starts "
        f"inside the span {span} of the modes of smaller stride, so the layout is not injective or its "
        f"modes interleave (CuTe: 'Non-injective Layout detected in complement')"
    )


@_op("complement")
def complement(layout: Any, cotarget: Any = None) -> Layout:
    """The layout of the offsets in [0, cotarget) that layout does not reach, ordered.

    cotarget defaults to cosize(layout); it may be an int or a shape.
    Postconditions (CuTe's): result is ordered (result(i-1) < result(i)), its image is disjoint
    from layout's (but for 0), and size(result) >= size(cotarget) // size(filter(layout)).
    make_layout(layout, result) covers [0, size(cotarget)) only when, with the modes sorted by
    stride, each stride is a multiple of the span of the modes below it.

    Where CuTe leaves the answer undefined, this raises a LayoutError instead (the same rule as
    the other operations: refuse where CuTe's answer is outside the operation's domain):
    a non-injective layout or interleaved modes (CuTe: "Non-injective Layout detected"),
    negative strides, and (for an int cotarget) layouts whose gaps make CuTe's answer break its own
    size postcondition, e.g. complement((2,12):(16,1), 96), where CuTe (C++ and DSL) answers 3:32, which leaves
    offsets 12..15, 28..31, ... reached by neither. Inside divides and products, where the
    complement is only composed with a tiler, that last check is not made (the composition
    extends past the complement's size as CuTe's does).

    >>> print(complement(Layout.parse("4:2"), 8))
    2:1
    >>> print(complement(Layout.parse("(2,2):(1,6)"), 24))
    (3,2):(2,12)
    """
    if type(layout) is Layout and type(cotarget) is int and cotarget >= 1:  # the common case: no conversions
        pf = layout._facts
        if pf is not None and pf[2]:
            r = _complement_plain(pf, cotarget, True)
            if r is not None:
                return r
        return _complement(layout, cotarget, strict=True)
    layout = _as_layout(layout, "complement", "layout")
    if cotarget is None:
        cot = cosize(_coalesce(_filter_zeros(layout)))
    else:
        cot = _cotarget_shape(cotarget)
    return _complement(layout, cot, strict=True)


_complement_op = complement  # the op: operands named in its errors, its result checked


@functools.wraps(_complement_op)  # its name, doc and (through __wrapped__) signature
def complement(*args: Any, **kw: Any) -> Layout:
    # The common case, a plain-int Layout and an int, without the op wrapper's layer: where the plain
    # path answers (it never raises) with a result known to fit in 64 bits, that is the op's answer;
    # anything else goes to the op, called as it was called (so errors name the operands as before).
    if len(args) == 2 and not kw:
        layout, cotarget = args
        if type(layout) is Layout and type(cotarget) is int and cotarget >= 1:
            pf = layout._facts
            if pf is not None and pf[2]:
                r = _complement_plain(pf, cotarget, True)
                if r is not None:
                    g = r._facts
                    if g is not None and g[3]:
                        return r
    return _complement_op(*args, **kw)


# --------------------------------------------------------------------------- inverses

def _wrapped_coalesce(layout: Layout) -> tuple:
    pf = _plain_facts(layout)
    if pf is not None:  # plain ints: the merged leaves, no basis strides
        shp, std = _merge_pairs(pf[1])
        if not shp:
            shp, std = [1], [0]
    else:
        c = _coalesce(layout)
        shp, std = c._shape, c._stride
        if type(shp) is not tuple:
            shp, std = (shp,), (std,)
        for d in std:
            if isinstance(d, ScaledBasis):
                raise LayoutError("inverses of layouts with basis strides are not supported")
    pre = [1]
    for s in shp:
        pre.append(pre[-1] * s)
    return shp, std, pre


def _right_inverse_plain(pairs: tuple) -> Layout:
    """right_inverse of the layout of plain ints whose leaves of shape > 1 are pairs (its facts), with
    the result's facts where it fits (its strides are prefix products: positive, its offsets from 0)."""
    shp, std = _merge_pairs(pairs)  # coalesce
    p = 1
    cols = []
    for i in range(len(shp)):
        cols.append((std[i], i, p))  # sorted by stride, ties in mode order
        p *= shp[i]
    cols.sort()
    rs: list = []
    rd: list = []
    curr = 1
    size = 1
    hi = 0
    for d, i, p in cols:
        if d == curr:
            x = shp[i]
            size *= x
            hi += (x - 1) * p  # a merged mode's (s - 1) * d is the sum of its pieces'
            if rs and rs[-1] * rd[-1] == p:  # merged as they come (coalesce of the result)
                rs[-1] *= x
            else:
                rs.append(x)
                rd.append(p)
            curr = x * d
    if not rs:
        return _raw_facts(1, 0, (1, (), True, True, 0, 0, False))
    if size < _INT_LIMIT and hi < _INT_LIMIT:
        f = (size, tuple(zip(rs, rd)), True, True, 0, hi, False)
        return _raw_facts(rs[0], rd[0], f) if len(rs) == 1 else _raw_facts(tuple(rs), tuple(rd), f)
    return _raw(rs[0], rd[0]) if len(rs) == 1 else _raw(tuple(rs), tuple(rd))


@_op("right_inverse", keeps_fit=True)
def right_inverse(layout: Any) -> Layout:
    """The layout R with layout(R(i)) == i for all i < size(R), as large as possible.

    >>> print(right_inverse(Layout.parse("(4,2):(2,1)")))
    (2,4):(4,1)
    """
    if type(layout) is Layout:
        f = layout._facts
        if f is not None and f[2]:  # plain ints: in one pass over the merged leaves, with its facts
            return _right_inverse_plain(f[1])
    if layout is None:
        return None
    layout = _as_layout(layout, "right_inverse", "layout")
    shp, std, pre = _wrapped_coalesce(layout)
    order = sorted(range(len(std)), key=std.__getitem__)
    rs, rd = [1], [0]
    curr = 1
    for i in order:
        if std[i] == curr:
            rs.append(shp[i])
            rd.append(pre[i])
            curr = shp[i] * std[i]
    if type(curr) is int and all(type(x) is int for x in rs) and all(type(x) is int for x in rd):
        return _from_lists(*_merge_pairs([p for p in zip(rs, rd) if p[0] != 1]))
    return _bw_coalesce(rs[:-1], rd[:-1], rs[-1], rd[-1])  # coalesce of the flat (rs):(rd)


_right_inverse_op = right_inverse  # the op: operands named in its errors, its result checked


@_fast_entry(_right_inverse_op)
def right_inverse(*args: Any, **kw: Any) -> Layout:
    # One plain-int Layout, without the op wrapper's layer: where the plain path's answer is known to
    # fit (it cannot fail), that is the op's answer; anything else goes to the op as called.
    if len(args) == 1 and not kw:
        layout = args[0]
        if type(layout) is Layout:
            f = layout._facts
            if f is not None and f[2]:
                r = _right_inverse_plain(f[1])
                g = r._facts
                if g is not None and g[3]:
                    return r
    return _right_inverse_op(*args, **kw)


def _left_inverse_pieces(shp: Any, std: Any, pre: list) -> tuple | None:
    """left_inverse's (shapes, strides) lists of the coalesced modes shp:std (prefix products pre),
    unmerged; None where every stride is 0. Raises where the op refuses."""
    for d in std:
        if d < 0:
            raise LayoutError(f"left inverse needs non-negative strides, but the layout has stride {d}")
    order = sorted(range(len(std)), key=std.__getitem__)
    rs: list = []
    rd: list = [0]
    sz = 1
    for i in order:
        d = std[i]
        if d == 0:
            continue
        if d % sz != 0:
            raise LayoutError(
                f"left inverse divisibility fails: stride {d} is not a multiple of {sz}, the size "
                f"covered by the modes of smaller stride ({d} % {sz} != 0)"
            )
        rs.append(d // sz)
        rd.append(pre[i])
        sz *= d // sz
    if not rs:
        return None
    rs.append(shp[order[-1]])
    return rs, rd


def _left_inverse_plain(pairs: tuple) -> Layout:
    """left_inverse of the layout of plain ints whose leaves of shape > 1 are pairs (its facts), with
    the result's facts where it fits. Raises where the op refuses."""
    shp, std = _merge_pairs(pairs)
    if not shp:
        shp, std = [1], [0]
    pre = [1]
    for s in shp:
        pre.append(pre[-1] * s)
    p = _left_inverse_pieces(shp, std, pre)
    if p is None:
        return _raw_facts(1, 0, (1, (), True, True, 0, 0, False))  # nothing to invert: every stride is 0
    return _from_lists(*_merge_pairs([q for q in zip(*p) if q[0] != 1]), facts=True)


@_op("left_inverse")
def left_inverse(layout: Any) -> Layout:
    """The layout L with L(layout(i)) == i for all i < size(layout), for an injective layout.

    >>> print(left_inverse(Layout.parse("(4,2):(2,1)")))
    (2,4):(4,1)
    """
    if type(layout) is Layout:
        f = layout._facts
        if f is not None and f[2]:
            return _left_inverse_plain(f[1])
    if layout is None:
        return None
    layout = _as_layout(layout, "left_inverse", "layout")
    shp, std, pre = _wrapped_coalesce(layout)
    p = _left_inverse_pieces(shp, std, pre)
    if p is None:
        return _raw(1, 0)  # nothing to invert: every stride is 0
    rs, rd = p
    if all(type(x) is int for x in rs) and all(type(x) is int for x in rd):  # plain: merge, as _coalesce does
        return _from_lists(*_merge_pairs([q for q in zip(rs, rd) if q[0] != 1]), facts=True)
    return _coalesce(_raw(tuple(rs), tuple(rd)))


_left_inverse_op = left_inverse  # the op: operands named in its errors, its result checked


@_fast_entry(_left_inverse_op)
def left_inverse(*args: Any, **kw: Any) -> Layout:
    # One plain-int Layout, without the op wrapper's layer (as composition's fast entry)
    if len(args) == 1 and not kw:
        layout = args[0]
        if type(layout) is Layout:
            f = layout._facts
            if f is not None and f[2]:
                try:
                    r = _left_inverse_plain(f[1])
                    g = r._facts
                    if g is None or not g[3]:
                        check_fits(r, "the result")
                    return r
                except LayoutError as e:
                    raise _op_error("left_inverse", args, e) from None
    return _left_inverse_op(*args, **kw)


# --------------------------------------------------------------------------- max common

def _first_mode(layout: Layout) -> Layout:
    if type(layout._shape) is tuple:
        return _raw(layout._shape[0], layout._stride[0])
    return layout


@_op("max_common_layout")
def max_common_layout(a: Any, b: Any) -> Layout:
    """The largest layout R such that a(R(i)) == i and b(R(i)) == i (a common contiguous vector).

    >>> print(max_common_layout(Layout.parse("(4,8):(1,4)"), Layout.parse("(4,8):(1,8)")))
    4:1
    """
    a = _as_layout(a, "max_common_layout", "first layout")
    b = _as_layout(b, "max_common_layout", "second layout")
    inv_b = right_inverse(b)
    common = _coalesce(_compose_layouts(a, inv_b))
    m = _first_mode(common)
    if m._stride == 1:
        return _compose_layouts(inv_b, m)
    return _raw(1, 0)


@_op("max_common_vector")
def max_common_vector(a: Any, b: Any) -> int:
    """The number of contiguous elements on which a and b agree (at least 1).

    >>> max_common_vector(Layout.parse("(4,8):(1,4)"), Layout.parse("(4,8):(1,8)"))
    4
    """
    a = _as_layout(a, "max_common_vector", "first layout")
    b = _as_layout(b, "max_common_vector", "second layout")
    common = _coalesce(_compose_layouts(a, right_inverse(b)))
    m = _first_mode(common)
    return m._shape if m._stride == 1 else 1


@_op("nullspace")
def nullspace(layout: Any) -> Layout:
    """The layout of the indices that layout maps to 0: its stride-0 modes, with compact strides.

    >>> print(nullspace(Layout.parse("(2,4,3):(0,1,0)")))
    (2,3):(1,8)
    """
    layout = _as_layout(layout, "nullspace", "layout")
    fs = it.flatten_to_tuple(layout._shape)
    fd = it.flatten_to_tuple(layout._stride)
    idx = [i for i, d in enumerate(fd) if _is_zero(d)]
    if not idx:
        return _raw(1, 0)
    rstride = [1]
    for x in fs[:-1]:
        rstride.append(rstride[-1] * x)  # plain prefix products, as CuTe DSL computes them
    if len(idx) == 1:
        return _raw(fs[idx[0]], rstride[idx[0]])
    return _raw(tuple(fs[i] for i in idx), tuple(rstride[i] for i in idx))


# --------------------------------------------------------------------------- divide

def _zip2_by(t: Any, guide: Any, what: str) -> tuple:
    if isinstance(guide, tuple):
        if not isinstance(t, tuple) or len(t) < len(guide):
            raise LayoutError(f"cannot gather tiles: {what} {_fmt(t)} has fewer modes than the tiler {_fmt(guide)}")
        split = [_zip2_by(t[i], guide[i], what) for i in range(len(guide))]
        return tuple(s[0] for s in split), tuple(s[1] for s in split) + tuple(t[len(guide):])
    if not isinstance(t, tuple) or len(t) != 2:
        raise LayoutError(
            f"cannot gather tiles: the mode {_fmt(t)} under a tiler leaf is not a (tile, rest) pair; "
            f"use a Layout or an int for every tiler mode that divides"
        )
    return t


def _tile_unzip(layout: Layout, tiler: Any) -> Layout:
    s, d = layout._shape, layout._stride
    r = None
    if type(tiler) is tuple and type(s) is tuple and len(s) >= len(tiler):
        # the common case, a flat tiler over (tile, rest) pairs: _zip2_by's answer in one pass (the
        # stride is congruent with the shape)
        ts, rs, td, rd = [], [], [], []
        for t, x, y in zip(tiler, s, d):
            if type(t) is tuple or type(x) is not tuple or len(x) != 2:
                break
            ts.append(x[0])
            rs.append(x[1])
            td.append(y[0])
            rd.append(y[1])
        else:
            k = len(tiler)
            r = _raw((tuple(ts), tuple(rs) + s[k:]), (tuple(td), tuple(rd) + d[k:]))
    if r is None:
        r = _raw(_zip2_by(s, tiler, "the shape"), _zip2_by(d, tiler, "the stride"))
    f = layout._facts
    if f is not None and f[3]:  # the same leaves, regrouped: it fits as layout does, same size and offsets
        _set_facts(r, f if f[2] is None else (f[0], None, None, True, f[4], f[5], None))
    return r


def _divide_plain(layout: Layout, tiler: tuple, zipped: bool) -> Layout | None:
    """logical_divide (zipped: zipped_divide) of a layout of plain ints by a tuple of plain-int Layouts,
    mode by mode in one pass (no layout per mode, no concatenation, no regrouping), built with its
    facts; None where the general path must decide (it answers the same, or raises). Each mode is
    divided as _logical_divide's plain path divides it, in the same order, so an error raised here (by
    the composition) is the one the general path raises."""
    shp, std = layout._shape, layout._stride
    k = len(tiler)
    if type(shp) is not tuple or k > len(shp):
        return None
    f = layout._facts
    if f is None or f[2] is None:
        f = _facts_of(layout)
    if not f[2]:
        return None
    for t in tiler:
        if type(t) is not Layout:
            return None
        ft = t._facts
        if ft is None or not ft[2]:
            return None
    ts: list = []  # the tiles' and the rests' shapes and strides
    td: list = []
    rs_: list = []
    rd_: list = []
    tl: list = []  # their leaves, in order: all tiles', all rests', every mode's (tile, rest)
    rl: list = []
    ml: list = []
    for i in range(k):
        s, d, t = shp[i], std[i], tiler[i]
        if type(s) is tuple:
            pairs = [p for p in zip(it.flatten(s), it.flatten(d)) if p[0] != 1]
        else:
            pairs = [(s, d)] if s != 1 else []
        rs, rd = _merge_pairs(pairs)  # coalesce(mode)
        comp = _complement_plain(t._facts, (rs[0] if len(rs) == 1 else tuple(rs)) if rs else 1, False, True)
        if comp is None:
            return None
        cs, cd, _ = comp
        cs, cd = ((cs[0], cd[0]) if len(cs) == 1 else (tuple(cs), tuple(cd))) if cs else (1, 0)
        last = s
        while type(last) is tuple and last:
            last = last[-1]
        if rs and type(last) is int and last != 1:  # _coalesce_x of the mode is its coalesce
            ls, ld = (tuple(rs), tuple(rd)) if len(rs) > 1 else (rs[0], rd[0])
        else:
            ls, ld = _coalesce_x_plain(s, d, pairs)
        pieces: list = []
        if zipped:
            a, b = _compose_plain(ls, ld, t._shape, t._stride, pieces, tl)
            c, e = _compose_plain(ls, ld, cs, cd, pieces, rl)
        else:
            a, b = _compose_plain(ls, ld, t._shape, t._stride, pieces, ml)
            c, e = _compose_plain(ls, ld, cs, cd, pieces, ml)
        if len(pieces) > 1:
            _check_carry_free(_raw(ls, ld), pieces)
        ts.append(a)
        td.append(b)
        rs_.append(c)
        rd_.append(e)
    if zipped:
        rshape, rstride = (tuple(ts), tuple(rs_) + shp[k:]), (tuple(td), tuple(rd_) + std[k:])
        leaves = tl + rl
    else:
        rshape, rstride = tuple(zip(ts, rs_)) + shp[k:], tuple(zip(td, rd_)) + std[k:]
        leaves = ml
    if k < len(shp):
        leaves += zip(it.flatten(shp[k:]), it.flatten(std[k:]))
    return _plain_result(rshape, rstride, leaves)


def _logical_divide(layout: Layout, tiler: Any) -> Layout:
    if isinstance(tiler, Layout):
        fl, ft = _plain_facts(layout), _plain_facts(tiler)
        if fl is not None and ft is not None:  # plain ints: straight from the facts
            rs, rd = _merge_pairs(fl[1])  # coalesce(layout)
            comp = _complement_plain(ft, (rs[0] if len(rs) == 1 else tuple(rs)) if rs else 1, False, True)
            if comp is not None:  # composed with (tiler, comp), a layout of plain ints
                cs, cd, _ = comp
                cs, cd = ((cs[0], cd[0]) if len(cs) == 1 else (tuple(cs), tuple(cd))) if cs else (1, 0)
                last = layout._shape
                while type(last) is tuple and last:
                    last = last[-1]
                if rs and type(last) is int and last != 1:  # _coalesce_x_plain(layout) is rs:rd
                    return _compose_flat(*((tuple(rs), tuple(rd)) if len(rs) > 1 else (rs[0], rd[0])),
                                         (tiler._shape, cs), (tiler._stride, cd))
                return _compose_plain_layouts(layout, fl, (tiler._shape, cs), (tiler._stride, cd), rs, rd)
        cot = _coalesce(layout)._shape
        comp = _complement(tiler, cot)
        rhs = _raw((tiler._shape, comp._shape), (tiler._stride, comp._stride))
        return _compose_layouts(layout, _concat_fits((tiler, comp), rhs, known=True))
    if isinstance(tiler, tuple):
        r = _divide_plain(layout, tiler, False)
        if r is not None:
            return r
        return _by_mode(layout, tiler, _logical_divide, "logical_divide")
    if tiler is None:
        return layout
    if type(tiler) in _INT:
        if tiler < 1:
            raise LayoutError(f"a tile size must be positive, got {tiler}")
        return _logical_divide(layout, make_layout(tiler))
    raise LayoutError(f"the tiler must be a Layout, an int, None or a tuple of those, got {tiler!r}")


def _layout_or_tensor(op: str, x: Any, f: Callable, tiler: Any) -> Any:
    """Dispatch tensors to their own method (x.__cute_apply__), layouts to f."""
    if not isinstance(x, Layout) and hasattr(x, "__cute_apply__"):
        return x.__cute_apply__(op, tiler)
    x = _as_layout(x, op, "layout")
    return f(x, _normalize_tiler(tiler))


@_op("logical_divide")
def logical_divide(layout: Any, tiler: Any) -> Any:
    """Split layout into (tile, rest): composition(layout, (tiler, complement(tiler, size))).

    A tuple tiler divides mode by mode: ((TileM,RestM), (TileN,RestN), ...).

    >>> print(logical_divide(Layout.parse("(4,2,3):(2,1,8)"), Layout.parse("4:2")))
    ((2,2),(2,3)):((4,1),(2,8))
    """
    return _layout_or_tensor("logical_divide", layout, _logical_divide, tiler)


_logical_divide_op = logical_divide  # the op: operands named in its errors, its result checked


logical_divide = _tiler_fast_entry(_logical_divide_op, "logical_divide", _logical_divide, True)


def _zipped_divide(layout: Layout, tiler: Any) -> Layout:
    return _tile_unzip(_logical_divide(layout, tiler), tiler)


def _unpack(layout: Layout, first: bool, second: bool) -> Layout:
    """Unpack mode 0 and/or mode 1 of a rank-2 layout into top-level modes."""
    out_s: list = []
    out_d: list = []
    for k, unpack in ((0, first), (1, second)):
        s, d = layout._shape[k], layout._stride[k]
        if unpack and isinstance(s, tuple):
            out_s.extend(s)
            out_d.extend(d)
        else:
            out_s.append(s)
            out_d.append(d)
    return _raw(tuple(out_s), tuple(out_d))


@_op("zipped_divide")
def zipped_divide(layout: Any, tiler: Any) -> Any:
    """logical_divide gathered into ((TileM,TileN,...), (RestM,RestN,...)).

    >>> print(zipped_divide(Layout.parse("(8192,8192):(8192,1)"), (1, 16)))
    ((1,16),(8192,512)):((0,1),(8192,16))
    """
    if type(layout) is Layout:
        return _zipped_divide_layout(layout, tiler)
    return _layout_or_tensor("zipped_divide", layout, _zipped_divide, tiler)


def _zipped_divide_layout(layout: Layout, tiler: Any) -> Layout:
    tiler = _normalize_tiler(tiler)
    if type(tiler) is tuple:
        r = _divide_plain(layout, tiler, True)
        if r is not None:
            return r
    return _tile_unzip(_logical_divide(layout, tiler), tiler)


_zipped_divide_op = zipped_divide  # the op: operands named in its errors, its result checked


zipped_divide = _tiler_fast_entry(_zipped_divide_op, "zipped_divide", _zipped_divide_layout, False)


@_op("tiled_divide")
def tiled_divide(layout: Any, tiler: Any) -> Any:
    """zipped_divide with the rest modes unpacked: ((TileM,TileN), RestM, RestN, ...).

    >>> print(tiled_divide(Layout.parse("(8192,8192):(8192,1)"), (1, 16)))
    ((1,16),8192,512):((0,1),8192,16)
    """
    return _layout_or_tensor("tiled_divide", layout, lambda l, t: _unpack(_zipped_divide(l, t), False, True), tiler)


@_op("flat_divide")
def flat_divide(layout: Any, tiler: Any) -> Any:
    """zipped_divide with both modes unpacked: (TileM, TileN, RestM, RestN, ...)."""
    return _layout_or_tensor("flat_divide", layout, lambda l, t: _unpack(_zipped_divide(l, t), True, True), tiler)


# --------------------------------------------------------------------------- product

def _logical_product(block: Layout, tiler: Any) -> Layout:
    if isinstance(tiler, Layout):
        fb, ft = _plain_facts(block), _plain_facts(tiler)
        if fb is not None and ft is not None:  # plain ints: size, strides and cosize from the facts
            span = 0  # cosize(tiler) - 1 (the leaves of shape > 1 all have stride 0 where it is 0)
            for s, d in ft[1]:
                span += (s - 1) * (d if d > 0 else -d)
            if not span and not ft[6]:  # composition with stride 0 ignores the complement
                return _concat_fits((block, tiler), _raw((block._shape, tiler._shape), (block._stride, tiler._stride)))
            n = fb[0] * (1 + span)
            lists = _complement_plain(fb, n, False, True)
            if lists is not None:  # the complement as merged modes: composed without building it
                cs, cd, got = lists
                if len(cs) > 1:
                    ls, ld = tuple(cs), tuple(cd)
                elif cs:
                    ls, ld = cs[0], cd[0]
                else:
                    ls, ld = 2, 0  # _coalesce_x of 1:0
                rest = _compose_flat(ls, ld, tiler._shape, tiler._stride)
                out = _concat_fits((block, rest), _raw((block._shape, rest._shape), (block._stride, rest._stride)))
                if got >= n:  # _check_product_injective's first test: the complement is not short
                    return out
                _check_product_injective(block, _complement_plain(fb, n, False), n, out)
                return out
            comp = _complement(block, n)  # decides (and raises) as before
            rest = _compose_layouts(comp, tiler)
            out = _concat_fits((block, rest), _raw((block._shape, rest._shape), (block._stride, rest._stride)))
            fc = comp._facts
            if fc is not None and fc[2]:  # _check_product_injective's first test, from the facts
                filtered = 1
                for s, d in fb[1]:
                    if d != 0:
                        filtered *= s
                if fc[0] * filtered >= n:
                    return out
            _check_product_injective(block, comp, n, out)  # as the general path does
            return out
        if all(_is_zero(d) for d in it.flatten_to_tuple(tiler._stride)):
            return make_layout(block, tiler)  # composition with stride 0 ignores the complement
        n = it.product(block._shape) * cosize(tiler)
        comp = _complement(block, n)
        rest = _compose_layouts(comp, tiler)
        out = _raw((block._shape, rest._shape), (block._stride, rest._stride))
        if type(n) in _INT:
            _check_product_injective(block, comp, n, out)
        return out
    if isinstance(tiler, tuple):
        return _by_mode(block, tiler, _logical_product, "logical_product")
    if tiler is None:
        return block
    if type(tiler) in _INT:
        if tiler < 1:
            raise LayoutError(f"a tile size must be positive, got {tiler}")
        return _logical_product(block, make_layout(tiler))
    raise LayoutError(f"the tiler must be a Layout, an int, None or a tuple of those, got {tiler!r}")


def _check_product_injective(block: Layout, comp: Layout, n: int, out: Layout) -> None:
    """Where complement(block, n) is short of its own size postcondition (complement refuses it),
    the tiler reaches past the complement and copies of the block may land on one another:
    refuse the product if they do. Decided on the modes where it can be (modes sorted by stride,
    each starting past the span of those below), else by evaluating a result of at most 2^22."""
    filtered = it.product(tuple(s for s, d in zip(it.flatten_to_tuple(block._shape), it.flatten_to_tuple(block._stride))
                                if not _one(s) and d != 0))
    got = it.product(comp._shape)
    if type(got) not in _INT or type(filtered) not in _INT or got * filtered >= n:
        return
    modes = sorted((d, s) for s, d in zip(it.flatten_to_tuple(out._shape), it.flatten_to_tuple(out._stride))
                   if not _one(s))
    if all(type(d) in _INT and type(s) in _INT for d, s in modes):
        span, ok = 1, True
        for d, s in modes:
            if d < span:
                ok = False
                break
            span = d * (s - 1) + span
        if ok:
            return
        size_out = it.product(tuple(s for _, s in modes))
        if size_out <= 1 << 22:
            from .layout import evaluate_all

            offs = evaluate_all(out)
            distinct = len(set(offs.tolist()))
            if distinct < size_out:
                raise LayoutError(
                    f"the result {out} is not injective ({size_out} indices onto {distinct} offsets): the tiler "
                    f"reaches past complement({block}, {n}), which is short of its own postcondition "
                    f"({_short(block, n, got, n // filtered)})"
                )


def _as_block(x: Any, op: str) -> Layout:
    return _as_layout(x, op, "block")


@_op("logical_product")
def logical_product(block: Any, tiler: Any) -> Layout:
    """(block, complement(block) o tiler): tiler's layout of copies of block.

    >>> print(logical_product(Layout.parse("(2,2):(4,1)"), Layout.parse("6:1")))
    ((2,2),(2,3)):((4,1),(2,8))
    """
    return _logical_product(_as_block(block, "logical_product"), _normalize_tiler(tiler))


_logical_product_op = logical_product  # the op: operands named in its errors, its result checked


logical_product = _tiler_fast_entry(_logical_product_op, "logical_product", _logical_product, True)


@_op("zipped_product")
def zipped_product(block: Any, tiler: Any) -> Layout:
    """logical_product gathered into ((block modes), (product modes))."""
    t = _normalize_tiler(tiler)
    return _tile_unzip(_logical_product(_as_block(block, "zipped_product"), t), t)


@_op("tiled_product")
def tiled_product(block: Any, tiler: Any) -> Layout:
    """zipped_product with the product modes unpacked."""
    t = _normalize_tiler(tiler)
    return _unpack(_tile_unzip(_logical_product(_as_block(block, "tiled_product"), t), t), False, True)


@_op("flat_product")
def flat_product(block: Any, tiler: Any) -> Layout:
    """zipped_product with both modes unpacked."""
    t = _normalize_tiler(tiler)
    return _unpack(_tile_unzip(_logical_product(_as_block(block, "flat_product"), t), t), True, True)


def _append_to(layout: Layout, r: int) -> Layout:
    n = _rank(layout)
    if n >= r:
        return layout
    modes = _modes(layout) + [_raw(1, 0)] * (r - n)
    return _concat(modes)


def _zip(a: Layout, b: Layout) -> Layout:
    """Mode-wise pairs ((a0,b0),(a1,b1),...); a scalar a pairs with the whole of b: ((a,b))."""
    sa, da, sb, db = a._shape, a._stride, b._shape, b._stride
    if type(sa) is tuple:
        if type(sb) is not tuple and len(sa) == 1:
            # rank 1 both, but a 1-tuple against a scalar: CuTe DSL 4.8.1 refuses this pairing
            # ("unable to compute product"), so we do too, saying how to write it instead
            raise LayoutError(
                f"cannot pair the modes of {a} with those of {b}: one is a 1-tuple and the other a scalar "
                f"(CuTe DSL rejects this too: 'unable to compute product'); give both operands the same "
                f"profile, e.g. both as 1-tuples"
            )
        if type(sb) is not tuple or len(sb) != len(sa):
            raise LayoutError(f"cannot pair the modes of {a} with those of {b}: their ranks differ")
        return _raw(tuple(zip(sa, sb)), tuple(zip(da, db)))
    return _raw(((sa, sb),), ((da, db),))


def zip_layouts(a: Layout, b: Layout) -> Layout:
    """Mode-wise zip of two layouts of equal rank: ((a0,b0),(a1,b1),...)."""
    return _zip(a, b)


def _rank_product(block: Any, tiler: Any, op: str, raked: bool) -> Layout:
    block = _as_layout(block, op, "block")
    tiler = _as_layout(tiler, op, "tiler")
    r = max(_rank(block), _rank(tiler))
    res = _logical_product(_append_to(block, r), _append_to(tiler, r))
    first = _raw(res._shape[0], res._stride[0])
    second = _raw(res._shape[1], res._stride[1])
    if not raked:
        return _zip(first, second)
    # CuTe DSL coalesces each mode of a raked product ((tiler_i, block_i) -> one flat mode)
    return _concat([_coalesce(m) for m in _modes(_zip(second, first))])


@_op("blocked_product")
def blocked_product(block: Any, tiler: Any) -> Layout:
    """Repeat block over tiler, block by block: mode i is (block_i, tiler_i).

    >>> print(blocked_product(Layout.parse("(2,5):(5,1)"), Layout.parse("(3,4):(1,3)")))
    ((2,3),(5,4)):((5,10),(1,30))
    """
    return _rank_product(block, tiler, "blocked_product", raked=False)


@_op("raked_product")
def raked_product(block: Any, tiler: Any) -> Layout:
    """Repeat block over tiler, interleaved: mode i is (tiler_i, block_i).

    >>> print(raked_product(Layout.parse("(2,5):(5,1)"), Layout.parse("(3,4):(1,3)")))
    ((3,2),(4,5)):((10,5),(30,1))
    """
    return _rank_product(block, tiler, "raked_product", raked=True)


@_op("tile_to_shape")
def tile_to_shape(block: Any, trg_shape: Any, order: Any = None) -> Layout:
    """Repeat block (blocked_product) until it has the target shape, in the mode order given.

    >>> print(tile_to_shape(Layout.parse("(2,2):(1,2)"), (4, 6)))
    ((2,2),(2,3)):((1,4),(2,8))
    """
    block = _as_layout(block, "tile_to_shape", "block")
    trg = _int_constants(trg_shape.shape if isinstance(trg_shape, Layout) else trg_shape)
    if _kernel_values(trg):
        return _tile_to_kernel_shape(block, trg, order)
    trg = _normalize(trg)
    if any(type(x) not in _INT or x < 1 for x in it.flatten_to_tuple(trg)):
        raise LayoutError(f"the target shape must be positive ints (an int or a tuple of them), got {trg_shape!r}")
    r = it.rank(trg)
    if _rank(block) > r:
        raise LayoutError(f"the block has rank {_rank(block)}, more than the target shape's rank {r}")
    padded = _append_to(block, r)
    block_shape = it.product_each(padded._shape)
    target_shape = it.product_each(trg)
    if not isinstance(block_shape, tuple):
        block_shape, target_shape = (block_shape,), (target_shape,) if not isinstance(target_shape, tuple) else target_shape
    elif not isinstance(target_shape, tuple):  # a rank-1 block (a 1-tuple) and an int target
        target_shape = (target_shape,)
    for i, (b, t) in enumerate(zip(block_shape, target_shape)):
        # CuTe static_asserts this for static extents; a runtime one is covered by ceil_div's rounding up
        if type(b) in _INT and type(t) in _INT and not is_dynamic(b) and not is_dynamic(t) and t % b:
            raise LayoutError(f"the block's shape {it.tuple_str(block_shape)} does not divide the target shape "
                              f"{it.tuple_str(target_shape)}: mode {i} is {t}, not a multiple of {b} "
                              f"(CuTe: 'tile_to_shape: block shape does not divide the target shape')")
    prod_shape = it.ceil_div(target_shape, block_shape)
    if isinstance(prod_shape, tuple) and len(prod_shape) == 1 and not isinstance(trg, tuple):
        prod_shape = prod_shape[0]
    if order is None:
        tiler = make_layout(prod_shape)
    else:
        tiler = make_ordered_layout(prod_shape, order)
    return blocked_product(padded, tiler)


def _int_constants(t: Any) -> Any:
    """A shape with its cutlass integer constants (``cutlass.Int32(1)``, an int subclass) as plain ints."""
    if isinstance(t, (tuple, list)):
        return tuple(_int_constants(x) for x in t)
    if isinstance(t, int) and not isinstance(t, (bool, DynInt)) and type(t) is not int:
        return int(t)
    return t


def _kernel_values(shape: Any) -> bool:
    """Whether a shape holds a value a kernel computes (a traced integer, not known when it is traced)."""
    from .tracing import TracedValue

    return any(isinstance(x, TracedValue) for x in it.flatten_to_tuple(shape))


def _tile_to_kernel_shape(block: Layout, trg: Any, order: Any) -> Any:
    """tile_to_shape onto a target with extents a kernel computes: the layout CuTe builds, mode i
    (block_i, ceil_div(target_i, block_i)), with the rest counts and their strides (cosize(block) times the
    rest counts of the modes before it in ``order``) computed in the kernel; the kernel's layout with
    runtime entries (tracing.hooks.runtime_layout). The block's image must be compact (complement of size 1),
    so that the repeats sit end to end, as a scale-factor atom's do."""
    from .tracing import hooks

    trg = trg if isinstance(trg, tuple) else (trg,)
    r = len(trg)
    if _rank(block) > r:
        raise LayoutError(f"the block has rank {_rank(block)}, more than the target shape's rank {r}")
    if hooks.runtime_layout is None:
        raise LayoutError(f"a target shape {trg!r} with values computed in a kernel needs the kernel's runtime layouts")
    padded = _append_to(block, r)
    if it.product(complement(padded).shape) != 1:
        raise LayoutError(f"onto a shape with extents computed in a kernel, cutelab tiles a block whose offsets are "
                          f"compact only (its complement of size 1); {padded} has holes")
    c = cosize(padded)
    order = tuple(range(r)) if order is None else tuple(_normalize(order))
    if len(order) != r or len(set(order)) != r:
        raise LayoutError(f"order {order!r} must give each of the target's {r} modes a distinct rank")

    rests = []
    for i in range(r):
        b = it.product(padded._shape[i] if isinstance(padded._shape, tuple) else padded._shape)
        t = it.product(it.flatten_to_tuple(trg[i]))
        rests.append((t + (b - 1)) // b if not isinstance(t, int) or is_dynamic(t) else -(-t // b))
    shapes, strides = [], []
    for i in range(r):
        step: Any = c
        for j in sorted(range(r), key=lambda j: (order[j], j)):
            if (order[j], j) >= (order[i], i):
                break
            step = step * rests[j]
        rest = rests[i]
        bs = padded._shape[i] if isinstance(padded._shape, tuple) else padded._shape
        bd = padded._stride[i] if isinstance(padded._stride, tuple) else padded._stride
        shapes.append((bs, rest))
        strides.append((bd, 0 if type(rest) is int and rest == 1 else step))
    return hooks.runtime_layout(tuple(shapes), tuple(strides))


# --------------------------------------------------------------------------- thread-value layouts

@_op("make_layout_tv")
def make_layout_tv(thr_layout: Any, val_layout: Any) -> tuple:
    """(tiler_mn, layout_tv): layout_tv maps (thread, value) to the position in the tiler_mn tile.

    thr_layout maps tile coordinates (of the thread grid) to thread ids and val_layout maps a
    thread's value coordinates to value ids; both must be compact.

    >>> tiler, tv = make_layout_tv(Layout.parse("(2,3):(3,1)"), Layout.parse("(2,2):(2,1)"))
    >>> print(tiler, tv)
    (4, 6) ((3,2),(2,2)):((8,2),(4,1))
    """
    thr = _as_layout(thr_layout, "make_layout_tv", "thread layout")
    val = _as_layout(val_layout, "make_layout_tv", "value layout")
    layout_mn = raked_product(thr, val)
    tmp = make_layout((it.product(thr._shape), it.product(val._shape)))
    layout_tv = _compose_layouts(right_inverse(layout_mn), tmp)
    tiler_mn = it.product_each(layout_mn._shape)
    n = it.product(tiler_mn)
    if it.product(tmp._shape) != n or not _is_bijection(layout_tv, n):
        raise LayoutError(
            f"the thread and value layouts do not tile a block: (thread, value) -> position must be a "
            f"bijection onto the {it.tuple_str(tiler_mn)} tile of {n} elements, but it is not "
            f"(are both layouts compact? size(thr)*size(val) = {it.product(tmp._shape)})"
        )
    return tiler_mn, layout_tv


def _is_bijection(layout: Layout, n: int) -> bool:
    """True when layout maps [0, size) one-to-one onto [0, n).

    Decided on the modes, without enumerating them (a TV layout may have 2^40 elements): with
    size-1 modes dropped and the rest sorted by stride, the strides must be 1, s0, s0*s1, ...
    (each mode starts where the ones below it end) and the sizes must multiply to n.
    """
    modes = sorted((d, s) for s, d in zip(it.flatten_to_tuple(layout._shape), it.flatten_to_tuple(layout._stride))
                   if s != 1)
    span = 1
    for d, s in modes:
        if type(d) not in _INT or d != span:
            return False
        span *= s
    return span == n


# --------------------------------------------------------------------------- recast

def _upcast(shp: Any, std: Any, n: int) -> tuple:
    if type(shp) is tuple:
        parts = [_upcast(s, d, n) for s, d in zip(shp, std)]
        return tuple(p[0] for p in parts), tuple(p[1] for p in parts)
    if std == 0:
        return shp, std
    a = abs(std)
    return -(-shp // -(-n // a)), (1 if std > 0 else -1) * -(-a // n)


def _downcast(shp: Any, std: Any, n: int) -> tuple:
    if type(shp) is tuple:
        parts = [_downcast(s, d, n) for s, d in zip(shp, std)]
        return tuple(p[0] for p in parts), tuple(p[1] for p in parts)
    if std in (1, -1):
        return shp * n, std
    return shp, std * n


def _factor(n: Any) -> None:
    if type(n) not in _INT or n < 1:
        raise LayoutError(f"the factor must be a positive int, got {n!r}")


@_op("upcast")
def upcast(layout: Any, n: int) -> Layout:
    """The layout over elements n times larger (stride-1 modes shrink by n, other strides divide by n,
    rounding up, as CuTe DSL does)."""
    layout = _as_layout(layout, "upcast", "layout")
    _factor(n)
    s, d = _upcast(layout._shape, layout._stride, n)
    return _raw(s, d)


@_op("downcast")
def downcast(layout: Any, n: int) -> Layout:
    """The layout over elements n times smaller (stride-1 modes grow by n, other strides multiply by n)."""
    layout = _as_layout(layout, "downcast", "layout")
    _factor(n)
    s, d = _downcast(layout._shape, layout._stride, n)
    return _raw(s, d)


@_op("recast_layout")
def recast_layout(new_type_bits: int, old_type_bits: int, src_layout: Any) -> Layout:
    """The layout of the same memory viewed as elements of new_type_bits instead of old_type_bits.

    >>> print(recast_layout(32, 16, Layout.parse("(4,8):(8,1)")))
    (4,4):(4,1)
    """
    from math import gcd

    for b in (new_type_bits, old_type_bits):
        if type(b) not in _INT or b < 1:
            raise LayoutError(f"type widths must be positive ints (bits), got {b!r}")
    layout = _as_layout(src_layout, "recast_layout", "layout")
    g = gcd(new_type_bits, old_type_bits)
    num, den = new_type_bits // g, old_type_bits // g
    if num == 1 and den == 1:
        return layout
    if num == 1:
        return downcast(layout, den)
    if den == 1:
        return upcast(layout, num)
    return downcast(upcast(layout, num), den)


# --------------------------------------------------------------------------- shapes by tilers

def ceil_div(a: Any, b: Any) -> Any:
    """Ceiling division of a shape by a shape or by a tiler (a layout: its complement's shape)."""
    if isinstance(b, Layout):
        return complement(b, _normalize(a)).shape
    a, b = _normalize(a), b if isinstance(b, Layout) else _normalize(b)
    if it.has_none(b):
        raise LayoutError(f"ceil_div({it.tuple_str(a)}, {it.tuple_str(b)}): the tiler may not contain None (_)")
    if isinstance(b, tuple):
        # a by-mode tiler: each tiled mode becomes the number of tiles along it
        a_t = a if isinstance(a, tuple) else (a,)
        if len(a_t) < len(b):
            raise LayoutError(
                f"ceil_div({it.tuple_str(a)}, {_fmt_tiler(b)}): the tiler has {len(b)} modes but the shape only {len(a_t)}"
            )
        out = []
        for x, y in zip(a_t, b):
            if isinstance(y, Layout):
                out.append(ceil_div(it.product(x), y))
            elif isinstance(y, tuple):
                out.append(ceil_div(x, y))
            else:
                if not isinstance(y, int) or y < 1:
                    raise LayoutError(f"ceil_div({it.tuple_str(a)}, {_fmt_tiler(b)}): tile sizes must be positive ints")
                out.append(it.ceil_div(it.product(x), y))
        return tuple(out) + tuple(a_t[len(b):])
    return it.ceil_div(a, b)


def _fmt_tiler(t: Any) -> str:
    if isinstance(t, tuple):
        return "(" + ",".join(_fmt_tiler(x) for x in t) + ")"
    return "_" if t is None else str(t)


def _layout_alignment(layout: Layout) -> int:
    """CuTe's max_alignment(layout): gcd of the run of consecutive offsets that the layout
    covers (size of the first mode of logical_divide(L, right_inverse(L))) and the stride
    that follows it (``Layout.max_alignment``)."""
    from math import gcd

    flat = coalesce(layout)
    permuted = logical_divide(flat, right_inverse(flat))
    s0 = it.product(permuted.shape[0])
    d1 = permuted.stride[1]
    return gcd(s0, *it.flatten_to_tuple(d1))


register_max_alignment(_layout_alignment)  # Layout.max_alignment (layout.py sits below the algebra)
