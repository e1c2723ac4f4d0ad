"""Warp shuffles (cute.arch.shuffle_sync[_bfly|_down|_up]), fmax/fmin/rcp_approx, cutlass.min/max,
scalar broadcasting of tensor values, and/or in expressions and @cute.jit helpers called inside a
kernel (rewritten as kernels are): on the CPU interpreter, and printed for the GPU."""

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import TraceError
from cutelab.kernel.cuda.fakegpu import fake_gpu
from cutelab.kernel.launch.plan import capture, last_launch
from cutelab.runtime import from_dlpack


@cute.kernel
def _shuffles(src: cute.Tensor, out: cute.Tensor):
    t, _, _ = cute.arch.thread_idx()
    v = src[t]
    x = cute.make_rmem_tensor((1,), cutlass.Float32)
    x[0] = v
    s = x[0]
    out[0, t] = cute.arch.shuffle_sync_bfly(s, offset=1)
    out[1, t] = cute.arch.shuffle_sync_down(s, offset=3)
    out[2, t] = cute.arch.shuffle_sync_up(s, offset=2)
    out[3, t] = cute.arch.shuffle_sync(s, 5)
    # a butterfly reduction: every lane ends with its warp's maximum
    m = s
    for k in cutlass.range_constexpr(5):
        m = cute.arch.fmax(m, cute.arch.shuffle_sync_bfly(m, offset=1 << k))
    out[4, t] = m


def test_shuffles_on_the_cpu():
    n = 64
    src = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    out = np.zeros((5, n), np.float32)
    _shuffles(from_dlpack(src), from_dlpack(out)).launch(grid=(1, 1, 1), block=(n, 1, 1))
    lane, base = np.arange(n) % 32, np.arange(n) - np.arange(n) % 32
    assert np.array_equal(out[0], src[base + (lane ^ 1)])
    assert np.array_equal(out[1], np.where(lane + 3 < 32, src[np.minimum(base + lane + 3, n - 1)], src))
    assert np.array_equal(out[2], np.where(lane >= 2, src[np.maximum(base + lane - 2, 0)], src))
    assert np.array_equal(out[3], src[base + 5])
    assert np.array_equal(out[4], np.repeat(src.reshape(2, 32).max(axis=1), 32))


def test_shuffles_print_shfl_sync():
    with fake_gpu():
        from cutelab.kernel.cuda.fakegpu import FakeDeviceArray

        src, out = FakeDeviceArray(np.zeros(64, np.float32)), FakeDeviceArray(np.zeros((5, 64), np.float32))
        _shuffles(from_dlpack(src), from_dlpack(out)).launch(grid=(1, 1, 1), block=(64, 1, 1))
        code = last_launch().source
    for fn in ("__shfl_xor_sync(0xffffffffu, ", "__shfl_down_sync(0xffffffffu, ", "__shfl_up_sync(0xffffffffu, ",
               "__shfl_sync(0xffffffffu, "):
        assert fn in code, fn
    assert "max(" in code


@cute.kernel
def _runtime_offsets(src: cute.Tensor, out: cute.Tensor, k: cutlass.Int32):
    t, _, _ = cute.arch.thread_idx()
    x = cute.make_rmem_tensor((1,), cutlass.Float32)
    x[0] = src[t]
    s = x[0]
    out[0, t] = cute.arch.shuffle_sync_bfly(s, offset=k)  # a kernel argument
    out[1, t] = cute.arch.shuffle_sync_down(s, offset=k + 32)  # shfl.sync takes the offset's low 5 bits
    # quack's quad permutation (layout_utils.permute_Cregs_b32_for_stsm): a lane-dependent source within
    # segments of 4 lanes, in a register (the offset computed from a value) and as an index expression
    quad = cute.arch.lane_idx() % 4
    left = cutlass.Int32(0) + (quad // 2 if quad % 2 == 0 else 2 + quad // 2)
    out[2, t] = cute.arch.shuffle_sync(s, offset=left, mask_and_clamp=((32 - 4) << 8) | 31)
    out[3, t] = cute.arch.shuffle_sync(s, offset=3 - quad, mask_and_clamp=((32 - 4) << 8) | 31)


def test_runtime_shuffle_offsets():
    n = 64
    src = np.random.default_rng(2).standard_normal(n).astype(np.float32)
    out = np.zeros((4, n), np.float32)
    _runtime_offsets(from_dlpack(src), from_dlpack(out), cutlass.Int32(3)).launch(grid=(1, 1, 1), block=(n, 1, 1))
    t = np.arange(n)
    lane, quad = t % 32, t % 4
    assert np.array_equal(out[0], src[t ^ 3])
    assert np.array_equal(out[1], np.where(lane + 3 < 32, src[np.minimum(t + 3, n - 1)], src))
    left = np.where(quad % 2 == 0, quad // 2, 2 + quad // 2)  # [0, 2, 1, 3]
    assert np.array_equal(out[2], src[t - quad + left])
    assert np.array_equal(out[3], src[t - quad + 3 - quad])
    with fake_gpu():
        from cutelab.kernel.cuda.fakegpu import FakeDeviceArray

        _runtime_offsets(from_dlpack(FakeDeviceArray(src)), from_dlpack(FakeDeviceArray(out)),
                         cutlass.Int32(3)).launch(grid=(1, 1, 1), block=(n, 1, 1))
        code = last_launch().source
    assert code.count(") & 31)") >= 3  # the runtime offsets' low 5 bits


@cute.kernel
def _bad_offset(src: cute.Tensor, k: cutlass.Float32):
    t, _, _ = cute.arch.thread_idx()
    x = cute.make_rmem_tensor((1,), cutlass.Float32)
    x[0] = src[t]
    cute.arch.shuffle_sync_bfly(x[0], offset=k)


def test_a_float_shuffle_offset_is_refused():
    with pytest.raises(TraceError, match=r"kernel _bad_offset: cute.arch.shuffle_sync_bfly: the offset must be one "
                                         r"integer of at most 32 bits, got Float32 x 1"):
        _bad_offset(from_dlpack(np.zeros(32, np.float32)), cutlass.Float32(1)).launch(grid=(1, 1, 1), block=(32, 1, 1))


@cute.kernel
def _segment_shuffles(src: cute.Tensor, out: cute.Tensor):
    t, _, _ = cute.arch.thread_idx()
    x = cute.make_rmem_tensor((1,), cutlass.Float32)
    x[0] = src[t]
    s = x[0]
    # mask_and_clamp = ((32 - width) << 8) | clamp: the warp in segments of width lanes (flash_attn.cute's
    # shuffle_sync(value, offset, width) and quack's reductions over the threads of a row)
    out[0, t] = cute.arch.shuffle_sync(s, 3, mask_and_clamp=((32 - 8) << 8) | 31)
    out[1, t] = cute.arch.shuffle_sync_bfly(s, offset=2, mask_and_clamp=((32 - 4) << 8) | 31)
    out[2, t] = cute.arch.shuffle_sync_down(s, offset=3, mask_and_clamp=((32 - 8) << 8) | 31)
    out[3, t] = cute.arch.shuffle_sync_up(s, offset=3, mask_and_clamp=(32 - 8) << 8)


def test_shuffles_within_segments_of_the_warp():
    n = 64
    src = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    out = np.zeros((4, n), np.float32)
    _segment_shuffles(from_dlpack(src), from_dlpack(out)).launch(grid=(1, 1, 1), block=(n, 1, 1))
    t = np.arange(n)
    seg8, seg4 = t - t % 8, t - t % 4
    assert np.array_equal(out[0], src[seg8 + 3])  # lane 3 of each segment of 8
    assert np.array_equal(out[1], src[t ^ 2])  # within segments of 4
    assert np.array_equal(out[2], np.where(t % 8 + 3 < 8, src[np.minimum(t + 3, n - 1)], src))
    assert np.array_equal(out[3], np.where(t % 8 >= 3, src[np.maximum(t - 3, 0)], src))
    with fake_gpu():
        from cutelab.kernel.cuda.fakegpu import FakeDeviceArray

        _segment_shuffles(from_dlpack(FakeDeviceArray(src)), from_dlpack(FakeDeviceArray(out))).launch(
            grid=(1, 1, 1), block=(n, 1, 1))
        code = last_launch().source
    assert ", 3, 8)" in code and ", 2, 4)" in code  # CUDA's width argument


@cute.kernel
def _shuffle_an_index(out: cute.Tensor):
    # flash_attn.cute's shuffle_sync of a row index (a kernel index expression here, an Int32 in CuTe DSL):
    # it checks value.width and keeps the value in a fragment of type(value)
    t, _, _ = cute.arch.thread_idx()
    row = t * 3 + 1
    assert row.width == 32
    val = cute.make_rmem_tensor(cute.make_layout((1,), stride=(1,)), type(row))
    val[0] = row
    halves = cute.recast_tensor(val, cutlass.Int32)
    halves[0] = cute.arch.shuffle_sync(halves[0], 2, mask_and_clamp=((32 - 4) << 8) | 31)
    out[t] = val[0]


def test_an_index_is_shuffled_through_a_fragment_of_its_type():
    out = np.zeros(32, np.int32)
    _shuffle_an_index(from_dlpack(out)).launch(grid=(1, 1, 1), block=(32, 1, 1))
    t = np.arange(32)
    assert out.tolist() == ((t - t % 4 + 2) * 3 + 1).tolist()


@cute.kernel
def _bad_clamp(src: cute.Tensor, how: cutlass.Constexpr):
    t, _, _ = cute.arch.thread_idx()
    x = cute.make_rmem_tensor((1,), cutlass.Float32)
    x[0] = src[t]
    cute.arch.shuffle_sync(x[0], 1, mask_and_clamp=((32 - 6) << 8) | 31 if how == "width" else 7)


@pytest.mark.parametrize("how", ["width", "clamp"])
def test_a_mask_and_clamp_that_is_not_a_segment_width_is_refused(how):
    with pytest.raises(TraceError, match=r"kernel _bad_clamp: cute.arch.shuffle_sync: mask_and_clamp=\d+ is not "
                                         r"supported; cutelab takes \(\(32 - width\) << 8\) \| 31"):
        _bad_clamp(from_dlpack(np.zeros(32, np.float32)), how).launch(grid=(1, 1, 1), block=(32, 1, 1))


@cute.jit
def _safe_rcp(x):
    is_zero_or_nan = x == 0.0 or x != x  # 'or' of runtime conditions inside a helper
    return 1.0 if is_zero_or_nan else cute.arch.rcp_approx(x)


@cute.kernel
def _helpers(src: cute.Tensor, out: cute.Tensor):
    t, _, _ = cute.arch.thread_idx()
    r = cute.make_rmem_tensor((4,), cutlass.Float32)
    for i in cutlass.range_constexpr(4):
        r[i] = src[t, i]
    v = r.load()
    s = r[0]
    w = v * s  # a scalar broadcast over a tensor value
    for i in cutlass.range_constexpr(4):
        out[t, i] = w[i]  # a tensor value indexed at a static coordinate
    out[t, 4] = _safe_rcp(r[1])
    out[t, 5] = cutlass.max(r[2], r[3], 0.5)
    out[t, 6] = cute.arch.fmin(r[2], r[3])


def test_helpers_broadcast_and_boolean_ops():
    src = np.array([[2, 4, -1, 3], [1, 0, 0.25, 0.125], [3, np.nan, 1, 2]], np.float32)
    out = np.zeros((3, 7), np.float32)
    _helpers(from_dlpack(src), from_dlpack(out)).launch(grid=(1, 1, 1), block=(3, 1, 1))
    assert np.array_equal(out[:, :4], src * src[:, :1], equal_nan=True)
    assert out[:, 4].tolist() == [0.25, 1.0, 1.0]  # 1/x, and 1 where x is 0 or NaN
    assert out[:, 5].tolist() == [3.0, 0.5, 2.0]
    assert out[:, 6].tolist() == [-1.0, 0.125, 1.0]
    assert cutlass.max(2, 7, 3) == 7 and cutlass.min([4.0, 1.5]) == 1.5  # static values: Python's


@cute.kernel
def _swz_view(out: cute.Tensor):
    t, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    lay = cute.make_composed_layout(cute.make_swizzle(2, 0, 3), 0, cute.make_layout((8, 8), stride=(8, 1)))
    a = smem.allocate_tensor(cutlass.Float32, lay, byte_alignment=128)
    for j in cutlass.range_constexpr(8):
        a[t, j] = t * 8 + j
    cute.arch.sync_threads()
    b = cute.make_tensor(a.iterator, lay)  # the same swizzled view again, from the plain pointer
    for j in cutlass.range_constexpr(8):
        out[t, j] = b[j, t]


def test_make_tensor_of_a_smem_pointer_and_a_composed_layout_is_the_swizzled_view():
    out = np.zeros((8, 8), np.float32)
    _swz_view(from_dlpack(out)).launch(grid=(1, 1, 1), block=(8, 1, 1))
    assert np.array_equal(out, np.arange(64, dtype=np.float32).reshape(8, 8).T)


@cute.kernel
def _ssa_index(src: cute.Tensor, out: cute.Tensor):
    t, _, _ = cute.arch.thread_idx()
    r = cute.make_rmem_tensor((2, 3), cutlass.Float32)
    for i in cutlass.range_constexpr(6):
        r[i] = src[t, i]
    v = r.load()
    col = v[(None, 2)]  # a slice: the values of column 2
    out[t, 0] = v[(1, 1)]
    out[t, 1] = col[0] + col[1]


def test_tensor_values_index_and_slice_in_kernels():
    src = np.arange(12, dtype=np.float32).reshape(2, 6)
    out = np.zeros((2, 2), np.float32)
    _ssa_index(from_dlpack(src), from_dlpack(out)).launch(grid=(1, 1, 1), block=(2, 1, 1))
    assert out.tolist() == [[3.0, 9.0], [9.0, 21.0]]


@cute.kernel
def _runtime_lanes(src: cute.Tensor, out: cute.Tensor, k: cutlass.Int32):
    t, _, _ = cute.arch.thread_idx()
    x = cute.make_rmem_tensor((1,), cutlass.Float32)
    x[0] = src[t]
    s = x[0]
    lane = cute.arch.lane_idx()
    # flash_attn.cute's SM90 backward: each thread reads lane off * 4 + lane % 4 of its segment (an index
    # expression per thread); a runtime Int32 argument as a butterfly distance (a register)
    out[0, t] = cute.arch.shuffle_sync(s, 4 + lane % 4)
    out[1, t] = cute.arch.shuffle_sync(s, lane % 4 + 2, mask_and_clamp=((32 - 8) << 8) | 31)
    out[2, t] = cute.arch.shuffle_sync_bfly(s, offset=k)
    out[3, t] = cute.arch.shuffle_sync_down(s, offset=k + 1)


def test_runtime_shuffle_lanes_are_read_per_thread():
    n = 64
    src = np.random.default_rng(2).standard_normal(n).astype(np.float32)
    out = np.zeros((4, n), np.float32)
    _runtime_lanes(from_dlpack(src), from_dlpack(out), cutlass.Int32(3)).launch(grid=(1, 1, 1), block=(n, 1, 1))
    t = np.arange(n)
    lane, base = t % 32, t - t % 32
    assert np.array_equal(out[0], src[base + 4 + lane % 4])
    assert np.array_equal(out[1], src[t - t % 8 + (lane % 4 + 2) % 8])  # within segments of 8
    assert np.array_equal(out[2], src[base + (lane ^ 3)])
    assert np.array_equal(out[3], np.where(lane + 4 < 32, src[np.minimum(t + 4, n - 1)], src))
    with fake_gpu():
        from cutelab.kernel.cuda.fakegpu import FakeDeviceArray

        _runtime_lanes(from_dlpack(FakeDeviceArray(src)), from_dlpack(FakeDeviceArray(out)),
                       cutlass.Int32(3)).launch(grid=(1, 1, 1), block=(n, 1, 1))
        code = last_launch().source
    shfl = [ln for ln in code.splitlines() if "__shfl" in ln]
    assert len(shfl) == 4 and all(") & 31)" in ln for ln in shfl), shfl  # each offset: an expression's low 5 bits
