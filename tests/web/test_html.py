"""render/html.py: what each cell means (cell_info), the fragment and the self-contained page."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import cutelab as cute
from cutelab import int_tuple as it
from cutelab import render as R
from cutelab.render import html
from cutelab.render.figure import Figure, Grid


def _cells(frag: str) -> list[dict]:
    m = re.search(r'<script type="application/json" class="cutelab-cells">(.*?)</script>', frag, re.S)
    return json.loads(m.group(1))


@pytest.mark.parametrize("text", ["(4,4):(4,1)", "((2,3),(2,2)):((1,4),(2,12))", "(2,(2,2),3):(1,(2,4),8)", "8:2", "(3):(5)"])
def test_layout_cells_are_the_layout(text):
    L = cute.Layout.parse(text)
    info = html.cell_info(R.layout_figure(L))[0]
    rows, cols = info["rows"], info["cols"]
    assert rows * cols == cute.size(L) and info["layout"] == str(L)
    coord_labels = R.layout_figure(L, label="coord").grids[0].labels
    for r in range(rows):
        for c in range(cols):
            crd = it.idx2crd(r + rows * c, L.shape)  # the cell's index, colexicographic
            assert info["fields"]["offset"][r * cols + c] == L(crd)
            shown = (info["coord_rows"][r] if info["coord_cols"] is None
                     else "(" + info["coord_rows"][r] + "," + info["coord_cols"][c] + ")")
            assert shown == coord_labels[r, c]  # what print_layout's coordinate picture says
            if isinstance(L.shape, tuple) and len(L.shape) == 2:
                assert shown == it.tuple_str(crd)


def test_tv_and_partition_cells():
    f = R.make_tv_figure("(4,8):(8,1)", "(4,2):(2,1)")
    info = html.cell_info(f)[0]
    tiler, tv = cute.make_layout_tv(cute.Layout.parse("(4,8):(8,1)"), cute.Layout.parse("(4,2):(2,1)"))
    thr, val, _ = R.tv_arrays(tv, tuple(tiler))
    assert info["fields"]["thread"] == thr.ravel().tolist()
    assert info["fields"]["value"] == val.ravel().tolist()
    assert "block" not in info["fields"] and info["coord_rows"] is None
    b, t, v = R.tv_ownership((16, 16), "(4,2):(2,1)", "(2,4):(4,1)")
    info = html.cell_info(R.tv_partition_figure((16, 16)))[0]
    assert [info["fields"][k] for k in ("block", "thread", "value")] == [a.ravel().tolist() for a in (b, t, v)]


def test_holes_are_minus_one():
    f = R.tv_figure("(2,2):(1,4)", (2, 4))  # covers 4 of 8 cells
    info = html.cell_info(f)[0]
    thr, _, _ = R.tv_arrays(cute.Layout.parse("(2,2):(1,4)"), (2, 4))
    assert info["fields"]["thread"] == thr.ravel().tolist() and -1 in info["fields"]["thread"]


def test_explain_panels_find_their_layouts():
    f = R.explain("zipped_divide", "(8,8):(1,8)", "(2,4)")
    infos = html.cell_info(f)
    assert infos[0]["layout"] == "(8,8):(1,8)"
    assert infos[1]["layout"] == str(cute.zipped_divide(cute.Layout.parse("(8,8):(1,8)"), (2, 4)))
    assert infos[0]["legend"]["3"] == "tile 3"


def test_a_title_that_does_not_match_the_cells_gives_no_coordinates():
    # a grid titled with a layout whose offsets are not its labels: no hierarchical coordinate is guessed
    g = Grid("(2,2):(1,2)", np.zeros((2, 2), dtype=np.int64), np.array([["0", "1"], ["2", "3"]]), ["#ffffff"])
    info = html.cell_info(Figure("t", [g]))[0]
    assert "layout" not in info and info["coord_rows"] is None
    assert info["fields"]["offset"] == [0, 1, 2, 3]


def test_labels_that_are_not_numbers_stay_labels():
    f = R.coords_figure("(2,2,2):(2,1,4)")
    info = html.cell_info(f)[0]
    assert info["fields"]["label"][1] == "(0,1,0)"


def test_fragment_and_page_are_self_contained():
    f = R.layout_figure("(4,4):(4,1)")
    frag = html.fragment(f)
    assert frag.count("<svg xmlns") == 1 and "CutelabFigure.init(" in frag
    assert _cells(frag) == html.cell_info(f)
    page = html.render(f)
    assert page.startswith("<!DOCTYPE html>") and "<pre>" in page
    assert not re.search(r'(?:src|href)="(?!data:)', page)  # nothing fetched from anywhere
    bare = html.fragment(f, script=False)
    assert "<script>" not in bare and "<style>" not in bare and _cells(bare) == html.cell_info(f)
    # two fragments on one page (Jupyter) get different ids
    ids = re.findall(r'id="(cutelab-fig-[0-9a-f-]+)"', html.fragment(f) + html.fragment(f))
    assert len(set(ids)) == 2


def test_json_cannot_close_the_script_early():
    g = Grid("</script><b>x", np.zeros((1, 1), dtype=np.int64), np.array([["</script>"]]), ["#ffffff"])
    frag = html.fragment(Figure("</script>", [g]))
    body = frag.split('class="cutelab-cells">', 1)[1]
    assert body.index("</script>") == body.index("]</script>") + 1
    assert _cells(frag)[0]["fields"]["label"] == ["</script>"]


def test_jupyter_hooks():
    L = cute.Layout.parse("(2,3):(3,1)")
    assert L._repr_html_().startswith('<div class="cutelab-fig"')
    assert L._repr_svg_().startswith("<svg")
    f = R.tv_figure("(2,2):(1,2)", (2, 2))
    assert _cells(f._repr_html_())[0]["fields"]["thread"] == [0, 0, 1, 1]  # (t,v) -> t + 2v = m + 2n


def _tiled_mma():
    op = cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16))
    return cute.make_tiled_mma(op, (2, 2, 1))


def _tiled_copy():
    atom = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 4), cute.Float16)
    return cute.make_tiled_copy_tv(atom, cute.make_layout((32, 1)), cute.make_layout((1, 8)))


def test_jupyter_draws_a_tiled_mma_as_its_picture():
    mma = _tiled_mma()
    want = R.mma_figure(mma)
    frag = mma._repr_html_()
    assert frag.startswith('<div class="cutelab-fig"') and "<script>" in frag
    cells = _cells(frag)
    assert [(c["rows"], c["cols"]) for c in cells] == [g.shape for g in want.grids]  # C, A, B
    assert cells[0]["fields"]["thread"][:2] == [0, 0]
    assert mma._repr_svg_() == R.render(want, "svg")
    thr = mma.get_slice(3)  # a thread's slice draws the whole TiledMMA, as print_latex does
    assert [c["rows"] for c in _cells(thr._repr_html_())] == [32, 32, 16]


def test_jupyter_draws_a_tiled_copy_as_its_picture():
    tc = _tiled_copy()
    want = R.copy_figure(tc)
    cells = _cells(tc._repr_html_())
    assert [(c["rows"], c["cols"]) for c in cells] == [g.shape for g in want.grids]  # source, destination
    assert tc._repr_svg_() == R.render(want, "svg")


def test_jupyter_draws_a_composed_layout_as_its_offsets():
    from cutelab.swizzle import parse_composed

    C = parse_composed("S<3,4,3> o 0 o (8,64):(64,1)")
    info = _cells(C._repr_html_())[0]
    assert (info["rows"], info["cols"]) == (8, 64)
    assert info["fields"]["offset"] == [int(C((r, c))) for r in range(8) for c in range(64)]
    assert C._repr_svg_().startswith("<svg")
    assert parse_composed("S<3,4,3> o 0 o (4096,4096):(4096,1)")._repr_html_() is None  # too big: the text


def test_jupyter_falls_back_to_the_text_where_there_is_no_picture():
    from cutelab.render import notebook

    big = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16)), (64, 64, 1))
    assert big._repr_html_() is None and big._repr_svg_() is None  # over NOTEBOOK_CELLS: IPython prints it
    assert notebook.figure_of(object()) is None


def test_figure_repr_is_short():
    f = R.mma_figure(_tiled_mma())
    text = repr(f)
    assert "\n" not in text and "array" not in text and len(text) < 300
    assert text.startswith("<Figure mma 'TiledMMA MmaF16BF16Op") and "'C (M,N) = (32,16)' 32x16" in text
    assert repr(f.grids[0]) == "Grid('C (M,N) = (32,16)', 32x16, 128 colours)"


@pytest.mark.parametrize("labels, field", [
    ([["T1\nV2", "T0\nV0"]], "thread"),
    ([["B3T1\nV2", ""]], "block"),
    ([["T1\nV2", "x"]], "label"),            # one label of another kind: no thread is read
    ([["B3T1\nV2", "T1\nV2"]], "label"),     # a block on some cells only
    ([["T1\nV", "T0\nV0"]], "label"),
    ([["12", "-3"]], "offset"),
    ([["12", "3 4"]], "label"),
    ([["12\nb3", "-1\nb0"]], "bank"),
    ([["12\nb3", "T1\nV0"]], "label"),
])
def test_labels_are_read_exactly_or_not_at_all(labels, field):
    lab = np.array(labels)
    g = Grid("t", np.zeros(lab.shape, dtype=np.int64), lab, ["#ffffff"])
    info = html.cell_info(Figure("t", [g]))[0]
    assert field in info["fields"]
    if field == "block":
        assert (info["fields"]["block"], info["fields"]["thread"], info["fields"]["value"]) == ([3, -1], [1, -1], [2, -1])
    if field == "thread":
        assert (info["fields"]["thread"], info["fields"]["value"]) == ([1, 0], [2, 0])
    if field == "offset":
        assert info["fields"]["offset"] == [12, -3]
    if field == "bank":
        assert (info["fields"]["offset"], info["fields"]["bank"]) == ([12, -1], [3, 0])
    if field == "label":
        assert info["fields"]["label"] == [s.replace("\n", " ") for s in labels[0]] and "thread" not in info["fields"]


def test_overview_grids_use_their_headers():
    """A big layout drawn as every k-th row and column (headers = true indices): true index and coordinate."""
    L = cute.Layout.parse("((4,3),(2,4)):((1,16),(4,8))")  # grid 12 x 8
    rid, cid = np.array([0, 4, 8]), np.array([0, 3, 6])
    offs = np.array([[L((it.idx2crd(int(r), (4, 3)), it.idx2crd(int(c), (2, 4)))) for c in cid] for r in rid])
    g = Grid(str(L), np.zeros(offs.shape, dtype=np.int64), offs.astype(str), ["#ffffff"],
             [str(r) for r in rid], [str(c) for c in cid])
    info = html.cell_info(Figure(str(L), [g]))[0]
    assert info["layout"] == str(L) and info["index_rows"] == 12
    assert info["row_ids"] == [0, 4, 8] and info["col_ids"] == [0, 3, 6]
    assert info["coord_rows"] == ["(0,0)", "(0,1)", "(0,2)"] and info["coord_cols"] == ["(0,0)", "(1,1)", "(0,3)"]
    # a sample whose labels are not the layout's offsets there: no layout, no index, headers as coordinates
    g.labels = np.roll(offs, 1).astype(str)
    info = html.cell_info(Figure(str(L), [g]))[0]
    assert "layout" not in info and info["index_rows"] is None and info["coord_rows"] is None


def test_index_only_where_cells_are_colexicographic():
    f = R.tv_figure("(2,2):(1,2)", (2, 2))
    assert html.cell_info(f)[0]["index_rows"] == 2
    f.kind = "mma"  # e.g. a TiledMMA's B, drawn transposed: no index is claimed
    assert html.cell_info(f)[0]["index_rows"] is None
    table = html.cell_info(R.coords_figure("(2,2):(2,1)"))[0]
    assert table["style"] == "table" and table["index_rows"] is None
