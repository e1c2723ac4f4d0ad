"""Pictures of layouts: grids of offsets, TV layouts, partitions, steps of the algebra, atoms.

Builders turn layouts into a format-free ``Figure`` (figure.py, partition.py, explain.py);
back ends turn a Figure into text (text.py, CuTe's print_layout, optionally ANSI-coloured),
SVG (svg.py), TikZ/LaTeX (latex.py, CuTe's print_latex format), HTML (html.py) or PNG
(png.py, with Pillow, a dependency). Everything here is pure: functions
return strings (bytes for PNG); writing files is the caller's business (see cutelab.cli).

>>> import cutelab as cute
>>> from cutelab import render as R
>>> print(R.render(R.layout_figure("(2,2):(1,2)")), end="")
(2,2):(1,2)
      0   1 
    +---+---+
 0  | 0 | 2 |
    +---+---+
 1  | 1 | 3 |
    +---+---+
>>> R.format_for_path("tv.svg")
'svg'
"""

from __future__ import annotations

import os
from typing import Any

from .explain import OPS, explain, explain_complement, explain_composition, explain_divide, explain_product
from .figure import (
    LABEL_LIMIT, Figure, Grid, coords_figure, default_tile, layout_figure, make_tv_figure, tv_arrays, tv_figure,
)
from .copy import copy_figure, copy_tv_figure
from .mma import mma_figure, mma_tv_figure, tv_owners
from .swizzle import bank_figure, swizzle_figure
from .partition import (
    outer_ownership, outer_partition_figure, tiled_ownership, tiled_partition_figure, tv_ownership,
    tv_partition_figure,
)

__all__ = [
    "Figure", "Grid", "LABEL_LIMIT", "FORMATS", "render", "format_for_path",
    "layout_figure", "coords_figure", "tv_figure", "make_tv_figure", "tv_arrays", "default_tile",
    "explain", "explain_composition", "explain_complement", "explain_divide", "explain_product", "OPS",
    "tiled_ownership", "outer_ownership", "tv_ownership",
    "tiled_partition_figure", "outer_partition_figure", "tv_partition_figure",
    "mma_figure", "mma_tv_figure", "tv_owners", "copy_figure", "copy_tv_figure", "swizzle_figure", "bank_figure",
]

#: file suffix -> format name
FORMATS = {".svg": "svg", ".png": "png", ".txt": "text", ".tex": "latex", ".html": "html", ".htm": "html"}


def format_for_path(path: str | os.PathLike) -> str:
    """The format a file name asks for, by its suffix; ValueError naming the known suffixes."""
    suffix = os.path.splitext(str(path))[1].lower()
    if suffix not in FORMATS:
        raise ValueError(f"unknown picture format {suffix or '(no suffix)'!r} for {str(path)!r}; "
                         f"use one of {', '.join(sorted(FORMATS))}")
    return FORMATS[suffix]


def render(fig: Any, fmt: str = "text", color: bool = False) -> str | bytes:
    """A Figure (or a Layout, drawn as its grid) in a format: text, svg, latex, html (str) or png (bytes)."""
    if not isinstance(fig, Figure):
        fig = layout_figure(fig)
    if fmt == "text":
        from . import text

        return text.render(fig, color=color)
    if fmt == "svg":
        from . import svg

        return svg.render(fig)
    if fmt == "latex":
        from . import latex

        return latex.render(fig)
    if fmt == "html":
        from . import html

        return html.render(fig)
    if fmt == "png":
        from . import png

        return png.render(fig)
    raise ValueError(f"unknown picture format {fmt!r}; use one of text, svg, latex, html, png")
