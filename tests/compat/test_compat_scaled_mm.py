"""torch._scaled_mm with block scales (MXFP8, MXFP4, NVFP4) on the emulated CUDA device of `cutelab run`
(cutelab.compat.scaled_mm), as CUTLASS's block-scaled examples call it to check their kernels: against
a loop over the unblocked scales."""
import numpy as np
import pytest
import torch
from compat_helpers import ok, run

from cutelab.compat import scaled_mm as sm

emulated_only = pytest.mark.skipif(torch.cuda.is_available(), reason="a real GPU is here: nothing is emulated")


def _blocked(s):
    """cuBLAS's blocked scale layout of a (rows, cols) matrix (rows a multiple of 128, cols of 4)."""
    r, c = s.shape
    b = s.reshape(r // 128, 128, c // 4, 4).permute(0, 2, 1, 3)
    return b.reshape(-1, 4, 32, 4).transpose(1, 2).reshape(-1, 32, 16).flatten()


def _loop(a, b, sa, sb, V):
    out = np.zeros((a.shape[0], b.shape[0]))
    for k in range(a.shape[1]):
        out += np.outer(a[:, k] * sa[:, k // V], b[:, k] * sb[:, k // V])
    return out


@pytest.mark.parametrize("fmt", ["mxfp8", "mxfp4", "nvfp4"])
def test_block_scaled_mm_is_the_sum_over_scaled_blocks(fmt):
    g = torch.Generator().manual_seed(3)
    M, N, K = 128, 256, 128
    V = 16 if fmt == "nvfp4" else 32
    if fmt == "mxfp8":
        a = torch.randint(-6, 7, (M, K), generator=g).float().to(torch.float8_e4m3fn)
        b = torch.randint(-6, 7, (N, K), generator=g).float().to(torch.float8_e5m2)
        av, bv = a.double().numpy(), b.double().numpy()
    else:
        a = torch.randint(0, 256, (M, K // 2), dtype=torch.uint8, generator=g)
        b = torch.randint(0, 256, (N, K // 2), dtype=torch.uint8, generator=g)
        e2m1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])
        av = np.stack([e2m1[a.numpy() & 15], e2m1[a.numpy() >> 4]], axis=2).reshape(M, K)
        bv = np.stack([e2m1[b.numpy() & 15], e2m1[b.numpy() >> 4]], axis=2).reshape(N, K)
        a, b = a.view(torch.float4_e2m1fn_x2), b.view(torch.float4_e2m1fn_x2)
    sdt = torch.float8_e4m3fn if fmt == "nvfp4" else torch.float8_e8m0fnu
    sa = torch.randint(1, 4, (M, K // V), generator=g).float().to(sdt)
    sb = torch.randint(1, 4, (N, K // V), generator=g).float().to(sdt)
    pad = lambda s: torch.nn.functional.pad(s.float(), (0, (-s.shape[1]) % 4)).to(sdt)  # noqa: E731
    assert sm.is_block_scaled((a, b.t(), _blocked(pad(sa))), {})
    got = sm.scaled_mm(a, b.t(), _blocked(pad(sa)), _blocked(pad(sb)), out_dtype=torch.float32)
    want = _loop(av, bv, sa.double().numpy(), sb.double().numpy(), V)
    assert np.abs(want).max() > 10
    np.testing.assert_array_equal(got.numpy(), want.astype(np.float32))


def test_scale_counts_that_do_not_fit_the_blocked_layout_are_refused():
    a = torch.zeros(128, 64).to(torch.float8_e4m3fn)
    s = torch.ones(100).to(torch.float8_e8m0fnu)
    with pytest.raises(ValueError, match="100 block scales for a 128 x 2 scale matrix"):
        sm.scaled_mm(a, a.t(), s, s, out_dtype=torch.float16)


@emulated_only
def test_scaled_mm_on_emulated_cuda_tensors(tmp_path):
    out = ok(run(tmp_path, """
        import torch
        a = torch.full((128, 64), 0.5, device="cuda").to(torch.float8_e4m3fn)
        s = torch.full((512,), 2.0, device="cuda").to(torch.float8_e8m0fnu)
        r = torch._scaled_mm(a, a.t(), s, s, bias=None, out_dtype=torch.float16)
        print(r.is_cuda, r.dtype, r.shape[0], r.shape[1], r[0, 0].item())
    """))
    assert out.splitlines() == ["True torch.float16 128 128 64.0"]
