"""Time the layout algebra of cutelab, pycute and tensor-layouts side by side.

    python benchmarks/algebra.py [-n 2000] [--seed 0] [--rounds 3]

For each operation, N fresh random inputs are generated (admissible by construction: shapes
and non-zero strides are powers of two, tilers and blocks are injective), converted to each
library's objects OUTSIDE the timed region, and each library is then timed over the same inputs,
one call at a time (median of per-call times). Every library gets its own freshly built objects,
so nothing a library may cache on an object (tensor-layouts caches cosize on its layouts) is
reused; no library caches across objects. A warm-up pass over a separate set of inputs runs first.

Libraries that are not installed are skipped with a note; operations a library lacks print n/a.
cutelab validates every input (Layout construction, tilers, cotargets) inside the calls it
makes; pycute does not validate.
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

OPS = ["composition", "complement", "logical_divide", "logical_product", "right_inverse",
       "coalesce", "zipped_divide", "blocked_product", "make_layout_tv"]


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


def gen_inputs(op: str, rng: random.Random) -> tuple:
    """One input of op: a tuple of ('L', (shape, stride)) layouts and ('I', int) values."""
    if op == "composition":
        return (("L", _pow2_layout(rng, rng.randint(1, 4))), ("L", _pow2_layout(rng, rng.randint(1, 3))))
    if op == "complement":
        a = _injective_pow2(rng, rng.randint(1, 4))
        return (("L", a), ("I", _cosize(a) * 2 ** rng.randint(0, 3)))
    if op in ("logical_divide",):
        a = _pow2_layout(rng, rng.randint(1, 4), zero=False)
        b = _injective_pow2(rng, rng.randint(1, 2), max_log=2)
        return (("L", a), ("L", b))
    if op == "zipped_divide":
        m0 = _pow2_layout(rng, rng.randint(1, 2), zero=False)
        m1 = _pow2_layout(rng, rng.randint(1, 2), zero=False)
        a = ((m0[0], m1[0]), (m0[1], m1[1]))
        t0 = (2 ** rng.randint(0, 2), 1)
        t1 = (2 ** rng.randint(0, 2), 2 ** rng.randint(0, 1))
        return (("L", a), ("T", (t0, t1)))
    if op == "logical_product":
        return (("L", _injective_pow2(rng, rng.randint(1, 3))), ("L", _pow2_layout(rng, rng.randint(1, 3))))
    if op == "blocked_product":
        a = _injective_pow2(rng, 2)
        b = _pow2_layout(rng, 2, max_log=2)
        return (("L", (tuple(_flat2(a[0])), tuple(_flat2(a[1])))), ("L", (tuple(_flat2(b[0])), tuple(_flat2(b[1])))))
    if op in ("right_inverse", "coalesce"):
        return (("L", _pow2_layout(rng, rng.randint(1, 5))),)
    if op == "make_layout_tv":
        return (("L", _compact(rng, 2, (2, 4, 8, 16))), ("L", _compact(rng, 2, (1, 2, 4))))
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


def load_libs() -> tuple[list, list]:
    libs, notes = [], []
    try:
        import cutelab as cute

        class Cutelab(Lib):
            name = "cutelab"
            make = staticmethod(lambda s, d: cute.make_layout(s, stride=d))
            ops = {
                "composition": cute.composition, "complement": cute.complement,
                "logical_divide": cute.logical_divide, "logical_product": cute.logical_product,
                "right_inverse": cute.right_inverse, "coalesce": cute.coalesce,
                "zipped_divide": cute.zipped_divide, "blocked_product": cute.blocked_product,
                "make_layout_tv": cute.make_layout_tv,
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
                "composition": pycute.composition, "complement": pycute.complement,
                "logical_divide": pycute.logical_divide, "logical_product": pycute.logical_product,
                "right_inverse": pycute.right_inverse, "coalesce": pycute.coalesce,
                "zipped_divide": pycute.zipped_divide,
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
                "composition": tl.compose, "complement": tl.complement,
                "logical_divide": tl.logical_divide, "logical_product": tl.logical_product,
                "right_inverse": tl.right_inverse, "coalesce": tl.coalesce,
                "zipped_divide": tl.zipped_divide, "blocked_product": tl.blocked_product,
            }

        libs.append(TensorLayouts())
    except ImportError:
        notes.append("tensor-layouts not installed (pip install tensor-layouts): skipped")
    return libs, notes


# --------------------------------------------------------------------------- timing

def time_calls(f: Callable, inputs: list) -> tuple[list, int]:
    times, errors = [], 0
    pc = time.perf_counter_ns
    for args in inputs:
        t0 = pc()
        try:
            f(*args)
        except Exception:  # noqa: BLE001 - counted, excluded from the median
            errors += 1
            continue
        times.append(pc() - t0)
    return times, errors


def run(n: int, seed: int, rounds: int = 3) -> tuple[dict, list, list]:
    """For each op: `rounds` rounds, each over n new inputs (fresh objects for every library,
    libraries one after another on the same inputs); report the best round's median per call
    (the machine is shared, so the best round is the least disturbed one)."""
    libs, notes = load_libs()
    results: dict = {}
    for op in OPS:
        rng = random.Random(f"{seed}:{op}")
        warm = [gen_inputs(op, rng) for _ in range(max(50, n // 10))]
        for lib in libs:
            if op in lib.ops:
                time_calls(lib.ops[op], [lib.convert(a) for a in warm])  # warm-up, separate inputs
        best: dict = {}
        for _ in range(rounds):
            raw = [gen_inputs(op, rng) for _ in range(n)]  # new inputs every round
            for lib in libs:
                f = lib.ops.get(op)
                if f is None:
                    continue
                inputs = [lib.convert(a) for a in raw]  # fresh objects, built outside the timing
                times, errors = time_calls(f, inputs)
                med = statistics.median(times) / 1000 if times else float("nan")
                prev = best.get(lib.name)
                best[lib.name] = (min(med, prev[0]) if prev else med, errors + (prev[1] if prev else 0))
        for lib in libs:
            results[(op, lib.name)] = best.get(lib.name)
    return results, libs, notes


def table(results: dict, libs: list, n: int) -> str:
    names = [lib.name for lib in libs]
    head = "| op | " + " | ".join(f"{x} (us)" for x in names)
    others = [x for x in names if x != "cutelab"]
    head += "".join(f" | {x}/cutelab" for x in others) + " |"
    lines = [head, "|" + "---|" * (1 + len(names) + len(others))]
    for op in OPS:
        row = [op]
        for x in names:
            r = results.get((op, x))
            row.append("n/a" if r is None else f"{r[0]:.1f}" + (f" ({r[1]} err)" if r[1] else ""))
        base = results.get((op, "cutelab"))
        for x in others:
            r = results.get((op, x))
            row.append("n/a" if (r is None or base is None) else f"{r[0] / base[0]:.2f}")
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
    ap.add_argument("--rounds", type=int, default=3, help="rounds of n fresh inputs; the best median is reported")
    args = ap.parse_args()
    results, libs, notes = run(args.n, args.seed, args.rounds)
    print(f"median us per call, best of {args.rounds} rounds of {args.n} fresh inputs per op; {machine()}")
    for note in notes:
        print("note:", note)
    print(table(results, libs, args.n))
    errs = [(op, lib) for (op, lib), r in results.items() if r and r[1]]
    if errs:
        print("errors (excluded from the medians):", errs, file=sys.stderr)


if __name__ == "__main__":
    main()
