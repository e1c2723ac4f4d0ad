"""Guarded accesses on the GPU: what a launch does with a load or store it cannot prove in bounds.

``launch.check_bounds`` proves most accesses in bounds for every thread before anything runs
(interval arithmetic, or exact evaluation over all threads), using the value ranges of the
registers in indices and conditions (``ranges.py``: pipeline stage counters, k-tile indices,
moving views' offsets, loop bounds). An access it still cannot prove (an index read from memory,
a register whose range the analysis cannot bound, a condition it cannot use) is *guarded*
instead of refused:

- the CUDA printer wraps it in a bounds test (``cuda.CudaRenderer.guard_cond``; an op: ``LoweringContext.guard_cond``): out of range, a
  load reads 0 (its registers are zeroed) and a store or cp.async is skipped (a cp.async then
  zero-fills its destination), so no access ever leaves its tensor;
- the failing thread writes the access's code (1, 2, ...) into the error word, a 32-bit word
  in mapped pinned host memory that the module's ``cl_err_ptr`` points to (the kernel reads
  that pointer once, at entry: ``GUARD_ENTRY``; the test costs a compare, and the store is
  predicated off where the access is in range);
- the host reads the word (no synchronization needed: it is host memory) and raises a
  LaunchError naming the kernel, the tensor, the access and the user's source line:
  **at the next launch of that kernel** (before it is launched) and **at
  ``check_errors()``** (which synchronizes the device first: call it where the results are
  about to be used). The word is cleared when reported.

Proved accesses are printed unchanged (no test, no error word), so kernels whose accesses are all
proved keep their exact CUDA. The CPU interpreter needs none of this: it checks every access as
it runs and raises before anything is written (its message names the user's line too).

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
from typing import Any, Dict, List, Tuple

import numpy as np

from ...errors import LaunchError

__all__ = ["ErrorWord", "check_errors", "describe", "GUARD_PRELUDE", "GUARD_ENTRY"]

GUARD_PRELUDE = (
    "__device__ unsigned int* cl_err_ptr;  // cutelab: the error word of guarded accesses (mapped host memory)\n"
    "// cl_fail(code): record a guarded access that left its tensor. cl_err is the kernel's copy of cl_err_ptr,\n"
    "// read once at entry: the volatile store may alias the global pointer, which would be re-read each time\n"
    "#define cl_fail(code) do { if (__builtin_expect(cl_err != 0, 1)) *(volatile unsigned int*)cl_err = (code); } "
    "while (0)\n"
)
GUARD_ENTRY = "  unsigned int* const cl_err = cl_err_ptr;  // cutelab: the error word's address, read once (guards.py)"

_LIVE: "weakref.WeakSet[ErrorWord]" = weakref.WeakSet()


def describe(ir: Any, s: Any) -> str:
    """The message of guarded access s (a Load, Store or an Op's Access) of kernel ir."""
    from ..ir.nodes import Load, Store

    op = getattr(s, "op", None) or s
    if isinstance(s, Load):
        what = "load from"
    elif isinstance(s, Store):
        what = "store to"
    else:
        what = ("store to" if getattr(s, "is_store", False) else "load from")
        what = f"{type(op).__name__} {what}"
    line = getattr(op, "loc", None) or getattr(op, "where", "")
    at = f" at {line}" if line else ""
    p = s.param
    return (f"{ir.name}: the {what} {p.name}{at} left the tensor's {p.length} elements for some thread of an "
            f"earlier launch; the GPU skipped that access (a load read 0), so that launch's results are wrong")


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

        from ..cuda.driver import _driver, _ok

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
        from ..cuda.driver import synchronize as _sync

        _sync()
    for w in list(_LIVE):
        w.check("at cutelab.kernel.check_errors()")


def plan_guards(ir: Any, guarded: List[Tuple[Any, Any]]) -> Dict[int, int]:
    """Codes (1, 2, ...) for the guarded accesses: id(op) -> code; ir.guard_infos gets the messages."""
    codes: Dict[int, int] = {}
    infos: Dict[int, str] = {}
    accesses: Dict[int, List[Any]] = {}
    for s, op in guarded:
        accesses.setdefault(id(op), []).append(s)
        if id(op) in codes:
            continue
        codes[id(op)] = len(codes) + 1
        infos[codes[id(op)]] = describe(ir, s)
    ir.guards = codes
    ir.guard_infos = infos
    ir.guard_accesses = accesses  # id(op) -> the accesses of op that the CUDA must test
    return codes
