"""Nested row and column headers with mode boundaries: the levels, their SVG and PNG drawing, and the
text and LaTeX outputs that keep CuTe's flat headers."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from cutelab import int_tuple as it
from cutelab import render as R
from cutelab.render.figure import header_levels, mode_boundaries
from cutelab.render.svg import nested_headers

from .svgread import NS, read


def test_levels_are_the_leaf_coordinates_colexicographically():
    for shape in [(2, 3), ((2, 2), 3), (2, (3, 2)), (4, 2, 2)]:
        n = it.product(shape)
        leaves = it.flatten_to_tuple(shape)
        lv = header_levels(shape, n)
        assert len(lv) == len(leaves)
        for i in range(n):  # the cell's coordinate in each leaf, read from the runs covering it
            crd = it.flatten_to_tuple(it.idx2crd(i, shape))
            for j, runs in enumerate(lv):
                (text,) = [t for start, span, t in runs if start <= i < start + span]
                assert text == str(crd[j])
    assert header_levels(6, 6) is None and header_levels((6,), 6) is None and header_levels((1, 6), 6) is None
    assert header_levels((2, 3), 5) is None  # a shape that is not the grid's: no nesting
    assert mode_boundaries(((2, 2), 3), 12) == [2, 4, 6, 8, 10]


def _svg_levels(svg: str) -> dict:
    root = ET.fromstring(svg)
    out = {}
    for g in root.iter(NS + "g"):
        if g.get("class") == "level":
            out[(g.get("data-axis"), int(g.get("data-depth")))] = [t.text for t in g.iter(NS + "text")]
    return out


def test_svg_draws_the_levels_and_mode_lines_of_a_hierarchical_layout():
    fig = R.layout_figure("((2,2),(2,3)):((2,12),(1,4))")
    svg = R.render(fig, "svg")
    lv = _svg_levels(svg)
    assert lv[("col", 0)] == ["0", "1"] * 3 and lv[("col", 1)] == ["0", "1", "2"]
    assert lv[("row", 0)] == ["0", "1"] * 2 and lv[("row", 1)] == ["0", "1"]
    root = ET.fromstring(svg)
    (modes,) = [p for p in root.iter(NS + "path") if p.get("class") == "modes"]
    g = read(svg)[0]
    cw = int(next(e for e in root.iter(NS + "g") if e.get("class") == "grid").get("data-cw"))
    ch = int(next(e for e in root.iter(NS + "g") if e.get("class") == "grid").get("data-ch"))
    d = modes.get("d")
    assert f"M{2 * cw} 0v{4 * ch}" in d and f"M{4 * cw} 0v{4 * ch}" in d and f"M0 {2 * ch}h{6 * cw}" in d
    # the cells themselves are unchanged
    assert g.labels[(1, 2)] == "6" and g.labels[(3, 5)] == "23"


def test_flat_layouts_and_overviews_keep_flat_headers():
    assert _svg_levels(R.render(R.layout_figure("(4,6):(6,1)"), "svg")) == {}
    big = R.layout_figure("((512,2),(2,512)):((1,512),(1024,2048))")  # an overview: sampled rows
    assert big.grids[0].row_shape is None
    assert _svg_levels(R.render(big, "svg")) == {}
    assert nested_headers(R.layout_figure("(4,6):(6,1)").grids[0]) == (None, None)


def test_rank3_columns_get_one_line_per_mode():
    lv = _svg_levels(R.render(R.layout_figure("(2,(2,2),3):(1,(2,4),8)"), "svg"))
    assert lv[("col", 0)] == ["0", "1"] * 6
    assert lv[("col", 1)] == ["0", "1"] * 3
    assert lv[("col", 2)] == ["0", "1", "2"]
    assert ("row", 0) not in lv  # rows are the flat mode 2


def test_png_has_room_for_the_levels_and_draws_the_mode_lines():
    pytest.importorskip("PIL")
    from PIL import Image

    flat = Image.open(io.BytesIO(R.render(R.layout_figure("(4,6):(6,1)"), "png")))
    nested = Image.open(io.BytesIO(R.render(R.layout_figure("((2,2),(2,3)):((2,12),(1,4))"), "png")))
    assert nested.size[1] > flat.size[1] and nested.size[0] > flat.size[0]
    # the mode lines: two more full-height dark pixel columns (and rows) than the same grid without nesting
    def full_lines(fig):
        a = np.asarray(Image.open(io.BytesIO(R.render(fig, "png"))).convert("RGB"))
        dark = a.sum(axis=2) == 0
        g = fig.grids[0]
        from cutelab.render.svg import cell_size

        cw, ch = cell_size(g)
        rows, cols = g.shape
        return int((dark.sum(axis=0) >= rows * ch).sum()), int((dark.sum(axis=1) >= cols * cw).sum())

    fig = R.layout_figure("((2,2),(2,3)):((2,12),(1,4))")
    nested_lines = full_lines(fig)
    fig.grids[0].row_shape = fig.grids[0].col_shape = None
    flat_lines = full_lines(fig)
    assert nested_lines == (flat_lines[0] + 2, flat_lines[1] + 1)  # columns at 2 and 4, the row at 2


def test_text_and_latex_keep_cutes_flat_headers():
    fig = R.layout_figure("((2,2),(2,3)):((2,12),(1,4))")
    txt = R.render(fig, "text")
    assert txt.splitlines()[1].split() == ["0", "1", "2", "3", "4", "5"]
    tex = R.render(fig, "latex")
    assert "\\begin{tikzpicture}" in tex and "23" in tex
