"""The host path of GPU launches, on a pretend GPU (cutelab.kernel.cuda.fakegpu): compiled calls and
remembered @cute.jit calls write only the new addresses into prepared parameter buffers, and
still refuse what does not match the compiled kernel."""

from __future__ import annotations

import contextlib
import io
import runpy
from pathlib import Path

import numpy as np
import pytest

import cutelab as cute
from cutelab.errors import LaunchError, TensorError
from cutelab.kernel.cuda.fakegpu import FakeDeviceArray, fake_gpu
from cutelab.runtime import from_dlpack

SEEDS = Path(__file__).resolve().parents[2] / "examples" / "seeds"
CASES = {
    "copy_inner_partition": ((1, 16), 256, (64, 64)),
    "copy_outer_partition": ((32, 256), (8, 32), (32, 256)),
    "copy_tv_partition": ((32, 8), (4, 8), (128, 64)),
}


def _seed(name):
    return runpy.run_path(str(SEEDS / f"{name}.py"), run_name="test")


def _dev(shape, dtype=np.float32, offset=0):
    """A pretend GPU array (host memory) of shape; offset elements into a larger buffer."""
    n = int(np.prod(shape))
    buf = np.zeros(n + 16, dtype)
    a = buf[offset:offset + n].reshape(shape)
    return FakeDeviceArray(a)


def _addr(x):
    return x.__cuda_array_interface__["data"][0]


def _quiet():
    return contextlib.redirect_stdout(io.StringIO())


@pytest.fixture
def gpu():
    with fake_gpu() as g:
        yield g


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_seed_launches_with_new_addresses_only(gpu, name):
    a, b, shape = CASES[name]
    mod = _seed(name)
    S, D = _dev(shape), _dev(shape)
    with _quiet():
        f = cute.compile(mod["launch_copy"], from_dlpack(S, assumed_align=16), from_dlpack(D, assumed_align=16), a, b)
    assert gpu.launches == []  # compiling launches nothing
    compiles = gpu.nvrtc.compiles
    plan = f.plans[0][0]
    f(from_dlpack(S, assumed_align=16), from_dlpack(D, assumed_align=16))
    S2, D2 = _dev(shape), _dev(shape)
    f(from_dlpack(S2, assumed_align=16), from_dlpack(D2, assumed_align=16))
    f(S2, D2)  # arrays straight in: converted and checked the same way
    assert [r["params"] for r in gpu.launches] == [[_addr(S), _addr(D)], [_addr(S2), _addr(D2)],
                                                  [_addr(S2), _addr(D2)]]
    assert {r["grid"] for r in gpu.launches} == {plan.grid}
    assert {r["block"] for r in gpu.launches} == {plan.ir.block}
    assert gpu.nvrtc.compiles == compiles  # no compile (nor trace) per call
    assert gpu.launches[0]["kernel"] == plan.ir.name


def _compiled_inner(gpu, shape=(64, 64)):
    mod = _seed("copy_inner_partition")
    S, D = _dev(shape), _dev(shape)
    with _quiet():
        f = cute.compile(mod["launch_copy"], from_dlpack(S, assumed_align=16), from_dlpack(D, assumed_align=16),
                         (1, 16), 256)
    return f, S, D


def test_other_shape_dtype_stride_refused(gpu):
    f, S, D = _compiled_inner(gpu)
    good = from_dlpack(D, assumed_align=16)
    with pytest.raises(LaunchError, match=r"argument 0 does not match the compiled kernel: layout \(64,32\):\(32,1\)"):
        f(from_dlpack(_dev((64, 32)), assumed_align=16), good)
    with pytest.raises(LaunchError, match="element type (f16|Float16) instead of (f32|Float32)"):
        f(from_dlpack(_dev((64, 64), np.float16), assumed_align=16), good)
    t = np.zeros((64, 128), np.float32)[:, ::2]
    with pytest.raises(LaunchError, match=r"layout \(64,64\):\(128,2\) instead of \(64,64\):\(64,1\)"):
        f(from_dlpack(FakeDeviceArray(t), assumed_align=16), good)
    with pytest.raises(LaunchError, match="device cpu:0 instead of cuda:0"):
        f(from_dlpack(np.zeros((64, 64), np.float32), assumed_align=16), good)
    assert gpu.launches == []  # nothing launched by any of them
    f(from_dlpack(S, assumed_align=16), good)  # and the good call still works after the refusals
    assert len(gpu.launches) == 1


def test_misaligned_pointer_refused_even_with_a_seen_signature(gpu):
    f, S, D = _compiled_inner(gpu)
    f(S, D)
    off = _dev((64, 64), offset=1)  # 4 bytes past a 16-byte boundary (numpy aligns buffers to 16 or more)
    assert _addr(off) % 16 == 4
    with pytest.raises((LaunchError, TensorError), match="not aligned to .*16 bytes"):
        f(off, D)  # converted with the compiled alignment: from_dlpack refuses it
    with pytest.raises(LaunchError, match="not aligned to 16 bytes"):
        f(from_dlpack(off, assumed_align=4), from_dlpack(D, assumed_align=16))
    assert len(gpu.launches) == 1


def test_overlapping_output_refused_for_restrict_kernel(gpu):
    f, S, D = _compiled_inner(gpu)
    assert f.plans[0][0].restrict
    with pytest.raises(LaunchError, match="overlap in memory and one of them is written"):
        f(S, S)
    assert gpu.launches == []


def test_one_storage_at_compile_time_must_stay_one(gpu):
    mod = _seed("copy_inner_partition")
    S, D = _dev((64, 64)), _dev((64, 64))
    tS = from_dlpack(S, assumed_align=16)
    with _quiet():
        f = cute.compile(mod["launch_copy"], tS, tS, (1, 16), 256)  # in place: one kernel parameter
    assert len(f.plans[0][0].ir.params) == 1
    f(tS, tS)
    assert gpu.launches[-1]["params"] == [_addr(S)]
    with pytest.raises(LaunchError, match="were one storage when the function was compiled"):
        f(tS, from_dlpack(D, assumed_align=16))
    assert len(gpu.launches) == 1


def test_static_argument_change_refused(gpu):
    import cutelab

    @cute.kernel
    def k(A: cute.Tensor, n: cutelab.Constexpr):
        t, _, _ = cute.arch.thread_idx()
        A[t] = A[t] * n

    @cute.jit
    def run(A, shape):
        k(A, shape[0]).launch(grid=(1, 1, 1), block=(32, 1, 1))

    A = _dev((32,))
    f = cute.compile(run, A, (3,))
    f(A, (3,))
    with pytest.raises(LaunchError, match=r"argument 1 is \(4,\), but the function was compiled with \(3,\)"):
        f(A, (4,))  # a tuple is a compile-time value (a plain int is a runtime Int32: the next test)
    assert len(gpu.launches) == 1


def test_runtime_int_argument_change_runs(gpu):
    """CuTe DSL's rule: a plain int argument of a @cute.jit function is a runtime Int32, so a
    compiled function takes another value (before: refused as a compile-time constant)."""
    import cutelab

    @cute.kernel
    def k(A: cute.Tensor, n: cutelab.Constexpr):
        t, _, _ = cute.arch.thread_idx()
        A[t] = A[t] * n

    @cute.jit
    def run(A, n):
        k(A, n).launch(grid=(1, 1, 1), block=(32, 1, 1))

    A = _dev((32,))
    f = cute.compile(run, A, 3)
    f(A, 3)
    f(A, 4)  # the kernel's Constexpr n: a kernel for 4, traced once and kept
    f(A, 4)
    assert len(gpu.launches) == 3 and gpu.nvrtc.compiles == 2
    with pytest.raises(LaunchError, match="expected an argument at position 1"):
        f(A)  # a runtime argument cannot be left out


def test_stream_argument_follows_the_call(gpu):
    from cutelab.kernel.cuda.driver import CUstream

    @cute.kernel
    def k(A: cute.Tensor):
        t, _, _ = cute.arch.thread_idx()
        A[t] = A[t] + 1.0

    @cute.jit
    def run(A, stream):
        k(A).launch(grid=(1, 1, 1), block=(32, 1, 1), stream=stream)

    A = _dev((32,))
    f = cute.compile(run, A, CUstream(0x11))
    f(A, CUstream(0x22))
    f(A, CUstream(0x33), stream=CUstream(0x44))  # the keyword wins, as for every compiled call
    assert [r["stream"] for r in gpu.launches] == [0x22, 0x44]


def _quiet_copy():
    @cute.kernel
    def k(S: cute.Tensor, D: cute.Tensor):
        t, _, _ = cute.arch.thread_idx()
        b, _, _ = cute.arch.block_idx()
        D[b * 128 + t] = S[b * 128 + t]

    @cute.jit
    def run(S, D, blocks):
        k(S, D).launch(grid=(blocks, 1, 1), block=(128, 1, 1))

    return k, run


def test_jit_call_remembered_when_silent(gpu):
    k, run = _quiet_copy()
    S, D = _dev((512,)), _dev((512,))
    run(S, D, 4)
    assert len(run.calls) == 1
    ncalls = {}

    body = run.fn

    def counting(*a):
        ncalls["n"] = ncalls.get("n", 0) + 1
        return body(*a)

    run.fn = counting
    S2, D2 = _dev((512,)), _dev((512,))
    run(S2, D2, 4)  # same signature: replayed, the body does not run
    assert ncalls == {}
    run(S2, D2, 2)  # another static value: the body runs (and that call is remembered too)
    assert ncalls == {"n": 1}
    run(_dev((1024,)), _dev((1024,)), 4)  # another shape: the body runs again
    assert ncalls == {"n": 2}
    assert [r["params"] for r in gpu.launches[:3]] == [[_addr(S), _addr(D)], [_addr(S2), _addr(D2)],
                                                       [_addr(S2), _addr(D2)]]
    assert [r["grid"][0] for r in gpu.launches] == [4, 4, 2, 4]


def test_jit_call_that_prints_runs_every_time(gpu, capsys):
    @cute.kernel
    def k(A: cute.Tensor):
        t, _, _ = cute.arch.thread_idx()
        A[t] = A[t] + 1.0

    @cute.jit
    def run(A):
        print("host side")
        k(A).launch(grid=(1, 1, 1), block=(32, 1, 1))

    A = _dev((32,))
    run(A)
    run(A)
    assert capsys.readouterr().out == "host side\nhost side\n"  # as CuTe DSL: the body runs at each call
    assert run.calls == [] and len(gpu.launches) == 2


def test_jit_cache_can_be_turned_off(gpu, monkeypatch):
    monkeypatch.setenv("CUTELAB_JIT_CACHE", "0")
    k, run = _quiet_copy()
    run(_dev((512,)), _dev((512,)), 4)
    assert run.calls == []


def test_jit_replay_retraces_on_aliasing(gpu):
    k, run = _quiet_copy()
    S, D = _dev((512,)), _dev((512,))
    run(S, D, 4)
    run(S, S, 4)  # same signature, but the output now overlaps the input: traced again without __restrict__
    assert [r["params"] for r in gpu.launches] == [[_addr(S), _addr(D)], [_addr(S), _addr(S)]]
    assert sorted(p.restrict for p in k.plans.values()) == [False, True]
    assert "__restrict__" not in run.calls[0].plans[0][0].source


def test_cpu_launches_are_not_remembered():
    k, run = _quiet_copy()
    S = np.arange(512, dtype=np.float32)
    D = np.zeros(512, np.float32)
    run(S, D, 4)
    assert run.calls == [] and np.array_equal(S, D)


def test_compiled_cpu_function_still_interprets():
    _, run = _quiet_copy()
    S = np.arange(512, dtype=np.float32)
    D = np.zeros(512, np.float32)
    f = cute.compile(run, S, D, 4)
    f(S, D, 4)  # blocks: a runtime Int32 (CuTe DSL's rule), given at each call
    assert np.array_equal(S, D)
    D2 = np.zeros(512, np.float32)
    f(S, D2, 4)
    assert np.array_equal(S, D2)


def test_plans_of_the_fake_driver_are_not_reused_by_another(gpu):
    k, run = _quiet_copy()
    S, D = _dev((512,)), _dev((512,))
    run(S, D, 4)
    plan = next(iter(k.plans.values()))
    from cutelab.kernel.cuda import driver

    assert plan.epoch == driver._EPOCH
    driver._EPOCH += 1  # as if the driver changed (fake_gpu does this on entry and exit)
    run.calls.clear()
    run(S, D, 4)
    assert gpu.nvrtc.compiles >= 1 and next(iter(k.plans.values())) is not plan


def test_deferred_scalar_checks_remembered(gpu):
    import cutelab

    @cute.kernel
    def k(A: cute.Tensor, n: cutelab.Int32):
        t, _, _ = cute.arch.thread_idx()
        if t < n:
            A[t + n] = A[t]

    A = from_dlpack(_dev((64,)), assumed_align=16)
    k(A, cutelab.Int32(16)).launch(grid=(1, 1, 1), block=(32, 1, 1))
    plan = next(iter(k.plans.values()))
    if not plan.deferred:
        pytest.skip("this kernel's accesses were proved without the scalar's value")
    assert (16,) in plan._scalars_ok
    with pytest.raises(LaunchError, match="Nothing was launched"):
        k(A, cutelab.Int32(40)).launch(grid=(1, 1, 1), block=(64, 1, 1))
    assert [r["params"][1] for r in gpu.launches] == [16]


def test_fake_torch_tensors_take_the_torch_path(gpu):
    torch = pytest.importorskip("torch")
    from cutelab.kernel.cuda.fakegpu import fake_cuda_tensor

    mod = _seed("copy_inner_partition")
    S = fake_cuda_tensor(torch.zeros(64, 64))
    D = fake_cuda_tensor(torch.zeros(64, 64))
    with _quiet():
        f = cute.compile(mod["launch_copy"], S, D, (1, 16), 256)
    f(S, D)
    S2 = fake_cuda_tensor(torch.zeros(64, 64))
    f(S2, D)
    tS2 = from_dlpack(S2, assumed_align=16)
    for _ in range(2):  # a Tensor where a torch tensor was compiled: the full check once, then the fast one
        f(tS2, D)
    assert [r["params"] for r in gpu.launches] == [[S.data_ptr(), D.data_ptr()], [S2.data_ptr(), D.data_ptr()],
                                                  [S2.data_ptr(), D.data_ptr()], [S2.data_ptr(), D.data_ptr()]]
    assert len(f._fast.getters[0][1].alternatives) == 2
    with pytest.raises(LaunchError, match="does not match the compiled kernel"):
        f(fake_cuda_tensor(torch.zeros(64, 32)), D)
    with pytest.raises(LaunchError, match="does not match the compiled kernel"):
        f(fake_cuda_tensor(torch.zeros(64, 64, dtype=torch.float16)), D)
    with pytest.raises(LaunchError, match="does not match the compiled kernel"):
        f(from_dlpack(fake_cuda_tensor(torch.zeros(64, 32)), assumed_align=16), D)
    assert len(gpu.launches) == 4


def test_compiled_functions_sharing_a_plan_keep_their_own_scalars(gpu):
    import cutelab

    @cute.kernel
    def k(A: cute.Tensor, x: cutelab.Float32):
        t, _, _ = cute.arch.thread_idx()
        A[t] = A[t] + x

    @cute.jit
    def run(A, x):
        k(A, x).launch(grid=(1, 1, 1), block=(32, 1, 1))

    A = _dev((32,))
    f3 = cute.compile(run, A, cutelab.Float32(3.0))
    f5 = cute.compile(run, A, cutelab.Float32(5.0))
    assert f3.plans[0][0] is f5.plans[0][0]  # one trace: scalar values are not part of it
    f3(A, cutelab.Float32(3.0))
    f5(A, cutelab.Float32(5.0))
    f3(A, cutelab.Float32(3.0))
    k(from_dlpack(A), cutelab.Float32(7.0)).launch(grid=(1, 1, 1), block=(32, 1, 1))
    f3(A, cutelab.Float32(3.0))
    bits = [np.array([r["params"][1]], np.uint64).view(np.float32)[0] for r in gpu.launches]
    assert bits == [3.0, 5.0, 3.0, 7.0, 3.0]


def test_other_device_index_refused(gpu):
    class OnDevice1(FakeDeviceArray):
        def __dlpack_device__(self):
            return (2, 1)

    f, S, D = _compiled_inner(gpu)
    with pytest.raises(LaunchError, match="device cuda:1 instead of cuda:0"):
        f(OnDevice1(S.array), D)
    assert gpu.launches == []


_STAND_IN = r"""
#include <stdint.h>
uint64_t seen[16];
int cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned smem, void* stream, void** params, void** extra) {
    seen[0] = (uint64_t)f; seen[1] = gx; seen[2] = gy; seen[3] = gz; seen[4] = bx; seen[5] = by;
    seen[6] = bz; seen[7] = smem; seen[8] = (uint64_t)stream; seen[9] = (uint64_t)extra;
    seen[10] = *(uint64_t*)params[0]; seen[11] = *(uint64_t*)params[1];
    return gx == 7 ? 1 : 0;
}
"""


def test_ctypes_launch_passes_what_cuda_h_declares(gpu, tmp_path, monkeypatch):
    """CUTELAB_LAUNCH=ctypes calls libcuda's cuLaunchKernel directly; a stand-in library with
    the same signature shows what it receives."""
    import ctypes
    import shutil
    import subprocess

    from cutelab.kernel.cuda import driver

    if not shutil.which("gcc"):
        pytest.skip("needs gcc for the stand-in libcuda")
    (tmp_path / "fake.c").write_text(_STAND_IN)
    so = tmp_path / "libfakecuda.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(so), str(tmp_path / "fake.c")], check=True)
    monkeypatch.setattr(driver, "LIBCUDA", str(so))
    monkeypatch.setenv("CUTELAB_LAUNCH", "ctypes")
    f, S, D = _compiled_inner(gpu)
    f(S, D, stream=0x5150)
    seen = (ctypes.c_uint64 * 16).in_dll(ctypes.CDLL(str(so)), "seen")
    plan = f.plans[0][0]
    assert list(seen[:12]) == [int(plan.fn), *plan.grid, *plan.ir.block, 0, 0x5150, 0, _addr(S), _addr(D)]
    assert gpu.launches == []  # not through the (fake) cuda-python driver
    bad = driver.Launcher(plan.fn, (7, 1, 1), (32, 1, 1), 0, 2, via="ctypes")
    with pytest.raises(LaunchError, match="cuLaunchKernel failed"):
        bad(0)
    with pytest.raises(LaunchError, match="'cuda-python' .* or 'ctypes'"):
        driver.Launcher(plan.fn, (1, 1, 1), (32, 1, 1), 0, 2, via="cffi")


def test_launch_benchmark_dry_run(tmp_path, capsys):
    """benchmarks/launch.py --dry-run: the whole host path with the fake driver, a table and JSON."""
    pytest.importorskip("torch")
    import json

    bench = runpy.run_path(str(Path(__file__).resolve().parents[2] / "benchmarks" / "launch.py"), run_name="bench")
    out = tmp_path / "launch.json"
    res = bench["main"](["--dry-run", "--iters", "20", "--no-dsl", "--json", str(out)])
    text = capsys.readouterr().out
    assert "| launch | host (us/call)" in text and "| compile (first call) |" in text
    data = json.loads(out.read_text())
    assert data["dry_run"] and data == json.loads(json.dumps(res))
    names = [r["name"] for r in data["launch"]]
    assert names[0].startswith("torch D.copy_(S)")
    assert sum(n.startswith("cutelab copy_") and "compiled(tS, tD" in n for n in names) == 3
    assert any("remembered" in n for n in names)
    jit = next(r for r in data["launch"] if "remembered" in r["name"])
    assert jit["remembered"] is True
    assert all(r["host"] > 0 and r["cpu"] > 0 and r["correct"] is None for r in data["launch"])
    examples = [r for r in data["launch"] if "workspaces" in r["name"] or "gemm" in r["name"]]
    assert [r["name"].split(" (")[0] for r in examples] == ["cutelab elementwise_add"] * 2 + [
        "cutelab sgemm", "cutelab tensorop_gemm"]  # torch's rows need a GPU
    assert all(0 < r["launch only"] < r["host"] for r in examples)
    assert [r["name"] for r in data["compile"]] == ["copy_inner_partition", "copy_outer_partition",
                                                    "copy_tv_partition", "elementwise_add"]
    for r in data["compile"]:
        assert r["cutelab first (s)"] > 0 and {"trace", "render", "module load"} <= set(r["phases"])


def test_remembered_calls_and_plans_keep_no_tensor_alive(gpu):
    import gc
    import weakref

    k, run = _quiet_copy()
    S, D = _dev((512,)), _dev((512,))
    refs = [weakref.ref(S), weakref.ref(D), weakref.ref(S.array)]
    run(S, D, 4)
    assert len(run.calls) == 1 and k.plans
    del S, D
    gc.collect()
    assert [r() for r in refs] == [None, None, None]
    S2, D2 = _dev((512,)), _dev((512,))
    run(S2, D2, 4)  # still replayed from the prepared checks
    assert gpu.launches[-1]["params"] == [_addr(S2), _addr(D2)] and len(run.calls) == 1
    run.calls[0](S2, D2, 4)  # a remembered call is a compiled function too
    with pytest.raises(LaunchError, match="do not match this remembered call"):
        run.calls[0](_dev((256,)), D2, 4)


def test_fake_nvrtc_with_nvcc_compiles_the_source_for_real(tmp_path):
    import shutil

    from cutelab.errors import CompileError
    from cutelab.kernel.cuda.nvrtc import compile_cuda

    nvcc = shutil.which("nvcc")
    if not nvcc:
        pytest.skip("nvcc not on the PATH")
    with fake_gpu(nvcc=nvcc) as g:
        f, S, D = _compiled_inner(g)
        f(S, D)
        assert g.nvrtc.compiles == 1 and len(g.launches) == 1
        with pytest.raises(CompileError, match="NVRTC could not compile kernel broken"):
            compile_cuda('extern "C" __global__ void broken(float* a) { a[0] = undefined_name; }', "broken")


def test_other_recorded_entries_run_in_order(gpu):
    """cute.compile records launches in order; an entry that is not a kernel launch (as a host-side
    print would be) runs itself, in its place, at every call."""
    from cutelab.kernel.launch import api as kl

    k, run = _quiet_copy()
    seen = []

    class Action:
        ir = None
        storages = []

        def run(self, storages=(), stream=None, scalars=()):
            seen.append(len(gpu.launches))

    @cute.jit
    def two(S, D):
        k(S, D).launch(grid=(4, 1, 1), block=(128, 1, 1))
        kl._local.recorder.append((Action(), [], []))
        k(D, S).launch(grid=(4, 1, 1), block=(128, 1, 1), stream=0x77)

    S, D = _dev((512,)), _dev((512,))
    f = cute.compile(two, S, D)
    f(S, D)
    f(S, D)
    assert seen == [1, 3]
    assert [r["stream"] for r in gpu.launches] == [0, 0x77, 0, 0x77]


def test_compiled_call_reports_a_guarded_access_of_an_earlier_launch(gpu):
    """Kernels with guarded accesses write an error word; the next launch (compiled or not) reads it."""
    from cutelab.kernel.launch.plan import _Plan

    @cute.kernel
    def shift_positive(gA: cute.Tensor, gB: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        v = gA[tidx]
        if v > 0.0:
            gB[tidx + 1] = v

    @cute.jit
    def run(A, B):
        shift_positive(A, B).launch(grid=(1, 1, 1), block=(32, 1, 1))

    A, B = _dev((32,)), _dev((32,))
    f = cute.compile(run, A, B)
    plan = f.plans[0][0]
    assert isinstance(plan, _Plan) and plan.error_word is not None
    f(A, B)
    plan.error_word.word[0] = 1  # what a thread that left gB writes
    with pytest.raises(LaunchError, match=r"the store to gB .*found at the next launch of shift_positive"):
        f(A, B)
    f(A, B)  # reported once
    assert len(gpu.launches) == 2


def test_large_dynamic_shared_memory_opts_in_once(gpu):
    from cutelab.kernel.cuda import driver

    class Fn:
        def __int__(self):
            return 0xF00

    fn = Fn()
    fn.params = []
    fn.name = "big"
    driver._SMEM_SET.pop(0xF00, None)
    before = gpu.driver.calls.get("cuFuncSetAttribute", 0)
    driver.Launcher(fn, (1, 1, 1), (32, 1, 1), 100 * 1024, 0)
    driver.Launcher(fn, (1, 1, 1), (32, 1, 1), 64 * 1024, 0)
    driver.Launcher(fn, (1, 1, 1), (32, 1, 1), 16 * 1024, 0)
    assert gpu.driver.calls.get("cuFuncSetAttribute", 0) - before == 1


def test_a_stream_argument_compiled_with_a_fake_stream_takes_any_stream_at_call_time():
    # tensorop_gemm compiles with make_fake_stream() and calls with the torch stream's CUstream;
    # compiled with None, the argument is a constant (its launches were not tied to it): refused
    import cutelab as cute
    from cutelab import cuda
    from cutelab.runtime import from_dlpack, make_fake_stream

    @cute.kernel
    def bump(A: cute.Tensor):
        t, _, _ = cute.arch.thread_idx()
        A[t] = A[t] + 1.0

    @cute.jit
    def f(A: cute.Tensor, stream: cuda.CUstream):
        bump(A).launch(grid=1, block=4, stream=stream)

    A = np.zeros(4, np.float32)
    c = cute.compile(f, from_dlpack(A), make_fake_stream())
    c(from_dlpack(A), cuda.CUstream(0))
    c(from_dlpack(A), cuda.CUstream(0))
    assert A.tolist() == [2.0] * 4
    c = cute.compile(f, from_dlpack(A), None)
    with pytest.raises(LaunchError, match="compiled with None"):
        c(from_dlpack(A), cuda.CUstream(0))


def test_torch_fast_check_still_catches_strides_and_devices(gpu):
    """The torch check of a contiguous compile uses is_contiguous() for the strides: a transposed
    view of the same shape, a non-contiguous slice and a CPU tensor still take the full check."""
    torch = pytest.importorskip("torch")
    from cutelab.kernel.cuda.fakegpu import fake_cuda_tensor

    mod = _seed("copy_inner_partition")
    S, D = fake_cuda_tensor(torch.zeros(64, 64)), fake_cuda_tensor(torch.zeros(64, 64))
    with _quiet():
        f = cute.compile(mod["launch_copy"], S, D, (1, 16), 256)
    f(S, D)
    with pytest.raises(LaunchError, match=r"layout \(64,64\):\(1,64\) instead of \(64,64\):\(64,1\)"):
        f(fake_cuda_tensor(torch.zeros(64, 64).t()), D)
    with pytest.raises(LaunchError, match=r"layout \(64,64\):\(128,1\) instead"):
        f(fake_cuda_tensor(torch.zeros(64, 128)[:, :64]), D)
    with pytest.raises(LaunchError, match="device cpu:0 instead of cuda:0"):
        f(torch.zeros(64, 64), D)
    assert len(gpu.launches) == 1
    # extent-1 modes: any stride moves no coordinate, so a contiguous (1, n) tensor is the same kernel
    S1, D1 = fake_cuda_tensor(torch.zeros(1, 4096)), fake_cuda_tensor(torch.zeros(1, 4096))
    with _quiet():
        g = cute.compile(mod["launch_copy"], S1, D1, (1, 16), 256)
    g(S1, D1)
    S1b = fake_cuda_tensor(torch.zeros(1, 4096))
    g(S1b, D1)
    assert gpu.launches[-1]["params"] == [S1b.data_ptr(), D1.data_ptr()]


def test_remembered_addresses_do_not_hide_an_overlap(gpu):
    """Calls cycling through workspaces skip the address checks for address sets that passed;
    an overlapping set is refused each time it comes back."""
    f, S, D = _compiled_inner(gpu)
    S2, D2 = _dev((64, 64)), _dev((64, 64))
    for _ in range(3):
        f(S, D)
        f(S2, D2)
        with pytest.raises(LaunchError, match="overlap in memory and one of them is written"):
            f(S, S)
    assert [r["params"] for r in gpu.launches] == [[_addr(S), _addr(D)], [_addr(S2), _addr(D2)]] * 3
    assert set(f._fast.passed) == {(_addr(S), _addr(D)), (_addr(S2), _addr(D2))}


def test_engine_memo_still_sees_a_tensor_changed_in_place(gpu):
    """The generated call remembers device engines that passed (a workspace's tensors pay their
    checks once); a Tensor given another layout, offset or engine afterwards is checked again
    and refused, and a remembered one launches with its own address."""
    f, S, D = _compiled_inner(gpu)
    tS, tD = from_dlpack(S, assumed_align=16), from_dlpack(D, assumed_align=16)
    f(tS, tD)
    engines = f._fast.getters[0][1].tensor[1]
    assert engines[id(tS.engine)] == (tS.engine, _addr(S))
    f(tS, tD)
    assert [r["params"] for r in gpu.launches] == [[_addr(S), _addr(D)]] * 2
    keep = tS.layout
    tS.layout = cute.make_layout((64, 32), stride=(32, 1))
    with pytest.raises(LaunchError, match=r"argument 0 does not match the compiled kernel: layout \(64,32\)"):
        f(tS, tD)
    tS.layout = keep
    tS.offset = 4
    with pytest.raises(LaunchError, match="argument 0 does not match the compiled kernel"):
        f(tS, tD)
    tS.offset = 0
    other = from_dlpack(_dev((64, 64), np.float16), assumed_align=16)
    tS.engine = other.engine
    with pytest.raises(LaunchError, match="element type (f16|Float16) instead of (f32|Float32)"):
        f(tS, tD)
    assert len(gpu.launches) == 2


def test_a_failed_driver_launch_is_an_error_on_the_generated_call(gpu):
    f, S, D = _compiled_inner(gpu)
    f(S, D)
    assert f._fast.direct is not None and "DC0(" in f._fast.direct.source  # the driver call written out
    gpu.driver.launch_error = 719
    with pytest.raises(LaunchError, match="CUDA driver call cuLaunchKernel failed: 719 fake error"):
        f(S, D)
    gpu.driver.launch_error = 0
    f(S, D)
    assert len(gpu.launches) == 2


def test_same_layout_memo_compares_values_once_per_object():
    from cutelab.dynamic import DynInt
    from cutelab.kernel.launch.fastpath import _SameLayout

    ref = cute.make_layout((DynInt(64, div=16), 8), stride=(8, 1))
    same = _SameLayout(ref)
    eq = cute.make_layout((DynInt(64, div=16), 8), stride=(8, 1))
    other = cute.make_layout((DynInt(32, div=16), 8), stride=(8, 1))
    assert same(ref) and same(eq) and same(eq)
    assert not same(other) and not same(other)
    assert list(same.seen.values()) == [eq]  # the unequal one is never remembered
    for _ in range(100):  # bounded
        same(cute.make_layout((DynInt(64, div=16), 8), stride=(8, 1)))
    assert 0 < len(same.seen) <= 64


def test_dynamic_layout_workspaces_launch_without_retracing(gpu):
    """elementwise_add compiled with mark_layout_dynamic() tensors and called with other Tensors
    of the same values (the example's benchmark workspaces): no trace, no compile; other values
    still give another trace (of their own)."""
    add = runpy.run_path(str(SEEDS.parents[0] / "dsl" / "elementwise_add.py"), run_name="test")

    def ws(shape=(32, 256)):
        return [from_dlpack(_dev(shape)).mark_layout_dynamic() for _ in range(3)]

    w0 = ws()
    with _quiet():
        f = cute.compile(add["elementwise_add"], *w0)
    compiles = gpu.nvrtc.compiles
    spaces = [ws() for _ in range(3)]
    for _ in range(2):
        for w in spaces:
            f(*w)
    assert gpu.nvrtc.compiles == compiles and getattr(f, "_variant_cache", None) is None
    assert [r["params"][:3] for r in gpu.launches] == [[t.engine.address for t in w] for w in spaces] * 2
    f(*ws((64, 256)))
    assert len(f._variant_cache) == 1 and len(gpu.launches) == 7


def test_calls_with_the_last_variants_values_skip_the_variant_lookup(gpu, monkeypatch):
    """Called again and again with other dynamic values than it was traced with (quack's eps, a bigger
    batch), a compiled function runs the variant the previous call ran after its generated check,
    without looking the values up again; other values still find (or make) their own variant."""
    from cutelab.kernel.launch import compiled as compiled_mod

    add = runpy.run_path(str(SEEDS.parents[0] / "dsl" / "elementwise_add.py"), run_name="test")

    def ws(shape):
        return [from_dlpack(_dev(shape)).mark_layout_dynamic() for _ in range(3)]

    with _quiet():
        f = cute.compile(add["elementwise_add"], *ws((32, 256)))
    looked = []
    real = compiled_mod._respecialize
    monkeypatch.setattr(compiled_mod, "_respecialize", lambda cf, args: looked.append(1) or real(cf, args))
    big = ws((64, 256))
    for _ in range(3):
        f(*big)
    assert len(looked) == 1 and len(f._variant_cache) == 1 and len(gpu.launches) == 3
    f(*ws((96, 256)))
    f(*ws((32, 256)))  # the traced values: no lookup
    assert len(looked) == 2 and len(f._variant_cache) == 2 and len(gpu.launches) == 5
    assert [r["params"][:3] for r in gpu.launches[:3]] == [[t.engine.address for t in big]] * 3


# --------------------------------------------------------------------------- cute.testing.benchmark

def test_benchmark_cycles_workspaces_and_checks_its_arguments():
    from cutelab import testing

    seen = []
    made = iter(range(100))

    def gen():
        return testing.JitArguments(next(made), k=1)

    us = testing.benchmark(lambda x, k: seen.append(x), workspace_generator=gen, workspace_count=3,
                           warmup_iterations=4, iterations=5)
    assert us > 0
    assert seen == [0, 1, 2, 0] + [1, 2, 0, 1, 2]  # warm-up, then the timed calls go on from where it stopped
    with pytest.raises(ValueError, match="workspace_count must be at least 1"):
        testing.benchmark(print, workspace_generator=gen, workspace_count=0)
    with pytest.raises(ValueError, match="workspace_count > 1 needs a workspace_generator"):
        testing.benchmark(print, kernel_arguments=testing.JitArguments(), workspace_count=2)
    with pytest.raises(ValueError, match="pass kernel_arguments"):
        testing.benchmark(print)
    with pytest.raises(TypeError, match="must give JitArguments, got tuple"):
        testing.benchmark(print, workspace_generator=lambda: (1, 2))


def test_benchmark_of_interpreted_kernels_runs_the_call_once(capsys):
    """Without a GPU, a call that runs kernels on the CPU interpreter is run once, and stderr says why."""
    import cutelab as cute
    from cutelab import testing
    from cutelab.runtime import from_dlpack

    @cute.kernel
    def bump(A: cute.Tensor):
        t, _, _ = cute.arch.thread_idx()
        A[t] = A[t] + 1

    @cute.jit
    def f(A: cute.Tensor):
        bump(A).launch(grid=1, block=4)

    A = np.zeros(4, np.float32)
    cf = cute.compile(f, from_dlpack(A))
    us = testing.benchmark(cf, kernel_arguments=testing.JitArguments(from_dlpack(A)), warmup_iterations=5,
                           iterations=100)
    assert us > 0 and A.tolist() == [1, 1, 1, 1]
    assert "ran once instead of 5 warm-up and 100 timed iterations" in capsys.readouterr().err


class _EventDriver:
    """fakegpu's driver with what cute.testing.benchmark uses on a GPU: events, stream capture,
    graphs, scratch memory; launches on a capturing stream become graph nodes."""

    def __init__(self, inner):
        self.inner = inner
        self.log = []
        self.capturing = None
        self.nodes = 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    class CUstream(int):
        pass

    def cuLaunchKernel(self, fn, *a):  # noqa: N802
        stream = int(a[7])
        if self.capturing is not None and stream == self.capturing:
            self.nodes += 1
            return (0,)
        self.log.append(("launch", stream))
        return self.inner.cuLaunchKernel(fn, *a)

    def cuEventCreate(self, flags):  # noqa: N802
        return (0, object())

    def cuEventRecord(self, ev, stream):  # noqa: N802
        self.log.append(("record", int(stream)))
        return (0,)

    def cuEventSynchronize(self, ev):  # noqa: N802
        return (0,)

    def cuEventElapsedTime(self, a, b):  # noqa: N802
        return (0, 3.0)

    def cuEventDestroy(self, ev):  # noqa: N802
        return (0,)

    def cuStreamBeginCapture(self, stream, mode):  # noqa: N802
        self.capturing, self.nodes = int(stream), 0
        return (0,)

    def cuStreamEndCapture(self, stream):  # noqa: N802
        self.capturing = None
        return (0, ("graph", self.nodes))

    def cuGraphGetNodes(self, graph, n):  # noqa: N802
        return (0, None, graph[1])

    def cuGraphInstantiate(self, graph, flags):  # noqa: N802
        return (0, ("exec", graph[1]))

    def cuGraphLaunch(self, g, stream):  # noqa: N802
        self.log.append(("graph", g[1], int(stream)))
        return (0,)

    def cuGraphExecDestroy(self, g):  # noqa: N802
        return (0,)

    def cuGraphDestroy(self, g):  # noqa: N802
        return (0,)

    def cuDeviceGetAttribute(self, attr, dev):  # noqa: N802
        return (0, 50 << 20) if attr == 38 else self.inner.cuDeviceGetAttribute(attr, dev)

    class CUdevice_attribute:  # noqa: N801
        CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76

    def cuMemAlloc(self, n):  # noqa: N802
        self.log.append(("alloc", n))
        return (0, 0xABC000)

    def cuMemsetD32Async(self, p, v, n, stream):  # noqa: N802
        self.log.append(("memset", n * 4, int(stream)))
        return (0,)

    def cuMemFree(self, p):  # noqa: N802
        self.log.append(("free",))
        return (0,)


def _stream_copy():
    @cute.kernel
    def k(A: cute.Tensor):
        t, _, _ = cute.arch.thread_idx()
        A[t] = A[t] + 1.0

    @cute.jit
    def run(A, stream):
        k(A).launch(grid=(1, 1, 1), block=(32, 1, 1), stream=stream)

    return run


def test_benchmark_times_with_events_on_the_stream(gpu, monkeypatch):
    from cutelab import testing
    from cutelab.kernel.cuda import driver
    from cutelab.kernel.cuda.driver import CUstream

    ed = _EventDriver(driver._DRIVER)
    A = _dev((32,))
    f = cute.compile(_stream_copy(), A, CUstream(0))
    monkeypatch.setattr(driver, "_DRIVER", ed)
    s = CUstream(0x77)
    us = testing.benchmark(f, kernel_arguments=testing.JitArguments(A, s), stream=s, warmup_iterations=2,
                           iterations=4)
    assert us == pytest.approx(3.0 / 4 * 1e3)  # the events' milliseconds, per call, in microseconds
    # the stream check captured one call (no launch), then warm-up, record, 4 calls, record
    assert ed.log == [("launch", 0x77)] * 2 + [("record", 0x77)] + [("launch", 0x77)] * 4 + [("record", 0x77)]
    with pytest.raises(ValueError, match="does not match the stream the kernel was launched in"):
        testing.benchmark(f, kernel_arguments=testing.JitArguments(A, CUstream(0x99)), stream=s)
    # several workspaces: twice the L2 cleared on the stream before timing
    ed.log.clear()
    testing.benchmark(f, workspace_generator=lambda: testing.JitArguments(A, s), workspace_count=2, stream=s,
                      warmup_iterations=0, iterations=1)
    assert ed.log[:3] == [("alloc", 100 << 20), ("memset", 100 << 20, 0x77), ("free",)]


def test_benchmark_with_cuda_graphs_times_the_replay(gpu, monkeypatch):
    from cutelab import testing
    from cutelab.kernel.cuda import driver
    from cutelab.kernel.cuda.driver import CUstream

    ed = _EventDriver(driver._DRIVER)
    A = _dev((32,))
    f = cute.compile(_stream_copy(), A, CUstream(0))
    monkeypatch.setattr(driver, "_DRIVER", ed)
    s = CUstream(0x55)
    us = testing.benchmark(f, kernel_arguments=testing.JitArguments(A, s), stream=s, warmup_iterations=3,
                           iterations=5, use_cuda_graphs=True)
    assert us == pytest.approx(3.0 / 5 * 1e3)
    assert ed.log == [("graph", 3, 0x55), ("record", 0x55), ("graph", 5, 0x55), ("record", 0x55)]
    with pytest.raises(ValueError, match="use_cuda_graphs=True needs .* non-default stream"):
        testing.benchmark(f, kernel_arguments=testing.JitArguments(A, s), use_cuda_graphs=True)
    with pytest.raises(ValueError, match=r"does not match the stream .* \(0 launches captured for 3 calls\)"):
        testing.benchmark(f, kernel_arguments=testing.JitArguments(A, CUstream(0x66)), stream=s,
                          warmup_iterations=3, use_cuda_graphs=True)


def test_compiled_tma_kernel_gets_its_tensor_map_parameters(gpu):
    """A compiled call of a kernel with TMA descriptors: the prepared parameter buffer has their
    slots (after the tensors), and each call encodes them for the call's addresses."""
    import cutelab
    from cutelab.nvgpu import cpasync, warpgroup

    sl = cute.tile_to_shape(warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.K_SW128, cute.Float16),
                            (64, 64), (0, 1))

    @cute.kernel
    def k(atom: cutelab.Constexpr, tA: cute.Tensor, B: cute.Tensor, sl: cutelab.Constexpr):
        tidx, _, _ = cute.arch.thread_idx()
        smem = cutelab.utils.SmemAllocator()
        bars = smem.allocate_tensor(cutelab.Int64, cute.make_layout(1), 8)
        sA = smem.allocate_tensor(cutelab.Float16, sl.outer, 1024, swizzle=sl.inner)
        if tidx == 0:
            cute.arch.mbarrier_init(bars.iterator, 1)
        cute.arch.sync_threads()
        if tidx == 0:
            cute.arch.mbarrier_arrive_and_expect_tx(bars.iterator, 64 * 64 * 2)
            cute.copy(atom, cute.local_tile(tA, (64, 64), (0, 0)), sA, tma_bar_ptr=bars.iterator)
        cute.arch.mbarrier_wait(bars.iterator, 0)
        B[tidx] = sA[0, tidx]

    @cute.jit
    def run(A, B):
        atom, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), A, sl, (64, 64))
        k(atom, tA, B, sl).launch(grid=1, block=32)

    A, B = _dev((64, 64), np.float16), _dev((32,), np.float16)
    f = cute.compile(run, from_dlpack(A, assumed_align=16), from_dlpack(B, assumed_align=16))
    A2 = _dev((64, 64), np.float16)
    f(from_dlpack(A, assumed_align=16), from_dlpack(B, assumed_align=16))
    f(from_dlpack(A2, assumed_align=16), from_dlpack(B, assumed_align=16))
    assert [r["params"][:2] for r in gpu.launches] == [[_addr(A), _addr(B)], [_addr(A2), _addr(B)]]
    maps = [list(r["tensor_maps"].values()) for r in gpu.launches]  # the fake map's word 1 is its address
    assert [[int.from_bytes(m[8:16], "little") for m in ms] for ms in maps] == [[_addr(A)], [_addr(A2)]]
    # the generated call serves TMA kernels too (else every call paid the general path: CUTLASS's
    # Hopper fmha.py spent 45-65 us of host time a call): the descriptors follow each call's address
    assert f._fast.direct is not None and "TM0.fill" in f._fast.direct.source
    assert f._hot is f._fast.direct
    for X in (A, A2, A):
        f(from_dlpack(X, assumed_align=16), from_dlpack(B, assumed_align=16))
        assert f._hot is f._fast.direct
        m = list(gpu.launches[-1]["tensor_maps"].values())[0]
        assert gpu.launches[-1]["params"][:2] == [_addr(X), _addr(B)] and int.from_bytes(m[8:16], "little") == _addr(X)


def _scenario(gpu):
    """Calls of compiled functions, good and bad: what each launched or raised."""
    torch = pytest.importorskip("torch")
    from cutelab.kernel.cuda.driver import CUstream
    from cutelab.kernel.cuda.fakegpu import fake_cuda_tensor

    out = []
    names = {}  # address -> which tensor (addresses differ from run to run)

    def call(f, *a, **kw):
        n = len(gpu.launches)
        try:
            f(*a, **kw)
            out.append([([names.get(p, "other") for p in r["params"]], r["stream"]) for r in gpu.launches[n:]])
        except LaunchError as e:
            out.append(str(e).split(":")[1][:60])

    mod = _seed("copy_inner_partition")
    S, D = fake_cuda_tensor(torch.zeros(64, 64)), fake_cuda_tensor(torch.zeros(64, 64))
    with _quiet():
        f = cute.compile(mod["launch_copy"], S, D, (1, 16), 256)
    S2 = fake_cuda_tensor(torch.zeros(64, 64))
    names.update({S.data_ptr(): "S", D.data_ptr(): "D", S2.data_ptr(): "S2"})
    for args in [(S, D), (S2, D), (S, S), (fake_cuda_tensor(torch.zeros(64, 64).t()), D), (torch.zeros(64, 64), D),
                 (fake_cuda_tensor(torch.zeros(64, 64, dtype=torch.float64)), D), (S,), (S, D, (1, 16)),
                 (S, D, (2, 16)), (from_dlpack(S2, assumed_align=16), D), (from_dlpack(S2, assumed_align=16), D),
                 (S, D)]:
        call(f, *args)
    call(f, S, D, stream=CUstream(0x42))
    g, A, B = _compiled_inner(gpu)
    names.update({_addr(A): "A", _addr(B): "B"})
    for args in [(A, B), (from_dlpack(A, assumed_align=16), from_dlpack(B, assumed_align=16)), (B, A), (A, A)]:
        call(g, *args)
    _, run = _quiet_copy()  # a remembered @cute.jit call replays through the same generated code
    X, Y = _dev((512,)), _dev((512,))
    names.update({_addr(X): "X", _addr(Y): "Y"})
    for args in [(X, Y, 4), (X, Y, 4), (Y, X, 4), (X, X, 4), (X, Y, 4), (_dev((256,)), Y, 2)]:
        call(run, *args)
    out.append(len(run.calls))
    return out, f


def test_generated_call_does_what_the_general_path_does(monkeypatch):
    """The generated call (CompiledFunction's direct path) against the general one
    (CUTELAB_DIRECT_CALL=0): the same launches, the same refusals."""
    with fake_gpu() as g1:
        fast, f = _scenario(g1)
        assert f._fast.direct is not None and "x.is_contiguous()" in f._fast.direct.source
    monkeypatch.setenv("CUTELAB_DIRECT_CALL", "0")
    with fake_gpu() as g2:
        general, f = _scenario(g2)
        assert f._fast.direct is None
    assert fast == general
    refused = [i for i, r in enumerate(fast) if isinstance(r, str)]
    assert refused == [2, 3, 4, 5, 6, 8, 16]  # overlap, transposed, CPU, f64, missing, static, overlap
    assert fast[12] == [(["S", "D"], 0x42)] and fast[15] == [(["B", "A"], 0)]
    assert fast[17:20] == [[(["X", "Y"], 0)], [(["X", "Y"], 0)], [(["Y", "X"], 0)]]
    assert fast[20] == [(["X", "X"], 0)]  # overlapping: traced again (without __restrict__), remembered too
    assert fast[21:] == [[(["X", "Y"], 0)], [(["other", "Y"], 0)], 3]


def test_tensors_in_a_list_and_a_cycling_int32_take_the_generated_call(gpu, monkeypatch):
    """A compiled function given a list of tensors and a cutlass.Int32 whose value cycles 0, 1, 2 (CUTLASS's
    Lamport all-reduce passes its peers' buffers so, and a signal): the generated call covers tensors in a
    list, takes an Int32 given as a value of its type, and a value seen before runs its own trace without
    looking it up again; a tensor of another element type in the list is still refused."""
    from cutelab.kernel.launch import compiled as compiled_mod

    @cute.kernel
    def k(bufs: list, out: cute.Tensor, s: cute.Int32):
        t, _, _ = cute.arch.thread_idx()
        out[t] = bufs[0][t] + bufs[1][t] + cute.Float32(s)

    @cute.jit
    def run(s: cute.Int32, bufs: list, out: cute.Tensor):
        k(bufs, out, s).launch(grid=(1, 1, 1), block=(32, 1, 1))

    bufs, out = [_dev((32,)), _dev((32,))], _dev((32,))
    with _quiet():
        f = cute.compile(run, cute.Int32(0), bufs, out)
    looked = []
    real = compiled_mod._respecialize
    monkeypatch.setattr(compiled_mod, "_respecialize", lambda cf, args: looked.append(1) or real(cf, args))
    for i in range(9):
        f(cute.Int32(i % 3), bufs, out)
    assert f._fast.direct is not None and "x = x[1]" in f._fast.direct.source
    # each value looked up once (0 too: an Int32 where the compile had an int is checked once), then found by value
    assert len(looked) == 3 and len(gpu.launches) == 9 and len(f._variant_cache) == 2
    assert [r["params"][-1] for r in gpu.launches][:3] == [0, 1, 2]
    with pytest.raises((LaunchError, TensorError), match="float64|Float64|element type|dtype"):
        f(cute.Int32(1), [bufs[0], _dev((32,), np.float64)], out)
