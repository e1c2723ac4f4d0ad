"""The error word of guarded accesses on the GPU (see ``kernel/analysis/guards.py``): a 32-bit word
in mapped pinned host memory per loaded module, that a thread whose guarded access left its tensor
writes the access's code to; the host reads it at the next launch and at ``check_errors()``.

>>> w = ErrorWord.for_testing({1: "k: the store to B at prog.py:7 left the tensor"})
>>> w.check("at the next launch")
>>> w.word[0] = 1
>>> w.check("at the next launch")
Traceback (most recent call last):
...
cutelab.errors.LaunchError: k: the store to B at prog.py:7 left the tensor (found at the next launch)
"""

from __future__ import annotations

import weakref
from typing import Any, Dict

import numpy as np

from ...errors import LaunchError

__all__ = ["ErrorWord", "check_errors"]

_LIVE: "weakref.WeakSet[ErrorWord]" = weakref.WeakSet()


class ErrorWord:
    """The error word of one loaded module: a mapped pinned host word the kernel writes a code to."""

    def __init__(self, infos: Dict[int, str], word: np.ndarray, keep: Any = None):
        self.infos = infos
        self.word = word  # a uint32 view of the host word
        self._keep = keep
        _LIVE.add(self)

    @classmethod
    def for_testing(cls, infos: Dict[int, str]) -> "ErrorWord":
        return cls(infos, np.zeros(1, dtype=np.uint32))

    @classmethod
    def attach(cls, module: Any, infos: Dict[int, str]) -> "ErrorWord":
        """Allocate the host word and point the module's ``cl_err_ptr`` at it (once per module)."""
        import ctypes

        from .driver import _driver, _ok

        d = _driver()
        flag = int(getattr(d, "CU_MEMHOSTALLOC_DEVICEMAP", 2))
        host = int(_ok(d.cuMemHostAlloc(4, flag), "cuMemHostAlloc"))
        word = np.ctypeslib.as_array((ctypes.c_uint32 * 1).from_address(host))
        word[0] = 0
        dev = _ok(d.cuMemHostGetDevicePointer(host, 0), "cuMemHostGetDevicePointer")
        gptr, _size = _ok(d.cuModuleGetGlobal(module, b"cl_err_ptr"), "cuModuleGetGlobal(cl_err_ptr)")
        val = np.array([int(dev)], dtype=np.uint64)
        _ok(d.cuMemcpyHtoD(gptr, val.ctypes.data, 8), "cuMemcpyHtoD(cl_err_ptr)")
        return cls(infos, word, keep=host)

    def check(self, when: str) -> None:
        """Raise the LaunchError of the recorded code, if any (and clear the word)."""
        code = int(self.word[0])
        if code:
            self.word[0] = 0
            raise LaunchError(f"{self.infos.get(code, f'guarded access {code}')} (found {when})")


def check_errors(synchronize: bool = True) -> None:
    """Raise a LaunchError if a guarded access of any kernel launched so far left its tensor.

    Synchronizes the device first (the kernels must have finished), then reads every error word.
    """
    if synchronize and any(w._keep is not None for w in list(_LIVE)):  # words of real GPU modules
        from .driver import synchronize as _sync

        _sync()
    for w in list(_LIVE):
        w.check("at cutelab.kernel.check_errors()")
