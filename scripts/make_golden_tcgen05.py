#!/usr/bin/env python3
"""Golden vectors for the Blackwell (SM100) tcgen05 atoms: what CuTe DSL 4.8.1 answers, as JSON.

What it writes (tests/golden/)
    tcgen05_mma_atoms.json   the UMMA ops (MmaTF32Op, MmaF16BF16Op, MmaI8Op, MmaFP8Op, MmaF8F6F4Op,
        MmaMXF8Op, MmaMXF8F6F4Op, MmaMXF4Op, MmaMXF4NVF4Op) over dtypes, shapes, CTA groups, A
        sources and major modes, with rejected arguments: str(op) (some), str(make_mma_atom(op)),
        and the tensor-memory fragments make_fragment_C / make_fragment_A (A in TMEM) of the
        partition shapes of a few tiles | {"error": ...}.
    tcgen05_mma_tiled.json   random tiled UMMAs (atom layouts, permutations): str(tiled), the tiled
        TV layouts, tile sizes, partition_shape_{A,B,C}, partitions of identity tensors, fragments
        C (TMEM) and A/B (shared-memory descriptors of partitions of smem tensors; the layout the
        DSL prints after "o").
    tcgen05_smem.json        tcgen05.make_smem_layout_atom of every kind and element width, and
        tcgen05.tile_to_mma_shape of those atoms over MMA tile shapes and orders.
    tcgen05_helpers.json     cutlass.utils.blackwell_helpers: make_trivial_tiled_mma, make_smem_layout_a/b/c,
        get_smem_layout_atom_ab, make_smem_layout, get_smem_layout_atom_epi / make_smem_layout_epi,
        compute_epilogue_tile_shape and get_tmem_load_op over CTA tiles, types and majors.
    tcgen05_blockscaled.json cutlass.utils.blockscaled_layout: BlockScaledBasicChunk, tile_atom_to_shape_SF,
        make_smem_layout_sfa/sfb and make_tmem_layout_sfa/sfb (of one SMEM stage) over
        make_blockscaled_trivial_tiled_mma (MXF4, MXF4NVF4, MXF8F6F4).
    tcgen05_s2t.json         the shared -> tensor memory copies (tcgen05.cp: Cp128x256bOp ... Cp2x64x128b0123Op) as
        copy atoms of several element types, and the scale-factor flow of block-scaled GEMMs: make_s2t_copy over
        filter_zeros of make_tmem_layout_sfa/sfb tensors, append_s2t_broadcast_mode of the filtered SMEM
        stages, one CTA's partition_S of them,
        get_s2t_smem_desc_tensor's layout and partition_D of the TMEM tensor, with the k-block slices and
        find_tmem_tensor_col_offset of the SF tensors.
    tcgen05_tmem_copy.json   the tensor-memory copy ops (Ld/St 16x64b, 16x128b, 16x256b, 16x32bx2,
        32x32b, every repetition, pack/unpack) as copy atoms of several element types, and
        make_tmem_copy of them over accumulator fragments: the tiled copy and one thread's
        partition_S / partition_D of the TMEM tensor; find_tmem_tensor_col_offset of the fragments.

How to run (no GPU needed; the DSL traces on the CPU)
    CUTE_DSL_ARCH=sm_100a /work/dslenv/bin/python scripts/make_golden_tcgen05.py [--n 300] [--seed 0]

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

F16, BF16, F32, TF32 = "Float16", "BFloat16", "Float32", "TFloat32"
E4M3, E5M2, I8, U8, I32 = "Float8E4M3FN", "Float8E5M2", "Int8", "Uint8", "Int32"
E3M2, E2M3, E2M1, UE8M0 = "Float6E3M2FN", "Float6E2M3FN", "Float4E2M1FN", "Float8E8M0FNU"
F8F6F4 = [E5M2, E4M3, E3M2, E2M3, E2M1]

# op name -> (dtype argument names, has major modes)
OPS = {
    "MmaTF32Op": ([], True),
    "MmaF16BF16Op": (["ab", "acc"], True),
    "MmaI8Op": (["ab"], True),
    "MmaFP8Op": (["ab", "acc"], True),
    "MmaF8F6F4Op": (["a", "b", "acc"], True),
    "MmaMXF8Op": (["ab"], True),
    "MmaMXF8F6F4Op": (["a", "b"], True),
    "MmaMXF4Op": ([], False),
    "MmaMXF4NVF4Op": (["sf"], False),
}
OP_K = {"MmaTF32Op": 8, "MmaF16BF16Op": 16, "MmaI8Op": 32, "MmaFP8Op": 32, "MmaF8F6F4Op": 32,
        "MmaMXF8Op": 32, "MmaMXF8F6F4Op": 32, "MmaMXF4Op": 64, "MmaMXF4NVF4Op": 64}
OP_DTS = {
    "MmaTF32Op": [[]],
    "MmaF16BF16Op": [[F16, F32], [F16, F16], [BF16, F32], [BF16, F16], [F32, F32], [E4M3, F32], [F16, I32]],
    "MmaI8Op": [[I8], [U8], [F16]],
    "MmaFP8Op": [[E4M3, F32], [E5M2, F16], [E4M3, F16], [E5M2, F32], [F16, F32], [E4M3, BF16]],
    "MmaF8F6F4Op": [[a, b, acc] for a in F8F6F4 for b in F8F6F4 for acc in (F32, F16)][::3]
    + [[F16, E4M3, F32], [E4M3, I8, F32], [E4M3, E4M3, BF16]],
    "MmaMXF8Op": [[E4M3], [E5M2], [E2M1]],
    "MmaMXF8F6F4Op": [[a, b] for a in F8F6F4 for b in F8F6F4][::2] + [[F16, E4M3], [E4M3, I8]],
    "MmaMXF4Op": [[]],
    "MmaMXF4NVF4Op": [[UE8M0], [E4M3], [E5M2], [F16]],
}


def spec(op, dts, shape, cta, src, am="K", bm="K"):
    return {"op": op, "dt": dts, "shape": shape, "cta": cta, "src": src, "maj": [am, bm] if OPS[op][1] else None}


def atom_cases():
    cases = []
    majors = [("K", "K"), ("K", "MN"), ("MN", "K"), ("MN", "MN")]
    for op in OPS:
        k = OP_K[op]
        for di, dts in enumerate(OP_DTS[op]):
            for cta in (1, 2):
                ms = (64, 128) if cta == 1 else (128, 256)
                for m in ms:
                    nlist = list(range(8, 257, 8)) if di == 0 else [8, 16, 48, 256]
                    for n in nlist:
                        for src in ("SMEM", "TMEM"):
                            shp = [m, n] if n % 32 else [m, n, k]
                            cases.append(spec(op, dts, shp, cta, src))
                    if OPS[op][1] and di < 2:
                        for n in (16, 24, 32, 64, 256):
                            for src in ("SMEM", "TMEM"):
                                for am, bm in majors[1:]:
                                    cases.append(spec(op, dts, [m, n, k], cta, src, am, bm))
            if di == 0:
                for bad in ([32, 64, k], [192, 64], [64, 4], [128, 264], [128, 12], [256, 8], [128, 64, 2 * k],
                            [128, 64, k, 1], [512, 64]):
                    for cta in (1, 2):
                        cases.append(spec(op, dts, bad, cta, "SMEM"))
        d0 = OP_DTS[op][0]
        cases.append(dict(spec(op, d0, [128, 64], 1, "SMEM"), cta=3))
        cases.append(dict(spec(op, d0, [128, 64], 1, "SMEM"), src="RMEM"))
    return cases


TILED_OPS = [
    spec("MmaF16BF16Op", [F16, F32], [128, 256, 16], 1, "SMEM"),
    spec("MmaF16BF16Op", [BF16, F32], [128, 64, 16], 1, "SMEM", "MN", "K"),
    spec("MmaF16BF16Op", [F16, F16], [64, 128, 16], 1, "TMEM"),
    spec("MmaF16BF16Op", [F16, F32], [64, 64, 16], 1, "SMEM", "K", "MN"),
    spec("MmaF16BF16Op", [BF16, F32], [256, 128, 16], 2, "SMEM"),
    spec("MmaF16BF16Op", [F16, F32], [128, 64, 16], 2, "TMEM"),
    spec("MmaF16BF16Op", [BF16, F32], [128, 128, 16], 2, "SMEM", "MN", "MN"),
    spec("MmaTF32Op", [], [128, 32, 8], 1, "TMEM"),
    spec("MmaTF32Op", [], [256, 64, 8], 2, "SMEM"),
    spec("MmaI8Op", [I8], [64, 64, 32], 1, "SMEM"),
    spec("MmaFP8Op", [E4M3, F32], [128, 128, 32], 1, "SMEM"),
    spec("MmaF8F6F4Op", [E2M1, E4M3, F32], [128, 64, 32], 1, "TMEM"),
    spec("MmaMXF8Op", [E5M2], [256, 256, 32], 2, "SMEM"),
    spec("MmaMXF4NVF4Op", [E4M3], [128, 128, 64], 1, "SMEM"),
    spec("MmaMXF4Op", [], [256, 64, 64], 2, "TMEM"),
]


def fmt(x):
    if isinstance(x, (tuple, list)):
        return "(" + ",".join(fmt(e) for e in x) + ")"
    return str(x)


def compact(shape, order):
    stride = [0] * len(shape)
    cur = 1
    for i in order:
        stride[i] = cur if shape[i] != 1 else 0
        cur *= shape[i]
    return fmt(shape) + ":" + fmt(stride)


def rand_perm_layout(rng, size):
    factors, n = [], size
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
        op = TILED_OPS[i % len(TILED_OPS)]
        m, nn, k = op["shape"]
        vthr = op["cta"]
        al = [rng.choice([1, 1, 1, 2, 2, 4]) for _ in range(2)] + [rng.choice([1, 1, 1, 1, 2])]
        r = rng.random()
        alay = al if r < 0.6 else compact(al, [1, 0, 2]) if r < 0.8 else compact(al, rng.sample([0, 1, 2], 3))
        tile = [m * al[0], nn * al[1], k * al[2]]
        perm = None
        r = rng.random()
        if r < 0.5:
            perm = None
        elif r < 0.75:
            perm = [rng.choice([None, tile[j], tile[j] * 2]) for j in range(3)]
        else:
            perm = [rng.choice([None, rand_perm_layout(rng, tile[j])]) for j in range(3)]

        def tsize(j):
            p = perm[j] if perm else None
            if p is None:
                return tile[j]
            if isinstance(p, int):
                return p
            out = 1
            for x in p.split(":")[0].replace("(", "").replace(")", "").split(","):
                out *= int(x)
            return out

        tm, tn, tk = tsize(0), tsize(1), tsize(2)
        mult = lambda: rng.choice([1, 1, 2, 3])  # noqa: E731
        M, N, K = tm * mult(), tn * mult(), tk * mult()
        L = rng.choice([None, None, 2])
        shapes = {"A": [M, K], "B": [N, K], "C": [M, N]}
        if L:
            for v in shapes.values():
                v.append(L)
        size = vthr * al[0] * al[1] * al[2]
        thr = sorted(set([0, size - 1] + [rng.randrange(size)]))
        smem = {w: rng.choice(["K", "MN"]) for w in "AB"}
        cases.append({"op": op, "atom_layout": alay, "perm": perm, "shapes": shapes, "thr": thr, "smem": smem})
    return cases


SMEM_KINDS = ["MN_INTER", "MN_SW32", "MN_SW64", "MN_SW128", "MN_SW128_32B", "K_INTER", "K_SW32", "K_SW64", "K_SW128"]


def smem_cases(seed):
    rng = random.Random(seed + 1)
    cases = []
    for kind in SMEM_KINDS:
        for dt in (F16, BF16, F32, TF32, E4M3, I8, E2M1, E3M2, "Float64", "Int16"):
            cases.append({"what": "atom", "kind": kind, "dt": dt})
    for kind in SMEM_KINDS:
        for dt in (F16, F32, E4M3, E2M1):
            for _ in range(10):
                mn = rng.choice([64, 128, 256])
                kk = rng.choice([8, 16, 32, 64, 128])
                rest = [rng.choice([1, 2]), rng.choice([1, 2, 4])]
                if rng.random() < 0.6:
                    rest.append(rng.choice([2, 3, 4]))
                mma = [[mn, kk]] + rest
                if rng.random() < 0.1:
                    mma = [[mn, kk]] + rest[:1]  # too few modes
                nrest = len(mma) - 1
                order = None
                if rng.random() < 0.4:
                    order = rng.sample(list(range(nrest)), nrest)
                cases.append({"what": "tile", "kind": kind, "dt": dt, "mma": mma, "order": order})
    return cases


TMEM_OPS = ["16x64b", "16x128b", "16x256b", "16x32bx2", "32x32b"]
REPS = [1, 2, 4, 8, 16, 32, 64, 128]


def tmem_cases(seed):
    rng = random.Random(seed + 2)
    cases = []
    for ld in ("Ld", "St"):
        for shp in TMEM_OPS:
            for rep in REPS:
                for pk in (False, True):
                    for dt in (F32, F16, I32, I8):
                        if pk and dt not in (F16, F32):
                            continue
                        cases.append({"what": "atom", "ld": ld, "shape": shp, "rep": rep, "pack": pk, "dt": dt})
    # make_tmem_copy over accumulator fragments of a few UMMAs
    accs = [
        spec("MmaF16BF16Op", [F16, F32], [128, 256, 16], 1, "SMEM"),
        spec("MmaF16BF16Op", [F16, F32], [128, 64, 16], 1, "SMEM"),
        spec("MmaF16BF16Op", [F16, F32], [64, 128, 16], 1, "SMEM"),
        spec("MmaF16BF16Op", [BF16, F32], [256, 128, 16], 2, "SMEM"),
        spec("MmaF16BF16Op", [BF16, F32], [128, 128, 16], 2, "SMEM"),
        spec("MmaF16BF16Op", [F16, F16], [128, 128, 16], 1, "SMEM"),
        spec("MmaI8Op", [I8], [128, 64, 32], 1, "SMEM"),
    ]
    for i in range(300):
        acc = accs[i % len(accs)]
        m, n, _ = acc["shape"]
        shp = rng.choice(TMEM_OPS)
        rep = rng.choice([1, 1, 2, 4, 8, 16, 32])
        pk = rng.random() < 0.15
        ld = rng.choice(["Ld", "Ld", "St"])
        tile = [m * rng.choice([1, 1, 2]), n * rng.choice([1, 1, 2])]
        sub = None
        if rng.random() < 0.5:  # an epilogue subtile of the accumulator (flat_divide by (M, n_sub))
            sub = rng.choice([16, 32, 64])
        thr = rng.choice([0, 1, 31, 32, 77, 127])
        cases.append({"what": "copy", "acc": acc, "tile": tile, "sub": sub, "ld": ld, "shape": shp,
                      "rep": rep, "pack": pk, "thr": thr})
    return cases


def helper_cases(seed):
    rng = random.Random(seed + 3)
    cases = []
    ab = [[F16, F16, F32], [BF16, BF16, F32], [F16, F16, F16], [TF32, TF32, F32], [F32, F32, F32], [I8, I8, I32],
          [E4M3, E5M2, F32], [E2M1, E2M1, F32], [E3M2, E4M3, F16], [F16, BF16, F32]]
    for i in range(160):
        a, b, acc = ab[i % len(ab)]
        cta = rng.choice([1, 1, 2])
        m = rng.choice([64, 128]) if cta == 1 else rng.choice([128, 256])
        n = rng.choice([32, 64, 128, 256])
        am, bm = rng.choice(["K", "K", "MN"]), rng.choice(["K", "K", "MN"])
        k = rng.choice([32, 64, 128, 256])
        stages = rng.choice([1, 2, 4])
        cases.append({"what": "smem_ab", "dt": [a, b, acc], "cta": cta, "mn": [m, n], "maj": [am, bm],
                      "tiler": [m, n, k], "stages": stages, "c_m_major": rng.random() < 0.5})
    for dt in (F16, F32, E4M3, I8, "Boolean", E2M1):
        for lay in ("ROW_MAJOR", "COL_MAJOR"):
            for ts in ([128, 32], [128, 64], [64, 32], [128, 16], [128, 128]):
                cases.append({"what": "epi", "dt": dt, "layout": lay, "tile": ts, "stages": rng.choice([1, 2, 4])})
    for i in range(150):
        cta_m = rng.choice([64, 128, 256])
        cta_n = rng.choice([8, 16, 32, 64, 96, 128, 192, 256])
        two = rng.random() < 0.4
        d = rng.choice([F32, F16, BF16, E4M3, I8, E2M1, E3M2])
        c = rng.choice([None, None, F32, F16, E4M3])
        ld, lc = rng.choice(["ROW_MAJOR", "COL_MAJOR"]), rng.choice(["ROW_MAJOR", "COL_MAJOR"])
        acc = rng.choice([F32, F32, F16])
        cases.append({"what": "epi_tile", "cta": [cta_m, cta_n], "two": two, "d": d, "c": c, "ld": ld, "lc": lc,
                      "acc": acc})
    return cases


CP_OPS = ["Cp128x256bOp", "Cp128x128bOp", "Cp4x256bOp", "Cp4x32x128bOp", "Cp2x64x128b0213Op", "Cp2x64x128b0123Op"]


def s2t_cases(seed):
    rng = random.Random(seed + 5)
    cases = []
    for op in CP_OPS:
        for cta in (1, 2):
            for dt in (E4M3, UE8M0, E2M1, I8, F16, F32, "Int16"):
                cases.append({"what": "atom", "op": op, "cta": cta, "dt": dt})
        cases.append({"what": "atom", "op": op, "cta": 3, "dt": E4M3})
    ops = [(E2M1, E2M1, E4M3, 16), (E2M1, E2M1, UE8M0, 16), (E2M1, E2M1, UE8M0, 32), (E4M3, E4M3, UE8M0, 32),
           (E5M2, E2M1, UE8M0, 32)]
    for i in range(120):
        a, b, sf, v = ops[i % len(ops)]
        cta = rng.choice([1, 1, 2])
        m = 128 * cta  # whole 128-row SF chunks per CTA (tcgen05_blockscaled.json has the 2-CTA M = 128 cases)
        n = rng.choice([64, 128, 192, 256])
        k = 4 * v * rng.choice([1, 2, 4])  # whole 4-wide SF chunks along K
        op = "Cp4x32x128bOp" if rng.random() < 0.85 else rng.choice(CP_OPS)
        cases.append({"what": "flow", "dt": [a, b, sf], "vec": v, "cta": cta, "mn": [m, n], "tiler": [m, n, k],
                      "stages": rng.choice([1, 2, 3]), "op": op})
    return cases


def blockscaled_cases(seed):
    rng = random.Random(seed + 4)
    cases = []
    for v in (16, 32):
        for maj in ("K", "MN"):
            cases.append({"what": "chunk", "vec": v, "maj": maj})
        for _ in range(15):
            shp = [128 * rng.choice([1, 2, 3]), v * 4 * rng.choice([1, 2, 4]), rng.choice([1, 2, 5])]
            cases.append({"what": "sf", "vec": v, "shape": shp})
    ops = [(E2M1, E2M1, E4M3, 16), (E2M1, E2M1, UE8M0, 16), (E2M1, E2M1, UE8M0, 32), (E4M3, E4M3, UE8M0, 32),
           (E5M2, E2M1, UE8M0, 32), (E2M1, E2M1, UE8M0, 8), (F16, F16, UE8M0, 32)]
    for i in range(80):
        a, b, sf, v = ops[i % len(ops)]
        cta = rng.choice([1, 2])
        m = 128 if cta == 1 else rng.choice([128, 256])
        n = rng.choice([64, 128, 192, 256])
        k = rng.choice([128, 256, 512])
        cases.append({"what": "smem_sf", "dt": [a, b, sf], "vec": v, "cta": cta, "mn": [m, n],
                      "tiler": [m, n, k], "stages": rng.choice([1, 2, 4])})
    return cases


# ---------------------------------------------------------------------------------------------
# Worker (inside a subprocess): evaluate cases inside one @cute.jit trace
# ---------------------------------------------------------------------------------------------


class _StopTrace(Exception):
    pass


def first_line(e):
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(e))
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    line = lines[0] if lines else ""
    if (line.startswith("Operation creation failed") or line.startswith("Inputs are incorrect")) and len(lines) > 1:
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
    from cutlass.cute.nvgpu import OperandMajorMode, tcgen05

    with open(path) as f:
        kind, cases = json.load(f)

    def dt(name):
        return getattr(cutlass, name)

    def parse_tuple(s):
        return eval(s.replace("_", "None"))

    def mk_layout(s):
        shp, std = s.split(":")
        return cute.make_layout(parse_tuple(shp), stride=parse_tuple(std))

    def make_op(sp):
        cls = getattr(tcgen05, sp["op"])
        cta = {1: tcgen05.CtaGroup.ONE, 2: tcgen05.CtaGroup.TWO}.get(sp["cta"], sp["cta"])
        src = getattr(tcgen05.OperandSource, sp["src"], sp["src"])
        args = [dt(x) for x in sp["dt"]] + [tuple(sp["shape"]), cta, src]
        if sp["maj"]:
            args += [OperandMajorMode(sp["maj"][0]), OperandMajorMode(sp["maj"][1])]
        return cls(*args)

    def emit(i, out):
        out["i"] = i
        sys.stdout.write(MARK + json.dumps(out) + "\n")
        sys.stdout.flush()

    def tryit(f):
        try:
            return f()
        except Exception as e:
            return {"error": first_line(e)}

    def show(x):
        if isinstance(x, tuple):
            return "(" + ",".join(show(e) for e in x) + ")"
        if x is None:
            return "_"
        return str(x)

    def frag_shapes(op):
        m, n, k = (int(x) for x in op.shape_mnk)
        return [[m, n], [2 * m, n], [m, 2 * n, 2]], [[m, 4 * k], [2 * m, 2 * k, 3]]

    def one_atom(idx, sp):
        op = make_op(sp)
        atom = cute.make_mma_atom(op)
        out = {"atom": str(atom)}
        if idx % 4 == 0:
            out["op"] = str(op)
        t = cute.make_tiled_mma(op)
        cs, as_ = frag_shapes(op)
        out["frag_C"] = [tryit(lambda: str(t.make_fragment_C(t.partition_shape_C(tuple(s))))) for s in cs]
        if sp["src"] == "TMEM":
            out["frag_A"] = [tryit(lambda: str(t.make_fragment_A(t.partition_shape_A(tuple(s))))) for s in as_]
        return out

    def after_o(s):
        return s.split(" o ", 1)[1][:-1] if " o " in s else s

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
               "tile": [int(t.get_tile_size(j)) for j in range(3)]}
        for w in "ABC":
            shp = tuple(c["shapes"][w])
            out["pshape_" + w] = tryit(lambda: show(getattr(t, "partition_shape_" + w)(shp)))
        out["frag_C"] = tryit(lambda: str(t.make_fragment_C(t.partition_shape_C(tuple(c["shapes"]["C"])))))
        if c["op"]["src"] == "TMEM":
            out["frag_A"] = tryit(lambda: str(t.make_fragment_A(t.partition_shape_A(tuple(c["shapes"]["A"])))))
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
            for w in "AB":
                shp = tuple(c["shapes"][w])

                def smem():
                    # K-major: (MN,K,...) with K fastest; MN-major: MN fastest
                    order = ([1, 0] if c["smem"][w] == "K" else [0, 1]) + list(range(2, len(shp)))
                    stride = [0] * len(shp)
                    cur = 1
                    for j in order:
                        stride[j] = cur
                        cur *= shp[j]
                    ety = dt(c["op"]["dt"][0]) if c["op"]["dt"] and c["op"]["op"] not in ("MmaMXF4NVF4Op",) \
                        else (cutlass.TFloat32 if c["op"]["op"] == "MmaTF32Op" else cutlass.Float4E2M1FN)
                    ptr = cute.make_ptr(ety, 0, cute.AddressSpace.smem, assumed_align=1024)
                    st = cute.make_tensor(ptr, cute.make_layout(shp, stride=tuple(stride)))
                    p = getattr(s, "partition_" + w)(st)
                    res = {"layout": str(p.layout)}
                    if w == "A" and c["op"]["src"] == "TMEM":
                        return res
                    res["frag"] = tryit(lambda: after_o(str(getattr(t, "make_fragment_" + w)(p))))
                    return res

                d["sm_" + w] = tryit(smem)
            slices.append(d)
        out["slices"] = slices
        return out

    def one_smem(c):
        kind = getattr(tcgen05.SmemLayoutAtomKind, c["kind"])
        atom = tcgen05.make_smem_layout_atom(kind, dt(c["dt"]))
        if c["what"] == "atom":
            return {"atom": str(atom)}

        def tup(x):
            return tuple(tup(e) for e in x) if isinstance(x, list) else x

        order = tuple(c["order"]) if c["order"] is not None else None
        return {"layout": str(tcgen05.tile_to_mma_shape(atom, tup(c["mma"]), order))}

    def tmem_op(c):
        name = "%s%sOp" % (c["ld"], c["shape"])
        cls = getattr(tcgen05, name)
        rep = getattr(tcgen05.Repetition, "x%d" % c["rep"])
        if c["ld"] == "Ld":
            return cls(rep, tcgen05.Pack.PACK_16b_IN_32b if c["pack"] else tcgen05.Pack.NONE)
        return cls(rep, tcgen05.Unpack.UNPACK_32b_IN_16b if c["pack"] else tcgen05.Unpack.NONE)

    def one_tmem(c):
        op = tmem_op(c)
        if c["what"] == "atom":
            atom = cute.make_copy_atom(op, dt(c["dt"]))
            return {"op": str(op), "atom": str(atom)}
        acc = make_op(c["acc"])
        t = cute.make_tiled_mma(acc)
        frag = t.make_fragment_C(t.partition_shape_C(tuple(c["tile"])))
        accty = dt(c["acc"]["dt"][-1]) if c["acc"]["op"] == "MmaF16BF16Op" else cutlass.Int32
        out = {"frag": str(frag), "col_off": tryit(lambda: int(tcgen05.find_tmem_tensor_col_offset(frag)))}
        src = frag[((None, None), 0, 0)]
        if c["sub"]:
            src = cute.flat_divide(src, (c["acc"]["shape"][0] // c["acc"]["cta"], c["sub"]))
            src = src[(None, None, 0, 0)]
        out["src"] = str(src)
        atom = cute.make_copy_atom(op, accty)
        tc = tcgen05.make_tmem_copy(atom, src)
        out["tiled"] = str(tc)
        thr = tc.get_slice(c["thr"])
        if c["ld"] == "Ld":
            out["part_S"] = tryit(lambda: str(thr.partition_S(src)))
            ident = cute.make_identity_tensor(src.shape)
            out["part_D_id"] = tryit(lambda: str(thr.partition_D(ident)))
        else:
            out["part_D"] = tryit(lambda: str(thr.partition_D(src)))
            ident = cute.make_identity_tensor(src.shape)
            out["part_S_id"] = tryit(lambda: str(thr.partition_S(ident)))
        return out

    def one_helper(c):
        import cutlass.utils.blackwell_helpers as bh
        from cutlass.utils import LayoutEnum

        if c["what"] == "smem_ab":
            a, b, acc = (dt(x) for x in c["dt"])
            cta = tcgen05.CtaGroup.ONE if c["cta"] == 1 else tcgen05.CtaGroup.TWO
            am, bm = (OperandMajorMode(x) for x in c["maj"])
            t = bh.make_trivial_tiled_mma(a, b, am, bm, acc, cta, tuple(c["mn"]))
            out = {"tiled": str(t)}
            tiler = tuple(c["tiler"])
            out["a"] = tryit(lambda: str(bh.make_smem_layout_a(t, tiler, a, c["stages"])))
            out["b"] = tryit(lambda: str(bh.make_smem_layout_b(t, tiler, b, c["stages"])))
            out["c"] = tryit(lambda: str(bh.make_smem_layout_c(t, tiler, acc, c["stages"], c["c_m_major"])))
            out["atom_ab"] = tryit(lambda: str(bh.get_smem_layout_atom_ab(am, a, (tiler[0], tiler[2]))))
            out["smem"] = tryit(lambda: str(bh.make_smem_layout(am, (tiler[0], tiler[2]), a, c["stages"])))
            acc_t = t.make_fragment_C(t.partition_shape_C((tiler[0], tiler[1])))
            out["alloc"] = tryit(lambda: int(bh.get_num_tmem_alloc_cols(acc_t)))
            out["alloc2"] = tryit(lambda: int(bh.get_num_tmem_alloc_cols([acc_t, acc_t], rounding=False)))
            out["acc_cols"] = tryit(lambda: int(bh.compute_acc_tmem_cols_per_stage(
                tiler[0] // c["cta"], tiler[1], c["cta"] == 2, c["mn"][1], False)))
            return out
        if c["what"] == "epi":
            lay = getattr(LayoutEnum, c["layout"])
            tile = tuple(c["tile"])
            return {"atom": tryit(lambda: str(bh.get_smem_layout_atom_epi(lay, dt(c["dt"]), tile))),
                    "layout": tryit(lambda: str(bh.make_smem_layout_epi(dt(c["dt"]), lay, tile, c["stages"])))}
        ld, lc = getattr(LayoutEnum, c["ld"]), getattr(LayoutEnum, c["lc"])
        cdt = dt(c["c"]) if c["c"] else None
        out = {}

        def tile():
            return bh.compute_epilogue_tile_shape(tuple(c["cta"]), c["two"], ld, dt(c["d"]), layout_c=lc, elem_ty_c=cdt)

        out["tile"] = tryit(lambda: show(tile()))
        if "error" not in out["tile"]:
            out["ld"] = tryit(lambda: str(bh.get_tmem_load_op(tuple(c["cta"]), ld, dt(c["d"]), dt(c["acc"]), tile(),
                                                             c["two"]).op))
            if "error" not in out["ld"]:
                atom = bh.get_tmem_load_op(tuple(c["cta"]), ld, dt(c["d"]), dt(c["acc"]), tile(), c["two"])
                out["st"] = tryit(lambda: str(bh.get_smem_store_op(ld, dt(c["d"]), dt(c["acc"]), atom)))
        return out

    def one_blockscaled(c):
        import cutlass.utils as cu
        import cutlass.utils.blackwell_helpers as bh

        if c["what"] == "chunk":
            return {"layout": str(cu.BlockScaledBasicChunk(c["vec"], OperandMajorMode(c["maj"])).layout)}
        if c["what"] == "sf":
            return {"layout": str(cu.tile_atom_to_shape_SF(tuple(c["shape"]), c["vec"]))}
        a, b, sf = (dt(x) for x in c["dt"])
        cta = tcgen05.CtaGroup.ONE if c["cta"] == 1 else tcgen05.CtaGroup.TWO
        t = bh.make_blockscaled_trivial_tiled_mma(a, b, OperandMajorMode.K, OperandMajorMode.K, sf, c["vec"], cta,
                                                  tuple(c["mn"]))
        tiler = tuple(c["tiler"])
        out = {"tiled": str(t), "sfa": tryit(lambda: str(cu.make_smem_layout_sfa(t, tiler, c["vec"], c["stages"]))),
               "sfb": tryit(lambda: str(cu.make_smem_layout_sfb(t, tiler, c["vec"], c["stages"])))}
        for w, mk, tm in (("a", cu.make_smem_layout_sfa, cu.make_tmem_layout_sfa),
                          ("b", cu.make_smem_layout_sfb, cu.make_tmem_layout_sfb)):
            def tmem():
                stage = cute.slice_(mk(t, tiler, c["vec"], c["stages"]), (None, None, None, 0))
                return {"smem": str(stage), "tmem": str(tm(t, tiler, c["vec"], stage))}

            out["tmem_sf" + w] = tryit(tmem)
        return out

    def one_s2t(c):
        import cutlass.utils as cu
        import cutlass.utils.blackwell_helpers as bh

        cta = {1: tcgen05.CtaGroup.ONE, 2: tcgen05.CtaGroup.TWO}.get(c["cta"], c["cta"])
        op = getattr(tcgen05, c["op"])(cta)
        if c["what"] == "atom":
            return {"op": str(op), "atom": str(cute.make_copy_atom(op, dt(c["dt"])))}
        a, b, sf = (dt(x) for x in c["dt"])
        t = bh.make_blockscaled_trivial_tiled_mma(a, b, OperandMajorMode.K, OperandMajorMode.K, sf, c["vec"], cta,
                                                  tuple(c["mn"]))
        tiler = tuple(c["tiler"])
        out = {"tiled_mma": str(t)}
        acc = t.make_fragment_C(t.partition_shape_C(tiler[:2]))
        out["acc_off"] = int(tcgen05.find_tmem_tensor_col_offset(acc))
        atom = cute.make_copy_atom(op, sf)
        for w, mk, tm in (("a", cu.make_smem_layout_sfa, cu.make_tmem_layout_sfa),
                          ("b", cu.make_smem_layout_sfb, cu.make_tmem_layout_sfb)):
            staged = mk(t, tiler, c["vec"], c["stages"])
            sptr = cute.make_ptr(sf, 0, cute.AddressSpace.smem, assumed_align=128)
            tptr = cute.make_ptr(sf, 0, cute.AddressSpace.tmem, assumed_align=16)
            s_t = cute.make_tensor(sptr, staged)
            t_t = cute.make_tensor(tptr, tm(t, tiler, c["vec"], cute.slice_(staged, (None, None, None, 0))))
            d = {"tmem": str(t_t.layout), "col_off": tryit(lambda: int(tcgen05.find_tmem_tensor_col_offset(t_t))),
                 "kblock": tryit(lambda: str(t_t[(None, None, 0)].layout))}

            def flow():
                sc, tc = cute.filter_zeros(s_t), cute.filter_zeros(t_t)
                r = {"sc": str(sc.layout), "tc": str(tc.layout),
                     "bcast": tryit(lambda: str(tcgen05.append_s2t_broadcast_mode(op, sc).layout))}
                tcp = tcgen05.make_s2t_copy(atom, tc)
                r["tiled"] = str(tcp)
                thr = tcp.get_slice(0)
                ps = thr.partition_S(sc)
                r["ps"] = str(ps.layout)
                r["desc"] = tryit(lambda: str(tcgen05.get_s2t_smem_desc_tensor(tcp, ps)).rsplit(" o ", 1)[-1][:-1])
                r["pd"] = tryit(lambda: str(thr.partition_D(tc).layout))
                return r

            d["flow"] = tryit(flow)
            out["sf" + w] = d
        return out

    def run_all():
        for i, c in enumerate(cases):
            try:
                if kind == "atom":
                    out = one_atom(i, c)
                elif kind == "tiled":
                    out = one_tiled(c)
                elif kind == "smem":
                    out = one_smem(c)
                elif kind == "helpers":
                    out = one_helper(c)
                elif kind == "blockscaled":
                    out = one_blockscaled(c)
                elif kind == "s2t":
                    out = one_s2t(c)
                else:
                    out = one_tmem(c)
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


def run_chunk(kind, cases, log):
    return golden_chunks.run_chunk(__file__, kind, cases, log, 300)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=300, help="random tiled UMMAs (default 300)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--chunk", type=int, default=400)
    ap.add_argument("--only", default="atom,tiled,smem,tmem,helpers,blockscaled,s2t")
    ap.add_argument("--out", default=OUT_DIR)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        worker(a.worker)
        return
    if os.environ.get("CUTE_DSL_ARCH") != "sm_100a":
        ap.error("run with CUTE_DSL_ARCH=sm_100a (the tcgen05 ops need it)")
    from importlib.metadata import version

    ver = version("nvidia-cutlass-dsl")

    def log(m):
        print(m, file=sys.stderr, flush=True)

    jobs = {"atom": (atom_cases, "tcgen05_mma_atoms.json"), "tiled": (lambda: tiled_cases(a.n, a.seed), "tcgen05_mma_tiled.json"),
            "smem": (lambda: smem_cases(a.seed), "tcgen05_smem.json"), "tmem": (lambda: tmem_cases(a.seed), "tcgen05_tmem_copy.json"),
            "helpers": (lambda: helper_cases(a.seed), "tcgen05_helpers.json"),
            "blockscaled": (lambda: blockscaled_cases(a.seed), "tcgen05_blockscaled.json"),
            "s2t": (lambda: s2t_cases(a.seed), "tcgen05_s2t.json")}
    for kind in a.only.split(","):
        mk, fname = jobs[kind]
        cases = mk()
        outs = []
        for k in range(0, len(cases), a.chunk):
            outs += run_chunk(kind, cases[k:k + a.chunk], log)
        path = os.path.join(a.out, fname)
        head = {"what": kind, "dsl_version": ver,
                "generator": "CUTE_DSL_ARCH=sm_100a scripts/make_golden_tcgen05.py --n %d --seed %d" % (a.n, a.seed)}
        with open(path, "w") as f:
            f.write(json.dumps(head)[:-1] + ', "cases": [\n')
            f.write(",\n".join(json.dumps(dict({"case": c}, **o)) for c, o in zip(cases, outs)))
            f.write("\n]}\n")
        nerr = sum("error" in o for o in outs)
        log("%s: %d cases, %d errors, %d crashes -> %s" % (fname, len(cases), nerr,
                                                          sum("crash" in o for o in outs), path))


if __name__ == "__main__":
    main()
