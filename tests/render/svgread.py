"""Read cutelab's SVG pictures back: per grid, each cell's fill colour and label.

Used by the tests to check pictures by their content, not by their text: the SVG must parse
as XML, every cell must be covered by exactly one coloured rectangle, and labels sit in cells.
"""

from __future__ import annotations

import base64
import re
import struct
import xml.etree.ElementTree as ET
import zlib
from dataclasses import dataclass, field

import numpy as np

NS = "{http://www.w3.org/2000/svg}"
_RECT = re.compile(r"M(-?\d+) (-?\d+)h(\d+)v(\d+)h-(\d+)z")


@dataclass
class ReadGrid:
    rows: int
    cols: int
    fills: np.ndarray            # (rows, cols) object array of hex strings
    keys: np.ndarray             # (rows, cols) data-key of the path covering each cell
    labels: dict = field(default_factory=dict)  # (r, c) -> label text, lines joined by "\n"
    title: str = ""
    tips: dict = field(default_factory=dict)    # (r, c) -> the <title> (hover text) of the label, if any


def read(svg: str) -> list[ReadGrid]:
    root = ET.fromstring(svg)
    assert root.tag == NS + "svg"
    out = []
    for panel in root.iter(NS + "g"):
        if panel.get("class") != "panel":
            continue
        title = "".join(t.text or "" for t in panel if t.tag == NS + "text" and t.get("class") == "title")
        g = next(x for x in panel.iter(NS + "g") if x.get("class") == "grid")
        rows, cols = int(g.get("data-rows")), int(g.get("data-cols"))
        cw, ch = int(g.get("data-cw")), int(g.get("data-ch"))
        fills = np.full((rows, cols), None, dtype=object)
        keys = np.full((rows, cols), -99, dtype=np.int64)
        for p in g.iter(NS + "path"):
            if p.get("class") != "cells":
                continue
            k = int(p.get("data-key"))
            for x, y, w, h, w2 in _RECT.findall(p.get("d")):
                x, y, w, h = int(x), int(y), int(w), int(h)
                assert w == int(w2) and x % cw == 0 and y % ch == 0 and w % cw == 0 and h % ch == 0
                r0, c0 = y // ch, x // cw
                block = fills[r0:r0 + h // ch, c0:c0 + w // cw]
                assert all(v is None for v in block.ravel()), "a cell is covered twice"
                block[...] = p.get("fill")
                keys[r0:r0 + h // ch, c0:c0 + w // cw] = k
        for im in g.iter(NS + "image"):
            assert im.get("class") == "cells-image"
            rgb = _decode_png(im.get("href").split(",", 1)[1])
            assert rgb.shape[:2] == (rows, cols)
            assert all(v is None for v in fills.ravel()), "a cell is covered twice"
            hexes = np.array([f"#{r:02X}{g_:02X}{b:02X}" for r, g_, b in rgb.reshape(-1, 3).tolist()], dtype=object)
            fills[...] = hexes.reshape(rows, cols)
        assert all(v is not None for v in fills.ravel()), "a cell is not covered"
        labels, tips = {}, {}
        for lab in g.iter(NS + "g"):
            if lab.get("class") != "labels":
                continue
            for t in lab.iter(NS + "text"):
                x, y = float(t.get("x")), float(t.get("y"))
                parts = [t.text or ""] + [s.text or "" for s in t.iter(NS + "tspan")]
                r, c = int(y // ch), int(x // cw)  # the (first) baseline lies inside the cell
                assert (r, c) not in labels, "two labels in one cell"
                labels[(r, c)] = "\n".join(parts)
                tip = t.find(NS + "title")
                if tip is not None:
                    tips[(r, c)] = tip.text or ""
        out.append(ReadGrid(rows, cols, fills, keys, labels, title, tips))
    return out


def _decode_png(b64: str) -> np.ndarray:
    """Decode the 8-bit RGB, filter-0 PNGs that svg._png_rgb writes."""
    data = base64.b64decode(b64)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    w = h = 0
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert (depth, ctype) == (8, 2)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(h, 1 + 3 * w)
    assert (raw[:, 0] == 0).all()
    return raw[:, 1:].reshape(h, w, 3)
