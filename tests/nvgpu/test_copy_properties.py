"""Properties of TiledCopy partitions and host copies over random thread/value layouts and tensors.

CuTe promises for make_tiled_copy_tv: every element of a tensor that the tile divides is copied
by exactly one (thread, value, rest coordinate); partition_S and partition_D of one tensor name the
same elements; a copy through register fragments reproduces the tensor; retile of a fragment
names the fragment's elements in the copy's value order.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

import cutelab as cute
from cutelab.nvgpu import CopyUniversalOp, warp



def _pow2_split(draw, n):
    a = draw(st.integers(0, n))
    return 2 ** a, 2 ** (n - a)


@st.composite
def tiled_copies(draw):
    """A universal-copy TiledCopy: f32 atom of 1, 2 or 4 values, random compact thread/value layouts."""
    vbits = draw(st.integers(0, 2))  # atom values: 1, 2, 4
    atom = cute.make_copy_atom(CopyUniversalOp(), cute.Float32, num_bits_per_copy=32 << vbits)
    thr = _pow2_split(draw, draw(st.integers(0, 6)))
    val = _pow2_split(draw, draw(st.integers(vbits, vbits + 2)))
    if val[0] * val[1] % (1 << vbits):
        val = (1, 1 << vbits)
    thr_l = cute.make_ordered_layout(thr, draw(st.sampled_from([(0, 1), (1, 0)])))
    val_l = cute.make_ordered_layout(val, draw(st.sampled_from([(0, 1), (1, 0)])))
    return cute.make_tiled_copy_tv(atom, thr_l, val_l)


@st.composite
def tensors_for(draw, tc, extra_mode=False):
    m, n = (t.size() for t in tc.tiler_mn)
    shape = [m * draw(st.integers(1, 3)), n * draw(st.integers(1, 3))]
    if extra_mode:
        shape.append(draw(st.integers(1, 3)))
    order = draw(st.permutations(range(len(shape))))
    return cute.make_ordered_layout(tuple(shape), tuple(order))


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_each_element_copied_once(data):
    tc = data.draw(tiled_copies())
    L = data.draw(tensors_for(tc, extra_mode=data.draw(st.booleans())))
    ident = cute.make_identity_tensor(L.shape)
    th = tc.get_slice(np.arange(tc.size))
    for part in (th.partition_S, th.partition_D):
        p = part(cute.make_tensor(np.arange(L.cosize(), dtype=np.int32), L))
        offs = p.load().values.ravel()  # the value of each element is its offset
        assert np.array_equal(np.sort(offs), np.sort(L.offsets()))
    # source and destination partitions of the same tensor name the same coordinates
    s, d = th.partition_S(ident), th.partition_D(ident)
    assert s.layout == d.layout and str(s) == str(d)


def _round_trip(tc, L):
    src = np.random.default_rng(0).standard_normal(L.cosize()).astype(np.float32)
    dst = np.zeros_like(src)
    th = tc.get_slice(np.arange(tc.size))
    s = th.partition_S(cute.make_tensor(src, L))
    r = cute.make_fragment_like(s)
    cute.copy(tc, s, r)
    cute.copy(tc, r, th.partition_D(cute.make_tensor(dst, L)))
    assert np.array_equal(dst, src)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_copy_round_trip_through_registers(data):
    """A vector copy round-trips, or refuses because an atom's values are not consecutive in
    memory (then they truly are not); the same tiling with a one-element atom always round-trips."""
    tc = data.draw(tiled_copies())
    L = data.draw(tensors_for(tc))
    try:
        _round_trip(tc, L)
    except cute.TensorError as e:
        assert "consecutive" in str(e)
        nv = tc.num_val_src
        p = tc.get_slice(np.arange(tc.size)).partition_S(cute.make_tensor(np.arange(L.cosize(), dtype=np.int64), L))
        runs = p.load().values.reshape(tc.size, -1, nv)  # each atom call's offsets, per thread
        assert not (np.diff(runs, axis=-1) == 1).all()
    scalar = cute.make_copy_atom(CopyUniversalOp(), cute.Float32)
    _round_trip(cute.make_tiled_copy_S(scalar, tc), L)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_retile_names_the_fragment(data):
    """retile of a compact (V, M, N) fragment is a re-indexing of the same registers."""
    tc = data.draw(tiled_copies())
    L = data.draw(tensors_for(tc))
    th = tc.get_slice(0)
    frag = cute.make_fragment_like(th.partition_D(cute.make_tensor(np.zeros(L.cosize(), np.float32), L)))
    rt = tc.retile(frag)
    assert rt.layout.size() == frag.layout.size()
    assert sorted(rt.layout.offsets().tolist()) == sorted(frag.layout.offsets().tolist())


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([(False, 1), (False, 2), (False, 4), (True, 1), (True, 2), (True, 4)]),
       st.sampled_from([cute.Float16, cute.BFloat16, cute.Int16]), st.integers(1, 3))
def test_stmatrix_undoes_ldmatrix(op, dt, reps):
    """smem -> ldmatrix -> registers -> stmatrix (same shape) -> smem gives back the tile."""
    tr, n = op
    ld = cute.make_copy_atom(warp.LdMatrix8x8x16bOp(tr, n), dt)
    stm = cute.make_copy_atom(warp.StMatrix8x8x16bOp(tr, n), dt)
    nv = ld.layout_dst_tv.size() // 32
    tl = cute.make_tiled_copy_tv(ld, cute.make_layout((8, 4)), cute.make_layout((1, nv)))
    ts = cute.make_tiled_copy_tv(stm, cute.make_layout((8, 4)), cute.make_layout((1, nv)))
    M, N = (t.size() for t in tl.tiler_mn)
    L = cute.make_layout((M, N * reps), stride=(N * reps, 1))
    a = np.arange(L.cosize()).astype(dt.storage)
    out = np.zeros_like(a)
    tids = np.arange(32)
    src = tl.get_slice(tids).partition_S(cute.make_tensor(a, L))
    regs = cute.make_fragment_like(tl.get_slice(tids).partition_D(cute.make_tensor(a, L)))
    cute.copy(tl, src, regs)
    cute.copy(ts, regs, ts.get_slice(tids).partition_D(cute.make_tensor(out, L)))
    assert np.array_equal(out, a)
