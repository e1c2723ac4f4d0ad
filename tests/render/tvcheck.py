"""Checks shared by the MMA and copy picture tests: read an SVG back and compare it with the layouts.

Everything here is computed independently of cutelab's renderer: the holders of a cell are
found by evaluating the TV layout at every (t, v) with cutelab's Layout (whose evaluation is
tested against CuTe DSL in tests/test_golden.py), never from the figure.
"""

from __future__ import annotations

import json
import pathlib
import re
import xml.etree.ElementTree as ET

from cutelab import Layout
from cutelab.int_tuple import product

from . import svgread

GOLDEN = pathlib.Path(__file__).parent / "golden"
NS = svgread.NS
_TV = re.compile(r"^T(\d+)\nV(\d+)$")


def cute_cases(kind: str) -> dict:
    """CuTe C++ print_latex references (scripts/make_cute_latex_golden.py), of one kind."""
    data = json.loads((GOLDEN / "cute_print_latex.json").read_text())
    return {k: v for k, v in data["cases"].items() if v["kind"] == kind}


def holders(tv: str | Layout, rows: int) -> dict[tuple[int, int], set[tuple[int, int]]]:
    """(m, n) -> {(t, v)} with tv(t, v) == m + rows * n, by evaluating the layout at each (t, v)."""
    L = Layout.parse(tv) if isinstance(tv, str) else tv
    T = product(L.shape[0])
    V = L.size() // T
    offs = L.offsets().tolist()  # offs[i] == L(i), spot-checked here against plain evaluation
    for i in range(0, len(offs), max(1, len(offs) // 97)):
        assert L(i) == offs[i]
    out: dict = {}
    for t in range(T):
        for v in range(V):
            idx = offs[t + T * v]
            out.setdefault((idx % rows, idx // rows), set()).add((t, v))
    return out


def parse_label(s: str) -> tuple[int, int]:
    m = _TV.match(s)
    assert m, f"not a T#V# label: {s!r}"
    return int(m.group(1)), int(m.group(2))


def parse_tip(s: str) -> set[tuple[int, int]]:
    """'V0: T0-T3,T8; V1: T2' -> {(0,0), (1,0), (2,0), (3,0), (8,0), (2,1)}."""
    out = set()
    for part in s.split("; "):
        v, ts = part.split(": ")
        for r in ts.split(","):
            a, _, b = r.partition("-")
            lo = int(a[1:])
            hi = int(b[1:]) if b else lo
            out |= {(t, int(v[1:])) for t in range(lo, hi + 1)}
    return out


def label_set(g: svgread.ReadGrid, r: int, c: int) -> set[tuple[int, int]]:
    """Every (t, v) the picture says holds cell (r, c): the tooltip's list, else the label's one."""
    if (r, c) in g.tips:
        return parse_tip(g.tips[(r, c)])
    return {parse_label(g.labels[(r, c)])} if (r, c) in g.labels else set()


def check_grid(g: svgread.ReadGrid, tv: str | Layout, rows: int, cols: int, transposed: bool = False) -> dict:
    """Assert the grid shows exactly the holders of every cell; returns {thread: fill} seen.

    The grid is (rows, cols) over the tile (transposed: the grid's (r, c) is tile cell (c, r)).
    Each cell's visible label is the first holder in CuTe's order (lowest t, then lowest v),
    its full label set is every (t, v) mapping there, and its fill is its label thread's colour.
    """
    want = holders(tv, rows)
    assert (g.rows, g.cols) == ((cols, rows) if transposed else (rows, cols))
    fills: dict[int, str] = {}
    for r in range(g.rows):
        for c in range(g.cols):
            cell = (c, r) if transposed else (r, c)
            hs = want.get(cell, set())
            assert label_set(g, r, c) == hs, f"cell {cell}"
            if not hs:
                assert g.fills[r, c] == "#FFFFFF"
                continue
            t, v = parse_label(g.labels[(r, c)])
            assert (t, v) == min(hs)
            assert fills.setdefault(t, g.fills[r, c]) == g.fills[r, c], f"thread {t} has two colours"
    return fills


def one_colour_per_thread(*maps: dict) -> None:
    """The thread -> fill maps agree, and different threads have different fills."""
    merged: dict[int, str] = {}
    for m in maps:
        for t, f in m.items():
            assert merged.setdefault(t, f) == f, f"thread {t} has two colours"
    assert len(set(merged.values())) == len(merged), "two threads share a colour"


def panel_positions(svg: str) -> dict[str, tuple[float, float]]:
    """Panel title -> (x, y) of the panel's translate."""
    root = ET.fromstring(svg)
    out = {}
    for p in root.iter(NS + "g"):
        if p.get("class") != "panel":
            continue
        title = "".join(t.text or "" for t in p if t.tag == NS + "text" and t.get("class") == "title")
        x, y = re.match(r"translate\(([-\d.]+),([-\d.]+)\)", p.get("transform")).groups()
        out[title] = (float(x), float(y))
    return out


def normalized_latex(tex: str) -> list[str]:
    """LaTeX lines without comments, every fill replaced by X (our colours differ from CuTe's on purpose)."""
    return [re.sub(r"fill=\{rgb[^}]*\}(,text=white)?", "fill=X", line) for line in tex.split("\n") if not line.startswith("%")]


def latex_fills(tex: str) -> dict[int, str]:
    """Thread -> fill of every node of a CuTe-style TV picture, asserting each thread has one fill."""
    out: dict[int, str] = {}
    for fill, t in re.findall(r"\\node\[fill=(\{rgb[^}]*\})(?:,text=white)?\] at \(-?\d+,-?\d+\) \{\\shortstack\{T(\d+) ", tex):
        assert out.setdefault(int(t), fill) == fill, f"thread {t} has two fills"
    return out
