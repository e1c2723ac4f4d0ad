#!/usr/bin/env python3
"""Golden vectors for dynamic layouts: what CuTe DSL prints at trace time for tensors made with
from_dlpack and marked with mark_layout_dynamic / mark_compact_shape_dynamic, and for the layout
algebra and integer arithmetic on them ('?', '?{div=16}', '?{i64 div=8}').

    /work/dslenv/bin/python scripts/make_dynamic_golden.py   # writes tests/golden/dynamic.json

Each case builds a numpy array (shape, dtype, optional transpose / column slice), applies a list
of marks, then, inside one @cute.jit function, prints every expression of EXPRS (evaluated with
mA the tensor, s its first extent, T a tiler of the tensor's rank). A mark that the DSL refuses is
recorded as {"error": first line}. Each case runs in a forked child (the DSL can crash the
interpreter on bad input: a crash is recorded as {"crash": true}). tests/test_dynamic_golden.py
replays the cases on cutelab (no DSL needed). This script does not import cutelab.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "tests", "golden", "dynamic.json")

# expressions printed for every case (str() of the value; repr for 'repr_s')
EXPRS = [
    "mA.layout", "cute.size(mA)", "cute.size(mA, mode=[0])", "cute.cosize(mA.layout)",
    "cute.zipped_divide(mA.layout, T)", "cute.logical_divide(mA.layout, T)",
    "cute.local_tile(mA, T, C).layout", "cute.ceil_div(mA.shape, T)",
    "s", "s * 2", "2 * s", "s + 1", "s + 2", "s - s", "s // 2", "s % 4", "s * s", "repr(s)",
    "cute.make_layout((s, 4))", "cute.make_layout((4, s), stride=(s, 1))",
]

# (name, array spec, marks); array spec: shape, dtype, transpose axes or None, column step or None
CASES = [
    ("static", ((16, 32), "float32", None, None), []),
    ("align16", ((16, 32), "float32", None, None), [("align", 16)]),
    ("layout", ((16, 32), "float32", None, None), [("layout", None)]),
    ("layout_ld1", ((16, 32), "float32", None, None), [("layout", 1)]),
    ("layout_ld-1", ((16, 32), "float32", None, None), [("layout", -1)]),
    ("layout_ld0_bad", ((16, 32), "float32", None, None), [("layout", 0)]),
    ("layout_ld5_bad", ((16, 32), "float32", None, None), [("layout", 5)]),
    ("layout_colmajor", ((8, 12), "float32", (1, 0), None), [("layout", None)]),
    ("layout_3d", ((2, 4, 8), "float32", None, None), [("layout", None)]),
    ("layout_1d", ((64,), "float32", None, None), [("layout", None)]),
    ("layout_ones", ((1, 32), "float32", None, None), [("layout", None)]),
    ("layout_ones2", ((8, 1), "float32", None, None), [("layout", None)]),
    ("layout_ones3_bad", ((1, 1), "float32", None, None), [("layout", None)]),
    ("layout_nostride1", ((16, 32), "float32", None, 2), [("layout", None)]),
    ("layout_i8", ((16, 32), "int8", None, None), [("layout", None)]),
    ("compact_m0_d16", ((16, 32), "float32", None, None), [("compact", 0, None, 16)]),
    ("compact_m1_d8", ((16, 32), "float32", None, None), [("compact", 1, None, 8)]),
    ("compact_m0_d4_so", ((16, 32), "float32", None, None), [("compact", 0, (0, 1), 4)]),
    ("compact_so_bad", ((16, 32), "float32", None, None), [("compact", 0, (1, 0), 1)]),
    ("compact_so_len_bad", ((16, 32), "float32", None, None), [("compact", 0, (0, 1, 2), 1)]),
    ("compact_so_dup_bad", ((16, 32), "float32", None, None), [("compact", 0, (1, 1), 1)]),
    ("compact_div_bad", ((16, 32), "float32", None, None), [("compact", 0, None, 3)]),
    ("compact_mode_bad", ((16, 32), "float32", None, None), [("compact", 2, None, 1)]),
    ("compact_mode_neg_bad", ((16, 32), "float32", None, None), [("compact", -1, None, 1)]),
    ("compact_3d_m1", ((2, 3, 4), "float32", None, None), [("compact", 1, None, 3)]),
    ("compact_3d_m0", ((2, 3, 4), "float32", None, None), [("compact", 0, None, 2)]),
    ("compact_3d_cm", ((2, 3, 4), "float32", (2, 1, 0), None), [("compact", 1, None, 1)]),
    ("compact_3d_twice", ((2, 3, 4), "float32", None, None), [("compact", 0, None, 2), ("compact", 2, None, 4)]),
    ("compact_3d_perm", ((2, 3, 4), "float32", (1, 0, 2), None), [("compact", 1, None, 2)]),
    ("compact_3d_perm_so", ((2, 3, 4), "float32", (1, 0, 2), None), [("compact", 1, (1, 0, 2), 2)]),
    ("compact_3d_perm_so_bad", ((2, 3, 4), "float32", (1, 0, 2), None), [("compact", 1, (0, 1, 2), 1)]),
    ("compact_ones", ((1, 32), "float32", None, None), [("compact", 0, None, 1)]),
    ("compact_ones2_bad", ((8, 1), "float32", None, None), [("compact", 1, None, 1)]),
    ("compact_1d", ((64,), "float32", None, None), [("compact", 0, None, 8)]),
    ("compact_twice_same", ((16, 32), "float32", None, None), [("compact", 1, None, 4), ("compact", 1, None, 2)]),
    ("layout_then_compact", ((2, 3, 4), "float32", None, None), [("layout", None), ("compact", 2, None, 4)]),
    ("compact_then_layout", ((16, 32), "float32", None, None), [("compact", 0, None, 4), ("layout", None)]),
]


def tiler_for(rank):
    return {1: (8,), 2: (4, 8), 3: (2, 3, 2)}[rank]


def coord_for(rank):
    return {1: (None,), 2: (0, None), 3: (0, None, 1)}[rank]


def _eval_all(cute, mA, res):
    r = len(mA.shape)
    T, C = tiler_for(r), coord_for(r)
    s = mA.shape[0]
    for e in EXPRS:
        try:
            v = eval(e, {"cute": cute}, {"mA": mA, "s": s, "T": T, "C": C})  # noqa: S307
            res[e] = v if isinstance(v, str) else str(v)
        except Exception as ex:  # noqa: BLE001
            res[e] = "error: " + str(ex).strip().split("\n")[0][:200]


def run_case(case):
    import numpy as np
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack

    name, (shape, dtype, perm, step), marks = case
    a = np.zeros(shape, dtype)
    if perm is not None:
        a = a.transpose(perm)  # shape is the stored array's; the tensor's modes are permuted
    if step is not None:
        a = a[:, ::step]
    out = {"name": name}
    align = next((m[1] for m in marks if m[0] == "align"), None)
    try:
        t = from_dlpack(a, assumed_align=align) if align else from_dlpack(a)
        for m in marks:
            if m[0] == "layout":
                t = t.mark_layout_dynamic(leading_dim=m[1]) if m[1] is not None else t.mark_layout_dynamic()
            elif m[0] == "compact":
                t = t.mark_compact_shape_dynamic(mode=m[1], stride_order=m[2], divisibility=m[3])
    except Exception as e:  # noqa: BLE001
        out["error"] = str(e).strip().split("\n")[0]
        return out
    res = {}

    @cute.jit
    def probe(mA: cute.Tensor):
        _eval_all(cute, mA, res)  # a plain helper: the DSL's AST rewrite does not allow eval in jit code

    probe(t)
    out["prints"] = res
    return out


def main():
    import cutlass

    results = []
    for case in CASES:
        r, w = os.pipe()
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            try:
                data = json.dumps(run_case(case))
            except Exception as e:  # noqa: BLE001
                data = json.dumps({"name": case[0], "error": "probe failed: " + str(e).split("\n")[0]})
            os.write(w, data.encode())
            os.close(w)
            os._exit(0)
        os.close(w)
        buf = b""
        while True:
            chunk = os.read(r, 65536)
            if not chunk:
                break
            buf += chunk
        os.close(r)
        _, st = os.waitpid(pid, 0)
        res = json.loads(buf) if buf else {"name": case[0], "crash": True}
        res["array"] = list(case[1][0]), case[1][1], case[1][2], case[1][3]
        res["marks"] = case[2]
        results.append(res)
        print(case[0], "error" if "error" in res else "crash" if "crash" in res else "ok", file=sys.stderr)
    with open(OUT, "w") as f:
        json.dump({"dsl_version": getattr(cutlass, "__version__", "4.8.1"), "exprs": EXPRS, "cases": results}, f,
                  indent=1)
    print("wrote", OUT, file=sys.stderr)


if __name__ == "__main__":
    main()
