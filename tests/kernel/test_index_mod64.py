"""An index whose interval does not fit 64 bits (a product of two Int32 scalar arguments' full ranges,
as CUTLASS's tma_pipeline_single_warp.py computes ``(coord_m + row) * (k_tiles * TILE_K)``) is printed
in ``unsigned long long`` arithmetic, modulo 2**64, and read as a ``long long`` (intexpr._IntPrinter's
mod64): sums and products are exact modulo 2**64, so the offset is exact wherever it fits 64 bits, which
it does wherever the launch's exact check with the actual scalars (analysis/bounds.py, check_deferred)
finds it in bounds. A division of such an expression has no exact 64-bit form and is refused by name.
The printed kernel (GPU path, under fake_gpu) runs on the host and is compared with the CPU interpreter,
and compiles with nvcc."""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import LaunchError, TraceError
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.cuda.fakegpu import FakeDeviceArray, fake_gpu
from cutelab.kernel.launch.plan import last_launch
from cutelab.runtime import from_dlpack

from test_cuda_compact import GXX, NVCC, _run_on_host  # noqa: E402  (the host harness)


@cute.kernel
def rows(gA: cute.Tensor, gB: cute.Tensor, c0: cutlass.Int32, k: cutlass.Int32):
    """Thread t copies (times 2) row c0 + t of k tiles of 8: (c0 + t) * (k * 8) + 8 i + j."""
    tidx, _, _ = cute.arch.thread_idx()
    fa = cute.make_tensor(gA.iterator, cute.make_layout(1024))
    fb = cute.make_tensor(gB.iterator, cute.make_layout(1024))
    for i in cutlass.range(k):
        for j in cutlass.range_constexpr(8):
            idx = (c0 + tidx) * (k * 8) + i * 8 + j
            fb[idx] = fa[idx] * 2.0


def _inputs():
    A = ((np.arange(1024) % 97) - 40).astype(np.float32).reshape(16, 64)
    return A, np.zeros((16, 64), np.float32)


def _gpu_source(c0: int, k: int, block: int) -> tuple:
    A, B = _inputs()
    with fake_gpu():
        rows(from_dlpack(FakeDeviceArray(A)), from_dlpack(FakeDeviceArray(B)), c0, k).launch(grid=1, block=block)
        ll = last_launch()
        return ll.source, ll.ir


def _cpu(c0: int, k: int, block: int) -> np.ndarray:
    A, B = _inputs()
    rows(from_dlpack(A), from_dlpack(B), c0, k).launch(grid=1, block=block)
    return B


def test_the_wide_index_is_computed_modulo_2_64():
    src, ir = _gpu_source(0, 4, 32)
    assert not ir.guards  # checked exactly at the launch (deferred), not guarded
    body = src[src.index('extern "C"'):]
    wide = re.findall(r"const long long \w+ = \(\(long long\)\((.*)\)\);", body)
    assert wide and all("unsigned long long)c0" in w and "unsigned long long)k" in w for w in wide), body


def test_the_expected_rows():
    B = _cpu(1, 2, 8)
    want = np.zeros(1024, np.float32)
    A = _inputs()[0].ravel()
    want[16:16 + 8 * 16] = 2 * A[16:16 + 8 * 16]  # rows 1..8 of 16 elements
    np.testing.assert_array_equal(B.ravel(), want)


@pytest.mark.skipif(GXX is None, reason="g++ is not installed")
@pytest.mark.parametrize("c0,k,block", [(0, 4, 32), (1, 2, 8), (3, 1, 5)])
def test_mod64_kernel_computes_what_the_interpreter_does(c0, k, block, tmp_path):
    src, ir = _gpu_source(c0, k, block)
    got = _run_on_host(src, ir.name, f", {c0}, {k}", 1, block, tmp_path)
    np.testing.assert_array_equal(got, _cpu(c0, k, block).ravel())


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_mod64_kernel_compiles_with_nvcc(tmp_path):
    src, _ = _gpu_source(0, 4, 32)
    f = tmp_path / "k.cu"
    f.write_text(src)
    r = subprocess.run([NVCC, "-arch=sm_90a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(f)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]


def test_scalars_that_leave_the_tensor_are_refused_at_the_launch():
    """k = 2**28: (c0 + t) * 8k is far past 1024 elements (and past Int32): refused, nothing launched."""
    A, B = _inputs()
    with fake_gpu() as g:
        with pytest.raises(LaunchError, match=r"the (load from|store to) g[AB] reaches element offsets"):
            rows(from_dlpack(FakeDeviceArray(A)), from_dlpack(FakeDeviceArray(B)), 1, 1 << 28).launch(
                grid=1, block=4)
        assert not g.launches


def test_a_division_of_a_wider_than_64_bit_product_is_refused_by_name():
    @cute.kernel
    def divided(gA: cute.Tensor, gB: cute.Tensor, c0: cutlass.Int32, k: cutlass.Int32):
        tidx, _, _ = cute.arch.thread_idx()
        fb = cute.make_tensor(gB.iterator, cute.make_layout(1024))
        fb[((c0 + tidx) * (k * 8)) // 3] = 1.0

    A, B = _inputs()
    divided(from_dlpack(A), from_dlpack(B), 0, 4).launch(grid=1, block=32)
    with pytest.raises(TraceError, match=r"an index expression exceeds 64 bits: .*c0.* ranges over \[-?\d+, \d+\], "
                                         r"and a division, remainder or comparison needs its operands exact"):
        cuda.render(last_launch().ir)
