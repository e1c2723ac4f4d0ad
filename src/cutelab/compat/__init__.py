"""cutelab's compatibility layer: what exists only to run other people's CuTe DSL code unchanged.

- :mod:`.hook`: the import hook that makes ``cutlass``, ``cutlass.cute`` and every ``cutlass.*``
  module resolve to cutelab (and, without a GPU, ``cuda.bindings.driver`` / ``cuda.core`` to the
  emulated device);
- :mod:`.namespaces`: the modules the hook hands out, views of cutelab's own modules;
- the façades of CuTe DSL's internal modules: :mod:`.cutlass_dsl`, :mod:`.base_dsl`,
  :mod:`.cute_typing`, :mod:`.cute_core`, and the DSL names cutelab's API does not carry
  (:mod:`.dsl_names`, :mod:`.dsl_utils`, :mod:`.dsl_torch`, :mod:`.dsl_testing`, :mod:`.tvm_ffi`);
- the emulated CUDA device without a GPU: :mod:`.device`, :mod:`.torch_cuda` (torch),
  :mod:`.cuda_driver` (``cuda.bindings``), :mod:`.cuda_core` (``cuda.core``);
- :mod:`.distributed`: without a GPU, torch.distributed's NCCL on gloo, and PyTorch symmetric
  memory and NVSHMEM as host shared memory between the ranks' processes (``torchrun ... cutelab run``);
- :mod:`.run`: ``cutelab run PROGRAM.py`` / ``cutelab run -m MODULE``.

This package may import any of cutelab; nothing in cutelab outside it imports it, except
``cli.py`` (for ``cutelab run``). Nothing here is active until :func:`install` is called.

>>> import cutelab.compat as compat
>>> compat.installed()
False
"""

from __future__ import annotations

import os
from typing import Optional

from .where import NotEmulatedError, user_line  # noqa: F401

__all__ = ["install", "uninstall", "installed", "emulating", "NotEmulatedError"]

_EMULATING = False


def install(emulate_cuda: Optional[bool] = None) -> None:
    """Make ``import cutlass`` (and every ``cutlass.*``) mean cutelab in this process, and without a
    GPU emulate the CUDA device for torch, ``cuda.bindings`` and ``cuda.core``. For notebooks:
    call it before the first ``import cutlass``.

    emulate_cuda: None (default) emulates when no GPU is usable; True/False forces it.
    """
    global _EMULATING
    from . import hook

    if emulate_cuda is None:
        from ..kernel.cuda.driver import gpu_available

        emulate_cuda = not gpu_available()
    hook.install_hook(bool(emulate_cuda))
    if emulate_cuda:
        os.environ.setdefault("CUTE_DSL_ARCH", "sm_90a")
        from .nvidia_smi import put_on_path

        put_on_path()  # programs that ask nvidia-smi which GPU they have get the emulated one
        try:
            import torch  # noqa: F401
        except ImportError:
            torch = None
        if torch is not None:
            from . import distributed, torch_cuda, torch_ops

            torch_cuda.enable()
            torch_ops.enable()  # custom operators' "cuda" kernels run on "cuda" tensors
            distributed.install()  # NCCL on gloo, symmetric memory and NVSHMEM as host shared memory
    _EMULATING = bool(emulate_cuda)


def uninstall() -> None:
    """Undo :func:`install`: ``import cutlass`` means the installed package again; torch's CUDA
    API is torch's."""
    global _EMULATING
    from . import hook, torch_cuda, torch_ops

    hook.uninstall_hook()
    torch_ops.disable()
    torch_cuda.disable()
    from . import distributed

    distributed.uninstall()
    _EMULATING = False


def _raw_pointer(p: object) -> object:
    """Pointer.raw_ptr(): CuTe DSL's cutlass.Pointer of p (compat/experimental/memory.py, imported when asked)."""
    from .experimental.memory import Pointer

    return Pointer(p)


from ..tracing import install as _install_hooks  # noqa: E402

_install_hooks(raw_pointer=_raw_pointer)  # the compat layer is imported: Pointer.raw_ptr() works


def installed() -> bool:
    """True while the import hook is in place."""
    from . import hook

    return hook.installed()


def emulating() -> bool:
    """True while the CUDA device is emulated (installed without a GPU)."""
    return _EMULATING and installed()
