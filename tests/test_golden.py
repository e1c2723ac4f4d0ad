"""Differential test against CuTe DSL 4.8.1: golden vectors made by scripts/make_golden.py.

For every case where the DSL answered, cutelab must print the same answer. Where the DSL
rejected the input, cutelab must raise LayoutError. Where the DSL crashed the interpreter,
cutelab must either answer or raise LayoutError (never crash). The two documented
exceptions, where the DSL answers outside the operation's domain, are checked by brute force:
complement of a non-injective layout, and the coordinate of an offset no coordinate reaches.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import cutelab as cute
from cutelab import Layout, LayoutError
from cutelab.int_tuple import flatten_to_tuple, tuple_str

GOLDEN = Path(__file__).parent / "golden"
# the layout-algebra files of scripts/make_golden.py ({"op": ...}); other scripts' files (mma_*.json, ...) have
# their own tests
def _is_layout_golden(p: Path) -> bool:
    with p.open() as f:
        return f.read(8) == '{"op": "'


FILES = sorted(p for p in GOLDEN.glob("*.json") if _is_layout_golden(p))


def _arg(a: dict):
    (kind, v), = a.items()
    if kind == "layout":
        return Layout.parse(v)
    if kind == "int":
        return v
    if kind == "tuple":
        return cute.parse_tuple(v)
    if kind == "coord":
        return cute.parse_tuple(v, allow_none=True)
    if kind == "tiler":
        return tuple(Layout.parse(x) if isinstance(x, str) else x for x in v)
    raise ValueError(kind)


def _s(x) -> str:
    if isinstance(x, Layout):
        return str(x)
    return tuple_str(x)


def _call(op: str, args: list):
    if op in ("size", "cosize", "rank", "depth"):
        return str(getattr(cute, op)(*args))
    if op == "max_common_vector":
        return str(cute.max_common_vector(*args))
    if op == "make_layout_tv":
        t, tv = cute.make_layout_tv(*args)
        return f"[{_s(t)}, {tv}]"
    if op == "slice_and_offset":
        sub, off = cute.slice_and_offset(*args)
        return f"[{sub}, {off}]"
    if op == "get_hier_coord":
        return _s(args[0].get_hier_coord(args[1]))
    if op == "get_flat_coord":
        return _s(args[0].get_flat_coord(args[1]))
    if op == "crd2idx":
        return str(cute.crd2idx(*args))
    return _s(getattr(cute, op)(*args))


def _injective(layout: Layout) -> bool:
    offs = layout.offsets()
    return len(np.unique(offs)) == len(offs)


def _valid(text: str) -> Layout | None:
    """CuTe's printed answer as a Layout, or None if it is not a valid layout (e.g. a 0 shape)."""
    try:
        return Layout.parse(text)
    except LayoutError:
        return None


def _same_function(r: Layout, f) -> bool:
    return all(r(i) == f(i) for i in range(r.size()))


def _composition_wrong(a: Layout, b, r: Layout) -> bool:
    """True when CuTe's answer r is not a o b (checked at every index, mode by mode for tilers)."""
    if isinstance(b, Layout):
        if any(b(i) < 0 for i in range(b.size())):
            return True  # b reaches negative offsets, outside a's domain: a o b is undefined there
        return not _same_function(r, lambda i: a(b(i)))
    modes_a = list(a) if isinstance(a.shape, tuple) else [a]
    modes_r = list(r) if isinstance(r.shape, tuple) else [r]
    for am, bm, rm in zip(modes_a, b, modes_r):
        bl = cute.make_layout(bm) if isinstance(bm, int) else bm
        if bl is None:
            continue
        if _composition_wrong(am, bl, rm):
            return True
    return False


def _tiler_layout(t):
    return cute.make_layout(t) if isinstance(t, int) else t


def _divide_domain_fails(a: Layout, t, r: Layout) -> bool:
    """The divide is undefined (no complement of the tiler), or CuTe's answer r does not reach the
    same offsets as a o (t, t*) (checked by brute force over the whole domain)."""
    if isinstance(t, Layout) or isinstance(t, int):
        pairs = [(a, _tiler_layout(t))]
    else:
        modes = list(a) if isinstance(a.shape, tuple) else [a]
        pairs = [(m, _tiler_layout(x)) for m, x in zip(modes, t) if x is not None]
    expected = [0]
    for m, tl in pairs:
        try:
            full = cute.make_layout(tl, cute.complement(tl, cute.coalesce(m).shape))
        except LayoutError:
            return True
        if int(full.offsets().max()) >= m.size():
            return True  # a o (t, t*) leaves a's domain: not a division of a
    # a valid divide only reorders a's domain, so it reaches exactly the offsets a reaches
    return set(r.offsets().tolist()) != set(a.offsets().tolist())


def _product_domain_fails(a: Layout, t, r: Layout) -> bool:
    """The product is undefined (no complement of the block), or CuTe's answer r does not reach
    the offsets {a(i) + (a* o t)(j)} of the true product (brute force)."""
    if isinstance(t, tuple):
        modes = list(a) if isinstance(a.shape, tuple) else [a]
        pairs = [(m, _tiler_layout(x)) for m, x in zip(modes, t) if x is not None]
        rest = modes[len(t):] + [m for m, x in zip(modes, t) if x is None]
    else:
        pairs, rest = [(a, _tiler_layout(t))], []
    image = {0}
    for m, tl in pairs:
        if all(d == 0 for d in flatten_to_tuple(tl.stride)):
            comp_vals = [0]  # a stride-0 tiler never reaches into the complement
        else:
            try:
                c = cute.complement(m, m.size() * cute.cosize(tl))
            except LayoutError:
                return True
            comp_vals = [c(int(x)) if 0 <= int(x) < c.size() else None for x in tl.offsets()]
            if None in comp_vals:
                return True
        vals = {x + y for x in m.offsets().tolist() for y in comp_vals}
        image = {x + y for x in image for y in vals}
    for m in rest:
        image = {x + y for x in image for y in m.offsets().tolist()}
    return set(r.offsets().tolist()) != image


def _tv_wrong(thr: Layout, val: Layout, result: str) -> bool:
    """CuTe's (tiler, tv) is wrong when tv(i) differs from right_inverse(raked_product(thr, val))(i)."""
    tv = _valid(result.strip("[]").split(", ", 1)[1])
    try:
        mn = cute.raked_product(thr, val)
    except LayoutError:
        # allowed only when the product behind the TV layout is undefined (no complement)
        rr = max(cute.rank(thr), cute.rank(val))
        pt, pv = _padded(thr, rr), _padded(val, rr)
        try:
            cute.complement(pt, pt.size() * cute.cosize(pv))
        except LayoutError:
            return True
        # the complement exists but our composition refused: CuTe's answer must then fail to be a
        # TV layout of its tile (a bijection onto [0, size(tiler)))
        if tv is None:
            return True
        tiler = cute.parse_tuple(result.strip("[]").split(", ", 1)[0])
        return sorted(tv.offsets().tolist()) != list(range(cute.size(tiler)))
    inv = cute.right_inverse(mn)
    from cutelab.int_tuple import crd2idx
    if tv is None or any(tv(i) != crd2idx(i, inv.shape, inv.stride) for i in range(tv.size())):
        return True
    tiler = cute.parse_tuple(result.strip("[]").split(", ", 1)[0])
    return sorted(tv.offsets().tolist()) != list(range(cute.size(tiler)))  # not a TV layout of its tile


def _padded(a: Layout, r: int) -> Layout:
    return cute.append(a, up_to_rank=r) if cute.rank(a) < r else a


def _allowed_refusal(op: str, args: list, result: str) -> bool:
    """Inputs outside the operation's domain, where CuTe answers with garbage and we raise.

    Refusing is allowed only when a brute-force check shows CuTe's answer is not a valid answer
    (it is not a layout, or breaks the operation's defining identity), or when the operation's
    defining complement does not exist.
    """
    r = _valid(result.strip("[]").split(", ")[-1]) if op not in (
        "get_hier_coord", "get_flat_coord") else None
    if op == "complement":
        if r is None or not _injective(cute.filter(args[0])):
            return True
        cot = args[1] if len(args) > 1 else cute.cosize(cute.filter(args[0]))
        if isinstance(cot, int) and r.size() < cot // cute.filter(args[0]).size():
            return True  # CuTe's own postcondition fails: layout and result do not cover the cotarget
        img = set(args[0].offsets().tolist())
        offs = r.offsets().tolist()
        return any(o in img for o in offs[1:]) or any(x >= y for x, y in zip(offs, offs[1:]))
    if op in ("get_hier_coord", "get_flat_coord"):
        return _coord_wrong(op, args, result)
    if op == "crd2idx":  # CuTe extends the formula past the shape; the coordinate is out of range
        coord, layout = args
        return not _in_range(coord, layout.shape)
    if r is None:
        return True
    if op == "composition":
        return _composition_wrong(args[0], args[1], r)
    if op == "tile_to_shape":
        block, trg = args[0], args[1]
        r_ = cute.rank(trg)
        padded = _padded(block, r_)
        bs, ts = cute.product_each(padded.shape), cute.product_each(trg)
        bs, ts = (bs if isinstance(bs, tuple) else (bs,)), (ts if isinstance(ts, tuple) else (ts,))
        if any(t % b for b, t in zip(bs, ts)):
            return True  # the block does not divide the target: CuTe C++ static_asserts, the DSL pads
        prod = cute.ceil_div(cute.product_each(trg), cute.product_each(padded.shape))
        order = args[2] if len(args) > 2 else None
        tiler = cute.make_ordered_layout(prod, order) if order is not None else cute.make_layout(prod)
        return _product_domain_fails(padded, tiler, r)
    if op in ("logical_divide", "zipped_divide", "tiled_divide", "flat_divide"):
        return _divide_domain_fails(args[0], args[1], r)
    if op in ("logical_product", "zipped_product", "tiled_product", "flat_product"):
        return _product_domain_fails(args[0], args[1], r)
    if op in ("blocked_product", "raked_product"):
        a, t = args
        rr = max(cute.rank(a), cute.rank(t))
        return _product_domain_fails(_padded(a, rr), _padded(t, rr), r)
    if op == "make_layout_tv":
        return _tv_wrong(args[0], args[1], result)
    if op == "make_ordered_layout":  # a repeated order gives two modes one stride: not compact
        return not _injective(r)
    return False


def _in_range(coord, shape) -> bool:
    if isinstance(coord, tuple):
        return isinstance(shape, tuple) and len(coord) == len(shape) and all(
            _in_range(c, x) for c, x in zip(coord, shape))
    return coord is None or 0 <= coord < cute.size(shape)


def _coord_wrong(op: str, args: list, result: str) -> bool:
    """CuTe's coordinate for an offset is wrong when it is not a coordinate of the layout or
    does not map to the offset."""
    layout, off = args
    crd = cute.parse_tuple(result)
    try:
        if op == "get_flat_coord" and isinstance(layout.shape, tuple):
            crd = tuple(cute.idx2crd(c, s) for c, s in zip(crd, layout.shape))
        return layout(crd) != off
    except LayoutError:
        return True


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_golden(path: Path):
    data = json.loads(path.read_text())
    op = data["op"]
    bad = []
    for case in data["cases"]:
        if case.get("error", "").startswith(("TypeError", "AttributeError", "IndexError")):
            continue  # a Python bug inside the DSL's own wrapper: no answer to compare with
        args = [_arg(a) for a in case["args"]]
        desc = f"{op}({', '.join(_s(a) if not isinstance(a, tuple) or op != 'slice_and_offset' else tuple_str(a) for a in args)})"
        try:
            got = _call(op, args)
        except LayoutError as e:
            if "result" in case and not _allowed_refusal(op, args, case["result"]):
                bad.append(f"{desc}: CuTe gives {case['result']}, cutelab raised: {e}")
            continue
        if "result" in case:
            if got != case["result"] and not (
                op in ("get_hier_coord", "get_flat_coord") and _coord_wrong(op, args, case["result"])
                and not _coord_wrong(op, args, got)
            ):
                bad.append(f"{desc}: CuTe gives {case['result']}, cutelab gives {got}")
        elif "error" in case:
            bad.append(f"{desc}: CuTe rejects it ({case['error']}), cutelab gives {got}")
    n = len(data["cases"])
    assert not bad, f"{len(bad)} of {n} cases differ from CuTe DSL:\n" + "\n".join(bad[:25])


def test_golden_files_present():
    assert len(FILES) >= 30, "tests/golden is incomplete: run scripts/make_golden.py"
