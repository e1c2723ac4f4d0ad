"""The Hopper attention forward example (examples/attention/sm90_fmha_fwd.py) on the CPU interpreter
against float64 numpy (O and the log-sum-exp), its CUDA compiled for sm_90a, and its input checks."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile

import numpy as np
import pytest

import cutelab as cute
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.launch.plan import last_launch

_EX = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "attention", "sm90_fmha_fwd.py")


def _example():
    spec = importlib.util.spec_from_file_location("sm90_fmha_fwd_example", _EX)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d", [64, 128])
def test_forward_on_the_cpu_equals_numpy(d, causal):
    """b1 h2 s256 f16: two query blocks x two key blocks per head (the ping-pong loop runs once per
    warpgroup; causal: the diagonal block masked, the blocks launched in reverse)."""
    ex = _example()
    err_o, err_lse = ex.run_cpu(1, 2, 256, d, causal, "f16")
    tol_o, tol_lse = ex.TOLERANCE["f16"]
    assert err_o <= tol_o and err_lse <= tol_lse, (err_o, err_lse)


def test_forward_bf16_with_stages_reused_equals_numpy():
    """bf16 (CPU torch tensors), 4 key blocks through 2 stages, causal (1 to 4 blocks per query block)."""
    pytest.importorskip("torch")
    ex = _example()
    err_o, err_lse = ex.run_cpu(1, 1, 512, 64, True, "bf16")
    tol_o, tol_lse = ex.TOLERANCE["bf16"]
    assert err_o <= tol_o and err_lse <= tol_lse, (err_o, err_lse)


def test_persistent_forward_equals_numpy():
    """Non-causal on a persistent grid: 9 tiles (3 query blocks x 3 heads) over 2 CTAs, the pipelines'
    stages and phases carried from tile to tile, the second CTA's last trip without a tile."""
    ex = _example()
    err_o, err_lse = ex.run_cpu(1, 3, 384, 64, False, "f16", dynamic=True, num_ctas=2)
    tol_o, tol_lse = ex.TOLERANCE["f16"]
    assert err_o <= tol_o and err_lse <= tol_lse, (err_o, err_lse)
    assert tuple(last_launch().ir.grid)[:2] == (2, 1)


@pytest.mark.parametrize("wgs", [2, 3])
def test_persistent_causal_forward_equals_numpy(wgs):
    """Causal on a persistent grid, the longest tiles first: 3 heads x 3 (or 2) query blocks over 2 CTAs;
    the tiles have 3, 2 or 1 key blocks (wgs 3: 3 or 2), so each CTA's pipeline position is the sum of
    its earlier tiles' blocks, carried through the tile loop."""
    ex = _example()
    err_o, err_lse = ex.run_cpu(1, 3, 384, 64, True, "f16", dynamic=True, num_ctas=2, consumer_wgs=wgs)
    tol_o, tol_lse = ex.TOLERANCE["f16"]
    assert err_o <= tol_o and err_lse <= tol_lse, (err_o, err_lse)
    assert tuple(last_launch().ir.grid)[:2] == (2, 1)


def test_forward_cuda_compiles_with_the_fa3_structure():
    ex = _example()
    err_o, _ = ex.run_cpu(1, 1, 256, 128, False, "f16", dynamic=True)  # the runtime loop, as on the GPU
    assert err_o <= ex.TOLERANCE["f16"][0]
    src = cuda.render(last_launch().ir)
    for s in ("setmaxnreg.dec.sync.aligned.u32 24", "setmaxnreg.inc.sync.aligned.u32 240",  # producer / consumers
              "bar.sync 2, 256", "bar.sync 3, 256", "bar.arrive 2, 256", "bar.arrive 3, 256",  # ping-pong
              "wgmma.wait_group.sync.aligned 1",  # softmax of S_j while P_{j-1} V_{j-1} runs
              "ex2.approx", "cp.async.bulk.tensor.2d", "const __grid_constant__ cl_tensormap tmap_tV"):
        assert s in src, s
    # S = Q K^T: A and B by descriptor; O += P V: A (P) in four .b32 registers, V N-major (trans-b 1)
    wg = "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {"
    assert src.count(wg) == 32  # 8 k-blocks each, S for the first block and in the loop, P V in the loop and after
    assert src.count("%64, %65, p, 1, 1, 0, 0;") == 16 and src.count("}, %68, p, 1, 1, 1;") == 16
    # P's words are packed and pinned before the fence of each P V group (the loop's, the last block's),
    # not between the wgmmas of the group
    assert src.count('asm volatile("" : "+r"(cl_pa') == 2
    _ptxas_report_is_clean(src)  # compiles for sm_90a (as sm90_util.nvcc_compiles does), with ptxas -v


@pytest.mark.parametrize("causal", [False, True])
def test_three_consumer_warpgroups_equal_numpy(causal):
    """consumer_wgs=3 (192-row blocks), s640 f16: four query blocks, the last one partial (rows 576..639:
    warpgroups 1 and 2 wholly past the end store nothing); causal: up to two masked key blocks per block
    and rows fully masked in the top block (max -inf, then a correction of 0)."""
    ex = _example()
    err_o, err_lse = ex.run_cpu(1, 1, 640, 64, causal, "f16", dynamic=True, consumer_wgs=3)
    tol_o, tol_lse = ex.TOLERANCE["f16"]
    assert err_o <= tol_o and err_lse <= tol_lse, (err_o, err_lse)
    assert tuple(last_launch().ir.grid)[:2] == (4, 1) and tuple(last_launch().ir.block)[0] == 512


def test_three_consumer_warpgroups_persistent_equal_numpy():
    """consumer_wgs=3 on a persistent grid: 6 tiles (2 blocks x 3 heads, s384: the second block partial)
    over 4 CTAs, the round-robin turn carried across tiles (two CTAs take two tiles)."""
    ex = _example()
    err_o, err_lse = ex.run_cpu(1, 3, 384, 64, False, "f16", dynamic=True, num_ctas=4, consumer_wgs=3)
    tol_o, tol_lse = ex.TOLERANCE["f16"]
    assert err_o <= tol_o and err_lse <= tol_lse, (err_o, err_lse)


def test_forward_without_intra_warpgroup_overlap_equals_numpy():
    """overlap=False with two warpgroups, d128 causal, the runtime loop (as on the GPU)."""
    ex = _example()
    err_o, err_lse = ex.run_cpu(1, 1, 384, 128, True, "f16", dynamic=True, overlap=False)
    tol_o, tol_lse = ex.TOLERANCE["f16"]
    assert err_o <= tol_o and err_lse <= tol_lse, (err_o, err_lse)


def test_overlap_wait_heads_a_branch_after_the_softmax():
    """keep_wait=True (not the default): the overlap's wait for P_{j-1} V_{j-1} in both arms of a runtime branch after
    the softmax of S_j (a lone wait_group(0) there, ptxas moves up to just after wait_group(1)); s384 d64, the
    runtime key loop of two trips: the branch's condition is not known when the kernel is printed. Equal to
    numpy; compiles for sm_90a with no spill and no wgmma serialized."""
    ex = _example()
    err_o, err_lse = ex.run_cpu(1, 1, 384, 64, False, "f16", dynamic=True, keep_wait=True)
    assert err_o <= ex.TOLERANCE["f16"][0] and err_lse <= ex.TOLERANCE["f16"][1], (err_o, err_lse)
    src = cuda.render(last_launch().ir)
    marks = []  # the consumer's waits, commits, exponentials (one mark a run), loops, and branches on the key index
    for line in src.splitlines():
        t = line.strip()
        mark = ("FOR" if t.startswith("for (") else "IF" if t.startswith("if (") and "i1" in t else
                "ELSE" if t.startswith("} else {") else "W0" if "wait_group.sync.aligned 0" in t else
                "W1" if "wait_group.sync.aligned 1" in t else "C" if "commit_group" in t else
                "EX" if "cl_ex2_approx(" in t else None)
        if mark and not (mark == "EX" and marks[-1:] == ["EX"]):
            marks.append(mark)
    # the first block (S, wait, softmax); the loop: S and P V, wait for S, softmax, the branch's two waits;
    # after it: the last P V and its wait
    assert " ".join(marks).endswith("C W0 EX FOR C C W1 EX IF W0 ELSE W0 C W0"), marks
    _ptxas_report_is_clean(src)


@pytest.mark.parametrize("wgs,causal", [(3, False), (3, True), (2, False)])
def test_variants_compile_without_spills(wgs, causal):
    """The CUDA of consumer_wgs=3 (512 threads: producer 32 registers, consumers 160; the turn over
    barriers 2, 3, 4) and of overlap=False compiles for sm_90a without spills; no wait_group(1) (the
    softmax waits for P V). s384: three key blocks (at s256, one trip of the key loop, nvcc merges it with
    the first and last blocks and the three-warpgroup kernel spills 128 bytes)."""
    ex = _example()
    err_o, _ = ex.run_cpu(1, 1, 384, 64, causal, "f16", dynamic=True, consumer_wgs=wgs, overlap=False)
    assert err_o <= ex.TOLERANCE["f16"][0]
    src = cuda.render(last_launch().ir)
    regs = ("24", "240") if wgs == 2 else ("32", "160")
    for s in (f"setmaxnreg.dec.sync.aligned.u32 {regs[0]}", f"setmaxnreg.inc.sync.aligned.u32 {regs[1]}",
              "bar.sync 2, 256", "bar.sync 3, 256", "bar.arrive 2, 256", "bar.arrive 3, 256"):
        assert s in src, s
    assert ("bar.sync 4, 256" in src) == (wgs == 3) and ("bar.arrive 4, 256" in src) == (wgs == 3)
    assert "wgmma.wait_group.sync.aligned 1" not in src
    assert f"__launch_bounds__({128 * (wgs + 1)})" in src
    _ptxas_report_is_clean(src)


def _ptxas_report_is_clean(src):
    """ptxas -v: no spills, and no wgmma serialized (C7510-C7518) or warpgroup.arrive injected between
    wgmmas (C7519)."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    with tempfile.TemporaryDirectory() as d:
        cu = os.path.join(d, "k.cu")
        with open(cu, "w") as f:
            f.write(src)
        p = subprocess.run([nvcc, "-arch=sm_90a", "-cubin", "-Xptxas", "-v", "-o", os.path.join(d, "k.cubin"), cu],
                           capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-4000:]
    assert "0 bytes spill stores, 0 bytes spill loads" in p.stderr and "C751" not in p.stderr, p.stderr[-4000:]


def test_bad_inputs_are_refused():
    ex = _example()
    with pytest.raises(ValueError, match="head_dim = 96"):
        ex.HopperAttentionForward(cute.Float16, 96)
    q = np.zeros((1, 1, 192, 64), np.float16)
    lse = np.zeros((1, 1, 192), np.float32)
    with pytest.raises(ValueError, match="seqlen 192 must be a multiple of 128"):
        ex.HopperAttentionForward(cute.Float16, 64)(*ex.views(q, q, q, q.copy(), lse))
    with pytest.raises(ValueError, match="consumer_wgs = 3 with head_dim 128"):
        ex.HopperAttentionForward(cute.Float16, 128, consumer_wgs=3)
    with pytest.raises(ValueError, match="overlap=True with consumer_wgs=3"):
        ex.HopperAttentionForward(cute.Float16, 64, consumer_wgs=3, overlap=True)
    with pytest.raises(ValueError, match=r"tile_mn = \(128, 128\); only \(192, 128\)"):
        ex.HopperAttentionForward(cute.Float16, 64, consumer_wgs=3, tile_mn=(128, 128))
    with pytest.raises(ValueError, match="made for BFloat16"):
        ex.HopperAttentionForward(cute.BFloat16, 64)(*ex.views(q[:, :, :128], q[:, :, :128], q[:, :, :128],
                                                              q[:, :, :128].copy(), lse[:, :, :128]))


@pytest.mark.gpu
@pytest.mark.parametrize("d,causal,ctas,wgs,overlap", [(64, False, None, 2, None), (128, True, None, 2, None),
                                                      (128, False, 0, 2, None), (64, False, None, 3, None),
                                                      (64, True, None, 3, None), (64, False, 0, 3, None),
                                                      (128, True, None, 2, False), (64, True, 0, 2, None),
                                                      (64, True, 0, 3, None)])
def test_forward_on_the_gpu_equals_torch(d, causal, ctas, wgs, overlap):
    """On an H100: O and LSE against torch in f32 (run_gpu checks them; ctas 0: persistent, one CTA per SM;
    wgs 3: 192-row blocks, the last of s1024 partial)."""
    ex = _example()
    assert ex.run_gpu(2, 4, 1024, d, causal, "bf16", iters=2, ctas=ctas, consumer_wgs=wgs, overlap=overlap) == 0
