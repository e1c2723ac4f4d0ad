"""The SM90 GEMM example's stream-K tail (``HopperGemm(stream_k=True)``, examples/gemm/sm90_streamk.py): the schedule's
segments, the kernel on the CPU against numpy (partial sums through a NaN-filled workspace, flags left at zero), its
CUDA for sm_90a, and its refusals."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.launch.plan import last_launch

from sm90_util import nvcc_compiles

_EX = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "gemm", "sm90_gemm.py")


def _example():
    spec = importlib.util.spec_from_file_location("sm90_gemm_example_streamk", _EX)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("units,clusters,k_tiles", [(256, 66, 64), (1024, 66, 128), (16, 6, 5), (8, 4, 3), (7, 5, 2)])
def test_segments_cover_the_tail_once_and_finals_wait_for_lower_clusters(units, clusters, k_tiles):
    """Every k-tile of every tail tile lies in exactly one segment; each tile has one final segment, owned by the
    cluster holding its last k-tile, and its partial segments belong to the clusters owner(tile start) .. final - 1
    (all of lower index: the waits cannot go round in a circle). 256 on 66 is 4096^3 in 128x256 tiles and 2x1
    clusters on 132 SMs: every cluster multiplies 56 or 57 tail k-tiles instead of 64 for the busiest."""
    sk = _example().StreamKTail(units, clusters, k_tiles)
    assert (sk.D, sk.R) == (units // clusters, units % clusters)
    seen, finals = {}, {}
    segs = [sk.segments(c) for c in range(clusters)]
    for c in range(clusters):
        (up, kb_p, ke_p), (uf, kb_f, ke_f) = segs[c]
        assert 0 <= kb_p <= ke_p <= k_tiles and 0 <= kb_f <= ke_f <= k_tiles
        assert (ke_p - kb_p) + (ke_f - kb_f) == sk.start(c + 1) - sk.start(c) <= -(-sk.T // clusters)
        if ke_p > kb_p:
            assert ke_p < k_tiles  # a partial segment stops inside its tile
            for k in range(kb_p, ke_p):
                seen[(up, k)] = seen.get((up, k), 0) + 1
        if ke_f > kb_f:
            assert ke_f == k_tiles and uf not in finals
            finals[uf] = c
            for k in range(kb_f, ke_f):
                seen[(uf, k)] = seen.get((uf, k), 0) + 1
    assert seen == {(u, k): 1 for u in range(sk.R) for k in range(k_tiles)}
    assert sorted(finals) == list(range(sk.R))
    for u, c in finals.items():
        writers = [w for w in range(clusters) if segs[w][0][0] == u and segs[w][0][2] > segs[w][0][1]]
        assert writers == list(range(sk.owner(u * k_tiles), c))


@pytest.mark.parametrize("cluster_m,epi_cols", [(1, None), (2, 64)])
def test_stream_k_tail_on_the_cpu(cluster_m, epi_cols):
    """8 tiles of 128x128 (5 k-tiles each) on 6 CTAs: one whole tile each, then the 2 tiles left over cut along K
    over all 6 (1 or 2 k-tiles each): a tile's final segment adds two other CTAs' partial sums. With clusters of two
    along M, 4 cluster tiles on 3 clusters: one whole each, and the last cut over the 3. The workspace starts as NaN
    (a slot read before it is written spoils C); two calls: the first leaves the flags at zero for the second."""
    ex = _example()
    M, N, K = 256, 512, 320
    gemm = ex.HopperGemm(tile_mnk=(128, 128, 64), stages=3, num_ctas=6, dynamic=True, warp_specialized=True,
                         mma_warpgroups=2, cluster_m=cluster_m, epi_cols=epi_cols, stream_k=True)
    assert gemm.grid(M, N) == (6, 1)
    (slots, floats), nflags = ex.workspace_shape(gemm, M, N)
    assert (slots, floats, nflags) == (6, 128 * 128, 2)
    rng = np.random.default_rng(5)
    A = rng.standard_normal((M, K)).astype(np.float16)
    B = rng.standard_normal((N, K)).astype(np.float16)
    work = np.full((slots, floats), np.nan, np.float32)
    flags = np.zeros(nflags, np.int32)
    ref = A.astype(np.float64) @ B.astype(np.float64).T
    bound = (K // 16 + 1) * 2.0 ** -24 * (np.abs(A.astype(np.float64)) @ np.abs(B.astype(np.float64)).T)
    for seed in range(2):
        C = np.full((M, N), np.nan, np.float16)
        gemm(A, B, C, mWork=work, mFlags=flags)
        assert np.all(np.abs(C.astype(np.float64) - ref) <= bound + 2.0 ** -11 * (np.abs(ref) + bound))
        assert not flags.any()
    # the partial slots written: 4 CTAs' (2 of the 3 clusters'); the finishing CTAs' slots are untouched
    assert int(np.isnan(work).all(axis=1).sum()) == 2
    src = cuda.render(last_launch().ir)
    body = src.split("__global__")[1]
    assert "ld.acquire.gpu" in body and "atom.release.gpu" in body
    if cluster_m == 2:
        report = nvcc_compiles(src)
        assert "0 bytes spill stores" in report


def test_stream_k_refusals():
    ex = _example()
    with pytest.raises(ValueError, match="stream_k is kernel_ws's"):
        ex.HopperGemm(stream_k=True)
    with pytest.raises(ValueError, match="stream_k is kernel_ws's"):
        ex.HopperGemm(warp_specialized=True, mma_warpgroups=2, pingpong=True, stream_k=True)
    kw = dict(tile_mnk=(128, 128, 64), stages=3, num_ctas=6, dynamic=True, warp_specialized=True, mma_warpgroups=2,
              stream_k=True)
    A = np.zeros((512, 128), np.float16)
    B = np.zeros((512, 128), np.float16)
    with pytest.raises(ValueError, match="stream_k=True needs mWork"):
        ex.HopperGemm(**kw)(A, B, np.zeros((512, 512), np.float16))
    with pytest.raises(ValueError, match="the deferred TMA epilogue"):  # an f32 C goes out from registers
        ex.HopperGemm(**kw)(A, B, np.zeros((512, 512), np.float32), mWork=np.zeros((6, 128 * 128), np.float32),
                            mFlags=np.zeros(4, np.int32))
    with pytest.raises(ValueError, match="needs 4 Int32"):
        ex.HopperGemm(**kw)(A, B, np.zeros((512, 512), np.float16), mWork=np.zeros((6, 128 * 128), np.float32),
                            mFlags=np.zeros(3, np.int32))
    with pytest.raises(ValueError, match="stream_k=False"):
        ex.HopperGemm(**dict(kw, stream_k=False))(A, B, np.zeros((512, 512), np.float16),
                                                   mWork=np.zeros((6, 128 * 128), np.float32))


def test_describe_counts_the_busiest_clusters_k_tiles():
    """sm90_streamk.py's schedule in words (printed when it runs as a program): 4096^3 and 8192^3 in 128x256x64 tiles,
    clusters of two on 132 SMs."""
    ex = _example()
    import sm90_streamk

    text = sm90_streamk.describe(4096, 4096, 128, 256, 64, 132, 2)
    assert text.splitlines()[0].startswith("256 (cluster) tiles on 66 clusters: 3 whole per cluster, 58 left over")
    assert text.splitlines()[-1] == "busiest cluster: 249 k-tiles (whole tiles only: 256)"
    assert "busiest cluster: 1986 k-tiles (whole tiles only: 2048)" in sm90_streamk.describe(8192, 8192, 128, 256, 128,
                                                                                            132, 2)
    assert ex.StreamKTail is sm90_streamk.StreamKTail
