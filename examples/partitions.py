"""The three partition styles of the seed "CuTe partitions", over numpy arrays, on the CPU.

Each style copies S into D the way the seed's copy kernel does (every thread copies its share
through a register fragment), and reports, for one block, which thread touches each element.
All threads of many blocks are handled at once: their indices are numpy arrays, so each view
below is a whole batch of per-thread views (shape: blocks x threads).

    python examples/partitions.py            # 8192 x 8192, as in the seed
    python examples/partitions.py 256 512    # a smaller matrix
"""

from __future__ import annotations

import sys
import time

import numpy as np

import cutelab as cute
from cutelab.runtime import from_dlpack


def _copy_through_fragment(src: cute.Tensor, dst: cute.Tensor) -> None:
    fragment = cute.make_fragment_like(src)
    fragment.store(src.load())
    dst.store(fragment.load())


def _chunks(n: int, per: int):
    for start in range(0, n, per):
        yield np.arange(start, min(n, start + per), dtype=np.int64)


def tiled_divide_style(S: np.ndarray, D: np.ndarray, block_shape=(1, 16), num_threads=256, chunk=1024):
    """Pure inner partition: each thread takes one block_shape tile of tiled_divide."""
    tS = cute.tiled_divide(from_dlpack(S, assumed_align=16), block_shape)  # ((M,N), m', n')
    tD = cute.tiled_divide(from_dlpack(D, assumed_align=16), block_shape)
    num = cute.size(tD, mode=[2])
    grid = cute.size(tD, mode=[1]) * cute.size(tD, mode=[2]) // num_threads
    tidx = np.arange(num_threads, dtype=np.int64)[None, :]
    for bidx in _chunks(grid, chunk):
        ids = bidx[:, None] * num_threads + tidx
        coord = ((None, None), ids // num, ids % num)
        _copy_through_fragment(tS[coord], tD[coord])
    return grid


def outer_partition_style(S: np.ndarray, D: np.ndarray, block_shape=(32, 256), thread_shape=(8, 32), chunk=512):
    """Inner partition by block (zipped_divide) + outer partition by thread (local_partition)."""
    tS = cute.zipped_divide(from_dlpack(S, assumed_align=16), block_shape)  # ((M,N), (m',n'))
    tD = cute.zipped_divide(from_dlpack(D, assumed_align=16), block_shape)
    thr_layout = cute.make_layout(thread_shape, stride=(thread_shape[1], 1))
    grid = cute.size(tD, mode=[1])
    tidx = np.arange(cute.size(thr_layout), dtype=np.int64)[None, :]
    for bidx in _chunks(grid, chunk):
        coord = ((None, None), bidx[:, None])
        thr_S = cute.local_partition(tS[coord], thr_layout, tidx)
        thr_D = cute.local_partition(tD[coord], thr_layout, tidx)
        _copy_through_fragment(thr_S, thr_D)
    return grid


def tv_style(S: np.ndarray, D: np.ndarray, thread_shape=(32, 8), value_shape=(4, 8), chunk=512):
    """Thread-value partition: make_layout_tv, then compose each block tile with the TV layout."""
    thr_layout = cute.make_layout(thread_shape, stride=(thread_shape[1], 1))
    val_layout = cute.make_layout(value_shape, stride=(value_shape[1], 1))
    tiler_mn, tv_layout = cute.make_layout_tv(thr_layout, val_layout)
    tS = cute.zipped_divide(from_dlpack(S, assumed_align=16), tiler_mn)
    tD = cute.zipped_divide(from_dlpack(D, assumed_align=16), tiler_mn)
    grid = cute.size(tD, mode=[1])
    tidx = np.arange(cute.size(tv_layout, mode=[0]), dtype=np.int64)[None, :]
    for bidx in _chunks(grid, chunk):
        coord = ((None, None), bidx[:, None])
        val_S = cute.composition(tS[coord], tv_layout)[(tidx, None)]
        val_D = cute.composition(tD[coord], tv_layout)[(tidx, None)]
        _copy_through_fragment(val_S, val_D)
    return grid


STYLES = {"tiled_divide": tiled_divide_style, "outer": outer_partition_style, "tv": tv_style}


def owners(style: str, shape=(8192, 8192)) -> np.ndarray:
    """Which thread of block 0 touches each element of the matrix (-1: not block 0's).

    Runs the style over an int32 "matrix" with S = thread ids of block 0 written through the same
    partitioned views: each thread stores its own index into its share.
    """
    own = np.full(shape, -1, dtype=np.int32)
    t = from_dlpack(own, assumed_align=16)
    if style == "tiled_divide":
        tt = cute.tiled_divide(t, (1, 16))
        num = cute.size(tt, mode=[2])
        ids = np.arange(256, dtype=np.int64)
        part = tt[((None, None), ids // num, ids % num)]
        n_threads = 256
    elif style == "outer":
        thr = cute.make_layout((8, 32), stride=(32, 1))
        blk = cute.zipped_divide(t, (32, 256))[((None, None), 0)]
        part = cute.local_partition(blk, thr, np.arange(256, dtype=np.int64))
        n_threads = 256
    else:
        tiler, tv = cute.make_layout_tv(cute.make_layout((32, 8), stride=(8, 1)), cute.make_layout((4, 8), stride=(8, 1)))
        blk = cute.zipped_divide(t, tiler)[((None, None), 0)]
        part = cute.composition(blk, tv)[(np.arange(256, dtype=np.int64), None)]
        n_threads = 256
    part.store(np.arange(n_threads, dtype=np.int32)[:, None])
    return own


def main(argv: list[str]) -> int:
    m, n = (int(argv[0]), int(argv[1])) if len(argv) >= 2 else (8192, 8192)
    rng = np.random.default_rng(0)
    S = rng.standard_normal((m, n), dtype=np.float32)
    for name, fn in STYLES.items():
        D = np.zeros_like(S)
        t0 = time.perf_counter()
        grid = fn(S, D)
        dt = time.perf_counter() - t0
        ok = np.array_equal(S, D)
        print(f"{name:>12}: {m}x{n}, {grid} blocks, copied in {dt:.2f} s, D == S: {ok}")
        if not ok:
            return 1
    for name in STYLES:
        own = owners(name, (m, n))
        rows, cols = np.nonzero(own >= 0)
        print(f"{name:>12}: block 0 covers rows {rows.min()}..{rows.max()}, cols {cols.min()}..{cols.max()}")
        for tid in (0, 1, 255):
            r, c = np.nonzero(own == tid)
            pts = list(zip(r.tolist(), c.tolist()))
            print(f"{'':>14}thread {tid:3d} touches {len(pts)} elements: {pts[:4]}{' ...' if len(pts) > 4 else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
