"""``cutlass._mlir_helpers.dialect_proxy``: ``DialectAutoConvertProxy(dialect)``, a dialect module whose
operations take DSL values where MLIR values are expected (``nvvm.shfl_sync(T.i32(), Int32(mask), ...)``).

CuTe DSL's proxy calls ``.ir_value()`` on each argument that has one (in lists and tuples too) and passes
Python numbers, enums and everything else through. cutelab's dialect façades (``cutelab.compat.mlir``) take
cutelab's values directly, and ``ir_value()`` of a cutelab value is the value itself, so the proxy does the
same conversion and then calls the façade's operation; a name the façade lacks raises as it does.
(tests/compat/test_compat_mlir.py: test_dialect_auto_convert_proxy.)
"""

from __future__ import annotations

import enum
import functools
import types
from typing import Any, Callable, Dict


def _convert(arg: Any, loc: Any, ip: Any) -> Any:
    if isinstance(arg, (bool, int, float)):
        return arg
    f = getattr(arg, "ir_value", None)
    if callable(f):
        try:
            return f(loc=loc, ip=ip)
        except TypeError:  # an ir_value() without loc/ip
            return f()
    if isinstance(arg, (list, tuple)):
        return type(arg)(_convert(x, loc, ip) for x in arg)
    return arg


class DialectAutoConvertProxy:
    """A dialect module whose callables convert DSL values to the dialect's operands (see the module)."""

    def __init__(self, dialect_module: types.ModuleType) -> None:
        self._module = dialect_module
        self._wrapped: Dict[str, Callable[..., Any]] = {}

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._module, name)
        if not callable(attr) or isinstance(attr, (enum.EnumMeta, type)):
            return attr  # enums (ShflKind.idx) and types (PointerType.get) as they are
        if name not in self._wrapped:
            @functools.wraps(attr)
            def wrapped(*args: Any, loc: Any = None, ip: Any = None, **kwargs: Any) -> Any:
                return attr(*(_convert(a, loc, ip) for a in args), loc=loc, ip=ip,
                            **{k: _convert(v, loc, ip) for k, v in kwargs.items()})

            self._wrapped[name] = wrapped
        return self._wrapped[name]

    def __dir__(self) -> list:
        return dir(self._module)
