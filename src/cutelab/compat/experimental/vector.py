"""``cutlass.Vector`` and ``cutlass.vector``: small fixed-shape vectors of scalars inside a kernel
(CuTe DSL 4.8.1's MLIR vector values), kept as a nested list of their elements: static numbers or
the kernel's runtime scalars. Arithmetic is element by element (a scalar broadcasts), indexing
takes ints and slices, ``cutlass.vector.broadcast_to`` and ``outerproduct`` build 2-D ones, and
``cutlass.Pointer.store`` writes their elements.

>>> v = Vector.from_elements((1.0, 2.0, 3.0, 4.0), None)
>>> (v * 2 + 1).elements(), broadcast_to(v, (2, 4))[:, 1:3].elements()
([3.0, 5.0, 7.0, 9.0], [2.0, 3.0, 2.0, 3.0])
>>> outerproduct(Vector.from_elements((1, 2), None), Vector.from_elements((3, 4, 5), None)).elements()
[3, 4, 5, 6, 8, 10]
"""

from __future__ import annotations

import operator
from typing import Any, Callable, List, Tuple

__all__ = ["Vector", "broadcast_to", "outerproduct", "VECTOR_NAMESPACE"]


def _shape_of(x: Any) -> Tuple[int, ...]:
    return (len(x),) + _shape_of(x[0]) if isinstance(x, list) else ()


def _map(f: Callable, a: Any, b: Any = None, two: bool = False) -> Any:
    if isinstance(a, list):
        if two:
            return [_map(f, x, y if isinstance(b, list) else b, True) for x, y in
                    zip(a, b if isinstance(b, list) else [b] * len(a))]
        return [_map(f, x) for x in a]
    if two and isinstance(b, list):
        return [_map(f, a, y, True) for y in b]
    return f(a, b) if two else f(a)


class Vector:
    """``cutlass.Vector``: ``data`` a nested list (row-major) of scalars of ``dtype``."""

    def __init__(self, data: List[Any], dtype: Any):
        self.data, self.dtype = data, dtype
        self.shape = _shape_of(data)

    @classmethod
    def from_elements(cls, elements: Any, dtype: Any = None, *, loc: Any = None, ip: Any = None) -> "Vector":
        vals = [dtype(e) if dtype is not None and not isinstance(e, (bool,)) and _is_num(e) else e
                for e in elements]
        v = cls(vals, dtype)
        if all(isinstance(e, (bool, int)) for e in elements):
            v._cl_elements = tuple(elements)  # a static mask (cutlass.Pointer.masked_load/store)
        return v

    def elements(self) -> List[Any]:
        """The elements in row-major order."""
        out: List[Any] = []

        def go(x: Any) -> None:
            if isinstance(x, list):
                for y in x:
                    go(y)
            else:
                out.append(x)

        go(self.data)
        return out

    def __len__(self) -> int:
        return self.shape[0]

    def __iter__(self) -> Any:
        return iter(self[i] for i in range(len(self)))

    def __getitem__(self, idx: Any) -> Any:
        idx = idx if isinstance(idx, tuple) else (idx,)

        def go(x: Any, ix: Tuple[Any, ...]) -> Any:
            if not ix:
                return x
            i, rest = ix[0], ix[1:]
            if isinstance(i, slice):
                return [go(y, rest) for y in x[i]]
            return go(x[int(i)], rest)

        r = go(self.data, idx)
        return Vector(r, self.dtype) if isinstance(r, list) else r

    def _bin(self, o: Any, op: Callable, rev: bool = False) -> "Vector":
        other = o.data if isinstance(o, Vector) else o
        if isinstance(o, Vector) and o.shape != self.shape:
            raise ValueError(f"cutlass.Vector: shapes {self.shape} and {o.shape} differ")
        f = (lambda a, b: op(b, a)) if rev else op
        return Vector(_map(f, self.data, other, True), self.dtype)

    def __add__(self, o: Any) -> "Vector":
        return self._bin(o, operator.add)

    def __radd__(self, o: Any) -> "Vector":
        return self._bin(o, operator.add, True)

    def __sub__(self, o: Any) -> "Vector":
        return self._bin(o, operator.sub)

    def __rsub__(self, o: Any) -> "Vector":
        return self._bin(o, operator.sub, True)

    def __mul__(self, o: Any) -> "Vector":
        return self._bin(o, operator.mul)

    def __rmul__(self, o: Any) -> "Vector":
        return self._bin(o, operator.mul, True)

    def __truediv__(self, o: Any) -> "Vector":
        return self._bin(o, operator.truediv)

    def __neg__(self) -> "Vector":
        return Vector(_map(operator.neg, self.data), self.dtype)

    def __repr__(self) -> str:
        return f"cutlass.Vector({self.shape}, {self.dtype})"


def _is_num(e: Any) -> bool:
    return isinstance(e, (int, float))


def broadcast_to(v: Vector, shape: Any, *, loc: Any = None, ip: Any = None) -> Vector:
    """``cutlass.vector.broadcast_to``: v repeated along new leading dimensions."""
    shape = tuple(shape)
    if shape[len(shape) - len(v.shape):] != v.shape:
        raise ValueError(f"cutlass.vector.broadcast_to: {v.shape} does not broadcast to {shape}")
    data: Any = v.data
    for n in reversed(shape[:len(shape) - len(v.shape)]):
        data = [data for _ in range(n)]
    return Vector(data, v.dtype)


def outerproduct(a: Vector, b: Vector, *, loc: Any = None, ip: Any = None) -> Vector:
    """``cutlass.vector.outerproduct``: the matrix a[i] * b[j]."""
    if len(a.shape) != 1 or len(b.shape) != 1:
        raise ValueError("cutlass.vector.outerproduct takes two 1-D vectors")
    return Vector([[x * y for y in b.data] for x in a.data], a.dtype)


def full(shape: Any, fill_value: Any, dtype: Any = None, *, loc: Any = None, ip: Any = None) -> Vector:
    """``cutlass.full(shape, value, dtype)``: a Vector of shape whose elements are all value (as dtype)."""
    shape = (shape,) if isinstance(shape, int) else tuple(int(getattr(s, "value", s)) for s in shape)
    dt = dtype if dtype is not None else getattr(fill_value, "dtype", None)
    v = dt(fill_value) if dt is not None and _is_num(fill_value) else fill_value
    data: Any = v
    for n in reversed(shape):
        data = [data for _ in range(n)]
    return Vector(data, dt)


def print_nd_vector(src: Vector, *, loc: Any = None, ip: Any = None) -> None:
    """``cutlass.print_nd_vector(v)``: each thread prints v, as ``cute.print_tensor`` of a register tensor of
    its shape holding the elements (CuTe DSL reshapes the vector column-major the same way)."""
    from ...layout import make_layout
    from ...tensor import make_rmem_tensor, print_tensor

    if not isinstance(src, Vector):
        raise TypeError(f"cutlass.print_nd_vector: expected a cutlass.Vector, got {type(src).__name__}")
    t = make_rmem_tensor(make_layout(src.shape if len(src.shape) > 1 else src.shape[0]), src.dtype)
    idx = [()]
    for n in src.shape:
        idx = [i + (k,) for i in idx for k in range(n)]
    for i, e in zip(idx, src.elements()):  # row-major elements, placed at their coordinates
        t[i if len(i) > 1 else i[0]] = e
    print_tensor(t)


def _vector_namespace() -> Any:
    import types

    ns = types.SimpleNamespace(broadcast_to=broadcast_to, outerproduct=outerproduct, Vector=Vector)
    return ns


VECTOR_NAMESPACE = _vector_namespace()
