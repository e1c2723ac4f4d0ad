"""CUTLASS's Blackwell mixed-input FMHA decode (examples/python/CuTeDSL/cute/blackwell/kernel/attention/
mixed_input_fmha/mixed_input_fmha_decode.py, byte for byte as of CUTLASS commit
7107b05535f8977f5ecb9d01ee203205b1fd9bc4, in CUTLASS's folders) run by ``cutelab run`` with CUTE_DSL_ARCH=sm_100a on
the CPU interpreter to its own check against torch's scaled_dot_product_attention.

bf16 Q against Int8 (or e4m3) K and V with a bf16 scale per block of the head dimension: convert warpgroups read K
with ldmatrix (LdMatrix8x16x8bOp) and V with SM100's transposed 8-bit ldmatrix (LdMatrix16x16x8bOp), scale and
convert them and store them to tensor memory (tcgen05.st 16x256b) for the UMMAs that read A from there; the K and V
scales come by TMA through one TMA tensor (the K scales') and two atoms; warp roles in an if/elif chain; pipelines
whose consumers all arrive (tidx=0); with --kv_splits 2 a second kernel reduces the two splits' partial results.
Int4 K and V (packed two a byte) come unpacked by TMA and ldmatrix and are sign-extended in registers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).resolve().parent / "programs"
PROG = PROGRAMS / "cute" / "blackwell" / "kernel" / "attention" / "mixed_input_fmha" / "mixed_input_fmha_decode.py"


def _run(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, CUTE_DSL_ARCH="sm_100a", OMP_NUM_THREADS="1",
               PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "cutelab", "run", str(PROG), *args], capture_output=True, text=True,
                          env=env, timeout=300, cwd=str(PROGRAMS))


@pytest.mark.parametrize("args", [
    # Int8 K/V, one scale per 128 of the head dimension, 2 splits of 128 keys each, then the reduction kernel
    ["--seqlen", "256", "--heads_q", "8", "--heads_k", "1", "--headdim", "128", "--block_scaledim", "128",
     "--kv_splits", "2", "--tolerance", "0.02"],
    # e4m3 K/V, 2 KV heads of 8 query heads each (GQA), one split; at the program's tolerance (0.1: its bf16 P
    # and converted V differ from torch's by up to 0.03 here)
    ["--seqlen", "128", "--heads_q", "16", "--heads_k", "2", "--headdim", "128", "--block_scaledim", "128",
     "--kv_splits", "1", "--kv_dtype", "Float8E4M3FN"],
], ids=["int8-2splits", "e4m3-gqa"])
def test_mixed_input_fmha_decode_on_the_cpu(args):
    p = _run(*args)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    assert "Verifying results..." in p.stdout and p.stdout.rstrip().endswith("PASS"), p.stdout[-2000:]


def test_cuda_of_the_decode_kernel_for_sm_100a(tmp_path):
    """The decode kernel (launched before the reduction) printed as CUDA: V's ldmatrix.m16n16.x2.trans.b8, the
    converted K and V stored to tensor memory by tcgen05.st 16x256b (the op's TMEM offsets checked against PTX's
    fragment), the V scales' TMA through their atom's own tensor map; nvcc compiles it for sm_100a where installed."""
    import shutil

    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import sm100_sass
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    out = tmp_path / "k.cu"
    name = sm100_sass.render(str(PROG.relative_to(PROGRAMS)), ["--seqlen", "256", "--heads_q", "8", "--heads_k", "1",
                                                              "--headdim", "128", "--block_scaledim", "128",
                                                              "--kv_splits", "2"], out, "decode")
    assert name == "decode"
    src = out.read_text()
    for ptx in ("ldmatrix.sync.aligned.m16n16.x2.trans.shared.b8", "tcgen05.st.sync.aligned.16x256b.x8.b32",
                "cl_tensormap tmap_tma_atom_vs_tensor", "tcgen05.mma.cta_group::1.kind::f16"):
        assert ptx in src, ptx
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    c = subprocess.run([nvcc, "-arch=sm_100a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(out)],
                       capture_output=True, text=True)
    assert c.returncode == 0, c.stderr[-4000:]


def test_mixed_input_fmha_decode_int4_kv_on_the_cpu():
    # Int4 K/V, real 4-bit memory (cute_tensor_like packs two a byte, the program puts element_type = Int4 over the
    # bytes): the TMA unpacks it (internal_type=Int8: 16 values in the first 8 bytes of each 16-byte unit),
    # ldmatrix .b8x16.b4x16_p64 (unpack_bits=4) reads one value a byte, zero-extended, and
    # cute.arch.sext_unpacked_i4_i8_intrinsic sign-extends them; checked by the program against torch
    p = _run("--seqlen", "128", "--heads_q", "8", "--heads_k", "1", "--headdim", "128", "--block_scaledim", "128",
             "--kv_splits", "1", "--kv_dtype", "Int4")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    assert "Verifying results..." in p.stdout and p.stdout.rstrip().endswith("PASS"), p.stdout[-2000:]


def test_cuda_of_the_int4_decode_kernel_for_sm_100a(tmp_path):
    """With Int4 K/V the decode kernel's CUDA reads K and V by the unpacking ldmatrix forms (.b8x16.b4x16_p64) and
    its K/V tensor maps are of the unpacking type (16U4_ALIGN16B); nvcc compiles it for sm_100a where installed."""
    import shutil

    from cutelab.nvgpu.cpasync.tma import TmaDescriptor
    from cutelab.numeric import Int4, Int8

    d = TmaDescriptor(Int8, (128, 64), (1, 64), (128, 64), 3, (1, 0), Int4)
    assert (d.data_type, d.elem_strides, d.box_bytes) == (14, (1, 128), 128 * 64 // 2)
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import sm100_sass
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    out = tmp_path / "k.cu"
    name = sm100_sass.render(str(PROG.relative_to(PROGRAMS)), ["--seqlen", "128", "--heads_q", "8", "--heads_k", "1",
                                                              "--headdim", "128", "--block_scaledim", "128",
                                                              "--kv_splits", "1", "--kv_dtype", "Int4"], out, "decode")
    assert name == "decode"
    src = out.read_text()
    for ptx in ("ldmatrix.sync.aligned.m8n16.x4.shared.b8x16.b4x16_p64",
                "ldmatrix.sync.aligned.m16n16.x2.trans.shared.b8x16.b4x16_p64"):
        assert ptx in src, ptx
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    c = subprocess.run([nvcc, "-arch=sm_100a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(out)],
                       capture_output=True, text=True)
    assert c.returncode == 0, c.stderr[-4000:]
