"""make_fragment_A/B/C refuse a coordinate tensor, as CuTe DSL does (found by tests/programs/own_mma_thr_slice)."""
import pytest

import cutelab as cute
from cutelab.errors import TensorError
from cutelab.nvgpu import warp


@pytest.mark.parametrize("what, shape", [("A", (16, 32)), ("B", (64, 32)), ("C", (16, 64))])
def test_make_fragment_of_a_coordinate_tensor_is_refused(what, shape):
    mma = cute.make_tiled_mma(warp.MmaF16BF16Op(cute.BFloat16, cute.Float32, (16, 8, 8)), (1, 4, 1))
    thr = mma.get_slice(70)
    part = getattr(thr, f"partition_{what}")(cute.make_identity_tensor(shape))
    with pytest.raises(TensorError, match=rf"make_fragment_{what}\(.*got a coordinate tensor"):
        getattr(mma, f"make_fragment_{what}")(part)
    # its shape still gives a compact register fragment
    frag = getattr(mma, f"make_fragment_{what}")(part.shape)
    assert frag.shape == part.shape and frag.memspace == "rmem"
