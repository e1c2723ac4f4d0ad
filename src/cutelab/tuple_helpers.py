"""Small helpers on hierarchical tuples, layouts and tensors that CuTe DSL exports from cutlass.cute.

They are the everyday names a CuTe DSL program reaches for (``cute.is_static``, ``cute.find``,
``cute.tuple_cat``, ``cute.round_up``, ``cute.size_in_bytes``, ``cute.append_ones``, ...), written
over cutelab's own tuples and layouts. All are plain Python on static values.

>>> import cutelab as cute
>>> cute.tuple_cat((1, 2), 3, ((4,),)), cute.round_up((5, 9), (4, 8)), cute.find((3, (4, 1)), 1)
((1, 2, 3, (4,)), (8, 16), (1, 1))
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from . import int_tuple as it
from .errors import LayoutError
from .layout import Layout, append, get, make_layout, prepend
from .swizzle import ComposedLayout, Swizzle

__all__ = [
    "is_static", "is_integer", "is_int_tuple", "has_underscore", "flatten_to_tuple", "product", "product_like",
    "repeat", "repeat_as_tuple", "tuple_cat", "transform_leaf", "filter_tuple", "find", "find_if", "front",
    "round_up", "is_congruent", "is_weakly_congruent", "leading_dim", "is_major", "append_ones", "prepend_ones",
    "size_in_bytes", "get_swizzle_portion", "get_nonswizzle_portion", "make_rmem_tensor_like", "recast_tensor",
]


def _is_int(x: Any) -> bool:
    from .numeric import IntValue

    return (isinstance(x, int) and not isinstance(x, bool)) or isinstance(x, IntValue) or (
        type(x).__module__ == "numpy" and hasattr(x, "dtype") and x.dtype.kind in "iu" and x.ndim == 0)


def is_static(x: Any) -> bool:
    """True when x (an int, a tuple, a layout, a swizzle or a tensor's layout) holds only values known
    now: plain ints, None and basis strides. A dynamic value (cutlass.Int32 at run time) is not static.

    >>> is_static((4, (2, 8))), is_static(make_layout((4, 8))), is_static(2.5)
    (True, True, False)
    """
    if isinstance(x, Swizzle):
        return True
    if isinstance(x, ComposedLayout):
        return is_static(x.outer) and (not isinstance(x.inner, Layout) or is_static(x.inner))
    if isinstance(x, Layout):
        return is_static(x.shape) and is_static(x.stride)
    if isinstance(x, tuple):
        return all(is_static(v) for v in x)
    from .layout import ScaledBasis

    return x is None or type(x) is int or isinstance(x, ScaledBasis)


def is_integer(a: Any) -> bool:
    """True for an int (not a bool) or an integer scalar of a cutlass type."""
    return _is_int(a)


def is_int_tuple(a: Any) -> bool:
    """True for an integer or a (nested) tuple of integers."""
    return all(is_int_tuple(x) for x in a) if isinstance(a, tuple) else _is_int(a)


def has_underscore(a: Any) -> bool:
    """True when a (nested) tuple holds None (CuTe's underscore, a sliced mode)."""
    return any(has_underscore(x) for x in a) if type(a) is tuple else a is None


def flatten_to_tuple(a: Any) -> tuple:
    """The leaves of a in order, as a flat tuple (a leaf alone gives a 1-tuple)."""
    return it.flatten_to_tuple(a)


def product(a: Any) -> Any:
    """The product of all leaves of a (an int for an int)."""
    if isinstance(a, Layout):
        raise LayoutError(f"product({a}): expected an IntTuple or a shape, got a Layout (use cute.size)")
    return it.product(a)


def product_like(a: Any, target_profile: Any) -> Any:
    """The products of a's sub-tuples at the leaves of target_profile (congruent to its top modes).

    >>> product_like(((2, 3), (4, 5)), (0, (0, 0)))
    (6, (4, 5))
    """
    if not isinstance(target_profile, tuple):
        return it.product(a)
    if not isinstance(a, tuple) or len(a) != len(target_profile):
        raise LayoutError(f"product_like({it.tuple_str(a)}, {it.tuple_str(target_profile)}): the profile does "
                          f"not match the tuple's modes")
    return tuple(product_like(x, p) for x, p in zip(a, target_profile))


def repeat_as_tuple(x: Any, n: int) -> tuple:
    """(x, x, ..., x), n times (n >= 1)."""
    if n < 1:
        raise LayoutError(f"repeat_as_tuple({x!r}, {n}): n must be >= 1")
    return (x,) * n


def repeat(x: Any, n: int) -> Any:
    """x itself for n == 1, else (x,) * n."""
    return x if n == 1 else repeat_as_tuple(x, n)


def tuple_cat(*tuples: Any) -> tuple:
    """The tuples concatenated; an argument that is not a tuple counts as a 1-tuple."""
    out: tuple = ()
    for t in tuples:
        out += t if isinstance(t, tuple) else (t,)
    return out


def transform_leaf(f: Callable[..., Any], *args: Any) -> Any:
    """f applied to the leaves of congruent nested tuples (in parallel), keeping their structure.

    >>> transform_leaf(lambda a, b: a * b, (2, (3, 4)), (5, (6, 7)))
    (10, (18, 28))
    """
    if isinstance(args[0], tuple):
        if not all(isinstance(a, tuple) and len(a) == len(args[0]) for a in args):
            raise LayoutError(f"transform_leaf: the tuples {', '.join(it.tuple_str(a) for a in args)} are not congruent")
        return tuple(transform_leaf(f, *xs) for xs in zip(*args))
    if any(isinstance(a, tuple) for a in args):
        raise LayoutError(f"transform_leaf: the tuples {', '.join(it.tuple_str(a) for a in args)} are not congruent")
    return f(*args)


def filter_tuple(*args: Any, f: Callable[..., Any]) -> tuple:
    """The tuples that f returns for the leaves of args (in parallel), concatenated and flattened.

    >>> filter_tuple((1, (0, 3)), f=lambda x: () if x == 0 else (x,))
    (1, 3)
    """
    out: tuple = ()
    for leaf in zip(*(it.flatten_to_tuple(a) for a in args)):
        r = f(*leaf)
        out += tuple(r) if isinstance(r, tuple) else (r,)
    return it.flatten_to_tuple(out) if out else ()


def find_if(t: Any, pred_fn: Callable[[Any, Any], bool], hierarchical: bool = True) -> Any:
    """The position of the first leaf of t where pred_fn(value, position) holds: an int at the top,
    a tuple of indices inside nested modes (hierarchical=False: the top mode's index); else None."""
    if not callable(pred_fn):
        raise TypeError(f"find_if: pred_fn must be callable, got {type(pred_fn).__name__}")
    if len(inspect.signature(pred_fn).parameters) != 2:
        raise ValueError("find_if: pred_fn must take two parameters (value, position)")

    def go(x: Any, pos: Any) -> Any:
        if isinstance(x, tuple):
            for i, y in enumerate(x):
                r = go(y, (pos, i) if isinstance(pos, int) else pos + (i,))
                if r is not None:
                    return r
            return None
        return pos if pred_fn(x, pos) else None

    for i, x in enumerate(t if isinstance(t, tuple) else (t,)):
        r = go(x, i)
        if r is not None:
            return r if hierarchical or not isinstance(r, tuple) else r[0]
    return None


def find(t: Any, x: int, hierarchical: bool = True) -> Any:
    """The position of the first leaf of t equal to the int x (see find_if), or None."""
    if type(x) is not int:
        raise TypeError(f"find() requires a static int to search for, got {x!r}")
    return find_if(t, lambda v, pos: type(v) is int and v == x, hierarchical)


def front(x: Any) -> Any:
    """The first leaf of x: its first mode, recursively (for a layout, the layout of that mode)."""
    while isinstance(x, tuple) or (isinstance(x, Layout) and isinstance(x.shape, tuple)):
        if isinstance(x, Layout):
            x = get(x, [0])
            continue
        if not x:
            raise LayoutError("front: the tuple is empty")
        x = x[0]
    return x


def round_up(a: Any, b: Any) -> Any:
    """Each entry of a rounded up to a multiple of the matching entry of b (b padded with 1s).

    >>> round_up(10, 4), round_up((10, 3, 7), (4, 2))
    (12, (12, 4, 7))
    """
    if isinstance(a, tuple):
        if not a:
            raise LayoutError("round_up: inputs cannot be empty")
        if not isinstance(b, tuple):
            raise LayoutError(f"round_up({it.tuple_str(a)}, {b}): expected both inputs to be tuples")
        if len(a) < len(b):
            raise LayoutError(f"round_up({it.tuple_str(a)}, {it.tuple_str(b)}): rank(a) must be >= rank(b)")
        b = b + (1,) * (len(a) - len(b))
        return tuple(round_up(x, y) for x, y in zip(a, b))
    if isinstance(b, tuple):
        raise LayoutError(f"round_up({a}, {it.tuple_str(b)}): b must be a single integer when a is not a tuple")
    return ((a + b - 1) // b) * b


def _profile(x: Any) -> Any:
    if isinstance(x, (Layout, ComposedLayout)):
        return x.shape
    if hasattr(x, "layout") and isinstance(getattr(x, "layout"), (Layout, ComposedLayout)):
        return x.layout.shape
    return x


def is_congruent(a: Any, b: Any) -> bool:
    """True when a and b (tuples, layouts, tensors) have the same hierarchy (profile)."""
    a, b = _profile(a), _profile(b)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(is_congruent(x, y) for x, y in zip(a, b))
    return not isinstance(a, tuple) and not isinstance(b, tuple)


def is_weakly_congruent(a: Any, b: Any) -> bool:
    """True when a's hierarchy is a coarsening of b's: each leaf of a stands for a leaf or a whole
    sub-tuple of b."""
    a, b = _profile(a), _profile(b)
    if not isinstance(a, tuple):
        return True
    if not isinstance(b, tuple):
        return False
    return len(a) == len(b) and all(is_weakly_congruent(x, y) for x, y in zip(a, b))


def leading_dim(shape: Any, stride: Any) -> Any:
    """The position of the mode with stride 1 (and extent not 1), as find_if gives it, or None."""
    def pred(v: Any, pos: Any) -> bool:
        mode = [pos] if isinstance(pos, int) else list(pos)
        return type(v) is int and v == 1 and get(shape, mode) != 1

    return find_if(stride, pred)


def is_major(mode: Any, stride: Any) -> bool:
    """True when the mode (an int or a path of ints) of stride is statically 1."""
    d = get(stride, [mode] if isinstance(mode, int) else list(mode))
    return type(d) is int and d == 1


def append_ones(t: Any, up_to_rank: Any = None) -> Any:
    """A layout (or a tensor over the same data) with modes 1:0 appended up to up_to_rank (one if None)."""
    from .tensor import Tensor

    if isinstance(t, Tensor):
        return t._map(lambda lay: append(lay, make_layout(1), up_to_rank))
    if isinstance(t, Layout):
        return append(t, make_layout(1), up_to_rank)
    raise TypeError(f"append_ones: expects a Tensor or a Layout, got {type(t).__name__}")


def prepend_ones(t: Any, up_to_rank: Any = None) -> Any:
    """A layout (or a tensor over the same data) with modes 1:0 prepended up to up_to_rank (one if None)."""
    from .tensor import Tensor

    if isinstance(t, Tensor):
        return t._map(lambda lay: prepend(lay, make_layout(1), up_to_rank))
    if isinstance(t, Layout):
        return prepend(t, make_layout(1), up_to_rank)
    raise TypeError(f"prepend_ones: expects a Tensor or a Layout, got {type(t).__name__}")


def size_in_bytes(dtype: Any, layout: Any) -> int:
    """Bytes that dtype elements at every offset of layout take (cosize x width, rounded up); 0 for None.

    >>> import cutelab as cute
    >>> size_in_bytes(cute.Float16, make_layout((4, 8))), size_in_bytes(cute.Float32, None)
    (64, 0)
    """
    if layout is None:
        return 0
    from .swizzle import cosize  # a swizzled layout's cosize is its outer layout's

    if isinstance(layout, ComposedLayout) and isinstance(layout.inner, Swizzle):
        # a swizzled layout (the SM90/SM100 smem layouts): the largest offset the swizzle of
        # offset + outer reaches, plus one (CuTe's cosize of the composed function)
        import numpy as np

        offs = np.asarray(layout.outer.offsets(), dtype=np.int64) + int(layout.offset or 0)
        return ((int(layout.inner(offs).max()) + 1 if offs.size else 0) * dtype.width + 7) // 8
    lay = layout.outer if isinstance(layout, ComposedLayout) else layout
    return (cosize(lay) * dtype.width + 7) // 8


def get_swizzle_portion(layout: Any) -> Swizzle:
    """The swizzle of a swizzled layout (S<0,4,3>, the identity, for any other)."""
    if isinstance(layout, ComposedLayout) and isinstance(layout.inner, Swizzle):
        return layout.inner
    return Swizzle(0, 4, 3)


def get_nonswizzle_portion(layout: Any) -> Any:
    """The layout under a swizzle (offset o outer; the layout itself when there is no swizzle)."""
    if isinstance(layout, ComposedLayout) and isinstance(layout.inner, Swizzle):
        if layout.offset == 0:
            return layout.outer
        return ComposedLayout(Swizzle(0, 4, 3), layout.offset, layout.outer)
    return layout


def make_rmem_tensor_like(src: Any, dtype: Any = None) -> Any:
    """A register tensor like src: a tensor's shape with compact strides in its stride order (as
    make_fragment_like), a layout's or a TensorSSA's shape compact; of dtype or src's element type."""
    from .tensor import Tensor, TensorSSA, make_fragment_like, make_rmem_tensor
    from .layout import make_layout_like

    if isinstance(src, Tensor):
        return make_fragment_like(src, dtype)
    if isinstance(src, TensorSSA):
        return make_rmem_tensor(make_layout(src.shape), dtype or src.dtype)
    if isinstance(src, Layout):
        if dtype is None:
            raise LayoutError(f"make_rmem_tensor_like({src}): a layout has no element type; give dtype")
        return make_rmem_tensor(make_layout_like(src), dtype)
    raise LayoutError(f"make_rmem_tensor_like: expected a Tensor, a TensorSSA or a Layout, got {type(src).__name__}")


def recast_tensor(src: Any, dtype: Any, swizzle_: Any = None) -> Any:
    """The same memory read as dtype elements: the pointer recast and the layout recast so that it
    covers the same bytes (cute.recast_ptr + cute.recast_layout)."""
    from .algebra import recast_layout
    from .runtime import recast_ptr
    from .tensor import Tensor, make_tensor

    if not isinstance(src, Tensor):
        raise LayoutError(f"recast_tensor: expected a Tensor, got {type(src).__name__}")
    old = src.element_type
    if old is None:
        raise LayoutError(f"recast_tensor({src}): a coordinate tensor has no element type to recast")
    if dtype is old:
        return src
    layout = recast_layout(dtype.width, old.width, src.layout)
    return make_tensor(recast_ptr(src.iterator, swizzle_, dtype), layout)
