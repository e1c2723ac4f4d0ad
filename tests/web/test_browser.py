"""The playground and the interactive HTML figures, driven in a real headless Chromium.

Every expectation is computed here with cutelab itself (layout evaluation, make_layout_tv,
the partitions) and compared with what the page shows: the cells read back from the SVG, the
tooltip of a hovered cell, the cells lit by a click, the error text of a malformed layout.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest

import cutelab as cute
from cutelab import int_tuple as it
from cutelab import render as R
from cutelab.errors import LayoutError
from cutelab.web import TABS, compute

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


# --------------------------------------------------------------------------- helpers

def wait_ok(page, before: int = 0) -> None:
    page.wait_for_function(
        "n => (+(document.body.dataset.renders || 0) > n && document.body.dataset.state === 'ok')"
        " || document.body.dataset.state === 'error'", arg=before, timeout=15000)
    assert page.evaluate("document.body.dataset.state") == "ok", page.inner_text("#error")


def renders(page) -> int:
    return int(page.evaluate("+(document.body.dataset.renders || 0)"))


def goto(page, server: str, query: str = "") -> None:
    page.goto(server + query)
    wait_ok(page)


def type_into(page, name: str, text: str) -> None:
    n = renders(page)
    page.fill(f"#f-{name}", text)
    wait_ok(page, n)


def grid_cells(page, root: str = "#picture", panel: int = 0) -> dict:
    """Panel ``panel`` of the figure as drawn: shape, cell size, and label text per (r, c)."""
    return page.evaluate(
        """([root, i]) => {
            const g = document.querySelector(root + ' svg').querySelectorAll('g.grid')[i];
            const cw = +g.dataset.cw, ch = +g.dataset.ch, cells = {};
            g.querySelectorAll('g.labels > text').forEach(t => {
                const r = Math.floor(+t.getAttribute('y') / ch), c = Math.floor(+t.getAttribute('x') / cw);
                cells[r + ',' + c] = Array.from(t.childNodes).map(n => n.textContent).join('\\n');
            });
            return {rows: +g.dataset.rows, cols: +g.dataset.cols, cells: cells};
        }""", [root, panel])


def cell_point(page, r: int, c: int, root: str = "#picture", panel: int = 0) -> tuple[float, float]:
    """Screen point of the centre of cell (r, c), scrolled into view first."""
    return tuple(page.evaluate(
        """([root, i, r, c]) => {
            const svg = document.querySelector(root + ' svg');
            const g = svg.querySelectorAll('g.grid')[i];
            const probe = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
            probe.setAttribute('x', c * g.dataset.cw); probe.setAttribute('y', r * g.dataset.ch);
            probe.setAttribute('width', g.dataset.cw); probe.setAttribute('height', g.dataset.ch);
            probe.setAttribute('fill', 'none');
            g.appendChild(probe);
            probe.scrollIntoView({block: 'center', inline: 'center'});
            probe.remove();
            const p = svg.createSVGPoint();
            p.x = (c + 0.5) * +g.dataset.cw; p.y = (r + 0.5) * +g.dataset.ch;
            const q = p.matrixTransform(g.getScreenCTM());
            return [q.x, q.y];
        }""", [root, panel, r, c]))


def hover(page, r: int, c: int, root: str = "#picture", panel: int = 0) -> dict[str, str]:
    x, y = cell_point(page, r, c, root, panel)
    page.mouse.move(x, y)
    page.wait_for_function("() => { const t = document.querySelector('.cutelab-tip'); return t && t.style.display === 'block'; }")
    txt = page.inner_text(".cutelab-tip")
    return dict(re.split(r"\s+", line.strip(), maxsplit=1) for line in txt.splitlines())


def click(page, r: int, c: int, root: str = "#picture", panel: int = 0) -> None:
    x, y = cell_point(page, r, c, root, panel)
    page.mouse.click(x, y)


def lit_cells(page, root: str = "#picture", panel: int = 0) -> set[tuple[int, int]]:
    """Cells covered by the highlight path of a panel (one 'M x y h w v h h -w z' per cell)."""
    d = page.evaluate(
        """([root, i]) => {
            const g = document.querySelector(root + ' svg').querySelectorAll('g.grid')[i];
            const p = g.querySelector('path.cutelab-hl');
            return p ? [p.getAttribute('d'), +g.dataset.cw, +g.dataset.ch] : ['', 1, 1];
        }""", [root, panel])
    path, cw, ch = d
    return {(int(float(y)) // ch, int(float(x)) // cw) for x, y in re.findall(r"M([\d.]+) ([\d.]+)", path)}


# --------------------------------------------------------------------------- the playground

def test_every_tab_loads_and_draws_its_figure(page, server):
    page.goto(server)
    page.wait_for_function("document.querySelectorAll('#tabs button').length > 0")
    ids = page.eval_on_selector_all("#tabs button", "bs => bs.map(b => b.dataset.tab)")
    assert ids == list(TABS)
    wait_ok(page)
    for tab_id in TABS:
        if tab_id != ids[0]:  # the first tab is open already
            n = renders(page)
            page.click(f"#tab-{tab_id}")
            wait_ok(page, n)
        fig = compute(tab_id, {})
        assert page.evaluate("document.body.dataset.tab") == tab_id
        assert page.text_content("#picture svg text.figtitle") == fig.title
        assert page.locator("#picture svg g.grid").count() == len(fig.grids)
        shapes = page.eval_on_selector_all("#picture svg g.grid", "gs => gs.map(g => [+g.dataset.rows, +g.dataset.cols])")
        assert shapes == [list(g.shape) for g in fig.grids]
        assert parse_qs(urlsplit(page.url).query)["tab"] == [tab_id]


def test_typed_layout_is_drawn_cell_for_cell(page, server):
    goto(page, server, "?tab=layout")
    text = "((2,3),(2,2)):((1,4),(2,12))"
    type_into(page, "layout", text)
    L = cute.Layout.parse(text)
    drawn = grid_cells(page)
    assert (drawn["rows"], drawn["cols"]) == (6, 4)
    want = {f"{m},{n}": str(L((it.idx2crd(m, (2, 3)), it.idx2crd(n, (2, 2))))) for m in range(6) for n in range(4)}
    assert drawn["cells"] == want
    assert page.text_content("#picture svg text.figtitle") == str(L)


def test_hover_shows_index_coordinate_offset(page, server):
    goto(page, server, "?tab=layout&layout=" + "((2,3),(2,2)):((1,4),(2,12))".replace(",", "%2C"))
    L = cute.Layout.parse("((2,3),(2,2)):((1,4),(2,12))")
    for r, c in [(0, 0), (5, 3), (3, 2)]:
        tip = hover(page, r, c)
        crd = (it.idx2crd(r, (2, 3)), it.idx2crd(c, (2, 2)))
        assert tip["index"] == str(r + 6 * c)
        assert tip["coord"] == it.tuple_str(crd)
        assert tip["offset"] == str(L(crd))


def test_click_a_thread_lights_all_its_values(page, server):
    thr, val = "(4,8):(8,1)", "(4,2):(2,1)"
    goto(page, server, f"?tab=tv&thr={thr}&val={val}")
    tiler, tv = cute.make_layout_tv(cute.Layout.parse(thr), cute.Layout.parse(val))
    owner, value, _ = R.tv_arrays(tv, tuple(tiler))
    r, c = 5, 3
    tip = hover(page, r, c)
    t = int(owner[r, c])
    assert tip["thread"] == str(t) and tip["value"] == str(int(value[r, c]))
    click(page, r, c)
    page.wait_for_function(f"document.querySelector('#picture .cutelab-fig').dataset.thread === '{t}'")
    want = {(int(a), int(b)) for a, b in zip(*np.nonzero(owner == t))}
    assert len(want) == cute.size(cute.Layout.parse(val))
    assert lit_cells(page) == want
    assert page.evaluate("document.querySelector('#picture .cutelab-fig').dataset.highlighted") == str(len(want))
    click(page, r, c)  # the same thread again: cleared
    page.wait_for_function("document.querySelector('#picture .cutelab-fig').dataset.highlighted === '0'")
    assert lit_cells(page) == set()


def test_partition_click_lights_one_thread_of_one_block(page, server):
    goto(page, server, "?tab=partition_tv&tensor=16,16")
    blk, thr, val = R.tv_ownership((16, 16), "(4,2):(2,1)", "(2,4):(4,1)")
    r, c = 9, 13
    tip = hover(page, r, c)
    assert (tip["block"], tip["thread"], tip["value"]) == tuple(str(int(a[r, c])) for a in (blk, thr, val))
    click(page, r, c)
    want = {(int(a), int(b)) for a, b in zip(*np.nonzero((thr == thr[r, c]) & (blk == blk[r, c])))}
    page.wait_for_function(f"document.querySelector('#picture .cutelab-fig').dataset.highlighted === '{len(want)}'")
    assert lit_cells(page) == want


def test_shareable_url_restores_the_state(page, server, browser):
    goto(page, server, "?tab=divide")
    page.select_option("#f-op", "logical_divide")
    wait_ok(page)
    type_into(page, "A", "(8,4):(4,1)")
    type_into(page, "tiler", "<2:1,2:1>")
    url = page.url
    q = parse_qs(urlsplit(url).query)
    assert q["tab"] == ["divide"] and q["op"] == ["logical_divide"] and q["A"] == ["(8,4):(4,1)"]
    title = page.text_content("#picture svg text.figtitle")
    other = browser.new_page()
    try:
        other.goto(url)
        wait_ok(other)
        assert other.input_value("#f-A") == "(8,4):(4,1)"
        assert other.input_value("#f-tiler") == "<2:1,2:1>"
        assert other.input_value("#f-op") == "logical_divide"
        assert other.text_content("#picture svg text.figtitle") == title
        assert other.get_attribute("#tab-divide", "aria-selected") == "true"
    finally:
        other.close()


@pytest.mark.parametrize("bad", ["(4,4):(4,1", "(4,4):(4,1,2)", "(4,x):(1,4)"])
def test_malformed_layout_shows_the_layout_error(page, server, bad):
    goto(page, server, "?tab=layout")
    good_title = page.text_content("#picture svg text.figtitle")
    page.fill("#f-layout", bad)
    page.wait_for_function("document.body.dataset.state === 'error'")
    with pytest.raises(LayoutError) as e:
        compute("layout", {"layout": bad})
    assert page.inner_text("#error") == str(e.value)
    assert page.is_visible("#error")
    # the last good picture stays, dimmed, until the input parses again
    assert page.text_content("#picture svg text.figtitle") == good_title
    assert "stale" in page.get_attribute("#picture", "class")
    type_into(page, "layout", "(4,4):(4,1)")
    assert not page.is_visible("#error")
    assert page.text_content("#picture svg text.figtitle") == "(4,4):(4,1)"


def test_bad_keystroke_marks_its_field_and_leaves_the_picture_in_place(page, server):
    goto(page, server, "?tab=composition")
    top = page.eval_on_selector("#picture", "e => e.getBoundingClientRect().top")
    for bad in ["(4,2,2):(2,1", "(4,2,2):(2,", "(4,2,2):(2"]:  # keystroke after keystroke
        page.fill("#f-B", bad)
        page.wait_for_function("document.body.dataset.state === 'error'")
        assert page.get_attribute("#f-B", "aria-invalid") == "true" and "bad" in page.get_attribute("#f-B", "class")
        assert page.get_attribute("#f-A", "aria-invalid") is None
        assert page.locator("#error").count() == 1 and page.is_visible("#error")
        assert page.eval_on_selector("#error", "e => e.getBoundingClientRect().height") <= 24  # one line
        assert page.eval_on_selector("#picture", "e => e.getBoundingClientRect().top") == top
    with pytest.raises(LayoutError) as e:
        compute("composition", {"B": "(4,2,2):(2"})
    assert page.get_attribute("#error", "title") == str(e.value)  # the whole message on hover
    page.fill("#f-A", "(4,x):(4,1)")  # the other field: the mark moves
    page.wait_for_function("document.querySelector('#f-A').getAttribute('aria-invalid') === 'true'")
    assert page.get_attribute("#f-B", "aria-invalid") is None
    page.fill("#f-A", "(4,4):(4,1)")
    type_into(page, "B", "(4,2,2):(2,1,8)")
    assert page.is_hidden("#error") and page.locator("#form .bad").count() == 0
    assert page.eval_on_selector("#picture", "e => e.getBoundingClientRect().top") == top


def test_fields_are_wide_enough_for_their_defaults(page, server):
    goto(page, server, "?tab=tv_layout")
    for tab_id in TABS:
        n = renders(page)
        page.click(f"#tab-{tab_id}")
        if tab_id != "tv_layout":
            wait_ok(page, n)
        cut = page.eval_on_selector_all(
            "#form input", "es => es.filter(e => e.offsetParent && e.scrollWidth > e.clientWidth).map(e => e.id)")
        assert cut == [], tab_id
    page.click("#tab-tv_layout")
    assert page.input_value("#f-tv") == "((2,2),(2,3)):((2,12),(1,4))"
    grow = page.eval_on_selector("#f-tv", "e => e.clientWidth")
    page.fill("#f-tv", "((2,2),(2,3)):((2,12),(1,4))" + " " * 10)  # it grows as one types
    assert page.eval_on_selector("#f-tv", "e => e.clientWidth") > grow


def test_zoom_and_pan_a_128x128_tile(page, server):
    goto(page, server, "?tab=tv&thr=(32,4):(4,1)&val=(4,32):(32,1)")
    assert page.eval_on_selector("#picture svg g.grid", "g => [+g.dataset.rows, +g.dataset.cols]") == [128, 128]
    fig = "#picture .cutelab-fig"
    fit = float(page.get_attribute(fig, "data-fit"))
    assert fit < 1 and page.get_attribute(fig, "data-zoom") == f"{fit:.3f}"
    x, y = cell_point(page, 64, 64)
    page.mouse.move(x, y)
    page.mouse.wheel(0, -600)
    page.wait_for_function(f"+document.querySelector('{fig}').dataset.zoom > 1.5 * {fit}")
    vb0 = page.get_attribute("#picture svg", "viewBox")
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x - 120, y - 80, steps=4)
    page.mouse.up()
    assert page.get_attribute("#picture svg", "viewBox") != vb0
    # still answering hovers with the right cell after zoom and pan
    tiler, tv = cute.make_layout_tv(cute.Layout.parse("(32,4):(4,1)"), cute.Layout.parse("(4,32):(32,1)"))
    owner, value, _ = R.tv_arrays(tv, tuple(tiler))
    tip = hover(page, 70, 61)
    assert (tip["thread"], tip["value"]) == (str(int(owner[70, 61])), str(int(value[70, 61])))
    page.dblclick("#picture svg")  # back to the whole picture
    page.wait_for_function(f"document.querySelector('{fig}').dataset.zoom === '{fit:.3f}'")


def _view(page) -> dict:
    """The figure's view: zoom, fit, the svg's box on screen, its viewBox, the picture's natural size."""
    return page.evaluate("""() => {
        const root = document.querySelector('#picture .cutelab-fig'), svg = root.querySelector('svg');
        const r = svg.getBoundingClientRect(), vb = svg.getAttribute('viewBox').split(' ').map(Number);
        const grid = svg.querySelector('g.grid').getBoundingClientRect();
        const legend = svg.querySelector('g.legend');
        return {zoom: +root.dataset.zoom, fit: +root.dataset.fit, left: r.left, top: r.top, width: r.width,
                height: r.height, right: r.right, bottom: r.bottom, vb: vb, natural: root.cutelab.natural,
                legendBottom: legend ? legend.getBoundingClientRect().bottom : null, gridRight: grid.right,
                innerWidth: innerWidth, innerHeight: innerHeight};
    }""")


def _picture_point(page, sx: float, sy: float) -> tuple[float, float]:
    """The picture's own coordinates under the screen point (sx, sy)."""
    return tuple(page.evaluate("""([x, y]) => {
        const svg = document.querySelector('#picture svg'), p = svg.createSVGPoint();
        p.x = x; p.y = y;
        const q = p.matrixTransform(svg.getScreenCTM().inverse());
        return [q.x, q.y];
    }""", [sx, sy]))


@pytest.mark.parametrize("query", ["?tab=tv&thr=(32,8):(8,1)&val=(4,8):(8,1)", "?tab=mma&atoms=2x2x1",
                                   "?tab=partition_tiled", "?tab=swizzle&atom=K_SW128"])
def test_big_pictures_open_whole(page, server, query):
    goto(page, server, query)
    v = _view(page)
    W, H = v["natural"]
    assert v["fit"] == pytest.approx(min(1, v["width"] / W, v["height"] / H), abs=2e-3)
    assert v["zoom"] == v["fit"] and v["vb"] == pytest.approx([0, 0, W, H], abs=0.01)
    assert v["right"] <= v["innerWidth"] and v["bottom"] <= v["innerHeight"]  # all of it on screen
    if v["legendBottom"] is not None:
        assert v["legendBottom"] <= v["bottom"] + 0.5  # the bank legend is not cut off
    if "thr=(32,8)" in query:  # 2618 x 4319 px: shown at a fifth of its size
        assert v["fit"] < 0.25


def test_small_picture_keeps_its_natural_size(page, server):
    goto(page, server, "?tab=tv_layout")  # the 4x6 seed
    v = _view(page)
    W, H = v["natural"]
    assert v["zoom"] == v["fit"] == 1
    assert (v["width"], v["height"]) == pytest.approx((W, H), abs=0.01)
    box = page.eval_on_selector("#picture .cutelab-pic", "e => e.getBoundingClientRect().width")
    assert box <= W + 4  # the frame hugs the picture, it does not fill the panel
    page.click("#picture .cutelab-zoom-out")  # below natural size is below its fit: nothing to do
    assert _view(page)["zoom"] == 1


def test_wheel_zooms_about_the_pointer_and_buttons_about_the_view_centre(page, server):
    goto(page, server, "?tab=tv&thr=(32,8):(8,1)&val=(4,8):(8,1)")
    fig = "#picture .cutelab-fig"
    v = _view(page)
    sx, sy = round(v["left"] + 0.3 * v["width"]), round(v["top"] + 0.6 * v["height"])  # the mouse is at whole pixels
    before = _picture_point(page, sx, sy)
    page.mouse.move(sx, sy)
    page.mouse.wheel(0, -400)
    page.wait_for_function(f"+document.querySelector('{fig}').dataset.zoom > {v['fit']} * 1.5")
    assert _picture_point(page, sx, sy) == pytest.approx(before, abs=0.5)  # the point under the pointer stays
    # drag pans: the picture follows the pointer
    p0 = _picture_point(page, sx, sy)
    page.mouse.down()
    page.mouse.move(sx + 100, sy + 50, steps=5)
    page.mouse.up()
    assert _picture_point(page, sx + 100, sy + 50) == pytest.approx(p0, abs=0.5)
    # "+" and "-" keep the centre of what is visible, at any zoom, natural size included
    for button in ("zoom-in", "zoom-out", "zoom-out"):
        v = _view(page)
        cx, cy = v["left"] + v["width"] / 2, v["top"] + v["height"] / 2
        c0, z0 = _picture_point(page, cx, cy), v["zoom"]
        page.click(f"#picture .cutelab-{button}")
        v = _view(page)
        assert v["zoom"] == pytest.approx(z0 * (1.5 if button == "zoom-in" else 1 / 1.5), abs=2e-3)
        assert _picture_point(page, v["left"] + v["width"] / 2, v["top"] + v["height"] / 2) == pytest.approx(c0, abs=1)
    page.click("#picture .cutelab-natural")
    assert _view(page)["zoom"] == 1
    page.click("#picture .cutelab-zoom-out")
    assert _view(page)["zoom"] == pytest.approx(1 / 1.5, abs=2e-3)  # below 1
    page.click("#picture .cutelab-reset")
    v = _view(page)
    assert v["zoom"] == v["fit"] and v["vb"][:2] == [0, 0]


def test_layout_past_the_cell_limit_is_drawn_as_an_overview(page, server):
    text = "(8192,8192):(8192,1)"
    goto(page, server, "?tab=layout&layout=" + text)
    L = cute.Layout.parse(text)
    assert page.eval_on_selector("#picture svg g.grid", "g => [+g.dataset.rows, +g.dataset.cols]") == [256, 256]
    assert "overview: the layout's grid is 8192 x 8192 cells" in page.text_content("#picture svg g.notes")
    assert page.is_hidden("#error")
    v = _view(page)
    assert v["zoom"] == v["fit"] and v["right"] <= v["innerWidth"] and v["bottom"] <= v["innerHeight"]
    for r, c in [(0, 0), (3, 200), (255, 17)]:  # every 32nd row and column, with its real index
        tip = hover(page, r, c)
        assert tip["coord"] == f"({32 * r},{32 * c})" and tip["offset"] == str(L((32 * r, 32 * c)))


@pytest.mark.parametrize("tv", ["((2,2),(2,3)):((2,12),(1,4))", "(128,64):(1,128)"])
def test_blank_tile_is_the_most_square(page, server, tv):
    goto(page, server, "?tab=tv_layout&tile=&tv=" + tv)
    M, N = R.default_tile(cute.Layout.parse(tv))
    assert page.eval_on_selector("#picture svg g.grid", "g => [+g.dataset.rows, +g.dataset.cols]") == [M, N]
    assert abs(np.log(M / N)) <= np.log(2)  # (4,6) and (128,64), not a 1x24 or 1x8192 strip
    assert _view(page)["natural"][0] < 8000


def test_slice_is_outlined(page, server):
    text = "((2,2),(2,3)):((2,12),(1,4))"
    goto(page, server, "?tab=layout&slice=(1,_)&layout=" + text)
    L = cute.Layout.parse(text)
    notes = page.text_content("#picture svg g.notes")
    assert f"layout[(1,None)] = {L[(1, None)]}" in notes and "the 6 cells it keeps" in notes
    d = page.get_attribute("#picture svg g.grid path.borders", "d")
    cw, ch = page.eval_on_selector("#picture svg g.grid", "g => [+g.dataset.cw, +g.dataset.ch]")
    assert f"M0 {ch}h{6 * cw}" in d and f"M0 {2 * ch}h{6 * cw}" in d  # above and below row 1
    page.fill("#f-slice", "(1,_,3)")
    page.wait_for_function("document.body.dataset.state === 'error'")
    assert page.get_attribute("#f-slice", "aria-invalid") == "true"


def test_api_errors_reach_the_page_for_every_tab_input(page, server):
    page.goto(server + "?tab=complement&A=(2,3):(2,4)&M=abc")
    page.wait_for_function("document.body.dataset.state === 'error'")
    assert page.inner_text("#error") == "cotarget M must be an integer, got 'abc'"


# --------------------------------------------------------------------------- files and Jupyter

def _offline(page) -> list[str]:
    asked: list[str] = []

    def deny(route):
        asked.append(route.request.url)
        route.abort()

    page.route(re.compile(r"^(?!file:|data:|about:).*"), deny)
    return asked


def test_cli_html_file_is_interactive_offline(page, tmp_path):
    from cutelab.cli import main

    out = tmp_path / "tv.html"
    assert main(["tv", "(4,8):(8,1)", "(4,2):(2,1)", "-o", str(out)]) == 0
    asked = _offline(page)
    page.goto(out.as_uri())
    page.wait_for_function("document.querySelector('.cutelab-fig') && document.querySelector('.cutelab-fig').dataset.ready === '1'")
    root = ".cutelab-fig"
    tiler, tv = cute.make_layout_tv(cute.Layout.parse("(4,8):(8,1)"), cute.Layout.parse("(4,2):(2,1)"))
    owner, value, _ = R.tv_arrays(tv, tuple(tiler))
    tip = hover(page, 2, 7, root=root)
    assert (tip["thread"], tip["value"]) == (str(int(owner[2, 7])), str(int(value[2, 7])))
    click(page, 2, 7, root=root)
    want = {(int(a), int(b)) for a, b in zip(*np.nonzero(owner == owner[2, 7]))}
    page.wait_for_function(f"document.querySelector('{root}').dataset.highlighted === '{len(want)}'")
    assert lit_cells(page, root=root) == want
    assert asked == []


def test_jupyter_html_repr_is_interactive(page):
    L = cute.Layout.parse("(4,(2,3)):(6,(3,1))")
    frag = L._repr_html_()
    asked = _offline(page)
    page.set_content(f"<!DOCTYPE html><html><body><p>Out[1]:</p>{frag}</body></html>")
    page.wait_for_function("document.querySelector('.cutelab-fig').dataset.ready === '1'")
    tip = hover(page, 3, 4, root=".cutelab-fig")
    crd = (3, it.idx2crd(4, (2, 3)))
    assert tip["coord"] == it.tuple_str(crd) == "(3,(0,2))"
    assert tip["offset"] == str(L(crd))
    assert asked == []


def test_jupyter_outputs_with_the_same_id_both_work(page):
    """After a kernel restart an id can repeat in one notebook page: each figure still wires itself."""
    a = cute.Layout.parse("(2,2):(1,2)")._repr_html_()
    b = cute.Layout.parse("(3,2):(2,1)")._repr_html_()
    uid = re.search(r'id="([^"]+)"', a).group(1)
    b = re.sub(r'id="[^"]+"', f'id="{uid}"', b, count=1).replace(re.search(r'getElementById\(("[^"]+")\)', b).group(1), f'"{uid}"')
    page.set_content(f"<!DOCTYPE html><html><body>{a}<hr>{b}</body></html>")
    page.wait_for_function("Array.from(document.querySelectorAll('.cutelab-fig')).every(f => f.dataset.ready === '1')")
    assert page.locator(".cutelab-fig").count() == 2
    tip = hover(page, 2, 1, root="body > div:nth-of-type(2)")
    assert tip["offset"] == str(cute.Layout.parse("(3,2):(2,1)")((2, 1)))


def test_back_button_returns_to_the_previous_tab(page, server):
    goto(page, server, "?tab=layout&layout=(4,2):(2,1)")
    n = renders(page)
    page.click("#tab-composition")
    wait_ok(page, n)
    assert page.evaluate("document.body.dataset.tab") == "composition"
    n = renders(page)
    page.go_back()
    wait_ok(page, n)
    assert page.evaluate("document.body.dataset.tab") == "layout"
    assert page.input_value("#f-layout") == "(4,2):(2,1)"
    assert page.text_content("#picture svg text.figtitle") == "(4,2):(2,1)"


def test_coordinate_labels_choice(page, server):
    goto(page, server, "?tab=layout&layout=(2,(2,2)):(4,(1,2))")
    n = renders(page)
    page.select_option("#f-label", "coord")
    wait_ok(page, n)
    drawn = grid_cells(page)
    want = R.layout_figure("(2,(2,2)):(4,(1,2))", label="coord").grids[0].labels
    assert drawn["cells"] == {f"{r},{c}": want[r, c] for r in range(2) for c in range(4)}
    assert parse_qs(urlsplit(page.url).query)["label"] == ["coord"]


def test_the_clicked_thread_is_part_of_the_link(page, server, browser):
    goto(page, server, "?tab=partition_tv&tensor=16,16")
    blk, thr, _ = R.tv_ownership((16, 16), "(4,2):(2,1)", "(2,4):(4,1)")
    click(page, 9, 13)
    page.wait_for_function("new URLSearchParams(location.search).get('thread') !== null")
    q = parse_qs(urlsplit(page.url).query)
    assert (q["thread"], q["block"]) == ([str(int(thr[9, 13]))], [str(int(blk[9, 13]))])
    want = int(((thr == thr[9, 13]) & (blk == blk[9, 13])).sum())
    other = browser.new_page()
    try:
        other.goto(page.url)
        wait_ok(other)
        assert other.evaluate("document.querySelector('#picture .cutelab-fig').dataset.highlighted") == str(want)
        # typing keeps the selection while the picture still has that thread
        type_into(other, "tensor", "8,32")
        b2, t2, _ = R.tv_ownership((8, 32), "(4,2):(2,1)", "(2,4):(4,1)")
        want2 = int(((t2 == thr[9, 13]) & (b2 == blk[9, 13])).sum())
        assert other.evaluate("document.querySelector('#picture .cutelab-fig').dataset.highlighted") == str(want2)
    finally:
        other.close()
    page.keyboard.press("Escape")  # the figure has focus after the click
    page.wait_for_function("new URLSearchParams(location.search).get('thread') === null")


def test_coordinate_table_hover(page, tmp_path):
    out = tmp_path / "coords.html"
    out.write_text(R.render(R.coords_figure("(2,2,2):(2,1,4)"), "html"), encoding="utf-8")
    page.goto(out.as_uri())
    page.wait_for_function("document.querySelector('.cutelab-fig').dataset.ready === '1'")
    tip = hover(page, 1, 0, root=".cutelab-fig")
    assert tip == {"offset": "1", "coord": "(0,1,0)"}


# --------------------------------------------------------------------------- atom tabs

def _label_threads(g) -> np.ndarray:
    """Thread of each cell from a grid's T#\\nV# labels (-1 where empty)."""
    lab = np.asarray(g.labels).astype(str)
    return np.vectorize(lambda s: int(s.split("\n")[0][1:]) if s else -1, otypes=[np.int64])(lab)


def test_tiled_mma_hover_shared_holders_and_thread_across_panels(page, server):
    goto(page, server, "?tab=mma")  # sm80_16x8x16, atoms 2x2x1
    fig = compute("mma", {})
    C, A, B = fig.grids
    assert page.locator("#picture svg g.grid").count() == 3
    tip = hover(page, 5, 3, panel=0)
    t, v = C.labels[5, 3].split("\n")
    assert (tip["thread"], tip["value"]) == (t[1:], v[1:])
    tip = hover(page, 0, 0, panel=1)  # A(0,0) is read by one thread of each atom along N
    assert tip["held"] == "by " + A.tips[0, 0] and "," in A.tips[0, 0]
    click(page, 5, 3, panel=0)
    thr = int(t[1:])
    want = [{(int(a), int(b)) for a, b in zip(*np.nonzero(_label_threads(g) == thr))} for g in fig.grids]
    page.wait_for_function(f"document.querySelector('#picture .cutelab-fig').dataset.highlighted === '{sum(map(len, want))}'")
    assert [lit_cells(page, panel=i) for i in range(3)] == want
    assert page.evaluate("document.querySelectorAll('#picture svg g.grid title').length") == 0  # our tooltip, not the SVG's


def test_swizzle_hover_shows_offset_and_bank(page, server):
    goto(page, server, "?tab=swizzle")
    g = compute("swizzle", {}).grids[0]
    for r, c in [(0, 0), (3, 17), (7, 63)]:
        off, bank = g.labels[r, c].split("\n")
        tip = hover(page, r, c)
        assert (tip["offset"], tip["bank"]) == (off, bank[1:])


def test_tiled_copy_tab_variants(page, server):
    goto(page, server, "?tab=copy&kind=universal&bits=64&thr=(4,8):(8,1)&val=(1,4)")
    assert page.locator("#picture svg g.grid").count() == 2
    assert page.is_hidden("#f-matrices") and page.is_hidden("#f-trans") and page.is_hidden("#f-op")
    page.select_option("#f-for_operand", "A")  # thr/val make way for the MMA's fields
    page.wait_for_function("document.body.dataset.state === 'error'")
    assert page.is_hidden("#f-thr") and page.is_hidden("#f-val") and page.is_visible("#f-op")
    assert page.inner_text("#error") == "MMA instruction is empty"
    assert page.get_attribute("#f-op", "aria-invalid") == "true"
    assert "thr=" not in page.url  # what does not apply is not part of the link
    type_into(page, "op", "sm80_16x8x16")
    assert page.get_attribute("#f-op", "aria-invalid") is None
    assert page.text_content("#picture svg text.figtitle") == compute(
        "copy", {"kind": "universal", "bits": "64", "for_operand": "A", "op": "sm80_16x8x16"}).title
    n = renders(page)
    page.select_option("#f-kind", "ldmatrix")
    wait_ok(page, n)
    assert page.is_visible("#f-matrices") and page.is_visible("#f-trans") and page.is_hidden("#f-bits")
