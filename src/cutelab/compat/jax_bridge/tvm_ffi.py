"""``jax_tvm_ffi`` on the emulated CUDA device: a TVM-FFI function (here: a function that ``cute.compile``
made with ``--enable-tvm-ffi``) registered as an XLA custom-call target.

``register_ffi_target(name, function, platform=...)`` registers ``name`` so that
``jax.ffi.ffi_call(name, ...)(*inputs)`` calls ``function(*inputs, *outputs)`` with cutelab tensors over
XLA's buffers (row-major, static layouts, the buffers' own element types). Served only while the CUDA
device is emulated and no jax_tvm_ffi is installed: then the GPU a program names is the emulated one,
which is the CPU JAX runs on, so every platform registers the target for the CPU.
"""

from __future__ import annotations

from typing import Any, List

from ..where import user_line
from . import buffer_tensor
from . import ffi as _ffi


def register_ffi_target(name: str, function: Any, arg_spec: Any = None, platform: str = "gpu", *,
                        allow_cuda_graph: bool = True, **options: Any) -> None:
    """Make the custom-call target name run function(*inputs, *outputs) (see the module docstring)."""
    if platform not in ("gpu", "cuda", "cpu"):
        raise ValueError(f"jax_tvm_ffi.register_ffi_target({name!r}): platform must be 'gpu', 'cuda' or 'cpu', "
                         f"got {platform!r}")
    if arg_spec is not None:
        from ..where import NotEmulatedError

        raise NotEmulatedError(f"jax_tvm_ffi.register_ffi_target({name!r}, arg_spec=...)", "cutelab passes the "
                               "inputs then the outputs, as tensors, with no other arguments", where=user_line(2))
    if not callable(function):
        raise TypeError(f"jax_tvm_ffi.register_ffi_target({name!r}): {function!r} is not callable")

    def run(ins: List[_ffi.Buffer], outs: List[_ffi.Buffer], stream: int) -> None:
        tensors = [buffer_tensor(b, f"{name} input {i}") for i, b in enumerate(ins)]
        tensors += [buffer_tensor(b, f"{name} output {i}") for i, b in enumerate(outs)]
        function(*tensors)

    _ffi.register_target(name, "cpu", run)
