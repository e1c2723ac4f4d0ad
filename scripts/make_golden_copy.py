#!/usr/bin/env python3
"""Golden vectors for copy atoms and TiledCopy: what NVIDIA CuTe DSL prints for them.

What it does
    Builds deterministic case lists and evaluates each with CuTe DSL (nvidia-cutlass-dsl,
    `cutlass.cute`) inside one `@cute.jit` trace (nothing is compiled; no GPU), writing

      tests/golden/copy_atoms.json   every op x element type x num_bits / num_matrices /
                                     transpose / unpack_bits: str(op) and str(atom), or the error
      tests/golden/copy_tiled.json   random TiledCopies (make_tiled_copy_tv, make_tiled_copy,
                                     make_tiled_copy_S/D): str(tiled copy), size, the tiled src/dst
                                     TV layouts; per random tensor layout and random thread ids the
                                     layouts of partition_S/partition_D, the identity-tensor
                                     partitions (their coordinate offsets), make_fragment_like and
                                     retile of fragments
      tests/golden/copy_mma.json     SM80 TiledMMAs: their tiled A/B/C TV layouts and tile sizes,
                                     and make_tiled_copy_A/B/C and make_tiled_copy_C_atom of
                                     universal and ldmatrix/stmatrix atoms

    Each case is {"args": {...}} plus {"result": {...}} | {"error": "<Type>: <first line>"} |
    {"crash": true}. The DSL can kill the interpreter on bad input: cases run in chunks in
    subprocesses; when one dies, the first unanswered case is re-run alone.

How to run
    /work/dslenv/bin/python scripts/make_golden_copy.py [--n N] [--seed S] [--jobs J]

    Deterministic given --n and --seed (and the DSL version). Does not import cutelab.
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
OUT_DIR = os.path.join(os.path.dirname(HERE), "tests", "golden")
MARK = "@@GOLDEN@@ "

DTYPES = ["Float16", "BFloat16", "Float32", "Float64", "Int8", "Uint8", "Int16", "Uint16", "Int32",
          "Uint32", "Int64", "Boolean"]

# ---------------------------------------------------------------------------------------------
# pure-Python helpers (CuTe notation)
# ---------------------------------------------------------------------------------------------


def parse_tuple(s):
    s = s.replace(" ", "")
    pos = 0

    def item():
        nonlocal pos
        if s[pos] == "(":
            pos += 1
            out = []
            while True:
                out.append(item())
                c = s[pos]
                pos += 1
                if c == ")":
                    return tuple(out)
        j = pos
        if s[pos] == "-":
            pos += 1
        while pos < len(s) and s[pos].isdigit():
            pos += 1
        return int(s[j:pos])

    return item()


def fmt(x):
    if isinstance(x, tuple):
        return "(" + ",".join(fmt(e) for e in x) + ")"
    return str(int(x))


def prod(x):
    if isinstance(x, tuple):
        p = 1
        for e in x:
            p *= prod(e)
        return p
    return x


def compact(shape, order):
    """Strides of a compact layout of a flat shape, modes ordered by `order` (fastest first)."""
    st = [0] * len(shape)
    cur = 1
    for i in order:
        st[i] = cur
        cur *= shape[i]
    return tuple(st)


def rand_factor(rng, n, parts):
    """n (a power of two) split into `parts` powers of two."""
    out = [1] * parts
    while n > 1:
        out[rng.randrange(parts)] *= 2
        n //= 2
    return tuple(out)


def rand_compact_2d(rng, size):
    shp = rand_factor(rng, size, 2)
    order = [0, 1] if rng.random() < 0.5 else [1, 0]
    return fmt(shp) + ":" + fmt(compact(shp, order))


# ---------------------------------------------------------------------------------------------
# case lists
# ---------------------------------------------------------------------------------------------

WARP_OPS = ["LdMatrix8x8x16bOp", "LdMatrix8x16x8bOp", "LdMatrix16x8x8bOp", "LdMatrix16x16x8bOp",
            "StMatrix8x8x16bOp", "StMatrix16x8x8bOp"]


def atom_cases():
    cases = []
    for dt in DTYPES:
        for b in [0, 8, 16, 24, 32, 64, 128, 256, 512, 1024]:
            cases.append({"op": {"name": "CopyUniversalOp"}, "dtype": dt, "kw": {"num_bits_per_copy": b}})
        cases.append({"op": {"name": "CopyUniversalOp"}, "dtype": dt, "kw": {}})
        for b in [0, 8, 16, 32, 64, 128, 256, 512]:
            cases.append({"op": {"name": "CopyG2SOp"}, "dtype": dt, "kw": {"num_bits_per_copy": b}})
        for name in ["CopyG2ROp", "CopyR2GOp", "CopyS2ROp", "CopyR2SOp"]:
            for b in [0, 32, 128]:
                cases.append({"op": {"name": name}, "dtype": dt, "kw": {"num_bits_per_copy": b}})
        for name in WARP_OPS:
            for tr in [False, True]:
                for n in [1, 2, 4]:
                    for ub in [None, 4, 6]:
                        cases.append({"op": {"name": name, "args": [tr, n, ub]}, "dtype": dt, "kw": {}})
    for cm in ["ALWAYS", "GLOBAL", "STREAMING", "LAST_USE", "NONE"]:
        cases.append({"op": {"name": "CopyG2SOp", "cache_mode": cm}, "dtype": "Float16", "kw": {"num_bits_per_copy": 128}})
    return cases


def rand_atom(rng):
    """A valid-looking atom spec and the number of threads / values of its reference layout."""
    r = rng.random()
    if r < 0.45:
        dt = rng.choice(["Float16", "Float32", "Int8", "Float64", "BFloat16"])
        w = {"Float16": 16, "BFloat16": 16, "Float32": 32, "Int8": 8, "Float64": 64}[dt]
        b = rng.choice([0, w, 2 * w, 4 * w, 8 * w, 16 * w])
        b = b if b <= 256 else w
        return {"op": {"name": rng.choice(["CopyUniversalOp", "CopyUniversalOp", "CopyG2SOp"]) if b else "CopyUniversalOp"},
                "dtype": dt, "kw": {"num_bits_per_copy": b}}, 1, max(b // w, 1)
    if r < 0.8:
        name = rng.choice(["LdMatrix8x8x16bOp", "StMatrix8x8x16bOp"])
        n = rng.choice([1, 2, 4])
        dt = rng.choice(["Float16", "BFloat16", "Int16"])
        return {"op": {"name": name, "args": [rng.random() < 0.5, n, None]}, "dtype": dt, "kw": {}}, 32, 2 * n
    name = rng.choice(["LdMatrix16x8x8bOp", "StMatrix16x8x8bOp", "LdMatrix16x16x8bOp"])
    n = {"LdMatrix16x8x8bOp": rng.choice([2, 4]), "StMatrix16x8x8bOp": rng.choice([1, 2, 4]),
         "LdMatrix16x16x8bOp": rng.choice([1, 2])}[name]
    vals = {"LdMatrix16x8x8bOp": 4 * n, "StMatrix16x8x8bOp": 4 * n, "LdMatrix16x16x8bOp": 8 * n}[name]
    return {"op": {"name": name, "args": [True, n, None]}, "dtype": "Int8", "kw": {}}, 32, vals


def rand_tensor_layout(rng, tile, extra_mode):
    """A layout of shape (M*a, N*b[, c]) with one of several stride families."""
    if len(tile) == 1:  # a 1-D tiler: (M*a) or (M*a, c)
        shp = [tile[0] * rng.choice([1, 2, 3])]
    else:
        m, n = tile
        shp = [m * rng.choice([1, 1, 2, 3]), n * rng.choice([1, 2, 3])]
        if rng.random() < 0.07:
            shp[rng.randrange(2)] += rng.choice([1, 2])  # not a multiple of the tile
    if extra_mode:
        shp.append(rng.choice([2, 3]))
    fam = rng.choice(["col", "row", "pad", "perm"])
    r = len(shp)
    if fam == "col":
        st = compact(shp, list(range(r)))
    elif fam == "row":
        st = compact(shp, list(reversed(range(r))))
    elif fam == "perm":
        order = list(range(r))
        rng.shuffle(order)
        st = compact(shp, order)
    elif r == 1:
        st = (rng.choice([1, 1, 2]),)
    else:  # a padded leading dimension
        st = list(compact(shp, [1, 0] + list(range(2, r))))
        pad = rng.choice([1, 4, 8])
        st[0] = st[0] + pad
        for i in range(2, r):
            st[i] = st[0] * shp[0]
        st = tuple(st)
    return fmt(tuple(shp)) + ":" + fmt(tuple(st))


def tiled_cases(rng, n):
    cases = []
    for _ in range(n):
        atom, athr, aval = rand_atom(rng)
        nthr = athr * rng.choice([1, 1, 2, 4, 8] if athr == 32 else [1, 2, 4, 8, 16, 32, 64, 128])
        if rng.random() < 0.05:
            nthr = max(1, nthr // 2)  # sometimes too few threads for the atom
        nval = aval * rng.choice([1, 1, 2, 4]) if rng.random() > 0.05 else max(1, aval // 2)
        thr = rand_compact_2d(rng, nthr)
        val = rand_compact_2d(rng, nval)
        case = {"atom": atom, "make": "tv", "thr": thr, "val": val, "n_tensors": 2, "seed": rng.randrange(1 << 30)}
        if rng.random() < 0.15:
            case["make_from"] = rng.choice(["S", "D"])  # make_tiled_copy_S/D of this tiled copy, same atom
        cases.append(case)
    # make_tiled_copy with an explicit (thread, value) layout and an int tiler
    for _ in range(max(1, n // 6)):
        atom, athr, aval = rand_atom(rng)
        nthr = athr * rng.choice([1, 2, 4])
        nval = aval * rng.choice([1, 2])
        m = rng.choice([4, 8, 16, 32])
        tile_n = (nthr * nval) // m if (nthr * nval) % m == 0 and (nthr * nval) // m >= 1 else None
        if tile_n is None:
            m, tile_n = nthr * nval, 1
        # (thread, value) -> tile index: a random compact ordering of (thr, val) over the tile
        order = [0, 1] if rng.random() < 0.5 else [1, 0]
        tv = fmt((nthr, nval)) + ":" + fmt(compact((nthr, nval), order))
        cases.append({"atom": atom, "make": "raw", "layout_tv": tv, "tiler": [m, tile_n], "n_tensors": 2,
                      "seed": rng.randrange(1 << 30)})
    # 1-D thread and value layouts: a 1-D tile
    drng = random.Random(rng.random() + 1)
    for _ in range(max(1, n // 12)):
        atom, athr, aval = rand_atom(drng)
        if athr != 1:
            continue
        cases.append({"atom": atom, "make": "tv", "thr": "%d:1" % (athr * drng.choice([1, 4, 32, 128])),
                      "val": "%d:1" % (aval * drng.choice([1, 2])), "n_tensors": 2, "seed": drng.randrange(1 << 30)})
    # make_cotiled_copy: (thread, value) -> address over a data layout of the same addresses
    crng = random.Random(rng.random())
    for _ in range(max(1, n // 6)):
        atom, athr, aval = rand_atom(crng)
        nthr = athr * crng.choice([1, 2, 4])
        nval = aval * crng.choice([1, 2])
        order = [0, 1] if crng.random() < 0.7 else [1, 0]
        tv = fmt((nthr, nval)) + ":" + fmt(compact((nthr, nval), order))
        dshape = rand_factor(crng, nthr * nval, 2)
        dorder = [0, 1] if crng.random() < 0.5 else [1, 0]
        data = fmt(dshape) + ":" + fmt(compact(dshape, dorder))
        cases.append({"atom": atom, "make": "cotiled", "atom_layout_tv": tv, "data_layout": data, "n_tensors": 2,
                      "seed": crng.randrange(1 << 30)})
    return cases


def mma_cases():
    cases = []
    mmas = [
        {"op": "MmaF16BF16Op", "ab": "Float16", "acc": "Float32", "shape": [16, 8, 16], "atoms": [1, 1, 1], "perm": None},
        {"op": "MmaF16BF16Op", "ab": "Float16", "acc": "Float32", "shape": [16, 8, 16], "atoms": [2, 2, 1], "perm": None},
        {"op": "MmaF16BF16Op", "ab": "BFloat16", "acc": "Float32", "shape": [16, 8, 16], "atoms": [2, 2, 1], "perm": [32, 32, 16]},
        {"op": "MmaF16BF16Op", "ab": "Float16", "acc": "Float16", "shape": [16, 8, 8], "atoms": [4, 1, 1], "perm": [64, 16, 16]},
        {"op": "MmaF16BF16Op", "ab": "Float16", "acc": "Float32", "shape": [16, 8, 16], "atoms": [1, 4, 1], "perm": [16, 32, 16]},
        {"op": "MmaTF32Op", "ab": "TFloat32", "acc": "Float32", "shape": [16, 8, 8], "atoms": [2, 2, 1], "perm": None},
        {"op": "MmaTF32Op", "ab": "TFloat32", "acc": "Float32", "shape": [16, 8, 4], "atoms": [2, 1, 1], "perm": [32, 16, 8]},
        {"op": "MmaUniversalOp", "ab": "Float32", "acc": "Float32", "shape": None, "atoms": [16, 16, 1], "perm": None},
    ]
    atoms = [
        {"op": {"name": "LdMatrix8x8x16bOp", "args": [False, 4, None]}, "dtype": "Float16", "kw": {}},
        {"op": {"name": "LdMatrix8x8x16bOp", "args": [False, 2, None]}, "dtype": "Float16", "kw": {}},
        {"op": {"name": "LdMatrix8x8x16bOp", "args": [True, 4, None]}, "dtype": "Float16", "kw": {}},
        {"op": {"name": "LdMatrix8x8x16bOp", "args": [False, 4, None]}, "dtype": "BFloat16", "kw": {}},
        {"op": {"name": "StMatrix8x8x16bOp", "args": [False, 4, None]}, "dtype": "Float16", "kw": {}},
        {"op": {"name": "StMatrix8x8x16bOp", "args": [False, 2, None]}, "dtype": "Float16", "kw": {}},
        {"op": {"name": "CopyUniversalOp"}, "dtype": "Float16", "kw": {"num_bits_per_copy": 32}},
        {"op": {"name": "CopyUniversalOp"}, "dtype": "Float32", "kw": {"num_bits_per_copy": 64}},
        {"op": {"name": "CopyUniversalOp"}, "dtype": "Float32", "kw": {}},
        {"op": {"name": "CopyUniversalOp"}, "dtype": "Float16", "kw": {"num_bits_per_copy": 16}},
    ]
    for mma in mmas:
        cases.append({"mma": mma, "atoms": atoms, "seed": 7})
    return cases


# ---------------------------------------------------------------------------------------------
# worker: evaluates cases inside one @cute.jit trace
# ---------------------------------------------------------------------------------------------


class _StopTrace(Exception):
    pass


def first_line(e):
    import re

    lines = [re.sub(r"\x1b\[[0-9;]*m", "", ln).strip() for ln in str(e).splitlines()]
    lines = [ln for ln in lines if ln]
    line = lines[0] if lines else ""
    if line.startswith("Operation creation failed") and len(lines) > 1:
        line = lines[1]
    for p in ("error: unknown: ", "error: "):
        if line.startswith(p):
            line = line[len(p):]
    return ("%s: %s" % (type(e).__name__, line))[:400]


def worker(kind, path):
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.nvgpu import cpasync, warp

    with open(path) as f:
        cases = json.load(f)

    def L(s):
        shp, std = s.split(":")
        return cute.make_layout(parse_tuple(shp), stride=parse_tuple(std))

    def dtype(name):
        return getattr(cutlass, name)

    def make_op(spec):
        name = spec["name"]
        if name in WARP_OPS:
            return getattr(warp, name)(*spec["args"])
        if name == "CopyG2SOp":
            if "cache_mode" in spec:
                return cpasync.CopyG2SOp(getattr(cute.nvgpu.LoadCacheMode, spec["cache_mode"]))
            return cpasync.CopyG2SOp()
        return getattr(cute.nvgpu, name)()

    def make_atom(spec):
        return cute.make_copy_atom(make_op(spec["op"]), dtype(spec["dtype"]), **spec["kw"])

    def emit(i, out):
        out["i"] = i
        sys.stdout.write(MARK + json.dumps(out) + "\n")
        sys.stdout.flush()

    def guard(f):
        try:
            return {"result": f()}
        except Exception as e:  # the DSL's answer is an error
            return {"error": first_line(e)}

    def tiled_result(tc):
        return {"str": str(tc), "size": int(tc.size), "src_tiled": str(tc.layout_src_tv_tiled),
                "dst_tiled": str(tc.layout_dst_tv_tiled), "tiler": str(tc.tiler_mn), "tv": str(tc.layout_tv_tiled)}

    def partitions(tc, case):
        rng = random.Random(case["seed"])
        tiler = [cute.size(t) for t in tc.tiler_mn]
        out = []
        for k in range(case["n_tensors"]):
            lay = rand_tensor_layout(rng, tiler, extra_mode=(k == 1 and rng.random() < 0.5))
            tids = sorted({rng.randrange(tc.size) for _ in range(3)} | {0})
            ent = {"layout": lay, "tids": tids, "per_tid": []}
            try:
                t = cute.make_rmem_tensor(L(lay), cutlass.Float32)
                shp = parse_tuple(lay.split(":")[0])
                ident = cute.make_identity_tensor(shp)
            except Exception as e:
                ent["error"] = first_line(e)
                out.append(ent)
                continue
            for tid in tids:
                th = tc.get_slice(tid)
                r = {"tid": tid}
                r.update({"S": guard(lambda: str(th.partition_S(t).layout)),
                          "D": guard(lambda: str(th.partition_D(t).layout)),
                          "S_id": guard(lambda: str(th.partition_S(ident))),
                          "D_id": guard(lambda: str(th.partition_D(ident)))})
                if "result" in r["D"]:
                    def frag_retile():
                        f = cute.make_fragment_like(th.partition_D(t))
                        return [str(f.layout), str(tc.retile(f).layout)]
                    r["retile"] = guard(frag_retile)
                ent["per_tid"].append(r)
            out.append(ent)
        return out

    def run_tiled(case):
        atom = make_atom(case["atom"])
        if case["make"] == "tv":
            tc = cute.make_tiled_copy_tv(atom, L(case["thr"]), L(case["val"]))
        elif case["make"] == "cotiled":
            tc = cute.make_cotiled_copy(atom, L(case["atom_layout_tv"]), L(case["data_layout"]))
        else:
            tc = cute.make_tiled_copy(atom, L(case["layout_tv"]), tuple(case["tiler"]))
        res = tiled_result(tc)
        if "make_from" in case:
            f = cute.make_tiled_copy_S if case["make_from"] == "S" else cute.make_tiled_copy_D
            res["from"] = guard(lambda: tiled_result(f(atom, tc)))
        res["partitions"] = partitions(tc, case)
        return res

    def run_atom(case):
        op = make_op(case["op"])
        res = {"op": str(op)}
        a = cute.make_copy_atom(op, dtype(case["dtype"]), **case["kw"])
        res["atom"] = str(a)
        res["value_type"] = a.value_type.__name__
        return res

    def run_mma(case):
        m = case["mma"]
        if m["op"] == "MmaUniversalOp":
            op = cute.nvgpu.MmaUniversalOp(dtype(m["ab"]))
        elif m["op"] == "MmaTF32Op":
            op = warp.MmaTF32Op(tuple(m["shape"]))
        else:
            op = getattr(warp, m["op"])(dtype(m["ab"]), dtype(m["acc"]), tuple(m["shape"]))
        perm = tuple(m["perm"]) if m["perm"] else None
        tm = cute.make_tiled_mma(op, tuple(m["atoms"]), permutation_mnk=perm)
        res = {"tv_A": str(tm.tv_layout_A_tiled), "tv_B": str(tm.tv_layout_B_tiled),
               "tv_C": str(tm.tv_layout_C_tiled), "tile": [int(tm.get_tile_size(i)) for i in range(3)],
               "size": int(tm.size), "copies": []}
        for spec in case["atoms"]:
            ent = {"atom": spec}
            try:
                atom = make_atom(spec)
            except Exception as e:
                ent["error"] = first_line(e)
                res["copies"].append(ent)
                continue
            for which, f in (("A", cute.make_tiled_copy_A), ("B", cute.make_tiled_copy_B),
                             ("C", cute.make_tiled_copy_C), ("C_atom", cute.make_tiled_copy_C_atom)):
                def one():
                    tc = f(atom, tm)
                    r = tiled_result(tc)
                    rng = random.Random(case["seed"])
                    tiler = [cute.size(t) for t in tc.tiler_mn]
                    lay = rand_tensor_layout(rng, tiler, extra_mode=False)
                    t = cute.make_rmem_tensor(L(lay), cutlass.Float32)
                    tid = rng.randrange(tc.size)
                    th = tc.get_slice(tid)
                    r["part"] = {"layout": lay, "tid": tid, "S": guard(lambda: str(th.partition_S(t).layout)),
                                 "D": guard(lambda: str(th.partition_D(t).layout))}

                    def frag_retile():  # the MMA's register fragment of this operand, retiled
                        op_ = which[0]
                        thr_mma = tm.get_slice(tid)
                        shape = [(0, 2), (1, 2), (0, 1)]["ABC".index(op_)]
                        tile = tuple(2 * int(tm.get_tile_size(i)) for i in shape)
                        x = cute.make_rmem_tensor(cute.make_layout(tile), cutlass.Float32)
                        part = getattr(thr_mma, "partition_" + op_)(x)
                        frag = getattr(tm, "make_fragment_" + op_)(part)
                        return [str(frag.layout), str(tc.retile(frag).layout)]
                    r["retile"] = guard(frag_retile)
                    return r
                ent[which] = guard(one)
            res["copies"].append(ent)
        return res

    F = {"atoms": run_atom, "tiled": run_tiled, "mma": run_mma}[kind]

    def run_all():
        for i, case in enumerate(cases):
            emit(i, guard(lambda: F(case)))

    @cute.jit
    def driver():
        run_all()
        raise _StopTrace()

    try:
        driver()
    except _StopTrace:
        pass


# ---------------------------------------------------------------------------------------------
# driver: chunks in subprocesses, crash isolation
# ---------------------------------------------------------------------------------------------


def run_subprocess(kind, cases, timeout, env):
    fd, path = tempfile.mkstemp(suffix=".json", prefix="golden_copy_")
    with os.fdopen(fd, "w") as f:
        json.dump(cases, f)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", kind, path]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, env=env)
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


def process(kind, cases, idxs, log, env):
    res, rc, err = run_subprocess(kind, [cases[i] for i in idxs], 120 + 2 * len(idxs), env)
    done = {idxs[k]: v for k, v in res.items()}
    missing = [i for i in idxs if i not in done]
    if not missing:
        return done
    first = missing[0]
    if len(idxs) == 1:
        log("  CRASH (%s) %s: %s" % (rc, kind, err.strip().splitlines()[-1:] if err.strip() else ""))
        done[first] = {"crash": True}
        return done
    done.update(process(kind, cases, [first], log, env))
    if missing[1:]:
        done.update(process(kind, cases, missing[1:], log, env))
    return done


def evaluate(kind, cases, jobs, chunk, log, env):
    idx = list(range(len(cases)))
    chunks = [idx[k:k + chunk] for k in range(0, len(idx), chunk)]
    done = {}
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        for d in ex.map(lambda c: process(kind, cases, c, log, env), chunks):
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
    ap.add_argument("--n", type=int, default=300, help="random TiledCopies (default 300)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--chunk", type=int, default=100)
    ap.add_argument("--only", default="", help="comma-separated subset of atoms,tiled,mma")
    ap.add_argument("--out", default=OUT_DIR)
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        worker(*a.worker)
        return
    env = dict(os.environ, CUTE_DSL_ARCH=os.environ.get("CUTE_DSL_ARCH", "sm_90a"))
    rng = random.Random("copy:%d" % a.seed)
    kinds = {"atoms": atom_cases(), "tiled": tiled_cases(rng, a.n), "mma": mma_cases()}
    only = [k for k in a.only.split(",") if k] or list(kinds)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    ver = dsl_version()
    for kind in only:
        cases = kinds[kind]
        t0 = time.time()
        outs = evaluate(kind, cases, a.jobs, a.chunk, log, env)
        path = os.path.join(a.out, "copy_%s.json" % kind)
        head = {"kind": kind, "dsl_version": ver, "arch": env["CUTE_DSL_ARCH"],
                "generator": "scripts/make_golden_copy.py --n %d --seed %d" % (a.n, a.seed)}
        with open(path, "w") as f:
            f.write(json.dumps(head)[:-1] + ', "cases": [\n')
            f.write(",\n".join(json.dumps(dict({"args": c}, **o), sort_keys=True) for c, o in zip(cases, outs)))
            f.write("\n]}\n")
        nres = sum("result" in o for o in outs)
        nerr = sum("error" in o for o in outs)
        ncr = sum("crash" in o for o in outs)
        log("%s: %d cases (%d answers, %d errors, %d crashes) in %.1fs -> %s" % (
            kind, len(cases), nres, nerr, ncr, time.time() - t0, path))


if __name__ == "__main__":
    main()
