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
  about to be used). The word is cleared when reported. The word and its reading are the GPU
  back end's (``cuda/errorword.py``); this module plans the codes and their messages.

Proved accesses are printed unchanged (no test, no error word), so kernels whose accesses are all
proved keep their exact CUDA. The CPU interpreter needs none of this: it checks every access as
it runs and raises before anything is written (its message names the user's line too).
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

__all__ = ["describe", "plan_guards", "GUARD_PRELUDE", "GUARD_ENTRY"]

GUARD_PRELUDE = (
    "__device__ unsigned int* cl_err_ptr;  // cutelab: the error word of guarded accesses (mapped host memory)\n"
    "// cl_fail(code): record a guarded access that left its tensor. cl_err is the kernel's copy of cl_err_ptr,\n"
    "// read once at entry: the volatile store may alias the global pointer, which would be re-read each time\n"
    "#define cl_fail(code) do { if (__builtin_expect(cl_err != 0, 1)) *(volatile unsigned int*)cl_err = (code); } "
    "while (0)\n"
)
GUARD_ENTRY = "  unsigned int* const cl_err = cl_err_ptr;  // cutelab: the error word's address, read once (guards.py)"


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
