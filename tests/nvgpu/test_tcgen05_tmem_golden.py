"""Tensor-memory copies (tcgen05 Ld/St ops, make_tmem_copy over UMMA accumulators) against CuTe DSL
4.8.1 with CUTE_DSL_ARCH=sm_100a (golden vectors from scripts/make_golden_tcgen05.py).
"""

import cutelab as cute
from cutelab import numeric
from cutelab.nvgpu import OperandMajorMode, tcgen05

from .tcgen05_golden_common import answer as _try, dtype as _dt, load_cases as _load, reason as _reason, same as _same


TMEM = _load("tcgen05_tmem_copy.json")


def _tmem_op(c):
    cls = getattr(tcgen05, "%s%sOp" % (c["ld"], c["shape"]))
    rep = tcgen05.Repetition(c["rep"])
    if c["ld"] == "Ld":
        return cls(rep, tcgen05.Pack.PACK_16b_IN_32b if c["pack"] else tcgen05.Pack.NONE)
    return cls(rep, tcgen05.Unpack.UNPACK_32b_IN_16b if c["pack"] else tcgen05.Unpack.NONE)


def _acc_op(sp):
    cls = getattr(tcgen05, sp["op"])
    cta = tcgen05.CtaGroup(sp["cta"])
    args = [_dt(x) for x in sp["dt"]] + [tuple(sp["shape"]), cta, tcgen05.OperandSource[sp["src"]],
                                          OperandMajorMode(sp["maj"][0]), OperandMajorMode(sp["maj"][1])]
    return cls(*args)


def test_golden_tmem_copies_cover_every_op():
    assert len(TMEM) >= 700 and not [c for c in TMEM if "crash" in c]
    ok = {(c["case"]["ld"], c["case"]["shape"]) for c in TMEM if "atom" in c}
    assert len(ok) == 10
    assert sum("tiled" in c for c in TMEM) > 200 and sum("error" in c for c in TMEM) > 20


def test_tmem_copy_atoms_and_tiled_copies_match_dsl():
    bad = []
    for c in TMEM:
        case = c["case"]
        try:
            op = _tmem_op(case)
        except ValueError as e:
            if "error" not in c or _reason(c["error"]) not in str(e):
                bad.append((case, "refused", str(e), c.get("error")))
            continue
        if case["what"] == "atom":
            got = _try(lambda: {"op": str(op), "atom": str(cute.make_copy_atom(op, _dt(case["dt"])))})
        else:
            def tiled():
                t = cute.make_tiled_mma(_acc_op(case["acc"]))
                frag = t.make_fragment_C(t.partition_shape_C(tuple(case["tile"])))
                out = {"frag": str(frag), "col_off": _try(lambda: tcgen05.find_tmem_tensor_col_offset(frag))}
                src = frag[((None, None), 0, 0)]
                if case["sub"]:
                    src = cute.flat_divide(src, (case["acc"]["shape"][0] // case["acc"]["cta"], case["sub"]))
                    src = src[(None, None, 0, 0)]
                out["src"] = str(src)
                accty = _dt(case["acc"]["dt"][-1]) if case["acc"]["op"] == "MmaF16BF16Op" else numeric.Int32
                tc = tcgen05.make_tmem_copy(cute.make_copy_atom(op, accty), src)
                out["tiled"] = str(tc)
                thr = tc.get_slice(case["thr"])
                ident = cute.make_identity_tensor(src.shape)
                if case["ld"] == "Ld":
                    out["part_S"] = _try(lambda: str(thr.partition_S(src)))
                    out["part_D_id"] = _try(lambda: str(thr.partition_D(ident)))
                else:
                    out["part_D"] = _try(lambda: str(thr.partition_D(src)))
                    out["part_S_id"] = _try(lambda: str(thr.partition_S(ident)))
                return out

            got = _try(tiled)
        want = {k: v for k, v in c.items() if k != "case"}
        if "error" in want:
            phrase = "expects the memory pointed to by atom tv layout exists in the data layout"
            if "error" not in got or (phrase in want["error"] and phrase not in got["error"]):
                bad.append((case, "accepted", want["error"], got))
            continue
        for k in want:
            if not _same(got.get(k), want[k]):
                bad.append((case, k, got.get(k), want[k]))
                break
    assert not bad, f"{len(bad)} mismatches, first: {bad[:3]}"
