"""Screenshots of every playground tab (and of a hover and a click), for a person to look at.

Writes docs/screenshots/<YYYY-MM-DD>/<tab>.png (headless Chromium, as the browser tests).
Run: python scripts/web_screenshots.py [--out DIR]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import threading
from urllib.parse import urlencode

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

from cutelab.web import TABS, make_server, url_of  # noqa: E402

#: extra shots: (file name, tab, field values, action) with action "hover"/"click" at a cell
EXTRA = [
    ("tv-hover-click", "tv", {}, (5, 3)),
    ("tv-128x128-zoomed", "tv", {"thr": "(32,4):(4,1)", "val": "(4,32):(32,1)"}, "zoom"),
    ("layout-error", "layout", {"layout": "((2,2),(2,3)):((2,12),(1,4)"}, "error"),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join("docs", "screenshots", dt.date.today().isoformat()))
    ap.add_argument("--chromium", default=os.environ.get("CUTELAB_CHROMIUM", "/usr/bin/chromium"))
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    os.makedirs(args.out, exist_ok=True)
    srv = make_server(0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = url_of(srv)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=args.chromium, args=["--no-sandbox", "--disable-dev-shm-usage"])
        page = b.new_page(viewport={"width": 1280, "height": 860})
        shots = [(t, t, {}, None) for t in TABS] + EXTRA
        for name, tab, values, action in shots:
            page.goto(base + "?" + urlencode({"tab": tab, **values}))
            page.wait_for_function("document.body.dataset.state === 'ok' || document.body.dataset.state === 'error'")
            if isinstance(action, tuple):
                r, c = action
                xy = page.evaluate(
                    """([r, c]) => { const svg = document.querySelector('#picture svg');
                        const g = svg.querySelector('g.grid'), p = svg.createSVGPoint();
                        p.x = (c + .5) * g.dataset.cw; p.y = (r + .5) * g.dataset.ch;
                        const q = p.matrixTransform(g.getScreenCTM()); return [q.x, q.y]; }""", [r, c])
                page.mouse.click(*xy)
                page.mouse.move(xy[0] + 1, xy[1] + 1)
            elif action == "zoom":
                box = page.locator("#picture svg").bounding_box()
                page.mouse.move(box["x"] + box["width"] * 0.3, box["y"] + box["height"] * 0.3)
                page.mouse.wheel(0, -900)
                page.wait_for_timeout(200)
                page.mouse.move(box["x"] + box["width"] * 0.3 + 2, box["y"] + box["height"] * 0.3 + 2)
            page.wait_for_timeout(150)
            path = os.path.join(args.out, f"{name}.png")
            page.screenshot(path=path)
            print(path)
        b.close()
    srv.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
