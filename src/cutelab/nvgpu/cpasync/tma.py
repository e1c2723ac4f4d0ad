"""SM90 TMA: bulk tensor copies global -> shared memory, as ``cutlass.cute.nvgpu.cpasync`` names them.

``make_tiled_tma_atom(CopyBulkTensorTileG2SOp(), gmem, smem_layout, cta_tiler)`` describes the
copy of one ``cta_tiler`` tile of ``gmem`` into shared memory laid out by ``smem_layout``: the
parameters of ``cuTensorMapEncodeTiled`` (dimensions and byte strides of the global tensor,
innermost first; the box; the swizzle mode read off the smem layout's swizzle), and it checks
that the hardware's placement of the box in shared memory is exactly ``smem_layout`` (so any
thread reading the tile through that layout sees what TMA wrote). What TMA cannot do is refused.

``CopyBulkTensorTileS2GOp`` atoms describe TMA stores the same way (shared -> global). With
``CopyBulkTensorTileG2SMulticastOp`` and ``num_multicast=n``, the box is one of n equal slices of
the tile (consecutive ranges of its shared-memory offsets, as CuTe cuts it): ``tma_partition`` with
a ``cta_layout`` of n CTAs gives CTA ``cta_layout(cta_coord)`` its slice of both tensors, and its
multicast copy lands that slice in every CTA of the mask, so each receives the whole tile.

Elements of 4 bits (Float4E2M1FN and Int4, two to a byte, as CUTLASS's float_e2m1_t and int4b_t) are copied as the tensor map
type CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B: dimensions and the box in elements, strides in bytes; the byte
swizzles act on their shared memory as Swizzle<B,5,3> on element offsets (``swizzle_base_elems``). A tile
whose tiled modes are hierarchical or broadcast (stride 0: the block-scaled GEMMs' scale factors,
``blockscaled_utils.tile_atom_to_shape_SF``) is copied by a ``TmaRunsAtom``: its distinct elements, runs of
whole 256-element rows of the tensor's memory, one box each; multicast (``num_multicast`` n), the tile's
shared memory is cut into n equal consecutive slices, each one pattern of evenly spaced runs (CUTLASS's 2-CTA
block-scaled GEMMs multicast B's scale factors to both CTAs of a pair this way).

Deviation from CuTe DSL: the second result (the "TMA tensor") is the global tensor itself, not a
tensor of coordinates; a kernel tiles and slices it as usual (``local_tile``, ``group_modes``,
``t[(None, k)]``), and the copy recovers the tile's coordinates from its offset. An offset keeps no
coordinate past the tensor's extent: a tile wholly outside the tensor (CuTe DSL's coordinate
tensor would skip it) aliases onto another tile's coordinates. The CPU interpreter refuses TMA
stores of two CTAs to one element (kernel/instr/tma.py); launch grids of tiles inside the tensor.

>>> import numpy as np, cutelab as cute
>>> from cutelab.nvgpu import cpasync, warpgroup
>>> A = cute.make_tensor(np.zeros(256 * 128, np.float16), cute.make_layout((256, 128), stride=(128, 1)))
>>> sl = cute.tile_to_shape(warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.K_SW128, cute.Float16), (64, 64), (0, 1))
>>> atom, tma_A = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), A, sl, (64, 64))
>>> print(atom.desc)
TMA box (64,64) of f16 from a tensor (128,256) with byte strides (2,256), swizzle 128B
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import int_tuple as it
from ...errors import LayoutError
from ...layout import Layout

# the descriptor and atoms, coordinate views, runs atoms, multicast and the descriptor instructions live in
# their own modules; every name they define is also a name of this module, as it was before they moved
from .tma_desc import (  # noqa: F401
    _TMA_DTYPE, TMA_SWIZZLE_BYTES, CopyBulkTensorTileG2SMulticastOp, CopyBulkTensorTileG2SNonExecTrait,
    CopyBulkTensorTileG2SOp, TmaCopyAtom, TmaDescriptor, TmaInfo, _offsets, _rank, _swizzle_of, swizzle_base_elems,
)
from .tma_coords import (  # noqa: F401
    COORD_EXTENT, TmaTensor, _compact_coords, _coordinate_view, _flat_strided, _tma_view,
)
from .tma_runs import _RUN_ROW, TmaRunsAtom, _run_row, _runs_atom, _runs_slice, _runs_slices  # noqa: F401
from .tma_partition import (  # noqa: F401
    _cosize, _multicast_atom, _slice_origin, _slice_tensor, _split_box, tma_partition,
)
from .tma_tensormap import (  # noqa: F401
    copy_tensormap, cp_fence_tma_desc_release, fence_tma_desc_acquire, fence_tma_desc_release, prefetch_descriptor,
    update_tma_descriptor,
)

__all__ = ["CopyBulkTensorTileG2SOp", "CopyBulkTensorTileG2SNonExecTrait", "CopyBulkTensorTileG2SMulticastOp", "TmaDescriptor", "TmaCopyAtom", "TmaInfo",
           "make_tiled_tma_atom", "tma_partition", "prefetch_descriptor", "TMA_SWIZZLE_BYTES", "copy_tensormap",
           "update_tma_descriptor", "fence_tma_desc_acquire", "fence_tma_desc_release", "cp_fence_tma_desc_release"]


def make_tiled_tma_atom(op: Any, gmem_tensor: Any, smem_layout: Any, cta_tiler: Any, num_multicast: int = 1, *,
                        internal_type: Any = None, loc: Any = None, ip: Any = None,
                        _one_stage: bool = False) -> TmaInfo:
    """A TMA atom copying one ``cta_tiler`` tile of gmem_tensor into smem laid out by smem_layout,
    and the tensor to tile in the kernel (here: gmem_tensor itself), as a TmaInfo (which unpacks as
    the pair). A staged smem layout (one mode more than cta_tiler, the stage last) is taken as its
    first stage, as CuTe DSL does; ``_one_stage`` (for make_tiled_tma_atom_A/_B, whose MMA-partitioned
    layouts have more modes than their tile) says smem_layout is one stage already.

    Postconditions: the box is the tile (cta_tiler padded with 1s to the tensor's rank); every
    element (i, j, ...) of the tile lands at smem_layout(i, j, ...) (after its swizzle, on bytes).
    """
    where = f"make_tiled_tma_atom({op}, {getattr(gmem_tensor, 'layout', gmem_tensor)}, {smem_layout}, {cta_tiler})"
    from .tma_store import CopyBulkTensorTileS2GOp

    stand_in = getattr(gmem_tensor, "tma_stand_in", None)
    if stand_in is not None:  # a tensor over a layout with runtime extents, in a kernel (kernel/instr/runtime_layout.py)
        t = stand_in()
        info = make_tiled_tma_atom(op, t, smem_layout, cta_tiler, num_multicast, internal_type=internal_type,
                                   _one_stage=_one_stage)
        atom = info.atom
        atom.host_engine = None  # no kernel argument's descriptor: copy_tensormap builds this one in the kernel
        atom.runtime_src = gmem_tensor
        atom.runtime_modes = gmem_tensor.tma_modes(atom.desc, t)
        return TmaInfo(atom, gmem_tensor, info.smem_layout)
    if not isinstance(op, (CopyBulkTensorTileG2SOp, CopyBulkTensorTileS2GOp)):
        raise LayoutError(f"{where}: only CopyBulkTensorTileG2SOp (TMA loads) and CopyBulkTensorTileS2GOp (TMA "
                          f"stores) are supported, got {type(op).__name__}")
    cta_group = getattr(op, "cta_group", None)
    if getattr(cta_group, "value", cta_group) == 2 and isinstance(op, CopyBulkTensorTileG2SOp):
        # a load for a 2-CTA MMA (CUTLASS's MLA decode, its tile a CTA's half): one CTA's box, its bytes counted by
        # the pair's leader (the copy reads the cta_group from atom.op: kernel/instr/tcgen05_2cta.py), as
        # make_tiled_tma_atom_A/B make them
        info = make_tiled_tma_atom(type(op)(), gmem_tensor, smem_layout, cta_tiler, num_multicast,
                                   internal_type=internal_type, _one_stage=_one_stage)
        info.atom.op = op
        return info
    if getattr(cta_group, "value", cta_group) not in (None, 1):  # None, 1 or tcgen05.CtaGroup.ONE
        raise LayoutError(f"{where}: cta_group={op.cta_group} (TMA for 2-CTA operations) is not supported by cutelab")
    if isinstance(num_multicast, bool) or not isinstance(num_multicast, int) or num_multicast < 1:
        raise LayoutError(f"{where}: num_multicast must be a positive int, got {num_multicast!r}")
    if num_multicast > 1 and not isinstance(op, CopyBulkTensorTileG2SMulticastOp):
        raise LayoutError(f"{where}: num_multicast={num_multicast} needs a CopyBulkTensorTileG2SMulticastOp, got "
                          f"{type(op).__name__}")
    if num_multicast > 16:
        raise LayoutError(f"{where}: num_multicast={num_multicast}: a cluster has at most 16 CTAs")
    layout = getattr(gmem_tensor, "layout", None)
    dtype = internal_type or getattr(gmem_tensor, "element_type", None)
    own = getattr(gmem_tensor, "element_type", None)
    unpack = (internal_type is not None and own is not None and own.width == 4 and own.is_integer
              and internal_type.width == 8 and internal_type.is_integer)  # Int4 -> a byte each in shared memory
    # internal_type over whole-byte elements reinterprets the bytes (the block-scaled GEMMs copy fp8 scale factors
    # as Int16); over 4-bit ones only the unpacking TMA exists
    if internal_type is not None and own is not None and internal_type.width != own.width and own.width < 8 \
            and not unpack:
        from ...errors import user_location

        at = user_location()
        raise LayoutError(f"{where}{f' at {at}' if at else ''}: internal_type={internal_type} over {own} elements "
                          f"(a TMA that widens elements as it copies; of those cutelab has the one that unpacks "
                          f"4-bit integers to bytes, internal_type=Int8 over Int4) is not supported by cutelab")
    if not isinstance(layout, Layout) or dtype is None:
        raise LayoutError(f"{where}: gmem_tensor must be a tensor over a Layout")
    if dtype.name not in _TMA_DTYPE:
        from ...errors import user_location

        at = user_location()
        sub = ("; of the sub-byte types cutelab's TMA copies Float4E2M1FN and Int4 (packed two to a byte)"
               if dtype.width < 8 else "")
        raise LayoutError(f"{where}{f' at {at}' if at else ''}: TMA cannot copy {dtype} elements{sub}")
    from ...dynamic import value_of

    shape, stride = value_of(layout.shape), value_of(layout.stride)  # dynamic extents: cutelab knows their values
    shape = shape if isinstance(shape, tuple) else (shape,)
    stride = stride if isinstance(stride, tuple) else (stride,)
    tiler = tuple(cta_tiler) if isinstance(cta_tiler, (tuple, list)) else (cta_tiler,)
    if len(tiler) == 1:
        tiler = _coordinate_tile(tiler[0], shape) or tiler
    tiler = _hierarchical_tiles(tiler, shape, stride)
    ntiled = None  # of a hierarchical tile, its modes before they are flattened (a staged smem layout has one more)
    if any(isinstance(x, tuple) for x in tiler) and len(shape) >= len(tiler):
        ntiled = len(tiler)
        # a hierarchical tile of hierarchical modes (flash_attn.cute's packed GQA: ((qhead_per_kvhead, m / qhead),
        # d) over ((heads, seqlen), d, batch)): each sub-mode is a TMA dimension, as CuTe flattens them
        fs: list = []
        fd: list = []
        ft: list = []
        for i, t in enumerate(tiler):
            if isinstance(t, tuple) != isinstance(shape[i], tuple) or (
                    isinstance(t, tuple) and len(it.flatten_to_tuple(t)) != len(it.flatten_to_tuple(shape[i]))):
                raise LayoutError(f"{where}: cta_tiler {it.tuple_str(tiler)} is not congruent to the tiled modes of "
                                  f"the global tensor {layout} (mode {i})")
            fs += list(it.flatten_to_tuple(shape[i]))
            fd += list(it.flatten_to_tuple(stride[i]))
            ft += list(it.flatten_to_tuple(t))
        shape = tuple(fs) + shape[len(tiler):]
        stride = tuple(fd) + stride[len(tiler):]
        tiler = tuple(ft)
        layout = Layout._raw(shape, stride)
    if (len(shape) >= len(tiler) and all(type(x) is int for x in tiler)
            and any(isinstance(x, tuple) or (isinstance(d, int) and d == 0)
                    for x, d in zip(shape[:len(tiler)], stride[:len(tiler)]))):
        # hierarchical or broadcast tiled modes (the block-scaled scale-factor tensors of
        # blockscaled_utils.tile_atom_to_shape_SF): the tile's distinct elements as runs of memory
        if unpack:
            raise LayoutError(f"{where}: an unpacking TMA (internal_type={internal_type} over {own}) of a tile with "
                              f"hierarchical or broadcast modes is not supported by cutelab")
        return _runs_atom(op, gmem_tensor, layout, gmem_tensor.element_type, smem_layout, tiler, shape, stride, num_multicast, _one_stage, where)
    if it.depth(shape) > 1 or any(d == 0 for d in stride[len(tiler):]):
        # modes past the tiled ones may be nested (FMHA's ((heads per group, groups), batch)): each of their
        # sub-modes is a TMA dimension of box 1, as CuTe flattens them; sub-modes of one element are dropped,
        # and so are broadcast ones (stride 0: the FMHA's query heads sharing a K/V head, or its batch of a
        # variable-length problem), which move no address: the tensor map has no dimension for them, as CuTe
        # collapses them
        if any(isinstance(x, tuple) for x in shape[:len(tiler)]):
            raise LayoutError(f"{where}: the tiled modes of the global tensor must be flat, got {layout}")
        fs, fd = it.flatten_to_tuple(shape), it.flatten_to_tuple(stride)
        keep = [i for i in range(len(fs)) if i < len(tiler) or (fs[i] != 1 and not (isinstance(fd[i], int)
                                                                                  and fd[i] == 0))]
        shape, stride = tuple(fs[i] for i in keep), tuple(fd[i] for i in keep)
        layout = Layout._raw(shape, stride)
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in shape + stride):
        raise LayoutError(f"{where}: the global tensor must have a layout of integers, got {layout}")
    # dynamic extents and strides (mark_layout_dynamic) are DynInts: the descriptor takes their values
    shape, stride = tuple(int(x) for x in shape), tuple(int(x) for x in stride)
    n = len(shape)
    if not 1 <= n <= 5:
        raise LayoutError(f"{where}: TMA handles tensors of rank 1 to 5, got rank {n}")
    # a Tile of stride-1 layouts (the epilogue tiles of the SM100 helpers, (128:1, 32:1)) is its extents
    tiler = tuple(it.product(x.shape) if isinstance(x, Layout) and x == Layout._raw(x.shape, 1)
                  and type(x.shape) is int else x for x in tiler)
    if len(tiler) > n or not all(type(x) is int and x > 0 for x in tiler):
        raise LayoutError(f"{where}: cta_tiler must be positive ints, at most one per mode of the tensor")
    box_t = tiler + (1,) * (n - len(tiler))  # box per tensor mode
    # a mode of extent 1 has no stride that matters (its coordinate is 0): as CuTe DSL 4.8.1 makes it, its stride is
    # 0 and it comes last (make_tiled_tma_atom of (128,1,1):(64,1,1) gives (128,1,1):(64@0,0,0); mamba2_ssd's
    # tensors of one batch, head or chunk have such modes with a torch stride of one element)
    if any(shape[i] == 1 and stride[i] != 0 for i in range(n)) and any(shape[i] > 1 for i in range(n)):
        stride = tuple(0 if shape[i] == 1 else stride[i] for i in range(n))
    order = sorted(range(n), key=lambda i: (shape[i] == 1 and n > 1, stride[i], i))
    if stride[order[0]] != 1:
        raise LayoutError(f"{where}: TMA needs a mode of stride 1 (a contiguous innermost dimension); strides are "
                          f"{it.tuple_str(stride)}")
    bits = dtype.width  # 4-bit elements go two to a byte: byte counts are elements * bits / 8
    gbits = own.width if unpack else bits  # global memory's (an unpacking TMA's shared memory has bytes)
    for a, b in zip(order, order[1:]):
        if stride[b] < stride[a] * shape[a] and shape[b] > 1:
            raise LayoutError(f"{where}: modes {a} and {b} overlap (stride {stride[b]} < {stride[a]} * {shape[a]}); "
                              f"TMA needs nested strides")
        if (stride[b] * gbits) % 128:
            raise LayoutError(f"{where}: mode {b} has a byte stride of {stride[b] * gbits / 8:g}, not a multiple of 16 "
                              f"as TMA requires")
        if stride[b] * gbits // 8 >= 1 << 40:
            raise LayoutError(f"{where}: mode {b}'s byte stride {stride[b] * gbits // 8} is 2^40 or more")
    stored = smem_layout
    hierarchical = ntiled is not None  # tiled modes of the tensor are nested: its sub-modes are the TMA dimensions
    ntiled = ntiled or len(tiler)
    if not _one_stage and _rank(smem_layout) == ntiled + 1:  # staged (the stage last): one stage's layout
        from ...swizzle import select

        smem_layout = select(smem_layout, mode=list(range(ntiled)))
    sw, outer = _swizzle_of(smem_layout, dtype, where)
    order = _smem_order(order, outer, box_t, len(tiler))
    if (box_t[order[0]] * bits) % 128:
        raise LayoutError(f"{where}: the tile's innermost extent is {box_t[order[0]] * bits / 8:g} bytes; TMA boxes "
                          f"need a multiple of 16")
    inner_bytes = box_t[order[0]] * bits // 8
    tile_t = box_t  # the tile per tensor mode; a box is narrower along the innermost mode when the tile is
    # wider than the swizzle span: the tile is then several boxes side by side (as CuTe issues them)
    if sw and inner_bytes > TMA_SWIZZLE_BYTES[sw]:
        chunk = TMA_SWIZZLE_BYTES[sw] * 8 // bits
        if box_t[order[0]] % chunk:
            raise LayoutError(f"{where}: the tile's innermost extent ({box_t[order[0]]} elements) is not a multiple "
                              f"of the {TMA_SWIZZLE_BYTES[sw]}-byte swizzle span ({chunk} elements)")
        box_t = tuple(chunk if i == order[0] else e for i, e in enumerate(box_t))
    elif not sw and order[0] < len(tiler):
        # unswizzled shared memory whose rows are narrower than the tile's innermost extent (a K-major operand in
        # 64-byte rows): boxes as wide as the rows, side by side, as CuTe cuts the tile
        chunk = _unswizzled_row(outer, tuple(box_t[: len(tiler)]), order[0], bits)
        if chunk > 256:  # a box is at most 256 elements per mode: the widest that cuts the tile evenly (CuTe DSL
            # 4.8.1 makes a 1-D tile of 16384 f32, CUTLASS's all_reduce_tma, boxes of 256)
            chunk = next(c for c in range(256, 0, -1) if chunk % c == 0)
        if chunk < box_t[order[0]]:
            box_t = tuple(chunk if i == order[0] else e for i, e in enumerate(box_t))
    for i in range(n):
        if box_t[i] > 256:
            raise LayoutError(f"{where}: the tile is {box_t[i]} along mode {i}; a TMA box is at most 256 per mode")
        # a box larger than the tensor is allowed (cuTensorMapEncodeTiled bounds boxDim by 256 only): its
        # elements past the tensor's end are out of bounds, zero-filled by loads and dropped by stores
    # byte strides: the innermost dimension's is the element's (a byte for 4-bit elements); a mode of extent 1 keeps
    # stride 0, as CuTe's descriptor does (cuTensorMapEncodeTiled takes 0, a multiple of 16; not 1)
    bstrides = tuple(max(1, stride[i] * gbits // 8) if k == 0 else stride[i] * gbits // 8 for k, i in enumerate(order))
    desc = TmaDescriptor(dtype, tuple(shape[i] for i in order), bstrides,
                         tuple(box_t[i] for i in order), sw, tuple(order), own if unpack else None)
    # the smem layout must put each tile element where TMA puts it
    tile_shape = tuple(tile_t[: len(tiler)])
    if it.product(outer.shape) != it.product(tile_shape):
        raise LayoutError(f"{where}: smem_layout has {it.product(outer.shape)} elements, the tile "
                          f"{it.tuple_str(tile_shape)} has {it.product(tile_shape)}")
    want = desc.placement()
    # box linear index of tile element c (tensor-mode coords): sum over TMA dims, innermost fastest
    grid = np.indices(tile_shape).reshape(len(tile_shape), -1)  # tensor-mode coords, tile modes only
    full = np.zeros((n, grid.shape[1]), dtype=np.int64)
    full[: len(tile_shape)] = grid
    inner = order[0]
    nbox = tile_t[inner] // box_t[inner]
    box_of = full[inner] // box_t[inner]  # which box of the tile each element is in
    lin = np.zeros(grid.shape[1], dtype=np.int64)
    mul = 1
    for d, i in enumerate(order):
        lin += (full[i] % box_t[i] if i == inner else full[i]) * mul
        mul *= desc.box[d]
    col = np.zeros(grid.shape[1], dtype=np.int64)  # column-major index of the tile coordinate
    mul = 1
    for i, e in enumerate(tile_shape):
        col += grid[i] * mul
        mul *= e
    # compared in elements (the swizzle on bytes written on element offsets: swizzle_base_elems)
    lay = _offsets(outer, col)
    # each box lands at the smem start of its first element, which must be a whole swizzle pattern (or 16 bytes)
    period = ((1 << (7 + sw)) if sw else 16) * 8 // bits
    starts = np.zeros(nbox, dtype=np.int64)
    for j in range(nbox):
        first = np.nonzero((box_of == j) & (lin == 0))[0]
        starts[j] = int(lay[first[0]]) if first.size else 0
        if starts[j] % period:
            raise LayoutError(f"{where}: box {j} of the tile starts at smem byte {int(starts[j]) * bits / 8:g}, not at "
                              f"a multiple of {period * bits // 8} bytes (the swizzle pattern) as a TMA box must")
    tma_at = starts[box_of] + want[lin]
    if sw:
        m = swizzle_base_elems(dtype)
        lay = lay ^ (((lay >> (m + 3)) & ((1 << sw) - 1)) << m)
    bad = np.nonzero(lay != tma_at)[0]
    if bad.size:
        k = int(bad[0])
        c = tuple(int(x) for x in grid[:, k])
        raise LayoutError(
            f"{where}: TMA writes tile element {it.tuple_str(c)} to smem byte {int(tma_at[k]) * bits / 8:g} (the box "
            f"in row-major order, innermost mode {order[0]} fastest, then the {TMA_SWIZZLE_BYTES[sw] or 'no'}"
            f"{'B' if sw else ''} swizzle) but smem_layout puts it at byte {int(lay[k]) * bits / 8:g}; use an SM90 "
            f"smem layout atom whose major mode is the tensor's contiguous mode")
    boxes = [(tuple(j * box_t[inner] if i == inner else 0 for i in range(n)), int(starts[j]))
             for j in range(nbox)]
    tma_tensor, coord_layout = _coordinate_view(gmem_tensor, shape, order, tiler, hierarchical)
    if coord_layout is not None and not hierarchical:  # (a nested view keeps its own coordinates' iterator)
        tma_tensor = _tma_view(tma_tensor, tuple(desc.modes), gmem_tensor.layout.shape)
    if num_multicast == 1:
        atom = TmaCopyAtom(op, desc, coord_layout or layout, smem_layout, tile_shape, boxes)
        atom.host_engine = getattr(gmem_tensor, "engine", None)  # copy_tensormap finds its kernel parameter by it
        atom.tensor_layout = layout  # the global tensor's own layout (gmem_layout may be a coordinate view's)
        return TmaInfo(atom, tma_tensor, stored)
    atom = _multicast_atom(op, desc, coord_layout or layout, smem_layout, outer, tile_shape, order, num_multicast,
                           boxes, where)
    atom.host_engine = getattr(gmem_tensor, "engine", None)
    atom.tensor_layout = layout
    return TmaInfo(atom, tma_tensor, stored)


def _smem_order(order: list, outer: Layout, box_t: tuple, ntile: int) -> list:
    """The descriptor's dimension order: the contiguous mode first, then the tile's other modes (of more than one
    element) in the order of their steps in shared memory, then the modes of one box element in the order of
    their global strides (``order``). CuTe builds the TMA dimensions from the smem layout's inverse, so the box
    lands in shared memory in the smem layout's order, whatever the global strides' order is (a hierarchical
    mode ((2, M / 2)):((M / 2 * K, K)) of a K-major tile: TMA dimensions K, then the 2, then M / 2; the tensor map
    takes them in any order).

    >>> _smem_order([2, 1, 0], Layout._raw((2, 96, 64), (64, 128, 1)), (2, 96, 64), 3)
    [2, 0, 1]
    >>> _smem_order([0, 1, 2, 3], Layout._raw((64, 1, 64, 1), (1, 0, 64, 0)), (64, 1, 64, 1), 4)  # heads: one element
    [0, 1, 2, 3]
    """
    tile = box_t[:ntile]
    if it.product(outer.shape) != it.product(tile):
        return order  # make_tiled_tma_atom reports it
    step, mul = {}, 1
    for i, e in enumerate(tile):
        if e > 1:
            step[i] = int(_offsets(outer, np.array([mul]))[0])
        mul *= e
    inner = order[0]
    tiled = sorted((i for i in step if i != inner), key=lambda i: (step[i], i))
    if [i for i in order[1:] if i in step] == tiled:
        return order  # the tiled modes already come in shared memory's order: the global strides' order stands
    # the tiled modes take, in shared memory's order, the places they hold in the global strides' order; a mode of
    # one box element stays where its stride puts it (moving it changes the copies' coordinate order, which the
    # kernels' TMA coordinates follow: CUTLASS's Hopper FMHA's (d, heads, seqlen, batch) read the wrong boxes)
    moved = iter(tiled)
    return [inner] + [next(moved) if i in step else i for i in order[1:]]


def _coordinate_tile(cv: Any, shape: tuple) -> Any:
    """A CTA-value layout over coordinates (composition(make_identity_layout(shape), tile), quack's epilogue) whose
    mode k steps coordinate k by 1, as the tile of its extents: flat, (64,32):(1@0,1@1) is (64, 32); over a
    hierarchical mode of the tensor (quack's concatenated output, ((2, m / 2), n)), its sub-modes step the
    sub-coordinates in order, ((2,32),32):((1@0@0,1@1@0),1@1) is ((2, 32), 32) (a sub-mode it does not step is 1);
    nested over flat coordinates (CUTLASS's MLA decode gives the zipped_divide's tile mode, ((64,64)):((1@0,1@1))),
    flattened mode i stepping coordinate i, the flat tile (64, 64). None for any other tiler.

    >>> from cutelab.layout import ScaledBasis as E
    >>> _coordinate_tile(Layout._raw(((2, 32), 32), ((E(1, (0, 0)), E(1, (0, 1))), E(1, (1,)))), ((2, 96), 64, 3))
    ((2, 32), 32)
    >>> _coordinate_tile(Layout._raw((64, 32), (E(1, (0,)), E(1, (1,)))), (128, 64))
    (64, 32)
    >>> _coordinate_tile(Layout._raw(((64, 64),), ((E(1, (0,)), E(1, (1,))),)), (512, 576))
    (64, 64)
    >>> _coordinate_tile(Layout._raw(((32, 2), 32), ((E(1, (0, 1)), E(1, (0, 0))), E(1, (1,)))), ((2, 96), 64)) is None
    True
    """
    from ...layout import ScaledBasis

    if not isinstance(cv, Layout) or not isinstance(cv.shape, tuple) or not isinstance(cv.stride, tuple):
        return None
    fshape, fstride = it.flatten_to_tuple(cv.shape), it.flatten_to_tuple(cv.stride)
    if all(type(x) is int for x in fshape) and all(
            isinstance(d, ScaledBasis) and d.value == 1 and d.path == (i,) for i, d in enumerate(fstride)):
        return tuple(fshape)  # flat coordinates (the flat tile, and a nested tile mode over them)
    out: list = []
    for k, (s, d) in enumerate(zip(cv.shape, cv.stride)):
        fs, fd = it.flatten_to_tuple(s), it.flatten_to_tuple(d)
        if not all(type(x) is int for x in fs) or not all(
                isinstance(b, ScaledBasis) and b.value == 1 and b.path[:1] == (k,) for b in fd):
            return None
        if not isinstance(s, tuple):
            if fd[0].path != (k,):
                return None
            out.append(s)
            continue
        sub = shape[k] if k < len(shape) else None
        paths = [b.path[1:] for b in fd]
        if not isinstance(sub, tuple) or any(len(p) != 1 for p in paths):
            return None
        js = [p[0] for p in paths]
        if js != sorted(set(js)) or js[-1] >= len(sub):  # the tile's sub-modes in the tensor's order
            return None
        ext = dict(zip(js, fs))
        out.append(tuple(ext.get(j, 1) for j in range(len(sub))))
    return tuple(out)


def _hierarchical_tiles(tiler: tuple, shape: tuple, stride: tuple) -> tuple:
    """An int tile of a hierarchical tiled mode as a tile of its sub-modes, as CuTe flattens it into TMA
    dimensions (quack's concatenated operands: a mode ((2, M / 2)):((ld, 2 ld)) under a tile of 192 is (2, 96)):
    the tile's coordinate m is the sub-modes' colexicographic coordinate, so the tile takes whole sub-modes
    while its extent is a multiple of them, then what is left of it from the next (the last takes the rest,
    past its extent too: a partial tile; a sub-mode before the last takes part of itself only if the part
    divides it, so that no tile straddles two of its steps). The tiler is returned unchanged when a tiled mode has a broadcast
    (stride-0) sub-mode (the block-scaled scale factors: TmaRunsAtom) or the tile does not split this way.

    >>> _hierarchical_tiles((192, 64), ((2, 500), 64), ((64, 128), 1))
    ((2, 96), 64)
    >>> _hierarchical_tiles((192, 64), ((5, 500), 64), ((64, 320), 1))
    (192, 64)
    """
    if len(shape) < len(tiler) or not any(isinstance(shape[i], tuple) and type(t) is int for i, t in enumerate(tiler)):
        return tiler
    if any(isinstance(d, int) and d == 0 for i in range(len(tiler)) for d in it.flatten_to_tuple(stride[i])):
        return tiler
    out = []
    for i, t in enumerate(tiler):
        if not (isinstance(shape[i], tuple) and type(t) is int):
            out.append(t)
            continue
        subs = it.flatten_to_tuple(shape[i])
        if not all(isinstance(e, int) for e in subs):
            return tiler
        parts, rem = [], t
        for k, e in enumerate(subs):
            e = int(e)
            if k == len(subs) - 1 or (rem < e and e % rem == 0):  # the rest (no tile straddles two of e)
                parts.append(rem)
                rem = 1
            elif rem % e == 0:
                parts.append(e)
                rem //= e
            else:
                return tiler
        out.append(tuple(parts))
    return tuple(out)


def _unswizzled_row(outer: Layout, tile: tuple, inner: int, bits: int) -> int:
    """The elements of the tile's innermost mode that an unswizzled smem layout keeps contiguous from the tile's
    origin, as a power of two dividing that mode's extent and of at least 16 bytes (the extent itself when
    all of it is contiguous, or no narrower box would do)."""
    e = tile[inner]
    step = 1
    for x in tile[:inner]:
        step *= x
    offs = _offsets(outer, np.arange(e, dtype=np.int64) * step)
    run = e
    bad = np.nonzero(offs - offs[0] != np.arange(e))[0]
    if bad.size:
        run = int(bad[0])
    w = e
    while w > run and w % 2 == 0 and (w // 2) * bits >= 128:
        w //= 2
    return w if w <= run and not e % w else e
