"""The CPU interpreter: kernels traced once, run by numpy over all threads; errors are clear."""

from __future__ import annotations

import contextlib
import io
import re
import runpy
from pathlib import Path

import numpy as np
import pytest

import cutelab as cute
from cutelab.errors import LaunchError, TraceError
from cutelab.kernel.launch.plan import capture, last_launch
from cutelab.runtime import from_dlpack

SEEDS = Path(__file__).resolve().parents[2] / "examples" / "seeds"


def _seed(name):
    return runpy.run_path(str(SEEDS / f"{name}.py"), run_name="test")


@pytest.mark.parametrize("name,a,b", [
    ("copy_inner_partition", (1, 16), 256),
    ("copy_outer_partition", (32, 256), (8, 32)),
    ("copy_tv_partition", (32, 8), (4, 8)),
])
def test_seed_copies_on_numpy_arrays(name, a, b):
    rng = np.random.default_rng(0)
    S = rng.standard_normal((512, 512)).astype(np.float32)
    D = np.full_like(S, np.nan)
    with contextlib.redirect_stdout(io.StringIO()) as out:
        _seed(name)["launch_copy"](from_dlpack(S, assumed_align=16), from_dlpack(D, assumed_align=16), a, b)
    assert np.array_equal(D, S)
    assert last_launch().mode == "cpu"
    assert "tensor<ptr<f32, generic, align<16>> o (512,512):(512,1)>" in out.getvalue()  # host memory: generic


def test_seed_prints_static_descriptions_with_alignment():
    S = np.zeros((1024, 1024), np.float32)
    with contextlib.redirect_stdout(io.StringIO()) as out:
        _seed("copy_outer_partition")["launch_copy"](from_dlpack(S, assumed_align=16), from_dlpack(S.copy(), assumed_align=16), (32, 256), (8, 32))
    text = out.getvalue()
    # inside the kernel the tensors keep their host address space, as in CuTe DSL (numpy memory: generic)
    assert "tile_S = tensor<ptr<f32, generic, align<16>> o (32,256):(1024,1)>" in text
    assert "thr_tile_S = tensor<ptr<f32, generic> o (4,8):(8192,32)>" in text  # tidx % 32: element-aligned only
    # CuTe DSL 4.8.1: the stride order, and register tensors print align<32> (checked with the DSL on the CPU)
    assert "fragment = tensor<ptr<f32, rmem, align<32>> o (4,8):(8,1)>" in text


@cute.kernel
def _tv_kernel(mA: cute.Tensor, tv_layout: cute.Layout):
    tidx, _, _ = cute.arch.thread_idx()
    composed = cute.composition(mA, tv_layout)
    cute.printf("TIDX: {}", tidx)
    cute.printf("DATA: {}", composed[(tidx, None)])


def test_printf_prints_per_thread_in_thread_order():
    a = np.arange(24, dtype=np.int32).reshape(24, 1)
    tv = cute.make_layout(((2, 2), (2, 3)), stride=((2, 12), (1, 4)))
    with contextlib.redirect_stdout(io.StringIO()) as out:
        _tv_kernel(from_dlpack(a, assumed_align=16), tv).launch(grid=[1, 1, 1], block=[4, 1, 1])
    text = re.sub(r"0x[0-9a-f]{16}", "0xADDR", out.getvalue())
    assert text == (  # numpy memory: 'generic', as the tensor printed on the host
        "TIDX: 0\nDATA: raw_ptr(0xADDR: i32, generic, align<8>) o ((2,3)):((1,4)) = \n  ( 0, 1, 4, 5, 8, 9 )\n"
        "TIDX: 1\nDATA: raw_ptr(0xADDR: i32, generic, align<8>) o ((2,3)):((1,4)) = \n  ( 2, 3, 6, 7, 10, 11 )\n"
        "TIDX: 2\nDATA: raw_ptr(0xADDR: i32, generic, align<8>) o ((2,3)):((1,4)) = \n  ( 12, 13, 16, 17, 20, 21 )\n"
        "TIDX: 3\nDATA: raw_ptr(0xADDR: i32, generic, align<8>) o ((2,3)):((1,4)) = \n  ( 14, 15, 18, 19, 22, 23 )\n"
    )
    addrs = [int(x, 16) for x in re.findall(r"raw_ptr\(0x([0-9a-f]{16})", out.getvalue())]
    base = a.__array_interface__["data"][0]
    assert addrs == [base, base + 8, base + 48, base + 56]


@cute.kernel
def _axpb(S: cute.Tensor, D: cute.Tensor, alpha: float, beta: float):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    s = S[(None, bidx * 32 + tidx)]
    d = D[(None, bidx * 32 + tidx)]
    d.store(s.load() * alpha + beta)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.float16])
def test_arithmetic(dtype):
    S = (np.arange(4096) % 97 - 40).astype(dtype)
    D = np.zeros_like(S)
    s, d = cute.zipped_divide(from_dlpack(S), (4,)), cute.zipped_divide(from_dlpack(D), (4,))
    _axpb(s, d, 3, 2).launch(grid=(32, 1, 1), block=(32, 1, 1))
    assert np.array_equal(D, (S * dtype(3)).astype(dtype) + dtype(2))


def test_bf16_arithmetic_promotes_to_f32_as_cute_dsl():
    torch = pytest.importorskip("torch")
    S = torch.randn(4096, dtype=torch.bfloat16)
    D = torch.zeros_like(S)
    s, d = cute.zipped_divide(from_dlpack(S), (8,)), cute.zipped_divide(from_dlpack(D), (8,))
    _axpb(s, d, 0.3, -1.7).launch(grid=(16, 1, 1), block=(32, 1, 1))
    # bf16 values times a Float32 (alpha is a runtime float argument) are Float32 values, as in CuTe DSL
    # 4.8.1: computed in f32, each op rounded to f32, converted to bf16 once at the store
    assert torch.equal(D, ((S.float() * 0.3) - 1.7).bfloat16())


def test_2d_blocks_and_grids():
    S = np.arange(64 * 48, dtype=np.int32).reshape(64, 48)
    D = np.zeros_like(S)

    @cute.kernel
    def k(S: cute.Tensor, D: cute.Tensor):
        tx, ty, _ = cute.arch.thread_idx()
        bx, by, _ = cute.arch.block_idx()
        r, c = by * 8 + ty, bx * 16 + tx
        D[(r, c)] = S[(r, c)] * 2

    k(from_dlpack(S), from_dlpack(D)).launch(grid=(3, 8, 1), block=(16, 8, 1))
    assert np.array_equal(D, S * 2)


def test_out_of_bounds_grid_is_refused_and_nothing_written():
    S = np.ones((64, 64), np.float32)
    D = np.full((64, 64), -1.0, np.float32)
    mod = _seed("copy_inner_partition")
    tS, tD = cute.tiled_divide(from_dlpack(S), (1, 16)), cute.tiled_divide(from_dlpack(D), (1, 16))
    with contextlib.redirect_stdout(io.StringIO()):
        with pytest.raises(LaunchError, match=r"load from S reaches element offsets \[0, 8191\].*4096 elements.*first thread out of range is block \(1,0,0\) thread \(0,0,0\)"):
            mod["copy_kernel"](tS, tD).launch(grid=(2, 1, 1), block=(256, 1, 1))
    assert (D == -1).all()


def test_bad_launch_shapes_are_clear_errors():
    @cute.kernel
    def k():
        pass

    with pytest.raises(LaunchError, match="at most 1024"):
        k().launch(grid=(1, 1, 1), block=(64, 32, 1))
    with pytest.raises(LaunchError, match="grid.y = 70000 exceeds"):
        k().launch(grid=(1, 70000, 1), block=(1, 1, 1))
    with pytest.raises(LaunchError, match="must be at least 1"):
        k().launch(grid=(0, 1, 1), block=(1, 1, 1))


def test_thread_dependent_branch_is_a_runtime_branch():
    S = np.zeros(32, np.float32)

    @cute.kernel
    def k(S: cute.Tensor):
        t, _, _ = cute.arch.thread_idx()
        if t < 16:
            S[t] = 1.0

    k(from_dlpack(S)).launch(grid=(1, 1, 1), block=(32, 1, 1))
    assert S.tolist() == [1.0] * 16 + [0.0] * 16


def test_thread_dependent_control_flow_without_source_is_a_trace_error():
    S = np.zeros(32, np.float32)
    ns = {"cute": cute}
    exec("def k(S):\n    t, _, _ = cute.arch.thread_idx()\n    if t < 16:\n        S[t] = 1.0\n", ns)
    with pytest.raises(TraceError, match=r"depends on the thread index \(tid.x\)"):
        cute.kernel(ns["k"])(from_dlpack(S)).launch(grid=(1, 1, 1), block=(32, 1, 1))


def test_arrays_must_be_wrapped():
    @cute.kernel
    def k(S: cute.Tensor):
        pass

    with pytest.raises(LaunchError, match="from_dlpack"):
        k(np.zeros(4)).launch(grid=(1, 1, 1), block=(1, 1, 1))


def test_capture_traces_without_running():
    S = np.ones((256, 256), np.float32)
    D = np.zeros((256, 256), np.float32)
    with contextlib.redirect_stdout(io.StringIO()):
        with capture() as ks:
            _seed("copy_tv_partition")["launch_copy"](from_dlpack(S, assumed_align=16), from_dlpack(D, assumed_align=16), (32, 8), (4, 8))
    assert (D == 0).all() and len(ks) == 1
    assert "load S" in repr(ks[0]) and "store D" in repr(ks[0])


def test_interpret_env_forces_cpu(monkeypatch):
    monkeypatch.setenv("CUTELAB_INTERPRET", "1")
    S = np.arange(32, dtype=np.float32)
    D = np.zeros(32, np.float32)

    @cute.kernel
    def k(S: cute.Tensor, D: cute.Tensor):
        t, _, _ = cute.arch.thread_idx()
        D[t] = S[t]

    k(from_dlpack(S), from_dlpack(D)).launch(grid=(1, 1, 1), block=(32, 1, 1))
    assert np.array_equal(D, S) and last_launch().mode == "cpu"
