"""``cute.testing`` names beyond cutelab.testing: ``CantImplementError``, ``convert``,
``autotune_jit``, ``tune``, the tensor-initialisation options of the example programs
(``add_tensor_init_args``).

>>> issubclass(CantImplementError, Exception)
True
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass
from typing import Any, Callable, Dict


class CantImplementError(Exception):
    """Raised by a program when a configuration cannot be implemented (tests skip on it)."""


_CONVERT_KERNEL: Any = None


def _convert_on_gpu(src: Any, dst: Any, n: int) -> None:
    """dst[i] = src[i] converted, by a kernel of 256-thread blocks over the n elements (any layouts)."""
    global _CONVERT_KERNEL
    if _CONVERT_KERNEL is None:
        from .. import kernel as cute_kernel
        from ..kernel import arch

        @cute_kernel.kernel
        def convert_kernel(src: Any, dst: Any, n: cute_kernel.Constexpr):
            bidx, _, _ = arch.block_idx()
            tidx, _, _ = arch.thread_idx()
            i = bidx * 256 + tidx
            if i < n:
                dst[i] = src[i].to(dst.element_type)

        _CONVERT_KERNEL = convert_kernel
    _CONVERT_KERNEL(src, dst, n).launch(grid=((n + 255) // 256, 1, 1), block=(256, 1, 1))


def convert(src: Any, dst: Any) -> None:
    """cute.testing.convert(src, dst): write src's values into dst, converted to dst's element type. The
    two must have the same shape, as in CuTe DSL. On the host where both live in host memory (values
    dst's type cannot hold are refused by Tensor.store); where one lives on a GPU, by a kernel there, as
    CuTe DSL does it."""
    from ..runtime import DeviceEngine
    from ..tensor import Tensor

    for what, t in (("src", src), ("dst", dst)):
        if not isinstance(t, Tensor):
            raise TypeError(f"cute.testing.convert(src, dst): {what} must be a cute Tensor, got {type(t).__name__}")
    from .. import int_tuple as it

    if it.product_each(src.shape) != it.product_each(dst.shape):
        raise ValueError(f"cute.testing.convert(src, dst): src has shape {it.tuple_str(src.shape)} but dst has "
                         f"shape {it.tuple_str(dst.shape)}; they must be the same")
    if isinstance(src.engine, DeviceEngine) or isinstance(dst.engine, DeviceEngine):
        _convert_on_gpu(src, dst, it.product(src.shape))
        return
    dst.store(src.load().to(dst.element_type))


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
            bound = _bound(fn, args, kwargs)
            key = tuple(bound.get(k) for k in (update_on_change or ()))
            if key not in best:
                from ..testing import JitArguments, benchmark

                names = list(params_dict)
                choices = [dict(zip(names, vals)) for vals in itertools.product(*(params_dict[n] for n in names))]
                timed = []
                for c in choices:
                    t = benchmark(lambda: _call_with(fn, args, kwargs, c), kernel_arguments=JitArguments(),
                                  warmup_iterations=min(1, warmup_iterations), iterations=max(1, min(3, iterations)))
                    timed.append((t, c))
                best[key] = min(timed, key=lambda tc: tc[0])[1] if timed else {}
            return _call_with(fn, args, kwargs, best[key])

        return wrapper

    return deco


def _bound(fn: Callable, args: Any, kwargs: Dict[str, Any]) -> Dict[str, Any]:
    """The call's arguments by parameter name (positional ones too), as far as fn's signature tells."""
    import inspect

    try:
        return dict(inspect.signature(getattr(fn, "fn", fn)).bind_partial(*args, **kwargs).arguments)
    except (TypeError, ValueError):
        return dict(kwargs)


def _call_with(fn: Callable, args: Any, kwargs: Dict[str, Any], config: Dict[str, Any]) -> Any:
    """fn called with the call's arguments, the tuned parameters' values replaced by config's (whether the call
    gave them by position or by name)."""
    import inspect

    try:
        sig = inspect.signature(getattr(fn, "fn", fn))
        b = sig.bind_partial(*args, **kwargs)
    except (TypeError, ValueError):
        return fn(*args, **{**kwargs, **config})
    named = {k: v for k, v in config.items() if k in sig.parameters}
    b.arguments.update(named)
    return fn(*b.args, **b.kwargs, **{k: v for k, v in config.items() if k not in named})


def tune(func: Callable[..., Callable[[], Any]], params_dict: Dict[str, Any] = None, kernel_arguments: Any = None,
         warmup_iterations: int = 10, iterations: int = 100, stream: Any = None) -> Dict[str, Any]:
    """cutlass.testing.tune: for each combination of params_dict's values, ``func(*args, **kwargs,
    **config)`` (args and kwargs from kernel_arguments) returns a callable of no arguments, which is
    timed (cutelab.testing.benchmark); the fastest configuration is returned. A configuration whose
    func raises ValueError, TypeError, CantImplementError or another error is skipped, as CuTe DSL
    skips it; NotImplementedError stops the tuning. Without a GPU the times are the interpreter's,
    so any configuration that runs may win."""
    from ..testing import JitArguments, benchmark

    if params_dict is None:
        raise ValueError("cutlass.testing.tune: params_dict must be provided")
    ka = kernel_arguments if kernel_arguments is not None else JitArguments()
    names = list(params_dict)
    best, best_t, skipped = None, float("inf"), []
    for vals in itertools.product(*(params_dict[n] for n in names)):
        config = dict(zip(names, vals))
        try:
            run = func(*ka.args, **{**ka.kwargs, **config})
            t = benchmark(run, kernel_arguments=JitArguments(), warmup_iterations=warmup_iterations,
                          iterations=iterations, stream=stream)
        except NotImplementedError:
            raise
        except Exception as e:  # noqa: BLE001 - CuTe DSL skips a configuration that fails, and so do we
            skipped.append(f"{config}: {type(e).__name__}: {e}")
            continue
        if t < best_t:
            best, best_t = config, t
    if best is None:
        raise ValueError("cutlass.testing.tune: no configuration ran; " + "; ".join(skipped))
    return best


@dataclass(frozen=True)
class TensorInitConfig:
    """How a test program fills its tensors: random integers, or with ``init_normal`` a normal
    distribution of ``normal_mean`` and ``normal_std`` (8-bit integer types keep random integers)."""

    init_normal: bool = False
    normal_mean: float = 0.0
    normal_std: float = 1.0


def add_tensor_init_args(parser: Any, supports_int_dtypes: bool = True) -> None:
    """The options --init_normal, --normal_mean and --normal_std of CuTe DSL's example programs."""
    note = " (Int8/Uint8 tensors keep random integers)" if supports_int_dtypes else ""
    parser.add_argument("--init_normal", action="store_true",
                        help="fill tensors from a normal distribution instead of random integers" + note)
    parser.add_argument("--normal_mean", type=float, default=0.0, help="the normal distribution's mean")
    parser.add_argument("--normal_std", type=float, default=1.0, help="its standard deviation (>= 0)")


def validate_tensor_init_args(args: Any, parser: Any) -> None:
    if args.normal_std < 0:
        parser.error("--normal_std must be non-negative")


def tensor_init_config_from_args(args: Any) -> TensorInitConfig:
    return TensorInitConfig(init_normal=args.init_normal, normal_mean=args.normal_mean, normal_std=args.normal_std)


def should_use_normal_init(config: TensorInitConfig, dtype: Any) -> bool:
    """Whether tensors of dtype are filled from the normal distribution (never 8-bit integers)."""
    return bool(config.init_normal) and getattr(dtype, "name", None) not in ("i8", "u8")


EXTRAS: Dict[str, Any] = {"CantImplementError": CantImplementError, "convert": convert, "autotune_jit": autotune_jit,
                          "tune": tune, "TensorInitConfig": TensorInitConfig, "add_tensor_init_args": add_tensor_init_args,
                          "validate_tensor_init_args": validate_tensor_init_args,
                          "tensor_init_config_from_args": tensor_init_config_from_args,
                          "should_use_normal_init": should_use_normal_init}
