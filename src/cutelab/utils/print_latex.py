"""LaTeX (TikZ) pictures of a layout and of a thread-value layout, printed as CuTe DSL prints them.

``print_latex(layout)`` and ``print_latex_tv(layout_tv, tile_mn)`` are CuTe DSL's
``cutlass.utils.print_latex`` / ``cutlass.cute.viz`` functions: they write a standalone LaTeX
document to stdout (or hand the ``tikzpicture`` to ``render_func``), line for line as CuTe DSL
4.8.1 does, so that a program's output can be compared and compiled with ``pdflatex`` alike.
cutelab's own pictures (``cutelab.render``, with its LaTeX back end) draw more; these two keep
the DSL's text.

>>> import cutelab as cute
>>> print_latex(cute.make_layout(2))  # a rank-1 layout is drawn as a column
%% Layout: {} (2,1):(1,0)
\\documentclass[convert]{standalone}
\\usepackage{tikz}
\\begin{document}
\\begin{tikzpicture}[x={(0cm,-1cm)},y={(1cm,0cm)},every node/.style={minimum size=1cm, outer sep=0pt}]
\\node[fill=
black!00
] at (0,0) {0};
<BLANKLINE>
\\node[fill=
black!40
] at (1,0) {1};
<BLANKLINE>
\\draw[color=black,thick,shift={(-0.5,-0.5)}] (0,0) grid (2,1);
<BLANKLINE>
<BLANKLINE>
\\node at (0,-1) {\\Large{\\texttt{0}}};
<BLANKLINE>
\\node at (1,-1) {\\Large{\\texttt{1}}};
<BLANKLINE>
\\node at (-1,0) {\\Large{\\texttt{0}}};
<BLANKLINE>
\\end{tikzpicture}
\\end{document}
"""

from __future__ import annotations

import colorsys
from types import MappingProxyType
from typing import Any, Callable, List, NamedTuple, Optional

from .. import int_tuple as it
from ..errors import LayoutError
from ..layout import Layout, append, make_layout
from ..swizzle import ComposedLayout

__all__ = ["print_latex", "print_latex_tv", "tikz_color_bwx8", "tikz_color_white", "tikz_color_tv",
           "tikz_color_rainbow", "tikz_escape", "Band", "PALETTES"]

# percent black of the eight greys, light and dark alternating so that neighbours differ
_GREYS = (0, 40, 20, 60, 10, 50, 30, 70)

# the eight pastel fills of a TV picture, by thread modulo 8 (red, green, blue out of 255)
_PASTELS = ((175, 175, 255), (175, 255, 175), (255, 255, 175), (255, 175, 175),
            (210, 210, 255), (210, 255, 210), (255, 255, 210), (255, 210, 210))


def _rgb(r: int, g: int, b: int) -> str:
    return "{rgb,255:red,%d;green,%d;blue,%d}" % (r, g, b)


def tikz_color_bwx8(idx: int) -> str:
    """The grey of index idx (eight greys, cycled): ``black!40``."""
    return "black!%02d" % _GREYS[idx % 8]


def tikz_color_white(idx: int) -> str:
    """White for every index."""
    return "white"


def tikz_color_tv(tid: int, vid: int) -> str:
    """The pastel of thread tid (eight, cycled); the value index is not used."""
    return _rgb(*_PASTELS[tid % 8])


def tikz_color_rainbow(index: int, count: int, saturation: float = 1.0) -> str:
    """A hue of the colour wheel: index out of count (at least 1), full value, given saturation."""
    count = max(count, 1)
    r, g, b = colorsys.hsv_to_rgb((index % count) / count, saturation, 1.0)
    return _rgb(round(r * 255), round(g * 255), round(b * 255))


class Band(NamedTuple):
    """A horizontal band of a TV cell: from lo to hi (fractions of the cell's height, 0 at its top)."""

    lo: float
    hi: float
    color: str


def _pastel(num_tid: int, num_vid: int) -> Callable:
    return tikz_color_tv


def _rainbow(num_tid: int, num_vid: int) -> Callable:
    return lambda tid, vid: tikz_color_rainbow(tid, num_tid)


def _rainbow_dual(num_tid: int, num_vid: int) -> Callable:
    return lambda tid, vid: [Band(0.0, 0.5, tikz_color_rainbow(tid, num_tid)),
                             Band(0.5, 1.0, tikz_color_rainbow(vid, num_vid, saturation=0.45))]


def _white(num_tid: int, num_vid: int) -> Callable:
    return lambda tid, vid: "white"


def _bw(num_tid: int, num_vid: int) -> Callable:
    return lambda tid, vid: tikz_color_bwx8(tid)


def _bw_dual(num_tid: int, num_vid: int) -> Callable:
    return lambda tid, vid: [Band(0.0, 0.5, tikz_color_bwx8(tid)),
                             Band(0.5, 1.0, "black!%d" % round(0.45 * _GREYS[vid % 8]))]


# palette name -> factory(num_tid, num_vid) -> cell(tid, vid) -> a fill or a list of Bands
PALETTES = MappingProxyType({"pastel": _pastel, "rainbow": _rainbow, "rainbow_dual": _rainbow_dual,
                             "white": _white, "bw": _bw, "bw_dual": _bw_dual})

_TEX_SPECIALS = {"\\": r"\textbackslash{}", "_": r"\_", "#": r"\#", "&": r"\&", "%": r"\%", "$": r"\$",
                 "{": r"\{", "}": r"\}", "^": r"\textasciicircum{}", "~": r"\textasciitilde{}"}


def tikz_escape(s: str) -> str:
    """s with LaTeX's special characters escaped (for titles)."""
    return "".join(_TEX_SPECIALS.get(c, c) for c in s)


_PICTURE = ("\\begin{tikzpicture}[x={(0cm,-1cm)},y={(1cm,0cm)},"
            "every node/.style={minimum size=1cm, outer sep=0pt}]")


class _Out:
    """Where the text goes: print() chunk by chunk (a whole document), or one string to render_func."""

    def __init__(self, render_func: Optional[Callable[[str], None]]):
        self.render_func = render_func
        self.chunks: List[str] = []

    def __call__(self, *parts: Any) -> None:
        if self.render_func is None:
            print(*parts)
        else:
            self.chunks.append(" ".join(str(p) for p in parts))

    def done(self) -> None:
        if self.render_func is not None:
            self.render_func(" ".join(self.chunks))


def _static_layout(x: Any, what: str) -> Any:
    if isinstance(x, (Layout, ComposedLayout)):
        lay = x.outer if isinstance(x, ComposedLayout) else x
        leaves = it.flatten_to_tuple(lay.shape) + it.flatten_to_tuple(lay.stride)
        if all(type(v) is int for v in leaves):
            return x
        raise LayoutError(f"{what}({x}): requires a static layout (every shape and stride an int)")
    raise LayoutError(f"{what}: expected a Layout or ComposedLayout, got {type(x).__name__} {x!r}")


def _index_labels(out: _Out, M: int, N: int) -> None:
    out("\\draw[color=black,thick,shift={(-0.5,-0.5)}] (0,0) grid (%d,%d);\n\n" % (M, N))
    for m in range(M):
        out("\\node at (%d,%d) {\\Large{\\texttt{%d}}};\n" % (m, -1, m))
    for n in range(N):
        out("\\node at (%d,%d) {\\Large{\\texttt{%d}}};\n" % (-1, n, n))


def print_latex(x: Any, *, color: Callable[[int], str] = tikz_color_bwx8,
                render_func: Optional[Callable[[str], None]] = None) -> None:
    """Print a standalone LaTeX document drawing layout x (rank 1 or 2) as a grid of its offsets, each
    cell filled by color(offset); with render_func, pass it the tikzpicture instead of printing.
    A rank-1 layout is drawn as a column (CuTe DSL 4.8.1 appends the mode, then fails to unpack it)."""
    x = _static_layout(x, "print_latex")
    r = it.rank(x.shape)
    if r > 2:
        raise LayoutError(f"print_latex({x}): requires a layout of rank <= 2 to print, got rank {r}")
    if r <= 1:  # as a column: one more mode of size 1
        if not isinstance(x, Layout):
            raise LayoutError(f"print_latex({x}): a composed layout must be of rank 2 to print")
        x = append(x, make_layout(1, stride=0))
    out = _Out(render_func)
    if render_func is None:
        out("%% Layout: {}", x)
        out("\\documentclass[convert]{standalone}")
        out("\\usepackage{tikz}")
        out("\\begin{document}")
    out(_PICTURE)
    M, N = it.product_each(x.shape)
    for m in range(M):
        for n in range(N):
            idx = x((m, n))
            out("\\node[fill=")
            out(color(idx))
            out("] at (%d,%d) {%d};\n" % (m, n, idx))
    _index_labels(out, M, N)
    out("\\end{tikzpicture}")
    if render_func is None:
        out("\\end{document}")
    out.done()


def print_latex_tv(layout_tv: Any, tile_mn: Any, *, color: Callable[[int, int], Any] = tikz_color_tv,
                   palette: Any = None, title: Optional[str] = None, axis_labels: bool = False,
                   render_func: Optional[Callable[[str], None]] = None) -> None:
    """Print a standalone LaTeX document drawing which thread and value own each element of an M x N
    tile: layout_tv maps (thread, value) to an index of tile_mn (a shape or a rank-2 layout).

    Each cell is filled by color(tid, vid), or by palette (a name in PALETTES or a factory
    palette(num_tid, num_vid) -> cell(tid, vid) returning a fill or a list of Bands), and labelled
    'T<tid> \\\\ V<vid>' (the first thread and value to reach it). title adds lines above the
    picture, axis_labels the directions of M and N.
    """
    layout_tv = _static_layout(layout_tv, "print_latex_tv")
    if it.rank(layout_tv.shape) != 2:
        raise LayoutError(f"print_latex_tv({layout_tv}): requires a (thread, value) layout of rank 2")
    tile = tile_mn if isinstance(tile_mn, Layout) else make_layout(tile_mn)
    if it.rank(tile.shape) != 2 or not all(type(v) is int for v in tuple(tile.shape) + tuple(tile.stride)):
        raise LayoutError(f"print_latex_tv({layout_tv}, {tile_mn}): the tile must be a static rank-2 shape "
                          f"or layout with int modes, got {tile}")
    if palette is None:
        cell = color
    else:
        if isinstance(palette, str):
            if palette not in PALETTES:
                raise LayoutError(f"print_latex_tv: unknown palette {palette!r}; choose one of "
                                  f"{sorted(PALETTES)} or pass a factory")
            palette = PALETTES[palette]
        cell = palette(it.product(layout_tv.shape[0]), it.product(layout_tv.shape[1]))
    out = _Out(render_func)
    if render_func is None:
        out("%% Layout TV: {}", layout_tv)
        out("\\documentclass[convert]{standalone}")
        out("\\usepackage{tikz}")
        out("\\begin{document}")
    out(_PICTURE + "\n")
    (M, N), (dm, dn) = tile.shape, tile.stride
    seen = set()
    for tid in range(it.product(layout_tv.shape[0])):
        for vid in range(it.product(layout_tv.shape[1])):
            idx = layout_tv((tid, vid))
            m, n = (idx // dm) % M if dm else 0, (idx // dn) % N if dn else 0
            if (m, n) in seen:
                continue  # the first (thread, value) to reach a cell labels it
            seen.add((m, n))
            fills = cell(tid, vid)
            for band in ([Band(0.0, 1.0, fills)] if isinstance(fills, str) else fills):
                out("\\path[fill=%s] (%g,%g) rectangle (%g,%g);\n"
                    % (band.color, m - 0.5 + band.lo, n - 0.5, m - 0.5 + band.hi, n + 0.5))
            out("\\node at (%d,%d) {\\shortstack{T%d \\\\ V%d}};\n" % (m, n, tid, vid))
    _index_labels(out, M, N)
    if axis_labels:
        out("\\node at (%g,%g) {\\Large N (col) $\\rightarrow$};\n" % (-1.7, N / 2.0))
        out("\\node[rotate=90] at (%g,%g) {\\Large $\\leftarrow$ M (row)};\n" % (M / 2.0, -2.0))
    if title:
        lines = " \\\\ ".join("\\texttt{" + tikz_escape(t) + "}" for t in title.split("\n"))
        out("\\node[anchor=south] at (%g,%g) {\\shortstack{%s}};\n" % (-2.2, N / 2.0, lines))
    out("\\end{tikzpicture}")
    if render_func is None:
        out("\\end{document}")
    out.done()
