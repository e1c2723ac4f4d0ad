"""``cutlass._mlir.dialects.nvvm``: ``MemScopeKind`` (the ``scope=`` of ``cute.arch``'s mbarrier
operations), ``elect_sync``, the TMA load through a descriptor pointer
(``CpAsyncBulkTensorGlobalToSharedClusterOp``, tile mode: kernel/instr/tensormap.py), and ``fmax``/``fmin`` of f32 values (PTX ``max.f32``/``min.f32``, run as
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


def __getattr__(name: str) -> Any:
    return _refused(name)
