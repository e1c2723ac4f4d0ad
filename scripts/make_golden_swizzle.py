#!/usr/bin/env python3
"""Golden vectors for swizzles and composed layouts: what CuTe DSL answers.

What it does
    Builds deterministic cases (every small swizzle over offsets, random composed layouts
    under every algebra operation CuTe DSL applies to them, slicing, the SM90 SMEM layout
    atoms and tile_to_shape over them), evaluates each with CuTe DSL (nvidia-cutlass-dsl,
    `cutlass.cute`) inside one `@cute.jit` trace per worker subprocess, and writes

        tests/golden/swizzle_<group>.json = {"group": ..., "dsl_version": ..., "generator": ...,
            "cases": [{"op": OP, "args": [ARG, ...], "result": "<str>"}
                      | {..., "error": "<first line>"} | {..., "crash": true}, ...]}

    ARG is {"int": n} | {"tuple": "(2,(3,4))"} | {"coord": "(1,None)"} | {"layout": "S:D"}
    | {"swizzle": [b, m, s]} | {"composed": [[b, m, s], offset, "S:D"]}
    | {"tiler": [ELEM, ...]} (ELEM a layout string, an int or null) | {"str": name}.

    A swizzle is evaluated through a composed layout over a compact 1-D outer layout
    (CuTe DSL's Swizzle object itself is not callable in Python).

How to run (no GPU needed)
    /work/dslenv/bin/python scripts/make_golden_swizzle.py [--n N] [--seed S] [--jobs J]

    Reuses the random layout generators of scripts/make_golden.py; does not import cutelab.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_golden as mg  # noqa: E402  (tuple/layout notation and random layout generators)

OUT_DIR = os.path.join(os.path.dirname(HERE), "tests", "golden")
MARK = "@@GOLDEN@@ "

KINDS = ["MN_INTER", "MN_SW32", "MN_SW64", "MN_SW128", "K_INTER", "K_SW32", "K_SW64", "K_SW128"]
DTYPES = ["Float16", "BFloat16", "Float32", "Float64", "Int8", "Uint8", "Int32", "Float8E4M3FN",
          "Float8E5M2", "Int16", "Int64", "TFloat32"]

# ---------------------------------------------------------------------------------------------
# Case generation (pure Python)
# ---------------------------------------------------------------------------------------------


def valid_swizzles(max_bits=12):
    out = []
    for b in range(0, 5):
        for m in range(0, 6):
            for s in range(-7, 8):
                if abs(s) >= b and b + m + abs(s) <= max_bits:
                    out.append((b, m, s))
    return out


def rand_swizzle(rng):
    r = rng.random()
    if r < 0.5:
        return (rng.choice([1, 2, 3, 3]), 4, 3)
    if r < 0.6:
        return (0, 4, 3)
    b = rng.randint(1, 3)
    s = rng.randint(b, 5) * rng.choice([1, 1, -1])
    return (b, rng.randint(0, 4), s)


def smem_like(rng):
    """Row- or column-major pow2 tiles, nested sometimes: what swizzles are used with."""
    rows = rng.choice([1, 2, 4, 8, 8, 16])
    cols = rng.choice([8, 16, 32, 64, 64, 128])
    r = rng.random()
    if r < 0.4:
        return mg.lay((rows, cols), (cols, 1))
    if r < 0.7:
        return mg.lay((cols, rows), (1, cols))
    if r < 0.85:
        a, b = rng.choice([2, 4]), rng.choice([2, 4])
        return mg.lay(((rows, a), (cols, b)), ((cols, rows * cols), (1, rows * cols * a)))
    return mg.lay((rows, cols), (cols * rng.choice([1, 2]), rng.choice([1, 2])))


def rand_outer(rng):
    r = rng.random()
    if r < 0.55:
        return smem_like(rng)
    if r < 0.8:
        shp = mg.rand_shape(rng, pow2=True, max_size=512)
        return mg.lay(shp, mg.rand_strides(rng, shp, rng.choice(["col", "row", "ordered", "gapped"])))
    return mg.rand_layout(rng, max_size=256)


def rand_composed(rng, outer=None):
    sw = rand_swizzle(rng)
    r = rng.random()
    off = 0 if r < 0.7 else (rng.randrange(0, 64) * 16 if r < 0.85 else rng.randrange(0, 1024))
    return {"composed": [list(sw), off, outer or rand_outer(rng)]}


def outer_of(c):
    return c["composed"][2]


def C(rng):
    return rand_composed(rng)


def gen_swizzle(rng, n):
    cases = []
    for b, m, s in valid_swizzles():
        nbits = b + m + abs(s)
        top = 1 << (nbits + 1)
        offs = list(range(min(top, 64)))
        offs += sorted(rng.sample(range(top), min(top, 48)))
        cases.append(("swizzle_eval", [{"swizzle": [b, m, s]}, {"tuple": mg.fmt(tuple(offs))}]))
    for b, m, s in [(3, 4, 3), (2, 4, 3), (1, 4, 3), (3, 3, 3), (2, 0, -3), (1, 30, 1), (5, 0, 5)]:
        offs = [rng.randrange(1 << 31) for _ in range(16)]
        cases.append(("swizzle_eval", [{"swizzle": [b, m, s]}, {"tuple": mg.fmt(tuple(offs))}]))
    params = set()
    for b in range(-1, 5):
        for m in range(-1, 6):
            for s in range(-6, 7):
                params.add((b, m, s))
    params |= {(1, 30, 1), (1, 31, 1), (2, 10, 20), (3, 10, 20), (1, 29, 2), (2, 29, 2), (10, 10, 10)}
    for p in sorted(params):
        cases.append(("make_swizzle", [{"int": p[0]}, {"int": p[1]}, {"int": p[2]}]))
    return cases


def gen_eval(rng, n):
    cases = []
    for _ in range(n):
        c = C(rng)
        cases.append(("composed_info", [c]))
        shp, _ = mg.parse_layout(outer_of(c))
        for _k in range(2):
            cases.append(("crd2idx", [{"coord": mg.fmt(mg.rand_coord_in(rng, shp))}, c]))
    # a layout as the inner function
    for _ in range(max(10, n // 10)):
        inner = mg.rand_small_layout(rng, 64)
        outer = mg.rand_small_layout(rng, 16)
        c = {"composed": [inner, rng.randrange(0, 8), outer]}
        cases.append(("composed_info", [c]))
    return cases


DIVIDES = ["logical_divide", "zipped_divide", "tiled_divide", "flat_divide"]
PRODUCTS = ["logical_product", "zipped_product", "tiled_product", "flat_product", "blocked_product",
            "raked_product"]


def gen_algebra(rng, n):
    cases = []
    for _ in range(n):
        c = C(rng)
        a = outer_of(c)
        shp, _ = mg.parse_layout(a)
        cases.append(("composition", [c, mg.rand_b_for(rng, a)]))
        cases.append((rng.choice(DIVIDES), [c, mg.rand_b_for(rng, a)]))
        prod_op = rng.choice(PRODUCTS)
        if prod_op in ("blocked_product", "raked_product") or rng.random() < 0.5:
            ra = mg.rank_of(shp)
            bs = tuple(rng.choice([1, 2, 2, 3, 4]) for _ in range(ra))
            b = mg.lay(bs, mg.compact_strides(bs, None if rng.random() < 0.6 else list(range(ra))[::-1]))
        else:
            b = mg.rand_small_layout(rng, 16)
        cases.append((prod_op, [c, {"layout": b}]))
        cases.append(("coalesce", [c]))
        if rng.random() < 0.3:
            cases.append(("filter", [c]))
        nb, ob = rng.choice([(32, 16), (16, 32), (8, 16), (16, 8), (64, 16), (128, 16), (256, 16), (32, 8),
                             (8, 32), (24, 16), (16, 16), (1024, 8)])
        cases.append(("recast_layout", [{"int": nb}, {"int": ob}, c]))
        r = mg.rank_of(shp)
        if isinstance(shp, tuple):
            cases.append(("get", [c, {"int": rng.randrange(r)}]))
            modes = list(range(r))
            rng.shuffle(modes)
            cases.append(("select", [c, {"tuple": mg.fmt(tuple(modes[:rng.randint(1, r)]))}]))
            b0 = rng.randrange(r)
            cases.append(("group_modes", [c, {"int": b0}, {"int": rng.randint(b0, r)}]))
        cases.append(("flatten", [c]))
        cases.append((rng.choice(["append", "prepend"]), [c, {"layout": mg.rand_small_layout(rng, 4)}]))
    # the errors: composed on the right, unsupported ops
    for _ in range(max(5, n // 20)):
        c = C(rng)
        a = outer_of(c)
        cases.append(("composition", [{"layout": a}, c]))
        cases.append(("complement", [c]))
        cases.append(("right_inverse", [c]))
        cases.append(("logical_product", [{"layout": mg.rand_small_layout(rng, 8)}, c]))
    return cases


def gen_tile(rng, n):
    cases = []
    for _ in range(n):
        c = C(rng)
        a = mg.compact2(rng, 64)
        c["composed"][2] = a
        shp = mg.parse_layout(a)[0]
        modes = shp if isinstance(shp, tuple) else (shp,)
        r = len(modes) + (1 if rng.random() < 0.2 else 0)
        trg = []
        for i in range(r):
            base = mg.prod(modes[i]) if i < len(modes) else 1
            trg.append(base * rng.choice([1, 1, 2, 3, 4]) if rng.random() < 0.9 else base + 1)
        order = list(range(r))
        rng.shuffle(order)
        cases.append(("tile_to_shape", [c, {"tuple": mg.fmt(tuple(trg))}, {"tuple": mg.fmt(tuple(order))}]))
    return cases


def gen_slice(rng, n):
    cases = []
    for _ in range(n):
        c = C(rng)
        shp, _ = mg.parse_layout(outer_of(c))
        coord = mg.rand_coord_in(rng, shp, none_p=rng.choice([0.3, 0.5, 0.7]))
        cases.append(("slice_and_offset", [{"coord": mg.fmt(coord)}, c]))
    for _ in range(max(10, n // 10)):
        inner = mg.rand_small_layout(rng, 64)
        outer = mg.rand_small_layout(rng, 16)
        c = {"composed": [inner, rng.randrange(0, 8), outer]}
        shp, _ = mg.parse_layout(outer)
        cases.append(("slice_and_offset", [{"coord": mg.fmt(mg.rand_coord_in(rng, shp, none_p=0.5))}, c]))
    return cases


def gen_smem(rng, n):
    cases = []
    for k in KINDS:
        for d in DTYPES:
            cases.append(("smem_atom", [{"str": k}, {"str": d}]))
    for _ in range(n):
        k = rng.choice(KINDS)
        d = rng.choice(DTYPES[:8])
        width = {"Float16": 16, "BFloat16": 16, "Float32": 32, "Float64": 64, "Int8": 8, "Uint8": 8,
                 "Int32": 32, "Float8E4M3FN": 8, "Float8E5M2": 8}[d]
        bits = {"INTER": 128, "SW32": 256, "SW64": 512, "SW128": 1024}[k.split("_", 1)[1]]
        ne = max(1, bits // width)
        atom = (ne, 8) if k.startswith("MN") else (8, ne)
        trg = [atom[0] * rng.choice([1, 1, 2, 4, 8]), atom[1] * rng.choice([1, 2, 4, 8])]
        if rng.random() < 0.08:
            trg[rng.randrange(2)] += rng.choice([1, 8])
        if rng.random() < 0.6:
            trg.append(rng.choice([1, 2, 3, 4, 7]))
        order = list(range(len(trg)))
        if rng.random() < 0.5:
            order[0], order[1] = order[1], order[0]
        cases.append(("smem_tile", [{"str": k}, {"str": d}, {"tuple": mg.fmt(tuple(trg))},
                                    {"tuple": mg.fmt(tuple(order))}]))
    # cutlass.utils.sm90 helpers: (layout, tiler, dtype, stages)
    for _ in range(n // 3):
        lay_e = rng.choice(["ROW_MAJOR", "COL_MAJOR"])
        d = rng.choice(["Float16", "BFloat16", "Float32", "Int8", "Float8E4M3FN"])
        mnk = tuple(rng.choice([8, 16, 24, 32, 64, 128, 256]) for _ in range(3))
        op = rng.choice(["sm90_a", "sm90_b", "sm90_epi"])
        if op == "sm90_epi":
            cases.append((op, [{"str": d}, {"str": lay_e}, {"tuple": mg.fmt(mnk[:2])}, {"int": rng.randint(1, 4)}]))
        else:
            cases.append((op, [{"str": lay_e}, {"tuple": mg.fmt(mnk)}, {"str": d}, {"int": rng.randint(1, 7)}]))
    return cases


GROUPS = {
    "swizzle_eval": (gen_swizzle, 1),
    "swizzle_composed": (gen_eval, 300),
    "swizzle_algebra": (gen_algebra, 400),
    "swizzle_tile": (gen_tile, 300),
    "swizzle_slice": (gen_slice, 1200),
    "swizzle_smem": (gen_smem, 300),
}


# ---------------------------------------------------------------------------------------------
# Worker: runs inside a subprocess, evaluates cases inside one @cute.jit trace
# ---------------------------------------------------------------------------------------------


class _StopTrace(Exception):
    pass


def worker(path):
    import cutlass
    import cutlass.cute as cute

    with open(path) as f:
        cases = json.load(f)

    def mk_layout(s):
        shp, std = mg.parse_layout(s)
        return cute.make_layout(shp, stride=std)

    def build(arg):
        (k, v), = arg.items()
        if k == "layout":
            return mk_layout(v)
        if k == "int":
            return int(v)
        if k in ("tuple", "coord"):
            return mg.parse_tuple(v)
        if k == "tiler":
            return tuple(mk_layout(e) if isinstance(e, str) else e for e in v)
        if k == "swizzle":
            return cute.make_swizzle(*v)
        if k == "composed":
            inner, off, outer = v
            inner = cute.make_swizzle(*inner) if isinstance(inner, list) else mk_layout(inner)
            return cute.make_composed_layout(inner, off, mk_layout(outer))
        if k == "str":
            return v
        raise ValueError("unknown arg kind %r" % k)

    def sw_str(w):  # the DSL cuts S<2,4,-3> to 'S<2,4,-3': print the parameters ourselves
        return "S<%d,%d,%d>" % (w.num_bits, w.num_base, w.num_shift)

    def show(x):
        if isinstance(x, cute.ComposedLayout):
            inner = x.inner
            ins = sw_str(inner) if isinstance(inner, cute.Swizzle) else str(inner)
            return "%s o %s o %s" % (ins, show(x.offset), x.outer)
        if isinstance(x, cute.Layout):
            return str(x)
        if isinstance(x, cute.Swizzle):
            return sw_str(x)
        if isinstance(x, tuple):
            return "(" + ",".join(show(e) for e in x) + ")"
        if x is None:
            return "None"
        if isinstance(x, bool):
            return str(int(x))
        if isinstance(x, int):
            return str(x)
        return "<%s %s>" % (type(x).__name__, x)

    def swizzle_eval(sw, offs):
        top = max(offs) + 1
        c = cute.make_composed_layout(sw, 0, cute.make_layout(top))
        return tuple(c(o) for o in offs)

    def composed_info(c):
        n = cute.size(c)
        vals = tuple(c(i) for i in range(n)) if n <= 512 else ()
        try:
            align = str(c.max_alignment)
        except Exception as e:
            align = "error"
        return "%s|%d|%d|%d|%d|%s|%s" % (show(c), n, cute.cosize(c), cute.rank(c), cute.depth(c), show(vals), align)

    def sm90():
        from cutlass.utils import hopper_helpers
        return hopper_helpers

    def enum(name):
        from cutlass.utils import LayoutEnum
        return getattr(LayoutEnum, name)

    def smem_atom(kind, dtype):
        from cutlass.cute.nvgpu import warpgroup
        return warpgroup.make_smem_layout_atom(getattr(warpgroup.SmemLayoutAtomKind, kind), getattr(cutlass, dtype))

    F = {
        "make_swizzle": lambda b, m, s: (lambda w: "%d,%d,%d" % (w.num_bits, w.num_base, w.num_shift))(
            cute.make_swizzle(b, m, s)),
        "swizzle_eval": swizzle_eval,
        "composed_info": composed_info,
        "crd2idx": cute.crd2idx,
        "composition": cute.composition,
        "complement": cute.complement,
        "right_inverse": cute.right_inverse,
        "coalesce": cute.coalesce,
        "filter": cute.filter,
        "recast_layout": cute.recast_layout,
        "get": lambda c, i: cute.get(c, mode=[i]),
        "select": lambda c, m: cute.select(c, mode=list(m)),
        "group_modes": cute.group_modes,
        "flatten": cute.flatten,
        "append": cute.append,
        "prepend": cute.prepend,
        "tile_to_shape": cute.tile_to_shape,
        "slice_and_offset": lambda crd, c: "[%s, %s]" % tuple(show(x) for x in cute.slice_and_offset(crd, c)),
        "smem_atom": smem_atom,
        "smem_tile": lambda k, d, trg, order: cute.tile_to_shape(smem_atom(k, d), trg, order),
        "sm90_a": lambda le, mnk, d, st: sm90().make_smem_layout_a(enum(le), mnk, getattr(cutlass, d), st),
        "sm90_b": lambda le, mnk, d, st: sm90().make_smem_layout_b(enum(le), mnk, getattr(cutlass, d), st),
        "sm90_epi": lambda d, le, tile, st: sm90().make_smem_layout_epi(getattr(cutlass, d), enum(le), tile, st),
    }
    for op in DIVIDES + PRODUCTS:
        F[op] = getattr(cute, op)

    def emit(i, out):
        out["i"] = i
        sys.stdout.write(MARK + json.dumps(out) + "\n")
        sys.stdout.flush()

    def run_all():
        for i, (op, args) in enumerate(cases):
            try:
                vals = [build(a) for a in args]
            except Exception as e:
                if op == "make_swizzle" or args and "composed" in args[-1] or "composed" in args[0]:
                    emit(i, {"error": mg.first_line(e)})  # e.g. make_composed_layout refused
                else:
                    emit(i, {"harness_error": "%s: %s" % (type(e).__name__, e)})
                continue
            try:
                res = F[op](*vals)
                out = {"result": res if isinstance(res, str) else show(res)}
            except Exception as e:
                out = {"error": mg.first_line(e)}
            emit(i, out)

    @cute.jit
    def driver():
        run_all()
        raise _StopTrace()

    try:
        driver()
    except _StopTrace:
        pass


# ---------------------------------------------------------------------------------------------
# Driver: chunks in subprocesses, crash isolation
# ---------------------------------------------------------------------------------------------


def run_subprocess(cases, timeout):
    fd, path = tempfile.mkstemp(suffix=".json", prefix="golden_sw_")
    with os.fdopen(fd, "w") as f:
        json.dump(cases, f)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", path]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        stdout, rc, stderr = p.stdout, p.returncode, p.stderr
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
    res, rc, err = run_subprocess([cases[i] for i in idxs], 60 + 0.5 * len(idxs))
    done = {idxs[k]: v for k, v in res.items()}
    missing = [i for i in idxs if i not in done]
    if not missing:
        return done
    first = missing[0]
    if len(idxs) == 1:
        log("  CRASH (%s): %s %s" % (rc, cases[first][0], json.dumps(cases[first][1])))
        done[first] = {"crash": True}
        return done
    done.update(process(cases, [first], log))
    if missing[1:]:
        done.update(process(cases, missing[1:], log))
    return done


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=float, default=1.0, help="scale the number of random cases")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--groups", default="")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--chunk", type=int, default=400)
    ap.add_argument("--out", default=OUT_DIR)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        worker(a.worker)
        return

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    groups = [g for g in a.groups.split(",") if g] or list(GROUPS)
    flat = []
    for g in groups:
        gen, n = GROUPS[g]
        rng = random.Random("%s/%d" % (g, a.seed))
        flat += [(g, op, args) for op, args in gen(rng, max(1, int(n * a.n)))]
    cases = [(op, args) for _g, op, args in flat]
    t0 = time.time()
    log("evaluating %d cases ..." % len(cases))
    idx = list(range(len(cases)))
    chunks = [idx[k:k + a.chunk] for k in range(0, len(idx), a.chunk)]
    done = {}
    with ThreadPoolExecutor(max_workers=a.jobs) as ex:
        for d in ex.map(lambda c: process(cases, c, log), chunks):
            done.update(d)
    log("done in %.1fs" % (time.time() - t0))
    ver = mg.dsl_version()
    os.makedirs(a.out, exist_ok=True)
    for g in groups:
        out = []
        for i, (gg, op, args) in enumerate(flat):
            if gg != g:
                continue
            r = done[i]
            if "harness_error" in r:
                log("  HARNESS ERROR (dropped) %s %s: %s" % (op, json.dumps(args), r["harness_error"]))
                continue
            case = {"op": op, "args": args}
            case.update(r)
            out.append(case)
        head = {"group": g, "dsl_version": ver,
                "generator": "scripts/make_golden_swizzle.py --n %g --seed %d" % (a.n, a.seed)}
        path = os.path.join(a.out, g + ".json")
        with open(path, "w") as f:
            f.write(json.dumps(head)[:-1] + ', "cases": [\n')
            f.write(",\n".join(json.dumps(c) for c in out))
            f.write("\n]}\n")
        nres = sum("result" in c for c in out)
        nerr = sum("error" in c for c in out)
        ncr = sum("crash" in c for c in out)
        log("%-18s %5d cases: %5d results, %5d errors, %3d crashes" % (g, len(out), nres, nerr, ncr))


if __name__ == "__main__":
    main()
