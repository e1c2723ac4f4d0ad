"""Figures as SVG, written by hand (no dependencies), small even for big tiles.

How it stays small: cells are not one ``<rect>`` each. For every colour there is one
``<path class="cells" data-key="k">`` whose ``d`` lists rectangles ``M x y h w v h h -w z``;
cells of one colour that are adjacent in a row are merged into one run, and identical runs in
consecutive rows into one rectangle. Grid lines are one path, the thick borders between groups
(tiles, blocks) another. Labels are drawn only when a grid has at most ``LABEL_LIMIT`` cells;
bigger grids are drawn with smaller cells, no labels and sparse row/column indices, so a
256x256 layout is a heat map of a few kilobytes. When even the merged rectangles of an
unlabelled grid exceed ``RUN_LIMIT`` (neighbouring cells all different: a worst case of 65536
rectangles, about 1 MB), the cells become one ``<image class="cells-image">``: a PNG with one
pixel per cell (written with zlib, no Pillow), stretched with ``image-rendering:pixelated``.

Structure (the tests read it back): each panel is ``<g class="grid" data-rows data-cols
data-cw data-ch transform=...>``; inside, cell ``(r, c)`` is the rectangle at
``(c*cw, r*ch)``; labels are ``<text>`` elements centred in their cell (a second line as a
``<tspan>``, baselines placed so that no dominant-baseline support is needed; a grid's ``tips``
become a ``<title>`` after the text, shown on hover); the legend is ``<g class="legend">``.

>>> from cutelab.render.figure import layout_figure
>>> s = render(layout_figure("(2,3):(3,1)"))
>>> s.startswith("<svg") and 'data-rows="2"' in s
True
"""

from __future__ import annotations

from html import escape
from typing import Any

import base64
import struct
import zlib

import numpy as np

from .figure import LABEL_LIMIT, Figure, Grid, header_levels, layout_figure, mode_boundaries

__all__ = ["render", "layout_svg", "cell_size", "FONT"]

FONT = "DejaVu Sans Mono, Menlo, Consolas, monospace"
_FS = 12          # label font size (px)
_CHAR = 0.62      # width of a monospace character, in font sizes
_PAD = 16         # margin around the picture
_TITLE = 18       # height of a title line
_HEAD = 18        # width/height reserved for row/column indices
_MAX_W = 1400     # panels flow left to right up to this width
_LEGEND_MAX = 64  # legend entries shown (then "+N more")
RUN_LIMIT = 8192  # more rectangles than this in an unlabelled grid: cells become one embedded image


def _has_labels(g: Grid) -> bool:
    rows, cols = g.shape
    return g.labels is not None and rows * cols <= LABEL_LIMIT


def cell_size(g: Grid) -> tuple[int, int]:
    """(width, height) of one cell in px: fitted to the labels, or small for unlabelled grids."""
    rows, cols = g.shape
    if _has_labels(g):
        lab = g.labels.astype(str)
        parts = np.char.partition(lab, "\n")
        longest = int(max(np.char.str_len(parts[..., 0]).max(), np.char.str_len(parts[..., 2]).max()))
        nlines = 2 if np.char.str_len(parts[..., 1]).max() else 1
        w = max(26, int(np.ceil(_CHAR * _FS * longest)) + 10)
        h = 18 if nlines <= 1 else 14 * nlines + 4
        return w, h
    side = max(2, min(16, 1024 // max(rows, cols, 1)))
    return side, side


def _runs(keys: np.ndarray) -> list[tuple[int, int, int, int, int]]:
    """Rectangles (key, r0, r1, c0, c1) covering the grid, one colour each (half-open ranges)."""
    rows, cols = keys.shape
    out = []
    open_: dict[tuple[int, int, int], int] = {}
    for r in range(rows):
        row = keys[r]
        cuts = np.flatnonzero(np.diff(row)) + 1
        starts = np.concatenate(([0], cuts))
        ends = np.concatenate((cuts, [cols]))
        now = {}
        for c0, c1 in zip(starts.tolist(), ends.tolist()):
            k = int(row[c0])
            key = (k, c0, c1)
            now[key] = open_.pop(key, r)
        for (k, c0, c1), r0 in open_.items():
            out.append((k, r0, r, c0, c1))
        open_ = now
    for (k, c0, c1), r0 in open_.items():
        out.append((k, r0, rows, c0, c1))
    return out


def _png_rgb(rgb: np.ndarray) -> bytes:
    """A minimal PNG (8-bit RGB, filter 0 on every row) of an (h, w, 3) uint8 array, stdlib only."""
    h, w, _ = rgb.shape
    raw = np.concatenate([np.zeros((h, 1), dtype=np.uint8), rgb.reshape(h, w * 3)], axis=1).tobytes()

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def _cells_image(g: Grid, cw: int, ch: int) -> str:
    """All cells as one pixelated <image>: one pixel per cell, colours exact (see module docstring)."""
    rows, cols = g.shape
    uniq, inv = np.unique(g.keys, return_inverse=True)
    table = np.array([[int(g.fill(int(k))[i:i + 2], 16) for i in (1, 3, 5)] for k in uniq], dtype=np.uint8)
    data = base64.b64encode(_png_rgb(table[inv.reshape(rows, cols)])).decode()
    return (f'<image class="cells-image" x="0" y="0" width="{cols * cw}" height="{rows * ch}" '
            f'preserveAspectRatio="none" style="image-rendering:pixelated" href="data:image/png;base64,{data}"/>')


def _borders(groups: np.ndarray, cw: int, ch: int) -> str:
    """Path data of the lines between cells of different groups."""
    rows, cols = groups.shape
    d = []
    diff_h = groups[1:, :] != groups[:-1, :]  # border below row r
    for r, line in enumerate(diff_h):
        idx = np.flatnonzero(line)
        if idx.size:
            cuts = np.flatnonzero(np.diff(idx) != 1) + 1
            for seg in np.split(idx, cuts):
                d.append(f"M{seg[0] * cw} {(r + 1) * ch}h{(seg[-1] - seg[0] + 1) * cw}")
    diff_v = groups[:, 1:] != groups[:, :-1]  # border right of column c
    for c, line in enumerate(diff_v.T):
        idx = np.flatnonzero(line)
        if idx.size:
            cuts = np.flatnonzero(np.diff(idx) != 1) + 1
            for seg in np.split(idx, cuts):
                d.append(f"M{(c + 1) * cw} {seg[0] * ch}v{(seg[-1] - seg[0] + 1) * ch}")
    return "".join(d)


_LEVEL_H = 13    # height of each further line of a nested column header
_DIGIT = 6.2      # width of a header character (10 px font)


def nested_headers(g: Grid) -> tuple[list | None, list | None]:
    """(row levels, column levels) of a labelled grid with a hierarchical row / column shape (header_levels)."""
    if not _has_labels(g):
        return None, None
    rows, cols = g.shape
    return header_levels(g.row_shape, rows), header_levels(g.col_shape, cols)


def header_space(g: Grid, rlev: list | None, clev: list | None, head: int) -> tuple[int, int, list[int]]:
    """(left, top) room for the headers, and the width of each row header line (right to left)."""
    if not rlev:
        widths = [head]
    else:
        widths = [max(14, int(_DIGIT * max(len(t) for _, _, t in lv)) + 8) for lv in rlev]
        widths[0] = max(widths[0], head)
    top = head + (_LEVEL_H * (len(clev) - 1) if clev else 0)
    return sum(widths), top, widths


def _mode_lines(g: Grid, cw: int, ch: int) -> str:
    """Path data of the lines at the boundaries of the rows' and columns' hierarchical modes."""
    rows, cols = g.shape
    if not _has_labels(g):
        return ""
    d = [f"M{c * cw} 0v{rows * ch}" for c in mode_boundaries(g.col_shape, cols)]
    d += [f"M0 {r * ch}h{cols * cw}" for r in mode_boundaries(g.row_shape, rows)]
    return "".join(d)


def _header_step(n: int, px: int) -> int:
    step = 1
    while step * px < 18 and step < n:
        step *= 2
    return step


def _legend_layout(g: Grid, width: int) -> tuple[list[tuple[int, str, int, int]], int, str | None]:
    """Placed legend entries (key, text, x, y), total height, overflow note."""
    items = g.legend[:_LEGEND_MAX]
    placed, x, y = [], 0, 0
    for k, text in items:
        w = 18 + int(_CHAR * 11 * len(text)) + 12
        if x and x + w > width:
            x, y = 0, y + 16
        placed.append((k, text, x, y))
        x += w
    more = f"+{len(g.legend) - _LEGEND_MAX} more (colours cycle hue, then lightness)" if len(g.legend) > _LEGEND_MAX else None
    h = (y + 16 if placed else 0) + (16 if more else 0)
    return placed, h, more


def uniform_cell(fig: Figure) -> tuple[int, int] | None:
    """The one cell size of all grids of a placed figure (see Figure.placement), so neighbours line up."""
    if not fig.placement:
        return None
    sizes = [cell_size(g) for g in fig.grids]
    return max(w for w, _ in sizes), max(h for _, h in sizes)


def arrange(fig: Figure, sizes: list[tuple[int, int]], top: int) -> tuple[list[tuple[int, int]], int, int]:
    """Positions (x, y) of the panels of the given (width, height), the right edge and the bottom.

    Without a placement, panels flow left to right and wrap at _MAX_W; with one, they are set
    in a table whose columns are as wide, and rows as tall, as their largest panel.
    """
    pos: list[tuple[int, int]] = []
    if fig.placement:
        nr = 1 + max(r for r, _ in fig.placement)
        nc = 1 + max(c for _, c in fig.placement)
        cw, rh = [0] * nc, [0] * nr
        for (r, c), (w, h) in zip(fig.placement, sizes):
            cw[c], rh[r] = max(cw[c], w), max(rh[r], h)
        xs = [_PAD + sum(cw[:c]) + 32 * c for c in range(nc)]
        ys = [top + sum(rh[:r]) + 24 * r for r in range(nr)]
        pos = [(xs[c], ys[r]) for r, c in fig.placement]
        right = max(x + w for (x, _), (w, _h) in zip(pos, sizes))
        return pos, right, ys[-1] + rh[-1]
    x, y, row_h, total_w = _PAD, top, 0, 0
    for w, h in sizes:
        if x > _PAD and x + w > _MAX_W:
            x, y, row_h = _PAD, y + row_h + 24, 0
        pos.append((x, y))
        total_w = max(total_w, x + w)
        row_h = max(row_h, h)
        x += w + 32
    return pos, total_w, y + row_h


def _panel(g: Grid, show_legend: bool, titled: bool = True,
           cell: tuple[int, int] | None = None) -> tuple[list[str], int, int]:
    """SVG elements of one panel at the origin, and its (width, height); ``cell`` fixes the cell size."""
    rows, cols = g.shape
    cw, ch = cell or cell_size(g)
    labelled = _has_labels(g)
    head = _HEAD + (8 if labelled else 0)
    rlev, clev = nested_headers(g)
    left, top, rwidths = header_space(g, rlev, clev, head)
    gw, gh = cols * cw, rows * ch
    title_w = int(_CHAR * 13 * len(g.title)) if titled else 0
    width = max(left + gw, title_w, 160)
    out: list[str] = []
    if titled:
        out.append(f'<text class="title" x="0" y="13" font-size="13" font-weight="bold">{escape(g.title)}</text>')
    gx, gy = left, (_TITLE if titled else 0) + top
    out.append(f'<g class="grid" data-rows="{rows}" data-cols="{cols}" data-cw="{cw}" data-ch="{ch}" '
               f'transform="translate({gx},{gy})">')
    runs = _runs(g.keys)
    if len(runs) > RUN_LIMIT and not labelled:
        out.append(_cells_image(g, cw, ch))
    else:
        by_key: dict[int, list[str]] = {}
        for k, r0, r1, c0, c1 in runs:
            w, h = (c1 - c0) * cw, (r1 - r0) * ch
            by_key.setdefault(k, []).append(f"M{c0 * cw} {r0 * ch}h{w}v{h}h-{w}z")
        for k in sorted(by_key):
            out.append(f'<path class="cells" data-key="{k}" fill="{g.fill(k)}" d="{"".join(by_key[k])}"/>')
    if cw >= 6:
        lines = "".join(f"M0 {r * ch}h{gw}" for r in range(rows + 1)) + "".join(f"M{c * cw} 0v{gh}" for c in range(cols + 1))
        out.append(f'<path class="gridlines" fill="none" stroke="#000" stroke-width="0.6" d="{lines}"/>')
    else:
        out.append(f'<rect class="frame" x="0" y="0" width="{gw}" height="{gh}" fill="none" stroke="#000" stroke-width="0.6"/>')
    d = _mode_lines(g, cw, ch)
    if d:
        out.append(f'<path class="modes" fill="none" stroke="#000" stroke-width="1.6" d="{d}"/>')
    if g.subgroups is not None:
        d = _borders(g.subgroups, cw, ch)
        if d:
            out.append(f'<path class="borders sub" fill="none" stroke="#000" stroke-width="1.3" d="{d}"/>')
    if g.groups is not None:
        d = _borders(g.groups, cw, ch)
        if d:
            out.append(f'<path class="borders" fill="none" stroke="#000" stroke-width="2.5" stroke-linecap="square" d="{d}"/>')
    if labelled:
        out.append(f'<g class="labels" font-size="{_FS}" text-anchor="middle">')
        lab = g.labels
        tips = g.tips
        for r in range(rows):
            cy = r * ch + ch / 2
            for c in range(cols):
                s = lab[r, c]
                if not s:
                    continue
                cx = c * cw + cw // 2
                if tips is not None and tips[r, c]:
                    s_tip = f"<title>{escape(str(tips[r, c]))}</title>"
                else:
                    s_tip = ""
                white = ' fill="#fff"' if g.ink(int(g.keys[r, c])) == "#FFFFFF" else ""
                if "\n" in s:
                    a, b = s.split("\n", 1)
                    out.append(f'<text x="{cx}" y="{cy - 3:g}"{white}>{escape(a)}<tspan x="{cx}" dy="14">{escape(b)}</tspan>{s_tip}</text>')
                else:
                    out.append(f'<text x="{cx}" y="{cy + 4:g}"{white}>{escape(s)}{s_tip}</text>')
        out.append("</g>")
    out.append("</g>")
    # indices
    hs = _header_step(cols, cw)
    vs = _header_step(rows, ch)
    idx = ['<g class="indices" font-size="10" fill="#444" text-anchor="middle">']
    if clev:  # one line per leaf of the columns' shape, the first next to the grid; spans centred
        for j, lv in enumerate(clev):
            y = gy - 5 - _LEVEL_H * j
            idx.append(f'<g class="level" data-axis="col" data-depth="{j}">')
            for start, span, t in lv:
                idx.append(f'<text x="{gx + (start + span / 2) * cw:g}" y="{y}">{escape(t)}</text>')
                if span > 1:
                    idx.append(f'<path d="M{gx + start * cw + 3} {y + 2}h{span * cw - 6}" stroke="#999" stroke-width="0.8"/>')
            idx.append("</g>")
    else:
        for c in range(0, cols, hs):
            t = g.col_headers[c] if g.col_headers else str(c)
            idx.append(f'<text x="{gx + c * cw + cw / 2:g}" y="{gy - 5}">{escape(t)}</text>')
    if rlev:  # one column per leaf of the rows' shape, the first next to the grid
        x = gx - 4
        for j, lv in enumerate(rlev):
            idx.append(f'<g class="level" data-axis="row" data-depth="{j}" text-anchor="end">')
            for start, span, t in lv:
                idx.append(f'<text x="{x}" y="{gy + (start + span / 2) * ch + 3.5:g}">{escape(t)}</text>')
                if span > 1:
                    idx.append(f'<path d="M{x + 2} {gy + start * ch + 3}v{span * ch - 6}" stroke="#999" stroke-width="0.8"/>')
            idx.append("</g>")
            x -= rwidths[j]
    else:
        for r in range(0, rows, vs):
            t = g.row_headers[r] if g.row_headers else str(r)
            idx.append(f'<text x="{gx - 4}" y="{gy + r * ch + ch / 2 + 3.5:g}" text-anchor="end">{escape(t)}</text>')
    idx.append("</g>")
    out.extend(idx)
    height = gy + gh
    if show_legend and g.legend:
        placed, lh, more = _legend_layout(g, max(width, 320))
        ly = height + 10
        out.append(f'<g class="legend" font-size="11" transform="translate(0,{ly})">')
        for k, text, x, y in placed:
            out.append(f'<rect x="{x}" y="{y}" width="12" height="12" fill="{g.fill(k)}" stroke="#000" stroke-width="0.5"/>'
                       f'<text x="{x + 16}" y="{y + 10}">{escape(text)}</text>')
        if more:
            out.append(f'<text x="0" y="{lh - 4}" fill="#444">{escape(more)}</text>')
        out.append("</g>")
        height = ly + lh
        width = max(width, max((x + 18 + int(_CHAR * 11 * len(t)) for _, t, x, _ in placed), default=0))
    return out, width, height


def _titled(fig: Figure, g: Grid) -> bool:
    """A panel gets its own title unless it is the only one and says what the figure title says."""
    return len(fig.grids) > 1 or g.title != fig.title


def _same_legend(a: Grid, b: Grid) -> bool:
    return a.legend == b.legend and all(a.fill(k) == b.fill(k) for k, _ in a.legend)


def render(fig: Figure) -> str:
    """The figure as an SVG document (a string)."""
    notes = [] if fig.kind == "coords" else fig.notes  # a coords table already shows them
    cell = uniform_cell(fig)
    panels = []
    for i, g in enumerate(fig.grids):
        nxt = fig.grids[i + 1] if i + 1 < len(fig.grids) else None
        show = nxt is None or not _same_legend(g, nxt)
        panels.append(_panel(g, show, titled=_titled(fig, g), cell=cell))
    body: list[str] = []
    pos, total_w, y = arrange(fig, [(w, h) for _, w, h in panels], _PAD + 24)  # below the figure title
    for (elems, w, h), (x, py) in zip(panels, pos):
        body.append(f'<g class="panel" transform="translate({x},{py})">')
        body.extend(elems)
        body.append("</g>")
    y += 12
    if notes:
        body.append(f'<g class="notes" font-size="11" fill="#222" transform="translate({_PAD},{y})">')
        for i, line in enumerate(notes):
            body.append(f'<text x="0" y="{12 + 15 * i}" xml:space="preserve">{escape(line)}</text>')
        body.append("</g>")
        y += 15 * len(notes) + 8
        total_w = max(total_w, _PAD + max(int(_CHAR * 11 * len(n)) for n in notes))
    total_w = max(total_w, _PAD + int(_CHAR * 15 * len(fig.title)))
    W, H = total_w + _PAD, y + _PAD
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
            f'font-family="{FONT}">')
    return "\n".join([head, f"<title>{escape(fig.title)}</title>",
                      f'<rect width="{W}" height="{H}" fill="#fff"/>',
                      f'<text class="figtitle" x="{_PAD}" y="{_PAD + 12}" font-size="15" font-weight="bold">{escape(fig.title)}</text>',
                      *body, "</svg>"]) + "\n"


def layout_svg(layout: Any) -> str:
    """A layout's grid of offsets as SVG (what ``Layout._repr_svg_`` shows in Jupyter)."""
    return render(layout_figure(layout))
