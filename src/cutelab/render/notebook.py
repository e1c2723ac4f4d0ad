"""What Jupyter shows for cutelab's values: the picture (interactive HTML, or SVG), else the text.

``figure_of(x)`` picks the picture a value has: a Figure itself, a Layout or a ComposedLayout its grid of
offsets, a Tensor its values on that grid, an MMA atom or TiledMMA its C, A and B (``mma_figure``; a tcgen05 UMMA's ``umma_figure``:
C's tensor-memory lanes and columns, where A and B are read from), a TiledCopy its source and
destination (``copy_figure``). ``html(x)`` and ``svg(x)`` are what the values'
``_repr_html_`` and ``_repr_svg_`` return (through ``cutelab.display``, which the package wires to them): None (IPython then shows the text) where there is
no picture, or where it would have more than ``NOTEBOOK_CELLS`` cells, so that displaying a
value never costs more than printing it would.

>>> import cutelab as cute
>>> op = cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16))
>>> "cutelab-fig" in cute.make_tiled_mma(op, (2, 2, 1))._repr_html_()
True
>>> figure_of(cute.make_layout(4)).title
'4:1'
"""

from __future__ import annotations

from typing import Any

from ..errors import LayoutError
from .figure import Figure

__all__ = ["figure_of", "html", "svg", "NOTEBOOK_CELLS"]

#: the most cells a notebook picture may have (a layout is drawn as an overview past 256 x 256)
NOTEBOOK_CELLS = 1 << 20
#: past this many threads a TiledMMA is coloured by warp (one colour per thread is confetti, and slow)
THREAD_COLORS = 256


def _cells(x: Any) -> int:
    """How many cells the picture of x would draw, from its tile sizes alone (nothing is built)."""
    from ..nvgpu.copy_atom import TiledCopy
    from ..nvgpu.mma_atom import MmaAtom, TiledMma

    if isinstance(x, TiledMma):
        from ..layout import size

        if size(x.thr_layout_vmnk) > 32 * THREAD_COLORS:  # more warps than colours
            return NOTEBOOK_CELLS + 1
        M, N, K = (int(x.get_tile_size(i)) for i in range(3))
    elif isinstance(x, MmaAtom):
        M, N, K = (int(s) for s in x.shape_mnk)
    elif isinstance(x, TiledCopy):
        from ..layout import size

        if size(x.layout_tv_tiled.shape[0]) > 4 * THREAD_COLORS:  # one colour per thread: not yet affordable
            return NOTEBOOK_CELLS + 1
        M, N = (int(t.size() if hasattr(t, "size") else t) for t in x.tiler_mn)
        return 2 * M * N
    else:
        return 0  # a layout: an overview past OVERVIEW_SIDE rows or columns
    return M * N + M * K + N * K


def figure_of(x: Any) -> Figure | None:
    """The picture of a cutelab value, or None where it has none (LayoutError: none that can be drawn)."""
    from ..layout import Layout
    from ..nvgpu.copy_atom import TiledCopy
    from ..nvgpu.mma_atom import MmaAtom
    from ..swizzle import ComposedLayout

    if isinstance(x, Figure):  # a picture already (Figure._repr_svg_ and _repr_html_ come here)
        return x
    if isinstance(x, (Layout, ComposedLayout)):
        from .figure import layout_figure

        return layout_figure(x)
    from ..tensor import Tensor

    if isinstance(x, Tensor):  # its values on the layout's grid
        from .figure import tensor_figure

        return tensor_figure(x)
    if isinstance(x, MmaAtom) and _is_umma(x):  # tcgen05: one thread issues it; C lives in tensor memory
        from .tcgen05 import umma_figure

        return umma_figure(x)
    if isinstance(x, MmaAtom):
        from ..layout import size
        from .mma import mma_figure

        vmnk = getattr(x, "thr_layout_vmnk", None)
        threads = size(vmnk) if vmnk is not None else size(x.thr_id)
        return mma_figure(x, color="thread" if threads <= THREAD_COLORS else "warp")
    if isinstance(x, TiledCopy):
        from .copy import copy_figure

        return copy_figure(x)
    return None


def _is_umma(x: Any) -> bool:
    from ..nvgpu.tcgen05.mma import Tcgen05MmaOp

    return isinstance(getattr(x, "op", None), Tcgen05MmaOp)


def _figure(x: Any) -> Figure | None:
    try:
        if _cells(x) > NOTEBOOK_CELLS:
            return None
        return figure_of(x)
    except (LayoutError, TypeError, ValueError):  # nothing to draw (basis strides, a runtime shape): the text
        return None


def html(x: Any) -> str | None:
    """x's picture as an interactive HTML fragment (hover, click, zoom), or None."""
    fig = _figure(x)
    if fig is None:
        return None
    from . import html as H

    return H.fragment(fig)


def svg(x: Any) -> str | None:
    """x's picture as SVG, or None."""
    fig = _figure(x)
    if fig is None:
        return None
    from . import svg as S

    return S.render(fig)
