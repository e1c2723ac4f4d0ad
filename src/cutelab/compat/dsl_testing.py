"""``cute.testing`` names beyond cutelab.testing: ``CantImplementError``, ``convert``,
``autotune_jit``.

>>> issubclass(CantImplementError, Exception)
True
"""

from __future__ import annotations

import functools
import itertools
from typing import Any, Callable, Dict


class CantImplementError(Exception):
    """Raised by a program when a configuration cannot be implemented (tests skip on it)."""


def convert(cute_tensor: Any, dtype: Any = None) -> Any:
    """cute.testing.convert: copy a tensor's values into another element type (host side)."""
    from ..tensor import Tensor

    if not isinstance(cute_tensor, Tensor):
        raise TypeError(f"cute.testing.convert: expected a cute Tensor, got {type(cute_tensor).__name__}")
    v = cute_tensor.load()
    return v.to(dtype) if dtype is not None else v


def autotune_jit(params_dict: Dict[str, Any] = None, update_on_change: Any = None, warmup_iterations: int = 10,
                 iterations: int = 100, **kw: Any) -> Callable:
    """cute.testing.autotune_jit: try each combination of params_dict's values on the first call and keep
    the fastest (timed by cutelab.testing.benchmark); later calls use it. The function must take the
    tuned parameters as keyword arguments."""
    params_dict = dict(params_dict or {})

    def deco(fn: Callable) -> Callable:
        best: Dict[Any, Dict[str, Any]] = {}

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            key = tuple(kwargs.get(k) for k in (update_on_change or ()))
            if key not in best:
                from ..testing import JitArguments, benchmark

                names = list(params_dict)
                choices = [dict(zip(names, vals)) for vals in itertools.product(*(params_dict[n] for n in names))]
                timed = []
                for c in choices:
                    t = benchmark(lambda: fn(*args, **kwargs, **c), kernel_arguments=JitArguments(),
                                  warmup_iterations=min(1, warmup_iterations), iterations=max(1, min(3, iterations)))
                    timed.append((t, c))
                best[key] = min(timed, key=lambda tc: tc[0])[1] if timed else {}
            return fn(*args, **kwargs, **best[key])

        return wrapper

    return deco


EXTRAS: Dict[str, Any] = {"CantImplementError": CantImplementError, "convert": convert, "autotune_jit": autotune_jit}
