"""Blackwell tcgen05 atoms against CuTe DSL 4.8.1 with CUTE_DSL_ARCH=sm_100a (golden vectors from
scripts/make_golden_tcgen05.py).

UMMA atoms: every op, dtype combination, shape, CTA group, A source and major mode prints as the
DSL prints it (the op too, for a quarter of them), its tensor-memory fragments (C, and A when A
lives in TMEM) print the same, and every argument the DSL rejects we reject with the DSL's reason.
Tiled UMMAs: printing, tiled TV layouts, tile sizes, partition shapes, partitions of identity
tensors and of shared-memory tensors, and their descriptor / TMEM fragments agree with the DSL's.
"""

import re


import cutelab as cute
from cutelab import numeric
from cutelab.errors import LayoutError, TensorError
from cutelab.nvgpu import OperandMajorMode, tcgen05

from .tcgen05_golden_common import load_cases as _load, pretty as _pretty, reason as _reason


ATOMS = _load("tcgen05_mma_atoms.json")


def make_op(sp):
    cls = getattr(tcgen05, sp["op"])
    cta = {1: tcgen05.CtaGroup.ONE, 2: tcgen05.CtaGroup.TWO}.get(sp["cta"], sp["cta"])
    src = getattr(tcgen05.OperandSource, sp["src"], sp["src"])
    args = [getattr(numeric, x) for x in sp["dt"]] + [tuple(sp["shape"]), cta, src]
    if sp["maj"]:
        args += [OperandMajorMode(sp["maj"][0]), OperandMajorMode(sp["maj"][1])]
    return cls(*args)


def _try(f):
    try:
        return f()
    except (LayoutError, TensorError) as e:
        return {"error": str(e)}


_UNDEFINED = re.compile(r"[(,]x[,)]")


def _same(got, dsl):
    """Equal answers, or both errors with the DSL's reason in ours. Where the DSL prints a layout with
    unknown extents ('x': a 64-row interleaved TMEM fragment whose rest modes cannot pair up), we refuse."""
    if isinstance(dsl, dict) and "error" in dsl:
        return isinstance(got, dict) and "error" in got and _reason(dsl["error"]) in got["error"]
    if isinstance(dsl, str) and _UNDEFINED.search(dsl):
        return isinstance(got, dict) and "must begin with an even count" in got["error"]
    return got == dsl


def test_golden_atoms_cover_every_op():
    assert len(ATOMS) > 5000 and not [c for c in ATOMS if "crash" in c]
    ok = {c["case"]["op"] for c in ATOMS if "atom" in c}
    assert ok == {"MmaTF32Op", "MmaF16BF16Op", "MmaI8Op", "MmaFP8Op", "MmaF8F6F4Op", "MmaMXF8Op", "MmaMXF8F6F4Op",
                  "MmaMXF4Op", "MmaMXF4NVF4Op"}
    assert sum("error" in c for c in ATOMS) > 1000 and sum("frag_A" in c for c in ATOMS) > 1000


def test_atoms_and_fragments_match_dsl():
    bad = []
    for c in ATOMS:
        sp = c["case"]
        try:
            op = make_op(sp)
            atom = cute.make_mma_atom(op)
        except LayoutError as e:
            if "error" not in c or _reason(c["error"]) not in str(e):
                bad.append((sp, "refused", str(e), c.get("error")))
            continue
        if "error" in c:
            bad.append((sp, "accepted", c["error"]))
            continue
        got = {"atom": str(atom)}
        if "op" in c:
            got["op"] = str(op)
        m, n, k = op.shape_mnk
        t = cute.make_tiled_mma(op)
        got["frag_C"] = [_try(lambda: str(t.make_fragment_C(t.partition_shape_C(s))))
                         for s in ((m, n), (2 * m, n), (m, 2 * n, 2))]
        if "frag_A" in c:
            got["frag_A"] = [_try(lambda: str(t.make_fragment_A(t.partition_shape_A(s))))
                             for s in ((m, 4 * k), (2 * m, 2 * k, 3))]
        for key in c:
            if key != "case" and not (_same(got.get(key), c[key]) or (
                    isinstance(c[key], list) and all(_same(g, d) for g, d in zip(got.get(key, []), c[key])))):
                bad.append((sp, key, got.get(key), c[key]))
                break
    assert not bad, f"{len(bad)} mismatches, first: {bad[:3]}"



TILED = _load("tcgen05_mma_tiled.json")


def _tiled(c):
    c = c["case"]
    op = make_op(c["op"])
    al = c["atom_layout"]
    al = cute.parse_layout(al) if isinstance(al, str) else tuple(al)
    perm = c["perm"]
    if perm is not None:
        perm = tuple(cute.parse_layout(p) if isinstance(p, str) else p for p in perm)
    return cute.make_tiled_mma(op, al, perm)


def _smem_tensor(c, w):
    shp = tuple(c["shapes"][w])
    order = ([1, 0] if c["smem"][w] == "K" else [0, 1]) + list(range(2, len(shp)))
    stride, cur = [0] * len(shp), 1
    for j in order:
        stride[j] = cur
        cur *= shp[j]
    sp = c["op"]
    ety = {"MmaTF32Op": numeric.TFloat32, "MmaMXF4NVF4Op": numeric.Float4E2M1FN, "MmaMXF4Op": numeric.Float4E2M1FN}.get(
        sp["op"]) or getattr(numeric, sp["dt"][0])
    ptr = cute.make_ptr(ety, 0, cute.AddressSpace.smem, assumed_align=1024)
    return cute.make_tensor(ptr, cute.make_layout(shp, stride=tuple(stride)))


def _after_o(s):
    return s.split(" o ", 1)[1][:-1] if " o " in s else s


def test_golden_tiled_cover_both_cta_groups():
    assert len(TILED) >= 300 and not [c for c in TILED if "crash" in c or "error" in c]
    assert {c["case"]["op"]["cta"] for c in TILED} == {1, 2}
    assert sum(isinstance(s.get("sm_B", {}).get("frag"), str) for c in TILED for s in c["slices"]) > 300


def test_tiled_umma_matches_dsl():
    bad = []
    for c in TILED:
        case = c["case"]
        t = _tiled(c)
        got = {"tiled": str(t), "tv_A": str(t.tv_layout_A_tiled), "tv_B": str(t.tv_layout_B_tiled),
               "tv_C": str(t.tv_layout_C_tiled), "size": t.size, "tile": [t.get_tile_size(j) for j in range(3)]}
        for w in "ABC":
            got["pshape_" + w] = _try(lambda: _pretty(getattr(t, "partition_shape_" + w)(tuple(case["shapes"][w]))))
        got["frag_C"] = _try(lambda: str(t.make_fragment_C(t.partition_shape_C(tuple(case["shapes"]["C"])))))
        if "frag_A" in c:
            got["frag_A"] = _try(lambda: str(t.make_fragment_A(t.partition_shape_A(tuple(case["shapes"]["A"])))))
        for key in got:
            if not _same(got[key], c[key]):
                bad.append((case, key, got[key], c[key]))
        for d in c["slices"]:
            s = t.get_slice(d["thr"])
            for w in "ABC":
                def ident():
                    p = getattr(s, "partition_" + w)(cute.make_identity_tensor(tuple(case["shapes"][w])))
                    return {"iter": _pretty(p.iterator), "layout": str(p.layout)}

                g = _try(ident)
                if not _same(g, d["id_" + w]):
                    bad.append((case, d["thr"], "id_" + w, g, d["id_" + w]))
            for w in "AB":
                p = getattr(s, "partition_" + w)(_smem_tensor(case, w))
                if str(p.layout) != d["sm_" + w]["layout"]:
                    bad.append((case, d["thr"], "sm_" + w, str(p.layout), d["sm_" + w]["layout"]))
                if "frag" in d["sm_" + w]:
                    g = _try(lambda: _after_o(str(getattr(t, "make_fragment_" + w)(p))))
                    if not _same(g, d["sm_" + w]["frag"]):
                        bad.append((case, d["thr"], "frag_" + w, g, d["sm_" + w]["frag"]))
    assert not bad, f"{len(bad)} mismatches, first: {bad[:3]}"
