"""cute.compile on fake tensors (``cutelab.fake``): one trace with stand-ins, then a function that
checks real tensors against the fakes and runs the program compiled for their shapes."""

from __future__ import annotations

import contextlib
import io
import threading
from typing import Any, Callable, Dict, List, Tuple

from ...dynamic import value_of
from ...errors import LaunchError
from ...fake import FakeTensor
from .args import _as_tensor_args, _constexpr_positions

__all__ = ["FakeCompiled", "compile_fakes", "tracing_stand_ins"]

_local = threading.local()


def tracing_stand_ins() -> bool:
    """True during compile_fakes' trace with stand-ins, whose launches are never run: a real call
    compiles again with its own values. A dynamic value there (an ``Int32`` argument compiled as
    0, as quack passes ``sm_count``) is a stand-in, not the value a launch will use."""
    return getattr(_local, "depth", 0) > 0


class FakeCompiled:
    """What ``cute.compile`` returns for fake tensors: called with real tensors, it checks them
    against the fakes and runs the program compiled for them (compiled on first use per shape and
    kept; the compile-time prints happened once, at cute.compile)."""

    def __init__(self, target: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any], const: set,
                 compile_: Callable[..., Any]):
        self.target, self.args, self.kwargs, self.const = target, args, kwargs, const
        self.compile = compile_  # cute.compile's trace (launch/api.py _compile)
        self.name = getattr(target, "__name__", "compiled function")
        self.cache: Dict[Any, Any] = {}

    def __repr__(self) -> str:
        fakes = ", ".join(repr(a) for a in self.args if isinstance(a, FakeTensor))
        return f"<cute.compile({self.name}) for {fakes}>"

    def _param_name(self, i: int) -> str:
        """The name of the compiled function's parameter i ("" when it has none)."""
        import inspect

        try:
            names = list(inspect.signature(self.target).parameters)
        except (TypeError, ValueError):
            return ""
        return names[i] if i < len(names) else ""

    def export_to_c(self, *args: Any, **kwargs: Any) -> None:
        from .compiled import no_export

        no_export(self.name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        kept = [i for i in range(len(self.args)) if i not in self.const]
        if len(args) != len(kept):
            raise LaunchError(f"{self.name}: expected {len(kept)} arguments (as compiled), got {len(args)}")
        full = list(self.args)
        key: List[Any] = []
        seen: Dict[int, Any] = {}  # sym_int -> its value in this call (one value across the arguments)
        for j, i in enumerate(kept):
            a = args[j]
            if isinstance(self.args[i], FakeTensor):
                if isinstance(a, FakeTensor):
                    raise LaunchError(f"{self.name}: argument {j} is a fake tensor; call the compiled function "
                                      f"with real tensors")
                t = _as_tensor_args(a)
                self.args[i].check(t, j, self.name, seen, self._param_name(i))
                key.append((i, type(a).__name__, str(getattr(a, "device", "")), value_of(t.layout)))
            else:
                key.append((i, type(a).__name__))
            full[i] = a
        cf = self.cache.get(tuple(key))
        if cf is None:
            with contextlib.redirect_stdout(io.StringIO()):  # a compiled CuTe DSL function prints nothing
                cf = self.compile(self.target, *full, **dict(self.kwargs, **kwargs))
            if len(self.cache) >= 64:
                self.cache.pop(next(iter(self.cache)))
            self.cache[tuple(key)] = cf
        return cf(*args)


def compile_fakes(target: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any],
                  _compile: Callable[..., Any]) -> FakeCompiled:
    """cute.compile on fake tensors: one trace with stand-ins (its prints and errors now), then a
    FakeCompiled. ``_compile`` is cute.compile's trace (launch/api.py, which calls this)."""
    env: Dict[int, int] = {}
    stand = tuple(a.stand_in(env) if isinstance(a, FakeTensor) else a for a in args)
    _local.depth = getattr(_local, "depth", 0) + 1
    try:
        _compile(target, *stand, **kwargs)
    finally:
        _local.depth -= 1
    return FakeCompiled(target, args, dict(kwargs), _constexpr_positions(target, len(args)), _compile)

