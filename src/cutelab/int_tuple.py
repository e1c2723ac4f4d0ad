"""Hierarchical integer tuples: the shapes, strides and coordinates of CuTe.

An IntTuple is an int or a (possibly nested) Python tuple of IntTuples. Leaves may also be
other integer-like objects (the kernel tracer's symbolic integers, ScaledBasis strides):
the functions here only use arithmetic on leaves and ``isinstance(x, tuple)`` on nodes.

>>> crd2idx((1, 2), (4, 8))
9
>>> idx2crd(9, (4, 8))
(1, 2)
"""

from __future__ import annotations

from typing import Any, Callable

from .errors import LayoutError

__all__ = [
    "is_tuple", "is_int", "rank", "depth", "product", "size", "flatten", "product_each",
    "prefix_product", "shape_div", "ceil_div", "shape_min", "elem_scale", "congruent",
    "compatible", "crd2idx", "idx2crd", "crd2crd", "compact_col_major", "compact_row_major",
    "compact_major", "compact_order", "unflatten", "repeat_like", "filter_zeros_tuple",
    "has_none", "slice_tuple", "dice_tuple", "tuple_str", "inner_product", "product_like",
    "evenly_divides", "signum",
]


def is_tuple(x: Any) -> bool:
    return isinstance(x, tuple)


def is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def rank(t: Any) -> int:
    """Number of top-level modes: 1 for an int."""
    return len(t) if isinstance(t, tuple) else 1


def depth(t: Any) -> int:
    """Nesting depth: 0 for an int, 1 for a flat tuple."""
    if isinstance(t, tuple):
        return 1 + max((depth(x) for x in t), default=0)
    return 0


def product(t: Any) -> Any:
    """Product of all leaves (1 for an empty tuple)."""
    if isinstance(t, tuple):
        r = 1
        for x in t:
            r = r * product(x)
        return r
    return t


size = product


def flatten(t: Any) -> Any:
    """The leaves of t as a flat tuple; an int stays an int."""
    if not isinstance(t, tuple):
        return t
    for x in t:
        if isinstance(x, tuple):
            break
    else:
        return t  # already flat
    out: list = []
    _flatten_into(t, out)
    return tuple(out)


def _flatten_into(t: tuple, out: list) -> None:
    for x in t:
        if isinstance(x, tuple):
            _flatten_into(x, out)
        else:
            out.append(x)


def flatten_to_tuple(t: Any) -> tuple:
    return flatten(t) if isinstance(t, tuple) else (t,)


def product_each(t: Any) -> Any:
    """Product of each top-level mode: ((2,3),4) -> (6,4)."""
    if isinstance(t, tuple):
        return tuple(product(x) for x in t)
    return t


def product_like(t: Any, ref: Any) -> Any:
    """Collapse t to the profile of ref, taking products where ref is a leaf."""
    if isinstance(ref, tuple):
        if not isinstance(t, tuple) or len(t) != len(ref):
            raise LayoutError(f"product_like({tuple_str(t)}, {tuple_str(ref)}): mismatched profiles")
        return tuple(product_like(a, b) for a, b in zip(t, ref))
    return product(t)


def inner_product(a: Any, b: Any) -> Any:
    if isinstance(a, tuple):
        r = 0
        for x, y in zip(a, b):
            r = r + inner_product(x, y)
        return r
    return a * b


def signum(x: int) -> int:
    return (x > 0) - (x < 0)


def prefix_product(t: Any, init: Any = 1) -> Any:
    """Exclusive prefix product, congruent to t: (2,(3,4)) -> (1,(2,6))."""
    if isinstance(t, tuple):
        out = []
        cur = init
        for x in t:
            out.append(prefix_product(x, cur))
            cur = cur * product(x)
        return tuple(out)
    return init


def shape_div(a: Any, b: Any) -> Any:
    """CuTe's shape_div: a / b where one divides the other (rounding to 1, away from 0).

    For a tuple a and an int b, b is divided out of a's modes from the left.
    """
    if isinstance(a, tuple):
        if isinstance(b, tuple):
            if len(a) != len(b):
                raise LayoutError(f"shape_div({tuple_str(a)}, {tuple_str(b)}): mismatched ranks")
            for x, y in zip(a, b):
                if isinstance(x, tuple) and len(flatten(x)) > 1 and not isinstance(y, tuple):
                    raise LayoutError(
                        f"shape_div({tuple_str(a)}, {tuple_str(b)}): mode {tuple_str(x)} has several "
                        f"modes but its divisor {y} is a single int (CuTe requires matching profiles here)"
                    )
            return tuple(shape_div(x, y) for x, y in zip(a, b))
        out = []
        for x in a:
            out.append(shape_div(x, b))
            b = shape_div(b, x)
        return tuple(out)
    if isinstance(b, tuple):
        return shape_div(a, product(b))
    if b == 0:
        raise LayoutError(f"shape_div({a}, {b}): division by zero")
    if a % b != 0 and b % a != 0:
        raise LayoutError(f"shape_div({a}, {b}): neither divides the other ({a} % {b} != 0 and {b} % {a} != 0)")
    q = int(a / b) if (a < 0) != (b < 0) else a // b
    return q if q != 0 else signum(a) * signum(b)


def ceil_div(a: Any, b: Any) -> Any:
    """Ceiling division, by mode for tuples; for a tuple a and an int b, b is divided out from the left."""
    if isinstance(a, tuple):
        if isinstance(b, tuple):
            if len(a) < len(b):
                raise LayoutError(f"ceil_div({tuple_str(a)}, {tuple_str(b)}): divisor has more modes than dividend")
            b = b + (1,) * (len(a) - len(b))
            return tuple(ceil_div(x, y) for x, y in zip(a, b))
        out = []
        for x in a:
            out.append(ceil_div(x, b))
            b = ceil_div(b, x)
        return tuple(out)
    if isinstance(b, tuple):
        return ceil_div(a, product(b))
    if isinstance(b, int) and b == 0:  # (a runtime divisor, a kernel's Int32 argument, is not known here)
        raise LayoutError(f"ceil_div({a}, {b}): division by zero")
    return (a + b - 1) // b


def shape_min(a: int, b: int) -> int:
    return 1 if (a == 1 or b == 1) else min(a, b)


def elem_scale(a: Any, b: Any) -> Any:
    if isinstance(a, tuple):
        return tuple(elem_scale(x, y) for x, y in zip(a, b))
    return a * product(b)


def evenly_divides(a: Any, b: Any) -> bool:
    """True when every mode of b divides the corresponding mode of a."""
    if isinstance(b, tuple):
        if not isinstance(a, tuple) or len(a) != len(b):
            return False
        return all(evenly_divides(x, y) for x, y in zip(a, b))
    return product(a) % b == 0


def congruent(a: Any, b: Any) -> bool:
    """Same hierarchical profile."""
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b))
    return not isinstance(b, tuple)


def compatible(a: Any, b: Any) -> bool:
    """True when shape a can be used as a coordinate space for shape b (size(a) == size(b) at each leaf of a)."""
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(compatible(x, y) for x, y in zip(a, b))
    return a == product(b)


def repeat_like(t: Any, v: Any) -> Any:
    if isinstance(t, tuple):
        return tuple(repeat_like(x, v) for x in t)
    return v


def has_none(t: Any) -> bool:
    if isinstance(t, tuple):
        return any(has_none(x) for x in t)
    return t is None


def filter_zeros_tuple(stride: Any, shape: Any) -> Any:
    """Replace the shape of every stride-0 mode by 1."""
    if isinstance(stride, tuple):
        return tuple(filter_zeros_tuple(d, s) for d, s in zip(stride, shape))
    return 1 if _is_zero(stride) else shape


def _is_zero(x: Any) -> bool:
    return isinstance(x, int) and x == 0


# --------------------------------------------------------------------------- coordinates

def crd2idx(coord: Any, shape: Any, stride: Any = None) -> Any:
    """The offset of coord in (shape, stride), or its colexicographic index if stride is None.

    coord may be an int (a 1-D index into shape), a flat tuple or a nested one.
    """
    if stride is None:
        stride = compact_col_major(shape)
    if isinstance(coord, tuple):
        if not isinstance(shape, tuple) or len(coord) != len(shape):
            raise LayoutError(
                f"crd2idx: coordinate {tuple_str(coord)} does not match the profile of shape {tuple_str(shape)}"
            )
        r = 0
        for c, s, d in zip(coord, shape, stride):
            r = r + crd2idx(c, s, d)
        return r
    if isinstance(shape, tuple):
        n = len(shape)
        if n == 0:
            return 0
        r = 0
        for i in range(n - 1):
            s = shape[i]
            p = product(s)
            r = r + crd2idx(coord % p, s, stride[i])
            coord = coord // p
        return r + crd2idx(coord, shape[-1], stride[-1])
    if type(stride) is int and stride == 0 and isinstance(coord, int):
        return 0  # a static stride 0 moves nothing, whatever the coordinate (a runtime one too: CuTe folds it)
    return coord * stride


def idx2crd(idx: Any, shape: Any, stride: Any = None) -> Any:
    """CuTe's idx2crd: with stride None, the colexicographic coordinate of idx in shape;
    with a stride, (idx // d) % s at each leaf."""
    if isinstance(idx, tuple):
        if not isinstance(shape, tuple) or len(idx) != len(shape):
            raise LayoutError(f"idx2crd: index {tuple_str(idx)} does not match shape {tuple_str(shape)}")
        if stride is None:
            return tuple(idx2crd(i, s) for i, s in zip(idx, shape))
        return tuple(idx2crd(i, s, d) for i, s, d in zip(idx, shape, stride))
    if stride is None:
        return _idx2crd_colex(idx, shape)
    return _idx2crd_strided(idx, shape, stride)


def _idx2crd_colex(idx: Any, shape: Any) -> Any:
    if isinstance(shape, tuple):
        if not shape:
            return ()
        out = []
        for s in shape[:-1]:
            p = product(s)
            out.append(_idx2crd_colex(idx % p, s))
            idx = idx // p
        out.append(_idx2crd_colex(idx, shape[-1]))
        return tuple(out)
    return idx


def _idx2crd_strided(idx: Any, shape: Any, stride: Any) -> Any:
    if isinstance(shape, tuple):
        return tuple(_idx2crd_strided(idx, s, d) for s, d in zip(shape, stride))
    if isinstance(shape, int) and shape == 1:
        return 0
    if _is_zero(stride):
        return 0
    return (idx // stride) % shape


def crd2crd(coord: Any, src_shape: Any, dst_shape: Any) -> Any:
    if isinstance(coord, tuple) and isinstance(src_shape, tuple) and isinstance(dst_shape, tuple):
        return tuple(crd2crd(c, s, d) for c, s, d in zip(coord, src_shape, dst_shape))
    return idx2crd(crd2idx(coord, src_shape), dst_shape)


# --------------------------------------------------------------------------- compact strides

def compact_col_major(shape: Any, current: Any = 1) -> Any:
    """Column-major (LayoutLeft) compact strides; shape-1 modes get stride 0, as in CuTe."""
    return _compact(shape, current, left=True)[0]


def compact_row_major(shape: Any, current: Any = 1) -> Any:
    """Row-major (LayoutRight) compact strides; shape-1 modes get stride 0, as in CuTe."""
    return _compact(shape, current, left=False)[0]


def compact_major(shape: Any, current: Any = 1, major: str = "left") -> Any:
    if isinstance(current, tuple):
        return tuple(compact_major(s, c, major) for s, c in zip(shape, current))
    return _compact(shape, current, left=(major == "left"))[0]


def _compact(shape: Any, current: Any, left: bool) -> tuple:
    if isinstance(shape, tuple):
        out: list = []
        items = shape if left else reversed(shape)
        for s in items:
            st, current = _compact(s, current, left)
            out.append(st)
        if not left:
            out.reverse()
        return tuple(out), current
    if type(shape) is int and shape == 1:  # a static 1 (a dynamic 1 keeps its stride, as in CuTe DSL)
        return 0, current
    return current, current * shape


def compact_order(shape: Any, order: Any) -> Any:
    """Compact strides for shape, visiting modes in increasing order (CuTe's compact_order)."""
    ref_shape = flatten_to_tuple(product_like(shape, order))
    ref_order = flatten_to_tuple(order)

    def go(s: Any, o: Any) -> Any:
        if isinstance(o, tuple):
            if not isinstance(s, tuple) or len(s) != len(o):
                raise LayoutError(
                    f"make_ordered_layout({tuple_str(shape)}, {tuple_str(order)}): "
                    f"order does not match the profile of the shape"
                )
            return tuple(go(x, y) for x, y in zip(s, o))
        start = 1
        for rs, ro in zip(ref_shape, ref_order):
            if ro < o:
                start *= rs
        return compact_col_major(s, start)

    return go(shape, order)


def unflatten(flat: Any, profile: Any) -> Any:
    """Fold a flat tuple into the profile of `profile`."""
    flat_t = flatten_to_tuple(flat)
    pos = 0

    def go(p: Any) -> Any:
        nonlocal pos
        if isinstance(p, tuple):
            return tuple(go(x) for x in p)
        if pos >= len(flat_t):
            raise LayoutError(f"unflatten({tuple_str(flat)}, {tuple_str(profile)}): too few elements for the profile")
        v = flat_t[pos]
        pos += 1
        return v

    out = go(profile)
    if pos != len(flat_t):
        raise LayoutError(f"unflatten({tuple_str(flat)}, {tuple_str(profile)}): too many elements for the profile")
    return out


# --------------------------------------------------------------------------- slicing

def slice_tuple(coord: Any, t: Any) -> Any:
    """Keep the modes of t where coord is None (CuTe's slice), flattened one level per tuple."""
    if isinstance(coord, tuple):
        if not isinstance(t, tuple) or len(coord) != len(t):
            raise LayoutError(f"slice: coordinate {tuple_str(coord)} does not match {tuple_str(t)}")
        out: list = []
        for c, x in zip(coord, t):
            if c is None:
                out.append(x)
            elif isinstance(c, tuple) and has_none(c):
                r = slice_tuple(c, x)
                out.extend(r)
        return tuple(out)
    return (t,) if coord is None else ()


def dice_tuple(coord: Any, t: Any) -> Any:
    """Keep the modes of t where coord is not None (CuTe's dice)."""
    if isinstance(coord, tuple):
        out: list = []
        for c, x in zip(coord, t):
            if c is None:
                continue
            if isinstance(c, tuple):
                out.extend(dice_tuple(c, x))
            else:
                out.append(x)
        return tuple(out)
    return () if coord is None else (t,)


# --------------------------------------------------------------------------- printing

def tuple_str(t: Any) -> str:
    """CuTe notation: (2,(3,4)); None prints as _."""
    if isinstance(t, tuple):
        return "(" + ",".join(tuple_str(x) for x in t) + ")"
    if t is None:
        return "_"
    return str(t)


def transform_leaf(t: Any, f: Callable[[Any], Any]) -> Any:
    if isinstance(t, tuple):
        return tuple(transform_leaf(x, f) for x in t)
    return f(t)
