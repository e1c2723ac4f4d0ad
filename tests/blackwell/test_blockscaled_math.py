"""The block-scaled UMMA's arithmetic on the CPU (kernel/instr/tcgen05_blockscaled.py): operand and
scale-factor formats against torch's conversions and the OCP formats' definitions, the scaled product
against a loop, and where a UMMA reads its scale factors in tensor memory."""

import numpy as np
import pytest

from cutelab.errors import LaunchError
from cutelab.kernel.instr import tcgen05_blockscaled as bs
from cutelab.numeric import (Float4E2M1FN, Float6E2M3FN, Float6E3M2FN, Float8E4M3FN, Float8E5M2,
                             Float8E8M0FNU)

torch = pytest.importorskip("torch")


def test_fp8_operands_and_ue8m0_scales_match_torch():
    bits = np.arange(256, dtype=np.uint8)
    for dt, tdt in ((Float8E4M3FN, torch.float8_e4m3fn), (Float8E5M2, torch.float8_e5m2),
                    (Float8E8M0FNU, torch.float8_e8m0fnu)):
        want = torch.from_numpy(bits).view(tdt).to(torch.float64).numpy()
        got = bs.values(bits, dt)
        assert np.array_equal(np.isnan(got), np.isnan(want)), dt
        ok = ~np.isnan(want)
        assert np.array_equal(got[ok], want[ok]), dt


def test_fp4_and_fp6_values_follow_the_ocp_formats():
    e2m1 = [0, 0.5, 1, 1.5, 2, 3, 4, 6]
    assert bs.values(np.arange(16), Float4E2M1FN).tolist() == e2m1 + [-x for x in e2m1]
    e2m3 = bs.values(np.arange(64), Float6E2M3FN)
    e3m2 = bs.values(np.arange(64), Float6E3M2FN)
    assert e2m3.max() == 7.5 and e2m3[1] == 0.125 and e2m3[32 + 8] == -1.0  # max, smallest subnormal, -1
    assert e3m2.max() == 28.0 and e3m2[1] == 0.0625 and e3m2[12] == 1.0
    assert len(set(e2m3[:32].tolist())) == 32 and len(set(e3m2[:32].tolist())) == 32  # no NaN/inf codes
    with pytest.raises(ValueError, match="above its 4 bits"):
        bs.values(np.array([16]), Float4E2M1FN)


def test_ue4m3_scales_are_unsigned():
    assert bs.scale_values(np.array([0x38]), Float8E4M3FN).tolist() == [1.0]
    with pytest.raises(ValueError, match="sign bit set"):
        bs.scale_values(np.array([0xB8]), Float8E4M3FN)


def test_scaled_mma_is_the_sum_over_scaled_blocks():
    rng = np.random.default_rng(0)
    for vec in (16, 32):
        a, b = rng.integers(-3, 4, (5, 64)).astype(float), rng.integers(-3, 4, (3, 64)).astype(float)
        sa, sb = 2.0 ** rng.integers(-2, 3, (5, 64 // vec)), 2.0 ** rng.integers(-2, 3, (3, 64 // vec))
        want = np.zeros((5, 3))
        for m in range(5):
            for n in range(3):
                want[m, n] = sum(a[m, k] * sa[m, k // vec] * b[n, k] * sb[n, k // vec] for k in range(64))
        assert np.array_equal(bs.scaled_mma(a, b, sa, sb, vec), want)


def test_scale_factors_are_read_per_row_from_the_quarter_copies():
    cells = np.zeros((1, 128, 2048), dtype=np.uint8)
    dp = 2048
    rows = np.arange(128)
    for q in range(4):  # row r: lane r % 32 of each quarter, column 8 + r // 32, bytes 1, 2
        for j in range(2):
            cells[0, rows % 32 + 32 * q, 4 * (8 + rows // 32) + 1 + j] = (rows + 3 * j) % 256
    got = bs.read_scale_factors(cells, 0, 4 * 8 + 1, dp, 128, 2, "umma")
    assert np.array_equal(got, np.stack([rows, rows + 3], axis=1))
    cells[0, 64 + 5, 4 * 8 + 1] ^= 1  # row 5's copy in quarter 2 differs
    with pytest.raises(LaunchError, match="row 5 differ between lane quarter 0 and 2"):
        bs.read_scale_factors(cells, 0, 4 * 8 + 1, dp, 128, 2, "umma")
    with pytest.raises(LaunchError, match="cross into the next column"):
        bs.read_scale_factors(cells, 0, 4 * 8 + 2, dp, 128, 4, "umma")
    with pytest.raises(LaunchError, match="start at lane 0"):
        bs.read_scale_factors(cells, 0, dp + 4, dp, 128, 1, "umma")


def test_fp4_memory_through_make_ptr_reads_two_elements_a_byte():
    import cutelab as cute
    from cutelab.errors import TensorError
    from cutelab.runtime import make_ptr

    packed = torch.tensor([[0x21, 0xF7], [0x00, 0x5A]], dtype=torch.uint8)  # 8 e2m1 elements, two to a byte
    f4 = packed.view(torch.float4_e2m1fn_x2)
    p = make_ptr(Float4E2M1FN, f4.data_ptr(), cute.AddressSpace.gmem, assumed_align=2)
    t = cute.make_tensor(p, cute.make_layout((2, 4), stride=(4, 1)))
    eng = t.engine
    assert len(eng) == 8
    assert eng.data.tolist() == [0x1, 0x2, 0x7, 0xF, 0x0, 0x0, 0xA, 0x5]  # the low nibble is the even element
    assert bs.values(eng.data, Float4E2M1FN).tolist() == [0.5, 1.0, 6.0, -6.0, 0.0, 0.0, -1.0, 3.0]
    packed[0, 0] = 0x43  # a later write to the tensor is seen: the elements are unpacked when asked for
    assert eng.data[:2].tolist() == [0x3, 0x4]
    with pytest.raises(TensorError, match="writing memory of 4-bit elements"):
        t[(0, 0)] = 1.0
    with pytest.raises(ValueError):
        eng.data[0] = 1  # the unpacked elements are a read-only copy


def test_fp8_scalars_round_to_nearest_even_and_saturate():
    import cutelab as cute

    assert float(cute.Float8E4M3FN(0.1)) == 0.1015625 and float(cute.Float8E4M3FN(1000.0)) == 448.0
    assert float(cute.Float8E5M2(3.3)) == 3.5 and float(cute.Float8E4M3FN(-2.5)) == -2.5
    want = torch.tensor([0.1, 3.3, -7.77]).to(torch.float8_e4m3fn).float().tolist()
    assert [float(cute.Float8E4M3FN(x)) for x in (0.1, 3.3, -7.77)] == want
    with pytest.raises(TypeError, match="scalars of 4-bit float types are not supported"):
        cute.Float4E2M1FN(1.0)


def test_torch_fp4x2_tensors_are_4_bit_tensors_of_twice_the_contiguous_extent():
    """from_dlpack of torch.float4_e2m1fn_x2 (two e2m1 a byte, the even one low) as CuTe DSL 4.8.1 gives it,
    and cutlass.torch.cute_tensor_like of Float4E2M1FN (uint8 storage of data_ref's shape, values to e2m1)."""
    from cutelab.compat.dsl_torch import cute_tensor_like, e2m1_codes
    from cutelab.runtime import from_dlpack

    raw = torch.tensor([[0x21, 0x43], [0x65, 0x97]], dtype=torch.uint8)
    x = from_dlpack(raw.view(torch.float4_e2m1fn_x2))
    assert str(x.layout) == "(2,4):(4,1)" and x.element_type is Float4E2M1FN
    got = [int(x.engine.data[x.layout((i, j))]) for i in range(2) for j in range(4)]
    assert got == [1, 2, 3, 4, 5, 6, 7, 9]
    assert bs.values(np.array(got), Float4E2M1FN).tolist() == [0.5, 1, 1.5, 2, 3, 4, 6, -0.5]
    ref = torch.tensor([[0.5, -1.0, 2.9, 100.0], [0.25, 0.75, -3.0, 5.0]]).t()  # (4, 2), column-major
    t, storage = cute_tensor_like(ref, Float4E2M1FN, is_dynamic_layout=False)
    assert storage.dtype == torch.uint8 and tuple(storage.stride()) == tuple(ref.stride())
    vals = [float(bs.values(np.array([t.engine.data[t.layout((i, j))]]), Float4E2M1FN)[0])
            for i in range(4) for j in range(2)]
    # nearest e2m1, ties to the even code (0.25 -> 0, 0.75 -> 1), saturated at 6
    assert vals == [0.5, 0.0, -1.0, 1.0, 3.0, -3.0, 6.0, 4.0]
    assert e2m1_codes(np.array([2.5, 5.0, -0.0])).tolist() == [4, 6, 8]
