"""CuTe DSL names that exist only for its MLIR pipeline, in one place.

CuTe DSL exports builders of MLIR regions that a program may import but that have no meaning
without MLIR: ``for_generate``, ``while_generate`` and ``yield_out`` build ``scf`` loops by hand
(the control flow "without the AST pre-processor"). cutelab rewrites a kernel's Python
``for``/``while`` itself, so these names import (programs that import them still run) and raise a
clear error when used, naming what to write instead. ``if_generate`` (a branch from callables,
which libraries' pipelines use) is built: kernel.frontend.control.if_generate.

>>> from cutelab import for_generate
>>> for_generate(0, 4)
Traceback (most recent call last):
...
cutelab.errors.TraceError: cutlass.for_generate builds an MLIR scf.for region by hand, which exists only in CuTe DSL's MLIR pipeline; write a Python loop instead: for i in cutlass.range(start, stop, step): ... (inside @cute.jit / @cute.kernel it becomes a loop of cutelab's kernel IR)
"""

from __future__ import annotations

from typing import Any, Callable

from .errors import TraceError

__all__ = ["for_generate", "if_generate", "while_generate", "yield_out"]

_INSTEAD = {
    "for_generate": ("an MLIR scf.for region", "a Python loop instead: for i in cutlass.range(start, stop, step): ..."),
    "if_generate": ("an MLIR scf.if region", "a Python branch instead: if cond: ... else: ..."),
    "while_generate": ("an MLIR scf.while region", "a Python loop instead: while cond: ..."),
    "yield_out": ("the results of an MLIR region", "Python assignments inside the loop or branch instead"),
}


def _refuse(name: str) -> Callable[..., Any]:
    what, instead = _INSTEAD[name]

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise TraceError(
            f"cutlass.{name} builds {what} by hand, which exists only in CuTe DSL's MLIR pipeline; write "
            f"{instead} (inside @cute.jit / @cute.kernel it becomes a loop of cutelab's kernel IR)"
            if name == "for_generate" else
            f"cutlass.{name} builds {what} by hand, which exists only in CuTe DSL's MLIR pipeline; write {instead}"
        )

    refuse.__name__ = refuse.__qualname__ = name
    refuse.__doc__ = f"CuTe DSL's {name} (MLIR only): raises a TraceError that says what to write instead."
    return refuse


for_generate = _refuse("for_generate")


def if_generate(*args: Any, **kwargs: Any) -> Any:
    """CuTe DSL's if_generate: a branch built from callables, which cutelab does build
    (kernel.frontend.control.if_generate)."""
    from .kernel.frontend.control import if_generate as _if_generate

    return _if_generate(*args, **kwargs)


def while_generate(*args: Any, **kwargs: Any) -> Any:
    """CuTe DSL's while_generate: a runtime while loop built by hand (kernel.frontend.while_region)."""
    from .kernel.frontend.while_region import while_generate as _while_generate

    return _while_generate(*args, **kwargs)


def yield_out(*args: Any, **kwargs: Any) -> Any:
    """CuTe DSL's yield_out: the next values of a while_generate loop (kernel.frontend.while_region)."""
    from .kernel.frontend.while_region import yield_out as _yield_out

    return _yield_out(*args, **kwargs)
