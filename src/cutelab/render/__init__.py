"""Pictures of layouts: grids of offsets, TV layouts, partitions, steps of the algebra, atoms.

Builders turn layouts into a format-free ``Figure`` (figure.py, partition.py, explain.py);
back ends turn a Figure into text (text.py, CuTe's print_layout, optionally ANSI-coloured),
SVG (svg.py), TikZ/LaTeX (latex.py, CuTe's print_latex format), HTML (html.py) or PNG
(png.py, with Pillow, a dependency). Everything here is pure: functions
return strings (bytes for PNG); writing files is the caller's business (see cutelab.cli).

The values' own ``_repr_svg_``/``_repr_html_`` (layouts, tensors, atoms, Figures) reach
``notebook`` through ``cutelab.display``: nothing below this package imports it.

May import: ``cutelab``'s core (layouts, the algebra, swizzles, tensors, numeric types, ``limits``)
and the atoms (``cutelab.nvgpu``). Never ``cutelab.analysis`` or ``cutelab.kernel``: they import it.

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
from .tcgen05 import tmem_copy_for, tmem_figure, umma_figure
from .tma import tile_path_figure, tma_figure
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
    "umma_figure", "tmem_figure", "tmem_copy_for", "tma_figure", "tile_path_figure",
    "show_cells", "CELLS",
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


#: what the cells of a picture may show (the playground's and the .html files' toggle; `--cells`)
CELLS = ("value", "index", "coord")


def show_cells(fig: Figure, show: str) -> Figure:
    """The figure with each labelled cell showing its ``value`` (as drawn), ``index`` or ``coord``.

    The index is colexicographic over the panel's layout or tile where the panel has one (as the
    hover says); a panel without one (a TiledMMA's transposed B, bank maps) keeps its values.
    The coordinate is the hierarchical one where the panel draws a layout, else (row, col).
    Tables (index -> coordinate) are left as they are. The .html output keeps its values and
    opens with the toggle set instead (``fig.meta["show"]``), so that hovering still tells all.

    >>> f = show_cells(layout_figure("(2,(2,2)):(4,(1,2))"), "coord")
    >>> f.grids[0].labels[1].tolist()
    ['(1,(0,0))', '(1,(1,0))', '(1,(0,1))', '(1,(1,1))']
    >>> show_cells(layout_figure("(2,3):(3,1)"), "index").grids[0].labels.tolist()
    [['0', '2', '4'], ['1', '3', '5']]
    """
    import numpy as np

    from .html import cell_info

    if show not in CELLS:
        raise ValueError(f"show_cells: show must be one of {', '.join(CELLS)}, got {show!r}")
    fig.meta["show"] = show
    if show == "value":
        return fig
    for g, info in zip(fig.grids, cell_info(fig)):
        if g.labels is None or g.style == "table":
            continue
        rows, cols = g.shape
        rid = info["row_ids"] or list(range(rows))
        cid = info["col_ids"] or list(range(cols))
        if show == "index":
            if info["index_rows"] is None:
                continue
            new = np.asarray(rid)[:, None] + info["index_rows"] * np.asarray(cid)[None, :]
            lab = new.astype(str)
        elif info["coord_rows"] is not None:
            rc, cc = info["coord_rows"], info["coord_cols"]
            lab = np.array([[f"({r},{c})" if cc is not None else r for c in (cc or [None] * cols)] for r in rc])
        else:
            lab = np.array([[f"({r},{c})" for c in cid] for r in rid])
        g.labels = np.where(np.asarray(g.labels) == "", "", lab)
        g.text_sep = ""
    return fig


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
