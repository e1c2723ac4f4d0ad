"""Hypothesis strategies for layouts and admissible second operands.

Layouts: depth up to 3, with compact, gapped, zero or arbitrary strides. Second operands are
built so that the operation is admissible by construction (no filtering), so properties can
check the postconditions on every example.

- ``layouts()``               any valid layout (size <= MAX_SIZE), strides of every kind
- ``injective_layouts()``     strides that, sorted, each divide the next span: complement and
                              left_inverse are defined, the image has no overlaps
- ``composable_pairs()``      (A, B) with composition(A, B) admissible
- ``tiler_pairs()``           (A, B) with B a rank-1 divide tiler admissible for A
- ``bijective_layouts()``     compact layouts in any mode order (a bijection onto [0, size))
"""

from __future__ import annotations

import itertools
import math

from hypothesis import strategies as st

from cutelab import Layout
from cutelab import int_tuple as it

MAX_SIZE = 512


def nest(flat: tuple, draw, max_depth: int = 3):
    """Fold a flat tuple into a random nesting of depth <= max_depth (keeps the leaf order)."""

    def go(items: list, d: int) -> tuple:
        out = []
        i = 0
        while i < len(items):
            k = draw(st.integers(1, len(items) - i))
            chunk = items[i:i + k]
            i += k
            if d > 1 and (len(chunk) > 1 or draw(st.integers(0, 6)) == 0):
                out.append(go(chunk, d - 1))
            else:
                out.extend(chunk)
        return tuple(out)

    return go(list(flat), max_depth)


def _profile_of(flat_len: int, draw, max_depth: int):
    """A random profile (nested tuple of zeros) with flat_len leaves; rank-1 may be an int."""
    if flat_len == 1 and draw(st.booleans()):
        return 0
    return nest((0,) * flat_len, draw, max_depth)


def _split_shape(n: int, draw, max_parts: int = 4) -> list:
    """A random factorisation of n into up to max_parts factors (in order)."""
    parts = []
    for _ in range(max_parts - 1):
        divs = [d for d in range(1, n + 1) if n % d == 0]
        d = draw(st.sampled_from(divs))
        parts.append(d)
        n //= d
    parts.append(n)
    return [p for p in parts if p != 1] or [1]


@st.composite
def flat_shapes(draw, min_len: int = 1, max_len: int = 5, max_size: int = MAX_SIZE, ones: bool = True):
    n = draw(st.integers(min_len, max_len))
    out = []
    total = 1
    for _ in range(n):
        hi = max(1, min(8, max_size // total))
        s = draw(st.integers(1 if ones else min(2, hi), hi))
        out.append(s)
        total *= s
    return tuple(out)


@st.composite
def strides_for(draw, shp: tuple, kind: str | None = None):
    """Strides for a flat shape: compact, gapped, zero, arbitrary or negative."""
    kind = kind or draw(st.sampled_from(["compact", "gapped", "zero", "arbitrary", "arbitrary"]))
    n = len(shp)
    if kind == "compact":
        order = draw(st.permutations(range(n)))
        return _compact_in_order(shp, order, gaps=[1] * n)
    if kind == "gapped":
        order = draw(st.permutations(range(n)))
        gaps = [draw(st.integers(1, 4)) for _ in range(n)]
        return _compact_in_order(shp, order, gaps)
    if kind == "zero":
        base = draw(strides_for(shp, "gapped"))
        mask = [draw(st.booleans()) for _ in range(n)]
        return tuple(0 if m else d for m, d in zip(mask, base))
    if kind == "negative":
        return tuple(draw(st.integers(-24, 24)) for _ in range(n))
    return tuple(draw(st.integers(0, 24)) for _ in range(n))


def _compact_in_order(shp, order, gaps):
    st_ = [0] * len(shp)
    cur = 1
    for i in order:
        cur *= gaps[i]
        st_[i] = cur
        cur *= shp[i]
    return tuple(st_)


@st.composite
def layouts(draw, kind: str | None = None, max_depth: int = 3, max_size: int = MAX_SIZE,
            min_len: int = 1, max_len: int = 5):
    """Any valid layout: nested shape (depth <= max_depth) and strides of the given kind."""
    shp = draw(flat_shapes(min_len=min_len, max_len=max_len, max_size=max_size))
    std = draw(strides_for(shp, kind))
    return _build(shp, std, draw, max_depth)


def _build(shp, std, draw, max_depth=3):
    prof = _profile_of(len(shp), draw, max_depth)
    if prof == 0:
        return Layout(shp[0], std[0])
    return Layout(it.unflatten(shp, prof), it.unflatten(std, prof))


@st.composite
def injective_layouts(draw, max_size: int = MAX_SIZE, ones_and_zeros: bool = False):
    """Layouts whose modes, sorted by stride, each start at a multiple of the span below.

    With ones_and_zeros, shape-1 modes (any stride) and stride-0 modes may be mixed in; they are
    what filter() removes.
    """
    shp = draw(flat_shapes(max_size=max_size, ones=False))
    std = draw(strides_for(shp, "gapped"))
    if ones_and_zeros:
        extra = draw(st.lists(st.tuples(st.integers(1, 3), st.integers(0, 9)), max_size=2))
        shp = list(shp)
        std = list(std)
        for s, d in extra:
            pos = draw(st.integers(0, len(shp)))
            if s > 1:
                d = 0
            shp.insert(pos, s)
            std.insert(pos, d)
        shp, std = tuple(shp), tuple(std)
    return _build(shp, std, draw)


@st.composite
def bijective_layouts(draw, max_size: int = MAX_SIZE):
    shp = draw(flat_shapes(max_size=max_size))
    std = draw(strides_for(shp, "compact"))
    return _build(shp, std, draw)


@st.composite
def composable_pairs(draw, max_size: int = MAX_SIZE):
    """(A, B) with composition(A, B) admissible.

    B's modes are runs of a refinement of A's (coalesced) shape: a mode of B has the stride of the
    start of its run (a prefix product) and the product of the run as its shape; the run through
    A's last mode may run past the end of A (A's last mode extends). Some B modes have stride 0.
    """
    a = draw(layouts(max_size=max_size))
    from cutelab import coalesce

    c = coalesce(a)
    cs = c.shape if isinstance(c.shape, tuple) else (c.shape,)
    fine: list = []
    for s in cs:
        fine.extend(_split_shape(s, draw, 3))
    fine.append(draw(st.sampled_from([1, 1, 2, 3])))  # beyond the end of A
    pre = [1]
    for s in fine:
        pre.append(pre[-1] * s)
    # choose disjoint runs [i, j)
    cuts = sorted(set(draw(st.lists(st.integers(0, len(fine)), min_size=2, max_size=6))))
    runs = [(cuts[k], cuts[k + 1]) for k in range(len(cuts) - 1)]
    runs = [r for r in runs if draw(st.integers(0, 3)) > 0] or runs[:1]
    if not runs:
        runs = [(0, 1)]
    runs = draw(st.permutations(runs))
    bshp, bstd = [], []
    for i, j in runs:
        s = math.prod(fine[i:j]) or 1
        bshp.append(s)
        bstd.append(pre[i] if s > 1 else 0)
    if draw(st.integers(0, 4)) == 0:
        pos = draw(st.integers(0, len(bshp)))
        bshp.insert(pos, draw(st.integers(1, 3)))
        bstd.insert(pos, 0)
    total = math.prod(bshp)
    while total > 4 * MAX_SIZE:
        k = bshp.index(max(bshp))
        total //= bshp[k]
        bshp[k], bstd[k] = 1, 0
    b = _build(tuple(bshp), tuple(bstd), draw)
    return a, b


@st.composite
def pow2_layouts(draw, max_size: int = MAX_SIZE, zeros: bool = True):
    """Layouts whose shapes and non-zero strides are powers of two (divisibility holds widely)."""
    n = draw(st.integers(1, 4))
    shp, std = [], []
    total = 1
    for _ in range(n):
        e = draw(st.integers(0, max(0, min(3, int(math.log2(max_size // total))))))
        shp.append(2 ** e)
        total *= 2 ** e
        std.append(0 if zeros and draw(st.integers(0, 5)) == 0 else 2 ** draw(st.integers(0, 6)))
    return _build(tuple(shp), tuple(std), draw)


@st.composite
def tiler_pairs(draw, max_size: int = MAX_SIZE):
    """(A, B): A a layout, B a layout tiler admissible for logical_divide(A, B).

    B is injective with sorted strides dividing the spans below, and cosize(B) divides size(A);
    A's (coalesced) modes are powers of two so every divisibility check passes.
    """
    shp = draw(flat_shapes(max_size=max_size))
    shp = tuple(2 ** max(0, s.bit_length() - 1) for s in shp)
    std = draw(strides_for(shp, draw(st.sampled_from(["compact", "gapped", "zero"]))))
    std = tuple(2 ** max(0, d.bit_length() - 1) if d else 0 for d in std)
    a = _build(shp, std, draw)
    n = math.prod(shp)
    e = int(math.log2(n))
    # B: injective pow2 layout with cosize dividing n
    k = draw(st.integers(0, e))
    fine = [2] * k
    bshp, bstd = [], []
    cur = 1
    i = 0
    while i < len(fine):
        j = draw(st.integers(i + 1, len(fine)))
        s = 2 ** (j - i)
        bshp.append(s)
        bstd.append(cur)
        cur *= s
        i = j
    if not bshp:
        bshp, bstd = [1], [0]
    # spread the modes with gaps, keeping cosize <= n
    slack = e - k
    out_std = []
    mult = 1
    for s, d in zip(bshp, bstd):
        g = draw(st.integers(0, slack))
        slack -= g
        mult *= 2 ** g
        out_std.append(d * mult)
    perm = draw(st.permutations(range(len(bshp))))
    b = _build(tuple(bshp[p] for p in perm), tuple(out_std[p] for p in perm), draw)
    return a, b


def all_coords(shape):
    """Every hierarchical coordinate of shape, in colexicographic order."""
    n = it.product(shape)
    return [it.idx2crd(i, shape) for i in range(n)]


def ext_eval(layout: Layout, i: int):
    """CuTe's layout(i) with i allowed past size(layout): the last mode extends."""
    return it.crd2idx(i, layout.shape, layout.stride)


def image(layout: Layout) -> list:
    return [layout(i) for i in range(layout.size())]
