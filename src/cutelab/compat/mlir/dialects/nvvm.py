"""``cutlass._mlir.dialects.nvvm``: ``MemScopeKind`` (the ``scope=`` of ``cute.arch``'s mbarrier
operations), ``elect_sync``, the TMA load through a descriptor pointer
(``CpAsyncBulkTensorGlobalToSharedClusterOp``, tile mode: kernel/instr/tensormap.py), ``atomicrmw``
(PTX ``atom``: kernel/instr/atomics.py), and ``fmax``/``fmin`` of f32 values (PTX ``max.f32``/``min.f32``, run as
inline PTX: ``asm volatile`` on the GPU, cutelab's PTX interpreter on the CPU, so a NaN operand gives
the other operand, as on the GPU). Every other operation imports and raises NotEmulatedError naming
itself when used.

>>> fmax(1.5, -2.0), fmin(1.5, -2.0), fmax(1.0, float("nan")), fmax(1.0, 4.0, c=2.5)
(1.5, -2.0, 1.0, 4.0)
"""

from __future__ import annotations

import enum
from typing import Any

from ...where import NotEmulatedError, user_line
from ..refused import module_getattr

_refused = module_getattr("cutlass._mlir.dialects.nvvm")


class MemScopeKind(enum.IntEnum):
    """A memory operation's scope, with CuTe DSL 4.8.1's values; prints as PTX's qualifier."""

    CTA = 0
    CLUSTER = 1
    GPU = 2
    SYS = 3

    def __str__(self) -> str:
        return self.name.lower()


def _f32_op(op: str, a: Any, b: Any, c: Any, kw: dict, where: str) -> Any:
    from ....kernel.instr.inline_asm import NotInterpreted
    from ....kernel.instr.inline_asm import inline_asm as _inline_asm

    bad = {k for k, v in kw.items() if k not in ("loc", "ip") and v not in (None, False)}
    if bad:  # xorsign_abs, nan: other instructions
        raise NotEmulatedError(f"nvvm.f{op}({', '.join(sorted(bad))}=...)", "cutelab emulates the plain f32 form only",
                               where=where)
    try:
        out = _inline_asm(None, [a, b], f"{op}.f32 $0, $1, $2;", "=f,f,f", where)
        if c is not None:  # the three-input form (sm_100's max.f32 d, a, b, c): the same as two steps
            out = _inline_asm(None, [out, c], f"{op}.f32 $0, $1, $2;", "=f,f,f", where)
    except NotInterpreted as e:
        raise NotEmulatedError(f"nvvm.f{op}", str(e), where=where) from None
    return out


def fmax(a: Any, b: Any, c: Any = None, **kw: Any) -> Any:
    """nvvm.fmax: the larger of two (or three) f32 values."""
    return _f32_op("max", a, b, c, kw, user_line(2))


def fmin(a: Any, b: Any, c: Any = None, **kw: Any) -> Any:
    """nvvm.fmin: the smaller of two (or three) f32 values."""
    return _f32_op("min", a, b, c, kw, user_line(2))


class TMALoadMode(enum.IntEnum):
    """The mode of a TMA load (``mode=`` of CpAsyncBulkTensorGlobalToSharedClusterOp); cutelab runs TILE."""

    TILE = 0
    IM2COL = 1
    IM2COL_W = 2
    IM2COL_W_128 = 3
    TILE_GATHER4 = 4


CpAsyncBulkTensorLoadMode = TMALoadMode  # the older NVVM name (``loadMode=``)


def elect_sync(*, loc: Any = None, ip: Any = None) -> Any:
    """``elect.sync``: true in one lane of the warp (lane 0, as cutelab's elect_one)."""
    from ....kernel.frontend.threads import lane_idx

    return lane_idx() == 0


def CpAsyncBulkTensorGlobalToSharedClusterOp(dstMem: Any, tmaDescriptor: Any, coordinates: Any, mbar: Any,  # noqa: N802
                                             im2colOffsets: Any = (), *, predicate: Any = None, mode: Any = None,
                                             loadMode: Any = None, multicastMask: Any = None, l2CacheHint: Any = None,
                                             loc: Any = None, ip: Any = None, **kw: Any) -> None:
    """NVVM's TMA load through a descriptor pointer (tile mode, no multicast): kernel/instr/tensormap.py."""
    m = mode if mode is not None else loadMode
    where = user_line(2)
    if m not in (None, TMALoadMode.TILE) or list(im2colOffsets or ()) or multicastMask is not None or kw:
        raise NotEmulatedError("nvvm.CpAsyncBulkTensorGlobalToSharedClusterOp", "cutelab runs the tile mode without "
                               "im2col offsets, multicast or other options", where=where)
    from ....kernel.instr.tensormap import nvvm_tma_load

    nvvm_tma_load(dstMem, tmaDescriptor, list(coordinates), mbar, predicate)


class AtomicOpKind(enum.IntEnum):
    """The operation of ``atomicrmw``, with CuTe DSL 4.8.1's values; prints as PTX's ``atom`` operation."""

    AND = 0
    OR = 1
    XOR = 2
    CAS = 3
    EXCH = 4
    ADD = 5
    INC = 6
    DEC = 7
    MIN = 8
    MAX = 9
    UMIN = 10
    UMAX = 11
    FADD = 12
    SUB = 13

    def __str__(self) -> str:
        return self.name.lower()


class MemOrderKind(enum.IntEnum):
    """A memory operation's ordering (``mem_order=``), with CuTe DSL 4.8.1's values."""

    WEAK = 0
    RELAXED = 1
    ACQUIRE = 2
    RELEASE = 3
    ACQ_REL = 4
    SC = 5
    MMIO = 6
    CONSTANT = 7
    VOLATILE = 8

    def __str__(self) -> str:
        return self.name.lower()


def atomicrmw(op: Any, ptr: Any, a: Any, *, b: Any = None, mem_order: Any = None, syncscope: Any = None,
              results: Any = None, loc: Any = None, ip: Any = None) -> Any:
    """``nvvm.atomicrmw``: PTX ``atom`` on the element ``ptr`` points to (a global tensor's iterator or its
    ``.llvm_ptr``, this CTA's shared memory, or a pointer made from an address), returning the old value:
    kernel/instr/atomics.py. ``a`` is the operand (for CAS the compared value, ``b`` the new one); INC
    (``atom.inc.u32``: old >= a ? 0 : old + 1, quack's dynamic tile scheduler) and DEC act on 32-bit words.
    FADD is ADD of a float; SUB has no PTX instruction and is refused."""
    from ....kernel.instr import atomics

    where = user_line(2)
    try:
        kind = AtomicOpKind(int(op))
    except (TypeError, ValueError):
        raise NotEmulatedError(f"nvvm.atomicrmw(op={op!r})", "op must be an nvvm.AtomicOpKind", where=where) from None
    if kind is AtomicOpKind.SUB or results is not None:
        raise NotEmulatedError(f"nvvm.atomicrmw(op={kind.name}{', results=...' if results is not None else ''})",
                               "PTX's atom has no sub (add the negation); cutelab takes the result type from the "
                               "pointer", where=where)
    if (b is not None) != (kind is AtomicOpKind.CAS):
        raise NotEmulatedError(f"nvvm.atomicrmw(op={kind.name}, b={b!r})", "b (the new value) goes with CAS only, "
                               "and CAS needs it", where=where)
    sem = None
    if mem_order is not None:
        m = MemOrderKind(int(mem_order))
        if m not in (MemOrderKind.WEAK, MemOrderKind.RELAXED, MemOrderKind.ACQUIRE, MemOrderKind.RELEASE,
                     MemOrderKind.ACQ_REL):
            raise NotEmulatedError(f"nvvm.atomicrmw(mem_order={m.name})", "atom takes relaxed, acquire, release or "
                                   "acq_rel", where=where)
        sem = None if m is MemOrderKind.WEAK else str(m)
    scope = None if syncscope is None else str(MemScopeKind(int(syncscope)))
    name = {AtomicOpKind.FADD: "add"}.get(kind, str(kind))
    what = f"nvvm.atomicrmw({kind.name})"
    if kind is AtomicOpKind.CAS:
        return atomics._atomic("cas", ptr, b, sem, scope, what, cmp=a)
    return atomics._atomic(name, ptr, a, sem, scope, what)


def __getattr__(name: str) -> Any:
    return _refused(name)
