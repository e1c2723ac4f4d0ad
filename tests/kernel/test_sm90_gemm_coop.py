"""The SM90 GEMM example's cuBLAS-like configurations on the CPU against numpy, and their CUDA for sm_90a:
clusters of two along N (A's tile multicast), the raster along M, and 256x128 tiles with 4 stages, whose TMA
epilogue goes through a C buffer of 64 columns in passes (``epi_cols``)."""

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
    spec = importlib.util.spec_from_file_location("sm90_gemm_example_coop", _EX)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _run(gemm, M, N, K, seed):
    """gemm on random f16 A (M x K), B (N x K) into an f16 C that starts as NaN; asserts C against numpy (f32
    accumulation per k16 step, one rounding to f16)."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((M, K)).astype(np.float16)
    B = rng.standard_normal((N, K)).astype(np.float16)
    C = np.full((M, N), np.nan, np.float16)
    gemm(A, B, C)
    ref = A.astype(np.float64) @ B.astype(np.float64).T
    bound = (K // 16 + 1) * 2.0 ** -24 * (np.abs(A.astype(np.float64)) @ np.abs(B.astype(np.float64)).T)
    assert np.all(np.abs(C.astype(np.float64) - ref) <= bound + 2.0 ** -11 * (np.abs(ref) + bound))
    return cuda.render(last_launch().ir)


@pytest.mark.parametrize("dynamic", [True, False])
def test_clusters_of_two_along_n_on_the_cpu(dynamic):
    """cluster_n=2: the CTAs of a cluster take tiles (m, 2n) and (m, 2n + 1), each loads half of A's tile and
    multicasts it to both. 6 CTAs (3 clusters) over 8 cluster tiles of 128x128; C starts as NaN."""
    ex = _example()
    gemm = ex.HopperGemm(tile_mnk=(128, 128, 64), stages=3, num_ctas=6, dynamic=dynamic, warp_specialized=True,
                         mma_warpgroups=2, cluster_n=2)
    assert gemm.grid(512, 512) == (6, 3)
    src = _run(gemm, 512, 512, 192, 3)
    assert tuple(last_launch().ir.cluster) == (2, 1, 1)
    body = src.split("__global__")[1]
    # one multicast load per k-tile (A's half), one plain one (B)
    assert "multicast::cluster" in body and "mbarrier.arrive.release.cta.shared::cluster" in body
    if dynamic:
        nvcc_compiles(src)


@pytest.mark.parametrize("dynamic,cluster_n,defer,k_unroll", [(True, 1, True, 0), (True, 2, True, 4),
                                                              (False, 2, True, 0), (True, 1, False, 0)])
def test_256x128_tiles_four_stages_and_a_c_buffer_of_64_columns(dynamic, cluster_n, defer, k_unroll):
    """256x128x64 tiles on two consumer warpgroups (128 rows each, two m64n128 atoms), 4 stages of 48 KiB and a
    256x64 C buffer (32 KiB; a whole 256x128 one would not fit beside 4 stages): a tile's C goes out in two passes,
    deferred after the next tile's k-tiles 0 and 1. 6 tiles on 3 or 4 CTAs: the buffer is reused across tiles.
    k_unroll: the consumers' k-loop unrolled once per stage."""
    ex = _example()
    kw = dict(tile_mnk=(256, 128, 64), stages=4, dynamic=dynamic, warp_specialized=True, mma_warpgroups=2,
              defer_epilogue=defer, cluster_n=cluster_n)
    with pytest.raises(ValueError, match="do not fit in 227 KiB"):
        ex.HopperGemm(num_ctas=3, epilogue="tma", **kw).check_epilogue(ex.cutlass.Float16)
    gemm = ex.HopperGemm(num_ctas=4 if cluster_n == 2 else 3, epi_cols=64, k_unroll=k_unroll, **kw)
    assert gemm.epi_passes == 2 and gemm.epilogue_kind("f16") == ("tma, deferred" if defer else "tma")
    src = _run(gemm, 512, 512 if cluster_n == 2 else 384, 192, 9)
    body = src.split("__global__")[1]
    # two passes a tile: each waits for the previous pass's TMA stores to have read the buffer
    assert body.count("cp.async.bulk.wait_group.read 0") >= 2
    assert ("#pragma unroll 4" in body) == (k_unroll == 4)
    if dynamic:
        report = nvcc_compiles(src)
        assert "0 bytes spill stores" in report and "0 bytes spill loads" in report


def test_raster_along_m_and_cluster_tiles_along_n():
    ex = _example()
    g = ex.HopperGemm(raster=4, raster_m=True)
    order = [g.tile_mn(t, 8, 8) for t in range(10)]
    assert order[:5] == [(0, 0), (1, 0), (2, 0), (3, 0), (0, 1)]  # 4 rows, then the next column
    assert order[8:] == [(0, 2), (1, 2)]
    assert {g.tile_mn(t, 8, 8) for t in range(64)} == {(m, n) for m in range(8) for n in range(8)}
    # clusters along N: cluster tile (m', n') of 16 x 16 is the CTAs' tiles (m', 2 n') and (m', 2 n' + 1)
    c = ex.HopperGemm(tile_mnk=(256, 128, 64), warp_specialized=True, mma_warpgroups=2, num_ctas=132, cluster_n=2)
    assert c.cta_tile_mn(0, 1, 16, 32) == (0, 1) and c.cta_tile_mn(5, 0, 16, 32) == (1, 2)
    assert c.grid(4096, 4096) == (132, 4)


def test_refusals_of_the_new_options():
    ex = _example()
    with pytest.raises(ValueError, match="cluster_n=3: 1 or 2"):
        ex.HopperGemm(warp_specialized=True, cluster_n=3)
    with pytest.raises(ValueError, match="cluster_n=2 is kernel_ws's"):
        ex.HopperGemm(cluster_n=2)
    with pytest.raises(ValueError, match="along M or along N, not both"):
        ex.HopperGemm(warp_specialized=True, cluster_m=2, cluster_n=2)
    with pytest.raises(ValueError, match="k_unroll=-1"):
        ex.HopperGemm(warp_specialized=True, k_unroll=-1)
    with pytest.raises(ValueError, match="epi_cols=48 must divide bN = 128"):
        ex.HopperGemm(tile_mnk=(128, 128, 64), warp_specialized=True, epi_cols=48)
    with pytest.raises(ValueError, match="epi_cols=64 is the TMA epilogue's"):
        ex.HopperGemm(tile_mnk=(128, 128, 64), warp_specialized=True, mma_warpgroups=2, pingpong=True, epi_cols=64)
    g = ex.HopperGemm(tile_mnk=(128, 128, 64), warp_specialized=True, epi_cols=64)
    with pytest.raises(ValueError, match="epi_cols=64 is the TMA epilogue's"):
        g.check_epilogue(ex.cutlass.Float32)  # an f32 C is stored from registers
    A = np.zeros((256, 64), np.float16)
    with pytest.raises(ValueError, match="fewer than the epilogue's 2 passes"):
        g(A, np.zeros((128, 64), np.float16), np.zeros((256, 128), np.float16))
    with pytest.raises(ValueError, match="N = 384 must be a multiple of 2 tiles of 128 columns"):
        ex.HopperGemm(tile_mnk=(128, 128, 64), warp_specialized=True, num_ctas=2, cluster_n=2)(
            np.zeros((128, 64), np.float16), np.zeros((384, 64), np.float16), np.zeros((128, 384), np.float32))


def test_fp8_256x128x128_four_stages_clusters_along_n_on_the_cpu(capsys):
    """e4m3 A and B with per-tensor scales into a bf16 C through the example's command line: 256x128x128 tiles
    (48 KiB a stage, as 256x128x64 of a 16-bit type), 4 stages, the 64-column C buffer, clusters along N."""
    pytest.importorskip("torch")
    ex = _example()
    assert ex.main(["--dtype", "e4m3", "--c-dtype", "bf16", "--ws", "--mma-wgs", "2", "--tile", "256,128,128",
                    "--stages", "4", "--epi-cols", "64", "--cluster-n", "2", "--mnk", "512,512,384", "--ctas", "4",
                    "--dynamic"]) == 0
    assert "max |C - numpy|" in capsys.readouterr().out
