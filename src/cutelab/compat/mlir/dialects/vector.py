"""``cutlass._mlir.dialects.vector``: ``bitcast`` of a kernel's tensor value (its bits read as the
element type of ``T.vector(n, elem)``); every other operation imports and raises NotEmulatedError
naming itself when used."""

from typing import Any

from ...where import NotEmulatedError, user_line
from ..refused import module_getattr

_refused = module_getattr("cutlass._mlir.dialects.vector")


def bitcast(result: Any, source: Any, *, loc: Any = None, ip: Any = None) -> Any:
    """source (a tensor value inside a kernel) with its bits read as result's element type."""
    from ....kernel.frontend.trace import TraceValue
    from ....kernel.instr.bitcast import bitcast as _bitcast

    where = user_line(2)
    if not (isinstance(result, tuple) and len(result) == 3 and result[0] == "vector"):
        raise NotEmulatedError(f"vector.bitcast to {result!r}", "cutelab bitcasts to T.vector(n, T.<type>())", where=where)
    _, n, elem = result
    if not isinstance(source, TraceValue):
        raise NotEmulatedError(f"vector.bitcast of a {type(source).__name__}", "cutelab bitcasts tensor values inside "
                               "a kernel (TensorSSA)", where=where)
    if len(source.refs) != n:
        raise ValueError(f"vector.bitcast: the value has {len(source.refs)} elements, the type {n} ({where})")
    return _bitcast(source, elem, "vector.bitcast")


def __getattr__(name: str) -> Any:
    return _refused(name)
