"""The SM90 GEMM example (TMA + mbarrier pipeline + wgmma + persistent tiles) on the CPU against
numpy, and its CUDA compiled for sm_90a; PipelineTmaAsync's states and misuse."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab import pipeline
from cutelab.errors import LaunchError, TraceError
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.launch.plan import last_launch
from cutelab.runtime import from_dlpack

from sm90_util import nvcc_compiles

_EX = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "gemm", "sm90_gemm.py")


def _example():
    spec = importlib.util.spec_from_file_location("sm90_gemm_example", _EX)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _check(C, A, B):
    ref = A.astype(np.float64) @ B.astype(np.float64).T
    bound = (A.shape[1] // 16 + 1) * 2.0 ** -24 * (np.abs(A.astype(np.float64)) @ np.abs(B.astype(np.float64)).T)
    assert np.all(np.abs(C - ref) <= bound), np.abs(C - ref).max()


@pytest.mark.parametrize("ws", [False, True])  # one warpgroup / warp-specialised producer and consumer
@pytest.mark.parametrize("dynamic", [False, True])  # loops unrolled at trace time / runtime loops
@pytest.mark.parametrize("mnk,ctas,stages,tile", [
    ((256, 256, 128), 8, 2, (64, 64, 64)),   # 2 tiles per CTA: stages reused across tiles
    ((128, 192, 256), 3, 2, (64, 64, 64)),   # 4 k-tiles through 2 stages
    ((128, 128, 192), 2, 3, (64, 64, 32)),   # 64-byte swizzle (bK = 32 f16), 3 stages
    ((128, 256, 64), 2, 1, (128, 128, 64)),  # two m64 atoms per warpgroup, n128, one stage
    ((256, 256, 256), 2, 4, (128, 128, 64)),  # 128 KiB of stages: dynamic shared memory
])
def test_sm90_gemm_on_the_cpu_equals_numpy(mnk, ctas, stages, tile, dynamic, ws):
    ex = _example()
    M, N, K = mnk
    rng = np.random.default_rng(7)
    A = rng.standard_normal((M, K)).astype(np.float16)
    B = rng.standard_normal((N, K)).astype(np.float16)
    C = np.full((M, N), np.nan, np.float32)
    ex.HopperGemm(tile_mnk=tile, stages=stages, num_ctas=ctas, dynamic=dynamic, warp_specialized=ws)(A, B, C)
    _check(C, A, B)


@pytest.mark.parametrize("dynamic", [False, True])
def test_sm90_gemm_cuda_compiles(dynamic):
    ex = _example()
    A = np.ones((128, 128), np.float16)
    B = np.ones((64, 128), np.float16)
    C = np.zeros((128, 64), np.float32)
    ex.HopperGemm(num_ctas=2, dynamic=dynamic)(A, B, C)
    np.testing.assert_array_equal(C, 128)
    src = cuda.render(last_launch().ir)
    for s in ("cp.async.bulk.tensor.2d", "mbarrier.try_wait.parity", "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16",
              "const __grid_constant__ cl_tensormap tmap_mA", "const __grid_constant__ cl_tensormap tmap_mB"):
        assert s in src
    nvcc_compiles(src)


@pytest.mark.parametrize("extra", [[], ["--c-dtype", "f16"], ["--c-dtype", "f16", "--ws", "--dynamic", "--no-defer"]])
def test_example_main_reports_success(capsys, extra):
    ex = _example()
    assert ex.main(["--mnk", "128,128,64", "--ctas", "2"] + extra) == 0
    assert "max |C - numpy|" in capsys.readouterr().out


def test_pipeline_state_walks_the_ring():
    p = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, 2)
    c = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, 2)
    seen = []
    for _ in range(5):
        seen.append((p.index, p.phase, c.index, c.phase))
        p.advance()
        c.advance()
    assert seen == [(0, 1, 0, 0), (1, 1, 1, 0), (0, 0, 0, 1), (1, 0, 1, 1), (0, 1, 0, 0)]
    q = p.clone()
    q.advance(3)
    assert (q.count, p.count) == (8, 5) and (q.index, q.phase) == (0, 1)
    q.reset_count()
    assert (q.count, q.index, q.phase) == (0, 0, 1)
    with pytest.raises(ValueError):
        q.advance(0)
    with pytest.raises(ValueError):
        pipeline.CooperativeGroup(pipeline.Agent.Thread, 0)


@cute.kernel
def ring(src: cute.Tensor, out: cute.Tensor, stages: cutlass.Constexpr, n_iter: cutlass.Constexpr,
         release: cutlass.Constexpr):
    """Warp 0 produces n_iter values through a ring of smem stages; every thread consumes them."""
    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.warp_idx()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(2 * stages), 8)
    buf = smem.allocate_tensor(cutlass.Float32, cute.make_layout(stages), 16)
    pipe = pipeline.PipelineTmaAsync.create(
        barrier_storage=bars.iterator, num_stages=stages,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 2), tx_count=0)
    prod = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, stages)
    cons = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, stages)
    acc = cute.make_rmem_tensor(cute.make_layout(1), cutlass.Float32)
    acc[0] = 0.0
    for i in range(min(stages, n_iter)):
        if warp == 0:
            pipe.producer_acquire(prod)
            if tidx == 0:
                buf[prod.index] = src[i]
        prod.advance()
    for i in range(n_iter):
        pipe.consumer_wait(cons)
        acc[0] = acc[0] + buf[cons.index]
        if release:
            pipe.consumer_release(cons)
        cons.advance()
        j = i + stages
        if j < n_iter:
            if warp == 0:
                pipe.producer_acquire(prod)
                if tidx == 0:
                    buf[prod.index] = src[j]
            prod.advance()
    out[tidx] = acc[0]


def test_pipeline_reuses_stages_and_reports_a_missing_release():
    src = np.arange(1, 8, dtype=np.float32)
    out = np.zeros(64, np.float32)
    ring(from_dlpack(src), from_dlpack(out), 2, 7, True).launch(grid=1, block=64)
    np.testing.assert_array_equal(out, src.sum())
    src_cuda = cuda.render(last_launch().ir)
    assert "mbarrier.arrive.expect_tx" in src_cuda and "mbarrier.arrive.shared::cta.b64" in src_cuda
    nvcc_compiles(src_cuda)
    with pytest.raises(LaunchError, match="can never complete"):  # consumers never free a stage
        ring(from_dlpack(src), from_dlpack(out), 2, 7, False).launch(grid=1, block=64)


@cute.kernel
def advance_in_runtime_loop(out: cute.Tensor, n: cutlass.Int32):
    st = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, 3)
    st.advance()
    for i in cutlass.range(n):
        out[4 + i] = st.index * 10 + st.phase
        st.advance()
    out[0] = st.count
    out[1] = st.index
    out[2] = st.phase


def test_advance_inside_a_runtime_loop_moves_the_state_each_iteration():
    """Used in a runtime loop newer than it, a state lives in registers: each iteration sees the
    position the previous ones left (3 stages: index and phase cycle 1,2,0 / 0,0,1 ...)."""
    for n in (0, 4, 7):
        out = np.full(16, -1, np.int32)
        advance_in_runtime_loop(from_dlpack(out), cutlass.Int32(n)).launch(grid=1, block=32)
        pos = [1 + i for i in range(n)]
        assert out[4:4 + n].tolist() == [(p % 3) * 10 + (p // 3) % 2 for p in pos]
        assert out[:3].tolist() == [1 + n, (1 + n) % 3, ((1 + n) // 3) % 2]
    src = cuda.render(last_launch().ir)
    nvcc_compiles(src)


@pytest.mark.gpu
def test_sm90_gemm_on_the_gpu_equals_torch():
    import torch

    ex = _example()
    A = torch.randn(256, 128, device="cuda", dtype=torch.float16)
    B = torch.randn(256, 128, device="cuda", dtype=torch.float16)
    C = torch.zeros(256, 256, device="cuda", dtype=torch.float32)
    for ws in (False, True):
        C.zero_()
        ex.HopperGemm(num_ctas=8, dynamic=True, warp_specialized=ws)(A, B, C)
        torch.cuda.synchronize()
        _check(C.cpu().numpy(), A.cpu().numpy(), B.cpu().numpy())


@pytest.mark.gpu
def test_sm90_gemm_pingpong_on_the_gpu_equals_torch():
    """--pingpong (each consumer warpgroup every other 64x256 tile, mainloops in turn) with bf16 in and out, the
    shared-memory epilogue: 7 CTAs over 24 tiles, K = 1024."""
    import torch

    ex = _example()
    g = torch.Generator(device="cuda").manual_seed(9)
    A = torch.randn(512, 1024, device="cuda", generator=g, dtype=torch.bfloat16)
    B = torch.randn(768, 1024, device="cuda", generator=g, dtype=torch.bfloat16)
    C = torch.full((512, 768), float("nan"), device="cuda", dtype=torch.bfloat16)
    ex.HopperGemm(ab_dtype=cutlass.BFloat16, tile_mnk=(64, 256, 64), stages=4, num_ctas=7, dynamic=True,
                  warp_specialized=True, mma_warpgroups=2, pingpong=True)(A, B, C)
    torch.cuda.synchronize()
    ref = A.double() @ B.double().T
    bound = (1024 // 16 + 1) * 2.0 ** -24 * (A.double().abs() @ B.double().abs().T)
    assert torch.all((C.double() - ref).abs() <= bound + 2.0 ** -8 * (ref.abs() + bound))


@pytest.mark.gpu
@pytest.mark.parametrize("epilogue,defer,cluster_m,pingpong", [
    ("tma", True, 1, False), ("tma", False, 1, False), ("smem", True, 1, False), ("tma", True, 2, False),
    ("smem", True, 2, False), ("tma", True, 1, True), ("tma", True, 2, True)])
def test_sm90_gemm_epilogues_and_clusters_on_the_gpu_equal_torch(epilogue, defer, cluster_m, pingpong):
    """bf16 in and out at the timed tile (128x256x64, 3 stages; ping-pong: 64x256x64, 4 stages), 10 CTAs over 24
    tiles (buffers reused, a ragged last wave), C starting as NaN: the TMA epilogue deferred and not, the copy-out
    one, and clusters of 2 along M with B multicast."""
    import torch

    ex = _example()
    g = torch.Generator(device="cuda").manual_seed(3)
    A = torch.randn(768, 1024, device="cuda", generator=g, dtype=torch.bfloat16)
    B = torch.randn(1024, 1024, device="cuda", generator=g, dtype=torch.bfloat16)
    C = torch.full((768, 1024), float("nan"), device="cuda", dtype=torch.bfloat16)
    ex.HopperGemm(ab_dtype=cutlass.BFloat16, tile_mnk=(64, 256, 64) if pingpong else (128, 256, 64),
                  stages=4 if pingpong else 3, num_ctas=10, dynamic=True, warp_specialized=True, mma_warpgroups=2,
                  epilogue=epilogue, defer_epilogue=defer, cluster_m=cluster_m, pingpong=pingpong)(A, B, C)
    torch.cuda.synchronize()
    ref = A.double() @ B.double().T
    bound = (1024 // 16 + 1) * 2.0 ** -24 * (A.double().abs() @ B.double().abs().T)
    assert torch.all((C.double() - ref).abs() <= bound + 2.0 ** -8 * (ref.abs() + bound))


@pytest.mark.parametrize("dynamic,ws", [(False, False), (True, False), (True, True)])
def test_sm90_gemm_launch_is_provably_in_bounds_for_the_gpu(dynamic, ws):
    from cutelab.kernel.analysis.bounds import check_bounds

    ex = _example()
    A = np.ones((256, 256), np.float16)
    C = np.zeros((256, 256), np.float32)
    ex.HopperGemm(tile_mnk=(128, 128, 64), stages=4, num_ctas=2, dynamic=dynamic, warp_specialized=ws)(A, A, C)
    np.testing.assert_array_equal(C, 256)
    ir = last_launch().ir
    assert check_bounds(ir, "gpu") == [] and not getattr(ir, "guards", None)
    nvcc_compiles(cuda.render(ir))


@cute.kernel
def ws_ring(src: cute.Tensor, out: cute.Tensor, stages: cutlass.Constexpr, n_iter: cutlass.Constexpr,
            release: cutlass.Constexpr):
    """Warp specialised: warp 0 produces, warps 1-3 consume, in the two branches of one if/else."""
    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.warp_idx()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(2 * stages), 8)
    buf = smem.allocate_tensor(cutlass.Float32, cute.make_layout(stages), 16)
    pipe = pipeline.PipelineTmaAsync.create(
        barrier_storage=bars.iterator, num_stages=stages,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 3), tx_count=0)
    prod = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, stages)
    cons = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, stages)
    if warp == 0:
        for i in range(n_iter):
            pipe.producer_acquire(prod)
            if tidx == 0:
                buf[prod.index] = src[i]
            prod.advance()
    else:
        acc = cute.make_rmem_tensor(cute.make_layout(1), cutlass.Float32)
        acc[0] = 0.0
        for i in range(n_iter):
            pipe.consumer_wait(cons)
            acc[0] = acc[0] + buf[cons.index] * (i + 1)
            if release:
                pipe.consumer_release(cons)
            cons.advance()
        out[tidx] = acc[0]


def test_warp_specialised_branches_run_concurrently_on_the_cpu():
    src = np.arange(1, 8, dtype=np.float32)
    out = np.zeros(128, np.float32)
    ws_ring(from_dlpack(src), from_dlpack(out), 2, 7, True).launch(grid=2, block=128)  # 7 items through 2 stages
    np.testing.assert_array_equal(out[32:], (src * np.arange(1, 8)).sum())
    np.testing.assert_array_equal(out[:32], 0)
    with pytest.raises(LaunchError, match="can never complete"):  # consumers never free a stage: deadlock
        ws_ring(from_dlpack(src), from_dlpack(out), 2, 7, False).launch(grid=1, block=128)


def test_two_consumer_warpgroups_cpu_and_cuda():
    ex = _example()
    rng = np.random.default_rng(3)
    A = rng.standard_normal((256, 192)).astype(np.float16)
    B = rng.standard_normal((512, 192)).astype(np.float16)
    C = np.full((256, 512), np.nan, np.float32)
    ex.HopperGemm(tile_mnk=(128, 256, 64), stages=3, num_ctas=3, dynamic=True, warp_specialized=True,
                  mma_warpgroups=2)(A, B, C)  # 4 tiles over 3 CTAs, 384 threads, 144 KiB of stages
    _check(C, A, B)
    src = cuda.render(last_launch().ir)
    assert "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16" in src and "__launch_bounds__(384)" in src
    nvcc_compiles(src)
    with pytest.raises(ValueError, match="multiple of 64"):
        ex.HopperGemm(tile_mnk=(64, 64, 64), warp_specialized=True, mma_warpgroups=2)


@pytest.mark.parametrize("ws", [False, True])
def test_sm90_gemm_bf16_on_the_cpu_equals_numpy(ws):
    torch = pytest.importorskip("torch")  # numpy has no bfloat16: CPU torch tensors carry it
    ex = _example()
    rng = np.random.default_rng(3)
    A = torch.from_numpy(rng.standard_normal((128, 128)).astype(np.float32)).bfloat16()
    B = torch.from_numpy(rng.standard_normal((128, 128)).astype(np.float32)).bfloat16()
    C = np.full((128, 128), np.nan, np.float32)
    ex.HopperGemm(ab_dtype=cutlass.BFloat16, tile_mnk=(64, 128, 64), stages=2, num_ctas=2, dynamic=True,
                  warp_specialized=ws)(A, B, C)
    _check(C, A.float().numpy(), B.float().numpy())
    if ws:
        src = cuda.render(last_launch().ir)
        assert "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16" in src
        nvcc_compiles(src)


@pytest.mark.parametrize("raster", [1, 2])
def test_sm90_gemm_two_consumer_warpgroups_on_the_cpu(raster):
    """The DSL-like configuration, small: a producer and two consumer warpgroups (each 64 rows of a
    128-row tile), 4 stages, tiles in groups of `raster` along N; every tile once (C starts as NaN)."""
    ex = _example()
    rng = np.random.default_rng(11)
    A = rng.standard_normal((256, 128)).astype(np.float16)
    B = rng.standard_normal((384, 128)).astype(np.float16)
    C = np.full((256, 384), np.nan, np.float32)
    gemm = ex.HopperGemm(tile_mnk=(128, 128, 64), stages=4, num_ctas=4, dynamic=True, warp_specialized=True,
                         mma_warpgroups=2, raster=raster)
    gemm(A, B, C)
    _check(C, A, B)
    order = [gemm.tile_mn(t, 2, 3) for t in range(6)]
    assert sorted(order) == [(m, n) for m in range(2) for n in range(3)]
    src = cuda.render(last_launch().ir)
    # the A descriptors depend on the consumer warpgroup: hoisted once, broadcast from lane 0
    assert "__shfl_sync(0xffffffffu" in src and "setmaxnreg.inc.sync.aligned.u32 232" in src
    nvcc_compiles(src)


def test_sm90_gemm_raster_groups_tiles_along_n():
    ex = _example()
    g = ex.HopperGemm(tile_mnk=(128, 256, 64), raster=8)
    order = [g.tile_mn(t, 32, 16) for t in range(512)]
    assert sorted(order) == [(m, n) for m in range(32) for n in range(16)]
    assert order[:10] == [(0, n) for n in range(8)] + [(1, 0), (1, 1)]  # 8 columns, then the next row
    assert {n for _, n in order[:132]} == set(range(8))  # the first wave of 132 CTAs reads 8 B panels
    assert ex.HopperGemm(raster=8).tile_mn(5, 4, 3) == (1, 1)  # 3 columns: groups of 1 (M first)


@pytest.mark.parametrize("c_dtype,dynamic,defer,epilogue", [
    ("f16", True, True, "regs"), ("f16", False, True, "regs"), ("bf16", True, True, "regs"), ("f16", True, False, "regs"),
    ("f16", True, True, "auto"), ("bf16", True, True, "smem"), ("f16", False, True, "smem"),
    ("bf16", True, True, "tma"), ("f16", False, True, "tma"), ("f16", True, False, "tma")])
def test_sm90_gemm_16_bit_c_on_the_cpu(c_dtype, dynamic, defer, epilogue):
    """C in f16/bf16: the f32 accumulators rounded once, in the epilogue (half the bytes stored).
    'regs' with defer: a tile's rounded C waits in registers and is stored while the next tile's first
    wgmmas run; the CTA's last tile after its loop. 'smem': through a swizzled shared buffer between two
    named barriers, copied out with 16-byte stores. 'tma' (auto's choice here): through 128-byte-swizzled
    column blocks stored by TMA boxes, deferred like 'regs' unless defer is off. 6 tiles on 4 CTAs:
    CTAs 0 and 1 take two (the buffer is reused), 2 and 3 one; C starts as NaN, so a tile stored twice,
    never or in the wrong place fails."""
    ex = _example()
    rng = np.random.default_rng(5)
    A = rng.standard_normal((256, 128)).astype(np.float16)
    B = rng.standard_normal((384, 128)).astype(np.float16)
    gemm = ex.HopperGemm(tile_mnk=(128, 128, 64), stages=2, num_ctas=4, dynamic=dynamic, warp_specialized=True,
                         mma_warpgroups=2, defer_epilogue=defer, epilogue=epilogue)
    kind = {"regs": "deferred" if defer else "in-place", "smem": "smem"}.get(epilogue, "tma, deferred" if defer else "tma")
    assert gemm.epilogue_kind(c_dtype) == kind
    if c_dtype == "f16":
        C = np.full((256, 384), np.nan, np.float16)
        gemm(A, B, C)
        got, half_ulp = C.astype(np.float64), 2.0 ** -11
    else:
        torch = pytest.importorskip("torch")
        Ct = torch.full((256, 384), float("nan"), dtype=torch.bfloat16)
        gemm(A, B, Ct)
        got, half_ulp = Ct.float().numpy().astype(np.float64), 2.0 ** -8
    ref = A.astype(np.float64) @ B.astype(np.float64).T
    acc_bound = (128 // 16 + 1) * 2.0 ** -24 * (np.abs(A.astype(np.float64)) @ np.abs(B.astype(np.float64)).T)
    assert np.all(np.abs(got - ref) <= acc_bound + half_ulp * (np.abs(ref) + acc_bound))
    src = cuda.render(last_launch().ir)
    # the accumulators converted in the kernel: two at a time (cvt.rn.{f16,bf16}x2.f32) or one by one
    conv = "cl_f32_to_f16" if c_dtype == "f16" else "cl_f32_to_bf16"
    body = src.split("__global__")[1]
    assert conv + "(" in body or conv.replace("f32_to_", "f32x2_to_") + "x2(" in body
    assert ('bar.sync 1, 256' in src) == (epilogue != "regs")
    # the TMA epilogue: boxes stored from shared memory after the consumers' fence, the buffer reused only once
    # the last boxes have read it (and before the CTA ends); the other epilogues store C with generic stores
    tma = ("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group", "&tmap_mC", "fence.proxy.async.shared::cta",
           "cp.async.bulk.wait_group.read 0", "cp.async.bulk.commit_group")
    assert [t in body for t in tma] == [kind.startswith("tma")] * len(tma)
    if dynamic:
        nvcc_compiles(src)


@pytest.mark.parametrize("epilogue", ["tma", "smem"])
@pytest.mark.parametrize("dynamic", [False, True])
def test_sm90_gemm_pingpong_tma_epilogue_on_the_cpu(epilogue, dynamic):
    """Ping-pong with a C buffer per consumer warpgroup: 'tma' (each warpgroup's first warp stores its own
    tiles' boxes and waits on its own bulk groups) against 'smem'. 10 tiles of 64x128 on 3 CTAs: each
    warpgroup takes 1 or 2 tiles, so the buffers are reused; C starts as NaN."""
    ex = _example()
    rng = np.random.default_rng(11)
    A = rng.standard_normal((320, 192)).astype(np.float16)
    B = rng.standard_normal((256, 192)).astype(np.float16)
    C = np.full((320, 256), np.nan, np.float16)
    gemm = ex.HopperGemm(tile_mnk=(64, 128, 64), stages=3, num_ctas=3, dynamic=dynamic, warp_specialized=True,
                         mma_warpgroups=2, pingpong=True, epilogue=epilogue)
    assert gemm.epilogue_kind("f16") == epilogue  # ping-pong defers nothing: the other warpgroup multiplies
    gemm(A, B, C)
    ref = A.astype(np.float64) @ B.astype(np.float64).T
    bound = (192 // 16 + 1) * 2.0 ** -24 * (np.abs(A.astype(np.float64)) @ np.abs(B.astype(np.float64)).T)
    assert np.all(np.abs(C.astype(np.float64) - ref) <= bound + 2.0 ** -11 * (np.abs(ref) + bound))
    src = cuda.render(last_launch().ir)
    assert ("&tmap_mC" in src) == (epilogue == "tma")
    if dynamic:
        nvcc_compiles(src)


@pytest.mark.parametrize("dynamic,epilogue,pingpong", [(True, "tma", False), (False, "tma", False),
                                                     (True, "regs", False), (True, "tma", True)])
def test_sm90_gemm_clusters_of_two_on_the_cpu(dynamic, epilogue, pingpong):
    """cluster_m=2: the two CTAs of a cluster take tiles (2m, n) and (2m + 1, n), each loads half of B's tile and
    multicasts it to both; a stage is released to both CTAs' producers. 6 CTAs (3 clusters) over 16 tiles: the
    clusters take 3, 3 and 2 cluster tiles; C starts as NaN."""
    ex = _example()
    rng = np.random.default_rng(17)
    A = rng.standard_normal((512, 192)).astype(np.float16)
    B = rng.standard_normal((512, 192)).astype(np.float16)
    C = np.full((512, 512), np.nan, np.float16)
    gemm = ex.HopperGemm(tile_mnk=(64, 128, 64) if pingpong else (128, 128, 64), stages=3, num_ctas=6,
                         dynamic=dynamic, warp_specialized=True, mma_warpgroups=2, epilogue=epilogue, cluster_m=2,
                         pingpong=pingpong)
    assert gemm.grid(512, 512) == (6, 3 if not pingpong else 6)
    gemm(A, B, C)
    ref = A.astype(np.float64) @ B.astype(np.float64).T
    bound = (192 // 16 + 1) * 2.0 ** -24 * (np.abs(A.astype(np.float64)) @ np.abs(B.astype(np.float64)).T)
    assert np.all(np.abs(C.astype(np.float64) - ref) <= bound + 2.0 ** -11 * (np.abs(ref) + bound))
    assert tuple(last_launch().ir.cluster) == (2, 1, 1)
    src = cuda.render(last_launch().ir)
    for t in ("multicast::cluster", "barrier.cluster.wait", "mbarrier.arrive.release.cta.shared::cluster"):
        assert t in src
    if dynamic:
        nvcc_compiles(src)


def test_sm90_gemm_cluster_refusals_and_grid():
    ex = _example()
    with pytest.raises(ValueError, match="cluster_m=3: 1 or 2"):
        ex.HopperGemm(warp_specialized=True, cluster_m=3)
    with pytest.raises(ValueError, match="cluster_m=2 is kernel_ws's"):
        ex.HopperGemm(cluster_m=2)
    A = np.zeros((384, 64), np.float16)
    with pytest.raises(ValueError, match="M = 384 must be a multiple of 2 tiles of 128 rows"):
        ex.HopperGemm(tile_mnk=(128, 64, 64), warp_specialized=True, num_ctas=2, cluster_m=2)(
            A, np.zeros((64, 64), np.float16), np.zeros((384, 64), np.float32))
    # whole clusters: 132 SMs at 4096^3 with 128x256 tiles are 66 clusters over 256 cluster tiles
    g = ex.HopperGemm(tile_mnk=(128, 256, 64), warp_specialized=True, mma_warpgroups=2, num_ctas=133, cluster_m=2)
    assert g.grid(4096, 4096) == (132, 4)
    assert g.cta_tile_mn(0, 1, 32, 16) == (1, 0) and g.cta_tile_mn(5, 0, 32, 16) == (2, 1)  # raster 4 over 16 x 16


def test_sm90_gemm_tma_epilogue_refusals():
    """'tma' needs kernel_ws, a bN of whole 128-byte column blocks, and room for the C buffer beside the stages."""
    ex = _example()
    with pytest.raises(ValueError, match="epilogue='tma' is kernel_ws's"):
        ex.HopperGemm(epilogue="tma")
    A = np.zeros((128, 128), np.float16)
    with pytest.raises(ValueError, match="boxes of 64 columns .* bN = 32 is not a multiple"):
        ex.HopperGemm(tile_mnk=(64, 32, 64), num_ctas=2, warp_specialized=True, epilogue="tma")(
            A, np.zeros((64, 128), np.float16), np.zeros((128, 64), np.float16))
    with pytest.raises(ValueError, match="128x256 .* C buffer.* and 4 stages .* do not fit in 227 KiB"):
        ex.HopperGemm(tile_mnk=(128, 256, 64), stages=4, num_ctas=2, warp_specialized=True, mma_warpgroups=2,
                      epilogue="tma")(A, np.zeros((256, 128), np.float16), np.zeros((128, 256), np.float16))
    # auto falls back where 'tma' cannot go: registers (4 stages leave no room), the copy-out buffer (bN = 32)
    assert ex.HopperGemm(tile_mnk=(128, 256, 64), stages=4, warp_specialized=True, mma_warpgroups=2).epilogue_kind(
        "bf16") == "deferred"
    assert ex.HopperGemm(tile_mnk=(64, 32, 64), warp_specialized=True).epilogue_kind("f16") == "smem"
    assert ex.HopperGemm(tile_mnk=(128, 256, 64), stages=3, warp_specialized=True, mma_warpgroups=2).epilogue_kind(
        "bf16") == "tma, deferred"


def test_sm90_gemm_refuses_an_integer_c():
    ex = _example()
    A = np.zeros((128, 128), np.float16)
    with pytest.raises(ValueError, match="C holds Int32"):
        ex.HopperGemm(num_ctas=2)(A, A, np.zeros((128, 128), np.int32))


@pytest.mark.parametrize("c", ["f16", "f32"])
def test_sm90_gemm_recommended_configuration_on_the_cpu(c):
    """The configuration to time on the H100 (128x256x64 tiles, a producer and two consumer
    warpgroups, 4 stages, raster 8), small: 4 tiles on 2 CTAs, 4 k-tiles each (the ring wraps)."""
    ex = _example()
    rng = np.random.default_rng(13)
    A = rng.standard_normal((256, 256)).astype(np.float16)
    B = rng.standard_normal((512, 256)).astype(np.float16)
    C = np.full((256, 512), np.nan, np.float16 if c == "f16" else np.float32)
    ex.HopperGemm(tile_mnk=(128, 256, 64), stages=4, num_ctas=2, dynamic=True, warp_specialized=True,
                  mma_warpgroups=2)(A, B, C)
    ref = A.astype(np.float64) @ B.astype(np.float64).T
    bound = (256 // 16 + 1) * 2.0 ** -24 * (np.abs(A.astype(np.float64)) @ np.abs(B.astype(np.float64)).T)
    half_ulp = 2.0 ** -11 if c == "f16" else 0.0
    assert np.all(np.abs(C.astype(np.float64) - ref) <= bound + half_ulp * (np.abs(ref) + bound))


@cute.kernel
def clone_then_advance(out: cute.Tensor, n: cutlass.Int32):
    st = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, 2)
    for i in cutlass.range(n):
        c = st.clone()
        out[i] = c.index
        st.advance()


def test_cloning_a_state_then_advancing_it_in_the_same_runtime_loop_is_refused():
    """The clone, taken first, held the first iteration's position: a clear error, not a wrong index."""
    out = np.zeros(8, np.int32)
    with pytest.raises(TraceError, match="cloned inside this runtime loop before it was read or advanced"):
        clone_then_advance(from_dlpack(out), cutlass.Int32(3)).launch(grid=1, block=32)
