"""The playground's teaching aids in Chromium: presets, the value/index/coordinate toggle, nested
headers, the suggest-a-swizzle tab and the TiledCopy-by-destination tab.

Expectations are computed here with cutelab (layout evaluation, idx2crd, the analysis) and
compared with what the page shows.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

import cutelab as cute
from cutelab import analysis as A
from cutelab import int_tuple as it
from cutelab.web import TABS

from .test_browser import goto, grid_cells, renders, type_into, wait_ok

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def choose_preset(page, index: int) -> None:
    n = renders(page)
    page.select_option("#presets", str(index))
    wait_ok(page, n)


def field_values(page) -> dict[str, str]:
    return page.evaluate("""() => { const o = {}; document.querySelectorAll('#form [id^=f-]').forEach(
        el => { o[el.name] = el.value; }); return o; }""")


def test_every_tab_has_presets_that_fill_the_form_and_draw(page, server):
    goto(page, server)
    for tab_id, t in TABS.items():
        assert t.presets, f"tab {tab_id} has no presets"
        if page.evaluate("document.body.dataset.tab") != tab_id:
            n = renders(page)
            page.click(f"#tab-{tab_id}")
            wait_ok(page, n)
        names = page.eval_on_selector_all("#presets option", "os => os.map(o => o.textContent)")
        assert names[1:] == [name for name, _ in t.presets]
        last = len(t.presets) - 1
        choose_preset(page, last)
        want = {f.name: t.presets[last][1].get(f.name, f.default) for f in t.fields}
        got = field_values(page)
        assert {k: got[k] for k in want} == want
        q = parse_qs(urlsplit(page.url).query, keep_blank_values=True)
        for k, v in want.items():
            if v and k in q:
                assert q[k] == [v]


def test_editing_a_field_leaves_the_preset_menu(page, server):
    goto(page, server, "?tab=layout")
    choose_preset(page, 1)
    assert page.input_value("#f-layout") == "(4,8):(8,1)"
    assert grid_cells(page)["cells"]["1,0"] == "8"
    type_into(page, "layout", "(4,8):(1,4)")
    assert page.input_value("#presets") == ""


def _labels(page, panel: int = 0) -> dict:
    return grid_cells(page, panel=panel)["cells"]


def _toggle(page, mode: str) -> None:
    page.select_option("#picture .cutelab-show", mode)
    page.wait_for_function("m => document.querySelector('#picture .cutelab-fig').dataset.show === m", arg=mode)


def test_display_toggle_value_index_coordinate_on_a_layout(page, server):
    text = "((2,2),(2,3)):((2,12),(1,4))"
    L = cute.Layout.parse(text)
    goto(page, server, "?tab=layout&layout=" + text.replace("(", "%28").replace(")", "%29"))
    rows, cols = 4, 6
    values = _labels(page)
    assert values["1,2"] == str(L(1 + 4 * 2))
    _toggle(page, "index")
    idx = _labels(page)
    assert all(idx[f"{r},{c}"] == str(r + rows * c) for r in range(rows) for c in range(cols))
    _toggle(page, "coord")
    crd = _labels(page)
    for r in range(rows):
        for c in range(cols):
            want = "(" + it.tuple_str(it.idx2crd(r, (2, 2))) + "," + it.tuple_str(it.idx2crd(c, (2, 3))) + ")"
            assert crd[f"{r},{c}"] == want
    assert "show=coord" in page.url
    # the mode stays across an edit, and a link restores it
    type_into(page, "layout", "(4,6):(6,1)")
    assert page.evaluate("document.querySelector('#picture .cutelab-fig').dataset.show") == "coord"
    assert _labels(page)["3,5"] == "(3,5)"
    _toggle(page, "value")
    assert _labels(page)["3,5"] == str(3 * 6 + 5)
    goto(page, server, "?tab=layout&layout=(4,6):(6,1)&show=index")
    assert _labels(page)["3,5"] == str(3 + 4 * 5)


def test_display_toggle_on_a_tv_panel_and_on_mma_panels(page, server):
    goto(page, server, "?tab=tv")
    thr = _labels(page)
    assert thr["0,0"].startswith("T")
    _toggle(page, "index")
    g = grid_cells(page)
    assert all(g["cells"][f"{r},{c}"] == str(r + g["rows"] * c) for r in range(g["rows"]) for c in range(g["cols"]))
    _toggle(page, "coord")
    assert _labels(page)["2,3"] == "(2,3)"
    # a TiledMMA: its panels have no colexicographic index (B is drawn transposed), so "index" keeps
    # their values and says how many it kept; "coordinate" gives each cell's (row, column) in its panel
    n = renders(page)
    page.click("#tab-mma")
    wait_ok(page, n)
    assert page.evaluate("document.querySelector('#picture .cutelab-fig').dataset.show") == "coord"
    assert _labels(page, 0)["3,5"] == "(3,5)"
    _toggle(page, "value")
    before = [_labels(page, i) for i in range(3)]
    _toggle(page, "index")
    kept = int(page.evaluate("+document.querySelector('#picture .cutelab-fig').dataset.showKept"))
    assert [_labels(page, i) for i in range(3)] == before
    assert kept == sum(len(b) for b in before)
    _toggle(page, "value")
    assert [_labels(page, i) for i in range(3)] == before


def test_nested_column_headers_and_mode_lines_in_the_page(page, server):
    goto(page, server, "?tab=layout")  # ((2,2),(2,3)): rows (2,2), columns (2,3)
    info = page.evaluate("""() => {
        const svg = document.querySelector('#picture svg');
        const lv = Array.from(svg.querySelectorAll('g.indices g.level')).map(g => ({
            axis: g.dataset.axis, depth: +g.dataset.depth,
            texts: Array.from(g.querySelectorAll('text')).map(t => t.textContent)}));
        const m = svg.querySelector('g.grid path.modes');
        return {levels: lv, modes: m ? m.getAttribute('d') : null};
    }""")
    cols = [lv for lv in info["levels"] if lv["axis"] == "col"]
    rows = [lv for lv in info["levels"] if lv["axis"] == "row"]
    assert [lv["texts"] for lv in sorted(cols, key=lambda x: x["depth"])] == [["0", "1"] * 3, ["0", "1", "2"]]
    assert [lv["texts"] for lv in sorted(rows, key=lambda x: x["depth"])] == [["0", "1"] * 2, ["0", "1"]]
    assert info["modes"]  # lines at the mode boundaries


def test_suggest_a_swizzle_tab(page, server):
    goto(page, server, "?tab=suggest")
    title = page.text_content("#picture svg text.figtitle")
    assert "S<3,3,3> takes 448 bank conflicts to 0" in title
    n = renders(page)
    page.select_option("#f-ldmatrix", "")
    wait_ok(page, n)
    assert page.is_visible("#f-tv") and not page.is_visible("#f-trans")
    type_into(page, "tv", "(32,1):(1,1)")
    type_into(page, "layout", "(32,48):(48,1)")
    n = renders(page)
    page.select_option("#f-dtype", "f32")
    wait_ok(page, n)
    base = A.analyze_tv("(32,1):(1,1)", "(32,48):(48,1)", "f32", "shared").totals()
    title = page.text_content("#picture svg text.figtitle")
    assert f"{base['conflicts']} bank conflicts" in title
    # the last preset is the case no swizzle helps
    choose_preset(page, len(TABS["suggest"].presets) - 1)
    assert "none found" in page.text_content("#picture svg text.figtitle")


def test_tiled_copy_by_destination_tab(page, server):
    goto(page, server, "?tab=copy_dst")
    mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16)))
    assert page.input_value("#f-dst") == str(cute.Layout.parse(page.input_value("#f-dst")))
    # the default destination is mma.m16n8k16's A fragment: the right panel is that layout over (16,16)
    want = A.tv_offsets(mma.tv_layout_A_tiled, "(256):(1)")
    dst = grid_cells(page, panel=1)["cells"]
    T, V = want.shape
    for t in range(T):
        for v in range(V):
            e = int(want[t, v])
            assert dst[f"{e % 16},{e // 16}"] == f"T{t}\nV{v}"
    notes = page.text_content("#picture svg g.notes")
    assert "the registers are the given layout" in notes
    type_into(page, "smem", "(16,16):(16,1)")
    notes = page.text_content("#picture svg g.notes")
    assert "4 bank conflicts" in notes and "suggested swizzle: S<1,3,3>" in notes
    n = renders(page)
    page.fill("#f-dst", "((4,8),(2,2,2)):((32,1),(16,8,129))")  # maps outside the 16x16 tile
    page.wait_for_function("document.body.dataset.state === 'error'")
    assert page.evaluate("document.getElementById('f-dst').classList.contains('bad')")


def test_html_file_opens_with_the_cells_toggle_of_the_command_line(page, tmp_path):
    from cutelab.cli import main

    out = tmp_path / "c.html"
    assert main(["show", "((2,2),(2,3)):((2,12),(1,4))", "--cells", "index", "-o", str(out)]) == 0
    page.goto(out.as_uri())
    page.wait_for_function("document.querySelector('.cutelab-fig') && document.querySelector('.cutelab-fig').dataset.ready === '1'")
    assert page.input_value(".cutelab-show") == "index"
    cells = grid_cells(page, root=".cutelab-fig")["cells"]
    assert cells["3,5"] == str(3 + 4 * 5)
    page.select_option(".cutelab-show", "value")
    assert grid_cells(page, root=".cutelab-fig")["cells"]["3,5"] == "23"
