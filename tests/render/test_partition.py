"""Ownership of tensor elements: each style against the seeds' kernels' own index arithmetic."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
from cutelab import render as R


@pytest.mark.parametrize("shape,block,nthr", [((16, 64), (1, 16), 16), ((8, 32), (2, 8), 4), ((4, 16), (1, 16), 2)])
def test_tiled_matches_kernel_index_math(shape, block, nthr):
    M, N = shape
    b, t, v = R.tiled_ownership(shape, block, nthr)
    bm, bn = block
    num = N // bn  # size(S, mode=[2])
    for bidx in range(M * N // (bm * bn) // nthr):
        for tidx in range(nthr):
            gid = bidx * nthr + tidx
            x, y = gid // num, gid % num
            for e in range(bm * bn):
                m, n = x * bm + e % bm, y * bn + e // bm
                assert (b[m, n], t[m, n], v[m, n]) == (bidx, tidx, e)


def test_outer_matches_local_partition_rule():
    shape, block, thr = (16, 32), (8, 16), cute.Layout.parse("(4,8):(8,1)")
    b, t, v = R.outer_ownership(shape, block, thr)
    for m in range(16):
        for n in range(32):
            i, j = m % 8, n % 16
            assert t[m, n] == thr(i % 4, j % 8)
            assert b[m, n] == (m // 8) + 2 * (n // 16)
            assert v[m, n] == i // 4 + 2 * (j // 8)
    # every thread holds the same number of elements in every block
    for blk in range(4):
        counts = np.bincount(t[b == blk])
        assert (counts == 4).all()


def test_outer_seed_sizes():
    # the seed: block (32,256), threads (8,32):(32,1): each thread 4x8 = 32 elements per block
    b, t, v = R.outer_ownership((32, 256), (32, 256), "(8,32):(32,1)")
    assert (np.bincount(t.ravel()) == 32).all()
    assert v.max() == 31


def test_tv_matches_composition():
    thr, val = cute.Layout.parse("(4,2):(2,1)"), cute.Layout.parse("(2,4):(4,1)")
    tiler, tv = cute.make_layout_tv(thr, val)
    TM, TN = tiler
    b, t, v = R.tv_ownership((16, 16), thr, val)
    for blk_m in range(16 // TM):
        for blk_n in range(16 // TN):
            for tt in range(cute.size(thr)):
                for vv in range(cute.size(val)):
                    m, n = cute.idx2crd(tv((tt, vv)), (TM, TN))
                    M_, N_ = blk_m * TM + m, blk_n * TN + n
                    assert (b[M_, N_], t[M_, N_], v[M_, N_]) == (blk_m + (16 // TM) * blk_n, tt, vv)


def test_bad_sizes_raise_layout_error():
    with pytest.raises(cute.LayoutError, match="not divisible"):
        R.tiled_ownership((16, 60), (1, 16), 4)
    with pytest.raises(cute.LayoutError, match="not divisible"):
        R.outer_ownership((16, 32), (8, 16), "(3,8):(8,1)")
