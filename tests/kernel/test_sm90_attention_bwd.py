"""The Hopper attention backward example (examples/attention/sm90_fmha_bwd.py) on the CPU interpreter
against torch's float64 autograd of attention (dQ, dK, dV), its CUDA compiled for sm_90a, and its
input checks."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile

import pytest

import cutelab as cute
from cutelab.kernel.cuda import printer as cuda

torch = pytest.importorskip("torch")  # the inputs (bf16) and the reference (autograd)

_EX = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "attention", "sm90_fmha_bwd.py")


def _example():
    spec = importlib.util.spec_from_file_location("sm90_fmha_bwd_example", _EX)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# the defaults: head dim 64 in query blocks of 128 rows (dQ split by rows), 128 in blocks of 64 (split by
# columns); dV, dQ, dK in that order; the dQ reduce-adds issued by a producer warp
OLD = dict(tile_m=64, order="dq_last", dq_writer=False)  # the first version's structure


@pytest.mark.parametrize("d,causal,dtype,shape,dq_reduce,opts", [
    (64, False, "bf16", (1, 2, 256), "tma", {}),   # two heads, two KV blocks x two query blocks each
    (64, True, "f16", (1, 1, 384), "tma", {}),     # causal: 3, 2, 1 query blocks per KV block through 2 stages
    (128, False, "f16", (1, 1, 256), "tma", {}),   # head dim 128: dQ split over the warpgroups, dS double-buffered
    (128, True, "bf16", (1, 1, 256), "tma", {}),
    (64, True, "bf16", (1, 1, 256), "red", {}),    # dQ by red.global.add.f32 instead of TMA reduce-adds
    (128, False, "bf16", (1, 1, 256), "red", {}),
    (64, False, "bf16", (1, 1, 256), "tma", OLD),  # each warpgroup a dQ partial over its own keys
    (64, True, "f16", (1, 1, 384), "tma", dict(tile_m=64)),  # the same with the writer warp, dQ first
    (64, True, "bf16", (1, 1, 256), "red", dict(order="dq_last")),
    (128, True, "bf16", (1, 1, 256), "tma", OLD),
    (128, False, "bf16", (1, 1, 256), "tma", dict(dq_writer=False)),
    (64, True, "bf16", (1, 1, 384), "tma", dict(p_split=2)),  # P^T in two halves, dV issued per half
    (128, False, "f16", (1, 1, 256), "red", dict(p_split=2, order="dq_last")),
    (64, False, "bf16", (1, 1, 256), "tma", dict(ds_store="stmatrix")),  # dS^T to shared memory by stmatrix
    (64, True, "f16", (1, 1, 256), "tma", dict(ds_store="stmatrix", tile_m=64)),
    (128, True, "bf16", (1, 1, 256), "tma", dict(ds_store="stmatrix")),
])
def test_backward_on_the_cpu_equals_autograd(d, causal, dtype, shape, dq_reduce, opts):
    ex = _example()
    b, h, s = shape
    err = ex.run_cpu(b, h, s, d, causal, dtype, dynamic=causal, dq_reduce=dq_reduce, **opts)
    assert max(err) <= ex.TOLERANCE[dtype], err


def test_a_wrong_gradient_is_caught():
    """The check can fail: scaled the other way, the same kernels give dQ, dK far off the reference."""
    ex = _example()
    bwd = ex.HopperAttentionBackward(cute.Float16, 64, False, dynamic=False, softmax_scale=0.25)
    q, k, v, do, o, lse, want = ex.make_inputs(1, 1, 128, 64, "f16", False, 0.125)  # O, LSE of another scale
    dq, dk, dv = (torch.zeros_like(q) for _ in range(3))
    f32 = lambda *shape: torch.zeros(*shape)  # noqa: E731
    bwd(*ex.views(q, k, v, o, do, lse, dq, dk, dv, f32(q.shape), f32(lse.shape), f32(lse.shape)))
    assert min(ex.errors((dq, dk), want[:2])) > 10 * ex.TOLERANCE["f16"]


def _nvcc(src):
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
    return p.stderr


@pytest.mark.parametrize("d,causal,opts", [
    (64, False, dict(dq_reduce="red")),
    (64, True, OLD),
    (128, True, {}),
    (128, False, dict(order="dq_last", p_split=2, ds_store="stmatrix")),
])
def test_backward_cuda_compiles_with_the_fa3_structure(d, causal, opts):
    """The three kernels traced (not run) with the runtime query-block loop, as on the GPU; the main
    one compiles for sm_90a without spills, without setmaxnreg ignored (C7508) and without its
    wgmmas serialized (C7512: for want of registers; C7514: accumulators read in flight; C7519: an
    arrive injected between wgmmas)."""
    ex = _example()
    bwd = ex.HopperAttentionBackward(cute.BFloat16, d, causal, dynamic=True, **opts)
    bM, split = bwd.tile_m, bwd.dq_split
    q, k, v, do, o, lse, _ = ex.make_inputs(1, 1, 256, d, "bf16", causal, bwd.scale)
    pre, main, post = ex.traced_kernels(bwd, q, k, v, o, do, lse)
    assert (tuple(main.block), tuple(main.grid)) == ((384, 1, 1), (2, 1, 1))
    src = cuda.render(main)
    assert "__launch_bounds__(384, 1)" in src
    for s in ("setmaxnreg.dec.sync.aligned.u32 24", "setmaxnreg.inc.sync.aligned.u32 240",
              "cp.async.bulk.tensor.2d", "const __grid_constant__ cl_tensormap tmap_tdO",
              "ex2.approx", "fence.proxy.async.shared::cta", "wgmma.wait_group.sync.aligned 1"):
        assert s in src, s
    chunks = (d // 2 if split == "n" else d) // 32  # 64 x 32 f32 boxes per warpgroup
    if opts.get("dq_reduce") == "red":  # each thread's dQ values, one red each
        assert src.count("red.global.add.f32") == 32 and "cp.reduce.async" not in src
    else:  # the boxes (float2 stores), reduce-added by one thread; waited for before reuse
        writer = bwd.dq_writer  # the writer warp issues both warpgroups' boxes
        assert src.count("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group") == \
            chunks * (2 if writer else 1)
        assert "red.global" not in src and src.count("*reinterpret_cast<uint2*>(smem7 + ") == 16
        assert "cp.async.bulk.wait_group.read 0;" in src and "cp.async.bulk.wait_group 0;" in src
        # the handshake: each warpgroup arrives at its DQ_FULL and waits at its DQ_EMPTY (and back)
        assert ("bar.arrive 5, 160;" in src and "bar.sync 7, 160;" in src) == writer
    # S^T, dP^T: K-major A and B from shared memory, d / 16 k-blocks each; dV, dK: A from registers, B
    # N-major (trans-b 1), bM / 16 k-blocks each; dQ: A (dS) and B (K) MN-major, 128 keys ("n": split
    # over head_dim; "m": over query rows) or 64 keys ("keys": each warpgroup its own) / 16 k-blocks
    assert src.count("p, 1, 1, 0, 0;") == 2 * (d // 16)
    assert src.count("p, 1, 1, 1;") == 2 * bM // 16
    assert src.count("p, 1, 1, 1, 1;") == (64 if split == "keys" else 128) // 16
    assert f"wgmma.mma_async.sync.aligned.m64n{d // 2 if split == 'n' else d}k16.f32.bf16.bf16" in src
    if split == "keys":  # each warpgroup its own dS: its own barrier (3 + warpgroup)
        assert "bar.sync 3, 128" in src and "bar.sync 4, 128" in src
    else:
        assert "bar.sync 2, 256" in src  # both warpgroups' dS in shared memory before dQ
    # dq_first: dK's wgmmas after dQ's (dQ goes out while dK runs); dq_last: before
    assert (src.rfind("p, 1, 1, 1;") > src.rfind("p, 1, 1, 1, 1;")) == (bwd.order == "dq_first")
    # p_split 2: dV in two groups, dP^T waited for behind both
    assert src.count("wgmma.commit_group.sync.aligned;") == 5 + bwd.p_split - 1
    assert ("wgmma.wait_group.sync.aligned 2;" in src) == (bwd.p_split == 2)
    # dS^T: 64 keys x bM per warpgroup, bM / 2 values a thread: bM / 4 32-bit stores, or bM / 16 stmatrix (four
    # 8 x 8 matrices a warp)
    assert src.count("stmatrix.sync.aligned.m8n8.x4.shared.b16") == (bM // 16 if bwd.ds_store == "stmatrix" else 0)
    log = _nvcc(src)
    assert "0 bytes spill stores, 0 bytes spill loads" in log, log[-3000:]
    assert not any(c in log for c in ("C7508", "C7512", "C7514", "C7519")), log[-3000:]  # no wgmma serialized
    if d == 64 and not causal:  # the pre- and postprocess kernels do not depend on causal (nor on d but for its size)
        for ir in (pre, post):
            _nvcc(cuda.render(ir))


def test_bad_inputs_are_refused():
    ex = _example()
    with pytest.raises(ValueError, match="head_dim = 96"):
        ex.HopperAttentionBackward(cute.Float16, 96)
    with pytest.raises(ValueError, match="Float16 or BFloat16"):
        ex.HopperAttentionBackward(cute.Float32, 64)
    with pytest.raises(ValueError, match=r"tile_m = 128; .*\(head_dim 128\)"):
        ex.HopperAttentionBackward(cute.Float16, 128, tile_m=128)
    with pytest.raises(ValueError, match="order = 'dk_first'"):
        ex.HopperAttentionBackward(cute.Float16, 64, order="dk_first")
    with pytest.raises(ValueError, match="ds_store = 'stsm'"):
        ex.HopperAttentionBackward(cute.Float16, 64, ds_store="stsm")
    with pytest.raises(ValueError, match="p_split = 4"):
        ex.HopperAttentionBackward(cute.Float16, 64, p_split=4)
    with pytest.raises(ValueError, match="dq_writer .* needs dq_reduce='tma'"):
        ex.HopperAttentionBackward(cute.Float16, 64, dq_reduce="red", dq_writer=True)
    bwd = ex.HopperAttentionBackward(cute.Float16, 64)
    q, k, v, do, o, lse, _ = ex.make_inputs(1, 1, 128, 64, "f16", False, bwd.scale)
    z = lambda *shape, dt=torch.float32: torch.zeros(*shape, dtype=dt)  # noqa: E731
    dq, dk, dv = (torch.zeros_like(q) for _ in range(3))
    with pytest.raises(ValueError, match="made for BFloat16"):
        ex.HopperAttentionBackward(cute.BFloat16, 64)(*ex.views(q, k, v, o, do, lse, dq, dk, dv, z(q.shape),
                                                                z(lse.shape), z(lse.shape)))
    with pytest.raises(ValueError, match="dQ_accum .* expected Float32"):
        bwd(*ex.views(q, k, v, o, do, lse, dq, dk, dv, torch.zeros_like(q), z(lse.shape), z(lse.shape)))
    with pytest.raises(ValueError, match="D .* expected Float32"):
        bwd(*ex.views(q, k, v, o, do, lse, dq, dk, dv, z(q.shape), z(lse.shape), z(lse.shape, dt=torch.float16)))
    q2 = torch.zeros(1, 1, 192, 64, dtype=torch.float16)
    lse2 = z(1, 1, 192)
    with pytest.raises(ValueError, match="seqlen 192 must be a multiple of 128"):
        bwd(*ex.views(q2, q2, q2, q2, q2, lse2, q2.clone(), q2.clone(), q2.clone(), z(q2.shape), z(lse2.shape),
                      z(lse2.shape)))


@pytest.mark.gpu
@pytest.mark.parametrize("d,causal,opts", [(64, False, {}), (64, True, {}), (128, False, {}), (128, True, {}),
                                            (64, True, OLD), (128, False, OLD)])
def test_backward_on_the_gpu_equals_autograd(d, causal, opts):
    """On an H100 / H200: dQ, dK, dV against torch's f64 autograd (run_gpu checks them)."""
    ex = _example()
    assert ex.run_gpu(2, 4, 1024, d, causal, "bf16", iters=2, **opts) == 0
