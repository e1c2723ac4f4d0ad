"""``cutlass.utils.distributed``: the flag waits and signals of CuTe DSL's distributed kernels.

``red_add1`` adds 1 to a flag (``red.add``); the ``spin_lock_*_wait`` functions poll a flag in a
runtime ``while`` loop until it reaches the expected value (an ``atom.cas`` that resets it, or a
load). On the CPU interpreter such a loop on symmetric memory yields to the other ranks and a
flag that no rank will set is reported as a deadlock (``cutelab.compat.distributed.board``).

The ``multimem_*`` functions need NVLink multicast, which cutelab does not support: each raises
a TraceError saying so.
"""

from __future__ import annotations

from typing import Any

from ..errors import TraceError
from ..kernel.frontend.control import dynamic_expr
from ..kernel.launch.api import jit
from ..kernel.instr import atomics as _at
from ..numeric import Int32

__all__ = ["red_add1", "spin_lock_atom_cas_relaxed_wait", "spin_lock_atom_cas_acquire_wait",
           "spin_lock_ld_lt_relaxed_wait", "multimem_red_add1", "multimem_ld_reduce", "multimem_st"]

_MULTICAST = ("needs NVLink multicast (multimem.* on a multicast address), which cutelab does not support: it is "
              "switched off on the machines cutelab runs on, and the CPU emulation has none")


def red_add1(lock_ptr: Any, *, order: str, scope: str, loc: Any = None, ip: Any = None) -> None:
    """*lock_ptr += 1 (``red.<order>.<scope>.global.add.s32``)."""
    _at.red(lock_ptr, Int32(1), op="add", dtype="s32", sem=order, scope=scope)


@jit
def _cas_wait(lock_ptr: Any, expected_val: Any, reset_val: Any, sem: Any, scope: Any) -> None:
    result = Int32(0)
    while dynamic_expr(result != expected_val):  # a runtime loop from the first test
        result = _at.atomic_cas(lock_ptr, cmp=Int32(expected_val), val=Int32(reset_val), sem=sem, scope=scope)


@jit
def _ld_lt_wait(lock_ptr: Any, expected_val: Any, scope: Any) -> None:
    result = Int32(0)
    while dynamic_expr(result < expected_val):
        result = _at.load(lock_ptr, Int32, sem="relaxed", scope=scope)


def spin_lock_atom_cas_relaxed_wait(lock_ptr: Any, *, expected_val: Any, reset_val: Any, scope: str, loc: Any = None,
                                    ip: Any = None) -> None:
    """Wait until *lock_ptr == expected_val, then set it to reset_val (``atom.cas.relaxed`` in a loop)."""
    _cas_wait(lock_ptr, expected_val, reset_val, "relaxed", scope)


def spin_lock_atom_cas_acquire_wait(lock_ptr: Any, *, expected_val: Any, reset_val: Any, scope: str, loc: Any = None,
                                    ip: Any = None) -> None:
    """As spin_lock_atom_cas_relaxed_wait with ``atom.cas.acquire``."""
    _cas_wait(lock_ptr, expected_val, reset_val, "acquire", scope)


def spin_lock_ld_lt_relaxed_wait(lock_ptr: Any, *, expected_val: Any, scope: str, loc: Any = None,
                                 ip: Any = None) -> None:
    """Wait until *lock_ptr >= expected_val (``ld.relaxed`` in a loop)."""
    _ld_lt_wait(lock_ptr, expected_val, scope)


def _refuse(name: str) -> Any:
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise TraceError(f"cutlass.utils.distributed.{name} {_MULTICAST}")

    refused.__name__ = name
    return refused


multimem_red_add1 = _refuse("multimem_red_add1")
multimem_ld_reduce = _refuse("multimem_ld_reduce")
multimem_st = _refuse("multimem_st")


def __getattr__(name: str) -> Any:
    if name.startswith("multimem_"):
        return _refuse(name)
    raise AttributeError(f"module 'cutlass.utils.distributed' has no attribute {name!r}")
