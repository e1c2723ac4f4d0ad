"""2-CTA TMA loads (``CopyBulkTensorTileG2SOp(CtaGroup.TWO)`` and its multicast form) inside traced
kernels: the operand loads of a 2-CTA UMMA (``tcgen05.CtaGroup.TWO``).

Each CTA of a pair (ranks 2i and 2i + 1 of the cluster) loads its half of an operand tile into
its own shared memory (or, multicast, into every CTA of the mask); the bytes complete on the
barrier at the same offset in the *leader* CTA of each receiving CTA's pair (the even rank), which
waits for the whole pair's data before it issues the 2-CTA UMMA reading both halves
(kernel/instr/tcgen05_mma.py). The CPU interpreter does exactly that; a cluster of an odd size is
an error. CUDA: ``cp.async.bulk.tensor...mbarrier::complete_tx::bytes[.multicast::cluster].cta_group::2``
with the barrier's shared::cluster address of the leader (its peer bit 24 cleared, as CUTLASS does);
compiled for sm_100a, not run on a B200.
"""

from __future__ import annotations

from typing import Any, Dict

import numpy as np

from ...errors import LaunchError, TraceError

__all__ = ["pair_load"]

_CLASSES: Dict[type, type] = {}


def _pair_class(base: type) -> type:
    cls = _CLASSES.get(base)
    if cls is None:
        def barrier_blocks(self: Any, b: Any, blk: np.ndarray) -> np.ndarray:
            size = int(getattr(b, "cluster_size", 1))
            if size % 2:
                raise LaunchError(f"{b.ir.name}{self.where}: a 2-CTA TMA load (CtaGroup.TWO) in a cluster of {size} "
                                  f"CTA(s): 2-CTA operations need clusters of CTA pairs")
            return blk - (blk % size) % 2  # the leader (even rank) of each receiving CTA's pair

        def cuda(self: Any, r: Any) -> None:
            from ..ir.symbolic import is_sym
            from .mbarrier import smem_addr

            d = self.desc
            mask = getattr(self, "mask", None)
            cs = ", ".join(f"%{i + 2}" for i in range(d.rank))
            mc = ".multicast::cluster" if mask is not None else ""
            ins = (f"cp.async.bulk.tensor.{d.rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes{mc}"
                   f".cta_group::2 [%0], [%1, {{{cs}}}], [%{d.rank + 2}]" + (f", %{d.rank + 3};" if mc else ";"))
            from .tma import coord_code

            coords = ", ".join(f'"r"((int)({coord_code(r, c)}))' for c in r.index_exprs(self))
            # the barrier of the pair's leader: the peer bit (24) of the shared::cluster address cleared
            bar = f"({smem_addr(r, self.bar_shared, self.bar_base)} & 0xFEFFFFFFu)"
            extra = ""
            if mc:
                m = r.expr(mask)[0] if is_sym(mask) else str(int(mask))
                extra = f', "h"((unsigned short)({m}))'
            r.emit(f'asm volatile("{ins}" :: "r"({smem_addr(r, self.shared, self.sbase)}), '
                   f'"l"((unsigned long long)&{self.tmap_name}), {coords}, "r"({bar}){extra} : "memory");')

        def __repr__(self: Any) -> str:
            return base.__repr__(self) + " (2-CTA: bytes counted at the pair's leader)"

        cls = type(f"Pair{base.__name__}", (base,), {"__slots__": (), "barrier_blocks": barrier_blocks, "cuda": cuda,
                                                     "__repr__": __repr__, "__module__": __name__})
        _CLASSES[base] = cls
    return cls


def pair_load(op: Any, what: str) -> Any:
    """The 2-CTA form of a TMA load op made by instr/tma_copy.py's tma_copy (the same op, whose bytes
    complete at the leader of each receiving CTA's pair)."""
    from .tma import TmaLoadOp

    if not isinstance(op, TmaLoadOp):
        raise TraceError(f"{what}: a 2-CTA copy of {type(op).__name__} is not supported")
    op.__class__ = _pair_class(type(op))
    return op
