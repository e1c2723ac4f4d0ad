"""``cutlass._mlir.dialects.vector`` on a kernel's values: ``from_elements`` (scalars into a vector),
``extract``/``insert`` at static positions, ``broadcast`` of a scalar, and ``bitcast`` (the vector's
bits read as ``T.vector(n, elem)``, also between element widths: vector<2xf32> to vector<1xi64>).
A vector is a tensor value of shape (n,). Every other operation imports and raises NotEmulatedError
naming itself when used."""

from typing import Any

from ...where import NotEmulatedError, user_line
from ..refused import module_getattr

_refused = module_getattr("cutlass._mlir.dialects.vector")


def _vector_type(t: Any, op: str, where: str) -> tuple:
    if not (isinstance(t, tuple) and len(t) == 3 and t[0] == "vector"):
        raise NotEmulatedError(f"vector.{op} to {t!r}", "cutelab's vector operations take T.vector(n, T.<type>())",
                               where=where)
    return t[1], t[2]


def _vector(v: Any, op: str, where: str) -> Any:
    from ....kernel.frontend.trace import TraceValue

    if not isinstance(v, TraceValue):
        raise NotEmulatedError(f"vector.{op} of a {type(v).__name__}", "cutelab's vector operations take values "
                               "computed inside a kernel", where=where)
    return v


def _scalar(x: Any, elem: Any, op: str, where: str) -> Any:
    """x (a kernel's scalar value or a number) as one element of type elem; MLIR's vector ops take
    elements of the vector's exact type."""
    from ....kernel.frontend.trace import TraceValue

    if isinstance(x, TraceValue):
        if len(x.refs) != 1:
            raise ValueError(f"vector.{op}: an element must be one value, got a value of shape {x.shape} ({where})")
        if x.dtype.name != elem.name:
            raise TypeError(f"vector.{op}: the element is {x.dtype}, the vector holds {elem} ({where})")
        return x.refs[0]
    if isinstance(x, (int, float)) and not isinstance(x, bool) or hasattr(x, "dtype"):
        d = getattr(x, "dtype", None)
        if d is not None and getattr(d, "name", None) != elem.name:
            raise TypeError(f"vector.{op}: the element is {d}, the vector holds {elem} ({where})")
        v = elem(x)
        return int(v) if elem.is_integer else float(v)
    raise TypeError(f"vector.{op}: an element must be a kernel value or a number, got {type(x).__name__} ({where})")


def _position(dynamic_position: Any, static_position: Any, n: int, op: str, where: str) -> int:
    if dynamic_position:
        raise NotEmulatedError(f"vector.{op} at a dynamic position", "cutelab takes static positions "
                               "(static_position=[i])", where=where)
    pos = list(static_position)
    if len(pos) != 1 or not 0 <= int(pos[0]) < n:
        raise ValueError(f"vector.{op}: position {pos} is not one index in [0, {n}) ({where})")
    return int(pos[0])


def from_elements(dest: Any, elements: Any, *, loc: Any = None, ip: Any = None) -> Any:
    """A vector of type dest (T.vector(n, elem)) holding the n elements."""
    from ....kernel.frontend.trace import TraceValue

    where = user_line(2)
    n, elem = _vector_type(dest, "from_elements", where)
    elements = list(elements)
    if len(elements) != n:
        raise ValueError(f"vector.from_elements: {len(elements)} elements for a vector of {n} ({where})")
    return TraceValue([_scalar(x, elem, "from_elements", where) for x in elements], (n,), elem)


def broadcast(vector: Any, source: Any, *, loc: Any = None, ip: Any = None) -> Any:
    """A vector of type ``vector`` with every element source (a scalar)."""
    from ....kernel.frontend.trace import TraceValue

    where = user_line(2)
    n, elem = _vector_type(vector, "broadcast", where)
    return TraceValue([_scalar(source, elem, "broadcast", where)] * n, (n,), elem)


def extract(source: Any, dynamic_position: Any = (), static_position: Any = (), *, results: Any = None,
            loc: Any = None, ip: Any = None) -> Any:
    """The element of the vector at a static position (a scalar value)."""
    from ....kernel.frontend.trace import TraceValue

    where = user_line(2)
    v = _vector(source, "extract", where)
    i = _position(dynamic_position, static_position, len(v.refs), "extract", where)
    return TraceValue([v.refs[i]], (), v.dtype)


def insert(value_to_store: Any, dest: Any, dynamic_position: Any = (), static_position: Any = (), *,
           results: Any = None, loc: Any = None, ip: Any = None) -> Any:
    """dest with the element at a static position replaced by value_to_store (a new vector)."""
    from ....kernel.frontend.trace import TraceValue

    where = user_line(2)
    v = _vector(dest, "insert", where)
    i = _position(dynamic_position, static_position, len(v.refs), "insert", where)
    refs = list(v.refs)
    refs[i] = _scalar(value_to_store, v.dtype, "insert", where)
    return TraceValue(refs, v.shape, v.dtype)


def bitcast(result: Any, source: Any, *, loc: Any = None, ip: Any = None) -> Any:
    """source (a value inside a kernel) with its bits read as result's elements: element by element
    for the same width, else the whole vector's bits (vector<2xf32> as vector<1xi64>)."""
    from ....kernel.frontend.trace import TraceValue
    from ....kernel.instr.bitcast import bitcast as _bitcast

    where = user_line(2)
    if not (isinstance(result, tuple) and len(result) == 3 and result[0] == "vector"):
        raise NotEmulatedError(f"vector.bitcast to {result!r}", "cutelab bitcasts to T.vector(n, T.<type>())", where=where)
    _, n, elem = result
    if not isinstance(source, TraceValue):
        raise NotEmulatedError(f"vector.bitcast of a {type(source).__name__}", "cutelab bitcasts tensor values inside "
                               "a kernel (TensorSSA)", where=where)
    k = len(source.refs)
    if n * elem.width != k * source.dtype.width:
        raise ValueError(f"vector.bitcast: the value has {k} x {source.dtype.width} bits, the type {n} x "
                         f"{elem.width} ({where})")
    if n == k:
        return _bitcast(source, elem, "vector.bitcast")
    return _bitcast(source, elem, "vector.bitcast", n=n)


def __getattr__(name: str) -> Any:
    return _refused(name)
