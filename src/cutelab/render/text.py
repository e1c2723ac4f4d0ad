"""Figures as terminal text: CuTe's print_layout grid, optionally coloured with ANSI 256 colours.

The grid follows cutlass ``print_layout``: the layout on the first line, a header row of column
indices, ``+---+`` separators, row indices on the left, every cell right-aligned in a field as
wide as the widest label (for a layout: the digits of its cosize, as CuTe does). Two-line labels
(``T0\\nV1``) are written on one line (``T0V1``). With ``color=True`` each cell gets its fill
as an xterm-256 background, and a legend of the colours follows the grid.

>>> from cutelab.render.figure import layout_figure
>>> print(render(layout_figure("(2,3):(3,1)")), end="")
(2,3):(3,1)
      0   1   2 
    +---+---+---+
 0  | 0 | 1 | 2 |
    +---+---+---+
 1  | 3 | 4 | 5 |
    +---+---+---+
"""

from __future__ import annotations

import numpy as np

from . import palette
from .figure import Figure, Grid

__all__ = ["render", "grid_text"]

_RESET = "\x1b[0m"


def _paint(text: str, fill: str) -> str:
    """text on the xterm colour nearest to fill, in black or white, whichever contrasts more there."""
    k = palette.ansi256(fill)
    fg = 16 if palette.ink(palette.xterm_hex(k)) == "#000000" else 231
    return f"\x1b[48;5;{k}m\x1b[38;5;{fg}m{text}{_RESET}"


def _flat_labels(g: Grid) -> np.ndarray:
    if g.labels is None:
        return np.full(g.keys.shape, "", dtype=str)
    return np.char.replace(g.labels.astype(str), "\n", g.text_sep)


#: text grids wider than this many characters are wrapped into bands of columns
WRAP_WIDTH = 120


def grid_text(g: Grid, color: bool = False, min_width: int = 1, width: int | None = WRAP_WIDTH) -> list[str]:
    """The lines of one grid in print_layout format.

    Row indices are right-aligned in a field as wide as the widest one (so rows 100 and up stay
    in line); a grid wider than ``width`` characters is wrapped into bands of columns, each band
    a grid of its own under a line naming its columns (``width=None``: never wrap).
    """
    rows, cols = g.shape
    labels = _flat_labels(g)
    heads = g.row_headers if g.row_headers else [str(r) for r in range(rows)]
    if g.style == "table":
        hw = max((len(h) for h in heads), default=1)
        out = []
        for r in range(rows):
            cell = labels[r, 0]
            if color and g.keys[r, 0] >= 0:
                cell = _paint(cell, g.fill(int(g.keys[r, 0])))
            out.append(f"{heads[r]:>{hw}} -> {cell}")
        return out
    col_heads = g.col_headers if g.col_headers else [str(n) for n in range(cols)]
    w = max(min_width, int(np.char.str_len(labels).max()) if labels.size else 1,
            max((len(h) for h in col_heads), default=1))
    hw = max(2, max((len(h) for h in heads), default=1))
    lead = " " * (hw + 2)
    per = cols if width is None else max(1, (width - len(lead) - 1) // (w + 3))
    fills = None
    if color:
        fills = {int(k): g.fill(int(k)) for k in np.unique(g.keys)}
    out: list[str] = []
    for c0 in range(0, cols, per):
        c1 = min(cols, c0 + per)
        if per < cols:
            out.append(f"columns {col_heads[c0]}..{col_heads[c1 - 1]} of {cols}:")
        delim = lead + ("+" + "-" * (w + 2)) * (c1 - c0) + "+"
        out.append(lead + "".join(f"  {col_heads[n]:>{w}} " for n in range(c0, c1)))
        for m in range(rows):
            out.append(delim)
            cells = []
            for n in range(c0, c1):
                s = f" {labels[m, n]:>{w}} "
                if color:
                    s = _paint(s, fills[int(g.keys[m, n])])
                cells.append("|" + s)
            out.append(f"{heads[m]:>{hw}}  " + "".join(cells) + "|")
        out.append(delim)
    return out


def _legend(g: Grid, color: bool, limit: int = 64) -> list[str]:
    if not g.legend or not color:
        return []
    items = g.legend[:limit]
    parts = [_paint(f" {text} ", g.fill(k)) for k, text in items]
    line = "legend: " + " ".join(parts)
    if len(g.legend) > limit:
        line += f" ... (+{len(g.legend) - limit} more)"
    return [line]


def render(fig: Figure, color: bool = False, width: int | None = WRAP_WIDTH) -> str:
    """The whole figure as text: title, each grid (titled when there are several), notes.

    Grids wider than ``width`` characters wrap into bands of columns (None: never wrap).
    """
    lines: list[str] = [fig.title]
    for g in fig.grids:
        if len(fig.grids) > 1:
            lines.append("")
            lines.append(g.title)
        lines.extend(grid_text(g, color=color, min_width=g.min_width, width=width))
        lines.extend(_legend(g, color))
    if fig.notes and fig.kind != "coords":
        lines.append("")
        lines.extend(fig.notes)
    return "\n".join(lines) + "\n"
