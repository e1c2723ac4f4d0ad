"""``cutlass.Swizzle`` of CuTe DSL 4.8.1's low-level API: an XOR swizzle of shared-memory *byte*
addresses (``Swizzle(bbits, mbase, sshift)``, ``Swizzle.from_name("s128b")``), with
``cutlass.apply_swizzle`` / ``load_swizzled`` / ``store_swizzled`` and the ``cutlass.Pointer``
methods of those names. (``cute.Swizzle`` stays cutelab's swizzle of element offsets.)

A swizzled access lowers to cutelab's swizzled shared memory (``SwizzledSmemEngine``) with the
swizzle in element units, applied to the offset from the array's start: cutelab places every
shared array as if at an address the swizzle's period divides, so a write and a read through one
swizzle meet where they do on the GPU. ``apply_swizzle`` gives the physical pointer of one access
(a ``cp.async`` destination, a load or store within one ``2**mbase``-byte granule, where the
swizzle moves whole granules); pointer arithmetic on it is refused, as the swizzle of ``p + k``
is not the swizzled ``p`` plus ``k``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ...errors import TraceError

__all__ = ["Swizzle", "apply_swizzle", "load_swizzled", "store_swizzled"]


@dataclass(frozen=True)
class Swizzle:
    """addr ^ (((addr >> (mbase + sshift)) & ((1 << bbits) - 1)) << mbase), on byte addresses."""

    bbits: int
    mbase: int
    sshift: int

    @classmethod
    def from_name(cls, name: str) -> "Swizzle":
        presets = {"none": (0, 0, 0), "s32b": (1, 4, 3), "s64b": (2, 4, 3), "s128b": (3, 4, 3)}
        if name not in presets:
            raise ValueError(f"cutlass.Swizzle.from_name({name!r}): expected one of {sorted(presets)}")
        return cls(*presets[name])

    def __call__(self, addr: int) -> int:
        return addr ^ (((addr >> (self.mbase + self.sshift)) & ((1 << self.bbits) - 1)) << self.mbase)

    def __str__(self) -> str:
        return f"S<{self.bbits},{self.mbase},{self.sshift}>"


def _element_swizzle(p: Any, sw: Any, what: str) -> Any:
    """The compat Pointer p's pointer through sw (a cutelab.tensor.Pointer on a swizzled engine)."""
    from ...kernel.frontend.smem import SwizzledSmemEngine
    from ...kernel.frontend.engines import SmemEngine
    from ...swizzle import Swizzle as ElemSwizzle
    from ...tensor import Pointer as CutePointer

    if not isinstance(sw, Swizzle):
        raise TraceError(f"{what}: expected a cutlass.Swizzle (bbits, mbase, sshift of byte addresses), got {sw!r}")
    eng = p.ptr.engine
    if not isinstance(eng, SmemEngine) or isinstance(eng, SwizzledSmemEngine) or p.peer is not None:
        raise TraceError(f"{what}: needs a pointer into this CTA's unswizzled shared memory (a cutlass.Array of "
                         f"space smem), got {p!r}")
    eb = p.dtype.width // 8
    shift = eb.bit_length() - 1
    if p.dtype.width % 8 or (1 << shift) != eb or sw.mbase < shift:
        raise TraceError(f"{what}: {sw} keeps {1 << sw.mbase}-byte granules, smaller than one {p.dtype} element")
    esw = ElemSwizzle(sw.bbits, sw.mbase - shift, sw.sshift)
    return CutePointer(SwizzledSmemEngine(eng.param, esw), p.ptr.offset)


def apply_swizzle(ptr: Any, swizzle: Any, *, loc: Any = None, ip: Any = None) -> Any:
    if isinstance(swizzle, Swizzle) and swizzle.bbits == 0:
        return ptr
    return type(ptr)(_element_swizzle(ptr, swizzle, "cutlass.apply_swizzle"), ptr.dtype, granule=1 << swizzle.mbase)


def load_swizzled(ptr: Any, swizzle: Any, alignment: Optional[int] = None, *, count: Optional[int] = None,
                  loc: Any = None, ip: Any = None) -> Any:
    if isinstance(swizzle, Swizzle) and swizzle.bbits == 0:
        return ptr.load(count=count)
    return type(ptr)(_element_swizzle(ptr, swizzle, "cutlass.load_swizzled"), ptr.dtype).load(count=count)


def store_swizzled(ptr: Any, value: Any, swizzle: Any, alignment: Optional[int] = None, *, loc: Any = None,
                   ip: Any = None) -> None:
    if isinstance(swizzle, Swizzle) and swizzle.bbits == 0:
        return ptr.store(value)
    type(ptr)(_element_swizzle(ptr, swizzle, "cutlass.store_swizzled"), ptr.dtype).store(value)
