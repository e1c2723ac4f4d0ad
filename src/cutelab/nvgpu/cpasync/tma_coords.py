"""TMA tensors that are coordinate views (cutelab.nvgpu.cpasync.tma's make_tiled_tma_atom returns them):
the global tensor's memory viewed with each tiled mode ``COORD_EXTENT`` apart, so that an offset keeps its
coordinates, and ``TmaTensor``, whose iterator in a kernel is its coordinates.
cutelab.nvgpu.cpasync.tma re-exports every name here.
"""

from __future__ import annotations

from typing import Any, Tuple

import math

from ... import int_tuple as it
from ...layout import Layout
from ...tensor import Tensor


#: the extent each tiled mode of a coordinate view (``_coordinate_view``) stands for: 2^20 elements
COORD_EXTENT = 1 << 20


def _coordinate_view(gmem_tensor: Any, shape: Tuple[int, ...], order: Any, tiler: Tuple[int, ...],
                     hierarchical: bool = False) -> Tuple[Any, Any]:
    """(TMA tensor, its decoding layout or None) for make_tiled_tma_atom. The TMA tensor of a flat tensor
    narrower than its tile in every tiled mode (flash_attn.cute's Q of 128 rows and head dim 8 under a 192 x 16
    tile; a grouped GEMM's template, whose descriptor the kernel rewrites: kernel/instr/tensormap.py), or of a
    flat, static, non-broadcast tensor, is a coordinate view of the same memory, CuTe DSL's coordinate tensor
    in cutelab's form: the tensor's own shape (its dynamic extents stay dynamic, as CuTe DSL's: a k-tile count
    read off it bounds a runtime loop, and a dynamic template's tiles keep their coordinates through
    local_tile), each tiled mode
    COORD_EXTENT apart in the descriptor's dimension order. Reading it as memory is out of bounds (refused);
    TMA copies decode the coordinates from its offsets with each tiled mode COORD_EXTENT long. A nested
    tensor narrower than its tile in every mode gets COORD_EXTENT-long modes. A tensor whose tiled modes are
    hierarchical (quack's concatenated operands and outputs, ((2, m / 2), n, l), ``hierarchical``: each sub-mode a
    TMA dimension) gets the coordinate view of its own nested shape, each tiled sub-mode COORD_EXTENT apart: a tile
    past the end of a sub-mode (a grid rounded up to whole clusters) keeps its coordinates instead of aliasing
    onto the next sub-mode's rows. Other tensors are their own TMA tensor (a mode narrower than its tile is a
    partial tile, as a K of 32 under a K tile of 64)."""
    from ...tensor import Tensor

    n = len(shape)
    if not isinstance(gmem_tensor, Tensor):
        return gmem_tensor, None
    lshape = gmem_tensor.layout.shape
    flat = isinstance(lshape, tuple) and len(lshape) == n and not any(isinstance(e, tuple) for e in lshape)
    narrower = all(shape[i] < tiler[i] for i in range(len(tiler)))
    fshape = it.flatten_to_tuple(lshape)
    if hierarchical and isinstance(lshape, tuple) and _flat_strided(Layout._raw(fshape, it.flatten_to_tuple(
            gmem_tensor.layout.stride)), n) and all(shape[i] + 1024 <= COORD_EXTENT for i in range(len(tiler))):
        # each tiled sub-mode COORD_EXTENT long, but one that a single tile covers whole (a static extent no
        # larger than its tile: quack's 2 halves, flash_attn.cute's query heads per KV head) only its tile long:
        # its coordinate is always 0; untiled modes their own extent. When those spans do not fit in 63 bits,
        # the tensor is its own TMA tensor
        span = [int(tiler[i]) if i < len(tiler) and type(fshape[i]) is int and shape[i] <= tiler[i] else
                COORD_EXTENT if i < len(tiler) else max(1, int(shape[i])) for i in range(n)]
        if math.prod(span) < 1 << 62:
            vstride = [0] * n
            mul = 1
            for i in order:
                vstride[i] = mul
                mul *= span[i]
            decode = Layout._raw(tuple(span), tuple(vstride))
            nested = Layout._raw(lshape, it.unflatten(tuple(vstride), lshape))
            return Tensor(gmem_tensor.engine, nested, gmem_tensor.offset, _checked=True), decode
    if narrower and not flat:
        vshape = tuple(COORD_EXTENT if i < len(tiler) else shape[i] for i in range(n))
    elif (narrower and flat) or (
            all(isinstance(shape[i], int) for i in range(n)) and _flat_strided(gmem_tensor.layout, n) and
            all(shape[i] + 1024 <= COORD_EXTENT for i in range(len(tiler)))):
        # the TMA tensor is the coordinate view with the tensor's own shape (a dynamic extent stays dynamic),
        # as CuTe DSL's coordinate tensor: a kernel reads its extents off it (flash_attn.cute's SM90 forward
        # takes seqlen_q from the TMA tensor of Q, 128 rows under a 192-row tile). Each tiled mode is
        # COORD_EXTENT apart, so an offset keeps its coordinates: a tile can lie wholly past the end of a mode
        # (an epilogue's subtile past N when the CTA tile does not divide N), where the tensor's own offsets
        # would alias it onto the next row's elements, and TMA drops the box's elements past the extent.
        # A template narrower than its tile in every mode (a grouped GEMM's, dynamic as CUTLASS makes it)
        # keeps its tiles' coordinates through local_tile since its rest modes are dynamic. (Until
        # 2026-11-28 such a tensor's view had COORD_EXTENT-long modes: flash_attn.cute read 2^20 rows.)
        # (the atom decodes an offset into coordinates with each tiled mode COORD_EXTENT long: past the
        # tensor's extent too)
        # the tensor's own extents, DynInts where they are dynamic (shape holds their values): CuTe DSL's TMA tensor
        # of a tensor marked dynamic has dynamic extents, so a k-tile count read off it (cute.size(gA_mkl, mode=[3]))
        # bounds a runtime loop; with the values, every GEMM's mainloop was unrolled once per k-tile (CUTLASS's
        # dense_gemm_fp8_2xacc.py: 9,844 CUDA lines at K = 1024, 34,012 at 4096)
        keep = tuple(lshape)
        real = _compact_coords(keep, order, len(tiler))
        decode = Layout._raw(tuple(COORD_EXTENT if i < len(tiler) else shape[i] for i in range(n)), real.stride)
        return Tensor(gmem_tensor.engine, real, gmem_tensor.offset, _checked=True), decode
    else:
        return gmem_tensor, None
    vstride = [0] * n
    mul = 1
    for i in order:
        vstride[i] = mul
        mul *= vshape[i]
    lay = Layout._raw(vshape, tuple(vstride))
    return Tensor(gmem_tensor.engine, lay, gmem_tensor.offset, _checked=True), lay


class TmaTensor(Tensor):
    """The tensor make_tiled_tma_atom returns where it is a coordinate view (``_coordinate_view``):
    ``tma_dims`` is (its origin offset, the stride of each TMA dimension), which the launch gives the kernel's
    memory of it (kernel/frontend/tma_coords.py: its iterator there is its coordinates)."""

    __slots__ = ("tma_dims",)


def _tma_view(view: Any, modes: Tuple[int, ...], lshape: Any) -> Any:
    """The coordinate view as a kernel argument whose iterator in the kernel is its coordinates, one per TMA
    dimension (the descriptor's modes, innermost first, less static modes of extent 1, as CuTe DSL's)."""
    flat = it.flatten_to_tuple(view.layout.stride)
    dims = [m for m in modes if not (type(lshape[m]) is int and lshape[m] == 1)]
    if not all(type(flat[m]) is int for m in dims):
        return view
    out = TmaTensor(view.engine, view.layout, view.offset, _checked=True)
    out.tma_dims = (view.offset, tuple(int(flat[m]) for m in dims))
    return out


def _flat_strided(layout: Any, n: int) -> bool:
    """Whether layout has n flat modes, none of them a broadcast (stride 0): a coordinate view keeps its
    shape (nested or broadcast modes keep the tensor's own offsets)."""
    shp, st = layout.shape, layout.stride
    if not isinstance(shp, tuple) or len(shp) != n:
        return False
    return all(isinstance(e, int) for e in shp) and all(isinstance(x, int) and x != 0 for x in st)


def _compact_coords(vshape: Tuple[int, ...], order: Any, ntiled: int) -> Layout:
    """A coordinate view's layout of shape vshape: strides compact in the descriptor's dimension order
    (``order``), each of the first ``ntiled`` (tiled) modes taking COORD_EXTENT."""
    vstride = [0] * len(vshape)
    mul = 1
    for i in order:
        vstride[i] = mul
        mul *= COORD_EXTENT if i < ntiled else int(vshape[i])
    return Layout._raw(vshape, tuple(vstride))
