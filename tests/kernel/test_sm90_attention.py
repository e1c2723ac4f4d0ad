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


def _ptxas_report_is_clean(src):
    """ptxas -v: no spills, and no warpgroup.arrive injected between wgmmas (C7519)."""
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
    assert "0 bytes spill stores, 0 bytes spill loads" in p.stderr and "C7519" not in p.stderr, p.stderr[-4000:]


def test_bad_inputs_are_refused():
    ex = _example()
    with pytest.raises(ValueError, match="num_ctas .* is for non-causal"):
        ex.HopperAttentionForward(cute.Float16, 64, causal=True, num_ctas=132)
    with pytest.raises(ValueError, match="head_dim = 96"):
        ex.HopperAttentionForward(cute.Float16, 96)
    q = np.zeros((1, 1, 192, 64), np.float16)
    lse = np.zeros((1, 1, 192), np.float32)
    with pytest.raises(ValueError, match="seqlen 192 must be a multiple of 128"):
        ex.HopperAttentionForward(cute.Float16, 64)(*ex.views(q, q, q, q.copy(), lse))
    with pytest.raises(ValueError, match="made for BFloat16"):
        ex.HopperAttentionForward(cute.BFloat16, 64)(*ex.views(q[:, :, :128], q[:, :, :128], q[:, :, :128],
                                                              q[:, :, :128].copy(), lse[:, :, :128]))


@pytest.mark.gpu
@pytest.mark.parametrize("d,causal,ctas", [(64, False, None), (128, True, None), (128, False, 0)])
def test_forward_on_the_gpu_equals_torch(d, causal, ctas):
    """On an H100: O and LSE against torch in f32 (run_gpu checks them; ctas 0: persistent, one CTA per SM)."""
    ex = _example()
    assert ex.run_gpu(2, 4, 1024, d, causal, "bf16", iters=2, ctas=ctas) == 0
