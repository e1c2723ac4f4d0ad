"""Large pictures become overviews (bounded time and memory); text grids stay aligned and wrap."""

import time

import numpy as np
import pytest

import cutelab as cute
from cutelab import LayoutError
from cutelab import render as R
from cutelab.int_tuple import tuple_str
from cutelab.render.figure import CELL_LIMIT, COORDS_LIMIT, OVERVIEW_SIDE, default_tile, grid_dims


@pytest.mark.parametrize("text", ["(8192,8192):(8192,1)", "(16384,16384)", "100000", "(65536,65536)",
                                  "(1048576):(1)", "((2,512),(3,700)):((1,6),(2,1024))"])
def test_big_layouts_are_overviews(text):
    L = cute.Layout.parse(text) if ":" in text else cute.make_layout(cute.parse_tuple(text))
    t0 = time.perf_counter()
    fig = R.layout_figure(L)
    svg = R.render(fig, "svg")
    txt = R.render(fig, "text")
    assert time.perf_counter() - t0 < 3.0
    g = fig.grids[0]
    rows, cols = g.shape
    assert rows <= OVERVIEW_SIDE and cols <= OVERVIEW_SIDE
    assert len(svg) < 2_000_000 and len(txt) < 5_000_000
    assert fig.notes and fig.notes[0].startswith("overview")
    # every shown cell carries the true offset of the cell its headers name
    R_ = grid_dims(L)[0]
    for r in (0, rows // 2, rows - 1):
        for c in (0, cols // 2, cols - 1):
            m, n = int(g.row_headers[r]), int(g.col_headers[c])
            assert int(g.labels[r, c]) == L(m + R_ * n)


def test_small_layouts_are_not_sampled():
    fig = R.layout_figure("(256,256):(256,1)")
    assert fig.grids[0].shape == (256, 256) and not fig.notes


def test_coords_of_a_huge_layout_lists_a_prefix():
    t0 = time.perf_counter()
    fig = R.coords_figure("(65536,65536)")
    assert time.perf_counter() - t0 < 3.0
    assert fig.notes[:3] == ["0 -> (0,0)", "1 -> (1,0)", "2 -> (2,0)"]
    assert fig.notes[-1] == f"... the first {COORDS_LIMIT} of {65536 * 65536} offsets are listed"


@pytest.mark.parametrize("text", ["(2,2,2):(2,1,4)", "(2,2):(4,1)", "(4,4):(0,1)", "(3,(2,2)):(4,(1,12))"])
def test_coords_agree_with_get_hier_coord(text):
    L = cute.Layout.parse(text)
    fig = R.coords_figure(L)
    for i, line in enumerate(fig.notes):
        try:
            want = tuple_str(L.get_hier_coord(i))
        except LayoutError:
            want = "-"
        assert line == f"{i} -> {want}"


def test_tv_default_tile_is_the_covered_tile():
    tiler, tv = cute.make_layout_tv(cute.Layout.parse("(32,8):(8,1)"), cute.Layout.parse("(4,8):(8,1)"))
    assert default_tile(tv) == tuple(tiler) == (128, 64)
    fig = R.tv_figure(tv)
    assert fig.grids[0].shape == (128, 64)
    assert default_tile(cute.Layout.parse("((2,2),(2,3)):((2,12),(1,4))")) == (4, 6)
    for thr, val in [("(2,3):(3,1)", "(2,2):(2,1)"), ("(4,8):(1,4)", "(1,4):(0,1)"), ("(8,4):(4,1)", "(2,2):(2,1)")]:
        tiler, tv = cute.make_layout_tv(cute.Layout.parse(thr), cute.Layout.parse(val))
        M, N = default_tile(tv)
        assert M * N == cute.cosize(tv)


def test_huge_tv_tiles_are_refused_with_the_limit():
    tiler, tv = cute.make_layout_tv(cute.make_layout((1 << 12, 1 << 10)), cute.make_layout((1 << 4, 1 << 4)))
    with pytest.raises(LayoutError, match=f"limit is {CELL_LIMIT}"):
        R.tv_figure(tv, tuple(tiler))


def test_make_layout_tv_on_huge_sizes_is_immediate():
    t0 = time.perf_counter()
    tiler, tv = cute.make_layout_tv(cute.make_layout((1 << 20, 1 << 10)), cute.make_layout((1 << 10, 1 << 10)))
    assert time.perf_counter() - t0 < 0.5
    assert tiler == (1 << 30, 1 << 20)
    with pytest.raises(LayoutError, match="bijection"):
        cute.make_layout_tv(cute.Layout.parse("(2,2):(1,3)"), cute.Layout.parse("(2,2):(2,1)"))


def test_text_rows_past_100_stay_aligned():
    lines = R.render(R.layout_figure("(120,2):(2,1)"), "text").splitlines()
    bars = {line.index("|") for line in lines if "|" in line}
    assert len(bars) == 1


def test_wide_text_wraps_into_bands():
    txt = R.render(R.layout_figure("(2,64):(64,1)"), "text")
    assert max(len(line) for line in txt.splitlines()) <= 120
    assert "columns 0.." in txt
    cells = [c.strip() for line in txt.splitlines() if line.lstrip().startswith(("0 ", "1 ")) for c in line.split("|")[1:-1]]
    assert sorted(int(c) for c in cells) == list(range(128))
    from cutelab.render import text
    assert "columns" not in text.render(R.layout_figure("(2,64):(64,1)"), width=None)


def test_identity_layout_picture_says_why():
    with pytest.raises(LayoutError, match="basis strides"):
        R.layout_figure(cute.make_identity_layout((2, 3)))


@pytest.mark.parametrize("text", ["(300,2):(4503599627370496,1)", "(2,3):(4611686018427387904,1)",
                                  "(40,300):(-4503599627370496,1)"])
def test_huge_strides_draw_without_overflow(text):
    L = cute.Layout.parse(text)
    fig = R.layout_figure(L)
    g = fig.grids[0]
    assert g.keys.min() >= 0 and g.keys.max() < len(g.colors)
    # heat keys follow the offsets' order exactly (no float rounding, no int64 overflow)
    offs = np.array([[int(x) for x in row] for row in g.labels])
    if g.labels.size > 8192 or len(g.colors) == 16:
        order = np.argsort(offs.ravel(), kind="stable")
        assert (np.diff(g.keys.ravel()[order]) >= 0).all()
    R.render(fig, "svg")
    R.render(fig, "png")
    R.render(fig, "text")
