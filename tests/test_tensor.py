"""Tensors over numpy and torch arrays: views, slicing, partitioning, fragments, errors."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import cutelab as cute
from cutelab import Layout, LayoutError, TensorError
from cutelab.runtime import from_dlpack

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import partitions  # noqa: E402

TV = cute.make_layout(((2, 2), (2, 3)), stride=((2, 12), (1, 4)))


def test_seed_tv_data_thread_by_thread():
    a = np.arange(24, dtype=np.int32).reshape(24, 1)
    t = from_dlpack(a, assumed_align=16)
    assert str(t) == "tensor<ptr<i32, generic, align<16>> o (24,1):(1,1)>"
    composed = cute.composition(t, TV)
    got = {tid: composed[(tid, None)].load().numpy().ravel().tolist() for tid in range(4)}
    assert got == {0: [0, 1, 4, 5, 8, 9], 1: [2, 3, 6, 7, 10, 11],
                   2: [12, 13, 16, 17, 20, 21], 3: [14, 15, 18, 19, 22, 23]}


def test_print_tensor_like_the_dsl(capsys):
    a = np.arange(24, dtype=np.int32)
    t = cute.composition(from_dlpack(a, assumed_align=16), TV)[(1, None)]
    cute.print_tensor(t)
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("tensor(raw_ptr(0x") and out[0].endswith(": i32, generic, align<8>) o ((2,3)):((1,4)), data=")
    assert out[1:] == ["       [ 2, ],", "       [ 3, ],", "       [ 6, ],", "       [ 7, ],",
                       "       [ 10, ],", "       [ 11, ])"]  # a rank-1 tensor of 6 values: one row each


def test_from_dlpack_reads_strides_and_tiled_divide_prints_like_the_seed():
    S = np.zeros((8192, 8192), dtype=np.float16)
    t = from_dlpack(S, assumed_align=16)
    assert str(t) == "tensor<ptr<f16, generic, align<16>> o (8192,8192):(8192,1)>"
    assert str(cute.tiled_divide(t, (1, 16))) == "tensor<ptr<f16, generic, align<16>> o ((1,16),8192,512):((0,1),8192,16)>"
    assert str(from_dlpack(S.T)) == "tensor<ptr<f16, generic> o (8192,8192):(1,8192)>"


def test_seed_tv_tile_and_fragment():
    S = np.zeros((8192, 8192), dtype=np.float16)
    thr = cute.make_layout((32, 8), stride=(8, 1))
    val = cute.make_layout((4, 8), stride=(8, 1))
    tiler, tv = cute.make_layout_tv(thr, val)
    tile = cute.zipped_divide(from_dlpack(S, assumed_align=16), tiler)[((None, None), 0)]
    assert str(tile.layout) == "(128,64):(8192,1)"
    tvt = cute.composition(tile, tv)
    assert str(tvt.layout) == "((8,32),(8,4)):((8,32768),(1,8192))"
    v = tvt[(3, None)]
    assert str(v.layout) == "((8,4)):((1,8192))"
    frag = cute.make_fragment_like(v)
    assert str(frag) == "tensor<ptr<f16, rmem, align<32>> o ((8,4)):((1,8))>"  # CuTe DSL 4.8.1: align<32>


def test_fragment_layouts_follow_cute():
    assert str(cute.make_fragment_like(Layout.parse("(1,16):(0,1)"))) == "(1,16):(0,1)"
    assert str(cute.make_fragment_like(Layout.parse("(4,8):(65536,32)"))) == "(4,8):(1,4)"
    assert str(cute.make_fragment_like(Layout.parse("((8,4)):((1,4096))"))) == "((8,4)):((1,8))"


def test_views_write_through():
    a = np.zeros((4, 6), dtype=np.float32)
    t = from_dlpack(a)
    t[(None, 2)].store(np.array([1, 2, 3, 4], dtype=np.float32))
    assert a[:, 2].tolist() == [1, 2, 3, 4]
    t[(3, 5)] = 7.0
    assert a[3, 5] == 7.0 and t[(3, 5)] == 7.0
    part = cute.local_partition(t, cute.make_layout((2, 3)), 4)  # thread (0, 2)
    part.store(np.full(4, 9, np.float32))
    assert (a[0::2, 2::3] == 9).all() and (a == 9).sum() == 4


def test_local_tile_and_projection():
    a = np.arange(64 * 32, dtype=np.int64).reshape(64, 32)
    t = from_dlpack(a)
    tile = cute.local_tile(t, (16, 8), (1, 2))
    assert tile.shape == (16, 8)
    assert np.array_equal(tile.numpy(), a[16:32, 16:24])
    tile2 = cute.local_tile(t, (16, 8, 4), (1, 2, 0), proj=(1, 1, None))
    assert np.array_equal(tile2.numpy(), tile.numpy())


@pytest.mark.parametrize("style", list(partitions.STYLES))
def test_three_partition_styles_copy_exactly(style):
    rng = np.random.default_rng(1)
    S = rng.standard_normal((512, 1024), dtype=np.float32)
    D = np.full_like(S, np.nan)
    partitions.STYLES[style](S, D)
    assert np.array_equal(S, D)


@pytest.mark.parametrize("style,rows,cols,per_thread", [
    ("tiled_divide", (0, 0), (0, 4095), 16), ("outer", (0, 31), (0, 255), 32), ("tv", (0, 127), (0, 63), 32)])
def test_one_block_is_split_exactly_among_its_threads(style, rows, cols, per_thread):
    own = partitions.owners(style, (8192, 8192))
    r, c = np.nonzero(own >= 0)
    assert (r.min(), r.max()) == rows and (c.min(), c.max()) == cols
    counts = np.bincount(own[own >= 0], minlength=256)
    assert (counts == per_thread).all()
    assert len(r) == 256 * per_thread


def test_batched_views_are_one_view_per_thread():
    a = np.arange(24, dtype=np.int32)
    composed = cute.composition(from_dlpack(a), TV)
    batch = composed[(np.arange(4), None)]
    assert batch.batch == (4,)
    assert batch.load().values.tolist() == [[0, 1, 4, 5, 8, 9], [2, 3, 6, 7, 10, 11],
                                             [12, 13, 16, 17, 20, 21], [14, 15, 18, 19, 22, 23]]


def test_identity_tensor():
    t = cute.make_identity_tensor((4, 8))
    assert str(t) == "tensor<(0,0) o (4,8):(1@0,1@1)>"  # CuTe DSL prints the full coordinate
    assert t[(1, 2)] == (1, 2) and t[9] == (1, 2)
    blk = cute.local_tile(t, (2, 4), (1, 1))
    assert blk[(1, 3)] == (3, 7)


# --------------------------------------------------------------------------- errors

def test_out_of_range_coordinates_raise():
    t = from_dlpack(np.zeros((4, 6), np.float32))
    with pytest.raises(TensorError, match=r"coordinate \(4,0\) is out of range"):
        t[(4, 0)]
    with pytest.raises(TensorError, match="out of range"):
        t[(None, 6)]
    with pytest.raises(TensorError, match="out of range"):
        t[(0, np.array([1, 6]))]
    with pytest.raises(TensorError, match="thread index 6 is out of range"):
        cute.local_partition(t, cute.make_layout((2, 3)), 6)


def test_nothing_is_written_out_of_bounds():
    a = np.zeros(32, dtype=np.float32)
    guard = np.zeros(64, dtype=np.float32)
    guard[:32] = 0
    view = guard[:32]
    with pytest.raises(TensorError, match="outside the storage of 32 elements"):
        cute.make_tensor(view, Layout.parse("(4,8):(8,2)"))
    t = cute.make_tensor(a, Layout.parse("(4,8):(1,4)"))
    bad = cute.Tensor(t.engine, Layout.parse("(4,8):(1,5)"), 0, _checked=True)  # bypass the constructor check
    with pytest.raises(TensorError, match="store: offsets .* outside the storage"):
        bad.store(np.ones(32, np.float32))
    assert not a.any() and not guard.any()


def test_store_of_mismatched_shape_raises_and_writes_nothing():
    a = np.zeros((4, 6), np.float32)
    t = from_dlpack(a)
    src = from_dlpack(np.ones((6, 4), np.float32))
    with pytest.raises(TensorError, match=r"the value has shape \(6,4\) but the tensor has shape \(4,6\)"):
        t.store(src.load())
    with pytest.raises(TensorError, match="do not fit"):
        t.store(np.ones(5, np.float32))
    assert not a.any()


def test_from_dlpack_errors():
    with pytest.raises(TensorError, match="negative stride"):
        from_dlpack(np.zeros(8, np.float32)[::-1])
    with pytest.raises(TensorError, match="not aligned to assumed_align=16"):
        from_dlpack(np.zeros(9, np.float32)[1:], assumed_align=16)
    with pytest.raises(TensorError, match="not a numpy array"):
        from_dlpack([1, 2, 3])


def test_composition_with_inadmissible_layout_names_the_operands():
    t = from_dlpack(np.zeros((4, 3), np.float32))
    with pytest.raises(LayoutError, match=r"composition\(\(4,3\):\(3,1\), 5:2\)"):
        cute.composition(t, Layout.parse("5:2"))


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not installed")
def test_torch_bf16_view_is_bit_exact_and_writable():
    import torch

    S = torch.randn(64, 128, dtype=torch.bfloat16)
    D = torch.zeros(64, 128, dtype=torch.bfloat16)
    tS, tD = from_dlpack(S, assumed_align=16), from_dlpack(D, assumed_align=16)
    assert str(tS) == "tensor<ptr<bf16, generic, align<16>> o (64,128):(128,1)>"
    partitions._copy_through_fragment(tS, tD)
    assert torch.equal(S, D)
    v = tS[(0, None)].load().numpy()
    assert np.allclose(v, S[0].float().numpy())


class _FakeGpuArray:
    """Publishes __cuda_array_interface__ as CuPy does (no GPU needed to build the tensor)."""

    def __init__(self, shape, typestr="<f4", strides=None, ptr=0x7F0000000000):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "strides": strides,
                                         "data": (ptr, False), "version": 3}

    def __dlpack_device__(self):
        return (2, 1)


def test_from_dlpack_of_a_cuda_array_interface_array():
    t = from_dlpack(_FakeGpuArray((4, 8)), assumed_align=16)
    assert str(t) == "tensor<ptr<f32, gmem, align<16>> o (4,8):(8,1)>"
    assert t.engine.device == "cuda:1" and t.engine.address == 0x7F0000000000
    assert str(from_dlpack(_FakeGpuArray((4, 8), strides=(4, 16)))) == "tensor<ptr<f32, gmem> o (4,8):(1,4)>"
    with pytest.raises(TensorError, match="lives on cuda:1"):
        t.load()
    with pytest.raises(TensorError, match="not aligned"):
        from_dlpack(_FakeGpuArray((4, 8), ptr=0x7F0000000004), assumed_align=16)
