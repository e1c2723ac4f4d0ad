"""Copy atoms, TiledCopy and host copies: case tables (printed by CuTe DSL 4.8.1), properties,
and errors. The exhaustive differential check is tests/nvgpu/test_copy_golden.py."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
from cutelab import Layout, LayoutError, TensorError
from cutelab.nvgpu import (
    CacheEvictionPriority, CopyG2ROp, CopyR2SOp, CopyUniversalOp, LoadCacheMode, MemoryOrder, cpasync, warp,
)

P = Layout.parse


# --------------------------------------------------------------------------- atoms

ATOMS = [  # (op, dtype, kwargs, thr_id, src, dst) as CuTe DSL 4.8.1 prints them
    (CopyUniversalOp(), cute.Float16, {"num_bits_per_copy": 64}, "1:0", "(1,4):(0,1)", "(1,4):(0,1)"),
    (CopyUniversalOp(), cute.Float16, {}, "1:0", "(1,1):(0,0)", "(1,1):(0,0)"),
    (CopyUniversalOp(), cute.Int8, {"num_bits_per_copy": 256}, "1:0", "(1,32):(0,1)", "(1,32):(0,1)"),
    (cpasync.CopyG2SOp(), cute.Float16, {"num_bits_per_copy": 128}, "1:0", "(1,8):(0,1)", "(1,8):(0,1)"),
    (warp.LdMatrix8x8x16bOp(False, 4), cute.Float16, {}, "32:1", "(32,8):(8,1)", "(32,(2,4)):(2,(1,64))"),
    (warp.LdMatrix8x8x16bOp(True, 2), cute.Float16, {}, "32:1", "((16,2),8):((8,0),1)",
     "((4,8),(1,2,2)):((16,1),(1,8,64))"),
    (warp.LdMatrix8x8x16bOp(False, 1), cute.Float32, {}, "32:1", "((8,4),4):((4,0),1)", "(32,1):(1,1)"),
    (warp.LdMatrix8x8x16bOp(True, 4), cute.Int8, {}, "32:1", "(32,16):(16,1)",
     "((4,8),(2,2,4)):((32,2),(1,16,128))"),
    (warp.StMatrix8x8x16bOp(False, 4), cute.Float16, {}, "32:1", "(32,(2,4)):(2,(1,64))", "(32,8):(8,1)"),
    (warp.LdMatrix16x8x8bOp(True, 2), cute.Int8, {}, "32:1", "((2,2,4,2),16):((16,128,32,0),1)",
     "((4,8),(1,2,2,2)):((32,1),(1,16,8,128))"),
    (warp.LdMatrix16x16x8bOp(True, 2), cute.Int8, {}, "32:1", "(32,16):(16,1)",
     "((4,8),(1,4,2,2)):((64,1),(1,16,8,256))"),
    (warp.StMatrix16x8x8bOp(True, 1), cute.Int8, {}, "32:1", "((4,8),(1,2,2)):((32,1),(1,16,8))",
     "((8,4),16):((16,0),1)"),
    (warp.LdMatrix8x16x8bOp(False, 2, 4), cute.Int8, {}, "32:1", "((16,2),16):((16,0),1)", "(32,(4,2)):(4,(1,128))"),
]


@pytest.mark.parametrize("op,dt,kw,thr,src,dst", ATOMS)
def test_atom_layouts(op, dt, kw, thr, src, dst):
    a = cute.make_copy_atom(op, dt, **kw)
    assert (str(a.thr_id), str(a.layout_src_tv), str(a.layout_dst_tv)) == (thr, src, dst)
    assert a.value_type is dt and a.op is op


def test_atom_printing():
    a = cute.make_copy_atom(warp.LdMatrix8x8x16bOp(True, 2), cute.Float16)
    assert str(a) == (
        "Copy Atom\n  ThrID:         32:1\n  TV Layout Src: ((16,2),8):((8,0),1)\n"
        "  TV Layout Dst: ((4,8),(1,2,2)):((16,1),(1,8,64))\n  Value type:    f16"
    )
    assert str(warp.LdMatrix8x8x16bOp(True, 2)) == "LdMatrix8x8x16b Copy Operation\n  number of matrices = 2\n  transposed"
    assert str(warp.LdMatrix8x16x8bOp(False, 4, 6)) == "LdMatrix8x16x8b Copy Operation\n  number of matrices = 4\n  unpack 6b to 8b"
    assert str(cpasync.CopyG2SOp()) == "cp.async GMEM -> SMEM copy Operation"
    assert str(cpasync.CopyG2SOp(LoadCacheMode.GLOBAL)) == "cp.async GMEM -> SMEM copy Operation\n  with cache mode = LoadCacheMode.GLOBAL"
    assert str(CopyUniversalOp()) == "universal Copy Operation"
    assert (str(MemoryOrder.WEAK), repr(MemoryOrder.WEAK)) == ("MemoryOrder.WEAK", "<MemoryOrder.WEAK>")
    assert cpasync.LoadCacheMode is LoadCacheMode
    # MLIR integers are signless: the DSL prints a u8 atom's value type as i8
    assert str(cute.make_copy_atom(CopyUniversalOp(), cute.Uint8)).endswith("Value type:    i8")


def test_reference_layout():
    ld = cute.make_copy_atom(warp.LdMatrix8x8x16bOp(False, 4), cute.Float16)
    st = cute.make_copy_atom(warp.StMatrix8x8x16bOp(False, 4), cute.Float16)
    assert ld.layout_ref_tv == ld.layout_dst_tv and st.layout_ref_tv == st.layout_src_tv
    assert ld.num_bits_per_copy is None
    assert cute.make_copy_atom(CopyUniversalOp(), cute.Float32, num_bits_per_copy=128).num_bits_per_copy == 128


@pytest.mark.parametrize("make,msg", [
    (lambda: warp.LdMatrix8x8x16bOp(False, 3), "one of \\[1,2,4\\]"),
    (lambda: warp.LdMatrix8x8x16bOp(1, 4), "bool"),
    (lambda: warp.LdMatrix8x8x16bOp(False, 4, 4), "doesn't support unpacking"),
    (lambda: warp.LdMatrix16x8x8bOp(False, 2), "only supports transpose"),
    (lambda: warp.LdMatrix16x8x8bOp(True, 1), "one of \\[2,4\\]"),
    (lambda: warp.LdMatrix16x16x8bOp(True, 4), "one of \\[1,2\\]"),
    (lambda: warp.LdMatrix8x16x8bOp(True, 1), "doesn't support transpose"),
    (lambda: warp.LdMatrix8x16x8bOp(False, 1, 5), "4 or 6"),
    (lambda: cpasync.CopyG2SOp("always"), "LoadCacheMode"),
])
def test_op_argument_checks(make, msg):
    with pytest.raises(ValueError, match=msg):
        make()


@pytest.mark.parametrize("op,dt,kw,exc,msg", [
    (CopyUniversalOp(), cute.Float16, {"num_bits_per_copy": 24}, ValueError, "power of two"),
    (CopyUniversalOp(), cute.Float16, {"num_bits_per_copy": -8}, ValueError, "non-negative"),
    (CopyUniversalOp(), cute.Float32, {"num_bits_per_copy": 16}, ValueError, "whole number"),
    (CopyUniversalOp(), cute.Float32, {"memory_order": MemoryOrder.WEAK}, TypeError, "memory attributes"),
    (cpasync.CopyG2SOp(), cute.Float16, {}, ValueError, "positive"),
    (cpasync.CopyG2SOp(), cute.Float16, {"num_bits_per_copy": 0}, ValueError, "positive"),
    (CopyG2ROp(), cute.Float16, {"memory_order": "weak"}, TypeError, "MemoryOrder"),
    (CopyR2SOp(), cute.Float16, {"load_cache_mode": LoadCacheMode.ALWAYS}, TypeError, "unexpected keyword"),
    (warp.LdMatrix8x8x16bOp(False, 4), cute.Float64, {}, ValueError, "16 threads"),
    # the DSL prints these atoms with 16 and 8 threads; CuTe C++ rejects them, so does cutelab
    (warp.LdMatrix16x8x8bOp(True, 2), cute.Float16, {}, ValueError, "16 threads"),
    (warp.StMatrix16x8x8bOp(True, 1), cute.Float32, {}, ValueError, "8 threads"),
])
def test_make_copy_atom_errors(op, dt, kw, exc, msg):
    with pytest.raises(exc, match=msg):
        cute.make_copy_atom(op, dt, **kw)


def test_universal_ignores_performance_hints():
    a = cute.make_copy_atom(CopyUniversalOp(), cute.Float32, num_bits_per_copy=64,
                            l1c_evict_priority=CacheEvictionPriority.EVICT_LAST, invariant=True)
    assert str(a.layout_src_tv) == "(1,2):(0,1)"


def test_make_copy_atom_type_errors():
    with pytest.raises(TypeError, match="copy operation"):
        cute.make_copy_atom("ldmatrix", cute.Float16)
    with pytest.raises(TypeError, match="Numeric"):
        cute.make_copy_atom(CopyUniversalOp(), np.float16)


# --------------------------------------------------------------------------- TiledCopy

U64 = cute.make_copy_atom(CopyUniversalOp(), cute.Float32, num_bits_per_copy=64)
LDSM4 = cute.make_copy_atom(warp.LdMatrix8x8x16bOp(False, 4), cute.Float16)


def test_tiled_copy_as_the_dsl_prints_it():
    tc = cute.make_tiled_copy_tv(U64, cute.make_layout((4, 8), stride=(8, 1)), cute.make_layout((1, 2)))
    assert str(tc) == (
        "Tiled Copy\n  Tiler MN:        (4:1,16:1)\n  TV Layout tiled: ((8,4),2):((8,1),4)\nCopy Atom\n"
        "  ThrID:           1:0\n  TV Layout Src:   (1,2):(0,1)\n  TV Layout Dst:   (1,2):(0,1)\n"
        "  Value type:      f32"
    )
    assert tc.size == 32 and str(tc.tiler_mn) == "(4:1, 16:1)"
    assert str(tc.layout_src_tv_tiled) == str(tc.layout_dst_tv_tiled) == "((8,4),(2,1)):((8,1),(4,0))"
    t = cute.make_rmem_tensor(cute.make_layout((16, 32), stride=(32, 1)), cute.Float32)
    th = tc.get_slice(3)
    assert th.thr_idx == 3
    assert str(th.partition_S(t).layout) == str(th.partition_D(t).layout) == "((2,1),4,2):((1,0),128,16)"
    # a dsl_user_op passes its source location and insertion point on (quack's copy helpers)
    assert str(th.partition_S(t, loc=None, ip=None).layout) == str(th.partition_D(t, loc=None, ip=None).layout)
    assert str(tc.retile(th.partition_S(t), loc=None).layout) == str(tc.retile(th.partition_S(t)).layout)
    assert str(th.partition_S(cute.make_identity_tensor((16, 32)))) == "tensor<(0,6) o ((2,1),4,2):((1@1,0),4@0,16@1)>"
    assert str(th.partition_S(cute.make_rmem_tensor(cute.make_layout((16, 32, 3)), cute.Float32)).layout) == \
        "((2,1),4,2,3):((16,0),4,256,512)"
    assert str(tc.retile(cute.make_rmem_tensor(cute.make_layout((2, 4, 4)), cute.Float32)).layout) == "((2,1),4,4):((1,0),2,8)"
    assert str(cute.make_tiled_copy_S(U64, tc).layout_tv_tiled) == "((8,4),(2,1)):((8,1),(4,0))"


def test_tiled_ldmatrix_as_the_dsl_prints_it():
    tc = cute.make_tiled_copy_tv(LDSM4, cute.make_layout((8, 4)), cute.make_layout((1, 8)))
    assert str(tc.tiler_mn) == "(8:1, 32:1)" and str(tc.layout_tv_tiled) == "((8,4),8):((1,64),8)"
    assert str(tc.layout_src_tv_tiled) == "((2,4,4),((2,4),1)):((4,64,16),((8,1),0))"
    assert str(tc.layout_dst_tv_tiled) == "((8,4),(8,1)):((1,64),(8,0))"
    t = cute.make_rmem_tensor(cute.make_layout((16, 32), stride=(32, 1)), cute.Float16)
    assert str(tc.get_slice(5).partition_S(t).layout) == "(((2,4),1),2,1):(((1,32),0),256,0)"
    assert str(tc.get_slice(5).partition_D(t).layout) == "((8,1),2,1):((1,0),256,0)"


def test_make_tiled_copy_with_int_tiler():
    tc = cute.make_tiled_copy(U64, cute.make_layout((32, 2), stride=(2, 1)), (8, 16))
    assert str(tc.tiler_mn) == "(8:1, 16:1)"
    assert str(tc).splitlines()[1] == "  Tiler MN:        (8:1,16:1)"


def _owners(tc, layout_of_tv):
    """For each tile index, the (thread, value) pairs that map to it."""
    offs = layout_of_tv.offsets()
    n = int(np.prod([t.size() for t in tc.tiler_mn]))
    return np.bincount(offs, minlength=n)


@pytest.mark.parametrize("thr,val", [((4, 8), (1, 2)), ((8, 4), (2, 2)), ((32, 1), (1, 4)), ((2, 16), (4, 1))])
def test_every_element_copied_once(thr, val):
    """make_tiled_copy_tv covers the tile: each element by exactly one (thread, value), on both sides."""
    tc = cute.make_tiled_copy_tv(U64 if np.prod(val) % 2 == 0 else cute.make_copy_atom(CopyUniversalOp(), cute.Float32),
                                 cute.make_ordered_layout(thr, (1, 0)), cute.make_layout(val))
    for tv in (tc.layout_tv_tiled, tc.layout_src_tv_tiled, tc.layout_dst_tv_tiled):
        assert (_owners(tc, tv) == 1).all()
    M, N = (t.size() for t in tc.tiler_mn)
    g = cute.make_identity_tensor((2 * M, 3 * N))
    seen = {}
    for t in range(tc.size):
        p = tc.get_slice(t).partition_S(g)
        for i in range(p.layout.size()):
            seen[p[i]] = seen.get(p[i], 0) + 1
    assert len(seen) == 6 * M * N and set(seen.values()) == {1}


def test_tiled_copy_errors():
    with pytest.raises(LayoutError, match="too few values"):
        cute.make_tiled_copy_tv(cute.make_copy_atom(CopyUniversalOp(), cute.Float32, num_bits_per_copy=128),
                                cute.make_layout((4, 8)), cute.make_layout((1, 2)))
    with pytest.raises(LayoutError, match="too few threads"):
        cute.make_tiled_copy_tv(LDSM4, cute.make_layout((4, 4)), cute.make_layout((1, 8)))
    with pytest.raises(LayoutError, match="outside the tile"):
        cute.make_tiled_copy(U64, cute.make_layout((32, 2), stride=(2, 1)), (8, 4))
    with pytest.raises(LayoutError, match="tiler_mn"):
        cute.make_tiled_copy(U64, cute.make_layout((32, 2), stride=(2, 1)), (8, 0))
    tc = cute.make_tiled_copy_tv(U64, cute.make_layout((4, 8)), cute.make_layout((1, 2)))
    with pytest.raises(TensorError, match="out of range"):
        tc.get_slice(32)
    with pytest.raises(TensorError, match="rank 1"):
        tc.get_slice(0).partition_S(cute.make_rmem_tensor(cute.make_layout(64), cute.Float32))
    with pytest.raises(TypeError, match="TiledMma"):
        cute.make_tiled_copy_A(U64, tc)
    # ldmatrix x4 (8 values) cannot serve an A/B/C layout of 4 values per thread (CuTe C++ asserts)
    with pytest.raises(LayoutError, match="too few values"):
        cute.make_tiled_copy_B(LDSM4, _mma())


# --------------------------------------------------------------------------- copy on the host

def test_tiled_copy_round_trip_all_threads():
    tc = cute.make_tiled_copy_tv(U64, cute.make_layout((4, 8), stride=(8, 1)), cute.make_layout((1, 2)))
    src = np.random.default_rng(0).standard_normal(16 * 32).astype(np.float32)
    out = np.zeros_like(src)
    L = cute.make_layout((16, 32), stride=(32, 1))
    th = tc.get_slice(np.arange(32))
    s, d = th.partition_S(cute.make_tensor(src, L)), th.partition_D(cute.make_tensor(out, L))
    r = cute.make_fragment_like(s)
    cute.copy(tc, s, r)
    cute.copy(tc, r, d)
    assert np.array_equal(out, src)


def _row(c):
    return c[0] if isinstance(c, tuple) and len(c) else 0  # an all-zero coordinate reads back as 0


def test_copy_with_predicate():
    tc = cute.make_tiled_copy_tv(U64, cute.make_layout((4, 8), stride=(8, 1)), cute.make_layout((1, 2)))
    src = np.arange(16 * 32, dtype=np.float32)
    out = np.full_like(src, -1)
    L = cute.make_layout((16, 32), stride=(32, 1))
    th = tc.get_slice(np.arange(32))
    s, d = th.partition_S(cute.make_tensor(src, L)), th.partition_D(cute.make_tensor(out, L))
    cs = th.partition_S(cute.make_identity_tensor((16, 32)))
    # one flag per atom call: profile (ATOM_REST, REST_M, REST_N) = (1, 4, 2); keep rows < 9
    flags = np.zeros((32, 8), bool)
    for t in range(32):
        c = tc.get_slice(t).partition_S(cute.make_identity_tensor((16, 32)))
        for m in range(4):
            for n in range(2):
                flags[t, m + 4 * n] = _row(c[((0, 0), m, n)]) < 9
    pred_b = cute.make_tensor(flags.ravel(), cute.make_layout(8 * 32))
    pred = cute.Tensor(pred_b.engine, cute.make_layout((1, 4, 2)), np.arange(32) * 8)
    assert cs.batch == (32,)
    cute.copy(tc, s, d, pred=pred)
    o = out.reshape(16, 32)
    assert np.array_equal(o[:9], src.reshape(16, 32)[:9]) and (o[9:] == -1).all()


def test_ldmatrix_emulation_matches_partition_D():
    """ldmatrix x4 over a warp: what thread t receives is the tile element its partition_D names."""
    for op, dt in ((warp.LdMatrix8x8x16bOp(False, 4), cute.Float16), (warp.LdMatrix8x8x16bOp(True, 4), cute.Float16),
                   (warp.LdMatrix8x8x16bOp(False, 1), cute.Int16), (warp.LdMatrix8x8x16bOp(True, 2), cute.Float16)):
        atom = cute.make_copy_atom(op, dt)
        nv = atom.layout_dst_tv.size() // 32
        tc = cute.make_tiled_copy_tv(atom, cute.make_layout((8, 4)), cute.make_layout((1, nv)))
        M, N = (t.size() for t in tc.tiler_mn)
        data = np.arange(M * N * 2).astype(dt.storage)
        S = cute.make_tensor(data, cute.make_layout((M, 2 * N), stride=(2 * N, 1)))
        th = tc.get_slice(np.arange(32))
        pS, pD = th.partition_S(S), th.partition_D(S)
        frag = cute.make_fragment_like(pD)
        cute.copy(atom, pS, frag)
        assert np.array_equal(frag.load().values, pD.load().values), op


def test_copy_errors():
    a1 = cute.make_copy_atom(CopyUniversalOp(), cute.Float32)
    f32 = lambda shape, stride=None: cute.make_rmem_tensor(cute.make_layout(shape, stride=stride), cute.Float32)  # noqa: E731
    with pytest.raises(TypeError, match="width"):
        cute.copy(a1, f32(4), cute.make_rmem_tensor((4,), cute.Float16))
    with pytest.raises(TensorError, match="ranks"):
        cute.copy(a1, f32((2, 3)), f32((2, 3, 1)))
    with pytest.raises(TensorError, match="rest modes"):
        cute.copy(a1, f32((2, 3)), f32((2, 4)))
    with pytest.raises(TensorError, match="multiple"):
        cute.copy(U64, f32(3), f32(3))
    with pytest.raises(TensorError, match="consecutive"):
        cute.copy(U64, f32(4, 2), f32(4))
    with pytest.raises(TensorError, match="atom calls"):
        cute.copy(U64, f32(((2, 2), 3)), f32(((2, 2), 3)), pred=cute.make_rmem_tensor((4, 3), cute.Boolean))
    with pytest.raises(TensorError, match="must be a Tensor"):
        cute.copy_atom_call(a1, np.zeros(4, np.float32), f32(4))
    with pytest.raises(TensorError, match="multiple"):
        cute.copy_atom_call(U64, f32(3), f32(3))
    with pytest.raises(TypeError, match="CopyAtom"):
        cute.copy(warp.LdMatrix8x8x16bOp(), f32(4), f32(4))
    with pytest.raises(TensorError, match="warp-collective"):
        cute.copy(LDSM4, cute.make_rmem_tensor((8,), cute.Float16), cute.make_rmem_tensor((8,), cute.Float16))


def test_basic_and_autovec_copy():
    s = cute.make_tensor(np.arange(6, dtype=np.int32), cute.make_layout((2, 3), stride=(3, 1)))
    d = cute.make_rmem_tensor((2, 3), cute.Float32)
    cute.basic_copy(s, d)
    assert d.load().numpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    p = cute.make_tensor(np.array([1, 0, 1, 0, 1, 0], bool), cute.make_layout((2, 3)))
    d2 = cute.make_rmem_tensor((2, 3), cute.Int32)
    cute.basic_copy_if(p, s, d2)
    assert d2.load().numpy().tolist() == [[0, 1, 2], [0, 0, 0]]  # pred is column-major: row 0 only
    d3 = cute.make_rmem_tensor((2, 3), cute.Int32)
    cute.autovec_copy(s, d3)
    assert d3.load().numpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(TypeError, match="bit widths"):
        cute.autovec_copy(s, cute.make_rmem_tensor((2, 3), cute.Int16))
    with pytest.raises(TensorError, match="elements"):
        cute.basic_copy(s, cute.make_rmem_tensor((2, 2), cute.Int32))


# --------------------------------------------------------------------------- with TiledMma

def _mma(acc=cute.Float32, perm=None):
    return cute.make_tiled_mma(warp.MmaF16BF16Op(cute.Float16, acc, (16, 8, 16)), (2, 2, 1), permutation_mnk=perm)


@pytest.mark.parametrize("n", [1, 2, 4])
def test_ldmatrix_into_mma_fragment_A(n):
    """smem A (K-major) -> ldmatrix via make_tiled_copy_A + retile -> the MMA's A fragment."""
    tm, M, K = _mma(), 64, 32
    a = np.random.default_rng(n).standard_normal(M * K).astype(np.float16)
    sA = cute.make_tensor(a, cute.make_layout((M, K), stride=(K, 1)))
    tids = np.arange(tm.size)
    thr_mma = tm.get_slice(tids)
    tCrA = thr_mma.partition_fragment_A(sA)
    s2r = cute.make_tiled_copy_A(cute.make_copy_atom(warp.LdMatrix8x8x16bOp(False, n), cute.Float16), tm)
    cute.copy(s2r, s2r.get_slice(tids).partition_S(sA), s2r.retile(tCrA))
    assert np.array_equal(tCrA.load().values, thr_mma.partition_A(sA).load().values)


@pytest.mark.parametrize("n,perm", [(2, None), (4, (32, 32, 16))])
def test_ldmatrix_trans_into_mma_fragment_B(n, perm):
    """smem B (N-major) -> ldmatrix.trans via make_tiled_copy_B -> the MMA's B fragment (x4 needs
    16 columns of N per atom: the permutation tile (32, 32, 16), as in CUTLASS's SM80 GEMMs)."""
    tm, N, K = _mma(perm=perm), 32, 32
    b = np.random.default_rng(n).standard_normal(N * K).astype(np.float16)
    sB = cute.make_tensor(b, cute.make_layout((N, K), stride=(1, N)))
    tids = np.arange(tm.size)
    thr_mma = tm.get_slice(tids)
    tCrB = thr_mma.partition_fragment_B(sB)
    s2r = cute.make_tiled_copy_B(cute.make_copy_atom(warp.LdMatrix8x8x16bOp(True, n), cute.Float16), tm)
    cute.copy(s2r, s2r.get_slice(tids).partition_S(sB), s2r.retile(tCrB))
    assert np.array_equal(tCrB.load().values, thr_mma.partition_B(sB).load().values)


@pytest.mark.parametrize("n,perm", [(2, None), (4, (32, 32, 16))])
def test_stmatrix_from_mma_fragment_C(n, perm):
    """The MMA's C fragment (f16) -> stmatrix via make_tiled_copy_C + retile -> smem C."""
    tm, M, N = _mma(cute.Float16, perm), 32, 32
    c = np.zeros(M * N, np.float16)
    sC = cute.make_tensor(c, cute.make_layout((M, N), stride=(N, 1)))
    tids = np.arange(tm.size)
    thr_mma = tm.get_slice(tids)
    tCrC = thr_mma.partition_fragment_C(sC)
    vals = np.random.default_rng(0).standard_normal(tCrC.load().values.shape).astype(np.float16)
    tCrC.store(vals)
    r2s = cute.make_tiled_copy_C(cute.make_copy_atom(warp.StMatrix8x8x16bOp(False, n), cute.Float16), tm)
    cute.copy(r2s, r2s.retile(tCrC), r2s.get_slice(tids).partition_D(sC))
    assert np.array_equal(thr_mma.partition_C(sC).load().values, vals)
    assert np.count_nonzero(c) == np.count_nonzero(vals)


def test_partition_and_copy_into_a_swizzled_tile():
    """gmem -> swizzled smem (S<3,3,3> o (64,64) row-major f16) with 128-bit copies: partitions of a
    composed layout fold the swizzle into the pointer where they can, as CuTe DSL does (CuTe's
    slice_and_offset), the tile reads back through the swizzle, and the storage is permuted."""
    a = cute.make_copy_atom(CopyUniversalOp(), cute.Float16, num_bits_per_copy=128)
    tc = cute.make_tiled_copy_tv(a, cute.make_layout((16, 8), stride=(8, 1)), cute.make_layout((1, 8)))
    S = cute.make_composed_layout(cute.make_swizzle(3, 3, 3), 0, cute.make_layout((64, 64), stride=(64, 1)))
    smem = np.zeros(4096, np.float16)
    sT = cute.make_tensor(smem, S)
    g = np.arange(4096).astype(np.float16)
    gT = cute.make_tensor(g, cute.make_layout((64, 64), stride=(64, 1)))
    p = tc.get_slice(3).partition_D(sT)
    assert str(p.layout) == "((8,1),4,1):((1,0),1024,0)"  # as CuTe DSL prints it (the swizzle decayed)
    for t in range(tc.size):
        th = tc.get_slice(t)
        cute.copy(tc, th.partition_S(gT), th.partition_D(sT))
    assert np.array_equal(sT.load().values, gT.load().values)
    assert not np.array_equal(smem, g) and np.array_equal(np.sort(smem), g)
    # 256-bit vectors cross the swizzle's 8-element chunks: not consecutive in smem, refused
    a16 = cute.make_copy_atom(CopyUniversalOp(), cute.Float16, num_bits_per_copy=256)
    tc16 = cute.make_tiled_copy_tv(a16, cute.make_layout((16, 4), stride=(4, 1)), cute.make_layout((1, 16)))
    th = tc16.get_slice(4)  # row 1: the swizzle swaps its two 8-element chunks
    with pytest.raises(TensorError, match="consecutive"):
        cute.copy(tc16, th.partition_S(gT), th.partition_D(sT))
    with pytest.raises(TensorError, match="one\\s+thread at a time"):
        tc.get_slice(np.arange(4)).partition_D(sT)


@pytest.mark.parametrize("trans", [False, True])
@pytest.mark.parametrize("n", [1, 2, 4])
def test_ldmatrix_atom_against_the_ptx_description(trans, n):
    """One ldmatrix.x{n}[.trans] by one warp, on the atom alone (no TiledCopy): lane t gives the
    address of row t%8 of matrix t//8; for matrix i it receives the pair (row t//4, columns
    2*(t%4), 2*(t%4)+1), or with .trans the pair (rows 2*(t%4), 2*(t%4)+1, column t//4), in
    registers 2*i, 2*i+1 (PTX ISA, "Warp-level matrix load instruction: ldmatrix")."""
    atom = cute.make_copy_atom(warp.LdMatrix8x8x16bOp(trans, n), cute.Float16)
    smem = np.arange(64 * 4).astype(np.float16)  # matrix i, row r, column c at 64*i + 8*r + c
    lanes = np.arange(32)
    rows = lanes % (8 * n)  # lanes past the n*8 addresses repeat them (unused by the hardware)
    src = cute.Tensor(cute.make_tensor(smem, cute.make_layout(256)).engine, cute.make_layout(8), 8 * rows)
    dst = cute.make_tensor(np.zeros(32 * 2 * n, np.float16), cute.make_layout(2 * n))
    dst = cute.Tensor(dst.engine, cute.make_layout(2 * n), 2 * n * lanes)
    cute.copy(atom, src, dst)
    got = dst.load().values
    want = np.zeros((32, 2 * n), np.float16)
    for t in range(32):
        for i in range(n):
            for j in range(2):
                r, c = (t // 4, 2 * (t % 4) + j) if not trans else (2 * (t % 4) + j, t // 4)
                want[t, 2 * i + j] = smem[64 * i + 8 * r + c]
    assert np.array_equal(got, want)
