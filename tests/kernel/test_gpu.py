"""GPU tests: kernels compiled with NVRTC and run on the device, checked against torch on random
data, with every output poisoned (NaN or a bit pattern) before each run."""

from __future__ import annotations

import contextlib
import io
import runpy
import shutil
import subprocess
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import cutelab as cute  # noqa: E402
from cutelab.errors import LaunchError  # noqa: E402
from cutelab.kernel.launch.plan import last_launch  # noqa: E402
from cutelab.runtime import from_dlpack  # noqa: E402

pytestmark = pytest.mark.gpu
SEEDS = Path(__file__).resolve().parents[2] / "examples" / "seeds"


def _seed(name):
    return runpy.run_path(str(SEEDS / f"{name}.py"), run_name="test")


def _sass(cubin: bytes) -> str:
    exe = shutil.which("cuobjdump")
    if not exe:
        pytest.skip("cuobjdump not on PATH")
    p = Path("/tmp/cutelab_test.cubin")
    p.write_bytes(cubin)
    return subprocess.run([exe, "-sass", str(p)], capture_output=True, text=True).stdout


@pytest.fixture(autouse=True)
def _ctx():
    cute.cuda.initialize_cuda_context()
    yield
    torch.cuda.synchronize()


@pytest.mark.parametrize("n", [8192, 1024])
@pytest.mark.parametrize("name,a,b", [
    ("copy_inner_partition", (1, 16), 256),
    ("copy_outer_partition", (32, 256), (8, 32)),
    ("copy_tv_partition", (32, 8), (4, 8)),
])
def test_seed_copy_matches_torch(name, a, b, n):
    mod = _seed(name)
    S = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    D = torch.full((n, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    with contextlib.redirect_stdout(io.StringIO()):
        mod["launch_copy"](from_dlpack(S, assumed_align=16), from_dlpack(D, assumed_align=16), a, b)
    torch.cuda.synchronize()
    assert torch.equal(D, S)


@pytest.mark.parametrize("name,a,b,vec", [
    ("copy_inner_partition", (1, 16), 256, True),
    ("copy_outer_partition", (32, 256), (8, 32), True),  # 2-byte accesses, retiled per warp into 16-byte ones
    ("copy_tv_partition", (32, 8), (4, 8), True),
])
def test_seed_copy_sass_uses_16_byte_accesses(name, a, b, vec):
    mod = _seed(name)
    S = torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16)
    D = torch.zeros(1024, 1024, device="cuda", dtype=torch.bfloat16)
    with contextlib.redirect_stdout(io.StringIO()):
        mod["launch_copy"](from_dlpack(S, assumed_align=16), from_dlpack(D, assumed_align=16), a, b)
    info = last_launch()
    assert info.mode == "gpu"
    sass = _sass(info.cubin)
    assert ("LDG.E.128" in sass and "STG.E.128" in sass) == vec
    assert "LDL" not in sass and "STL" not in sass  # no local memory


@cute.kernel
def _axpb(S: cute.Tensor, D: cute.Tensor, alpha: float, beta: float):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    s = S[(None, bidx * 128 + tidx)]
    d = D[(None, bidx * 128 + tidx)]
    # alpha and beta are runtime Float32 values (CuTe DSL's rule for a float argument): computed in f32 and
    # converted once to D's type, a program CuTe DSL 4.8.1 accepts for f16/bf16 too
    d.store((s.load().to(cute.Float32) * alpha + beta).to(D.element_type))


@cute.jit
def _launch_axpb(S: cute.Tensor, D: cute.Tensor, alpha: float, beta: float):
    s = cute.zipped_divide(S, (8,))
    d = cute.zipped_divide(D, (8,))
    _axpb(s, d, alpha, beta).launch(grid=(cute.size(s, mode=[1]) // 128, 1, 1), block=(128, 1, 1))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_arithmetic_matches_torch(dtype):
    n = 1 << 20
    S = torch.randn(n, device="cuda", dtype=dtype)
    D = torch.full((n,), float("nan"), device="cuda", dtype=dtype)
    _launch_axpb(from_dlpack(S, assumed_align=16), from_dlpack(D, assumed_align=16), 2.5, -1.0)
    torch.cuda.synchronize()
    # a*b+c contracts to one fma on the GPU (as in CuTe DSL; CUTELAB_FMAD=0 turns it off): each element is
    # the fused or the twice-rounded f32 result, converted to dtype
    unfused = ((S.float() * 2.5) + -1.0).to(dtype)
    fused = (S.double() * 2.5 + -1.0).float().to(dtype)
    assert bool(((D == unfused) | (D == fused)).all())


@cute.kernel
def _axpb_f32(S: cute.Tensor, D: cute.Tensor, alpha: float, beta: float):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    D[(None, bidx * 128 + tidx)].store(S[(None, bidx * 128 + tidx)].load() * alpha + beta)


def test_fmad_off_rounds_each_operation(monkeypatch):
    monkeypatch.setenv("CUTELAB_FMAD", "0")
    n = 1 << 20
    S = torch.randn(n, device="cuda", dtype=torch.float32)
    D = torch.full((n,), float("nan"), device="cuda", dtype=torch.float32)
    s, d = cute.zipped_divide(from_dlpack(S, assumed_align=16), (8,)), cute.zipped_divide(from_dlpack(D, assumed_align=16), (8,))
    _axpb_f32(s, d, 2.5, -1.0).launch(grid=(n // 8 // 128, 1, 1), block=(128, 1, 1))
    torch.cuda.synchronize()
    assert torch.equal(D, (S * 2.5) + -1.0)  # two roundings, as the CPU interpreter computes


def test_int32_and_strided_tensor_scalar_path():
    # a column slice: not 16-byte aligned, so the copy must use scalar accesses
    A = torch.randint(-1000, 1000, (256, 257), device="cuda", dtype=torch.int32)
    B = torch.full((256, 257), -7, device="cuda", dtype=torch.int32)
    S, D = A[:, 1:], B[:, 1:]

    @cute.kernel
    def copy_rows(S: cute.Tensor, D: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        D[(tidx, None)].store(S[(tidx, None)].load() + 1)

    copy_rows(from_dlpack(S, assumed_align=4), from_dlpack(D, assumed_align=4)).launch(grid=(1, 1, 1), block=(256, 1, 1))
    torch.cuda.synchronize()
    assert torch.equal(D, S + 1)
    assert torch.equal(B[:, 0], torch.full((256,), -7, device="cuda", dtype=torch.int32))
    assert "LDG.E.128" not in _sass(last_launch().cubin)


def test_out_of_bounds_grid_is_refused_before_running():
    mod = _seed("copy_inner_partition")
    S = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
    D = torch.full((256, 256), float("nan"), device="cuda", dtype=torch.bfloat16)
    tiled_S = cute.tiled_divide(from_dlpack(S, assumed_align=16), (1, 16))
    tiled_D = cute.tiled_divide(from_dlpack(D, assumed_align=16), (1, 16))
    with contextlib.redirect_stdout(io.StringIO()):
        with pytest.raises(LaunchError, match="reaches element offsets"):
            mod["copy_kernel"](tiled_S, tiled_D).launch(grid=(17, 1, 1), block=(256, 1, 1))
    torch.cuda.synchronize()
    assert torch.isnan(D.float()).all()


def test_misaligned_pointer_is_refused():
    A = torch.zeros(1025, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(Exception, match="align"):
        from_dlpack(A[1:], assumed_align=16)


def test_printf_on_gpu(capfd):
    @cute.kernel
    def tv_kernel(mA: cute.Tensor, tv_layout: cute.Layout):
        tidx, _, _ = cute.arch.thread_idx()
        composed = cute.composition(mA, tv_layout)
        cute.printf("TIDX: {}", tidx)
        cute.printf("DATA: {}", composed[(tidx, None)])

    a = torch.arange(24, device="cuda", dtype=torch.int32).reshape(24, 1)
    tv = cute.make_layout(((2, 2), (2, 3)), stride=((2, 12), (1, 4)))
    tv_kernel(from_dlpack(a, assumed_align=16), tv).launch(grid=[1, 1, 1], block=[4, 1, 1])
    torch.cuda.synchronize()
    out = capfd.readouterr().out
    for line in ["( 0, 1, 4, 5, 8, 9 )", "( 2, 3, 6, 7, 10, 11 )", "( 12, 13, 16, 17, 20, 21 )",
                 "( 14, 15, 18, 19, 22, 23 )", "TIDX: 3", "i32, gmem, align<8>) o ((2,3)):((1,4)) = "]:
        assert line in out, out
    base = a.data_ptr()
    assert f"raw_ptr(0x{base + 8:016x}: i32" in out


def test_compile_is_cached_and_compiled_function_reruns():
    mod = _seed("copy_tv_partition")
    S = torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16)
    D = torch.zeros(2048, 2048, device="cuda", dtype=torch.bfloat16)
    tS, tD = from_dlpack(S, assumed_align=16), from_dlpack(D, assumed_align=16)
    with contextlib.redirect_stdout(io.StringIO()):
        f = cute.compile(mod["launch_copy"], tS, tD, (32, 8), (4, 8))
        f2 = cute.compile(mod["launch_copy"], tS, tD, (32, 8), (4, 8))
    assert last_launch().cached
    S2 = torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16)
    D2 = torch.full((2048, 2048), float("nan"), device="cuda", dtype=torch.bfloat16)
    f2(from_dlpack(S2, assumed_align=16), from_dlpack(D2, assumed_align=16))
    torch.cuda.synchronize()
    assert torch.equal(D2, S2)
    with pytest.raises(LaunchError, match="does not match"):
        f(from_dlpack(S2[:1024], assumed_align=16), tD)


def test_interpreter_agrees_with_gpu():
    S = torch.randn(512, 512, dtype=torch.float32)
    Dc = torch.full((512, 512), float("nan"))
    Dg = torch.full((512, 512), float("nan"), device="cuda")
    Sg = S.cuda()
    _launch_axpb(from_dlpack(S, assumed_align=16), from_dlpack(Dc, assumed_align=16), 0.5, 3.0)
    assert last_launch().mode == "cpu"
    _launch_axpb(from_dlpack(Sg, assumed_align=16), from_dlpack(Dg, assumed_align=16), 0.5, 3.0)
    assert last_launch().mode == "gpu"
    torch.cuda.synchronize()
    assert torch.equal(Dg.cpu(), Dc)
