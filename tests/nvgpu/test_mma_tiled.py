"""TiledMma properties (ownership, agreement with the atom, partitions) and argument errors."""

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cutelab as cute
from cutelab import int_tuple as it
from cutelab.errors import LayoutError, TensorError
from cutelab.numeric import Float8E4M3FN, Float8E5M2
from cutelab.nvgpu import MmaUniversalOp, OperandMajorMode as MM, OutputMajorMode, warp, warpgroup

SRC = warpgroup.OperandSource

OPS = [
    MmaUniversalOp(cute.Float32),
    warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 8)),
    warp.MmaF16BF16Op(cute.BFloat16, cute.Float32, (16, 8, 16)),
    warp.MmaTF32Op((16, 8, 4)),
    warp.MmaTF32Op((16, 8, 8)),
    warp.MmaFP8Op(Float8E4M3FN, cute.Float16, (16, 8, 16)),
    warp.MmaFP8Op(Float8E5M2, cute.Float32, (16, 8, 32)),
    warpgroup.MmaF16BF16Op(cute.Float16, cute.Float32, (64, 16, 16), SRC.RMEM, MM.K, MM.K),
    warpgroup.MmaF16BF16Op(cute.BFloat16, cute.Float32, (64, 8, 16), SRC.SMEM, MM.MN, MM.K),
    warpgroup.MmaF8Op(Float8E4M3FN, Float8E5M2, cute.Float32, (64, 24, 32), SRC.RMEM, MM.K, MM.K),
    warpgroup.MmaI8Op(cute.Int8, cute.Int8, cute.Int32, (64, 32), SRC.SMEM, MM.K, MM.K),
]


def _owners(tv, size):
    """How many (thread, value) pairs of tv map to each index in [0, size)."""
    return np.bincount(tv.offsets(), minlength=size)


@st.composite
def tiled_mmas(draw):
    op = draw(st.sampled_from(OPS))
    atom = cute.make_mma_atom(op)
    nthr = cute.size(atom.thr_id)
    cap = 16 if nthr == 1 else 4
    shape = draw(st.tuples(st.integers(1, 4), st.integers(1, 4), st.just(1)).filter(lambda s: s[0] * s[1] <= cap))
    order = draw(st.permutations([0, 1, 2]))
    al = cute.make_ordered_layout(shape, tuple(order))
    perm = None
    if draw(st.booleans()):
        perm = tuple(draw(st.sampled_from([None, 1, 2])) for _ in range(3))
        perm = tuple(None if f is None else atom.shape_mnk[i] * shape[i] * f for i, f in enumerate(perm))
    return cute.make_tiled_mma(op, al, perm)


@settings(max_examples=60, deadline=None)
@given(tiled_mmas())
def test_each_c_element_has_one_owner(mma):
    tm, tn = mma.get_tile_size(0), mma.get_tile_size(1)
    tv = mma.tv_layout_C_tiled
    assert cute.size(tv, mode=[0]) == mma.size
    counts = _owners(tv, tm * tn)
    assert counts.shape == (tm * tn,) and (counts == 1).all()


@settings(max_examples=60, deadline=None)
@given(tiled_mmas())
def test_a_and_b_are_covered_and_shared_along_the_other_mode(mma):
    for tv, (i, j), other in ((mma.tv_layout_A_tiled, (0, 2), 2), (mma.tv_layout_B_tiled, (1, 2), 1)):
        n = mma.get_tile_size(i) * mma.get_tile_size(j)
        offs = tv.offsets()
        assert set(offs.tolist()) == set(range(n))  # every element is read by some thread
        # threads that differ only in the other operand's thread mode read the same elements
        vmnk = mma.thr_layout_vmnk
        nv = it.product(tv.shape[1])
        per_thr = offs.reshape(nv, mma.size).T
        for t in range(0, mma.size, max(1, mma.size // 8)):
            v, m, nn, k = mma.get_slice(t).thr_vmnk
            crd = [v, m, nn, k]
            crd[other] = 0
            t0 = vmnk(tuple(crd))
            assert per_thr[t].tolist() == per_thr[t0].tolist()


@pytest.mark.parametrize("op", OPS, ids=lambda o: type(o).__name__)
def test_single_atom_tv_layouts_agree_with_the_atom(op):
    atom = cute.make_mma_atom(op)
    mma = cute.make_tiled_mma(op)
    for tiled, single in ((mma.tv_layout_A_tiled, atom.tv_layout_A), (mma.tv_layout_B_tiled, atom.tv_layout_B),
                          (mma.tv_layout_C_tiled, atom.tv_layout_C)):
        assert tiled.offsets().tolist() == single.offsets().tolist()
    assert [mma.get_tile_size(i) for i in range(3)] == list(atom.shape_mnk)


@settings(max_examples=40, deadline=None)
@given(tiled_mmas(), st.integers(1, 3), st.integers(1, 3))
def test_partitions_agree_with_tv_layouts_and_cover_once(mma, rm, rn):
    """The threads' partitions of a (tile x rest) tensor cover every element exactly once; on one tile,
    thread t's partition is tv_layout_C_tiled(t, :)."""
    tm, tn = mma.get_tile_size(0), mma.get_tile_size(1)
    M, N = tm * rm, tn * rn
    C = cute.make_tensor(np.zeros(M * N, np.float32), cute.make_layout((M, N)))
    thr = mma.get_slice(np.arange(mma.size))
    p = thr.partition_C(C)
    offs = p.offset[:, None] + p.layout.offsets()[None, :]
    assert np.bincount(offs.ravel(), minlength=M * N).tolist() == [1] * (M * N)
    # on one tile, thread t's partition lists exactly tv_layout_C_tiled(t, :), in order
    tv = mma.tv_layout_C_tiled
    nv = it.product(tv.shape[1])
    Ct = cute.make_tensor(np.zeros(tm * tn, np.float32), cute.make_layout((tm, tn)))
    pt = thr.partition_C(Ct)
    got = pt.offset[:, None] + pt.layout.offsets()[None, :]
    assert (got == tv.offsets().reshape(nv, mma.size).T).all()
    # batched slices are the single slices, thread by thread
    for t in (0, mma.size - 1):
        single = mma.get_slice(t).partition_C(C)
        assert single.layout == p.layout and single.offset == p.offset[t]


def test_partition_fragments_and_shapes():
    op = warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16))
    mma = cute.make_tiled_mma(op, (2, 2, 1))
    A = cute.make_tensor(np.zeros(128 * 64, np.float16), cute.make_layout((128, 64), stride=(64, 1)))
    s = mma.get_slice(37)
    pa = s.partition_A(A)
    assert pa.shape == ((2, 2, 2), 4, 4) and mma.partition_shape_A((128, 64)) == pa.shape
    fa = s.make_fragment_A(pa)
    assert fa.element_type is cute.Float16 and fa.memspace == "rmem" and fa.shape == pa.shape
    assert s.partition_fragment_C(cute.make_tensor(np.zeros(128 * 32, np.float32), cute.make_layout((128, 32)))).shape \
        == mma.partition_shape_C((128, 32))
    with pytest.raises(TensorError, match="rank >= 3"):
        s.make_fragment_A(A)
    with pytest.raises(TensorError, match="values"):
        s.make_fragment_B(pa)  # an A partition has 8 values per thread, B fragments 4
    assert str(s.make_fragment_C((4, 2))) == "tensor<ptr<f32, rmem, align<16>> o (4,2):(1,4)>"


def test_smem_operands():
    op = warpgroup.MmaF16BF16Op(cute.Float16, cute.Float32, (64, 64, 16), SRC.SMEM, MM.K, MM.K)
    mma = cute.make_tiled_mma(op)
    from cutelab.tensor import NumpyEngine

    sA = cute.Tensor(NumpyEngine(np.zeros(64 * 32, np.float16), memspace="smem"), cute.make_layout((64, 32)))
    s = mma.get_slice(5)
    pa = s.partition_A(sA)
    assert pa.shape == ((64, 16), 1, 2)  # every thread sees the whole tile: the descriptor's view
    assert s.make_fragment_A(pa) is pa
    gA = cute.make_tensor(np.zeros(64 * 32, np.float16), cute.make_layout((64, 32)))
    with pytest.raises(TensorError, match="shared memory"):
        s.make_fragment_A(s.partition_A(gA))


def test_printing_and_enums():
    op = warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16))
    mma = cute.make_tiled_mma(op, (2, 2, 1), (32, None, 16))
    assert str(mma).splitlines()[:3] == ["Tiled MMA", "  Thr Layout VMNK: (32,2,2,1):(1,32,64,0)",
                                         "  Permutation MNK: (32:1,_,16:1)"]
    assert repr(op) == "MmaF16BF16Op(ab_dtype=Float16, acc_dtype=Float32, shape_mnk=(16, 8, 16))"
    assert op == warp.MmaF16BF16Op(cute.Float16, cute.Float32, [16, 8, 16]) and hash(op) == hash(
        warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16)))
    assert str(MM.K) == "OperandMajorMode.K" and MM("mn") is MM.MN and repr(SRC.SMEM) == "<OperandSource.SMEM>"
    assert str(OutputMajorMode.N) == "OutputMajorMode.N" and str(warpgroup.Field.ACCUMULATE) == "Field.ACCUMULATE"
    wg = warpgroup.MmaF8Op(Float8E4M3FN, Float8E5M2, cute.Float16, (64, 16), SRC.RMEM, "k", "K")
    assert wg.shape_mnk == (64, 16, 32) and wg.a_major_mode is MM.K
    with pytest.raises(AttributeError):
        op.shape_mnk = (16, 8, 8)


@pytest.mark.parametrize("make,match", [
    (lambda: warp.MmaF16BF16Op(cute.Float32, cute.Float32, (16, 8, 8)), "one of Float16 or BFloat16"),
    (lambda: warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 32)), r"one of \(16,8,8\) or \(16,8,16\)"),
    (lambda: warp.MmaTF32Op((16, 8, 16)), r"\(16,8,4\) or \(16,8,8\)"),
    (lambda: warp.MmaFP8Op(cute.Float16, cute.Float32, (16, 8, 32)), "Float8E4M3FN or Float8E5M2"),
    (lambda: MmaUniversalOp(cute.Int32), "Float16, Float32, or Float64"),
    (lambda: warpgroup.MmaF16BF16Op(cute.Float16, cute.Float32, (64, 12, 16), SRC.SMEM, MM.K, MM.K), "N % 8 == 0"),
    (lambda: warpgroup.MmaF16BF16Op(cute.Float16, cute.Float32, (128, 64, 16), SRC.SMEM, MM.K, MM.K), "M-mode to be 64"),
    (lambda: warpgroup.MmaF16BF16Op(cute.Float16, cute.Float32, (64, 64, 32), SRC.SMEM, MM.K, MM.K), "K-mode to be 16"),
    (lambda: warpgroup.MmaF16BF16Op(cute.Float16, cute.Float32, (64, 64), "smem", MM.K, MM.K), "OperandSource"),
    (lambda: warpgroup.MmaF16BF16Op(cute.Float16, cute.Float32, (64, 64), SRC.SMEM, "row", MM.K), "a_major_mode"),
    (lambda: warpgroup.MmaI8Op(cute.Int8, cute.Int8, cute.Int32, (64, 40), SRC.SMEM, MM.K, MM.K), "N=16"),
    (lambda: warpgroup.MmaF8Op(Float8E4M3FN, cute.Int8, cute.Float32, (64, 64), SRC.SMEM, MM.K, MM.K), "'b_dtype'"),
])
def test_op_argument_errors(make, match):
    with pytest.raises(LayoutError, match=match) as e:
        make()
    assert str(e.value).startswith(("warp.", "warpgroup.", "MmaUniversalOp("))  # names the op and its arguments


def test_tiled_mma_errors():
    op = warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16))
    with pytest.raises(LayoutError, match="rank-3 MNK atom layout"):
        cute.make_tiled_mma(op, (2, 2))
    with pytest.raises(LayoutError, match="rank-3 permutation_mnk"):
        cute.make_tiled_mma(op, (2, 2, 1), (32, 16))
    with pytest.raises(LayoutError, match="mode M"):
        cute.make_tiled_mma(op, (2, 2, 1), ((cute.make_layout(16), cute.make_layout(2, stride=16)), None, None))
    with pytest.raises(TypeError, match="expected an MMA Op or Atom"):
        cute.make_tiled_mma("op")
    for bad in ("(2,2,1):(1,1,0)", "(2,2,1):(1,4,0)"):  # not one-to-one onto [0, 4)
        with pytest.raises(LayoutError, match="one-to-one"):
            cute.make_tiled_mma(op, cute.parse_layout(bad))
    assert cute.make_tiled_mma(op, cute.parse_layout("(2,2,1):(2,1,1)")).size == 128
    with pytest.raises(TypeError, match="expected an MMA Op"):
        cute.make_mma_atom(cute.make_layout(4))
    mma = cute.make_tiled_mma(op, (2, 2, 1))
    # past the MMA's threads: thread i % 128's slice, as CuTe DSL 4.8.1's (checked there on a 4-thread tiled
    # MMA: get_slice(4) and get_slice(5) partition as 0 and 1); a block of several warp groups slices one's MMA
    c = cute.make_tensor(np.arange(32 * 16, dtype=np.float32), cute.make_layout((32, 16)))
    for i in (0, 5, 127):
        assert mma.get_slice(i + 128).partition_C(c).load().numpy().tolist() == \
            mma.get_slice(i).partition_C(c).load().numpy().tolist()
    with pytest.raises(TensorError, match="must be >= 0"):
        mma.get_slice(-1)
    with pytest.raises(TensorError, match="negative thread indices"):
        mma.get_slice(np.array([0, -2]))
    with pytest.raises(LayoutError, match="0 \\(M\\), 1 \\(N\\) or 2 \\(K\\)"):
        mma.get_tile_size(3)
    with pytest.raises(TensorError, match="rank >= 2"):
        mma.get_slice(0).partition_C(cute.make_tensor(np.zeros(64, np.float32), cute.make_layout(64)))
    with pytest.raises(TensorError, match="do not divide"):
        mma.partition_shape_C((24, 16))
    with pytest.raises(TensorError, match="expected a Tensor"):
        mma.get_slice(0).partition_A(np.zeros((4, 4)))


def test_speed_2x2_sm80_build_and_partition():
    """The issue's target: building a 2x2 SM80 TiledMMA and partitioning it, well under 50 ms."""
    A = cute.make_tensor(np.zeros(128 * 64, np.float16), cute.make_layout((128, 64), stride=(64, 1)))
    B = cute.make_tensor(np.zeros(128 * 64, np.float16), cute.make_layout((128, 64), stride=(64, 1)))
    C = cute.make_tensor(np.zeros(128 * 128, np.float32), cute.make_layout((128, 128)))
    best = 1e9
    for _ in range(5):
        t0 = time.perf_counter()
        mma = cute.make_tiled_mma(warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16)), (2, 2, 1))
        s = mma.get_slice(37)
        s.make_fragment_C(s.partition_C(C))
        s.make_fragment_A(s.partition_A(A))
        s.make_fragment_B(s.partition_B(B))
        best = min(best, time.perf_counter() - t0)
    assert best < 0.05
