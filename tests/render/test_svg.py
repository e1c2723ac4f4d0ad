"""SVG pictures: valid XML, the expected cells and labels, colours that partition cells by thread."""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cutelab as cute
from cutelab import render as R
from cutelab.render import svg

from .svgread import read


def _tv_truth(tv: cute.Layout, M: int, N: int) -> dict:
    """(m, n) -> (t, v) straight from the definition: idx = tv((t, v)); (m, n) = idx2crd(idx, (M, N))."""
    T = cute.size(tv, mode=[0])
    V = cute.size(tv) // T
    truth = {}
    for t in range(T):
        for v in range(V):
            m, n = cute.idx2crd(tv((t, v)), (M, N))
            truth[(m, n)] = (t, v)
    return truth


def _check_threads(grid, truth: dict, nthreads: int, labels: bool = True) -> None:
    """One colour per thread, distinct across threads, and every cell the right thread's colour."""
    colour_of = {}
    for (m, n), (t, v) in truth.items():
        f = grid.fills[m, n]
        assert colour_of.setdefault(t, f) == f, f"thread {t} has two colours"
        if labels:
            assert grid.labels[(m, n)] == f"T{t}\nV{v}"
    assert len(colour_of) == nthreads
    assert len(set(colour_of.values())) == nthreads, "two threads share a colour"
    owned = set(truth)
    for m in range(grid.rows):
        for n in range(grid.cols):
            if (m, n) not in owned:
                assert grid.fills[m, n] == "#FFFFFF"


def test_layout_grid_cells_and_labels():
    L = cute.Layout.parse("(2,3):(3,1)")
    s = svg.render(R.layout_figure(L))
    ET.fromstring(s)
    (g,) = read(s)
    assert (g.rows, g.cols) == (2, 3)
    for m in range(2):
        for n in range(3):
            assert g.labels[(m, n)] == str(L(m, n))
            assert g.keys[m, n] == L(m, n) % 8


def test_layout_svg_for_jupyter():
    L = cute.Layout.parse("((2,2),(2,3)):((2,12),(1,4))")
    s = L._repr_svg_()
    (g,) = read(s)
    assert (g.rows, g.cols) == (4, 6)
    assert g.labels[(3, 5)] == str(L(3, 5)) == "23"


def test_deep_layout_drawn_by_top_two_modes():
    L = cute.Layout.parse("(2,2,2):(2,1,4)")  # columns: modes 1.. together, colexicographic
    (g,) = read(svg.render(R.layout_figure(L)))
    assert (g.rows, g.cols) == (2, 4)
    assert [g.labels[(0, c)] for c in range(4)] == ["0", "1", "4", "5"]
    (g,) = read(svg.render(R.layout_figure(L, label="coord")))
    assert g.labels[(0, 1)] == "(0,1,0)"


def test_seed_tv_layout_colours_partition_by_thread():
    tv = cute.Layout.parse("((2,2),(2,3)):((2,12),(1,4))")
    for M, N in [(1, 24), (24, 1), (4, 6)]:
        (g,) = read(svg.render(R.tv_figure(tv, (M, N))))
        _check_threads(g, _tv_truth(tv, M, N), 4)
    # the seed's printout: thread 0 holds 0 1 4 5 8 9
    (g,) = read(svg.render(R.tv_figure(tv, (1, 24))))
    t0 = [n for n in range(24) if g.labels[(0, n)].startswith("T0\n")]
    assert t0 == [0, 1, 4, 5, 8, 9]


def test_copy_kernel_tv_tile():
    thr = cute.make_layout((32, 8), stride=(8, 1))
    val = cute.make_layout((4, 8), stride=(8, 1))
    tiler, tv = cute.make_layout_tv(thr, val)
    assert tuple(tiler) == (128, 64)
    s = svg.render(R.make_tv_figure(thr, val))
    (g,) = read(s)
    _check_threads(g, _tv_truth(tv, 128, 64), 256)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from([1, 2, 4]), min_size=4, max_size=4), st.booleans(), st.booleans())
def test_tv_colours_partition_property(ext, thr_rm, val_rm):
    tm, tn, vm, vn = ext
    thr = cute.make_layout((tm, tn), stride=(tn, 1) if thr_rm else (1, tm))
    val = cute.make_layout((vm, vn), stride=(vn, 1) if val_rm else (1, vm))
    tiler, tv = cute.make_layout_tv(thr, val)
    M, N = tiler
    (g,) = read(svg.render(R.tv_figure(tv, (M, N))))
    _check_threads(g, _tv_truth(tv, M, N), tm * tn)


def test_partition_colours_by_thread():
    b, t, v = R.tv_ownership((16, 16), "(4,2):(2,1)", "(2,4):(4,1)")
    (g,) = read(svg.render(R.tv_partition_figure((16, 16), "(4,2):(2,1)", "(2,4):(4,1)")))
    colour = {}
    for m in range(16):
        for n in range(16):
            assert colour.setdefault(int(t[m, n]), g.fills[m, n]) == g.fills[m, n]
            assert g.labels[(m, n)] == f"B{b[m, n]}T{t[m, n]}\nV{v[m, n]}"
    assert len(set(colour.values())) == 8


@pytest.mark.parametrize("op,args", [
    ("composition", ("(4,4):(4,1)", "(4,2,2):(2,1,8)")),
    ("complement", ("(2,3):(2,4)", 24)),
    ("logical_divide", ("(8,8)", "<2:1,4:1>")),
    ("zipped_divide", ("(8,8)", "(2,4)")),
    ("tiled_divide", ("(8,8)", "(2,4)")),
    ("logical_product", ("(2,5):(5,1)", "(3,4)")),
    ("blocked_product", ("(2,5):(5,1)", "(3,4)")),
    ("raked_product", ("(2,5):(5,1)", "(3,4)")),
])
def test_explain_pictures_parse_and_check(op, args):
    fig = R.explain(op, *args)
    assert any(n.startswith("check:") for n in fig.notes), fig.notes
    grids = read(svg.render(fig))
    assert len(grids) == len(fig.grids)
    for rg, fg in zip(grids, fig.grids):
        assert np.array_equal(rg.keys, fg.keys)


def test_composition_follows_rows_through_the_chain():
    fig = R.explain("composition", "(4,4):(4,1)", "(4,2,2):(2,1,8)")
    B, nat, A, Rg = read(svg.render(fig))
    # seed: thread 0 -> MN (0,1,8,9) -> memory (0,4,2,6)
    assert [B.labels[(0, c)] for c in range(4)] == ["0", "1", "8", "9"]
    assert [Rg.labels[(0, c)] for c in range(4)] == ["0", "4", "2", "6"]
    row0 = B.fills[0, 0]
    assert {A.labels[(m, n)] for m in range(4) for n in range(4) if A.fills[m, n] == row0} == {"0", "4", "2", "6"}


def test_complement_colours_the_copies():
    fig = R.explain("complement", "(2,3):(2,4)", 24)
    strip = read(svg.render(fig))[0]
    A = cute.Layout.parse("(2,3):(2,4)")
    own = {int(x) for x in A.offsets()}
    first = strip.fills[0, 0]
    assert {n for n in range(24) if strip.fills[0, n] == first} == own


def test_big_layout_is_small_and_fast():
    L = cute.make_layout((256, 256), stride=(256, 1))
    fig = R.layout_figure(L)
    t0 = time.perf_counter()
    s = svg.render(fig)
    assert time.perf_counter() - t0 < 1.0
    assert len(s) < 100_000
    (g,) = read(s)
    assert (g.rows, g.cols) == (256, 256) and not g.labels


def test_worst_case_big_layout_becomes_an_image():
    L = cute.Layout.parse("((2,128),(2,128)):((32768,1),(16384,128))")  # neighbours always differ
    fig = R.layout_figure(L)
    s = svg.render(fig)
    assert len(s) < 50_000 and "cells-image" in s
    (g,) = read(s)
    want = np.array([[fig.grids[0].fill(int(k)) for k in row] for row in fig.grids[0].keys], dtype=object)
    assert (g.fills == want).all()


def test_big_tv_tile_is_small():
    fig = R.make_tv_figure("(32,8):(8,1)", "(4,16):(16,1)")
    assert fig.grids[0].shape == (128, 128)
    s = svg.render(fig)
    assert len(s) < 200_000
    (g,) = read(s)
    tiler, tv = cute.make_layout_tv(cute.Layout.parse("(32,8):(8,1)"), cute.Layout.parse("(4,16):(16,1)"))
    _check_threads(g, _tv_truth(tv, 128, 128), 256, labels=False)


def test_text_is_escaped():
    fig = R.layout_figure("(2,2):(1,2)", title="a < b & c")
    ET.fromstring(svg.render(fig))
