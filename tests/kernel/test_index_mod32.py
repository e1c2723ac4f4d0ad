"""Offsets of accesses the launch proved in bounds are printed as ``unsigned int`` computed modulo
2**32 (cuda.CudaRenderer.base_var), even where interval arithmetic on their registers needs 64 bits:
a proved access's offset lies in [0, length), and sums and products are exact modulo 2**32, while
divisions, remainders and swizzles get exact operands. Runtime divisions of block/thread indices
and scalars are computed once, at the kernel's entry, in 32 bits. The printed kernel (GPU path,
under fake_gpu) is run on the host and compared with the CPU interpreter, and compiled with nvcc."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.cuda.fakegpu import FakeDeviceArray, fake_gpu
from cutelab.kernel.launch.plan import last_launch
from cutelab.runtime import from_dlpack

from test_cuda_compact import GXX, NVCC, _run_on_host  # noqa: E402  (the host harness)


@cute.kernel
def stepped(gA: cute.Tensor, gB: cute.Tensor, n: cutlass.Int32, d: cutlass.Int32):
    """cnt is a loop-carried Int32 whose range the analysis widens to Int32's, so the row offset
    64 * cnt of gA[cnt, col] needs 64 bits by intervals; the branch cnt < 3 proves the accesses in
    bounds."""
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    cnt = cutlass.Int32(0)
    for i in cutlass.range(n):
        if cnt < 3:
            gB[cnt + 4, tidx + 8 * bidx] = gA[cnt + 4, tidx + 8 * bidx] + 1.0
            cnt = cnt + 1
    q = bidx // d
    gB[bidx, tidx] = gA[bidx, tidx] * 2.0 + q


def _inputs():
    A = ((np.arange(1024) % 97) - 40).astype(np.float32).reshape(16, 64)
    return A, np.zeros((16, 64), np.float32)


def _gpu_source(n: int, d: int) -> tuple:
    A, B = _inputs()
    with fake_gpu():
        stepped(from_dlpack(FakeDeviceArray(A)), from_dlpack(FakeDeviceArray(B)), n, d).launch(grid=4, block=32)
        ll = last_launch()
        return ll.source, ll.ir


def _cpu(n: int, d: int) -> np.ndarray:
    A, B = _inputs()
    stepped(from_dlpack(A), from_dlpack(B), n, d).launch(grid=4, block=32)
    return B


def test_proved_offsets_are_32_bit():
    src, ir = _gpu_source(5, 3)
    assert ir.bounds_proved and not ir.guards
    body = src[src.index('extern "C"'):]
    loads = re.findall(r"const (unsigned int|long long) (o\d+) = .*;\n.*__ldg\(gA \+ \2", body)
    assert len(loads) == 2 and all(t == "unsigned int" for t, _ in loads), loads
    assert "long long" not in body.split("for (")[1].split("}")[0]  # the loop body has no 64-bit index
    entry = body[body.index("{"):body.index("for (")]
    assert re.search(r"const int hd\d+ = \(\(int\)cl_floordiv32\(", entry), entry  # hoisted, 32-bit


def test_the_interpreter_path_prints_exact_types():
    """Without the launch's proof (the CPU interpreter traced it) nothing is taken modulo 2**32."""
    _cpu(5, 3)
    src = cuda.render(last_launch().ir)
    body = src[src.index('extern "C"'):]
    assert re.search(r"const long long o\d+ = ", body)


@pytest.mark.skipif(GXX is None, reason="g++ is not installed")
@pytest.mark.parametrize("n,d", [(5, 3), (2, -3), (0, 1)])
def test_mod32_kernel_computes_what_the_interpreter_does(n, d, tmp_path):
    src, ir = _gpu_source(n, d)
    got = _run_on_host(src, ir.name, f", {n}, {d}", 4, 32, tmp_path)
    np.testing.assert_array_equal(got, _cpu(n, d).ravel())


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_mod32_kernel_compiles_with_nvcc(tmp_path):
    src, _ = _gpu_source(5, 3)
    f = tmp_path / "k.cu"
    f.write_text(src)
    r = subprocess.run([NVCC, "-arch=sm_90a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(f)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]


def test_guarded_accesses_keep_exact_offsets():
    """An access the launch could not prove is guarded: its offset (and the guard's test) stay exact."""
    @cute.kernel
    def unproved(gA: cute.Tensor, gB: cute.Tensor, n: cutlass.Int32):
        tidx, _, _ = cute.arch.thread_idx()
        cnt = cutlass.Int32(0)
        for i in cutlass.range(n):
            gB[cnt, tidx] = gA[0, tidx] + 1.0  # cnt unbounded: not provable
            cnt = cnt + 1

    A, B = _inputs()
    with fake_gpu():
        unproved(from_dlpack(FakeDeviceArray(A)), from_dlpack(FakeDeviceArray(B)), 3).launch(grid=1, block=32)
        ll = last_launch()
    assert ll.ir.guards
    store = re.search(r"const (\w+(?: \w+)?) (o\d+) = [^;]*;\n\s*\*\(gB \+ \2\)", ll.source)
    assert store and store.group(1) == "long long", ll.source  # the guarded store's offset: exact
    assert re.search(r"const long long g\d+ = ", ll.source)
