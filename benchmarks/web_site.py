"""The static site (`cutelab site`) in headless Chromium: start-up, and keystrokes beside `cutelab serve`.

Start-up: the site is opened from file:// R times in fresh pages; site.js records when Pyodide
is up, when numpy is loaded and when cutelab is imported (ms from site.js's start), the page's
clock gives the first picture, and a 20 ms timer on the page the longest stall of its main thread. Keystrokes: the cases of web_keystroke.py, N keystrokes
each, on the site and on the server in the same run (the server is the baseline): "answer" is
request -> interactive picture in the DOM, "painted" two animation frames later.

Run: python benchmarks/web_site.py [-n 20] [-r 3]   (needs chromium, playwright and a Pyodide
distribution, as tests/web/test_site.py)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
from pathlib import Path
from urllib.parse import urlencode

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

from cutelab.web import make_server, url_of  # noqa: E402
from cutelab.web.site import build  # noqa: E402


def _keystroke_cases() -> list:
    """web_keystroke.py's CASES, loaded by path (benchmarks/ on sys.path would shadow the stdlib's copy)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("web_keystroke", os.path.join(os.path.dirname(__file__), "web_keystroke.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.CASES


CASES = _keystroke_cases()

READY = "document.body.dataset.state === 'ok'"
#: the longest gap between two ticks of a 20 ms timer on the page: how long the page was frozen
_STALL = """window.__stall = 0; (() => { let last = performance.now();
  setInterval(() => { const t = performance.now(); window.__stall = Math.max(window.__stall, t - last); last = t; }, 20); })();"""


def keystrokes(page, base: str, n: int) -> dict[str, tuple[float, float]]:
    out = {}
    for name, tab, field, vals, extra in CASES:
        page.goto(base + "?" + urlencode({"tab": tab, field: vals[0], **extra}))
        page.wait_for_function(READY, timeout=180000)
        recs = []
        for k in range(n + 2):  # the first two warm up
            before = page.evaluate("window.cutelabPlayground.renders")
            page.fill(f"#f-{field}", vals[(k + 1) % 2])
            page.wait_for_function(f"n => window.cutelabPlayground.renders > n && {READY}", arg=before)
            if k >= 2:
                recs.append(page.evaluate("window.cutelabPlayground.timings[window.cutelabPlayground.timings.length - 1]"))
        out[name] = (statistics.median(r["total"] for r in recs), statistics.median(r["painted"] for r in recs))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=20, help="keystrokes per case")
    ap.add_argument("-r", type=int, default=3, help="start-ups")
    ap.add_argument("--chromium", default=os.environ.get("CUTELAB_CHROMIUM", "/usr/bin/chromium"))
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        info = build(Path(tmp) / "site")
        index = (Path(tmp) / "site" / "index.html").as_uri()
        srv = make_server(0)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=args.chromium, args=["--no-sandbox", "--disable-dev-shm-usage"])
            starts = []
            for _ in range(args.r):
                page = b.new_page(viewport={"width": 1400, "height": 1000})
                page.add_init_script(_STALL)
                page.goto(index + "?tab=layout")
                page.wait_for_function(READY, timeout=180000)
                steps = page.evaluate("cutelabSite.steps")
                steps["first picture"] = round(page.evaluate("performance.now()"))  # about: the wait polls
                steps["longest main-thread stall"] = round(page.evaluate("window.__stall"))
                starts.append(steps)
                page.close()
            page = b.new_page(viewport={"width": 1400, "height": 1000})
            site = keystrokes(page, index, args.n)
            server = keystrokes(page, url_of(srv), args.n)
            b.close()
        srv.shutdown()
    print(f"cutelab site: Pyodide {info['pyodide']} (Python {info['python']}), {info['bytes'] / 2**20:.1f} MiB; "
          f"load average {os.getloadavg()[0]:.1f}")
    print("start-up, ms from site.js's start (each row one fresh page from file://):")
    for s in starts:
        print("  " + ", ".join(f"{k} {v}" for k, v in s.items()))
    print(f"keystrokes, median of {args.n} (ms): {'case':30} {'site answer':>12} {'server answer':>14} "
          f"{'site painted':>13} {'server painted':>15}")
    for name in site:
        print(f"  {name:58} {site[name][0]:12.1f} {server[name][0]:14.1f} {site[name][1]:13.1f} {server[name][1]:15.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
