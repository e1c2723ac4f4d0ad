"""Distributed CuTe DSL programs without a GPU: N ranks as N processes.

``torchrun --nproc-per-node N --no-python cutelab run PROGRAM.py`` on a machine without a GPU
runs each rank as a process with the emulated CUDA device (``cutelab.compat``) and, from here:

- :mod:`.torch_dist`: the process group runs on gloo when the program asks for NCCL;
- :mod:`.heap`: symmetric memory as host shared memory (files in /dev/shm) mapped into every
  rank, so one rank's kernel reads and writes another's buffer in place;
- :mod:`.symm_mem`: ``torch.distributed._symmetric_memory`` over it; :mod:`.nvshmem`:
  ``nvshmem.core`` (nvshmem4py) over it (and ``cuda.pathfinder``'s library loader);
- :mod:`.board`: a kernel polling symmetric memory (a flag, a signal, Lamport's data) yields the
  CPU to the other ranks, and a wait that no rank can end is a ``DeadlockError`` naming the rank,
  the kernel line and the memory polled, never a hang.

Each rank's kernels run on the CPU interpreter; the memory-ordering instructions they use
(``cute.arch.load``/``store`` with ``sem``/``scope``, atomics, ``red``, fences) are in
``kernel.instr.atomics``, and ``cutlass.utils.distributed`` (spin locks; multimem is refused) in
``cutelab.utils.distributed``. NVLink multicast is not supported.

:func:`install` is called by ``cutelab.compat.install`` when it emulates the CUDA device.

May import: ``cutelab.compat`` (errors, the emulated device), ``cutelab.kernel`` (the interpreter's
hooks for polling kernels) and torch. Nothing outside ``compat`` imports it.
"""

from __future__ import annotations

__all__ = ["install", "uninstall"]


def install() -> None:
    """Emulate symmetric memory and NCCL in torch.distributed (no-op without torch)."""
    try:
        import torch.distributed as dist
    except ImportError:
        return
    if not dist.is_available():
        return
    from . import symm_mem, torch_dist

    torch_dist.install()
    symm_mem.install()


def uninstall() -> None:
    try:
        import torch.distributed  # noqa: F401
    except ImportError:
        return
    from . import symm_mem, torch_dist

    torch_dist.uninstall()
    symm_mem.uninstall()
