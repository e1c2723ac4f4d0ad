"""torch._scaled_grouped_mm_v2 with block scales (torch.nn.functional.scaled_grouped_mm) on the emulated CUDA device
of `cutelab run` (cutelab.compat.scaled_grouped_mm), as CUTLASS's MoE example calls it to check its kernel: against
a loop over the groups and the unblocked scales."""
import numpy as np
import pytest
import torch
from compat_helpers import ok, run

from cutelab.compat import scaled_grouped_mm as sgm


def _blocked(s):
    """cuBLAS's blocked layout (SWIZZLE_32_4_4) of a (rows, cols) scale matrix, padded to 128 x 4."""
    r, c = s.shape
    R, C = -(-r // 128) * 128, -(-c // 4) * 4
    p = torch.zeros(R, C, dtype=torch.float32)
    p[:r, :c] = s.float()
    b = p.reshape(R // 128, 128, C // 4, 4).permute(0, 2, 1, 3)
    return b.reshape(-1, 4, 32, 4).transpose(1, 2).reshape(-1, 32, 16).flatten()


def _scales(g, rows, cols):
    return 2.0 ** torch.randint(0, 3, (rows, cols), generator=g).float()  # exact in e8m0 and e4m3


def test_2d_3d_groups_of_rows_are_each_their_own_scaled_product():
    g = torch.Generator().manual_seed(5)
    ends, K, N = [3, 3, 9], 64, 16  # a group of no rows in the middle
    A = torch.randint(-6, 7, (9, K), generator=g).float()
    B = torch.randint(-6, 7, (3, N, K), generator=g).float()
    sa = [_scales(g, e - s, K // 32) for s, e in zip([0] + ends[:-1], ends)]
    sb = [_scales(g, N, K // 32) for _ in ends]
    e8 = torch.float8_e8m0fnu
    scale_a = torch.cat([_blocked(s) for s in sa if s.shape[0]]).reshape(-1, 4).to(e8)
    scale_b = torch.stack([_blocked(s) for s in sb]).to(e8)
    b3 = B.to(torch.float8_e4m3fn).transpose(1, 2)  # (G, K, N), K of stride 1
    got = sgm.scaled_grouped_mm_v2(A.to(torch.float8_e4m3fn), b3, [scale_a], [3], [1], [scale_b], [3], [1],
                                   torch.tensor(ends, dtype=torch.int32), output_dtype=torch.float32)
    want = np.zeros((9, N))
    for k, (s, e) in enumerate(zip([0] + ends[:-1], ends)):
        a = A[s:e].double().numpy() * np.repeat(sa[k].double().numpy(), 32, axis=1)
        b = B[k].double().numpy() * np.repeat(sb[k].double().numpy(), 32, axis=1)
        want[s:e] = a @ b.T
    assert np.abs(want).max() > 10
    np.testing.assert_array_equal(got.numpy(), want.astype(np.float32))


def test_2d_2d_groups_of_k_give_one_output_per_group_with_its_tensorwise_scales():
    g = torch.Generator().manual_seed(7)
    ends, M, N = [32, 32, 64], 8, 16  # NVFP4's blocks of 16 (with e4m3 block scales and a float per group)
    A = torch.randint(-3, 4, (M, 64), generator=g).float() / 2
    B = torch.randint(-3, 4, (64, N), generator=g).float() / 2
    nib = {v: i for i, v in enumerate([0, 0.5, 1, 1.5, 2, 3, 4, 6])}

    def fp4(x):  # (rows, K) values -> (rows, K / 2) e2m1 pairs
        code = torch.tensor([[nib[abs(v)] | (8 if v < 0 else 0) for v in row] for row in x.tolist()], dtype=torch.uint8)
        return (code[:, 0::2] | (code[:, 1::2] << 4)).view(torch.float4_e2m1fn_x2)

    sizes = [e - s for s, e in zip([0] + ends[:-1], ends)]
    sa = [_scales(g, M, k // 16) for k in sizes]
    sb = [_scales(g, N, k // 16) for k in sizes]
    ga, gb = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([2.0, 1.0, 0.5])
    e4 = torch.float8_e4m3fn
    scale_a = torch.cat([_blocked(s) for s, k in zip(sa, sizes) if k]).to(e4)
    scale_b = torch.cat([_blocked(s) for s, k in zip(sb, sizes) if k]).to(e4)
    got = sgm.scaled_grouped_mm_v2(fp4(A), fp4(B.t()).t(), [scale_a, ga], [2, 0], [1], [scale_b, gb], [2, 0], [1],
                                   torch.tensor(ends, dtype=torch.int32), output_dtype=torch.float32)
    want = np.zeros((3, M, N))
    k0 = 0
    for k, n in enumerate(sizes):
        if n:
            a = A[:, k0:k0 + n].double().numpy() * np.repeat(sa[k].double().numpy(), 16, axis=1)
            b = B[k0:k0 + n].t().double().numpy() * np.repeat(sb[k].double().numpy(), 16, axis=1)
            want[k] = a @ b.T * float(ga[k]) * float(gb[k])
        k0 += n
    assert np.abs(want).max() > 1
    np.testing.assert_array_equal(got.numpy(), want.astype(np.float32))


def test_an_unsupported_recipe_is_refused_by_name():
    a = torch.zeros(4, 32).to(torch.float8_e4m3fn)
    with pytest.raises(ValueError, match=r"_scaled_grouped_mm_v2 \(emulated\): A: the recipes \[1\]"):
        sgm.scaled_grouped_mm_v2(a, a.t(), [torch.ones(4)], [1], [1], [torch.ones(4)], [1], [1],
                                 torch.tensor([4], dtype=torch.int32))


@pytest.mark.skipif(torch.cuda.is_available(), reason="a real GPU is here: nothing is emulated")
def test_scaled_grouped_mm_on_emulated_cuda_tensors(tmp_path):
    out = ok(run(tmp_path, """
        import torch
        from torch.nn.functional import scaled_grouped_mm, ScalingType, SwizzleType
        a = torch.full((3, 64), 0.5, device="cuda").to(torch.float8_e4m3fn)
        b = torch.full((2, 16, 64), 2.0, device="cuda").to(torch.float8_e4m3fn).transpose(1, 2)
        sa = torch.ones(256, 4, device="cuda").to(torch.float8_e8m0fnu)
        sb = torch.ones(2, 512, device="cuda").to(torch.float8_e8m0fnu)
        r = scaled_grouped_mm(a, b, sa, ScalingType.BlockWise1x32, sb, ScalingType.BlockWise1x32,
                              swizzle_a=SwizzleType.SWIZZLE_32_4_4, swizzle_b=SwizzleType.SWIZZLE_32_4_4,
                              offs=torch.tensor([1, 3], dtype=torch.int32, device="cuda"))
        print(r.is_cuda, r.dtype, tuple(r.shape), r[2, 0].item())
    """))
    assert out.splitlines() == ["True torch.bfloat16 (3, 16) 64.0"]
