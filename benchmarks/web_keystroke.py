"""How fast the playground answers a keystroke, measured in the browser (headless Chromium).

For each case the page's input is changed N times between two layouts of the same size (each
change is one keystroke's worth of work: parse + operation + figure + SVG + cell data on the
server, the fetch, and the DOM update with the interactive layer in the page). The page itself
records, with performance.now():

    answer   request sent -> new picture in the DOM, interactive   (what a keystroke costs)
    painted  request sent -> two animation frames later            (the picture on screen)
    input    the input event -> painted, including the 60 ms debounce that coalesces typing
    server   the server's own parse+figure, SVG and cell-data time

Run: python benchmarks/web_keystroke.py [-n 30]   (needs chromium and playwright, as the tests)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
from urllib.parse import urlencode

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

from cutelab.web import make_server, url_of  # noqa: E402

CASES = [
    # (name, tab, field, two values of the field, other fields)
    ("seed layout (4x6)", "layout", "layout", ["((2,2),(2,3)):((2,12),(1,4))", "((2,2),(2,3)):((1,12),(2,4))"], {}),
    ("seed TV layout (4x6 tile)", "tv_layout", "tv", ["((2,2),(2,3)):((2,12),(1,4))", "((2,2),(2,3)):((1,12),(2,4))"],
     {"tile": "4,6"}),
    ("TV 128x128 (make_layout_tv)", "tv", "thr", ["(32,4):(4,1)", "(32,4):(1,32)"], {"val": "(4,32):(32,1)"}),
    ("layout 128x128", "layout", "layout", ["(128,128):(128,1)", "(128,128):(1,128)"], {}),
    ("TV partition 128x128", "partition_tv", "threads", ["(32,4):(4,1)", "(32,4):(1,32)"], {"values": "(4,32):(32,1)", "tensor": "128,128"}),
    ("layout 64x64, labelled", "layout", "layout", ["(64,64):(64,1)", "(64,64):(1,64)"], {}),
    ("composition, 4 panels", "composition", "B", ["(4,2,2):(2,1,8)", "(4,2,2):(1,4,8)"], {"A": "(4,4):(4,1)"}),
]


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=30, help="keystrokes per case")
    ap.add_argument("--chromium", default=os.environ.get("CUTELAB_CHROMIUM", "/usr/bin/chromium"))
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    srv = make_server(0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = url_of(srv)
    rows = []
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=args.chromium, args=["--no-sandbox", "--disable-dev-shm-usage"])
        page = b.new_page(viewport={"width": 1400, "height": 1000})
        for name, tab, field, vals, extra in CASES:
            page.goto(base + "?" + urlencode({"tab": tab, field: vals[0], **extra}))
            page.wait_for_function("document.body.dataset.state === 'ok'")
            recs = []
            for k in range(args.n + 2):  # the first two warm up
                n = page.evaluate("window.cutelabPlayground.renders")
                page.fill(f"#f-{field}", vals[(k + 1) % 2])
                page.wait_for_function("n => window.cutelabPlayground.renders > n && document.body.dataset.state === 'ok'", arg=n)
                if k >= 2:
                    recs.append(page.evaluate("window.cutelabPlayground.timings[window.cutelabPlayground.timings.length - 1]"))
            cells = page.evaluate("Array.from(document.querySelectorAll('#picture svg g.grid')).reduce((s, g) => s + g.dataset.rows * g.dataset.cols, 0)")
            kb = len(page.inner_html("#picture")) / 1024
            ans = [r["total"] for r in recs]
            pnt = [r["painted"] for r in recs]
            inp = [r["sinceInput"] for r in recs if r["sinceInput"] is not None]
            srv_ms = [r["server"]["figure"] + r["server"]["svg"] + r["server"]["cells"] for r in recs]
            rows.append((name, cells, kb, statistics.median(ans), pct(ans, 0.9), max(ans), statistics.median(pnt),
                         statistics.median(inp) if inp else float("nan"), statistics.median(srv_ms),
                         statistics.median(r["fetch"] for r in recs), statistics.median(r["dom"] for r in recs)))
        # interaction on the 128 x 128 TV tile: hover, click-highlight, zoom frames
        page.goto(base + "?" + urlencode({"tab": "tv", "thr": "(32,4):(4,1)", "val": "(4,32):(32,1)"}))
        page.wait_for_function("document.body.dataset.state === 'ok'")
        inter = page.evaluate(_INTERACTION)
        b.close()
    srv.shutdown()
    print(f"playground keystroke latency, {args.n} keystrokes per case (ms; answer = request -> interactive picture in the DOM)")
    print(f"{'case':32} {'cells':>6} {'KiB':>6} {'answer med':>10} {'p90':>6} {'max':>6} {'painted':>8} "
          f"{'input->paint':>12} {'server':>7} {'fetch':>6} {'dom':>5}")
    for name, cells, kb, med, p90, mx, pnt, inp, sv, fe, dm in rows:
        print(f"{name:32} {cells:6d} {kb:6.0f} {med:10.1f} {p90:6.1f} {mx:6.1f} {pnt:8.1f} {inp:12.1f} {sv:7.1f} {fe:6.1f} {dm:5.1f}")
    print("server = parse + operation + figure, SVG, cell data (its own clock); fetch = request -> JSON parsed; "
          "dom = picture into the page + interactive layer; painted = two animation frames after the request")
    print(f"128x128 TV tile: hover {inter['hover']:.3f} ms per mousemove (tooltip update), click-highlight of a "
          f"thread {inter['highlight']:.1f} ms, zoom {inter['zoom']:.1f} ms per frame (median of 30 wheel steps)")
    return 0


_INTERACTION = """async () => {
  const root = document.querySelector('#picture .cutelab-fig'), svg = root.querySelector('svg');
  const g = svg.querySelector('g.grid'), cw = +g.dataset.cw, ch = +g.dataset.ch, ctm = g.getScreenCTM();
  const at = (r, c) => { const p = svg.createSVGPoint(); p.x = (c + .5) * cw; p.y = (r + .5) * ch; return p.matrixTransform(ctm); };
  let t0 = performance.now();
  for (let i = 0; i < 2000; i++) {
    const q = at((i * 7) % 128, i % 128);
    svg.dispatchEvent(new MouseEvent('mousemove', {clientX: q.x, clientY: q.y, bubbles: true}));
  }
  const hover = (performance.now() - t0) / 2000;
  const hl = [];
  for (let t = 0; t < 10; t++) { t0 = performance.now(); root.cutelab.highlight(t, null); hl.push(performance.now() - t0); }
  root.cutelab.clear();
  const frame = () => new Promise(res => requestAnimationFrame(res));
  const zs = [];
  await frame();
  for (let i = 0; i < 30; i++) {
    t0 = performance.now();
    const q = at(64, 64);
    svg.dispatchEvent(new WheelEvent('wheel', {clientX: q.x, clientY: q.y, deltaY: i < 15 ? -100 : 100, bubbles: true, cancelable: true}));
    await frame();
    zs.push(performance.now() - t0);
  }
  const med = a => a.slice().sort((x, y) => x - y)[a.length >> 1];
  return {hover: hover, highlight: med(hl), zoom: med(zs)};
}"""


if __name__ == "__main__":
    raise SystemExit(main())
