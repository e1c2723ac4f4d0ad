#!/usr/bin/env python3
"""Golden-vector generator: record what NVIDIA CuTe DSL answers for layout-algebra inputs.

What it does
    Builds a deterministic list of inputs per layout-algebra operation (random layouts of
    several stride families, the inputs of CUTLASS's C++ unit tests test/unit/cute/core/*.cpp
    transcribed as data, and a few hand-picked seeds), evaluates every input with the CuTe DSL
    (package nvidia-cutlass-dsl, `cutlass.cute`), and writes one file per operation:

        tests/golden/<op>.json = {"op": ..., "dsl_version": ..., "call": ..., "result_format": ...,
                                  "cases": [{"args": [ARG, ...], "result": "<str>"}
                                            | {"args": [...], "error": "<first line>"}
                                            | {"args": [...], "crash": true}, ...]}

    ARG is {"layout": "S:D"} | {"int": n} | {"tuple": "(2,(3,4))"} | {"coord": "(1,None)"}
    | {"tiler": [ELEM, ...]} with ELEM a layout string, an int or null (None).

How the DSL is driven
    No GPU is needed.  Inside one `@cute.jit` function a plain (non-jit) Python helper loops
    over the cases; static layouts are evaluated while the function is traced, so str() of a
    result is its static value.  The jit function raises at the end so that nothing is ever
    compiled.  Cases run in chunks in subprocesses (`--worker`), each printing one JSON line
    per case as soon as it is done; if a subprocess dies or hangs, the first unanswered case
    is re-run alone and, if it dies alone too, recorded as {"crash": true}.

How to run
    python3 -m venv /work/dslvenv && /work/dslvenv/bin/pip install nvidia-cutlass-dsl==4.8.1
    /work/dslvenv/bin/python scripts/make_golden.py [--n N] [--seed S] [--ops a,b] [--jobs J]

    --n scales the number of random cases (N for the common ops, fewer for the others);
    output is deterministic given --seed and --n (and the DSL version).  This script does not
    import cutelab.
"""
import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(os.path.dirname(HERE), "tests", "golden")
MARK = "@@GOLDEN@@ "

# ---------------------------------------------------------------------------------------------
# CuTe notation: parse and format int tuples / layouts (pure Python)
# ---------------------------------------------------------------------------------------------


def parse_tuple(s):
    """'(2,(3,None))' -> (2, (3, None)); '8' -> 8; '_' and 'None' -> None; '()' -> ()."""
    s = s.replace(" ", "")
    pos = 0

    def item():
        nonlocal pos
        if s[pos] == "(":
            pos += 1
            out = []
            if s[pos] == ")":
                pos += 1
                return ()
            while True:
                out.append(item())
                c = s[pos]
                pos += 1
                if c == ")":
                    return tuple(out)
                if c != ",":
                    raise ValueError("bad tuple %r" % s)
        if s.startswith("None", pos):
            pos += 4
            return None
        if s[pos] == "_":
            pos += 1
            return None
        j = pos
        if s[pos] == "-":
            pos += 1
        while pos < len(s) and s[pos].isdigit():
            pos += 1
        if j == pos:
            raise ValueError("bad tuple %r" % s)
        return int(s[j:pos])

    v = item()
    if pos != len(s):
        raise ValueError("trailing text in %r" % s)
    return v


def fmt(x):
    """Nested tuple -> CuTe notation without spaces; None -> 'None'."""
    if isinstance(x, tuple):
        return "(" + ",".join(fmt(e) for e in x) + ")"
    if x is None:
        return "None"
    return str(int(x))


def parse_layout(s):
    shp, std = s.split(":")
    return parse_tuple(shp), parse_tuple(std)


def lay(shape, stride):
    return fmt(shape) + ":" + fmt(stride)


def leaves(x):
    if isinstance(x, tuple):
        for e in x:
            yield from leaves(e)
    else:
        yield x


def prod(x):
    p = 1
    for e in leaves(x):
        p *= e
    return p


def lay_size(s):
    return prod(parse_layout(s)[0])


def lay_cosize(s):
    shp, std = parse_layout(s)
    return 1 + sum((a - 1) * abs(d) for a, d in zip(leaves(shp), leaves(std)))


def rank_of(x):
    return len(x) if isinstance(x, tuple) else 1


def unflatten(flat, like):
    it = iter(flat)

    def go(t):
        if isinstance(t, tuple):
            return tuple(go(e) for e in t)
        return next(it)

    return go(like)


# ---------------------------------------------------------------------------------------------
# Random inputs
# ---------------------------------------------------------------------------------------------

LEAF_CHOICES = [1, 2, 2, 2, 3, 4, 4, 4, 5, 6, 8, 8, 8, 12, 16, 16, 32, 7]
POW2_CHOICES = [1, 2, 2, 4, 4, 8, 8, 16, 32]
MAX_SIZE = 4096


def rand_shape(rng, depth=None, rank=None, max_size=MAX_SIZE, pow2=False, scalar_ok=True):
    """A random (possibly nested) shape of total size <= max_size."""
    if depth is None:
        depth = rng.choice([0, 1, 1, 1, 2, 2, 3]) if scalar_ok else rng.choice([1, 1, 2, 2, 3])
    if rank is None:
        rank = rng.choice([1, 2, 2, 3, 3, 4])
    choices = POW2_CHOICES if pow2 else LEAF_CHOICES
    for _ in range(100):
        shp = _rand_shape(rng, depth, rank, choices)
        if prod(shp) <= max_size:
            return shp
    return tuple(2 for _ in range(rank)) if depth else 2


def _rand_shape(rng, depth, rank, choices):
    if depth == 0:
        return rng.choice(choices)
    out = []
    for i in range(rank):
        sub_depth = rng.randint(0, depth - 1) if i else depth - 1  # at least one mode at full depth
        out.append(_rand_shape(rng, sub_depth, rng.choice([1, 2, 2, 3]), choices))
    rng.shuffle(out)
    return tuple(out)


def compact_strides(shape, order=None, zero_ones=True, gaps=None):
    """Strides of a compact layout visiting leaves in `order` (list of leaf indices, fastest
    first); gaps[i] multiplies the running stride after leaf i (holes)."""
    flat = list(leaves(shape))
    n = len(flat)
    order = list(range(n)) if order is None else order
    st = [0] * n
    cur = 1
    for k, i in enumerate(order):
        st[i] = 0 if (zero_ones and flat[i] == 1) else cur
        cur *= flat[i]
        if gaps:
            cur *= gaps[k]
    return unflatten(st, shape)


FAMILIES = ["col", "row", "ordered", "gapped", "zeros", "arbitrary"]


def rand_strides(rng, shape, family):
    flat = list(leaves(shape))
    n = len(flat)
    if family == "col":
        return compact_strides(shape, zero_ones=rng.random() < 0.7)
    if family == "row":
        return compact_strides(shape, list(range(n - 1, -1, -1)), zero_ones=rng.random() < 0.7)
    if family == "ordered":
        order = list(range(n))
        rng.shuffle(order)
        return compact_strides(shape, order, zero_ones=rng.random() < 0.7)
    if family == "gapped":
        order = list(range(n))
        if rng.random() < 0.5:
            rng.shuffle(order)
        gaps = [rng.choice([1, 1, 2, 3, 4]) for _ in range(n)]
        st = compact_strides(shape, order, zero_ones=rng.random() < 0.5, gaps=gaps)
        if rng.random() < 0.3:
            k = rng.choice([2, 3, 4])
            st = unflatten([d * k for d in leaves(st)], shape)
        return st
    if family == "zeros":
        base = rand_strides(rng, shape, rng.choice(["col", "row", "ordered", "gapped"]))
        fl = list(leaves(base))
        for i in range(n):
            if rng.random() < 0.4:
                fl[i] = 0
        return unflatten(fl, shape)
    # arbitrary
    fl = []
    for _ in range(n):
        r = rng.random()
        if r < 0.1:
            fl.append(0)
        elif r < 0.13:
            fl.append(-rng.choice([1, 2, 4]))
        elif r < 0.6:
            fl.append(rng.choice([1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64, 128]))
        else:
            fl.append(rng.randint(1, 100))
    return unflatten(fl, shape)


def rand_layout(rng, family=None, **kw):
    shape = rand_shape(rng, **kw)
    if family is None:
        family = rng.choice(FAMILIES + ["col", "row", "ordered", "gapped"])
    return lay(shape, rand_strides(rng, shape, family))


def divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def factorize_into(rng, n, parts):
    """Split n into `parts` factors (product == n), random order."""
    out = []
    rem = n
    for _ in range(parts - 1):
        d = rng.choice(divisors(rem))
        out.append(d)
        rem //= d
    out.append(rem)
    rng.shuffle(out)
    return out


def prefix_products(shape):
    out = [1]
    for s in leaves(shape):
        out.append(out[-1] * s)
    return out


def rand_b_for(rng, a, allow_tiler=True):
    """A second operand for composition / divides, often admissible w.r.t. layout a."""
    shp, _ = parse_layout(a)
    n = prod(shp)
    r = rng.random()
    if allow_tiler and isinstance(shp, tuple) and len(shp) >= 2 and r < 0.3:
        return {"tiler": rand_tiler_for(rng, shp)}
    r = rng.random()
    if r < 0.4:
        # compact layout over a divisor of size(a), stride from the prefix products of a's shape
        d = rng.choice(divisors(n))
        parts = rng.choice([1, 1, 2, 2, 3])
        fac = factorize_into(rng, d, parts)
        fac = [f for f in fac if f != 1] or [d]
        bshape = tuple(fac) if (len(fac) > 1 or rng.random() < 0.3) else fac[0]
        order = list(range(len(fac)))
        if rng.random() < 0.5:
            rng.shuffle(order)
        st = compact_strides(bshape, order, zero_ones=True)
        k = rng.choice(prefix_products(shp)) if rng.random() < 0.3 else 1
        st = unflatten([x * k for x in leaves(st)], bshape)
        if prod(bshape) * k > n and rng.random() < 0.7:
            st = compact_strides(bshape, order)
        return {"layout": lay(bshape, st)}
    if r < 0.65:
        # power-of-two shapes and strides
        bshape = rand_shape(rng, pow2=True, max_size=max(n, 1), depth=rng.choice([0, 1, 1, 2]),
                            rank=rng.choice([1, 2, 2, 3]))
        fam = rng.choice(["col", "row", "ordered", "gapped"])
        return {"layout": lay(bshape, rand_strides(rng, bshape, fam))}
    if r < 0.8:
        return {"layout": lay(n, 1) if rng.random() < 0.5 else lay((n,), (1,))}
    # anything
    return {"layout": rand_layout(rng, max_size=max(2 * n, 4))}


def rand_tiler_for(rng, shp):
    out = []
    k = rng.randint(1, len(shp))
    for m in shp[:k]:
        ms = prod(m)
        r = rng.random()
        if r < 0.2:
            out.append(None)
        elif r < 0.6:
            out.append(rng.choice(divisors(ms)) if rng.random() < 0.85 else rng.randint(1, 2 * ms))
        else:
            d = rng.choice(divisors(ms))
            f = factorize_into(rng, d, rng.choice([1, 2]))
            f = [x for x in f if x != 1] or [d]
            bs = tuple(f) if len(f) > 1 else (f[0] if rng.random() < 0.7 else (f[0],))
            o = list(range(len(list(leaves(bs)))))
            if rng.random() < 0.5:
                rng.shuffle(o)
            st = compact_strides(bs, o)
            if rng.random() < 0.3:
                mult = rng.choice(divisors(ms))
                st = unflatten([x * mult for x in leaves(st)], bs)
            out.append(lay(bs, st))
    return out


def rand_small_layout(rng, max_size=16):
    shp = rand_shape(rng, depth=rng.choice([0, 1, 1, 2]), rank=rng.choice([1, 2, 2, 3]),
                     max_size=max_size)
    fam = rng.choice(["col", "col", "row", "ordered", "gapped", "zeros", "arbitrary"])
    return lay(shp, rand_strides(rng, shp, fam))


def rand_coord_in(rng, shp, none_p=0.0):
    """A hierarchical coordinate inside shape (ints), with some leaves/modes replaced by None."""
    if not isinstance(shp, tuple):
        return None if rng.random() < none_p else rng.randrange(shp)
    if rng.random() < none_p * 0.5:
        return None
    r = rng.random()
    if r < 0.25:
        # a mode given by a single (1-D) index
        return tuple(rng.randrange(prod(m)) if rng.random() < 0.5 else rand_coord_in(rng, m, none_p)
                     for m in shp)
    return tuple(rand_coord_in(rng, m, none_p) for m in shp)


def L(s):
    return {"layout": s}


def I(n):
    return {"int": n}


def T(t):
    return {"tuple": t if isinstance(t, str) else fmt(t)}


def C(t):
    return {"coord": t if isinstance(t, str) else fmt(t)}


def any_layout(rng):
    r = rng.random()
    if r < 0.15:
        return rand_small_layout(rng)
    return rand_layout(rng)


def injective_layout(rng):
    return rand_layout(rng, family=rng.choice(["col", "row", "ordered", "gapped", "gapped"]))


def gen_unary(rng, n, maker=any_layout):
    return [[L(maker(rng))] for _ in range(n)]


def gen_composition(rng, n):
    out = []
    for _ in range(n):
        a = any_layout(rng) if rng.random() < 0.4 else injective_layout(rng)
        r = rng.random()
        if r < 0.08:
            shp = parse_layout(a)[0]
            out.append([L(a), I(rng.choice(divisors(prod(shp))))])
        elif r < 0.14 and isinstance(parse_layout(a)[0], tuple):
            shp = parse_layout(a)[0]
            out.append([L(a), T(tuple(rng.choice(divisors(prod(m))) for m in shp[:rng.randint(1, len(shp))]))])
        else:
            out.append([L(a), rand_b_for(rng, a)])
    return out


def gen_complement(rng, n):
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.6:
            a = injective_layout(rng)
        elif r < 0.75:
            a = rand_small_layout(rng, 64)
        else:
            a = any_layout(rng)
        cs = lay_cosize(a)
        r = rng.random()
        if r < 0.25:
            out.append([L(a)])
        elif r < 0.45:
            out.append([L(a), I(cs)])
        elif r < 0.65:
            out.append([L(a), I(cs * rng.choice([2, 3, 4, 8]))])
        elif r < 0.8:
            out.append([L(a), I(rng.randint(1, 2 * cs + 2))])
        else:
            tot = cs * rng.choice([1, 2, 4])
            f = factorize_into(rng, tot, rng.choice([2, 2, 3]))
            out.append([L(a), T(tuple(f))])
    return out


def rand_profile(rng, shp):
    if not isinstance(shp, tuple) or rng.random() < 0.2:
        return 1
    r = rng.random()
    if r < 0.5:
        return tuple(1 for _ in shp)
    if r < 0.7:
        return tuple(rand_profile(rng, m) for m in shp)
    return tuple(1 for _ in shp[:rng.randint(1, len(shp))])


def gen_coalesce(rng, n):
    out = []
    for _ in range(n):
        a = any_layout(rng)
        if rng.random() < 0.3:
            prof = rand_profile(rng, parse_layout(a)[0])
            out.append([L(a), T(prof) if isinstance(prof, tuple) else I(prof)])
        else:
            out.append([L(a)])
    return out


def zeros_layout(rng):
    if rng.random() < 0.6:
        return rand_layout(rng, family="zeros")
    return any_layout(rng)


def gen_divide(rng, n):
    out = []
    for _ in range(n):
        a = injective_layout(rng) if rng.random() < 0.6 else any_layout(rng)
        out.append([L(a), rand_b_for(rng, a)])
    return out


def gen_logical_product(rng, n):
    out = []
    for _ in range(n):
        a = rand_small_layout(rng, 64) if rng.random() < 0.5 else rand_layout(rng, max_size=256)
        if rng.random() < 0.25 and isinstance(parse_layout(a)[0], tuple):
            shp = parse_layout(a)[0]
            tl = []
            for _m in shp[:rng.randint(1, len(shp))]:
                r = rng.random()
                tl.append(None if r < 0.15 else rng.choice([1, 2, 3, 4]) if r < 0.6 else rand_small_layout(rng, 8))
            out.append([L(a), {"tiler": tl}])
        else:
            out.append([L(a), L(rand_small_layout(rng, 16))])
    return out


def gen_product(rng, n):
    out = []
    for _ in range(n):
        a = rand_small_layout(rng, 64) if rng.random() < 0.5 else rand_layout(rng, max_size=256)
        b = rand_small_layout(rng, 16)
        if rng.random() < 0.5:
            # same rank as a: the common use of blocked/raked products
            ra = rank_of(parse_layout(a)[0])
            bs = tuple(rng.choice([1, 2, 2, 3, 4]) for _ in range(ra))
            b = lay(bs, compact_strides(bs, None if rng.random() < 0.6 else list(range(ra))[::-1],
                                        zero_ones=rng.random() < 0.7))
        out.append([L(a), L(b)])
    return out


def compact2(rng, max_size):
    shp = rand_shape(rng, depth=rng.choice([1, 1, 1, 2]), rank=rng.choice([1, 2, 2, 2, 3]),
                     max_size=max_size, pow2=rng.random() < 0.7)
    fam = rng.choice(["col", "row", "row", "ordered"] + (["gapped", "arbitrary"] if rng.random() < 0.15 else []))
    return lay(shp, rand_strides(rng, shp, fam))


def gen_make_layout_tv(rng, n):
    return [[L(compact2(rng, 256)), L(compact2(rng, 32))] for _ in range(n)]


def gen_tile_to_shape(rng, n):
    out = []
    for _ in range(n):
        a = compact2(rng, 64) if rng.random() < 0.8 else rand_small_layout(rng, 32)
        shp = parse_layout(a)[0]
        modes = shp if isinstance(shp, tuple) else (shp,)
        r = len(modes) + (1 if rng.random() < 0.2 else 0)
        trg = []
        for i in range(r):
            base = prod(modes[i]) if i < len(modes) else 1
            trg.append(base * rng.choice([1, 1, 2, 3, 4]) if rng.random() < 0.9 else base + 1)
        order = list(range(r))
        rng.shuffle(order)
        out.append([L(a), T(tuple(trg)), T(tuple(order))])
    return out


def gen_max_common(rng, n):
    out = []
    for _ in range(n):
        shp = rand_shape(rng, max_size=1024)
        fa = rng.choice(["col", "row", "ordered", "gapped", "zeros", "col"])
        fb = rng.choice(["col", "row", "ordered", "gapped", "col"])
        a = lay(shp, rand_strides(rng, shp, fa))
        if rng.random() < 0.25:
            b = a
        else:
            b = lay(shp, rand_strides(rng, shp, fb))
        out.append([L(a), L(b)])
    return out


def gen_recast(rng, n):
    out = []
    pairs = [(16, 8), (8, 16), (32, 8), (8, 32), (32, 16), (16, 32), (4, 8), (8, 4), (64, 16),
             (16, 64), (16, 16), (1, 8), (8, 1), (32, 32), (6, 8), (8, 6)]
    for _ in range(n):
        nb, ob = rng.choice(pairs)
        if rng.random() < 0.7:
            shp = rand_shape(rng, pow2=True, max_size=1024)
            a = lay(shp, rand_strides(rng, shp, rng.choice(["col", "row", "ordered", "gapped", "zeros"])))
        else:
            a = any_layout(rng)
        out.append([I(nb), I(ob), L(a)])
    return out


def gen_get_coord(rng, n):
    out = []
    for _ in range(n):
        a = injective_layout(rng) if rng.random() < 0.7 else any_layout(rng)
        cs = lay_cosize(a)
        r = rng.random()
        if r < 0.6:
            idx = rng.randrange(max(cs, 1))
        elif r < 0.8:
            idx = rng.randrange(max(lay_size(a), 1))
        else:
            idx = rng.randint(cs, 2 * cs + 3)
        out.append([L(a), I(idx)])
    return out


def gen_idx2crd(rng, n):
    out = []
    for _ in range(n):
        shp = rand_shape(rng)
        sz = prod(shp)
        r = rng.random()
        if r < 0.7:
            out.append([I(rng.randrange(sz)), T(shp)])
        elif r < 0.8:
            out.append([I(rng.randint(sz, 3 * sz)), T(shp)])
        elif isinstance(shp, tuple):
            # idx given per mode (an int tuple congruent-ish with the shape)
            idx = tuple(rng.randrange(prod(m)) for m in shp)
            out.append([T(idx), T(shp)])
        else:
            out.append([I(rng.randrange(sz)), T(shp)])
    return out


def gen_crd2idx(rng, n):
    out = []
    for _ in range(n):
        a = any_layout(rng)
        shp = parse_layout(a)[0]
        r = rng.random()
        if r < 0.2:
            c = rng.randrange(prod(shp))
            out.append([I(c), L(a)])
        else:
            c = rand_coord_in(rng, shp)
            out.append([I(c) if isinstance(c, int) else T(c), L(a)])
    return out


def gen_slice_and_offset(rng, n):
    out = []
    for _ in range(n):
        a = any_layout(rng)
        shp = parse_layout(a)[0]
        c = rand_coord_in(rng, shp, none_p=rng.choice([0.2, 0.4, 0.6]))
        if c is None:
            c = (None,) * rank_of(shp) if isinstance(shp, tuple) else None
        out.append([C(c), L(a)])
    return out


def gen_make_ordered_layout(rng, n):
    out = []
    for _ in range(n):
        shp = rand_shape(rng, depth=rng.choice([1, 1, 1, 2]), scalar_ok=False)
        r = rank_of(shp)
        order = list(range(r))
        rng.shuffle(order)
        if rng.random() < 0.2 and r >= 2:
            order = [o * rng.choice([1, 2, 3]) for o in order]  # non-contiguous order values
        out.append([T(shp), T(tuple(order))])
    return out


def gen_shape_div(rng, n):
    out = []
    for _ in range(n):
        a = rand_shape(rng, max_size=1024)
        r = rng.random()
        if r < 0.4:
            b = rng.choice(divisors(prod(a))) if rng.random() < 0.8 else rng.randint(1, 64)
        elif r < 0.8 and isinstance(a, tuple):
            b = tuple(rng.choice(divisors(prod(m))) if rng.random() < 0.85 else rng.randint(1, 9) for m in a)
        else:
            b = rand_shape(rng, max_size=64)
        out.append([T(a) if isinstance(a, tuple) else I(a), T(b) if isinstance(b, tuple) else I(b)])
    return out


def gen_ceil_div(rng, n):
    out = []
    for _ in range(n):
        a = rand_shape(rng, depth=rng.choice([1, 1, 2]), scalar_ok=False, max_size=4096)
        if rng.random() < 0.6:
            b = tuple(rng.randint(1, 2 * prod(m)) for m in a[:rng.randint(1, len(a))])
            out.append([T(a), T(b)])
        else:
            out.append([T(a), {"tiler": rand_tiler_for(rng, a)}])
    return out


def gen_product_each(rng, n):
    return [[T(rand_shape(rng, scalar_ok=False))] for _ in range(n)]


def gen_size_like(rng, n):
    out = []
    for _ in range(n):
        if rng.random() < 0.75:
            out.append([L(any_layout(rng))])
        else:
            s = rand_shape(rng)
            out.append([T(s) if isinstance(s, tuple) else I(s)])
    return out


# The seed layout of the brief, and a few extra layouts every unary op sees.
SEED_LAYOUTS = ["((2,2),(2,3)):((2,12),(1,4))", "8:2", "(8):(2)", "1:0", "(1):(0)", "1:1",
                "(4,3):(4,1)", "(4,3):(3,1)", "(2,5):(5,1)", "((4,2),(2,3)):((1,16),(4,32))",
                "(3,(2,4)):(0,(1,6))", "(4,(1,2)):(2,(0,8))", "((1,1)):((0,0))"]
ZD_BIG = "(8192,8192):(8192,1)"
ZD_TILERS = [[1, 16], [32, 256], [128, 64]]


def seed_cases(op):
    out = []
    S = SEED_LAYOUTS
    unary = {"coalesce", "filter", "filter_zeros", "right_inverse", "left_inverse", "nullspace",
             "cosize", "size", "depth", "rank"}
    if op in unary:
        out += [[L(s)] for s in S]
    if op == "coalesce":
        out += [[L(S[0]), T("(1,1)")], [L(S[0]), I(1)], [L(S[0]), T("((1,1),1)")], [L(S[0]), T("(1,(1,1))")]]
    if op == "complement":
        out += [[L(s)] for s in S] + [[L(s), I(64)] for s in S] + [[L(S[0]), T("(24,2)")]]
    if op == "composition":
        a = S[0]
        out += [[L("(4,4):(4,1)"), L("(4,2,2):(2,1,8)")],
                [L("(4,3):(3,1)"), L("6:2")], [L("(4,3):(3,1)"), L("5:2")],
                [L(a), L("(2,3):(1,2)")], [L(a), L("24:1")], [L(a), {"tiler": ["2:2", None]}],
                [L(a), {"tiler": [2, 3]}], [L(a), {"tiler": [2, 4]}], [L(a), {"tiler": [None, None]}],
                [L(a), I(4)], [L(a), T("(2,4)")]]
    if op in ("logical_divide", "zipped_divide", "tiled_divide", "flat_divide"):
        out += [[L(ZD_BIG), {"tiler": t}] for t in ZD_TILERS]
        out += [[L(S[0]), {"tiler": [2, 3]}], [L(S[0]), {"tiler": [None, 3]}], [L(S[0]), {"tiler": [2, None]}],
                [L(S[0]), L("4:1")], [L(S[0]), L("(2,2):(1,4)")], [L(S[0]), {"tiler": ["2:2", "3:2"]}]]
    if op == "logical_product":
        out += [[L("(2,5):(5,1)"), L("(3,4):(1,3)")], [L("(2,5):(5,1)"), {"tiler": [3, 4]}],
                [L("(2,5):(5,1)"), L("(3,4)" + ":" + "(4,1)")], [L(S[0]), L("(2,2):(1,2)")]]
    if op in ("blocked_product", "raked_product", "zipped_product", "tiled_product", "flat_product"):
        out += [[L("(4,3):(4,1)"), L(t)] for t in ("(1,2):(0,1)", "(2,1):(1,0)", "(2,2):(1,2)",
                                                    "(1,2):(1,1)", "(2,1):(1,2)")]
        out += [[L(S[0]), L("(2,2):(1,2)")], [L("(2,5):(5,1)"), L("(3,4):(1,3)")]]
        # a scalar shape against a 1-tuple (and the reverse): both are rank 1 in CuTe
        out += [[L(a), L(b)] for a, b in (("4:1", "(64):(1)"), ("(8):(1)", "32:1"), ("(4):(2)", "3:1"),
                                          ("6:1", "(2):(3)"), ("(2):(1)", "(3):(1)"), ("5:2", "(4):(1)"))]
    if op == "make_layout_tv":
        out += [[L("(32,8):(8,1)"), L("(4,8):(8,1)")], [L("(2,2):(2,12)"), L("(2,3):(1,4)")],
                [L("(2,2):(2,1)"), L("(2,3):(3,1)")], [L("(2,3):(3,1)"), L("(2,2):(2,1)")],
                [L("(4,8):(1,4)"), L("(1,4):(0,1)")], [L("(32,4):(1,32)"), L("(4,1):(1,0)")]]
    if op == "tile_to_shape":
        out += [[L("(4,3):(4,1)"), T("(8,9)"), T("(0,1)")], [L("(4,3):(4,1)"), T("(8,9)"), T("(1,0)")],
                [L("((2,2),(2,3)):((2,12),(1,4))"), T("(8,12)"), T("(0,1)")]]
    if op in ("get_hier_coord", "get_flat_coord"):
        out += [[L(S[0]), I(i)] for i in (0, 1, 5, 9, 13, 23, 24, 100)]
    if op == "slice_and_offset":
        out += [[C("(1,None)"), L(S[0])], [C("((1,None),None)"), L(S[0])], [C("(None,(1,None))"), L(S[0])],
                [C("(None,None)"), L(S[0])], [C("(1,2)"), L(S[0])], [C("None"), L(S[0])], [C("3"), L(S[0])]]
    # inputs the DSL should reject (more tiler modes than layout modes, coords with None, ...)
    if op in ("logical_divide", "zipped_divide", "tiled_divide", "flat_divide", "composition",
              "logical_product"):
        out += [[L("(4,3):(3,1)"), {"tiler": [2, 3, 1]}], [L("8:1"), {"tiler": [2, 2]}],
                [L("(8):(1)"), {"tiler": [2]}], [L("(8):(1)"), {"tiler": ["2:4"]}]]
    if op == "crd2idx":
        out += [[C("(1,None)"), L("(4,3):(3,1)")], [T("(1,2,0)"), L("(4,3):(3,1)")], [T("(5,2)"), L("(4,3):(3,1)")]]
    if op in ("get_hier_coord", "get_flat_coord"):
        out += [[L("(4,4):(0,1)"), I(3)], [L("(4,4):(1,0)"), I(7)], [L("(2,2):(-1,1)"), I(1)]]
    if op in ("max_common_layout", "max_common_vector"):
        out += [[L(S[0]), L(S[0])], [L("(4,4):(4,1)"), L("(4,4):(1,4)")], [L("(4,4):(1,4)"), L("(4,4):(1,4)")],
                [L("(8,4):(1,8)"), L("(8,4):(1,16)")]]
    if op == "recast_layout":
        out += [[I(16), I(8), L(S[0])], [I(8), I(16), L(S[0])], [I(16), I(8), L("(2,3,4):(1,2,6)")]]
    if op == "idx2crd":
        out += [[I(11), T("(5,4)")], [I(11), T("((2,3),4)")], [I(7), I(8)], [I(7), T("(8)")], [I(30), T("(5,4)")]]
    if op == "crd2idx":
        out += [[T("(1,2)"), L(S[0])], [I(5), L(S[0])], [T("((1,0),(1,2))"), L(S[0])]]
    if op == "make_ordered_layout":
        out += [[T("(4,4)"), T("(1,0)")], [T("(4,4)"), T("(0,1)")], [T("(32,16,8)"), T("(2,0,1)")]]
    if op == "shape_div":
        out += [[T("(12,8)"), T("(4,2)")], [T("(12,8)"), I(4)], [I(4), T("(12,8)")], [I(3), I(6)], [I(6), I(4)]]
    if op == "ceil_div":
        out += [[T("(10,6)"), T("(3,4)")], [T("(10,6)"), {"tiler": ["3:1", None]}]]
    if op == "product_each":
        out += [[T("((2,3),4)")], [T("(2,(3,(4,5)))")], [T("(8)")]]
    return out


# Inputs of CUTLASS's C++ unit tests test/unit/cute/core/{composition,complement,coalesce,
# inverse_left,inverse_right,logical_divide,logical_product,nullspace}.cpp, transcribed as data in
# CuTe notation (complement(L) without cotarget in C++ means cotarget = cosize(L); swizzled /
# ComposedLayout / scaled-basis inputs are left out).
CPP_UNIT_CASES = [
    ('composition', [{'layout': '1:0'}, {'layout': '1:0'}]),  # composition.cpp
    ('composition', [{'layout': '1:0'}, {'layout': '1:1'}]),  # composition.cpp
    ('composition', [{'layout': '1:1'}, {'layout': '1:0'}]),  # composition.cpp
    ('composition', [{'layout': '1:1'}, {'layout': '1:1'}]),  # composition.cpp
    ('composition', [{'layout': '(4):(1)'}, {'layout': '(4):(1)'}]),  # composition.cpp
    ('composition', [{'layout': '(4):(2)'}, {'layout': '(4):(1)'}]),  # composition.cpp
    ('composition', [{'layout': '(4):(0)'}, {'layout': '(4):(1)'}]),  # composition.cpp
    ('composition', [{'layout': '(4):(1)'}, {'layout': '(4):(0)'}]),  # composition.cpp
    ('composition', [{'layout': '(4):(1)'}, {'layout': '(1):(0)'}]),  # composition.cpp
    ('composition', [{'layout': '(4):(1)'}, {'layout': '(2):(1)'}]),  # composition.cpp
    ('composition', [{'layout': '(4):(2)'}, {'layout': '(2):(1)'}]),  # composition.cpp
    ('composition', [{'layout': '(4):(1)'}, {'layout': '(2):(2)'}]),  # composition.cpp
    ('composition', [{'layout': '(4):(2)'}, {'layout': '(2):(2)'}]),  # composition.cpp
    ('composition', [{'layout': '(4,3):(1,4)'}, {'layout': '(12):(1)'}]),  # composition.cpp
    ('composition', [{'layout': '(12):(1)'}, {'layout': '(4,3):(1,4)'}]),  # composition.cpp
    ('composition', [{'layout': '(12):(2)'}, {'layout': '(4,3):(1,4)'}]),  # composition.cpp
    ('composition', [{'layout': '(12):(1)'}, {'layout': '(4,3):(3,1)'}]),  # composition.cpp
    ('composition', [{'layout': '(12):(2)'}, {'layout': '(4,3):(3,1)'}]),  # composition.cpp
    ('composition', [{'layout': '(12):(1)'}, {'layout': '(2,3):(2,4)'}]),  # composition.cpp
    ('composition', [{'layout': '(4,3):(1,4)'}, {'layout': '(4,3):(1,4)'}]),  # composition.cpp
    ('composition', [{'layout': '(4,3):(1,4)'}, {'layout': '(6):(1)'}]),  # composition.cpp
    ('composition', [{'layout': '(4,3):(1,4)'}, {'layout': '(6):(2)'}]),  # composition.cpp
    ('composition', [{'layout': '(4,3):(1,4)'}, {'layout': '(6,2):(2,1)'}]),  # composition.cpp
    ('composition', [{'layout': '(4,3):(1,4)'}, {'layout': '(4,3):(3,1)'}]),  # composition.cpp
    ('composition', [{'layout': '(4,3):(3,1)'}, {'layout': '(4,3):(1,4)'}]),  # composition.cpp
    ('composition', [{'layout': '(4,3):(3,1)'}, {'layout': '(12):(1)'}]),  # composition.cpp
    ('composition', [{'layout': '(4,3):(3,1)'}, {'layout': '(6):(2)'}]),  # composition.cpp
    ('composition', [{'layout': '(4,3):(3,1)'}, {'layout': '(6,2):(2,1)'}]),  # composition.cpp
    ('composition', [{'layout': '(8,8):(1,8)'}, {'layout': '((2,2,2),(2,2,2)):((1,16,4),(8,2,32))'}]),  # composition.cpp
    ('composition', [{'layout': '(8,8):(8,1)'}, {'layout': '((2,2,2),(2,2,2)):((1,16,4),(8,2,32))'}]),  # composition.cpp
    ('composition', [{'layout': '((4,2)):((1,16))'}, {'layout': '(4,2):(2,1)'}]),  # composition.cpp
    ('composition', [{'layout': '(2,2):(2,1)'}, {'layout': '(2,2):(2,1)'}]),  # composition.cpp
    ('composition', [{'layout': '(4,8,2):(1,4,32)'}, {'layout': '(2,2,2):(2,8,1)'}]),  # composition.cpp
    ('composition', [{'layout': '(4,8,2):(2,8,1)'}, {'layout': '(2,2,2):(1,8,2)'}]),  # composition.cpp
    ('composition', [{'layout': '(4,8,2):(2,8,1)'}, {'layout': '(4,2,2):(2,8,1)'}]),  # composition.cpp
    ('composition', [{'layout': '12:1'}, {'layout': '4:1'}]),  # composition.cpp
    ('composition', [{'layout': '(12,3):(1,24)'}, {'layout': '(4):(1)'}]),  # composition.cpp
    ('composition', [{'layout': '16:2'}, {'layout': '4:2'}]),  # composition.cpp
    ('composition', [{'layout': '(128,24,5):(1,128,3072)'}, {'layout': '64:2'}]),  # composition.cpp
    ('composition', [{'layout': '(128,24,5):(1,128,3072)'}, {'layout': '480:32'}]),  # composition.cpp
    ('composition', [{'layout': '(1):(0)'}, {'layout': '(4):(1)'}]),  # composition.cpp
    ('composition', [{'layout': '(1):(1)'}, {'layout': '(4):(1)'}]),  # composition.cpp
    ('composition', [{'layout': '(4):(1)'}, {'layout': '(4):(2)'}]),  # composition.cpp
    ('composition', [{'layout': '(4,3):(3,1)'}, {'layout': '(24):(1)'}]),  # composition.cpp
    ('composition', [{'layout': '(4,3):(3,1)'}, {'layout': '(8):(1)'}]),  # composition.cpp
    ('composition', [{'layout': '(4,3,1):(3,1,0)'}, {'layout': '(24):(1)'}]),  # composition.cpp
    ('composition', [{'layout': '(4,3,1):(3,1,0)'}, {'layout': '(4):(1)'}]),  # composition.cpp
    ('composition', [{'layout': '(4,6,8):(1,4,7)'}, {'layout': '6:1'}]),  # composition.cpp
    ('composition', [{'layout': '(4,6,8,10):(2,3,5,7)'}, {'layout': '6:12'}]),  # composition.cpp
    ('composition', [{'layout': '(8,8):(8,1)'}, {'layout': '2:3'}]),  # composition.cpp
    ('composition', [{'layout': '(8,8):(8,1)'}, {'layout': '3:3'}]),  # composition.cpp
    ('composition', [{'layout': '3:1'}, {'layout': '4:1'}]),  # composition.cpp
    ('composition', [{'layout': '(48,24,5):(1,128,3072)'}, {'layout': '32:1'}]),  # composition.cpp
    ('composition', [{'layout': '(4):(-1)'}, {'layout': '(4):(1)'}]),  # composition.cpp
    ('composition', [{'layout': '(4):(1)'}, {'layout': '(4):(-1)'}]),  # composition.cpp
    ('composition', [{'layout': '(4):(-1)'}, {'layout': '(4):(-1)'}]),  # composition.cpp
    ('composition', [{'layout': '(4):(1)'}, {'layout': '(4):(-2)'}]),  # composition.cpp
    ('composition', [{'layout': '(4,4):(-1,1)'}, {'layout': '(2,4,2):(1,2,8)'}]),  # composition.cpp
    ('composition', [{'layout': '(4,4):(-1,1)'}, {'layout': '(2,4,2):(1,4,2)'}]),  # composition.cpp
    ('composition', [{'layout': '(1,(2,4)):(0,(-1,512))'}, {'layout': '2:-1'}]),  # composition.cpp
    ('composition', [{'layout': '(1,(2,4)):(0,(-1,512))'}, {'layout': '4:-1'}]),  # composition.cpp
    ('complement', [{'layout': '1:0'}, {'int': 1}]),  # complement.cpp
    ('complement', [{'layout': '1:0'}, {'int': 2}]),  # complement.cpp
    ('complement', [{'layout': '1:0'}, {'int': 5}]),  # complement.cpp
    ('complement', [{'layout': '1:0'}, {'tuple': '(2,2)'}]),  # complement.cpp
    ('complement', [{'layout': '1:1'}, {'int': 1}]),  # complement.cpp
    ('complement', [{'layout': '1:1'}, {'int': 2}]),  # complement.cpp
    ('complement', [{'layout': '1:1'}, {'int': 5}]),  # complement.cpp
    ('complement', [{'layout': '1:1'}, {'tuple': '(2,2)'}]),  # complement.cpp
    ('complement', [{'layout': '1:2'}, {'int': 1}]),  # complement.cpp
    ('complement', [{'layout': '1:2'}, {'int': 2}]),  # complement.cpp
    ('complement', [{'layout': '1:2'}, {'int': 8}]),  # complement.cpp
    ('complement', [{'layout': '1:2'}, {'int': 5}]),  # complement.cpp
    ('complement', [{'layout': '1:2'}, {'tuple': '(2,2)'}]),  # complement.cpp
    ('complement', [{'layout': '4:0'}, {'int': 1}]),  # complement.cpp
    ('complement', [{'layout': '4:0'}, {'int': 2}]),  # complement.cpp
    ('complement', [{'layout': '4:0'}, {'int': 8}]),  # complement.cpp
    ('complement', [{'layout': '4:1'}, {'int': 1}]),  # complement.cpp
    ('complement', [{'layout': '4:1'}, {'int': 2}]),  # complement.cpp
    ('complement', [{'layout': '4:1'}, {'int': 8}]),  # complement.cpp
    ('complement', [{'layout': '4:2'}, {'int': 1}]),  # complement.cpp
    ('complement', [{'layout': '4:2'}, {'int': 7}]),  # complement.cpp
    ('complement', [{'layout': '4:2'}, {'int': 16}]),  # complement.cpp
    ('complement', [{'layout': '4:2'}, {'int': 19}]),  # complement.cpp
    ('complement', [{'layout': '4:2'}, {'tuple': '(2,2)'}]),  # complement.cpp
    ('complement', [{'layout': '4:4'}, {'int': 1}]),  # complement.cpp
    ('complement', [{'layout': '4:4'}, {'int': 13}]),  # complement.cpp
    ('complement', [{'layout': '4:4'}, {'int': 17}]),  # complement.cpp
    ('complement', [{'layout': '4:4'}, {'tuple': '(2,2)'}]),  # complement.cpp
    ('complement', [{'layout': '(2,4):(1,2)'}, {'int': 8}]),  # complement.cpp
    ('complement', [{'layout': '(2,3):(1,2)'}, {'int': 6}]),  # complement.cpp
    ('complement', [{'layout': '(2,4):(1,4)'}, {'int': 14}]),  # complement.cpp
    ('complement', [{'layout': '(2,4):(1,6)'}, {'int': 20}]),  # complement.cpp
    ('complement', [{'layout': '(2,4,8):(8,1,64)'}, {'int': 460}]),  # complement.cpp
    ('complement', [{'layout': '(2,4,8):(8,1,0)'}, {'int': 12}]),  # complement.cpp
    ('complement', [{'layout': '(2,4,8):(8,1,0)'}, {'int': 460}]),  # complement.cpp
    ('complement', [{'layout': '((2,2),(2,2)):((1,4),(8,32))'}, {'int': 46}]),  # complement.cpp
    ('complement', [{'layout': '((2,2),(2,2)):((1,32),(8,4))'}, {'int': 46}]),  # complement.cpp
    ('complement', [{'layout': '(4,6):(1,6)'}, {'int': 34}]),  # complement.cpp
    ('complement', [{'layout': '(4,2):(1,10)'}, {'int': 14}]),  # complement.cpp
    ('complement', [{'layout': '(4,2):(1,16)'}, {'int': 20}]),  # complement.cpp
    ('complement', [{'layout': '12:1'}, {'int': 1}]),  # complement.cpp
    ('complement', [{'layout': '12:1'}, {'int': 12}]),  # complement.cpp
    ('complement', [{'layout': '12:1'}, {'int': 53}]),  # complement.cpp
    ('complement', [{'layout': '12:1'}, {'int': 128}]),  # complement.cpp
    ('complement', [{'layout': '12:2'}, {'int': 1}]),  # complement.cpp
    ('complement', [{'layout': '12:2'}, {'int': 23}]),  # complement.cpp
    ('complement', [{'layout': '12:2'}, {'int': 53}]),  # complement.cpp
    ('complement', [{'layout': '12:2'}, {'int': 128}]),  # complement.cpp
    ('complement', [{'layout': '(3,6):(1,3)'}, {'int': 18}]),  # complement.cpp
    ('complement', [{'layout': '(3,6):(1,9)'}, {'int': 48}]),  # complement.cpp
    ('complement', [{'layout': '(3,6):(1,10)'}, {'int': 53}]),  # complement.cpp
    ('complement', [{'layout': '64:1'}, {'tuple': '(32,4,4)'}]),  # complement.cpp
    ('coalesce', [{'layout': '1:0'}]),  # coalesce.cpp
    ('coalesce', [{'layout': '1:1'}]),  # coalesce.cpp
    ('coalesce', [{'layout': '(2,4):(1,2)'}]),  # coalesce.cpp
    ('coalesce', [{'layout': '(2,4,6):(1,2,8)'}]),  # coalesce.cpp
    ('coalesce', [{'layout': '(2,1,6):(1,6,2)'}]),  # coalesce.cpp
    ('coalesce', [{'layout': '(2,1,6):(1,7,2)'}]),  # coalesce.cpp
    ('coalesce', [{'layout': '(2,1,6):(4,7,8)'}]),  # coalesce.cpp
    ('coalesce', [{'layout': '(2,4):(4,1)'}]),  # coalesce.cpp
    ('coalesce', [{'layout': '(2,4,6):(24,6,1)'}]),  # coalesce.cpp
    ('coalesce', [{'layout': '(2,1,3):(3,0,1)'}]),  # coalesce.cpp
    ('coalesce', [{'layout': '(2,1,3):(3,3,1)'}]),  # coalesce.cpp
    ('coalesce', [{'layout': '(2,1,3):(2,4,4)'}]),  # coalesce.cpp
    ('coalesce', [{'layout': '(2,1,3):(2,0,4)'}]),  # coalesce.cpp
    ('coalesce', [{'layout': '((2,2),(2,2)):((1,4),(8,32))'}]),  # coalesce.cpp
    ('left_inverse', [{'layout': '1:0'}]),  # inverse_left.cpp
    ('left_inverse', [{'layout': '1:1'}]),  # inverse_left.cpp
    ('left_inverse', [{'layout': '((1,1)):((0,0))'}]),  # inverse_left.cpp
    ('left_inverse', [{'layout': '((3,7)):((0,0))'}]),  # inverse_left.cpp
    ('left_inverse', [{'layout': '(4):(0)'}]),  # inverse_left.cpp
    ('left_inverse', [{'layout': '(4):(1)'}]),  # inverse_left.cpp
    ('left_inverse', [{'layout': '(4):(2)'}]),  # inverse_left.cpp
    ('left_inverse', [{'layout': '(2,4):(0,2)'}]),  # inverse_left.cpp
    ('left_inverse', [{'layout': '(8,4):(1,8)'}]),  # inverse_left.cpp
    ('left_inverse', [{'layout': '(8,4):(4,1)'}]),  # inverse_left.cpp
    ('left_inverse', [{'layout': '(2,4,6):(1,2,8)'}]),  # inverse_left.cpp
    ('left_inverse', [{'layout': '(2,4,6):(4,1,8)'}]),  # inverse_left.cpp
    ('left_inverse', [{'layout': '(2,4,4,6):(4,1,0,8)'}]),  # inverse_left.cpp
    ('left_inverse', [{'layout': '(4,2):(1,16)'}]),  # inverse_left.cpp
    ('left_inverse', [{'layout': '(4,2):(1,5)'}]),  # inverse_left.cpp
    ('left_inverse', [{'layout': '(128,128):(65536,1)'}]),  # inverse_left.cpp
    ('left_inverse', [{'layout': '(128,160):(65536,1)'}]),  # inverse_left.cpp
    ('left_inverse', [{'layout': '(128,3,160):(65536,512,1)'}]),  # inverse_left.cpp
    ('left_inverse', [{'layout': '(128,64):(131072,2)'}]),  # inverse_left.cpp
    ('left_inverse', [{'layout': '(32,4,4,4):(262144,4,8388608,1)'}]),  # inverse_left.cpp
    ('left_inverse', [{'layout': '(2,2,2):(4,0,1)'}]),  # inverse_left.cpp
    ('left_inverse', [{'layout': '(((((32,4),1),(32,2)),4),1,(2,2),2):(((((262144,4),0),(0,1)),8388608),0,(2,16),32)'}]),  # inverse_left.cpp
    ('left_inverse', [{'layout': '(4):(-1)'}]),  # inverse_left.cpp
    ('right_inverse', [{'layout': '1:0'}]),  # inverse_right.cpp
    ('right_inverse', [{'layout': '1:1'}]),  # inverse_right.cpp
    ('right_inverse', [{'layout': '((1,1)):((0,0))'}]),  # inverse_right.cpp
    ('right_inverse', [{'layout': '((3,7)):((0,0))'}]),  # inverse_right.cpp
    ('right_inverse', [{'layout': '(4):(0)'}]),  # inverse_right.cpp
    ('right_inverse', [{'layout': '(4):(1)'}]),  # inverse_right.cpp
    ('right_inverse', [{'layout': '(4):(2)'}]),  # inverse_right.cpp
    ('right_inverse', [{'layout': '(2,4):(0,2)'}]),  # inverse_right.cpp
    ('right_inverse', [{'layout': '(8,4):(1,8)'}]),  # inverse_right.cpp
    ('right_inverse', [{'layout': '(8,4):(4,1)'}]),  # inverse_right.cpp
    ('right_inverse', [{'layout': '(2,4,6):(1,2,8)'}]),  # inverse_right.cpp
    ('right_inverse', [{'layout': '(2,4,6):(4,1,8)'}]),  # inverse_right.cpp
    ('right_inverse', [{'layout': '(2,4,4,6):(4,1,0,8)'}]),  # inverse_right.cpp
    ('right_inverse', [{'layout': '(4,2):(1,16)'}]),  # inverse_right.cpp
    ('right_inverse', [{'layout': '(4,2):(1,5)'}]),  # inverse_right.cpp
    ('right_inverse', [{'layout': '(128,128):(65536,1)'}]),  # inverse_right.cpp
    ('right_inverse', [{'layout': '(128,160):(65536,1)'}]),  # inverse_right.cpp
    ('right_inverse', [{'layout': '(128,3,160):(65536,512,1)'}]),  # inverse_right.cpp
    ('right_inverse', [{'layout': '(128,64):(131072,2)'}]),  # inverse_right.cpp
    ('right_inverse', [{'layout': '(32,4,4,4):(262144,4,8388608,1)'}]),  # inverse_right.cpp
    ('right_inverse', [{'layout': '(2,2,2):(4,0,1)'}]),  # inverse_right.cpp
    ('right_inverse', [{'layout': '(((((32,4),1),(32,2)),4),1,(2,2),2):(((((262144,4),0),(0,1)),8388608),0,(2,16),32)'}]),  # inverse_right.cpp
    ('right_inverse', [{'layout': '(4,2):(1,4)'}]),  # inverse_right.cpp
    ('right_inverse', [{'layout': '(2,4):(4,1)'}]),  # inverse_right.cpp
    ('right_inverse', [{'layout': '(4):(-1)'}]),  # inverse_right.cpp
    ('logical_divide', [{'layout': '1:0'}, {'layout': '1:0'}]),  # logical_divide.cpp
    ('logical_divide', [{'layout': '1:0'}, {'layout': '1:1'}]),  # logical_divide.cpp
    ('logical_divide', [{'layout': '1:1'}, {'layout': '1:0'}]),  # logical_divide.cpp
    ('logical_divide', [{'layout': '1:1'}, {'layout': '1:1'}]),  # logical_divide.cpp
    ('logical_divide', [{'layout': '6:1'}, {'layout': '2:1'}]),  # logical_divide.cpp
    ('logical_divide', [{'layout': '6:1'}, {'layout': '2:3'}]),  # logical_divide.cpp
    ('logical_divide', [{'layout': '6:1'}, {'layout': '(2,3):(3,1)'}]),  # logical_divide.cpp
    ('logical_divide', [{'layout': '6:2'}, {'layout': '2:1'}]),  # logical_divide.cpp
    ('logical_divide', [{'layout': '6:2'}, {'layout': '2:3'}]),  # logical_divide.cpp
    ('logical_divide', [{'layout': '6:2'}, {'layout': '(2,3):(3,1)'}]),  # logical_divide.cpp
    ('logical_divide', [{'layout': '(6,6):(1,12)'}, {'layout': '(6,3):(3,1)'}]),  # logical_divide.cpp
    ('logical_divide', [{'layout': '(6,6):(12,1)'}, {'layout': '(6,3):(3,1)'}]),  # logical_divide.cpp
    ('logical_divide', [{'layout': '32:1'}, {'layout': '2:8'}]),  # logical_divide.cpp
    ('logical_divide', [{'layout': '(4,1):(1,1)'}, {'layout': '2:1'}]),  # logical_divide.cpp
    ('logical_divide', [{'layout': '(4,1):(1,1)'}, {'layout': '2:2'}]),  # logical_divide.cpp
    ('logical_divide', [{'layout': '(8,8):(1,8)'}, {'layout': '32:2'}]),  # logical_divide.cpp
    ('logical_divide', [{'layout': '(8,8):(8,1)'}, {'layout': '32:2'}]),  # logical_divide.cpp
    ('logical_divide', [{'layout': '2:1'}, {'layout': '32:1'}]),  # logical_divide.cpp
    ('logical_divide', [{'layout': '48:1'}, {'layout': '32:1'}]),  # logical_divide.cpp
    ('logical_divide', [{'layout': '96:1'}, {'layout': '32:2'}]),  # logical_divide.cpp
    ('logical_divide', [{'layout': '32:1'}, {'layout': '48:1'}]),  # logical_divide.cpp
    ('logical_divide', [{'layout': '(32,4,4):(1,32,128)'}, {'layout': '64:1'}]),  # logical_divide.cpp
    ('logical_divide', [{'layout': '(128,4,3):(1,512,0)'}, {'layout': '32:1'}]),  # logical_divide.cpp
    ('logical_divide', [{'layout': '(128,4,3):(1,512,0)'}, {'layout': '32:2'}]),  # logical_divide.cpp
    ('logical_divide', [{'layout': '(16,4,3):(1,512,0)'}, {'layout': '32:1'}]),  # logical_divide.cpp
    ('logical_product', [{'layout': '1:0'}, {'layout': '1:0'}]),  # logical_product.cpp
    ('logical_product', [{'layout': '1:1'}, {'layout': '1:0'}]),  # logical_product.cpp
    ('logical_product', [{'layout': '1:0'}, {'layout': '1:1'}]),  # logical_product.cpp
    ('logical_product', [{'layout': '1:1'}, {'layout': '1:1'}]),  # logical_product.cpp
    ('logical_product', [{'layout': '3:1'}, {'layout': '4:0'}]),  # logical_product.cpp
    ('logical_product', [{'layout': '3:0'}, {'layout': '4:1'}]),  # logical_product.cpp
    ('logical_product', [{'layout': '3:0'}, {'layout': '4:0'}]),  # logical_product.cpp
    ('logical_product', [{'layout': '3:2'}, {'layout': '4:1'}]),  # logical_product.cpp
    ('logical_product', [{'layout': '(3):(1)'}, {'layout': '(2,4):(1,2)'}]),  # logical_product.cpp
    ('logical_product', [{'layout': '(2,4):(1,2)'}, {'layout': '(3):(1)'}]),  # logical_product.cpp
    ('logical_product', [{'layout': '(8,(2,2)):(1,(8,16))'}, {'layout': '(4):(2)'}]),  # logical_product.cpp
    ('logical_product', [{'layout': '(2,2):(1,2)'}, {'layout': '(3,3):(3,1)'}]),  # logical_product.cpp
    ('logical_product', [{'layout': '(3):(32)'}, {'layout': '(32):(1)'}]),  # logical_product.cpp
    ('logical_product', [{'layout': '(3):(2)'}, {'layout': '(4):(1)'}]),  # logical_product.cpp
    ('logical_product', [{'layout': '(3):(32)'}, {'layout': '(128):(1)'}]),  # logical_product.cpp
    ('logical_product', [{'layout': '(3):(32)'}, {'layout': '(8,8):(1,8)'}]),  # logical_product.cpp
    ('logical_product', [{'layout': '(3):(32)'}, {'layout': '(8,8):(8,1)'}]),  # logical_product.cpp
    ('logical_product', [{'layout': '((4,2)):((1,16))'}, {'layout': '(4,4):(1,4)'}]),  # logical_product.cpp
    ('logical_product', [{'layout': '((4,2)):((1,16))'}, {'layout': '(4,2):(2,1)'}]),  # logical_product.cpp
    ('logical_product', [{'layout': '((2,2),(2,2)):((1,4),(8,32))'}, {'layout': '(2,2):(1,2)'}]),  # logical_product.cpp
    ('logical_product', [{'layout': '((2,2),(2,2)):((1,4),(8,32))'}, {'layout': '(2,2):(2,1)'}]),  # logical_product.cpp
    ('logical_product', [{'layout': '((4,6)):((1,6))'}, {'layout': '(3):(1)'}]),  # logical_product.cpp
    ('nullspace', [{'layout': '(2,2,2):(0,0,0)'}]),  # nullspace.cpp
    ('nullspace', [{'layout': '(7,5,16):(0,0,0)'}]),  # nullspace.cpp
    ('nullspace', [{'layout': '(2,2,2):(1,0,2)'}]),  # nullspace.cpp
    ('nullspace', [{'layout': '(7,5,16):(3,1,0)'}]),  # nullspace.cpp
]


# ---------------------------------------------------------------------------------------------
# Operations: how many random cases, how the DSL is called, what "result" holds
# ---------------------------------------------------------------------------------------------

R_LAYOUT = "str(layout) as the DSL prints it, e.g. '((2,2),(2,3)):((2,12),(1,4))'"
R_INT = "the integer, e.g. '24'"
R_TUPLE = "int tuple in CuTe notation without spaces, e.g. '((0,0),(1,2))'; a plain int as '7'"

OPS = {
    # op: (share of --n, generator, call, result_format)
    "composition": (1.0, gen_composition, "cute.composition(A, B)  B: layout | tiler | tuple | int", R_LAYOUT),
    "complement": (1.0, gen_complement, "cute.complement(A, cotarget); a case with one arg uses cotarget=cute.cosize(A)", R_LAYOUT),
    "coalesce": (0.6, gen_coalesce, "cute.coalesce(A) or cute.coalesce(A, target_profile=args[1])", R_LAYOUT),
    "filter": (0.3, lambda r, n: gen_unary(r, n, zeros_layout), "cute.filter(A)", R_LAYOUT),
    "filter_zeros": (0.3, lambda r, n: gen_unary(r, n, zeros_layout), "cute.filter_zeros(A)", R_LAYOUT),
    "right_inverse": (0.8, gen_unary, "cute.right_inverse(A)", R_LAYOUT),
    "left_inverse": (0.8, gen_unary, "cute.left_inverse(A)", R_LAYOUT),
    "nullspace": (0.3, lambda r, n: gen_unary(r, n, zeros_layout), "cute.nullspace(A)", R_LAYOUT),
    "logical_divide": (1.0, gen_divide, "cute.logical_divide(A, B)  B: layout | tiler", R_LAYOUT),
    "zipped_divide": (0.6, gen_divide, "cute.zipped_divide(A, B)  B: layout | tiler", R_LAYOUT),
    "tiled_divide": (0.4, gen_divide, "cute.tiled_divide(A, B)  B: layout | tiler", R_LAYOUT),
    "flat_divide": (0.4, gen_divide, "cute.flat_divide(A, B)  B: layout | tiler", R_LAYOUT),
    "logical_product": (0.8, gen_logical_product, "cute.logical_product(A, B)  B: layout | tiler", R_LAYOUT),
    "zipped_product": (0.3, gen_product, "cute.zipped_product(A, B)", R_LAYOUT),
    "tiled_product": (0.3, gen_product, "cute.tiled_product(A, B)", R_LAYOUT),
    "flat_product": (0.3, gen_product, "cute.flat_product(A, B)", R_LAYOUT),
    "blocked_product": (0.5, gen_product, "cute.blocked_product(A, B)", R_LAYOUT),
    "raked_product": (0.5, gen_product, "cute.raked_product(A, B)", R_LAYOUT),
    "make_layout_tv": (0.3, gen_make_layout_tv, "cute.make_layout_tv(thr_layout, val_layout)",
                       "'[<tiler_mn as CuTe int tuple>, <str(layout_tv)>]', e.g. '[(4,6), ((3,2),(2,2)):((8,2),(4,1))]'"),
    "tile_to_shape": (0.3, gen_tile_to_shape, "cute.tile_to_shape(atom, trg_shape, order)", R_LAYOUT),
    "max_common_layout": (0.3, gen_max_common, "cute.max_common_layout(A, B)", R_LAYOUT),
    "max_common_vector": (0.3, gen_max_common, "cute.max_common_vector(A, B)", R_INT),
    "recast_layout": (0.3, gen_recast, "cute.recast_layout(new_type_bits, old_type_bits, A)", R_LAYOUT),
    "get_hier_coord": (0.5, gen_get_coord, "A.get_hier_coord(idx)", R_TUPLE),
    "get_flat_coord": (0.3, gen_get_coord, "A.get_flat_coord(idx)", R_TUPLE),
    "idx2crd": (0.4, gen_idx2crd, "cute.idx2crd(idx, shape)", R_TUPLE),
    "crd2idx": (0.4, gen_crd2idx, "cute.crd2idx(coord, A)", R_INT),
    "slice_and_offset": (0.5, gen_slice_and_offset, "cute.slice_and_offset(coord, A)",
                         "'[<str(sliced layout)>, <offset>]', e.g. '[((2,2),3):((2,12),4), 1]'; a fully "
                         "specified coord slices to the empty layout '():()'"),
    "make_ordered_layout": (0.2, gen_make_ordered_layout, "cute.make_ordered_layout(shape, order=order)", R_LAYOUT),
    "shape_div": (0.2, gen_shape_div, "cute.shape_div(a, b)", R_TUPLE),
    "ceil_div": (0.2, gen_ceil_div, "cute.ceil_div(shape, tiler)  tiler: tuple | tiler", R_TUPLE),
    "product_each": (0.1, gen_product_each, "cute.product_each(t)", R_TUPLE),
    "cosize": (0.2, gen_unary, "cute.cosize(A)", R_INT),
    "size": (0.2, gen_size_like, "cute.size(A) (A a layout or an int tuple)", R_INT),
    "depth": (0.2, gen_size_like, "cute.depth(A) (A a layout or an int tuple)", R_INT),
    "rank": (0.2, gen_size_like, "cute.rank(A) (A a layout or an int tuple)", R_INT),
}


def build_cases(op, n, seed):
    share, gen, _call, _fmt = OPS[op]
    rng = random.Random("%s:%s" % (seed, op))
    cases = [list(a) for o, a in CPP_UNIT_CASES if o == op]
    cases += seed_cases(op)
    cases += gen(rng, max(1, int(round(n * share))))
    seen, out = set(), []
    for args in cases:
        k = json.dumps(args, sort_keys=True)
        if k not in seen:
            seen.add(k)
            out.append(args)
    return out


# ---------------------------------------------------------------------------------------------
# Worker: runs inside a subprocess, evaluates cases inside one @cute.jit trace
# ---------------------------------------------------------------------------------------------


class _StopTrace(Exception):
    pass


def worker(path):
    import cutlass  # noqa: F401
    import cutlass.cute as cute

    with open(path) as f:
        cases = json.load(f)

    def mk_layout(s):
        shp, std = parse_layout(s)
        return cute.make_layout(shp, stride=std)

    def build(arg):
        (k, v), = arg.items()
        if k == "layout":
            return mk_layout(v)
        if k == "int":
            return int(v)
        if k in ("tuple", "coord"):
            return parse_tuple(v)
        if k == "tiler":
            return tuple(mk_layout(e) if isinstance(e, str) else e for e in v)
        raise ValueError("unknown arg kind %r" % k)

    def show(x):
        if isinstance(x, cute.Layout):
            return str(x)
        if isinstance(x, tuple):
            return "(" + ",".join(show(e) for e in x) + ")"
        if x is None:
            return "None"
        if isinstance(x, bool):
            return str(int(x))
        if isinstance(x, int):
            return str(x)
        return "<%s %s>" % (type(x).__name__, x)

    def pair(x):
        a, b = x
        return "[%s, %s]" % (show(a), show(b))

    F = {
        "composition": lambda a, b: cute.composition(a, b),
        "complement": lambda a, *c: cute.complement(a, c[0] if c else cute.cosize(a)),
        "coalesce": lambda a, *p: cute.coalesce(a, target_profile=p[0]) if p else cute.coalesce(a),
        "filter": cute.filter,
        "filter_zeros": cute.filter_zeros,
        "right_inverse": cute.right_inverse,
        "left_inverse": cute.left_inverse,
        "nullspace": cute.nullspace,
        "logical_divide": cute.logical_divide,
        "zipped_divide": cute.zipped_divide,
        "tiled_divide": cute.tiled_divide,
        "flat_divide": cute.flat_divide,
        "logical_product": cute.logical_product,
        "zipped_product": cute.zipped_product,
        "tiled_product": cute.tiled_product,
        "flat_product": cute.flat_product,
        "blocked_product": cute.blocked_product,
        "raked_product": cute.raked_product,
        "make_layout_tv": cute.make_layout_tv,
        "tile_to_shape": cute.tile_to_shape,
        "max_common_layout": cute.max_common_layout,
        "max_common_vector": cute.max_common_vector,
        "recast_layout": cute.recast_layout,
        "get_hier_coord": lambda a, i: a.get_hier_coord(i),
        "get_flat_coord": lambda a, i: a.get_flat_coord(i),
        "idx2crd": cute.idx2crd,
        "crd2idx": cute.crd2idx,
        "slice_and_offset": cute.slice_and_offset,
        "make_ordered_layout": lambda s, o: cute.make_ordered_layout(s, order=o),
        "shape_div": cute.shape_div,
        "ceil_div": cute.ceil_div,
        "product_each": cute.product_each,
        "cosize": cute.cosize,
        "size": cute.size,
        "depth": cute.depth,
        "rank": cute.rank,
    }
    PAIR = {"make_layout_tv", "slice_and_offset"}

    def emit(i, out):
        out["i"] = i
        sys.stdout.write(MARK + json.dumps(out) + "\n")
        sys.stdout.flush()

    def run_all():
        for i, (op, args) in enumerate(cases):
            try:
                vals = [build(a) for a in args]
            except Exception as e:  # a bug in this script, not a DSL answer
                emit(i, {"harness_error": "%s: %s" % (type(e).__name__, e)})
                continue
            try:
                res = F[op](*vals)
                out = {"result": pair(res) if op in PAIR else show(res)}
            except Exception as e:
                out = {"error": first_line(e)}
            emit(i, out)

    @cute.jit
    def driver():
        run_all()
        raise _StopTrace()  # never compile the (empty) kernel

    try:
        driver()
    except _StopTrace:
        pass


def first_line(e):
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    line = lines[0] if lines else ""
    if line.startswith("Operation creation failed") and len(lines) > 1:
        line = lines[1]
    if line.startswith("error: unknown: "):
        line = line[len("error: unknown: "):]
    line = "%s: %s" % (type(e).__name__, line)
    return line[:400]


# ---------------------------------------------------------------------------------------------
# Driver: chunks in subprocesses, crash isolation
# ---------------------------------------------------------------------------------------------


def run_subprocess(cases, timeout):
    fd, path = tempfile.mkstemp(suffix=".json", prefix="golden_")
    with os.fdopen(fd, "w") as f:
        json.dump(cases, f)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", path]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        stdout, rc = p.stdout, p.returncode
        stderr = p.stderr
    except subprocess.TimeoutExpired as ex:
        stdout, rc, stderr = ex.stdout or b"", "timeout", ex.stderr or b""
    finally:
        os.unlink(path)
    res = {}
    for ln in stdout.decode("utf-8", "replace").splitlines():
        if ln.startswith(MARK):
            d = json.loads(ln[len(MARK):])
            res[d.pop("i")] = d
    return res, rc, stderr.decode("utf-8", "replace")


def process(cases, idxs, log):
    timeout = 60 + 0.5 * len(idxs)
    res, rc, err = run_subprocess([cases[i] for i in idxs], timeout)
    done = {idxs[k]: v for k, v in res.items()}
    missing = [i for i in idxs if i not in done]
    if not missing:
        return done
    first = missing[0]
    if len(idxs) == 1:
        log("  CRASH (%s): %s %s | %s" % (rc, cases[first][0], json.dumps(cases[first][1]),
                                            err.strip().splitlines()[-1:] if err.strip() else ""))
        done[first] = {"crash": True}
        return done
    done.update(process(cases, [first], log))
    if missing[1:]:
        done.update(process(cases, missing[1:], log))
    return done


def evaluate(cases, jobs, chunk, log):
    idx = list(range(len(cases)))
    chunks = [idx[k:k + chunk] for k in range(0, len(idx), chunk)]
    done = {}
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        for d in ex.map(lambda c: process(cases, c, log), chunks):
            done.update(d)
    return [done[i] for i in idx]


def dsl_version():
    try:
        from importlib.metadata import version
        return version("nvidia-cutlass-dsl")
    except Exception:
        return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2500, help="random cases for the common ops (default 2500)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ops", default="", help="comma-separated subset of ops (default: all)")
    ap.add_argument("--jobs", type=int, default=max(1, min(4, os.cpu_count() or 1)))
    ap.add_argument("--chunk", type=int, default=500)
    ap.add_argument("--out", default=OUT_DIR)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        worker(a.worker)
        return
    ops = [o for o in a.ops.split(",") if o] or list(OPS)
    for o in ops:
        if o not in OPS:
            ap.error("unknown op %r" % o)
    os.makedirs(a.out, exist_ok=True)
    ver = dsl_version()

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    flat = []
    for op in ops:
        flat += [(op, args) for args in build_cases(op, a.n, a.seed)]
    t0 = time.time()
    log("evaluating %d cases for %d ops with DSL %s ..." % (len(flat), len(ops), ver))
    outs = evaluate(flat, a.jobs, a.chunk, log)
    log("done in %.1fs" % (time.time() - t0))
    by_op = {op: [] for op in ops}
    for (op, args), out in zip(flat, outs):
        if "harness_error" in out:
            log("  HARNESS ERROR (dropped) %s %s: %s" % (op, json.dumps(args), out["harness_error"]))
            continue
        case = {"args": args}
        case.update(out)
        by_op[op].append(case)
    for op in ops:
        _share, _gen, call, rfmt = OPS[op]
        cases = by_op[op]
        path = os.path.join(a.out, op + ".json")
        head = {"op": op, "dsl_version": ver, "call": call, "result_format": rfmt,
                "generator": "scripts/make_golden.py --n %d --seed %d" % (a.n, a.seed)}
        with open(path, "w") as f:
            f.write(json.dumps(head)[:-1] + ', "cases": [\n')
            f.write(",\n".join(json.dumps(c) for c in cases))
            f.write("\n]}\n")
        nres = sum("result" in c for c in cases)
        nerr = sum("error" in c for c in cases)
        ncr = sum("crash" in c for c in cases)
        log("%-20s %5d cases: %5d results, %5d errors, %3d crashes" % (op, len(cases), nres, nerr, ncr))


if __name__ == "__main__":
    main()
