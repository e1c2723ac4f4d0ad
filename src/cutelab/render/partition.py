"""Who owns each element of a tensor: the seeds' three partition styles, computed with the algebra.

Each function returns ``(block, thread, value)``: three (M, N) int arrays giving, for every
element (m, n) of an M x N tensor, the block that owns it, the thread within that block, and
the index of the element among that thread's values. The ``*_figure`` functions draw them:
cells coloured by thread, labelled T#/V#, thick borders between blocks.

The tensor itself never matters for ownership, only its shape: the partitions are computed on
the col-major *index* layout of the shape (``make_layout((M, N))``), so an offset of a divided
layout is the colexicographic index m + M*n of the element it names.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import int_tuple as it
from ..algebra import make_layout_tv, tiled_divide, zipped_divide
from ..errors import LayoutError
from ..layout import Layout, make_layout, size
from . import palette
from .figure import Figure, Grid, _headers, as_layout

__all__ = [
    "tiled_ownership", "outer_ownership", "tv_ownership",
    "tiled_partition_figure", "outer_partition_figure", "tv_partition_figure",
]


def _scatter(M: int, N: int, offs: np.ndarray, *arrays: np.ndarray) -> list[np.ndarray]:
    """Place arrays[k][i] at the element whose col-major index is offs[i]; -1 elsewhere."""
    out = []
    for a in arrays:
        g = np.full(M * N, -1, dtype=np.int64)
        g[offs] = a
        out.append(g.reshape(N, M).T)
    return out


def _check_divides(op: str, shape: Sequence[int], tile: Sequence[int]) -> None:
    for k, (s, t) in enumerate(zip(shape, tile)):
        if t <= 0 or s % t:
            raise LayoutError(f"{op}: tensor shape {it.tuple_str(tuple(shape))} is not divisible by "
                              f"{it.tuple_str(tuple(tile))} at mode {k} ({s} % {t} != 0)")


def tiled_ownership(tensor_shape: Sequence[int], block_shape: Sequence[int], num_threads: int):
    """Pure inner partition (seed: cute-partitions, first kernel).

    tiled = tiled_divide(tensor, block_shape) has shape ((bm, bn), m', n'); the flat thread id
    ``block*num_threads + tidx`` takes the tile ((None, None), id // n', id % n').
    """
    M, N = tensor_shape
    _check_divides("tiled partition", (M, N), block_shape)
    tiled = tiled_divide(make_layout((M, N)), tuple(block_shape))  # ((bm,bn), m', n')
    E = size(tiled.shape[0])
    Mp, Np = size(tiled.shape[1]), size(tiled.shape[2])
    if (Mp * Np) % num_threads:
        raise LayoutError(f"tiled partition: {Mp * Np} tiles do not split evenly over {num_threads} threads")
    offs = tiled.offsets()
    i = np.arange(offs.size, dtype=np.int64)
    e, x, y = i % E, (i // E) % Mp, i // (E * Mp)
    gid = x * Np + y  # inverse of x = id // num, y = id % num
    return tuple(_scatter(M, N, offs, gid // num_threads, gid % num_threads, e))


def outer_ownership(tensor_shape: Sequence[int], block_shape: Sequence[int], thr_layout: Any):
    """Inner + outer partition (seed: cute-partitions, second kernel).

    zipped_divide(tensor, block_shape) gives ((BM, BN), blocks): block b = bidx takes column b.
    Inside a block, local_partition(tile, thr_layout, t) takes the elements whose coordinate is
    congruent to thread t's position in thr_layout: zipped_divide(tile, shape(thr_layout)) gives
    ((TM, TN), rest); the tile mode's coordinate picks the thread (thr_layout of it), the rest
    mode's index is the value.
    """
    M, N = tensor_shape
    thr = as_layout(thr_layout)
    tshape = tuple(it.product_each(thr.shape)) if isinstance(thr.shape, tuple) else (thr.shape,)
    _check_divides("outer partition", (M, N), block_shape)
    _check_divides("outer partition (thread layout in block)", tuple(block_shape), tshape)
    blocks = zipped_divide(make_layout((M, N)), tuple(block_shape))  # ((BM,BN),(m',n'))
    inner = zipped_divide(make_layout(tuple(block_shape)), tshape)   # ((TM,TN),(rm,rn))
    E, TT = size(blocks.shape[0]), size(inner.shape[0])
    in_offs = inner.offsets()  # block-local col-major index of (tile coord a, rest r)
    j = np.arange(in_offs.size, dtype=np.int64)
    thread_of = np.empty(E, dtype=np.int64)
    value_of = np.empty(E, dtype=np.int64)
    thread_of[in_offs] = thr.offsets()[j % TT]
    value_of[in_offs] = j // TT
    offs = blocks.offsets()
    i = np.arange(offs.size, dtype=np.int64)
    e, b = i % E, i // E  # e: block-local col-major index (blocks is (M,N) composed with a tiler of compact modes)
    return tuple(_scatter(M, N, offs, b, thread_of[e], value_of[e]))


def tv_ownership(tensor_shape: Sequence[int], thr_layout: Any, val_layout: Any):
    """Thread-value partition (seed: cute-partitions, third kernel).

    tiler_mn, tv = make_layout_tv(thr, val); zipped_divide(tensor, tiler_mn) gives the blocks;
    composition(tile, tv) sends (t, v) to the tile element tv((t, v)) (col-major in tiler_mn).
    """
    M, N = tensor_shape
    tiler, tv = make_layout_tv(as_layout(thr_layout), as_layout(val_layout))
    tiler = tuple(tiler)
    _check_divides("tv partition", (M, N), tiler)
    blocks = zipped_divide(make_layout((M, N)), tiler)
    E = size(blocks.shape[0])
    T = size(tv.shape[0])
    tv_offs = tv.offsets()
    k = np.arange(tv_offs.size, dtype=np.int64)
    thread_of = np.full(E, -1, dtype=np.int64)
    value_of = np.full(E, -1, dtype=np.int64)
    thread_of[tv_offs] = k % T
    value_of[tv_offs] = k // T
    offs = blocks.offsets()
    i = np.arange(offs.size, dtype=np.int64)
    e, b = i % E, i // E
    return tuple(_scatter(M, N, offs, b, thread_of[e], value_of[e]))


def _ownership_figure(title: str, block: np.ndarray, thread: np.ndarray, value: np.ndarray,
                      notes: list[str]) -> Figure:
    M, N = thread.shape
    nthr = int(thread.max()) + 1 if thread.size else 0
    nblk = int(block.max()) + 1 if block.size else 0
    lab = np.char.add(np.char.add(np.char.add("T", thread.astype(str)), "\n"), np.char.add("V", value.astype(str)))
    if nblk > 1:
        lab = np.char.add(np.char.add("B", block.astype(str)), lab)
    lab = np.where(thread < 0, "", lab)
    g = Grid(f"{M}x{N} tensor", thread, lab, palette.categorical(max(nthr, 1)), _headers(M), _headers(N),
             groups=block, legend=[(t, f"T{t}") for t in range(nthr)])
    notes = notes + [f"{nblk} block(s) (thick borders), {nthr} thread(s) per block (colours); "
                     f"cell = {'B<block>' if nblk > 1 else ''}T<thread> / V<value>"]
    return Figure(title, [g], notes, kind="partition")


def tiled_partition_figure(tensor_shape=(16, 64), block_shape=(1, 16), num_threads=16) -> Figure:
    """Picture of the pure inner partition: tiled_divide by block_shape, one tile per thread."""
    b, t, v = tiled_ownership(tensor_shape, block_shape, num_threads)
    M, N = tensor_shape
    tiled = tiled_divide(make_layout((M, N), stride=(N, 1)), tuple(block_shape))
    notes = [f"tiled_divide(({M},{N}):({N},1), {it.tuple_str(tuple(block_shape))}) = {tiled}",
             f"id = bidx*{num_threads} + tidx; tile ((None,None), id // {size(tiled.shape[2])}, id % {size(tiled.shape[2])})"]
    return _ownership_figure(f"inner partition: tiled_divide by {it.tuple_str(tuple(block_shape))}, "
                             f"{num_threads} threads/block", b, t, v, notes)


def outer_partition_figure(tensor_shape=(16, 32), block_shape=(8, 16), thr_layout="(4,8):(8,1)") -> Figure:
    """Picture of inner + outer partition: zipped_divide by block_shape, local_partition by thr_layout."""
    thr = as_layout(thr_layout)
    if not isinstance(thr.shape, tuple) or len(thr.shape) != 2:
        raise LayoutError(f"outer partition: the thread layout {thr} must have rank 2 (rows, columns of threads)")
    b, t, v = outer_ownership(tensor_shape, block_shape, thr)
    M, N = tensor_shape
    notes = [f"zipped_divide(({M},{N}):({N},1), {it.tuple_str(tuple(block_shape))}) = "
             f"{zipped_divide(make_layout((M, N), stride=(N, 1)), tuple(block_shape))}",
             f"local_partition(tile, {thr}, tidx): element (i,j) of a tile -> thread {thr}(i % {size(thr.shape[0])}, j % {size(thr.shape[1])})"]
    return _ownership_figure(f"outer partition: block {it.tuple_str(tuple(block_shape))}, threads {thr}", b, t, v, notes)


def tv_partition_figure(tensor_shape=None, thr_layout="(4,2):(2,1)", val_layout="(2,4):(4,1)") -> Figure:
    """Picture of the thread-value partition: make_layout_tv + zipped_divide + composition.

    Without a tensor_shape, the tensor is 2 x 2 tiles of make_layout_tv's tiler (one tile when a
    tile has more than 4096 elements).
    """
    thr, val = as_layout(thr_layout), as_layout(val_layout)
    tiler, tv = make_layout_tv(thr, val)
    if tensor_shape is None:
        tm, tn = tuple(tiler) if isinstance(tiler, tuple) and len(tiler) == 2 else (it.product(tiler), 1)
        k = 1 if tm * tn > 4096 else 2
        tensor_shape = (k * tm, k * tn)
    b, t, v = tv_ownership(tensor_shape, thr, val)
    notes = [f"make_layout_tv({thr}, {val}) = {it.tuple_str(tuple(tiler))}, {tv}",
             "element of a block = composition(tile, tv)((tidx, v))"]
    return _ownership_figure(f"TV partition: threads {thr}, values {val}", b, t, v, notes)
