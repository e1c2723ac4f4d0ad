"""SM100's 8-bit transposed ldmatrix, ``warp.LdMatrix16x16x8bOp`` (``ldmatrix.m16n16.x{1,2}.trans.shared.b8``),
in a kernel: lanes 0..16*num-1 give the rows (16 bytes each) of num 16x16 matrices; thread t = t0 + 4*t1
receives value r + 4*h + 8*m = M_m[4*t0 + r, 8*h + t1] (CuTe's SM100_U8x{8,16}_LDSM_T layout, which its CUDA
gets from the instruction's registers by CuTe's byte exchange). CUTLASS's mixed-input FMHA decode loads V so."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import TraceError
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.launch.plan import last_launch
from cutelab.nvgpu import warp
from cutelab.runtime import from_dlpack


@cute.kernel
def ldsm16(mS: cute.Tensor, mOut: cute.Tensor, num: cutlass.Constexpr, unpack: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    s = smem.allocate_tensor(cutlass.Int8, cute.make_layout((16 * num, 16), stride=(16, 1)), 16)
    for i in cutlass.range_constexpr(16 * num * 16 // 32):
        e = i * 32 + tidx
        s[e // 16, e % 16] = mS[e // 16, e % 16]
    cute.arch.sync_threads()
    atom = cute.make_copy_atom(warp.LdMatrix16x16x8bOp(num_matrices=num, unpack_bits=unpack), cutlass.Int8)
    frag = cute.make_rmem_tensor(cute.make_layout(8 * num), cutlass.Int8)
    cute.copy(atom, s[tidx % (16 * num), None], frag)
    for v in cutlass.range_constexpr(8 * num):
        mOut[tidx, v] = frag[v]


@pytest.mark.parametrize("num", [1, 2])
def test_ldmatrix_m16n16_trans_b8_gives_cutes_fragment(num, tmp_path):
    M = ((np.arange(16 * num * 16) * 7) % 251 - 125).astype(np.int8).reshape(16 * num, 16)
    out = np.zeros((32, 8 * num), np.int8)
    ldsm16(from_dlpack(M), from_dlpack(out), num, None).launch(grid=1, block=32)
    want = np.zeros_like(out)
    for t in range(32):
        t0, t1 = t % 4, t // 4
        for m in range(num):
            for h in range(2):
                for r in range(4):
                    want[t, r + 4 * h + 8 * m] = M[16 * m + 4 * t0 + r, 8 * h + t1]
    np.testing.assert_array_equal(out, want)
    src = cuda.render(last_launch().ir)
    assert f"ldmatrix.sync.aligned.m16n16.x{num}.trans.shared.b8 {{%0,%1{',%2,%3' if num == 2 else ''}}}" in src
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    (tmp_path / "k.cu").write_text(src)
    p = subprocess.run([nvcc, "-arch=sm_100a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(tmp_path / "k.cu")],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-4000:]


@pytest.mark.parametrize("num", [1, 2])
def test_ldmatrix_m16n16_unpacking_4_bits(num):
    # .b8x16.b4x16_p64: each 16-byte row holds 16 4-bit values in its first 8 bytes (the even one low), the last 8
    # are padding; each value arrives zero-extended in a byte of the same fragment as the 8-bit form's
    rng = np.random.default_rng(num)
    M = rng.integers(-128, 128, size=(16 * num, 16), dtype=np.int8)  # padding bytes random: never read
    U = np.empty((16 * num, 16), np.int8)
    b = M.view(np.uint8)[:, :8]
    U[:, 0::2], U[:, 1::2] = b & 0xF, b >> 4
    out = np.zeros((32, 8 * num), np.int8)
    ldsm16(from_dlpack(M), from_dlpack(out), num, 4).launch(grid=1, block=32)
    want = np.zeros_like(out)
    for t in range(32):
        t0, t1 = t % 4, t // 4
        for m in range(num):
            for h in range(2):
                for r in range(4):
                    want[t, r + 4 * h + 8 * m] = U[16 * m + 4 * t0 + r, 8 * h + t1]
    np.testing.assert_array_equal(out, want)
    assert f"ldmatrix.sync.aligned.m16n16.x{num}.trans.shared.b8x16.b4x16_p64" in cuda.render(last_launch().ir)


def test_ldmatrix_m16n16_unpacking_6_bits_is_refused():
    M = np.zeros((16, 16), np.int8)
    with pytest.raises(TraceError, match=r"LdMatrix16x16x8bOp with unpack_bits=6 .* is not supported"):
        ldsm16(from_dlpack(M), from_dlpack(np.zeros((32, 8), np.int8)), 1, 6).launch(grid=1, block=32)
