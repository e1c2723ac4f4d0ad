"""TMA of 4-bit elements and of block-scaled scale factors, and CUTLASS's first NVFP4 tutorial GEMM.

programs/cute/blackwell/tutorial/tutorial_gemm/nvfp4_gemm_0.py (with the utils.py beside it that it imports),
byte for byte as of CUTLASS commit 7107b05535f8977f5ecb9d01ee203205b1fd9bc4, in CUTLASS's folders so that its own
sys.path line finds utils.py: e2m1 A and B (two to a byte) and their e4m3 scale factors loaded by TMA, the scale
factors copied to tensor memory (tcgen05.cp), MmaMXF4NVF4Op UMMAs, checked by the program against
torch._scaled_mm (cutelab's CPU emulation of it) at one 128x256x256 tile. Beside it nvfp4_gemm_1.py (the 2-CTA
tutorial: 2x1 clusters, 2-CTA block-scaled UMMAs and tcgen05.cp, B's scale factors multicast to both CTAs of a
pair), programs/dense_blockscaled_gemm_persistent.py, dense_blockscaled_gemm_persistent_amax.py and
dense_blockscaled_gemm_persistent_prefetch.py (kernel/blockscaled_gemm/), all unchanged.
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
NVFP4_1 = NVFP4_0.parent / "nvfp4_gemm_1.py"  # 2-CTA block-scaled UMMA, 2x1 clusters, multicast scale factors


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


def test_multicast_of_scale_factors_gives_each_cta_a_slice_of_whole_rows():
    # nvfp4_gemm_1's SFB: a 1-CTA MMA's (256 n, 256 k) tile of B's scale factors, multicast to the 2 CTAs of a
    # pair, each issuing half: with K = 512 the tile's two 2048-element runs (its n halves) lie 4096 apart
    N, K, L = 512, 512, 1
    mma = _nvf4_mma(128, 256)
    tiler = (128, 256, 256)
    sfb = blockscaled_utils.tile_atom_to_shape_SF((N, K, L), 16)
    raw = np.zeros(cute.cosize(sfb), np.uint8)
    ptr = make_ptr(cutlass.Float8E4M3FN, raw.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)), cute.AddressSpace.gmem,
                   assumed_align=16)
    SFB = cute.make_tensor(ptr, sfb)
    sl = cute.slice_(blockscaled_utils.make_smem_layout_sfb(mma, tiler, 16, 1), (None, None, None, 0))
    op = cpasync.CopyBulkTensorTileG2SMulticastOp(tcgen05.CtaGroup.TWO)
    atom, _ = cute.nvgpu.make_tiled_tma_atom_B(op, SFB, sl, tiler, mma, (1, 2, 1, 1), internal_type=cutlass.Int16)
    assert atom.num_multicast == 2 and atom.runs == [(0, 0, 2048)] and atom.size_in_bytes == 2048
    gB = cute.local_tile(SFB, (256, 256), (0, 0, 0))
    sB = cute.make_tensor(SFB.iterator, sl)  # a tensor of the smem layout (tma_partition reads its layout)
    seen = []
    for c in range(2):
        s_c, g_c = cpasync.tma_partition(atom, c, cute.make_layout(2), cute.group_modes(sB, 0, 3),
                                         cute.group_modes(gB, 0, 2))
        assert cute.size(s_c, mode=[0]) == 2048 and s_c.offset == 2048 * c  # consecutive shared memory
        seen += [g_c.offset + g_c.layout(i) for i in range(0, 2048, 256)]
    # the two slices are the tile's two runs: n rows 0..127 at 0.., rows 128..255 at 4096..
    assert seen == list(range(0, 2048, 256)) + list(range(4096, 6144, 256))


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
    with pytest.raises(LayoutError, match=r"runs of whole rows of W elements of the tensor.s memory \(2048 elements\), W a power of two from 16"):
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


@pytest.mark.parametrize("prog,mnkl", [(NVFP4_0, "128,256,256,1"),
                                       (NVFP4_1, "256,256,256,1")])  # one 2x1 cluster (4 clusters, 2 k-tiles: 2 min)
def test_nvfp4_gemm_passes_its_check_on_the_cpu(prog, mnkl):
    env = dict(os.environ, CUTE_DSL_ARCH="sm_100a", OMP_NUM_THREADS="1",
               PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "cutelab", "run", str(prog), "--mnkl", mnkl,
                        "--tolerance", "0.01"], capture_output=True, text=True, env=env, timeout=300,
                       cwd=str(prog.parent))
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


BLOCKSCALED = PROGRAMS / "dense_blockscaled_gemm_persistent.py"  # kernel/blockscaled_gemm/, unchanged


@pytest.mark.parametrize("args", [
    # nvfp4 (e2m1 A and B, e4m3 scale factors per 16), one 128x128 tile, 4 k-blocks of 64: cute.gemm takes
    # [A, SFA], [B, SFB]; compiled on placeholder pointers with an Int32(0) problem shape
    ["--mnkl", "128,128,256,1", "--mma_tiler_mn", "128,128", "--cluster_shape_mn", "1,1"],
    # mxf8: e4m3 A and B, Float8E8M0FNU scale factors per 32 (made on the host by cutlass.torch, rounded toward
    # +infinity as CuTe DSL's conversion), UMMA kind::mxf8f6f4
    ["--mnkl", "128,128,256,1", "--a_dtype", "Float8E4M3FN", "--b_dtype", "Float8E4M3FN", "--sf_dtype",
     "Float8E8M0FNU", "--sf_vec_size", "32"],
])
def test_dense_blockscaled_gemm_persistent_on_the_cpu(args):
    env = dict(os.environ, CUTE_DSL_ARCH="sm_100a", OMP_NUM_THREADS="1",
               PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "cutelab", "run", str(BLOCKSCALED), *args], capture_output=True,
                       text=True, env=env, timeout=600, cwd=str(PROGRAMS))
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    assert p.stdout.rstrip().endswith("PASS"), p.stdout[-2000:]


PREFETCH = PROGRAMS / "dense_blockscaled_gemm_persistent_prefetch.py"  # kernel/blockscaled_gemm/, unchanged


def test_dense_blockscaled_gemm_persistent_prefetch_on_the_cpu():
    """cute.prefetch of the A, B and scale-factor tiles (the scale factors' atom is a TmaRunsAtom: its source is
    the tile's view with broadcast modes) before the main loop and, with --prefetch_dist 1 over 3 k-tiles, inside
    it; checked by the program against torch."""
    env = dict(os.environ, CUTE_DSL_ARCH="sm_100a", OMP_NUM_THREADS="1",
               PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "cutelab", "run", str(PREFETCH), "--mnkl", "128,128,768,1",
                        "--mma_tiler_mn", "128,128", "--cluster_shape_mn", "1,1", "--prefetch_dist", "1",
                        "--tolerance", "0.01"], capture_output=True, text=True, env=env, timeout=600, cwd=str(PROGRAMS))
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    assert "Prefetch distance: 1" in p.stdout and p.stdout.rstrip().endswith("PASS"), p.stdout[-2000:]


def test_cuda_of_nvfp4_gemm_1_for_sm_100a(tmp_path):
    """The 2-CTA tutorial printed as CUDA: the pair's UMMA and scale-factor copies of cta_group::2 and the
    multicast TMA loads whose bytes complete at the pair's leader; nvcc compiles it where it is installed."""
    import shutil

    out = tmp_path / "k.cu"
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import sm100_sass
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    sm100_sass.render(str(NVFP4_1.relative_to(PROGRAMS)), ["--mnkl", "256,256,256,1"], out)
    src = out.read_text()
    for ptx in ("tcgen05.mma.cta_group::2.kind::mxf4nvf4.block_scale.scale_vec::4X",
                "tcgen05.cp.cta_group::2.32x128b.warpx4", "tcgen05.alloc.cta_group::2",
                ".multicast::cluster.cta_group::2 [%0]"):
        assert ptx in src, ptx
    assert "cta_group::1" not in src.replace("tcgen05.commit.cta_group::1", "")  # no 1-CTA tcgen05 op but commits
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    c = subprocess.run([nvcc, "-arch=sm_100a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(out)],
                       capture_output=True, text=True)
    assert c.returncode == 0, c.stderr[-4000:]


AMAX = PROGRAMS / "dense_blockscaled_gemm_persistent_amax.py"  # kernel/blockscaled_gemm/, unchanged


def test_dense_blockscaled_gemm_persistent_amax_with_e8m0_scales():
    """nvfp4 A and B with Float8E8M0FNU scale factors per 16 (made by cutlass.torch.cute_tensor_like, rounded toward
    +infinity as CuTe DSL's conversion) and the epilogue's absolute maximum of C (a per-thread reduce of
    math.absf, then atomics): the program checks C and the amax against torch."""
    env = dict(os.environ, CUTE_DSL_ARCH="sm_100a", OMP_NUM_THREADS="1",
               PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "cutelab", "run", str(AMAX), "--mnkl", "128,128,256,1"],
                       capture_output=True, text=True, env=env, timeout=600, cwd=str(PROGRAMS))
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    assert "SF dtype: Float8E8M0FNU" in p.stdout and p.stdout.rstrip().endswith("PASS"), p.stdout[-2000:]
