"""What the CUDA printer makes of cute.math's approximate forms (fastmath=True) and of f32 -> bf16/f16
conversions: the hardware's instructions, as CuTe DSL lowers them; the CPU interpreter computes the
same values as before."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.dtypes import to_storage
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.cuda.nvrtc import nvrtc_options
from cutelab.kernel.launch.plan import last_launch
from cutelab.numeric import BFloat16
from cutelab.runtime import from_dlpack


@cute.kernel
def _softmax_like(gX: cute.Tensor, gY: cute.Tensor, gZ: cute.Tensor, fast: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    x = gX[(tidx, None)].load()
    e = cute.math.exp2(x * 1.4426950408889634 - 3.0, fastmath=fast)
    gY[(tidx, None)].store(e)
    gZ[(tidx, None)].store(e.to(cutlass.BFloat16))


def _launch(fast):
    torch = pytest.importorskip("torch")
    X = (torch.arange(32 * 8, dtype=torch.float32).reshape(32, 8) - 100) / 16
    Y = torch.zeros_like(X)
    Z = torch.zeros(X.shape, dtype=torch.bfloat16)
    _softmax_like(from_dlpack(X), from_dlpack(Y), from_dlpack(Z), fast).launch(grid=1, block=32)
    return X, Y, Z, cuda.render(last_launch().ir)


@pytest.mark.parametrize("fast", [False, True])
def test_fast_exp2_prints_the_approximate_instruction_and_runs_as_exp2(fast):
    X, Y, Z, src = _launch(fast)
    want = np.exp2(X.numpy() * np.float32(1.4426950408889634) - np.float32(3.0))
    np.testing.assert_allclose(Y.numpy(), want, rtol=1e-6)
    body = src.split("__global__")[1]
    if fast:
        assert "cl_ex2_approx(" in body and "exp2f(" not in body
    else:
        assert "exp2f(" in body and "cl_ex2_approx(" not in body
    # the bf16 stores are the conversions of the f32 values, two at a time (one cvt.rn.bf16x2.f32 each)
    assert body.count("cl_f32x2_to_bf16x2(") == 4 and "cl_f32_to_bf16(" not in body
    bits = Z.view(__import__("torch").int16).numpy().astype(np.uint16)
    np.testing.assert_array_equal(bits, to_storage(Y.numpy(), BFloat16))


def test_packed_conversion_keeps_the_element_order():
    """cvt.rn.bf16x2.f32 d, a, b puts a in the upper half: the printer passes (hi, lo)."""
    src = cuda._PRELUDE
    assert 'asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(x) : "f"(hi), "f"(lo))' in src
    assert 'asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(x) : "f"(hi), "f"(lo))' in src


def test_bf16_nan_is_the_hardware_canonical_nan():
    # PTX cvt.rn.bf16.f32 gives 0x7FFF for every NaN, sign dropped (seen on an H100, 2026-11-27)
    f = np.array([np.nan, -np.nan, np.inf, -np.inf, 1.0, 1.00390625], dtype=np.float32)
    f[1] = np.frombuffer(np.uint32(0xFF812345).tobytes(), np.float32)[0]
    assert [hex(b) for b in to_storage(f, BFloat16)] == ["0x7fff", "0x7fff", "0x7f80", "0xff80", "0x3f80", "0x3f80"]


def test_fmad_option(monkeypatch):
    monkeypatch.delenv("CUTELAB_FMAD", raising=False)
    assert "--fmad=true" in nvrtc_options()
    monkeypatch.setenv("CUTELAB_FMAD", "0")
    assert "--fmad=false" in nvrtc_options() and "--fmad=true" not in nvrtc_options()
