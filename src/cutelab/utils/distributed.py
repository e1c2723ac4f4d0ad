"""``cutlass.utils.distributed``: the flag waits and signals of CuTe DSL's distributed kernels.

``red_add1`` adds 1 to a flag (``red.add``); the ``spin_lock_*_wait`` functions poll a flag in a
runtime ``while`` loop until it reaches the expected value (an ``atom.cas`` that resets it, or a
load). On the CPU interpreter such a loop on symmetric memory yields to the other ranks and a
flag that no rank will set is reported as a deadlock (``cutelab.compat.distributed.board``).

The ``multimem_*`` functions are NVLink multicast's ``multimem.ld_reduce``/``st``/``red`` on a
multicast pointer (``kernel.instr.multimem``): on the CPU ranks each reaches every rank's copy.
"""

from __future__ import annotations

from typing import Any

from ..errors import TraceError
from ..kernel.frontend.control import dynamic_expr
from ..kernel.launch.api import jit
from ..kernel.instr import atomics as _at
from ..kernel.instr import multimem as _mm
from ..numeric import Int32

__all__ = ["red_add1", "spin_lock_atom_cas_relaxed_wait", "spin_lock_atom_cas_acquire_wait",
           "spin_lock_ld_lt_relaxed_wait", "multimem_red_add1", "multimem_ld_reduce", "multimem_st"]



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


# --------------------------------------------------------------------------- multimem (NVLink multicast)

def multimem_red_add1(lock_ptr: Any, *, order: str, scope: str, loc: Any = None, ip: Any = None) -> None:
    """Every rank's *lock_ptr += 1 through a multicast pointer (``multimem.red.<order>.<scope>.global.add.s32``)."""
    if order not in ("release", "relaxed") or scope not in ("gpu", "sys"):
        raise TraceError(f"cutlass.utils.distributed.multimem_red_add1(order={order!r}, scope={scope!r}): order is "
                         f"'release' or 'relaxed', scope 'gpu' or 'sys'")
    _mm.red(lock_ptr, Int32(1), sem=order, scope=scope, what="cutlass.utils.distributed.multimem_red_add1")


def _red_add1(order: str, scope: str) -> Any:
    def f(lock_ptr: Any, *, loc: Any = None, ip: Any = None) -> None:
        _mm.red(lock_ptr, Int32(1), sem=order, scope=scope,
                what=f"cutlass.utils.distributed.multimem_red_{order}_{scope}_add1")

    f.__name__ = f"multimem_red_{order}_{scope}_add1"
    f.__doc__ = f"``multimem.red.{order}.{scope}.global.add.s32 [lock_ptr], 1``."
    return f


multimem_red_release_gpu_add1 = _red_add1("release", "gpu")
multimem_red_release_sys_add1 = _red_add1("release", "sys")
multimem_red_relaxed_gpu_add1 = _red_add1("relaxed", "gpu")
multimem_red_relaxed_sys_add1 = _red_add1("relaxed", "sys")

#: (element type name, elements) -> (ld_reduce's PTX type, 32-bit words)
_LD_REDUCE = {}
for _name, _ptype, _per in (("f16", "f16x2", 2), ("f32", "f32", 1), ("bf16", "bf16x2", 2),
                            ("f8E4M3FN", "e4m3x4", 4), ("f8E5M2", "e5m2x4", 4)):
    for _words in (4, 2, 1):
        _LD_REDUCE[(_name, _words * _per)] = (_ptype, _words)
_SHORT = {"f16": "f16", "f32": "f32", "bf16": "bf16", "f8E4M3FN": "e4m3", "f8E5M2": "e5m2"}


def multimem_ld_reduce(mc_ptr: Any, *, dtype: Any, num_elements: int, loc: Any = None, ip: Any = None) -> Any:
    """The sum over the ranks of num_elements elements of dtype at mc_ptr (``multimem.ld_reduce.weak.global.add``,
    16-bit types added in f32, 8-bit ones in f16), as a tuple of 4, 2 or 1 Int32 registers (the packed bits)."""
    key = (getattr(dtype, "name", None), int(num_elements))
    if key not in _LD_REDUCE:
        raise ValueError(f"cutlass.utils.distributed.multimem_ld_reduce: unsupported dtype={dtype}, "
                         f"num_elements={num_elements} (Float16, BFloat16: 2, 4, 8; Float32: 1, 2, 4; "
                         f"Float8E4M3FN, Float8E5M2: 4, 8, 16)")
    ptype, words = _LD_REDUCE[key]
    return _mm.ld_reduce(mc_ptr, ptype, words, what="cutlass.utils.distributed.multimem_ld_reduce")


def multimem_st(mc_ptr: Any, *regs: Any, loc: Any = None, ip: Any = None) -> None:
    """Store 4, 2 or 1 32-bit registers at mc_ptr in every rank's copy (``multimem.st.weak.global[.vN].f32``)."""
    if len(regs) not in (1, 2, 4):
        raise ValueError(f"cutlass.utils.distributed.multimem_st: unsupported number of registers: {len(regs)}")
    _mm.st(mc_ptr, regs, what="cutlass.utils.distributed.multimem_st")


def _ld_reduce_form(ptype: str, words: int, name: str) -> Any:
    def f(mc_ptr: Any, *, loc: Any = None, ip: Any = None) -> Any:
        return _mm.ld_reduce(mc_ptr, ptype, words, what=f"cutlass.utils.distributed.{name}")

    f.__name__ = name
    f.__doc__ = f"``multimem.ld_reduce`` of {words} words of {ptype} at mc_ptr: {words} Int32 registers."
    return f


def _st_form(words: int) -> Any:
    name = f"multimem_st_{words}xb32"

    def f(mc_ptr: Any, *regs: Any, loc: Any = None, ip: Any = None) -> None:
        if len(regs) != words:
            raise TypeError(f"cutlass.utils.distributed.{name} takes {words} registers, got {len(regs)}")
        _mm.st(mc_ptr, regs, what=f"cutlass.utils.distributed.{name}")

    f.__name__ = name
    return f


for (_name, _n), (_ptype, _words) in _LD_REDUCE.items():
    _fname = f"multimem_ld_reduce_{_n}x{_SHORT[_name]}"
    globals()[_fname] = _ld_reduce_form(_ptype, _words, _fname)
    __all__.append(_fname)
for _words in (4, 2, 1):
    globals()[f"multimem_st_{_words}xb32"] = _st_form(_words)
    __all__.append(f"multimem_st_{_words}xb32")
__all__ += ["multimem_red_release_gpu_add1", "multimem_red_release_sys_add1", "multimem_red_relaxed_gpu_add1",
            "multimem_red_relaxed_sys_add1"]


def __getattr__(name: str) -> Any:
    raise AttributeError(f"module 'cutlass.utils.distributed' has no attribute {name!r}")
