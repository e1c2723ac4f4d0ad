"""``cute.testing`` names beyond cutelab.testing: ``CantImplementError``, ``convert``,
``autotune_jit``, and the tensor-initialisation options of CUTLASS's example programs
(``add_tensor_init_args``, ``validate_tensor_init_args``, ``TensorInitConfig``,
``tensor_init_config_from_args``, ``should_use_normal_init``).

>>> issubclass(CantImplementError, Exception)
True
"""

from __future__ import annotations

import dataclasses
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


@dataclasses.dataclass(frozen=True)
class TensorInitConfig:
    """How a program initialises its tensors: random integers, or a normal distribution (mean, std)."""

    init_normal: bool = False
    normal_mean: float = 0.0
    normal_std: float = 1.0


def add_tensor_init_args(parser: Any, supports_int_dtypes: bool = True) -> None:
    """Add --init_normal, --normal_mean and --normal_std to an argparse parser."""
    text = "Use normal distribution for tensor initialization instead of random integers."
    if supports_int_dtypes:
        text += " Note: Int8/Uint8 dtypes always use random init regardless of this flag"
    parser.add_argument("--init_normal", action="store_true", help=text)
    parser.add_argument("--normal_mean", type=float, default=0.0, help="Mean for normal distribution initialization")
    parser.add_argument("--normal_std", type=float, default=1.0,
                        help="Standard deviation for normal distribution initialization (must be >= 0)")


def validate_tensor_init_args(args: Any, parser: Any) -> None:
    """Refuse a negative --normal_std (through parser.error)."""
    if args.normal_std < 0:
        parser.error("--normal_std must be non-negative")


def tensor_init_config_from_args(args: Any) -> TensorInitConfig:
    return TensorInitConfig(init_normal=args.init_normal, normal_mean=args.normal_mean, normal_std=args.normal_std)


def should_use_normal_init(config: TensorInitConfig, dtype: Any) -> bool:
    """Whether to draw from the normal distribution: asked for, and dtype is not Int8/Uint8."""
    return bool(config.init_normal) and getattr(dtype, "name", "") not in ("i8", "u8")


EXTRAS: Dict[str, Any] = {"CantImplementError": CantImplementError, "convert": convert, "autotune_jit": autotune_jit,
                          "TensorInitConfig": TensorInitConfig, "add_tensor_init_args": add_tensor_init_args,
                          "validate_tensor_init_args": validate_tensor_init_args,
                          "tensor_init_config_from_args": tensor_init_config_from_args,
                          "should_use_normal_init": should_use_normal_init}
