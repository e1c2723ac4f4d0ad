"""PNG pictures (skipped without Pillow)."""

from __future__ import annotations

import io
import time

import pytest

from cutelab import render as R

PIL = pytest.importorskip("PIL")
from PIL import Image  # noqa: E402


def _open(b: bytes) -> Image.Image:
    assert b[:8] == b"\x89PNG\r\n\x1a\n"
    return Image.open(io.BytesIO(b))


def test_png_small_layout():
    im = _open(R.render(R.layout_figure("(2,3):(3,1)"), "png"))
    assert im.size[0] > 100 and im.size[1] > 50


def test_png_tv_colours_present():
    fig = R.tv_figure("((2,2),(2,3)):((2,12),(1,4))", (4, 6))
    im = _open(R.render(fig, "png")).convert("RGB")
    colours = {c for _, c in im.getcolors(1 << 20)}
    for k in range(4):
        h = fig.grids[0].colors[k]
        assert tuple(int(h[i:i + 2], 16) for i in (1, 3, 5)) in colours


@pytest.mark.parametrize("fig", [
    lambda: R.layout_figure("(256,256):(256,1)"),
    lambda: R.make_tv_figure("(32,8):(8,1)", "(4,16):(16,1)"),
])
def test_png_big_under_a_second(fig):
    f = fig()
    t0 = time.perf_counter()
    _open(R.render(f, "png"))
    assert time.perf_counter() - t0 < 1.0
