"""Figures as LaTeX/TikZ, in the format of CuTe's print_latex and print_latex_tv.

The document is CuTe's: ``\\documentclass[convert]{standalone}``, ``\\usepackage{tikz}``, one
tikzpicture with CuTe's axes (``x={(0cm,-1cm)},y={(1cm,0cm)}``: node ``(m,n)`` is row m,
column n) and its ``box`` style; a cell is ``\\node[box,fill=...] at (m,n) {label};`` and
row/column indices are ``\\node at (m,-1)`` / ``(-1,n)`` in ``\\texttt``. Plain layouts use
CuTe's greys (``black!00``, ``black!40``, ... by offset mod 8); thread colours are defined
once with ``\\definecolor`` from our palette, and T#/V# labels use ``\\shortstack`` as CuTe
does. Several panels are stacked top to bottom with ``scope`` shifts; thick borders between
groups (tiles, blocks) are ``\\draw[line width=2pt]`` segments. Compile with ``pdflatex``.

A TiledMMA (kind "mma") and a TiledCopy (kind "copy") are written line for line as CuTe C++'s
``print_latex`` writes them (print_latex_mma / print_latex_copy in cute/util/print_latex.hpp):
its header, one ``\\node[fill=...]`` per cell in CuTe's order, its ``grid`` draws and index
nodes at CuTe's coordinates (A at columns -K-1..-2, B at rows -K-1..-2, the copy's destination
N+3 columns to the right). Only the fills differ: one ``{rgb,255:...}`` colour per thread from
our palette instead of CuTe's eight that repeat every 8 threads (``cute_colors=True`` in the
builders gives CuTe's, and then every line but the ``%`` comments is CuTe's). Labels on a dark
fill are white (``text=white``, where palette.ink says white contrasts more), in every kind of
picture; CuTe's own colours are all light, so its lines stay as they are.
"""

from __future__ import annotations

import numpy as np

from . import palette
from .figure import LABEL_LIMIT, Figure, Grid

__all__ = ["render", "LIGHT_CELLS", "memory_estimate", "capacity_warning", "PDFLATEX_WORDS"]

#: pictures with more cells than this are written in the light encoding (see _grid_tex_light)
LIGHT_CELLS = 2048

_HEADER = (
    "\\documentclass[convert]{standalone}\n"
    "\\usepackage{tikz}\n\n"
    "\\begin{document}\n"
    "\\begin{tikzpicture}[x={(0cm,-1cm)},y={(1cm,0cm)},"
    "box/.style={rectangle,draw=black,thick,minimum size=1cm,anchor=center, font=\\Large}]\n\n"
)
_FOOTER = "\\end{tikzpicture}\n\\end{document}\n"

_CUTE_GREYS = ["black!00", "black!40", "black!20", "black!60", "black!10", "black!50", "black!30", "black!70"]


def _tex(s: str) -> str:
    rep = {"\\": "\\textbackslash{}", "_": "\\_", "%": "\\%", "&": "\\&", "#": "\\#", "$": "\\$",
           "{": "\\{", "}": "\\}", "^": "\\^{}", "~": "\\~{}",
           "<": "\\textless{}", ">": "\\textgreater{}"}  # S<3,4,3>: OT1 fonts print < and > as inverted ! and ?
    return "".join(rep.get(ch, ch) for ch in s)


def _grey_hex(name: str) -> str:
    """The colour xcolor mixes for black!NN (NN% black in white)."""
    v = round(255 * (1 - int(name.split("!")[1]) / 100))
    return f"#{v:02X}{v:02X}{v:02X}"


def _ink(fill_hex: str) -> str:
    """",text=white" where white labels contrast more with the fill than black ones (palette.ink), else ""."""
    return ",text=white" if palette.ink(fill_hex) == "#FFFFFF" else ""


def _label(s: str) -> str:
    if "\n" in s:
        return "\\shortstack{" + " \\\\ ".join(_tex(p) for p in s.split("\n")) + "}"
    return _tex(s)


def _colour_names(grids: list[Grid]) -> tuple[list[str], dict[str, str]]:
    """\\definecolor lines and a map hex -> colour name, for the grids not drawn in CuTe's greys."""
    defs, names = [], {}
    for g in grids:
        for k in np.unique(g.keys).tolist() + [k for k, _ in g.legend]:
            h = g.fill(int(k))
            if h not in names:
                name = f"cl{len(names)}"
                names[h] = name
                defs.append(f"\\definecolor{{{name}}}{{HTML}}{{{h[1:]}}}")
    return defs, names


def _grid_tex(g: Grid, names: dict[str, str], cute_greys: bool, top: int) -> list[str]:
    rows, cols = g.shape
    out = [f"% {g.title}", f"\\begin{{scope}}[shift={{({top},0)}}]",
           f"\\node[anchor=south west,font=\\Large\\bfseries] at (-1.6,-1.5) {{{_tex(g.title)}}};"]
    labelled = g.labels is not None and rows * cols <= LABEL_LIMIT
    for m in range(rows):
        for n in range(cols):
            k = int(g.keys[m, n])
            fill = _CUTE_GREYS[k] if cute_greys and k >= 0 else names[g.fill(k)]
            text = _label(str(g.labels[m, n])) if labelled else ""
            ink = (_ink(_grey_hex(fill)) if cute_greys and k >= 0 else _ink(g.fill(k))) if text else ""
            out.append(f"\\node[box,fill={fill}{ink}] at ({m},{n}) {{{text}}};")
    return out + _grid_frame(g, names, cute_greys)


def _grid_frame(g: Grid, names: dict[str, str], cute_greys: bool) -> list[str]:
    """Group borders, row and column indices, the legend, and the end of the panel's scope."""
    rows, cols = g.shape
    out = []
    if g.groups is not None:
        gr = g.groups
        for r, c in zip(*np.nonzero(gr[1:, :] != gr[:-1, :])):
            out.append(f"\\draw[line width=2pt] ({r + 0.5},{c - 0.5}) -- ({r + 0.5},{c + 0.5});")
        for r, c in zip(*np.nonzero(gr[:, 1:] != gr[:, :-1])):
            out.append(f"\\draw[line width=2pt] ({r - 0.5},{c + 0.5}) -- ({r + 0.5},{c + 0.5});")
    for m in range(rows):
        out.append(f"\\node at ({m},-1) {{\\Large{{\\texttt{{{_tex(g.row_headers[m] if g.row_headers else str(m))}}}}}}};")
    for n in range(cols):
        out.append(f"\\node at (-1,{n}) {{\\Large{{\\texttt{{{_tex(g.col_headers[n] if g.col_headers else str(n))}}}}}}};")
    if g.legend and not cute_greys:
        for i, (k, text) in enumerate(g.legend[:64]):
            r, c = rows + 1 + (i // 8), (i % 8) * 3
            out.append(f"\\node[box,fill={names[g.fill(k)]},minimum size=0.6cm] at ({r},{c}) {{}};")
            out.append(f"\\node[anchor=west] at ({r},{c + 0.4}) {{{_tex(text)}}};")
    out.append("\\end{scope}")
    return out


def _runs(keys: np.ndarray) -> list[tuple[int, int, int, int]]:
    """(key, row, first column, length) of every run of equal keys along the rows."""
    out = []
    rows, cols = keys.shape
    for m in range(rows):
        row = keys[m]
        starts = np.flatnonzero(np.r_[True, row[1:] != row[:-1]])
        ends = np.r_[starts[1:], cols]
        out += [(int(row[a]), m, int(a), int(b - a)) for a, b in zip(starts, ends)]
    return out


def _grid_tex_light(g: Grid, names: dict[str, str], cute_greys: bool, top: int) -> list[str]:
    """The light encoding of a big grid: one \\fill path per colour (runs of equal cells merged),
    one \\draw grid, and a plain node per label. TeX keeps every node of a picture in memory
    until the page is shipped: CuTe's box-per-cell form runs out of pdflatex's main memory at
    about 8,000 cells; this one has a few hundred paths and a light node per label."""
    rows, cols = g.shape
    out = [f"% {g.title} (light encoding: {rows * cols} cells)", f"\\begin{{scope}}[shift={{({top},0)}}]",
           f"\\node[anchor=south west,font=\\Large\\bfseries] at (-1.6,-1.5) {{{_tex(g.title)}}};"]
    by_fill: dict[str, list[str]] = {}
    for k, m, n, w in _runs(g.keys):
        fill = _CUTE_GREYS[k] if cute_greys and k >= 0 else names[g.fill(k)]
        by_fill.setdefault(fill, []).append(f"({m - 0.5},{n - 0.5}) rectangle ++(1,{w})")
    for fill, rects in by_fill.items():
        for i in range(0, len(rects), 64):  # one path per 64 runs: short lines, bounded path size
            out.append(f"\\fill[{fill}] " + " ".join(rects[i:i + 64]) + ";")
    out.append(f"\\draw[color=black,thick,shift={{(-0.5,-0.5)}}] (0,0) grid ({rows},{cols});")
    if g.labels is not None and rows * cols <= LABEL_LIMIT:
        fills = [[_grey_hex(_CUTE_GREYS[k]) if cute_greys and k >= 0 else g.fill(k) for k in row]
                 for row in g.keys.tolist()]
        out += _row_labels(g.labels, fills, 0, 0)
    return out + _grid_frame(g, names, cute_greys)


#: the light encoding's label macros: a cell is a 1cm-wide box, a line of its label a centred box
_LIGHT_MACROS = ("\\def\\cutelabV#1{\\vbox to 1cm{\\baselineskip=-1pt\\lineskip=1pt\\vss#1\\vss}}\n"
                 "\\def\\cutelabC#1{\\hbox to 1cm{\\hss\\cutelabV{#1}\\hss}}\n"
                 "\\def\\cutelabW#1{\\hbox to 1cm{\\hss\\color{white}\\cutelabV{#1}\\hss}}\n"
                 "\\def\\cutelabL#1{\\hbox to 1cm{\\hss#1\\hss}}\n")


def _row_labels(labels: np.ndarray, fills: list[list[str]], dr: int, dc: int) -> list[str]:
    """The labels of a grid, one \\pgftext per row of 1cm cells (no node per cell: a tenth of the
    memory), white where palette.ink says so; the grid's cell (m, n) is at (m + dr, n + dc)."""
    out = []
    rows, cols = labels.shape
    for m in range(rows):
        cells = []
        for n in range(cols):
            lines = str(labels[m, n]).split("\n") if labels[m, n] else []
            body = "".join(f"\\cutelabL{{{_tex(x)}}}" for x in lines)
            cells.append(f"\\cutelab{'W' if lines and _ink(fills[m][n]) else 'C'}{{{body}}}")
        out.append(f"\\pgftext[at={{\\pgfpointxy{{{m + dr}}}{{{dc - 0.5}}}}},left]{{\\Large " + "".join(cells) + "}")
    return out


def _height(g: Grid, cute_greys: bool) -> int:
    rows = g.shape[0]
    leg = 0 if (not g.legend or cute_greys) else 1 + (min(len(g.legend), 64) + 7) // 8
    return rows + leg + 3


_CUTE_HEADER = (
    "\\documentclass[convert]{standalone}\n"
    "\\usepackage{tikz}\n\n"
    "\\begin{document}\n"
    "\\begin{tikzpicture}[x={(0cm,-1cm)},y={(1cm,0cm)},every node/.style={minimum size=1cm, outer sep=0pt}]\n"
)


def _cute_fill(hex_colour: str) -> str:
    r, g, b = palette.hex_to_rgb(hex_colour)
    return f"{{rgb,255:red,{r};green,{g};blue,{b}}}"


def _cute_cells(g: Grid, labels, order, dr: int, dc: int) -> list[str]:
    """One CuTe node per held cell, in the builder's order (meta["order"]), shifted by (dr, dc)."""
    out = []
    for r, c in order.tolist():
        h = g.fill(int(g.keys[r, c]))
        out.append(f"\\node[fill={_cute_fill(h)}{_ink(h)}] at ({r + dr},{c + dc}) {{{_label(str(labels[r, c]))}}};")
    return out


def _cute_grid(r0: int, c0: int, r1: int, c1: int) -> list[str]:
    return [f"\\draw[color=black,thick,shift={{(-0.5,-0.5)}}] ({r0},{c0}) grid ({r1},{c1});", ""]


def _cute_index(r: int, c: int, i: int) -> str:
    return f"\\node at ({r},{c}) {{\\Large{{\\texttt{{{i}}}}}}};"


def _cute_tv(fig: Figure) -> str:
    """kind "mma" / "copy": the document CuTe's print_latex writes (see the module docstring)."""
    meta = fig.meta
    # a picture too big for SVG labels keeps them in meta["labels"]: LaTeX labels every cell as CuTe does
    labels = meta.get("labels") or [g.labels for g in fig.grids]
    out = [f"% {c}" for c in meta["comments"]] + [f"% {fig.title}"] + [f"% {n}" for n in fig.notes]
    if sum(g.shape[0] * g.shape[1] for g in fig.grids) > LIGHT_CELLS:
        return _cute_tv_light(fig, labels, out)
    out.append(_CUTE_HEADER)
    if fig.kind == "mma":
        gc, ga, gb = fig.grids
        oc, oa, ob = meta["order"]
        M, N, K = meta["tile"]
        out += _cute_cells(gc, labels[0], oc, 0, 0) + _cute_grid(0, 0, M, N)
        out += _cute_cells(ga, labels[1], oa, 0, -K - 1) + _cute_grid(0, -K - 1, M, -1)
        out += [_cute_index(m, -K - 2, m) for m in range(M)] + [_cute_index(-1, k - K - 1, k) for k in range(K)]
        out += _cute_cells(gb, labels[2], ob, -K - 1, 0) + _cute_grid(-K - 1, 0, -1, N)
        out += [_cute_index(-K - 2, n, n) for n in range(N)] + [_cute_index(k - K - 1, -1, k) for k in range(K)]
    else:
        gs, gd = fig.grids
        os_, od = meta["order"]
        M, N = meta["tile"]
        out += _cute_cells(gs, labels[0], os_, 0, 0) + _cute_grid(0, 0, M, N)
        out += [_cute_index(m, -1, m) for m in range(M)] + [_cute_index(-1, n, n) for n in range(N)]
        out += _cute_cells(gd, labels[1], od, 0, N + 3) + _cute_grid(0, N + 3, M, 2 * N + 3)
        out += [_cute_index(m, 2 * N + 3, m) for m in range(M)] + [_cute_index(-1, n + N + 3, n) for n in range(N)]
    return "\n".join(out) + "\n" + _FOOTER


def _cute_panel_light(g: Grid, labels: np.ndarray, dr: int, dc: int) -> list[str]:
    """A CuTe panel in the light encoding: fills merged by colour, then the labels row by row."""
    by_fill: dict[str, list[str]] = {}
    for k, m, n, w in _runs(g.keys):
        if k >= 0:
            by_fill.setdefault(g.fill(k), []).append(f"({m + dr - 0.5},{n + dc - 0.5}) rectangle ++(1,{w})")
    out = []
    for h, rects in by_fill.items():
        for i in range(0, len(rects), 64):
            out.append(f"\\fill[fill={_cute_fill(h)}] " + " ".join(rects[i:i + 64]) + ";")
    fills = [[g.fill(k) for k in row] for row in g.keys.tolist()]
    return out + _row_labels(np.where(g.keys >= 0, labels, ""), fills, dr, dc)


def _cute_tv_light(fig: Figure, labels: list, out: list[str]) -> str:
    """CuTe's print_latex layout of a big TiledMMA / TiledCopy in the light encoding (same
    positions, grid lines and indices; cells as merged fills and row-wise labels), which pdflatex
    compiles at sizes where a node per cell runs out of its main memory."""
    meta = fig.meta
    out.append(f"% light encoding ({sum(g.shape[0] * g.shape[1] for g in fig.grids)} cells): fills merged by "
               f"colour, labels one row per \\pgftext")
    out.append(_CUTE_HEADER.replace("\\begin{document}", _LIGHT_MACROS + "\\begin{document}"))
    if fig.kind == "mma":
        gc, ga, gb = fig.grids
        M, N, K = meta["tile"]
        out += _cute_panel_light(gc, labels[0], 0, 0) + _cute_grid(0, 0, M, N)
        out += _cute_panel_light(ga, labels[1], 0, -K - 1) + _cute_grid(0, -K - 1, M, -1)
        out += [_cute_index(m, -K - 2, m) for m in range(M)] + [_cute_index(-1, k - K - 1, k) for k in range(K)]
        out += _cute_panel_light(gb, labels[2], -K - 1, 0) + _cute_grid(-K - 1, 0, -1, N)
        out += [_cute_index(-K - 2, n, n) for n in range(N)] + [_cute_index(k - K - 1, -1, k) for k in range(K)]
    else:
        gs, gd = fig.grids
        M, N = meta["tile"]
        out += _cute_panel_light(gs, labels[0], 0, 0) + _cute_grid(0, 0, M, N)
        out += [_cute_index(m, -1, m) for m in range(M)] + [_cute_index(-1, n, n) for n in range(N)]
        out += _cute_panel_light(gd, labels[1], 0, N + 3) + _cute_grid(0, N + 3, M, 2 * N + 3)
        out += [_cute_index(m, 2 * N + 3, m) for m in range(M)] + [_cute_index(-1, n + N + 3, n) for n in range(N)]
    return "\n".join(out) + "\n" + _FOOTER


#: pdflatex's main memory in TeX Live (words); the estimate below is measured against it
PDFLATEX_WORDS = 5_000_000


def memory_estimate(fig: Figure) -> int:
    """About how many words of TeX's main memory pdflatex needs for the figure's .tex (measured:
    1.9M for standalone + TikZ, ~280 a labelled cell in the light encoding, ~400 a cell in
    CuTe's node-per-cell form, a few per unlabelled cell)."""
    cells = sum(g.shape[0] * g.shape[1] for g in fig.grids)
    if fig.kind in ("mma", "copy") and "order" in fig.meta:
        labelled = cells
    else:
        labelled = sum(g.shape[0] * g.shape[1] for g in fig.grids
                       if g.labels is not None and g.shape[0] * g.shape[1] <= LABEL_LIMIT)
    per = 280 if cells > LIGHT_CELLS else 400
    return 1_900_000 + per * labelled + 4 * (cells - labelled)


def capacity_warning(fig: Figure) -> str | None:
    """A sentence saying how to compile the .tex where pdflatex's default memory is too small, else None."""
    need = memory_estimate(fig)
    if need <= PDFLATEX_WORDS * 0.95:
        return None
    extra = -(-(need * 3 // 2 - PDFLATEX_WORDS) // 1_000_000) * 1_000_000
    return (f"the .tex needs about {need:,} words of TeX memory, past pdflatex's default {PDFLATEX_WORDS:,} "
            f"(\"TeX capacity exceeded\"): compile it with more, e.g. `extra_mem_bot={extra} pdflatex FILE.tex` "
            f"(TeX Live), or write .svg or .png instead")


def render(fig: Figure) -> str:
    """The figure as a standalone LaTeX document (a string).

    Pictures of more than LIGHT_CELLS cells use a light encoding (merged fills, labels a row at a
    time) that pdflatex compiles within its default memory up to about 11,000 labelled cells;
    past that the document starts with a ``% WARNING`` line (``capacity_warning``).
    """
    warn = capacity_warning(fig)
    if warn:
        return f"% WARNING: {warn}\n" + _render(fig)
    return _render(fig)


def _render(fig: Figure) -> str:
    if fig.kind in ("mma", "copy") and "order" in fig.meta:
        return _cute_tv(fig)
    greys = [fig.kind == "layout" and g.colors == [palette.shade(k) for k in range(8)] for g in fig.grids]
    defs, names = _colour_names([g for g, grey in zip(fig.grids, greys) if not grey])
    head = {"tv": "% Layout TV: ", "layout": "% Layout: "}.get(fig.kind, "% ")
    out = [head + fig.title]
    out += [f"% {n}" for n in fig.notes]
    light = sum(g.shape[0] * g.shape[1] for g in fig.grids) > LIGHT_CELLS
    head_tex = _HEADER.replace("\\begin{document}", _LIGHT_MACROS + "\\begin{document}") if light else _HEADER
    out.append(head_tex.rstrip("\n").replace("\\begin{tikzpicture}", "\n".join(defs) + "\n\\begin{tikzpicture}")
               if defs else head_tex.rstrip("\n"))
    out.append("")
    top = 0
    for g, cute_greys in zip(fig.grids, greys):
        out.extend((_grid_tex_light if light else _grid_tex)(g, names, cute_greys, top))
        out.append("")
        top += _height(g, cute_greys)
    return "\n".join(out) + "\n" + _FOOTER
