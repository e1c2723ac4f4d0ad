"""Figures as interactive HTML: the SVG inline, what each cell means as JSON, one inline script.

``render(fig)`` is a whole self-contained page (the CLI's ``.html`` output: no network, no
CDN, it can be mailed or attached to an issue as it is); ``fragment(fig)`` is the same picture
as a ``<div>`` for Jupyter (``_repr_html_``) and the web playground. In a browser:

- hovering a cell shows its index, coordinate, offset, thread, value (what the figure knows);
- clicking a cell of a thread-coloured picture highlights all that thread's values (click it
  again, or press Escape, to clear);
- the wheel zooms about the pointer, dragging pans, a double click resets the view.

What a cell means comes from ``cell_info(fig)``: one dict per panel (``Grid``), with per-cell
fields as flat row-major lists. Without JavaScript the page is still the plain SVG and text.

>>> from cutelab.render.figure import layout_figure
>>> info = cell_info(layout_figure("(2,(2,2)):(4,(1,2))"))[0]
>>> info["rows"], info["cols"], info["fields"]["offset"]
(2, 4, [0, 1, 2, 3, 4, 5, 6, 7])
>>> info["coord_rows"], info["coord_cols"]
(['0', '1'], ['(0,0)', '(1,0)', '(0,1)', '(1,1)'])
>>> "<script" in render(layout_figure("(2,2):(1,2)"))
True
"""

from __future__ import annotations

import json
import re
import uuid
from functools import lru_cache
from html import escape
from importlib import resources
from itertools import count
from typing import Any

import numpy as np

from .. import int_tuple as it
from ..errors import LayoutError
from ..layout import Layout
from . import svg, text
from .figure import Figure, Grid, grid_dims

__all__ = ["render", "fragment", "cell_info", "figure_script", "figure_style"]

_STYLE = """body{font-family:system-ui,sans-serif;margin:1.5em;color:#111}
h1{font-size:1.2em}pre{font-family:DejaVu Sans Mono,Menlo,Consolas,monospace;font-size:12px;
background:#f6f6f6;padding:1em;overflow:auto}"""

#: substrings of a title that may be a layout in CuTe notation (checked by parsing and evaluating)
_LAYOUT_TEXT = re.compile(r"[(\d][\d,() ]*:[(\d][\d,() ]*")
_ids = count()


@lru_cache(maxsize=None)
def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


def figure_script() -> str:
    """The JavaScript that makes figures interactive (``window.CutelabFigure``), as text."""
    return _asset("figure.js")


def figure_style() -> str:
    """The CSS of interactive figures (tooltip, highlight, zoom cursor), as text."""
    return _asset("figure.css")


def _layout_candidates(title: str) -> list[Layout]:
    out = []
    for m in _LAYOUT_TEXT.finditer(title):
        s = m.group(0).strip().rstrip(",").strip()
        for cut in range(len(s), 0, -1):  # "(4,4):(4,1)) = ..." -> try shorter tails until it parses
            if s[cut - 1] not in ")0123456789":
                continue
            try:
                out.append(Layout.parse(s[:cut]))
                break
            except (LayoutError, ValueError):
                continue
    return out


def _header_ids(headers: list[str] | None, n: int) -> np.ndarray | None:
    """The row (column) indices a grid's headers name: increasing non-negative ints, else None.

    A layout drawn as an overview shows every k-th row and column with their true indices as
    headers; a plain grid's headers are 0..n-1.
    """
    if headers is None:
        return np.arange(n, dtype=np.int64)
    try:
        ids = np.array([int(h) for h in headers], dtype=np.int64)
    except (TypeError, ValueError):
        return None
    if ids.size != n or (n and ids[0] < 0) or (n > 1 and (np.diff(ids) <= 0).any()):
        return None
    return ids


def _eval(L: Layout, idx: np.ndarray) -> np.ndarray:
    """L(i) for an array of colexicographic indices (integer strides only)."""
    out = np.zeros(idx.shape, dtype=np.int64)
    rest = idx.astype(np.int64, copy=True)
    for s, d in zip(it.flatten(L.shape if isinstance(L.shape, tuple) else (L.shape,)),
                    it.flatten(L.stride if isinstance(L.stride, tuple) else (L.stride,))):
        if not isinstance(d, (int, np.integer)):
            raise TypeError("basis stride")
        out += (rest % s) * d
        rest //= s
    return out


def _grid_layout(g: Grid, offsets: np.ndarray | None, rid: np.ndarray | None,
                 cid: np.ndarray | None) -> tuple[Layout, int] | None:
    """(layout, its grid's row count) if the grid's title names a layout that evaluates to exactly its offsets.

    The cells are the layout's grid at the rows ``rid`` and columns ``cid`` (all of them, or
    an overview's sample). Only a layout whose every shown offset equals the label in its cell
    is accepted, so a coordinate is never shown from a wrong guess.
    """
    if offsets is None or rid is None or cid is None or not offsets.size:
        return None
    for L in _layout_candidates(g.title):
        try:
            rows, cols, _, _ = grid_dims(L)
            if rid[-1] >= rows or cid[-1] >= cols:
                continue
            if np.array_equal(_eval(L, rid[:, None] + rows * cid[None, :]), offsets):
                return L, rows
        except (LayoutError, ValueError, TypeError, OverflowError):
            continue
    return None


def _coords(L: Layout, rid: np.ndarray, cid: np.ndarray) -> tuple[list[str], list[str] | None]:
    """Hierarchical coordinate text of the grid rows and columns shown (as layout_figure's coord labels)."""
    rows, cols, rshape, cshape = grid_dims(L)
    rc = [it.tuple_str(it.idx2crd(int(m), rshape)) for m in rid]
    shp = L.shape
    if not isinstance(shp, tuple) or len(shp) < 2:
        return rc, None
    cc = [it.tuple_str(it.idx2crd(int(n), cshape)) for n in cid]
    if len(shp) > 2:
        cc = [c[1:-1] for c in cc]  # (m, (n1, n2)) is shown flat: (m, n1, n2)
    return rc, cc


#: figure kinds whose cell (r, c) is element r + rows*c of what the panel draws (not so for a
#: TiledMMA's B, drawn transposed, nor a copy's tiles, nor a bank picture's rows)
_COLEX_KINDS = {"layout", "tv", "partition", "explain"}


_INTS = re.compile(r"-?\d+(?:\x00-?\d+)*", re.ASCII)
#: label forms whose numbers are read per cell: T#\nV# (TV, MMA, copy), B#T#\nV# (partitions),
#: offset\nb# (shared-memory banks)
_FORMS = [
    (re.compile(r"T\d+\nV\d+(?:\x00T\d+\nV\d+)*", re.ASCII), ("thread", "value")),
    (re.compile(r"B\d+T\d+\nV\d+(?:\x00B\d+T\d+\nV\d+)*", re.ASCII), ("block", "thread", "value")),
    (re.compile(r"-?\d+\nb\d+(?:\x00-?\d+\nb\d+)*", re.ASCII), ("offset", "bank")),
]
_TO_SPACE = str.maketrans({"B": " ", "T": " ", "V": " ", "b": " ", "\n": " ", "\x00": " "})


def _read_labels(lab: np.ndarray) -> dict[str, np.ndarray] | None:
    """Per-cell numbers of labels that all have one of the _FORMS ('' -> -1), or are all
    integers (a layout's offsets), by name; None if they are not.

    The non-empty labels are joined and checked whole against the form's pattern, then read as
    one run of integers (numpy's text parser): a few ms for a 128 x 128 tile.
    """
    flat = lab.ravel().tolist()
    if all(flat):
        where, items = None, flat
    else:
        where = [i for i, x in enumerate(flat) if x]
        items = [flat[i] for i in where]
    if not items:
        return None
    text = "\x00".join(items)
    forms = _FORMS if where is not None else _FORMS + [(_INTS, ("offset",))]
    for pattern, names in forms:
        if pattern.fullmatch(text):
            break
    else:
        return None
    nums = np.fromstring(text.translate(_TO_SPACE), dtype=np.int64, sep=" ").reshape(len(items), len(names))
    out = {}
    for k, name in enumerate(names):
        if where is None:
            a = np.ascontiguousarray(nums[:, k])
        else:
            a = np.full(lab.size, -1, dtype=np.int64)
            a[where] = nums[:, k]
        out[name] = a.reshape(lab.shape)
    return out


def cell_info(fig: Figure) -> list[dict[str, Any]]:
    """What each cell of each panel means, for the interactive layer (JSON-ready).

    Per grid: ``rows``, ``cols``, ``kind`` (the figure's), ``style``, ``legend`` ({key:
    text}), and ``fields``: flat row-major lists of per-cell values, among ``key`` (colour;
    left out when it is the thread), ``offset`` (a layout's value at the cell),
    ``block``/``thread``/``value`` (TV, MMA and copy pictures, partitions: -1 where no one
    owns the cell), ``bank`` (shared-memory pictures), ``tip`` (every holder of a shared
    cell), ``label`` (other text). ``row_ids``/``col_ids``: the true row and column of each
    grid row and column where the headers say they differ from 0.. (an overview of a big
    layout), else None. ``index_rows``: R such that the index of cell (r, c) is row + R*col
    (colexicographic, as CuTe counts), or None where no such index is known. When the grid
    draws a layout named in its title, ``coord_rows``/``coord_cols`` give the hierarchical
    coordinate of each row and column; otherwise it is (row, col).
    """
    out = []
    for g in fig.grids:
        rows, cols = g.shape
        fields: dict[str, list] = {"key": g.keys.astype(np.int64).ravel().tolist()}
        info: dict[str, Any] = {"rows": rows, "cols": cols, "kind": fig.kind, "style": g.style, "title": g.title,
                                "legend": {str(k): t for k, t in g.legend}, "fields": fields,
                                "coord_rows": None, "coord_cols": None}
        offsets = None
        if g.labels is not None:
            lab = np.asarray(g.labels)
            lab = lab if lab.dtype.kind == "U" else lab.astype(str)
            form = _read_labels(lab) if g.style == "grid" else None
            if form is not None:
                for name, a in form.items():
                    fields[name] = a.ravel().tolist()
                offsets = form.get("offset")
                if "thread" in form and np.array_equal(form["thread"], g.keys):
                    del fields["key"]  # coloured by thread: the key says nothing more
            else:  # a table's entries, or other text
                fields["label"] = np.char.replace(lab, "\n", " ").ravel().tolist()
        tips = getattr(g, "tips", None)  # every holder of a shared cell (MMA, copy pictures)
        if tips is not None:
            fields["tip"] = np.char.replace(np.asarray(tips).astype(str), "\n", "; ").ravel().tolist()
        rid, cid = _header_ids(g.row_headers, rows), _header_ids(g.col_headers, cols)
        plain = rid is not None and cid is not None and rid[-1] == rows - 1 and cid[-1] == cols - 1 if rows and cols else False
        info["row_ids"] = None if plain or rid is None else rid.tolist()
        info["col_ids"] = None if plain or cid is None else cid.tolist()
        info["index_rows"] = rows if plain and fig.kind in _COLEX_KINDS else None
        found = _grid_layout(g, offsets, rid, cid)
        if found is not None:
            L, full_rows = found
            info["layout"] = str(L)
            info["index_rows"] = full_rows
            info["coord_rows"], info["coord_cols"] = _coords(L, rid, cid)
        out.append(info)
    return out


def _json_script(data: Any) -> str:
    # "</" cannot end the script element early once escaped; the JSON stays valid
    return json.dumps(data, separators=(",", ":")).replace("</", "<\\/")


def fragment(fig: Figure, script: bool = True, svg_text: str | None = None) -> str:
    """The figure as an interactive ``<div class="cutelab-fig">`` (SVG + cell data [+ script]).

    ``script=False`` leaves out the inline JavaScript and CSS, for pages that load
    ``figure.js``/``figure.css`` once themselves (the playground); ``svg_text`` reuses an SVG
    already rendered from ``fig``.
    """
    uid = f"cutelab-fig-{next(_ids)}-{uuid.uuid4().hex[:8]}"  # unique across kernel restarts in one notebook
    show = fig.meta.get("show") if isinstance(fig.meta, dict) else None
    show_attr = f' data-show="{show}"' if show in ("index", "coord") else ""  # the cells toggle's first setting
    parts = [f'<div class="cutelab-fig" id="{uid}"{show_attr}>']
    if script:
        parts.append(f"<style>{figure_style()}</style>")
    parts.append(f'<div class="cutelab-pic">{svg_text if svg_text is not None else svg.render(fig)}</div>')
    parts.append(f'<script type="application/json" class="cutelab-cells">{_json_script(cell_info(fig))}</script>')
    if script:
        # the script's own parent is the figure (document.currentScript); the id is the fallback
        parts.append(f"<script>{figure_script()}\n(function (s) {{ CutelabFigure.init(s && s.parentNode && "
                     f"s.parentNode.classList && s.parentNode.classList.contains('cutelab-fig') ? s.parentNode : "
                     f"document.getElementById({json.dumps(uid)})); }})(document.currentScript);</script>")
    parts.append("</div>")
    return "\n".join(parts)


def render(fig: Figure) -> str:
    """The figure as a self-contained interactive HTML document (a string)."""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{escape(fig.title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        f"<h1>{escape(fig.title)}</h1>\n{fragment(fig)}\n"
        f"<h2>As text</h2>\n<pre>{escape(text.render(fig))}</pre>\n</body>\n</html>\n"
    )
