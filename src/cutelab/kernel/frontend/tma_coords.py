"""The iterator of a TMA tensor inside a kernel: its coordinates, as CuTe DSL's.

In CuTe DSL the second result of ``make_tiled_tma_atom`` is a tensor of coordinates: its iterator is a
tuple of integers, one per TMA dimension (the global tensor's modes in the descriptor's order, innermost
first; static modes of extent 1 are not dimensions), and ``cute.make_tensor(coords, layout)`` makes a
coordinate tensor that starts there. CUTLASS's grouped mixed-input GEMM moves a tile of B along N that
way::

    tBgB_slice = cute.make_tensor((tBgB.iterator[0] + n, tBgB.iterator[1], tBgB.iterator[2]), layout)

cutelab's TMA tensor is a coordinate view of the global tensor's memory (nvgpu/cpasync/tma.py,
``_coordinate_view``): each TMA dimension a fixed stride apart, so an offset into it is a coordinate
tuple. The launch marks the kernel's ``GmemEngine`` of such a tensor with ``tma_dims`` (the view's
origin and the stride of each dimension); ``tensor.iterator`` of a tensor over it is then a
``TmaIterator`` of ``TmaCoord`` values decoded from its offset, and ``cute.make_tensor`` of a tuple of
them (moved by adding integers: static, symbolic or runtime) is the view at those coordinates.
Coordinates of other tensors, or of two TMA tensors mixed, are refused.

May import: what ``kernel.frontend`` may (see its ``__init__``).
"""

from __future__ import annotations

from typing import Any, Tuple

from ...errors import TraceError
from ..ir.symbolic import floordiv, is_sym, mod
from .trace import TraceValue, active

__all__ = ["TmaCoord", "TmaIterator", "tma_iterator"]


def _int32(v: Any) -> Any:
    from ...numeric import Int32

    return v.to(Int32) if isinstance(v, TraceValue) and v.dtype.name != "Int32" else v


class TmaCoord:
    """One coordinate (TMA dimension ``dim``) of a TMA tensor's iterator over ``engine``: an int, an
    index expression or an Int32 runtime value (``value``). Adding or subtracting an integer moves it
    along its dimension; any other arithmetic is that of its value."""

    __slots__ = ("engine", "dim", "value")
    defers_arith = True  # TraceValue's operators leave a TmaCoord operand to it (``n + coord``)

    def __init__(self, engine: Any, dim: int, value: Any):
        self.engine, self.dim, self.value = engine, dim, value

    def _moved(self, o: Any, sign: int) -> "TmaCoord":
        o = o.value if isinstance(o, TmaCoord) else o
        if isinstance(o, (int,)) and o == 0:
            return self
        return TmaCoord(self.engine, self.dim, self.value + o if sign > 0 else self.value - o)

    def __add__(self, o: Any) -> "TmaCoord":
        return self._moved(o, 1)

    __radd__ = __add__

    def __sub__(self, o: Any) -> "TmaCoord":
        return self._moved(o, -1)

    def __rsub__(self, o: Any) -> Any:
        return o - self.value

    def __mul__(self, o: Any) -> Any:
        return self.value * (o.value if isinstance(o, TmaCoord) else o)

    __rmul__ = __mul__

    def __floordiv__(self, o: Any) -> Any:
        return self.value // (o.value if isinstance(o, TmaCoord) else o)

    def __mod__(self, o: Any) -> Any:
        return self.value % (o.value if isinstance(o, TmaCoord) else o)

    def __eq__(self, o: Any) -> Any:  # type: ignore[override]
        return self.value == (o.value if isinstance(o, TmaCoord) else o)

    def __lt__(self, o: Any) -> Any:
        return self.value < (o.value if isinstance(o, TmaCoord) else o)

    def __le__(self, o: Any) -> Any:
        return self.value <= (o.value if isinstance(o, TmaCoord) else o)

    def __gt__(self, o: Any) -> Any:
        return self.value > (o.value if isinstance(o, TmaCoord) else o)

    def __ge__(self, o: Any) -> Any:
        return self.value >= (o.value if isinstance(o, TmaCoord) else o)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return str(self.value)

    __str__ = __repr__

    def coord_tensor(self, coords: Tuple[Any, ...], layout: Any) -> Any:
        """``cute.make_tensor(coords, layout)``: the TMA tensor's view at ``coords``."""
        return make_coord_tensor(coords, layout)


class TmaIterator(tuple):
    """A TMA tensor's iterator: its coordinates, one ``TmaCoord`` per TMA dimension."""

    def __str__(self) -> str:
        return "(" + ", ".join(str(c) for c in self) + ")"

    def coord_tensor(self, coords: Tuple[Any, ...], layout: Any) -> Any:
        return make_coord_tensor(coords, layout)


def tma_iterator(engine: Any, offset: Any) -> TmaIterator:
    """The coordinates of the element at ``offset`` of a TMA coordinate view over ``engine``: the offset
    from the view's origin cut by the dimensions' strides, outermost first."""
    base, strides = engine.tma_dims
    rest = offset - base if not (isinstance(base, int) and base == 0) else offset
    out: list = [0] * len(strides)
    order = sorted(range(len(strides)), key=lambda d: strides[d])
    for k in reversed(range(len(order))):
        d = order[k]
        s = strides[d]
        if k == 0:
            c = rest if s == 1 else (rest // s)
        elif isinstance(rest, TraceValue):
            c, rest = rest // s, rest % s
        elif is_sym(rest):
            c, rest = floordiv(rest, s), mod(rest, s)
        else:
            c, rest = int(rest) // s, int(rest) % s
        out[d] = _int32(c)
    return TmaIterator(TmaCoord(engine, d, c) for d, c in enumerate(out))


def make_coord_tensor(coords: Tuple[Any, ...], layout: Any) -> Any:
    """The view of a TMA tensor at the coordinates ``coords`` (TmaCoords of one tensor, in its
    dimensions' order; plain integers where the program wrote them) with ``layout``."""
    from ...numeric import Int64
    from ...tensor import Tensor

    t = active()
    where = f"kernel {t.name}: cute.make_tensor{t.where()}" if t is not None else "cute.make_tensor"
    tagged = [c for c in coords if isinstance(c, TmaCoord)]
    engine = tagged[0].engine
    base, strides = engine.tma_dims
    if len(coords) != len(strides) or any(c.engine is not engine for c in tagged) or any(
            isinstance(c, TmaCoord) and c.dim != i for i, c in enumerate(coords)):
        got = ", ".join(f"dimension {c.dim}" if isinstance(c, TmaCoord) else type(c).__name__ for c in coords)
        raise TraceError(f"{where}: the coordinates ({got}) are not the {len(strides)} coordinates of one TMA "
                         f"tensor's iterator, each in its place (tensor.iterator[i] plus an integer)")
    off: Any = base
    for c, s in zip(coords, strides):
        v = c.value if isinstance(c, TmaCoord) else c
        if isinstance(v, int) and v == 0:
            continue
        if isinstance(v, TraceValue):
            v = v.to(Int64)
        off = off + v * s
    return Tensor(engine, layout, off, _checked=True)
