"""``cutlass.experimental.primitives.tcgen05_cp`` (CuTe DSL 4.8.1): the shared -> tensor memory copy of a
``Tcgen05SmemDesc``, lowered onto ``kernel.instr.tcgen05_cp.DescS2TCopyOp``, with ``Tcgen05CpShape``,
``Tcgen05CpMulticast`` and ``S2TCopyMode`` (its (shape, multicast) pairs).

The copy is asynchronous, as the tensor cores run it: it completes at the CTA's next ``tcgen05_commit``
(whose mbarrier a thread waits on before it reads the columns); a ``tcgen05_ld`` of them before that is an
error naming the rule. Refused by name: ``CTA_2`` copies and ``src_format=`` (the decompressing forms).
"""

from __future__ import annotations

from typing import Any, Dict

from ...errors import TraceError
from ..where import user_line
from .enums import _enum

Tcgen05CpShape = _enum("Tcgen05CpShape", "SHAPE_128X256B=shape_128x256b SHAPE_4X256B=shape_4x256b "
                                         "SHAPE_128X128B=shape_128x128b SHAPE_64X128B=shape_64x128b "
                                         "SHAPE_32X128B=shape_32x128b")
Tcgen05CpMulticast = _enum("Tcgen05CpMulticast", "WARPX2_02_13=warpx2_02_13 WARPX2_01_23=warpx2_01_23 WARPX4=warpx4")
Tcgen05CpSrcFormat = _enum("Tcgen05CpSrcFormat", "B6X16_P32=b6x16_p32 B4X16_P64=b4x16_p64")


class S2TCopyMode:
    """The valid (shape, multicast) pairs of tcgen05.cp."""

    S2T_128x256b = (Tcgen05CpShape.SHAPE_128X256B, None)
    S2T_128x128b = (Tcgen05CpShape.SHAPE_128X128B, None)
    S2T_4x256b = (Tcgen05CpShape.SHAPE_4X256B, None)
    S2T_32x128b_WARPX4 = (Tcgen05CpShape.SHAPE_32X128B, Tcgen05CpMulticast.WARPX4)
    S2T_64x128b_WARPX2_01_23 = (Tcgen05CpShape.SHAPE_64X128B, Tcgen05CpMulticast.WARPX2_01_23)
    S2T_64x128b_WARPX2_02_13 = (Tcgen05CpShape.SHAPE_64X128B, Tcgen05CpMulticast.WARPX2_02_13)


_MULTICASTS = {"128x256b": (None,), "128x128b": (None,), "4x256b": (None,), "64x128b": ("warpx2_02_13", "warpx2_01_23"),
               "32x128b": ("warpx4",)}


def tcgen05_cp(shape: Any, taddr: Any, smem_desc: Any, *, group: Any = None, multicast: Any = None,
               src_format: Any = None, loc: Any = None, ip: Any = None) -> None:
    """``tcgen05.cp.cta_group::1.<shape>[.<multicast>] [taddr], smem_desc``, issued by the calling threads' warps;
    it completes at the CTA's next tcgen05_commit."""
    from ...kernel.frontend.trace import current
    from ...kernel.instr.tcgen05_cp import DescS2TCopyOp
    from ...kernel.instr.tcgen05_tmem import _hw_address, _where
    from .tcgen05 import _is_two_cta, _tmem_pointer
    from .tcgen05_mma import Tcgen05SmemDesc

    sh = str(getattr(shape, "value", shape)).lower().replace("shape_", "")
    mc = None if multicast is None else str(getattr(multicast, "value", multicast)).lower()
    what = f"cutlass.experimental.primitives.tcgen05_cp({sh}{', ' + mc if mc else ''})"
    if sh not in _MULTICASTS:
        raise TraceError(f"{what}: the shape is one of {', '.join(_MULTICASTS)} ({user_line(2)})")
    if mc not in _MULTICASTS[sh]:
        raise TraceError(f"{what}: rule: shape {sh} takes multicast in {_MULTICASTS[sh]}, got {mc} ({user_line(2)})")
    if _is_two_cta(group, what):
        raise TraceError(f"{what}: CTA_2 (a copy into both CTAs of a pair) is not supported by cutelab's primitive "
                         f"tcgen05_cp yet ({user_line(2)})")
    if src_format is not None:
        raise TraceError(f"{what}: src_format= (decompression to 8 bits) is not supported by cutelab ({user_line(2)})")
    if not isinstance(smem_desc, Tcgen05SmemDesc):
        raise TraceError(f"{what}: smem_desc must be a Tcgen05SmemDesc.build(...) of this kernel, got "
                         f"{type(smem_desc).__name__} ({user_line(2)})")
    rows = {"128x256b": 128, "128x128b": 128, "4x256b": 4, "64x128b": 64, "32x128b": 32}[sh]
    nbytes = 32 if sh.endswith("256b") else 16
    dt = smem_desc.ptr.engine.dtype
    if (8 * nbytes) % dt.width:
        raise TraceError(f"{what}: a shared array of {dt} ({user_line(2)})")
    operand = smem_desc.operand(rows, 8 * nbytes // dt.width, dt, what)
    p = _tmem_pointer(taddr, what)
    t = current(what)
    t.emit(DescS2TCopyOp(sh, mc.replace("warpx2_", "warpx2::") if mc else "", operand.shared, dt, operand.phys,
                         operand.fields, _hw_address(p, what), _where(t)))


def namespace() -> Dict[str, Any]:
    return {"tcgen05_cp": tcgen05_cp, "Tcgen05CpShape": Tcgen05CpShape, "Tcgen05CpMulticast": Tcgen05CpMulticast,
            "Tcgen05CpSrcFormat": Tcgen05CpSrcFormat, "S2TCopyMode": S2TCopyMode}
