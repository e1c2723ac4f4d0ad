"""The enums of ``cutlass.experimental.primitives`` (CuTe DSL 4.8.1): string enums whose members
compare equal to the PTX modifier they stand for, so a wrapper takes the member or the bare string.

>>> Shfl.BFLY == "bfly", ReductionKind.UMIN.value, VoteSync("ballot") is VoteSync.BALLOT
(True, 'umin', True)
"""

from __future__ import annotations

import enum


class _StrEnum(str, enum.Enum):
    def __str__(self) -> str:
        return self.value


def _enum(name: str, members: str) -> type:
    """A string enum named ``name`` whose members are ``NAME=value`` pairs (or a NAME, value = name.lower())."""
    pairs = []
    for m in members.split():
        k, _, v = m.partition("=")
        pairs.append((k, v or k.lower()))
    return _StrEnum(name, pairs)


Shfl = _enum("Shfl", "BFLY UP DOWN IDX")
VoteSync = _enum("VoteSync", "ANY ALL BALLOT UNI")
ReductionKind = _enum("ReductionKind", "ADD AND MAX MIN OR UMAX UMIN XOR FMIN FMAX")
ReductionOp = _enum("ReductionOp", "AND OR XOR ADD INC DEC MIN MAX")
ReductionType = _enum("ReductionType", "B32 B64 U32 U64 S32 S64 F32 F64 F16 F16X2 BF16 BF16X2")
BarrierRedux = _enum("BarrierRedux", "AND OR POPC")
MemOrder = _enum("MemOrder", "WEAK RELAXED ACQUIRE RELEASE ACQ_REL SC MMIO VOLATILE CONSTANT")
MemScope = _enum("MemScope", "CTA CLUSTER GPU SYS")
MBarrierScope = _enum("MBarrierScope", "CTA CLUSTER")
MBarrierWait = _enum("MBarrierWait", "TEST TRY")
SharedSpace = _enum("SharedSpace", "CTA=cta CLUSTER=cluster shared_cta=cta shared_cluster=cluster")
Proxy = _enum("Proxy", "ALIAS ASYNC ASYNC_GLOBAL ASYNC_SHARED TENSORMAP GENERIC")
LoadCacheModifier = _enum("LoadCacheModifier", "CA CG CS LU CV")
StoreCacheModifier = _enum("StoreCacheModifier", "WB CG CS WT")
SetMaxRegisterAction = _enum("SetMaxRegisterAction", "DECREASE INCREASE")
MMALayout = _enum("MMALayout", "ROW COL")
LoadShape = _enum("LoadShape", "M8N8 M8N16 M16N16")
StoreShape = _enum("StoreShape", "M8N8 M16N8")
LoadSrcFormat = _enum("LoadSrcFormat", "B6X16_P32 B4X16_P64 B8")
CTAGroup = _enum("CTAGroup", "CTA_1 CTA_2")
GridDepAction = _enum("GridDepAction", "WAIT LAUNCH_DEPENDENTS")
TensormapField = _enum("TensormapField", "GLOBAL_ADDRESS RANK BOX_DIM GLOBAL_DIM GLOBAL_STRIDE ELEMENT_STRIDE "
                                         "ELEMTYPE INTERLEAVE_LAYOUT SWIZZLE_MODE SWIZZLE_ATOMICITY FILL_MODE")

__all__ = ["Shfl", "VoteSync", "ReductionKind", "ReductionOp", "ReductionType", "BarrierRedux", "MemOrder",
           "MemScope", "MBarrierScope", "MBarrierWait", "SharedSpace", "Proxy", "LoadCacheModifier",
           "StoreCacheModifier", "SetMaxRegisterAction", "MMALayout", "LoadShape", "StoreShape", "LoadSrcFormat",
           "CTAGroup", "GridDepAction", "TensormapField"]
