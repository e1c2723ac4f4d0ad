"""SM100 shared-memory layout atoms (tcgen05.make_smem_layout_atom, tile_to_mma_shape) against CuTe DSL
4.8.1 with CUTE_DSL_ARCH=sm_100a (golden vectors from scripts/make_golden_tcgen05.py).
"""

import json
import os

from cutelab import numeric
from cutelab.errors import LayoutError, TensorError
from cutelab.nvgpu import tcgen05

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden")


def _load(name):
    with open(os.path.join(GOLDEN, name)) as f:
        return json.load(f)["cases"]


SMEM = _load("tcgen05_smem.json")


def _dt(name):
    return getattr(numeric, name)


def _reason(err):
    return err.split(": ", 1)[1] if ": " in err else err


def _try(f):
    try:
        return f()
    except (LayoutError, TensorError, ValueError, TypeError) as e:
        return {"error": str(e)}


def _same(got, dsl):
    if isinstance(dsl, dict) and "error" in dsl:
        return isinstance(got, dict) and "error" in got
    return got == dsl


def _tup(x):
    return tuple(_tup(e) for e in x) if isinstance(x, list) else x


def _pretty(x):
    if isinstance(x, tuple):
        return "(" + ",".join(_pretty(e) for e in x) + ")"
    return "_" if x is None else str(x)


def test_golden_smem_cover_every_kind():
    assert len(SMEM) >= 400 and not [c for c in SMEM if "crash" in c]
    assert {c["case"]["kind"] for c in SMEM if "layout" in c} == {k.name for k in tcgen05.SmemLayoutAtomKind}


def test_smem_atoms_and_tile_to_mma_shape_match_dsl():
    bad = []
    for c in SMEM:
        case = c["case"]
        kind = tcgen05.SmemLayoutAtomKind[case["kind"]]
        got = _try(lambda: tcgen05.make_smem_layout_atom(kind, _dt(case["dt"])))
        if case["what"] == "atom":
            got = got if isinstance(got, dict) else {"atom": str(got)}
        elif not isinstance(got, dict):
            order = tuple(case["order"]) if case["order"] is not None else None
            got = _try(lambda: {"layout": str(tcgen05.tile_to_mma_shape(got, _tup(case["mma"]), order))})
        want = {k: v for k, v in c.items() if k != "case"}
        if not (got == want or ("error" in want and "error" in got)):
            bad.append((case, got, want))
    assert not bad, f"{len(bad)} mismatches, first: {bad[:3]}"
