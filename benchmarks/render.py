"""Render timings: big layouts and TV tiles to SVG and PNG (the "pictures" bars: < 1 s each).

    python benchmarks/render.py [--repeat 5]

Prints one table row per (picture, format): best and median wall time over the repeats, the
output size, and the time of building the Figure (the algebra) separately from drawing it.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import statistics
import time

import cutelab as cute
from cutelab import render as R

CASES = {
    "layout 256x256 row-major": lambda: R.layout_figure(cute.make_layout((256, 256), stride=(256, 1))),
    "layout 256x256 ((16,16),(16,16)) swizzled-ish": lambda: R.layout_figure(
        cute.Layout.parse("((16,16),(16,16)):((1,4096),(16,256))")),
    "layout 256x256 worst case (no two neighbours alike)": lambda: R.layout_figure(
        cute.Layout.parse("((2,128),(2,128)):((32768,1),(16384,128))")),
    "TV tile 128x128 (32,8):(8,1) x (4,16):(16,1)": lambda: R.make_tv_figure("(32,8):(8,1)", "(4,16):(16,1)"),
    "TV tile 128x64 copy kernel (labelled)": lambda: R.make_tv_figure("(32,8):(8,1)", "(4,8):(8,1)"),
    "layout 16x16 (labelled)": lambda: R.layout_figure(cute.make_layout((16, 16), stride=(16, 1))),
}


def _time(f, repeat):
    ts, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        ts.append(time.perf_counter() - t0)
    return min(ts), statistics.median(ts), out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    fmts = ["svg", "text"]
    try:
        import PIL  # noqa: F401

        fmts.insert(1, "png")
    except ImportError:
        print("(Pillow not installed: no PNG timings)")
    print(f"# cutelab render benchmark, {datetime.date.today()}, {platform.node()} "
          f"({platform.processor() or platform.machine()}, Python {platform.python_version()})")
    print(f"{'picture':48s} {'format':6s} {'figure ms':>9s} {'best ms':>8s} {'median ms':>9s} {'size KB':>8s}")
    for name, build in CASES.items():
        fb, _, fig = _time(build, args.repeat)
        for fmt in fmts:
            R.render(fig, fmt)  # warm caches (fonts, glyphs) once
            best, med, out = _time(lambda: R.render(fig, fmt), args.repeat)
            size = len(out.encode() if isinstance(out, str) else out) / 1024
            print(f"{name:48s} {fmt:6s} {fb * 1e3:9.1f} {best * 1e3:8.1f} {med * 1e3:9.1f} {size:8.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
