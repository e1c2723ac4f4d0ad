"""tv_trace / ldmatrix_trace: layouts to per-lane addresses, auto-vectorised as CuTe's copy.

The vector width is checked against max_common_vector on plain layouts (hypothesis), the
swizzled cases against the Hopper swizzle atoms' known behaviour, and the seeds' copy kernels
(bf16, 8192x8192, row-major) against their hand-derived access patterns.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutelab import (
    ComposedLayout, Layout, composition, make_composed_layout, make_layout, make_layout_tv, make_swizzle,
    max_common_vector,
)
from cutelab.analysis import (
    analyze, analyze_tv, element_bits, ldmatrix_trace, parse_tensor_layout, tv_offsets, tv_trace,
    vector_width,
)
from cutelab.errors import LayoutError
from cutelab.numeric import BFloat16, Float32

ROW_MAJOR_8K = "(8192,8192):(8192,1)"


def test_offsets_compose_tv_and_layout():
    offs = tv_offsets("(4,2):(2,1)", "(2,4):(4,1)")  # tv idx 2t+v over a row-major 2x4 tile
    L = Layout.parse("(2,4):(4,1)")
    assert offs.tolist() == [[L(2 * t + v) for v in range(2)] for t in range(4)]


@pytest.mark.parametrize("tv,layout,bits,align,want", [
    ("(32,8):(1,32)", "(32,8):(8,1)", 16, 16, 8),      # rows of 8 halves: 128-bit
    ("(32,8):(1,32)", "(32,8):(8,1)", 16, 8, 4),       # 8-byte alignment caps it at 64 bits
    ("(32,8):(1,32)", "(32,8):(1,32)", 16, 16, 1),     # column-major tile: values 32 apart
    ("(32,8):(1,32)", "(32,8):(8,1)", 32, 16, 4),      # f32: 4 x 32 bits
    ("(32,8):(1,32)", "(32,8):(8,1)", 64, 16, 2),      # f64: 2 x 64 bits
    ("(32,6):(1,32)", "(32,6):(6,1)", 16, 16, 2),      # 6 values, rows of 6: 2 divides both
    ("(32,(2,4)):(1,(64,32))", "(32,8):(8,1)", 16, 16, 1),  # value order is not the memory order
])
def test_vector_width_cases(tv, layout, bits, align, want):
    tr = tv_trace(tv, layout, bits, "shared", align=align)
    assert tr.bytes_per_lane * 8 == want * bits


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([1, 2, 4, 8]), st.sampled_from([4, 8, 16, 32]), st.sampled_from([1, 2, 3, 4]),
       st.sampled_from([1, 2, 4, 8]), st.booleans(), st.booleans(), st.sampled_from([2, 4, 8, 16, 64]))
def test_vector_width_agrees_with_max_common_vector(tm, tn_div, vm, vn, thr_row, tile_row, align):
    # make_layout_tv(thr, val) over a row- or column-major tile, as the seeds build their copies
    tn = max(32 // tm, 1) * (1 if tn_div <= 8 else 2)
    thr = make_layout((tm, tn), stride=(tn, 1)) if thr_row else make_layout((tm, tn))
    val = make_layout((vm, vn), stride=(vn, 1))
    tiler, tv = make_layout_tv(thr, val)
    M, N = tiler
    tile = make_layout((M, N), stride=(N, 1)) if tile_row else make_layout((M, N))
    offs = tv_offsets(tv, tile)
    w = vector_width(offs, 16, align=align)
    # the algebra's answer: the contiguous run of a thread's values (max_common_vector against the
    # compact register fragment), cut to a power of two, to 128 bits and to the alignment, such
    # that every vector starts on a multiple of its size
    tvc = composition(tile, tv)
    vals = Layout(tvc.shape[1], tvc.stride[1]) if isinstance(tvc.shape[1], tuple) else make_layout(tvc.shape[1], stride=tvc.stride[1])
    run = max_common_vector(vals, make_layout(vals.shape))
    V = offs.shape[1]
    want = 1
    p = 2
    while p <= min(8, align // 2) and run % p == 0 and V % p == 0:
        if (offs.reshape(offs.shape[0], V // p, p)[..., 0] % p == 0).all():
            want = p
        p *= 2
    assert w == want


def test_vector_bits_forced_and_refused():
    tr = tv_trace("(32,8):(1,32)", "(32,8):(8,1)", "f16", "shared", vector_bits=32)
    assert tr.bytes_per_lane == 4 and tr.num_instructions == 4
    with pytest.raises(LayoutError, match="the widest is 16 bits"):
        tv_trace("(32,8):(1,32)", "(32,8):(1,32)", "f16", "shared", vector_bits=64)
    with pytest.raises(LayoutError, match="whole number"):
        tv_trace("(32,8):(1,32)", "(32,8):(8,1)", "f16", "shared", vector_bits=24)


def test_swizzle_parsing_and_composed_layouts():
    f = parse_tensor_layout("S<3,3,3> o 0 o (8,64):(64,1)")
    assert isinstance(f, ComposedLayout) and str(f) == "S<3,3,3> o 0 o (8,64):(64,1)"
    x = np.arange(512)
    y = f.offsets()
    assert sorted(y.tolist()) == x.tolist()  # a bijection of the atom
    plain = Layout.parse("(8,64):(64,1)").offsets()
    assert (y == plain ^ (((plain >> 6) & 7) << 3)).all()
    assert str(parse_tensor_layout("Sw<1,3,3> o 0 o (8,16):(16,1)")) == "S<1,3,3> o 0 o (8,16):(16,1)"
    # a ComposedLayout object and its text give the same trace
    C = make_composed_layout(make_swizzle(3, 3, 3), 0, make_layout((64, 64), stride=(64, 1)))
    a = tv_trace("(32,8):(1,64)", C, "f16", "shared")
    b = tv_trace("(32,8):(1,64)", str(C), "f16", "shared")
    assert (a.addresses == b.addresses).all() and a.bytes_per_lane == 16
    with pytest.raises(LayoutError, match="cannot parse"):
        parse_tensor_layout("S<3,3> o 0 o (8,64):(64,1)")


# Hopper K-major f16 swizzle atoms (CuTe: Sw<B,4,3> on bytes == Sw<B,3,3> on 16-bit elements)
ATOMS = {"SW32": ("S<1,3,3> o 0 o (8,16):(16,1)", 16), "SW64": ("S<2,3,3> o 0 o (8,32):(32,1)", 32),
         "SW128": ("S<3,3,3> o 0 o (8,64):(64,1)", 64)}


@pytest.mark.parametrize("name", list(ATOMS))
def test_swizzle_atoms_make_128bit_reads_of_a_column_of_chunks_conflict_free(name):
    text, cols = ATOMS[name]
    inner = Layout.parse(text.split(" o ")[-1])
    # 8 threads per phase read chunk c of rows 0..7: without the swizzle every row's chunk c is in the
    # same banks when the row is 128 bytes, or in 2/4 bank groups for 64/32-byte rows
    # thread t = (row r = t % 8, chunk c = t // 8), values: 8 elements of that chunk; tile index m + 8*n
    T = 8 * (cols // 8)
    tvL = Layout.parse(f"((8,{cols // 8}),8):((1,64),8)")
    r_sw = analyze_tv(tvL, text, "f16", "shared")
    r_plain = analyze_tv(tvL, inner, "f16", "shared")
    assert r_sw.trace.bytes_per_lane == 16 and r_plain.trace.bytes_per_lane == 16
    assert r_sw.totals()["conflicts"] == 0
    assert r_sw.totals()["wavefronts"] == T // 8


def test_row_major_128B_rows_column_reads_need_sw128():
    tv = "(32,8):(1,64)"  # thread t: row t of a 64x64 f16 tile, columns 0..7 (one 16-byte chunk)
    want = {"(64,64):(64,1)": 28, "S<1,3,3> o 0 o (64,64):(64,1)": 12, "S<2,3,3> o 0 o (64,64):(64,1)": 4,
            "S<3,3,3> o 0 o (64,64):(64,1)": 0}
    for layout, cf in want.items():
        r = analyze_tv(tv, layout, "f16", "shared")
        assert r.trace.bytes_per_lane == 16
        assert r.totals()["conflicts"] == cf, layout


def test_swizzle_limits_the_vector_width():
    # Sw<1,2,4> XORs bit 6 (odd rows) into bit 2: halves 0-3 and 4-7 of a row swap places, so
    # only 4 consecutive f16 stay together: 64-bit vectors at most
    tr = tv_trace("(32,8):(1,64)", "S<1,2,4> o 0 o (64,64):(64,1)", "f16", "shared")
    assert tr.bytes_per_lane == 8


def test_callable_layout_is_accepted():
    L = Layout.parse("(64,64):(64,1)")
    a = tv_trace("(32,8):(1,64)", lambda i: L(int(i)), "f16", "shared")  # scalar-only callable
    b = tv_trace("(32,8):(1,64)", L, "f16", "shared")
    assert (a.addresses == b.addresses).all() and a.bytes_per_lane == b.bytes_per_lane


# --------------------------------------------------------------------------- the seeds' copy kernels

def test_seed_inner_partition():
    # copy_inner_partition: block (1,16), 256 threads; thread g copies row g // 512, columns 16*(g % 512)..
    tv = "(32,16):(16,1)"  # warp 0: row 0, thread t -> columns 16t .. 16t+15 (a (1,512) tile)
    r = analyze_tv(tv, "(1,512):(8192,1)", BFloat16, "global")
    assert r.trace.bytes_per_lane == 16 and r.trace.num_instructions == 2
    assert r.sectors.tolist() == [32, 32] and r.efficiency.tolist() == [0.5, 0.5]


def test_seed_outer_partition():
    # copy_outer_partition: block (32,256), threads (8,32):(32,1) -> local_partition; bf16 values 32 apart
    tv = "((32,8),(4,8)):((32,1),(8,1024))"
    r = analyze_tv(tv, "(32,256):(8192,1)", "bf16", "global")
    assert r.trace.bytes_per_lane == 2 and r.trace.num_instructions == 8 * 32  # 8 warps x 32 values
    assert set(r.sectors.tolist()) == {2} and r.totals()["efficiency"] == 1.0


def test_seed_tv_partition():
    # copy_tv_partition: thr (32,8):(8,1), val (4,8):(8,1) -> make_layout_tv; rows of 8 bf16 per value row
    tiler, tv = make_layout_tv(Layout.parse("(32,8):(8,1)"), Layout.parse("(4,8):(8,1)"))
    assert tuple(tiler) == (128, 64)
    r = analyze_tv(tv, "(128,64):(8192,1)", "bf16", "global")
    assert r.trace.bytes_per_lane == 16 and r.trace.num_instructions == 8 * 4
    # warp 0: 4 rows x 8 threads x 16 bytes: each instruction reads 4 full 128-byte row segments
    assert set(r.sectors.tolist()) == {16} and r.totals()["efficiency"] == 1.0


# --------------------------------------------------------------------------- ldmatrix

def test_ldmatrix_x4_over_row_major_and_swizzled():
    plain = analyze(ldmatrix_trace("(64,64):(64,1)"))
    sw = analyze(ldmatrix_trace("S<3,3,3> o 0 o (64,64):(64,1)"))
    assert plain.trace.num_instructions == 16 and plain.wavefronts.tolist() == [32] * 16
    assert sw.wavefronts.tolist() == [4] * 16 and sw.totals()["conflicts"] == 0


def test_ldmatrix_rows_and_trans():
    tr = ldmatrix_trace("(16,16):(16,1)", num=4)
    # lane 8j+i: row i of matrix j; matrix 1 is rows 8..15, matrix 2 columns 8..15
    assert tr.addresses[0, 8] == 8 * 32 and tr.addresses[0, 16] == 16 and tr.addresses[0, 31] == 15 * 32 + 16
    t2 = ldmatrix_trace("(16,8):(8,1)", num=2)
    assert (t2.addresses[0, 16:] == -1).all() and t2.addresses[0, 15] == 15 * 16
    tt = ldmatrix_trace("(16,16):(1,16)", num=4, trans=True)  # column-major: memory rows run along m
    assert tt.addresses[0, :3].tolist() == [0, 32, 64]
    with pytest.raises(LayoutError, match="try trans=True"):
        ldmatrix_trace("(16,16):(1,16)")
    with pytest.raises(LayoutError, match="16-bit"):
        ldmatrix_trace("(16,16):(16,1)", dtype=Float32)
    with pytest.raises(LayoutError, match="whole number"):
        ldmatrix_trace("(8,16):(16,1)", num=4)
    with pytest.raises(LayoutError, match="num must be"):
        ldmatrix_trace("(16,16):(16,1)", num=3)


# --------------------------------------------------------------------------- errors

@pytest.mark.parametrize("call,match", [
    (lambda: tv_trace("(32,8):(1,32)", "(16,8):(8,1)", "f16", "shared"), "outside the tensor layout"),
    (lambda: tv_trace("(32,8,2):(1,32,256)", "(32,8):(8,1)", "f16", "shared"), "two modes"),
    (lambda: tv_trace("(32,8):(1,32)", "(32,8):(8,1)", "f17", "shared"), "element type 'f17' is unknown"),
    (lambda: tv_trace("(32,8):(1,32)", "(32,8):(8,1)", 4, "shared"), "8-, 16-, 32- and 64-bit"),
    (lambda: tv_trace("(32,8):(1,32)", "(32,8):(8,1)", "f16", "texture"), "space must be one of"),
    (lambda: tv_trace("(32,8):(1,32)", "(32,8):(8,1)", "f16", "shared", align=12), "power of two"),
    (lambda: tv_trace("(32,8):(1,32)", "(32,8):(8,1)", "f16", "shared", base=8), "not a multiple"),
    (lambda: tv_trace("(32,8):(1,32)", "(32,8):(8,1)", "f16", "shared", op="ldsm"), "ldmatrix_trace"),
    (lambda: tv_trace("(32,8):(1,32)", 3.5, "f16", "shared"), "tensor layout must be"),
    (lambda: tv_trace(7, "(32,8):(8,1)", "f16", "shared"), "TV layout must be"),
    (lambda: tv_trace("(32,8):(1,32)", "(32,8):(-8,1)", "f16", "shared"), "negative offset"),
])
def test_errors(call, match):
    with pytest.raises(LayoutError, match=match):
        call()


def test_element_bits():
    assert element_bits(BFloat16) == 16 and element_bits("half") == 16 and element_bits("f64") == 64
    with pytest.raises(LayoutError):
        element_bits(None)


# --------------------------------------------------------------------------- TiledCopy front end

import cutelab as cute  # noqa: E402
from cutelab.analysis import copy_trace  # noqa: E402
from cutelab.nvgpu import CopyUniversalOp, warp  # noqa: E402


def _mma16816():
    return cute.make_tiled_mma(cute.make_mma_atom(warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16))))


def test_copy_trace_ldmatrix_x4_for_A_is_ldmatrix_trace():
    tc = cute.make_tiled_copy_A(cute.make_copy_atom(warp.LdMatrix8x8x16bOp(False, 4), cute.Float16), _mma16816())
    for lay in ["(16,16):(16,1)", "S<1,3,3> o 0 o (16,16):(16,1)"]:
        a, b = copy_trace(tc, lay), ldmatrix_trace(lay)
        assert a.op == "ldsm" and (a.addresses == b.addresses).all()


def test_copy_trace_ldmatrix_x2_for_B_masks_the_repeated_rows():
    tc = cute.make_tiled_copy_B(cute.make_copy_atom(warp.LdMatrix8x8x16bOp(False, 2), cute.Float16), _mma16816())
    t = copy_trace(tc, "(8,16):(16,1)")  # B is (N, K) = (8, 16), K-major
    assert (t.addresses[0, 16:] == -1).all()
    assert t.addresses[0, :10].tolist() == [0, 32, 64, 96, 128, 160, 192, 224, 16, 48]
    assert analyze(t).totals()["conflicts"] == 2  # 32-byte rows: rows i and i+4 share banks


def test_copy_trace_vector_width_from_the_atom():
    thr, val = make_layout((32, 8), stride=(8, 1)), make_layout((1, 8))
    for bits in (128, 64, 32):
        # each of 256 threads copies one vector of bits/16 halves of a row: one instruction per warp
        atom = cute.make_copy_atom(CopyUniversalOp(), cute.Float16, num_bits_per_copy=bits)
        tc = cute.make_tiled_copy_tv(atom, thr, make_layout((1, bits // 16)))
        r = analyze(copy_trace(tc, "(32,64):(64,1)", "global"))
        assert r.trace.bytes_per_lane == bits // 8 and r.trace.num_instructions == 8
        assert r.totals()["efficiency"] == 1.0
    # a 32-bit atom over 8 values per thread: 4 instructions per thread, 32 in all
    atom32 = cute.make_copy_atom(CopyUniversalOp(), cute.Float16, num_bits_per_copy=32)
    t32 = copy_trace(cute.make_tiled_copy_tv(atom32, thr, val), "(32,64):(64,1)", "global")
    assert t32.bytes_per_lane == 4 and t32.num_instructions == 32
    atom = cute.make_copy_atom(CopyUniversalOp(), cute.Float16, num_bits_per_copy=128)
    tc = cute.make_tiled_copy_tv(atom, thr, val)
    st = copy_trace(tc, "(32,64):(64,1)", "shared", side="dst")
    assert st.op == "st" and st.bytes_per_lane == 16 and st.num_instructions == 8  # 8 warps, one store each


def test_copy_trace_errors():
    stm = cute.make_tiled_copy_A(cute.make_copy_atom(warp.StMatrix8x8x16bOp(False, 4), cute.Float16), _mma16816())
    with pytest.raises(LayoutError, match="stmatrix"):
        copy_trace(stm, "(16,16):(16,1)")
    with pytest.raises(LayoutError, match="expected a TiledCopy"):
        copy_trace(object(), "(32,8):(8,1)")
    ldm = cute.make_tiled_copy_A(cute.make_copy_atom(warp.LdMatrix8x8x16bOp(False, 4), cute.Float16), _mma16816())
    with pytest.raises(LayoutError, match="side must be"):
        copy_trace(ldm, "(16,16):(16,1)", side="both")
    with pytest.raises(LayoutError, match="src side, space 'shared'"):
        copy_trace(ldm, "(16,16):(16,1)", "global")
