"""The SM90 GEMM example with fp8 (e4m3, e5m2) A and B: wgmma m64nNk32 from 128-byte k-tile rows, f32
accumulation, per-tensor scales applied in the epilogue as ``torch._scaled_mm(a, b.t(), scale_a, scale_b,
out_dtype=...)`` applies them; on the CPU interpreter against torch._scaled_mm (CPU) and an f64 reference,
and its CUDA compiled for sm_90a."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.launch.plan import last_launch
from cutelab.runtime import from_dlpack

from sm90_util import nvcc_compiles

torch = pytest.importorskip("torch")  # torch's float8 CPU tensors carry the fp8 values (numpy has none)

_EX = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "gemm", "sm90_gemm.py")
E4, E5 = cutlass.Float8E4M3FN, cutlass.Float8E5M2
TDT = {E4: torch.float8_e4m3fn, E5: torch.float8_e5m2}
CDT = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
HALF_ULP = {"f32": 0.0, "f16": 2.0 ** -11, "bf16": 2.0 ** -8}


def _example():
    spec = importlib.util.spec_from_file_location("sm90_gemm_example_fp8", _EX)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _data(M, N, K, dt, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(M, K, generator=g).to(TDT[dt]), torch.randn(N, K, generator=g).to(TDT[dt])


def _bound(A, B, scale, c_dtype):
    """Per element: the exact scaled product, f32 rounding once per k32 step (and once for the scaling),
    C's rounding (half an ulp)."""
    a, b = A.double(), B.double()
    ref = (a @ b.T) * scale
    acc = (A.shape[1] // 32 + 2) * 2.0 ** -24 * (a.abs() @ b.abs().T) * abs(scale)
    return ref, acc + HALF_ULP[c_dtype] * (ref.abs() + acc)


@pytest.mark.parametrize("c_dtype", ["bf16", "f32", "f16"])
def test_fp8_two_consumer_warpgroups_match_scaled_mm(c_dtype):
    """The configuration gemm.py times (128x256x128 tiles, a producer and two consumer warpgroups, 3 stages),
    small: 4 tiles on 3 CTAs (one takes two: its stages wrap), 3 k-tiles; C starts as NaN."""
    ex = _example()
    A, B = _data(256, 512, 384, E4, 1)
    sa, sb = torch.tensor([0.375]), torch.tensor([1.25])
    C = torch.full((256, 512), float("nan"), dtype=CDT[c_dtype])
    ex.HopperGemm(ab_dtype=E4, tile_mnk=(128, 256, 128), stages=3, num_ctas=3, dynamic=True, warp_specialized=True,
                  mma_warpgroups=2)(A, B, C, sa, sb)
    ref, bound = _bound(A, B, 0.375 * 1.25, c_dtype)
    got = C.double()
    assert torch.all((got - ref).abs() <= bound), (got - ref).abs().max()
    # torch's own: the same values rounded once to C's type, its f32 sums in another order
    theirs = torch._scaled_mm(A, B.t(), scale_a=sa, scale_b=sb, out_dtype=CDT[c_dtype]).double()
    assert torch.all((got - theirs).abs() <= 2 * bound)
    src = cuda.render(last_launch().ir)
    assert "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3" in src and "__launch_bounds__(384)" in src
    if c_dtype == "bf16":
        nvcc_compiles(src)


@pytest.mark.parametrize("ws", [False, True])
def test_e5m2_without_scales_and_one_warpgroup(ws):
    """e5m2 (a wider range, fewer mantissa bits), no scales (C = A B^T), 64x128x64 tiles (64-byte k-tile rows,
    2 k32 steps each), 2 CTAs over 4 tiles."""
    ex = _example()
    A, B = _data(128, 256, 256, E5, 2)
    C = torch.full((128, 256), float("nan"), dtype=torch.float16)
    ex.HopperGemm(ab_dtype=E5, tile_mnk=(64, 128, 64), stages=2, num_ctas=2, dynamic=True, warp_specialized=ws)(A, B, C)
    ref, bound = _bound(A, B, 1.0, "f16")
    assert torch.all((C.double() - ref).abs() <= bound)
    assert "m64n128k32.f32.e5m2.e5m2" in cuda.render(last_launch().ir)


def test_scales_are_read_by_the_kernel_at_each_call():
    """One compile, two calls with new scale values in the same tensors: the second result follows them (the
    scales are not constants of the trace)."""
    ex = _example()
    A, B = _data(128, 128, 128, E4, 3)
    C = torch.zeros(128, 128)
    sa, sb = np.array([0.5], np.float32), np.array([2.0], np.float32)
    args = [from_dlpack(x) for x in (A, B, C, sa, sb)]
    gemm = ex.HopperGemm(ab_dtype=E4, tile_mnk=(64, 64, 128), stages=2, num_ctas=2, dynamic=True, warp_specialized=True)
    compiled = cute.compile(gemm, *args)
    compiled(*args)
    first = C.clone()
    sa[0], sb[0] = 3.0, -0.25
    compiled(*args)
    ref, bound = _bound(A, B, -0.75, "f32")
    assert torch.all((C.double() - ref).abs() <= bound)
    assert torch.allclose(first * -0.75, C, rtol=1e-6, atol=1e-6)


def test_fp8_arguments_are_checked():
    ex = _example()
    A, B = _data(128, 128, 128, E4, 4)
    C = torch.zeros(128, 128)
    gemm = ex.HopperGemm(ab_dtype=E4, tile_mnk=(64, 64, 128), num_ctas=2)
    with pytest.raises(ValueError, match="both scales"):
        gemm(A, B, C, torch.tensor([1.0]))
    with pytest.raises(ValueError, match="scale_b must be a tensor of one Float32"):
        gemm(A, B, C, torch.tensor([1.0]), torch.tensor([1.0, 2.0]))
    with pytest.raises(ValueError, match="scale_a must be a tensor of one Float32"):
        gemm(A, B, C, torch.tensor([1.0], dtype=torch.float16), torch.tensor([1.0]))
    with pytest.raises(ValueError, match="made for Float8E4M3FN"):
        gemm(A.float().half(), B.float().half(), C)
    with pytest.raises(ValueError, match="multiple of 32"):
        ex.HopperGemm(ab_dtype=E4, tile_mnk=(64, 64, 48))
    with pytest.raises(ValueError, match="at most 64"):  # 128 f16 columns: 256-byte rows, beyond the swizzle
        ex.HopperGemm(ab_dtype=cutlass.Float16, tile_mnk=(64, 64, 128))
    with pytest.raises(ValueError, match="ab_dtype"):
        ex.HopperGemm(ab_dtype=cutlass.Int8)


@pytest.mark.parametrize("promote,dynamic", [(2, True), (1, True), (3, False)])
def test_two_level_accumulation(promote, dynamic):
    """--promote: the wgmma accumulators restart every `promote` k-tiles, their sums added into f32 registers
    (128x128x128 tiles on two consumer warpgroups, 6 k-tiles, 4 tiles on 3 CTAs: the ring wraps across tiles);
    a group's sum left out would err by O(1)."""
    ex = _example()
    A, B = _data(256, 256, 768, E4, 6)
    sa, sb = torch.tensor([0.25]), torch.tensor([0.5])
    C = torch.full((256, 256), float("nan"), dtype=torch.bfloat16)
    ex.HopperGemm(ab_dtype=E4, tile_mnk=(128, 128, 128), stages=4, num_ctas=3, dynamic=dynamic, warp_specialized=True,
                  mma_warpgroups=2, promote=promote)(A, B, C, sa, sb)
    ref, bound = _bound(A, B, 0.125, "bf16")
    assert torch.all((C.double() - ref).abs() <= bound), (C.double() - ref).abs().max()
    src = cuda.render(last_launch().ir)
    # k-tile 0 and the first group's others, then one group in the loop (unrolled: all six k-tiles of both of a
    # CTA's tiles): 4 wgmmas each
    assert src.count("wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3") == 4 * (2 * promote if dynamic else 12)
    if dynamic and promote == 2:
        nvcc_compiles(src)


def test_two_level_accumulation_is_refused_where_it_cannot_work():
    ex = _example()
    with pytest.raises(ValueError, match="kernel_ws"):
        ex.HopperGemm(ab_dtype=E4, tile_mnk=(64, 128, 128), promote=2)
    with pytest.raises(ValueError, match="256 registers a thread, more than 128"):  # 64x256 twice per warpgroup
        ex.HopperGemm(ab_dtype=E4, tile_mnk=(128, 256, 128), warp_specialized=True, mma_warpgroups=2, promote=2)
    A, B = _data(128, 128, 384, E4, 7)
    with pytest.raises(ValueError, match="3 k-tiles must be a multiple of promote=2"):
        ex.HopperGemm(ab_dtype=E4, tile_mnk=(128, 128, 128), warp_specialized=True, mma_warpgroups=2,
                      promote=2)(A, B, torch.zeros(128, 128))


@pytest.mark.parametrize("dt,c_dtype,tile,mnk,dynamic,promote", [
    (E4, "bf16", (64, 256, 128), (384, 512, 512), True, 0),   # 12 tiles, 6 a CTA: each warpgroup 3, shared-memory C
    (E4, "f32", (64, 256, 128), (320, 512, 256), True, 0),    # 5 a CTA: the first warpgroup takes one more
    (cutlass.Float16, "f16", (128, 128, 64), (384, 256, 256), False, 0),  # unrolled loops
    (E4, "bf16", (64, 128, 128), (384, 256, 512), True, 2),   # with two-level accumulation
])
def test_pingpong(dt, c_dtype, tile, mnk, dynamic, promote):
    """--pingpong: each consumer warpgroup takes every other tile of its CTA (2 CTAs here), their mainloops in
    turn (named barriers 3 and 4), each with its own C buffer and epilogue barrier; C starts as NaN."""
    ex = _example()
    M, N, K = mnk
    if dt is E4:
        A, B = _data(M, N, K, E4, 8)
        scales, scale = (torch.tensor([0.5]), torch.tensor([0.25])), 0.125
    else:
        g = torch.Generator().manual_seed(8)
        A, B = torch.randn(M, K, generator=g).half(), torch.randn(N, K, generator=g).half()
        scales, scale = (), 1.0
    C = torch.full((M, N), float("nan"), dtype=CDT[c_dtype])
    ex.HopperGemm(ab_dtype=dt, tile_mnk=tile, stages=3, num_ctas=2, dynamic=dynamic, warp_specialized=True,
                  mma_warpgroups=2, promote=promote, pingpong=True)(A, B, C, *scales)
    a, b = A.double(), B.double()
    ref = (a @ b.T) * scale
    bound = (K // 16 + 2) * 2.0 ** -24 * (a.abs() @ b.abs().T) * scale
    bound = bound + HALF_ULP[c_dtype] * (ref.abs() + bound)
    assert torch.all((C.double() - ref).abs() <= bound), (C.double() - ref).abs().max()
    src = cuda.render(last_launch().ir)
    assert "bar.arrive" in src and "__launch_bounds__(384)" in src
    if dynamic and not promote and c_dtype == "bf16":
        nvcc_compiles(src)
    with pytest.raises(ValueError, match="pingpong needs warp_specialized=True and mma_warpgroups=2"):
        ex.HopperGemm(ab_dtype=dt, tile_mnk=tile, warp_specialized=True, pingpong=True)


def test_example_main_fp8_on_the_cpu(capsys):
    ex = _example()
    assert ex.main(["--dtype", "e4m3", "--c-dtype", "bf16", "--mnk", "128,128,256", "--scale-a", "0.5"]) == 0
    assert "e4m3 -> bf16 on the CPU" in capsys.readouterr().out


@pytest.mark.gpu
@pytest.mark.parametrize("c_dtype,promote,pingpong", [("bf16", 0, False), ("f32", 0, False), ("bf16", 4, False),
                                                      ("bf16", 0, True)])
def test_fp8_on_the_gpu_matches_scaled_mm(c_dtype, promote, pingpong):
    """On an H100/H200: the timed configuration at 1024 x 768 x 2048 (24 tiles on 5 CTAs, 16 k-tiles through 3
    stages) against torch._scaled_mm with fast accumulation (the tensor cores' fp8 sums, as this kernel's) and
    the f32 reference; the scales change between two calls of one compile. promote: 128x128x128 tiles, the
    accumulators added into f32 registers every 4 k-tiles, against use_fast_accum=False. pingpong: 64x256x128
    tiles, each consumer warpgroup taking every other one."""
    ex = _example()
    g = torch.Generator(device="cuda").manual_seed(5)
    A = torch.randn(1024, 2048, device="cuda", generator=g).to(torch.float8_e4m3fn)
    B = torch.randn(768, 2048, device="cuda", generator=g).to(torch.float8_e4m3fn)
    C = torch.full((1024, 768), float("nan"), device="cuda", dtype=CDT[c_dtype])
    sa, sb = torch.tensor([0.5], device="cuda"), torch.tensor([0.0625], device="cuda")
    args = [from_dlpack(x, assumed_align=16) for x in (A, B, C, sa, sb)]
    tile = (64, 256, 128) if pingpong else (128, 128 if promote else 256, 128)
    gemm = ex.HopperGemm(ab_dtype=E4, tile_mnk=tile, stages=3, num_ctas=5, dynamic=True, warp_specialized=True,
                         mma_warpgroups=2, promote=promote, pingpong=pingpong)
    compiled = cute.compile(gemm, *args)
    for scale in (0.5, 2.0):
        sa.fill_(scale)
        compiled(*args)
        torch.cuda.synchronize()
        ref = (A.float() @ B.float().T) * (scale * 0.0625)
        err = (C.float() - ref).abs().max().item()
        assert err <= ex.fp8_tolerance(c_dtype, ref.abs().max().item()), err
        theirs = torch._scaled_mm(A, B.t(), scale_a=sa, scale_b=sb, out_dtype=CDT[c_dtype], use_fast_accum=not promote)
        assert (C.float() - theirs.float()).abs().max().item() <= ex.fp8_tolerance(c_dtype, ref.abs().max().item())
