"""``cute.experimental``'s automatic bounds (compat/experimental/auto_bounds.py): a
``@cute.experimental.kernel``'s tensor arguments are origins, every view derived from them carries
its elements' origin coordinates (``Tensor.coord``), and ``cute.experimental.copy`` leaves alone the
elements outside the origin's shape.

CUTLASS's cute_ext/ampere/memcpy_simt_universal_copy.py (programs/cute_ext/, unchanged from
NVIDIA/cutlass 7107b05535f8977f5ecb9d01ee203205b1fd9bc4) tiles an M of 136 by 128 and relies on it.
"""
import os

import numpy as np
import pytest
from test_compat_programs import _cutelab_run

import cutelab as cute
from cutelab import Float32
from cutelab.compat.experimental.auto_bounds import namespace
from cutelab.errors import LaunchError, TraceError
from cutelab.nvgpu.universal_copy import CopyUniversalOp
from cutelab.runtime import AddressSpace, from_dlpack
from cutelab.tensor import LostCoords, NumpyEngine, make_tensor

ext = namespace()
HERE = os.path.dirname(os.path.abspath(__file__))
MEMCPY = os.path.join(HERE, "programs", "cute_ext", "ampere", "memcpy_simt_universal_copy.py")


def _tiles(copy):
    """A kernel over (8, 4) tiles of 14x4 tensors, one block per tile: the source tile goes through a register
    buffer filled with 100 into an (8, 4)-tiled output o and back into d, every copy by copy."""

    @ext["kernel"]
    def k(mA: cute.Tensor, mD: cute.Tensor, mO: cute.Tensor):
        bx, _, _ = cute.arch.block_idx()
        gA = cute.zipped_divide(mA, (8, 4))[(None, None), (bx, 0)]
        gD = cute.zipped_divide(mD, (8, 4))[(None, None), (bx, 0)]
        gO = cute.zipped_divide(mO, (8, 4))[(None, None), (bx, 0)]
        buf = ext["allocate"](Float32, AddressSpace.rmem, cute.make_layout((8, 4)), 16)
        buf.fill(100.0)
        atom = cute.make_copy_atom(CopyUniversalOp(), Float32)
        copy(gA, buf, atom)
        copy(buf, gO, atom)
        copy(buf, gD, atom)

    @cute.jit
    def f(a, d, o):
        k(a, d, o).launch(grid=(2, 1, 1), block=(1, 1, 1))

    a = np.arange(14 * 4, dtype=np.float32).reshape(4, 14).T
    d = np.full((4, 14), -1, dtype=np.float32).T
    o = np.zeros((4, 16), dtype=np.float32).T
    f(from_dlpack(a), from_dlpack(d), from_dlpack(o))
    return a, d, o


def test_copy_leaves_the_elements_past_the_origin_alone():
    a, d, o = _tiles(lambda s, t, atom: ext["copy"](s, t, copy_atom=atom))
    assert (o[:14] == a).all() and (o[14:] == 100).all()  # loads past row 14 were not made: the buffer kept 100
    assert (d == a).all()  # the stores past row 14 (past the end of d's storage, in its last column) were not made


def test_without_the_bounds_the_same_kernel_reaches_past_the_storage():
    # the check above is not vacuous: with cute.copy the last tile's rows 14, 15 are read (and written) past
    # the end of the tensors, which the launch refuses
    with pytest.raises(LaunchError, match="reaches element offsets"):
        _tiles(lambda s, t, atom: cute.copy(atom, s, t))


def test_partition_is_cute_dsl_s_layout():
    # CuTe DSL 4.8.1 prints this partition (the memcpy example's, of a (128,64):(1,136) tile) as
    # ((8,1),(1,8)):((1,1088),(0,1088)); thread 21 starts at row (21 % 16) * 8, column 21 // 16
    t = make_tensor(NumpyEngine(np.zeros(136 * 64, np.float16)), cute.make_layout((128, 64), stride=(1, 136)))
    p = ext["partition"](t, 21, layout_tv=cute.make_layout(((16, 8), (8, 1)), stride=((8, 128), (1, 1024))),
                         tiler=(128, 8))
    assert p.layout.shape == ((8, 1), (1, 8))
    assert p.layout.stride[0][0] == 1 and p.layout.stride[1][1] == 1088
    assert p.offset == 5 * 8 + 1 * 136


def test_partition_carries_the_coordinates():
    origin = ext["predicated_tensor_origin"](
        make_tensor(NumpyEngine(np.zeros(136 * 7, np.float16)), cute.make_layout((136, 7))))
    tile = cute.zipped_divide(origin, (128, 64))[(None, None), (1, 0)]
    p = ext["partition"](tile, 17, layout_tv=cute.make_layout(((16, 8), (8, 1)), stride=((8, 128), (1, 1024))),
                         tiler=(128, 8))
    # thread 17: rows 128 + 8..15 of column 1, then the same rows 8 columns on
    assert [p.coord[i] for i in range(3)] == [(136, 1), (137, 1), (138, 1)]
    assert p.coord[8] == (136, 9)


def test_a_view_that_loses_the_coordinates_is_refused():
    @ext["kernel"]
    def k(mA: cute.Tensor, mO: cute.Tensor):
        g = cute.filter_zeros(cute.zipped_divide(mA, (8, 4))[(None, None), (0, 0)])
        buf = ext["allocate"](Float32, AddressSpace.rmem, cute.make_layout((8, 4)), 16)
        ext["copy"](g, buf, copy_atom=cute.make_copy_atom(CopyUniversalOp(), Float32))

    @cute.jit
    def f(a, o):
        k(a, o).launch(grid=(1, 1, 1), block=(1, 1, 1))

    a = np.zeros((4, 14), dtype=np.float32).T
    with pytest.raises(TraceError, match="cute.experimental.copy.*filter_zeros"):
        f(from_dlpack(a), from_dlpack(a))
    assert isinstance(cute.filter_zeros(ext["predicated_tensor_origin"](from_dlpack(a))).coord, LostCoords)


def test_memcpy_simt_universal_copy_runs_unchanged(tmp_path):
    p = _cutelab_run(MEMCPY, "--mnl", "136", "7", "2", cwd=tmp_path, timeout=300)
    assert p.returncode == 0 and p.stdout.strip().endswith("PASS"), p.stdout[-2000:] + p.stderr[-3000:]
