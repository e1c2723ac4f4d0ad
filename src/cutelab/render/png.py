"""Figures as PNG, with Pillow (a dependency of cutelab since PNG is part of the base install).

Why Pillow rather than a PNG writer of our own: the pixels are easy (svg.py already writes a
minimal PNG with zlib for its embedded cell images), but a PNG picture is its labels, and
drawing text needs a font and a rasterizer. Pillow brings both (FreeType, and a default font
when no TrueType font is found), ships wheels for every platform and Python we support, and
costs one ~4 MB install; a bitmap font of our own would be one fixed size, ASCII only, and more
code to keep right than everything else in this module.

The geometry is the SVG back end's (same cell sizes, label limit, panel flow), so a PNG looks
like the SVG rasterized. Cells are painted as a numpy image (one colour lookup, then a
nearest-neighbour upscale), grid lines and borders as numpy slices; only labels, indices,
titles, legends and notes go through Pillow's text drawing. That keeps a 256x256 layout or a
128x128 TV tile well under a second.
"""

from __future__ import annotations

import io
from functools import lru_cache

import numpy as np

from ..errors import LayoutError
from . import palette
from .figure import Figure, Grid, mode_boundaries
from .svg import (
    _LEVEL_H, _titled, _LEGEND_MAX, _PAD, _TITLE, _HEAD, _has_labels, _header_step, _same_legend, arrange, cell_size,
    header_space, nested_headers, uniform_cell,
)

__all__ = ["render", "require_pillow", "MAX_PIXELS"]

#: the most pixels a PNG may have (its RGB canvas is 3 bytes a pixel: 384 MiB)
MAX_PIXELS = 1 << 27


def require_pillow():
    """Import PIL or raise an ImportError that names the extra to install."""
    try:
        from PIL import Image, ImageDraw, ImageFont  # noqa: F401
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("PNG output needs Pillow, a dependency of cutelab that is missing here: pip install pillow") from e
    return Image, ImageDraw, ImageFont


@lru_cache(maxsize=16)
def _font(size: int, bold: bool = False):
    _, _, ImageFont = require_pillow()
    names = ["DejaVuSansMono-Bold.ttf" if bold else "DejaVuSansMono.ttf", "Menlo.ttc", "consola.ttf"]
    for n in names:
        try:
            return ImageFont.truetype(n, size)
        except OSError:
            continue
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1
        return ImageFont.load_default()


@lru_cache(maxsize=8192)
def _glyphs(text: str, size: int):
    """The coverage mask (a Pillow "L" image, the font's line height tall) of one line of text."""
    Image, ImageDraw, _ = require_pillow()
    f = _font(size)
    w = max(_text_w(text, size), 1)
    h = size + 4
    im = Image.new("L", (w + 2, h), 0)
    ImageDraw.Draw(im).text((1, h // 2), text, fill=255, font=f, anchor="lm")
    return im


def _rgb(h: str) -> tuple[int, int, int]:
    return palette.hex_to_rgb(h)


def _text_w(s: str, size: int) -> int:
    f = _font(size)
    try:
        return int(f.getlength(s))
    except AttributeError:  # pragma: no cover
        return int(0.62 * size * len(s))


def _legend_rows(g: Grid, width: int):
    items = g.legend[:_LEGEND_MAX]
    placed, x, y = [], 0, 0
    for k, text in items:
        w = 18 + _text_w(text, 11) + 12
        if x and x + w > width:
            x, y = 0, y + 16
        placed.append((k, text, x, y))
        x += w
    more = f"+{len(g.legend) - _LEGEND_MAX} more (colours cycle hue, then lightness)" if len(g.legend) > _LEGEND_MAX else None
    return placed, (y + 16 if placed else 0) + (16 if more else 0), more


class _Panel:
    def __init__(self, g: Grid, show_legend: bool, titled: bool = True, cell: tuple[int, int] | None = None):
        self.g = g
        self.titled = titled
        rows, cols = g.shape
        self.cw, self.ch = cell or cell_size(g)
        self.labelled = _has_labels(g)
        self.head = _HEAD + (8 if self.labelled else 0)
        self.rlev, self.clev = nested_headers(g)
        left, top, self.rwidths = header_space(g, self.rlev, self.clev, self.head)
        self.gx, self.gy = left, (_TITLE if titled else 0) + top
        gw, gh = cols * self.cw, rows * self.ch
        self.width = max(left + gw, _text_w(g.title, 13) if titled else 0, 160)
        self.height = self.gy + gh
        self.legend = None
        if show_legend and g.legend:
            placed, lh, more = _legend_rows(g, max(self.width, 320))
            self.legend = (placed, self.height + 10, more, lh)
            self.height += 10 + lh
            self.width = max(self.width, max((x + 18 + _text_w(t, 11) for _, t, x, _ in placed), default=0))

    def paint(self, img: np.ndarray, draw, ox: int, oy: int) -> None:
        g, cw, ch = self.g, self.cw, self.ch
        rows, cols = g.shape
        x0, y0 = ox + self.gx, oy + self.gy
        # cells: colour table lookup, then upscale to cell size
        keys = g.keys
        uniq, inv = np.unique(keys, return_inverse=True)
        table = np.array([_rgb(g.fill(int(k))) for k in uniq], dtype=np.uint8)
        small = table[inv.reshape(keys.shape)]
        big = np.repeat(np.repeat(small, ch, axis=0), cw, axis=1)
        img[y0:y0 + rows * ch, x0:x0 + cols * cw] = big
        if cw >= 6:
            for r in range(rows + 1):
                img[min(y0 + r * ch, img.shape[0] - 1), x0:x0 + cols * cw + 1] = 0
            for c in range(cols + 1):
                img[y0:y0 + rows * ch + 1, min(x0 + c * cw, img.shape[1] - 1)] = 0
        else:
            img[y0, x0:x0 + cols * cw] = 0
            img[y0 + rows * ch, x0:x0 + cols * cw + 1] = 0
            img[y0:y0 + rows * ch, x0] = 0
            img[y0:y0 + rows * ch + 1, x0 + cols * cw] = 0
        if self.labelled:  # the boundaries of hierarchical modes (svg.py's path.modes)
            for c in mode_boundaries(g.col_shape, cols):
                img[y0:y0 + rows * ch + 1, x0 + c * cw - 1:x0 + c * cw + 1] = 0
            for r in mode_boundaries(g.row_shape, rows):
                img[y0 + r * ch - 1:y0 + r * ch + 1, x0:x0 + cols * cw + 1] = 0
        if g.groups is not None:
            gr = g.groups
            for r, c in zip(*np.nonzero(gr[1:, :] != gr[:-1, :])):
                y = y0 + (r + 1) * ch
                img[y - 1:y + 2, x0 + c * cw - 1:x0 + (c + 1) * cw + 2] = 0
            for r, c in zip(*np.nonzero(gr[:, 1:] != gr[:, :-1])):
                x = x0 + (c + 1) * cw
                img[y0 + r * ch - 1:y0 + (r + 1) * ch + 2, x - 1:x + 2] = 0

    def write_labels(self, im, ox: int, oy: int) -> None:
        """Labels as black ink pasted through cached glyph masks: each distinct line is rasterized once."""
        g, cw, ch = self.g, self.cw, self.ch
        rows, cols = g.shape
        x0, y0 = ox + self.gx, oy + self.gy
        lab = g.labels.astype(str)
        for r in range(rows):
            for c in range(cols):
                s = lab[r, c]
                if not s:
                    continue
                lines = s.split("\n")
                cy = y0 + r * ch + ch // 2 - 7 * (len(lines) - 1)
                colour = _rgb(g.ink(int(g.keys[r, c])))
                for i, line in enumerate(lines):
                    mask = _glyphs(line, 12)
                    w, h = mask.size
                    im.paste(colour, (x0 + c * cw + (cw - w) // 2, cy + 14 * i - h // 2), mask)

    def write(self, draw, ox: int, oy: int) -> None:
        g, cw, ch = self.g, self.cw, self.ch
        rows, cols = g.shape
        x0, y0 = ox + self.gx, oy + self.gy
        f10 = _font(10)
        grey = (68, 68, 68)
        if self.clev:  # one line per leaf of the columns' shape (svg.py draws the same)
            for j, lv in enumerate(self.clev):
                y = y0 - 3 - _LEVEL_H * j
                for start, span, t in lv:
                    draw.text((x0 + (start + span / 2) * cw, y), t, fill=grey, font=f10, anchor="ms")
                    if span > 1:
                        draw.line([(x0 + start * cw + 3, y + 2), (x0 + (start + span) * cw - 3, y + 2)], fill=(153, 153, 153))
        else:
            for c in range(0, cols, _header_step(cols, cw)):
                t = g.col_headers[c] if g.col_headers else str(c)
                draw.text((x0 + c * cw + cw / 2, y0 - 3), t, fill=grey, font=f10, anchor="ms")
        if self.rlev:
            x = x0 - 4
            for j, lv in enumerate(self.rlev):
                for start, span, t in lv:
                    draw.text((x, y0 + (start + span / 2) * ch), t, fill=grey, font=f10, anchor="rm")
                    if span > 1:
                        draw.line([(x + 2, y0 + start * ch + 3), (x + 2, y0 + (start + span) * ch - 3)], fill=(153, 153, 153))
                x -= self.rwidths[j]
        else:
            for r in range(0, rows, _header_step(rows, ch)):
                t = g.row_headers[r] if g.row_headers else str(r)
                draw.text((x0 - 4, y0 + r * ch + ch / 2), t, fill=grey, font=f10, anchor="rm")
        if self.legend:
            placed, ly, more, lh = self.legend
            f11 = _font(11)
            for k, text, x, y in placed:
                draw.rectangle([ox + x, oy + ly + y, ox + x + 12, oy + ly + y + 12], fill=_rgb(g.fill(k)), outline=(0, 0, 0))
                draw.text((ox + x + 16, oy + ly + y + 10), text, fill=(0, 0, 0), font=f11, anchor="ls")
            if more:
                draw.text((ox, oy + ly + lh - 4), more, fill=(68, 68, 68), font=f11, anchor="ls")


def render(fig: Figure) -> bytes:
    """The figure as PNG bytes."""
    notes = [] if fig.kind == "coords" else fig.notes  # a coords table already shows them
    Image, ImageDraw, _ = require_pillow()
    cell = uniform_cell(fig)
    panels = []
    for i, g in enumerate(fig.grids):
        nxt = fig.grids[i + 1] if i + 1 < len(fig.grids) else None
        panels.append(_Panel(g, nxt is None or not _same_legend(g, nxt), _titled(fig, g), cell))
    # place the panels like svg.render
    pos, total_w, y = arrange(fig, [(p.width, p.height) for p in panels], _PAD + 24)
    y += 12
    notes_y = y
    if notes:
        y += 15 * len(notes) + 8
        total_w = max(total_w, _PAD + max(_text_w(n, 11) for n in notes))
    total_w = max(total_w, _PAD + _text_w(fig.title, 15))
    W, H = total_w + _PAD, y + _PAD
    if W * H > MAX_PIXELS:  # before allocating the canvas
        raise LayoutError(f"png: the picture {fig.title!r} would be {W} x {H} pixels, past the limit of {MAX_PIXELS}; "
                          f"write .svg (big grids become one embedded image) or draw a smaller layout")
    img = np.full((H, W, 3), 255, dtype=np.uint8)
    for p, (px, py) in zip(panels, pos):
        p.paint(img, None, px, py)
    im = Image.fromarray(img, "RGB")
    for p, (px, py) in zip(panels, pos):
        if p.labelled:
            p.write_labels(im, px, py)
    draw = ImageDraw.Draw(im)
    draw.text((_PAD, _PAD), fig.title, fill=(0, 0, 0), font=_font(15, True))
    for p, (px, py) in zip(panels, pos):
        if p.titled:
            draw.text((px, py), p.g.title, fill=(0, 0, 0), font=_font(13, True))
        p.write(draw, px, py)
    f11 = _font(11)
    for i, line in enumerate(notes):
        draw.text((_PAD, notes_y + 12 + 15 * i), line, fill=(34, 34, 34), font=f11, anchor="ls")
    buf = io.BytesIO()
    im.save(buf, format="PNG", compress_level=1)
    return buf.getvalue()
