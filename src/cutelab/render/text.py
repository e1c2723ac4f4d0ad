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
    return f"\x1b[48;5;{palette.ansi256(fill)}m\x1b[38;5;16m{text}{_RESET}"


def _flat_labels(g: Grid) -> np.ndarray:
    if g.labels is None:
        return np.full(g.keys.shape, "", dtype=str)
    return np.char.replace(g.labels.astype(str), "\n", g.text_sep)


def grid_text(g: Grid, color: bool = False, min_width: int = 1) -> list[str]:
    """The lines of one grid in print_layout format."""
    rows, cols = g.shape
    labels = _flat_labels(g)
    if g.style == "table":
        out = []
        for r in range(rows):
            cell = labels[r, 0]
            if color and g.keys[r, 0] >= 0:
                cell = _paint(cell, g.fill(int(g.keys[r, 0])))
            out.append(f"{g.row_headers[r] if g.row_headers else r} -> {cell}")
        return out
    w = max(min_width, int(np.char.str_len(labels).max()) if labels.size else 1, len(str(cols - 1)))
    delim = "    " + ("+" + "-" * (w + 2)) * cols + "+"
    out = ["    " + "".join(f"  {n:>{w}} " for n in range(cols))]
    fills = None
    if color:
        fills = {int(k): g.fill(int(k)) for k in np.unique(g.keys)}
    for m in range(rows):
        out.append(delim)
        head = g.row_headers[m] if g.row_headers else str(m)
        cells = []
        for n in range(cols):
            s = f" {labels[m, n]:>{w}} "
            if color:
                s = _paint(s, fills[int(g.keys[m, n])])
            cells.append("|" + s)
        out.append(f"{head:>2}  " + "".join(cells) + "|")
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


def render(fig: Figure, color: bool = False) -> str:
    """The whole figure as text: title, each grid (titled when there are several), notes."""
    lines: list[str] = [fig.title]
    for g in fig.grids:
        if len(fig.grids) > 1:
            lines.append("")
            lines.append(g.title)
        lines.extend(grid_text(g, color=color, min_width=g.min_width))
        lines.extend(_legend(g, color))
    if fig.notes and fig.kind != "coords":
        lines.append("")
        lines.extend(fig.notes)
    return "\n".join(lines) + "\n"
