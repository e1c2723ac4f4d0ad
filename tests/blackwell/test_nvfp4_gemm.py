"""TMA of 4-bit elements and of block-scaled scale factors, and CUTLASS's first NVFP4 tutorial GEMM.

programs/cute/blackwell/tutorial/tutorial_gemm/nvfp4_gemm_0.py (with the utils.py beside it that it imports),
byte for byte as of CUTLASS commit 7107b05535f8977f5ecb9d01ee203205b1fd9bc4, in CUTLASS's folders so that its own
sys.path line finds utils.py: e2m1 A and B (two to a byte) and their e4m3 scale factors loaded by TMA, the scale
factors copied to tensor memory (tcgen05.cp), MmaMXF4NVF4Op UMMAs, checked by the program against
torch._scaled_mm (cutelab's CPU emulation of it) at one 128x256x256 tile.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
import cutelab.utils.blackwell_helpers as sm100_utils
import cutelab.utils.blockscaled_layout as blockscaled_utils
from cutelab.errors import LayoutError
from cutelab.nvgpu import cpasync, tcgen05
from cutelab.runtime import make_ptr

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).resolve().parent / "programs"
NVFP4_0 = PROGRAMS / "cute" / "blackwell" / "tutorial" / "tutorial_gemm" / "nvfp4_gemm_0.py"


def _fp4_tensor(raw: np.ndarray, shape: tuple, stride: tuple):
    ptr = make_ptr(cutlass.Float4E2M1FN, raw.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)), cute.AddressSpace.gmem,
                   assumed_align=16)
    return cute.make_tensor(ptr, cute.make_layout(shape, stride=stride))


def _nvf4_mma(m=128, n=256):
    op = tcgen05.MmaMXF4NVF4Op(cutlass.Float8E4M3FN, (m, n, 64), tcgen05.CtaGroup.ONE, tcgen05.OperandSource.SMEM)
    return cute.make_tiled_mma(op)


def test_tma_of_e2m1_counts_elements_in_the_box_and_bytes_in_the_strides():
    M, K = 256, 512
    raw = np.zeros(M * K // 2, np.uint8)
    A = _fp4_tensor(raw, (M, K), (K, 1))
    mma = _nvf4_mma()
    sl = sm100_utils.make_smem_layout_a(mma, (128, 256, 256), cutlass.Float4E2M1FN, 1)
    atom, _ = cute.nvgpu.make_tiled_tma_atom_A(cpasync.CopyBulkTensorTileG2SOp(tcgen05.CtaGroup.ONE), A,
                                               cute.slice_(sl, (None, None, None, 0)), (128, 256, 256), mma)
    d = atom.desc
    # a 128-byte swizzle row holds 256 e2m1: the (128, 256) tile is one box of 256 x 128 elements
    assert (d.dims, d.strides, d.box, d.swizzle, d.data_type) == ((512, 256), (1, 256), (256, 128), 3, 13)
    assert d.box_bytes == 128 * 256 // 2 == atom.size_in_bytes
    assert d.elem_strides == (1, 512)
    # TMA writes element e of the box at byte e // 2, then swizzles 16-byte units (32 elements) by the row
    # (128 bytes, 256 elements): element 32 of row 1 lands at the place of element 0 of row 1
    p = d.placement()
    assert p[256 + 32] == 256 and p[256] == 256 + 32 and p[0] == 0 and p[31] == 31


def test_tma_of_block_scaled_scale_factors_copies_runs_of_whole_atoms():
    # nvfp4_gemm_0's SFA: per 128 rows x 64 k (4 scale factors each), a 512-byte atom; the tile's
    # 128 x 256 has 4 of them, contiguous in memory and in shared memory
    M, K, L = 256, 512, 1
    mma = _nvf4_mma()
    tiler = (128, 256, 256)
    sfa = blockscaled_utils.tile_atom_to_shape_SF((M, K, L), 16)
    raw = np.zeros(cute.cosize(sfa), np.uint8)
    ptr = make_ptr(cutlass.Float8E4M3FN, raw.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)), cute.AddressSpace.gmem,
                   assumed_align=16)
    SFA = cute.make_tensor(ptr, sfa)
    sl = blockscaled_utils.make_smem_layout_sfa(mma, tiler, 16, 1)
    atom, _ = cute.nvgpu.make_tiled_tma_atom_A(cpasync.CopyBulkTensorTileG2SOp(tcgen05.CtaGroup.ONE), SFA,
                                               cute.slice_(sl, (None, None, None, 0)), tiler, mma,
                                               internal_type=cutlass.Int16)
    assert atom.runs == [(0, 0, 2048)]  # (global start, smem start, elements)
    assert (atom.desc.dims, atom.desc.box, atom.desc.strides) == ((256, cute.cosize(sfa) // 256), (256, 8), (1, 256))
    assert atom.size_in_bytes == 128 * 256 // 16
    # each scale factor of the tile lands where the smem layout puts its (row, k) coordinate
    one = cute.slice_(sl, (None, None, None, 0))
    for m, k in ((0, 0), (33, 17), (127, 255), (64, 100), (5, 200)):
        assert atom.g_of_s[one(m + 128 * k)] == SFA.layout((m, k, 0))
    assert sorted(set(atom.g_of_s.tolist())) == list(range(2048))


def test_scale_factor_tma_in_runs_shorter_than_a_row_is_refused():
    M, K, L = 128, 256, 1
    mma = _nvf4_mma()
    tiler = (128, 256, 256)
    sfa = blockscaled_utils.tile_atom_to_shape_SF((M, K, L), 16)
    raw = np.zeros(cute.cosize(sfa), np.uint8)
    ptr = make_ptr(cutlass.Float8E4M3FN, raw.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)), cute.AddressSpace.gmem,
                   assumed_align=16)
    # a shared layout with the rows' two levels swapped (row m at 4 * (m % 32) + 128 * (m // 32) + its scale
    # factor): each run of consecutive memory is one row's 4 scale factors, not whole rows of 256 elements
    bad = cute.make_layout(((((32, 4), 1), (16, 4)), 1, 4), stride=((((4, 128), 0), (0, 1)), 0, 512))
    with pytest.raises(LayoutError, match=r"runs of whole rows of 256 elements"):
        cute.nvgpu.make_tiled_tma_atom_A(cpasync.CopyBulkTensorTileG2SOp(tcgen05.CtaGroup.ONE),
                                         cute.make_tensor(ptr, sfa), bad, tiler, mma, internal_type=cutlass.Int16)


def test_tma_store_of_scale_factors_is_refused():
    sfa = blockscaled_utils.tile_atom_to_shape_SF((128, 256, 1), 16)
    raw = np.zeros(cute.cosize(sfa), np.uint8)
    ptr = make_ptr(cutlass.Float8E4M3FN, raw.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)), cute.AddressSpace.gmem,
                   assumed_align=16)
    sl = cute.slice_(blockscaled_utils.make_smem_layout_sfa(_nvf4_mma(), (128, 256, 256), 16, 1), (None, None, None, 0))
    with pytest.raises(LayoutError, match=r"TMA stores of a tile with hierarchical or broadcast \(stride-0\) modes"):
        cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileS2GOp(), cute.make_tensor(ptr, sfa), sl, (128, 256))


def test_nvfp4_gemm_0_passes_its_check_on_the_cpu():
    env = dict(os.environ, CUTE_DSL_ARCH="sm_100a", OMP_NUM_THREADS="1",
               PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "cutelab", "run", str(NVFP4_0), "--mnkl", "128,256,256,1",
                        "--tolerance", "0.01"], capture_output=True, text=True, env=env, timeout=300,
                       cwd=str(NVFP4_0.parent))
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    assert p.stdout.rstrip().endswith("PASS"), p.stdout[-2000:]


def test_cuda_of_nvfp4_gemm_0_for_sm_100a(tmp_path):
    """The kernel printed as CUDA: packed e2m1 shared memory addressed in bytes (element offset / 2) by the
    TMA loads and the UMMA descriptors, UMMA kind::mxf4nvf4 with 4 scale factors per row (scale_vec::4X),
    the scale factors' tcgen05.cp; nvcc compiles it for sm_100a where it is installed."""
    import shutil

    out = tmp_path / "k.cu"
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import sm100_sass  # the program on the CPU interpreter, its last kernel printed as CUDA
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    sm100_sass.render(str(NVFP4_0.relative_to(PROGRAMS)), ["--mnkl", "128,256,256,1"], out)
    src = out.read_text()
    for ptx in ("tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X", "0x08400480u",
                "tcgen05.cp.cta_group::1.32x128b.warpx4", "cp.async.bulk.tensor.3d", "cp.async.bulk.tensor.2d",
                "const unsigned char* __restrict__ mA_mkl", "unsigned char* const smem0 = cl_dyn_smem + 0;",
                "unsigned char* const smem1 = cl_dyn_smem + 65536;"):  # A: 4 stages of 128 x 256 e2m1 = 64 KiB
        assert ptx in src, ptx
    # a stage of A is 32768 elements, 16 KiB: the byte offset is the element offset / 2 from smem0's window address
    assert "smem0_sw + (unsigned int)(((32768u * (" in src and ")) / 2))" in src
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    c = subprocess.run([nvcc, "-arch=sm_100a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(out)],
                       capture_output=True, text=True)
    assert c.returncode == 0, c.stderr[-4000:]
