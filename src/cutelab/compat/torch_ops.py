"""torch custom operators' CUDA kernels on the emulated CUDA device.

A program registers its GPU code as a torch operator for the "cuda" device
(``torch.library.custom_op(..., device_types="cuda")``, ``op.register_kernel("cuda")``). On the
emulated device a "cuda" tensor is a CPU tensor (torch_cuda.py), so torch's dispatcher would look
for a CPU kernel and find none. While the emulation is on, registering a kernel for "cuda" (or for
"cpu") registers one router for both device types: it runs the "cuda" kernel when an argument is
on the emulated CUDA device, the program's own "cpu" kernel otherwise, and, with no "cpu" kernel,
raises as torch would for a CPU tensor (naming the operator). Every kernel a program registers runs
under the emulation (torch calls it with the emulation's TorchFunctionMode popped).
"""

from __future__ import annotations

import functools
import itertools
from typing import Any, Callable, Dict

_STATE: Dict[str, Any] = {}
_DEVICES = ("cuda", "cpu")


def _any_on_cuda(args: Any, kwargs: Dict[str, Any]) -> bool:
    import torch

    from .torch_cuda import on_cuda

    for a in itertools.chain(args, kwargs.values()):
        for t in (a if isinstance(a, (tuple, list)) else (a,)):
            if isinstance(t, torch.Tensor) and on_cuda(t):
                return True
    return False


def _emulated(f: Callable[..., Any]) -> Callable[..., Any]:
    """f, run under the emulation: torch calls an operator's kernel with the TorchFunctionMode stack
    popped (the emulation's own handler made the call), where "cuda" tensors would look like CPU ones."""

    @functools.wraps(f)
    def run(*args: Any, **kwargs: Any) -> Any:
        from torch.overrides import _get_current_function_mode_stack

        from .torch_cuda import _STATE as cuda_state

        mode = cuda_state.get("mode")
        if mode is None or any(isinstance(m, type(mode)) for m in _get_current_function_mode_stack()):
            return f(*args, **kwargs)
        with type(mode)():
            return f(*args, **kwargs)

    return run


def _router(op: Any) -> Callable[..., Any]:
    def route(*args: Any, **kwargs: Any) -> Any:
        fns = op.__dict__["_cutelab_kernels"]
        device = "cuda" if _any_on_cuda(args, kwargs) else "cpu"
        if device not in fns:
            where = "on the emulated CUDA device" if device == "cuda" else "on the CPU"
            name = getattr(op, "_qualname", op._name)
            raise NotImplementedError(f"{name}: no kernel for '{device}' (the operator has kernels for {sorted(fns)}), "
                                      f"and its tensors are {where}")
        return fns[device](*args, **kwargs)

    route.__name__ = f"cutelab_route_{op._name.replace('::', '_')}"
    return route


def enable() -> None:
    """Route custom operators' "cuda" kernels to "cuda" tensors on the CPU (once)."""
    if _STATE:
        return
    from torch._library.custom_ops import CustomOpDef

    orig = CustomOpDef.register_kernel

    def register_kernel(self: Any, device_types: Any, fn: Any = None, /) -> Any:
        types = [device_types] if device_types is None or isinstance(device_types, str) else list(device_types)
        ours = [t for t in types if t in _DEVICES]
        if not ours:  # another device, or None (every device): the kernel runs under the emulation
            return orig(self, device_types, _emulated(fn)) if fn is not None else (
                lambda f: (orig(self, device_types, _emulated(f)), f)[1])

        def inner(f: Callable[..., Any]) -> Callable[..., Any]:
            first = "_cutelab_kernels" not in self.__dict__
            fns = self.__dict__.setdefault("_cutelab_kernels", {})
            for t in ours:
                fns[t] = f
            rest = [t for t in types if t not in _DEVICES]
            if rest:
                orig(self, rest, f)
            if first:
                orig(self, list(_DEVICES), _emulated(_router(self)))
            return f

        return inner(fn) if fn is not None else inner

    register_kernel.__wrapped__ = orig
    CustomOpDef.register_kernel = register_kernel
    _STATE["register_kernel"] = orig


def disable() -> None:
    """Undo :func:`enable` for later registrations (operators registered meanwhile keep their router)."""
    if not _STATE:
        return
    from torch._library.custom_ops import CustomOpDef

    CustomOpDef.register_kernel = _STATE.pop("register_kernel")
