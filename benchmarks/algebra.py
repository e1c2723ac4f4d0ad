"""Time the layout algebra of cutelab, pycute and tensor-layouts side by side, fairly.

    python benchmarks/algebra.py [-n 2000] [--seed 0] [--rounds 5] [--sweep] [--libs cutelab,pycute]

For each operation, N fresh random inputs are generated, half of them the admissible kind
(power-of-two shapes and strides, injective tilers and blocks) and half wider: non-power-of-two
shapes, 1-tuple modes next to scalars, arbitrary and negative strides. Each input is converted
to every library's objects OUTSIDE the timed region (fresh objects per library: nothing cached
on an object is reused), then the libraries are called one after another on that input, in an
order rotated from input to input (so no library always runs first or last), one timed call each.

Reported per op and library: the median time per call over the inputs that ALL the timed
libraries accept (the same inputs for everyone), the number of inputs the library refuses
(raises on) and the median time of those refusing calls; and, over the commonly accepted
inputs, how many answers differ from cutelab's (printed as layouts). Each of --rounds rounds
draws fresh inputs; the median over the rounds of each library's median is reported (not the
best round: on a shared machine that favours whichever library had the quiet round).

``layout(crd)`` evaluates a layout at a hierarchical coordinate congruent with its shape and
``layout(idx)`` at an integer index; both time the call only (the coordinate is built outside).

With --sweep, the ops are timed again on layouts of every rank 1-8 and depth 1-3 (rank: top-level
modes; depth 1 is flat, depth 2 nests two leaves per mode, depth 3 nests (a, (b, c)) per mode),
and the table gives, per op and depth, pycute's time over cutelab's at each rank.

A library is timed on an op only when it has CuTe's operation under that name: tensor-layouts'
blocked_product is not CuTe's (on about 30% of the inputs both answer, its answer is a different
function); a note counts the disagreement instead of timing it. Libraries that are not installed are skipped with a note.
cutelab validates every input and its results; pycute validates nothing.
"""

from __future__ import annotations

import argparse
import math
import platform
import random
import statistics
import sys
import time
from typing import Any, Callable

OPS = ["layout(crd)", "layout(idx)", "composition", "complement", "logical_divide", "logical_product",
       "right_inverse", "left_inverse", "coalesce", "zipped_divide", "blocked_product", "raked_product",
       "make_layout_tv"]

#: the ops of the rank/depth sweep (--sweep)
SWEEP_OPS = ["layout(crd)", "layout(idx)", "coalesce", "composition", "complement", "right_inverse",
             "left_inverse", "logical_divide", "logical_product"]

#: (op, library) pairs whose function under that name is not CuTe's operation: not timed
NOT_THE_SAME_OP = {("blocked_product", "tensor-layouts"): "tensor-layouts' blocked_product is a different operation"}


# --------------------------------------------------------------------------- random inputs
# A layout is (shape, stride) as nested int tuples; a library adapter builds its own objects.

def _nest(rng: random.Random, flat: list) -> Any:
    """Randomly group a flat list into a nested tuple of depth <= 2 (keeps leaf order)."""
    if len(flat) == 1:
        return flat[0]
    out: list = []
    i = 0
    while i < len(flat):
        k = rng.randint(1, min(3, len(flat) - i))
        chunk = flat[i:i + k]
        out.append(tuple(chunk) if k > 1 else chunk[0])
        i += k
    return tuple(out)


def _shape_like(flat: list, nested: Any) -> Any:
    it = iter(flat)

    def go(t):
        return tuple(go(x) for x in t) if isinstance(t, tuple) else next(it)

    return go(nested)


def _pow2_layout(rng: random.Random, n_modes: int, max_log: int = 3, zero: bool = True) -> tuple:
    shp = [2 ** rng.randint(0, max_log) for _ in range(n_modes)]
    std = [0 if zero and rng.random() < 0.15 else 2 ** rng.randint(0, 6) for _ in range(n_modes)]
    prof = _nest(rng, list(range(n_modes)))
    return _shape_like(shp, prof), _shape_like(std, prof)


def _injective_pow2(rng: random.Random, n_modes: int, max_log: int = 3) -> tuple:
    """Modes sorted by stride each start at a (power-of-two) multiple of the span below."""
    shp = [2 ** rng.randint(1, max_log) for _ in range(n_modes)]
    order = list(range(n_modes))
    rng.shuffle(order)
    std = [0] * n_modes
    cur = 1
    for i in order:
        cur *= 2 ** rng.randint(0, 1)
        std[i] = cur
        cur *= shp[i]
    prof = _nest(rng, list(range(n_modes)))
    return _shape_like(shp, prof), _shape_like(std, prof)


def _compact(rng: random.Random, n_modes: int, choices=(2, 4, 8)) -> tuple:
    shp = [rng.choice(choices) for _ in range(n_modes)]
    order = list(range(n_modes))
    rng.shuffle(order)
    std = [0] * n_modes
    cur = 1
    for i in order:
        std[i] = cur
        cur *= shp[i]
    return tuple(shp), tuple(std)


def _size(shape: Any) -> int:
    return math.prod(_size(s) for s in shape) if isinstance(shape, tuple) else shape


def _cosize(lay: tuple) -> int:
    def leaves(t):
        return [x for y in t for x in leaves(y)] if isinstance(t, tuple) else [t]
    return 1 + sum((s - 1) * d for s, d in zip(leaves(lay[0]), leaves(lay[1])))


def _any_layout(rng: random.Random, n_modes: int, neg: bool = True) -> tuple:
    """Non-power-of-two shapes, arbitrary (sometimes negative or zero) strides, 1-tuples."""
    shp = [rng.choice([1, 2, 3, 4, 5, 6, 7, 8, 12, 16]) for _ in range(n_modes)]
    std = [rng.choice([0, 1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32, 48]) * (-1 if neg and rng.random() < 0.1 else 1)
           for _ in range(n_modes)]
    prof = _nest(rng, list(range(n_modes)))
    shape, stride = _shape_like(shp, prof), _shape_like(std, prof)
    if not isinstance(shape, tuple) and rng.random() < 0.3:  # a 1-tuple instead of a scalar
        shape, stride = (shape,), (stride,)
    return shape, stride


def _compact_any(rng: random.Random, n_modes: int, choices=(2, 3, 4, 5, 6, 8)) -> tuple:
    return _compact(rng, n_modes, choices)


def gen_inputs(op: str, rng: random.Random) -> tuple:
    """One input of op: a tuple of ('L', (shape, stride)) layouts, ('T', tiler) and ('I', int) values.

    Half the inputs are the admissible kind (powers of two), half arbitrary (see the module doc).
    """
    wide = rng.random() < 0.5
    lay = (lambda k, **kw: _any_layout(rng, k)) if wide else (lambda k, **kw: _pow2_layout(rng, k, **kw))
    if op == "composition":
        return (("L", lay(rng.randint(1, 4))), ("L", lay(rng.randint(1, 3))))
    if op == "complement":
        a = _any_layout(rng, rng.randint(1, 3), neg=False) if wide else _injective_pow2(rng, rng.randint(1, 4))
        return (("L", a), ("I", max(1, _cosize(a)) * rng.randint(1, 4)))
    if op == "logical_divide":
        a = lay(rng.randint(1, 4), zero=False) if not wide else _any_layout(rng, rng.randint(1, 4))
        b = _any_layout(rng, rng.randint(1, 2), neg=False) if wide else _injective_pow2(rng, rng.randint(1, 2), max_log=2)
        return (("L", a), ("L", b))
    if op == "zipped_divide":
        m0 = lay(rng.randint(1, 2), zero=False) if not wide else _any_layout(rng, rng.randint(1, 2))
        m1 = lay(rng.randint(1, 2), zero=False) if not wide else _any_layout(rng, rng.randint(1, 2))
        a = ((m0[0], m1[0]), (m0[1], m1[1]))
        pick = (lambda: rng.choice([1, 2, 3, 4])) if wide else (lambda: 2 ** rng.randint(0, 2))
        t0 = (pick(), 1)
        t1 = (pick(), rng.choice([1, 2]))
        return (("L", a), ("T", (t0, t1)))
    if op == "logical_product":
        a = _any_layout(rng, rng.randint(1, 3), neg=False) if wide else _injective_pow2(rng, rng.randint(1, 3))
        return (("L", a), ("L", lay(rng.randint(1, 3))))
    if op in ("blocked_product", "raked_product"):
        if wide:  # rank 1 or 2, scalars against 1-tuples included
            ra = rng.randint(1, 2)
            a = _compact_any(rng, ra)
            b = _any_layout(rng, ra, neg=False) if rng.random() < 0.5 else _compact_any(rng, ra)
            if ra == 1 and rng.random() < 0.5:
                a = (a[0][0], a[1][0])  # scalar against a 1-tuple
            return (("L", a), ("L", b))
        a = _injective_pow2(rng, 2)
        b = _pow2_layout(rng, 2, max_log=2)
        return (("L", (tuple(_flat2(a[0])), tuple(_flat2(a[1])))), ("L", (tuple(_flat2(b[0])), tuple(_flat2(b[1])))))
    if op in ("right_inverse", "coalesce"):
        return (("L", lay(rng.randint(1, 5))),)
    if op == "left_inverse":
        a = _any_layout(rng, rng.randint(1, 3), neg=False) if wide else _injective_pow2(rng, rng.randint(1, 4))
        return (("L", a),)
    if op in ("layout(crd)", "layout(idx)"):
        a = lay(rng.randint(1, 5))
        if op == "layout(idx)":
            return (("L", a), ("I", rng.randrange(_size(a[0]))))
        return (("L", a), ("I", _rand_coord(rng, a[0])))
    if op == "make_layout_tv":
        if wide:
            return (("L", _compact_any(rng, 2)), ("L", _compact_any(rng, 2, (1, 2, 3, 4))))
        return (("L", _compact(rng, 2, (2, 4, 8, 16))), ("L", _compact(rng, 2, (1, 2, 4))))
    raise ValueError(op)


def _rand_coord(rng: random.Random, shape: Any) -> Any:
    """A random coordinate congruent with shape (an int in range at each leaf)."""
    if isinstance(shape, tuple):
        return tuple(_rand_coord(rng, s) for s in shape)
    return rng.randrange(shape)


def _profiled(flat: list, rank: int, depth: int) -> Any:
    """Fold a flat list of rank * (1, 2, 3)[depth - 1] leaves into rank modes of the given depth."""
    if depth == 1:
        return tuple(flat)
    k = depth
    modes = [flat[i * k:(i + 1) * k] for i in range(rank)]
    return tuple((m[0], m[1]) if depth == 2 else (m[0], (m[1], m[2])) for m in modes)


def sweep_inputs(op: str, rng: random.Random, rank: int, depth: int) -> tuple:
    """One input of op on layouts of exactly `rank` top-level modes and depth `depth`."""
    n = rank * depth
    prof = list(range(n))

    def nest(vals):
        return _profiled(list(vals), rank, depth)

    def compact_perm(shp, gaps=False):  # a compact layout whose modes are visited in a random order
        order = list(range(n))
        rng.shuffle(order)
        std = [0] * n
        cur = 1
        for i in order:
            if gaps and rng.random() < 0.3:
                cur *= 2  # a gap below this mode: not compact, still injective
            std[i] = cur
            cur *= shp[i]
        return std

    if op in ("layout(crd)", "layout(idx)", "coalesce", "right_inverse"):
        shp = [rng.choice([1, 2, 3, 4]) for _ in prof]  # at most 4^24 elements: offsets fit in 64 bits
        std = [rng.choice([0, 1, 2, 3, 4, 8, 16, 24, 64]) for _ in prof]
        lay = (nest(shp), nest(std))
        if op == "layout(crd)":
            return (("L", lay), ("I", _rand_coord(rng, lay[0])))
        if op == "layout(idx)":
            return (("L", lay), ("I", rng.randrange(_size(lay[0]))))
        return (("L", lay),)
    shp = [rng.choice([2, 4]) for _ in prof]
    std = compact_perm(shp, gaps=op in ("complement", "left_inverse"))
    if op in ("complement", "left_inverse"):
        lay = (nest(shp), nest(std))
        if op == "complement":
            return (("L", lay), ("I", _cosize(lay) * rng.randint(1, 3)))
        return (("L", lay),)
    lay = (nest(shp), nest(std))
    if op == "composition":  # rhs: the same leaves, compact in another order (an injection into lhs's domain)
        return (("L", lay), ("L", (nest(shp), nest(compact_perm(shp)))))
    if op == "logical_divide":
        return (("L", lay), ("L", _injective_pow2(rng, rng.randint(1, 2), max_log=1)))
    if op == "logical_product":
        return (("L", lay), ("L", _pow2_layout(rng, rng.randint(1, 2), max_log=2)))
    raise ValueError(op)


def _flat2(t: Any) -> list:
    """Make a rank-2 flat tuple out of a (possibly nested) one: pad or merge to 2 modes."""
    def leaves(x):
        return [z for y in x for z in leaves(y)] if isinstance(x, tuple) else [x]
    f = leaves(t)
    return (f + [f[-1]])[:2] if len(f) < 2 else f[:2]


# --------------------------------------------------------------------------- adapters

class Lib:
    name: str
    ops: dict

    def make(self, shape, stride):  # pragma: no cover - interface
        raise NotImplementedError

    def convert(self, args: tuple) -> tuple:
        out = []
        for kind, v in args:
            if kind == "L":
                out.append(self.make(*v))
            elif kind == "T":
                out.append(tuple(self.make(*x) for x in v))
            else:
                out.append(v)
        return tuple(out)


def _call(layout: Any, crd: Any) -> Any:
    """Evaluate a layout at a coordinate or an index (every library's layouts are callable)."""
    return layout(crd)


def load_libs(only: list | None = None) -> tuple[list, list]:
    libs, notes = [], []
    try:
        import cutelab as cute

        class Cutelab(Lib):
            name = "cutelab"
            make = staticmethod(lambda s, d: cute.make_layout(s, stride=d))
            ops = {
                "layout(crd)": _call, "layout(idx)": _call,
                "composition": cute.composition, "complement": cute.complement,
                "logical_divide": cute.logical_divide, "logical_product": cute.logical_product,
                "right_inverse": cute.right_inverse, "left_inverse": cute.left_inverse, "coalesce": cute.coalesce,
                "zipped_divide": cute.zipped_divide, "blocked_product": cute.blocked_product,
                "raked_product": cute.raked_product, "make_layout_tv": cute.make_layout_tv,
            }

        libs.append(Cutelab())
    except ImportError as e:
        notes.append(f"cutelab not importable ({e})")
    try:
        import pycute

        class Pycute(Lib):
            name = "pycute"
            make = staticmethod(lambda s, d: pycute.Layout(s, d))
            ops = {
                "layout(crd)": _call, "layout(idx)": _call,
                "composition": pycute.composition, "complement": pycute.complement,
                "logical_divide": pycute.logical_divide, "logical_product": pycute.logical_product,
                "right_inverse": pycute.right_inverse, "left_inverse": pycute.left_inverse,
                "coalesce": pycute.coalesce, "zipped_divide": pycute.zipped_divide,
            }

        libs.append(Pycute())
    except ImportError:
        notes.append("pycute not installed (pip install nvidia-cutlass): skipped")
    try:
        import tensor_layouts as tl

        class TensorLayouts(Lib):
            name = "tensor-layouts"
            make = staticmethod(lambda s, d: tl.Layout(s, d))
            ops = {
                "layout(crd)": _call, "layout(idx)": _call,
                "composition": tl.compose, "complement": tl.complement,
                "logical_divide": tl.logical_divide, "logical_product": tl.logical_product,
                "right_inverse": tl.right_inverse, "left_inverse": getattr(tl, "left_inverse", None),
                "coalesce": tl.coalesce,
                "zipped_divide": tl.zipped_divide, "blocked_product": tl.blocked_product,
                "raked_product": getattr(tl, "raked_product", None),
            }
            ops = {k: v for k, v in ops.items() if v is not None}

        libs.append(TensorLayouts())
    except ImportError:
        notes.append("tensor-layouts not installed (pip install tensor-layouts): skipped")
    if only:
        libs = [lib for lib in libs if lib.name in only]
    return libs, notes


# --------------------------------------------------------------------------- timing

def _canon(x: Any) -> str:
    """A library's answer as text that compares across libraries (layouts as shape:stride)."""
    if isinstance(x, tuple):
        return "(" + ",".join(_canon(e) for e in x) + ")"
    shp, std = getattr(x, "shape", None), getattr(x, "stride", None)
    if shp is not None and std is not None:
        return f"{_canon(_untuple(shp))}:{_canon(_untuple(std))}"
    return str(x)


def _untuple(t: Any) -> Any:
    """Normalize 1-tuples at the top to their element (libraries print (4):(1) and 4:1 alike)."""
    return t[0] if isinstance(t, tuple) and len(t) == 1 and not isinstance(t[0], tuple) else t


def _same(a: Any, b: Any) -> bool:
    """The same answer: equal text, or layouts that are the same function (same size, same offset
    at every index; e.g. a size-1 mode with stride 0 or 1) - compared with cutelab's evaluation."""
    ta, tb = _canon(a), _canon(b)
    if ta == tb:
        return True
    try:
        import cutelab as cute

        pa = [cute.Layout.parse(x) for x in _parts(ta)]
        pb = [cute.Layout.parse(x) for x in _parts(tb)]
    except Exception:  # noqa: BLE001 - not layouts (or not parseable): the texts decide
        return False
    return len(pa) == len(pb) and all(x.size() == y.size() and (x.offsets() == y.offsets()).all() for x, y in zip(pa, pb))


def _parts(text: str) -> list:
    """'(A,B)' of two layouts (make_layout_tv's answer) -> [A, B]; one layout -> [it]."""
    return [text]


def disagreement(op: str, libs: list, raw: list, other: str) -> tuple[int, int, int]:
    """(inputs both answer, of which the answers differ as functions, inputs only `other` answers)."""
    a = next(lib for lib in libs if lib.name == "cutelab")
    b = next(lib for lib in libs if lib.name == other)
    both = differ = only = 0
    for args in raw:
        try:
            ra = a.ops[op](*a.convert(args))
        except Exception:  # noqa: BLE001
            ra = None
        try:
            rb = b.ops[op](*b.convert(args))
        except Exception:  # noqa: BLE001
            continue
        if ra is None:
            only += 1
            continue
        both += 1
        differ += not _same(ra, rb)
    return both, differ, only


def run_op(op: str, libs: list, raw: list) -> dict:
    """Call every library on every input, order rotated per input; per library: list of
    (ns, ok, answer) per input."""
    timed = [lib for lib in libs if op in lib.ops and (op, lib.name) not in NOT_THE_SAME_OP]
    out: dict = {lib.name: [] for lib in timed}
    pc = time.perf_counter_ns
    for i, args in enumerate(raw):
        k = i % len(timed) if timed else 0
        order = timed[k:] + timed[:k]
        converted = {lib.name: lib.convert(args) for lib in order}  # outside the timing
        for lib in order:
            f, a = lib.ops[op], converted[lib.name]
            t0 = pc()
            try:
                r = f(*a)
                ok = True
            except Exception:  # noqa: BLE001 - a refusal: counted and timed separately
                ok = False
                r = None
            dt = pc() - t0
            out[lib.name].append((dt, ok, r))
    return out


def summarize(per: dict, compare: bool = True) -> dict:
    """Per library: (median us on the commonly accepted inputs, refusals, median us of refusals,
    answers differing from cutelab's on the commonly accepted inputs, number of common inputs)."""
    names = list(per)
    n = len(next(iter(per.values()))) if per else 0
    common = [i for i in range(n) if all(per[x][i][1] for x in names)]
    res = {}
    for x in names:
        acc = [per[x][i][0] for i in common]
        ref = [t for t, ok, _ in per[x] if not ok]
        diff = 0
        if compare and "cutelab" in per and x != "cutelab":
            diff = sum(not _same(per[x][i][2], per["cutelab"][i][2]) for i in common)
        res[x] = (statistics.median(acc) / 1000 if acc else float("nan"), len(ref),
                  statistics.median(ref) / 1000 if ref else float("nan"), diff, len(common))
    return res


def median_of_rounds(summs: list) -> dict:
    """Per library: the median over rounds of its median time (and of its refusal median); the
    counts (refusals, differing answers, common inputs) are summed over the rounds."""
    out = {}
    for name in summs[0]:
        rs = [s[name] for s in summs]
        ref = [r[2] for r in rs if r[1]]
        out[name] = (statistics.median(r[0] for r in rs), sum(r[1] for r in rs),
                     statistics.median(ref) if ref else float("nan"), sum(r[3] for r in rs), sum(r[4] for r in rs))
    return out


def run(n: int, seed: int, rounds: int = 5, only: list | None = None, gen: Callable | None = None,
        ops: list | None = None, compare: bool = True) -> tuple[dict, list, list]:
    """For each op: `rounds` rounds over n new inputs each; per library, the median over the rounds
    of its median time per call is reported."""
    libs, notes = load_libs(only)
    gen = gen or gen_inputs
    results: dict = {}
    for op in ops or OPS:
        rng = random.Random(f"{seed}:{op}")
        run_op(op, libs, [gen(op, rng) for _ in range(max(50, n // 10))])  # warm-up, separate inputs
        summs = [summarize(run_op(op, libs, [gen(op, rng) for _ in range(n)]), compare) for _ in range(rounds)]
        med = median_of_rounds(summs) if summs and summs[0] else {}
        for lib in libs:
            results[(op, lib.name)] = med.get(lib.name)
    return results, libs, notes


def sweep(n: int, seed: int, rounds: int, only: list | None = None) -> str:
    """pycute's time over cutelab's per op, depth and rank (medians of rounds, as run())."""
    ranks, depths = range(1, 9), range(1, 4)
    cells: dict = {}
    for d in depths:
        for r in ranks:
            res, libs, _ = run(n, seed, rounds, only, gen=lambda op, rng: sweep_inputs(op, rng, r, d),
                               ops=SWEEP_OPS, compare=False)  # answers compared by the main table
            for op in SWEEP_OPS:
                a, b = res.get((op, "cutelab")), res.get((op, "pycute"))
                cells[(op, d, r)] = (b[0] / a[0] if a and b and a[4] else float("nan"), a[0] if a else float("nan"))
    lines = ["| op | depth | " + " | ".join(f"rank {r}" for r in ranks) + " |",
             "|---|---|" + "---|" * len(ranks)]
    for op in SWEEP_OPS:
        for d in depths:
            lines.append(f"| {op} | {d} | " + " | ".join(f"{cells[(op, d, r)][0]:.2f}" for r in ranks) + " |")
    return "\n".join(lines)


def table(results: dict, libs: list, n: int, ops: list | None = None) -> str:
    names = [lib.name for lib in libs]
    head = "| op | common inputs | " + " | ".join(f"{x} us (refused: n, us)" for x in names)
    others = [x for x in names if x != "cutelab"]
    head += "".join(f" | {x}/cutelab | {x} answers differing" for x in others) + " |"
    lines = [head, "|" + "---|" * (2 + len(names) + 2 * len(others))]
    for op in ops or OPS:
        row = [op]
        common = next((r[4] for x in names if (r := results.get((op, x)))), 0)
        row.append(f"{common} of {n}")  # summed over the rounds
        for x in names:
            r = results.get((op, x))
            if r is None:
                row.append(NOT_THE_SAME_OP.get((op, x), "n/a").split(" is ")[-1] if (op, x) in NOT_THE_SAME_OP else "n/a")
            else:
                row.append(f"{r[0]:.1f} ({r[1]}, {r[2]:.1f})" if r[1] else f"{r[0]:.1f} (0)")
        base = results.get((op, "cutelab"))
        for x in others:
            r = results.get((op, x))
            row.append("n/a" if (r is None or base is None) else f"{r[0] / base[0]:.2f}")
            row.append("n/a" if (r is None or base is None) else str(r[3]))
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def machine() -> str:
    import os

    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs ({cpu}), Python {platform.python_version()}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=2000, help="fresh inputs per op")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=5, help="rounds of n fresh inputs; the median is reported")
    ap.add_argument("--libs", default="", help="comma-separated libraries to time (default: all installed)")
    ap.add_argument("--ops", default="", help="comma-separated ops to time (default: all)")
    ap.add_argument("--sweep", action="store_true",
                    help="instead: pycute/cutelab per op at every rank 1-8 and depth 1-3 (n inputs per cell)")
    args = ap.parse_args()
    only = [x for x in args.libs.split(",") if x] or None
    if args.sweep:
        print(f"pycute time / cutelab time (> 1: cutelab faster); median over {args.rounds} rounds of each library's "
              f"median us per call on {args.n} fresh inputs per cell that both accept; {machine()}")
        print(sweep(args.n, args.seed, args.rounds, only or ["cutelab", "pycute"]))
        return
    ops = [x for x in args.ops.split(",") if x] or None
    results, libs, notes = run(args.n, args.seed, args.rounds, only, ops=ops)
    print(f"median us per call on the inputs every timed library accepts: the median over {args.rounds} rounds "
          f"of {args.n} fresh inputs per op of each library's median; libraries rotated per input; {machine()}")
    for note in notes:
        print("note:", note)
    for (op, lib), why in NOT_THE_SAME_OP.items():
        if any(x.name == lib for x in libs) and any(x.name == "cutelab" for x in libs) and \
                op in next(x for x in libs if x.name == lib).ops:
            rng = random.Random(f"{args.seed}:{op}:check")
            both, differ, only = disagreement(op, libs, [gen_inputs(op, rng) for _ in range(args.n)], lib)
            print(f"note: {op}: {why}; not timed: of {args.n} inputs, both answer {both}, and {differ} of those "
                  f"answers differ as functions from cutelab's (which agrees with CuTe DSL); {only} more are "
                  f"answered only by {lib}")
    print(table(results, libs, args.n * args.rounds, ops))


if __name__ == "__main__":
    main()
