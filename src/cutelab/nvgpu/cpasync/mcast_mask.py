"""``cute.nvgpu.cpasync.create_tma_multicast_mask``: the bit mask of the CTAs of a cluster that
share a CTA's coordinates but along one mode (those a multicast TMA load reaches), as CuTe DSL
4.8.1 computes it (``make_layout_image_mask``).

The coordinate may be a runtime one (a CTA's rank in its cluster): the mask is then an index
expression. Index expressions have no shifts, so 2**rank is written as a product over the bits of
the rank, (1 + 1 * bit0) * (1 + 3 * bit1) * (1 + 15 * bit2) * ..., exact for ranks below 2**k.

>>> from cutelab import make_layout
>>> vmnk = make_layout(((2,), 2, 1, 1))
>>> create_tma_multicast_mask(vmnk, (1, 0, 0, 0), 2), create_tma_multicast_mask(vmnk, (1, 0, 0, 0), 1)
(2, 10)
"""

from __future__ import annotations

from typing import Any

from ... import int_tuple as it
from ...errors import LayoutError

__all__ = ["create_tma_multicast_mask", "pow2"]


def pow2(x: Any, bound: int) -> Any:
    """2**x for an int or an index expression x with 0 <= x < bound."""
    if isinstance(x, int):
        return 1 << x
    out: Any = 1
    k = 0
    while (1 << k) < bound:
        bit = (x // (1 << k)) % 2
        out = out * (1 + ((1 << (1 << k)) - 1) * bit)
        k += 1
    return out


def create_tma_multicast_mask(cta_layout_vmnk: Any, cta_coord_vmnk: Any, mcast_mode: int, *, loc: Any = None,
                              ip: Any = None) -> Any:
    """The mask of the cluster ranks cta_layout_vmnk gives to cta_coord_vmnk with mode mcast_mode
    running over its extent (the CTAs a multicast along that mode reaches)."""
    from ...dynamic import value_of

    shape, stride = cta_layout_vmnk.shape, cta_layout_vmnk.stride
    if not isinstance(shape, tuple) or not 0 <= mcast_mode < len(shape):
        raise LayoutError(f"create_tma_multicast_mask({cta_layout_vmnk}, mode={mcast_mode}): no such mode")
    coord = list(cta_coord_vmnk)
    if len(coord) != len(shape):
        raise LayoutError(f"create_tma_multicast_mask: the coordinate {cta_coord_vmnk} does not match the layout "
                          f"{cta_layout_vmnk}")
    size = it.product(value_of(shape))
    mask: Any = 0
    n = it.product(value_of(shape[mcast_mode]))
    for j in range(n):
        c = list(coord)
        c[mcast_mode] = it.idx2crd(j, value_of(shape[mcast_mode]))
        rank = it.crd2idx(tuple(c), value_of(shape), value_of(stride))
        mask = mask + pow2(rank, size)
    return mask
