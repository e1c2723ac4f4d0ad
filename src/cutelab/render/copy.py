"""Pictures of a TiledCopy: the source and destination TV layouts side by side.

As CuTe's ``print_latex(TiledCopy)`` draws them (print_latex_copy): the (M,N) tile twice, on
the left which thread and value *reads* each element (source), on the right which one
*writes* it (destination); cells labelled ``T#V#``, coloured by thread, the same colour for a
thread in both. For ``ldmatrix`` the two differ: a thread reads a row of eight 16-bit values
and receives two values of four different rows. Several holders of one element (a broadcast)
are handled as in the MMA picture: the label is CuTe's first (t,v), the tooltip lists all.

The core, :func:`copy_tv_figure`, takes the tiler and the two ``(thr,val) -> index`` layouts
over the column-major tile; :func:`copy_figure` reads them off a ``TiledCopy``.

>>> f = copy_tv_figure((2, 4), "(4,2):(2,1)", "(4,2):(1,4)")
>>> [g.title for g in f.grids]
['source (M,N) = (2,4)', 'destination (M,N) = (2,4)']
>>> f.grids[0].labels[:, 0].tolist(), f.grids[1].labels[:, 0].tolist()
(['T0\\nV0', 'T0\\nV1'], ['T0\\nV0', 'T1\\nV0'])
"""

from __future__ import annotations

from typing import Any, Sequence

from .. import int_tuple as it
from ..errors import LayoutError
from ..layout import Layout
from .figure import LABEL_LIMIT, Figure, Grid, _headers, _thread_legend, as_layout, tv_labels
from .mma import _sharing_note, _unlabel_if_big, thread_colors, tv_owners

__all__ = ["copy_tv_figure", "copy_figure", "tile_mn"]


def tile_mn(tiler: Any) -> tuple[int, int]:
    """(M, N) of a tiler: two ints, two shapes, or two Layouts (their sizes), as CuTe's tile_shape.

    >>> tile_mn((8, 4)), tile_mn(("(4,2):(1,4)", 16))
    ((8, 4), (8, 16))
    """
    try:
        modes = list(tiler)
    except TypeError:
        modes = []
    if len(modes) != 2:
        raise LayoutError(f"copy picture: the tiler must have two modes (M,N), got {tiler!r}")
    out = []
    for x in modes:
        if isinstance(x, (Layout, str)):
            x = as_layout(x).size()
        elif isinstance(x, tuple):
            x = it.product(x)
        try:
            x = int(x)
        except (TypeError, ValueError):
            raise LayoutError(f"copy picture: a tiler mode must be an int, a shape or a Layout, got {x!r}") from None
        if x <= 0:
            raise LayoutError(f"copy picture: tiler modes must be positive, got {tiler!r}")
        out.append(x)
    return out[0], out[1]


def copy_tv_figure(tiler_mn: Any, layout_src_tv: Any, layout_dst_tv: Any, title: str | None = None,
                   notes: Sequence[str] = (), cute_colors: bool = False) -> Figure:
    """A TiledCopy's picture from plain values: its tiler and source / destination TV layouts.

    Each layout maps (thr, val) to m + M*n in the (M, N) tile (TiledCopy's
    ``layout_src_tv_tiled`` / ``layout_dst_tv_tiled``); both must have the same threads.
    ``cute_colors``: CuTe's eight pastels by thread mod 8 instead of one colour per thread.

    >>> copy_tv_figure((2, 2), "(2,2):(1,2)", "(4,1):(1,0)")
    Traceback (most recent call last):
    ...
    cutelab.errors.LayoutError: copy picture: the source and destination layouts must have the same number of threads, got 2 and 4 ((2,2):(1,2), (4,1):(1,0))
    """
    M, N = tile_mn(tiler_mn)
    S, D = as_layout(layout_src_tv), as_layout(layout_dst_tv)
    tips = M * N <= LABEL_LIMIT  # else no labels, so no tooltips
    os_ = tv_owners(S, M, N, f"copy picture: source layout over (M,N)=({M},{N})", tips)
    od = tv_owners(D, M, N, f"copy picture: destination layout over (M,N)=({M},{N})", tips)
    if os_.threads != od.threads:
        raise LayoutError(f"copy picture: the source and destination layouts must have the same number of threads, "
                          f"got {os_.threads} and {od.threads} ({S}, {D})")
    T = os_.threads
    colors = thread_colors(T, cute_colors)
    legend = _thread_legend(T)
    grids = [Grid(f"{name} (M,N) = ({M},{N})", o.thr.copy(), tv_labels(o.thr, o.val), colors, _headers(M), _headers(N),
                  legend=legend, tips=o.tips.copy())
             for name, o in (("source", os_), ("destination", od))]
    meta: dict = {}
    out_notes = list(notes) + _unlabel_if_big(grids, meta) + [f"layout_src_tv = {S}", f"layout_dst_tv = {D}",
                               f"tile (M,N) = ({M},{N}); (t,v) -> m + M*n"]
    for name, o in (("source", os_), ("destination", od)):
        holes = int((o.count == 0).sum())
        if holes:
            out_notes.append(f"{name}: {holes} element(s) are held by no (t,v) (white)")
        s = _sharing_note(name, o)
        if s:
            out_notes.append(s)
    meta.update({"roles": ["S", "D"], "tile": (M, N), "comments": [f"Layout S TV: {S}", f"Layout D TV: {D}"],
                 "order": [os_.order, od.order]})
    return Figure(title if title is not None else f"TiledCopy tile (M,N) = ({M},{N}), {T} threads", grids,
                  out_notes, kind="copy", placement=[(0, 0), (0, 1)], meta=meta)


def copy_figure(tiled_copy: Any, title: str | None = None, cute_colors: bool = False) -> Figure:
    """The picture of a TiledCopy (``cutelab.make_tiled_copy_tv``, ``make_tiled_copy_A``, ...).

    Reads ``tiler_mn``, ``layout_src_tv_tiled`` and ``layout_dst_tv_tiled``, as CuTe DSL names them.

    >>> import cutelab as cute
    >>> atom = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 4), cute.Float16)
    >>> f = copy_figure(cute.make_tiled_copy_tv(atom, cute.make_layout((32, 1)), cute.make_layout((1, 8))))
    >>> f.title
    'TiledCopy LdMatrix8x8x16bOp(transpose=False, num_matrices=4, unpack_bits=None), Float16'
    """
    try:
        tiler, S, D = tiled_copy.tiler_mn, tiled_copy.layout_src_tv_tiled, tiled_copy.layout_dst_tv_tiled
    except AttributeError:
        raise LayoutError(f"copy_figure: expected a TiledCopy (with tiler_mn, layout_src_tv_tiled, "
                          f"layout_dst_tv_tiled), got {type(tiled_copy).__name__}") from None
    notes = []
    tv = getattr(tiled_copy, "layout_tv_tiled", None)
    if tv is not None:
        notes.append(f"layout_tv_tiled = {tv}")
    notes.append("tiler_mn = (" + ",".join(str(t) for t in tiler) + ")")
    if title is None:
        op, vt = getattr(tiled_copy, "op", None), getattr(tiled_copy, "value_type", None)
        title = "TiledCopy " + (repr(op) if op is not None else type(tiled_copy).__name__) + (f", {vt}" if vt else "")
    return copy_tv_figure(tiler, S, D, title=title, notes=notes, cute_colors=cute_colors)
