"""Layout: a shape and a stride, a function from coordinates to offsets.

>>> L = make_layout(((2, 2), (2, 3)), stride=((2, 12), (1, 4)))
>>> print(L)
((2,2),(2,3)):((2,12),(1,4))
>>> L(1), L((1, 0)), L(((1, 0), (0, 1)))
(2, 2, 6)
>>> Layout.parse("((2,2),(2,3)):((2,12),(1,4))") == L
True
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from . import display as _display
from . import int_tuple as it
from .tracing import SymbolicIndex, TracedValue
from .dynamic import INT_TYPES as _INT
from .dynamic import DynInt
from .errors import LayoutError, ParseError
from .limits import charge as _charge

if TYPE_CHECKING:  # numpy is imported where arrays are made, so that `import cutelab` stays fast
    import numpy as np


def _np() -> Any:
    """numpy, imported on first use."""
    import numpy

    return numpy


def _np_loaded() -> Any:
    """numpy if it is imported already, else None (then no numpy value can exist to check for)."""
    return sys.modules.get("numpy")

__all__ = [
    "Layout", "ScaledBasis", "E", "make_layout", "make_ordered_layout", "make_identity_layout",
    "make_layout_like", "size", "cosize", "rank", "depth", "shape", "stride", "get", "select",
    "group_modes", "append", "prepend", "flatten", "unflatten", "slice_", "dice",
    "slice_and_offset", "crd2idx", "idx2crd", "coshape", "parse_tuple", "parse_layout",
    "layout_str", "product_each", "shape_div", "is_layout",
]

_INT_LIMIT = 1 << 63


# --------------------------------------------------------------------------- scaled basis

class ScaledBasis:
    """A stride that is a multiple of a basis vector of the codomain: ``3@1`` is 3*e1.

    Used by identity layouts, whose offsets are coordinates. Sums of ScaledBasis
    evaluate to coordinate tuples. ``mode`` is an int, or for a basis vector inside a nested
    codomain mode a path of ints, outermost first: CuTe's ``E<1,0>`` (mode 0 of mode 1) is
    ``ScaledBasis(1, (1, 0))`` and prints, as CuTe prints it, ``1@0@1``.

    >>> print(ScaledBasis(1, (1, 0)), ScaledBasis(3, 1))
    1@0@1 3@1
    """

    __slots__ = ("value", "mode")

    def __init__(self, value: int, mode: Any):
        if isinstance(mode, (tuple, list)):
            mode = tuple(int(m) for m in mode)
            if len(mode) == 1:
                mode = mode[0]
            elif not mode:
                raise LayoutError("a basis stride needs at least one mode")
        self.value = value
        self.mode = mode

    @property
    def path(self) -> tuple:
        """The mode path of the basis vector, outermost mode first."""
        return self.mode if isinstance(self.mode, tuple) else (self.mode,)

    def __mul__(self, k: Any) -> Any:
        if isinstance(k, ScaledBasis):
            raise LayoutError(f"cannot multiply two basis strides {self} and {k}")
        if isinstance(k, int) and k == 0:
            return 0
        return ScaledBasis(self.value * k, self.mode)

    __rmul__ = __mul__

    def __add__(self, other: Any) -> Any:
        return _ArithTuple.of(self) + other

    __radd__ = __add__

    def __floordiv__(self, k: int) -> "ScaledBasis":
        return ScaledBasis(self.value // k, self.mode)

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, ScaledBasis):
            return self.value == other.value and self.mode == other.mode
        return isinstance(other, int) and other == 0 and self.value == 0

    def __hash__(self) -> int:
        return hash((self.value, self.mode))

    def __abs__(self) -> "ScaledBasis":
        return ScaledBasis(abs(self.value), self.mode)

    def __str__(self) -> str:
        return f"{self.value}" + "".join(f"@{m}" for m in reversed(self.path))

    __repr__ = __str__


def E(*mode: int) -> ScaledBasis:
    """The unit basis stride of codomain mode ``mode`` (CuTe's E<...>; several ints: a nested mode).

    >>> print(E(1), E(1, 0))
    1@1 1@0@1
    """
    if not mode:
        raise LayoutError("E: give the mode of the basis vector, e.g. E(0)")
    return ScaledBasis(1, mode if len(mode) > 1 else mode[0])


class _ArithTuple(tuple):
    """A coordinate produced by summing basis strides (adds element-wise, grows as needed)."""

    @staticmethod
    def of(x: Any) -> "_ArithTuple":
        if isinstance(x, _ArithTuple):
            return x
        if isinstance(x, ScaledBasis):
            v: Any = x.value
            for m in reversed(x.path):
                v = _ArithTuple((0,) * m + (v,))
            return v
        if isinstance(x, tuple):
            return _ArithTuple(x)
        if isinstance(x, int) and x == 0:
            return _ArithTuple(())
        raise LayoutError(f"cannot add the integer offset {x} to a coordinate of basis strides")

    def __add__(self, other: Any) -> "_ArithTuple":  # type: ignore[override]
        o = _ArithTuple.of(other)
        n = max(len(self), len(o))
        a = tuple(self) + (0,) * (n - len(self))
        b = tuple(o) + (0,) * (n - len(o))
        return _ArithTuple(_arith_add(x, y) for x, y in zip(a, b))

    __radd__ = __add__


def _arith_add(x: Any, y: Any) -> Any:
    if isinstance(x, tuple) or isinstance(y, tuple):
        return _ArithTuple.of(x) + y
    return x + y


def _stride_leaf_ok(d: Any) -> bool:
    return (type(d) in _INT) or isinstance(d, ScaledBasis)


# --------------------------------------------------------------------------- Layout

def _deeper_than(t: Any, limit: int) -> bool:
    """True when t (tuples and lists) nests more than limit levels (iterative: no recursion)."""
    stack = [(t, 0)]
    while stack:
        x, d = stack.pop()
        if isinstance(x, (tuple, list)):
            if d >= limit:
                return True
            stack.extend((y, d + 1) for y in x)
    return False


def _extent_problem(shape: Any, stride: Any) -> str | None:
    """Why the offsets of (shape, stride) do not all fit in a signed 64-bit int, or None.

    The smallest offset is the sum of (s-1)*d over negative strides, the largest over positive
    ones (for basis strides, per codomain mode; checked on their values together, which bounds it).
    """
    lo = hi = 0
    for s, d in zip(it.flatten_to_tuple(shape), it.flatten_to_tuple(stride)):
        v = d.value if isinstance(d, ScaledBasis) else d
        if type(s) not in _INT or type(v) not in _INT:
            return None  # symbolic: checked when it is known
        if v > 0:
            hi += (s - 1) * v
        else:
            lo += (s - 1) * v
    if hi >= _INT_LIMIT or lo < -_INT_LIMIT:
        return (f"its offsets span [{lo}, {hi}], which does not fit in 64 bits "
                f"(cutelab, like CuTe, computes offsets in 64-bit integers)")
    return None


def check_fits(layout: "Layout", what: str) -> "Layout":
    """layout, or a LayoutError naming what it is when its size or offsets do not fit in 64 bits.

    The algebra validates its results with this, as Layout() validates its inputs (one pass over
    the modes: it runs on every result). A layout known to fit (validated by Layout(), or checked
    here before) is not checked again; one that passes is marked so, with its facts (_facts_of).
    """
    f = layout._facts
    if f is None or f[2] is None:
        if f is not None and f[3]:
            return layout
        f = _facts_of(layout)
    if f[3]:
        return layout
    # not known to fit: say why (or, for values that are not plain ints, find that they fit)
    shp, std = layout._shape, layout._stride
    if type(shp) is tuple:
        shp, std = it.flatten(shp), it.flatten(std)
    else:
        shp, std = (shp,), (std,)
    size, lo, hi = 1, 0, 0
    for s, d in zip(shp, std):
        if type(s) is int and type(d) is int:
            v = d
        else:
            if type(s) not in _INT:
                return layout  # symbolic: checked when it is known
            v = d if type(d) in _INT else (d.value if isinstance(d, ScaledBasis) else None)
            if type(v) not in _INT:
                return layout
        size *= s
        if v > 0:
            hi += (s - 1) * v
        else:
            lo += (s - 1) * v
        if not -_INT_LIMIT < v < _INT_LIMIT:
            raise LayoutError(f"{what} {layout} has stride {d}, which does not fit in 64 bits")
    if size >= _INT_LIMIT:
        raise LayoutError(f"{what} {layout} has size {size}, which does not fit in 64 bits")
    if hi >= _INT_LIMIT or lo < -_INT_LIMIT:
        raise LayoutError(f"{what} {layout}: its offsets span [{lo}, {hi}], which does not fit in 64 bits "
                          f"(cutelab, like CuTe, computes offsets in 64-bit integers)")
    _set_facts(layout, f[:3] + (True,) + f[4:] if f[2] else _FITS_NOT_PLAIN)
    return layout


def _check(shape: Any, stride: Any, where: str) -> None:
    """Validate a shape/stride pair: congruent profiles, positive int shapes, int strides."""
    if type(shape) is tuple:
        if type(stride) is not tuple or len(stride) != len(shape):
            raise LayoutError(
                f"make_layout{where}: shape {it.tuple_str(shape)} and stride {it.tuple_str(stride)} "
                f"are not congruent (the stride must have the same nesting as the shape)"
            )
        for s, d in zip(shape, stride):
            _check(s, d, where)
        return
    if type(shape) not in _INT:
        if isinstance(shape, SymbolicIndex):  # a kernel's runtime integer: its own error says which (int())
            try:
                int(shape)
            except Exception as e:  # noqa: BLE001 - the index's TraceError, as a LayoutError of make_layout
                raise LayoutError(f"make_layout{where}: shape entries must be static ints in a kernel: {e}") from None
        raise LayoutError(f"make_layout{where}: shape entries must be positive ints, got {shape!r}")
    if shape < 1:
        src = getattr(shape, "folded_from", None)
        if src is not None and shape == 0:
            from .tracing import hooks as _hooks

            if _hooks.in_runtime_branch():  # a mode empty for this launch in code that may not run (CUTLASS's Hopper
                return  # dense_gemm.py: its tail swizzle when cluster_dim()[0] % 8 == 0); arithmetic with the 0 stays
                # a runtime expression of the launch dimension (ir.symbolic._launch_zero), refused only if it runs
        if src is not None:  # a launch dimension's arithmetic (Expr.launch_value)
            raise LayoutError(
                f"make_layout{where}: shape entries must be positive, got {src.expr_str()} == {int(shape)} for this "
                f"launch ({src.launch_note()}; a layout's shape is static in cutelab, so it takes the launch's value, "
                f"and {int(shape)} is no extent: CuTe DSL would compute with an empty mode at run time)")
        raise LayoutError(f"make_layout{where}: shape entries must be positive, got {shape}")
    if shape >= _INT_LIMIT:
        raise LayoutError(f"make_layout{where}: shape entry {shape} does not fit in 64 bits")
    if type(stride) is tuple:
        raise LayoutError(
            f"make_layout{where}: shape {it.tuple_str(shape)} and stride {it.tuple_str(stride)} are not congruent"
        )
    if type(stride) in _INT:
        if not -_INT_LIMIT < stride < _INT_LIMIT:
            raise LayoutError(f"make_layout{where}: stride entry {stride} does not fit in 64 bits")
    elif not isinstance(stride, ScaledBasis):
        raise LayoutError(f"make_layout{where}: stride entries must be ints, got {stride!r}")


_NO_COORD = object()  # Layout.__call__ without a coordinate


class Layout:
    """A CuTe layout: a hierarchical shape and a congruent stride. Frozen and hashable.

    Calling a layout maps a coordinate (an index, a flat or a nested coordinate) to an offset;
    a coordinate holding ``None`` slices out a sub-layout.
    """

    __slots__ = ("_shape", "_stride", "_hash", "_facts")

    def __init__(self, shape: Any, stride: Any = None):
        for what, t in (("shape", shape), ("stride", stride)):
            if _deeper_than(t, MAX_DEPTH):
                raise LayoutError(f"make_layout: the {what} nests deeper than {MAX_DEPTH} levels (the most cutelab accepts)")
        shape = _normalize(shape)
        try:
            if stride is None:
                _check(shape, it.repeat_like(shape, 0), "")
                stride = it.compact_col_major(shape)
            else:
                stride = _normalize(stride)
                _check(shape, stride, "")
        except LayoutError as e:  # name the operands: make_layout((2,-3), stride=(1,2)): ...
            args = it.tuple_str(shape) + ("" if stride is None else f", stride={it.tuple_str(stride)}")
            raise LayoutError(str(e).replace("make_layout:", f"make_layout({args}):", 1)) from None
        if it.product(shape) >= _INT_LIMIT:
            raise LayoutError(f"make_layout: size of shape {it.tuple_str(shape)} does not fit in 64 bits")
        bad = _extent_problem(shape, stride)
        if bad:
            raise LayoutError(f"make_layout({it.tuple_str(shape)}, stride={it.tuple_str(stride)}): {bad}")
        _set_shape(self, shape)
        _set_stride(self, stride)
        _set_hash(self, None)
        _set_facts(self, None)
        _facts_of(self, fits=True)  # validated just now: its offsets fit in 64 bits

    @classmethod
    def _raw(cls, shape: Any, stride: Any) -> "Layout":
        """Build without validation (for results of the algebra, valid by construction)."""
        obj = object.__new__(cls)
        _set_shape(obj, shape)  # slot descriptors: faster than object.__setattr__
        _set_stride(obj, stride)
        _set_hash(obj, None)
        _set_facts(obj, None)
        return obj

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Layout is immutable")

    def __reduce__(self) -> Any:
        return (Layout, (self._shape, self._stride))

    @property
    def value(self) -> "Layout":
        """CuTe DSL's MLIR value of the layout: the layout itself (what the cutlass._mlir stand-ins take)."""
        return self

    @property
    def shape(self) -> Any:
        return self._shape

    @property
    def stride(self) -> Any:
        return self._stride

    # ---- structure
    def __len__(self) -> int:
        return it.rank(self._shape)

    def __iter__(self):
        if type(self._shape) is tuple:
            for s, d in zip(self._shape, self._stride):
                yield Layout._raw(s, d)
        else:
            yield self

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, Layout):
            return NotImplemented
        return self._shape == other._shape and _strides_equal(self._stride, other._stride)

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash((self._shape, _hashable(self._stride)))
            object.__setattr__(self, "_hash", h)
        return h

    def __str__(self) -> str:
        return layout_str(self._shape, self._stride)

    def __repr__(self) -> str:  # CuTe DSL's repr is its str: print((L1, L2)) shows (3:3, (2,4):(1,8))
        return str(self)

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def _repr_html_(self) -> str | None:  # Jupyter: the grid, interactive (hover, zoom, pan)
        return _display.html(self)  # None where there is no grid to draw (e.g. basis strides): the text

    # ---- evaluation
    def __call__(self, coord: Any = _NO_COORD, *more: Any) -> Any:
        if more:  # L(i, j, ...): the coordinate (i, j, ...)
            coord = (coord,) + more
        elif coord is _NO_COORD:
            raise LayoutError(f"{self}: calling a layout needs a coordinate")
        else:
            # fast paths (plain int shapes and strides, an int index or a tuple of ints): one walk that
            # checks and computes; anything else (None, numpy, out of range, ...) takes the general path
            f = self._facts
            if f is None or f[2] is None:
                f = _facts_of(self)
            if f[2]:
                t = type(coord)
                if t is int:
                    if 0 <= coord < f[0]:
                        r = 0
                        for s, d in f[1]:
                            r += (coord % s) * d
                            coord //= s
                        return r
                elif t is tuple:  # _plain_crd2idx, its top level inline
                    s = self._shape
                    if type(s) is tuple and len(coord) == len(s):
                        r = 0
                        for x, y, z in zip(coord, s, self._stride):
                            if type(x) is int and type(y) is int:
                                if not 0 <= x < y:
                                    break
                                r += x * z
                            else:
                                v = _plain_crd2idx(x, y, z)
                                if v is None:
                                    break
                                r += v
                        else:
                            return r
        coord = _coord_ints(self, coord)
        if it.has_none(coord):
            return slice_(self, coord)
        return _eval(self, coord)

    def __getitem__(self, coord: Any) -> Any:
        if (type(coord) is int or (type(coord).__module__ == "numpy" and isinstance(coord, _np().integer))) \
                and isinstance(self.shape, tuple) and len(self.shape) > 1:
            return get(self, int(coord))  # a numpy integer picks a mode too, as a Python int does  # CuTe DSL: an int picks a top-level mode (a Layout), as tuple indexing does
        coord = _coord_ints(self, coord)
        if it.has_none(coord):
            return slice_(self, coord)
        return _eval(self, coord)

    @property
    def max_alignment(self) -> int:
        """CuTe's max_alignment: the length of the run of consecutive offsets the layout starts with
        (gcd with the stride after it), in elements.

        >>> make_layout((128, 8)).max_alignment, make_layout((100, 8))[0].max_alignment
        (1024, 100)
        """
        return _max_alignment(self)  # algebra.py's (it registers it: register_max_alignment)

    def get_hier_coord(self, idx: int, *, loc: Any = None, ip: Any = None) -> Any:
        """The coordinate whose offset is ``idx`` (CuTe's get_hier_coord), checked (``loc``/``ip``: CuTe DSL's
        MLIR location arguments, accepted and unused).

        Raises LayoutError when no coordinate of the layout maps to ``idx``.
        """
        return get_hier_coord(self, idx)

    def get_flat_coord(self, idx: int, *, loc: Any = None, ip: Any = None) -> Any:
        """Like get_hier_coord, but each top-level mode's coordinate as one index into that mode."""
        c = get_hier_coord(self, idx)
        if not isinstance(self._shape, tuple):
            return c
        return tuple(it.crd2idx(ci, si) for ci, si in zip(c, self._shape))

    def get_1d_coord(self, idx: int, *, loc: Any = None, ip: Any = None) -> int:
        """The index (colexicographic) whose offset is ``idx``."""
        return it.crd2idx(get_hier_coord(self, idx), self._shape)

    def offsets(self) -> np.ndarray:
        """The offset of every index, as an int64 numpy array of length size(self)."""
        return evaluate_all(self)

    def size(self) -> int:
        return it.product(self._shape)

    def cosize(self) -> int:
        return cosize(self)

    def _repr_svg_(self) -> str | None:  # Jupyter: the grid of offsets (None: IPython shows the text)
        return _display.svg(self)  # None e.g. for an identity layout: its values are coordinates, there is no grid


#: Layout.max_alignment's computation: algebra.py's (it needs the algebra, which imports this module),
#: registered by it when it is imported (``register_max_alignment``; the package imports it)
_max_alignment: Any = None


def register_max_alignment(fn: Any) -> None:
    """Make ``Layout.max_alignment`` answer fn(layout) (algebra.py calls this once)."""
    global _max_alignment
    _max_alignment = fn


_set_shape = Layout._shape.__set__  # type: ignore[attr-defined]
_set_stride = Layout._stride.__set__  # type: ignore[attr-defined]
_set_hash = Layout._hash.__set__  # type: ignore[attr-defined]
_set_facts = Layout._facts.__set__  # type: ignore[attr-defined]
_new = object.__new__


def _raw_facts(shape: Any, stride: Any, facts: tuple) -> Layout:
    """Layout._raw(shape, stride) built with its facts (see _facts_of) in one call."""
    obj = _new(Layout)
    _set_shape(obj, shape)
    _set_stride(obj, stride)
    _set_hash(obj, None)
    _set_facts(obj, facts)
    return obj


_FITS = (None, None, None, True, None, None, None)
_FITS_NOT_PLAIN = (None, None, False, True, None, None, None)


def _facts_of(layout: Layout, fits: bool = False) -> tuple:
    """What is known of layout, computed once and kept on it (layouts are frozen):
    (size, the (shape, stride) pairs of its leaves of shape > 1, plain, fits) where plain says every
    shape and stride leaf is a Python int (no dynamic, symbolic or basis values: then size and the
    pairs are set) and fits that its size and offsets are known to fit in 64 bits; for plain layouts,
    lo and hi: its smallest and largest offset, and ones: whether a leaf of shape 1 has a stride other
    than 0; (size, pairs, plain, fits, lo, hi, ones). Partial facts (plain None) are those of a layout
    known to fit, the rest not computed yet (_FITS), or only its size and bounds on its offsets (lo, hi)
    known: the algebra marks its results so where it knows them from its operands. A plain layout's
    facts say it fits when it does (check_fits's test: _leaf_facts)."""
    f = layout._facts
    if f is None or f[2] is None:
        shp, std = layout._shape, layout._stride
        if type(shp) is tuple:
            fs, fd = it.flatten(shp), it.flatten(std)
        else:
            fs, fd = (shp,), (std,)
        for x in fs:
            if type(x) is not int:
                break
        else:
            for x in fd:
                if type(x) is not int:
                    break
            else:  # plain
                g = _leaf_facts(zip(fs, fd))
                if not g[3] and (fits or (f is not None and f[3])):
                    g = g[:3] + (True,) + g[4:]
                _set_facts(layout, g)
                return g
        f = (None, None, False, fits or (f is not None and f[3]), None, None, None)
        _set_facts(layout, f)
    elif fits and not f[3]:
        f = f[:3] + (True,) + f[4:]
        _set_facts(layout, f)
    return f


def _leaf_facts(leaves: Iterable) -> tuple:
    """The facts (see _facts_of) of the layout of plain ints whose (shape, stride) leaves, in order, are
    leaves; fits is whether its size, strides and offsets fit in 64 bits (as check_fits decides). The one
    walk that makes a plain layout's facts: Layout(), check_fits and the algebra's results use it."""
    size, lo, hi = 1, 0, 0
    pairs = []
    ones = big = False
    for x, y in leaves:
        if x != 1:
            size *= x
            pairs.append((x, y))
            if y > 0:
                hi += (x - 1) * y
            else:
                lo += (x - 1) * y
        elif y != 0:
            ones = True
            if not -_INT_LIMIT < y < _INT_LIMIT:
                big = True
    # a stride of a leaf of shape > 1 is at most the span of the offsets, so it fits where they do
    return (size, tuple(pairs), True, not big and size < _INT_LIMIT and hi < _INT_LIMIT and lo >= -_INT_LIMIT,
            lo, hi, ones)


def _plain_crd2idx(c: Any, s: Any, d: Any) -> Any:
    """The offset of coordinate c in (s, d), or None where the general path must decide (a leaf that
    is not an int, an index out of range, profiles that do not match). s and d hold Python ints only."""
    if type(c) is tuple:
        if type(s) is not tuple or len(c) != len(s):
            return None
        r = 0
        for x, y, z in zip(c, s, d):
            if type(x) is int and type(y) is int:
                if not 0 <= x < y:
                    return None
                r += x * z
            else:
                v = _plain_crd2idx(x, y, z)
                if v is None:
                    return None
                r += v
        return r
    if type(c) is int:
        if type(s) is int:
            return c * d if 0 <= c < s else None
        if 0 <= c < it.product(s):
            return it.crd2idx(c, s, d)
    return None


def _hashable(d: Any) -> Any:
    if isinstance(d, tuple):
        return tuple(_hashable(x) for x in d)
    if isinstance(d, ScaledBasis):
        return ("E", d.value, d.path)
    return d


def _strides_equal(a: Any, b: Any) -> bool:
    return _hashable(a) == _hashable(b)


def _normalize(t: Any) -> Any:
    """Lists become tuples, numpy ints become ints; everything else is left for validation."""
    if isinstance(t, (tuple, list)):
        return tuple(_normalize(x) for x in t)
    if type(t) is int:
        return t
    if isinstance(t, DynInt):  # a scalar entering a layout: the layout algebra infers its divisibility
        return t if type(t) is DynInt and t.track else DynInt(int(t), t.dtype, t.div)
    if isinstance(t, SymbolicIndex):  # a kernel's runtime value known for the launch traced (cute.arch.grid_dim()):
        folded = t.launch_value()  # a dynamic int of that value, as a runtime scalar's shape is
        if folded is None:
            return t
        d = DynInt(folded)
        d.folded_from = t  # for _check's error where the value is no extent
        return d
    npm = _np_loaded()
    if npm is not None and isinstance(t, npm.integer):
        return int(t)
    return t


def is_layout(x: Any) -> bool:
    return isinstance(x, Layout)


def _is_array(x: Any) -> bool:
    np = _np_loaded()
    return np is not None and isinstance(x, np.ndarray)


def _is_symbolic(x: Any) -> bool:
    """A symbolic integer of the kernel tracer (its values are only known at run time)."""
    return isinstance(x, (SymbolicIndex, TracedValue))


def _coord_ints(layout: Layout, coord: Any, op: str = "evaluating") -> Any:
    """coord with lists as tuples and integers of any kind (numpy's too) as Python ints.

    Anything that is not an integer (a float, a string, a bool) is a TypeError naming the
    operand: a layout maps integer coordinates only, and CuTe has no rounding or parsing here.
    """

    def go(c: Any) -> Any:
        if type(c) in _INT or c is None:
            return c
        if isinstance(c, (tuple, list)):
            return tuple(go(x) for x in c)
        np = _np_loaded()
        if isinstance(c, bool) or (np is not None and isinstance(c, np.bool_)):
            pass
        elif isinstance(c, int) or (np is not None and isinstance(c, np.integer)):
            return int(c)
        elif np is not None and isinstance(c, np.ndarray) and c.dtype.kind in "iu":
            return c  # a batch of indices (one per thread): checked and evaluated element-wise
        elif _is_symbolic(c):
            return c
        raise TypeError(
            f"{op} {layout} at {coord!r}: coordinate entries must be integers (or None to slice), "
            f"got {type(c).__name__} {c!r}"
        )

    return go(coord)


def _eval(layout: Layout, coord: Any) -> Any:
    shape, stride = layout._shape, layout._stride
    if isinstance(coord, tuple):
        if not _coord_fits(coord, shape):
            raise LayoutError(
                f"evaluating {layout} at {it.tuple_str(coord)}: the coordinate does not match the shape "
                f"{it.tuple_str(shape)} (or an entry is out of range)"
            )
    elif isinstance(coord, int):
        n = it.product(shape)
        if not 0 <= coord < n:
            raise LayoutError(f"evaluating {layout} at {coord}: index {coord} is out of range [0, {n})")
    elif _is_array(coord) and coord.size and not (0 <= int(coord.min()) and int(coord.max()) < it.product(shape)):
        n = it.product(shape)
        raise LayoutError(f"evaluating {layout} at an index array: indices {int(coord.min())}..{int(coord.max())} "
                          f"are not all in [0, {n})")
    return _finish(it.crd2idx(coord, shape, stride))


def _finish(x: Any) -> Any:
    if isinstance(x, _ArithTuple):
        return tuple(_finish(e) for e in x)
    return x


def _coord_fits(coord: Any, shape: Any) -> bool:
    """coord is congruent-or-coarser than shape and in range where it is an int."""
    if isinstance(coord, tuple):
        if not isinstance(shape, tuple) or len(coord) != len(shape):
            return False
        return all(_coord_fits(c, s) for c, s in zip(coord, shape))
    if isinstance(coord, int):
        return 0 <= coord < it.product(shape)
    if _is_array(coord):
        return coord.size == 0 or (0 <= int(coord.min()) and int(coord.max()) < it.product(shape))
    return True  # symbolic


def layout_str(shape: Any, stride: Any) -> str:
    return f"{it.tuple_str(shape)}:{it.tuple_str(stride)}"


# --------------------------------------------------------------------------- parsing

#: deepest nesting of parentheses the parser reads (real layouts nest a few levels)
MAX_DEPTH = 64


class _Parser:
    def __init__(self, text: str, what: str):
        self.s = text
        self.i = 0
        self.what = what

    def fail(self, msg: str) -> "ParseError":
        text, at = self.s, self.i
        if len(text) > 72:  # long input: quote a window around the position
            a = max(0, at - 36)
            b = min(len(text), a + 72)
            text = ("..." if a else "") + text[a:b] + ("..." if b < len(self.s) else "")
            at = at - a + (3 if a else 0)
        pointer = " " * at + "^"
        return ParseError(f"cannot parse {self.what} {text!r}: {msg} at position {self.i}\n  {text}\n  {pointer}")

    def ws(self) -> None:
        while self.i < len(self.s) and self.s[self.i] in " \t\n":
            self.i += 1

    def peek(self) -> str:
        self.ws()
        return self.s[self.i] if self.i < len(self.s) else ""

    def tuple_(self, allow_none: bool = False, allow_basis: bool = False, level: int = 0) -> Any:
        c = self.peek()
        if c == "(":
            if level >= MAX_DEPTH:
                raise self.fail(f"nesting deeper than {MAX_DEPTH} levels (the most cutelab reads)")
            self.i += 1
            items = []
            if self.peek() == ")":
                self.i += 1
                return ()
            while True:
                items.append(self.tuple_(allow_none, allow_basis, level + 1))
                c = self.peek()
                if c == ",":
                    self.i += 1
                    if self.peek() == ")":  # tolerate a trailing comma
                        self.i += 1
                        return tuple(items)
                    continue
                if c == ")":
                    self.i += 1
                    return tuple(items)
                raise self.fail("expected ',' or ')'" if c else "missing ')'")
        return self.leaf(allow_none, allow_basis)

    def leaf(self, allow_none: bool, allow_basis: bool) -> Any:
        self.ws()
        start = self.i
        if allow_none and self.s.startswith("None", self.i):
            self.i += 4
            return None
        if self.i < len(self.s) and self.s[self.i] == "_" and not (
            self.i + 1 < len(self.s) and (self.s[self.i + 1].isdigit() or self.s[self.i + 1] == "-")
        ):
            if allow_none:
                self.i += 1
                return None
            raise self.fail("'_' (a wildcard) is not allowed here")
        if self.i < len(self.s) and self.s[self.i] == "_":
            self.i += 1  # C++ static integer: _4
        if self.i < len(self.s) and self.s[self.i] in "+-":
            self.i += 1
        while self.i < len(self.s) and self.s[self.i].isdigit():
            self.i += 1
        tok = self.s[start:self.i].lstrip("_")
        if tok in ("", "+", "-"):
            self.i = start
            c = self.s[self.i] if self.i < len(self.s) else "end of text"
            raise self.fail(f"expected an integer or '(' but found {c!r}")
        v = int(tok)
        if self.i < len(self.s) and self.s[self.i] == "@":
            if not allow_basis:
                raise self.fail("basis strides (n@m) are only allowed in strides")
            modes = []
            while self.i < len(self.s) and self.s[self.i] == "@":  # v@a@b is CuTe's E<b,a> scaled by v
                self.i += 1
                mstart = self.i
                while self.i < len(self.s) and self.s[self.i].isdigit():
                    self.i += 1
                if mstart == self.i:
                    raise self.fail("expected a mode number after '@'")
                modes.append(int(self.s[mstart:self.i]))
            return ScaledBasis(v, tuple(reversed(modes)))
        return v

    def end(self) -> None:
        if self.peek():
            raise self.fail(f"unexpected {self.s[self.i]!r}")


def parse_tuple(text: str, allow_none: bool = False) -> Any:
    """Read an int tuple in CuTe notation: ``"(2,(3,4))"`` -> (2, (3, 4))."""
    if not isinstance(text, str):
        raise ParseError(f"parse_tuple: expected a string, got {type(text).__name__}")
    p = _Parser(text, "tuple")
    if not p.peek():
        raise p.fail("empty text")
    t = p.tuple_(allow_none=allow_none)
    p.end()
    return t


def parse_layout(text: str) -> Layout:
    """Read a layout in CuTe notation, ``shape:stride``; a bare shape gets compact strides."""
    if not isinstance(text, str):
        raise ParseError(f"parse_layout: expected a string, got {type(text).__name__}")
    p = _Parser(text, "layout")
    if not p.peek():
        raise p.fail("empty text")
    shape = p.tuple_()
    if p.peek() == ":":
        p.i += 1
        if not p.peek():
            raise p.fail("missing stride after ':'")
        stride = p.tuple_(allow_basis=True)
        p.end()
        try:
            return Layout(shape, stride)
        except ParseError:
            raise
        except LayoutError as e:
            raise ParseError(f"cannot parse layout {text!r}: {e}") from None
    p.end()
    try:
        return Layout(shape)
    except LayoutError as e:
        raise ParseError(f"cannot parse layout {text!r}: {e}") from None


Layout.parse = staticmethod(parse_layout)  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- construction

def make_layout(*args: Any, shape: Any = None, stride: Any = None) -> Layout:
    """make_layout(shape, stride=None): compact column-major strides by default.

    make_layout(L0, L1, ...) concatenates layouts into one whose modes are L0, L1, ...

    >>> print(make_layout((4, 8)))
    (4,8):(1,4)
    >>> print(make_layout((1, 16)))
    (1,16):(0,1)
    >>> print(make_layout(make_layout(4, stride=2), make_layout(3)))
    (4,3):(2,1)
    """
    if shape is not None:
        if args:
            raise LayoutError("make_layout: give the shape either positionally or as shape=, not both")
        args = (shape,)
    if args and all(isinstance(a, Layout) for a in args):
        if stride is not None:
            raise LayoutError("make_layout: stride= cannot be given when concatenating layouts")
        return Layout._raw(tuple(a._shape for a in args), tuple(a._stride for a in args))
    if len(args) == 2 and stride is None and not isinstance(args[1], Layout):
        shape, stride = args
    elif len(args) != 1:
        raise LayoutError(f"make_layout: expected a shape (and stride=) or layouts, got {len(args)} arguments")
    else:
        shape = args[0]
    if isinstance(shape, str):
        raise LayoutError(f"make_layout: shape is a string {shape!r}; use Layout.parse for CuTe notation")
    from .tracing import hooks as _hooks

    if _hooks.runtime_layout is not None and _hooks.kernel_tracing():  # extents read in a kernel (instr/runtime_layout.py)
        made = _hooks.runtime_layout(shape, stride)
        if made is not None:
            return made
    return Layout(shape, stride)


def make_ordered_layout(shape: Any, order: Any) -> Layout:
    """A compact layout whose strides grow in the order given by ``order``.

    >>> print(make_ordered_layout((2, 2, 2, 2), (0, 2, 3, 1)))
    (2,2,2,2):(1,4,8,2)
    """
    shape = _normalize(shape)
    order = _normalize(order)
    _check(shape, it.repeat_like(shape, 0), "")
    if any(type(o) not in _INT for o in it.flatten_to_tuple(order)):
        raise LayoutError(f"make_ordered_layout({it.tuple_str(shape)}, {order!r}): order must be ints (a rank per mode)")
    if not it.congruent(shape, order) and not _weakly_congruent(order, shape):
        raise LayoutError(
            f"make_ordered_layout({it.tuple_str(shape)}, {it.tuple_str(order)}): order must match the shape's profile"
        )
    ranks = [o for o, n in zip(it.flatten_to_tuple(order), it.flatten_to_tuple(it.product_like(shape, order)))
             if n != 1]
    if len(set(ranks)) != len(ranks):  # two modes of one rank would get one stride: not injective
        raise LayoutError(
            f"make_ordered_layout({it.tuple_str(shape)}, {it.tuple_str(order)}): order must be a permutation "
            f"(distinct ranks for the modes of size > 1), but it repeats {sorted(r for r in set(ranks) if ranks.count(r) > 1)}"
        )
    return Layout._raw(shape, it.compact_order(shape, order))


def _weakly_congruent(a: Any, b: Any) -> bool:
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(_weakly_congruent(x, y) for x, y in zip(a, b))
    return True


def make_layout_like(layout: Layout) -> Layout:
    """A compact layout of the same shape whose strides follow the order of layout's strides;
    stride-0 modes stay stride 0."""
    shp = it.filter_zeros_tuple(layout.stride, layout.shape)
    st = it.compact_order(shp, layout.stride)
    st = _keep_zero_strides(st, layout.stride)
    return Layout._raw(layout.shape, st)


def _keep_zero_strides(st: Any, ref: Any) -> Any:
    if isinstance(st, tuple):
        return tuple(_keep_zero_strides(a, b) for a, b in zip(st, ref))
    return 0 if (isinstance(ref, int) and ref == 0) else st


def make_identity_layout(shape: Any) -> Layout:
    """A layout mapping each coordinate to itself: strides are basis vectors ``1@i``.

    >>> L = make_identity_layout((4, 8))
    >>> print(L), L(9)
    (4,8):(1@0,1@1)
    (None, (1, 2))
    >>> print(make_identity_layout((4, (2, 3))))
    (4,(2,3)):(1@0,(1@0@1,1@1@1))
    """
    shape = _normalize(shape)
    _check(shape, it.repeat_like(shape, 0), "")
    if isinstance(shape, tuple):
        stride = tuple(_basis_like(s, i) for i, s in enumerate(shape))
    else:
        stride = 1
    return Layout._raw(shape, stride)


def _basis_like(s: Any, path: Any) -> Any:
    """The unit basis stride of every leaf of s: a nested mode gets a nested coordinate, as CuTe DSL
    does ((4,(2,3)) -> (1@0,(1@0@1,1@1@1)): the coordinate of mode 1 is itself a pair)."""
    path = path if isinstance(path, tuple) else (path,)
    if isinstance(s, tuple):
        return tuple(_basis_like(x, path + (j,)) for j, x in enumerate(s))
    return ScaledBasis(1, path)


# --------------------------------------------------------------------------- queries

def _mode(x: Any, mode: Sequence[int] | int | None, op: str) -> Any:
    """Follow a mode path into a layout, shape tuple or anything with a .layout."""
    if mode is None:
        return x
    if isinstance(mode, int):
        mode = [mode]
    for m in mode:
        if isinstance(x, Layout):
            r = it.rank(x._shape)
            if not isinstance(x._shape, tuple):
                if m != 0:
                    raise LayoutError(f"{op}: mode {m} is out of range for {x} of rank 1")
                continue
            if not -r <= m < r:
                raise LayoutError(f"{op}: mode {m} is out of range for {x} of rank {r}")
            x = Layout._raw(x._shape[m], x._stride[m])
        elif isinstance(x, tuple):
            if not -len(x) <= m < len(x):
                raise LayoutError(f"{op}: mode {m} is out of range for {it.tuple_str(x)} of rank {len(x)}")
            x = x[m]
        else:
            if m != 0:
                raise LayoutError(f"{op}: mode {m} is out of range for {x} of rank 1")
    return x


def _as_layout_or_shape(x: Any, op: str = "") -> Any:
    """A Layout (from a layout, a tensor or CuTe notation text) or a shape of positive ints."""
    lay = getattr(x, "layout", None)
    if isinstance(lay, Layout):
        return lay
    if isinstance(x, str):
        return parse_layout(x)
    if isinstance(x, Layout):
        return x
    x = _normalize(x)
    for leaf in it.flatten_to_tuple(x):
        if type(leaf) not in _INT and not _is_symbolic(leaf):
            raise TypeError(f"{op + ': ' if op else ''}expected a layout, a tensor or a shape of ints, got {x!r} "
                            f"(the entry {leaf!r} is a {type(leaf).__name__})")
    return x


def _is_tiled_atom(a: Any) -> bool:
    """A TiledMma (has thr_layout_vmnk) or a TiledCopy (has tiler_mn), whose size is an int property."""
    return (hasattr(type(a), "thr_layout_vmnk") or hasattr(type(a), "tiler_mn")) and isinstance(
        getattr(a, "size", None), int)


def size(a: Any, mode: Sequence[int] | int | None = None) -> int:
    """Number of elements of a shape, layout or tensor (of one mode with mode=[i, ...]); for a
    TiledMma or TiledCopy, its number of threads (CuTe DSL's ``size(tiled) == tiled.size``).

    >>> size(make_layout((4, (2, 3)))), size((4, (2, 3)), mode=[1])
    (24, 6)
    """
    if type(a) is Layout and not mode:  # the common case: a layout's size is one of its facts
        f = a._facts
        if f is None or f[2] is None:
            f = _facts_of(a)
        return f[0] if f[2] else it.product(a._shape)
    if _is_tiled_atom(a):  # duck-typed: layout.py sits below nvgpu/ and does not import it
        return a.size
    a = _mode(_as_layout_or_shape(a, "size"), mode or None, "size")
    if isinstance(a, Layout):
        return it.product(a._shape)
    return it.product(_normalize(a))


def coshape(layout: Layout) -> Any:
    """The extent of the codomain: 1 + the largest offset (for integer strides)."""
    shp, std = it.flatten_to_tuple(layout.shape), it.flatten_to_tuple(layout.stride)
    hi: Any = 0
    for s, d in zip(shp, std):
        hi = hi + (s - 1) * abs(d)
    if isinstance(hi, _ArithTuple):
        return tuple(c + 1 for c in hi)
    return hi + 1


def cosize(a: Any, mode: Sequence[int] | int | None = None) -> int:
    """1 + the largest offset of the layout (of one mode with mode=[...])."""
    if type(a) is Layout and not mode:
        f = a._facts
        if f is None or f[2] is None:
            f = _facts_of(a)
        if f[2]:  # plain ints: the offsets span [lo, hi], and coshape is 1 + the sum of (s-1)*|d|
            return 1 + f[5] - f[4]
    a = _mode(_as_layout_or_shape(a, "cosize"), mode or None, "cosize")
    if not isinstance(a, Layout):
        raise LayoutError(f"cosize: expected a layout, got {a!r}")
    n = it.product(coshape(a))
    return DynInt(int(n)) if isinstance(n, DynInt) else n  # CuTe DSL: a dynamic cosize is an Int32 '?'


def rank(a: Any, mode: Sequence[int] | int | None = None) -> int:
    a = _mode(_as_layout_or_shape(a, "rank"), mode or None, "rank")
    return it.rank(a._shape if isinstance(a, Layout) else _normalize(a))


def depth(a: Any, mode: Sequence[int] | int | None = None) -> int:
    a = _mode(_as_layout_or_shape(a, "depth"), mode or None, "depth")
    return it.depth(a._shape if isinstance(a, Layout) else _normalize(a))


def shape(a: Any, mode: Sequence[int] | int | None = None) -> Any:
    if mode is None and type(a) is Layout:
        return a._shape
    a = _mode(_as_layout_or_shape(a, "shape"), mode if mode not in ([], ()) else None, "shape")
    return a._shape if isinstance(a, Layout) else _normalize(a)


def stride(a: Any, mode: Sequence[int] | int | None = None) -> Any:
    if mode is None and type(a) is Layout:
        return a._stride
    a = _mode(_as_layout_or_shape(a, "stride"), mode if mode not in ([], ()) else None, "stride")
    if not isinstance(a, Layout):
        raise LayoutError(f"stride: expected a layout, got {a!r}")
    return a._stride


def get(a: Any, mode: Sequence[int] | int) -> Any:
    """The sub-layout (or sub-tuple) at the mode path ``mode`` (e.g. [1, 0])."""
    return _mode(a, mode, "get")


def select(a: Any, mode: Sequence[int]) -> Any:
    """The layout (or tuple) made of the listed top-level modes, in that order."""
    if isinstance(mode, int):
        mode = [mode]
    if isinstance(a, Layout):
        parts = [_mode(a, [m], "select") for m in mode]
        return Layout._raw(tuple(p._shape for p in parts), tuple(p._stride for p in parts))
    return tuple(_mode(a, [m], "select") for m in mode)


def group_modes(a: Any, begin: int, end: int | None = None) -> Any:
    """Group modes [begin, end) into one mode."""
    if isinstance(a, Layout):
        return Layout._raw(_group(a._shape, begin, end, a), _group(a._stride, begin, end, a))
    return _group(_normalize(a), begin, end, a)


def _group(t: Any, b: int, e: int | None, whole: Any) -> Any:
    t = t if isinstance(t, tuple) else (t,)
    n = len(t)
    e = n if e is None else e
    if e < 0:
        e += n
    if b < 0:
        b += n
    if not 0 <= b <= e <= n:
        raise LayoutError(f"group_modes({whole}, {b}, {e}): range out of bounds for rank {n}")
    return t[:b] + (t[b:e],) + t[e:]


def append(a: Layout, elem: Layout | None = None, up_to_rank: int | None = None) -> Layout:
    """Append elem (default 1:0) as a new last mode; with up_to_rank, pad to that rank."""
    return _extend(a, elem, up_to_rank, front=False)


def prepend(a: Layout, elem: Layout | None = None, up_to_rank: int | None = None) -> Layout:
    """Prepend elem (default 1:0) as a new first mode; with up_to_rank, pad to that rank."""
    return _extend(a, elem, up_to_rank, front=True)


def _extend(a: Layout, elem: Layout | None, n: int | None, front: bool) -> Layout:
    if elem is None:
        elem = Layout._raw(1, 0)
    if not isinstance(a, Layout) or not isinstance(elem, Layout):
        raise LayoutError(f"{'prepend' if front else 'append'}: expected layouts, got {a!r} and {elem!r}")
    shp = a._shape if isinstance(a._shape, tuple) else (a._shape,)
    std = a._stride if isinstance(a._stride, tuple) else (a._stride,)
    if n is None:
        n = len(shp) + 1
    if n < len(shp):
        raise LayoutError(
            f"{'prepend' if front else 'append'}({a}, {elem}, up_to_rank={n}): layout already has rank {len(shp)}"
        )
    k = n - len(shp)
    if k == 0 and not isinstance(a._shape, tuple) and n == 1:
        return a
    es, ed = (elem._shape,) * k, (elem._stride,) * k
    if front:
        return Layout._raw(es + shp, ed + std)
    return Layout._raw(shp + es, std + ed)


def flatten(a: Any) -> Any:
    """The layout (or tuple) with all nesting removed."""
    if isinstance(a, Layout):
        if not isinstance(a._shape, tuple):
            return a
        return Layout._raw(it.flatten(a._shape), it.flatten(a._stride))
    return it.flatten(_normalize(a))


def unflatten(a: Any, target_profile: Any) -> Any:
    """Fold a flat layout (or tuple) into the nesting of target_profile."""
    if isinstance(a, Layout):
        return Layout._raw(it.unflatten(a._shape, target_profile), it.unflatten(a._stride, target_profile))
    return it.unflatten(a, target_profile)


def slice_(a: Layout, coord: Any) -> Layout:
    """The sub-layout of the modes where coord is None (CuTe's slice).

    >>> print(slice_(make_layout((4, 8)), (None, 3)))
    (4):(1)
    """
    if not isinstance(a, Layout):
        raise LayoutError(f"slice_: expected a layout, got {a!r}")
    coord = _coord_ints(a, coord, "slicing")
    _check_slice(a, coord)
    if not isinstance(coord, tuple):
        return a if coord is None else Layout._raw((), ())
    return Layout._raw(it.slice_tuple(coord, a._shape), it.slice_tuple(coord, a._stride))


def dice(a: Layout, coord: Any) -> Layout:
    """The sub-layout of the modes where coord is not None (the opposite of slice); of an int tuple (a tile
    shape), its modes where coord is not None, as CuTe DSL's dice of a shape."""
    if isinstance(a, (tuple, int)) and not isinstance(a, bool):
        if isinstance(coord, tuple) and not isinstance(a, tuple):
            raise LayoutError(f"dice({a!r}, {coord!r}): a tuple coordinate on an int")
        if not isinstance(coord, tuple):
            return a if coord is not None else ()
        if not isinstance(a, tuple) or len(a) != len(coord):
            raise LayoutError(f"dice({a!r}, {coord!r}): the coordinate does not match the tuple's modes")
        return it.dice_tuple(coord, a)
    if not isinstance(a, Layout):
        raise LayoutError(f"dice({a!r}, {coord!r}): expected a Layout, got {type(a).__name__}")
    coord = _coord_ints(a, coord, "dicing")
    if isinstance(coord, tuple) and not isinstance(a._shape, tuple) and len(coord) == 1:
        coord = coord[0]  # a 1-tuple on a rank-1 layout, as slice_ takes it
    _check_slice(a, coord, dicing=True)
    if not isinstance(coord, tuple):
        return a if coord is not None else Layout._raw((), ())
    return Layout._raw(it.dice_tuple(coord, a._shape), it.dice_tuple(coord, a._stride))


def _check_slice(a: Layout, coord: Any, dicing: bool = False) -> None:
    """coord's structure matches a's shape, its ints in range; dicing: an int only marks a mode kept (as CuTe's
    dice, which keeps a whole mode, of any extent, where the coordinate holds an int: dice of (1, (1, 1)))."""
    def go(c: Any, s: Any) -> bool:
        if isinstance(c, tuple):
            return isinstance(s, tuple) and len(c) == len(s) and all(go(x, y) for x, y in zip(c, s))
        if c is None or dicing:
            return True
        if isinstance(c, int):
            return 0 <= c < it.product(s)
        return True

    if isinstance(coord, tuple) and not isinstance(a._shape, tuple) and len(coord) == 1:
        coord = coord[0]
    if not go(coord, a._shape):
        raise LayoutError(
            f"slice of {a}: coordinate {it.tuple_str(coord)} does not match its shape {it.tuple_str(a._shape)} "
            f"(or an index is out of range)"
        )


def slice_and_offset(coord: Any, layout: Layout) -> tuple:
    """(the sub-layout where coord is None, the offset of the fixed part of coord).

    >>> sub, off = slice_and_offset((None, 3), make_layout((4, 8)))
    >>> print(sub, off)
    (4):(1) 12
    """
    sub = slice_(layout, coord)
    fixed = it.transform_leaf(_normalize(coord), lambda c: 0 if c is None else c)
    if isinstance(fixed, tuple) and not isinstance(layout.shape, tuple) and len(fixed) == 1:
        fixed = fixed[0]
    return sub, _finish(it.crd2idx(fixed, layout.shape, layout.stride))


def crd2idx(coord: Any, layout: Any) -> Any:
    """The offset of coord in a layout (or its colexicographic index in a shape).

    A None (_) in coord counts as 0, as in CuTe DSL: crd2idx((1, None), L) is L's offset of (1, 0).
    """
    if isinstance(layout, Layout):
        coord = it.transform_leaf(_coord_ints(layout, coord), lambda c: 0 if c is None else c)
        return _eval(layout, coord)
    coord = it.transform_leaf(_int_leaves(coord, "crd2idx", "coordinate"), lambda c: 0 if c is None else c)
    return it.crd2idx(coord, _normalize(layout))


def idx2crd(idx: Any, shape: Any) -> Any:
    """The colexicographic coordinate of index idx in shape."""
    return it.idx2crd(_int_leaves(idx, "idx2crd", "index"), _int_leaves(shape, "idx2crd", "shape"))


def _int_leaves(t: Any, op: str, what: str) -> Any:
    """t with numpy ints as ints; a TypeError naming op and the operand for a non-integer leaf."""
    t = _normalize(t)
    for leaf in it.flatten_to_tuple(t):
        if leaf is not None and (type(leaf) not in _INT) and not _is_symbolic(leaf) and not _is_array(leaf):
            raise TypeError(f"{op}: the {what} {t!r} has the entry {leaf!r}, which is not an integer")
    return t


def get_hier_coord(layout: Layout, idx: int) -> Any:
    """The hierarchical coordinate c with layout(c) == idx, or a LayoutError if none exists."""
    npm = _np_loaded()
    if npm is not None and isinstance(idx, npm.integer):
        idx = int(idx)
    if not isinstance(layout, Layout):
        raise LayoutError(f"get_hier_coord({layout!r}, {idx!r}): expected a Layout, got {type(layout).__name__}")
    if _is_symbolic(idx) and _inverts_compactly(layout):
        # a runtime offset (a CTA's rank in its cluster, ...): CuTe's formula, which every offset of this
        # layout satisfies (checked), as an index expression per mode
        return it.idx2crd(idx, layout.shape, layout.stride)
    if type(idx) not in _INT:
        raise TypeError(f"get_hier_coord({layout}, {idx!r}): the offset must be an int (or, for a layout whose "
                        f"offsets 0..size-1 CuTe's formula inverts, an index expression), got {type(idx).__name__}")
    crd = it.idx2crd(idx, layout.shape, layout.stride)
    if it.crd2idx(crd, layout.shape, layout.stride) == idx:
        return crd
    # CuTe's formula only inverts compact layouts; otherwise search the domain for the offset.
    if any(isinstance(d, ScaledBasis) for d in it.flatten_to_tuple(layout.stride)):
        raise LayoutError(f"get_hier_coord({layout}, {idx}): not supported for basis strides")
    hit = _search_offset(layout, idx)
    if hit is None:
        raise LayoutError(f"get_hier_coord({layout}, {idx}): no coordinate of the layout maps to offset {idx}")
    return it.idx2crd(hit, layout.shape)


def _inverts_compactly(layout: Layout) -> bool:
    """Whether the layout's offsets are 0..size-1 and CuTe's idx2crd(offset, shape, stride) gives the
    coordinate of each (small layouts only: up to 2**16 elements)."""
    if any(type(x) not in _INT for x in it.flatten_to_tuple(layout.shape) + it.flatten_to_tuple(layout.stride)):
        return False
    n = it.product(layout.shape)
    if n > 1 << 16:
        return False
    return all(it.crd2idx(it.idx2crd(o, layout.shape, layout.stride), layout.shape, layout.stride) == o
               for o in range(n)) and sorted(layout(i) for i in range(n)) == list(range(n))


def _search_offset(layout: Layout, idx: int, chunk: int = 1 << 20) -> int | None:
    """The lowest index whose offset is idx: the largest mode is solved for, the others are
    enumerated a chunk at a time (bounded memory; no whole-domain array)."""
    np = _np()
    shp, std = _merge_modes(it.flatten_to_tuple(layout.shape), it.flatten_to_tuple(layout.stride))
    k = max(range(len(shp)), key=lambda j: shp[j])
    sk, dk = shp[k], std[k]
    pk = it.product(shp[:k])  # the colex weight of mode k
    others = [(s, d, it.product(shp[:j])) for j, (s, d) in enumerate(zip(shp, std)) if j != k]
    n = it.product(tuple(s for s, _, _ in others))
    what = f"get_hier_coord({layout}, {idx})"
    if n > 1 << 30:
        raise LayoutError(f"{what}: the layout is not compact and its coordinates are too many to search for the "
                          f"offset ({n} combinations of its smaller modes; the limit is {1 << 30})")
    best = None
    for lo in range(0, n, chunk):
        _charge(min(chunk, n - lo), what)
        i = np.arange(lo, min(n, lo + chunk), dtype=np.int64)
        rem = np.full_like(i, idx)
        flat = np.zeros_like(i)
        for s, d, w in others:
            c = i % s
            rem -= c * d
            flat += c * w
            i //= s
        if dk == 0:
            ok, ck = rem == 0, np.zeros_like(rem)
        else:
            ck = rem // dk
            ok = (rem % dk == 0) & (ck >= 0) & (ck < sk)
        if ok.any():
            f = int((flat[ok] + ck[ok] * pk).min())
            best = f if best is None else min(best, f)
    return best


def product_each(t: Any) -> Any:
    return it.product_each(_normalize(shape(t) if isinstance(t, Layout) else t))


def shape_div(a: Any, b: Any) -> Any:
    a, b = _normalize(a), _normalize(b)
    for what, t in (("first", a), ("second", b)):
        for leaf in it.flatten_to_tuple(t):
            if type(leaf) not in _INT and not _is_symbolic(leaf):
                raise LayoutError(f"shape_div({it.tuple_str(a)}, {it.tuple_str(b)}): the {what} shape has the entry "
                                  f"{leaf!r}, which is not an integer")
    return it.shape_div(a, b)


# --------------------------------------------------------------------------- whole-domain evaluation

def _merge_modes(shp: tuple, std: tuple) -> tuple:
    """Drop size-1 modes and merge a mode into the next when s*d equals the next stride
    (the same function on the domain, fewer modes: what coalesce does)."""
    out_s: list = []
    out_d: list = []
    for s, d in zip(shp, std):
        if s == 1:
            continue
        if out_s and out_s[-1] * out_d[-1] == d:
            out_s[-1] *= s
        else:
            out_s.append(s)
            out_d.append(d)
    return (tuple(out_s), tuple(out_d)) if out_s else ((1,), (0,))


def evaluate_all(layout: Layout) -> np.ndarray:
    """layout(i) for every i in [0, size), as an int64 array (fast, vectorized)."""
    np = _np()
    if any(isinstance(d, ScaledBasis) for d in it.flatten_to_tuple(layout.stride)):
        raise LayoutError(f"evaluate_all({layout}): layouts with basis strides evaluate to coordinates, not offsets")
    shp, std = _merge_modes(it.flatten_to_tuple(layout.shape), it.flatten_to_tuple(layout.stride))
    _charge(it.product(shp), f"evaluate_all({layout})")  # before allocating: a size limit, a request's budget
    if len(shp) == 1:
        return np.arange(shp[0], dtype=np.int64) * std[0]
    # mode 0 varies fastest: build from the last mode outwards, one broadcast add per mode
    acc = np.arange(shp[-1], dtype=np.int64) * std[-1]
    for s, d in zip(reversed(shp[:-1]), reversed(std[:-1])):
        acc = (acc[:, None] + np.arange(s, dtype=np.int64) * d).ravel()
    return acc
