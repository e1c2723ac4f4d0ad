#!/usr/bin/env python3
"""Golden vectors for MMA atoms and tiled MMAs: what CuTe DSL answers, as JSON for the tests.

What it writes
    tests/golden/mma_atoms.json   every op CuTe DSL 4.8.1 has that cutelab models (MmaUniversalOp,
        warp.MmaF16BF16Op / MmaTF32Op / MmaFP8Op, warpgroup.MmaF16BF16Op / MmaF8Op / MmaI8Op) with
        all dtype combinations, shapes, SM90 N, sources and major modes, plus rejected arguments:
        {"spec": OPSPEC, "atom": str(make_mma_atom(op)), "op": str(op)} | {"spec": ..., "error": "..."}
    tests/golden/mma_tiled.json   random TiledMMAs (atom layouts, permutations) over those ops:
        str(tiled), tv_layout_{A,B,C}_tiled, tile sizes, size, partition_shape_{A,B,C} of a few
        shapes, and for a few thread ids the partitions of identity tensors (iterator + layout),
        of a strided register tensor, and make_fragment_{A,B,C} of those.

    OPSPEC = ["MmaUniversalOp", dtype] | ["warp.MmaF16BF16Op", ab, acc, [m,n,k]] | ["warp.MmaTF32Op", [m,n,k]]
           | ["warp.MmaFP8Op", ab, acc, [m,n,k]] | ["warpgroup.MmaF16BF16Op", ab, acc, [m,n(,k)], src, amaj, bmaj]
           | ["warpgroup.MmaF8Op" | "warpgroup.MmaI8Op", a, b, acc, [m,n(,k)], src, amaj, bmaj]
    dtypes by their cutlass class names (Float16, ...); src SMEM|RMEM; majors K|MN.

How to run (no GPU needed; the DSL traces on the CPU)
    CUTE_DSL_ARCH=sm_90a /work/dslenv/bin/python scripts/make_golden_mma.py [--n 400] [--seed 0]

    Cases run in subprocesses in chunks (the DSL can kill the interpreter on bad input); a chunk
    that dies is split until the culprit is recorded as {"crash": true}. Deterministic for a
    given --seed and --n. Does not import cutelab.
"""
import argparse
import json
import os
import random
import re
import sys

import golden_chunks  # scripts/golden_chunks.py: the children that run the cases

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(os.path.dirname(HERE), "tests", "golden")
MARK = golden_chunks.MARK

# ---------------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------------

F16, BF16, F32, F64 = "Float16", "BFloat16", "Float32", "Float64"
E4M3, E5M2, I8, U8, I32 = "Float8E4M3FN", "Float8E5M2", "Int8", "Uint8", "Int32"
ALL_DT = [F16, BF16, F32, F64, E4M3, E5M2, I8, U8, I32]


def atom_cases():
    cases = []
    for dt in ALL_DT:
        cases.append(["MmaUniversalOp", dt])
    shapes = [[16, 8, 8], [16, 8, 16], [16, 8, 4], [16, 8, 32], [8, 8, 4], [16, 16, 16]]
    for ab in [F16, BF16, F32, E4M3, E5M2, I8]:
        for acc in [F16, F32, I32]:
            for s in shapes:
                cases.append(["warp.MmaF16BF16Op", ab, acc, s])
                cases.append(["warp.MmaFP8Op", ab, acc, s])
    for s in shapes:
        cases.append(["warp.MmaTF32Op", s])
    majors = [("K", "K"), ("K", "MN"), ("MN", "K"), ("MN", "MN")]
    wg_dt = {
        "warpgroup.MmaF16BF16Op": [(F16, F16), (F16, F32), (BF16, F32), (BF16, F16), (F32, F32), (E4M3, F32)],
        "warpgroup.MmaF8Op": [(a, b, c) for a in (E4M3, E5M2) for b in (E4M3, E5M2) for c in (F16, F32)]
        + [(F16, E4M3, F32), (E4M3, E5M2, I32)],
        "warpgroup.MmaI8Op": [(a, b, I32) for a in (I8, U8) for b in (I8, U8)] + [(I8, I8, F32), (F16, I8, I32)],
    }
    for name, combos in wg_dt.items():
        k = 16 if "F16" in name else 32
        for combo in combos:
            ab = list(combo) if name != "warpgroup.MmaF16BF16Op" else [combo[0], combo[1]]
            for n in range(8, 257, 8):
                for src in ("SMEM", "RMEM"):
                    shp = [64, n, k] if n % 16 else [64, n]
                    cases.append([name] + ab + [shp, src, "K", "K"])
            for n in (8, 24, 64, 256):
                for src in ("SMEM", "RMEM"):
                    for am, bm in majors[1:]:
                        cases.append([name] + ab + [[64, n, k], src, am, bm])
        for bad in ([32, 64, k], [64, 4, k], [64, 264, k], [64, 12, k], [64, 64, 2 * k], [64, 64, k, 1]):
            cases.append([name] + (list(combos[0]) if name != "warpgroup.MmaF16BF16Op" else list(combos[0][:2]))
                         + [bad, "SMEM", "K", "K"])
    return cases


TILED_OPS = [
    ["MmaUniversalOp", F32],
    ["MmaUniversalOp", F16],
    ["warp.MmaF16BF16Op", F16, F32, [16, 8, 8]],
    ["warp.MmaF16BF16Op", F16, F32, [16, 8, 16]],
    ["warp.MmaF16BF16Op", BF16, F32, [16, 8, 16]],
    ["warp.MmaTF32Op", [16, 8, 4]],
    ["warp.MmaTF32Op", [16, 8, 8]],
    ["warp.MmaFP8Op", E4M3, F32, [16, 8, 16]],
    ["warp.MmaFP8Op", E5M2, F16, [16, 8, 32]],
    ["warpgroup.MmaF16BF16Op", F16, F32, [64, 64, 16], "SMEM", "K", "K"],
    ["warpgroup.MmaF16BF16Op", BF16, F32, [64, 128, 16], "RMEM", "K", "MN"],
    ["warpgroup.MmaF16BF16Op", F16, F16, [64, 8, 16], "RMEM", "K", "K"],
    ["warpgroup.MmaF8Op", E4M3, E5M2, F32, [64, 32, 32], "SMEM", "K", "K"],
    ["warpgroup.MmaI8Op", I8, U8, I32, [64, 24, 32], "RMEM", "K", "K"],
]

def op_shape(spec):
    name = spec[0]
    if name == "MmaUniversalOp":
        return (1, 1, 1), 1
    if name == "warp.MmaTF32Op":
        return tuple(spec[1]), 32
    if name.startswith("warp."):
        return tuple(spec[3]), 32
    shp = spec[3] if name == "warpgroup.MmaF16BF16Op" else spec[4]
    k = 16 if name == "warpgroup.MmaF16BF16Op" else 32
    return (shp[0], shp[1], k), 128


def fmt(x):
    if isinstance(x, (tuple, list)):
        return "(" + ",".join(fmt(e) for e in x) + ")"
    return str(x)


def compact(shape, order):
    """A compact layout of the flat shape with its modes' strides assigned in the given order."""
    stride = [0] * len(shape)
    cur = 1
    for i in order:
        stride[i] = cur if shape[i] != 1 else 0
        cur *= shape[i]
    return fmt(shape) + ":" + fmt(stride)


def rand_perm_layout(rng, size):
    """A random bijective layout of the given size (a permutation of [0,size)), or size:1."""
    factors = []
    n = size
    while n > 1:
        for p in (2, 3, 5, 7):
            if n % p == 0:
                break
        else:
            p = n
        f = p
        while n % (f * p) == 0 and rng.random() < 0.5:
            f *= p
        factors.append(f)
        n //= f
    if not factors:
        return "1:0"
    order = list(range(len(factors)))
    rng.shuffle(order)
    return compact(factors, order) if len(factors) > 1 else "%d:1" % size


def tiled_cases(n, seed):
    rng = random.Random(seed)
    cases = []
    for i in range(n):
        spec = TILED_OPS[i % len(TILED_OPS)]
        (am, an, ak), nthr = op_shape(spec)
        maxthr = 16 if nthr == 1 else (8 if nthr == 32 else 4)
        while True:
            al = [rng.choice([1, 1, 2, 2, 3, 4]) for _ in range(3)]
            if rng.random() < 0.7:
                al[2] = 1
            if al[0] * al[1] * al[2] <= maxthr:
                break
        r = rng.random()
        if r < 0.4:
            alay = al  # shape only: column-major
        elif r < 0.7:
            alay = compact(al, [1, 0, 2])  # N fastest (row-major over M,N)
        else:
            o = [0, 1, 2]
            rng.shuffle(o)
            alay = compact(al, o)
        tile = [am * al[0], an * al[1], ak * al[2]]
        perm = None
        r = rng.random()
        if r < 0.35:
            perm = None
        elif r < 0.6:
            perm = [rng.choice([None, tile[j], tile[j] * 2]) for j in range(3)]
        else:
            perm = [rng.choice([None, rand_perm_layout(rng, tile[j] * rng.choice([1, 1, 2]))]) for j in range(3)]
        if rng.random() < 0.03:  # some rejected ones
            perm = rng.choice([[tile[0], tile[1]], [tile[0], None, tile[2], None]])
        # shapes to partition: multiples of the (permuted) tile sizes, sometimes with an L mode
        def tsize(j):
            p = perm[j] if isinstance(perm, list) and len(perm) == 3 else None
            if p is None:
                return tile[j]
            if isinstance(p, int):
                return p
            shp = p.split(":")[0].replace("(", "").replace(")", "")
            out = 1
            for x in shp.split(","):
                out *= int(x)
            return out
        tm, tn, tk = tsize(0), tsize(1), tsize(2)
        mult = lambda: rng.choice([1, 1, 2, 3, 4])  # noqa: E731
        M, N, K = tm * mult(), tn * mult(), tk * mult()
        L = rng.choice([None, None, None, 2, 3])
        shapes = {"A": [M, K], "B": [N, K], "C": [M, N]}
        if L:
            for v in shapes.values():
                v.append(L)
        size = nthr * al[0] * al[1] * al[2]
        thr = sorted(set(rng.randrange(size) for _ in range(3)) | {size - 1})
        cases.append({"op": spec, "atom_layout": alay, "perm": perm, "shapes": shapes, "thr": thr})
    # fixed cases: the brief's 2x2 SM80 tiling, partitions of odd shapes
    fixed = ["warp.MmaF16BF16Op", F16, F32, [16, 8, 16]]
    for shp in ([24, 16], [8, 8], [64, 64], [40, 24], [48, 32], [16, 8]):
        cases.append({"op": fixed, "atom_layout": [2, 2, 1], "perm": None,
                      "shapes": {"A": shp, "B": shp, "C": shp}, "thr": [0, 37, 127]})
    for perm in ([48, 16, 16], [8, 16, 16], [32, 32, 16], ["(4,4,2):(1,8,4)", None, None], [16, 24, None]):
        cases.append({"op": fixed, "atom_layout": [2, 2, 1], "perm": perm,
                      "shapes": {"A": [96, 32], "B": [48, 32], "C": [96, 48]}, "thr": [0, 37, 127]})
    return cases


# ---------------------------------------------------------------------------------------------
# Worker (inside a subprocess): evaluate cases inside one @cute.jit trace
# ---------------------------------------------------------------------------------------------


class _StopTrace(Exception):
    pass


def first_line(e):
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(e))  # drop terminal colours
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    line = lines[0] if lines else ""
    if line.startswith("Operation creation failed") and len(lines) > 1:
        line = lines[1]
    for pre in ("error: unknown: ", "error: "):
        if line.startswith(pre):
            line = line[len(pre):]
    return ("%s: %s" % (type(e).__name__, line))[:300]


def worker(path):
    import warnings

    warnings.simplefilter("ignore")
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.nvgpu import MmaUniversalOp, OperandMajorMode, warp, warpgroup

    with open(path) as f:
        kind, cases = json.load(f)

    def dt(name):
        return getattr(cutlass, name)

    def parse_tuple(s):
        return eval(s.replace("_", "None"))  # our own strings: digits, commas, parens

    def mk_layout(s):
        shp, std = s.split(":")
        return cute.make_layout(parse_tuple(shp), stride=parse_tuple(std))

    def make_op(spec):
        name = spec[0]
        if name == "MmaUniversalOp":
            return MmaUniversalOp(dt(spec[1]))
        if name == "warp.MmaTF32Op":
            return warp.MmaTF32Op(tuple(spec[1]))
        if name in ("warp.MmaF16BF16Op", "warp.MmaFP8Op"):
            cls = getattr(warp, name.split(".")[1])
            return cls(dt(spec[1]), dt(spec[2]), tuple(spec[3]))
        cls = getattr(warpgroup.mma, name.split(".")[1])
        src = getattr(warpgroup.OperandSource, spec[-3])
        am, bm = OperandMajorMode(spec[-2]), OperandMajorMode(spec[-1])
        dts = [dt(x) for x in spec[1:-4]]
        return cls(*dts, tuple(spec[-4]), src, am, bm)

    def emit(i, out):
        out["i"] = i
        sys.stdout.write(MARK + json.dumps(out) + "\n")
        sys.stdout.flush()

    def tryit(f):
        try:
            return f()
        except Exception as e:  # the DSL's answer is an error
            return {"error": first_line(e)}

    def show(x):
        if isinstance(x, tuple):
            return "(" + ",".join(show(e) for e in x) + ")"
        if x is None:
            return "_"
        return str(x)

    def one_atom(spec):
        op = make_op(spec)
        atom = cute.make_mma_atom(op)
        return {"atom": str(atom), "op": str(op)}

    def one_tiled(c):
        op = make_op(c["op"])
        al = c["atom_layout"]
        al = mk_layout(al) if isinstance(al, str) else tuple(al)
        perm = c["perm"]
        if perm is not None:
            perm = tuple(mk_layout(p) if isinstance(p, str) else p for p in perm)
        t = cute.make_tiled_mma(op, al, perm)
        out = {"tiled": str(t), "tv_A": str(t.tv_layout_A_tiled), "tv_B": str(t.tv_layout_B_tiled),
               "tv_C": str(t.tv_layout_C_tiled), "size": int(t.size),
               "tile": [int(t.get_tile_size(j)) for j in range(3)],
               "perm_str": show(t.permutation_mnk)}
        for w in "ABC":
            shp = tuple(c["shapes"][w])
            out["pshape_" + w] = tryit(lambda: show(getattr(t, "partition_shape_" + w)(shp)))
        slices = []
        for tid in c["thr"]:
            s = t.get_slice(tid)
            d = {"thr": tid}
            for w in "ABC":
                shp = tuple(c["shapes"][w])

                def ident():
                    p = getattr(s, "partition_" + w)(cute.make_identity_tensor(shp))
                    return {"iter": show(p.iterator), "layout": str(p.layout)}

                d["id_" + w] = tryit(ident)

                def strided():
                    # row-major over the first two modes, then the rest
                    order = [1, 0] + list(range(2, len(shp)))
                    stride = [0] * len(shp)
                    cur = 1
                    for j in order:
                        stride[j] = cur
                        cur *= shp[j]
                    r = cute.make_rmem_tensor(cute.make_layout(shp, stride=tuple(stride)), cutlass.Float32)
                    p = getattr(s, "partition_" + w)(r)
                    res = {"layout": str(p.layout)}
                    fr = tryit(lambda: str(getattr(s, "make_fragment_" + w)(p).layout))
                    res["frag"] = fr
                    return res

                d["rm_" + w] = tryit(strided)
            slices.append(d)
        out["slices"] = slices
        return out

    def run_all():
        for i, c in enumerate(cases):
            try:
                out = one_atom(c) if kind == "atom" else one_tiled(c)
            except Exception as e:
                out = {"error": first_line(e)}
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
# Driver
# ---------------------------------------------------------------------------------------------


def run_chunk(kind, cases, log):
    return golden_chunks.run_chunk(__file__, kind, cases, log, 120)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=400, help="random tiled MMAs (default 400)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--chunk", type=int, default=200)
    ap.add_argument("--out", default=OUT_DIR)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        worker(a.worker)
        return
    if os.environ.get("CUTE_DSL_ARCH") != "sm_90a":
        ap.error("run with CUTE_DSL_ARCH=sm_90a (the warpgroup ops need it)")
    from importlib.metadata import version

    ver = version("nvidia-cutlass-dsl")

    def log(m):
        print(m, file=sys.stderr, flush=True)

    for kind, cases, fname in (("atom", atom_cases(), "mma_atoms.json"),
                               ("tiled", tiled_cases(a.n, a.seed), "mma_tiled.json")):
        outs = []
        for k in range(0, len(cases), a.chunk):
            outs += run_chunk(kind, cases[k:k + a.chunk], log)
        path = os.path.join(a.out, fname)
        head = {"what": kind, "dsl_version": ver,
                "generator": "CUTE_DSL_ARCH=sm_90a scripts/make_golden_mma.py --n %d --seed %d" % (a.n, a.seed)}
        with open(path, "w") as f:
            f.write(json.dumps(head)[:-1] + ', "cases": [\n')
            f.write(",\n".join(json.dumps(dict({"case": c}, **o)) for c, o in zip(cases, outs)))
            f.write("\n]}\n")
        nerr = sum("error" in o for o in outs)
        log("%s: %d cases, %d errors, %d crashes -> %s" % (fname, len(cases), nerr,
                                                          sum("crash" in o for o in outs), path))


if __name__ == "__main__":
    main()
