"""The playground's tabs: each is a small declaration (fields with defaults + a Figure builder).

A tab names its input fields (text boxes or choices, each with a default in CuTe notation)
and a function from the field values (strings) to a ``cutelab.render`` Figure. The server
lists the tabs for the page (``/api/tabs``) and calls ``compute`` on every (debounced)
keystroke. Adding a tab is one ``@tab(...)`` block here; nothing in the page changes.

>>> fig = compute("layout", {"layout": "(2,3):(3,1)"})
>>> fig.title
'(2,3):(3,1)'
>>> [t for t in TABS][:4]
['layout', 'composition', 'complement', 'divide']
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass
from functools import wraps
from typing import Any, Callable, Iterator, Mapping

import numpy as np

from .. import int_tuple as it
from .. import render as R
from ..errors import LayoutError
from ..layout import Layout, cosize, parse_tuple, size
from ..render.figure import Figure, as_layout

__all__ = ["Field", "Tab", "TABS", "MAX_CELLS", "tab", "compute", "tabs_json"]

#: the most elements a picture of the playground may have (a 512 x 512 tile)
MAX_CELLS = 1 << 18


@dataclass(frozen=True)
class Field:
    """One input of a tab: a text box (``choices`` empty) or a choice among ``choices``.

    ``when=(other, pattern)``: the field applies only while field ``other``'s value matches the
    regular expression ``pattern`` (whole); otherwise the page hides it and its default is used.
    """

    name: str
    label: str
    default: str
    help: str = ""
    choices: tuple[str, ...] = ()
    optional: bool = False
    when: tuple[str, str] | None = None


@dataclass(frozen=True)
class Tab:
    """A tab: id (in URLs), title, fields, and ``build(values) -> Figure``.

    ``presets``: canonical examples, (name, {field: value}); a field a preset leaves out takes
    its default. The page lists them in a menu that fills the form.
    """

    id: str
    title: str
    fields: tuple[Field, ...]
    build: Callable[[dict[str, str]], Figure]
    doc: str = ""
    group: str = ""
    presets: tuple[tuple[str, dict[str, str]], ...] = ()

    def values(self, given: Mapping[str, str]) -> dict[str, str]:
        """The field values: ``given`` where present, else the defaults; choices are checked.

        A field that does not apply (its ``when`` does not hold) takes its default.
        """
        out = {}
        for f in self.fields:
            v = given.get(f.name)
            v = f.default if v is None else str(v).strip()
            if f.choices and v not in f.choices:
                e = LayoutError(f"{self.id}: {f.label} must be one of {', '.join(f.choices)}, got {v!r}")
                e.field = f.name  # type: ignore[attr-defined]
                raise e
            out[f.name] = v
        for f in self.fields:
            if not self.applies(f, out):
                out[f.name] = f.default
        return out

    @staticmethod
    def applies(f: Field, values: Mapping[str, str]) -> bool:
        """Whether field ``f`` applies given the other fields' values (its ``when``)."""
        return f.when is None or re.fullmatch(f.when[1], values.get(f.when[0], "")) is not None

    def field_of(self, what: Any) -> str | None:
        """The name of the field a message calls ``what`` (its name, its label, or --its-name)."""
        if not isinstance(what, str):
            return None
        for f in self.fields:
            if what in (f.name, f.label, f.name.replace("_", "-")):
                return f.name
        return None


TABS: dict[str, Tab] = {}


def tab(id: str, title: str, *fields: Field, group: str = "",
        presets: tuple[tuple[str, dict[str, str]], ...] = ()) -> Callable:
    """Declare a tab whose picture the decorated function builds from its field values."""
    names = {f.name for f in fields}
    for name, values in presets:  # a typo in a preset is a bug of the tab: refuse it at import
        if set(values) - names:
            raise ValueError(f"tab {id}: preset {name!r} names unknown fields {sorted(set(values) - names)}")

    def deco(fn: Callable[[dict[str, str]], Figure]) -> Callable:
        TABS[id] = Tab(id, title, tuple(fields), fn, (fn.__doc__ or "").strip(), group, tuple(presets))
        return fn

    return deco


def compute(tab_id: str, given: Mapping[str, str]) -> Figure:
    """The Figure of a tab for the given field values (LayoutError on bad input)."""
    if tab_id not in TABS:
        raise LayoutError(f"playground: unknown tab {tab_id!r}; one of {', '.join(TABS)}")
    t = TABS[tab_id]
    try:
        fig = t.build(t.values(given))
    except LayoutError as e:  # name the field to blame, where a check knows it
        e.field = t.field_of(getattr(e, "field", None))  # type: ignore[attr-defined]
        raise
    cells = sum(g.shape[0] * g.shape[1] for g in fig.grids)
    if cells > 4 * MAX_CELLS:
        raise LayoutError(f"{tab_id}: the picture has {cells} cells; the playground draws at most {4 * MAX_CELLS}")
    return fig


def tabs_json() -> list[dict[str, Any]]:
    """The tab declarations as the page reads them."""
    return [{"id": t.id, "title": t.title, "doc": t.doc, "group": t.group,
             "fields": [{"name": f.name, "label": f.label, "default": f.default, "help": f.help,
                         "choices": list(f.choices), "optional": f.optional,
                         "when": {"field": f.when[0], "pattern": f.when[1]} if f.when else None}
                        for f in t.fields],
             "presets": [{"name": name, "values": {f.name: values.get(f.name, f.default) for f in t.fields}}
                         for name, values in t.presets]}
            for t in TABS.values()]


# --------------------------------------------------------------------------- input helpers
# Each helper reads one field; a LayoutError it raises carries ``field`` (the ``what`` it was
# given: a field's label or name), which the page uses to mark the field.

@contextmanager
def _blame(what: str) -> Iterator[None]:
    """LayoutErrors raised inside are about the field ``what`` (unless they already name one)."""
    try:
        yield
    except LayoutError as e:
        if getattr(e, "field", None) is None:
            e.field = what  # type: ignore[attr-defined]
        raise


def _reads_field(fn: Callable) -> Callable:
    """A helper ``fn(value, what, ...)`` whose errors are about the field ``what``."""
    @wraps(fn)
    def run(v: str, what: str, *args: Any, **kw: Any) -> Any:
        with _blame(what):
            return fn(v, what, *args, **kw)
    return run


@_reads_field
def _required(v: str, what: str) -> str:
    if not v:
        raise LayoutError(f"{what} is empty")
    return v


@_reads_field
def _layout(v: str, what: str) -> Layout:
    """A layout from a field, with the playground's size limit."""
    L = as_layout(_required(v, what))
    _limit(size(L), f"{what} {L}")
    return L


def _limit(n: int, what: str) -> None:
    if n > MAX_CELLS:
        raise LayoutError(f"{what} has {n} elements; the playground draws at most {MAX_CELLS}")


@_reads_field
def _shape(v: str, what: str, rank: int | None = 2) -> tuple[int, ...]:
    """'16,64' or '(16,64)' -> (16, 64): flat positive ints."""
    t = _required(v, what)
    t = t if t.startswith("(") else f"({t})"
    s = parse_tuple(t)
    if not isinstance(s, tuple) or not all(isinstance(x, int) and x > 0 for x in s):
        raise LayoutError(f"{what} must be positive integers like 16,64, got {v!r}")
    if rank is not None and len(s) != rank:
        raise LayoutError(f"{what} must have {rank} modes, got {it.tuple_str(s)}")
    return s


@_reads_field
def _count(v: str, what: str) -> int:
    try:
        n = int(v)
    except ValueError:
        raise LayoutError(f"{what} must be an integer, got {v!r}") from None
    if n < 0:
        raise LayoutError(f"{what} must not be negative, got {n}")
    return n


@_reads_field
def _int(v: str, what: str) -> int:
    try:
        n = int(_required(v, what))
    except ValueError:
        raise LayoutError(f"{what} must be an integer, got {v!r}") from None
    if n <= 0:
        raise LayoutError(f"{what} must be positive, got {n}")
    return n


# --------------------------------------------------------------------------- the tabs

@tab("layout", "Layout",
     Field("layout", "layout", "((2,2),(2,3)):((2,12),(1,4))", "shape:stride in CuTe notation; a bare shape is col-major"),
     Field("label", "cells show", "offset", choices=("offset", "coord")),
     Field("slice", "slice", "", "e.g. (2,_): the cells layout[(2,None)] keeps", optional=True),
     group="layouts",
     presets=(("seed: ((2,2),(2,3)) hierarchical", {}),
              ("row-major 4x8", {"layout": "(4,8):(8,1)"}),
              ("column-major 8x4", {"layout": "(8,4):(1,8)"}),
              ("(2,(2,2)) nested columns", {"layout": "(2,(2,2)):(4,(1,2))"}),
              ("rank 3 (2,2,2)", {"layout": "(2,2,2):(2,1,4)"}),
              ("fp16 128B row atom (8,64)", {"layout": "(8,64):(64,1)"}),
              ("slice layout[(1,_)]", {"slice": "(1,_)"}),
              ("8192x8192 overview", {"layout": "(8192,8192):(8192,1)"})))
def _layout_tab(v: dict[str, str]) -> Figure:
    """A layout as CuTe's print_layout grid: each cell is layout(m, n); past 256 rows or columns, an overview."""
    with _blame("layout"):  # any size: `cutelab show`'s overview samples the grid
        L = as_layout(_required(v["layout"], "layout"))
    fig = R.layout_figure(L, label=v["label"])
    if v["slice"]:
        with _blame("slice"):
            _slice(fig, L, v["slice"])
    return fig


def _slice(fig: Figure, L: Layout, text: str) -> None:
    """Outline the cells layout[crd] keeps, and say what the slice is (crd: '(2,_)', '(2,None)')."""
    from ..render.figure import slice_cells

    t = re.sub(r"\b(None|_)\b|(?<![\w)])_(?![\w(])", "-1", text.strip())
    crd = parse_tuple(t if t.startswith("(") else f"({t})")
    crd = _nones(crd)
    if isinstance(crd, tuple) and len(crd) == 1 and isinstance(L.shape, tuple) and len(L.shape) > 1:
        raise LayoutError(f"slice {text!r}: give one coordinate per mode of {L}, _ for a whole mode")
    g = fig.grids[0]
    rows = [int(h) for h in g.row_headers] if g.row_headers else None
    cols = [int(h) for h in g.col_headers] if g.col_headers else None
    keep = slice_cells(L, crd, rows, cols)
    n = int(keep.sum())
    if not n and not any(f.startswith("overview") for f in fig.notes):
        raise LayoutError(f"{text!r} keeps no cell of {L}")
    sliced = L[crd]
    g.groups = keep.astype(np.int64)
    what = f"the {n} cell{'s' if n != 1 else ''} it keeps" if n else "none of the cells this overview shows"
    fig.notes.insert(0, f"layout[{_crd_str(crd)}] = {sliced} (outlined: {what})")


def _crd_str(c: Any) -> str:
    """A slice coordinate as CuTe DSL writes it: (2,None)."""
    if isinstance(c, tuple):
        return "(" + ",".join(_crd_str(x) for x in c) + ("," if len(c) == 1 else "") + ")"
    return "None" if c is None else str(c)


def _nones(c: Any) -> Any:
    """-1 (written _ or None) -> None, in a parsed coordinate."""
    if isinstance(c, tuple):
        return tuple(_nones(x) for x in c)
    if isinstance(c, int) and c < 0:
        if c != -1:
            raise LayoutError(f"a slice coordinate must not be negative, got {c}")
        return None
    return c


@tab("composition", "composition",
     Field("A", "A", "(4,4):(4,1)"), Field("B", "B", "(4,2,2):(2,1,8)"), group="algebra",
     presets=(("seed: (4,4):(4,1) o (4,2,2):(2,1,8)", {}),
              ("(6,2):(8,2) o (4,3):(3,1)", {"A": "(6,2):(8,2)", "B": "(4,3):(3,1)"}),
              ("20:2 o (5,4):(4,1)", {"A": "20:2", "B": "(5,4):(4,1)"}),
              ("transpose: (4,8):(8,1) o (8,4):(4,1)", {"A": "(4,8):(8,1)", "B": "(8,4):(4,1)"})))
def _composition_tab(v: dict[str, str]) -> Figure:
    """composition(A, B) = A o B: B's domain, through B into A's domain, through A to offsets."""
    A, B = _layout(v["A"], "A"), _layout(v["B"], "B")
    return R.explain("composition", A, B)


@tab("complement", "complement",
     Field("A", "A", "(2,3):(2,4)"), Field("M", "cotarget M", "24", "blank: cosize(A)", optional=True),
     group="algebra",
     presets=(("seed: (2,3):(2,4) in 24", {}),
              ("4:2 in 24", {"A": "4:2", "M": "24"}),
              ("(2,2):(1,6) in 24", {"A": "(2,2):(1,6)", "M": "24"}),
              ("(4,2):(2,32) in 128", {"A": "(4,2):(2,32)", "M": "128"})))
def _complement_tab(v: dict[str, str]) -> Figure:
    """complement(A, M): the layout that fills A's holes in [0, M)."""
    A = _layout(v["A"], "A")
    M = _int(v["M"], "cotarget M") if v["M"] else cosize(A)
    _limit(M, f"the cotarget {M}")
    return R.explain("complement", A, M)


_DIVIDES = ("logical_divide", "zipped_divide", "tiled_divide", "flat_divide")
_PRODUCTS = ("logical_product", "zipped_product", "tiled_product", "blocked_product", "raked_product")


@tab("divide", "divide",
     Field("op", "operation", "zipped_divide", choices=_DIVIDES),
     Field("A", "A", "(8,8):(1,8)"), Field("tiler", "tiler", "(2,4)", "a layout, a shape, or <layout, layout>"),
     group="algebra",
     presets=(("zipped_divide (8,8) by (2,4)", {}),
              ("logical_divide 16 by 4:2", {"op": "logical_divide", "A": "16:1", "tiler": "4:2"}),
              ("tiled_divide (8,8) by <2:1, 4:1>", {"op": "tiled_divide", "tiler": "<2:1, 4:1>"}),
              ("flat_divide (16,8) by (4,4)", {"op": "flat_divide", "A": "(16,8):(1,16)", "tiler": "(4,4)"})))
def _divide_tab(v: dict[str, str]) -> Figure:
    """The divides: A split into tiles of the tiler, each tile coloured."""
    A = _layout(v["A"], "A")
    return R.explain(v["op"], A, _required(v["tiler"], "tiler"))


@tab("product", "product",
     Field("op", "operation", "blocked_product", choices=_PRODUCTS),
     Field("A", "A", "(2,5):(5,1)"), Field("B", "B", "(3,4)"), group="algebra",
     presets=(("blocked_product (2,5):(5,1) x (3,4)", {}),
              ("raked_product (2,5):(5,1) x (3,4)", {"op": "raked_product"}),
              ("logical_product (2,2):(1,2) x 3:1", {"op": "logical_product", "A": "(2,2):(1,2)", "B": "3:1"}),
              ("tiled_product (2,2) x (2,3)", {"op": "tiled_product", "A": "(2,2):(1,2)", "B": "(2,3)"})))
def _product_tab(v: dict[str, str]) -> Figure:
    """The products: size(B) copies of A arranged by B, each copy coloured."""
    A, B = _layout(v["A"], "A"), _layout(v["B"], "B")
    _limit(size(A) * cosize(B), f"{v['op']}({A}, {B})")
    return R.explain(v["op"], A, B)


@tab("tv", "make_layout_tv",
     Field("thr", "thread layout", "(4,8):(8,1)"), Field("val", "value layout", "(4,2):(2,1)"), group="tv",
     presets=(("seed: (4,8):(8,1) x (4,2):(2,1)", {}),
              ("128-bit fp16 copy: (16,8):(8,1) x (1,8)", {"thr": "(16,8):(8,1)", "val": "(1,8)"}),
              ("column-major threads (32,4) x (4,1)", {"thr": "(32,4)", "val": "(4,1)"}),
              ("256 threads (32,8):(8,1) x (4,8):(8,1)", {"thr": "(32,8):(8,1)", "val": "(4,8):(8,1)"})))
def _tv_tab(v: dict[str, str]) -> Figure:
    """make_layout_tv(thr, val): each thread's values over the tile the TV layout covers."""
    thr, val = _layout(v["thr"], "thread layout"), _layout(v["val"], "value layout")
    _limit(size(thr) * size(val), f"make_layout_tv({thr}, {val})")
    return R.make_tv_figure(thr, val)


@tab("tv_layout", "TV layout",
     Field("tv", "TV layout", "((2,2),(2,3)):((2,12),(1,4))", "(thread, value) -> element of the tile"),
     Field("tile", "tile M,N", "4,6", "blank: the most square tile, as cutelab tv", optional=True), group="tv",
     presets=(("seed: ((2,2),(2,3)) over 4x6", {}),
              ("mma m16n8k16 A (16x16)", {"tv": "((4,8),(2,2,2)):((32,1),(16,8,128))", "tile": "16,16"}),
              ("mma m16n8k16 B (8x16)", {"tv": "((4,8),(2,2)):((16,1),(8,64))", "tile": "8,16"}),
              ("mma m16n8k16 C (16x8)", {"tv": "((4,8),(2,2)):((32,1),(16,8))", "tile": "16,8"}),
              ("ldmatrix x4 source (16x16)", {"tv": "((16,2),(8,1)):((1,128),(16,0))", "tile": "16,16"})))
def _tv_layout_tab(v: dict[str, str]) -> Figure:
    """A thread-value layout over an (M, N) tile, like CuTe's print_latex_tv."""
    L = _layout(v["tv"], "TV layout")
    tile = _shape(v["tile"], "tile") if v["tile"] else None  # None: tv_figure's most square tile
    _limit(tile[0] * tile[1] if tile else cosize(L), f"tile {it.tuple_str(tile) if tile else cosize(L)}")
    return R.tv_figure(L, tile)


@tab("partition_tiled", "partition: tiled",
     Field("tensor", "tensor M,N", "16,64"), Field("block", "block", "1,16"), Field("threads", "threads/block", "16"),
     group="partition",
     presets=(("seed: 16x64 in 1x16 blocks", {}),
              ("8x8 in 2x2 blocks, 4 threads", {"tensor": "8,8", "block": "2,2", "threads": "4"})))
def _partition_tiled_tab(v: dict[str, str]) -> Figure:
    """Inner partition: tiled_divide by the block shape, one tile per thread."""
    t = _shape(v["tensor"], "tensor")
    _limit(t[0] * t[1], f"tensor {it.tuple_str(t)}")
    return R.tiled_partition_figure(t, _shape(v["block"], "block"), _int(v["threads"], "threads/block"))


@tab("partition_outer", "partition: outer",
     Field("tensor", "tensor M,N", "16,32"), Field("block", "block", "8,16"), Field("threads", "thread layout", "(4,8):(8,1)"),
     group="partition",
     presets=(("seed: 16x32, 8x16 blocks, (4,8):(8,1)", {}),
              ("column-major threads (8,4)", {"threads": "(8,4):(1,8)"})))
def _partition_outer_tab(v: dict[str, str]) -> Figure:
    """Inner + outer partition: zipped_divide by the block, local_partition by the thread layout."""
    t = _shape(v["tensor"], "tensor")
    _limit(t[0] * t[1], f"tensor {it.tuple_str(t)}")
    return R.outer_partition_figure(t, _shape(v["block"], "block"), _layout(v["threads"], "thread layout"))


@tab("partition_tv", "partition: TV",
     Field("tensor", "tensor M,N", "", "blank: 2x2 tiles of make_layout_tv's tiler", optional=True),
     Field("threads", "thread layout", "(4,2):(2,1)"), Field("values", "value layout", "(2,4):(4,1)"),
     group="partition",
     presets=(("seed: (4,2):(2,1) x (2,4):(4,1)", {}),
              ("16x16 tensor, (4,4) x (1,4)", {"tensor": "16,16", "threads": "(4,4):(4,1)", "values": "(1,4)"})))
def _partition_tv_tab(v: dict[str, str]) -> Figure:
    """Thread-value partition: make_layout_tv, zipped_divide, composition with the TV layout."""
    thr, val = _layout(v["threads"], "thread layout"), _layout(v["values"], "value layout")
    _limit(size(thr) * size(val), f"make_layout_tv({thr}, {val})")
    t = _shape(v["tensor"], "tensor") if v["tensor"] else None
    if t is not None:
        _limit(t[0] * t[1], f"tensor {it.tuple_str(t)}")
    return R.tv_partition_figure(t, thr, val)


# --------------------------------------------------------------------------- atoms (when cutelab has them)
# The MMA, copy and swizzle tabs take the same options as `cutelab mma`, `cutelab copy` and
# `cutelab swizzle` and build their pictures through the command line's own code (one place
# that turns names like sm80_16x8x16 into atoms): the fields are the commands' options.

def _cli_figure(cmd: str, values: dict[str, str], ints: tuple[str, ...] = ()) -> Figure:
    """The picture `cutelab CMD --option value ...` draws, with the tab's values as options."""
    from .. import commands

    if cmd == "analyze":  # the command prints its explanation and draws the worst instruction
        def run(args):
            text, fig = commands._analyze(args)
            fig.notes = list(fig.notes) + [""] + text.rstrip("\n").splitlines()
            return fig
    else:
        run = commands._figure

    args = commands.build_parser().parse_args([cmd, *_CLI_REQUIRED.get(cmd, [])])  # every option's default
    for k, v in values.items():
        if k in ints:
            v = _count(v, k.replace("_", "-")) if v else None
        elif k in _CLI_FLAGS:
            v = v == "yes"
        setattr(args, k, v or None if k not in _CLI_FLAGS else v)
    try:
        return run(args)
    except commands._UsageError as e:
        err = LayoutError(f"{cmd}: {str(e).replace('--', '')}")
        m = re.match(r"--([a-z][a-z-]*)", str(e))  # the option the message is about, where it starts with one
        if m:
            err.field = _CLI_DESTS.get(m.group(1), m.group(1))  # type: ignore[attr-defined]
        raise err from None


_CLI_REQUIRED = {"mma": ["--op", "sm80_16x8x16"], "analyze": ["--layout", "1:1"]}
_CLI_FLAGS = ("trans", "ptr_swizzle", "before")
_CLI_DESTS = {"for": "for_operand"}  # option -> field name, where they differ
_ATOM_LIMIT = 64  # atoms in a TiledMMA the playground draws


def _atoms_limit(values: dict[str, str]) -> None:
    text = values.get("atoms") or ""
    if text and ":" not in text:
        try:
            parts = [int(x) for x in text.replace("x", ",").strip("()").split(",")]
        except ValueError:
            return  # the command line's own check says what is wrong
        n = 1
        for p in parts:
            n *= max(p, 1)
        if n > _ATOM_LIMIT:
            raise LayoutError(f"mma: {text} is {n} atoms; the playground draws at most {_ATOM_LIMIT}")


def _has_atom_pictures() -> bool:
    from .. import commands

    return hasattr(commands, "_atom_figure") and hasattr(R, "mma_figure")


if _has_atom_pictures():
    _AB = ("", "f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8")
    _ACC = ("", "f16", "f32", "s32")

    @tab("mma", "TiledMMA",
         Field("op", "instruction", "sm80_16x8x16", "sm80_16x8x8, sm80_16x8x16, sm80_16x8x4 (tf32), sm89_16x8x32, sm90_64xNx16"),
         Field("ab", "A/B type", "", choices=_AB), Field("acc", "accumulator", "", choices=_ACC),
         Field("atoms", "atom layout MxNxK", "2x2x1", "or a layout like (2,2,1):(2,1,0)"),
         Field("perm", "permutation MxNxK", "", "e.g. 32x32x16; blank: none", optional=True),
         Field("a_src", "sm90: A from", "", choices=("", "smem", "rmem"), when=("op", r"sm9\d.*")),
         Field("color_by", "colour by", "thread", choices=("thread", "warp", "atom", "mod8")),
         group="atoms",
         presets=(("sm80 16x8x16, 2x2 atoms", {}),
                  ("sm80 16x8x16, one atom", {"atoms": "1x1x1"}),
                  ("sm80 16x8x8 f16, 2x1 atoms", {"op": "sm80_16x8x8", "atoms": "2x1x1"}),
                  ("wgmma sm90_64x64x16 (A from smem)", {"op": "sm90_64x64x16", "atoms": "1x1x1"}),
                  ("wgmma sm90_64x32x16, A from registers", {"op": "sm90_64x32x16", "atoms": "1x1x1", "a_src": "rmem"}),
                  ("128x128x32 tile by warp", {"atoms": "4x4x1", "perm": "128x128x32", "color_by": "warp"})))
    def _mma_tab(v: dict[str, str]) -> Figure:
        """make_tiled_mma(atom, atom layout, permutation): C, with A on its left and B on top, each element's T#V#."""
        _atoms_limit(v)
        return _cli_figure("mma", v)

    @tab("copy", "TiledCopy",
         Field("kind", "atom", "ldmatrix", choices=("ldmatrix", "stmatrix", "universal")),
         Field("matrices", "matrices", "x4", choices=("x1", "x2", "x4"), when=("kind", "ldmatrix|stmatrix")),
         Field("bits", "bits per copy", "64", "blank or 0: one element", optional=True, when=("kind", "universal")),
         Field("trans", ".trans", "no", choices=("no", "yes"), when=("kind", "ldmatrix|stmatrix")),
         Field("elem", "element", "f16", choices=("f16", "bf16", "f32", "s8", "u8", "s32", "f64")),
         Field("for_operand", "for the MMA's", "", choices=("", "A", "B", "C")),
         Field("thr", "thread layout", "", "blank with ldmatrix: (32,1)", optional=True, when=("for_operand", "")),
         Field("val", "value layout", "", "blank with ldmatrix: (1,2*matrices)", optional=True, when=("for_operand", "")),
         Field("op", "MMA instruction", "", "e.g. sm80_16x8x16", optional=True, when=("for_operand", "A|B|C")),
         Field("atoms", "MMA atoms MxNxK", "1x1x1", when=("for_operand", "A|B|C")),
         group="atoms",
         presets=(("ldmatrix x4, (32,1) threads", {}),
                  ("ldmatrix x4 for A of sm80_16x8x16", {"for_operand": "A", "op": "sm80_16x8x16"}),
                  ("ldmatrix x2.trans for B of sm80_16x8x16", {"matrices": "x2", "trans": "yes", "for_operand": "B",
                                                               "op": "sm80_16x8x16"}),
                  ("stmatrix x2 for C of sm80_16x8x16", {"kind": "stmatrix", "matrices": "x2", "for_operand": "C", "op": "sm80_16x8x16"}),
                  ("universal 64-bit, (4,8):(8,1) x (1,4)", {"kind": "universal", "thr": "(4,8):(8,1)", "val": "(1,4)"})))
    def _copy_tab(v: dict[str, str]) -> Figure:
        """make_tiled_copy_tv(atom, thr, val), or make_tiled_copy_A/B/C for an MMA: who reads and who writes each element."""
        _atoms_limit(v)
        if v["for_operand"]:
            _required(v["op"], "MMA instruction")  # make_tiled_copy_A/B/C needs the MMA
        for k, what in (("thr", "thread layout"), ("val", "value layout")):
            if v[k]:
                _layout(v[k], what)
        opts = {k: v[k] for k in ("trans", "elem", "thr", "val", "for_operand", "op", "atoms")}
        if v["kind"] == "universal":
            opts["bits"] = v["bits"]  # blank or 0: one element per copy
        else:
            opts[v["kind"]] = v["matrices"]
        return _cli_figure("copy", opts, ints=("bits",))

    @tab("swizzle", "swizzle",
         Field("layout", "layout", "S<3,4,3> o 0 o (8,64):(64,1)", "a ComposedLayout S<B,M,S> o offset o layout, or a layout",
               optional=True, when=("atom", "")),
         Field("atom", "or SM90 smem atom", "", choices=("", "MN_INTER", "MN_SW32", "MN_SW64", "MN_SW128",
                                                          "K_INTER", "K_SW32", "K_SW64", "K_SW128")),
         Field("elem_bits", "element bits", "16", choices=("8", "16", "32", "64")),
         Field("ptr_swizzle", "swizzle byte addresses", "no", choices=("no", "yes"), when=("atom", "")),
         Field("before", "before the swizzle too", "yes", choices=("no", "yes")),
         group="atoms",
         presets=(("S<3,4,3> o (8,64)", {}),
                  ("swizzle 128B: K_SW128 (fp16)", {"atom": "K_SW128"}),
                  ("swizzle 64B: K_SW64 (fp16)", {"atom": "K_SW64"}),
                  ("swizzle 32B: K_SW32 (fp16)", {"atom": "K_SW32"}),
                  ("MN-major 128B: MN_SW128", {"atom": "MN_SW128"}),
                  ("S<3,3,3> o (8,64):(64,1) on element offsets", {"layout": "S<3,3,3> o 0 o (8,64):(64,1)"})))
    def _swizzle_tab(v: dict[str, str]) -> Figure:
        """A (swizzled) shared-memory layout: each element's offset and bank; one colour per bank."""
        opts = dict(v)
        if opts["atom"]:
            opts["layout"] = ""  # the atom replaces the typed layout
        else:
            L = opts["layout"]
            if L and " o " not in L:
                _layout(L, "layout")  # a plain layout: the size limit
            elif L:
                from ..swizzle import parse_composed

                with _blame("layout"):
                    parse_composed(L)
        return _cli_figure("swizzle", opts, ints=("elem_bits",))


def _has_analysis() -> bool:
    from .. import commands

    return _has_atom_pictures() and hasattr(commands, "_analyze")


if _has_analysis():

    @tab("analyze", "memory access",
         Field("tv", "TV layout", "(32,8):(1,64)", "(thread, value) -> element", optional=True, when=("ldmatrix", "")),
         Field("layout", "tensor layout", "S<3,3,3> o 0 o (64,64):(64,1)", "a layout or a swizzled one"),
         Field("dtype", "element", "f16", choices=("f16", "bf16", "f32", "f64", "i8", "u8", "i32")),
         Field("space", "memory", "shared", choices=("shared", "global")),
         Field("op", "access", "ld", choices=("ld", "st")),
         Field("ldmatrix", "or ldmatrix", "", choices=("", "x1", "x2", "x4")),
         Field("trans", "ldmatrix .trans", "no", choices=("no", "yes"), when=("ldmatrix", "x1|x2|x4")),
         Field("instruction", "instruction", "", "blank: the worst one", optional=True),
         group="analysis",
         presets=(("TV (32,8):(1,64) over S<3,3,3> 64x64", {}),
                  ("ldmatrix x4, no swizzle: 8-way conflicts", {"layout": "(64,64):(64,1)", "ldmatrix": "x4"}),
                  ("ldmatrix x4 over S<3,3,3>", {"ldmatrix": "x4"}),
                  ("f32 column of a 32x32 tile", {"tv": "(32,1):(1,1)", "layout": "(32,32):(32,1)", "dtype": "f32"}),
                  ("f32 column, padded to 33", {"tv": "(32,1):(1,1)", "layout": "(32,32):(33,1)", "dtype": "f32"})))
    def _analyze_tab(v: dict[str, str]) -> Figure:
        """The memory accesses of a TV layout (or ldmatrix) over a tensor layout: vector width, sectors, bank conflicts."""
        opts = dict(v)
        if opts["ldmatrix"]:
            opts["tv"] = ""
        L = opts["layout"]
        if L and " o " not in L:
            _layout(L, "tensor layout")
        if opts["tv"]:
            _layout(opts["tv"], "TV layout")
        return _cli_figure("analyze", opts, ints=("instruction",))


def _suggest_tab(v: dict[str, str]) -> Figure:
    """Suggest a swizzle: the Swizzle<B,M,S> that remove the bank conflicts of a TV layout or ldmatrix over a shared tile, before and after."""
    from ..analysis.suggest import suggest_swizzle
    from ..analysis.tv import parse_tensor_layout

    with _blame("tile layout"):
        L = parse_tensor_layout(_required(v["layout"], "tile layout"))
        tile = L.outer if hasattr(L, "outer") else L
        if tile.cosize() > SUGGEST_LIMIT:
            raise LayoutError(f"suggest a swizzle: the tile {tile} spans {tile.cosize()} elements; the playground "
                              f"searches tiles of up to {SUGGEST_LIMIT} (cutelab suggest-swizzle takes more)")
    tv = None
    if not v["ldmatrix"]:
        tv = _layout(v["tv"], "TV layout")
    with _blame("tile layout"):
        s = suggest_swizzle(L, v["dtype"], tv=tv, ldmatrix=int(v["ldmatrix"][1]) if v["ldmatrix"] else None,
                            trans=v["trans"] == "yes", op=v["op"])
    return s.figure()


#: the most elements a tile of the suggest-a-swizzle tab may span (a 256 x 256 fp16 tile; shared memory holds less)
SUGGEST_LIMIT = 1 << 16

if _has_analysis():
    tab("suggest", "suggest a swizzle",
        Field("layout", "tile layout", "(64,64):(64,1)", "the shared tile, element index -> offset (no swizzle)"),
        Field("ldmatrix", "ldmatrix", "x4", choices=("", "x1", "x2", "x4")),
        Field("trans", "ldmatrix .trans", "no", choices=("no", "yes"), when=("ldmatrix", "x1|x2|x4")),
        Field("tv", "TV layout", "(32,8):(1,64)", "(thread, value) -> element; used when ldmatrix is blank",
              when=("ldmatrix", "")),
        Field("op", "access", "ld", choices=("ld", "st"), when=("ldmatrix", "")),
        Field("dtype", "element", "f16", choices=("f16", "bf16", "f32", "f64", "i8", "u8", "i32")),
        group="analysis",
        presets=(("ldmatrix x4, fp16 128B K-major 64x64 -> S<3,3,3>", {}),
                 ("ldmatrix x4.trans, MN-major 64x64", {"layout": "(64,64):(1,64)", "trans": "yes"}),
                 ("ldmatrix x4, 16x16 fp16 tile", {"layout": "(16,16):(16,1)"}),
                 ("TV (32,8):(1,64): 128-bit rows of a 64x64 tile", {"ldmatrix": ""}),
                 ("f32 column of a 32x32 tile -> S<5,0,5>", {"ldmatrix": "", "tv": "(32,1):(1,1)",
                                                             "layout": "(32,32):(32,1)", "dtype": "f32"}),
                 ("none found: f32, rows of 48", {"ldmatrix": "", "tv": "(32,1):(48,1)", "layout": "(32,48):(48,1)",
                                                  "dtype": "f32"})))(_suggest_tab)


def _copy_dst_tab(v: dict[str, str]) -> Figure:
    """make_tiled_copy(atom, destination TV layout, tile): the copy that lands on a given register layout (e.g. an MMA's A fragment), its source and destination side by side."""
    import cutelab as cute
    from ..nvgpu import CopyUniversalOp, warp

    from .. import commands

    dst = _layout(v["dst"], "destination TV layout")
    tile = _shape(v["tile"], "tile M,N")
    _limit(tile[0] * tile[1], f"tile {it.tuple_str(tile)}")
    elem = commands._dtype(v["elem"])
    try:
        if v["kind"] == "ldmatrix":
            atom = cute.make_copy_atom(warp.LdMatrix8x8x16bOp(v["trans"] == "yes", int(v["matrices"][1])), elem)
        else:
            atom = cute.make_copy_atom(CopyUniversalOp(), elem, num_bits_per_copy=_count(v["bits"], "bits") if v["bits"] else 0)
        tc = cute.make_tiled_copy(atom, dst, tile)
        fig = R.copy_figure(tc)
    except (TypeError, LayoutError) as e:
        err = LayoutError(f"make_tiled_copy({atom if 'atom' in locals() else v['kind']}, {dst}, {it.tuple_str(tile)}): {e}")
        err.field = getattr(e, "field", None) or "destination TV layout"  # type: ignore[attr-defined]
        raise err from None
    got = tc.layout_dst_tv_tiled
    same = got.size() == dst.size() and bool((got.offsets() == dst.offsets()).all())
    fig.notes.insert(0, f"destination TV layout given: {dst}; the copy's layout_dst_tv_tiled "
                        + ("maps every (t,v) to the same element: the registers are the given layout"
                           if same else f"is {got}: it differs from the given layout"))
    if v["smem"]:
        from ..analysis import analyze, copy_trace
        from ..analysis.tv import parse_tensor_layout

        with _blame("source tile in smem"):
            S = parse_tensor_layout(v["smem"])
            r = analyze(copy_trace(tc, S, "shared"))
        hint = ""
        if r.totals()["conflicts"] and (S.outer if hasattr(S, "outer") else S).cosize() <= SUGGEST_LIMIT:
            from ..analysis.suggest import suggest_swizzle

            with _blame("source tile in smem"):
                sug = suggest_swizzle(S, tiled_copy=tc)
            hint = (f"; suggested swizzle: {sug.best.swizzle} ({sug.best.totals['conflicts']} conflicts, layout "
                    f"{sug.best.layout})" if sug.found else "; no swizzle S<B,M,S> of the tile removes them")
        fig.notes.insert(1, f"source read from shared memory as {S}: {r.summary()}{hint}")
    return fig


#: destination (register) TV layouts of mma.sync m16n8k16 (one atom): make_tiled_copy_A/B/C use these
_MMA_A = "((4,8),(2,2,2)):((32,1),(16,8,128))"
_MMA_B = "((4,8),(2,2)):((16,1),(8,64))"
_MMA_C = "((4,8),(2,2)):((32,1),(16,8))"

if _has_atom_pictures():
    tab("copy_dst", "TiledCopy by destination",
        Field("kind", "atom", "ldmatrix", choices=("ldmatrix", "universal")),
        Field("matrices", "matrices", "x4", choices=("x1", "x2", "x4"), when=("kind", "ldmatrix")),
        Field("trans", ".trans", "no", choices=("no", "yes"), when=("kind", "ldmatrix")),
        Field("bits", "bits per copy", "", "blank or 0: one element", optional=True, when=("kind", "universal")),
        Field("elem", "element", "f16", choices=("f16", "bf16", "f32", "s8", "u8", "s32", "f64")),
        Field("dst", "destination TV layout", _MMA_A, "(thread, value) -> element of the tile: the registers"),
        Field("tile", "tile M,N", "16,16"),
        Field("smem", "source tile in smem", "", "optional: its bank conflicts, e.g. (16,16):(16,1)", optional=True),
        group="atoms",
        presets=(("ldmatrix x4 -> A of mma m16n8k16", {}),
                 ("ldmatrix x4 -> A, from a row-major 16x16 smem tile", {"smem": "(16,16):(16,1)"}),
                 ("ldmatrix x4 -> A, from S<1,3,3> o 16x16 smem", {"smem": "S<1,3,3> o 0 o (16,16):(16,1)"}),
                 ("ldmatrix x2 -> B of mma m16n8k16 (K-major)", {"matrices": "x2", "dst": _MMA_B, "tile": "8,16"}),
                 ("ldmatrix x2.trans -> B (MN-major smem)", {"matrices": "x2", "trans": "yes", "dst": _MMA_B,
                                                             "tile": "8,16"}),
                 ("universal 32-bit -> C of mma m16n8k16", {"kind": "universal", "elem": "f32", "dst": _MMA_C,
                                                            "tile": "16,8"})))(_copy_dst_tab)

# the Blackwell tabs (tcgen05 UMMA, tensor memory, TMA box, a tile's path): web/tabs_sm100.py, which
# the package (web/__init__.py) imports after this module to register them
