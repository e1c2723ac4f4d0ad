"""2-CTA TMA loads (``CopyBulkTensorTileG2SOp(CtaGroup.TWO)`` and its multicast form) inside traced
kernels: the operand loads of a 2-CTA UMMA (``tcgen05.CtaGroup.TWO``).

Each CTA of a pair (ranks 2i and 2i + 1 of the cluster) loads its half of an operand tile into
its own shared memory (or, multicast, into every CTA of the mask); the bytes complete on the
barrier at the same offset in the *leader* CTA of each receiving CTA's pair (the even rank), which
waits for the whole pair's data before it issues the 2-CTA UMMA reading both halves
(kernel/instr/tcgen05_mma.py). The CPU interpreter does exactly that; a cluster of an odd size is
an error. The CUDA back end does not print these loads yet (an error, not a silent wrong kernel).
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
            raise TraceError(f"kernel {r.ir.name}{self.where}: the CUDA back end does not print 2-CTA TMA loads "
                             f"(.cta_group::2) yet")

        def __repr__(self: Any) -> str:
            return base.__repr__(self) + " (2-CTA: bytes counted at the pair's leader)"

        cls = type(f"Pair{base.__name__}", (base,), {"__slots__": (), "barrier_blocks": barrier_blocks, "cuda": cuda,
                                                     "__repr__": __repr__, "__module__": __name__})
        _CLASSES[base] = cls
    return cls


def pair_load(op: Any, what: str) -> Any:
    """The 2-CTA form of a TMA load op made by instr/tma.py's tma_copy (the same op, whose bytes
    complete at the leader of each receiving CTA's pair)."""
    from .tma import TmaLoadOp

    if not isinstance(op, TmaLoadOp):
        raise TraceError(f"{what}: a 2-CTA copy of {type(op).__name__} is not supported")
    op.__class__ = _pair_class(type(op))
    return op
