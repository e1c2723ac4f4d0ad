"""Swizzle and ComposedLayout: a function composed with a layout, ``inner o offset o outer``.

A ``Swizzle<B,M,S>`` XORs B bits of an offset (the YYY bits, starting at bit M + max(0,S))
into the B bits |S| places away (the ZZZ bits, starting at bit M - min(0,S)); it is its own
inverse. Shared-memory layouts are swizzle functions composed with an ordinary layout:
``R(c) = inner(offset + outer(c))``, printed as CuTe DSL prints them.

>>> sw = make_swizzle(3, 4, 3)
>>> print(sw, sw(0b1010000000), sw(sw(640)))
S<3,4,3> 720 640
>>> C = make_composed_layout(sw, 0, make_layout((8, 64), stride=(64, 1)))
>>> print(C, C(5), C((1, 2)), size(C), cosize(C))
S<3,4,3> o 0 o (8,64):(64,1) 352 66 512 512
>>> print(C[1])
S<3,4,3> o 0 o 64:1
>>> print(*slice_and_offset((3, None), C))
S<0,4,3> o 0 o ((16,2,2)):((1,-16,32)) 208

The algebra (composition, divides, products, tile_to_shape, coalesce, recast_layout) acts on
a ComposedLayout through cutelab.algebra, which hands it to :func:`composed_op` here.
"""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING, Any, Callable

from . import algebra as _alg
from . import display as _display
from . import int_tuple as it
from . import layout as _lay
from .errors import LayoutError, ParseError
from .layout import Layout, ScaledBasis, _normalize, make_layout
from .layout import _np

if TYPE_CHECKING:  # numpy is imported where arrays are made: `import cutelab` does not load it
    import numpy as np

__all__ = [
    "Swizzle", "ComposedLayout", "make_swizzle", "make_composed_layout", "parse_composed",
    "is_composed", "size", "cosize", "rank", "depth", "shape", "get", "select", "group_modes",
    "append", "prepend", "flatten", "slice_", "dice", "slice_and_offset", "crd2idx",
]

_MAX_BITS = 32  # CuTe's masks are 32-bit: b + m + |s| must fit (the DSL rejects more)


def _is_int(x: Any) -> bool:
    if isinstance(x, int):
        return not isinstance(x, bool)
    npm = sys.modules.get("numpy")  # a numpy integer can exist only once numpy is imported
    return npm is not None and isinstance(x, npm.integer)


# --------------------------------------------------------------------------- Swizzle

class Swizzle:
    """CuTe's ``Swizzle<B,M,S>``: ``offset ^ ((offset & yyy_msk) >> S)`` (a left shift when S < 0).

    Works on Python ints and on numpy integer arrays. A bijection on [0, 2**(B+M+|S|)) and
    the identity above it in the sense that higher bits pass through unchanged.

    >>> sw = Swizzle(2, 0, -3)
    >>> print(sw, bin(sw.yyy_msk), bin(sw.zzz_msk), sw(0b11), sw(sw(0b11)))
    S<2,0,-3> 0b11 0b11000 27 3
    """

    __slots__ = ("_b", "_m", "_s")

    def __init__(self, b: int, m: int, s: int):
        for name, v in (("b", b), ("m", m), ("s", s)):
            if not _is_int(v):
                raise LayoutError(f"Swizzle({b!r}, {m!r}, {s!r}): {name} must be an int, got {type(v).__name__}")
        b, m, s = int(b), int(m), int(s)
        where = f"Swizzle({b}, {m}, {s})"
        if b < 0:
            raise LayoutError(f"{where}: the number of bits b must be >= 0")
        if m < 0:
            raise LayoutError(f"{where}: the base m must be >= 0")
        if abs(s) < b:
            raise LayoutError(f"{where}: |s| must be at least b (|{s}| < {b}): the YYY and ZZZ bits would overlap")
        if b + m + abs(s) > _MAX_BITS:
            raise LayoutError(f"{where}: b + m + |s| = {b + m + abs(s)} bits do not fit in {_MAX_BITS}")
        object.__setattr__(self, "_b", b)
        object.__setattr__(self, "_m", m)
        object.__setattr__(self, "_s", s)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Swizzle is immutable")

    def __reduce__(self) -> Any:
        return (Swizzle, (self._b, self._m, self._s))

    # CuTe DSL's names
    @property
    def num_bits(self) -> int:
        """B: the number of bits in the mask."""
        return self._b

    @property
    def num_base(self) -> int:
        """M: the number of least-significant bits kept constant."""
        return self._m

    @property
    def num_shift(self) -> int:
        """S: the distance from the ZZZ bits to the YYY bits (negative: YYY below ZZZ)."""
        return self._s

    @property
    def bit_msk(self) -> int:
        return (1 << self._b) - 1

    @property
    def yyy_msk(self) -> int:
        """The bits that are read (and stay unchanged)."""
        return self.bit_msk << (self._m + max(0, self._s))

    @property
    def zzz_msk(self) -> int:
        """The bits that are XORed with the YYY bits."""
        return self.bit_msk << (self._m - min(0, self._s))

    @property
    def swizzle_code(self) -> int:
        return self.yyy_msk | self.zzz_msk

    @property
    def is_identity(self) -> bool:
        return self._b == 0

    def cosize(self) -> int:
        """2**(B+M+|S|): the size of the smallest domain [0, n) the swizzle permutes."""
        return 1 << (self._b + self._m + abs(self._s))

    def __call__(self, offset: Any) -> Any:
        if _lay._is_array(offset):
            np = _np()
            if not np.issubdtype(offset.dtype, np.integer):
                raise LayoutError(f"{self}: offsets must be integers, got a numpy array of {offset.dtype}")
        elif _is_int(offset):
            offset = int(offset)
        else:
            raise LayoutError(f"{self}: expected an int offset or a numpy int array, got {offset!r}")
        y = offset & self.yyy_msk
        return offset ^ (y >> self._s if self._s >= 0 else y << -self._s)

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, Swizzle):
            return NotImplemented
        return (self._b, self._m, self._s) == (other._b, other._m, other._s)

    def __hash__(self) -> int:
        return hash(("Swizzle", self._b, self._m, self._s))

    def __str__(self) -> str:
        return f"S<{self._b},{self._m},{self._s}>"

    def __repr__(self) -> str:
        return f"Swizzle({self._b}, {self._m}, {self._s})"

    @staticmethod
    def parse(text: str) -> "Swizzle":
        """Read ``S<b,m,s>`` (also ``Sw<b,m,s>`` as CuTe C++ prints it).

        >>> print(Swizzle.parse("Sw<2,4,3>"))
        S<2,4,3>
        """
        if not isinstance(text, str):
            raise ParseError(f"Swizzle.parse: expected a string, got {type(text).__name__}")
        mt = _SW_RE.fullmatch(text.strip())
        if not mt:
            raise ParseError(f"cannot parse swizzle {text!r}: expected S<b,m,s>")
        try:
            return Swizzle(int(mt.group(1)), int(mt.group(2)), int(mt.group(3)))
        except LayoutError as e:
            raise ParseError(f"cannot parse swizzle {text!r}: {e}") from None


_SW_RE = re.compile(r"Sw?<\s*(-?\d+)\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*>")


def make_swizzle(b: int, m: int, s: int) -> Swizzle:
    """CuTe DSL's make_swizzle: Swizzle<b,m,s>, with every b == 0 swizzle written S<0,4,3>.

    Raises LayoutError where CuTe rejects the parameters (b or m negative, |s| < b, more
    than 32 bits); the DSL 4.8.1 instead silently returns the identity S<0,4,3> there.

    >>> print(make_swizzle(3, 4, 3), make_swizzle(0, 2, 1))
    S<3,4,3> S<0,4,3>
    """
    sw = Swizzle(b, m, s)
    if sw.num_bits == 0:
        return Swizzle(0, 4, 3)
    return sw


def _swizzle_from_masks(y: int, z: int, op: str) -> Swizzle:
    """CuTe's make_swizzle<Y, Z>(): the swizzle whose yyy/zzz masks are y and z."""
    by, bz = bin(y).count("1"), bin(z).count("1")
    if by != bz:
        raise LayoutError(f"{op}: the swizzle bits do not pair up ({by} YYY bits, {bz} ZZZ bits)")
    if by == 0:
        return Swizzle(0, 4, 3)
    ty = (y & -y).bit_length() - 1
    tz = (z & -z).bit_length() - 1
    sw = Swizzle(by, min(ty, tz), ty - tz)
    if sw.yyy_msk != y or sw.zzz_msk != z:
        raise LayoutError(f"{op}: bits {bin(y)} and {bin(z)} are not a swizzle's contiguous YYY/ZZZ masks")
    return sw


# --------------------------------------------------------------------------- ComposedLayout

def _offset_str(o: Any) -> str:
    return it.tuple_str(o) if isinstance(o, tuple) else str(o)


def _has_basis(stride: Any) -> bool:
    return any(isinstance(d, ScaledBasis) for d in it.flatten_to_tuple(stride))


class ComposedLayout:
    """``inner o offset o outer``: the function c -> inner(offset + outer(c)).

    ``inner`` is a Swizzle (or a Layout), ``offset`` an int (a coordinate tuple for a Layout
    inner), ``outer`` a Layout. Shape, size, rank and depth are the outer layout's; so is the
    cosize for a swizzle (as in CuTe). Frozen and hashable.
    """

    __slots__ = ("_inner", "_offset", "_outer", "_hash")

    def __init__(self, inner: Any, offset: Any, outer: Any):
        off_s = _offset_str(offset) if isinstance(offset, (int, tuple)) else repr(offset)
        where = f"make_composed_layout({inner}, {off_s}, {outer})"
        if not isinstance(outer, Layout):
            raise LayoutError(f"{where}: the outer layout must be a Layout, got {type(outer).__name__} {outer!r}")
        offset = _normalize(offset)
        if isinstance(inner, Swizzle):
            if not _is_int(offset):
                raise LayoutError(f"{where}: a swizzle needs an int offset, got {_offset_str(offset)}")
            if _has_basis(outer.stride):
                raise LayoutError(f"{where}: a swizzle cannot follow an outer layout with basis strides (n@m)")
        elif isinstance(inner, Layout):
            ints = isinstance(offset, tuple) and all(_is_int(x) for x in it.flatten_to_tuple(offset))
            if not (_is_int(offset) or ints):
                raise LayoutError(f"{where}: the offset must be an int or an int tuple, got {offset!r}")
        else:
            raise LayoutError(f"{where}: the inner function must be a Swizzle or a Layout, got {type(inner).__name__}")
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "_offset", int(offset) if _is_int(offset) else offset)
        object.__setattr__(self, "_outer", outer)
        object.__setattr__(self, "_hash", None)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("ComposedLayout is immutable")

    def __reduce__(self) -> Any:
        return (ComposedLayout, (self._inner, self._offset, self._outer))

    # ---- parts, as CuTe DSL names them
    @property
    def inner(self) -> Any:
        return self._inner

    @property
    def offset(self) -> Any:
        return self._offset

    @property
    def outer(self) -> Layout:
        return self._outer

    @property
    def is_normal(self) -> bool:
        return False

    @property
    def value(self) -> "ComposedLayout":
        """CuTe DSL's MLIR value of the layout: the layout itself (what the cutlass._mlir stand-ins take)."""
        return self

    @property
    def shape(self) -> Any:
        return self._outer.shape

    @property
    def max_alignment(self) -> int:
        """The largest power of two that divides every offset's run (CuTe's max_alignment)."""
        from math import gcd
        if not isinstance(self._inner, Swizzle):
            raise LayoutError(f"max_alignment({self}): only defined for a swizzle inner function")
        # S<0,m,s> o 0 o L is L itself (CuTe's composition folds it); otherwise 2^m bounds it
        sw = 0 if self._inner.num_bits == 0 and self._offset == 0 else 1 << self._inner.num_base
        return gcd(sw, self._offset, self._outer.max_alignment)

    def size(self) -> int:
        return it.product(self._outer.shape)

    def cosize(self) -> int:
        return cosize(self)

    # ---- structure
    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, ComposedLayout):
            return NotImplemented if not isinstance(other, Layout) else False
        return (self._inner == other._inner and self._offset == other._offset
                and self._outer == other._outer)

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash(("ComposedLayout", self._inner, self._offset, self._outer))
            object.__setattr__(self, "_hash", h)
        return h

    def __str__(self) -> str:
        return f"{self._inner} o {_offset_str(self._offset)} o {self._outer}"

    def __repr__(self) -> str:
        return f"ComposedLayout({self})"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def _with_outer(self, outer: Layout) -> "ComposedLayout":
        return ComposedLayout(self._inner, self._offset, outer)

    # ---- evaluation
    def _apply_inner(self, v: Any) -> Any:
        inner = self._inner
        x = _add_offset(self._offset, v)
        if isinstance(inner, Swizzle):
            return inner(x)
        return _lay._finish(it.crd2idx(x, inner.shape, inner.stride))

    def __call__(self, *coord: Any) -> Any:
        """inner(offset + outer(coord)); a coordinate holding None slices (see slice_)."""
        if len(coord) == 1:
            coord = coord[0]
        elif len(coord) == 0:
            raise LayoutError(f"{self}: calling a composed layout needs a coordinate")
        coord = _normalize(coord)
        if it.has_none(coord):
            return slice_(self, coord)
        try:
            v = self._outer(coord)
        except LayoutError as e:
            raise LayoutError(f"evaluating {self}: {e}") from None
        return self._apply_inner(v)

    def __getitem__(self, mode: Any) -> "ComposedLayout":
        """C[i] is mode i (as in CuTe DSL): inner o offset o outer[i]."""
        return get(self, mode if isinstance(mode, (list, tuple)) else [mode])

    def offsets(self) -> np.ndarray:
        """The offset of every index i in [0, size), as an int64 numpy array (vectorized)."""
        np = _np()
        inner = self._inner
        if isinstance(inner, Swizzle):
            return inner(_lay.evaluate_all(self._outer) + self._offset)
        if _is_int(self._offset) and not _has_basis(self._outer.stride) and not _has_basis(inner.stride):
            return _eval_index_array(inner, _lay.evaluate_all(self._outer) + self._offset)
        return np.array([self(i) for i in range(self.size())], dtype=np.int64)

    def _repr_html_(self) -> str | None:  # Jupyter: the grid of offsets, as a Layout's (None: the text)
        return _display.html(self)

    def _repr_svg_(self) -> str | None:
        return _display.svg(self)


def _add_offset(offset: Any, v: Any) -> Any:
    if isinstance(offset, tuple) or isinstance(v, tuple):
        a = offset if isinstance(offset, tuple) else (offset,)
        b = v if isinstance(v, tuple) else (v,)
        if it.rank(a) != it.rank(b) and not (offset == 0 or v == 0):
            raise LayoutError(f"cannot add the offset {_offset_str(offset)} to the coordinate {_offset_str(v)}")
        if offset == 0:
            return v
        if v == 0:
            return offset
        return tuple(_add_offset(x, y) for x, y in zip(a, b))
    return offset + v


def _eval_index_array(layout: Layout, idx: np.ndarray) -> np.ndarray:
    """CuTe's layout(i) for an array of 1-D indices (the last mode absorbs what is beyond)."""
    np = _np()
    shp = it.flatten_to_tuple(layout.shape)
    std = it.flatten_to_tuple(layout.stride)
    out = np.zeros_like(idx, dtype=np.int64)
    rest = idx.astype(np.int64)
    for k, (s, d) in enumerate(zip(shp, std)):
        if k == len(shp) - 1:
            out += rest * d
        else:
            out += (rest % s) * d
            rest = rest // s
    return out


class _ComposedLayoutWithInnerFunc(ComposedLayout):
    """``(f o offset o outer)`` with f any Python callable, as CuTe DSL allows: evaluating it at c
    is f(offset + outer(c)), the sum taken mode by mode (coordinates of an identity outer layout).
    It prints as CuTe DSL prints it, the function and the offset as Python writes them."""

    def __init__(self, inner: Any, offset: Any, outer: Any):
        if not isinstance(outer, Layout):
            raise LayoutError(f"make_composed_layout({inner!r}, {offset!r}, {outer!r}): the outer layout must be "
                              f"a Layout, got {type(outer).__name__}")
        for leaf in it.flatten_to_tuple(offset) if isinstance(offset, tuple) else (offset,):
            if not _is_int(leaf):
                raise LayoutError(f"make_composed_layout({inner!r}, {offset!r}, {outer}): the offset must be an "
                                  f"int or a tuple of ints, got {leaf!r}")
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "_offset", offset)
        object.__setattr__(self, "_outer", outer)
        object.__setattr__(self, "_hash", None)

    def __reduce__(self) -> Any:
        return (_ComposedLayoutWithInnerFunc, (self._inner, self._offset, self._outer))

    def __str__(self) -> str:
        return f"({self._inner} o {self._offset} o {self._outer})"

    def _apply_inner(self, v: Any) -> Any:
        return self._inner(_add_coords(self._offset, v))

    def offsets(self) -> np.ndarray:
        raise LayoutError(f"{self}: a composed layout with a Python function inside has no integer offsets")

    @property
    def max_alignment(self) -> int:
        raise LayoutError(f"max_alignment({self}): only defined for a swizzle inner function")


def _add_coords(a: Any, b: Any) -> Any:
    """a + b mode by mode; a coordinate shorter than the other (trailing zero modes left out) or an int 0
    counts as zeros there."""
    if not isinstance(a, tuple) and not isinstance(b, tuple):
        return a + b
    xs = tuple(a) if isinstance(a, tuple) else (() if _is_int(a) and a == 0 else (a,))
    ys = tuple(b) if isinstance(b, tuple) else (() if _is_int(b) and b == 0 else (b,))
    n = max(len(xs), len(ys))
    xs, ys = xs + (0,) * (n - len(xs)), ys + (0,) * (n - len(ys))
    return tuple(_add_coords(x, y) for x, y in zip(xs, ys))


def make_composed_layout(inner: Any, offset: Any, outer: Any) -> ComposedLayout:
    """inner o offset o outer: the layout c -> inner(offset + outer(c)).

    inner is a Swizzle, a Layout or, as in CuTe DSL, any Python callable of a coordinate.

    >>> print(make_composed_layout(make_swizzle(2, 4, 3), 0, make_layout((8, 32), stride=(32, 1))))
    S<2,4,3> o 0 o (8,32):(32,1)
    >>> shift = make_composed_layout(lambda c: (c[0], c[1] + 1), (1, 0), _lay.make_identity_layout((8, 4)))
    >>> shift(0), shift((2, 3))
    ((1, 1), (3, 4))
    """
    if isinstance(outer, str):
        outer = _lay.parse_layout(outer)
    if isinstance(inner, str):
        inner = Swizzle.parse(inner) if inner.lstrip().startswith("S") else _lay.parse_layout(inner)
    if callable(inner) and not isinstance(inner, (Swizzle, Layout, ComposedLayout)):
        return _ComposedLayoutWithInnerFunc(inner, _normalize(offset), outer)
    return ComposedLayout(inner, offset, outer)


def parse_composed(text: str) -> ComposedLayout:
    """Read ``S<3,4,3> o 0 o (8,64):(64,1)`` (an inner layout and a tuple offset work too).

    >>> print(parse_composed("S<3,4,3> o 0 o (8,64):(64,1)"))
    S<3,4,3> o 0 o (8,64):(64,1)
    """
    if not isinstance(text, str):
        raise ParseError(f"parse_composed: expected a string, got {type(text).__name__}")
    parts = re.split(r"\s+o\s+", text.strip())
    if len(parts) != 3:
        raise ParseError(f"cannot parse composed layout {text!r}: expected 'inner o offset o outer'")
    a, o, b = parts
    try:
        inner = Swizzle.parse(a) if a.startswith("S") else _lay.parse_layout(a)
        offset = _lay.parse_tuple(o)
        outer = _lay.parse_layout(b)
        return ComposedLayout(inner, offset, outer)
    except LayoutError as e:
        if isinstance(e, ParseError) and str(e).startswith("cannot parse composed"):
            raise
        raise ParseError(f"cannot parse composed layout {text!r}: {e}") from None


ComposedLayout.parse = staticmethod(parse_composed)  # type: ignore[attr-defined]


def is_composed(x: Any) -> bool:
    return isinstance(x, ComposedLayout)


# --------------------------------------------------------------------------- queries, composed-aware
# These wrap the functions of cutelab.layout: a ComposedLayout (or a tensor over one) uses its
# outer layout for shape queries and keeps inner/offset for structural ones.

def _composed_of(x: Any) -> ComposedLayout | None:
    if isinstance(x, ComposedLayout):
        return x
    lay = getattr(x, "layout", None)
    return lay if isinstance(lay, ComposedLayout) else None


def _outer_or(x: Any) -> Any:
    c = _composed_of(x)
    return c._outer if c is not None else x


def size(a: Any, mode: Any = None) -> int:
    """Number of elements (of one mode with mode=[i, ...]); a composed layout's is its outer's."""
    return _lay.size(_outer_or(a), mode)


def rank(a: Any, mode: Any = None) -> int:
    return _lay.rank(_outer_or(a), mode)


def depth(a: Any, mode: Any = None) -> int:
    return _lay.depth(_outer_or(a), mode)


def shape(a: Any, mode: Any = None) -> Any:
    return _lay.shape(_outer_or(a), mode)


def cosize(a: Any, mode: Any = None) -> int:
    """1 + the largest offset; for a swizzled layout, the outer layout's cosize (as CuTe says).

    A composed layout with a Layout inner function has none (CuTe DSL raises too).
    """
    c = _composed_of(a)
    if c is None:
        return _lay.cosize(a, mode)
    if isinstance(c._inner, Swizzle):
        return _lay.cosize(c._outer, mode)
    raise LayoutError(f"cosize({c}): a composed layout whose inner function is a layout has no cosize")


def _structural(name: str, f: Callable) -> Callable:
    def g(a: Any, *args: Any, **kw: Any) -> Any:
        if not isinstance(a, ComposedLayout):
            return f(a, *args, **kw)
        c = a
        try:
            out = f(c._outer, *args, **kw)
        except LayoutError as e:
            raise LayoutError(f"{name}({c}): {e}") from None
        return c._with_outer(out) if isinstance(out, Layout) else out

    g.__name__ = name
    g.__qualname__ = name
    g.__doc__ = (f.__doc__ or "").split("\n")[0] + "\n\nOn a ComposedLayout: the same on its outer layout."
    return g


get = _structural("get", _lay.get)
select = _structural("select", _lay.select)
_group_modes = _structural("group_modes", _lay.group_modes)


def group_modes(a: Any, begin: int, end: int | None = None) -> Any:
    """Group modes [begin, end) into one mode; a composed layout needs begin < end (as CuTe DSL).
    On a tensor: the same tensor over its layout with the modes grouped."""
    if hasattr(a, "engine") and hasattr(a, "_new"):  # a Tensor (cute.group_modes(sA, 0, 2) in CuTe DSL)
        return a._map(lambda lay: group_modes(lay, begin, end))
    c = a if isinstance(a, ComposedLayout) else None
    if c is not None and end is not None:
        r = it.rank(c._outer.shape)
        b, e = begin + (r if begin < 0 else 0), end + (r if end < 0 else 0)
        if not b < e:
            raise LayoutError(f"group_modes({c}, {begin}, {end}): the range of modes is empty (begin >= end)")
    return _group_modes(a, begin, end)


flatten = _structural("flatten", _lay.flatten)
dice = _structural("dice", _lay.dice)


def _extend_tuple(a: Any, elem: Any, up_to_rank: int | None, front: bool) -> Any:
    """append/prepend of an IntTuple (a shape, a tiler): elem as new modes up to up_to_rank (one more by
    default), as CuTe DSL extends tuples."""
    from .errors import LayoutError

    t = a if isinstance(a, tuple) else (a,)
    n = len(t) + 1 if up_to_rank is None else up_to_rank
    if n < len(t):
        raise LayoutError(f"{'prepend' if front else 'append'}({a}, {elem}, up_to_rank={n}): already of rank {len(t)}")
    if elem is None:
        raise LayoutError(f"{'prepend' if front else 'append'}({a}): appending to a tuple needs an element")
    extra = (elem,) * (n - len(t))
    return extra + t if front else t + extra


def append(a: Any, elem: Any = None, up_to_rank: int | None = None) -> Any:
    """Append elem (default 1:0) as a new last mode; on a ComposedLayout, to its outer layout; on an
    IntTuple (a shape), as a new last entry."""
    if isinstance(a, (tuple, int)) and not isinstance(a, bool):
        return _extend_tuple(a, elem, up_to_rank, front=False)
    if not isinstance(a, ComposedLayout):
        return _lay.append(a, elem, up_to_rank)
    return a._with_outer(_lay.append(a._outer, elem, up_to_rank))


def prepend(a: Any, elem: Any = None, up_to_rank: int | None = None) -> Any:
    """Prepend elem (default 1:0) as a new first mode; on a ComposedLayout, to its outer layout; on
    an IntTuple (a shape), as a new first entry."""
    if isinstance(a, (tuple, int)) and not isinstance(a, bool):
        return _extend_tuple(a, elem, up_to_rank, front=True)
    if not isinstance(a, ComposedLayout):
        return _lay.prepend(a, elem, up_to_rank)
    return a._with_outer(_lay.prepend(a._outer, elem, up_to_rank))


def crd2idx(coord: Any, layout: Any, *, loc: Any = None, ip: Any = None) -> Any:
    """The offset of coord (None counts as 0, as in CuTe DSL); composed layouts too. loc/ip: MLIR's
    source location, which CuTe DSL's functions take (from a @dsl_user_op); nothing here."""
    if not isinstance(layout, ComposedLayout):
        return _lay.crd2idx(coord, layout)
    fixed = it.transform_leaf(_normalize(coord), lambda x: 0 if x is None else x)
    return layout(fixed)


def slice_(a: Any, coord: Any) -> Any:
    """The sub-layout of the modes where coord is None; on a composed layout, CuTe's
    slice_and_offset(coord, a)[0] (see slice_and_offset); on an int tuple (a shape), the
    elements where coord is None, as CuTe DSL slices a tuple.

    >>> slice_((128, 256, 64), (None, 0, None))
    (128, 64)
    """
    if isinstance(a, tuple) or (isinstance(a, int) and not isinstance(a, bool)):
        return it.slice_tuple(coord, a)
    if isinstance(a, ComposedLayout):
        return slice_and_offset(coord, a)[0]
    return _lay.slice_(a, coord)


def slice_and_offset(coord: Any, layout: Any) -> tuple:
    """(the sub-layout where coord is None, the offset of the fixed part), as CuTe DSL.

    The offset returned is always the value at the slice's origin, crd2idx(coord, layout).
    When the rest of the outer layout leaves the swizzle linear (it never hits both a Y bit
    and its Z bit), the sub-layout decays to strides under the identity swizzle S<0,4,3>, to
    be added to that offset (CuTe's swizzle_layout.hpp); otherwise the sub-layout keeps the
    swizzle and carries the Y/Z bits of offset + outer(fixed part) as its own offset, as
    CuTe DSL 4.8.1 answers. A Layout inner function carries the whole offset. For aligned
    swizzled layouts (offsets that do not carry into the swizzle bits), in both cases
    ``layout(fixed part, i) == sub(i) - sub(0) + offset``; where that fails (the fixed part
    and the rest share bits, CuTe's bitwise split returns a wrong layout) a LayoutError says so.

    >>> C = make_composed_layout(make_swizzle(3, 4, 3), 0, make_layout((8, 64), stride=(64, 1)))
    >>> print(*slice_and_offset((None, 3), C))
    S<0,4,3> o 0 o ((2,4)):((64,144)) 3
    """
    if not isinstance(layout, ComposedLayout):
        return _lay.slice_and_offset(coord, layout)
    coord = _normalize(coord)
    try:
        return _slice_and_offset_composed(coord, layout)
    except LayoutError as e:
        crd = it.tuple_str(coord) if isinstance(coord, tuple) else coord
        raise LayoutError(f"slice_and_offset({crd}, {layout}): {e}") from None


def _all_none(c: Any) -> bool:
    if isinstance(c, tuple):
        return all(_all_none(x) for x in c)
    return c is None


def _only_zy(sw: Swizzle) -> Layout:
    """CuTe's projection of offsets onto the Y and Z bits of a swizzle, as a layout."""
    b, m, s = sw.num_bits, sw.num_base, abs(sw.num_shift)
    shp = (1 << m, 1 << b, 1 << (s - b), 1 << b, 1)
    return Layout._raw(shp, (0, 1 << m, 0, 1 << (m + s), 0))


def _project(only: Layout, layout: Layout, crd: Any, fallback: int) -> int:
    """(only o layout)(crd) as CuTe composes it; where the strides do not divide the swizzle's
    bit fields (CuTe would not compile) the plain bits of layout(crd)."""
    from .algebra import _compose_layouts

    try:
        p = _compose_layouts(only, layout)
    except LayoutError:
        return fallback
    return it.crd2idx(crd, p.shape, p.stride)


def _swizzle_strides(lower: bool, z: int, y: int, off: int, b: int) -> tuple:
    out = []
    for i in range(b):
        if lower:  # y\z: 0 -> Z, 1 -> -Z
            out.append(z << i if (off & (y << i)) == 0 else -(z << i))
        else:  # z\y: 0 -> Y+Z, 1 -> Y-Z
            out.append((y + z) << i if (off & (z << i)) == 0 else (y - z) << i)
    return tuple(out)


def _eval_last(layout: Layout) -> int:
    n = it.product(layout.shape)
    return it.crd2idx(n - 1, layout.shape, layout.stride)


def _slice_and_offset_composed(coord: Any, c: ComposedLayout) -> tuple:
    from .algebra import _compose_layouts

    outer = c._outer
    sub, fixed = _lay.slice_and_offset(coord, outer)  # checks the coordinate
    origin = c._apply_inner(fixed)  # the value at the slice's origin: crd2idx(coord, c)
    if not isinstance(c._inner, Swizzle):
        return ComposedLayout(c._inner, _add_offset(c._offset, fixed), sub), origin
    if _all_none(coord):
        return c._with_outer(sub), origin
    sw = c._inner
    zy = sw.swizzle_code
    only = _only_zy(sw)
    # the swizzled (Y and Z) bits of the fixed part join the offset; the others pass through
    diced = _lay.dice(outer, coord)
    dcoord = it.dice_tuple(coord, coord) if isinstance(coord, tuple) else coord
    offset_zy = c._offset ^ _project(only, diced, dcoord, fixed & zy)
    active = _project(only, sub, it.product(sub.shape) - 1, _eval_last(sub) & zy)  # Y/Z bits the rest reaches
    if active & ~sw(active):  # the rest hits a Y bit and its Z bit: the swizzle stays
        return _exact(ComposedLayout(sw, offset_zy, sub), origin, c, fixed, sub)
    # Otherwise the swizzle is linear over the rest: decay to strides (identity swizzle).
    b, m, s = sw.num_bits, sw.num_base, abs(sw.num_shift)
    zm, ym = sw.zzz_msk, sw.yyy_msk
    z, y = zm & -zm, ym & -ym
    lo = _swizzle_strides(z < y, z, y, offset_zy, b)
    hi = _swizzle_strides(z > y, z, y, offset_zy, b)
    sw_layout = Layout._raw(
        (1 << m,) + (2,) * b + (1 << (s - b),) + (2,) * b + (1,),
        (1,) + lo + (1 << (m + b),) + hi + (1 << (m + b + s),),
    )
    return _exact(ComposedLayout(Swizzle(0, 4, 3), 0, _compose_layouts(sw_layout, sub)), origin, c, fixed, sub)


def _exact(res: ComposedLayout, origin: int, c: ComposedLayout, fixed: int, sub: Layout) -> tuple:
    """Check that (res, origin) represents the slice: c at (fixed part, i) == res(i) - res(0) + origin.

    CuTe splits the offset bit by bit; when the fixed part of the coordinate and the rest of
    the layout share bits (an addition that carries), its answer is a wrong layout. Raise then.
    """
    np = _np()
    want = c._inner(_lay.evaluate_all(sub) + (c._offset + fixed))
    got = res.offsets()
    got = got - got[0] + origin
    if got.shape != want.shape or not np.array_equal(got, want):
        k = int(np.flatnonzero(got != want)[0]) if got.shape == want.shape else 0
        raise LayoutError(
            f"the fixed part of the coordinate (outer offset {fixed}, plus the offset {c._offset}) and the "
            f"rest of the layout {sub} share bits, so the swizzle does not split into a slice and an offset "
            f"(at index {k} of the slice the layout is {int(want[k])}, the split gives {int(got[k])}; "
            f"CuTe would return that wrong layout)"
        )
    return res, origin


def _shape_stride(layout: Layout) -> tuple:
    return layout.shape, layout.stride


# --------------------------------------------------------------------------- algebra on composed layouts

def _recast_swizzle(sw: Swizzle, num: int, den: int) -> Swizzle:
    def log2(n: int) -> int:
        if n & (n - 1):
            raise LayoutError(f"a swizzle can only be recast by a power-of-two ratio, got {n}")
        return n.bit_length() - 1

    b, m, s = sw.num_bits, sw.num_base, sw.num_shift
    if num > 1:  # upcast
        m -= log2(num)
        if m < 0:
            b, m = max(b + m, 0), 0
    if den > 1:  # downcast
        m += log2(den)
    return Swizzle(b, m, s)  # CuTe DSL keeps S<0,m,s> here (no canonical S<0,4,3>)


def _recast(new_bits: int, old_bits: int, c: ComposedLayout) -> ComposedLayout:
    from math import gcd
    from .algebra import recast_layout

    if not isinstance(c._inner, Swizzle):
        raise LayoutError("cannot recast a composed layout whose inner function is a layout")
    for v in (new_bits, old_bits):
        if not _is_int(v) or v < 1:
            raise LayoutError(f"type widths must be positive ints (bits), got {v!r}")
    g = gcd(new_bits, old_bits)
    num, den = new_bits // g, old_bits // g
    sw = _recast_swizzle(c._inner, num, den)
    off = c._offset
    if off % num:
        raise LayoutError(f"the offset {off} is not a multiple of {num} (it would fall inside a new element)")
    off = off // num * den
    return ComposedLayout(sw, off, recast_layout(new_bits, old_bits, c._outer))


def composed_op(name: str, f: Callable, args: tuple, kw: dict) -> Any:
    """Apply the algebra operation ``name`` where an operand is a ComposedLayout (called by
    cutelab.algebra, whose wrapper names the operation and operands in any error); ``f`` is
    the operation on plain layouts."""
    a0 = args[0] if args else None
    if name == "recast_layout":
        if len(args) != 3 or not isinstance(args[2], ComposedLayout) or _contains_composed(args[:2]):
            raise LayoutError("expected (new_type_bits, old_type_bits, layout)")
        return _recast(args[0], args[1], args[2])
    if name in ("upcast", "downcast"):
        if not isinstance(a0, ComposedLayout) or len(args) != 2 or not _is_int(args[1]) or args[1] < 1:
            raise LayoutError("expected (layout, n) with n a positive int")
        return _recast(args[1], 1, a0) if name == "upcast" else _recast(1, args[1], a0)
    others = [a for a in list(args[1:]) + list(kw.values()) if _contains_composed(a)]
    if not isinstance(a0, ComposedLayout) or others:
        raise LayoutError(
            f"a composed layout can only be the first operand (CuTe has no {name} with a "
            f"composed layout on the right)"
        )
    if name not in _OUTER_OPS:
        raise LayoutError(f"not defined for a composed layout (CuTe DSL has no {name} for one)")
    return a0._with_outer(f(a0._outer, *args[1:], **kw))


def _contains_composed(x: Any) -> bool:
    if isinstance(x, ComposedLayout):
        return True
    if isinstance(x, (tuple, list)):
        return any(_contains_composed(e) for e in x)
    return False


# CuTe applies these to the outer layout and keeps the swizzle and offset.
_OUTER_OPS = frozenset({
    "composition", "logical_divide", "zipped_divide", "tiled_divide", "flat_divide",
    "logical_product", "zipped_product", "tiled_product", "flat_product", "blocked_product",
    "raked_product", "tile_to_shape", "coalesce", "filter",
})

_alg.register_composed(ComposedLayout, composed_op)  # the algebra's operations on composed layouts
