"""The CuTe DSL surface that real programs hit first (issue 9): small gaps, each with its own test."""
import cutelab as cute
from cutelab.nvgpu import warp


def test_layout_repr_is_its_str():
    a, b = cute.make_layout(3, stride=3), cute.make_layout((2, 4), stride=(1, 8))
    assert repr(b) == "(2,4):(1,8)"
    assert str((a, b)) == "(3:3, (2,4):(1,8))"  # as CuTe DSL prints a tuple of layouts


def test_size_of_tiled_mma_and_tiled_copy_is_their_thread_count():
    mma = cute.make_tiled_mma(warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16)), (2, 2, 1))
    assert cute.size(mma) == mma.size == 128
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cute.Float32)
    tc = cute.make_tiled_copy_tv(atom, cute.make_layout((4, 8)), cute.make_layout((1, 2)))
    assert cute.size(tc) == tc.size == 32
    assert cute.size(cute.make_layout((4, 8))) == 32  # layouts unchanged
